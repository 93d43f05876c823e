//! Property tests: random and adversarial input never panics an assessor or `assess`, and
//! some things hold for every input (strict mode never auto-runs; a denied call is denied in
//! every mode; whatever the text, `risk_level` is never passed on).

use proptest::prelude::*;
use riskgate::cli::assess::output_line;
use riskgate::config::Settings;
use riskgate::core::risk::{ChannelMode, Decision};
use riskgate::core::tools::{AssessContext, RiskGate, SqlDialect, ToolCall};
use serde_json::{Map, Value, json};

fn gate() -> (tempfile::TempDir, RiskGate) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = dir.path().to_path_buf();
    (dir, riskgate::tools::builtin_gate(&settings))
}

fn call(tool: &str, arguments: Value) -> ToolCall {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    ToolCall {
        tool: tool.to_owned(),
        arguments,
    }
}

/// Strings over the characters that matter to SQL lexers.
fn sql_soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "SELECT ",
        "DELETE ",
        "FROM ",
        "WITH ",
        "AS ",
        "(",
        ")",
        ";",
        "'",
        "\"",
        "`",
        "$$",
        "$a$",
        "--",
        "/*",
        "*/",
        "/*!",
        "#",
        "\n",
        " ",
        "INTO ",
        "EXPLAIN ",
        "ANALYZE ",
        "PRAGMA ",
        "=",
        "x",
        "1",
        ",",
        ".",
        "\\",
        "\u{200b}",
        "\u{feff}",
        "\u{a0}",
        "É",
        "TABLE ",
        "FOR UPDATE",
        "pg_sleep(1)",
        "UNION ",
        "VALUES ",
        "RETURNING ",
        "*",
        "?",
        "$1",
        ":a",
        "@v",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

/// Strings over the characters that matter to shell parsers.
fn shell_soup() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "ls",
        "rm",
        "-rf",
        " ",
        "/",
        "..",
        "~",
        "$",
        "$(",
        "`",
        ")",
        "(",
        "{",
        "}",
        ";",
        "&&",
        "||",
        "|",
        "&",
        ">",
        ">>",
        "<",
        "<<",
        "EOF",
        "\n",
        "'",
        "\"",
        "\\",
        "*",
        "?",
        "[",
        "]",
        "=",
        "#",
        "!",
        "sh -c ",
        "find . -exec ",
        "\\;",
        "git ",
        "sed -n ",
        "p",
        "x",
        "-",
        "<(",
        ">(",
        "$((",
        "))",
        "${",
        "\u{0}",
        "é",
    ]);
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sql_assessment_never_panics(sql in prop_oneof![any::<String>(), sql_soup()]) {
        let (_dir, gate) = gate();
        for dialect in [SqlDialect::Postgres, SqlDialect::Mysql, SqlDialect::Sqlite] {
            let ctx = AssessContext { dialect: Some(dialect) };
            let gated = gate.check(&call("execute_sql", json!({"sql": sql})), ChannelMode::Smart, &ctx);
            prop_assert!(!gated.decision.reason.is_empty());
        }
    }

    #[test]
    fn command_assessment_never_panics(line in prop_oneof![any::<String>(), shell_soup()]) {
        let (_dir, gate) = gate();
        let gated = gate.check(
            &call("execute_command", json!({"command": line})),
            ChannelMode::Smart,
            &AssessContext::default(),
        );
        prop_assert!(!gated.decision.reason.is_empty());
    }

    #[test]
    fn file_and_http_assessment_never_panic(
        path in any::<String>(),
        op in prop::sample::select(vec!["read", "list", "exists", "write", "append", "mkdir", "delete", "move", "chmod"]),
        url in prop_oneof![any::<String>(), "(https?|ftp|file)://[a-z0-9.:\\[\\]@%-]{0,30}/[ -~]{0,20}"],
        method in "[A-Za-z ]{0,8}",
    ) {
        let (_dir, gate) = gate();
        let ctx = AssessContext::default();
        let files = gate.check(
            &call("file_operations", json!({"operation": op, "path": path, "destination": path})),
            ChannelMode::Smart,
            &ctx,
        );
        prop_assert!(!files.decision.reason.is_empty());
        let http = gate.check(
            &call("http_request", json!({"method": method, "url": url})),
            ChannelMode::Smart,
            &ctx,
        );
        prop_assert!(!http.decision.reason.is_empty());
    }

    #[test]
    fn assess_answers_every_line_with_one_json_object(line in prop_oneof![
        any::<String>(),
        "\\{\"tool\": \"(execute_sql|execute_command|file_operations|http_request|x)\", \"arguments\": \\{[ -~]{0,40}\\}[ -~]{0,20}\\}",
    ]) {
        let (_dir, gate) = gate();
        let out = output_line(&gate, ChannelMode::Smart, &line);
        prop_assert!(!out.contains('\n'));
        let value: Value = serde_json::from_str(&out).expect("assess prints JSON");
        let object = value.as_object().expect("an object");
        prop_assert!(object.contains_key("error") || object.contains_key("decision"));
    }

    #[test]
    fn strict_mode_never_auto_runs_and_risk_level_is_always_removed(
        text in prop_oneof![shell_soup(), sql_soup()],
        level in prop::sample::select(vec!["low", "LOW", " low", "medium", "high", "x"]),
        tool in prop::sample::select(vec!["execute_sql", "execute_command", "file_operations", "http_request"]),
    ) {
        let (_dir, gate) = gate();
        let mut arguments = Map::new();
        for key in ["sql", "command", "path", "url"] {
            arguments.insert(key.to_owned(), Value::from(text.clone()));
        }
        arguments.insert("operation".to_owned(), Value::from("read"));
        arguments.insert("risk_level".to_owned(), Value::from(level));
        let strict = gate.check(
            &ToolCall { tool: tool.to_owned(), arguments: arguments.clone() },
            ChannelMode::Strict,
            &AssessContext::default(),
        );
        prop_assert_ne!(strict.decision.decision, Decision::Auto);
        prop_assert!(!strict.arguments.contains_key("risk_level"));
        let smart = gate.check(
            &ToolCall { tool: tool.to_owned(), arguments },
            ChannelMode::Smart,
            &AssessContext::default(),
        );
        if smart.decision.decision == Decision::Deny {
            prop_assert_eq!(strict.decision.decision, Decision::Deny);
        }
    }
}
