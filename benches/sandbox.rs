//! What the command sandbox adds to a line: the same lines run through `CommandTool`
//! without a click (the read-only sandbox: the line's control groups and its view of its
//! own where the machine allows them, a Landlock ruleset, the seccomp filters, limits, no
//! capabilities) and confirmed with `confirmed_sandboxed = false` (no groups, view, Landlock
//! or seccomp; the private directory, the parent-death signal and the reaper stay),
//! interleaved, many times, with the median and the 99th percentile of each. `bare` is
//! `tokio::process::Command::output()` of the same program, for scale.
//!
//! Run: `cargo bench --bench sandbox -- [--runs N] [--gap-ms N]` (default 2000 per variant,
//! back to back; `--gap-ms` sleeps that long before each timed line, untimed).

use std::time::{Duration, Instant};

use riskgate::config::{CommandSettings, OutputSettings, SandboxSettings, ToolRules};
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

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let mut runs = 2000_usize;
    let mut gap = Duration::ZERO;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N");
        }
        if arg == "--gap-ms" {
            gap = Duration::from_millis(
                args.next()
                    .and_then(|n| n.parse().ok())
                    .expect("--gap-ms N"),
            );
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("tempdir");
    let settings = CommandSettings {
        sandbox: SandboxSettings {
            confirmed_sandboxed: false,
            ..SandboxSettings::default()
        },
        ..CommandSettings::default()
    };
    let tool = CommandTool::new(
        Workspace::new(workspace.path()),
        &ToolRules::default(),
        &settings,
        &OutputSettings::default(),
    );
    assert!(
        tool.support().is_ready(),
        "the kernel cannot build the sandbox: {}",
        tool.support()
    );
    let per_line = tool.per_line();
    println!("per line: {:?}; {:?}", per_line.limits, per_line.view);
    let unsandboxed = Approval::Confirmed {
        by: "bench".to_owned(),
    };
    // The hard-link scan every line run without a click starts with, over trees of
    // 1,000 and 10,000 files in 100-file directories.
    for files in [1_000_usize, 10_000] {
        let tree = tempfile::tempdir().expect("tempdir");
        for i in 0..files {
            let dir = tree.path().join(format!("d{}", i / 100));
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join(format!("f{i}")), "x").expect("write");
        }
        let mut timing: Vec<Duration> = (0..50)
            .map(|_| {
                let started = Instant::now();
                riskgate::tools::command::sandbox::check_workspace(tree.path(), u64::MAX)
                    .expect("no hard link");
                started.elapsed()
            })
            .collect();
        timing.sort_unstable();
        println!(
            "hard-link scan of {files} files: median {:.2} ms, p99 {:.2} ms",
            percentile(&timing, 0.5).as_secs_f64() * 1e3,
            percentile(&timing, 0.99).as_secs_f64() * 1e3
        );
    }
    println!("runs per variant: {runs}");
    println!(
        "{:<22} {:>12} {:>12} {:>12} {:>12}",
        "line", "variant", "median", "p99", "mean"
    );
    for line in ["true", "true | true | true", "git --version"] {
        let args = arguments(line);
        // `bare` runs the first command of the line, with its arguments.
        let words: Vec<String> = line
            .split('|')
            .next()
            .unwrap_or("true")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut timings: [Vec<Duration>; 3] = Default::default();
        // Warm up: the reaper starts and the page cache fills.
        for _ in 0..20 {
            runtime.block_on(async {
                tool.execute(&args, &Approval::Auto).await.expect("runs");
            });
        }
        for _ in 0..runs {
            for (i, timing) in timings.iter_mut().enumerate() {
                // Lines in a chat come seconds apart: a gap lets the work a line leaves for
                // after its outcome (removing its sandbox, making the next view) finish
                // before the next line is timed, as it does there.
                std::thread::sleep(gap);
                let started = Instant::now();
                runtime.block_on(async {
                    match i {
                        0 => {
                            tool.execute(&args, &Approval::Auto).await.expect("runs");
                        }
                        1 => {
                            tool.execute(&args, &unsandboxed).await.expect("runs");
                        }
                        _ => {
                            tokio::process::Command::new(&words[0])
                                .args(&words[1..])
                                .output()
                                .await
                                .expect("runs");
                        }
                    }
                });
                timing.push(started.elapsed());
            }
        }
        for (timing, variant) in timings.iter_mut().zip(["sandboxed", "unsandboxed", "bare"]) {
            timing.sort_unstable();
            let mean = timing.iter().sum::<Duration>() / timing.len() as u32;
            println!(
                "{line:<22} {variant:>12} {:>9.0} µs {:>9.0} µs {:>9.0} µs",
                percentile(timing, 0.5).as_secs_f64() * 1e6,
                percentile(timing, 0.99).as_secs_f64() * 1e6,
                mean.as_secs_f64() * 1e6
            );
        }
    }
}
