//! Logging. Logs go to stderr so that stdout stays clean for `assess`, `check-config` and
//! `console --json`. The level filter comes from `RISKGATE_LOG` (then `RUST_LOG`), else
//! `log.level`; `log.format` picks human-readable text or one JSON object per line.
//!
//! Secrets never reach a log line: settings hold them as `SecretString`, URLs are logged
//! with their password redacted, and neither prompts nor tool arguments are logged above
//! `debug` (`tests/logging.rs` runs a session at `trace` and looks for the secrets).

use tracing_subscriber::EnvFilter;

use crate::config::LogSettings;

/// Installs the global subscriber. Calling it twice is harmless.
pub fn init(settings: &LogSettings) {
    let filter = std::env::var("RISKGATE_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| {
            EnvFilter::try_new(&settings.level).unwrap_or_else(|_| EnvFilter::new("warn"))
        });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if settings.format == "json" {
        builder.json().with_current_span(true).try_init()
    } else {
        builder.try_init()
    };
}
