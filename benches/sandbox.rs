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
//!
//! `cargo bench --bench sandbox -- --workspaces [--sizes 1000,100000,300000]` measures only
//! what the workspace's size costs a line run without a click: in workspaces of that many
//! empty files (in 100-file directories, made in a temporary directory), `true` run
//! through `CommandTool::execute` with the workspace walked before every line
//! (`watch_workspace = false`, no entry limit) and watched (the default), with the check
//! alone beside it, and the watch's first walk. `--linked N` gives the first N files a
//! second name in their directory (as cargo links its outputs into `target/debug`): lines
//! run, and each check looks at those names again.

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
    let mut sizes: Option<Vec<usize>> = None;
    let mut linked = 0_usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N");
        }
        if arg == "--workspaces" {
            sizes.get_or_insert_with(|| vec![1_000, 100_000, 300_000]);
        }
        if arg == "--sizes" {
            let list = args.next().expect("--sizes N,N,...");
            sizes = Some(
                list.split(',')
                    .map(|n| n.parse().expect("--sizes N,N,..."))
                    .collect(),
            );
        }
        if arg == "--linked" {
            linked = args
                .next()
                .and_then(|n| n.parse().ok())
                .expect("--linked N");
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
    if let Some(sizes) = sizes {
        for files in sizes {
            workspace_size(&runtime, files, linked);
        }
        return;
    }
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

/// Median and p99 of `timing`, in ms, as a table's cells.
fn cells(timing: &mut [Duration]) -> String {
    timing.sort_unstable();
    format!(
        "{:>9.3} ms {:>9.3} ms",
        percentile(timing, 0.5).as_secs_f64() * 1e3,
        percentile(timing, 0.99).as_secs_f64() * 1e3
    )
}

/// A line without a click in a workspace of `files` empty files, walked before every line
/// and watched.
fn workspace_size(runtime: &tokio::runtime::Runtime, files: usize, linked: usize) {
    use riskgate::tools::command::watch::{WatchState, WorkspaceWatch};
    let tree = tempfile::tempdir().expect("tempdir");
    let made = Instant::now();
    for i in 0..files {
        let dir = tree.path().join(format!("d{}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir(&dir).expect("mkdir");
        }
        std::fs::File::create(dir.join(format!("f{i}"))).expect("create");
        if i < linked {
            std::fs::hard_link(dir.join(format!("f{i}")), dir.join(format!("l{i}"))).expect("ln");
        }
    }
    let entries = files + files.div_ceil(100) + linked.min(files);
    println!(
        "workspace of {entries} entries ({files} files) made in {:.1} s",
        made.elapsed().as_secs_f64()
    );
    // The walk of 300,000 entries takes about a second: fewer runs of it.
    let walked_runs = (200_000 / files).clamp(5, 200);
    let args = arguments("true");
    for (variant, watched) in [("walked", false), ("watched", true)] {
        let settings = CommandSettings {
            sandbox: SandboxSettings {
                watch_workspace: watched,
                hard_link_scan_limit: u64::MAX,
                ..SandboxSettings::default()
            },
            ..CommandSettings::default()
        };
        let tool = CommandTool::new(
            Workspace::new(tree.path()),
            &ToolRules::default(),
            &settings,
            &OutputSettings::default(),
        );
        assert!(tool.support().is_ready(), "{}", tool.support());
        let started = Instant::now();
        runtime.block_on(async {
            tool.execute(&args, &Approval::Auto).await.expect("runs");
        });
        let first = started.elapsed();
        if watched {
            assert!(
                matches!(tool.workspace_watch(), WatchState::Watching { .. }),
                "{:?}",
                tool.workspace_watch()
            );
        }
        let runs = if watched { 200 } else { walked_runs };
        let mut lines: Vec<Duration> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                runtime.block_on(async {
                    tool.execute(&args, &Approval::Auto).await.expect("runs");
                });
                started.elapsed()
            })
            .collect();
        let check = WorkspaceWatch::new(tree.path(), u64::MAX, watched);
        check.check().expect("nothing offends");
        let mut checks: Vec<Duration> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                check.check().expect("nothing offends");
                started.elapsed()
            })
            .collect();
        println!(
            "{entries:>7} entries ({linked} linked) {variant:>8}: first line {:>9.3} ms; line {} (median, p99; {runs} runs); check alone {}",
            first.as_secs_f64() * 1e3,
            cells(&mut lines),
            cells(&mut checks)
        );
        if watched {
            assert!(
                matches!(
                    tool.workspace_watch(),
                    WatchState::Watching { walks: 1, .. }
                ),
                "walked again: {:?}",
                tool.workspace_watch()
            );
        }
    }
}
