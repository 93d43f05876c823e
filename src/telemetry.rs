//! Logging. Logs go to stderr so that stdout stays clean for `assess`, `check-config` and
//! `console --json`. The level filter comes from `RISKGATE_LOG` (then `RUST_LOG`), else
//! `log.level`; `log.format` picks human-readable text or one JSON object per line.
//! Colour codes are written only when stderr is a terminal (and `NO_COLOR` is not set), so
//! logs piped to a file or another program are plain text.
//!
//! Secrets never reach a log line: settings hold them as `SecretString`, URLs are logged
//! with their password redacted, and neither prompts nor tool arguments are logged above
//! `debug` (`tests/logging.rs` runs a session at `trace` and looks for the secrets).

use std::io::IsTerminal;

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
        .with_writer(std::io::stderr)
        .with_ansi(colour(std::io::stderr().is_terminal()));
    let _ = if settings.format == "json" {
        builder.json().with_current_span(true).try_init()
    } else {
        builder.try_init()
    };
}

/// Whether logs are coloured: only on a terminal, and never when `NO_COLOR` is set
/// (<https://no-color.org>).
fn colour(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
