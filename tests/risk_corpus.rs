//! The labelled corpus (`tests/data/risk_cases.jsonl`): every case must get its expected
//! decision. On failure the test lists every mismatch, not just the first.

use std::str::FromStr;

use riskgate::config::Settings;
use riskgate::core::risk::ChannelMode;
use riskgate::core::tools::{AssessContext, SqlDialect, ToolCall};
use serde::Deserialize;

const CORPUS: &str = include_str!("data/risk_cases.jsonl");

#[derive(Debug, Deserialize)]
struct Case {
    tool: String,
    arguments: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    dialect: Option<String>,
    expect: String,
    #[serde(default)]
    why: String,
}

fn cases() -> Vec<(usize, Case)> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let case: Case = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("corpus line {} is not a case: {e}", i + 1));
            (i + 1, case)
        })
        .collect()
}

/// The corpus's expectation on this machine: where the kernel cannot build the command
/// sandbox, no command line runs without a click, so an `auto` line is asked about instead.
fn expected<'a>(tool: &str, expect: &'a str) -> &'a str {
    let contained = riskgate::tools::command::sandbox::kernel_support().is_ready();
    if tool == riskgate::tools::command::NAME && expect == "auto" && !contained {
        "confirm"
    } else {
        expect
    }
}

#[test]
fn every_corpus_case_gets_its_expected_decision() {
    // A fresh, empty workspace: files the cases write do not exist yet.
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let gate = riskgate::tools::builtin_gate(&settings);

    let cases = cases();
    assert!(cases.len() >= 300, "the corpus has {} cases", cases.len());
    let mut mismatches = Vec::new();
    for (line, case) in &cases {
        let mode = case
            .mode
            .as_deref()
            .map(|m| ChannelMode::from_str(m).expect("corpus mode"))
            .unwrap_or_default();
        let ctx = AssessContext {
            dialect: case
                .dialect
                .as_deref()
                .map(|d| SqlDialect::from_str(d).expect("corpus dialect")),
        };
        let call = ToolCall {
            tool: case.tool.clone(),
            arguments: case.arguments.clone(),
        };
        let gated = gate.check(&call, mode, &ctx);
        if gated.decision.decision.as_str() != expected(&case.tool, &case.expect) {
            mismatches.push(format!(
                "line {line}: {} {} -> {} ({}: {}); expected {} ({})",
                case.tool,
                serde_json::Value::Object(case.arguments.clone()),
                gated.decision.decision,
                gated.decision.source,
                gated.decision.reason,
                case.expect,
                case.why
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} corpus cases got the wrong decision:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}

#[test]
fn risk_level_never_reaches_the_arguments_the_executor_gets() {
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let gate = riskgate::tools::builtin_gate(&settings);
    for (_, case) in cases() {
        let call = ToolCall {
            tool: case.tool.clone(),
            arguments: case.arguments.clone(),
        };
        let gated = gate.check(&call, ChannelMode::Smart, &AssessContext::default());
        assert!(
            !gated.arguments.contains_key("risk_level"),
            "{:?}",
            gated.arguments
        );
        let mut expected = case.arguments.clone();
        expected.remove("risk_level");
        assert_eq!(gated.arguments, expected);
    }
}

/// The friction list (`tests/data/friction_lines.tsv`): safe lines of the kinds an assistant
/// writes every day, and their dangerous neighbours, in a workspace holding the files they
/// name.
fn friction_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for file in [
        "notes.txt",
        "README.md",
        "app.log",
        "data.csv",
        "package.json",
        "Cargo.toml",
        "x.tar",
        "archive.tar.gz",
        "src/main.rs",
        "src/lib.rs",
        "docs/guide.md",
        "sub/deeper/file.txt",
    ] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, "x\n").expect("write");
    }
    dir
}

/// Friction: the share of safe lines that would wait for a click (the gate asks, or the
/// line has no plan, so an auto run would be refused). Every dangerous neighbour must wait.
#[test]
fn friction_below_one_percent() {
    let workspace = friction_workspace();
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let gate = riskgate::tools::builtin_gate(&settings);
    let contained = riskgate::tools::command::sandbox::kernel_support().is_ready();
    let list = include_str!("data/friction_lines.tsv");
    let (mut safe, mut clicks, mut let_through) = (0, Vec::new(), Vec::new());
    for entry in list
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (label, command) = entry.split_once('\t').expect("label<TAB>command");
        let call = ToolCall {
            tool: riskgate::tools::command::NAME.to_owned(),
            arguments: serde_json::json!({ "command": command })
                .as_object()
                .expect("object")
                .clone(),
        };
        let gated = gate.check(&call, ChannelMode::Smart, &AssessContext::default());
        let decision = gated.decision.decision.as_str();
        match label {
            "auto" => {
                safe += 1;
                let planned = riskgate::tools::command::plan_line(command);
                if decision != "auto" || planned.is_err() {
                    clicks.push(format!(
                        "{command:?}: {decision} ({}){}",
                        gated.decision.reason,
                        planned
                            .err()
                            .map(|e| format!("; needs a shell because {e}"))
                            .unwrap_or_default()
                    ));
                }
            }
            "confirm" if decision == "auto" => let_through.push(command.to_owned()),
            "confirm" => {}
            other => panic!("unknown label {other:?}"),
        }
    }
    let rate = clicks.len() as f64 * 100.0 / f64::from(safe);
    println!(
        "friction: {} of {safe} safe lines wait for a click ({rate:.1}%)",
        clicks.len()
    );
    assert!(
        let_through.is_empty(),
        "dangerous lines ran without a click:\n{}",
        let_through.join("\n")
    );
    if contained {
        assert!(
            rate < 1.0 || std::env::var_os("FRICTION_REPORT").is_some(),
            "friction {rate:.1}% ({} of {safe}):\n{}",
            clicks.len(),
            clicks.join("\n")
        );
    }
}
