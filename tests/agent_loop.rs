//! The agent loop end to end without Discord: the real OpenAI client against a scripted fake
//! server on loopback, the real gate and tools, and recording adapters. Time-based limits use
//! an in-process scripted model under paused tokio time.

mod support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use riskgate::config::Settings;
use riskgate::core::agent::{
    Agent, AgentEvent, ChatReply, ChatRequest, Inbound, Protocol, ReplyToolCall, RunOutcome,
    StopReason,
};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError, Store,
};
use riskgate::core::risk::Assessment;
use riskgate::core::tools::{
    Approval, AssessContext, BoxFuture, Reading, RiskAssessor, RiskGate, Tool, ToolError,
    ToolOutput,
};
use riskgate::store::MemoryStore;
use serde_json::{Map, Value, json};
use support::fake_llm::{self, FakeLlm, assert_calls_and_results_pair};

/// Records every event.
#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        self.0.lock().expect("events").push(event.clone());
    }
}

impl Events {
    fn all(&self) -> Vec<AgentEvent> {
        self.0.lock().expect("events").clone()
    }
}

/// Answers approvals from a script; `None` never answers (the request expires). Each answer
/// may take a while (tokio time).
/// Each answer after a delay; `None` never answers.
type Script = Vec<(Duration, Option<ApprovalOutcome>)>;

#[derive(Default)]
struct Approvals {
    script: Mutex<VecDeque<(Duration, Option<ApprovalOutcome>)>>,
    seen: Mutex<Vec<ApprovalRequest>>,
    /// Answerable after a restart, as Discord's buttons are: runs are stored with their
    /// approvals.
    resumable: bool,
    /// Before answering, a resumed copy of the run claims its continuation in this store.
    resumed_first: Mutex<Option<Arc<dyn Store>>>,
}

impl Approvals {
    fn answering(answers: Script) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(answers.into()),
            ..Self::default()
        })
    }

    fn resumable(answers: Script) -> Arc<Self> {
        Arc::new(Self {
            script: Mutex::new(answers.into()),
            resumable: true,
            ..Self::default()
        })
    }
}

impl ApprovalSurface for Approvals {
    fn resumable(&self) -> bool {
        self.resumable
    }

    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.seen.lock().expect("seen").push(request.clone());
        let next = self.script.lock().expect("script").pop_front();
        let resumed_first = self.resumed_first.lock().expect("store").clone();
        Box::pin(async move {
            if let Some(store) = resumed_first {
                let claimed = store.claim_continuation(&request.id, "a resumed copy");
                assert!(claimed.await.expect("claim"), "the copy claims first");
            }
            match next {
                Some((delay, Some(outcome))) => {
                    tokio::time::sleep(delay).await;
                    outcome
                }
                _ => std::future::pending().await,
            }
        })
    }
}

/// A tool that records the arguments it runs with: proof of what reaches an executor.
#[derive(Default)]
struct Spy {
    runs: Mutex<Vec<Map<String, Value>>>,
    /// What each run was handed of the gate's reading (the value it read), if anything.
    readings: Mutex<Vec<Option<String>>>,
}

impl RiskAssessor for Spy {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        match arguments.get("value").and_then(Value::as_str) {
            Some("safe") => Assessment::Safe("a safe spy call".into()),
            Some("wipe") => Assessment::Destructive("a destructive spy call".into()),
            _ => Assessment::Unknown("an unknown spy call".into()),
        }
    }

    fn assess_reading(
        &self,
        arguments: &Map<String, Value>,
        ctx: &AssessContext,
    ) -> (Assessment, Option<Reading>) {
        let value = arguments.get("value").and_then(Value::as_str);
        let read = value.map(|v| Reading::new(format!("read {v}")));
        (self.assess(arguments, ctx), read)
    }
}

impl Tool for Spy {
    fn name(&self) -> &'static str {
        "spy"
    }
    fn description(&self) -> &'static str {
        "Records its arguments."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"value": {"type": "string"}},
               "required": ["value"], "additionalProperties": false})
    }
    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.execute_read(arguments, approval, None)
    }
    fn execute_read<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
        reading: Option<&'a Reading>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.runs.lock().expect("runs").push(arguments.clone());
        let read = reading.and_then(Reading::get::<String>).cloned();
        self.readings.lock().expect("readings").push(read);
        let confirmed = approval.is_confirmed();
        Box::pin(async move {
            Ok(ToolOutput {
                summary: "spied".into(),
                text: format!("spy ran (confirmed: {confirmed})"),
                chat: "spied".into(),
                attachment: None,
            })
        })
    }
}

struct Harness {
    agent: Agent,
    events: Arc<Events>,
    spy: Arc<Spy>,
    approvals: Arc<Approvals>,
    store: Arc<MemoryStore>,
    _workspace: tempfile::TempDir,
}

fn harness(
    model: Arc<dyn ChatModel>,
    protocol: Protocol,
    approvals: Arc<Approvals>,
    configure: impl FnOnce(&mut Settings),
) -> Harness {
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    settings.llm.protocol = match protocol {
        Protocol::Native => "native".into(),
        Protocol::Json => "json".into(),
    };
    configure(&mut settings);
    let events = Arc::new(Events::default());
    let spy = Arc::new(Spy::default());
    let store = Arc::new(MemoryStore::new());
    let mut agent = riskgate::app::build_agent(
        &settings,
        model,
        store.clone(),
        approvals.clone(),
        events.clone(),
    )
    .expect("agent");
    let mut registry = riskgate::tools::builtin_registry(&settings);
    registry.register(spy.clone());
    agent.gate = RiskGate::new(registry, settings.risk.gate_policy());
    Harness {
        agent,
        events,
        spy,
        approvals,
        store,
        _workspace: workspace,
    }
}

fn http_model(fake: &FakeLlm, configure: impl FnOnce(&mut Settings)) -> Arc<dyn ChatModel> {
    let mut settings = Settings::default();
    settings.llm.base_url = fake.base_url();
    settings.llm.retry_base_delay_ms = 10;
    configure(&mut settings);
    Arc::new(riskgate::app::model_client(&settings).expect("client"))
}

fn inbound(text: &str) -> Inbound {
    Inbound {
        channel: "c1".into(),
        author: "alice".into(),
        author_name: "alice".into(),
        text: text.into(),
    }
}

fn tool_messages(request: &Value) -> Vec<&Value> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect()
}

#[tokio::test]
async fn an_auto_run_call_then_a_reply() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[(
            "call_a",
            "spy",
            json!({"value": "safe", "risk_level": "low"}),
        )]),
        fake_llm::text("The spy says hi."),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("look")).await;
    assert_eq!(outcome, RunOutcome::Replied("The spy says hi.".into()));

    let runs = h.spy.runs.lock().expect("runs").clone();
    assert_eq!(
        runs,
        vec![
            json!({"value": "safe"})
                .as_object()
                .cloned()
                .expect("object")
        ]
    );
    assert_eq!(
        h.spy.readings.lock().expect("readings").as_slice(),
        [Some("read safe".to_owned())],
        "what ran is what the gate read"
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_calls_and_results_pair(request);
        let tools: Vec<&str> = request["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["function"]["name"].as_str().expect("name"))
            .collect();
        assert!(
            tools.contains(&"execute_sql") && tools.contains(&"spy"),
            "{tools:?}"
        );
        let spy = request["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["function"]["name"] == "spy")
            .expect("spy");
        assert_eq!(
            spy["function"]["parameters"]["properties"]["risk_level"]["enum"],
            json!(["low", "medium", "high"])
        );
    }
    let results = tool_messages(&requests[1]);
    assert_eq!(results[0]["tool_call_id"], "call_a");
    assert!(
        results[0]["content"]
            .as_str()
            .expect("text")
            .contains("spy ran (confirmed: false)")
    );
    assert!(
        results[0]["content"]
            .as_str()
            .expect("text")
            .contains("untrusted")
    );
    assert!(
        requests[0]["messages"][1]["content"]
            .as_str()
            .expect("user")
            .starts_with("alice: look")
    );
    assert!(h.events.all().iter().any(|e| matches!(e, AgentEvent::ToolCall { decision, source, .. } if decision.as_str() == "auto" && source.as_str() == "llm")));
}

/// The model calls the spy with a value it does not know, a person (bob) confirms at once
/// through `approvals`, and the model then answers "done".
async fn a_spy_call_bob_confirms(approvals: fn(Script) -> Arc<Approvals>) -> (FakeLlm, Harness) {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "spy", json!({"value": "maybe"}))]),
        fake_llm::text("done"),
    ])
    .await;
    let approvals = approvals(vec![(
        Duration::ZERO,
        Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
    )]);
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        approvals,
        |_| {},
    );
    (fake, h)
}

#[tokio::test]
async fn a_confirmed_call_runs_with_the_exact_arguments() {
    let (fake, h) = a_spy_call_bob_confirms(Approvals::answering).await;
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Replied("done".into())
    );
    let seen = h.approvals.seen.lock().expect("seen").clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].requester, "alice");
    assert_eq!(seen[0].decision.source.as_str(), "default");
    assert_eq!(
        h.spy.runs.lock().expect("runs").as_slice(),
        [seen[0].arguments.clone()]
    );
    assert_eq!(
        h.spy.readings.lock().expect("readings").as_slice(),
        [Some("read maybe".to_owned())],
        "the executor got the gate's reading of the arguments it ran"
    );
    let requests = fake.requests().await;
    assert!(
        tool_messages(&requests[1])[0]["content"]
            .as_str()
            .expect("text")
            .contains("confirmed: true")
    );
}

/// The approval id of the run's only request.
fn only_approval(h: &Harness) -> String {
    let seen = h.approvals.seen.lock().expect("seen");
    assert_eq!(seen.len(), 1, "one request");
    seen[0].id.clone()
}

/// A click that finds no run waiting resumes the run from the store; the run that asked may
/// still be going on (a second click woke it first). The decided call runs once.
#[tokio::test]
async fn a_resume_after_the_run_went_on_runs_nothing_again() {
    let (fake, h) = a_spy_call_bob_confirms(Approvals::resumable).await;
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Replied("done".into())
    );
    let id = only_approval(&h);
    let stored = h.store.approval(&id).await.expect("read").expect("stored");
    assert!(
        stored.resume.is_some(),
        "the run was stored with its approval"
    );
    assert_eq!(h.spy.runs.lock().expect("runs").len(), 1);

    assert_eq!(h.agent.resume(&id).await, None, "nothing to resume");
    assert_eq!(h.spy.runs.lock().expect("runs").len(), 1, "ran once");
    assert_eq!(
        fake.requests().await.len(),
        2,
        "the model was not asked again"
    );
}

/// The other order: a resumed copy claimed the run first, so the run that asked stops
/// without running the call or asking the model again.
#[tokio::test]
async fn a_run_whose_resumed_copy_went_on_stops_without_running_the_call() {
    let (fake, h) = a_spy_call_bob_confirms(Approvals::resumable).await;
    *h.approvals.resumed_first.lock().expect("store") = Some(h.store.clone());
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Stopped(StopReason::ContinuedElsewhere)
    );
    assert!(
        h.spy.runs.lock().expect("runs").is_empty(),
        "nothing ran here"
    );
    assert_eq!(fake.requests().await.len(), 1, "the model was asked once");
    let audit = h.store.recent_audit("c1", 10).await.expect("audit");
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].outcome.as_str(), "not_run");
    assert_eq!(
        audit[0].approval_id.as_deref(),
        Some(only_approval(&h).as_str())
    );
}

/// A model that repeats a call it already made in the run: a confirmed write is neither
/// asked about nor run again (one prompt, one effect), and the model is told so with what
/// came of it; a read that needs no click simply runs again.
#[tokio::test]
async fn a_call_repeated_in_a_run_is_neither_asked_nor_run_again() {
    let write = |id: &str| fake_llm::tool_calls(&[(id, "spy", json!({"value": "maybe"}))]);
    let read = |id: &str| fake_llm::tool_calls(&[(id, "spy", json!({"value": "safe"}))]);
    let fake = FakeLlm::start(vec![
        write("c1"),
        // The same write again, once with a risk level: the same call.
        write("c2"),
        fake_llm::tool_calls(&[("c3", "spy", json!({"value": "maybe", "risk_level": "high"}))]),
        read("c4"),
        read("c5"),
        fake_llm::text("Done once."),
    ])
    .await;
    let approvals = Approvals::answering(vec![(
        Duration::ZERO,
        Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
    )]);
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        approvals,
        |_| {},
    );
    assert_eq!(
        h.agent.run(&inbound("write it")).await,
        RunOutcome::Replied("Done once.".into())
    );
    assert_eq!(
        h.approvals.seen.lock().expect("seen").len(),
        1,
        "one prompt"
    );
    let runs: Vec<Value> = h
        .spy
        .runs
        .lock()
        .expect("runs")
        .iter()
        .map(|r| r["value"].clone())
        .collect();
    assert_eq!(
        runs,
        ["maybe", "safe", "safe"],
        "the write once, the read twice"
    );
    let requests = fake.requests().await;
    let result_of = |request: usize, nth: usize| -> Value {
        let text = tool_messages(&requests[request])[nth]["content"]
            .as_str()
            .expect("text")
            .to_owned();
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    for (request, nth) in [(2, 1), (3, 2)] {
        let repeat = result_of(request, nth);
        assert_eq!(repeat["status"], "already_done", "{repeat}");
        assert!(
            repeat["reason"]
                .as_str()
                .expect("reason")
                .contains("ask the person in words"),
            "{repeat}"
        );
        assert!(
            repeat["earlier_result"]
                .as_str()
                .expect("earlier")
                .contains("spy ran"),
            "what came of the first: {repeat}"
        );
    }
    for request in &requests {
        assert_calls_and_results_pair(request);
    }
    let not_run = h
        .events
        .all()
        .iter()
        .filter(|e| matches!(e, AgentEvent::CallNotRun { reason, .. } if reason.contains("already made in this run")))
        .count();
    assert_eq!(not_run, 2, "the channel sees each repeat answered");
}

/// Across runs, the same confirmed write is asked about again (a person may mean it), but
/// the approval says that this channel already ran it: when, who confirmed it, what it did.
#[tokio::test]
async fn an_approval_of_a_write_the_channel_already_ran_says_when_and_what_it_did() {
    let write = |id: &str| fake_llm::tool_calls(&[(id, "spy", json!({"value": "maybe"}))]);
    let fake = FakeLlm::start(vec![
        write("c1"),
        fake_llm::text("Done."),
        write("c2"),
        fake_llm::text("Done again."),
    ])
    .await;
    let confirm = |by: &str| {
        (
            Duration::ZERO,
            Some(ApprovalOutcome::Confirmed { by: by.into() }),
        )
    };
    let approvals = Approvals::answering(vec![confirm("bob"), confirm("carol")]);
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        approvals,
        |_| {},
    );
    let before = SystemTime::now() - Duration::from_secs(1);
    for (message, reply) in [("write it", "Done."), ("write it again", "Done again.")] {
        assert_eq!(
            h.agent.run(&inbound(message)).await,
            RunOutcome::Replied(reply.into())
        );
    }
    let seen = h.approvals.seen.lock().expect("seen").clone();
    assert_eq!(seen.len(), 2, "asked in each run");
    assert_eq!(seen[0].earlier, None, "nothing ran before the first");
    let earlier = seen[1]
        .earlier
        .clone()
        .expect("the second says the first ran");
    assert_eq!(earlier.confirmed_by.as_deref(), Some("bob"));
    assert!(earlier.succeeded);
    assert_eq!(earlier.result.as_deref(), Some("spied"));
    assert!(earlier.at >= before && earlier.at <= SystemTime::now());
    let shown = riskgate::discord::render::approval_message(
        &h.agent.gate.registry().snapshot(),
        &seen[1],
        0,
    );
    assert!(
        shown.contains("already ran this exact call")
            && shown.contains(&format!("<t:{}:R>", earlier.unix_seconds()))
            && shown.contains("<@bob>")
            && shown.contains("spied"),
        "{shown}"
    );
    assert_eq!(
        h.spy.runs.lock().expect("runs").len(),
        2,
        "confirmed twice, ran twice"
    );
}

#[tokio::test]
async fn a_cancel_goes_back_to_the_model_and_its_reply_reaches_the_user() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "spy", json!({"value": "wipe", "risk_level": "low"}))]),
        // The model tries the very same call again: it is not asked twice.
        fake_llm::tool_calls(&[("c2", "spy", json!({"risk_level": "low", "value": "wipe"}))]),
        fake_llm::text("OK, I will not wipe anything."),
    ])
    .await;
    let approvals = Approvals::answering(vec![(
        Duration::ZERO,
        Some(ApprovalOutcome::Cancelled {
            by: "bob".into(),
            reason: None,
        }),
    )]);
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        approvals,
        |_| {},
    );
    let outcome = h.agent.run(&inbound("wipe it")).await;
    assert_eq!(
        outcome,
        RunOutcome::Replied("OK, I will not wipe anything.".into())
    );
    assert!(h.spy.runs.lock().expect("runs").is_empty(), "nothing ran");
    assert_eq!(
        h.approvals.seen.lock().expect("seen").len(),
        1,
        "asked once"
    );
    let requests = fake.requests().await;
    let first: Value = serde_json::from_str(
        tool_messages(&requests[1])[0]["content"]
            .as_str()
            .expect("text"),
    )
    .expect("json");
    assert_eq!(first["status"], "cancelled");
    assert_eq!(first["by"], "bob");
    let second: Value = serde_json::from_str(
        tool_messages(&requests[2])[1]["content"]
            .as_str()
            .expect("text"),
    )
    .expect("json");
    assert_eq!(second["status"], "cancelled");
    assert!(
        second["reason"]
            .as_str()
            .expect("reason")
            .contains("not asked again")
    );
    for request in &requests {
        assert_calls_and_results_pair(request);
    }
    let events = h.events.all();
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::ToolCall { source, .. } if source.as_str() == "destructive_floor")
    ));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Reply { text } if text.contains("not wipe")))
    );
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_reported_and_three_in_a_row_stop_the_run() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "launch_missiles", json!({}))]),
        fake_llm::tool_calls(&[("c2", "spy", json!({"wrong": 1}))]),
        fake_llm::Scripted::Reply(json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "spy", "arguments": "{not json"}}]}, "finish_reason": "tool_calls"}]})),
        fake_llm::text("never reached"),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("go")).await;
    // The stop says what was wrong and what to try.
    match &outcome {
        RunOutcome::Stopped(
            reason @ StopReason::Malformed {
                count: 3, problem, ..
            },
        ) => {
            assert!(problem.contains("not valid JSON"), "{problem}");
            let said = reason.to_string();
            assert!(
                said.contains("not valid JSON")
                    && said.contains("llm.protocol = \"json\"")
                    && said.contains("larger model"),
                "{said}"
            );
        }
        other => panic!("expected a malformed stop, got {other:?}"),
    }
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 3);
    let unknown = tool_messages(&requests[1])[0]["content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(
        unknown.contains("no tool named \"launch_missiles\""),
        "{unknown}"
    );
    let bad = tool_messages(&requests[2])[1]["content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(
        bad.contains("parameter `value` is missing") && bad.contains("JSON object"),
        "{bad}"
    );
    assert!(
        h.events.all().iter().any(
            |e| matches!(e, AgentEvent::Error { message } if message.contains("could not use"))
        )
    );
    assert!(h.spy.runs.lock().expect("runs").is_empty());
}

#[tokio::test]
async fn the_iteration_cap_stops_the_run_and_says_so() {
    let script = (0..5)
        .map(|i| fake_llm::tool_calls(&[(&format!("c{i}"), "spy", json!({"value": "safe"}))]))
        .collect();
    let fake = FakeLlm::start(script).await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |s| {
            s.agent.max_iterations = 3;
        },
    );
    let outcome = h.agent.run(&inbound("loop")).await;
    assert_eq!(outcome, RunOutcome::Stopped(StopReason::MaxIterations(3)));
    assert_eq!(fake.requests().await.len(), 3);
    assert!(
        h.events
            .all()
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message } if message.contains("3 steps")))
    );
}

#[tokio::test]
async fn a_text_only_reply_ends_the_run() {
    let fake = FakeLlm::start(vec![fake_llm::text("Hello! How can I help?")]).await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    assert_eq!(
        h.agent.run(&inbound("hi")).await,
        RunOutcome::Replied("Hello! How can I help?".into())
    );
    assert_eq!(fake.requests().await.len(), 1);
}

/// A rambling model's huge answer is cut before it is shown, stored or sent again; the
/// next request carries the cut text, not the whole.
#[tokio::test]
async fn a_huge_reply_is_cut_before_it_is_shown_stored_or_sent_again() {
    let huge = "word ".repeat(400_000); // 2 MB
    let fake = FakeLlm::start(vec![fake_llm::text(&huge), fake_llm::text("short")]).await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |s| s.agent.max_reply_chars = 1_000,
    );
    let RunOutcome::Replied(shown) = h.agent.run(&inbound("tell me everything")).await else {
        panic!("a reply")
    };
    assert!(shown.chars().count() < 1_200, "{}", shown.len());
    assert!(
        shown.ends_with(
            "[... 1999000 more characters of this reply were cut (agent.max_reply_chars)]"
        ),
        "{}",
        &shown[shown.len() - 120..]
    );
    let stored = h
        .store
        .load_history("c1", usize::MAX)
        .await
        .expect("history");
    let longest = stored
        .iter()
        .map(|m| m.content.as_deref().unwrap_or_default().chars().count())
        .max()
        .unwrap_or(0);
    assert!(longest < 1_200, "a stored message of {longest} characters");
    h.agent.run(&inbound("and now?")).await;
    let requests = fake.requests().await;
    let sent = requests.last().expect("a second request").to_string();
    assert!(
        sent.len() < 20_000,
        "the second request is {} bytes",
        sent.len()
    );
}

#[tokio::test]
async fn json_protocol_with_terminate_false_then_true() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("Let me check.\n```json\n{\"tool\": \"spy\", \"parameters\": {\"value\": \"safe\"}, \"terminate\": false}\n```"),
        fake_llm::text("{\"tool\": \"spy\", \"parameters\": {\"value\": \"safe\"}, \"terminate\": true}"),
        fake_llm::text("never asked"),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Json,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("check twice")).await;
    assert!(
        matches!(&outcome, RunOutcome::Terminated { tool, result } if tool == "spy" && result.contains("spy ran")),
        "{outcome:?}"
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0].get("tools").is_none(),
        "no native tools in the JSON protocol"
    );
    let system = requests[0]["messages"][0]["content"]
        .as_str()
        .expect("system");
    assert!(
        system.contains("### spy") && system.contains("\"terminate\""),
        "tool definitions are in the prompt"
    );
    let last = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("message")
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .expect("text")
            .starts_with("Result of your spy call (data for you to read")
    );
    assert_eq!(fake.remaining(), 1);
    assert_eq!(h.spy.runs.lock().expect("runs").len(), 2);
}

#[tokio::test]
async fn json_protocol_malformed_terminate_is_sent_back() {
    let fake = FakeLlm::start(vec![
        fake_llm::text(
            "{\"tool\": \"spy\", \"parameters\": {\"value\": \"safe\"}, \"terminate\": \"yes\"}",
        ),
        fake_llm::text("Sorry, here is the answer: 42."),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Json,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("q")).await;
    assert_eq!(
        outcome,
        RunOutcome::Replied("Sorry, here is the answer: 42.".into())
    );
    let requests = fake.requests().await;
    let correction = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")["content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(
        correction.contains("\"terminate\" must be true or false"),
        "{correction}"
    );
    assert!(h.spy.runs.lock().expect("runs").is_empty());
}

/// A 429 whose `Retry-After` says `retry_after`, then a reply, with a 1 ms backoff: the
/// reply comes in the second request, at least 900 ms after the run started.
async fn replied_after_a_429_that_asks_to_wait(retry_after: &str) {
    let fake = FakeLlm::start(vec![
        fake_llm::status(429, "slow down", Some(retry_after)),
        fake_llm::text("after the wait"),
    ])
    .await;
    let h = harness(
        http_model(&fake, |s| s.llm.retry_base_delay_ms = 1),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let started = std::time::Instant::now();
    assert_eq!(
        h.agent.run(&inbound("hi")).await,
        RunOutcome::Replied("after the wait".into())
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "Retry-After: {retry_after} was honoured, not the 1 ms backoff"
    );
    assert_eq!(fake.requests().await.len(), 2);
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    replied_after_a_429_that_asks_to_wait("1").await;
}

#[tokio::test]
async fn a_429_is_retried_at_the_http_date_its_retry_after_names() {
    // Two seconds ahead, written to the whole second: at least one second from now.
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(2));
    replied_after_a_429_that_asks_to_wait(&date).await;
}

#[tokio::test]
async fn repeated_500s_end_with_a_clear_error() {
    let fake = FakeLlm::start(
        (0..4)
            .map(|_| fake_llm::status(500, "upstream exploded", None))
            .collect(),
    )
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("hi")).await;
    assert!(
        matches!(
            &outcome,
            RunOutcome::Stopped(StopReason::Model(ModelError::Exhausted { attempts: 4, .. }))
        ),
        "{outcome:?}"
    );
    assert_eq!(fake.requests().await.len(), 4);
    let message = h
        .events
        .all()
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("an error event");
    assert!(
        message.contains("kept failing after 4 attempts") && message.contains("upstream exploded"),
        "{message}"
    );
}

#[tokio::test]
async fn other_4xx_fail_at_once_with_what_to_fix() {
    for (status, text, expected) in [
        (401, "invalid api key", "llm.api_key"),
        (404, "The model `gpt-9` does not exist", "llm.model"),
        (400, "bad things", "400 Bad Request: bad things"),
    ] {
        let fake = FakeLlm::start(vec![
            fake_llm::status(status, text, None),
            fake_llm::text("x"),
        ])
        .await;
        let h = harness(
            http_model(&fake, |_| {}),
            Protocol::Native,
            Approvals::answering(vec![]),
            |_| {},
        );
        let outcome = h.agent.run(&inbound("hi")).await;
        let RunOutcome::Stopped(StopReason::Model(error)) = outcome else {
            panic!("{status}: {outcome:?}")
        };
        assert!(error.to_string().contains(expected), "{status}: {error}");
        assert_eq!(fake.requests().await.len(), 1, "{status} is not retried");
    }
}

#[tokio::test]
async fn history_carries_over_between_runs() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("first answer"),
        fake_llm::text("second answer"),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    h.agent.run(&inbound("first question")).await;
    h.agent.run(&inbound("second question")).await;
    let requests = fake.requests().await;
    let contents: Vec<&str> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().expect("text"))
        .collect();
    assert_eq!(
        contents,
        [
            "alice: first question",
            "first answer",
            "alice: second question"
        ]
    );
}

/// The text of every user message a request carried.
fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().expect("text").to_owned())
        .collect()
}

#[tokio::test]
async fn a_message_over_the_hard_limit_is_refused_and_never_reaches_the_model() {
    let fake = FakeLlm::start(vec![fake_llm::text("a small answer")]).await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let huge = "z".repeat(2_000_000);
    let outcome = h.agent.run(&inbound(&huge)).await;
    assert_eq!(
        outcome,
        RunOutcome::Stopped(StopReason::MessageTooLong {
            chars: 2_000_000,
            limit: 100_000
        })
    );
    assert!(fake.requests().await.is_empty(), "the model was not asked");
    let error = h
        .events
        .all()
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .expect("the person is told");
    assert!(
        error.contains("2000000 characters")
            && error.contains("agent.max_message_chars")
            && error.contains("shorter"),
        "{error}"
    );
    assert!(
        h.events
            .all()
            .iter()
            .all(|e| serde_json::to_string(e).expect("event").len() < 1_000),
        "no event carries the message whole"
    );

    assert_eq!(
        h.agent.run(&inbound("a small question")).await,
        RunOutcome::Replied("a small answer".into())
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(user_texts(&requests[0]), ["alice: a small question"]);
    assert!(!requests[0].to_string().contains("zzzz"));
}

#[tokio::test]
async fn a_message_longer_than_the_history_allows_is_cut_for_later_turns() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("read it"),
        fake_llm::text("second answer"),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |s| s.agent.history_budget_chars = 2_000,
    );
    // 6,000 characters: over the history budget, under agent.max_message_chars.
    let long: String = (0..1_000).map(|n| format!("{n:05}|")).collect();
    h.agent.run(&inbound(&long)).await;
    h.agent.run(&inbound("and now?")).await;
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2);
    // The run it started saw it whole.
    assert_eq!(user_texts(&requests[0]), [format!("alice: {long}")]);
    // The next run sees its beginning and a note, within the budget.
    let later = user_texts(&requests[1]);
    assert_eq!(later.len(), 2, "{later:?}");
    assert_eq!(later[1], "alice: and now?");
    let stored = later[0].strip_prefix("alice: ").expect("author");
    let (kept, note) = stored.rsplit_once('\n').expect("a note");
    assert!(long.starts_with(kept) && kept.len() > 500, "{kept}");
    assert_eq!(
        note,
        format!(
            "[... {} characters of this message were cut to fit the history budget]",
            long.len() - kept.len()
        )
    );
    assert!(stored.len() <= 1_000, "half the budget: {}", stored.len());
    let contents: Vec<&str> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        contents.contains(&"read it"),
        "the turn's reply is kept too"
    );
}

/// An in-process model for time-based tests: each reply after a (tokio) delay.
struct TimedModel {
    script: Mutex<VecDeque<(Duration, ChatReply)>>,
    calls: Mutex<u32>,
    /// The tools each call offered, in order.
    offered: Mutex<Vec<Vec<String>>>,
}

impl ChatModel for TimedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        *self.calls.lock().expect("calls") += 1;
        self.offered
            .lock()
            .expect("offered")
            .push(request.tools.iter().map(|t| t.name.clone()).collect());
        let next = self.script.lock().expect("script").pop_front();
        Box::pin(async move {
            let (delay, reply) =
                next.ok_or_else(|| ModelError::Rejected("script exhausted".into()))?;
            tokio::time::sleep(delay).await;
            Ok(reply)
        })
    }
}

fn timed(script: Vec<(u64, ChatReply)>) -> Arc<TimedModel> {
    Arc::new(TimedModel {
        script: Mutex::new(
            script
                .into_iter()
                .map(|(s, r)| (Duration::from_secs(s), r))
                .collect(),
        ),
        calls: Mutex::new(0),
        offered: Mutex::default(),
    })
}

fn spy_call(id: &str, value: &str) -> ChatReply {
    ChatReply {
        content: None,
        tool_calls: vec![ReplyToolCall {
            id: Some(id.into()),
            name: "spy".into(),
            arguments: json!({"value": value}),
        }],
        finish_reason: Some("tool_calls".into()),
        usage: None,
    }
}

fn reply(text: &str) -> ChatReply {
    ChatReply {
        content: Some(text.into()),
        ..ChatReply::default()
    }
}

#[tokio::test(start_paused = true)]
async fn the_wall_clock_limit_stops_a_slow_run() {
    let model = timed(vec![(200, spy_call("a", "safe")), (200, reply("too late"))]);
    let h = harness(
        model.clone(),
        Protocol::Native,
        Approvals::answering(vec![]),
        |s| {
            s.agent.run_timeout_secs = 300;
        },
    );
    let outcome = h.agent.run(&inbound("slow")).await;
    assert_eq!(
        outcome,
        RunOutcome::Stopped(StopReason::WallClock(Duration::from_secs(300)))
    );
    assert_eq!(*model.calls.lock().expect("calls"), 2);
    assert!(
        h.events
            .all()
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message } if message.contains("took longer")))
    );
}

#[tokio::test(start_paused = true)]
async fn waiting_for_a_person_does_not_count_against_the_run() {
    // 100 s of model time + 20 minutes waiting for a person, against a 300 s run limit.
    let model = timed(vec![(50, spy_call("a", "maybe")), (50, reply("finished"))]);
    let approvals = Approvals::answering(vec![(
        Duration::from_secs(1200),
        Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
    )]);
    let h = harness(model, Protocol::Native, approvals, |s| {
        s.agent.run_timeout_secs = 300;
        s.agent.approval_timeout_secs = 3600;
    });
    assert_eq!(
        h.agent.run(&inbound("wait")).await,
        RunOutcome::Replied("finished".into())
    );
    assert_eq!(h.spy.runs.lock().expect("runs").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_expires_and_the_model_is_told() {
    let model = timed(vec![
        (0, spy_call("a", "maybe")),
        (0, reply("it expired, so I stopped")),
    ]);
    let h = harness(
        model,
        Protocol::Native,
        Approvals::answering(vec![(Duration::ZERO, None)]),
        |s| {
            s.agent.approval_timeout_secs = 600;
        },
    );
    let started = tokio::time::Instant::now();
    assert_eq!(
        h.agent.run(&inbound("x")).await,
        RunOutcome::Replied("it expired, so I stopped".into())
    );
    assert!(started.elapsed() >= Duration::from_secs(600));
    let events = h.events.all();
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ApprovalResolved { outcome, by: None, .. } if outcome.as_str() == "expired")));
    assert!(events.iter().any(
        |e| matches!(e, AgentEvent::CallNotRun { status, .. } if status.as_str() == "expired")
    ));
    assert!(h.spy.runs.lock().expect("runs").is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_audit_log_records_every_kind_of_call() {
    use riskgate::core::ports::Store;
    // auto (whitelist), confirmed, cancelled, expired, denied (unknown file outside).
    let model = timed(vec![
        (0, spy_call("a", "safe")),
        (0, spy_call("b", "maybe")),
        (0, spy_call("c", "wipe")),
        (0, spy_call("d", "other")),
        (
            0,
            ChatReply {
                content: None,
                tool_calls: vec![ReplyToolCall {
                    id: Some("e".into()),
                    name: "file_operations".into(),
                    arguments: json!({"operation": "read", "path": "/etc/passwd"}),
                }],
                finish_reason: None,
                usage: None,
            },
        ),
        (0, reply("done")),
    ]);
    let approvals = Approvals::answering(vec![
        (
            Duration::ZERO,
            Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
        ),
        (
            Duration::ZERO,
            Some(ApprovalOutcome::Cancelled {
                by: "carol".into(),
                reason: None,
            }),
        ),
        (Duration::ZERO, None),
    ]);
    let h = harness(model, Protocol::Native, approvals, |_| {});
    assert_eq!(
        h.agent.run(&inbound("everything")).await,
        RunOutcome::Replied("done".into())
    );
    let mut audit = h.store.recent_audit("c1", 10).await.expect("audit");
    audit.reverse();
    let rows: Vec<(&str, &str, &str, &str)> = audit
        .iter()
        .map(|r| {
            (
                r.tool.as_str(),
                r.decision.as_str(),
                r.source.as_str(),
                r.outcome.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("spy", "auto", "whitelist", "ok"),
            ("spy", "confirm", "default", "ok"),
            ("spy", "confirm", "default", "cancelled"),
            ("spy", "confirm", "default", "expired"),
            ("file_operations", "deny", "policy", "denied"),
        ]
    );
    assert!(
        audit
            .iter()
            .all(|r| r.user == "alice" && !r.run_id.is_empty())
    );
    assert!(audit[1].approval_id.is_some() && audit[0].approval_id.is_none());
    let approvals = h.store.pending_approvals(None).await.expect("pending");
    assert!(approvals.is_empty(), "every approval was settled");
}

/// A store that changes the arguments of an approval after it was shown.
struct Tampering {
    inner: MemoryStore,
}

impl riskgate::core::ports::Store for Tampering {
    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        s: riskgate::core::ports::ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<riskgate::core::ports::Decided, riskgate::core::ports::StoreError>>
    {
        Box::pin(async move {
            Ok(
                match self.inner.decide_approval_noted(id, s, by, note).await? {
                    riskgate::core::ports::Decided::Won(mut record) => {
                        record.arguments.insert("value".into(), json!("wipe"));
                        riskgate::core::ports::Decided::Won(record)
                    }
                    other => other,
                },
            )
        })
    }
    riskgate::forward_store!(inner:
        load_history, append, clear, prune_history, channel_settings, set_channel_settings,
        start_run, heartbeat_run, finish_run, create_approval, approval, set_approval_message,
        claim_continuation, pending_approvals, expire_overdue, abandon_orphaned, record_audit,
        recent_audit, create_rule, channel_rules, revoke_rule, settled_approvals,
        live_run_instance, earlier_run,
    );
}

#[tokio::test(start_paused = true)]
async fn stored_arguments_that_do_not_match_their_hash_never_run() {
    let model = timed(vec![(0, spy_call("a", "maybe")), (0, reply("ok"))]);
    let approvals = Approvals::answering(vec![(
        Duration::ZERO,
        Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
    )]);
    let mut h = harness(model, Protocol::Native, approvals, |_| {});
    h.agent.store = Arc::new(Tampering {
        inner: MemoryStore::new(),
    });
    assert_eq!(
        h.agent.run(&inbound("x")).await,
        RunOutcome::Replied("ok".into())
    );
    assert!(
        h.spy.runs.lock().expect("runs").is_empty(),
        "tampered arguments never reach the executor"
    );
    assert!(h.events.all().iter().any(
        |e| matches!(e, AgentEvent::CallNotRun { reason, .. } if reason.contains("do not match"))
    ));
}

/// A safe tool that notes, each time it runs, how many audit records the store holds.
struct Witness {
    store: Arc<MemoryStore>,
    audited_before_run: Mutex<Vec<usize>>,
}

impl RiskAssessor for Witness {
    fn assess(&self, _arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        Assessment::Safe("a witness".into())
    }
}

impl Tool for Witness {
    fn name(&self) -> &'static str {
        "witness"
    }
    fn description(&self) -> &'static str {
        "Counts audit records."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    }
    fn execute<'a>(
        &'a self,
        _arguments: &'a Map<String, Value>,
        _approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            use riskgate::core::ports::Store;
            let audited = self
                .store
                .recent_audit("c1", 100)
                .await
                .expect("audit")
                .len();
            self.audited_before_run
                .lock()
                .expect("witness")
                .push(audited);
            Ok(ToolOutput {
                summary: "witnessed".into(),
                text: format!("{audited} audit records"),
                chat: "witnessed".into(),
                attachment: None,
            })
        })
    }
}

fn witness_call(id: &str) -> ChatReply {
    ChatReply {
        content: None,
        tool_calls: vec![ReplyToolCall {
            id: Some(id.into()),
            name: "witness".into(),
            arguments: json!({}),
        }],
        finish_reason: Some("tool_calls".into()),
        usage: None,
    }
}

/// An agent over a store whose operations can be slowed or broken, with the witness tool.
fn hooked_agent(
    model: Arc<dyn ChatModel>,
) -> (
    Agent,
    Arc<support::hooked_store::HookedStore>,
    Arc<Witness>,
    tempfile::TempDir,
) {
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    // These tests time runs in paused time, which does not wait for SQLite's own thread:
    // reading the demo database's schema for the prompt would see its time limit pass at
    // once. The prompt's schema has tests of its own (tests/prompt_context.rs).
    settings.sql.schema_budget_chars = 0;
    let memory = Arc::new(MemoryStore::new());
    let store = support::hooked_store::HookedStore::new(memory.clone());
    let witness = Arc::new(Witness {
        store: memory,
        audited_before_run: Mutex::default(),
    });
    let mut agent = riskgate::app::build_agent(
        &settings,
        model,
        store.clone(),
        Approvals::answering(vec![]),
        Arc::new(Events::default()),
    )
    .expect("agent");
    let mut registry = riskgate::tools::builtin_registry(&settings);
    registry.register(witness.clone());
    agent.gate = RiskGate::new(registry, settings.risk.gate_policy());
    (agent, store, witness, workspace)
}

#[tokio::test(start_paused = true)]
async fn store_writes_overlap_the_model_and_every_tool_waits_for_earlier_audit_records() {
    use support::hooked_store::Hook;
    // Each model call takes 10 s; each audit record takes 15 s to write and the run's start
    // 5 s. Written in turn the run would take 5 + 10 + 15 + 10 + 15 + 10 = 65 s; overlapped
    // with the model it takes 10 + 15 + 15 = 40 s, because the second call must still wait
    // for the first call's record, and the run's end for the second's.
    let model = timed(vec![
        (10, witness_call("a")),
        (10, witness_call("b")),
        (10, reply("done")),
    ]);
    let (agent, store, witness, _workspace) = hooked_agent(model);
    store.hook("start_run", Hook::Delay(Duration::from_secs(5)));
    store.hook("record_audit", Hook::Delay(Duration::from_secs(15)));
    let started = tokio::time::Instant::now();
    assert_eq!(
        agent.run(&inbound("go")).await,
        RunOutcome::Replied("done".into())
    );
    assert_eq!(started.elapsed(), Duration::from_secs(40));
    // The first call ran with no record before it, the second after the first's was written.
    assert_eq!(*witness.audited_before_run.lock().expect("witness"), [0, 1]);
    let completed = store.completed();
    let position = |name: &str| completed.iter().position(|c| *c == name);
    assert!(
        position("start_run") < position("record_audit"),
        "{completed:?}"
    );
    assert_eq!(
        completed.iter().filter(|c| **c == "record_audit").count(),
        2,
        "{completed:?}"
    );
    // Both records are in before the run reports its end.
    assert!(
        completed.ends_with(&["finish_run", "append"])
            || completed.ends_with(&["append", "finish_run"]),
        "{completed:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_run_whose_start_cannot_be_recorded_runs_no_tool() {
    use support::hooked_store::Hook;
    let model = timed(vec![(10, witness_call("a")), (10, reply("done"))]);
    let (agent, store, witness, _workspace) = hooked_agent(model.clone());
    store.hook("start_run", Hook::Fail("the database is gone".into()));
    let outcome = agent.run(&inbound("go")).await;
    assert!(
        matches!(&outcome, RunOutcome::Stopped(StopReason::Store(e)) if e.to_string().contains("the database is gone")),
        "{outcome:?}"
    );
    // The channel is told what to do: the failure's kind says the database was away.
    let RunOutcome::Stopped(reason) = &outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.to_string().ends_with("Try again in a minute."),
        "{reason}"
    );
    assert!(
        witness
            .audited_before_run
            .lock()
            .expect("witness")
            .is_empty()
    );
    // The first model call went out alongside the start; nothing after it.
    assert_eq!(*model.calls.lock().expect("calls"), 1);
    let completed = store.completed();
    assert!(!completed.contains(&"record_audit"), "{completed:?}");
    assert!(!completed.contains(&"finish_run"), "{completed:?}");
    // The person's message is still kept in the conversation.
    assert!(completed.contains(&"append"), "{completed:?}");
}

/// The channel's settings as another process would change them: straight into the store.
async fn set_elsewhere(store: &support::hooked_store::HookedStore, mode: &str, profile: &str) {
    let settings = riskgate::core::ports::ChannelSettings {
        mode: mode.parse().expect("mode"),
        profile: profile.into(),
    };
    store
        .inner
        .set_channel_settings("c1", &settings, "someone elsewhere")
        .await
        .expect("settings");
}

/// Runs `text` in channel `c1` and says how long it took (tokio time: exact when paused).
async fn run_timed(agent: &Agent, text: &str) -> (RunOutcome, Duration) {
    let started = tokio::time::Instant::now();
    let outcome = agent.run(&inbound(text)).await;
    (outcome, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn every_run_asks_the_model_only_once_its_settings_are_read() {
    use support::hooked_store::Hook;
    let (agent, store, _witness, _workspace) = hooked_agent(timed(vec![
        (10, reply("first")),
        (10, reply("second")),
        (10, reply("third")),
    ]));
    store.hook("channel_settings", Hook::Delay(Duration::from_secs(5)));
    // A channel's first run waits for the read before it asks the model: 5 + 10 s.
    assert_eq!(
        run_timed(&agent, "one").await,
        (RunOutcome::Replied("first".into()), Duration::from_secs(15))
    );
    // So does every later run of the channel.
    assert_eq!(
        run_timed(&agent, "two").await,
        (
            RunOutcome::Replied("second".into()),
            Duration::from_secs(15)
        )
    );
    // A read slower than the model: the model is asked after it.
    store.hook("channel_settings", Hook::Delay(Duration::from_secs(25)));
    assert_eq!(
        run_timed(&agent, "three").await,
        (RunOutcome::Replied("third".into()), Duration::from_secs(35))
    );
    assert_eq!(
        store
            .completed()
            .iter()
            .filter(|c| **c == "channel_settings")
            .count(),
        3,
        "every run reads its settings"
    );
}

/// A hooked agent (see `hooked_agent`) that has already run one message in channel `c1`,
/// which ended with the reply `first_reply`.
async fn served_once(
    script: Vec<(u64, ChatReply)>,
    first_reply: &str,
) -> (
    Agent,
    Arc<support::hooked_store::HookedStore>,
    Arc<Witness>,
    tempfile::TempDir,
    Arc<TimedModel>,
) {
    let model = timed(script);
    let (agent, store, witness, workspace) = hooked_agent(model.clone());
    assert_eq!(
        agent.run(&inbound("first")).await,
        RunOutcome::Replied(first_reply.into())
    );
    (agent, store, witness, workspace, model)
}

#[tokio::test(start_paused = true)]
async fn strict_mode_set_elsewhere_holds_for_the_channels_next_run() {
    use support::hooked_store::Hook;
    // The witness is safe: smart mode runs it at once, strict mode asks a person first.
    let (agent, store, witness, _workspace, model) = served_once(
        vec![
            (10, witness_call("a")),
            (10, reply("ran it")),
            (1, witness_call("b")),
            (10, reply("asked")),
        ],
        "ran it",
    )
    .await;
    assert_eq!(witness.audited_before_run.lock().expect("witness").len(), 1);
    // Another process switches the channel to strict; the settings read is slow (30 s).
    set_elsewhere(&store, "strict", "ops").await;
    store.hook("channel_settings", Hook::Delay(Duration::from_secs(30)));
    let calls_before = *model.calls.lock().expect("calls");
    let again = inbound("again");
    let run = agent.run(&again);
    tokio::pin!(run);
    // Nothing is asked of the model while the read is under way.
    assert!(
        tokio::time::timeout(Duration::from_secs(29), &mut run)
            .await
            .is_err()
    );
    assert_eq!(*model.calls.lock().expect("calls"), calls_before);
    assert_eq!(run.await, RunOutcome::Replied("asked".into()));
    // The call waited for a person (who never came): it did not run.
    assert_eq!(witness.audited_before_run.lock().expect("witness").len(), 1);
    let completed = store.completed();
    assert_eq!(
        completed
            .iter()
            .filter(|c| **c == "create_approval")
            .count(),
        1,
        "{completed:?}"
    );
    let audit = store.inner.recent_audit("c1", 10).await.expect("audit");
    assert!(
        audit
            .iter()
            .any(|r| r.decision.as_str() == "confirm" && r.outcome.as_str() == "expired"),
        "{audit:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_profile_changed_elsewhere_applies_from_the_channels_next_run() {
    use support::hooked_store::Hook;
    let (agent, store, witness, _workspace, model) =
        served_once(vec![(10, reply("on ops")), (10, reply("on sql"))], "on ops").await;
    set_elsewhere(&store, "smart", "sql").await;
    store.hook("channel_settings", Hook::Delay(Duration::from_secs(3)));
    // The read, then one model call, on the new profile.
    assert_eq!(
        run_timed(&agent, "two").await,
        (
            RunOutcome::Replied("on sql".into()),
            Duration::from_secs(13)
        )
    );
    assert!(
        witness
            .audited_before_run
            .lock()
            .expect("witness")
            .is_empty()
    );
    let offered = model.offered.lock().expect("offered").clone();
    assert_eq!(offered.len(), 2, "no call went out on the old profile");
    assert!(offered[0].contains(&"witness".to_owned()), "{offered:?}");
    assert_eq!(offered[1], ["execute_sql"], "asked on the sql profile");
}

#[tokio::test(start_paused = true)]
async fn a_failed_settings_read_stops_a_run_before_the_model_is_asked() {
    use support::hooked_store::Hook;
    let (agent, store, witness, _workspace, model) = served_once(
        vec![
            (10, reply("fine")),
            (1, witness_call("a")),
            (10, reply("never")),
        ],
        "fine",
    )
    .await;
    store.hook("channel_settings", Hook::Fail("settings are gone".into()));
    let outcome = agent.run(&inbound("two")).await;
    assert!(
        matches!(&outcome, RunOutcome::Stopped(StopReason::Store(e)) if e.to_string().contains("settings are gone")),
        "{outcome:?}"
    );
    assert!(
        witness
            .audited_before_run
            .lock()
            .expect("witness")
            .is_empty()
    );
    // Only the first run asked the model.
    assert_eq!(*model.calls.lock().expect("calls"), 1);
    assert_eq!(model.script.lock().expect("script").len(), 2);
    assert!(!store.completed().contains(&"record_audit"));
}

// Servers as they really behaved (llama-cpp-python 0.3.36 and llama-server): the fake refuses what llama-cpp-python and
// llama-server refused, and every run must still complete, and leave the next one working.

/// A harness on a fake that checks requests like the real servers, with retries off.
async fn strict(script: Vec<fake_llm::Scripted>, protocol: Protocol) -> (FakeLlm, Harness) {
    let fake = FakeLlm::start_with(script, fake_llm::Checks::like_real_servers()).await;
    let model = http_model(&fake, |s| s.llm.max_retries = 0);
    let h = harness(model, protocol, Approvals::answering(vec![]), |_| {});
    (fake, h)
}

fn spy_runs(h: &Harness) -> usize {
    h.spy.runs.lock().expect("runs").len()
}

#[tokio::test]
async fn a_native_tool_loop_completes_on_a_server_that_refuses_null_content() {
    let call = || fake_llm::tool_calls(&[("c1", "spy", json!({"value": "safe"}))]);
    let (fake, h) = strict(
        vec![call(), fake_llm::text("one"), call(), fake_llm::text("two")],
        Protocol::Native,
    )
    .await;
    assert_eq!(
        h.agent.run(&inbound("a")).await,
        RunOutcome::Replied("one".into())
    );
    // The second run sends the first one's tool-call message back as history.
    assert_eq!(
        h.agent.run(&inbound("b")).await,
        RunOutcome::Replied("two".into())
    );
    assert_eq!(spy_runs(&h), 2, "the tools were seen and called");
    assert_eq!(fake.rejections(), Vec::<String>::new());
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request["tool_choice"], "auto");
        assert_eq!(request["max_tokens"], 1024);
        for message in request["messages"].as_array().expect("messages") {
            assert!(message["content"].is_string(), "{message}");
        }
    }
    let history_call = &requests[2]["messages"][2];
    assert_eq!(history_call["tool_calls"][0]["id"], "c1");
    assert_eq!(history_call["content"], "");
}

#[tokio::test]
async fn calls_written_as_bare_json_or_name_braces_run_in_both_protocols() {
    for protocol in [Protocol::Native, Protocol::Json] {
        let (fake, h) = strict(
            vec![
                fake_llm::bare_call("spy", json!({"value": "safe"})),
                fake_llm::text("first done"),
                fake_llm::text("Checking.\n```\nspy{\"value\": \"safe\"}\n```"),
                fake_llm::text("second done"),
            ],
            protocol,
        )
        .await;
        assert_eq!(
            h.agent.run(&inbound("a")).await,
            RunOutcome::Replied("first done".into()),
            "{protocol:?}"
        );
        assert_eq!(
            h.agent.run(&inbound("b")).await,
            RunOutcome::Replied("second done".into()),
            "{protocol:?}"
        );
        assert_eq!(spy_runs(&h), 2, "{protocol:?}");
        let replies: Vec<String> = h
            .events
            .all()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Reply { text } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(replies, ["first done", "second done"], "no JSON was posted");
        assert_eq!(fake.rejections(), Vec::<String>::new(), "{protocol:?}");
        for request in fake.requests().await {
            assert_calls_and_results_pair(&request);
        }
    }
}

#[tokio::test]
async fn an_echoed_tool_result_is_neither_a_call_nor_the_answer() {
    // The person cancels the call; the model copies riskgate's refusal object as its reply.
    let echo =
        json!({"status": "cancelled", "reason": "a person cancelled this call", "by": "bob"});
    let fake = FakeLlm::start_with(
        vec![
            fake_llm::tool_calls(&[("c1", "spy", json!({"value": "x"}))]),
            fake_llm::text(&echo.to_string()),
            fake_llm::text("It was cancelled, so nothing ran."),
        ],
        fake_llm::Checks::like_real_servers(),
    )
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![(
            Duration::ZERO,
            Some(ApprovalOutcome::Cancelled {
                by: "bob".into(),
                reason: None,
            }),
        )]),
        |_| {},
    );
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Replied("It was cancelled, so nothing ran.".into())
    );
    assert_eq!(spy_runs(&h), 0);
    assert!(
        !h.events
            .all()
            .iter()
            .any(|e| matches!(e, AgentEvent::Reply { text } if text.contains("\"status\""))),
        "the echo was posted as the answer"
    );
    let requests = fake.requests().await;
    let last = requests[2]["messages"].as_array().expect("messages");
    let correction = last.last().expect("message")["content"]
        .as_str()
        .expect("text");
    assert!(correction.contains("repeats a tool result"), "{correction}");
    // Later runs do not see the echo.
    let stored = h.store.load_history("c1", 100_000).await.expect("history");
    assert!(
        !stored
            .iter()
            .any(|m| m.role == riskgate::core::agent::Role::Assistant
                && m.content.as_deref() == Some(echo.to_string().as_str())),
        "{stored:?}"
    );
}

/// Each way a run can fail, then a second run on a server that checks its request.
#[tokio::test]
async fn a_failed_run_leaves_the_next_run_working() {
    let safe_call = || fake_llm::tool_calls(&[("c1", "spy", json!({"value": "safe"}))]);
    let bad_args = |id: &str| {
        fake_llm::Scripted::Reply(
            json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "spy", "arguments": "{not json"}}]},
            "finish_reason": "tool_calls"}]}),
        )
    };
    // Whether the first run is kept: a call that ran is, with a note; a server that failed
    // before anything ran leaves the conversation as it was.
    let failures: Vec<(&str, Vec<fake_llm::Scripted>, bool)> = vec![
        (
            "a server error after a call ran",
            vec![safe_call(), fake_llm::status(500, "boom", None)],
            true,
        ),
        (
            "three malformed replies",
            vec![bad_args("b1"), bad_args("b2"), bad_args("b3")],
            true,
        ),
        (
            "an empty reply, then the server failing",
            vec![
                fake_llm::text(""),
                fake_llm::status(503, "overloaded", None),
            ],
            false,
        ),
    ];
    for (failure, mut script, kept) in failures {
        script.push(fake_llm::text("all good"));
        let (fake, h) = strict(script, Protocol::Native).await;
        let first = h.agent.run(&inbound("first")).await;
        assert!(
            matches!(first, RunOutcome::Stopped(_)),
            "{failure}: {first:?}"
        );
        assert_eq!(
            h.agent.run(&inbound("second")).await,
            RunOutcome::Replied("all good".into()),
            "{failure}"
        );
        assert_eq!(fake.rejections(), Vec::<String>::new(), "{failure}");
        let requests = fake.requests().await;
        let last = requests.last().expect("a request");
        assert_calls_and_results_pair(last);
        let sent = last["messages"].to_string();
        assert!(!sent.contains("not json"), "{failure}: {sent}");
        assert!(!sent.contains("could not be used"), "{failure}: {sent}");
        let messages = last["messages"].as_array().expect("messages");
        if !kept {
            // Only the system prompt and the second message: nothing of the failed run.
            assert_eq!(messages.len(), 2, "{failure}: {sent}");
            assert_eq!(messages[1]["content"], "alice: second", "{failure}");
            continue;
        }
        // The first run is kept with riskgate's notice that it stopped; the model is sent
        // what people and it said, never that notice as its own words.
        assert!(!sent.contains("No answer"), "{failure}: {sent}");
        assert_eq!(messages[1]["content"], "alice: first", "{failure}: {sent}");
        let kept = stored(&h).await;
        let notice = kept
            .iter()
            .position(|m| m.role == riskgate::core::agent::Role::Notice)
            .unwrap_or_else(|| panic!("{failure}: no notice kept: {kept:?}"));
        assert!(
            kept[notice]
                .content
                .as_deref()
                .is_some_and(|c| c.starts_with("(No answer:")),
            "{failure}: {kept:?}"
        );
        assert_eq!(
            kept[notice + 1].content.as_deref(),
            Some("second"),
            "{failure}: the notice closes the first turn"
        );
    }
}

/// A run that timed out after a call ran, then a question: the model is sent the call and
/// its result, and no riskgate text as if it had said it (a small model copied such a
/// placeholder word for word as its next answers).
#[tokio::test]
async fn a_timed_out_run_leaves_no_riskgate_words_in_the_models_mouth() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "spy", json!({"value": "safe"}))]),
        fake_llm::Scripted::Slow(
            Duration::from_secs(5),
            json!({"choices": [{"message": {"content": "late"}}]}),
        ),
        fake_llm::text("The value was safe."),
    ])
    .await;
    let h = harness(
        http_model(&fake, |s| {
            s.llm.request_timeout_secs = 1;
            s.llm.max_retries = 0;
        }),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let first = h.agent.run(&inbound("what is the value?")).await;
    assert!(matches!(first, RunOutcome::Stopped(_)), "{first:?}");
    assert_eq!(spy_runs(&h), 1);
    let shown = said(&h, error_text);
    assert!(
        shown.iter().any(|m| m.contains("did not answer within")),
        "the person is told: {shown:?}"
    );
    assert_eq!(
        h.agent.run(&inbound("and?")).await,
        RunOutcome::Replied("The value was safe.".into())
    );
    let requests = fake.requests().await;
    let last = requests.last().expect("a request");
    let messages = last["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "user"],
        "{last}"
    );
    for message in messages.iter().filter(|m| m["role"] == "assistant") {
        assert!(
            message["content"].as_str().unwrap_or_default().is_empty(),
            "only the model's own call, no words of riskgate's: {message}"
        );
    }
    assert!(
        !last["messages"].to_string().contains("did not answer"),
        "{last}"
    );
}

/// A harness whose store holds `turns` (user, assistant) for channel `c1` already.
async fn seeded(h: &Harness, turns: &[(&str, &str)]) -> Vec<riskgate::core::agent::ChatMessage> {
    use riskgate::core::agent::ChatMessage;
    let messages: Vec<ChatMessage> = turns
        .iter()
        .flat_map(|(user, assistant)| {
            [
                ChatMessage::user(Some("alice"), *user),
                ChatMessage::assistant(*assistant),
            ]
        })
        .collect();
    h.store.append("c1", &messages).await.expect("seed");
    stored(h).await
}

async fn stored(h: &Harness) -> Vec<riskgate::core::agent::ChatMessage> {
    h.store
        .load_history("c1", usize::MAX)
        .await
        .expect("history")
}

fn said(h: &Harness, pick: fn(&AgentEvent) -> Option<&String>) -> Vec<String> {
    h.events.all().iter().filter_map(pick).cloned().collect()
}

fn error_text(event: &AgentEvent) -> Option<&String> {
    match event {
        AgentEvent::Error { message } => Some(message),
        _ => None,
    }
}

fn notice_text(event: &AgentEvent) -> Option<&String> {
    match event {
        AgentEvent::Notice { message } => Some(message),
        _ => None,
    }
}

/// A fake that refuses what `checks` says, and a harness asking it without retries.
async fn checked(script: Vec<fake_llm::Scripted>, checks: fake_llm::Checks) -> (FakeLlm, Harness) {
    let fake = FakeLlm::start_with(script, checks).await;
    let h = harness(
        http_model(&fake, |s| s.llm.max_retries = 0),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    (fake, h)
}

/// A server that cannot take something in the earlier conversation refuses the run; nothing
/// is deleted, and the channel is told how to clear it if it wants.
#[tokio::test]
async fn a_refused_history_is_reported_and_never_deleted() {
    let (fake, h) = checked(
        vec![],
        fake_llm::Checks {
            refuse_containing: Some("POISON".into()),
            ..fake_llm::Checks::like_real_servers()
        },
    )
    .await;
    let before = seeded(&h, &[("POISON", "ok")]).await;
    let outcome = h.agent.run(&inbound("hello")).await;
    assert!(
        matches!(
            &outcome,
            RunOutcome::Stopped(StopReason::Model(ModelError::Rejected(m))) if m.contains("POISON")
        ),
        "{outcome:?}"
    );
    let errors = said(&h, error_text);
    assert!(
        errors
            .iter()
            .any(|m| m.contains("Nothing was deleted") && m.contains("/reset")),
        "{errors:?}"
    );
    assert_eq!(
        fake.requests().await.len(),
        1,
        "asked once, not again with less"
    );
    // The earlier conversation is still there, first in what is stored.
    let after = stored(&h).await;
    assert_eq!(after[..before.len()], before[..]);
}

/// A model whose window is smaller than the conversation: one request goes without the
/// earlier conversation, the channel is told, and the store keeps every message.
#[tokio::test]
async fn a_conversation_too_long_for_the_model_is_compacted_harder_and_kept() {
    // The client says 8,192 tokens (its default); the server takes far less and refuses.
    let (fake, h) = checked(
        vec![
            fake_llm::text("Alice pasted a long text of x and Bob had a second turn."),
            fake_llm::text("short answer"),
            fake_llm::text("again short"),
        ],
        fake_llm::Checks {
            context_chars: Some(6_000),
            ..fake_llm::Checks::like_real_servers()
        },
    )
    .await;
    let long = "x".repeat(4_500);
    let before = seeded(&h, &[(long.as_str(), "noted"), ("second turn", "fine")]).await;
    let outcome = h.agent.run(&inbound("what now?")).await;
    let requests = fake.requests().await;
    assert_eq!(outcome, RunOutcome::Replied("short answer".into()));
    assert_eq!(fake.rejections().len(), 1);
    assert_eq!(requests.len(), 3, "{requests:#?}");
    // The refused request, then the summary request, then the retry with the summary.
    assert!(requests[0]["messages"].to_string().contains(&long));
    let summarise = requests[1]["messages"].to_string();
    assert!(
        summarise.contains("Summarise the conversation"),
        "{summarise}"
    );
    assert!(
        requests[1]["tools"].is_null()
            || requests[1]["tools"].as_array().is_some_and(Vec::is_empty)
    );
    let retry = requests[2]["messages"].to_string();
    assert!(retry.contains("Alice pasted a long text"), "{retry}");
    assert!(!retry.contains(&long));
    assert!(retry.contains("alice: what now?"));
    // Nothing was left out of the answer, so nobody is told it was.
    let notices = said(&h, notice_text);
    assert!(
        notices
            .iter()
            .all(|m| !m.contains("without the earlier conversation")),
        "{notices:?}"
    );
    // Every earlier message is still stored, and the new turn follows them.
    let after = stored(&h).await;
    assert_eq!(after[..before.len()], before[..]);
    assert_eq!(after.len(), before.len() + 2);
    // The next run starts from the summary: no refusal, no new summary.
    assert_eq!(
        h.agent.run(&inbound("and then?")).await,
        RunOutcome::Replied("again short".into())
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 4);
    let next = requests[3]["messages"].to_string();
    assert!(next.contains("Alice pasted a long text"), "{next}");
    assert_eq!(fake.rejections().len(), 1);
}

/// The model server failing for now (a 502 outage, a timeout, a 429 asking for more than
/// the client waits) stops the run with what to do, and leaves the conversation exactly as
/// it was; the next message goes with all of it.
#[tokio::test]
async fn a_failing_model_server_never_touches_the_conversation() {
    let outages: Vec<(&str, Vec<fake_llm::Scripted>, &str)> = vec![
        (
            "a 502 outage",
            (0..4)
                .map(|_| fake_llm::status(502, "Bad Gateway", None))
                .collect(),
            "kept failing after 4 attempts",
        ),
        (
            "a timeout",
            vec![fake_llm::Scripted::Slow(
                Duration::from_secs(5),
                json!({"choices": [{"message": {"content": "late"}}]}),
            )],
            "did not answer within",
        ),
        (
            "a 429 asking for an hour",
            vec![fake_llm::status(429, "quota", Some("3600"))],
            "try again after",
        ),
    ];
    for (outage, mut script, expected) in outages {
        script.push(fake_llm::text("back"));
        let fake = FakeLlm::start(script).await;
        let h = harness(
            http_model(&fake, |s| s.llm.request_timeout_secs = 1),
            Protocol::Native,
            Approvals::answering(vec![]),
            |_| {},
        );
        let before = seeded(&h, &[("one", "uno"), ("two", "dos")]).await;
        let outcome = h.agent.run(&inbound("three")).await;
        assert!(
            matches!(&outcome, RunOutcome::Stopped(StopReason::Model(e)) if e.failure() == riskgate::core::ports::ModelFailure::Transient),
            "{outage}: {outcome:?}"
        );
        let errors = said(&h, error_text);
        assert!(
            errors.iter().any(|m| m.contains(expected)
                && m.contains("Nothing was lost")
                && m.contains("Send it again")),
            "{outage}: {errors:?}"
        );
        assert_eq!(
            stored(&h).await,
            before,
            "{outage}: the conversation is untouched"
        );
        assert_eq!(
            h.agent.run(&inbound("three")).await,
            RunOutcome::Replied("back".into()),
            "{outage}"
        );
        let requests = fake.requests().await;
        let last = requests.last().expect("a request");
        let contents: Vec<&str> = last["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["content"].as_str())
            .skip(1)
            .collect();
        assert_eq!(
            contents,
            ["alice: one", "uno", "alice: two", "dos", "alice: three"],
            "{outage}: the whole conversation, once"
        );
    }
}

/// A model server that fails after a call of the run ran: the message and what the call did
/// are kept, and the channel is told so, not to send the message again (that would ask for
/// the call again).
#[tokio::test]
async fn a_model_failure_after_a_call_ran_says_what_was_kept() {
    let mut script = vec![fake_llm::tool_calls(&[(
        "c1",
        "spy",
        json!({"value": "safe"}),
    )])];
    script.extend((0..4).map(|_| fake_llm::status(502, "Bad Gateway", None)));
    let fake = FakeLlm::start(script).await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("look")).await;
    assert!(
        matches!(&outcome, RunOutcome::Stopped(StopReason::Model(_))),
        "{outcome:?}"
    );
    assert_eq!(h.spy.runs.lock().expect("runs").len(), 1);
    let errors = said(&h, error_text);
    assert!(
        errors
            .iter()
            .any(|m| m.contains("kept in this channel's conversation")
                && !m.contains("not added")
                && !m.contains("Send it again")),
        "{errors:?}"
    );
    let kept: Vec<String> = stored(&h)
        .await
        .iter()
        .filter_map(|m| m.content.clone())
        .collect();
    assert!(
        kept.iter().any(|m| m.contains("look")) && kept.iter().any(|m| m.contains("spy ran")),
        "{kept:?}"
    );
}

#[tokio::test]
async fn a_server_without_tool_support_is_named_with_what_to_do() {
    let fake = FakeLlm::start(vec![fake_llm::status(
        400,
        "registry.ollama.ai/library/gemma2:2b does not support tools",
        None,
    )])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound("hi")).await;
    assert!(
        matches!(
            outcome,
            RunOutcome::Stopped(StopReason::Model(ModelError::NoToolSupport(_)))
        ),
        "{outcome:?}"
    );
    let said: Vec<String> = h
        .events
        .all()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("cannot call tools") && m.contains("llm.protocol = \"json\"")),
        "{said:?}"
    );
    assert_eq!(fake.requests().await.len(), 1, "not retried, not repaired");
}

#[tokio::test(start_paused = true)]
async fn after_a_profile_switch_nothing_is_sent_on_the_old_profile() {
    use support::hooked_store::Hook;
    let model = timed(vec![(1, reply("on ops")), (1, reply("on sql"))]);
    let (agent, store, _witness, _workspace) = hooked_agent(model.clone());
    assert_eq!(
        agent.run(&inbound("one")).await,
        RunOutcome::Replied("on ops".into())
    );
    // `/profile sql`, as the console and Discord write it: through the agent's store.
    let sql = riskgate::core::ports::ChannelSettings {
        mode: "smart".parse().expect("mode"),
        profile: "sql".into(),
    };
    agent
        .store
        .set_channel_settings("c1", &sql, "alice")
        .await
        .expect("settings");
    // A slow read: a guess on the old profile would go out long before it is back.
    store.hook("channel_settings", Hook::Delay(Duration::from_secs(5)));
    assert_eq!(
        agent.run(&inbound("two")).await,
        RunOutcome::Replied("on sql".into())
    );
    let offered = model.offered.lock().expect("offered").clone();
    assert_eq!(offered.len(), 2, "one request per run: {offered:?}");
    assert_eq!(offered[1], ["execute_sql"], "{offered:?}");
}

/// A server that takes a request and never answers; it reports when the client hangs up.
async fn silent_server() -> (String, tokio::sync::oneshot::Receiver<()>) {
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let (closed, closed_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accept");
        let mut buffer = [0u8; 4096];
        // Read the request and then wait: a read of 0 bytes is the client hanging up.
        loop {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = closed.send(());
    });
    (url, closed_rx)
}

#[tokio::test]
async fn a_run_that_times_out_closes_its_request() {
    let (url, closed) = silent_server().await;
    let model = {
        let mut settings = Settings::default();
        settings.llm.base_url = url;
        Arc::new(riskgate::app::model_client(&settings).expect("client"))
    };
    let h = harness(model, Protocol::Native, Approvals::answering(vec![]), |s| {
        s.agent.run_timeout_secs = 1;
    });
    let outcome = h.agent.run(&inbound("hi")).await;
    assert!(
        matches!(outcome, RunOutcome::Stopped(StopReason::WallClock(_))),
        "{outcome:?}"
    );
    // The connection is closed, so the server can stop generating.
    tokio::time::timeout(Duration::from_secs(30), closed)
        .await
        .expect("the request was left open")
        .expect("the server ended");
}

/// Qwen2.5-Coder-0.5B behind llama-server wrote one bare-JSON call ten times in a reply,
/// followed by riskgate's own result object: the call runs once, the echo is no call.
#[tokio::test]
async fn a_call_repeated_in_one_reply_runs_once() {
    let call = json!({"name": "spy", "arguments": {"value": "safe"}}).to_string();
    let echo = json!({"status": "cancelled", "reason": "a person cancelled this call"});
    let (fake, h) = strict(
        vec![
            fake_llm::text(&format!("{call} {call}\n{call} {echo}")),
            fake_llm::text("done"),
        ],
        Protocol::Native,
    )
    .await;
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Replied("done".into())
    );
    assert_eq!(spy_runs(&h), 1);
    assert_eq!(fake.rejections(), Vec::<String>::new());
}

/// llama-cpp-python's chatml-function-calling handler returned Qwen2.5-Coder-0.5B's
/// `functions.spy:` as the whole reply, with no arguments: it is sent back as a call that
/// could not be used, never posted as the answer.
#[tokio::test]
async fn a_tool_name_without_arguments_is_corrected_not_posted() {
    let (fake, h) = strict(
        vec![
            fake_llm::text("functions.spy:"),
            fake_llm::tool_calls(&[("c2", "spy", json!({"value": "safe"}))]),
            fake_llm::text("done"),
        ],
        Protocol::Native,
    )
    .await;
    assert_eq!(
        h.agent.run(&inbound("go")).await,
        RunOutcome::Replied("done".into())
    );
    assert_eq!(spy_runs(&h), 1);
    let requests = fake.requests().await;
    let correction = tool_messages(&requests[1])[0]["content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(correction.contains("without its arguments"), "{correction}");
    assert_eq!(fake.rejections(), Vec::<String>::new());
}

/// Confirms every request as bob, after taking the spy out of the agent's tools (as an MCP
/// server that dies while a person decides takes its tools with it).
struct SpyLeavesWhileAsked {
    registry: riskgate::core::tools::ToolRegistry,
}

impl ApprovalSurface for SpyLeavesWhileAsked {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.registry.update(|tools| tools.remove("spy"));
        Box::pin(async {
            ApprovalOutcome::Confirmed {
                by: "bob".to_owned(),
            }
        })
    }
}

#[tokio::test]
async fn a_run_keeps_the_tools_it_started_with_and_the_next_run_sees_the_change() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "spy", json!({"value": "maybe"}))]),
        fake_llm::text("done"),
        fake_llm::tool_calls(&[("c2", "spy", json!({"value": "maybe"}))]),
        fake_llm::text("it is gone"),
    ])
    .await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let spy = Arc::new(Spy::default());
    let mut registry = riskgate::tools::builtin_registry(&settings);
    registry.register(spy.clone());
    let agent = riskgate::app::build_agent_with(
        &settings,
        registry.clone(),
        http_model(&fake, |_| {}),
        Arc::new(MemoryStore::new()),
        Arc::new(SpyLeavesWhileAsked { registry }),
        Arc::new(Events::default()),
    )
    .expect("agent");

    assert_eq!(
        agent.run(&inbound("one")).await,
        RunOutcome::Replied("done".into())
    );
    assert_eq!(
        spy.runs.lock().expect("runs").len(),
        1,
        "the confirmed call ran with the tools its run started with"
    );
    assert_eq!(
        agent.run(&inbound("two")).await,
        RunOutcome::Replied("it is gone".into())
    );
    assert_eq!(spy.runs.lock().expect("runs").len(), 1, "nothing ran after");

    let requests = fake.requests().await;
    assert_eq!(requests.len(), 4);
    let offers_spy = |request: &Value| {
        request["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["function"]["name"] == "spy")
    };
    assert!(offers_spy(&requests[0]));
    assert!(
        offers_spy(&requests[1]),
        "a run's requests keep its tools, whatever changed meanwhile"
    );
    assert!(!offers_spy(&requests[2]), "the next run has the new set");
    let results = tool_messages(&requests[3]);
    let second = results
        .iter()
        .find(|m| m["tool_call_id"] == "c2")
        .expect("the second run's result");
    assert!(
        second["content"]
            .as_str()
            .expect("text")
            .contains("there is no tool named \"spy\""),
        "{second}"
    );
}

// ---------------------------------------------------------------------------------------------
// Streamed replies (`llm.stream`) and servers that do not stream.

/// Whether each chat request asked for a stream, and with `stream_options`.
async fn streamed_asks(fake: &FakeLlm) -> Vec<(bool, bool)> {
    fake.requests()
        .await
        .iter()
        .map(|r| {
            (
                r["stream"] == json!(true),
                r.get("stream_options").is_some(),
            )
        })
        .collect()
}

/// Two messages sent to a model at `fake` (`stream` as `llm.stream`), answered `answers`.
async fn two_answers(fake: &FakeLlm, stream: bool, answers: [&str; 2]) -> Harness {
    let h = harness(
        http_model(fake, |s| s.llm.stream = stream),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    for (message, answer) in ["one", "two"].into_iter().zip(answers) {
        assert_eq!(
            h.agent.run(&inbound(message)).await,
            RunOutcome::Replied(answer.into())
        );
    }
    h
}

/// Two messages, each answered, against a server with `checks`; what each request asked.
async fn two_answers_from(checks: fake_llm::Checks) -> Vec<(bool, bool)> {
    let fake = FakeLlm::start_with(
        vec![fake_llm::text("First."), fake_llm::text("Second.")],
        checks,
    )
    .await;
    two_answers(&fake, true, ["First.", "Second."]).await;
    streamed_asks(&fake).await
}

#[tokio::test]
async fn a_server_refusing_to_stream_is_asked_again_without_it_once_and_remembered() {
    let refused = two_answers_from(fake_llm::Checks {
        stream: fake_llm::Streams::Refused,
        ..fake_llm::Checks::like_real_servers()
    })
    .await;
    assert_eq!(refused, [(true, true), (false, false), (false, false)]);
    // Refusing only `stream_options`: the stream stays, the options go.
    let options = two_answers_from(fake_llm::Checks {
        refuse_stream_options: true,
        ..fake_llm::Checks::like_real_servers()
    })
    .await;
    assert_eq!(options, [(true, true), (true, false), (true, false)]);
    // A server that answers a streamed request whole is taken at its word: no second ask.
    let ignored = two_answers_from(fake_llm::Checks {
        stream: fake_llm::Streams::Ignored,
        ..fake_llm::Checks::like_real_servers()
    })
    .await;
    assert_eq!(ignored, [(true, true), (false, false)]);
    // vLLM's shape (the finish reason beside the last piece) streams the same.
    let vllm = two_answers_from(fake_llm::Checks {
        stream: fake_llm::Streams::Vllm,
        ..fake_llm::Checks::like_real_servers()
    })
    .await;
    assert_eq!(vllm, [(true, true), (true, true)]);
    // And `llm.stream = false` never asks.
    let fake = FakeLlm::start(vec![fake_llm::text("Whole.")]).await;
    let h = harness(
        http_model(&fake, |s| s.llm.stream = false),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    h.agent.run(&inbound("one")).await;
    assert_eq!(streamed_asks(&fake).await, [(false, false)]);
}

/// A fake answering `script` and a harness whose model client it is, set by `limits` (and
/// no retries); the outcome of one run of `message`, and the errors the person was told.
async fn streamed_run(
    script: Vec<fake_llm::Scripted>,
    limits: impl FnOnce(&mut Settings),
    message: &str,
) -> (FakeLlm, Harness, RunOutcome, Vec<String>) {
    let fake = FakeLlm::start(script).await;
    let h = harness(
        http_model(&fake, |s| {
            s.llm.max_retries = 0;
            limits(s);
        }),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    let outcome = h.agent.run(&inbound(message)).await;
    let errors = said(&h, error_text);
    (fake, h, outcome, errors)
}

/// A long answer streamed slowly, as a small model on a CPU writes it: the piece in 35
/// events 100 ms apart takes about 3.5 s, longer than `llm.request_timeout_secs` (1 s) allows
/// a whole request, and is not cut off while it keeps coming.
#[tokio::test]
async fn a_slow_stream_is_not_cut_off_while_it_keeps_coming() {
    let answer = "The orders table holds 42 rows; ".repeat(12);
    let (_fake, _, outcome, errors) = streamed_run(
        vec![fake_llm::paced(
            fake_llm::text(&answer),
            Duration::from_millis(100),
        )],
        |s| s.llm.request_timeout_secs = 1,
        "how many orders?",
    )
    .await;
    assert_eq!(outcome, RunOutcome::Replied(answer), "errors: {errors:?}");
}

/// A stream that stops coming in the middle (a stuck server that keeps the connection
/// open) is given up on after `llm.stream_idle_timeout_secs`, long before the request's
/// own limits, and the person is told what happened and which setting it was.
#[tokio::test]
async fn a_stream_that_stops_coming_is_given_up_after_the_idle_timeout() {
    let (_fake, h, outcome, errors) = streamed_run(
        vec![
            fake_llm::stalled(
                fake_llm::text("The orders table holds 42 rows, and the newest"),
                Duration::from_millis(50),
                3,
            ),
            fake_llm::text("back"),
        ],
        |s| {
            s.llm.request_timeout_secs = 30;
            s.llm.stream_idle_timeout_secs = 1;
            s.llm.max_tokens = 10;
        },
        "how many orders?",
    )
    .await;
    assert!(
        matches!(
            &outcome,
            RunOutcome::Stopped(StopReason::Model(riskgate::core::ports::ModelError::Stalled(idle)))
                if *idle == Duration::from_secs(1)
        ),
        "{outcome:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("stopped writing its answer")
                && m.contains("llm.stream_idle_timeout_secs")
                && m.contains("Send it again")),
        "{errors:?}"
    );
    assert_eq!(
        h.agent.run(&inbound("how many orders?")).await,
        RunOutcome::Replied("back".into())
    );
}

/// A stream that keeps coming, but slower than `llm.max_tokens` at 5 tokens a second after
/// `llm.request_timeout_secs`, is stopped at that limit, saying so.
#[tokio::test]
async fn a_stream_slower_than_its_limit_is_stopped_saying_so() {
    let (_fake, _, outcome, errors) = streamed_run(
        vec![fake_llm::paced(
            fake_llm::text(&"word ".repeat(80)),
            Duration::from_millis(100),
        )],
        |s| {
            s.llm.request_timeout_secs = 1;
            // 1 s + 5 tokens at 5 a second: the answer has 2 s.
            s.llm.max_tokens = 5;
        },
        "talk",
    )
    .await;
    assert!(
        matches!(
            &outcome,
            RunOutcome::Stopped(StopReason::Model(riskgate::core::ports::ModelError::TooSlow(limit)))
                if *limit == Duration::from_secs(2)
        ),
        "{outcome:?}"
    );
    assert!(
        errors
            .iter()
            .any(|m| m.contains("still coming after") && m.contains("llm.max_tokens")),
        "{errors:?}"
    );
}

/// Streamed or not, a call comes whole to the gate, its usage is counted, and the run's
/// answer is the same.
#[tokio::test]
async fn a_streamed_run_is_the_run_a_whole_reply_gives() {
    let script = || {
        vec![
            fake_llm::with_usage(
                fake_llm::tool_calls(&[(
                    "call_a",
                    "spy",
                    json!({"value": "a long value, split over several chunks", "risk_level": "low"}),
                )]),
                120,
                30,
            ),
            fake_llm::with_usage(fake_llm::text("The spy says hi."), 200, 6),
        ]
    };
    let mut runs = Vec::new();
    for stream in [true, false] {
        let fake = FakeLlm::start_with(script(), fake_llm::Checks::like_real_servers()).await;
        let h = harness(
            http_model(&fake, |s| s.llm.stream = stream),
            Protocol::Native,
            Approvals::answering(vec![]),
            |_| {},
        );
        let outcome = h.agent.run(&inbound("look")).await;
        let asked = streamed_asks(&fake).await;
        assert!(
            asked.iter().all(|(streamed, _)| *streamed == stream),
            "{asked:?}"
        );
        let usage: Vec<(u64, u64)> = h
            .events
            .all()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ModelUsage {
                    prompt_tokens,
                    completion_tokens,
                } => Some((*prompt_tokens, *completion_tokens)),
                _ => None,
            })
            .collect();
        runs.push((outcome, h.spy.runs.lock().expect("runs").clone(), usage));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0].1.len(), 1, "the call ran once");
    assert_eq!(runs[0].2, [(120, 30), (200, 6)]);
}

#[tokio::test]
async fn text_beside_a_streamed_call_is_a_draft_taken_back_before_the_call() {
    let fake_llm::Scripted::Reply(mut call) = fake_llm::tool_calls(&[(
        "call_a",
        "spy",
        json!({"value": "safe", "risk_level": "low"}),
    )]) else {
        unreachable!("tool_calls is a reply")
    };
    call["choices"][0]["message"]["content"] = json!("Let me look that up for you.");
    let fake = FakeLlm::start(vec![
        fake_llm::Scripted::Reply(call),
        fake_llm::text("The spy says hi."),
    ])
    .await;
    let h = harness(
        http_model(&fake, |_| {}),
        Protocol::Native,
        Approvals::answering(vec![]),
        |_| {},
    );
    h.agent.run(&inbound("look")).await;
    let events = h.events.all();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReplyPart { .. } => Some("part"),
            AgentEvent::DraftDropped => Some("dropped"),
            AgentEvent::ToolCall { .. } => Some("call"),
            AgentEvent::Reply { .. } => Some("reply"),
            _ => None,
        })
        .collect();
    let first_call = kinds.iter().position(|k| *k == "call").expect("a call");
    assert_eq!(kinds[first_call - 1], "dropped", "{kinds:?}");
    assert!(
        kinds[..first_call - 1].iter().all(|k| *k == "part"),
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"reply"));
    let shown: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReplyPart { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "Let me look that up for you.The spy says hi.");
}

#[tokio::test]
async fn reasoning_is_taken_out_of_a_whole_reply_and_of_what_is_stored() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("Okay, the user greets me. I should greet back.\n</think>\n\nHello!"),
        fake_llm::text("<think>\nThey ask again.\n</think>\nHello again!"),
    ])
    .await;
    let h = two_answers(&fake, false, ["Hello!", "Hello again!"]).await;
    let stored =
        serde_json::to_string(&h.store.load_history("c1", 100_000).await.expect("history"))
            .expect("json");
    assert!(
        stored.contains("Hello!") && stored.contains("Hello again!"),
        "{stored}"
    );
    assert!(
        !stored.contains("think") && !stored.contains("greet back"),
        "{stored}"
    );
}
