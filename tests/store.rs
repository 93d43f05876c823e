//! The SQL store against real databases. Every scenario runs on SQLite (a temp file) and on
//! PostgreSQL when `RISKGATE_TEST_POSTGRES_URL` is set (a fresh schema per test, dropped at
//! the end); without it the PostgreSQL half says `skipped: ...` and passes.

/// libtest captures the print macros of passing tests, so a skip notice goes to the
/// process's stderr directly: a plain `cargo test` shows which tests were skipped.
macro_rules! say_skipped {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "{test}: {}", format_args!($($arg)*));
    }};
}

#[path = "support/pg_schema.rs"]
mod pg_schema;
#[path = "support/turns.rs"]
mod turns;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pg_schema::TestSchema;
use riskgate::config::Settings;
use riskgate::core::agent::{
    AgentEvent, CallOutcome, ChatMessage, ChatReply, ChatRequest, Inbound, ReplyToolCall,
    RunOutcome, arguments_hash,
};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRecord, ApprovalRequest, ApprovalStatus, ApprovalSurface, AuditRecord,
    ChannelSettings, ChatModel, Decided, EarlierRun, EventSink, ModelError, Store,
};
use riskgate::core::risk::{Assessment, ChannelMode, Decision, DecisionSource};
use riskgate::core::tools::{
    Approval, AssessContext, BoxFuture, RiskAssessor, RiskGate, Tool, ToolError, ToolOutput,
};
use riskgate::store::SqlStore;
use serde_json::{Map, Value, json};
use sqlx::{ConnectOptions, Connection};
use turns::turn;

const POSTGRES_ENV: &str = "RISKGATE_TEST_POSTGRES_URL";

// ---------------------------------------------------------------------------------------------
// A fresh database per test.

/// One test's database; the PostgreSQL schema is dropped when this is.
struct TestDb {
    url: String,
    backend: Backend,
}

enum Backend {
    Sqlite {
        _dir: tempfile::TempDir,
    },
    /// Dropped with the test.
    Postgres {
        _schema: TestSchema,
    },
}

impl TestDb {
    fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        // A file that does not exist yet: the store creates it.
        let url = format!("sqlite://{}", dir.path().join("state.db").display());
        Self {
            url,
            backend: Backend::Sqlite { _dir: dir },
        }
    }

    async fn postgres() -> Option<Self> {
        let schema = TestSchema::new().await?;
        Some(Self {
            url: schema.url.clone(),
            backend: Backend::Postgres { _schema: schema },
        })
    }

    async fn connect(&self) -> SqlStore {
        SqlStore::connect(&self.url).await.expect("connect")
    }

    /// The first column of the first row of `sql`, read outside the store.
    async fn scalar(&self, sql: &'static str) -> i64 {
        match &self.backend {
            Backend::Sqlite { .. } => {
                let mut conn = sqlx::SqliteConnection::connect(&self.url)
                    .await
                    .expect("sqlite");
                sqlx::query_scalar(sql)
                    .fetch_one(&mut conn)
                    .await
                    .expect("scalar")
            }
            Backend::Postgres { .. } => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.expect("pg");
                sqlx::query_scalar(sql)
                    .fetch_one(&mut conn)
                    .await
                    .expect("scalar")
            }
        }
    }

    /// Runs SQL on the test database outside the store (to set up a broken state).
    async fn execute(&self, sql: &'static str) {
        match &self.backend {
            Backend::Sqlite { .. } => {
                let options: sqlx::sqlite::SqliteConnectOptions =
                    self.url.parse().expect("sqlite url");
                let mut conn = options
                    .create_if_missing(true)
                    .connect()
                    .await
                    .expect("sqlite");
                sqlx::raw_sql(sql).execute(&mut conn).await.expect("sql");
                conn.close().await.expect("close");
            }
            Backend::Postgres { .. } => {
                let mut conn = sqlx::PgConnection::connect(&self.url).await.expect("pg");
                sqlx::raw_sql(sql).execute(&mut conn).await.expect("sql");
                conn.close().await.expect("close");
            }
        }
    }
}

/// Each scenario as a test on SQLite and one on PostgreSQL (skipped without the URL).
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    super::$name(super::TestDb::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $name() {
                    match super::TestDb::postgres().await {
                        Some(db) => super::$name(db).await,
                        None => say_skipped!("skipped: {} not set", super::POSTGRES_ENV),
                    }
                }
            )*
        }
    };
}

on_both_backends!(
    a_hundred_racers_decide_an_approval_exactly_once,
    after_a_restart_approvals_of_dead_runs_are_abandoned_and_live_ones_kept,
    history_survives_a_restart_and_keeps_to_the_budget,
    clear_forgets_the_conversation_but_not_the_audit_log,
    prune_history_drops_old_messages_only,
    the_real_loop_audits_auto_confirmed_cancelled_expired_and_denied_calls,
    expire_overdue_marks_only_overdue_pending_approvals,
    approvals_round_trip_every_field,
    channel_settings_round_trip,
    migrations_apply_twice,
    a_failed_migration_says_why,
    concurrent_writes_land_exactly_when_they_say_so,
    a_long_turn_is_saved_whole_and_in_order,
    turns_saved_at_once_in_one_channel_stay_whole,
    a_refused_write_fails_alone_and_its_batch_lands,
    concurrent_settings_reads_each_get_their_own_channel,
    channel_rules_are_kept_listed_while_active_and_revoked_once,
    a_cancel_reason_and_an_audit_note_round_trip,
    a_run_is_continued_by_exactly_one_claimant,
    a_confirmed_call_that_ran_is_found_by_its_channel_tool_and_arguments,
);

// ---------------------------------------------------------------------------------------------
// Helpers.

/// Whole milliseconds, as the store keeps them.
fn ms(at: SystemTime) -> SystemTime {
    let millis = at
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_millis();
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).expect("millis"))
}

fn approval(id: &str, run_id: &str, channel: &str, expires_in: Duration) -> ApprovalRecord {
    let now = ms(SystemTime::now());
    let mut arguments = Map::new();
    arguments.insert("query".into(), json!("DELETE FROM orders WHERE id = 7"));
    arguments.insert(
        "limits".into(),
        json!({"rows": 10, "nested": [1, 2.5, null]}),
    );
    ApprovalRecord {
        id: id.into(),
        run_id: run_id.into(),
        channel: channel.into(),
        requester: "alice".into(),
        tool: "execute_sql".into(),
        arguments_hash: arguments_hash(&arguments),
        arguments,
        source: "destructive_floor".into(),
        reason: "DELETE changes data".into(),
        status: ApprovalStatus::Pending,
        decided_by: None,
        decided_at: None,
        created_at: now,
        expires_at: now + expires_in,
        message_ref: None,
        note: None,
        resume: None,
    }
}

fn turn_size(n: usize, size: usize) -> usize {
    turn(n, size).iter().map(ChatMessage::size).sum()
}

fn audit(channel: &str, n: u64) -> AuditRecord {
    AuditRecord {
        at: 1_700_000_000 + n,
        run_id: format!("run{n}"),
        channel: channel.into(),
        user: "alice".into(),
        tool: "execute_sql".into(),
        arguments_summary: r#"{"query":"SELECT 1"}"#.into(),
        decision: Decision::Auto,
        source: DecisionSource::Whitelist,
        reason: "a query".into(),
        outcome: CallOutcome::Ok,
        approval_id: None,
        duration_ms: 12,
        output_bytes: 34,
        note: None,
        result: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

async fn a_hundred_racers_decide_an_approval_exactly_once(db: TestDb) {
    let store = Arc::new(db.connect().await);
    store.start_run("run1", "c1", "test").await.expect("run");
    store
        .create_approval(&approval("a1", "run1", "c1", Duration::from_secs(600)))
        .await
        .expect("create");

    let start = Arc::new(tokio::sync::Barrier::new(100));
    let racers: Vec<_> = (0..100)
        .map(|i| {
            let store = store.clone();
            let start = start.clone();
            tokio::spawn(async move {
                let (status, by) = if i % 2 == 0 {
                    (ApprovalStatus::Confirmed, format!("confirmer{i}"))
                } else {
                    (ApprovalStatus::Cancelled, format!("canceller{i}"))
                };
                start.wait().await;
                let decided = store
                    .decide_approval("a1", status, Some(&by))
                    .await
                    .expect("decide");
                (status, by, decided)
            })
        })
        .collect();
    let mut won = Vec::new();
    let mut lost = Vec::new();
    for racer in racers {
        let (status, by, decided) = racer.await.expect("racer");
        match decided {
            Decided::Won(record) => won.push((status, by, record)),
            Decided::Lost(record) => lost.push(record),
            Decided::Missing => panic!("the approval went missing"),
        }
    }
    assert_eq!(won.len(), 1, "exactly one winner");
    assert_eq!(lost.len(), 99);
    let (status, by, record) = &won[0];
    assert_eq!(record.status, *status);
    assert_eq!(record.decided_by.as_deref(), Some(by.as_str()));
    assert!(record.decided_at.is_some());
    // Every loser saw the winner's decision, and so does a fresh read.
    assert!(lost.iter().all(|r| r == record), "losers see the winner");
    let stored = store.approval("a1").await.expect("read").expect("exists");
    assert_eq!(&stored, record);
}

/// The run that asked and a resumed copy both claim a decided approval's run before they act
/// on it: one claimant wins, even when many race, and its retry (first answer lost) wins
/// again.
async fn a_run_is_continued_by_exactly_one_claimant(db: TestDb) {
    let store = Arc::new(db.connect().await);
    store.start_run("run1", "c1", "test").await.expect("run");
    store
        .create_approval(&approval("a1", "run1", "c1", Duration::from_secs(600)))
        .await
        .expect("create");
    let start = Arc::new(tokio::sync::Barrier::new(50));
    let racers: Vec<_> = (0..50)
        .map(|i| {
            let (store, start) = (store.clone(), start.clone());
            tokio::spawn(async move {
                let claimant = format!("claimant{i}");
                start.wait().await;
                let won = store
                    .claim_continuation("a1", &claimant)
                    .await
                    .expect("claim");
                (claimant, won)
            })
        })
        .collect();
    let mut winners = Vec::new();
    for racer in racers {
        let (claimant, won) = racer.await.expect("racer");
        if won {
            winners.push(claimant);
        }
    }
    assert_eq!(winners.len(), 1, "exactly one goes on: {winners:?}");
    let winner = &winners[0];
    assert!(store.claim_continuation("a1", winner).await.expect("retry"));
    assert!(!store.claim_continuation("a1", "late").await.expect("late"));
    assert!(
        !store
            .claim_continuation("nope", "x")
            .await
            .expect("missing"),
        "no approval, no claim"
    );
    // The claim leaves the decision alone.
    let stored = store.approval("a1").await.expect("read").expect("exists");
    assert_eq!(stored.status, ApprovalStatus::Pending);
}

/// Writes that arrive together share a commit on SQLite (group commit); one that fails must
/// fail alone. 200 concurrent approvals, every fifth id a duplicate of another: each insert
/// that said Ok is stored, each that said Err is not, and the audit records and turns
/// written in between all land.
async fn concurrent_writes_land_exactly_when_they_say_so(db: TestDb) {
    let store = Arc::new(db.connect().await);
    store.start_run("run1", "c1", "test").await.expect("run");
    let start = Arc::new(tokio::sync::Barrier::new(200));
    let writers: Vec<_> = (0..200u64)
        .map(|i| {
            let store = store.clone();
            let start = start.clone();
            tokio::spawn(async move {
                // Ids 0..160, the last 40 writers reusing the ids of the first 40.
                let id = format!("g{}", if i >= 160 { i - 160 } else { i });
                let mut record = approval(&id, "run1", "c1", Duration::from_secs(600));
                record.requester = format!("writer{i}");
                start.wait().await;
                let created = store.create_approval(&record).await;
                store.record_audit(&audit("c1", i)).await.expect("audit");
                store
                    .append("c1", &turn(i as usize, 10))
                    .await
                    .expect("append");
                (id, record.requester, created.is_ok())
            })
        })
        .collect();
    let mut said_ok = std::collections::HashMap::new();
    let mut refused = 0;
    for writer in writers {
        let (id, requester, ok) = writer.await.expect("writer");
        if ok {
            assert!(
                said_ok.insert(id.clone(), requester).is_none(),
                "two inserts of {id} both said Ok"
            );
        } else {
            refused += 1;
        }
    }
    assert_eq!(said_ok.len(), 160, "one insert of each id succeeds");
    assert_eq!(refused, 40);
    for (id, requester) in &said_ok {
        let stored = store.approval(id).await.expect("read").expect("stored");
        assert_eq!(
            &stored.requester, requester,
            "{id} holds the write that said Ok"
        );
    }
    assert_eq!(
        store.recent_audit("c1", 1000).await.expect("audit").len(),
        200
    );
    let history = store.load_history("c1", usize::MAX).await.expect("history");
    assert_eq!(history.len(), 200 * 4, "every turn is kept whole");
}

/// A turn longer than one multi-row INSERT (SQLite saves it in chunks of 500 rows inside
/// one atomic write) comes back whole and in order.
async fn a_long_turn_is_saved_whole_and_in_order(db: TestDb) {
    let store = db.connect().await;
    let long: Vec<ChatMessage> = (0..900)
        .map(|i| ChatMessage::user(Some("alice"), format!("message {i}")))
        .collect();
    store.append("c1", &turn(0, 10)).await.expect("short");
    store.append("c1", &long).await.expect("long");
    let history = store.load_history("c1", usize::MAX).await.expect("history");
    assert_eq!(history.len(), 4 + 900);
    assert_eq!(&history[..4], &turn(0, 10)[..]);
    assert_eq!(&history[4..], &long[..]);
}

/// Runs of one channel save their turns at the same moment, round after round, so batches
/// carrying the same channel's messages are out on the store's connections at once. Each
/// turn's messages must stay together in the history (a tool result apart from its call
/// is a conversation no model server takes): ids drawn from one sequence by two inserts at
/// once would interleave.
async fn turns_saved_at_once_in_one_channel_stay_whole(db: TestDb) {
    let store = Arc::new(db.connect().await);
    if let Backend::Postgres { .. } = &db.backend {
        // Each row takes a moment to insert, so two batches out at once overlap for sure.
        db.execute(
            "CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
             PERFORM pg_sleep(0.002); RETURN NEW; END $$; \
             CREATE TRIGGER slow_insert BEFORE INSERT ON messages FOR EACH ROW \
             EXECUTE FUNCTION slow_insert();",
        )
        .await;
    }
    let turn_of = |n: usize| -> Vec<ChatMessage> {
        (0..24)
            .map(|i| ChatMessage::user(Some("alice"), format!("turn {n} message {i}")))
            .collect()
    };
    // 5 rounds of 8 turns of 24 messages: 960, under what one history read returns.
    for round in 0..5 {
        let start = Arc::new(tokio::sync::Barrier::new(8));
        let savers: Vec<_> = (0..8)
            .map(|k| {
                let store = store.clone();
                let start = start.clone();
                let messages = turn_of(round * 8 + k);
                tokio::spawn(async move {
                    start.wait().await;
                    // One after another, each while the one before is still out.
                    tokio::time::sleep(Duration::from_millis(5 * k as u64)).await;
                    store.append("c1", &messages).await
                })
            })
            .collect();
        for saver in savers {
            saver.await.expect("saver").expect("the turn lands");
        }
    }
    let history = store.load_history("c1", usize::MAX).await.expect("history");
    assert_eq!(history.len(), 5 * 8 * 24);
    for chunk in history.chunks(24) {
        let n: usize = chunk[0]
            .content
            .as_deref()
            .and_then(|text| text.strip_prefix("turn "))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a turn starts with its first message");
        assert_eq!(chunk, &turn_of(n)[..], "turn {n} is whole and in order");
    }
}

/// The run's writes travel in batches; when the database refuses one write of a batch, that
/// write fails and every other one lands. A trigger refuses audit records of the tool
/// `refused`; 120 writers start at once, so their writes share batches.
async fn a_refused_write_fails_alone_and_its_batch_lands(db: TestDb) {
    let store = Arc::new(db.connect().await);
    match &db.backend {
        Backend::Sqlite { .. } => {
            db.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON audit WHEN NEW.tool = 'refused' \
                 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
            )
            .await;
        }
        Backend::Postgres { .. } => {
            db.execute(
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF NEW.tool = 'refused' THEN RAISE EXCEPTION 'refused by the test'; END IF; \
                 RETURN NEW; END $$; \
                 CREATE TRIGGER refuse BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION refuse();",
            )
            .await;
        }
    }
    let start = Arc::new(tokio::sync::Barrier::new(120));
    let writers: Vec<_> = (0..120u64)
        .map(|i| {
            let store = store.clone();
            let start = start.clone();
            tokio::spawn(async move {
                let channel = format!("c{}", i % 7);
                let run = format!("run{i}");
                let mut record = audit(&channel, i);
                record.run_id = run.clone();
                if i % 10 == 3 {
                    record.tool = "refused".into();
                }
                let messages = turn(i as usize, 10);
                start.wait().await;
                let (started, audited, saved) = tokio::join!(
                    store.start_run(&run, &channel, "test"),
                    store.record_audit(&record),
                    store.append(&channel, &messages),
                );
                started.expect("the run's start lands");
                saved.expect("the turn lands");
                store.finish_run(&run).await.expect("the run's end lands");
                (record.tool, audited)
            })
        })
        .collect();
    let mut landed = 0;
    for writer in writers {
        let (tool, audited) = writer.await.expect("writer");
        if tool == "refused" {
            let error = audited.expect_err("the refused record fails");
            assert!(
                error.to_string().contains("refused by the test"),
                "the write's own error: {error}"
            );
        } else {
            audited.expect("every other record lands");
            landed += 1;
        }
    }
    assert_eq!(landed, 108);
    assert_eq!(db.scalar("SELECT COUNT(*) FROM audit").await, 108);
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM audit WHERE tool = 'refused'")
            .await,
        0
    );
    assert_eq!(
        db.scalar("SELECT COUNT(*) FROM runs WHERE finished_at IS NOT NULL")
            .await,
        120,
        "every run started and finished"
    );
    assert_eq!(db.scalar("SELECT COUNT(*) FROM messages").await, 120 * 4);
    for c in 0..7 {
        let channel = format!("c{c}");
        let history = store
            .load_history(&channel, usize::MAX)
            .await
            .expect("history");
        // Each turn whole and in order, whatever batches carried them.
        assert_eq!(history.len(), (0..120).filter(|i| i % 7 == c).count() * 4);
        for turn_messages in history.chunks(4) {
            let n: usize = turn_messages[0]
                .content
                .as_deref()
                .and_then(|text| text.strip_prefix("question "))
                .and_then(|n| n.parse().ok())
                .expect("a turn starts with its question");
            assert_eq!(turn_messages, &turn(n, 10)[..]);
        }
    }
}

/// Many runs read their channel's settings at once: each reads its own channel's, or none.
async fn concurrent_settings_reads_each_get_their_own_channel(db: TestDb) {
    let store = Arc::new(db.connect().await);
    let settings = |i: usize| ChannelSettings {
        mode: if i.is_multiple_of(2) {
            ChannelMode::Strict
        } else {
            ChannelMode::Smart
        },
        profile: format!("profile{i}"),
    };
    for i in 0..40 {
        store
            .set_channel_settings(&format!("c{i}"), &settings(i), "alice")
            .await
            .expect("set");
    }
    let start = Arc::new(tokio::sync::Barrier::new(100));
    let readers: Vec<_> = (0..100usize)
        .map(|i| {
            let store = store.clone();
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                // Channels read twice at once get the same answer.
                let read = store.channel_settings(&format!("c{}", i % 60)).await;
                (i % 60, read.expect("read"))
            })
        })
        .collect();
    for reader in readers {
        let (c, read) = reader.await.expect("reader");
        let expected = (c < 40).then(|| settings(c));
        assert_eq!(read, expected, "channel c{c}");
    }
}

async fn after_a_restart_approvals_of_dead_runs_are_abandoned_and_live_ones_kept(db: TestDb) {
    let store = db.connect().await;
    store
        .start_run("dead", "c1", "old-process")
        .await
        .expect("run");
    store
        .create_approval(&approval("waiting", "dead", "c1", Duration::from_secs(600)))
        .await
        .expect("create");
    store
        .start_run("done", "c1", "old-process")
        .await
        .expect("run");
    store
        .create_approval(&approval(
            "leftover",
            "done",
            "c1",
            Duration::from_secs(600),
        ))
        .await
        .expect("create");
    store.finish_run("done").await.expect("finish");
    store
        .create_approval(&approval(
            "runless",
            "never-started",
            "c2",
            Duration::from_secs(600),
        ))
        .await
        .expect("create");
    // The process stops: the pool goes away with everything in it.
    drop(store);

    tokio::time::sleep(Duration::from_millis(20)).await;
    let stale_before = SystemTime::now();
    tokio::time::sleep(Duration::from_millis(20)).await;

    let store = db.connect().await;
    // Another instance's run, alive: its heartbeat is newer than `stale_before`.
    store
        .start_run("live", "c1", "other-process")
        .await
        .expect("run");
    store
        .create_approval(&approval("fresh", "live", "c1", Duration::from_secs(600)))
        .await
        .expect("create");

    let abandoned = store.abandon_orphaned(stale_before).await.expect("abandon");
    let mut ids: Vec<&str> = abandoned.iter().map(|a| a.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["leftover", "runless", "waiting"]);
    assert!(
        abandoned
            .iter()
            .all(|a| a.status == ApprovalStatus::Abandoned
                && a.decided_at.is_some()
                && a.decided_by.is_none())
    );

    // Its buttons are stale: a click loses against the abandonment.
    match store
        .decide_approval("waiting", ApprovalStatus::Confirmed, Some("bob"))
        .await
        .expect("decide")
    {
        Decided::Lost(record) => {
            assert_eq!(record.status, ApprovalStatus::Abandoned);
            assert_eq!(record.decided_by, None);
        }
        other => panic!("a click on an abandoned approval must lose, got {other:?}"),
    }
    let pending = store.pending_approvals(None).await.expect("pending");
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, "fresh");
    // Running it again changes nothing.
    assert!(
        store
            .abandon_orphaned(stale_before)
            .await
            .expect("again")
            .is_empty()
    );
    // A heartbeat keeps a run alive past a later cut-off; finishing it orphans its approval.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let later = SystemTime::now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    store.heartbeat_run("live").await.expect("heartbeat");
    assert!(
        store
            .abandon_orphaned(later)
            .await
            .expect("abandon")
            .is_empty()
    );
    store.finish_run("live").await.expect("finish");
    let abandoned = store.abandon_orphaned(later).await.expect("abandon");
    assert_eq!(abandoned.len(), 1);
    assert_eq!(abandoned[0].id, "fresh");
}

async fn history_survives_a_restart_and_keeps_to_the_budget(db: TestDb) {
    let store = db.connect().await;
    for n in 0..5 {
        store.append("c1", &turn(n, 100)).await.expect("append");
    }
    store.append("other", &turn(99, 10)).await.expect("append");
    drop(store);

    let store = db.connect().await;
    let everything = store.load_history("c1", usize::MAX).await.expect("load");
    let expected: Vec<ChatMessage> = (0..5).flat_map(|n| turn(n, 100)).collect();
    assert_eq!(everything, expected, "every message, in order, as written");

    // Room for two turns: the oldest three go, whole.
    let budget = turn_size(3, 100) + turn_size(4, 100) + 5;
    let kept = store.load_history("c1", budget).await.expect("load");
    assert_eq!(kept, expected[12..].to_vec());
    assert_eq!(kept[0].content.as_deref(), Some("question 3"));
    // The newest turn is kept even when it alone is over the budget.
    let kept = store.load_history("c1", 1).await.expect("load");
    assert_eq!(kept, turn(4, 100));
    assert!(
        store
            .load_history("nobody", 1000)
            .await
            .expect("load")
            .is_empty()
    );

    // Many loads that stop reading early leave every pooled connection usable.
    for _ in 0..40 {
        assert_eq!(store.load_history("c1", 1).await.expect("load").len(), 4);
    }
    store.append("c1", &turn(5, 1)).await.expect("append");
    assert_eq!(
        store
            .load_history("c1", usize::MAX)
            .await
            .expect("load")
            .len(),
        24
    );
}

async fn clear_forgets_the_conversation_but_not_the_audit_log(db: TestDb) {
    let store = db.connect().await;
    store.append("c1", &turn(0, 10)).await.expect("append");
    store.append("c2", &turn(1, 10)).await.expect("append");
    store.record_audit(&audit("c1", 1)).await.expect("audit");
    store.clear("c1").await.expect("clear");
    assert!(
        store
            .load_history("c1", 10_000)
            .await
            .expect("load")
            .is_empty()
    );
    assert_eq!(
        store.load_history("c2", 10_000).await.expect("load").len(),
        4
    );
    assert_eq!(
        store.recent_audit("c1", 10).await.expect("audit"),
        vec![audit("c1", 1)]
    );
}

async fn prune_history_drops_old_messages_only(db: TestDb) {
    let store = db.connect().await;
    store.append("c1", &turn(0, 10)).await.expect("append");
    store.record_audit(&audit("c1", 1)).await.expect("audit");
    tokio::time::sleep(Duration::from_millis(20)).await;
    let cut = SystemTime::now();
    tokio::time::sleep(Duration::from_millis(20)).await;
    store.append("c1", &turn(1, 10)).await.expect("append");

    assert_eq!(store.prune_history(cut).await.expect("prune"), 4);
    assert_eq!(
        store.load_history("c1", 10_000).await.expect("load"),
        turn(1, 10)
    );
    assert_eq!(store.recent_audit("c1", 10).await.expect("audit").len(), 1);

    // Through the setting: 0 keeps everything; 1 day drops what is older than a day.
    let mut settings = Settings::default().store;
    let a_week_later = SystemTime::now() + Duration::from_secs(7 * 86_400);
    assert_eq!(
        riskgate::store::apply_retention(&store, &settings, a_week_later)
            .await
            .expect("retention"),
        0
    );
    settings.history_retention_days = 1;
    assert_eq!(
        riskgate::store::apply_retention(&store, &settings, SystemTime::now())
            .await
            .expect("retention"),
        0
    );
    assert_eq!(
        riskgate::store::apply_retention(&store, &settings, a_week_later)
            .await
            .expect("retention"),
        4
    );
    assert!(
        store
            .load_history("c1", 10_000)
            .await
            .expect("load")
            .is_empty()
    );
}

async fn expire_overdue_marks_only_overdue_pending_approvals(db: TestDb) {
    let store = db.connect().await;
    store.start_run("run1", "c1", "test").await.expect("run");
    let overdue = approval("overdue", "run1", "c1", Duration::ZERO);
    let mut older = approval("older", "run1", "c1", Duration::ZERO);
    older.created_at -= Duration::from_secs(60);
    older.expires_at = older.created_at;
    let waiting = approval("waiting", "run1", "c1", Duration::from_secs(600));
    let decided = approval("decided", "run1", "c1", Duration::ZERO);
    for a in [&overdue, &older, &waiting, &decided] {
        store.create_approval(a).await.expect("create");
    }
    store
        .decide_approval("decided", ApprovalStatus::Confirmed, Some("bob"))
        .await
        .expect("decide");

    let now = ms(SystemTime::now() + Duration::from_secs(1));
    let expired = store.expire_overdue(now).await.expect("expire");
    let ids: Vec<&str> = expired.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(
        ids,
        ["older", "overdue"],
        "only overdue pending ones, oldest first"
    );
    for record in &expired {
        assert_eq!(record.status, ApprovalStatus::Expired);
        assert_eq!(record.decided_at, Some(now));
        assert_eq!(record.decided_by, None);
    }
    let status = |id: &'static str| {
        let store = &store;
        async move {
            store
                .approval(id)
                .await
                .expect("read")
                .expect("exists")
                .status
        }
    };
    assert_eq!(status("waiting").await, ApprovalStatus::Pending);
    assert_eq!(status("decided").await, ApprovalStatus::Confirmed);
    assert_eq!(status("overdue").await, ApprovalStatus::Expired);
    assert!(store.expire_overdue(now).await.expect("again").is_empty());
}

async fn approvals_round_trip_every_field(db: TestDb) {
    let store = db.connect().await;
    let first = approval("first", "run1", "c1", Duration::from_secs(600));
    let mut second = approval("second", "run1", "c2", Duration::from_secs(600));
    second.created_at += Duration::from_millis(5);
    let mut third = approval("third", "run1", "c1", Duration::from_secs(600));
    third.created_at += Duration::from_millis(10);
    third
        .arguments
        .insert("unicode".into(), json!("naïve ✓ 'quoted' \"too\""));
    third.arguments_hash = arguments_hash(&third.arguments);
    for a in [&third, &first, &second] {
        store.create_approval(a).await.expect("create");
    }
    assert_eq!(
        store.approval("third").await.expect("read"),
        Some(third.clone())
    );
    assert_eq!(store.approval("nope").await.expect("read"), None);
    assert!(
        store.create_approval(&first).await.is_err(),
        "an id is recorded once"
    );

    store
        .set_approval_message("first", "discord:123/456")
        .await
        .expect("message");
    let stored = store
        .approval("first")
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(stored.message_ref.as_deref(), Some("discord:123/456"));
    assert_eq!(
        arguments_hash(&stored.arguments),
        stored.arguments_hash,
        "the stored arguments still match their hash"
    );

    let ids = |records: Vec<ApprovalRecord>| -> Vec<String> {
        records.into_iter().map(|r| r.id).collect()
    };
    assert_eq!(
        ids(store.pending_approvals(None).await.expect("pending")),
        ["first", "second", "third"]
    );
    assert_eq!(
        ids(store.pending_approvals(Some("c1")).await.expect("pending")),
        ["first", "third"]
    );

    assert_eq!(
        store
            .decide_approval("nope", ApprovalStatus::Confirmed, Some("bob"))
            .await
            .expect("decide"),
        Decided::Missing
    );
    assert!(
        store
            .decide_approval("first", ApprovalStatus::Pending, None)
            .await
            .is_err(),
        "deciding back to pending is refused"
    );
    let before = ms(SystemTime::now());
    let Decided::Won(won) = store
        .decide_approval("first", ApprovalStatus::Cancelled, Some("carol"))
        .await
        .expect("decide")
    else {
        panic!("the first decision wins");
    };
    assert_eq!(won.status, ApprovalStatus::Cancelled);
    assert_eq!(won.decided_by.as_deref(), Some("carol"));
    assert!(won.decided_at.expect("decided_at") >= before);
    assert_eq!(won.message_ref.as_deref(), Some("discord:123/456"));
    assert_eq!(
        Decided::Won(won.clone()),
        Decided::Won(ApprovalRecord {
            status: ApprovalStatus::Cancelled,
            decided_by: Some("carol".into()),
            decided_at: won.decided_at,
            ..stored
        })
    );
    assert_eq!(
        ids(store.pending_approvals(Some("c1")).await.expect("pending")),
        ["third"]
    );
    // One the chat refused to show is settled as such (a status the schema accepts).
    let Decided::Won(undeliverable) = store
        .decide_approval("third", ApprovalStatus::Undeliverable, None)
        .await
        .expect("decide")
    else {
        panic!("an undeliverable approval is settled");
    };
    assert_eq!(
        store.approval("third").await.expect("read"),
        Some(undeliverable)
    );
    assert!(
        store
            .pending_approvals(Some("c1"))
            .await
            .expect("pending")
            .is_empty()
    );
}

async fn channel_settings_round_trip(db: TestDb) {
    let store = db.connect().await;
    assert_eq!(store.channel_settings("c1").await.expect("read"), None);
    let strict = ChannelSettings {
        mode: ChannelMode::Strict,
        profile: "sql".into(),
    };
    store
        .set_channel_settings("c1", &strict, "alice")
        .await
        .expect("set");
    assert_eq!(
        store.channel_settings("c1").await.expect("read"),
        Some(strict)
    );
    let smart = ChannelSettings {
        mode: ChannelMode::Smart,
        profile: "ops".into(),
    };
    store
        .set_channel_settings("c1", &smart, "bob")
        .await
        .expect("set again");
    drop(store);
    let store = db.connect().await;
    assert_eq!(
        store.channel_settings("c1").await.expect("read"),
        Some(smart)
    );
    assert_eq!(store.channel_settings("c2").await.expect("read"), None);
}

async fn migrations_apply_twice(db: TestDb) {
    let store = db.connect().await;
    store.append("c1", &turn(0, 10)).await.expect("append");
    store.close().await;
    // The second start finds every migration applied and changes nothing.
    let store = db.connect().await;
    assert_eq!(
        store.load_history("c1", 10_000).await.expect("load").len(),
        4
    );
    store.close().await;
    let store = db.connect().await;
    assert_eq!(
        store.load_history("c1", 10_000).await.expect("load").len(),
        4
    );
    // Each migration recorded once, successfully.
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/sqlite"))
        .expect("migrations folder")
        .count();
    assert_eq!(
        db.scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
            .await,
        i64::try_from(migrations).expect("count")
    );
    if let Backend::Postgres { .. } = db.backend {
        // The tables live in this test's schema, not in `public`: tests do not share state.
        assert_eq!(
            db.scalar(
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name IN \
                 ('messages', 'channel_settings', 'runs', 'approvals', 'audit')"
            )
            .await,
            5
        );
        assert_eq!(
            db.scalar("SELECT count(*) FROM (SELECT 1) AS one WHERE current_schema() = 'public'")
                .await,
            0
        );
    }
}

async fn a_failed_migration_says_why(db: TestDb) {
    // Something else already owns a table the first migration creates.
    db.execute("CREATE TABLE messages (something_else TEXT)")
        .await;
    let error = SqlStore::connect(&db.url)
        .await
        .expect_err("the migration cannot apply")
        .to_string();
    assert!(error.contains("could not bring the state store"), "{error}");
    assert!(error.contains("migration"), "{error}");
    assert!(
        error.contains("already exists"),
        "the cause is shown: {error}"
    );
}

// ---------------------------------------------------------------------------------------------
// The real agent loop writing to the SQL store.

/// Replies from a script, one per model call, across runs.
struct ScriptedModel(Mutex<VecDeque<ChatReply>>);

impl ChatModel for ScriptedModel {
    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        let next = self.0.lock().expect("script").pop_front();
        Box::pin(async move { next.ok_or_else(|| ModelError::Rejected("script exhausted".into())) })
    }
}

/// Answers approvals from a script; `None` never answers (the approval expires).
struct ScriptedApprovals(Mutex<VecDeque<Option<ApprovalOutcome>>>);

impl ApprovalSurface for ScriptedApprovals {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        let next = self.0.lock().expect("script").pop_front().flatten();
        Box::pin(async move {
            match next {
                Some(outcome) => outcome,
                None => std::future::pending().await,
            }
        })
    }
}

struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _channel: &str, _event: &AgentEvent) {}
}

/// A tool that records what it runs: `safe` is whitelisted, anything else unknown.
#[derive(Default)]
struct Spy {
    runs: Mutex<Vec<Map<String, Value>>>,
}

impl RiskAssessor for Spy {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        match arguments.get("value").and_then(Value::as_str) {
            Some("safe") => Assessment::Safe("a safe spy call".into()),
            _ => Assessment::Unknown("an unknown spy call".into()),
        }
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
        _approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.runs.lock().expect("runs").push(arguments.clone());
        Box::pin(async move {
            Ok(ToolOutput {
                summary: "spied".into(),
                text: "spy ran".into(),
                chat: "spied".into(),
                attachment: None,
            })
        })
    }
}

fn call(id: &str, tool: &str, arguments: Value) -> ChatReply {
    ChatReply {
        content: None,
        tool_calls: vec![ReplyToolCall {
            id: Some(id.into()),
            name: tool.into(),
            arguments,
        }],
        finish_reason: Some("tool_calls".into()),
        usage: None,
    }
}

fn text(reply: &str) -> ChatReply {
    ChatReply {
        content: Some(reply.into()),
        ..ChatReply::default()
    }
}

async fn the_real_loop_audits_auto_confirmed_cancelled_expired_and_denied_calls(db: TestDb) {
    let store = db.connect().await;
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    settings.agent.approval_timeout_secs = 1;
    // One run per kind of call: a tool call, then a text reply.
    let script = vec![
        call("a", "spy", json!({"value": "safe"})),
        text("auto done"),
        call("b", "spy", json!({"value": "confirm me"})),
        text("confirmed done"),
        call("c", "spy", json!({"value": "cancel me"})),
        text("cancelled done"),
        call("d", "spy", json!({"value": "let me expire"})),
        text("expired done"),
        call(
            "e",
            "file_operations",
            json!({"operation": "read", "path": "/etc/passwd"}),
        ),
        text("denied done"),
    ];
    let approvals = ScriptedApprovals(Mutex::new(VecDeque::from([
        Some(ApprovalOutcome::Confirmed { by: "bob".into() }),
        Some(ApprovalOutcome::Cancelled {
            by: "carol".into(),
            reason: None,
        }),
        None,
    ])));
    let spy = Arc::new(Spy::default());
    let shared: Arc<dyn Store> = Arc::new(store.clone());
    let mut agent = riskgate::app::build_agent(
        &settings,
        Arc::new(ScriptedModel(Mutex::new(script.into()))),
        shared,
        Arc::new(approvals),
        Arc::new(NoEvents),
    )
    .expect("agent");
    let mut registry = riskgate::tools::builtin_registry(&settings);
    registry.register(spy.clone());
    agent.gate = RiskGate::new(registry, settings.risk.gate_policy());

    for expected in [
        "auto done",
        "confirmed done",
        "cancelled done",
        "expired done",
        "denied done",
    ] {
        let outcome = agent
            .run(&Inbound {
                channel: "ops".into(),
                author: "alice".into(),
                author_name: "alice".into(),
                text: format!("please: {expected}"),
            })
            .await;
        assert_eq!(outcome, RunOutcome::Replied(expected.into()));
    }

    let mut log = store.recent_audit("ops", 10).await.expect("audit");
    assert_eq!(log.len(), 5, "{log:#?}");
    log.reverse();
    let rows: Vec<(&str, &str, &str, &str, bool)> = log
        .iter()
        .map(|r| {
            (
                r.tool.as_str(),
                r.decision.as_str(),
                r.source.as_str(),
                r.outcome.as_str(),
                r.approval_id.is_some(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("spy", "auto", "whitelist", "ok", false),
            ("spy", "confirm", "default", "ok", true),
            ("spy", "confirm", "default", "cancelled", true),
            ("spy", "confirm", "default", "expired", true),
            ("file_operations", "deny", "policy", "denied", false),
        ]
    );
    for record in &log {
        assert_eq!(record.user, "alice");
        assert_eq!(record.channel, "ops");
        assert!(!record.reason.is_empty(), "every decision says why");
        assert!(!record.run_id.is_empty());
    }
    // The approvals behind them, as the store settled them.
    let settled = |i: usize| {
        let id = log[i].approval_id.clone().expect("approval id");
        let store = &store;
        async move { store.approval(&id).await.expect("read").expect("exists") }
    };
    let confirmed = settled(1).await;
    assert_eq!(
        (confirmed.status, confirmed.decided_by.as_deref()),
        (ApprovalStatus::Confirmed, Some("bob"))
    );
    assert_eq!(
        confirmed.arguments_hash,
        arguments_hash(&confirmed.arguments)
    );
    let cancelled = settled(2).await;
    assert_eq!(
        (cancelled.status, cancelled.decided_by.as_deref()),
        (ApprovalStatus::Cancelled, Some("carol"))
    );
    let expired = settled(3).await;
    assert_eq!(
        (expired.status, expired.decided_by.as_deref()),
        (ApprovalStatus::Expired, None)
    );
    // Only the auto and the confirmed call reached the tool.
    let runs = spy.runs.lock().expect("runs").clone();
    assert_eq!(
        runs.iter()
            .map(|a| a["value"].as_str().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["safe", "confirm me"]
    );
    // Every run finished, so nothing is left to abandon.
    assert!(
        store
            .abandon_orphaned(SystemTime::now())
            .await
            .expect("abandon")
            .is_empty()
    );
    // And the conversation of all five runs is there for the next one.
    let history = store
        .load_history("ops", usize::MAX)
        .await
        .expect("history");
    assert_eq!(
        history
            .iter()
            .filter(|m| m.name.as_deref() == Some("alice"))
            .count(),
        5
    );
}

// ---------------------------------------------------------------------------------------------
// Connecting.

#[tokio::test]
async fn a_broken_url_is_named_without_its_password_and_fails_fast() {
    // Nothing listens on port 1.
    let started = Instant::now();
    let error = SqlStore::connect("postgres://riskgate:hunter2-secret@127.0.0.1:1/state")
        .await
        .expect_err("nothing listens there")
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a refused connection is reported at once, not after a pool timeout"
    );
    assert!(!error.contains("hunter2-secret"), "{error}");
    assert!(
        error.contains("postgres://riskgate:redacted@127.0.0.1:1/state"),
        "{error}"
    );
    assert!(
        error.to_lowercase().contains("refused"),
        "the cause: {error}"
    );

    let error = SqlStore::connect("mysql://root:pw@localhost/state")
        .await
        .expect_err("not a state store backend")
        .to_string();
    assert!(
        error.contains("sqlite://") && !error.contains(":pw@"),
        "{error}"
    );

    let error = SqlStore::connect("sqlite:///nonexistent-folder-for-riskgate/state.db")
        .await
        .expect_err("the folder does not exist")
        .to_string();
    assert!(
        error.contains("/nonexistent-folder-for-riskgate/state.db")
            && error.contains("folder exists"),
        "names the file and what to check: {error}"
    );
}

/// Why the store probes one connection before building its pool: a sqlx 0.9 pool treats a
/// refused connection as "the server is starting", retries until `acquire_timeout`, and
/// then reports only `PoolTimedOut`, without the cause.
#[tokio::test]
async fn sqlx_pools_hide_a_refused_connection_behind_a_timeout() {
    let started = Instant::now();
    let error = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(Duration::from_millis(600))
        .connect("postgres://riskgate@127.0.0.1:1/state")
        .await
        .expect_err("nothing listens there");
    assert!(matches!(error, sqlx::Error::PoolTimedOut), "{error:?}");
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert!(!error.to_string().to_lowercase().contains("refused"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_in_memory_sqlite_store_keeps_its_state_and_decides_once() {
    let store = Arc::new(SqlStore::connect("sqlite::memory:").await.expect("memory"));
    store.append("c1", &turn(0, 10)).await.expect("append");
    store
        .create_approval(&approval("a1", "run1", "c1", Duration::from_secs(60)))
        .await
        .expect("create");
    let racers: Vec<_> = (0..20)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .decide_approval("a1", ApprovalStatus::Confirmed, Some(&format!("u{i}")))
                    .await
                    .expect("decide")
            })
        })
        .collect();
    let mut wins = 0;
    for racer in racers {
        if matches!(racer.await.expect("racer"), Decided::Won(_)) {
            wins += 1;
        }
    }
    assert_eq!(wins, 1);
    assert_eq!(
        store.load_history("c1", 10_000).await.expect("load").len(),
        4
    );
}

async fn channel_rules_are_kept_listed_while_active_and_revoked_once(db: TestDb) {
    use riskgate::core::rules::{ChannelRule, Similarity};
    let store = db.connect().await;
    let now = ms(SystemTime::now());
    let rule = |id: &str, channel: &str, lasts: Duration| ChannelRule {
        id: id.into(),
        channel: channel.into(),
        tool: "execute_sql".into(),
        similarity: Similarity::new(
            "`SELECT` on orders in database `demo`",
            &[
                ("kind", "SELECT".to_owned()),
                ("database", "demo".to_owned()),
                ("tables", "orders".to_owned()),
            ],
        ),
        created_by: "bob".into(),
        created_at: now,
        expires_at: now + lasts,
        approval_id: Some("a1".into()),
    };
    let kept = rule("r1", "c1", Duration::from_secs(3600));
    store.create_rule(&kept).await.expect("create");
    store
        .create_rule(&rule("r2", "c1", Duration::from_millis(1)))
        .await
        .expect("create");
    store
        .create_rule(&rule("r3", "c2", Duration::from_secs(3600)))
        .await
        .expect("create");
    assert!(
        store.create_rule(&kept).await.is_err(),
        "an id is recorded once"
    );
    let later = now + Duration::from_secs(1);
    assert_eq!(
        store.channel_rules("c1", later).await.expect("read"),
        vec![kept.clone()],
        "only the channel's unexpired rules, every field as written"
    );
    assert!(
        !store.revoke_rule("c2", "r1", "eve").await.expect("revoke"),
        "another channel's"
    );
    assert!(store.revoke_rule("c1", "r1", "bob").await.expect("revoke"));
    assert!(
        !store.revoke_rule("c1", "r1", "bob").await.expect("revoke"),
        "once"
    );
    assert!(
        store
            .channel_rules("c1", later)
            .await
            .expect("read")
            .is_empty()
    );
    assert_eq!(
        store.channel_rules("c2", later).await.expect("read").len(),
        1
    );
}

async fn a_cancel_reason_and_an_audit_note_round_trip(db: TestDb) {
    let store = db.connect().await;
    let waiting = approval("noted", "run1", "c1", Duration::from_secs(600));
    store.create_approval(&waiting).await.expect("create");
    let Decided::Won(won) = store
        .decide_approval_noted(
            "noted",
            ApprovalStatus::Cancelled,
            Some("carol"),
            Some("use the staging table"),
        )
        .await
        .expect("decide")
    else {
        panic!("the first decision wins");
    };
    assert_eq!(won.note.as_deref(), Some("use the staging table"));
    assert_eq!(store.approval("noted").await.expect("read"), Some(won));
    let mut record = audit("c1", 1);
    record.note = Some("rule r1".into());
    store.record_audit(&record).await.expect("audit");
    let read = store.recent_audit("c1", 1).await.expect("read");
    assert_eq!(read[0].note.as_deref(), Some("rule r1"));
}

/// What an approval of a call says of the same call run before: only a confirmed approval
/// whose call ran (ok or error), in the same channel, of the same tool and arguments; the
/// newest one.
async fn a_confirmed_call_that_ran_is_found_by_its_channel_tool_and_arguments(db: TestDb) {
    let store = db.connect().await;
    let hash = approval("x", "r", "c1", Duration::from_secs(600)).arguments_hash;
    let earlier = || store.earlier_run("c1", "execute_sql", &hash);
    assert_eq!(earlier().await.expect("read"), None, "nothing ran yet");

    // (id, channel, tool, other arguments, decided as, what came of the call, at)
    let cases = [
        (
            "ran",
            "c1",
            "execute_sql",
            false,
            ApprovalStatus::Confirmed,
            CallOutcome::Ok,
            10,
        ),
        (
            "cancelled",
            "c1",
            "execute_sql",
            false,
            ApprovalStatus::Cancelled,
            CallOutcome::Cancelled,
            20,
        ),
        (
            "elsewhere",
            "c2",
            "execute_sql",
            false,
            ApprovalStatus::Confirmed,
            CallOutcome::Ok,
            30,
        ),
        (
            "other tool",
            "c1",
            "execute_command",
            false,
            ApprovalStatus::Confirmed,
            CallOutcome::Ok,
            40,
        ),
        (
            "other call",
            "c1",
            "execute_sql",
            true,
            ApprovalStatus::Confirmed,
            CallOutcome::Ok,
            50,
        ),
        (
            "not run",
            "c1",
            "execute_sql",
            false,
            ApprovalStatus::Confirmed,
            CallOutcome::NotRun,
            60,
        ),
    ];
    for (id, channel, tool, other, status, outcome, at) in cases {
        let mut asked = approval(id, "r", channel, Duration::from_secs(600));
        asked.tool = tool.into();
        if other {
            asked
                .arguments
                .insert("query".into(), json!("DELETE FROM orders WHERE id = 8"));
            asked.arguments_hash = arguments_hash(&asked.arguments);
        }
        store.create_approval(&asked).await.expect("create");
        store
            .decide_approval_noted(id, status, Some("bob"), None)
            .await
            .expect("decide");
        let mut record = audit(channel, at);
        record.tool = tool.into();
        record.approval_id = Some(id.into());
        record.outcome = outcome;
        record.result = Some(format!("{id}: 3 rows"));
        store.record_audit(&record).await.expect("audit");
    }
    let found = earlier()
        .await
        .expect("read")
        .expect("the confirmed call that ran");
    assert_eq!(
        found,
        EarlierRun {
            at: UNIX_EPOCH + Duration::from_secs(1_700_000_010),
            confirmed_by: Some("bob".into()),
            succeeded: true,
            result: Some("ran: 3 rows".into()),
        }
    );

    // A newer one that ran and failed is the one said.
    let again = approval("failed", "r2", "c1", Duration::from_secs(600));
    store.create_approval(&again).await.expect("create");
    store
        .decide_approval_noted("failed", ApprovalStatus::Confirmed, Some("carol"), None)
        .await
        .expect("decide");
    let mut record = audit("c1", 70);
    record.approval_id = Some("failed".into());
    record.outcome = CallOutcome::Error;
    store.record_audit(&record).await.expect("audit");
    let found = earlier().await.expect("read").expect("the newest");
    assert_eq!(found.confirmed_by.as_deref(), Some("carol"));
    assert!(!found.succeeded);
    assert_eq!(found.result, None);
}
