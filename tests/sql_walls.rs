//! The SQL walls, proven by their effects against real engines: what the gate lets run
//! without a click is harmless by construction. Each test decides a call with the gate as the
//! bot does (assessment, the model's `risk_level`, the policy), runs it only when the gate
//! says auto, and then looks at the world: a marker file not created, a row count unchanged,
//! another session still alive, the process's peak memory. SQLite always; PostgreSQL when
//! `RISKGATE_TEST_POSTGRES_URL` is set, MariaDB/MySQL when `RISKGATE_TEST_MYSQL_URL` is.

/// libtest captures the print macros of passing tests, so notices go to stderr directly.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "{test}: {}", format_args!($($arg)*));
    }};
}

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use riskgate::config::{DatabaseSettings, Settings};
use riskgate::core::risk::{ChannelMode, Decision, GatePolicy, LlmRisk, decide};
use riskgate::core::tools::{Approval, AssessContext, RiskAssessor, Tool, ToolError, ToolOutput};
use riskgate::tools::sql::SqlTool;
use secrecy::SecretString;
use serde_json::{Map, Value, json};

fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn tool_for(workspace: &Path, databases: Vec<DatabaseSettings>) -> SqlTool {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.to_path_buf();
    settings.sql.databases = databases;
    SqlTool::from_settings(&settings)
}

/// What the gate decided for `sql` with the model's `risk_level`, and what running it gave
/// when the decision was auto (the only case in which the bot runs it without a click).
async fn gate_and_run(
    tool: &SqlTool,
    sql: &str,
    risk_level: Option<&str>,
) -> (Decision, Option<Result<ToolOutput, ToolError>>) {
    let mut args = Map::new();
    args.insert("sql".into(), json!(sql));
    let assessment = tool.assess(&args, &AssessContext::default());
    let llm = LlmRisk::from_argument(risk_level.map(Value::from).as_ref());
    let decision = decide(GatePolicy::default(), ChannelMode::Smart, &llm, &assessment);
    let ran = match decision.decision {
        Decision::Auto => Some(tool.execute(&args, &Approval::Auto).await),
        _ => None,
    };
    (decision.decision, ran)
}

/// Asserts that `sql` waits for a click, without the model's `risk_level` and with its
/// `low`, and so did not run.
async fn assert_waits_even_when_low(tool: &SqlTool, sql: &str) {
    for risk in [None, Some("low")] {
        let (decision, ran) = gate_and_run(tool, sql, risk).await;
        assert_eq!(decision, Decision::Confirm, "{sql} {risk:?}");
        assert!(ran.is_none(), "{sql} {risk:?}");
    }
}

/// The process's peak resident memory so far, in KiB (Linux `VmHWM`).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn failure(result: Option<Result<ToolOutput, ToolError>>) -> String {
    match result {
        Some(Err(ToolError::Failed(message) | ToolError::Refused(message))) => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

mod sqlite {
    use super::*;

    #[tokio::test]
    async fn a_huge_blob_is_refused_by_the_engine_before_it_is_built() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool_for(dir.path(), Vec::new());
        let before = peak_rss_kib();
        let (decision, ran) = gate_and_run(&tool, "SELECT zeroblob(500000000)", None).await;
        let after = peak_rss_kib();
        assert_eq!(decision, Decision::Auto);
        let message = failure(ran);
        assert!(message.contains("too large"), "{message}");
        assert!(message.contains("max_value_bytes"), "{message}");
        say!("peak RSS {before} KiB before, {after} KiB after zeroblob(5e8)");
        assert!(
            after.saturating_sub(before) < 100 * 1024,
            "peak RSS grew by {} KiB",
            after - before
        );
        // Ordinary reads still run without a click.
        let (decision, ran) = gate_and_run(&tool, "SELECT count(*) FROM customers", None).await;
        assert_eq!(decision, Decision::Auto);
        assert!(ran.expect("ran").expect("a result").text.contains("12"));
    }

    /// `x IN table` (read as `x IN (SELECT * FROM table)`) and the compiled-in `dbstat`
    /// table run without a click and answer; a write using the same form waits, with or
    /// without the model's `low`, and changes nothing.
    #[tokio::test]
    async fn in_table_and_dbstat_read_and_their_writing_neighbours_wait() {
        let dir = tempfile::tempdir().unwrap();
        let tool = tool_for(dir.path(), Vec::new());
        let ids = "WITH ids(id) AS (SELECT id FROM customers ORDER BY id LIMIT 3)";
        let (decision, ran) = gate_and_run(
            &tool,
            &format!("{ids} SELECT count(*) AS n FROM customers WHERE id IN ids"),
            None,
        )
        .await;
        assert_eq!(decision, Decision::Auto);
        let text = ran.expect("ran").expect("a result").text;
        assert!(text.contains('3'), "{text}");
        let (decision, ran) = gate_and_run(
            &tool,
            "SELECT count(*) > 0 AS pages FROM dbstat WHERE name = 'customers'",
            None,
        )
        .await;
        assert_eq!(decision, Decision::Auto);
        let text = ran.expect("ran").expect("a result").text;
        assert!(text.contains('1'), "{text}");
        assert_waits_even_when_low(
            &tool,
            &format!("{ids} DELETE FROM customers WHERE id IN ids"),
        )
        .await;
        let (_, ran) = gate_and_run(&tool, "SELECT count(*) FROM customers", None).await;
        assert!(ran.expect("ran").expect("a result").text.contains("12"));
    }
}

mod postgres {
    use sqlx::{Connection, PgConnection};

    use super::*;

    const URL_VAR: &str = "RISKGATE_TEST_POSTGRES_URL";

    fn url() -> Option<String> {
        let url = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty());
        if url.is_none() {
            say!("skipped: {URL_VAR} not set");
        }
        url
    }

    async fn exec(url: &str, sql: &str) {
        let mut conn = PgConnection::connect(url).await.expect("connect");
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .expect("setup");
        conn.close().await.ok();
    }

    async fn count(url: &str, table: &str) -> i64 {
        let mut conn = PgConnection::connect(url).await.expect("connect");
        let n: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
                .fetch_one(&mut conn)
                .await
                .expect("count");
        conn.close().await.ok();
        n
    }

    fn as_user(url: &str, user: &str) -> String {
        let mut parsed = url::Url::parse(url).expect("a URL");
        parsed.set_username(user).expect("a user");
        let _ = parsed.set_password(None);
        parsed.to_string()
    }

    /// A schema with a table and a least-privilege role `<schema>_ro`; a tool whose auto
    /// runs use that role.
    async fn scratch(url: &str) -> (String, SqlTool) {
        let s = unique("rg_walls");
        exec(
            url,
            &format!(
                "CREATE SCHEMA {s};
                 CREATE TABLE {s}.log (id serial PRIMARY KEY, note text);
                 INSERT INTO {s}.log (note) VALUES ('one'), ('two');
                 CREATE FUNCTION {s}.scribble() RETURNS int LANGUAGE plpgsql SECURITY DEFINER
                   AS $$ BEGIN INSERT INTO {s}.log (note) VALUES ('scribbled'); RETURN 1; END $$;
                 CREATE ROLE {s}_ro LOGIN;
                 GRANT USAGE ON SCHEMA {s} TO {s}_ro;
                 GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {s}_ro;"
            ),
        )
        .await;
        let mut db = DatabaseSettings::new("pg", url);
        db.readonly_url = Some(SecretString::from(as_user(url, &format!("{s}_ro"))));
        (s, tool_for(&std::env::temp_dir(), vec![db]))
    }

    async fn drop_scratch(url: &str, s: &str) {
        exec(
            url,
            &format!("DROP SCHEMA {s} CASCADE; DROP OWNED BY {s}_ro; DROP ROLE {s}_ro"),
        )
        .await;
    }

    #[tokio::test]
    async fn a_do_block_running_a_program_never_runs_on_the_models_word() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        let marker = std::env::temp_dir().join(unique("rg_walls_marker"));
        let sql = format!(
            "DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {}'''; END $$",
            marker.display()
        );
        let (decision, ran) = gate_and_run(&tool, &sql, Some("low")).await;
        assert_eq!(decision, Decision::Confirm);
        assert!(ran.is_none());
        assert!(!marker.exists(), "the program ran");
        drop_scratch(&url, &s).await;
    }

    #[tokio::test]
    async fn an_escaped_server_file_reader_is_not_auto() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        for sql in [
            r#"SELECT U&"pg\005fread_file"('/etc/hostname')"#,
            r#"SELECT pg_catalog.U&"pg!005fread!005ffile" UESCAPE '!'('/etc/hostname')"#,
            "SELECT query_to_xml('SELECT pg_read_file(''/etc/hostname'')', true, true, '')",
            "SELECT ts_rewrite('a'::tsquery, 'SELECT pg_read_file(''/etc/hostname'')::tsquery, ''b''::tsquery')",
        ] {
            let (decision, ran) = gate_and_run(&tool, sql, Some("low")).await;
            assert_eq!(decision, Decision::Confirm, "{sql}");
            assert!(ran.is_none(), "{sql}");
        }
        drop_scratch(&url, &s).await;
    }

    #[tokio::test]
    async fn a_writing_user_function_may_auto_run_but_cannot_write() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        let sql = format!("SELECT {s}.scribble()");
        // Without the model's word, an unknown function needs a click.
        let (decision, _) = gate_and_run(&tool, &sql, None).await;
        assert_eq!(decision, Decision::Confirm);
        // With `low` it runs, as the read-only role in a read-only transaction: even a
        // SECURITY DEFINER function owned by a superuser cannot write.
        let (decision, ran) = gate_and_run(&tool, &sql, Some("low")).await;
        assert_eq!(decision, Decision::Auto);
        let message = failure(ran);
        assert!(message.contains("read-only"), "{message}");
        assert_eq!(count(&url, &format!("{s}.log")).await, 2);
        // Ordinary reads run without a click on the least-privilege account.
        let (decision, ran) =
            gate_and_run(&tool, &format!("SELECT count(*) FROM {s}.log"), None).await;
        assert_eq!(decision, Decision::Auto);
        assert!(ran.expect("ran").expect("a result").text.contains('2'));
        drop_scratch(&url, &s).await;
    }

    #[tokio::test]
    async fn a_superuser_auto_account_is_refused_until_the_operator_allows_it() {
        let Some(url) = url() else { return };
        // A session the statement would end if it ran as a superuser.
        let mut victim = PgConnection::connect(&url).await.expect("connect");
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut victim)
            .await
            .expect("pid");
        let sql = format!("SELECT pg_terminate_backend({pid})");
        let args = {
            let mut args = Map::new();
            args.insert("sql".into(), json!(sql));
            args
        };
        // As if the gate had let it through: the executor refuses on a superuser account.
        let refused = tool_for(
            &std::env::temp_dir(),
            vec![DatabaseSettings::new("pg", &url)],
        );
        match refused.execute(&args, &Approval::Auto).await {
            Err(ToolError::Refused(message)) => {
                assert!(message.contains("superuser"), "{message}");
                assert!(message.contains("risk_level \"medium\""), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        let alive: i32 = sqlx::query_scalar("SELECT 1")
            .fetch_one(&mut victim)
            .await
            .expect("the session survived");
        assert_eq!(alive, 1);
        // The operator's override lets the same account run it (and the wall does not
        // hold a superuser: the other session ends).
        let mut db = DatabaseSettings::new("pg", &url);
        db.allow_privileged_auto = true;
        let allowed = tool_for(&std::env::temp_dir(), vec![db]);
        let out = allowed.execute(&args, &Approval::Auto).await.expect("ran");
        assert!(out.text.contains("true"), "{}", out.text);
        assert!(
            sqlx::query_scalar::<_, i32>("SELECT 1")
                .fetch_one(&mut victim)
                .await
                .is_err()
        );
    }

    /// A REPLICATION role's read-only transaction can still consume a logical slot's changes
    /// (`pg_logical_slot_get_changes`), so such an account is privileged for auto runs.
    #[tokio::test]
    async fn a_replication_auto_account_is_refused_until_the_operator_allows_it() {
        let Some(url) = url() else { return };
        let role = unique("rg_repl");
        let mut admin = PgConnection::connect(&url).await.expect("connect");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE ROLE {role} LOGIN REPLICATION"
        )))
        .execute(&mut admin)
        .await
        .expect("role");
        let mut parsed = url::Url::parse(&url).expect("url");
        parsed.set_username(&role).expect("user");
        let as_role = parsed.to_string();
        let refused = tool_for(
            &std::env::temp_dir(),
            vec![DatabaseSettings::new("pg", &as_role)],
        );
        let (decision, ran) = gate_and_run(&refused, "SELECT 1", None).await;
        assert_eq!(decision, Decision::Auto);
        let message = failure(ran);
        assert!(message.contains("REPLICATION"), "{message}");
        let mut db = DatabaseSettings::new("pg", &as_role);
        db.allow_privileged_auto = true;
        let allowed = tool_for(&std::env::temp_dir(), vec![db]);
        let (_, ran) = gate_and_run(&allowed, "SELECT 41 + 1", None).await;
        assert!(ran.expect("ran").expect("a result").text.contains("42"));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP ROLE {role}")))
            .execute(&mut admin)
            .await
            .expect("cleanup");
    }

    /// The size functions run without a click on the least-privilege account and answer;
    /// beside them, a function that ends a session still waits, with the model's `low` too.
    #[tokio::test]
    async fn size_functions_read_and_a_session_killer_beside_them_waits() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        let (decision, ran) = gate_and_run(
            &tool,
            &format!(
                "SELECT pg_total_relation_size('{s}.log') >= pg_relation_size('{s}.log') AS ok, \
                 pg_size_pretty(pg_table_size('{s}.log') + pg_indexes_size('{s}.log')) AS size, \
                 pg_database_size(current_database()) > 0 AS db"
            ),
            None,
        )
        .await;
        assert_eq!(decision, Decision::Auto);
        let text = ran.expect("ran").expect("a result").text;
        assert!(text.contains("true") && text.contains("kB"), "{text}");
        let mut victim = PgConnection::connect(&url).await.expect("connect");
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut victim)
            .await
            .expect("pid");
        assert_waits_even_when_low(
            &tool,
            &format!("SELECT pg_terminate_backend({pid}), pg_relation_size('{s}.log')"),
        )
        .await;
        let alive: i32 = sqlx::query_scalar("SELECT 1")
            .fetch_one(&mut victim)
            .await
            .expect("the session survived");
        assert_eq!(alive, 1);
        drop_scratch(&url, &s).await;
    }

    /// SQL given to `query_to_xml` and `ts_stat` as a literal is judged as the query it is:
    /// a safe one runs without a click, on the least-privilege account; a literal that
    /// advances a sequence waits, and the sequence stays where it was.
    #[tokio::test]
    async fn sql_given_as_text_is_judged_as_the_query_it_is() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        let (decision, ran) = gate_and_run(
            &tool,
            &format!(
                "SELECT query_to_xml('SELECT note FROM {s}.log ORDER BY id', true, false, '')"
            ),
            None,
        )
        .await;
        assert_eq!(decision, Decision::Auto);
        let text = ran.expect("ran").expect("a result").text;
        assert!(text.contains("<note>one</note>"), "{text}");
        let (decision, ran) = gate_and_run(
            &tool,
            &format!(
                "SELECT word, ndoc FROM ts_stat('SELECT to_tsvector(''simple'', note) FROM {s}.log') ORDER BY word"
            ),
            None,
        )
        .await;
        assert_eq!(decision, Decision::Auto);
        let text = ran.expect("ran").expect("a result").text;
        assert!(text.contains("two"), "{text}");
        exec(
            &url,
            &format!("CREATE SEQUENCE {s}.seq; GRANT USAGE ON SEQUENCE {s}.seq TO {s}_ro"),
        )
        .await;
        assert_waits_even_when_low(
            &tool,
            &format!("SELECT query_to_xml('SELECT nextval(''{s}.seq'')', true, false, '')"),
        )
        .await;
        let mut conn = PgConnection::connect(&url).await.expect("connect");
        let called: bool = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT is_called FROM {s}.seq"
        )))
        .fetch_one(&mut conn)
        .await
        .expect("sequence state");
        assert!(!called, "the sequence advanced");
        conn.close().await.ok();
        drop_scratch(&url, &s).await;
    }

    #[tokio::test]
    async fn huge_values_and_error_texts_are_cut_while_reading() {
        let Some(url) = url() else { return };
        let (s, tool) = scratch(&url).await;
        let bytes: u64 = std::env::var("RISKGATE_TEST_HUGE_BYTES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(200_000_000);
        let before = peak_rss_kib();
        let (decision, ran) =
            gate_and_run(&tool, &format!("SELECT repeat('x', {bytes})"), None).await;
        let after = peak_rss_kib();
        assert_eq!(decision, Decision::Auto);
        let message = failure(ran);
        assert!(message.contains("max_value_bytes"), "{message}");
        say!("peak RSS {before} KiB before, {after} KiB after repeat('x', {bytes})");
        // The server held the value back: the bot never read it.
        assert!(
            after.saturating_sub(before) < 100 * 1024,
            "peak RSS grew by {} KiB for a value of {bytes} bytes",
            after.saturating_sub(before)
        );
        // An engine error that echoes a long value is cut before it goes anywhere.
        let (_, ran) = gate_and_run(&tool, "SELECT repeat('y', 300000)::int", None).await;
        let message = failure(ran);
        assert!(message.len() < 3_000, "{} characters", message.len());
        assert!(message.contains("cut"), "{message}");
        drop_scratch(&url, &s).await;
    }
}

mod mysql {
    use sqlx::{Connection, MySqlConnection};

    use super::*;

    const URL_VAR: &str = "RISKGATE_TEST_MYSQL_URL";

    fn url() -> Option<String> {
        let url = std::env::var(URL_VAR).ok().filter(|u| !u.is_empty());
        if url.is_none() {
            say!("skipped: {URL_VAR} not set");
        }
        url
    }

    async fn exec(conn: &mut MySqlConnection, sql: String) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(conn)
            .await
            .expect("setup or cleanup");
    }

    /// A connection and a new table `t (id INT PRIMARY KEY, n INT)` holding (1, 10), (2, 20).
    async fn scratch(url: &str) -> (MySqlConnection, String) {
        let t = unique("rg_walls");
        let mut conn = MySqlConnection::connect(url).await.expect("connect");
        exec(
            &mut conn,
            format!(
                "CREATE TABLE {t} (id INT PRIMARY KEY, n INT); INSERT INTO {t} VALUES (1, 10), (2, 20)"
            ),
        )
        .await;
        (conn, t)
    }

    #[tokio::test]
    async fn a_privileged_auto_account_is_refused_until_the_operator_allows_it() {
        let Some(url) = url() else { return };
        let (mut conn, t) = scratch(&url).await;
        let sql = format!("SELECT count(*) FROM {t}");
        let refused = tool_for(
            &std::env::temp_dir(),
            vec![DatabaseSettings::new("m", &url)],
        );
        let (decision, ran) = gate_and_run(&refused, &sql, None).await;
        assert_eq!(decision, Decision::Auto);
        let message = failure(ran);
        assert!(message.contains("privileged"), "{message}");
        assert!(message.contains("risk_level \"medium\""), "{message}");
        let mut db = DatabaseSettings::new("m", &url);
        db.allow_privileged_auto = true;
        let allowed = tool_for(&std::env::temp_dir(), vec![db]);
        let (_, ran) = gate_and_run(&allowed, &sql, None).await;
        assert!(ran.expect("ran").expect("a result").text.contains('2'));
        // A huge value: the server's max_allowed_packet makes it NULL, or riskgate stops.
        let before = peak_rss_kib();
        let (_, ran) = gate_and_run(&allowed, "SELECT REPEAT('x', 500000000)", None).await;
        let after = peak_rss_kib();
        say!("peak RSS {before} KiB before, {after} KiB after REPEAT('x', 5e8): {ran:?}");
        assert!(after.saturating_sub(before) < 100 * 1024);
        exec(&mut conn, format!("DROP TABLE {t}")).await;
        conn.close().await.ok();
    }

    /// MariaDB's forms that sqlparser cannot parse run without a click when they only read
    /// (`EXPLAIN EXTENDED`, `ANALYZE SELECT`, `DO`, `CHECKSUM TABLE`, `HELP`), and answer;
    /// the code of an executable comment `/*M! ... */` is read as MariaDB runs it;
    /// their writing neighbours (`ANALYZE UPDATE`, which runs the update, `ANALYZE TABLE`,
    /// `CHECK`, `OPTIMIZE`, `REPAIR TABLE`, `DO` with a lock) wait, with the model's `low`
    /// too, and the table is unchanged.
    #[tokio::test]
    async fn mariadb_reads_run_and_their_writing_neighbours_wait() {
        let Some(url) = url() else { return };
        let (mut conn, t) = scratch(&url).await;
        // The test server's account is privileged; the operator's override lets auto runs
        // use it, so what the gate lets through really runs.
        let mut db = DatabaseSettings::new("m", &url);
        db.allow_privileged_auto = true;
        let tool = tool_for(&std::env::temp_dir(), vec![db]);
        for (sql, answer) in [
            (
                format!("EXPLAIN EXTENDED SELECT * FROM {t} WHERE id = 1"),
                "const",
            ),
            (format!("ANALYZE SELECT n FROM {t} WHERE id > 0"), "r_rows"),
            (format!("DO 1 IN (SELECT id FROM {t})"), ""),
            (format!("CHECKSUM TABLE {t}"), "Checksum"),
            ("HELP 'no_such_topic_at_all'".to_owned(), ""),
            // MariaDB runs the code of its executable comments, and so the check reads it.
            ("SELECT 40 /*M! + 2 */ AS answer".to_owned(), "42"),
        ] {
            let (decision, ran) = gate_and_run(&tool, &sql, None).await;
            assert_eq!(decision, Decision::Auto, "{sql}");
            let text = ran
                .expect("ran")
                .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
                .text;
            assert!(text.contains(answer), "{sql}: {text}");
        }
        // ANALYZE TABLE only writes statistics: the model's `low` may run it, like any
        // other write the check can read, so it is only asked about without one.
        let (decision, ran) = gate_and_run(&tool, &format!("ANALYZE TABLE {t}"), None).await;
        assert_eq!(decision, Decision::Confirm);
        assert!(ran.is_none());
        for sql in [
            format!("ANALYZE UPDATE {t} SET n = 0"),
            format!("ANALYZE FORMAT=JSON DELETE FROM {t}"),
            format!("CHECK TABLE {t}"),
            format!("OPTIMIZE TABLE {t}"),
            format!("REPAIR TABLE {t}"),
            format!("ANALYZE SELECT * FROM {t} FOR UPDATE"),
            "DO GET_LOCK('rg_walls', 1)".to_owned(),
            format!("SELECT n FROM {t} /*M! INTO OUTFILE '/tmp/{t}.out' */"),
        ] {
            assert_waits_even_when_low(&tool, &sql).await;
        }
        let sum: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT CAST(SUM(n) AS SIGNED) FROM {t}"
        )))
        .fetch_one(&mut conn)
        .await
        .expect("sum");
        assert_eq!(sum, 30);
        exec(&mut conn, format!("DROP TABLE {t}")).await;
        conn.close().await.ok();
    }
}
