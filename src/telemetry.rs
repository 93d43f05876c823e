//! Logging. Logs go to stderr so that stdout stays clean for `assess` and `check-config`.
//! The filter comes from `RISKGATE_LOG` (then `RUST_LOG`), default `warn`.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Calling it twice is harmless.
pub fn init() {
    let filter = std::env::var("RISKGATE_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
