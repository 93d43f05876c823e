//! Logging. Logs go to stderr so that stdout stays clean for `assess`, `check-config` and
//! `console --json`. The level filter comes from `RISKGATE_LOG` (then `RUST_LOG`), else
//! `log.level`; `log.format` picks human-readable text or one JSON object per line.
//! Colour codes are written only when stderr is a terminal (and `NO_COLOR` is not set), so
//! logs piped to a file or another program are plain text.
//!
//! Whatever the filter, the start-up report of `riskgate run` ([`STATUS`]: what the bot is
//! connected to, and what is wrong with that) is shown, unless the filter is `off` or names
//! that target itself (`riskgate::status=off`): an operator must be able to tell a working
//! bot from a broken one at the default level, which otherwise shows only warnings.
//!
//! Secrets never reach a log line: settings hold them as `SecretString`, URLs are logged
//! with their password redacted, and neither prompts nor tool arguments are logged above
//! `debug` (`tests/logging.rs` runs a session at `trace` and looks for the secrets). The MCP
//! SDK (target `rmcp`) logs whole protocol messages at `info` and below, and a server's
//! result may repeat a secret of its environment: it is held at `warn` unless the filter
//! names it (`tests/mcp_secrets.rs`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogSettings;

/// The target of the start-up report's lines.
pub const STATUS: &str = "riskgate::status";

/// Installs the global subscriber. Calling it twice is harmless.
pub fn init(settings: &LogSettings) {
    let filter = std::env::var("RISKGATE_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .filter(|f| EnvFilter::try_new(f).is_ok())
        .unwrap_or_else(|| {
            if EnvFilter::try_new(&settings.level).is_ok() {
                settings.level.clone()
            } else {
                "warn".to_owned()
            }
        });
    let filter = EnvFilter::new(directives(&filter));
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

/// The directives the subscriber uses for `filter`: the start-up report let through
/// ([`with_status`]) and the MCP SDK's message dumps held back ([`with_rmcp_quiet`]).
pub fn directives(filter: &str) -> String {
    with_rmcp_quiet(&with_status(filter))
}

/// `filter` with `rmcp=warn` added when its default level would show the SDK's `info`,
/// `debug` or `trace` lines (whole protocol messages, results included), unless it names
/// `rmcp` itself.
fn with_rmcp_quiet(filter: &str) -> String {
    let verbose = filter.split(',').map(str::trim).any(|directive| {
        !directive.contains('=')
            && ["info", "debug", "trace"]
                .iter()
                .any(|level| directive.eq_ignore_ascii_case(level))
    });
    if verbose && !filter.contains("rmcp") {
        format!("{filter},rmcp=warn")
    } else {
        filter.to_owned()
    }
}

/// `filter` with the start-up report let through at `info`, unless it is `off` or decides
/// about the report's target itself.
fn with_status(filter: &str) -> String {
    let filter = filter.trim();
    if filter.eq_ignore_ascii_case("off") || filter.contains(STATUS) {
        filter.to_owned()
    } else if filter.is_empty() {
        format!("{STATUS}=info")
    } else {
        format!("{filter},{STATUS}=info")
    }
}

/// Whether logs are coloured: only on a terminal, and never when `NO_COLOR` is set
/// (<https://no-color.org>).
fn colour(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_up_report_passes_every_filter_but_off_and_its_own() {
        for (filter, expected) in [
            ("warn", "warn,riskgate::status=info"),
            (" error ", "error,riskgate::status=info"),
            (
                "riskgate=debug,warn",
                "riskgate=debug,warn,riskgate::status=info",
            ),
            ("", "riskgate::status=info"),
            ("off", "off"),
            ("OFF", "OFF"),
            ("warn,riskgate::status=off", "warn,riskgate::status=off"),
        ] {
            assert_eq!(with_status(filter), expected, "{filter:?}");
            assert!(
                EnvFilter::try_new(with_status(filter)).is_ok(),
                "{filter:?}"
            );
        }
    }

    #[test]
    fn the_mcp_sdks_message_dumps_are_held_back_unless_asked_for() {
        for (filter, expected) in [
            ("warn", "warn,riskgate::status=info"),
            ("error", "error,riskgate::status=info"),
            ("trace", "trace,riskgate::status=info,rmcp=warn"),
            (
                "riskgate=debug,INFO",
                "riskgate=debug,INFO,riskgate::status=info,rmcp=warn",
            ),
            ("debug,rmcp=trace", "debug,rmcp=trace,riskgate::status=info"),
            ("off", "off"),
        ] {
            assert_eq!(directives(filter), expected, "{filter:?}");
            assert!(EnvFilter::try_new(directives(filter)).is_ok(), "{filter:?}");
        }
    }
}
