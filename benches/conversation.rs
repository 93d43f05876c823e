//! What a long conversation costs in the model's input, and whether a small window refuses
//! it: fifteen runs in one channel (60 stored messages), each reading a 200-row table
//! (~7,700 characters) and answering, against the suite's fake model enforcing a window as
//! llama.cpp does (a 400 when the prompt is over it) and summarising when asked.
//!
//! Prints, per window: requests sent, requests refused, runs that answered, the prompt
//! tokens of each request (the fake's count: characters / 3) as mean and max, the input
//! tokens per person message (a run's requests together), summary requests, and the
//! messages stored at the end. Run: `cargo bench --bench conversation`.

#[path = "../tests/support/fake_llm.rs"]
#[allow(dead_code)]
mod fake_llm;

use std::sync::Arc;

use fake_llm::{Checks, FakeLlm, WindowShape};
use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, Inbound, RunOutcome};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink, Store};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use serde_json::{Value, json};

const RUNS: usize = 15;

struct Quiet;

impl ApprovalSurface for Quiet {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

impl EventSink for Quiet {
    fn emit(&self, _channel: &str, _event: &AgentEvent) {}
}

/// The fake's own count of a request's prompt, the one its window is enforced on.
fn prompt_tokens(request: &Value) -> usize {
    let chars = request["messages"].to_string().chars().count()
        + request
            .get("tools")
            .map_or(0, |t| t.to_string().chars().count());
    chars.div_ceil(3)
}

fn is_summary(request: &Value) -> bool {
    request["messages"]
        .to_string()
        .contains("Summarise the conversation")
}

async fn conversation(window: usize) {
    let mut script = Vec::new();
    for run in 0..RUNS {
        script.push(fake_llm::tool_calls(&[(
            &format!("call_{run}"),
            "file_operations",
            json!({"operation": "read", "path": "users.csv", "risk_level": "low"}),
        )]));
        script.push(fake_llm::text(&format!("answer {run}")));
    }
    let checks = Checks {
        window_tokens: Some((window, WindowShape::LlamaCpp)),
        summarises: true,
        ..Checks::like_real_servers()
    };
    let fake = FakeLlm::start_with(script, checks).await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let rows: String = (0..200)
        .map(|i| {
            format!(
                "{i},user{i}@example.com,2026-11-{:02},{}\n",
                i % 28 + 1,
                i * 37 % 1000
            )
        })
        .collect();
    std::fs::write(workspace.path().join("users.csv"), rows).expect("table");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    settings.llm.base_url = fake.base_url();
    settings.llm.max_retries = 0;
    settings.llm.context_window_tokens = u32::try_from(window).expect("window");
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let store = Arc::new(MemoryStore::new());
    let agent = riskgate::app::build_agent(
        &settings,
        model,
        store.clone(),
        Arc::new(Quiet),
        Arc::new(Quiet),
    )
    .expect("agent");

    let mut answered = 0;
    let mut per_message = Vec::new();
    for run in 0..RUNS {
        let before = fake.requests().await.len();
        let outcome = agent
            .run(&Inbound {
                channel: "c1".into(),
                author: "alice".into(),
                author_name: "alice".into(),
                text: format!("read users.csv ({run})"),
            })
            .await;
        if matches!(outcome, RunOutcome::Replied(_)) {
            answered += 1;
        }
        let requests = fake.requests().await;
        per_message.push(requests[before..].iter().map(prompt_tokens).sum::<usize>());
    }
    let requests = fake.requests().await;
    let tokens: Vec<usize> = requests.iter().map(prompt_tokens).collect();
    let mean = tokens.iter().sum::<usize>() / tokens.len().max(1);
    let max = tokens.iter().max().copied().unwrap_or(0);
    let per_message_mean = per_message.iter().sum::<usize>() / RUNS;
    let last_five = per_message[RUNS - 5..].iter().sum::<usize>() / 5;
    let stored = store
        .load_history("c1", usize::MAX)
        .await
        .expect("history")
        .len();
    println!(
        "window {window}: {} requests, {} refused, {answered}/{RUNS} runs answered, prompt tokens per request mean {mean} max {max}, input tokens per person message mean {per_message_mean} (last five {last_five}), {} summary requests, {stored} messages stored",
        requests.len(),
        fake.rejections().len(),
        requests.iter().filter(|r| is_summary(r)).count(),
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    for window in [4096, 8192, 32768] {
        runtime.block_on(conversation(window));
    }
}
