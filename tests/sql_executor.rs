//! The SQL executor against real engines: SQLite always (temporary directories), PostgreSQL
//! when `RISKGATE_TEST_POSTGRES_URL` is set, MariaDB/MySQL when `RISKGATE_TEST_MYSQL_URL` is.
//! Each database test works in its own uniquely named schema or tables, so tests run in
//! parallel; none needs the internet.

/// libtest captures the print macros of passing tests, so a skip notice goes to the
/// process's stderr directly: a plain `cargo test` shows which tests were skipped.
macro_rules! say_skipped {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "{test}: {}", format_args!($($arg)*));
    }};
}

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use riskgate::config::{DatabaseSettings, Settings};
use riskgate::core::risk::Assessment;
use riskgate::core::tools::{Approval, SqlDialect, Tool, ToolError, ToolOutput};
use riskgate::tools::sql::SqlTool;
use secrecy::SecretString;
use serde_json::{Map, Value, json};

fn settings(workspace: &Path) -> Settings {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.to_path_buf();
    settings
}

fn confirmed() -> Approval {
    Approval::Confirmed {
        by: "tester".into(),
    }
}

fn arguments(sql: &str, database: Option<&str>) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("sql".into(), json!(sql));
    if let Some(db) = database {
        args.insert("database".into(), json!(db));
    }
    args
}

async fn run(tool: &SqlTool, sql: &str, approval: Approval) -> Result<ToolOutput, ToolError> {
    tool.execute(&arguments(sql, None), &approval).await
}

async fn read(tool: &SqlTool, sql: &str) -> ToolOutput {
    match run(tool, sql, Approval::Auto).await {
        Ok(out) => out,
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The value of a one-row, one-column result, from the LLM text.
async fn scalar(tool: &SqlTool, sql: &str) -> String {
    let out = read(tool, sql).await;
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines.len(), 2, "{sql} gave {:?}", out.text);
    lines[1].to_owned()
}

fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn assert_refused(result: Result<ToolOutput, ToolError>, needle: &str) -> String {
    match result {
        Err(ToolError::Refused(message)) => {
            assert!(message.contains(needle), "{message}");
            message
        }
        other => panic!("expected a refusal containing {needle:?}, got {other:?}"),
    }
}

fn assert_failed(result: Result<ToolOutput, ToolError>, needle: &str) -> String {
    match result {
        Err(ToolError::Failed(message)) => {
            assert!(message.contains(needle), "{message}");
            message
        }
        other => panic!("expected a failure containing {needle:?}, got {other:?}"),
    }
}

// -------------------------------------------------------------------------------------------
// SQLite and the demo database.

mod sqlite {
    use super::*;

    fn demo_tool(workspace: &Path) -> SqlTool {
        SqlTool::from_settings(&settings(workspace))
    }

    #[tokio::test]
    async fn the_demo_database_is_created_on_first_use_once() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("not/yet/there");
        let tool = demo_tool(&workspace);

        assert_eq!(scalar(&tool, "SELECT count(*) FROM customers").await, "12");
        assert!(workspace.join("demo.db").is_file());
        assert_eq!(scalar(&tool, "SELECT count(*) FROM orders").await, "36");
        let out = read(
            &tool,
            "SELECT name, price FROM products WHERE category = 'Office' ORDER BY price",
        )
        .await;
        assert_eq!(out.summary, "3 rows");
        assert!(out.chat.contains("| 499.0"), "{}", out.chat);

        // A second tool (a restart) finds the database made and adds nothing.
        let again = demo_tool(&workspace);
        assert_eq!(scalar(&again, "SELECT count(*) FROM orders").await, "36");
    }

    /// On SQLite a function the engine lacks is safe to try: nothing registers one on a
    /// riskgate connection, so it fails before anything runs; and FTS's `optimize()`, a
    /// write, fails on the read-only connection an auto call runs on.
    #[tokio::test]
    async fn a_function_sqlite_lacks_fails_and_a_writing_one_is_held_by_the_walls() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let sql = "SELECT ieee754(47.49) AS x";
        assert!(
            matches!(
                riskgate::tools::sql::assess_sql(sql, SqlDialect::Sqlite, &Default::default()),
                Assessment::Safe(_)
            ),
            "{sql}"
        );
        assert_failed(
            run(&tool, sql, Approval::Auto).await,
            "no such function: ieee754",
        );
        run(
            &tool,
            "CREATE VIRTUAL TABLE docs USING fts4(body)",
            confirmed(),
        )
        .await
        .unwrap();
        run(
            &tool,
            "INSERT INTO docs VALUES ('one'), ('two')",
            confirmed(),
        )
        .await
        .unwrap();
        let held = run(
            &tool,
            "SELECT optimize(docs) FROM docs LIMIT 1",
            Approval::Auto,
        )
        .await;
        assert!(
            matches!(&held, Err(ToolError::Refused(m)) if m.contains("nothing was changed")),
            "{held:?}"
        );
        assert_eq!(scalar(&tool, "SELECT count(*) FROM docs").await, "2");
    }

    #[tokio::test]
    async fn a_file_with_other_tables_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        run(&tool, "SELECT 1", Approval::Auto).await.unwrap();
        run(&tool, "DROP TABLE orders", confirmed()).await.unwrap();
        run(&tool, "PRAGMA user_version = 0", confirmed())
            .await
            .unwrap();
        let restarted = demo_tool(dir.path());
        let missing = assert_failed(
            run(&restarted, "SELECT count(*) FROM orders", Approval::Auto).await,
            "no such table: orders",
        );
        assert!(
            missing.contains("SELECT name, sql FROM sqlite_schema"),
            "{missing}"
        );
    }

    #[tokio::test]
    async fn reads_render_three_faces() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let out = read(
            &tool,
            "SELECT id, name, signed_up FROM customers WHERE id IN (1, 12) ORDER BY id",
        )
        .await;
        assert_eq!(out.summary, "2 rows");
        assert_eq!(
            out.text,
            "id\tname\tsigned_up\n1\tAda Lovelace\t2023-01-14\n12\tRadia Perlman\tNULL"
        );
        assert!(out.chat.starts_with("```text\n"), "{}", out.chat);
        assert!(out.chat.ends_with("```\n2 rows"), "{}", out.chat);
        assert_eq!(out.attachment, None);

        let values = read(
            &tool,
            "SELECT NULL AS n, 1.5 AS r, x'00ff' AS b, 'two\nlines' AS t, 7 AS i",
        )
        .await;
        assert_eq!(
            values.text.lines().nth(1),
            Some("NULL\t1.5\t\\x00ff\ttwo\\nlines\t7")
        );
    }

    #[tokio::test]
    async fn rows_are_capped_without_reading_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let started = Instant::now();
        let out = read(
            &tool,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT x, 'row number ' || x AS label FROM c",
        )
        .await;
        eprintln!("1M-row CTE capped in {:?}", started.elapsed());
        assert_eq!(out.summary, "200 of 200+ rows");
        let footer = out.chat.lines().last().unwrap();
        assert!(footer.contains("of 200+ rows"), "{footer}");
        assert!(
            out.text
                .contains("the row limit stopped the query after 200 rows")
        );
        // The chat budget (1800 characters) holds fewer than 200 rows: the CSV has them all.
        let csv = String::from_utf8(out.attachment.expect("attached").bytes).unwrap();
        assert_eq!(csv.lines().count(), 201);
    }

    #[tokio::test]
    async fn a_confirmed_write_commits_and_reports_rows_affected() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        // A pooled reader exists before the write and must see it afterwards.
        assert_eq!(scalar(&tool, "SELECT count(*) FROM customers").await, "12");

        let out = run(
            &tool,
            "UPDATE products SET stock = stock + 1 WHERE category = 'Office'",
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(out.summary, "3 rows affected");
        assert_eq!(out.chat, "3 rows affected");

        let out = run(
            &tool,
            "INSERT INTO customers (name, email, city) VALUES ('Hedy Lamarr', 'hedy@example.com', 'Vienna') RETURNING id, name",
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(out.summary, "1 row affected, 1 row returned");
        assert!(out.text.ends_with("13\tHedy Lamarr"), "{}", out.text);
        assert_eq!(scalar(&tool, "SELECT count(*) FROM customers").await, "13");

        // A confirmed read is a read: no "affected" count.
        let out = run(&tool, "SELECT id FROM customers LIMIT 2", confirmed())
            .await
            .unwrap();
        assert_eq!(out.summary, "2 rows");
    }

    #[tokio::test]
    async fn an_unconfirmed_write_meets_the_read_only_wall() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let message = assert_refused(
            run(
                &tool,
                "INSERT INTO customers (name, email, city) VALUES ('x', 'x@example.com', 'y')",
                Approval::Auto,
            )
            .await,
            "it was not confirmed, so it ran read-only",
        );
        assert!(message.contains("risk_level \"medium\""), "{message}");
        for sql in [
            "DELETE FROM orders",
            "UPDATE products SET price = 0",
            "DROP TABLE orders",
            "CREATE TABLE t (x)",
        ] {
            assert_refused(run(&tool, sql, Approval::Auto).await, "ran read-only");
        }
        assert_eq!(scalar(&tool, "SELECT count(*) FROM customers").await, "12");
        assert_eq!(scalar(&tool, "SELECT count(*) FROM orders").await, "36");
    }

    #[tokio::test]
    async fn read_only_calls_cannot_change_their_session_or_files() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let copy = dir.path().join("copy.db");
        for sql in [
            "PRAGMA query_only = 0".to_owned(),
            "PRAGMA case_sensitive_like = 1".to_owned(),
            "CREATE TEMP TABLE scratch (x)".to_owned(),
            "ATTACH ':memory:' AS other".to_owned(),
            "BEGIN".to_owned(),
            format!("VACUUM INTO '{}'", copy.display()),
        ] {
            assert_refused(run(&tool, &sql, Approval::Auto).await, "ran read-only");
        }
        assert!(!copy.exists());
        // Reading PRAGMAs and table-valued PRAGMAs still works.
        assert_eq!(scalar(&tool, "PRAGMA query_only").await, "1");
        let columns = read(&tool, "PRAGMA table_info(orders)").await;
        assert_eq!(columns.summary, "6 rows");
        assert_eq!(
            scalar(&tool, "SELECT count(*) FROM pragma_table_info('customers')").await,
            "5"
        );
    }

    #[tokio::test]
    async fn session_state_does_not_leak_between_calls() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        // Confirmed calls may change their session; the next call never sees it.
        run(&tool, "CREATE TEMP TABLE scratch (x)", confirmed())
            .await
            .unwrap();
        run(&tool, "PRAGMA case_sensitive_like = 1", confirmed())
            .await
            .unwrap();
        assert_failed(
            run(&tool, "SELECT * FROM scratch", Approval::Auto).await,
            "no such table: scratch",
        );
        assert_failed(
            run(&tool, "SELECT * FROM scratch", confirmed()).await,
            "no such table: scratch",
        );
        assert_eq!(scalar(&tool, "SELECT 'a' LIKE 'A'").await, "1");
    }

    #[tokio::test]
    async fn a_runaway_query_is_interrupted_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = settings(dir.path());
        settings.sql.statement_timeout_ms = 300;
        let tool = SqlTool::from_settings(&settings);
        let runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
        for approval in [Approval::Auto, confirmed()] {
            let started = Instant::now();
            let result = run(&tool, runaway, approval.clone()).await;
            assert_eq!(
                result,
                Err(ToolError::Timeout(Duration::from_millis(300))),
                "{approval:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(5), "{approval:?}");
        }
        // The next call runs normally.
        assert_eq!(scalar(&tool, "SELECT count(*) FROM products").await, "10");
    }

    #[tokio::test]
    async fn exactly_one_statement_runs_on_either_path() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        for approval in [Approval::Auto, confirmed()] {
            for sql in [
                "SELECT 1; DELETE FROM orders",
                "SELECT 1;DELETE FROM orders;",
                "SELECT 1; -- a comment\n DELETE FROM orders",
                "SELECT 1; this is not even SQL",
            ] {
                assert_refused(
                    run(&tool, sql, approval.clone()).await,
                    "more than one statement",
                );
            }
        }
        assert_refused(
            run(
                &tool,
                "UPDATE orders SET quantity = 99; DELETE FROM orders",
                confirmed(),
            )
            .await,
            "more than one statement",
        );
        // Read-only, the first statement alone is refused before the count matters.
        assert_refused(
            run(
                &tool,
                "UPDATE orders SET quantity = 99; DELETE FROM orders",
                Approval::Auto,
            )
            .await,
            "ran read-only",
        );
        assert_eq!(scalar(&tool, "SELECT count(*) FROM orders").await, "36");
        assert_eq!(scalar(&tool, "SELECT max(quantity) FROM orders").await, "5");

        // Trailing semicolons and comments are not a second statement, and a trigger body's
        // semicolons belong to its one statement.
        assert_eq!(scalar(&tool, "SELECT 1; -- done\n;").await, "1");
        run(
            &tool,
            "CREATE TRIGGER keep_stock AFTER INSERT ON orders BEGIN UPDATE products SET stock = stock - 1 WHERE id = NEW.product_id; SELECT 1; END",
            confirmed(),
        )
        .await
        .unwrap();
        for sql in ["", "   ", "-- only a comment", "/* nothing */ ;"] {
            let result = run(&tool, sql, Approval::Auto).await;
            assert!(
                matches!(result, Err(ToolError::InvalidArguments(ref m)) if m.contains("no statement")),
                "{sql:?}: {result:?}"
            );
        }
    }

    #[tokio::test]
    async fn repeated_statements_keep_their_columns_and_their_checks() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        // The second run is on the same pooled connection, which remembers the first's
        // one-statement verdict: with no rows to read names from, it still has the header.
        for _ in 0..2 {
            let out = read(&tool, "SELECT id, name FROM customers WHERE id < 0").await;
            assert_eq!(out.text, "id\tname\n(no rows)");
        }
        for _ in 0..2 {
            assert_refused(
                run(&tool, "SELECT 1; SELECT 2", Approval::Auto).await,
                "more than one statement",
            );
        }
    }

    #[tokio::test]
    async fn mistakes_come_back_as_errors_the_model_can_act_on() {
        let dir = tempfile::tempdir().unwrap();
        let tool = demo_tool(dir.path());
        let syntax = assert_failed(
            run(&tool, "SELEKT * FROM orders", Approval::Auto).await,
            "database \"demo\" (sqlite) reported an error",
        );
        assert!(syntax.contains("syntax error"), "{syntax}");
        assert!(syntax.contains("Fix the statement"), "{syntax}");

        let unknown = tool
            .execute(&arguments("SELECT 1", Some("prod")), &Approval::Auto)
            .await;
        assert!(
            matches!(unknown, Err(ToolError::InvalidArguments(ref m)) if m.contains("no database named \"prod\"") && m.contains("demo")),
            "{unknown:?}"
        );

        let mut bad = Map::new();
        bad.insert("query".into(), json!("SELECT 1"));
        let result = tool.execute(&bad, &Approval::Auto).await;
        assert!(
            matches!(result, Err(ToolError::InvalidArguments(ref m)) if m.contains("takes `sql`")),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn a_configured_sqlite_file_is_picked_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inventory.db");
        let mut settings = settings(dir.path());
        settings.sql.databases = vec![
            DatabaseSettings::new("inventory", format!("sqlite:{}?mode=rwc", path.display())),
            DatabaseSettings::new("memory", "sqlite::memory:"),
        ];
        let tool = SqlTool::from_settings(&settings);
        // The file does not exist yet: a read-only open cannot create it.
        assert_failed(
            run(&tool, "SELECT 1", Approval::Auto).await,
            "could not connect to database \"inventory\" (sqlite)",
        );
        run(
            &tool,
            "CREATE TABLE parts (id INTEGER PRIMARY KEY, name TEXT)",
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(scalar(&tool, "SELECT count(*) FROM parts").await, "0");
        let out = tool
            .execute(&arguments("SELECT 42", Some("memory")), &Approval::Auto)
            .await
            .unwrap();
        assert_eq!(out.text, "42\n42");
        assert!(
            !dir.path().join("demo.db").exists(),
            "no demo when databases are configured"
        );
    }
}

// -------------------------------------------------------------------------------------------
// PostgreSQL.

mod postgres {
    use sqlx::{Connection, PgConnection};

    use super::*;

    const URL_VAR: &str = "RISKGATE_TEST_POSTGRES_URL";

    /// A schema of its own for one test, dropped at the end, and a least-privilege login
    /// role (`<schema>_ro`: USAGE on the schema, SELECT on its tables) that auto runs use,
    /// since the test server's `postgres` login is a superuser and auto SQL is refused on one.
    struct Scratch {
        url: String,
        schema: String,
    }

    /// `url` with its user replaced.
    fn as_user(url: &str, user: &str) -> String {
        let mut parsed = url::Url::parse(url).expect("a URL");
        parsed.set_username(user).expect("a user");
        let _ = parsed.set_password(None);
        parsed.to_string()
    }

    impl Scratch {
        async fn new() -> Option<Self> {
            let Some(url) = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty()) else {
                say_skipped!("skipped: {URL_VAR} not set");
                return None;
            };
            let schema = unique("rg_pg");
            let scratch = Self { url, schema };
            scratch
                .setup(&format!(
                    "CREATE SCHEMA {s};
                     CREATE TABLE {s}.items (id int PRIMARY KEY, label text NOT NULL, n int NOT NULL DEFAULT 0);
                     INSERT INTO {s}.items (id, label) SELECT g, 'item ' || g FROM generate_series(1, 5) g;
                     CREATE TYPE {s}.mood AS ENUM ('sad', 'happy');
                     CREATE FUNCTION {s}.bump() RETURNS int LANGUAGE sql AS $$ UPDATE {s}.items SET n = n + 1 RETURNING n $$;
                     CREATE ROLE {s}_ro LOGIN;
                     GRANT USAGE ON SCHEMA {s} TO {s}_ro;
                     GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {s}_ro;",
                    s = scratch.schema
                ))
                .await;
            Some(scratch)
        }

        async fn setup(&self, sql: &str) {
            let mut conn = PgConnection::connect(&self.url).await.expect("connect");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                .execute(&mut conn)
                .await
                .expect("setup");
            conn.close().await.ok();
        }

        fn tool(&self, statement_timeout_ms: u64) -> SqlTool {
            let dir = std::env::temp_dir();
            let mut settings = settings(&dir);
            settings.sql.statement_timeout_ms = statement_timeout_ms;
            let mut db = DatabaseSettings::new("pg", self.url.clone());
            db.readonly_url = Some(SecretString::from(self.readonly_url()));
            settings.sql.databases = vec![db];
            SqlTool::from_settings(&settings)
        }

        fn readonly_url(&self) -> String {
            as_user(&self.url, &format!("{}_ro", self.schema))
        }

        async fn drop_schema(self) {
            self.setup(&format!(
                "DROP SCHEMA {s} CASCADE; DROP OWNED BY {s}_ro; DROP ROLE {s}_ro",
                s = self.schema
            ))
            .await;
        }
    }

    #[tokio::test]
    async fn reads_decode_the_common_types() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let out = read(
            &tool,
            &format!("SELECT id, label FROM {}.items ORDER BY id", db.schema),
        )
        .await;
        assert_eq!(out.summary, "5 rows");
        assert!(
            out.text.starts_with("id\tlabel\n1\titem 1\n"),
            "{}",
            out.text
        );

        let out = read(
            &tool,
            &format!(
                "SELECT 1::int2 AS a, 2::int4 AS b, 3::int8 AS c, 1.5::float4 AS d, 2::float8 AS e, \
                 12.340::numeric AS f, -0.0001::numeric AS g, 'x'::text AS h, true AS i, NULL::int AS j, \
                 '2024-03-01'::date AS k, '2024-03-01 12:34:56.5'::timestamp AS l, \
                 '2024-03-01 12:34:56+02'::timestamptz AS m, '12:00:01'::time AS n, \
                 interval '1 day 2 hours' AS o, '\\x0102'::bytea AS p, '{{\"a\": 1}}'::jsonb AS q, \
                 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS r, ARRAY[1, 2, NULL] AS s, \
                 '192.168.0.1/24'::inet AS t, ROW(1, 'a b') AS u, 'happy'::{}.mood AS v, \
                 ARRAY['happy'::{}.mood] AS w, 'abc'::varchar(5) AS x, 12.5::money AS y, \
                 point(1, 2) AS z",
                db.schema, db.schema
            ),
        )
        .await;
        let values: Vec<&str> = out.text.lines().nth(1).unwrap().split('\t').collect();
        assert_eq!(
            values,
            [
                "1",
                "2",
                "3",
                "1.5",
                "2.0",
                "12.340",
                "-0.0001",
                "x",
                "true",
                "NULL",
                "2024-03-01",
                "2024-03-01 12:34:56.5",
                "2024-03-01 10:34:56+00",
                "12:00:01",
                "1 day 02:00:00",
                "\\x0102",
                "{\"a\": 1}",
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                "{1,2,NULL}",
                "192.168.0.1/24",
                "(1,\"a b\")",
                "happy",
                "{happy}",
                "abc",
                "12.50",
                "<POINT>",
            ]
        );
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn the_row_limit_stops_a_million_rows_early() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let started = Instant::now();
        // A set-returning function in the select list streams (in FROM it would be
        // materialized first), so only the row limit keeps this short.
        let out = read(
            &tool,
            "SELECT generate_series(1, 1000000) AS g, repeat('x', 100) AS pad",
        )
        .await;
        eprintln!("1M rows capped in {:?}", started.elapsed());
        assert_eq!(out.summary, "200 of 200+ rows");
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn a_writing_function_fails_under_the_read_only_wall() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let message = assert_refused(
            run(
                &tool,
                &format!("SELECT {}.bump()", db.schema),
                Approval::Auto,
            )
            .await,
            "read-only transaction",
        );
        assert!(message.contains("risk_level \"medium\""), "{message}");
        assert_eq!(
            scalar(&tool, &format!("SELECT sum(n) FROM {}.items", db.schema)).await,
            "0"
        );
        // A data-modifying CTE is refused the same way.
        assert_refused(
            run(
                &tool,
                &format!(
                    "WITH d AS (UPDATE {s}.items SET n = n + 1 RETURNING n) SELECT * FROM d",
                    s = db.schema
                ),
                Approval::Auto,
            )
            .await,
            "read-only transaction",
        );
        assert_eq!(
            scalar(&tool, &format!("SELECT sum(n) FROM {}.items", db.schema)).await,
            "0"
        );
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn a_confirmed_write_commits() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let s = &db.schema;
        let out = run(
            &tool,
            &format!("UPDATE {s}.items SET label = 'z' WHERE id <= 2"),
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(out.summary, "2 rows affected");
        let out = run(
            &tool,
            &format!("INSERT INTO {s}.items (id, label) VALUES (6, 'six') RETURNING id, label"),
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(out.summary, "1 row affected, 1 row returned");
        assert!(out.text.ends_with("6\tsix"), "{}", out.text);
        // A confirmed read says nothing about rows affected; a confirmed function call that
        // writes commits.
        let out = run(&tool, &format!("SELECT id FROM {s}.items"), confirmed())
            .await
            .unwrap();
        assert_eq!(out.summary, "6 rows");
        run(&tool, &format!("SELECT {s}.bump()"), confirmed())
            .await
            .unwrap();
        assert_eq!(
            scalar(
                &tool,
                &format!("SELECT count(*) FROM {s}.items WHERE label = 'z' OR n = 1")
            )
            .await,
            "6"
        );
        // A failing confirmed statement rolls back.
        assert_failed(
            run(
                &tool,
                &format!("INSERT INTO {s}.items (id, label) VALUES (1, 'dup')"),
                confirmed(),
            )
            .await,
            "rolled back",
        );
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn a_long_statement_times_out() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(300);
        for approval in [Approval::Auto, confirmed()] {
            assert_eq!(
                run(&tool, "SELECT pg_sleep(5)", approval).await,
                Err(ToolError::Timeout(Duration::from_millis(300)))
            );
        }
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn two_statements_are_refused_by_the_engine() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        for approval in [Approval::Auto, confirmed()] {
            assert_refused(
                run(
                    &tool,
                    &format!("SELECT 1; DELETE FROM {}.items", db.schema),
                    approval,
                )
                .await,
                "more than one statement",
            );
        }
        assert_eq!(
            scalar(&tool, &format!("SELECT count(*) FROM {}.items", db.schema)).await,
            "5"
        );
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn session_settings_do_not_leak() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        assert_eq!(
            scalar(&tool, "SELECT set_config('riskgate.probe', 'leak', false)").await,
            "leak"
        );
        assert_eq!(
            scalar(&tool, "SELECT current_setting('riskgate.probe', true)").await,
            "NULL"
        );
        db.drop_schema().await;
    }

    #[tokio::test]
    async fn an_unreachable_server_is_a_readable_failure_without_the_password() {
        let dir = tempfile::tempdir().unwrap();
        let mut settings = settings(dir.path());
        settings.sql.connect_timeout_ms = 1_000;
        settings.sql.databases = vec![DatabaseSettings::new(
            "gone",
            "postgres://app:hunter2@127.0.0.1:9/shop",
        )];
        let tool = SqlTool::from_settings(&settings);
        let message = assert_failed(
            run(&tool, "SELECT 1", Approval::Auto).await,
            "could not connect to database \"gone\" (postgres)",
        );
        assert!(!message.contains("hunter2"), "{message}");
    }
}

// -------------------------------------------------------------------------------------------
// MariaDB / MySQL.

mod mysql {
    use sqlx::{Connection, MySqlConnection};

    use super::*;

    const URL_VAR: &str = "RISKGATE_TEST_MYSQL_URL";

    /// Tables and a function of their own for one test, dropped at the end.
    struct Scratch {
        url: String,
        table: String,
    }

    impl Scratch {
        async fn new() -> Option<Self> {
            let Some(url) = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty()) else {
                say_skipped!("skipped: {URL_VAR} not set");
                return None;
            };
            let scratch = Self {
                url,
                table: unique("rg_my"),
            };
            let t = &scratch.table;
            scratch
                .setup(&format!(
                    "CREATE TABLE {t} (id INT PRIMARY KEY AUTO_INCREMENT, label VARCHAR(20) NOT NULL)"
                ))
                .await;
            scratch
                .setup(&format!(
                    "INSERT INTO {t} (label) VALUES ('one'), ('two'), ('three')"
                ))
                .await;
            scratch
                .setup(&format!(
                    "CREATE FUNCTION {t}_bump() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO {t} (label) VALUES ('bumped'); RETURN 1; END"
                ))
                .await;
            // The least-privilege account auto runs use (root has SUPER and FILE), for both
            // ways a local TCP login may be matched.
            for host in ["%", "localhost", "127.0.0.1"] {
                scratch
                    .setup(&format!(
                        "CREATE USER '{t}_ro'@'{host}' IDENTIFIED BY ''; GRANT SELECT, EXECUTE ON `{db}`.* TO '{t}_ro'@'{host}'",
                        db = scratch.database()
                    ))
                    .await;
            }
            Some(scratch)
        }

        async fn setup(&self, sql: &str) {
            let mut conn = MySqlConnection::connect(&self.url).await.expect("connect");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                .execute(&mut conn)
                .await
                .expect("setup");
            conn.close().await.ok();
        }

        fn tool(&self, statement_timeout_ms: u64) -> SqlTool {
            let dir = std::env::temp_dir();
            let mut settings = settings(&dir);
            settings.sql.statement_timeout_ms = statement_timeout_ms;
            let mut db = DatabaseSettings::new("maria", self.url.clone());
            db.readonly_url = Some(SecretString::from(self.readonly_url()));
            settings.sql.databases = vec![db];
            SqlTool::from_settings(&settings)
        }

        /// Auto runs on the owner's (privileged) account, allowed by the operator.
        fn tool_as_owner(&self, statement_timeout_ms: u64) -> SqlTool {
            let dir = std::env::temp_dir();
            let mut settings = settings(&dir);
            settings.sql.statement_timeout_ms = statement_timeout_ms;
            let mut db = DatabaseSettings::new("maria", self.url.clone());
            db.allow_privileged_auto = true;
            settings.sql.databases = vec![db];
            SqlTool::from_settings(&settings)
        }

        fn database(&self) -> String {
            url::Url::parse(&self.url)
                .expect("a URL")
                .path()
                .trim_start_matches('/')
                .to_owned()
        }

        fn readonly_url(&self) -> String {
            let mut parsed = url::Url::parse(&self.url).expect("a URL");
            parsed
                .set_username(&format!("{}_ro", self.table))
                .expect("a user");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }

        async fn drop_all(self) {
            for host in ["%", "localhost", "127.0.0.1"] {
                self.setup(&format!("DROP USER IF EXISTS '{}_ro'@'{host}'", self.table))
                    .await;
            }
            self.setup(&format!("DROP FUNCTION IF EXISTS {}_bump", self.table))
                .await;
            self.setup(&format!("DROP TABLE IF EXISTS {}", self.table))
                .await;
        }
    }

    #[tokio::test]
    async fn reads_decode_the_common_types() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let out = read(
            &tool,
            &format!("SELECT id, label FROM {} ORDER BY id", db.table),
        )
        .await;
        assert_eq!(out.summary, "3 rows");
        assert!(out.text.starts_with("id\tlabel\n1\tone\n"), "{}", out.text);

        let out = read(
            &tool,
            "SELECT 1 AS a, CAST(2 AS UNSIGNED) AS b, 1.5e0 AS c, CAST(12.34 AS DECIMAL(10, 3)) AS d, \
             'x' AS e, NULL AS f, DATE '2024-03-01' AS g, TIMESTAMP '2024-03-01 12:34:56.5' AS h, \
             TIME '12:00:01' AS i, x'00ff' AS j, TRUE AS k, JSON_OBJECT('a', 1) AS l",
        )
        .await;
        let values: Vec<&str> = out.text.lines().nth(1).unwrap().split('\t').collect();
        assert_eq!(
            values,
            [
                "1",
                "2",
                "1.5",
                "12.340",
                "x",
                "NULL",
                "2024-03-01",
                "2024-03-01 12:34:56.5",
                "12:00:01",
                "\\x00ff",
                "1",
                "{\"a\": 1}",
            ]
        );
        db.drop_all().await;
    }

    #[tokio::test]
    async fn the_row_limit_stops_a_big_cross_join_early() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let started = Instant::now();
        let out = read(
            &tool,
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) \
             SELECT a.x, b.x FROM c a CROSS JOIN c b",
        )
        .await;
        eprintln!("1M-row cross join capped in {:?}", started.elapsed());
        assert_eq!(out.summary, "200 of 200+ rows");
        db.drop_all().await;
    }

    #[tokio::test]
    async fn a_writing_function_fails_under_the_read_only_wall() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        // The read-only session alone, on an account that may write (the operator's
        // override): the second wall holds without the first.
        let tool = db.tool_as_owner(5_000);
        assert_refused(
            run(
                &tool,
                &format!("SELECT {}_bump()", db.table),
                Approval::Auto,
            )
            .await,
            "READ ONLY",
        );
        for sql in [
            format!("DELETE FROM {}", db.table),
            format!("CREATE TABLE {}_x (id INT)", db.table),
        ] {
            assert_refused(run(&tool, &sql, Approval::Auto).await, "ran read-only");
        }
        assert_eq!(
            scalar(&tool, &format!("SELECT count(*) FROM {}", db.table)).await,
            "3"
        );
        db.drop_all().await;
    }

    #[tokio::test]
    async fn a_confirmed_write_commits() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        let out = run(
            &tool,
            &format!("UPDATE {} SET label = 'z' WHERE id <= 2", db.table),
            confirmed(),
        )
        .await
        .unwrap();
        assert_eq!(out.summary, "2 rows affected");
        run(&tool, &format!("SELECT {}_bump()", db.table), confirmed())
            .await
            .unwrap();
        assert_eq!(
            scalar(&tool, &format!("SELECT count(*) FROM {}", db.table)).await,
            "4"
        );
        let out = run(&tool, &format!("SELECT id FROM {}", db.table), confirmed())
            .await
            .unwrap();
        assert_eq!(out.summary, "4 rows");
        db.drop_all().await;
    }

    #[tokio::test]
    async fn a_long_statement_times_out() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(300);
        assert_eq!(
            run(&tool, "SELECT SLEEP(5)", Approval::Auto).await,
            Err(ToolError::Timeout(Duration::from_millis(300)))
        );
        db.drop_all().await;
    }

    #[tokio::test]
    async fn two_statements_are_refused_by_the_engine() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        for approval in [Approval::Auto, confirmed()] {
            assert_failed(
                run(
                    &tool,
                    &format!("SELECT 1; DELETE FROM {}", db.table),
                    approval,
                )
                .await,
                "a call runs exactly one statement",
            );
        }
        assert_eq!(
            scalar(&tool, &format!("SELECT count(*) FROM {}", db.table)).await,
            "3"
        );
        db.drop_all().await;
    }

    #[tokio::test]
    async fn session_variables_do_not_leak() {
        let Some(db) = Scratch::new().await else {
            return;
        };
        let tool = db.tool(5_000);
        assert_eq!(scalar(&tool, "SELECT @probe := 'leak'").await, "leak");
        assert_eq!(scalar(&tool, "SELECT @probe").await, "NULL");
        db.drop_all().await;
    }
}

// -------------------------------------------------------------------------------------------
// What sqlx 0.9 itself does, which the executor's walls are built around. A test that fails
// here means sqlx changed and the walls deserve another look.

mod sqlx_facts {
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::{Connection, Executor, MySqlConnection, PgConnection, SqliteConnection};

    use super::*;

    /// `sqlx::query` on SQLite runs every statement in the string, one after the other,
    /// although it looks like the prepared path (sqlx marks `Query::fetch_many` deprecated
    /// for this reason, not `Executor::fetch_many`).
    #[tokio::test]
    async fn sqlite_query_runs_every_statement_of_a_string() {
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::new()
            .filename(dir.path().join("facts.db"))
            .create_if_missing(true);
        let mut conn = SqliteConnection::connect_with(&options).await.unwrap();
        conn.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2)")
            .await
            .unwrap();
        let rows = conn
            .fetch_all(sqlx::query("SELECT 1; DELETE FROM t"))
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(left, 0, "the DELETE after the SELECT ran");
    }

    /// MySQL/MariaDB: a query without arguments (`execute(&str)`, `raw_sql`) goes over the
    /// text protocol, and sqlx connects with CLIENT_MULTI_STATEMENTS, so both statements
    /// run; `sqlx::query` always carries an (empty) argument list and is prepared, which the
    /// server refuses for two statements.
    #[tokio::test]
    async fn mysql_text_path_runs_every_statement_and_query_is_prepared() {
        let Some(url) = std::env::var("RISKGATE_TEST_MYSQL_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            say_skipped!("skipped: RISKGATE_TEST_MYSQL_URL not set");
            return;
        };
        let table = unique("rg_fact");
        let mut conn = MySqlConnection::connect(&url).await.unwrap();
        conn.execute(sqlx::AssertSqlSafe(format!(
            "CREATE TABLE {table} (x INT); INSERT INTO {table} VALUES (1), (2)"
        )))
        .await
        .unwrap();
        let refused = conn
            .execute(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT 1; DELETE FROM {table}"
            ))))
            .await;
        assert!(refused.is_err(), "{refused:?}");
        conn.execute(sqlx::AssertSqlSafe(format!(
            "SELECT 1; DELETE FROM {table}"
        )))
        .await
        .unwrap();
        let left: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
                .fetch_one(&mut conn)
                .await
                .unwrap();
        conn.execute(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
            .await
            .unwrap();
        assert_eq!(left, 0, "the text path ran the DELETE");
    }

    /// PostgreSQL: the same split. The simple-query protocol behind `execute(&str)` runs
    /// every statement (so `COMMIT; DROP ...` would escape a read-only transaction); the
    /// extended protocol behind `sqlx::query` refuses a second command.
    #[tokio::test]
    async fn postgres_text_path_runs_every_statement_and_query_is_prepared() {
        let Some(url) = std::env::var("RISKGATE_TEST_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            say_skipped!("skipped: RISKGATE_TEST_POSTGRES_URL not set");
            return;
        };
        let table = unique("rg_fact");
        let mut conn = PgConnection::connect(&url).await.unwrap();
        conn.execute(sqlx::AssertSqlSafe(format!(
            "CREATE TABLE {table} (x int); INSERT INTO {table} VALUES (1), (2)"
        )))
        .await
        .unwrap();
        let refused = conn
            .execute(sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT 1; DELETE FROM {table}"
            ))))
            .await;
        let message = refused.expect_err("two commands").to_string();
        assert!(message.contains("multiple commands"), "{message}");
        conn.execute(sqlx::AssertSqlSafe(format!(
            "BEGIN READ ONLY; COMMIT; DELETE FROM {table}"
        )))
        .await
        .unwrap();
        let left: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
                .fetch_one(&mut conn)
                .await
                .unwrap();
        conn.execute(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
            .await
            .unwrap();
        assert_eq!(
            left, 0,
            "COMMIT ended the read-only transaction, the DELETE ran"
        );
    }
}
