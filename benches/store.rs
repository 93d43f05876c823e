//! The state store's cost per agent step, on SQLite (a temp file) and on PostgreSQL (a fresh
//! schema, when `RISKGATE_TEST_POSTGRES_URL` is set):
//!
//! - `auto_step`: what the loop does around one auto-run call: `load_history` (24 000-character
//!   budget over a channel with a long history) + `append` of a turn (4 messages) +
//!   `record_audit`.
//! - `confirm_step`: the same + `create_approval` + `decide_approval` (a confirm step).
//!
//! Criterion reports its estimate; afterwards a plain loop of `PERCENTILE_RUNS` steps prints the
//! median and p99 of single steps, which criterion does not.
//!
//! - `watch`: one poll of the approval watch (`settled_approvals`) over the ids of 10, 100
//!   and 1,000 waiting runs, in a table that already holds every approval the steps made:
//!   what each process asks once per `store.approval_watch_ms` while its runs wait.
//!
//! Run: `cargo bench --bench store` (with `RISKGATE_TEST_POSTGRES_URL=postgres://...` for
//! PostgreSQL too).

use std::hash::{BuildHasher, Hasher};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use riskgate::core::agent::{CallOutcome, CallRecord, ChatMessage, arguments_hash};
use riskgate::core::ports::{ApprovalRecord, ApprovalStatus, AuditRecord, Decided, Store};
use riskgate::core::risk::{Decision, DecisionSource};
use riskgate::store::SqlStore;
use serde_json::{Map, json};
use sqlx::{AssertSqlSafe, Connection};
use tokio::runtime::Runtime;

const CHANNEL: &str = "bench";
const HISTORY_BUDGET: usize = 24_000;
const PRIMED_TURNS: usize = 200;
const PERCENTILE_RUNS: usize = 2_000;

fn turn(n: u64) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user(
            Some("alice"),
            format!("How many orders came in on day {n}?"),
        ),
        ChatMessage::assistant_calls(
            None,
            vec![CallRecord {
                id: format!("call_{n}"),
                name: "execute_sql".into(),
                arguments: r#"{"query":"SELECT count(*) FROM orders WHERE day = $1"}"#.into(),
            }],
        ),
        ChatMessage::tool_result(format!("call_{n}"), "count\n-----\n42\n".repeat(20)),
        ChatMessage::assistant(format!("There were 42 orders on day {n}.")),
    ]
}

fn audit(n: u64, approval_id: Option<String>) -> AuditRecord {
    AuditRecord {
        at: 1_700_000_000 + n,
        run_id: format!("run{n}"),
        channel: CHANNEL.into(),
        user: "alice".into(),
        tool: "execute_sql".into(),
        arguments_summary: r#"{"query":"SELECT count(*) FROM orders"}"#.into(),
        decision: if approval_id.is_some() {
            Decision::Confirm
        } else {
            Decision::Auto
        },
        source: DecisionSource::Whitelist,
        reason: "a read-only query".into(),
        outcome: CallOutcome::Ok,
        approval_id,
        duration_ms: 3,
        output_bytes: 240,
        note: None,
        result: Some("1 row".into()),
    }
}

fn approval(n: u64) -> ApprovalRecord {
    let mut arguments = Map::new();
    arguments.insert(
        "query".into(),
        json!(format!("DELETE FROM orders WHERE id = {n}")),
    );
    let now = SystemTime::now();
    ApprovalRecord {
        id: format!("approval-{n}"),
        run_id: format!("run{n}"),
        channel: CHANNEL.into(),
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
        expires_at: now + Duration::from_secs(600),
        message_ref: None,
        note: None,
        resume: None,
    }
}

/// One agent step's store calls; returns how long each part took (load, approval, append,
/// audit).
async fn step(store: &SqlStore, n: u64, confirm: bool) -> [Duration; 4] {
    let mut parts = [Duration::ZERO; 4];
    let mut clock = Instant::now();
    let mut lap = |part: usize| {
        parts[part] = clock.elapsed();
        clock = Instant::now();
    };
    let history = store
        .load_history(CHANNEL, HISTORY_BUDGET)
        .await
        .expect("load");
    black_box(history);
    lap(0);
    let approval_id = if confirm {
        let record = approval(n);
        store.create_approval(&record).await.expect("create");
        let decided = store
            .decide_approval(&record.id, ApprovalStatus::Confirmed, Some("bob"))
            .await
            .expect("decide");
        assert!(matches!(decided, Decided::Won(_)));
        Some(record.id)
    } else {
        None
    };
    lap(1);
    store.append(CHANNEL, &turn(n)).await.expect("append");
    lap(2);
    store
        .record_audit(&audit(n, approval_id))
        .await
        .expect("audit");
    lap(3);
    parts
}

/// A database for the bench: where it is, and how to clean it up.
struct BenchDb {
    name: &'static str,
    url: String,
    _dir: Option<tempfile::TempDir>,
    schema: Option<(String, String)>,
}

fn databases(runtime: &Runtime) -> Vec<BenchDb> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut list = vec![BenchDb {
        name: "sqlite",
        url: format!("sqlite://{}", dir.path().join("bench.db").display()),
        _dir: Some(dir),
        schema: None,
    }];
    match std::env::var("RISKGATE_TEST_POSTGRES_URL") {
        Ok(admin) if !admin.is_empty() => {
            let schema = format!(
                "bench_{:016x}",
                std::collections::hash_map::RandomState::new()
                    .build_hasher()
                    .finish()
            );
            runtime.block_on(async {
                let mut conn = sqlx::PgConnection::connect(&admin).await.expect("pg");
                sqlx::query(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
                    .execute(&mut conn)
                    .await
                    .expect("schema");
            });
            let separator = if admin.contains('?') { '&' } else { '?' };
            list.push(BenchDb {
                name: "postgres",
                url: format!("{admin}{separator}options[search_path]={schema}"),
                _dir: None,
                schema: Some((admin, schema)),
            });
        }
        _ => println!("postgres skipped: RISKGATE_TEST_POSTGRES_URL not set"),
    }
    list
}

fn percentiles(runtime: &Runtime, store: &SqlStore, counter: &AtomicU64, confirm: bool) -> String {
    let mut totals = Vec::with_capacity(PERCENTILE_RUNS);
    let mut parts: [Vec<Duration>; 4] = Default::default();
    for _ in 0..PERCENTILE_RUNS {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let laps = runtime.block_on(step(store, n, confirm));
        totals.push(started.elapsed());
        for (part, lap) in parts.iter_mut().zip(laps) {
            part.push(lap);
        }
    }
    let at = |samples: &mut Vec<Duration>, q: f64| {
        samples.sort_unstable();
        samples[((samples.len() - 1) as f64 * q).round() as usize]
    };
    let mut line = format!(
        "median {:?}, p99 {:?}, max {:?} over {} steps; medians of its parts: load_history {:?}",
        at(&mut totals, 0.5),
        at(&mut totals, 0.99),
        at(&mut totals, 1.0),
        totals.len(),
        at(&mut parts[0], 0.5),
    );
    if confirm {
        line += &format!(", create+decide_approval {:?}", at(&mut parts[1], 0.5));
    }
    line += &format!(
        ", append {:?}, record_audit {:?}",
        at(&mut parts[2], 0.5),
        at(&mut parts[3], 0.5)
    );
    line
}

/// Median and p99 of one approval-watch poll over `waiting` pending approvals.
fn watch_percentiles(runtime: &Runtime, store: &SqlStore, waiting: usize) -> String {
    let ids: Vec<String> = (0..waiting)
        .map(|k| format!("watch-{waiting}-{k}"))
        .collect();
    runtime.block_on(async {
        for (k, id) in ids.iter().enumerate() {
            let mut record = approval(k as u64);
            record.id = id.clone();
            store.create_approval(&record).await.expect("create");
        }
    });
    let mut polls: Vec<Duration> = (0..PERCENTILE_RUNS / 4)
        .map(|_| {
            let started = Instant::now();
            let settled = runtime
                .block_on(store.settled_approvals(&ids))
                .expect("poll");
            assert!(settled.is_empty(), "none of them is decided");
            started.elapsed()
        })
        .collect();
    polls.sort_unstable();
    let at = |q: f64| polls[((polls.len() - 1) as f64 * q).round() as usize];
    format!(
        "median {:?}, p99 {:?} over {} polls",
        at(0.5),
        at(0.99),
        polls.len()
    )
}

fn bench_store(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut summary = Vec::new();
    for db in databases(&runtime) {
        let store = runtime
            .block_on(SqlStore::connect(&db.url))
            .expect("connect");
        let counter = AtomicU64::new(0);
        // A channel with a long history: loads stop at the budget, as in a busy channel.
        runtime.block_on(async {
            for _ in 0..PRIMED_TURNS {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                store.append(CHANNEL, &turn(n)).await.expect("prime");
            }
        });
        let mut group = c.benchmark_group(format!("store/{}", db.name));
        for (label, confirm) in [("auto_step", false), ("confirm_step", true)] {
            group.bench_function(label, |b| {
                b.iter(|| {
                    let n = counter.fetch_add(1, Ordering::Relaxed);
                    runtime.block_on(step(&store, n, confirm));
                })
            });
        }
        group.finish();
        for (label, confirm) in [("auto_step", false), ("confirm_step", true)] {
            summary.push(format!(
                "store/{}/{label}: {}",
                db.name,
                percentiles(&runtime, &store, &counter, confirm)
            ));
        }
        for waiting in [10, 100, 1_000] {
            summary.push(format!(
                "store/{}/watch over {waiting} waiting runs: {}",
                db.name,
                watch_percentiles(&runtime, &store, waiting)
            ));
        }
        runtime.block_on(store.close());
        if let Some((admin, schema)) = &db.schema {
            runtime.block_on(async {
                let mut conn = sqlx::PgConnection::connect(admin).await.expect("pg");
                sqlx::query(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                    .execute(&mut conn)
                    .await
                    .expect("drop schema");
            });
        }
    }
    println!("\nsingle steps (plain loop after criterion):");
    for line in summary {
        println!("  {line}");
    }
}

criterion_group!(benches, bench_store);
criterion_main!(benches);
