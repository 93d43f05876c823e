//! Decision time of the risk gate per tool, over the corpus cases of that tool, next to a
//! naive first-word check (what a prefix-matching gate costs) as the baseline.
//!
//! Each iteration decides every corpus case of one tool once, so the time per decision is
//! the reported time divided by the element count (criterion prints it as throughput).
//! Run: `cargo bench --bench gate`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use riskgate::config::Settings;
use riskgate::core::risk::ChannelMode;
use riskgate::core::tools::{AssessContext, SqlDialect, ToolCall};
use serde_json::Value;

const CORPUS: &str = include_str!("../tests/data/risk_cases.jsonl");

struct Case {
    call: ToolCall,
    ctx: AssessContext,
    mode: ChannelMode,
    /// The text a first-word check looks at.
    text: String,
}

fn cases() -> Vec<Case> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let v: Value = serde_json::from_str(line).ok()?;
            let arguments = v["arguments"].as_object()?.clone();
            let text = ["sql", "command", "operation", "method"]
                .iter()
                .find_map(|k| arguments.get(*k).and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned();
            Some(Case {
                call: ToolCall {
                    tool: v["tool"].as_str()?.to_owned(),
                    arguments,
                },
                ctx: AssessContext {
                    dialect: v["dialect"]
                        .as_str()
                        .and_then(|d| d.parse::<SqlDialect>().ok()),
                },
                mode: v["mode"]
                    .as_str()
                    .and_then(|m| m.parse().ok())
                    .unwrap_or_default(),
                text,
            })
        })
        .collect()
}

/// The baseline: auto when the first word is on a list, otherwise confirm.
fn naive_first_word(text: &str) -> bool {
    const SAFE: &[&str] = &[
        "select", "show", "explain", "describe", "desc", "pragma", "values", "table", "with", "ls",
        "cat", "pwd", "echo", "grep", "head", "tail", "wc", "git", "sed", "find", "read", "list",
        "exists", "get", "head", "options",
    ];
    let first = text.split_whitespace().next().unwrap_or_default();
    SAFE.iter().any(|s| first.eq_ignore_ascii_case(s))
}

fn bench_gate(c: &mut Criterion) {
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let gate = riskgate::tools::builtin_gate(&settings);
    let all = cases();

    for tool in [
        "execute_sql",
        "execute_command",
        "file_operations",
        "http_request",
    ] {
        let subset: Vec<&Case> = all.iter().filter(|c| c.call.tool == tool).collect();
        let mut group = c.benchmark_group(format!("gate/{tool}"));
        group.throughput(Throughput::Elements(subset.len() as u64));
        group.bench_function("riskgate", |b| {
            b.iter(|| {
                for case in &subset {
                    black_box(gate.check(black_box(&case.call), case.mode, &case.ctx));
                }
            })
        });
        group.bench_function("first_word_baseline", |b| {
            b.iter(|| {
                for case in &subset {
                    black_box(naive_first_word(black_box(&case.text)));
                }
            })
        });
        group.finish();
    }

    // Typical single calls, for the per-statement target.
    let mut group = c.benchmark_group("gate/typical");
    let typical = [
        (
            "sql_select_join",
            r#"{"sql": "SELECT u.id, u.name, count(o.id) AS orders FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE u.created_at > now() - interval '7 days' GROUP BY u.id, u.name ORDER BY orders DESC LIMIT 20"}"#,
            "execute_sql",
        ),
        // The same window query, once in a form sqlparser parses and once with a frame
        // exclusion it cannot parse, which the SQL assessor reads by its tokens (PostgreSQL
        // only): what the fallback path costs.
        (
            "sql_window_parsed",
            r#"{"sql": "SELECT id, sum(amount) OVER (PARTITION BY user_id ORDER BY created_at ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS recent FROM orders WHERE created_at > now() - interval '7 days'"}"#,
            "execute_sql",
        ),
        (
            "sql_window_unparsed",
            r#"{"sql": "SELECT id, sum(amount) OVER (PARTITION BY user_id ORDER BY created_at ROWS BETWEEN 3 PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) AS recent FROM orders WHERE created_at > now() - interval '7 days'"}"#,
            "execute_sql",
        ),
        (
            "command_pipeline",
            r#"{"command": "grep -rn \"TODO\" src | sort | uniq -c | head -n 20"}"#,
            "execute_command",
        ),
        // A command substitution (read three times: the line, its script, the line with a
        // placeholder) and a `for` loop (read, then written out and read again).
        (
            "command_substitution",
            r#"{"command": "wc -l $(find src -name '*.rs' | grep -v test) | sort -n"}"#,
            "execute_command",
        ),
        (
            "command_for_loop",
            r#"{"command": "for f in a.txt b.txt c.txt; do grep -c TODO \"$f\"; done | sort"}"#,
            "execute_command",
        ),
        // The line's own variable, put in (read, then rewritten and read again).
        (
            "command_own_variable",
            r#"{"command": "pattern=TODO; grep -rn \"$pattern\" src | head -n 20"}"#,
            "execute_command",
        ),
        // A `while read` loop: rewritten as a `for` loop over a substitution, whose producer
        // and placeholder line are read.
        (
            "command_while_read",
            r#"{"command": "find . -name '*.md' | while read -r f; do wc -l \"$f\"; done"}"#,
            "execute_command",
        ),
        // `[[ ... ]]`, read again as the `test` commands it amounts to.
        (
            "command_conditional",
            r#"{"command": "[[ -f Cargo.toml && -d src ]] && echo rust"}"#,
            "execute_command",
        ),
        // A script given to `sh -c` under `find -exec`, its parameter put in: walked within
        // the line, then read again as a line of its own.
        (
            "command_sh_c",
            r#"{"command": "find . -name '*.md' -exec sh -c 'wc -l \"$1\" | sort' _ {} \\;"}"#,
            "execute_command",
        ),
        // `$(pwd)` written as `$PWD`, then put in as its value.
        (
            "command_pwd",
            r#"{"command": "find $(pwd) -name '*.md' -mtime -7"}"#,
            "execute_command",
        ),
        // A loop whose body does operations of parameter expansion on its word, written
        // out with them done.
        (
            "command_parameter_op",
            r#"{"command": "for f in a.md b.md; do wc -l \"$f\" \"${f%.md}.txt\"; done"}"#,
            "execute_command",
        ),
        // A program of a family added late in the registry (`docker ps`), piped.
        (
            "command_engine_listing",
            r#"{"command": "docker ps -a --format '{{.Names}}' | sort"}"#,
            "execute_command",
        ),
    ];
    for (name, args, tool) in typical {
        let call = ToolCall {
            tool: tool.to_owned(),
            arguments: serde_json::from_str(args).expect("arguments"),
        };
        let ctx = AssessContext {
            dialect: Some(SqlDialect::Postgres),
        };
        group.bench_function(name, |b| {
            b.iter(|| black_box(gate.check(black_box(&call), ChannelMode::Smart, &ctx)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_gate);
criterion_main!(benches);
