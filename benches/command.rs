//! Spawn overhead of `execute_command`: what riskgate's walls (planning, PATH resolution,
//! scrubbed environment, process group, pipes, capture, rendering) add to starting a process.
//!
//! - `bare/true` and `bare/sh -c true`: `tokio::process::Command::output()`, the baseline.
//! - `plan/true`: `CommandTool::execute` of the line `true`, auto-approved: the plan path.
//! - `plan/sh -c true`: the line `sh -c true`, which has a plan too (it runs sh as a program).
//! - `shell/true >/dev/null`: a confirmed line that needs a shell (a redirection), so it runs
//!   as `sh -c 'true >/dev/null'`: the shell path.
//!
//! Every iteration blocks on the same multi-threaded runtime, so that cost is in all five.
//! Run: `cargo bench --bench command`; medians are in
//! `target/criterion/command/*/new/estimates.json`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use riskgate::config::{CommandSettings, OutputSettings, ToolRules};
use riskgate::core::tools::{Approval, Tool};
use riskgate::tools::Workspace;
use riskgate::tools::command::CommandTool;
use serde_json::{Map, Value, json};

fn arguments(line: &str) -> Map<String, Value> {
    match json!({ "command": line }) {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

fn bench_command(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("tempdir");
    let tool = CommandTool::new(
        Workspace::new(workspace.path()),
        &ToolRules::default(),
        &CommandSettings::default(),
        &OutputSettings::default(),
    );
    let confirmed = Approval::Confirmed {
        by: "bench".to_owned(),
    };

    let mut group = c.benchmark_group("command");
    group.bench_function("bare/true", |b| {
        b.iter(|| {
            runtime.block_on(async {
                black_box(
                    tokio::process::Command::new("true")
                        .output()
                        .await
                        .expect("true runs"),
                )
            })
        })
    });
    group.bench_function("bare/sh -c true", |b| {
        b.iter(|| {
            runtime.block_on(async {
                black_box(
                    tokio::process::Command::new("sh")
                        .args(["-c", "true"])
                        .output()
                        .await
                        .expect("sh runs"),
                )
            })
        })
    });
    for (name, line, approval) in [
        ("plan/true", "true", Approval::Auto),
        ("plan/sh -c true", "sh -c true", Approval::Auto),
        (
            "shell/true >/dev/null",
            "true >/dev/null",
            confirmed.clone(),
        ),
    ] {
        let args = arguments(line);
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    black_box(tool.execute(&args, &approval).await.expect("runs"))
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_command);
criterion_main!(benches);
