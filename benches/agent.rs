//! The agent loop's overhead per LLM round trip: one run that gets a text reply (history
//! load and save, prompt, request encoding, reply parsing, events) against a bare reqwest
//! POST of the same body to the same loopback fake. Run: `cargo bench --bench agent`.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, Inbound};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

struct Quiet;

impl ApprovalSurface for Quiet {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

impl EventSink for Quiet {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        black_box(event);
    }
}

fn bench_loop(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": "42 orders."}, "finish_reason": "stop"}]
            })))
            .mount(&server)
            .await;
        server
    });
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.llm.base_url = format!("{}/v1", server.uri());
    settings.tools.workspace = workspace.path().to_path_buf();
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let agent = riskgate::app::build_agent(
        &settings,
        model,
        Arc::new(MemoryStore::new()),
        Arc::new(Quiet),
        Arc::new(Quiet),
    )
    .expect("agent");

    // The same body the agent sends, for the bare baseline.
    let tools = agent.tool_definitions("ops");
    let system = runtime.block_on(agent.opening("ops")).system;
    let body = serde_json::to_vec(&json!({
        "model": settings.llm.model,
        "messages": [{"role": "system", "content": system},
                     {"role": "user", "content": "bench: How many orders today?"}],
        "tools": tools.iter().map(|t| json!({"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": t.parameters}})).collect::<Vec<_>>(),
        "temperature": 0.2,
        "stream": false
    }))
    .expect("body");
    let url = format!("{}/v1/chat/completions", server.uri());
    let bare = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");

    let mut group = c.benchmark_group("agent/round_trip");
    let counter = AtomicU64::new(0);
    group.bench_function("riskgate_run_text_reply", |b| {
        b.iter(|| {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            runtime.block_on(agent.run(&Inbound {
                channel: format!("bench-{n}"),
                author: "bench".into(),
                author_name: "bench".into(),
                text: "How many orders today?".into(),
            }))
        })
    });
    group.bench_function("bare_reqwest_post", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let response = bare
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .expect("send");
                let bytes = response.bytes().await.expect("body");
                black_box(serde_json::from_slice::<serde_json::Value>(&bytes).expect("json"))
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_loop);
criterion_main!(benches);
