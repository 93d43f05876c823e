//! PostgreSQL restarts during runs. The real agent (`build_agent`, the built-in
//! tools, the SQL store from `open_store`) talks to a real PostgreSQL through a TCP proxy
//! (`support::pg_proxy`) that plays the restart: every connection dropped, new ones refused
//! for a while, and, at the worst moment, a statement committed whose answer is lost. One
//! scenario also terminates the store's backends server-side (`pg_terminate_backend`, the
//! FATAL 57P01 clients see on a fast shutdown). The shared server itself is never restarted.
//!
//! Needs `RISKGATE_TEST_POSTGRES_URL`; without it every test says `skipped: ...` and passes.
//! Each test works in a fresh schema, dropped at the end.

/// libtest captures the print macros of passing tests, so a skip notice goes to the
/// process's stderr directly: a plain `cargo test` shows which tests were skipped.
macro_rules! say_skipped {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "{test}: {}", format_args!($($arg)*));
    }};
}

mod support;

use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use riskgate::config::Settings;
use riskgate::core::agent::{Agent, AgentEvent, Inbound, RunOutcome, StopReason};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalStatus, ApprovalSurface, Decided, EventSink, Store,
};
use riskgate::core::tools::BoxFuture;
use serde_json::json;
use sqlx::Connection;
use support::fake_llm::{self, FakeLlm, Scripted};
use support::pg_proxy::PgProxy;
use support::pg_schema::TestSchema;
use tokio::sync::Notify;

const POSTGRES_ENV: &str = "RISKGATE_TEST_POSTGRES_URL";

// ---------------------------------------------------------------------------------------------
// A fresh schema per test, reached directly (for assertions) and through the proxy (the bot).

struct TestDb {
    /// Dropped with the test.
    schema: TestSchema,
    /// The test schema, directly.
    direct_url: String,
    /// Marks the store's connections in pg_stat_activity.
    application: String,
}

fn random_suffix() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("clock")
            .as_nanos(),
    );
    format!("{:016x}", hasher.finish())
}

fn with_query(url: &str, query: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{query}")
}

impl TestDb {
    async fn new() -> Option<Self> {
        let schema = TestSchema::named("r").await?;
        let suffix = schema.schema.trim_start_matches("r_").to_owned();
        Some(Self {
            direct_url: schema.url.clone(),
            schema,
            application: format!("riskgate_restart_{suffix}"),
        })
    }

    /// The store's URL: through `proxy`, in this test's schema, named for pg_stat_activity.
    fn store_url(&self, proxy: &PgProxy) -> String {
        with_query(
            &proxy.url(&self.schema.admin_url),
            &format!(
                // Plain text on the wire, so the proxy can see which statement passes.
                "options[search_path]={}&application_name={}&sslmode=disable",
                self.schema.schema, self.application
            ),
        )
    }

    /// (status, decided_by) of every approval row with this id.
    async fn approval_rows(&self, id: &str) -> Vec<(String, Option<String>)> {
        let mut conn = sqlx::PgConnection::connect(&self.direct_url)
            .await
            .expect("pg");
        let rows = sqlx::query_as("SELECT status, decided_by FROM approvals WHERE id = $1")
            .bind(id)
            .fetch_all(&mut conn)
            .await
            .expect("approvals");
        conn.close().await.expect("close");
        rows
    }

    /// (tool, outcome, approval_id) of the audit rows whose arguments mention `marker`.
    async fn audit_rows(&self, marker: &str) -> Vec<(String, String, Option<String>)> {
        let mut conn = sqlx::PgConnection::connect(&self.direct_url)
            .await
            .expect("pg");
        let rows = sqlx::query_as(
            "SELECT tool, outcome, approval_id FROM audit \
             WHERE strpos(arguments_summary, $1) > 0 ORDER BY id",
        )
        .bind(marker)
        .fetch_all(&mut conn)
        .await
        .expect("audit");
        conn.close().await.expect("close");
        rows
    }
}

/// What a fast shutdown does to the store's connections: FATAL 57P01 on each session named
/// `application`. Returns how many it ended.
async fn terminate_backends(admin_url: &str, application: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(admin_url).await.expect("pg");
    let killed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1) AS killed",
    )
    .bind(application)
    .fetch_one(&mut conn)
    .await
    .expect("terminate");
    conn.close().await.expect("close");
    killed
}

// ---------------------------------------------------------------------------------------------
// Recording adapters.

type Hook = Box<dyn Fn(&str, &AgentEvent) + Send + Sync>;

/// Records every event; an optional hook runs as each is emitted (to start a restart at an
/// exact point of the loop: the events are emitted synchronously, in order).
#[derive(Default)]
struct Events {
    seen: Mutex<Vec<(String, AgentEvent)>>,
    hook: Mutex<Option<Hook>>,
}

impl EventSink for Events {
    fn emit(&self, channel: &str, event: &AgentEvent) {
        if let Some(hook) = self.hook.lock().expect("hook").as_ref() {
            hook(channel, event);
        }
        self.seen
            .lock()
            .expect("events")
            .push((channel.to_owned(), event.clone()));
    }
}

impl Events {
    fn of(&self, channel: &str) -> Vec<AgentEvent> {
        self.seen
            .lock()
            .expect("events")
            .iter()
            .filter(|(c, _)| c == channel)
            .map(|(_, e)| e.clone())
            .collect()
    }

    fn notices(&self, channel: &str) -> Vec<String> {
        self.of(channel)
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Notice { message } => Some(message),
                _ => None,
            })
            .collect()
    }

    fn errors(&self, channel: &str) -> Vec<String> {
        self.of(channel)
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Error { message } => Some(message),
                _ => None,
            })
            .collect()
    }

    fn results(&self, channel: &str) -> usize {
        self.of(channel)
            .iter()
            .filter(|e| matches!(e, AgentEvent::ToolResult { ok: true, .. }))
            .count()
    }
}

type Script = Box<dyn Fn(ApprovalRequest) -> BoxFuture<'static, ApprovalOutcome> + Send + Sync>;

/// The person, scripted per test.
struct Person(Script);

impl ApprovalSurface for Person {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        (self.0)(request.clone())
    }
}

fn nobody() -> Person {
    Person(Box::new(|_| Box::pin(async { ApprovalOutcome::Expired })))
}

struct Bot {
    agent: Arc<Agent>,
    store: Arc<dyn Store>,
    events: Arc<Events>,
    _dir: tempfile::TempDir,
    dir: std::path::PathBuf,
}

/// The real agent against the store behind `proxy`.
async fn bot(
    db: &TestDb,
    proxy: &PgProxy,
    fake: &FakeLlm,
    retry_window_secs: u64,
    person: impl FnOnce(Arc<dyn Store>) -> Person,
) -> Bot {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.llm.base_url = fake.base_url();
    settings.llm.retry_base_delay_ms = 10;
    settings.tools.workspace = dir.path().to_path_buf();
    settings.store.url = db.store_url(proxy);
    settings.store.retry_window_secs = retry_window_secs;
    let store: Arc<dyn Store> = Arc::new(
        riskgate::app::open_store(&settings)
            .await
            .expect("the store opens through the proxy"),
    );
    let events = Arc::new(Events::default());
    let mut agent = riskgate::app::build_agent(
        &settings,
        Arc::new(riskgate::app::model_client(&settings).expect("client")),
        store.clone(),
        Arc::new(person(store.clone())),
        events.clone(),
    )
    .expect("agent");
    agent.limits.store_notice_after = Duration::from_millis(500);
    Bot {
        agent: Arc::new(agent),
        store,
        events,
        dir: dir.path().to_path_buf(),
        _dir: dir,
    }
}

fn inbound(channel: &str, text: &str) -> Inbound {
    Inbound {
        channel: channel.into(),
        author: "alice".into(),
        author_name: "alice".into(),
        text: text.into(),
    }
}

/// A risky call (appending to a file needs a person): each execution adds one line.
fn append_line(id: &str) -> Scripted {
    fake_llm::tool_calls(&[(
        id,
        "file_operations",
        json!({"operation": "append", "path": "log.txt", "content": "ran\n"}),
    )])
}

/// A safe call that runs at once; `marker` finds its audit record.
fn echo(id: &str, marker: &str) -> Scripted {
    fake_llm::tool_calls(&[(
        id,
        "execute_command",
        json!({"command": format!("echo {marker}")}),
    )])
}

fn lines_in_log(dir: &std::path::Path) -> usize {
    std::fs::read_to_string(dir.join("log.txt"))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

macro_rules! postgres_or_skip {
    () => {
        match TestDb::new().await {
            Some(db) => db,
            None => {
                say_skipped!("skipped: {} not set", POSTGRES_ENV);
                return;
            }
        }
    };
}

// ---------------------------------------------------------------------------------------------
// a. A confirmation during the restart.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_confirmation_during_a_restart_is_recorded_once_and_the_call_runs_once() {
    let db = postgres_or_skip!();
    let proxy = Arc::new(PgProxy::start(&db.schema.admin_url).await);
    let fake = FakeLlm::start(vec![append_line("c1"), fake_llm::text("Appended.")]).await;
    let clicked: Arc<Mutex<Option<Decided>>> = Arc::default();
    let (restarting, clicks) = (proxy.clone(), clicked.clone());
    let killed = Arc::new(Mutex::new(0i64));
    let kill_count = killed.clone();
    let db_admin = db.schema.admin_url.clone();
    let application = db.application.clone();
    let bot = bot(&db, &proxy, &fake, 30, move |store| {
        Person(Box::new(move |request| {
            let (store, proxy, clicks, killed) = (
                store.clone(),
                restarting.clone(),
                clicks.clone(),
                kill_count.clone(),
            );
            let (admin, application) = (db_admin.clone(), application.clone());
            Box::pin(async move {
                // The database goes down while the request waits: the server ends the
                // store's sessions (57P01)...
                *killed.lock().expect("killed") = terminate_backends(&admin, &application).await;
                // ... and the person's click is committed just as the connection dies: the
                // store only learns of it by retrying once the database is back.
                proxy.cut_after(request.id.as_bytes(), Duration::from_secs(3));
                let decided = store
                    .decide_approval(&request.id, ApprovalStatus::Confirmed, Some("bob"))
                    .await;
                let outcome = match &decided {
                    Ok(Decided::Won(_)) => ApprovalOutcome::Confirmed { by: "bob".into() },
                    _ => ApprovalOutcome::Expired,
                };
                *clicks.lock().expect("clicked") = decided.ok();
                outcome
            })
        }))
    })
    .await;

    let outcome = bot.agent.run(&inbound("A", "append a line")).await;

    assert_eq!(outcome, RunOutcome::Replied("Appended.".into()));
    assert!(
        *killed.lock().expect("killed") >= 1,
        "the store's sessions were terminated server-side"
    );
    assert_eq!(proxy.cuts(), 1, "the decision's answer was lost once");
    let clicked = clicked.lock().expect("clicked").clone();
    let Some(Decided::Won(record)) = clicked else {
        panic!("the click retried after the lost answer must count as won: {clicked:?}");
    };
    assert_eq!(
        db.approval_rows(&record.id).await,
        vec![("confirmed".to_owned(), Some("bob".to_owned()))],
        "exactly one decision, the person's, and the approval record intact"
    );
    assert_eq!(lines_in_log(&bot.dir), 1, "the call ran exactly once");
    let audit = db.audit_rows("log.txt").await;
    assert_eq!(
        audit,
        vec![(
            "file_operations".to_owned(),
            "ok".to_owned(),
            Some(record.id.clone())
        )],
        "one audit record for the call, tied to its approval"
    );
    assert_eq!(bot.agent.unwritten_audit.lock().await.len(), 0);
}

// ---------------------------------------------------------------------------------------------
// b. The restart begins just before an auto-run call's audit write.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_audit_write_cut_by_a_restart_lands_exactly_once() {
    let db = postgres_or_skip!();
    let proxy = PgProxy::start(&db.schema.admin_url).await;
    let marker = format!("marker-b-{}", random_suffix());
    let fake = FakeLlm::start(vec![echo("c1", &marker), fake_llm::text("Echoed.")]).await;
    let bot = bot(&db, &proxy, &fake, 30, |_| nobody()).await;
    // The audit insert is the first statement that carries the marker: it commits, its
    // answer is lost, and the database stays down for 3 s.
    proxy.cut_after(marker.as_bytes(), Duration::from_secs(3));

    let outcome = bot.agent.run(&inbound("B", "echo")).await;

    assert_eq!(outcome, RunOutcome::Replied("Echoed.".into()));
    assert_eq!(proxy.cuts(), 1, "the restart hit the audit write");
    assert_eq!(bot.events.results("B"), 1, "the call ran once");
    assert_eq!(
        db.audit_rows(&marker).await,
        vec![("execute_command".to_owned(), "ok".to_owned(), None)],
        "the audit record is there exactly once: not lost, not doubled by the retry"
    );
    let notices = bot.events.notices("B");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("state database is not answering")),
        "the channel was told why it waited: {notices:?}"
    );
    assert!(
        bot.events.errors("B").is_empty(),
        "{:?}",
        bot.events.errors("B")
    );
}

// ---------------------------------------------------------------------------------------------
// c. Another channel keeps being served; the waiting one is confirmed right after.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn another_channel_is_served_through_a_restart_and_the_waiting_run_goes_on() {
    let db = postgres_or_skip!();
    let proxy = Arc::new(PgProxy::start(&db.schema.admin_url).await);
    let fake = FakeLlm::start(vec![
        append_line("a1"),
        fake_llm::text("B is fine."),
        fake_llm::text("A appended."),
    ])
    .await;
    let asked = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (asked_tx, release_rx) = (asked.clone(), release.clone());
    let bot = bot(&db, &proxy, &fake, 30, move |store| {
        Person(Box::new(move |request| {
            let (store, asked, release) = (store.clone(), asked_tx.clone(), release_rx.clone());
            Box::pin(async move {
                asked.notify_one();
                release.notified().await;
                // Right after the restart: a click, decided in the store as the bot does.
                match store
                    .decide_approval(&request.id, ApprovalStatus::Confirmed, Some("bob"))
                    .await
                {
                    Ok(Decided::Won(_)) => ApprovalOutcome::Confirmed { by: "bob".into() },
                    other => panic!("the click after the restart must win: {other:?}"),
                }
            })
        }))
    })
    .await;

    let waiting = {
        let agent = bot.agent.clone();
        tokio::spawn(async move { agent.run(&inbound("A", "append a line")).await })
    };
    asked.notified().await;
    proxy.restart(Duration::from_secs(3));
    let served = bot.agent.run(&inbound("B", "are you there?")).await;
    assert_eq!(
        served,
        RunOutcome::Replied("B is fine.".into()),
        "channel B is served once the database is back"
    );
    assert!(
        bot.events
            .notices("B")
            .iter()
            .any(|n| n.contains("state database is not answering")),
        "B was told why it waited: {:?}",
        bot.events.of("B")
    );
    release.notify_one();
    let a = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("A finishes")
        .expect("A's task");
    assert_eq!(a, RunOutcome::Replied("A appended.".into()));
    assert_eq!(lines_in_log(&bot.dir), 1, "A's call ran once");
    assert_eq!(
        db.audit_rows("log.txt").await.len(),
        1,
        "and was audited once"
    );
    let pending = bot.store.pending_approvals(None).await.expect("pending");
    assert!(pending.is_empty(), "nothing left pending: {pending:?}");
}

// ---------------------------------------------------------------------------------------------
// d. An outage longer than the retry window.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_outage_longer_than_the_window_is_told_runs_nothing_and_the_next_message_works() {
    let db = postgres_or_skip!();
    let proxy = PgProxy::start(&db.schema.admin_url).await;
    let marker = format!("marker-d-{}", random_suffix());
    let fake = FakeLlm::start(vec![echo("d1", &marker), fake_llm::text("Back.")]).await;
    let bot = bot(&db, &proxy, &fake, 1, |_| nobody()).await;
    proxy.go_down();

    let started = std::time::Instant::now();
    let outcome = bot.agent.run(&inbound("D", "echo")).await;

    assert!(
        matches!(outcome, RunOutcome::Stopped(StopReason::Store(_))),
        "{outcome:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the run gave up within its windows: {:?}",
        started.elapsed()
    );
    let errors = bot.events.errors("D");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("state database is unreachable") && e.contains("retry_window_secs")),
        "the channel is told what happened: {errors:?}"
    );
    assert!(
        fake.requests().await.is_empty(),
        "the model was not even asked"
    );
    assert_eq!(bot.events.results("D"), 0, "nothing ran");

    proxy.come_up();
    let next = bot.agent.run(&inbound("D", "echo again")).await;
    assert_eq!(
        next,
        RunOutcome::Replied("Back.".into()),
        "the next message works"
    );
    assert_eq!(bot.events.results("D"), 1);
    assert_eq!(
        db.audit_rows(&marker).await,
        vec![("execute_command".to_owned(), "ok".to_owned(), None)],
        "the call that ran is audited"
    );
}

// ---------------------------------------------------------------------------------------------
// e. The database goes away right after a call ran, for longer than the window: the record
// is kept, no other tool runs until it is written, and it is written once the store is back.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_audit_record_outliving_the_window_is_kept_and_blocks_further_calls_until_written() {
    let db = postgres_or_skip!();
    let proxy = Arc::new(PgProxy::start(&db.schema.admin_url).await);
    let first = format!("marker-e1-{}", random_suffix());
    let second = format!("marker-e2-{}", random_suffix());
    let fake = FakeLlm::start(vec![
        echo("e1", &first),
        echo("e2", &second),
        fake_llm::text("Done."),
    ])
    .await;
    let bot = bot(&db, &proxy, &fake, 1, |_| nobody()).await;
    let down = proxy.clone();
    *bot.events.hook.lock().expect("hook") = Some(Box::new(move |_, event| {
        // The first call has run; its audit write comes next.
        if matches!(event, AgentEvent::ToolResult { call_id, .. } if call_id == "e1") {
            down.go_down();
        }
    }));

    let outcome = bot.agent.run(&inbound("E", "echo twice")).await;

    assert_eq!(outcome, RunOutcome::Replied("Done.".into()));
    assert_eq!(bot.events.results("E"), 1, "only the first call ran");
    let refused = bot.events.of("E").into_iter().find_map(|e| match e {
        AgentEvent::CallNotRun {
            call_id, reason, ..
        } if call_id == "e2" => Some(reason),
        _ => None,
    });
    assert!(
        refused
            .as_deref()
            .is_some_and(|r| r.contains("earlier audit records could not be written")),
        "the second call did not run while the first one's record was unwritten: {refused:?}"
    );
    assert!(
        bot.events
            .notices("E")
            .iter()
            .any(|n| n.contains("audit record of `execute_command` could not be written yet")),
        "the channel was told: {:?}",
        bot.events.notices("E")
    );
    assert_eq!(
        bot.agent.unwritten_audit.lock().await.len(),
        2,
        "both records are kept in memory"
    );
    assert!(db.audit_rows(&first).await.is_empty());

    proxy.come_up();
    assert_eq!(bot.agent.flush_audit().await.expect("the store is back"), 2);
    assert_eq!(
        db.audit_rows(&first).await,
        vec![("execute_command".to_owned(), "ok".to_owned(), None)],
        "the call that ran during the outage is audited"
    );
    assert_eq!(
        db.audit_rows(&second).await,
        vec![("execute_command".to_owned(), "not_run".to_owned(), None)],
        "and so is the call that was refused"
    );
    assert_eq!(bot.agent.unwritten_audit.lock().await.len(), 0);
}

// ---------------------------------------------------------------------------------------------
// f. The restart cuts the approval's insert: the retry meets its own row and goes on.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_insert_cut_by_a_restart_is_recorded_once_and_still_asked() {
    let db = postgres_or_skip!();
    let proxy = PgProxy::start(&db.schema.admin_url).await;
    let marker = format!("marker-f-{}", random_suffix());
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[(
            "f1",
            "file_operations",
            json!({"operation": "append", "path": "log.txt", "content": format!("{marker}\n")}),
        )]),
        fake_llm::text("Appended."),
    ])
    .await;
    let bot = bot(&db, &proxy, &fake, 30, |_| {
        Person(Box::new(|_| {
            Box::pin(async { ApprovalOutcome::Confirmed { by: "alice".into() } })
        }))
    })
    .await;
    // The approval's insert is the first statement that carries the arguments.
    proxy.cut_after(marker.as_bytes(), Duration::from_secs(2));

    let outcome = bot.agent.run(&inbound("F", "append")).await;

    assert_eq!(outcome, RunOutcome::Replied("Appended.".into()));
    assert_eq!(proxy.cuts(), 1, "the restart hit the approval's insert");
    let asked = bot.events.of("F").into_iter().find_map(|e| match e {
        AgentEvent::ApprovalRequested { approval_id, .. } => Some(approval_id),
        _ => None,
    });
    let id = asked.expect("the person was asked: the retried insert counted as recorded");
    assert_eq!(
        db.approval_rows(&id).await,
        vec![("confirmed".to_owned(), Some("alice".to_owned()))],
        "one approval row"
    );
    assert_eq!(lines_in_log(&bot.dir), 1, "the call ran once");
    assert_eq!(
        db.audit_rows(&marker).await,
        vec![("file_operations".to_owned(), "ok".to_owned(), Some(id))],
    );
}

// ---------------------------------------------------------------------------------------------
// End to end: the real bot against the fake Discord; the database restarts as the person
// clicks Confirm.

mod discord_end_to_end {
    use super::*;
    use support::fake_discord::{FakeDiscord, GuildSpec, UserSpec, WAIT, perms};

    const GUILD: u64 = 2_100_000_000_000_000_000;
    const CHANNEL: u64 = 2_100_000_000_000_000_100;
    const APPROVER_ROLE: u64 = 2_100_000_000_000_000_900;

    fn alice() -> UserSpec {
        UserSpec::new(3_100_000_000_000_000_001, "alice")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_click_during_a_restart_is_acknowledged_then_recorded_and_the_call_runs_once() {
        let db = postgres_or_skip!();
        let proxy = PgProxy::start(&db.schema.admin_url).await;
        let discord = FakeDiscord::start(vec![
            GuildSpec::new(GUILD, "team")
                .text_channel(CHANNEL, "agent")
                .role(APPROVER_ROLE, "approvers", perms::DEFAULT),
        ])
        .await;
        let llm = FakeLlm::start(vec![append_line("c1"), fake_llm::text("Appended.")]).await;
        let workspace = tempfile::tempdir().expect("tempdir");
        let mut settings = Settings::default();
        settings.discord.token = Some("fake-token".to_owned().into());
        settings.discord.api_base_url = Some(discord.base_url());
        settings.discord.guild_id = Some(GUILD);
        settings.discord.channels = vec![CHANNEL];
        settings.discord.approver_roles = vec![APPROVER_ROLE];
        settings.llm.base_url = llm.base_url();
        settings.llm.retry_base_delay_ms = 10;
        settings.tools.workspace = workspace.path().to_path_buf();
        settings.store.url = db.store_url(&proxy);
        let store: Arc<dyn Store> = Arc::new(
            riskgate::app::open_store(&settings)
                .await
                .expect("the store opens through the proxy"),
        );
        let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
        let bot = riskgate::discord::Bot::build(&settings, model, store.clone())
            .await
            .expect("bot");
        let stop = bot.shutdown_token();
        let running = tokio::spawn(bot.run());
        discord
            .wait_for_request(|r| r.method == "PUT" && r.path.contains("/commands"), WAIT)
            .await;

        discord
            .message_create(CHANNEL, &alice(), "append a line to log.txt", &[])
            .await;
        let path = format!("/api/v10/channels/{CHANNEL}/messages");
        discord
            .wait_for_request(
                |r| r.method == "POST" && r.path == path && r.at("/components").is_array(),
                WAIT,
            )
            .await;
        let shown = discord
            .messages_in(CHANNEL)
            .into_iter()
            .rev()
            .find(|m| m["components"].as_array().is_some_and(|c| !c.is_empty()))
            .expect("the approval message");
        let message = support::fake_discord::id_of(&shown["id"]);
        let custom_id = shown["components"][0]["components"][0]["custom_id"]
            .as_str()
            .expect("custom id")
            .to_owned();
        let approval = custom_id
            .strip_prefix("riskgate:confirm:")
            .expect("the confirm button")
            .to_owned();

        // The database restarts; the click comes while it is down.
        proxy.restart(Duration::from_secs(4));
        discord.component_click(message, &custom_id, &alice()).await;

        let acknowledged = discord
            .wait_for_request(
                |r| r.path.ends_with("/callback") && r.at("/type") == &json!(6),
                WAIT,
            )
            .await;
        assert_eq!(
            acknowledged.status, 204,
            "the click is acknowledged within Discord's three seconds"
        );
        let edited = discord
            .wait_for_request(
                |r| {
                    r.method == "PATCH"
                        && r.path == format!("{path}/{message}")
                        && r.at("/content")
                            .as_str()
                            .is_some_and(|c| c.contains("Confirmed by"))
                },
                Duration::from_secs(30),
            )
            .await;
        assert_eq!(
            edited.at("/components"),
            &json!([]),
            "the buttons are removed"
        );
        discord
            .wait_for_request(
                |r| {
                    r.method == "POST"
                        && r.path == path
                        && r.at("/content").as_str() == Some("Appended.")
                },
                Duration::from_secs(30),
            )
            .await;

        assert_eq!(lines_in_log(workspace.path()), 1, "the call ran once");
        assert_eq!(
            db.approval_rows(&approval).await,
            vec![("confirmed".to_owned(), Some(alice().id.to_string()))],
            "one decision, the person's"
        );
        assert_eq!(
            db.audit_rows("log.txt").await,
            vec![(
                "file_operations".to_owned(),
                "ok".to_owned(),
                Some(approval.clone())
            )],
            "audited once"
        );
        let late_callbacks = discord
            .requests()
            .iter()
            .filter(|r| r.path.ends_with("/callback") && r.status >= 400)
            .count();
        assert_eq!(late_callbacks, 0, "no interaction answer came too late");
        stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
    }
}
