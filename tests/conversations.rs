//! Long conversations against a model server that enforces its context window, as llama.cpp
//! and OpenAI do (a 400 past it): every request fits, every run answers, what a person
//! stated early reaches every later request (word for word or in the summary), and nothing
//! stored is deleted. In-process agent, real model client, the fake server on loopback.

mod support;

use std::sync::{Arc, Mutex};

use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, ChatMessage, Inbound, RunOutcome};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink, Store};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use serde_json::{Value, json};
use support::fake_llm::{self, Checks, FakeLlm, WindowShape};

const FACT: &str = "FACT: my name is Zed and we deploy on Fridays";

#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        self.0.lock().expect("events").push(event.clone());
    }
}

/// Nothing in these conversations asks a person; a request that did would fail the test.
struct NoApprovals;

impl ApprovalSurface for NoApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        panic!("no call here needs a person: {request:?}");
    }
}

struct Bench {
    agent: riskgate::core::agent::Agent,
    store: Arc<MemoryStore>,
    _workspace: tempfile::TempDir,
}

/// An agent on `fake` that believes the window is `window` tokens, with a workspace that
/// holds a 200-row table to read.
fn bench(fake: &FakeLlm, window: u32, configure: impl FnOnce(&mut Settings)) -> Bench {
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
    settings.llm.context_window_tokens = window;
    settings.llm.max_retries = 0;
    configure(&mut settings);
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let store = Arc::new(MemoryStore::new());
    let agent = riskgate::app::build_agent(
        &settings,
        model,
        store.clone(),
        Arc::new(NoApprovals),
        Arc::new(Events::default()),
    )
    .expect("agent");
    Bench {
        agent,
        store,
        _workspace: workspace,
    }
}

fn inbound(text: &str) -> Inbound {
    Inbound {
        channel: "c1".into(),
        author: "alice".into(),
        author_name: "alice".into(),
        text: text.into(),
    }
}

fn read_table(id: &str) -> fake_llm::Scripted {
    fake_llm::tool_calls(&[(
        id,
        "file_operations",
        json!({"operation": "read", "path": "users.csv", "risk_level": "low"}),
    )])
}

fn checks(window: usize, shape: WindowShape) -> Checks {
    Checks {
        window_tokens: Some((window, shape)),
        summarises: true,
        ..Checks::like_real_servers()
    }
}

async fn stored(store: &MemoryStore) -> Vec<ChatMessage> {
    store.load_history("c1", usize::MAX).await.expect("history")
}

/// Fifteen runs, each reading the 200-row table and answering: 60 stored messages.
async fn long_conversation(window: u32, shape: WindowShape) {
    let mut script = Vec::new();
    for run in 0..15 {
        script.push(read_table(&format!("call_{run}")));
        script.push(fake_llm::text(&format!("answer {run}")));
    }
    let fake = FakeLlm::start_with(script, checks(window as usize, shape)).await;
    let bench = bench(&fake, window, |_| {});
    for run in 0..15 {
        let text = if run == 0 {
            format!("{FACT}. Now read users.csv")
        } else {
            format!("read users.csv again ({run})")
        };
        let outcome = bench.agent.run(&inbound(&text)).await;
        assert_eq!(
            outcome,
            RunOutcome::Replied(format!("answer {run}")),
            "window {window}, run {run}: {:?}",
            fake.rejections()
        );
    }
    assert_eq!(fake.rejections(), Vec::<String>::new(), "window {window}");
    let requests = fake.requests().await;
    assert!(
        requests.iter().any(is_summary_request),
        "window {window}: the conversation was never summarised"
    );
    for (index, request) in requests.iter().enumerate() {
        assert!(
            request["messages"].to_string().contains(FACT),
            "window {window}: request {index} lost the early fact"
        );
    }
    // Nothing stored was deleted or rewritten: every run's four messages, in order.
    let kept = stored(&bench.store).await;
    assert_eq!(kept.len(), 60, "window {window}");
    assert!(
        kept[0]
            .content
            .as_deref()
            .unwrap_or_default()
            .contains(FACT)
    );
    assert_eq!(kept[59].content.as_deref(), Some("answer 14"));
}

fn is_summary_request(request: &Value) -> bool {
    request["messages"]
        .to_string()
        .contains("Summarise the conversation")
}

#[tokio::test]
async fn a_long_conversation_with_large_results_fits_an_8k_window_in_llama_cpp_shape() {
    long_conversation(8192, WindowShape::LlamaCpp).await;
}

#[tokio::test]
async fn a_long_conversation_with_large_results_fits_a_4k_window_in_openai_shape() {
    long_conversation(4096, WindowShape::OpenAi).await;
}

/// One run of ten calls with large results in a 4k window ends with an answer: the older
/// results are shortened to their start, the latest one keeps the most the window leaves.
#[tokio::test]
async fn a_ten_call_run_with_large_results_answers_in_a_4k_window() {
    let mut script: Vec<_> = (0..10).map(|i| read_table(&format!("call_{i}"))).collect();
    script.push(fake_llm::text("all read"));
    let fake = FakeLlm::start_with(script, checks(4096, WindowShape::OpenAi)).await;
    let bench = bench(&fake, 4096, |settings| settings.agent.max_iterations = 12);
    assert_eq!(
        bench.agent.run(&inbound("read users.csv ten times")).await,
        RunOutcome::Replied("all read".into())
    );
    assert_eq!(fake.rejections(), Vec::<String>::new());
    let requests = fake.requests().await;
    let last = requests.last().expect("requests");
    let messages = last["messages"].as_array().expect("messages");
    let results: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(results.len(), 10, "every call keeps its result");
    assert!(
        results[0].contains("to fit the model's context window"),
        "{}",
        results[0]
    );
    assert!(
        results[9].len() > results[0].len() * 2,
        "{} vs {}",
        results[9].len(),
        results[0].len()
    );
    assert!(results[9].contains("3,user3@example.com"), "{}", results[9]);
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("ten times")
    );
    // What is stored is the whole of each result.
    let kept = stored(&bench.store).await;
    let stored_results = kept
        .iter()
        .filter(|m| m.tool_call_id.is_some())
        .filter(|m| {
            m.content
                .as_deref()
                .unwrap_or_default()
                .contains("to fit the model's context window")
        })
        .count();
    assert_eq!(stored_results, 0);
}
