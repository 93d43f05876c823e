//! Metrics for operators: counters and a latency histogram kept in memory, served in the
//! OpenMetrics text format on an optional HTTP port together with `/healthz`
//! (`observability.listen`, answered by [`crate::health`]). The registry and its encoding
//! are `prometheus-client`'s: the format's escaping, `_total` suffixes, histogram buckets
//! and `# EOF` are its job.
//!
//! The model server's state ([`ModelStatus`]) is kept here too, since every model request
//! passes through [`MeteredModel`]: the check at start sets it, each request's outcome
//! updates it, and `/healthz`, `riskgate_model_server_up` and the start-up line read it;
//! and so is the model's context window that check resolved, for `/status`.
//!
//! The tokens the model server says each request cost are counted by channel
//! (`riskgate_llm_prompt_tokens_total{channel}`, `riskgate_llm_completion_tokens_total`),
//! from [`AgentEvent::ModelUsage`]. The first [`LABELLED_CHANNELS`] channels get a label
//! each; the tokens of any channel after them are counted under `channel="other"`, so a bot
//! in many channels cannot make the exposition (and Prometheus's series) grow without end.

use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::core::agent::{AgentEvent, ChatReply, ChatRequest};
use crate::core::ports::{ChatModel, EventSink, ModelError, ReplyListener};
use crate::core::tools::BoxFuture;
use crate::llm::ContextWindow;

/// Upper bounds (seconds) of the LLM latency buckets.
const LATENCY_BUCKETS: [f64; 10] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

/// Channels the token counters name; the tokens of every channel after these are counted
/// under [`OTHER_CHANNELS`]. A hundred covers the channels of a bot for one team or a few,
/// and keeps the series a bot adds to Prometheus at a few hundred.
pub const LABELLED_CHANNELS: usize = 100;

/// The label of the tokens of the channels beyond [`LABELLED_CHANNELS`].
pub const OTHER_CHANNELS: &str = "other";

/// What `/metrics` answers with: OpenMetrics text, which Prometheus reads.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolCall {
    decision: String,
    source: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Channel {
    channel: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorKind {
    kind: &'static str,
}

/// Messages waiting in channel queues. A worker can take a message before the enqueuer
/// counts it, so the sum may dip below zero for a moment; it is shown as zero then.
#[derive(Debug, Clone, Default)]
struct QueueDepth(Arc<AtomicI64>);

impl EncodeMetric for QueueDepth {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.0.load(Ordering::Relaxed).max(0))
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
}

/// Everything counted, and the registry that serves it.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    runs: Family<Outcome, Counter>,
    tool_calls: Family<ToolCall, Counter>,
    approvals: Family<Outcome, Counter>,
    llm_errors: Family<ErrorKind, Counter>,
    llm_latency: Histogram,
    queue_depth: QueueDepth,
    model: ModelGauge,
    prompt_tokens: Family<Channel, Counter>,
    completion_tokens: Family<Channel, Counter>,
    /// The channels the token counters name so far (at most [`LABELLED_CHANNELS`]).
    labelled: Mutex<HashSet<String>>,
    /// The model's context window, once the check at start resolved it.
    context_window: RwLock<Option<ContextWindow>>,
}

/// Whether the model server answered, as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelStatus {
    /// Not asked yet.
    Unchecked,
    /// It answered; what it said.
    Answering(String),
    /// It did not answer, or refused; why.
    Failing(String),
}

impl ModelStatus {
    /// `model server: ...`, for `/healthz`.
    pub fn line(&self) -> String {
        match self {
            Self::Unchecked => "model server: not checked yet".to_owned(),
            Self::Answering(what) => format!("model server: {what}"),
            Self::Failing(why) => format!("model server: FAILING: {why}"),
        }
    }
}

/// `riskgate_model_server_up`: 1 while the model server answers, else 0.
#[derive(Debug, Clone)]
struct ModelGauge(Arc<tokio::sync::watch::Sender<ModelStatus>>);

impl EncodeMetric for ModelGauge {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let up = matches!(*self.0.borrow(), ModelStatus::Answering(_));
        encoder.encode_gauge(&i64::from(up))
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Gauge
    }
}

impl Metrics {
    pub fn new() -> Arc<Self> {
        let runs = Family::<Outcome, Counter>::default();
        let tool_calls = Family::<ToolCall, Counter>::default();
        let approvals = Family::<Outcome, Counter>::default();
        let llm_errors = Family::<ErrorKind, Counter>::default();
        let llm_latency = Histogram::new(LATENCY_BUCKETS);
        let queue_depth = QueueDepth::default();
        let model = ModelGauge(Arc::new(tokio::sync::watch::Sender::new(
            ModelStatus::Unchecked,
        )));
        let prompt_tokens = Family::<Channel, Counter>::default();
        let completion_tokens = Family::<Channel, Counter>::default();
        // Help texts without the final period: the registry adds it.
        let mut registry = Registry::default();
        registry.register(
            "riskgate_runs",
            "Agent runs by how they ended",
            runs.clone(),
        );
        registry.register(
            "riskgate_tool_calls",
            "Tool calls by gate decision and its source",
            tool_calls.clone(),
        );
        registry.register(
            "riskgate_approvals",
            "Approvals by outcome",
            approvals.clone(),
        );
        registry.register(
            "riskgate_llm_errors",
            "Failed model requests by kind",
            llm_errors.clone(),
        );
        registry.register(
            "riskgate_llm_request_seconds",
            "Model request latency",
            llm_latency.clone(),
        );
        registry.register(
            "riskgate_queue_depth",
            "Messages waiting in channel queues",
            queue_depth.clone(),
        );
        registry.register(
            "riskgate_model_server_up",
            "1 when the model server answered its last request (or the check at start) usably, else 0",
            model.clone(),
        );
        registry.register(
            "riskgate_llm_prompt_tokens",
            "Prompt tokens of model requests by channel, as the model server counted them",
            prompt_tokens.clone(),
        );
        registry.register(
            "riskgate_llm_completion_tokens",
            "Completion tokens of model replies by channel, as the model server counted them",
            completion_tokens.clone(),
        );
        Arc::new(Self {
            registry,
            runs,
            tool_calls,
            approvals,
            llm_errors,
            llm_latency,
            queue_depth,
            model,
            prompt_tokens,
            completion_tokens,
            labelled: Mutex::default(),
            context_window: RwLock::default(),
        })
    }

    /// Counts what an event in `channel` says.
    pub fn observe(&self, channel: &str, event: &AgentEvent) {
        match event {
            AgentEvent::RunFinished { outcome, .. } => {
                self.runs
                    .get_or_create(&Outcome {
                        outcome: outcome.clone(),
                    })
                    .inc();
            }
            AgentEvent::ToolCall {
                decision, source, ..
            } => {
                self.tool_calls
                    .get_or_create(&ToolCall {
                        decision: decision.as_str().to_owned(),
                        source: source.as_str().to_owned(),
                    })
                    .inc();
            }
            AgentEvent::ApprovalResolved { outcome, .. } => {
                self.approvals
                    .get_or_create(&Outcome {
                        outcome: outcome.as_str().to_owned(),
                    })
                    .inc();
            }
            AgentEvent::ModelUsage {
                prompt_tokens,
                completion_tokens,
            } => {
                let channel = Channel {
                    channel: self.channel_label(channel),
                };
                self.prompt_tokens
                    .get_or_create(&channel)
                    .inc_by(*prompt_tokens);
                self.completion_tokens
                    .get_or_create(&channel)
                    .inc_by(*completion_tokens);
            }
            _ => {}
        }
    }

    /// `channel` while it is one of the first [`LABELLED_CHANNELS`] counted, else
    /// [`OTHER_CHANNELS`].
    fn channel_label(&self, channel: &str) -> String {
        let mut labelled = self.labelled.lock().unwrap_or_else(PoisonError::into_inner);
        if labelled.contains(channel) {
            return channel.to_owned();
        }
        if labelled.len() < LABELLED_CHANNELS {
            labelled.insert(channel.to_owned());
            return channel.to_owned();
        }
        OTHER_CHANNELS.to_owned()
    }

    pub fn observe_llm(&self, seconds: f64, error: Option<&ModelError>) {
        self.llm_latency.observe(seconds);
        self.model.0.send_replace(match error {
            None => ModelStatus::Answering("answered the last request".to_owned()),
            Some(error) if server_unavailable(error) => {
                ModelStatus::Failing(format!("the last request failed: {error}"))
            }
            // It answered, with something the run could not use.
            Some(_) => ModelStatus::Answering(
                "answered the last request (with an error the run reported)".to_owned(),
            ),
        });
        if let Some(error) = error {
            let kind = match error {
                ModelError::Unauthorized(_) => "unauthorized",
                ModelError::UnknownModel(_) => "unknown_model",
                ModelError::Unreachable { .. } => "unreachable",
                ModelError::Exhausted { .. } => "exhausted",
                ModelError::RetryLater { .. } => "retry_later",
                ModelError::TooLong(_) => "too_long",
                ModelError::Interrupted(_) => "interrupted",
                ModelError::NoToolSupport(_) => "no_tool_support",
                ModelError::Rejected(_) => "rejected",
                ModelError::BadReply(_) => "bad_reply",
                ModelError::Timeout(_) => "timeout",
                ModelError::Stalled(_) => "stalled",
                ModelError::TooSlow(_) => "too_slow",
            };
            self.llm_errors.get_or_create(&ErrorKind { kind }).inc();
        }
    }

    /// The model server's state, as the check at start or a request found it.
    pub fn set_model_status(&self, status: ModelStatus) {
        self.model.0.send_replace(status);
    }

    /// The model's context window, as the check at start resolved it.
    pub fn set_context_window(&self, window: ContextWindow) {
        *self
            .context_window
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(window);
    }

    /// The model's context window; `None` until the check at start has resolved it.
    pub fn context_window(&self) -> Option<ContextWindow> {
        *self
            .context_window
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The model server's state as last seen.
    pub fn model_status(&self) -> ModelStatus {
        self.model.0.borrow().clone()
    }

    /// The model server's state once it has been checked, waiting at most `wait` for that.
    pub async fn model_status_checked(&self, wait: Duration) -> ModelStatus {
        let mut status = self.model.0.subscribe();
        let checked = tokio::time::timeout(
            wait,
            status.wait_for(|s| !matches!(s, ModelStatus::Unchecked)),
        )
        .await;
        match checked {
            Ok(Ok(status)) => status.clone(),
            _ => self.model_status(),
        }
    }

    /// Messages waiting in channel queues, across channels.
    pub fn queue_changed(&self, delta: i64) {
        self.queue_depth.0.fetch_add(delta, Ordering::Relaxed);
    }

    /// The OpenMetrics text exposition ([`CONTENT_TYPE`]).
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            // Writing to a String fails only if an encoder reports an error; say so in the
            // exposition rather than serving half of it.
            tracing::error!(%error, "the metrics could not be encoded");
            return format!("# the metrics could not be encoded: {error}\n# EOF\n");
        }
        out
    }
}

/// Whether a failed request means every run fails until someone acts (the server is away,
/// failing, too slow, refuses the key, does not know the model or cannot take tools),
/// rather than that this one request was refused.
fn server_unavailable(error: &ModelError) -> bool {
    match error {
        ModelError::Unreachable { .. }
        | ModelError::Timeout(_)
        | ModelError::Stalled(_)
        | ModelError::TooSlow(_)
        | ModelError::Exhausted { .. }
        | ModelError::Unauthorized(_)
        | ModelError::UnknownModel(_)
        | ModelError::NoToolSupport(_)
        | ModelError::RetryLater { .. }
        | ModelError::Interrupted(_) => true,
        ModelError::Rejected(_) | ModelError::BadReply(_) | ModelError::TooLong(_) => false,
    }
}

/// An event sink that counts, then passes events on.
pub struct MeteredEvents {
    pub inner: Arc<dyn EventSink>,
    pub metrics: Arc<Metrics>,
}

impl EventSink for MeteredEvents {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        self.metrics.observe(channel, event);
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

    fn complete_telling<'a>(
        &'a self,
        request: &'a ChatRequest,
        listener: &'a dyn ReplyListener,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let started = Instant::now();
            let reply = self.inner.complete_telling(request, listener).await;
            self.metrics
                .observe_llm(started.elapsed().as_secs_f64(), reply.as_ref().err());
            reply
        })
    }

    fn context_limits(&self) -> Option<crate::core::message::ContextLimits> {
        self.inner.context_limits()
    }
}

/// Serves `/healthz` and `/metrics` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    health: Arc<crate::health::Health>,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    use axum::routing::get;
    let healthz = {
        let metrics = metrics.clone();
        move || {
            let (metrics, health) = (metrics.clone(), health.clone());
            async move {
                let report = health.report().await;
                let status = if report.healthy {
                    axum::http::StatusCode::OK
                } else {
                    axum::http::StatusCode::SERVICE_UNAVAILABLE
                };
                (status, report.body(&[metrics.model_status().line()]))
            }
        }
    };
    let app = axum::Router::new().route("/healthz", get(healthz)).route(
        "/metrics",
        get(move || {
            let metrics = metrics.clone();
            async move {
                (
                    [(axum::http::header::CONTENT_TYPE, CONTENT_TYPE)],
                    metrics.render(),
                )
            }
        }),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_has_line(text: &str, line: &str) {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }

    fn exposition() -> String {
        let metrics = Metrics::new();
        for outcome in ["replied", "replied", "said \"no\""] {
            metrics.observe(
                "c",
                &AgentEvent::RunFinished {
                    outcome: outcome.to_owned(),
                    iterations: 1,
                },
            );
        }
        metrics.observe_llm(0.2, None);
        metrics.observe_llm(
            3.0,
            Some(&ModelError::Timeout(std::time::Duration::from_secs(3))),
        );
        metrics.queue_changed(-1);
        metrics.render()
    }

    #[test]
    fn the_exposition_keeps_the_names_types_labels_and_help_texts() {
        let text = exposition();
        for line in [
            "# HELP riskgate_runs Agent runs by how they ended.",
            "# TYPE riskgate_runs counter",
            "riskgate_runs_total{outcome=\"replied\"} 2",
            "riskgate_runs_total{outcome=\"said \\\"no\\\"\"} 1",
            "# HELP riskgate_llm_errors Failed model requests by kind.",
            "# TYPE riskgate_llm_errors counter",
            "riskgate_llm_errors_total{kind=\"timeout\"} 1",
            "# HELP riskgate_llm_request_seconds Model request latency.",
            "# TYPE riskgate_llm_request_seconds histogram",
            "riskgate_llm_request_seconds_bucket{le=\"0.05\"} 0",
            "riskgate_llm_request_seconds_bucket{le=\"0.25\"} 1",
            "riskgate_llm_request_seconds_bucket{le=\"2.5\"} 1",
            "riskgate_llm_request_seconds_bucket{le=\"5.0\"} 2",
            "riskgate_llm_request_seconds_bucket{le=\"60.0\"} 2",
            "riskgate_llm_request_seconds_bucket{le=\"+Inf\"} 2",
            "riskgate_llm_request_seconds_sum 3.2",
            "riskgate_llm_request_seconds_count 2",
            "# HELP riskgate_queue_depth Messages waiting in channel queues.",
            "# TYPE riskgate_queue_depth gauge",
            // A dip below zero (a message taken before it was counted) shows as zero.
            "riskgate_queue_depth 0",
        ] {
            assert_has_line(&text, line);
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn tokens_are_counted_by_channel_and_channels_past_the_limit_as_other() {
        let metrics = Metrics::new();
        let used = |prompt_tokens, completion_tokens| AgentEvent::ModelUsage {
            prompt_tokens,
            completion_tokens,
        };
        metrics.observe("123", &used(1000, 20));
        metrics.observe("123", &used(1500, 30));
        for n in 1..LABELLED_CHANNELS {
            metrics.observe(&format!("busy-{n}"), &used(1, 1));
        }
        // Past the limit: counted, under "other"; a channel named before stays named.
        metrics.observe("late-1", &used(5, 2));
        metrics.observe("late-2", &used(7, 3));
        metrics.observe("123", &used(1, 1));
        let text = metrics.render();
        for line in [
            "# HELP riskgate_llm_prompt_tokens Prompt tokens of model requests by channel, as the model server counted them.",
            "# TYPE riskgate_llm_prompt_tokens counter",
            "riskgate_llm_prompt_tokens_total{channel=\"123\"} 2501",
            "riskgate_llm_completion_tokens_total{channel=\"123\"} 51",
            "riskgate_llm_prompt_tokens_total{channel=\"busy-99\"} 1",
            "riskgate_llm_prompt_tokens_total{channel=\"other\"} 12",
            "riskgate_llm_completion_tokens_total{channel=\"other\"} 5",
        ] {
            assert_has_line(&text, line);
        }
        assert!(!text.contains("late-"), "{text}");
        let named = text
            .lines()
            .filter(|l| l.starts_with("riskgate_llm_prompt_tokens_total{"))
            .count();
        assert_eq!(named, LABELLED_CHANNELS + 1, "{text}");
    }

    #[test]
    fn the_model_servers_state_follows_the_check_and_each_request() {
        let metrics = Metrics::new();
        let up = |metrics: &Metrics| {
            metrics
                .render()
                .lines()
                .find_map(|l| l.strip_prefix("riskgate_model_server_up "))
                .map(str::to_owned)
        };
        assert_eq!(metrics.model_status(), ModelStatus::Unchecked);
        assert_eq!(up(&metrics).as_deref(), Some("0"));
        metrics.set_model_status(ModelStatus::Answering("answered".to_owned()));
        assert_eq!(up(&metrics).as_deref(), Some("1"));
        // A request the server answered with a refusal of its own: still answering.
        metrics.observe_llm(0.1, Some(&ModelError::Rejected("400: bad".to_owned())));
        assert_eq!(up(&metrics).as_deref(), Some("1"));
        metrics.observe_llm(
            0.1,
            Some(&ModelError::Unreachable {
                url: "http://m/v1".to_owned(),
                reason: "connection refused".to_owned(),
            }),
        );
        assert_eq!(up(&metrics).as_deref(), Some("0"));
        assert!(
            metrics
                .model_status()
                .line()
                .starts_with("model server: FAILING: the last request failed: the model server at http://m/v1 could not be reached"),
            "{:?}",
            metrics.model_status()
        );
        metrics.observe_llm(0.1, None);
        assert_eq!(
            metrics.model_status(),
            ModelStatus::Answering("answered the last request".to_owned())
        );
    }
}
