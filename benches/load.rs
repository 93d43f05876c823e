//! Load generator: N channels, each running multi-step conversations at the same time
//! through the real core, gate, executors (SQLite demo database, files) and store, against a
//! fake model with a fixed latency. Reports throughput, the loop's own overhead per step
//! (wall time of a run minus the model's time, per model call; median and p99) and peak RSS.
//!
//! Run: `cargo bench --bench load -- --channels 1000 --runs 2 --latency-ms 200 [--store URL]`
//! (defaults: 100 channels, 2 runs each, 200 ms, a SQLite store in a temp directory).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use riskgate::config::Settings;
use riskgate::core::agent::{
    AgentEvent, ChatReply, ChatRequest, Inbound, ReplyToolCall, Role, RunOutcome,
};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError,
};
use riskgate::core::tools::BoxFuture;
use serde_json::json;

/// Answers like a model that looks at the data, lists files, then replies.
struct ScriptedModel {
    latency: Duration,
}

impl ChatModel for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(self.latency).await;
            let since_user = request
                .messages
                .iter()
                .rev()
                .take_while(|m| !(m.role == Role::User && m.name.is_some()))
                .filter(|m| m.role == Role::Tool)
                .count();
            let call = |id: &str, name: &str, arguments: serde_json::Value| ChatReply {
                content: None,
                tool_calls: vec![ReplyToolCall {
                    id: Some(id.into()),
                    name: name.into(),
                    arguments,
                }],
                finish_reason: Some("tool_calls".into()),
            };
            Ok(match since_user {
                0 => call(
                    "a",
                    "execute_sql",
                    json!({"sql": "SELECT c.name, count(o.id) AS orders FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY orders DESC LIMIT 5"}),
                ),
                1 => call(
                    "b",
                    "file_operations",
                    json!({"operation": "list", "path": "."}),
                ),
                _ => ChatReply {
                    content: Some("Here is what I found.".into()),
                    ..ChatReply::default()
                },
            })
        })
    }
}

/// Records how much of each run was the model's time.
struct Timed {
    inner: Arc<dyn ChatModel>,
    spent: Arc<Mutex<std::collections::HashMap<String, (Duration, u32)>>>,
}

impl ChatModel for Timed {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let started = Instant::now();
            let reply = self.inner.complete(request).await;
            // The newest message a person wrote is this run's: it names the run.
            let key = request
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User && m.name.is_some())
                .and_then(|m| m.content.clone())
                .unwrap_or_default();
            if let Ok(mut spent) = self.spent.lock() {
                let entry = spent.entry(key).or_default();
                entry.0 += started.elapsed();
                entry.1 += 1;
            }
            reply
        })
    }
}

/// Counts what a chat surface would post.
#[derive(Default)]
struct Recording(Mutex<u64>);

impl EventSink for Recording {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        if matches!(
            event,
            AgentEvent::ToolResult { .. } | AgentEvent::Reply { .. }
        ) && let Ok(mut n) = self.0.lock()
        {
            *n += 1;
        }
    }
}

struct Nobody;

impl ApprovalSurface for Nobody {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_owned())
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let channels: usize = arg("--channels", "100").parse().expect("--channels N");
    let runs: usize = arg("--runs", "2").parse().expect("--runs N");
    let latency =
        Duration::from_millis(arg("--latency-ms", "200").parse().expect("--latency-ms N"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let dir = tempfile::tempdir().expect("tempdir");
        let store_url = arg(
            "--store",
            &format!("sqlite://{}", dir.path().join("state.db").display()),
        );
        let mut settings = Settings::default();
        settings.tools.workspace = dir.path().join("workspace");
        settings.store.url = store_url.clone();
        std::fs::create_dir_all(&settings.tools.workspace).expect("workspace");
        for i in 0..20 {
            std::fs::write(settings.tools.workspace.join(format!("report-{i}.txt")), "x").expect("file");
        }
        let store = Arc::new(riskgate::app::open_store(&settings).await.expect("store"));
        let spent = Arc::new(Mutex::new(std::collections::HashMap::new()));
        let posts = Arc::new(Recording::default());
        let agent = Arc::new(
            riskgate::app::build_agent(
                &settings,
                Arc::new(Timed {
                    inner: Arc::new(ScriptedModel { latency }),
                    spent: spent.clone(),
                }),
                store,
                Arc::new(Nobody),
                posts.clone(),
            )
            .expect("agent"),
        );
        // Warm up: the demo database is created by the first SQL call.
        agent
            .run(&Inbound {
                channel: "warmup".into(),
                author: "bench".into(),
                author_name: "bench".into(),
                text: "warmup".into(),
            })
            .await;

        let started = Instant::now();
        let samples: Arc<Mutex<VecDeque<Duration>>> = Arc::default();
        let mut tasks = Vec::new();
        for c in 0..channels {
            let agent = agent.clone();
            let spent = spent.clone();
            let samples = samples.clone();
            tasks.push(tokio::spawn(async move {
                for r in 0..runs {
                    let text = format!("channel {c} run {r}: how are orders?");
                    let run_started = Instant::now();
                    let outcome = agent
                        .run(&Inbound {
                            channel: format!("load-{c}"),
                            author: "bench".into(),
                            author_name: "bench".into(),
                            text: text.clone(),
                        })
                        .await;
                    let wall = run_started.elapsed();
                    assert!(matches!(outcome, RunOutcome::Replied(_)), "{outcome:?}");
                    let (model, calls) = spent
                        .lock()
                        .ok()
                        .and_then(|s| s.get(&text).copied())
                        .unwrap_or_default();
                    let overhead = wall.saturating_sub(model) / calls.max(1);
                    if let Ok(mut samples) = samples.lock() {
                        samples.push_back(overhead);
                    }
                }
            }));
        }
        for task in tasks {
            task.await.expect("a channel failed");
        }
        let elapsed = started.elapsed();
        let mut overheads: Vec<Duration> = samples.lock().map(|s| s.iter().copied().collect()).unwrap_or_default();
        overheads.sort();
        let steps = channels * runs * 3;
        println!("load: {channels} channels x {runs} runs x 3 model steps (2 tools each run), model latency {latency:?}, store {}",
            riskgate::config::redact_password(&store_url));
        println!("  wall time           {:.2} s", elapsed.as_secs_f64());
        println!("  throughput          {:.1} runs/s, {:.1} model steps/s", (channels * runs) as f64 / elapsed.as_secs_f64(), steps as f64 / elapsed.as_secs_f64());
        println!("  loop overhead/step  median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            percentile(&overheads, 0.5).as_secs_f64() * 1e3,
            percentile(&overheads, 0.99).as_secs_f64() * 1e3,
            overheads.last().copied().unwrap_or_default().as_secs_f64() * 1e3);
        println!("  posts recorded      {}", posts.0.lock().map(|n| *n).unwrap_or(0));
        println!("  peak RSS            {:.1} MiB", peak_rss_mib());
    });
}
