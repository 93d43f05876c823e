//! `/healthz` and `/metrics`: the counters follow what the agent did.

mod support;

use std::sync::Arc;

use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, Inbound};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use riskgate::core::tools::BoxFuture;
use riskgate::metrics::{MeteredEvents, MeteredModel, Metrics};
use riskgate::store::MemoryStore;
use serde_json::json;
use support::fake_llm::{self, FakeLlm};

struct Refuse;

impl ApprovalSurface for Refuse {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async {
            ApprovalOutcome::Cancelled {
                by: "ops".into(),
                reason: None,
            }
        })
    }
}

struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _channel: &str, _event: &AgentEvent) {}
}

#[tokio::test]
async fn metrics_count_runs_calls_approvals_model_latency_and_tokens() {
    let fake = FakeLlm::start(vec![
        fake_llm::with_usage(
            fake_llm::tool_calls(&[
                (
                    "c1",
                    "file_operations",
                    json!({"operation": "list", "path": "."}),
                ),
                (
                    "c2",
                    "file_operations",
                    json!({"operation": "delete", "path": "x.txt"}),
                ),
            ]),
            900,
            40,
        ),
        fake_llm::with_usage(fake_llm::text("done"), 1100, 3),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.llm.base_url = fake.base_url();
    settings.tools.workspace = dir.path().to_path_buf();
    let metrics = Metrics::new();
    let agent = riskgate::app::build_agent(
        &settings,
        Arc::new(MeteredModel {
            inner: Arc::new(riskgate::app::model_client(&settings).expect("client")),
            metrics: metrics.clone(),
        }),
        Arc::new(MemoryStore::new()),
        Arc::new(Refuse),
        Arc::new(MeteredEvents {
            inner: Arc::new(Quiet),
            metrics: metrics.clone(),
        }),
    )
    .expect("agent");
    agent
        .run(&Inbound {
            channel: "4242".into(),
            author: "u".into(),
            author_name: "u".into(),
            text: "tidy up".into(),
        })
        .await;
    let usage = agent.usage.of("4242");
    assert_eq!(
        (usage.prompt_tokens, usage.completion_tokens, usage.requests),
        (2000, 43, 2)
    );
    assert_eq!(usage.last_prompt_tokens, Some(1100));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let stop = tokio_util::sync::CancellationToken::new();
    let health = riskgate::health::Health::new(std::time::Duration::from_secs(30));
    let server = tokio::spawn(riskgate::metrics::serve(
        listener,
        metrics,
        health,
        stop.clone(),
    ));
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let health = client
        .get(format!("http://{address}/healthz"))
        .send()
        .await
        .expect("healthz");
    // Neither Discord nor a store here: the bot is not ready, and says why.
    assert_eq!(health.status(), 503);
    assert_eq!(
        health.text().await.expect("body"),
        "unavailable: discord: connecting (the gateway has not sent READY yet); state database: not open yet\ndiscord: connecting (the gateway has not sent READY yet)\nstate database: not open yet\nmodel server: answered the last request\n"
    );
    let response = client
        .get(format!("http://{address}/metrics"))
        .send()
        .await
        .expect("metrics");
    // OpenMetrics text, which Prometheus asks for and reads.
    assert_eq!(
        response.headers()[reqwest::header::CONTENT_TYPE],
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    let text = response.text().await.expect("body");
    assert!(text.ends_with("# EOF\n"), "{text}");
    for line in [
        "riskgate_runs_total{outcome=\"replied\"} 1",
        "riskgate_tool_calls_total{decision=\"auto\",source=\"whitelist\"} 1",
        "riskgate_tool_calls_total{decision=\"confirm\",source=\"default\"} 1",
        "riskgate_approvals_total{outcome=\"cancelled\"} 1",
        "riskgate_llm_request_seconds_count 2",
        "riskgate_llm_request_seconds_bucket{le=\"+Inf\"} 2",
        "riskgate_queue_depth 0",
        "riskgate_model_server_up 1",
        // Both requests' tokens, as the server counted them, under the run's channel.
        "riskgate_llm_prompt_tokens_total{channel=\"4242\"} 2000",
        "riskgate_llm_completion_tokens_total{channel=\"4242\"} 43",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
    stop.cancel();
    server.await.expect("server task").expect("server");
}
