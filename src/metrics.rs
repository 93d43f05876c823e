//! Metrics for operators: counters and a latency histogram kept in memory, served in the
//! Prometheus text format on an optional HTTP port together with `/healthz`
//! (`observability.listen`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::core::agent::{AgentEvent, ChatReply, ChatRequest};
use crate::core::ports::{ChatModel, EventSink, ModelError};
use crate::core::tools::BoxFuture;

/// Upper bounds (seconds) of the LLM latency buckets.
const LATENCY_BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; LATENCY_BUCKETS.len()],
    sum: f64,
    count: u64,
}

/// Everything counted.
#[derive(Debug, Default)]
pub struct Metrics {
    runs: Mutex<BTreeMap<String, u64>>,
    tool_calls: Mutex<BTreeMap<(String, String), u64>>,
    approvals: Mutex<BTreeMap<String, u64>>,
    llm_errors: Mutex<BTreeMap<String, u64>>,
    llm_latency: Mutex<Histogram>,
    queue_depth: AtomicI64,
}

fn bump<K: Ord>(map: &Mutex<BTreeMap<K, u64>>, key: K) {
    if let Ok(mut map) = map.lock() {
        *map.entry(key).or_default() += 1;
    }
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Counts what an event says.
    pub fn observe(&self, event: &AgentEvent) {
        match event {
            AgentEvent::RunFinished { outcome, .. } => bump(&self.runs, outcome.clone()),
            AgentEvent::ToolCall {
                decision, source, ..
            } => bump(
                &self.tool_calls,
                (decision.as_str().to_owned(), source.as_str().to_owned()),
            ),
            AgentEvent::ApprovalResolved { outcome, .. } => {
                bump(&self.approvals, outcome.as_str().to_owned());
            }
            _ => {}
        }
    }

    pub fn observe_llm(&self, seconds: f64, error: Option<&ModelError>) {
        if let Ok(mut h) = self.llm_latency.lock() {
            for (i, bound) in LATENCY_BUCKETS.iter().enumerate() {
                if seconds <= *bound {
                    h.counts[i] += 1;
                }
            }
            h.sum += seconds;
            h.count += 1;
        }
        if let Some(error) = error {
            let kind = match error {
                ModelError::Unauthorized(_) => "unauthorized",
                ModelError::UnknownModel(_) => "unknown_model",
                ModelError::Unreachable { .. } => "unreachable",
                ModelError::Exhausted { .. } => "exhausted",
                ModelError::NoToolSupport(_) => "no_tool_support",
                ModelError::Rejected(_) => "rejected",
                ModelError::BadReply(_) => "bad_reply",
                ModelError::Timeout(_) => "timeout",
            };
            bump(&self.llm_errors, kind.to_owned());
        }
    }

    /// Messages waiting in channel queues, across channels.
    pub fn queue_changed(&self, delta: i64) {
        self.queue_depth.fetch_add(delta, Ordering::Relaxed);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let escape = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str("# HELP riskgate_runs_total Agent runs by how they ended.\n# TYPE riskgate_runs_total counter\n");
        if let Ok(runs) = self.runs.lock() {
            for (outcome, n) in runs.iter() {
                let _ = writeln!(
                    out,
                    "riskgate_runs_total{{outcome=\"{}\"}} {n}",
                    escape(outcome)
                );
            }
        }
        out.push_str("# HELP riskgate_tool_calls_total Tool calls by gate decision and its source.\n# TYPE riskgate_tool_calls_total counter\n");
        if let Ok(calls) = self.tool_calls.lock() {
            for ((decision, source), n) in calls.iter() {
                let _ = writeln!(
                    out,
                    "riskgate_tool_calls_total{{decision=\"{}\",source=\"{}\"}} {n}",
                    escape(decision),
                    escape(source)
                );
            }
        }
        out.push_str("# HELP riskgate_approvals_total Approvals by outcome.\n# TYPE riskgate_approvals_total counter\n");
        if let Ok(approvals) = self.approvals.lock() {
            for (outcome, n) in approvals.iter() {
                let _ = writeln!(
                    out,
                    "riskgate_approvals_total{{outcome=\"{}\"}} {n}",
                    escape(outcome)
                );
            }
        }
        out.push_str("# HELP riskgate_llm_errors_total Failed model requests by kind.\n# TYPE riskgate_llm_errors_total counter\n");
        if let Ok(errors) = self.llm_errors.lock() {
            for (kind, n) in errors.iter() {
                let _ = writeln!(out, "riskgate_llm_errors_total{{kind=\"{kind}\"}} {n}");
            }
        }
        out.push_str("# HELP riskgate_llm_request_seconds Model request latency.\n# TYPE riskgate_llm_request_seconds histogram\n");
        if let Ok(h) = self.llm_latency.lock() {
            for (i, bound) in LATENCY_BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "riskgate_llm_request_seconds_bucket{{le=\"{bound}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "riskgate_llm_request_seconds_bucket{{le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "riskgate_llm_request_seconds_sum {}", h.sum);
            let _ = writeln!(out, "riskgate_llm_request_seconds_count {}", h.count);
        }
        out.push_str("# HELP riskgate_queue_depth Messages waiting in channel queues.\n# TYPE riskgate_queue_depth gauge\n");
        let _ = writeln!(
            out,
            "riskgate_queue_depth {}",
            self.queue_depth.load(Ordering::Relaxed).max(0)
        );
        out
    }
}

/// An event sink that counts, then passes events on.
pub struct MeteredEvents {
    pub inner: Arc<dyn EventSink>,
    pub metrics: Arc<Metrics>,
}

impl EventSink for MeteredEvents {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        self.metrics.observe(event);
        self.inner.emit(channel, event);
    }
}

/// A model that times its requests.
pub struct MeteredModel {
    pub inner: Arc<dyn ChatModel>,
    pub metrics: Arc<Metrics>,
}

impl ChatModel for MeteredModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let started = Instant::now();
            let reply = self.inner.complete(request).await;
            self.metrics
                .observe_llm(started.elapsed().as_secs_f64(), reply.as_ref().err());
            reply
        })
    }
}

/// Serves `/healthz` and `/metrics` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/metrics",
            get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4",
                        )],
                        metrics.render(),
                    )
                }
            }),
        );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
