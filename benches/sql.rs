//! Cost of the SQL executor's walls: an auto-run SQLite query on the demo database through
//! `SqlTool::execute` (argument parsing, SQLite's one-statement check, a pooled read-only
//! connection with its authorizer and deadline, decoding, and rendering all three faces)
//! next to the same query through plain sqlx on an open connection (fetching the rows,
//! nothing else).
//!
//! Two groups: the same statement text every time (both sides hit their caches: sqlx's
//! prepared statements, the tool's one-statement verdicts), and a new text every time (as
//! LLM-written queries mostly are: both sides prepare). The target is
//! tool / plain <= 1.5x. Run: `cargo bench --bench sql`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use riskgate::config::Settings;
use riskgate::core::tools::{Approval, Tool};
use riskgate::tools::sql::SqlTool;
use serde_json::{Map, json};
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{Connection, Executor};

/// Five rows of the demo's orders.
const SQL: &str = "SELECT * FROM orders WHERE customer_id = 2";

fn bench_sql(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let workspace = tempfile::tempdir().expect("tempdir");
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_path_buf();
    let tool = SqlTool::from_settings(&settings);
    let mut arguments = Map::new();
    arguments.insert("sql".into(), json!(SQL));
    let approval = Approval::Auto;

    // The first call creates the demo database and the first pooled connection.
    let first = runtime
        .block_on(tool.execute(&arguments, &approval))
        .expect("the query runs");
    assert_eq!(first.summary, "5 rows");

    let mut plain = runtime
        .block_on(SqliteConnection::connect_with(
            &SqliteConnectOptions::new().filename(workspace.path().join("demo.db")),
        ))
        .expect("plain connection");
    let rows = runtime
        .block_on(plain.fetch_all(sqlx::query(SQL)))
        .expect("plain query");
    assert_eq!(rows.len(), 5);

    let mut group = c.benchmark_group("sql/sqlite_auto_read");
    group.bench_function("execute_sql_tool", |b| {
        b.iter(|| {
            runtime
                .block_on(tool.execute(black_box(&arguments), &approval))
                .map(black_box)
        })
    });
    group.bench_function("plain_sqlx", |b| {
        b.iter(|| {
            runtime
                .block_on(plain.fetch_all(sqlx::query(black_box(SQL))))
                .map(black_box)
        })
    });
    group.finish();

    // A new statement text each time, as LLM-written queries mostly are: neither the
    // tool's per-connection verdict cache nor sqlx's statement cache can help.
    let mut group = c.benchmark_group("sql/sqlite_auto_read_new_text");
    let mut n = 0u64;
    group.bench_function("execute_sql_tool", |b| {
        b.iter(|| {
            n += 1;
            let mut arguments = Map::new();
            arguments.insert("sql".into(), json!(format!("{SQL} AND id > -{n}")));
            runtime
                .block_on(tool.execute(black_box(&arguments), &approval))
                .map(black_box)
        })
    });
    group.bench_function("plain_sqlx", |b| {
        b.iter(|| {
            n += 1;
            let sql = format!("{SQL} AND id > -{n}");
            runtime
                .block_on(plain.fetch_all(sqlx::query(sqlx::AssertSqlSafe(sql))))
                .map(black_box)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_sql);
criterion_main!(benches);
