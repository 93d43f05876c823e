//! The SQL assessor's tests: the labelled corpus first, then generalisations of each kind of
//! case (other functions in other places, deeper nesting, other dialects, operator rules,
//! unparseable text, and inputs built to exhaust the stack).

use super::*;
use crate::core::risk::{ChannelMode, Decision, GatePolicy, LlmRisk, decide};

use ChannelMode::{Smart, Strict};
use Decision::{Auto, Confirm};
use Kind::{Destructive, Forbidden, Safe, Unknown};
use SqlDialect::{Mysql, Postgres, Sqlite};

/// The assessment's variant, without its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Safe,
    Unknown,
    Destructive,
    Forbidden,
}

fn kind(assessment: &Assessment) -> Kind {
    match assessment {
        Assessment::Safe(_) => Safe,
        Assessment::Unknown(_) => Unknown,
        Assessment::Destructive(_) => Destructive,
        Assessment::Forbidden(_) => Forbidden,
    }
}

/// Checks a table of `(sql, dialect, kind)` and reports every mismatch at once.
fn check(cases: &[(&str, SqlDialect, Kind)], rules: &SqlRules) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|&(sql, dialect, expected)| {
            let assessment = assess_sql(sql, dialect, rules);
            (kind(&assessment) != expected)
                .then(|| format!("{dialect} {sql:?}: expected {expected:?}, got {assessment:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn no_rules() -> SqlRules {
    SqlRules::default()
}

type CorpusCase = (
    &'static str,
    SqlDialect,
    Option<&'static str>,
    ChannelMode,
    Decision,
    Kind,
);

/// Every `execute_sql` case of `tests/data/risk_cases.jsonl`: SQL, dialect, the LLM's
/// `risk_level`, channel mode, the gate's expected decision, and the assessment this module
/// gives (auto without `risk_level` = Safe; confirm = not Safe; `low` + confirm = Destructive).
#[rustfmt::skip]
const CORPUS: &[CorpusCase] = &[
    // plain SELECT
    ("SELECT id, name FROM users WHERE id = 1", Postgres, None, Smart, Auto, Safe),
    // trailing empty statements; still one real statement
    ("SELECT 1;;", Postgres, None, Smart, Auto, Safe),
    // plain CTE
    ("WITH t AS (SELECT 1 AS x) SELECT x FROM t", Postgres, None, Smart, Auto, Safe),
    // VALUES is a query
    ("VALUES (1, 'a'), (2, 'b')", Postgres, None, Smart, Auto, Safe),
    // pg shorthand for SELECT * FROM users
    ("TABLE users", Postgres, None, Smart, Auto, Safe),
    // dollar-quoted literal containing ; (naive splitter false positive)
    ("SELECT $$;DROP TABLE users;$$ AS s", Postgres, None, Smart, Auto, Safe),
    // doubled quote keeps DELETE inside the literal
    ("SELECT * FROM users WHERE name = 'x''; DELETE FROM users; --'", Postgres, None, Smart, Auto, Safe),
    // harmless builtin functions
    ("SELECT now(), current_user, version(), lower(name) FROM users", Postgres, None, Smart, Auto, Safe),
    // catalog read (info disclosure only)
    ("SELECT count(*) FROM pg_stat_activity", Postgres, None, Smart, Auto, Safe),
    // SHOW is read-only in pg
    ("SHOW search_path", Postgres, None, Smart, Auto, Safe),
    // SHOW ALL
    ("SHOW ALL", Postgres, None, Smart, Auto, Safe),
    // EXPLAIN options without ANALYZE
    ("EXPLAIN (FORMAT JSON, VERBOSE) SELECT * FROM users", Postgres, None, Smart, Auto, Safe),
    // ANALYZE executes, but the inner statement is a pure SELECT
    ("EXPLAIN ANALYZE SELECT * FROM users", Postgres, None, Smart, Auto, Safe),
    // FETCH FIRST is not a lock/cursor
    ("SELECT * FROM users ORDER BY id FETCH FIRST 5 ROWS ONLY", Postgres, None, Smart, Auto, Safe),
    // set operations
    ("(SELECT 1) UNION ALL (SELECT 2) EXCEPT SELECT 3", Postgres, None, Smart, Auto, Safe),
    // second statement
    ("SELECT 1; DROP TABLE users", Postgres, None, Smart, Confirm, Destructive),
    // block comment then second statement
    ("SELECT 1 /* harmless */; DELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // leading comment fools prefix check that strips nothing/ wrongly
    ("/* SELECT */ DELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // line comment then DML
    ("-- SELECT\nDELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // flips a fresh READ ONLY tx to RW before first query (verified)
    ("SET TRANSACTION READ WRITE; INSERT INTO audit VALUES (1)", Postgres, None, Smart, Confirm, Destructive),
    // explicit tx with DML
    ("BEGIN; DELETE FROM users; COMMIT", Postgres, None, Smart, Confirm, Destructive),
    // data-modifying CTE
    ("WITH u AS (UPDATE accounts SET balance = 0 RETURNING id) SELECT count(*) FROM u", Postgres, None, Smart, Confirm, Destructive),
    // data-modifying CTE
    ("WITH i AS (INSERT INTO audit(msg) VALUES ('x') RETURNING id) SELECT id FROM i", Postgres, None, Smart, Confirm, Destructive),
    // EXPLAIN ANALYZE executes the DELETE
    ("EXPLAIN ANALYZE DELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // ANALYZE inside the option list, not the bare keyword
    ("EXPLAIN (ANALYZE, BUFFERS) UPDATE users SET name = 'x'", Postgres, None, Smart, Confirm, Destructive),
    // EXPLAIN ANALYZE of a data-modifying CTE
    ("EXPLAIN ANALYZE WITH d AS (DELETE FROM audit RETURNING 1) SELECT * FROM d", Postgres, None, Smart, Confirm, Destructive),
    // SELECT INTO creates a table
    ("SELECT * INTO new_users FROM users", Postgres, None, Smart, Confirm, Unknown),
    // row locks
    ("SELECT * FROM accounts WHERE id = 1 FOR UPDATE", Postgres, None, Smart, Confirm, Unknown),
    // row locks
    ("SELECT * FROM accounts FOR SHARE SKIP LOCKED", Postgres, None, Smart, Confirm, Unknown),
    // kills sessions; allowed in READ ONLY tx (verified)
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'", Postgres, None, Smart, Confirm, Destructive),
    // schema-qualified dangerous function
    ("SELECT pg_catalog.pg_terminate_backend(1)", Postgres, None, Smart, Confirm, Destructive),
    // upper-case dangerous function
    ("SELECT PG_CANCEL_BACKEND(12345)", Postgres, None, Smart, Confirm, Destructive),
    // DoS; only statement_timeout stops it
    ("SELECT pg_sleep(3600)", Postgres, None, Smart, Confirm, Unknown),
    // reads server files (superuser/pg_read_server_files)
    ("SELECT pg_read_file('/etc/passwd')", Postgres, None, Smart, Confirm, Destructive),
    // reads server file into a large object; allowed in READ ONLY tx for superuser (verified)
    ("SELECT lo_import('/etc/passwd')", Postgres, None, Smart, Confirm, Destructive),
    // executes on another connection: escapes READ ONLY tx (verified)
    ("SELECT dblink_exec('dbname=prod', 'DROP TABLE users')", Postgres, None, Smart, Confirm, Destructive),
    // dblink() runs arbitrary SQL on a new connection (verified)
    ("SELECT * FROM dblink('dbname=prod', 'DELETE FROM t RETURNING 1') AS t(x int)", Postgres, None, Smart, Confirm, Destructive),
    // search_path hijack for later statements on pooled conn
    ("SELECT set_config('search_path', 'evil, public', false)", Postgres, None, Smart, Confirm, Unknown),
    // advances a sequence (blocked by READ ONLY, but not read-only)
    ("SELECT nextval('orders_id_seq')", Postgres, None, Smart, Confirm, Unknown),
    // nextval nested in subquery
    ("SELECT * FROM users WHERE id = (SELECT nextval('s'))", Postgres, None, Smart, Confirm, Unknown),
    // session-level lock survives ROLLBACK; allowed in READ ONLY (verified)
    ("SELECT pg_advisory_lock(42)", Postgres, None, Smart, Confirm, Unknown),
    // sends a notification
    ("SELECT pg_notify('ch', 'payload')", Postgres, None, Smart, Confirm, Unknown),
    // server admin function; allowed in READ ONLY for superuser (verified)
    ("SELECT pg_reload_conf()", Postgres, None, Smart, Confirm, Unknown),
    // runs a shell command; allowed in READ ONLY for superuser (verified)
    ("COPY (SELECT * FROM users) TO PROGRAM 'cat > /tmp/dump'", Postgres, None, Smart, Confirm, Destructive),
    // writes a server file; allowed in READ ONLY for superuser (verified)
    ("COPY users TO '/tmp/users.csv'", Postgres, None, Smart, Confirm, Destructive),
    // read-only in effect, but policy: never auto-run COPY (needs copy_out_raw in sqlx)
    ("COPY users TO STDOUT", Postgres, None, Smart, Confirm, Unknown),
    // session state change
    ("SET search_path TO evil, public", Postgres, None, Smart, Confirm, Unknown),
    // session state change
    ("RESET ALL", Postgres, None, Smart, Confirm, Unknown),
    // anonymous code block
    ("DO $$ BEGIN DELETE FROM users; END $$", Postgres, None, Smart, Confirm, Destructive),
    // privilege change
    ("GRANT ALL ON users TO public", Postgres, None, Smart, Confirm, Destructive),
    // privilege change
    ("REVOKE SELECT ON users FROM app", Postgres, None, Smart, Confirm, Destructive),
    // maintenance write; cannot run in a tx block
    ("VACUUM users", Postgres, None, Smart, Confirm, Unknown),
    // writes statistics; allowed in READ ONLY tx in pg15 (verified)
    ("ANALYZE users", Postgres, None, Smart, Confirm, Unknown),
    // side effect
    ("NOTIFY ch, 'x'", Postgres, None, Smart, Confirm, Unknown),
    // session state
    ("LISTEN ch", Postgres, None, Smart, Confirm, Unknown),
    // runs an unknown prepared statement
    ("EXECUTE p", Postgres, None, Smart, Confirm, Destructive),
    // cursor outlives tx
    ("DECLARE c CURSOR WITH HOLD FOR SELECT * FROM users", Postgres, None, Smart, Confirm, Unknown),
    // DDL-ish write
    ("TRUNCATE users", Postgres, None, Smart, Confirm, Destructive),
    // DML with RETURNING looks like a query
    ("INSERT INTO users(name) VALUES ('x') RETURNING id", Postgres, None, Smart, Confirm, Unknown),
    // DML
    ("DELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // DML (pg15+)
    ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", Postgres, None, Smart, Confirm, Destructive),
    // DDL (temp)
    ("CREATE TEMP TABLE t AS SELECT 1", Postgres, None, Smart, Confirm, Unknown),
    // DDL
    ("ALTER TABLE users ADD COLUMN x int", Postgres, None, Smart, Confirm, Destructive),
    // write
    ("REFRESH MATERIALIZED VIEW mv", Postgres, None, Smart, Confirm, Destructive),
    // DDL, enables remote exec
    ("CREATE EXTENSION dblink", Postgres, None, Smart, Confirm, Unknown),
    // Cyrillic Ie lookalike: not a keyword; unparseable -> never auto-run
    ("S\u{415}LECT 1", Postgres, None, Smart, Confirm, Destructive),
    // zero-width space prefix defeats naive trimming/prefix logic
    ("\u{200b}DELETE FROM users", Postgres, None, Smart, Confirm, Destructive),
    // no-break space is not SQL whitespace in pg: unparseable -> confirm
    ("SELECT\u{a0}1", Postgres, None, Smart, Confirm, Destructive),
    // empty input: 0 statements -> reject, nothing to auto-run
    ("", Postgres, None, Smart, Confirm, Unknown),
    // 0 statements -> reject
    ("-- only a comment", Postgres, None, Smart, Confirm, Unknown),
    // parse error -> confirm/reject
    ("SELECT 1 /* unterminated", Postgres, None, Smart, Confirm, Destructive),
    // backtick identifiers and literals named like keywords
    ("select `select`, `delete` from `update` where `drop` = 'DROP TABLE x'", Mysql, None, Smart, Auto, Safe),
    // metadata
    ("SHOW TABLES", Mysql, None, Smart, Auto, Safe),
    // metadata
    ("SHOW COLUMNS FROM users", Mysql, None, Smart, Auto, Safe),
    // metadata
    ("SHOW CREATE TABLE users", Mysql, None, Smart, Auto, Safe),
    // metadata
    ("SHOW DATABASES", Mysql, None, Smart, Auto, Safe),
    // metadata (info disclosure only)
    ("SHOW PROCESSLIST", Mysql, None, Smart, Auto, Safe),
    // metadata
    ("DESC users", Mysql, None, Smart, Auto, Safe),
    // plan only
    ("EXPLAIN SELECT * FROM users WHERE id = 1", Mysql, None, Smart, Auto, Safe),
    // MySQL 8.0.19 VALUES statement
    ("VALUES ROW(1, 2), ROW(3, 4)", Mysql, None, Smart, Auto, Safe),
    // MySQL 8.0.19+ TABLE statement (MariaDB 10.11: syntax error)
    ("TABLE users", Mysql, None, Smart, Auto, Safe),
    // second statement (needs CLIENT_MULTI_STATEMENTS / text protocol)
    ("SELECT 1; DROP TABLE users", Mysql, None, Smart, Confirm, Destructive),
    // MySQL # comment hides nothing after newline
    ("SELECT 1 # hash comment\n; DELETE FROM users", Mysql, None, Smart, Confirm, Destructive),
    // INTO OUTFILE hidden in a versioned comment
    ("SELECT * FROM users /*!50000 INTO OUTFILE '/tmp/x.csv' */", Mysql, None, Smart, Confirm, Destructive),
    // writes a server file; allowed in READ ONLY tx (verified)
    ("SELECT * FROM users INTO OUTFILE '/tmp/users.csv'", Mysql, None, Smart, Confirm, Destructive),
    // INTO variable: session side effect; simplest rule = any INTO is not read-only
    ("SELECT id INTO @v FROM users LIMIT 1", Mysql, None, Smart, Confirm, Unknown),
    // reads server files (FILE privilege); works in READ ONLY tx (verified)
    ("SELECT LOAD_FILE('/etc/passwd')", Mysql, None, Smart, Confirm, Destructive),
    // sleep nested in WHERE
    ("SELECT * FROM users WHERE name = 'a' AND SLEEP(5)", Mysql, None, Smart, Confirm, Unknown),
    // CPU DoS
    ("SELECT BENCHMARK(1000000000, MD5('x'))", Mysql, None, Smart, Confirm, Unknown),
    // row locks
    ("SELECT * FROM users FOR UPDATE", Mysql, None, Smart, Confirm, Unknown),
    // row locks; NOT blocked by START TRANSACTION READ ONLY on MariaDB (verified), unlike FOR UPDATE
    ("SELECT * FROM users LOCK IN SHARE MODE", Mysql, None, Smart, Confirm, Destructive),
    // MariaDB sequence advance
    ("SELECT NEXTVAL(s)", Mysql, None, Smart, Confirm, Unknown),
    // server config; allowed in READ ONLY tx (verified)
    ("SET GLOBAL max_connections = 1", Mysql, None, Smart, Confirm, Unknown),
    // undoes session read-only for later statements
    ("SET SESSION TRANSACTION READ WRITE", Mysql, None, Smart, Confirm, Destructive),
    // session state
    ("SET autocommit = 0", Mysql, None, Smart, Confirm, Unknown),
    // procedure call
    ("CALL sp_cleanup()", Mysql, None, Smart, Confirm, Destructive),
    // MySQL DO evaluates expressions
    ("DO SLEEP(10)", Mysql, None, Smart, Confirm, Destructive),
    // global lock
    ("FLUSH TABLES WITH READ LOCK", Mysql, None, Smart, Confirm, Unknown),
    // kills a session
    ("KILL 123", Mysql, None, Smart, Confirm, Destructive),
    // DML
    ("REPLACE INTO users VALUES (1, 'x')", Mysql, None, Smart, Confirm, Destructive),
    // DML
    ("INSERT IGNORE INTO users VALUES (1, 'y')", Mysql, None, Smart, Confirm, Unknown),
    // DML
    ("UPDATE users SET name = 'x' WHERE 1 = 1", Mysql, None, Smart, Confirm, Destructive),
    // DML
    ("DELETE FROM users", Mysql, None, Smart, Confirm, Destructive),
    // bulk load
    ("LOAD DATA INFILE '/etc/passwd' INTO TABLE t", Mysql, None, Smart, Confirm, Destructive),
    // DDL: implicit commit escapes START TRANSACTION READ ONLY (verified)
    ("CREATE TABLE t2 (x int)", Mysql, None, Smart, Confirm, Unknown),
    // DDL
    ("RENAME TABLE a TO b", Mysql, None, Smart, Confirm, Destructive),
    // DDL
    ("DROP DATABASE app", Mysql, None, Smart, Confirm, Destructive),
    // MariaDB ANALYZE <stmt> really executes the DELETE (verified MariaDB 10.11)
    ("ANALYZE DELETE FROM users WHERE id = 1", Mysql, None, Smart, Confirm, Destructive),
    // MySQL 8.0.18+ EXPLAIN ANALYZE runs the statement (not verified here; MariaDB 10.11: syntax error)
    ("EXPLAIN ANALYZE DELETE FROM users WHERE id = 1", Mysql, None, Smart, Confirm, Destructive),
    // fullwidth SELECT: unparseable -> confirm
    ("\u{ff33}\u{ff25}\u{ff2c}\u{ff25}\u{ff23}\u{ff34} 1", Mysql, None, Smart, Confirm, Destructive),
    // empty input -> reject
    ("", Mysql, None, Smart, Confirm, Unknown),
    // quoted identifiers
    ("select * from \"users\" where \"name\" like 'a%'", Sqlite, None, Smart, Auto, Safe),
    // read-only pragma
    ("PRAGMA table_info(users)", Sqlite, None, Smart, Auto, Safe),
    // read-only pragma
    ("PRAGMA index_list(users)", Sqlite, None, Smart, Auto, Safe),
    // read-only pragma
    ("PRAGMA foreign_key_list(users)", Sqlite, None, Smart, Auto, Safe),
    // pragma read (no value)
    ("PRAGMA user_version", Sqlite, None, Smart, Auto, Safe),
    // read-only but can be slow
    ("PRAGMA integrity_check", Sqlite, None, Smart, Auto, Safe),
    // plan only
    ("EXPLAIN QUERY PLAN SELECT * FROM users", Sqlite, None, Smart, Auto, Safe),
    // SQLite EXPLAIN only lists bytecode, never executes (flagging is acceptable)
    ("EXPLAIN DELETE FROM users", Sqlite, None, Smart, Auto, Safe),
    // bounded recursive CTE
    ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 10) SELECT n FROM c", Sqlite, None, Smart, Auto, Safe),
    // read-only but never ends: needs a timeout/interrupt
    ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c) SELECT count(*) FROM c", Sqlite, None, Smart, Auto, Safe),
    // same, no spaces
    ("PRAGMA writable_schema=ON", Sqlite, None, Smart, Confirm, Unknown),
    // switches off the query_only guard itself
    ("PRAGMA query_only = 0", Sqlite, None, Smart, Confirm, Unknown),
    // changes journal mode (schema-qualified)
    ("PRAGMA main.journal_mode = DELETE", Sqlite, None, Smart, Confirm, Unknown),
    // disables integrity checks for the session
    ("PRAGMA foreign_keys = OFF", Sqlite, None, Smart, Confirm, Unknown),
    // creates/opens another file
    ("ATTACH DATABASE '/tmp/evil.db' AS evil", Sqlite, None, Smart, Confirm, Unknown),
    // URI attach can request rwc
    ("ATTACH 'file:other.db?mode=rwc' AS o", Sqlite, None, Smart, Confirm, Unknown),
    // rewrites the db file
    ("VACUUM", Sqlite, None, Smart, Confirm, Unknown),
    // writes a full copy of the db to a new file
    ("VACUUM INTO '/tmp/copy.db'", Sqlite, None, Smart, Confirm, Destructive),
    // rebuilds indexes
    ("REINDEX", Sqlite, None, Smart, Confirm, Destructive),
    // native code execution if enabled
    ("SELECT load_extension('/tmp/evil.so')", Sqlite, None, Smart, Confirm, Destructive),
    // second statement: sqlx-sqlite executes every statement in the string
    ("SELECT 1; DELETE FROM users", Sqlite, None, Smart, Confirm, Destructive),
    // line comment + second statement
    ("SELECT * FROM users WHERE id = 1 -- ok\n; DROP TABLE users", Sqlite, None, Smart, Confirm, Destructive),
    // DML
    ("INSERT OR REPLACE INTO kv VALUES ('a', 1)", Sqlite, None, Smart, Confirm, Destructive),
    // DML
    ("REPLACE INTO kv VALUES ('a', 1)", Sqlite, None, Smart, Confirm, Destructive),
    // DML
    ("DELETE FROM users", Sqlite, None, Smart, Confirm, Destructive),
    // DML whose text starts with WITH
    ("WITH x AS (SELECT 1 AS v) INSERT INTO t SELECT v FROM x", Sqlite, None, Smart, Confirm, Destructive),
    // temp DDL
    ("CREATE TEMP TABLE t (x)", Sqlite, None, Smart, Confirm, Unknown),
    // DDL
    ("CREATE VIRTUAL TABLE f USING fts5(body)", Sqlite, None, Smart, Confirm, Unknown),
    // takes the write lock
    ("BEGIN IMMEDIATE", Sqlite, None, Smart, Confirm, Destructive),
    // tx control
    ("SAVEPOINT a", Sqlite, None, Smart, Confirm, Destructive),
    // llm low on a read
    ("SELECT count(*) FROM users", Postgres, Some("low"), Smart, Auto, Safe),
    // llm high always confirms
    ("SELECT count(*) FROM users", Postgres, Some("high"), Smart, Confirm, Safe),
    // llm low cannot auto-run a write: only recognised read-only statements run without a click
    ("INSERT INTO audit(msg) VALUES ('hello')", Postgres, Some("low"), Smart, Auto, Unknown),
    // destructive floor: llm low cannot auto-run DROP
    ("DROP TABLE users", Postgres, Some("low"), Smart, Confirm, Destructive),
    // destructive floor: TRUNCATE
    ("TRUNCATE users", Postgres, Some("low"), Smart, Confirm, Destructive),
    // destructive floor: UPDATE
    ("UPDATE users SET admin = true", Postgres, Some("low"), Smart, Confirm, Destructive),
    // destructive floor: second statement drops
    ("SELECT 1; DROP TABLE users", Postgres, Some("low"), Smart, Confirm, Destructive),
    // destructive floor: ALTER
    ("ALTER TABLE users DROP COLUMN email", Postgres, Some("low"), Smart, Confirm, Destructive),
    // risk_level matched case-insensitively after trimming
    ("SELECT count(*) FROM users", Postgres, Some(" LOW "), Smart, Auto, Safe),
    // strict mode confirms everything
    ("SELECT 1", Sqlite, None, Strict, Confirm, Safe),
];

#[test]
fn corpus_assessments() {
    let cases: Vec<(&str, SqlDialect, Kind)> = CORPUS
        .iter()
        .map(|&(sql, dialect, _, _, _, kind)| (sql, dialect, kind))
        .collect();
    check(&cases, &no_rules());
}

#[test]
fn corpus_decisions_follow_from_the_assessments() {
    for &(sql, dialect, risk_level, mode, expected, _) in CORPUS {
        let assessment = assess_sql(sql, dialect, &no_rules());
        let llm = LlmRisk::from_argument(risk_level.map(serde_json::Value::from).as_ref());
        let decision = decide(GatePolicy::default(), mode, &llm, &assessment);
        assert_eq!(
            decision.decision, expected,
            "{dialect} {sql:?} (risk_level {risk_level:?}, {mode}): {assessment:?}"
        );
    }
}

#[test]
fn corpus_mapping_holds() {
    for &(sql, _, risk_level, mode, expected, kind) in CORPUS {
        match (risk_level, mode, expected) {
            (None, Smart, Auto) => assert_eq!(kind, Safe, "{sql:?}"),
            (None, Smart, Confirm) => assert_ne!(kind, Safe, "{sql:?}"),
            (Some(level), Smart, Confirm) if level.trim().eq_ignore_ascii_case("low") => {
                assert_eq!(kind, Destructive, "{sql:?}")
            }
            _ => {}
        }
    }
}

#[test]
fn side_effect_functions_anywhere_in_a_query() {
    check(
        &[
            ("SELECT * FROM pg_sleep(5)", Postgres, Unknown),
            ("SELECT * FROM LATERAL pg_sleep(1)", Postgres, Unknown),
            (
                "SELECT 1 WHERE EXISTS (SELECT pg_sleep(1))",
                Postgres,
                Unknown,
            ),
            (
                "SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM t",
                Postgres,
                Unknown,
            ),
            (
                "SELECT * FROM t ORDER BY pg_sleep_for('1 minute')",
                Postgres,
                Unknown,
            ),
            (
                "SELECT x FROM t GROUP BY x HAVING pg_sleep(1) IS NULL",
                Postgres,
                Unknown,
            ),
            (
                "SELECT CASE WHEN true THEN pg_advisory_xact_lock(1) END",
                Postgres,
                Unknown,
            ),
            (
                "SELECT * FROM t JOIN u ON pg_try_advisory_lock(1)",
                Postgres,
                Unknown,
            ),
            ("SELECT pg_sleep(1)::text", Postgres, Unknown),
            ("SELECT ARRAY[pg_sleep(1)]", Postgres, Unknown),
            (
                "SELECT * FROM t LIMIT (SELECT nextval('s'))",
                Postgres,
                Unknown,
            ),
            (
                "SELECT sum(x) OVER (PARTITION BY setval('s', 1)) FROM t",
                Postgres,
                Unknown,
            ),
            ("SELECT 1 UNION SELECT pg_sleep(1)", Postgres, Unknown),
            ("VALUES (nextval('s'))", Postgres, Unknown),
            ("SELECT txid_current()", Postgres, Unknown),
            (
                "SELECT query_to_xml('delete from t returning 1', true, true, '')",
                Postgres,
                Destructive,
            ),
            // SQL given as text is judged when it is a literal: a safe query runs in the
            // same read-only transaction; anything else keeps the function's own verdict.
            (
                "SELECT query_to_xml('select * from t', true, true, '')",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM ts_stat('SELECT vector FROM apod', 'ab')",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM ts_stat($q$SELECT v FROM t$q$)",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM crosstab('select r, a, v from ct order by 1', 'select distinct a from ct') AS x(r text, a text)",
                Postgres,
                Safe,
            ),
            (
                "SELECT ts_rewrite('a'::tsquery, 'SELECT t, s FROM aliases')",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM ts_stat('SELECT pg_sleep(10)')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM ts_stat('SELECT 1; SELECT 2')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM ts_stat('SELECT v FROM a' || 'b')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM ts_stat(E'SELECT v FROM a')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM ts_stat('SELECT v FROM a'::text)",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM crosstab('select 1, 2, 3', 'select pg_advisory_lock(1)') AS x(a int)",
                Postgres,
                Unknown,
            ),
            (
                "SELECT * FROM ts_stat('SELECT * FROM ts_stat(''SELECT lo_unlink(1)'')')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT query_to_xml('select 1', true, true, '')",
                Mysql,
                Destructive,
            ),
            ("SELECT * FROM pg_ls_dir('.')", Postgres, Destructive),
            (
                "SELECT lo_get(lo_import('/etc/passwd'))",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM dblink_connect('dbname=prod')",
                Postgres,
                Destructive,
            ),
            ("SELECT GET_LOCK('a', 10)", Mysql, Unknown),
            ("SELECT RELEASE_LOCK('a')", Mysql, Unknown),
            ("SELECT MASTER_POS_WAIT('f', 4)", Mysql, Unknown),
            (
                "SELECT * FROM t WHERE id IN (SELECT SLEEP(1))",
                Mysql,
                Unknown,
            ),
            (
                "SELECT id FROM t ORDER BY BENCHMARK(10, MD5(id))",
                Mysql,
                Unknown,
            ),
            ("SELECT SETVAL(s, 10)", Mysql, Unknown),
            ("SELECT readfile('/etc/passwd')", Sqlite, Destructive),
            // `:=` assigns a MySQL user variable from inside a SELECT.
            ("SELECT @a := 1", Mysql, Unknown),
            // Ordinary built-ins and table functions are fine.
            ("SELECT * FROM generate_series(1, 3)", Postgres, Safe),
            ("SELECT * FROM unnest(ARRAY[1, 2]) AS u(x)", Postgres, Safe),
            (
                "SELECT coalesce(max(x), 0), lower(name), now() FROM t",
                Postgres,
                Safe,
            ),
            ("SELECT * FROM pragma_table_info('users')", Sqlite, Safe),
            ("SELECT CONCAT(a, b), IFNULL(c, 0) FROM t", Mysql, Safe),
        ],
        &no_rules(),
    );
}

#[test]
fn destructive_functions_anywhere_in_a_query() {
    check(
        &[
            (
                "SELECT (SELECT pg_terminate_backend(1))",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM t WHERE x IN (SELECT lo_unlink(1))",
                Postgres,
                Destructive,
            ),
            ("SELECT lo_export(1, '/tmp/x')", Postgres, Destructive),
            (
                "SELECT \"pg_catalog\".\"PG_CANCEL_BACKEND\"(1)",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM dblink_exec('dbname=prod', 'DROP TABLE t')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT dblink_send_query('c', 'DELETE FROM t')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT pg_file_write('/tmp/x', 'y', false)",
                Postgres,
                Destructive,
            ),
            ("SELECT pg_stat_reset()", Postgres, Destructive),
            (
                "SELECT 1 FROM t WHERE pg_terminate_backend(pid)",
                Postgres,
                Destructive,
            ),
            ("SELECT sys_exec('rm -rf /')", Mysql, Destructive),
            (
                "SELECT * FROM t WHERE sys_eval('id') IS NULL",
                Mysql,
                Destructive,
            ),
            ("SELECT writefile('/tmp/x', 'y')", Sqlite, Destructive),
            (
                "SELECT load_extension('/tmp/x.so', 'entry')",
                Sqlite,
                Destructive,
            ),
            // A destructive function beats a lesser finding elsewhere in the statement.
            (
                "SELECT pg_sleep(1), pg_terminate_backend(2)",
                Postgres,
                Destructive,
            ),
            // CALL holds a function, not an expression.
            ("CALL pg_terminate_backend(1)", Postgres, Destructive),
            ("CALL sp_cleanup()", Mysql, Destructive),
        ],
        &no_rules(),
    );
}

#[test]
fn data_modifying_statements_nested_at_any_depth() {
    check(
        &[
            (
                "WITH a AS (WITH b AS (DELETE FROM t RETURNING 1) SELECT * FROM b) SELECT * FROM a",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM (WITH c AS (DELETE FROM t RETURNING 1) SELECT * FROM c) s",
                Postgres,
                Destructive,
            ),
            (
                "SELECT * FROM t WHERE id IN (WITH c AS (UPDATE t SET x = 1 RETURNING id) SELECT id FROM c)",
                Postgres,
                Destructive,
            ),
            (
                "WITH a AS (SELECT 1), b AS (INSERT INTO t VALUES (1) RETURNING 1) SELECT * FROM a",
                Postgres,
                Destructive,
            ),
            ("WITH s AS (SELECT 1) DELETE FROM t", Postgres, Destructive),
            (
                "WITH s AS (SELECT 1) UPDATE t SET x = 1",
                Sqlite,
                Destructive,
            ),
            (
                "WITH s AS (SELECT 1) INSERT INTO t SELECT * FROM s",
                Postgres,
                Destructive,
            ),
            (
                "WITH s AS (SELECT 1) REPLACE INTO t SELECT * FROM s",
                Sqlite,
                Destructive,
            ),
            // A prepared statement exists to be run.
            ("PREPARE p AS DELETE FROM t", Postgres, Destructive),
            (
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
                Postgres,
                Safe,
            ),
        ],
        &no_rules(),
    );
}

#[test]
fn select_into_and_locks_anywhere() {
    check(
        &[
            ("SELECT * INTO TEMP t FROM users", Postgres, Unknown),
            ("SELECT * INTO UNLOGGED t FROM users", Postgres, Unknown),
            ("SELECT a, b INTO @x, @y FROM t LIMIT 1", Mysql, Unknown),
            ("SELECT * FROM t FOR UPDATE OF t NOWAIT", Postgres, Unknown),
            // FIXME: sqlparser 0.63 cannot parse FOR NO KEY UPDATE, so the unparsed-text scan
            // sees the word UPDATE and over-rates a row lock as destructive.
            ("SELECT * FROM t FOR NO KEY UPDATE", Postgres, Destructive),
            ("SELECT * FROM t FOR KEY SHARE", Postgres, Destructive),
            (
                "SELECT * FROM (SELECT * FROM t FOR UPDATE) s",
                Postgres,
                Unknown,
            ),
            (
                "WITH l AS (SELECT * FROM t FOR SHARE) SELECT * FROM l",
                Postgres,
                Unknown,
            ),
            ("SELECT * FROM t FOR SHARE", Mysql, Unknown),
            (
                "SELECT * FROM t WHERE id = 1 FOR UPDATE SKIP LOCKED",
                Mysql,
                Unknown,
            ),
        ],
        &no_rules(),
    );
}

#[test]
fn explain_runs_its_statement_only_with_analyze() {
    check(
        &[
            (
                "EXPLAIN (ANALYZE true) DELETE FROM t",
                Postgres,
                Destructive,
            ),
            ("EXPLAIN (ANALYZE 1) DELETE FROM t", Postgres, Destructive),
            (
                "EXPLAIN (FORMAT JSON, ANALYZE on) DELETE FROM t",
                Postgres,
                Destructive,
            ),
            (
                "EXPLAIN (ANALYZE 'yes') UPDATE t SET x = 1",
                Postgres,
                Destructive,
            ),
            (
                "explain analyze verbose update t set x = 1",
                Postgres,
                Destructive,
            ),
            (
                "EXPLAIN ANALYZE MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
                Postgres,
                Destructive,
            ),
            (
                "EXPLAIN ANALYZE WITH s AS (SELECT 1) DELETE FROM t",
                Postgres,
                Destructive,
            ),
            (
                "EXPLAIN (ANALYZE) INSERT INTO t VALUES (1)",
                Postgres,
                Unknown,
            ),
            ("EXPLAIN ANALYZE SELECT pg_sleep(1)", Postgres, Unknown),
            (
                "EXPLAIN ANALYZE SELECT * FROM t FOR UPDATE",
                Postgres,
                Unknown,
            ),
            ("EXPLAIN ANALYZE UPDATE t SET x = 1", Mysql, Destructive),
            // Without ANALYZE nothing runs, whatever the statement.
            ("EXPLAIN (ANALYZE false) DELETE FROM t", Postgres, Safe),
            (
                "EXPLAIN (ANALYZE off, COSTS on) DELETE FROM t",
                Postgres,
                Safe,
            ),
            ("EXPLAIN (ANALYZE 0) DROP TABLE t", Postgres, Safe),
            ("EXPLAIN DELETE FROM t", Postgres, Safe),
            ("EXPLAIN VERBOSE INSERT INTO t VALUES (1)", Postgres, Safe),
            ("EXPLAIN FORMAT=JSON DELETE FROM t", Mysql, Safe),
            ("DESCRIBE SELECT * FROM t", Mysql, Safe),
            ("EXPLAIN UPDATE users SET name = 'x'", Sqlite, Safe),
            (
                "EXPLAIN QUERY PLAN DELETE FROM users WHERE id = 1",
                Sqlite,
                Safe,
            ),
            // Planners may fold constant calls, so side-effect functions still count.
            ("EXPLAIN SELECT pg_sleep(10)", Postgres, Unknown),
        ],
        &no_rules(),
    );
}

#[test]
fn statement_kinds() {
    check(
        &[
            // Destructive: removes, overwrites, changes privileges or the schema.
            ("DROP INDEX i", Sqlite, Destructive),
            ("DROP VIEW IF EXISTS v", Mysql, Destructive),
            ("DROP FUNCTION f", Postgres, Destructive),
            ("DROP SCHEMA s CASCADE", Postgres, Destructive),
            ("TRUNCATE TABLE t", Mysql, Destructive),
            ("DELETE FROM t WHERE id = 1", Sqlite, Destructive),
            ("UPDATE OR REPLACE t SET x = 1", Sqlite, Destructive),
            ("ALTER INDEX i RENAME TO j", Postgres, Destructive),
            ("ALTER VIEW v AS SELECT 2", Mysql, Destructive),
            ("ALTER TABLE t RENAME TO u", Sqlite, Destructive),
            ("ALTER ROLE r WITH SUPERUSER", Postgres, Destructive),
            ("GRANT SELECT ON t TO u", Mysql, Destructive),
            ("REVOKE ALL ON t FROM public", Postgres, Destructive),
            ("KILL QUERY 7", Mysql, Destructive),
            (
                "INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE x = 1",
                Mysql,
                Destructive,
            ),
            (
                "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET x = 1",
                Postgres,
                Destructive,
            ),
            (
                "INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET x = excluded.x",
                Sqlite,
                Destructive,
            ),
            ("REPLACE INTO t SELECT * FROM s", Mysql, Destructive),
            (
                "CREATE OR REPLACE VIEW v AS SELECT 1",
                Postgres,
                Destructive,
            ),
            ("CREATE OR REPLACE VIEW v AS SELECT 1", Mysql, Destructive),
            ("CREATE OR REPLACE TABLE t (x int)", Mysql, Destructive),
            (
                "CREATE OR REPLACE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql",
                Postgres,
                Destructive,
            ),
            ("COPY t FROM PROGRAM 'curl x'", Postgres, Destructive),
            ("COPY (SELECT 1) TO '/tmp/x'", Postgres, Destructive),
            // Unknown: writes or session changes that do not destroy.
            (
                "INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
                Postgres,
                Unknown,
            ),
            ("INSERT OR IGNORE INTO t VALUES (1)", Sqlite, Unknown),
            ("CREATE INDEX i ON t (x)", Postgres, Unknown),
            ("CREATE ROLE r", Postgres, Unknown),
            ("CREATE TABLE IF NOT EXISTS t (x int)", Sqlite, Unknown),
            ("CREATE VIEW v AS SELECT 1", Mysql, Unknown),
            ("COPY t FROM STDIN", Postgres, Unknown),
            ("COPY t FROM '/etc/passwd'", Postgres, Unknown),
            (
                "LOCK TABLE users IN ACCESS EXCLUSIVE MODE",
                Postgres,
                Unknown,
            ),
            ("LOCK TABLES users WRITE", Mysql, Unknown),
            ("UNLOCK TABLES", Mysql, Unknown),
            ("USE other", Mysql, Unknown),
            ("DISCARD ALL", Postgres, Unknown),
            ("START TRANSACTION READ WRITE", Mysql, Destructive),
            ("COMMIT", Sqlite, Destructive),
            ("ROLLBACK TO SAVEPOINT a", Postgres, Destructive),
            ("RELEASE SAVEPOINT a", Sqlite, Destructive),
            ("SET LOCAL statement_timeout = 0", Postgres, Unknown),
            ("SET NAMES utf8mb4", Mysql, Unknown),
            ("ANALYZE", Sqlite, Unknown),
            ("ANALYZE TABLE t", Mysql, Unknown),
            ("VACUUM FULL t", Postgres, Unknown),
            ("UNLISTEN *", Postgres, Unknown),
            ("FETCH NEXT FROM c", Postgres, Unknown),
            ("CLOSE c", Postgres, Unknown),
            ("DEALLOCATE p", Postgres, Unknown),
            ("COMMENT ON TABLE t IS 'x'", Postgres, Unknown),
            ("ATTACH DATABASE ':memory:' AS m", Sqlite, Unknown),
            // Safe: reads of data, settings and metadata.
            ("SHOW VARIABLES LIKE 'x%'", Mysql, Safe),
            ("SHOW INDEX FROM users", Mysql, Safe),
            ("SHOW FULL PROCESSLIST", Mysql, Safe),
            ("SHOW STATUS", Mysql, Safe),
            ("SHOW TRANSACTION ISOLATION LEVEL", Postgres, Safe),
            ("DESCRIBE users", Mysql, Safe),
            (
                "SELECT * FROM t WHERE id = 1 LIMIT 10 OFFSET 5",
                Mysql,
                Safe,
            ),
            ("SELECT a FROM t1 INTERSECT SELECT a FROM t2", Sqlite, Safe),
            ("SELECT * FROM t TABLESAMPLE SYSTEM (10)", Postgres, Safe),
        ],
        &no_rules(),
    );
}

#[test]
fn names_are_compared_on_the_last_part_without_case_or_quotes() {
    check(
        &[
            ("SELECT \"pg_catalog\".\"PG_SLEEP\"(1)", Postgres, Unknown),
            ("SELECT `SLEEP`(1)", Mysql, Unknown),
            ("SELECT main.\"load_extension\"('x')", Sqlite, Destructive),
            ("SELECT PG_CATALOG.NEXTVAL('s')", Postgres, Unknown),
            // Identifiers and strings named like keywords are just names.
            ("SELECT [delete] FROM [update]", Sqlite, Safe),
            (
                "SELECT \"drop\" FROM \"truncate\" WHERE \"grant\" = 'DELETE FROM t'",
                Postgres,
                Safe,
            ),
            ("SELECT pg_sleep_ms FROM t", Postgres, Safe),
        ],
        &no_rules(),
    );
}

#[test]
fn sqlite_pragmas() {
    check(
        &[
            ("PRAGMA main.table_info(users)", Sqlite, Safe),
            ("pragma TABLE_INFO(\"users\");", Sqlite, Safe),
            ("PRAGMA table_info('users')", Sqlite, Safe),
            ("PRAGMA index_info(idx_users_name)", Sqlite, Safe),
            ("PRAGMA table_xinfo(users)", Sqlite, Safe),
            ("PRAGMA foreign_key_check", Sqlite, Safe),
            ("PRAGMA quick_check(users)", Sqlite, Safe),
            ("PRAGMA integrity_check(100)", Sqlite, Safe),
            ("PRAGMA schema_version", Sqlite, Safe),
            ("PRAGMA journal_mode", Sqlite, Safe),
            ("PRAGMA temp.page_count", Sqlite, Safe),
            ("PRAGMA compile_options", Sqlite, Safe),
            ("PRAGMA database_list", Sqlite, Safe),
            // Setting pragmas with a value change things.
            ("PRAGMA foreign_keys(0)", Sqlite, Unknown),
            ("PRAGMA user_version = 7", Sqlite, Unknown),
            ("PRAGMA cache_size = -2000", Sqlite, Unknown),
            ("PRAGMA trusted_schema = 1", Sqlite, Unknown),
            ("PRAGMA main.synchronous = OFF", Sqlite, Unknown),
            // Pragmas that act when queried.
            ("PRAGMA optimize", Sqlite, Unknown),
            ("PRAGMA incremental_vacuum", Sqlite, Unknown),
            ("PRAGMA wal_checkpoint(TRUNCATE)", Sqlite, Unknown),
            ("PRAGMA shrink_memory", Sqlite, Unknown),
            ("PRAGMA writable_schema", Sqlite, Unknown),
            // Not one exact PRAGMA statement: the general rules apply.
            (
                "PRAGMA table_info(users); DROP TABLE users",
                Sqlite,
                Destructive,
            ),
            ("PRAGMA table_info(users); SELECT 1", Sqlite, Destructive),
            ("PRAGMA table_info(users, other)", Sqlite, Destructive),
            // PRAGMA is SQLite's.
            ("PRAGMA user_version", Postgres, Unknown),
            ("PRAGMA table_info(users)", Mysql, Unknown),
        ],
        &no_rules(),
    );
}

#[test]
fn table_statement() {
    check(
        &[
            ("TABLE public.users", Postgres, Safe),
            ("TABLE \"Users\";", Postgres, Safe),
            ("TABLE shop.orders", Mysql, Safe),
            ("TABLE users", Sqlite, Destructive),
            ("TABLE users; DROP TABLE users", Postgres, Destructive),
            // Not parsed, but read by its tokens (by_tokens.rs) as a query.
            ("TABLE users ORDER BY 1", Postgres, Safe),
            ("TABLE users ORDER BY 1", Mysql, Destructive),
            ("TABLE", Postgres, Destructive),
        ],
        &no_rules(),
    );
}

#[test]
fn several_statements_are_never_safe() {
    check(
        &[
            ("SELECT 1; SELECT 2", Postgres, Destructive),
            ("SHOW TABLES; SHOW DATABASES", Mysql, Destructive),
            (
                "SELECT 1; SELECT pg_terminate_backend(1)",
                Postgres,
                Destructive,
            ),
            ("SELECT 1; INSERT INTO t VALUES (1)", Sqlite, Destructive),
            (
                "SELECT 1; UPDATE t SET x = 1; SELECT 2",
                Sqlite,
                Destructive,
            ),
            ("COMMIT; DROP TABLE users", Postgres, Destructive),
            (";;SELECT 1;;", Postgres, Safe),
            (";", Mysql, Unknown),
            ("/* nothing */ ;", Sqlite, Unknown),
        ],
        &no_rules(),
    );
}

#[test]
fn appending_a_statement_to_any_safe_query_stops_it_being_safe() {
    let safe: Vec<_> = CORPUS
        .iter()
        .filter(|case| case.5 == Safe)
        .map(|case| (case.0, case.1))
        .collect();
    assert!(safe.len() > 30);
    for (sql, dialect) in safe {
        let trimmed = sql.trim_end_matches(';');
        let joined = format!("{trimmed}; DROP TABLE users");
        let assessment = assess_sql(&joined, dialect, &no_rules());
        assert_eq!(
            kind(&assessment),
            Destructive,
            "{dialect} {joined:?}: {assessment:?}"
        );
    }
}

#[test]
fn comment_and_string_syntax_follows_each_engine() {
    check(
        &[
            // PostgreSQL and SQLite strings have no backslash escapes: the string ends early.
            (
                "SELECT 'a\\'; DELETE FROM users; --'",
                Postgres,
                Destructive,
            ),
            ("SELECT 'a\\'; DELETE FROM users; --'", Sqlite, Destructive),
            // MySQL's and PostgreSQL's E'' strings do: it is one literal.
            ("SELECT 'a\\'; DELETE FROM users; --'", Mysql, Safe),
            ("SELECT E'a\\'; DELETE FROM users; --'", Postgres, Safe),
            // PostgreSQL nests block comments; SQLite and MySQL do not.
            ("SELECT 1 /* /* */ ; DELETE FROM users */", Postgres, Safe),
            (
                "SELECT 1 /* /* */ ; DELETE FROM users */",
                Sqlite,
                Destructive,
            ),
            (
                "SELECT 1 /* /* */ ; DELETE FROM users */",
                Mysql,
                Destructive,
            ),
            // MySQL runs `/*! ... */` as code; the others see a comment.
            ("/*! DELETE FROM t */", Mysql, Destructive),
            ("SELECT 1 /*!; DELETE FROM t */", Mysql, Destructive),
            ("SELECT 1 /*!; DELETE FROM t */", Postgres, Safe),
            ("SELECT * FROM t /*!40101 FOR UPDATE */", Mysql, Unknown),
            // MySQL `--` needs a space to start a comment; `--'` opens a string.
            ("SELECT 1 --'\n; DELETE FROM users; -- '", Mysql, Safe),
            (
                "SELECT 1 -- '\n; DELETE FROM users; -- '",
                Mysql,
                Destructive,
            ),
            ("SELECT \"a\"; DELETE FROM users", Mysql, Destructive),
            (
                "SELECT $$;DROP TABLE users;$$, $t$ DELETE $t$",
                Postgres,
                Safe,
            ),
        ],
        &no_rules(),
    );
}

#[test]
fn unparseable_text_is_never_safe_and_destructive_when_it_says_so() {
    check(
        &[
            (
                "DO $$ BEGIN EXECUTE 'DROP TABLE users'; END $$",
                Postgres,
                Destructive,
            ),
            (
                "DO $f$ BEGIN PERFORM pg_terminate_backend(1); END $f$",
                Postgres,
                Destructive,
            ),
            (
                "DO $a$ BEGIN EXECUTE $b$ TRUNCATE users $b$; END $a$",
                Postgres,
                Destructive,
            ),
            (
                "DO LANGUAGE plpgsql $$ BEGIN UPDATE t SET x = 1; END $$",
                Postgres,
                Destructive,
            ),
            (
                "DO $$ BEGIN RAISE NOTICE 'hi'; END $$",
                Postgres,
                Destructive,
            ),
            (
                "CREATE OR REPLACE RULE r AS ON SELECT TO t DO INSTEAD SELECT 1",
                Postgres,
                Destructive,
            ),
            ("ALTER SYSTEM SET work_mem = '1GB'", Postgres, Destructive),
            ("ALTER USER u IDENTIFIED BY 'x'", Mysql, Destructive),
            (
                "SELECT * FROM t LOCK IN SHARE MODE; DELETE FROM t",
                Mysql,
                Destructive,
            ),
            ("ANALYZE UPDATE t SET x = 1", Mysql, Destructive),
            ("ANALYZE FORMAT=JSON DELETE FROM t", Mysql, Destructive),
            (
                "LOAD DATA INFILE '/tmp/x' REPLACE INTO TABLE t",
                Mysql,
                Destructive,
            ),
            ("RENAME USER a TO b", Mysql, Destructive),
            ("SELECT 1 /* unterminated DELETE", Postgres, Destructive),
            (
                "DELETE FROM t WHERE name = 'unterminated",
                Sqlite,
                Destructive,
            ),
            ("SELECT 'unterminated", Sqlite, Destructive),
            ("CHECKPOINT", Postgres, Destructive),
            (
                "REFRESH MATERIALIZED VIEW CONCURRENTLY mv",
                Postgres,
                Destructive,
            ),
            ("SELECT * FROM t INTO DUMPFILE '/tmp/x'", Mysql, Destructive),
            ("HANDLER t OPEN", Mysql, Destructive),
            ("DETACH DATABASE o", Sqlite, Destructive),
            ("REINDEX users", Sqlite, Destructive),
            // Invisible and lookalike characters: never safe, destructive when a keyword shows.
            ("\u{feff}SELECT 1", Postgres, Destructive),
            ("\u{feff}DELETE FROM users", Postgres, Destructive),
            ("\u{200b}DROP TABLE users", Sqlite, Destructive),
            ("DELETE\u{a0}FROM users", Postgres, Destructive),
            ("SELECT\u{2060}1", Mysql, Destructive),
            (
                "\u{ff24}\u{ff25}\u{ff2c}\u{ff25}\u{ff34}\u{ff25} FROM users",
                Postgres,
                Destructive,
            ),
            ("SEL\u{0415}CT 1", Sqlite, Destructive),
            ("SELECT 1\0; DELETE FROM users", Sqlite, Destructive),
        ],
        &no_rules(),
    );
}

#[test]
fn odd_inputs_never_panic_and_are_never_safe() {
    let inputs = [
        "",
        " ",
        ";",
        ";;;",
        "(",
        ")",
        "'",
        "\"",
        "`",
        "[",
        "$$",
        "$a$",
        "$a$ $b$",
        "/*",
        "*/",
        "--",
        "#",
        "\0",
        "\u{feff}",
        "\u{10ffff}",
        "SELECT",
        "SELECT (",
        "PRAGMA",
        "PRAGMA (",
        "PRAGMA x(",
        "PRAGMA x =",
        "PRAGMA .x",
        "TABLE",
        "TABLE .",
        "TABLE a.",
        "EXPLAIN",
        "EXPLAIN ANALYZE",
        "EXPLAIN (ANALYZE",
        "WITH",
        "WITH a AS (",
        "DO $$",
        "DO $$ $$",
        "E'\\",
        "X'zz'",
        "B'2'",
        "U&'\\0000'",
        "@",
        "@@",
        "?",
        "$1",
        ":x",
        "SELECT 1 FROM",
        "INSERT",
        "CALL",
        "COPY",
        "SET",
        "KILL",
        "\\",
        "\\d users",
    ];
    for input in inputs {
        for dialect in [Postgres, Mysql, Sqlite] {
            let assessment = assess_sql(input, dialect, &no_rules());
            assert_ne!(
                kind(&assessment),
                Safe,
                "{dialect} {input:?}: {assessment:?}"
            );
            assert!(!assessment.reason().is_empty());
        }
    }
}

/// Runs `f` on a thread with the stack a tokio worker or test thread gets by default, so a
/// recursion problem shows as a crash here and not in production.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .and_then(|handle| handle.join().map_err(|_| std::io::Error::other("panicked")))
        .expect("the assessor must neither panic nor overflow the stack")
}

#[test]
fn deep_or_long_input_stays_on_a_small_stack() {
    let long_chain = |link: &str, n: usize| format!("SELECT 1{}", link.repeat(n));
    let cases: Vec<(String, SqlDialect, Kind)> = vec![
        // Parsed: left-deep chains just under the token limit.
        (
            long_chain(" UNION SELECT 1", MAX_TOKENS / 3 - 1),
            Postgres,
            Safe,
        ),
        (long_chain(" + 1", MAX_TOKENS / 2 - 1), Postgres, Safe),
        (long_chain("::int", MAX_TOKENS / 2 - 1), Postgres, Safe),
        (long_chain(" !", MAX_TOKENS - 2), Postgres, Safe),
        (long_chain(" IS NULL", MAX_TOKENS / 2 - 1), Mysql, Safe),
        (
            format!("SELECT a{}", "[1]".repeat(MAX_TOKENS / 3 - 1)),
            Postgres,
            Safe,
        ),
        (
            long_chain(" OR sleep(1)", MAX_TOKENS / 5),
            Mysql,
            Destructive,
        ),
        // Parsed until the parser's own recursion limit.
        (
            format!("SELECT {}1{}", "(".repeat(1_000), ")".repeat(1_000)),
            Postgres,
            Destructive,
        ),
        (
            format!("SELECT {}1{}", "(SELECT ".repeat(1_000), ")".repeat(1_000)),
            Sqlite,
            Destructive,
        ),
        (
            format!("SELECT {}1", "- ".repeat(1_500)),
            Mysql,
            Destructive,
        ),
        // Over the token limit: scanned, not parsed.
        (long_chain(" + 1", 200_000), Postgres, Destructive),
        (long_chain(" UNION SELECT 1", 50_000), Sqlite, Destructive),
        (
            format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000)),
            Mysql,
            Destructive,
        ),
        (
            format!(
                "DELETE FROM t WHERE id IN ({})",
                (0..5_000)
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Postgres,
            Destructive,
        ),
        (
            format!("SELECT pg_terminate_backend(pid){}", " + 1".repeat(5_000)),
            Postgres,
            Destructive,
        ),
    ];
    on_small_stack(move || {
        for (sql, dialect, expected) in cases {
            let assessment = assess_sql(&sql, dialect, &no_rules());
            assert_eq!(
                kind(&assessment),
                expected,
                "{dialect} {}...: {}",
                &sql[..60.min(sql.len())],
                assessment.reason()
            );
        }
    });
}

#[test]
fn deny_names_forbid_any_reference() {
    let rules = SqlRules::new(&[], &["secrets".to_owned(), " Secret_Fn ".to_owned()]);
    check(
        &[
            ("SELECT * FROM secrets", Postgres, Forbidden),
            ("SELECT * FROM hr.\"SECRETS\"", Postgres, Forbidden),
            ("SELECT * FROM `Secrets`", Mysql, Forbidden),
            ("SELECT secret_fn()", Postgres, Forbidden),
            (
                "SELECT * FROM t WHERE x = public.SECRET_FN(1)",
                Postgres,
                Forbidden,
            ),
            ("SELECT * FROM secret_fn(1)", Postgres, Forbidden),
            (
                "WITH x AS (SELECT * FROM secrets) SELECT * FROM x",
                Postgres,
                Forbidden,
            ),
            (
                "SELECT * FROM t WHERE id IN (SELECT id FROM secrets)",
                Sqlite,
                Forbidden,
            ),
            (
                "SELECT * FROM t JOIN secrets s ON s.id = t.id",
                Mysql,
                Forbidden,
            ),
            ("EXPLAIN SELECT * FROM secrets", Postgres, Forbidden),
            ("EXPLAIN ANALYZE SELECT * FROM secrets", Postgres, Forbidden),
            ("EXPLAIN DROP TABLE secrets", Postgres, Forbidden),
            ("SHOW CREATE TABLE secrets", Mysql, Forbidden),
            ("SHOW COLUMNS FROM secrets", Mysql, Forbidden),
            ("DESCRIBE secrets", Mysql, Forbidden),
            ("TABLE secrets", Postgres, Forbidden),
            ("PRAGMA table_info(secrets)", Sqlite, Forbidden),
            ("PRAGMA table_info('secrets')", Sqlite, Forbidden),
            (
                "SELECT * FROM pragma_table_info('t') JOIN secrets",
                Sqlite,
                Forbidden,
            ),
            ("DROP TABLE secrets", Postgres, Forbidden),
            ("DROP TABLE other, secrets", Mysql, Forbidden),
            ("INSERT INTO secrets VALUES (1)", Postgres, Forbidden),
            ("UPDATE secrets SET x = 1", Sqlite, Forbidden),
            ("GRANT SELECT ON secrets TO app", Postgres, Forbidden),
            ("COPY secrets TO STDOUT", Postgres, Forbidden),
            ("SELECT 1; SELECT * FROM secrets", Postgres, Forbidden),
            (
                "DO $$ BEGIN DELETE FROM secrets; END $$",
                Postgres,
                Forbidden,
            ),
            ("SELECT * FROM secrets LOCK IN SHARE MODE", Mysql, Forbidden),
            // Other names are not denied, and a read's column may share a denied name.
            ("SELECT * FROM secrets_archive", Postgres, Safe),
            ("SELECT secrets FROM t", Postgres, Safe),
            ("SELECT 'secrets' FROM t", Postgres, Safe),
            // Not denied, but not a built-in either.
            ("SELECT secret_fn_v2()", Postgres, Unknown),
        ],
        &rules,
    );
}

#[test]
fn allow_functions_vouch_for_side_effect_functions_only() {
    let rules = SqlRules::new(
        &[
            "PG_SLEEP".to_owned(),
            "nextval".to_owned(),
            "pg_terminate_backend".to_owned(),
        ],
        &["nextval".to_owned()],
    );
    check(
        &[
            ("SELECT pg_sleep(1)", Postgres, Safe),
            ("SELECT * FROM pg_catalog.pg_sleep(1)", Postgres, Safe),
            ("SELECT pg_terminate_backend(1)", Postgres, Safe),
            // Allowing pg_sleep does not allow its siblings.
            ("SELECT pg_sleep_for('1 second')", Postgres, Unknown),
            ("SELECT set_config('a', 'b', false)", Postgres, Unknown),
            // A denied name stays denied.
            ("SELECT nextval('s')", Postgres, Forbidden),
            // Allowing a function does not make the statement around it safe.
            ("SELECT pg_sleep(1) FROM t FOR UPDATE", Postgres, Unknown),
            (
                "DELETE FROM t WHERE pg_sleep(1) IS NULL",
                Postgres,
                Destructive,
            ),
        ],
        &rules,
    );
}

#[test]
fn reasons_name_what_was_found() {
    let rules = SqlRules::new(&[], &["secrets".to_owned()]);
    let cases = [
        ("DELETE FROM users", Postgres, "DELETE"),
        ("DROP TABLE users", Postgres, "users"),
        ("SELECT pg_sleep(3)", Postgres, "pg_sleep()"),
        (
            "SELECT pg_catalog.PG_TERMINATE_BACKEND(1)",
            Postgres,
            "pg_terminate_backend()",
        ),
        ("SELECT 1; SELECT 2", Postgres, "2 statements"),
        (
            "WITH d AS (DELETE FROM t RETURNING 1) SELECT * FROM d",
            Postgres,
            "DELETE",
        ),
        (
            "EXPLAIN ANALYZE UPDATE t SET x = 1",
            Postgres,
            "EXPLAIN ANALYZE",
        ),
        ("SELECT * FROM t FOR UPDATE", Postgres, "FOR UPDATE"),
        ("SELECT * INTO t2 FROM t", Postgres, "INTO"),
        ("PRAGMA query_only = 0", Sqlite, "query_only"),
        ("DO $$ BEGIN TRUNCATE t; END $$", Postgres, "TRUNCATE"),
        ("SELECT * FROM secrets", Postgres, "secrets"),
        ("", Sqlite, "empty"),
        ("COPY t TO PROGRAM 'x'", Postgres, "shell command"),
        ("REPLACE INTO kv VALUES (1)", Sqlite, "REPLACE"),
        (
            "CREATE TEMP TABLE t (x int)",
            Postgres,
            "CREATE TEMPORARY TABLE",
        ),
    ];
    for (sql, dialect, needle) in cases {
        let assessment = assess_sql(sql, dialect, &rules);
        assert!(
            assessment.reason().contains(needle),
            "{sql:?}: {:?} does not mention {needle:?}",
            assessment.reason()
        );
    }
}

/// sqlparser's `parse_statements` stops without an error at an `END` after a statement, so
/// what follows was never judged (found by fuzz/sql_assess: `SELECT''end` then a DROP).
#[test]
fn text_after_an_end_the_parser_stopped_at_is_never_ignored() {
    for dialect in [Postgres, Mysql, Sqlite] {
        check(
            &[
                ("SELECT 1 end; DROP TABLE t", dialect, Destructive),
                ("SELECT''end\n; DROP TABLE t", dialect, Destructive),
                ("SELECT 1 END DELETE FROM t", dialect, Destructive),
                ("SELECT 1 end", dialect, Destructive),
                ("SELECT 1 AS \"end\"", dialect, Safe),
            ],
            &no_rules(),
        );
    }
}

/// PostgreSQL's named arguments, `name := value` as well as `name => value`, are read as
/// such, not as MySQL's session-variable assignment (issue 26, c).
#[test]
fn postgres_named_arguments_are_arguments() {
    check(
        &[
            ("SELECT make_interval(days := 1)", Postgres, Safe),
            ("SELECT make_interval(days => 1)", Postgres, Safe),
            (
                "SELECT make_interval(years := 1, days => 2) + interval '1 hour'",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM t WHERE d > now() - make_interval(hours := lower(x)::int)",
                Postgres,
                Safe,
            ),
            // The call is still judged by its name.
            ("SELECT my_func(x := 1)", Postgres, Unknown),
            ("SELECT pg_sleep(seconds := 5)", Postgres, Unknown),
            (
                "SELECT pg_terminate_backend(pid := 1)",
                Postgres,
                Destructive,
            ),
            // MySQL's `:=` still writes a user variable.
            ("SELECT @a := 1", Mysql, Unknown),
            ("SELECT lower(@a := 'x')", Mysql, Unknown),
        ],
        &no_rules(),
    );
    let reason = assess_sql("SELECT my_func(x := 1)", Postgres, &no_rules());
    assert!(
        reason.reason().contains("my_func") && !reason.reason().contains("session variable"),
        "{reason:?}"
    );
}

/// Valid PostgreSQL reads that sqlparser 0.63 cannot parse (issue 26, a) run without a
/// click, read by their tokens; the reason says so.
#[test]
fn postgres_reads_the_parser_cannot_parse_run_without_a_click() {
    let reads = [
        // SQL/JSON (16, 17).
        "SELECT JSON_VALUE('{\"a\":1}', '$.a' RETURNING int ERROR ON ERROR)",
        "SELECT JSON_VALUE(j, '$.a ? (@ > $x)' PASSING 1 AS x DEFAULT 0 ON EMPTY) FROM t",
        "SELECT JSON_QUERY(j, '$.a' WITH CONDITIONAL WRAPPER) FROM t",
        "SELECT JSON_QUERY(j, '$.a' RETURNING jsonb OMIT QUOTES) FROM t",
        "SELECT JSON_EXISTS(j, '$.a' ERROR ON ERROR) FROM t",
        "SELECT JSON(j WITH UNIQUE KEYS), JSON('{}' FORMAT JSON) FROM t",
        "SELECT jt.* FROM t, JSON_TABLE(t.j, '$[*]' COLUMNS (id FOR ORDINALITY, \
         a int PATH '$.a' NULL ON ERROR, NESTED PATH '$.b[*]' COLUMNS (b text PATH '$'))) \
         AS jt WHERE lower(jt.b) = 'x' AND now() AT LOCAL > '2020-01-01'",
        // Window frames with EXCLUDE.
        "SELECT sum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING \
         EXCLUDE CURRENT ROW) FROM t",
        "SELECT avg(x) OVER w FROM t WINDOW w AS (ORDER BY x GROUPS 2 PRECEDING EXCLUDE GROUP)",
        "SELECT count(*) OVER (ORDER BY x RANGE UNBOUNDED PRECEDING EXCLUDE TIES) FROM t",
        "SELECT max(x) OVER (ORDER BY x ROWS UNBOUNDED PRECEDING EXCLUDE NO OTHERS) FROM t",
        // Other forms.
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) \
         SEARCH DEPTH FIRST BY n SET ord SELECT * FROM r ORDER BY ord",
        "WITH RECURSIVE r(n) AS NOT MATERIALIZED (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
         CYCLE n SET is_cycle USING path SELECT * FROM r",
        "SELECT * FROM ROWS FROM (generate_series(1, 2), unnest(ARRAY['a'])) \
         WITH ORDINALITY AS g(a, b, n)",
        "SELECT a, count(*) FROM t GROUP BY DISTINCT ROLLUP (a), CUBE (b), GROUPING SETS ((a), ROLLUP (b))",
        "SELECT * FROM t1 JOIN t2 USING (id) AS j LEFT JOIN (SELECT 1 AS id) s ON s.id = j.id",
        "SELECT substring('abc' SIMILAR 'a' ESCAPE '#'), TRIM(LEADING FROM ' a')",
        "SELECT xmlelement(name foo, xmlattributes('x' AS bar)), xmlserialize(content x AS text) FROM t",
        "SELECT x IS DOCUMENT, xmlexists('//a' PASSING BY REF x) FROM t",
        "SELECT * FROM t WHERE x BETWEEN SYMMETRIC 1 AND 2",
        "TABLE t UNION TABLE u ORDER BY 1",
        "(TABLE t) EXCEPT (TABLE u)",
        "SELECT format('%s', VARIADIC ARRAY['a']), COLLATION FOR ('a')",
        "SELECT (jsonb_each(j)).* FROM t",
        "SELECT x::character varying(10) COLLATE \"C\" FROM t WHERE x::text COLLATE \"C\" > 'a'",
        "SELECT CASE WHEN x THEN 1 ELSE 2 END FROM t FOR READ ONLY",
        "SELECT share, \"update\" FROM t WHERE now() AT LOCAL > ts FETCH FIRST (5) ROWS ONLY",
        "SELECT pg_catalog.lower(\"lower\"(x)) FROM t ORDER BY (x) NULLS FIRST, x AT TIME ZONE ('UTC') IS NULL, now() AT LOCAL",
        // Newer built-ins, in unparsed text too.
        "SELECT gamma(5), lgamma(5), array_sort(ARRAY[3, 1]), random_normal() FROM t \
         WHERE pg_input_is_valid(x, 'int') AND now() AT LOCAL IS NOT NULL",
    ];
    for sql in reads {
        let assessment = assess_sql(sql, Postgres, &no_rules());
        assert_eq!(kind(&assessment), Safe, "{sql}: {assessment:?}");
        assert!(
            assessment.reason().contains("read by its tokens"),
            "{sql}: {assessment:?}"
        );
    }
}

/// Their dangerous neighbours, which the parser cannot parse either, still wait.
#[test]
fn unparsed_postgres_that_is_not_a_plain_read_still_waits() {
    let exclude = "OVER (ORDER BY x ROWS UNBOUNDED PRECEDING EXCLUDE TIES)";
    let cases = [
        // Writes, locks, other statements.
        (
            "SELECT jt.* INTO t2 FROM JSON_TABLE(j, '$' COLUMNS (a int PATH '$.a') ERROR ON ERROR) AS jt".to_owned(),
            Unknown,
        ),
        (
            format!("WITH d AS (DELETE FROM t RETURNING x) SELECT sum(x) {exclude} FROM d"),
            Destructive,
        ),
        (
            format!("WITH i AS (INSERT INTO t VALUES (1) RETURNING x) SELECT sum(x) {exclude} FROM i"),
            Unknown,
        ),
        (format!("SELECT sum(x) {exclude} FROM t FOR KEY SHARE"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t FOR NO KEY UPDATE"), Destructive),
        (format!("SELECT sum(x) {exclude} FROM t FOR SHARE SKIP LOCKED"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t; DROP TABLE t"), Destructive),
        (format!("SELECT sum(x) {exclude} FROM t; SELECT 1"), Unknown),
        (format!("SET search_path = evil; SELECT sum(x) {exclude} FROM t"), Unknown),
        (format!("EXPLAIN ANALYZE SELECT sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t \\gexec"), Unknown),
        ("SELECT 1 end".to_owned(), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t WHERE"), Unknown),
        // Functions with effects or unknown, wherever they stand.
        (format!("SELECT pg_terminate_backend(pid), sum(x) {exclude} FROM pg_stat_activity"), Destructive),
        ("SELECT lo_import('/etc/passwd') AT LOCAL".to_owned(), Destructive),
        (format!("SELECT pg_catalog.pg_sleep(1), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t WHERE x = nextval('s')"), Unknown),
        (format!("SELECT set_config('a.b', 'c', false), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT ts_rewrite(q, 'SELECT 1'), sum(x) {exclude} FROM t"), Destructive),
        (format!("SELECT public.lower(x), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT my_func(x), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT \"my_func\"(x), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT U&\"pg\\005fsleep\"(1), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t ORDER BY my_func(x)"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t LEFT JOIN my_func(1) f ON true"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t GROUP BY a ORDER BY rollup(a)"), Unknown),
        (format!("SELECT sum(x) {exclude} FROM t WHERE x = ANY (SELECT my_func(1))"), Unknown),
        (format!("SELECT 1 OPERATOR(pg_catalog.+) my_func(2), sum(x) {exclude} FROM t"), Unknown),
        (format!("SELECT sum(x) {exclude}, CAST(my_func(1) AS int) FROM t"), Unknown),
        // A record function's column definition list looks like a WITH query's name.
        (
            format!("SELECT sum(x) {exclude} FROM t, my_func(1) AS (a int)"),
            Unknown,
        ),
        (
            format!("WITH w AS (SELECT 1) SELECT sum(x) {exclude} FROM w, my_func(1) AS (a int)"),
            Unknown,
        ),
        // SQL/JSON names without a clause are calls on servers before 17.
        (format!("SELECT json_value(j, '$.a'), sum(x) {exclude} FROM t"), Unknown),
        // Too deep for the parser: held at the floor, not read by tokens.
        (format!("SELECT {}1{}", "(".repeat(1_000), ")".repeat(1_000)), Destructive),
    ];
    for (sql, expected_at_least) in &cases {
        let assessment = assess_sql(sql, Postgres, &no_rules());
        assert_ne!(kind(&assessment), Safe, "{sql}: {assessment:?}");
        assert!(
            rank(&assessment) >= rank_of(*expected_at_least),
            "{sql}: {assessment:?}"
        );
    }
    // The reader is PostgreSQL's: other engines' unparsed text keeps its verdict.
    for dialect in [Mysql, Sqlite] {
        let sql = format!("SELECT sum(x) {exclude} FROM t");
        assert_eq!(
            kind(&assess_sql(&sql, dialect, &no_rules())),
            Destructive,
            "{dialect}"
        );
    }
    // A denied name is forbidden, read or not.
    let rules = SqlRules::new(&[], &["secrets".to_owned()]);
    let sql = format!("SELECT sum(x) {exclude} FROM secrets");
    assert_eq!(kind(&assess_sql(&sql, Postgres, &rules)), Forbidden);
}

fn rank_of(kind: Kind) -> u8 {
    match kind {
        Safe => 0,
        Unknown => 1,
        Destructive => 2,
        Forbidden => 3,
    }
}

/// The SQL/JSON constructs sqlparser does parse are judged as constructs when they carry a
/// clause no call can have, and as calls otherwise.
#[test]
fn parsed_sql_json_constructs_are_not_calls() {
    check(
        &[
            (
                "SELECT JSON_VALUE(j, '$.a' RETURNING int) FROM t",
                Postgres,
                Safe,
            ),
            (
                "SELECT JSON_QUERY(j, '$.a' RETURNING jsonb) FROM t",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM JSON_TABLE(j, '$' COLUMNS (a int PATH '$.a')) AS jt",
                Postgres,
                Safe,
            ),
            ("SELECT j IS JSON OBJECT FROM t", Postgres, Safe),
            // Plain calls of these names: a function of that name before PostgreSQL 17.
            ("SELECT JSON_VALUE(j, '$.a') FROM t", Postgres, Unknown),
            ("SELECT JSON_EXISTS(j, '$.a') FROM t", Postgres, Unknown),
            (
                "SELECT public.json_value(j, '$.a' RETURNING int) FROM t",
                Postgres,
                Unknown,
            ),
            (
                "SELECT JSON_VALUE(j, pg_sleep(1)::text RETURNING int) FROM t",
                Postgres,
                Unknown,
            ),
        ],
        &no_rules(),
    );
}

/// MySQL, MariaDB and SQLite forms the parser cannot read, read through [`rewrite`] or
/// recognised by their tokens, run without a click when they only read.
#[test]
fn mysql_and_sqlite_reads_the_parser_cannot_parse_run_without_a_click() {
    check(
        &[
            (
                "EXPLAIN EXTENDED SELECT * FROM t1 JOIN t2 ON f1 = f2 WHERE f1 = 1",
                Mysql,
                Safe,
            ),
            (
                "explain extended select * from t1 where 1 xor 1",
                Mysql,
                Safe,
            ),
            (
                "EXPLAIN PARTITIONS SELECT a FROM t WHERE a IN (SELECT b FROM u)",
                Mysql,
                Safe,
            ),
            ("DESCRIBE EXTENDED (SELECT 1) UNION (SELECT 2)", Mysql, Safe),
            // Only planned, like EXPLAIN DELETE.
            ("EXPLAIN EXTENDED DELETE FROM t WHERE a = 1", Mysql, Safe),
            (
                "ANALYZE SELECT * FROM t0, t1 WHERE t1.a = t0.a AND t0.a > 9",
                Mysql,
                Safe,
            ),
            (
                "analyze format=json select a, count(*) from t group by a",
                Mysql,
                Safe,
            ),
            (
                "ANALYZE FORMAT = JSON WITH c AS (SELECT 1 AS x) SELECT x FROM c",
                Mysql,
                Safe,
            ),
            ("DO 1 IN (SELECT * FROM t1)", Mysql, Safe),
            (
                "DO CONVERT(CAST(SUBSTRING_INDEX('a,b', ',', 1) AS BINARY(1)) USING utf8)",
                Mysql,
                Safe,
            ),
            ("CHECKSUM TABLE t1", Mysql, Safe),
            ("checksum table t1, db.t2 extended", Mysql, Safe),
            ("HELP 'contents'", Mysql, Safe),
            ("help `Tamagotchi`", Mysql, Safe),
            ("SHOW CREATE SCHEMA foo", Mysql, Safe),
            ("SHOW CREATE DATABASE IF NOT EXISTS foo", Mysql, Safe),
            (
                "select count(*) from t1 where match a against ('aaa*' in boolean mode)",
                Mysql,
                Safe,
            ),
            ("SELECT MATCH t.a, t.b AGAINST ('x') FROM t", Mysql, Safe),
            (
                "explain select min(c2) from t3 LIMIT ROWS EXAMINED 5",
                Mysql,
                Safe,
            ),
            (
                "SELECT a FROM t ORDER BY a LIMIT 10 ROWS EXAMINED 100",
                Mysql,
                Safe,
            ),
            (
                "SELECT HEX(CAST(0xAA as char CHARACTER SET utf16le))",
                Mysql,
                Safe,
            ),
            ("SELECT CONVERT('a', CHAR(3) CHARSET latin1)", Mysql, Safe),
            (
                "SELECT 5 MOD 2, a mod 3, (a + 1) MOD (b) FROM t",
                Mysql,
                Safe,
            ),
            ("SELECT MOD(5, 2)", Mysql, Safe),
            (
                "ANALYZE SELECT CAST(a AS CHAR CHARACTER SET utf8) FROM t LIMIT ROWS EXAMINED 9",
                Mysql,
                Safe,
            ),
            (
                "SELECT pid FROM plink WHERE cid = 67907 AND pid NOT IN phantom ORDER BY isprim DESC",
                Sqlite,
                Safe,
            ),
            (
                "SELECT x FROM t WHERE x IN main.other AND y NOT IN (SELECT y FROM u)",
                Sqlite,
                Safe,
            ),
            (
                "WITH RECURSIVE w(n) AS (VALUES('Alice') UNION SELECT name FROM org, w \
                 WHERE org.boss = w.n) SELECT avg(height) FROM org WHERE org.name IN w",
                Sqlite,
                Safe,
            ),
            ("SELECT 1 WHERE 2 IN generate_series(1, 3)", Sqlite, Safe),
        ],
        &no_rules(),
    );
}

/// The dangerous neighbours of those forms still wait.
#[test]
fn mysql_and_sqlite_rewrites_let_no_write_through() {
    check(
        &[
            // MariaDB's ANALYZE runs what it analyzes.
            (
                "ANALYZE UPDATE t SET x = 1 WHERE id = 2",
                Mysql,
                Destructive,
            ),
            ("ANALYZE INSERT INTO t VALUES (1)", Mysql, Destructive),
            ("ANALYZE REPLACE INTO t VALUES (1)", Mysql, Destructive),
            (
                "ANALYZE SELECT * FROM t INTO OUTFILE '/tmp/x'",
                Mysql,
                Destructive,
            ),
            ("ANALYZE SELECT * FROM t FOR UPDATE", Mysql, Destructive),
            ("ANALYZE SELECT sleep(10)", Mysql, Destructive),
            ("ANALYZE SELECT 1; DROP TABLE t", Mysql, Destructive),
            // The statistics statements write.
            ("ANALYZE TABLE t", Mysql, Unknown),
            ("ANALYZE LOCAL TABLE t", Mysql, Destructive),
            (
                "ANALYZE NO_WRITE_TO_BINLOG TABLE t PERSISTENT FOR ALL",
                Mysql,
                Destructive,
            ),
            ("OPTIMIZE TABLE t", Mysql, Destructive),
            ("REPAIR TABLE t", Mysql, Destructive),
            ("CHECK TABLE t", Mysql, Destructive),
            ("CHECK TABLE t FOR UPGRADE", Mysql, Destructive),
            // DO with effects.
            ("DO SLEEP(1)", Mysql, Destructive),
            ("DO GET_LOCK('a', 10)", Mysql, Destructive),
            ("DO RELEASE_LOCK('a')", Mysql, Destructive),
            ("DO @a := 1", Mysql, Destructive),
            ("DO (SELECT a FROM t FOR UPDATE)", Mysql, Destructive),
            ("DO 1; DELETE FROM t", Mysql, Destructive),
            ("DO my_db.f(1)", Mysql, Destructive),
            // Token forms exactly, nothing after them.
            ("CHECKSUM TABLE t; DROP TABLE t", Mysql, Destructive),
            ("CHECKSUM TABLE t WHERE sleep(1)", Mysql, Destructive),
            ("HELP 'a' 'b'", Mysql, Destructive),
            (
                "SHOW CREATE DATABASE foo; DELETE FROM t",
                Mysql,
                Destructive,
            ),
            // EXPLAIN EXTENDED of what ANALYZE would run is only planned; with ANALYZE it runs.
            ("EXPLAIN EXTENDED ANALYZE DELETE FROM t", Mysql, Destructive),
            // SQLite: IN table inside a write, or a function that escapes.
            ("DELETE FROM t WHERE x IN other", Sqlite, Destructive),
            ("UPDATE t SET a = 1 WHERE x IN other", Sqlite, Destructive),
            (
                "SELECT x FROM t WHERE x IN zipfile('a.zip')",
                Sqlite,
                Destructive,
            ),
            (
                "SELECT x FROM t WHERE x IN writefile('f', 'x')",
                Sqlite,
                Destructive,
            ),
            (
                "SELECT x FROM t WHERE x IN other; DROP TABLE t",
                Sqlite,
                Destructive,
            ),
            // A table function SQLite lacks fails before anything runs.
            ("SELECT x FROM t WHERE x IN my_module(1)", Sqlite, Safe),
            // Clauses read away, the rest still judged.
            (
                "DELETE FROM t WHERE MATCH a AGAINST ('x')",
                Mysql,
                Destructive,
            ),
            (
                "SELECT MATCH a AGAINST ('x') FROM t FOR UPDATE",
                Mysql,
                Destructive,
            ),
            ("SELECT MATCH f(a) AGAINST ('x') FROM t", Mysql, Destructive),
            (
                "UPDATE t SET a = 1 LIMIT ROWS EXAMINED 5",
                Mysql,
                Destructive,
            ),
            ("DELETE FROM t WHERE a MOD 2 = 0", Mysql, Destructive),
            ("SELECT a MOD 2 FROM t FOR UPDATE", Mysql, Destructive),
            (
                "SELECT a FROM t LIMIT ROWS EXAMINED 5 INTO OUTFILE '/tmp/x'",
                Mysql,
                Destructive,
            ),
            (
                "SELECT CAST(a AS CHAR CHARACTER SET utf8) INTO OUTFILE '/tmp/x' FROM t",
                Mysql,
                Destructive,
            ),
            (
                "SELECT CAST(a AS CHAR CHARACTER SET utf8), sleep(1) FROM t",
                Mysql,
                Destructive,
            ),
            ("SET CHARACTER SET utf8", Mysql, Destructive),
            // MySQL runs what a versioned comment holds.
            (
                "SELECT 1 /*!50000 INTO OUTFILE '/tmp/x' */",
                Mysql,
                Destructive,
            ),
            ("SELECT 1 /*! , sleep(5) */", Mysql, Unknown),
            // MariaDB runs what its own executable comment holds; MySQL skips it.
            ("SELECT 1 /*M! , sleep(5) */", Mysql, Unknown),
            (
                "SELECT 1 /*M!100000 INTO OUTFILE '/tmp/x' */",
                Mysql,
                Destructive,
            ),
            ("SELECT a FROM t /*M!100000 FOR UPDATE */", Mysql, Unknown),
            ("SELECT 1 /*M! /*!50000 , sleep(5) */", Mysql, Destructive),
            (
                "SELECT 1 /*M! ', ' */ INTO OUTFILE '/tmp/x' -- '",
                Mysql,
                Destructive,
            ),
            // Not rewritten where the words mean something else.
            ("DO $$ BEGIN DELETE FROM t; END $$", Postgres, Destructive),
            ("SELECT x FROM t WHERE x IN other", Mysql, Destructive),
        ],
        &no_rules(),
    );
}

/// Queries shaped like a text-to-SQL benchmark's gold SQL (joins, grouping, nested
/// subqueries, set operations, `LIMIT`, `LIKE`, aggregates, SQLite's double-quoted
/// strings) run without a click in every dialect that reads them.
#[test]
fn benchmark_style_queries_run_without_a_click() {
    let queries = [
        "SELECT count(*) FROM singer",
        "SELECT name , country , age FROM singer ORDER BY age DESC",
        "SELECT avg(age) , min(age) , max(age) FROM singer WHERE country = 'France'",
        "SELECT T2.name , count(*) FROM concert AS T1 JOIN stadium AS T2 ON T1.stadium_id = \
         T2.stadium_id GROUP BY T1.stadium_id HAVING count(*) >= 2",
        "SELECT name FROM stadium WHERE stadium_id NOT IN (SELECT stadium_id FROM concert)",
        "SELECT country FROM singer WHERE age > 40 INTERSECT SELECT country FROM singer WHERE age < 30",
        "SELECT name FROM people EXCEPT SELECT T2.name FROM poker_player AS T1 JOIN people AS T2 \
         ON T1.people_id = T2.people_id",
        "SELECT T1.name , T1.capacity FROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = \
         T2.stadium_id WHERE T2.year >= 2014 GROUP BY T2.stadium_id ORDER BY count(*) DESC LIMIT 1",
        "SELECT name FROM singer WHERE song_name LIKE '%Hey%' OR name NOT LIKE 'A%'",
        "SELECT count(DISTINCT T1.maker) FROM car_makers AS T1 LEFT JOIN model_list AS T2 ON \
         T1.id = T2.maker WHERE T2.model IS NULL",
        "SELECT count(*) FROM (SELECT * FROM endowment WHERE amount > 8.5 GROUP BY school_id \
         HAVING count(*) > 1)",
        "SELECT fname FROM student WHERE age = (SELECT max(age) FROM student WHERE sex = 'F')",
        "SELECT name FROM highschooler WHERE grade BETWEEN 9 AND 10 UNION SELECT name FROM \
         friend_list ORDER BY name LIMIT 5 OFFSET 1",
        "SELECT sum(population) , max(gnp) , round(avg(lifeexpectancy), 2) FROM country \
         WHERE continent = 'Asia' AND governmentform != 'Republic'",
        "SELECT T1.id FROM a AS T1 WHERE EXISTS (SELECT 1 FROM b AS T2 WHERE T2.id = T1.id) \
         AND T1.x IN (SELECT x FROM c GROUP BY x HAVING sum(y) > (SELECT avg(y) FROM c))",
        "SELECT CAST(count(*) AS REAL) / (SELECT count(*) FROM b) , abs(min(x) - max(x)) , \
         upper(substr(name, 1, 3)) , length(name) , coalesce(a, 0) FROM a",
        "SELECT CASE WHEN age < 30 THEN 'young' ELSE 'old' END , count(*) FROM singer GROUP BY 1",
    ];
    for sql in queries {
        for dialect in [Sqlite, Postgres, Mysql] {
            let assessment = assess_sql(sql, dialect, &no_rules());
            assert_eq!(kind(&assessment), Safe, "{dialect} {sql}: {assessment:?}");
        }
    }
    check(
        &[
            (
                "SELECT avg(age) , min(age) FROM singer WHERE country = \"France\"",
                Sqlite,
                Safe,
            ),
            (
                "SELECT DISTINCT T1.maker FROM car_makers AS T1 JOIN model_list AS T2 ON \
                 T1.id = T2.maker WHERE T2.model = \"amc\" ORDER BY T1.maker",
                Sqlite,
                Safe,
            ),
            (
                "SELECT strftime('%Y', birth) , julianday('now') - julianday(birth) FROM p",
                Sqlite,
                Safe,
            ),
            (
                "SELECT name FROM t WHERE name LIKE \"%a%\" COLLATE NOCASE",
                Sqlite,
                Safe,
            ),
            (
                "SELECT name FROM t WHERE name GLOB 'A*' LIMIT 3, 2",
                Sqlite,
                Safe,
            ),
            ("SELECT count(*) FROM dbstat WHERE name = 't'", Sqlite, Safe),
            (
                "SELECT snippet(docs) , bm25(docs) FROM docs WHERE docs MATCH 'a'",
                Sqlite,
                Safe,
            ),
            // Their neighbours.
            ("SELECT optimize(docs) FROM docs LIMIT 1", Sqlite, Unknown),
            (
                "SELECT avg(age) FROM singer WHERE country = \"France\"; DELETE FROM singer",
                Sqlite,
                Destructive,
            ),
        ],
        &no_rules(),
    );
}

/// PostgreSQL's size and state functions (VOLATILE, reviewed) read a number or a state;
/// the functions around them with effects still wait.
#[test]
fn postgres_size_and_state_functions_only_read() {
    check(
        &[
            (
                "SELECT currval('s'), lastval(), pg_is_in_recovery(), pg_current_wal_lsn(), \
                 pg_blocking_pids(pg_backend_pid()), pg_jit_available()",
                Postgres,
                Safe,
            ),
            (
                "SELECT * FROM pg_lock_status() l WHERE NOT l.granted",
                Postgres,
                Safe,
            ),
            ("SELECT nextval('s'), currval('s')", Postgres, Unknown),
            ("SELECT setval('s', currval('s') + 1)", Postgres, Unknown),
            (
                "SELECT pg_advisory_lock(1) WHERE NOT pg_is_in_recovery()",
                Postgres,
                Unknown,
            ),
            ("SELECT txid_current(), txid_status(1)", Postgres, Unknown),
            (
                "SELECT pg_notify('c', pg_current_wal_lsn()::text)",
                Postgres,
                Unknown,
            ),
            (
                "SELECT pg_size_pretty(sum(pg_relation_size(relid))) AS total_size \
                 FROM pg_partition_tree('measurement')",
                Postgres,
                Safe,
            ),
            (
                "SELECT relname, pg_size_pretty(pg_total_relation_size(c.oid)), \
                 pg_table_size(c.oid), pg_indexes_size(c.oid), pg_column_size(relname) \
                 FROM pg_class c ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 10",
                Postgres,
                Safe,
            ),
            (
                "SELECT pg_database_size(current_database()), pg_tablespace_size('pg_default'), \
                 pg_relation_size('t', 'fsm')",
                Postgres,
                Safe,
            ),
            ("SELECT * FROM pg_partition_ancestors('p1')", Postgres, Safe),
            (
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE pg_database_size(datname) > 0",
                Postgres,
                Destructive,
            ),
            (
                "SELECT lo_export(pg_relation_size('t')::oid, '/tmp/x')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT set_config('a.b', pg_size_pretty(1::bigint), false)",
                Postgres,
                Unknown,
            ),
            (
                "WITH d AS (DELETE FROM t RETURNING id) SELECT pg_relation_size('t') FROM d",
                Postgres,
                Destructive,
            ),
            (
                "SELECT pg_relation_size('t') FROM t FOR UPDATE",
                Postgres,
                Unknown,
            ),
            ("SELECT pg_table_size('t') INTO t2", Postgres, Unknown),
        ],
        &no_rules(),
    );
}

/// Contrib extensions' functions that only compute or read run without a click when named
/// as the search path finds them; qualified, reviewed away or given SQL as text, they wait.
#[test]
fn postgres_contrib_functions_are_read_by_the_generated_list() {
    check(
        &[
            (
                "SELECT similarity(t, 'word') FROM test_trgm",
                Postgres,
                Safe,
            ),
            ("SELECT isbn13('0901690546')", Postgres, Safe),
            ("SELECT * FROM each('a=>1'::hstore)", Postgres, Safe),
            (
                "SELECT soundex('Anne'), difference('Anne', 'Andrew')",
                Postgres,
                Safe,
            ),
            (
                "SELECT c FROM t ORDER BY c <-> cube(array[0.5, 0.5])",
                Postgres,
                Safe,
            ),
            // Neighbours.
            ("SELECT public.similarity(t, 'w') FROM t", Postgres, Unknown),
            (
                "SELECT pg_catalog.similarity(t, 'w') FROM t",
                Postgres,
                Unknown,
            ),
            ("SELECT isn_weak(true)", Postgres, Unknown),
            (
                "SELECT * FROM crosstab3('select 1, 2, nextval(''s'')')",
                Postgres,
                Unknown,
            ),
            (
                "SELECT x.* FROM sources, crosstab3(sources.q) AS x(a text, b text, c text)",
                Postgres,
                Unknown,
            ),
            (
                "SELECT * FROM xpath_table('a', 'b', 't', '/x', 'true')",
                Postgres,
                Unknown,
            ),
            (
                "SELECT pgstattuple_approx('t'::regclass)",
                Postgres,
                Unknown,
            ),
            ("SELECT set_limit(0.5)", Postgres, Unknown),
            (
                "SELECT dblink_exec('dbname=x', 'DELETE FROM t')",
                Postgres,
                Destructive,
            ),
            (
                "SELECT similarity(t, 'w') FROM t; DELETE FROM t",
                Postgres,
                Destructive,
            ),
        ],
        &no_rules(),
    );
}

/// MariaDB's spatial functions under their old names and the row constructor only compute.
#[test]
fn mariadb_old_spatial_names_and_row_are_read_only() {
    check(
        &[
            (
                "SELECT ST_DISTANCE(geomfromtext('POINT(0 0)'), geomfromtext('POINT(1 1)'))",
                Mysql,
                Safe,
            ),
            ("SELECT astext(envelope(g)), x(p), y(p) FROM t", Mysql, Safe),
            (
                "SELECT ROW(a, (a, a)) IN ((1, (1, 1))) FROM t1",
                Mysql,
                Safe,
            ),
            // A database's stored function of the same name is not the built-in.
            ("SELECT mydb.geomfromtext('x')", Mysql, Unknown),
            ("SELECT `astext`(g) FROM t", Mysql, Unknown),
        ],
        &no_rules(),
    );
}

/// SQL given as text inside SQL given as text is read a few levels deep, no deeper: dollar
/// quotes nest without growing, and a deep enough text must not run the stack out.
#[test]
fn nested_sql_texts_are_read_to_a_bounded_depth() {
    let nest = |depth: usize| {
        let mut sql = "SELECT v FROM t".to_owned();
        for level in 0..depth {
            sql = format!("SELECT * FROM ts_stat($n{level}${sql}$n{level}$)");
        }
        sql
    };
    let rules = SqlRules::default();
    assert!(matches!(
        assess_sql(&nest(3), SqlDialect::Postgres, &rules),
        Assessment::Safe(_)
    ));
    let deep = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || assess_sql(&nest(2_000), SqlDialect::Postgres, &SqlRules::default()))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert!(!matches!(deep, Assessment::Safe(_)), "{deep:?}");
}
