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
/// ([`with_status`]) and the dumps of what libraries read held back ([`with_dumps_quiet`]).
pub fn directives(filter: &str) -> String {
    with_dumps_quiet(&with_status(filter))
}

/// Targets whose `info`, `debug` and `trace` lines dump what a library read: the MCP SDK's
/// whole protocol messages (results included), and brush-parser's tokens and words of every
/// command line riskgate parses, which for a line of substitutions hold the scripts' output.
const DUMPING_TARGETS: &[&str] = &["rmcp", "tokenize", "parse", "expansion", "arithmetic"];

/// `filter` with `TARGET=warn` added for each of [`DUMPING_TARGETS`] when its default level
/// would show their lines, unless it names the target itself.
fn with_dumps_quiet(filter: &str) -> String {
    let directives: Vec<&str> = filter.split(',').map(str::trim).collect();
    let verbose = directives.iter().any(|directive| {
        !directive.contains('=')
            && ["info", "debug", "trace"]
                .iter()
                .any(|level| directive.eq_ignore_ascii_case(level))
    });
    let mut quiet = filter.to_owned();
    if verbose {
        for target in DUMPING_TARGETS {
            let named = directives
                .iter()
                .any(|directive| directive.split('=').next() == Some(*target));
            if !named {
                quiet.push_str(&format!(",{target}=warn"));
            }
        }
    }
    quiet
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
    fn libraries_dumps_of_what_they_read_are_held_back_unless_asked_for() {
        const PARSER: &str = "tokenize=warn,parse=warn,expansion=warn,arithmetic=warn";
        for (filter, expected) in [
            ("warn", "warn,riskgate::status=info".to_owned()),
            ("error", "error,riskgate::status=info".to_owned()),
            ("trace", format!("trace,riskgate::status=info,rmcp=warn,{PARSER}")),
            (
                "riskgate=debug,INFO",
                format!("riskgate=debug,INFO,riskgate::status=info,rmcp=warn,{PARSER}"),
            ),
            (
                "debug,rmcp=trace",
                format!("debug,rmcp=trace,riskgate::status=info,{PARSER}"),
            ),
            (
                "debug,parse=debug",
                "debug,parse=debug,riskgate::status=info,rmcp=warn,tokenize=warn,expansion=warn,arithmetic=warn".to_owned(),
            ),
            ("off", "off".to_owned()),
        ] {
            assert_eq!(directives(filter), expected, "{filter:?}");
            assert!(EnvFilter::try_new(directives(filter)).is_ok(), "{filter:?}");
        }
    }
}
