//! Faults: the model server sends garbage, truncated JSON, 500s, stalls, or resets the
//! connection.
//! The affected run ends with a message that says what happened, nothing half-done is left,
//! and the next run (another channel) is served normally.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use riskgate::config::Settings;
use riskgate::core::agent::{Agent, AgentEvent, Inbound, RunOutcome, StopReason};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use support::fake_llm::{self, FakeLlm, Scripted};

#[derive(Default)]
struct Events(Mutex<Vec<(String, AgentEvent)>>);

impl EventSink for Events {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        self.0
            .lock()
            .expect("events")
            .push((channel.to_owned(), event.clone()));
    }
}

struct Nobody;

impl ApprovalSurface for Nobody {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

fn agent(base_url: &str, events: Arc<Events>, dir: &std::path::Path) -> Agent {
    let mut settings = Settings::default();
    settings.llm.base_url = base_url.to_owned();
    settings.llm.request_timeout_secs = 1;
    settings.llm.retry_base_delay_ms = 10;
    settings.tools.workspace = dir.to_path_buf();
    riskgate::app::build_agent(
        &settings,
        Arc::new(riskgate::app::model_client(&settings).expect("client")),
        Arc::new(MemoryStore::new()),
        Arc::new(Nobody),
        events,
    )
    .expect("agent")
}

fn inbound(channel: &str) -> Inbound {
    Inbound {
        channel: channel.into(),
        author: "u".into(),
        author_name: "u".into(),
        text: "hello".into(),
    }
}

fn error_in(events: &Events, channel: &str) -> String {
    events
        .0
        .lock()
        .expect("events")
        .iter()
        .find_map(|(c, e)| match e {
            AgentEvent::Error { message } if c == channel => Some(message.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no error was told to {channel}"))
}

async fn fault_then_recovery(fault: Scripted, expected: &str) {
    faults_then_recovery(vec![fault], expected).await;
}

/// `faults` answer the first channel's requests (retries included); the next channel gets a
/// good answer.
async fn faults_then_recovery(mut faults: Vec<Scripted>, expected: &str) {
    faults.push(fake_llm::text("all good"));
    let fake = FakeLlm::start(faults).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let events = Arc::new(Events::default());
    let agent = agent(&fake.base_url(), events.clone(), dir.path());
    let outcome = agent.run(&inbound("broken")).await;
    assert!(
        matches!(outcome, RunOutcome::Stopped(StopReason::Model(_))),
        "{outcome:?}"
    );
    let message = error_in(&events, "broken");
    assert!(message.contains(expected), "{message}");
    assert_eq!(
        agent.run(&inbound("healthy")).await,
        RunOutcome::Replied("all good".into()),
        "the next channel is served"
    );
}

#[tokio::test]
async fn garbage_from_the_model_server() {
    fault_then_recovery(
        Scripted::Status {
            status: 200,
            body: "<html><body>Bad Gateway</body></html>".into(),
            retry_after: None,
        },
        "is not JSON",
    )
    .await;
}

#[tokio::test]
async fn truncated_json_from_the_model_server() {
    fault_then_recovery(
        Scripted::Status {
            status: 200,
            body: r#"{"choices": [{"message": {"role": "assistant", "content": "hel"#.into(),
            retry_after: None,
        },
        "is not JSON",
    )
    .await;
}

#[tokio::test]
async fn server_errors_past_the_retries() {
    // The default settings retry a 500 three times: four in a row end the run.
    faults_then_recovery(
        (0..4)
            .map(|_| fake_llm::status(500, "upstream exploded", None))
            .collect(),
        "kept failing after 4 attempts",
    )
    .await;
}

#[tokio::test]
async fn a_stalled_model_server_times_out() {
    fault_then_recovery(
        Scripted::Slow(Duration::from_secs(3), serde_json::json!({"choices": []})),
        "did not answer within",
    )
    .await;
}

#[tokio::test]
async fn a_connection_reset_is_reported() {
    // A server that accepts and closes every connection at once.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let events = Arc::new(Events::default());
    let broken = agent(&format!("http://{address}/v1"), events.clone(), dir.path());
    let outcome = broken.run(&inbound("broken")).await;
    assert!(
        matches!(outcome, RunOutcome::Stopped(StopReason::Model(_))),
        "{outcome:?}"
    );
    let message = error_in(&events, "broken");
    assert!(
        message.contains("could not be reached") || message.contains("could not be read"),
        "{message}"
    );
}
