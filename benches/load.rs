//! Load generator: N channels, each running multi-step conversations at the same time
//! through the real core, gate, executors (SQLite demo database, files) and store, against a
//! fake model with a set latency. Reports throughput, the loop's own overhead per model step
//! (median and p99), the tools' execution time, and peak RSS.
//!
//! Run: `cargo bench --bench load -- --channels 1000 --runs 3 [options]`
//!
//! Options (defaults in brackets):
//! - `--channels N` [100] channels, all active at once;
//! - `--runs N` [2] messages per channel, one after another;
//! - `--latency-ms N` [200] the model's time per call, `--jitter-pct P` [10] spread around it;
//! - `--think-ms N` [0] a person's pause between a reply and the channel's next message
//!   (uniform between half and one and a half times N);
//! - `--ramp-ms N` [= latency] the first messages arrive spread over this window instead
//!   of in one instant;
//! - `--store URL|memory` [a SQLite file in a temp directory] the state store;
//! - `--max-connections N` [16, the default of `store.max_connections`] PostgreSQL pool size;
//! - `--history-cache N` [1000, the default of `store.history_cache_channels`] channels
//!   whose conversation is kept in memory in front of the store (0: read it every run).
//!
//! Definitions, per model step (a run of three model calls has three steps):
//! - *loop overhead* = (the time from the message to its reply being posted - the model's
//!   time - the tools' execution time) / model calls: what the loop adds to a person's wait
//!   (the gate, the protocol, the store reads and writes on the run's path, events, and every
//!   wait for a core or a lock). The same up to the run's end is reported too: it adds the
//!   run's bookkeeping after the reply (its end and its messages written), which delays only
//!   the channel's next message, reported on its own as *after the reply*;
//! - *tool time* = from the gate's decision to the tool's result, per call (the SQL query,
//!   the directory listing): the work the user asked for, reported on its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use riskgate::config::Settings;
use riskgate::core::agent::{
    AgentEvent, ChatReply, ChatRequest, Inbound, ReplyToolCall, Role, RunOutcome,
};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError, Store,
};
use riskgate::core::tools::BoxFuture;
use serde_json::json;

#[path = "../tests/support/hooked_store.rs"]
#[allow(dead_code)]
mod hooked_store;

use hooked_store::HookedStore;

/// A small deterministic generator (xorshift64*): the same spread on every run.
struct Spread(u64);

impl Spread {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `base` scaled by a factor uniform in [1 - spread, 1 + spread].
    fn around(&mut self, base: Duration, spread: f64) -> Duration {
        base.mul_f64(1.0 - spread + 2.0 * spread * self.next())
    }
}

/// Answers like a model that looks at the data, lists files, then replies.
struct ScriptedModel {
    latency: Duration,
    jitter: f64,
    spread: Mutex<Spread>,
}

impl ChatModel for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let latency = self
                .spread
                .lock()
                .map_or(self.latency, |mut s| s.around(self.latency, self.jitter));
            tokio::time::sleep(latency).await;
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
                usage: None,
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

/// Time spent per run, keyed by the run's message text.
#[derive(Default, Clone, Copy)]
struct Spent {
    model: Duration,
    model_calls: u32,
}

/// Records how much of each run was the model's time.
struct Timed {
    inner: Arc<dyn ChatModel>,
    spent: Arc<Mutex<HashMap<String, Spent>>>,
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
                entry.model += started.elapsed();
                entry.model_calls += 1;
            }
            reply
        })
    }
}

/// What a chat surface would post, and how long each tool took: from the gate's decision
/// (`ToolCall`) to the result (`ToolResult`) in the same channel.
#[derive(Default)]
struct Recording {
    posts: Mutex<u64>,
    started: Mutex<HashMap<String, Instant>>,
    /// Tool time per channel for the run in progress (a channel runs one run at a time).
    tool_time: Mutex<HashMap<String, Duration>>,
    /// Every call's tool time.
    calls: Mutex<Vec<Duration>>,
    /// When each channel's run in progress posted its reply.
    replied: Mutex<HashMap<String, Instant>>,
}

impl Recording {
    fn take_reply_time(&self, channel: &str) -> Option<Instant> {
        self.replied.lock().ok().and_then(|mut t| t.remove(channel))
    }

    fn take_tool_time(&self, channel: &str) -> Duration {
        self.tool_time
            .lock()
            .ok()
            .and_then(|mut t| t.remove(channel))
            .unwrap_or_default()
    }
}

impl EventSink for Recording {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        match event {
            AgentEvent::ToolCall { .. } => {
                if let Ok(mut started) = self.started.lock() {
                    started.insert(channel.to_owned(), Instant::now());
                }
            }
            AgentEvent::ToolResult { .. } => {
                let took = self
                    .started
                    .lock()
                    .ok()
                    .and_then(|mut s| s.remove(channel))
                    .map(|at| at.elapsed())
                    .unwrap_or_default();
                if let Ok(mut t) = self.tool_time.lock() {
                    *t.entry(channel.to_owned()).or_default() += took;
                }
                if let Ok(mut calls) = self.calls.lock() {
                    calls.push(took);
                }
                if let Ok(mut n) = self.posts.lock() {
                    *n += 1;
                }
            }
            AgentEvent::Reply { .. } => {
                if let Ok(mut replied) = self.replied.lock() {
                    replied.insert(channel.to_owned(), Instant::now());
                }
                if let Ok(mut n) = self.posts.lock() {
                    *n += 1;
                }
            }
            _ => {}
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

fn number<T: std::str::FromStr>(name: &str, default: &str) -> T {
    let value = arg(name, default);
    value.parse().unwrap_or_else(|_| {
        eprintln!("load: {name} needs a number, got {value:?}");
        std::process::exit(2)
    })
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One run's figures.
struct Sample {
    /// Loop overhead per model step, up to the reply being posted.
    overhead: Duration,
    /// The same up to the run's end (the run's bookkeeping after the reply included).
    overhead_to_end: Duration,
    /// From the reply being posted to the run's end: the end of the run and its messages
    /// written, before the channel takes its next message.
    after_reply: Duration,
    /// Everything but the model, per model step (overhead plus tools).
    beside_model: Duration,
}

fn main() {
    let channels: usize = number("--channels", "100");
    let runs: usize = number("--runs", "2");
    let latency = Duration::from_millis(number("--latency-ms", "200"));
    let jitter = number::<f64>("--jitter-pct", "10") / 100.0;
    let think = Duration::from_millis(number("--think-ms", "0"));
    let ramp = Duration::from_millis(number("--ramp-ms", &latency.as_millis().to_string()));
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
        std::fs::create_dir_all(&settings.tools.workspace).expect("workspace");
        for i in 0..20 {
            std::fs::write(settings.tools.workspace.join(format!("report-{i}.txt")), "x")
                .expect("file");
        }
        let store: Arc<dyn Store> = if store_url == "memory" {
            Arc::new(riskgate::store::MemoryStore::new())
        } else {
            settings.store.url = store_url.clone();
            settings.store.max_connections = number(
                "--max-connections",
                &settings.store.max_connections.to_string(),
            );
            match riskgate::app::open_store(&settings).await {
                // As `riskgate run` opens it: recent conversations kept in memory
                // (`store.history_cache_channels`; `--history-cache 0` turns it off).
                Ok(store) => {
                    settings.store.history_cache_channels =
                        number("--history-cache", &settings.store.history_cache_channels.to_string());
                    riskgate::app::cache_history(Arc::new(store), &settings)
                }
                Err(e) => {
                    eprintln!("load: {e}");
                    std::process::exit(1)
                }
            }
        };
        // Times every store operation (no hooks set: nothing is delayed or failed).
        let store = HookedStore::new(store);
        let spent = Arc::new(Mutex::new(HashMap::<String, Spent>::new()));
        let recording = Arc::new(Recording::default());
        let agent = Arc::new(
            riskgate::app::build_agent(
                &settings,
                Arc::new(Timed {
                    inner: Arc::new(ScriptedModel {
                        latency,
                        jitter,
                        spread: Mutex::new(Spread::new(7)),
                    }),
                    spent: spent.clone(),
                }),
                store.clone(),
                Arc::new(Nobody),
                recording.clone(),
            )
            .expect("agent"),
        );
        // Warm up: the demo database is created by the first SQL call, and the store's and the
        // demo database's pools open their connections (16 runs at once).
        let warmups: Vec<_> = (0..16)
            .map(|i| {
                let agent = agent.clone();
                tokio::spawn(async move {
                    agent
                        .run(&Inbound {
                            channel: format!("warmup-{i}"),
                            author: "bench".into(),
                            author_name: "bench".into(),
                            text: format!("warmup {i}"),
                        })
                        .await
                })
            })
            .collect();
        for warmup in warmups {
            warmup.await.expect("warm-up run");
        }
        if let Ok(mut calls) = recording.calls.lock() {
            calls.clear();
        }
        if let Ok(mut took) = store.took.lock() {
            took.clear();
        }

        let started = Instant::now();
        let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
        let mut tasks = Vec::new();
        for c in 0..channels {
            let agent = agent.clone();
            let spent = spent.clone();
            let samples = samples.clone();
            let recording = recording.clone();
            tasks.push(tokio::spawn(async move {
                let mut spread = Spread::new(c as u64 + 1);
                tokio::time::sleep(ramp.mul_f64(spread.next())).await;
                for r in 0..runs {
                    if r > 0 && !think.is_zero() {
                        tokio::time::sleep(spread.around(think, 0.5)).await;
                    }
                    let channel = format!("load-{c}");
                    let text = format!("channel {c} run {r}: how are orders?");
                    let run_started = Instant::now();
                    let outcome = agent
                        .run(&Inbound {
                            channel: channel.clone(),
                            author: "bench".into(),
                            author_name: "bench".into(),
                            text: text.clone(),
                        })
                        .await;
                    let ended = Instant::now();
                    let wall = ended - run_started;
                    assert!(matches!(outcome, RunOutcome::Replied(_)), "{outcome:?}");
                    let replied = recording.take_reply_time(&channel).unwrap_or(ended);
                    let to_reply = replied - run_started;
                    let spent = spent
                        .lock()
                        .ok()
                        .and_then(|s| s.get(&text).copied())
                        .unwrap_or_default();
                    let tools = recording.take_tool_time(&channel);
                    let steps = spent.model_calls.max(1);
                    let beside_model = wall.saturating_sub(spent.model);
                    if let Ok(mut samples) = samples.lock() {
                        samples.push(Sample {
                            overhead: to_reply.saturating_sub(spent.model).saturating_sub(tools)
                                / steps,
                            overhead_to_end: beside_model.saturating_sub(tools) / steps,
                            after_reply: ended - replied,
                            beside_model: beside_model / steps,
                        });
                    }
                }
            }));
        }
        for task in tasks {
            task.await.expect("a channel failed");
        }
        let elapsed = started.elapsed();
        let samples = samples.lock().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default();
        let mut overheads: Vec<Duration> = samples.iter().map(|s| s.overhead).collect();
        let mut beside: Vec<Duration> = samples.iter().map(|s| s.beside_model).collect();
        let mut to_end: Vec<Duration> = samples.iter().map(|s| s.overhead_to_end).collect();
        let mut after_reply: Vec<Duration> = samples.iter().map(|s| s.after_reply).collect();
        to_end.sort();
        after_reply.sort();
        let mut calls = recording.calls.lock().map(|c| c.clone()).unwrap_or_default();
        overheads.sort();
        beside.sort();
        calls.sort();
        let steps = channels * runs * 3;
        let shown_store = if store_url == "memory" {
            "memory".to_owned()
        } else {
            riskgate::config::redact_password(&store_url)
        };
        println!(
            "load: {channels} channels x {runs} runs x 3 model steps (2 tools each run), model {latency:?} +-{:.0}%, think {think:?}, ramp {ramp:?}, store {shown_store}",
            jitter * 100.0
        );
        println!("  wall time              {:.2} s", elapsed.as_secs_f64());
        println!(
            "  throughput             {:.1} runs/s, {:.1} model steps/s, {:.1} tool calls/s",
            (channels * runs) as f64 / elapsed.as_secs_f64(),
            steps as f64 / elapsed.as_secs_f64(),
            calls.len() as f64 / elapsed.as_secs_f64()
        );
        println!(
            "  loop overhead/step     median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            ms(percentile(&overheads, 0.5)),
            ms(percentile(&overheads, 0.99)),
            ms(overheads.last().copied().unwrap_or_default())
        );
        println!(
            "  same, to the run's end median {:.2} ms, p99 {:.2} ms",
            ms(percentile(&to_end, 0.5)),
            ms(percentile(&to_end, 0.99))
        );
        println!(
            "  after the reply/run    median {:.2} ms, p99 {:.2} ms",
            ms(percentile(&after_reply, 0.5)),
            ms(percentile(&after_reply, 0.99))
        );
        println!(
            "  tool time/call         median {:.2} ms, p99 {:.2} ms",
            ms(percentile(&calls, 0.5)),
            ms(percentile(&calls, 0.99))
        );
        println!(
            "  all but model/step     median {:.2} ms, p99 {:.2} ms",
            ms(percentile(&beside, 0.5)),
            ms(percentile(&beside, 0.99))
        );
        println!(
            "  posts recorded         {}",
            recording.posts.lock().map(|n| *n).unwrap_or(0)
        );
        println!("  peak RSS               {:.1} MiB", peak_rss_mib());
        let mut took: Vec<(&'static str, Vec<Duration>)> = store
            .took
            .lock()
            .map(|t| {
                t.iter()
                    .filter(|(_, v)| !v.is_empty())
                    .map(|(k, v)| (*k, v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        took.sort_by_key(|(name, _)| *name);
        println!("  store operations (latency as the loop sees it; start_run and record_audit overlap the model's time):");
        for (name, mut latencies) in took {
            latencies.sort();
            println!(
                "    {name:<18} {:>6} calls, median {:.2} ms, p99 {:.2} ms",
                latencies.len(),
                ms(percentile(&latencies, 0.5)),
                ms(percentile(&latencies, 0.99))
            );
        }
    });
}
