//! A real model through the whole agent: a fixed set of a dozen tasks, each scored for a
//! right answer in the model's own words, the clicks it cost, and its wall time.
//!
//! `RISKGATE_TEST_LLM_URL=http://127.0.0.1:8080/v1 cargo bench --bench real_model`
//!
//! The server is any OpenAI-compatible one (`deploy/local-model/setup.sh` sets up
//! llama.cpp's); `RISKGATE_TEST_LLM_MODEL` (default `local`), `RISKGATE_TEST_LLM_PROTOCOL`
//! (`native` or `json`) and `RISKGATE_TEST_LLM_MAX_TOKENS` (default: `llm.max_tokens`'s) as
//! `tests/real_model.rs` reads them. Without a URL it says so and does nothing. Every other
//! setting is the default, the timeouts included (the bench is also a check that they let
//! a slow local model finish), but `agent.max_iterations`: 4.
//!
//! The tasks run in order through one agent with an in-memory store, the demo SQLite
//! database and a temp workspace holding a few files with known contents:
//! - reads with a known answer (a count, a name, a value in a file), in a `sql`-profile
//!   channel and an `ops`-profile one (every tool);
//! - follow-ups that refer back to the answer before ("her", "that file");
//! - a write the person cancels with a reason ("keep them for the audit"): right if nothing
//!   changed and the answer takes the reason up;
//! - writes the person confirms: right if the effect is there exactly once.
//!
//! A scripted person answers every approval: as the task says for the write it is about,
//! and for anything else a confirm unless the call writes (then a cancel, saying to read
//! only). An answer counts as right only as the model's own reply (`RunOutcome::Replied`),
//! never a stop or a notice of riskgate's. Small models stay small: expect misses; the table
//! shows which and why, and `RISKGATE_BENCH_TRACE=1` prints each task's calls and results.

#[path = "../tests/support/real_llm.rs"]
mod real_llm;

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use riskgate::core::agent::{AgentEvent, ChatReply, ChatRequest, Inbound, RunOutcome};
use riskgate::core::message::ContextLimits;
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChannelSettings, ChatModel, EventSink,
    ModelError, ReplyListener, Store,
};
use riskgate::core::tools::{Approval, BoxFuture};
use sqlx::Connection;

/// How the scripted person answers the approval a task is about.
#[derive(Clone, Copy)]
enum Person {
    /// Confirms what is asked (writes the task asks for).
    Confirms,
    /// Cancels saying why: the reason the model is told.
    CancelsSaying(&'static str),
    /// The task only reads: confirms reads, cancels writes.
    ReadsOnly,
}

/// What makes an answer right.
enum Check {
    /// The reply names each of these (case-insensitive, as whole words).
    Says(&'static [&'static str]),
    /// Nothing changed in the orders table, and the reply names one of these.
    Unchanged(&'static [&'static str]),
    /// `products.stock` of product 7 is this, set by exactly one statement.
    StockOnce(i64),
    /// The file holds this line exactly once.
    LineOnce(&'static str, &'static str),
}

struct Task {
    name: &'static str,
    channel: &'static str,
    text: &'static str,
    person: Person,
    check: Check,
}

/// The tasks, in the order they run: a follow-up comes right after the task it refers to.
fn tasks() -> Vec<Task> {
    use Check::*;
    use Person::*;
    vec![
        Task {
            name: "count customers",
            channel: "data",
            text: "How many customers are there?",
            person: ReadsOnly,
            check: Says(&["12"]),
        },
        Task {
            name: "priciest product",
            channel: "data",
            text: "Which product has the highest price?",
            person: ReadsOnly,
            check: Says(&["Standing desk"]),
        },
        Task {
            name: "a customer's city",
            channel: "data",
            text: "Which city does the customer Grace Hopper live in?",
            person: ReadsOnly,
            check: Says(&["New York"]),
        },
        Task {
            name: "follow-up: her email",
            channel: "data",
            text: "And what is her email address?",
            person: ReadsOnly,
            check: Says(&["grace@example.com"]),
        },
        Task {
            name: "delivered orders",
            channel: "data",
            text: "How many orders have the status delivered?",
            person: ReadsOnly,
            check: Says(&["15"]),
        },
        Task {
            name: "cancel with a reason",
            channel: "data",
            text: "Delete all orders whose status is cancelled.",
            person: CancelsSaying("no: we keep cancelled orders for the audit"),
            check: Unchanged(&[
                "audit",
                "not delete",
                "won't delete",
                "will not delete",
                "did not delete",
                "didn't delete",
                "kept",
                "keep",
            ]),
        },
        Task {
            name: "confirmed update",
            channel: "data",
            text: "Set the stock of product 7 (Webcam 1080p) to 25.",
            person: Confirms,
            check: StockOnce(25),
        },
        Task {
            name: "value in a file",
            channel: "ops",
            text: "What is max_connections set to in config/app.toml?",
            person: ReadsOnly,
            check: Says(&["64"]),
        },
        Task {
            name: "follow-up: same file",
            channel: "ops",
            text: "And which port does that same file set?",
            person: ReadsOnly,
            check: Says(&["8443"]),
        },
        Task {
            name: "version file",
            channel: "ops",
            text: "What version does the file VERSION say?",
            person: ReadsOnly,
            check: Says(&["3.7.1"]),
        },
        Task {
            name: "count lines",
            channel: "ops",
            text: "How many lines does data/hosts.txt have?",
            person: ReadsOnly,
            check: Says(&["13"]),
        },
        Task {
            name: "confirmed append",
            channel: "ops",
            text: "Append the line 'rotate keys' to the file notes/todo.txt.",
            person: Confirms,
            check: LineOnce("notes/todo.txt", "rotate keys"),
        },
    ]
}

/// The workspace's files with known contents.
fn write_files(root: &Path) {
    let hosts: String = (1..=13)
        .map(|i| format!("host-{i:02}.internal\n"))
        .collect();
    for (path, content) in [
        (
            "config/app.toml",
            "[server]\nhost = \"0.0.0.0\"\nport = 8443\nmax_connections = 64\n",
        ),
        ("VERSION", "3.7.1\n"),
        ("data/hosts.txt", hosts.as_str()),
        ("notes/todo.txt", "buy milk\n"),
    ] {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, content).expect("a file");
    }
}

/// The model, counting its requests.
struct Counted {
    inner: Arc<dyn ChatModel>,
    requests: Mutex<usize>,
}

impl ChatModel for Counted {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        *self.requests.lock().expect("requests") += 1;
        self.inner.complete(request)
    }

    fn complete_telling<'a>(
        &'a self,
        request: &'a ChatRequest,
        listener: &'a dyn ReplyListener,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        *self.requests.lock().expect("requests") += 1;
        self.inner.complete_telling(request, listener)
    }

    fn context_limits(&self) -> Option<ContextLimits> {
        self.inner.context_limits()
    }
}

/// The scripted person: answers as the running task says, and counts the clicks.
struct Approver {
    person: Mutex<Person>,
    clicks: Mutex<usize>,
}

/// Whether a call writes, as far as a person glancing at it would tell.
fn writes(request: &ApprovalRequest) -> bool {
    let text = serde_json::Value::Object(request.arguments.clone())
        .to_string()
        .to_ascii_lowercase();
    [
        "delete", "update", "insert", "drop", "alter", "create", "replace", "\"write", "append",
        "rm ", "mv ", ">",
    ]
    .iter()
    .any(|w| text.contains(w))
}

impl ApprovalSurface for Approver {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        *self.clicks.lock().expect("clicks") += 1;
        let by = "Sam".to_owned();
        let person = *self.person.lock().expect("person");
        let outcome = match person {
            Person::Confirms => ApprovalOutcome::Confirmed { by },
            Person::CancelsSaying(reason) => ApprovalOutcome::Cancelled {
                by,
                reason: Some(reason.to_owned()),
            },
            Person::ReadsOnly if writes(request) => ApprovalOutcome::Cancelled {
                by,
                reason: Some("only read, change nothing".to_owned()),
            },
            Person::ReadsOnly => ApprovalOutcome::Confirmed { by },
        };
        Box::pin(async move { outcome })
    }
}

/// The events, kept to count the statements that ran.
#[derive(Default)]
struct Events(Mutex<Vec<AgentEvent>>);

impl EventSink for Events {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        self.0.lock().expect("events").push(event.clone());
    }
}

impl Events {
    /// How many calls that ran (with a result that is not an error) since `from` had an
    /// argument holding `word`.
    fn ran_with(&self, from: usize, word: &str) -> usize {
        let events = self.0.lock().expect("events");
        let calls: Vec<&String> = events[from..]
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolCall {
                    call_id, arguments, ..
                } if serde_json::Value::Object(arguments.clone())
                    .to_string()
                    .to_ascii_uppercase()
                    .contains(word) =>
                {
                    Some(call_id)
                }
                _ => None,
            })
            .collect();
        events[from..]
            .iter()
            .filter(|e| {
                matches!(e, AgentEvent::ToolResult { call_id, ok: true, .. } if calls.contains(&call_id))
            })
            .count()
    }
}

/// Whether `text` names `word` as a whole word (case-insensitive): not inside a longer
/// number or word, so "12" is not found in "112" nor "3.7.1" in "3.7.10".
fn names(text: &str, word: &str) -> bool {
    let (text, word) = (text.to_lowercase(), word.to_lowercase());
    text.match_indices(&word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let joins = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
        let continues = after == Some('.')
            && text[at + word.len() + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit());
        !joins(before) && !joins(after) && !continues
    })
}

/// One task's figures.
struct Scored {
    right: bool,
    why: String,
    clicks: usize,
    requests: usize,
    wall: Duration,
}

struct Bench {
    agent: riskgate::core::agent::Agent,
    model: Arc<Counted>,
    approver: Arc<Approver>,
    events: Arc<Events>,
    workspace: tempfile::TempDir,
}

impl Bench {
    async fn demo_db(&self) -> sqlx::SqliteConnection {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(self.workspace.path().join("demo.db"))
            .read_only(true);
        sqlx::SqliteConnection::connect_with(&options)
            .await
            .expect("the demo database")
    }

    /// The demo database is created at the SQL tool's first use: here, before the tasks,
    /// so each can be compared with it. Its rows are the answers the tasks expect.
    async fn create_demo_db(&self) {
        let tool = self
            .agent
            .gate
            .registry()
            .get("execute_sql")
            .expect("the SQL tool");
        let arguments = serde_json::json!({"sql": "SELECT 1"});
        tool.execute(arguments.as_object().expect("an object"), &Approval::Auto)
            .await
            .expect("the demo database");
        for (sql, expected) in [
            ("SELECT count(*) FROM customers", 12),
            ("SELECT count(*) FROM orders WHERE status = 'delivered'", 15),
            (
                "SELECT count(*) FROM products WHERE id = 9 AND name = 'Standing desk' AND price = (SELECT max(price) FROM products)",
                1,
            ),
            (
                "SELECT count(*) FROM customers WHERE name = 'Grace Hopper' AND city = 'New York' AND email = 'grace@example.com'",
                1,
            ),
        ] {
            assert_eq!(
                self.number(sql).await,
                expected,
                "the demo database changed: {sql}"
            );
        }
    }

    async fn number(&self, sql: &'static str) -> i64 {
        let mut db = self.demo_db().await;
        let n: i64 = sqlx::query_scalar(sql)
            .fetch_one(&mut db)
            .await
            .expect("a number");
        n
    }

    async fn run(&self, task: &Task) -> Scored {
        *self.approver.person.lock().expect("person") = task.person;
        let clicks = *self.approver.clicks.lock().expect("clicks");
        let requests = *self.model.requests.lock().expect("requests");
        let events = self.events.0.lock().expect("events").len();
        let orders = self.number("SELECT count(*) FROM orders").await;
        let started = Instant::now();
        let outcome = self
            .agent
            .run(&Inbound {
                channel: task.channel.into(),
                author: "sam".into(),
                author_name: "Sam".into(),
                text: task.text.into(),
            })
            .await;
        let wall = started.elapsed();
        let reply = match &outcome {
            RunOutcome::Replied(text) if own_words(text) => Some(text.as_str()),
            _ => None,
        };
        let (right, why) = match (reply, &task.check) {
            (None, Check::StockOnce(_)) => {
                let now = self.number("SELECT stock FROM products WHERE id = 7").await;
                let ran = self.events.ran_with(events, "UPDATE");
                (
                    false,
                    format!("stock {now}, {ran} UPDATE(s) ran; {}", describe(&outcome)),
                )
            }
            (None, _) => (false, describe(&outcome)),
            (Some(text), Check::Says(words)) => {
                let missing: Vec<&str> =
                    words.iter().copied().filter(|w| !names(text, w)).collect();
                (missing.is_empty(), quote(text))
            }
            (Some(text), Check::Unchanged(words)) => {
                let now = self.number("SELECT count(*) FROM orders").await;
                let took_up = words.iter().any(|w| text.to_lowercase().contains(w));
                let why = if now == orders {
                    quote(text)
                } else {
                    format!("orders went from {orders} to {now}")
                };
                (now == orders && took_up, why)
            }
            (Some(text), Check::StockOnce(stock)) => {
                let now = self.number("SELECT stock FROM products WHERE id = 7").await;
                let ran = self.events.ran_with(events, "UPDATE");
                let why = format!("stock {now}, {ran} UPDATE(s) ran; {}", quote(text));
                (now == *stock && ran == 1, why)
            }
            (Some(text), Check::LineOnce(path, line)) => {
                let content =
                    std::fs::read_to_string(self.workspace.path().join(path)).unwrap_or_default();
                let times = content.lines().filter(|l| l.trim() == *line).count();
                let kept = content.lines().next() == Some("buy milk");
                let why = format!(
                    "the line {times} time(s), first line kept: {kept}; {}",
                    quote(text)
                );
                (times == 1 && kept, why)
            }
        };
        if std::env::var_os("RISKGATE_BENCH_TRACE").is_some() {
            for event in &self.events.0.lock().expect("events")[events..] {
                if let Some(line) = trace(event) {
                    println!("     | {line}");
                }
            }
        }
        Scored {
            right,
            why,
            clicks: *self.approver.clicks.lock().expect("clicks") - clicks,
            requests: *self.model.requests.lock().expect("requests") - requests,
            wall,
        }
    }
}

/// One line for what a run did (`RISKGATE_BENCH_TRACE`).
fn trace(event: &AgentEvent) -> Option<String> {
    Some(match event {
        AgentEvent::ToolCall {
            tool,
            arguments,
            decision,
            ..
        } => one_line(
            &format!(
                "call {tool} {} -> {decision}",
                serde_json::Value::Object(arguments.clone())
            ),
            160,
        ),
        AgentEvent::ToolResult { ok, summary, .. } => {
            one_line(&format!("result ok={ok}: {summary}"), 160)
        }
        AgentEvent::CallNotRun { status, .. } => format!("not run: {status}"),
        AgentEvent::Notice { message } => one_line(&format!("notice: {message}"), 160),
        AgentEvent::Error { message } => one_line(&format!("error: {message}"), 160),
        _ => return None,
    })
}

/// Whether a reply is the model's own words: not a call or a tool result it echoed as text
/// (`{"name": ...}`, a JSON block, the result's `exit status` line), nor riskgate's notice.
fn own_words(text: &str) -> bool {
    let start = text.trim_start();
    !(start.starts_with('{')
        || start.starts_with('[')
        || start.starts_with("```json")
        || text.contains("exit status ")
        || text.contains("(No answer"))
}

/// The first 90 characters of `text` on one line, quoted.
fn quote(text: &str) -> String {
    format!("{:?}", one_line(text, 90))
}

fn one_line(text: &str, chars: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(chars) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line,
    }
}

fn describe(outcome: &RunOutcome) -> String {
    let said = match outcome {
        RunOutcome::Replied(text) => format!("not its own words: {text}"),
        RunOutcome::Terminated { tool, .. } => format!("ended by {tool}"),
        RunOutcome::Stopped(reason) => format!("stopped: {reason}"),
    };
    one_line(&said, 220)
}

async fn bench(url: String) {
    let workspace = tempfile::tempdir().expect("tempdir");
    write_files(workspace.path());
    let mut settings = real_llm::settings(&url, workspace.path());
    // A right answer takes two steps (a call, then the answer), a follow-up at most three:
    // four bound a small model that repeats a call, which would otherwise take the run's
    // whole time.
    settings.agent.max_iterations = 4;
    let client = riskgate::app::model_client(&settings).expect("the model client");
    let window = client
        .context_window(settings.llm.context_window_tokens, Duration::from_secs(5))
        .await;
    client.set_context_window(window);
    let model = Arc::new(Counted {
        inner: Arc::new(client),
        requests: Mutex::new(0),
    });
    let approver = Arc::new(Approver {
        person: Mutex::new(Person::ReadsOnly),
        clicks: Mutex::new(0),
    });
    let events = Arc::new(Events::default());
    let store = Arc::new(riskgate::store::MemoryStore::new());
    for (channel, profile) in [("data", "sql"), ("ops", "ops")] {
        let channel_settings = ChannelSettings {
            mode: settings.risk.mode(),
            profile: profile.to_owned(),
        };
        store
            .set_channel_settings(channel, &channel_settings, "bench")
            .await
            .expect("the channel's profile");
    }
    let agent = riskgate::app::build_agent(
        &settings,
        model.clone(),
        store,
        approver.clone(),
        events.clone(),
    )
    .expect("the agent");
    let bench = Bench {
        agent,
        model,
        approver,
        events,
        workspace,
    };
    bench.create_demo_db().await;
    println!(
        "real_model: {} at {url}, protocol {}, max_tokens {}, max_iterations {}, stream {}, request timeout {} s, stream idle timeout {} s; {}",
        settings.llm.model,
        settings.llm.protocol,
        settings.llm.max_tokens,
        settings.agent.max_iterations,
        settings.llm.stream,
        settings.llm.request_timeout_secs,
        settings.llm.stream_idle_timeout_secs,
        window.describe()
    );
    println!(
        "{:<2} {:<22} {:<5} {:>6} {:>8} {:>8}  what it said",
        "#", "task", "right", "clicks", "requests", "wall s"
    );
    let mut totals = (0, 0, 0, Duration::ZERO);
    let all = tasks();
    for (i, task) in all.iter().enumerate() {
        let scored = bench.run(task).await;
        println!(
            "{:<2} {:<22} {:<5} {:>6} {:>8} {:>8.1}  {}",
            i + 1,
            task.name,
            if scored.right { "yes" } else { "no" },
            scored.clicks,
            scored.requests,
            scored.wall.as_secs_f64(),
            scored.why
        );
        let _ = std::io::stdout().flush();
        totals.0 += usize::from(scored.right);
        totals.1 += scored.clicks;
        totals.2 += scored.requests;
        totals.3 += scored.wall;
    }
    println!(
        "   {:<22} {:<5} {:>6} {:>8} {:>8.1}",
        "total",
        format!("{}/{}", totals.0, all.len()),
        totals.1,
        totals.2,
        totals.3.as_secs_f64()
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Ok(url) = std::env::var("RISKGATE_TEST_LLM_URL") else {
        println!(
            "real_model: skipped: set RISKGATE_TEST_LLM_URL (and RISKGATE_TEST_LLM_MODEL) to run the tasks against a real model; deploy/local-model/setup.sh sets up a server"
        );
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(bench(url));
}
