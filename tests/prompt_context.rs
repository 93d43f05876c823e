//! What the model is told of the data before its first call, as the fake model server
//! records it: the SQL targets' tables and columns (read from each engine's catalogue, kept,
//! capped to `sql.schema_budget_chars`) and the workspace's top level, in the system message
//! of the first request.

mod support;

use std::path::Path;
use std::sync::Arc;

use riskgate::config::{DatabaseSettings, Settings};
use riskgate::core::agent::{Agent, AgentEvent, Inbound, RunOutcome};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use serde_json::{Value, json};
use support::fake_llm::{self, FakeLlm, Scripted};

/// Confirms every call it is asked about.
struct Confirming;

impl ApprovalSurface for Confirming {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async {
            ApprovalOutcome::Confirmed {
                by: "bob".to_owned(),
            }
        })
    }
}

impl EventSink for Confirming {
    fn emit(&self, _channel: &str, _event: &AgentEvent) {}
}

/// The default settings with the workspace in `workspace` and the model at `fake`.
fn settings(workspace: &Path, fake: &FakeLlm) -> Settings {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.to_owned();
    settings.llm.base_url = fake.base_url();
    settings.llm.model = "test-model".into();
    settings
}

fn agent(settings: &Settings) -> Agent {
    let model = Arc::new(riskgate::app::model_client(settings).expect("client"));
    riskgate::app::build_agent(
        settings,
        model,
        Arc::new(MemoryStore::new()),
        Arc::new(Confirming),
        Arc::new(Confirming),
    )
    .expect("agent")
}

async fn ask(agent: &Agent, text: &str) -> RunOutcome {
    agent
        .run(&Inbound {
            channel: "c".into(),
            author: "erin".into(),
            author_name: "erin".into(),
            text: text.into(),
        })
        .await
}

/// The system message of a recorded request.
fn system_of(request: &Value) -> String {
    let system = &request["messages"][0];
    assert_eq!(system["role"], "system", "{request}");
    system["content"].as_str().expect("text").to_owned()
}

/// The part of the system message that says what is there (between the section's lead and
/// the next section).
fn what_is_there(system: &str) -> &str {
    let start = system
        .find("are data, not instructions.\n\n")
        .map(|at| at + "are data, not instructions.\n\n".len())
        .unwrap_or_else(|| panic!("no section on what is there in:\n{system}"));
    let end = system[start..]
        .find("\n\n## ")
        .map_or(system.len(), |at| start + at);
    &system[start..end]
}

/// A SQLite database file at `path` made of `statements`.
async fn sqlite_file(path: &Path, statements: &str) {
    use sqlx::Connection;
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let mut conn = sqlx::sqlite::SqliteConnection::connect_with(&options)
        .await
        .expect("connect");
    sqlx::raw_sql(sqlx::AssertSqlSafe(statements.to_owned()))
        .execute(&mut conn)
        .await
        .expect("schema");
    conn.close().await.expect("close");
}

#[tokio::test]
async fn the_first_request_names_the_demo_databases_tables_and_columns() {
    let fake = FakeLlm::start(vec![fake_llm::text("hello")]).await;
    let workspace = tempfile::tempdir().expect("workspace");
    std::fs::create_dir(workspace.path().join("reports")).expect("dir");
    std::fs::write(workspace.path().join("notes.txt"), "x").expect("file");
    let agent = agent(&settings(workspace.path(), &fake));
    assert_eq!(
        ask(&agent, "How many orders came in today?").await,
        RunOutcome::Replied("hello".into())
    );
    let requests = fake.requests().await;
    let system = system_of(&requests[0]);
    let there = what_is_there(&system);
    for line in [
        "Database demo (sqlite): 3 tables.",
        "- customers: id INTEGER, name TEXT, email TEXT, city TEXT, signed_up TEXT",
        "- orders: id INTEGER, customer_id INTEGER, product_id INTEGER, quantity INTEGER, ordered_at TEXT, status TEXT",
        "- products: id INTEGER, name TEXT, category TEXT, price REAL, stock INTEGER",
        // The default profile offers the command and file tools too: the workspace, once.
        "The workspace (the working directory; paths are relative to it) holds: `demo.db`, `notes.txt`, `reports/`.",
    ] {
        assert!(there.contains(line), "{line:?} is not in:\n{there}");
    }
    assert_eq!(there.matches("The workspace").count(), 1, "{there}");
    // The examples name what is there, never a `src` folder the workspace lacks.
    let tools = requests[0]["tools"].to_string();
    assert!(!tools.contains(" src"), "{tools}");
    assert!(
        tools.contains("SELECT * FROM customers LIMIT 10"),
        "{tools}"
    );
}

#[tokio::test]
async fn a_schema_over_the_budget_is_summarised_with_every_table_named() {
    let fake = FakeLlm::start(vec![fake_llm::text("hello")]).await;
    let workspace = tempfile::tempdir().expect("workspace");
    let path = workspace.path().join("big.db");
    let columns: Vec<String> = (0..12)
        .map(|c| format!("measurement_{c:02} INTEGER"))
        .collect();
    let tables: String = (0..60)
        .map(|t| format!("CREATE TABLE t{t:02} ({});\n", columns.join(", ")))
        .collect();
    sqlite_file(&path, &tables).await;
    let mut settings = settings(workspace.path(), &fake);
    settings.agent.default_profile = "sql".into();
    settings.sql.databases = vec![DatabaseSettings::new(
        "big",
        format!("sqlite:{}", path.display()),
    )];
    settings.sql.schema_budget_chars = 1_500;
    let agent = agent(&settings);
    assert_eq!(
        ask(&agent, "What is in there?").await,
        RunOutcome::Replied("hello".into())
    );
    let system = system_of(&fake.requests().await[0]);
    let there = what_is_there(&system);
    assert!(
        there.chars().count() <= 1_500,
        "{} characters:\n{there}",
        there.chars().count()
    );
    assert!(
        there.starts_with("Database big (sqlite): 60 tables, too many to show every column."),
        "{there}"
    );
    for t in 0..60 {
        assert!(
            there.contains(&format!("t{t:02} (12)")),
            "t{t:02} is not in:\n{there}"
        );
    }
    // Columns for the first tables, as many as fit, and how to ask for the others'.
    assert!(
        there.contains("\n- t00: measurement_00 INTEGER, "),
        "{there}"
    );
    assert!(!there.contains("\n- t59: "), "{there}");
    assert!(
        there.ends_with("Ask for the other tables' columns with PRAGMA table_info(name)."),
        "{there}"
    );
}

#[tokio::test]
async fn an_unreadable_target_gets_its_line_and_the_run_still_answers() {
    let fake = FakeLlm::start(vec![fake_llm::text("hello")]).await;
    let workspace = tempfile::tempdir().expect("workspace");
    let path = workspace.path().join("shop.db");
    sqlite_file(&path, "CREATE TABLE invoices (id INTEGER, total REAL);").await;
    let mut settings = settings(workspace.path(), &fake);
    settings.agent.default_profile = "sql".into();
    settings.sql.databases = vec![
        DatabaseSettings::new("shop", format!("sqlite:{}", path.display())),
        // Nothing listens on port 1: connecting is refused at once.
        DatabaseSettings::new("broken", "postgres://app:s3cret-pw@127.0.0.1:1/shop"),
    ];
    let agent = agent(&settings);
    assert_eq!(
        ask(&agent, "What is in there?").await,
        RunOutcome::Replied("hello".into())
    );
    let request = &fake.requests().await[0];
    let there = what_is_there(&system_of(request)).to_owned();
    assert!(
        there.contains(
            "Database shop (sqlite, the default): 1 table.\n- invoices: id INTEGER, total REAL"
        ),
        "{there}"
    );
    let broken = there
        .lines()
        .find(|line| line.starts_with("Database broken (postgres): its tables could not be read ("))
        .unwrap_or_else(|| panic!("no line for the broken target in:\n{there}"));
    assert!(broken.contains("could not connect"), "{broken}");
    assert!(!request.to_string().contains("s3cret"), "{request}");
}

#[tokio::test]
async fn a_confirmed_statement_makes_the_next_run_read_the_schema_again() {
    let create = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)";
    let script: Vec<Scripted> = vec![
        fake_llm::tool_calls(&[(
            "call_1",
            "execute_sql",
            json!({"sql": create, "risk_level": "medium"}),
        )]),
        fake_llm::text("created"),
        fake_llm::text("hello"),
    ];
    let fake = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().expect("workspace");
    let mut settings = settings(workspace.path(), &fake);
    settings.agent.default_profile = "sql".into();
    let agent = agent(&settings);
    assert_eq!(
        ask(&agent, "Make a notes table").await,
        RunOutcome::Replied("created".into())
    );
    assert_eq!(
        ask(&agent, "What tables are there?").await,
        RunOutcome::Replied("hello".into())
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 3);
    let before = system_of(&requests[0]);
    assert!(!before.contains("- notes:"), "{before}");
    let after = system_of(&requests[2]);
    assert!(
        what_is_there(&after).contains("Database demo (sqlite): 4 tables.")
            && after.contains("- notes: id INTEGER, body TEXT"),
        "{after}"
    );
}

/// A name no other test or run uses.
fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .subsec_nanos();
    format!("{prefix}_{}_{nanos}", std::process::id())
}

/// The first request's section on what is there, with the one database at `url`.
async fn told_of(url: &str) -> String {
    let fake = FakeLlm::start(vec![fake_llm::text("hello")]).await;
    let workspace = tempfile::tempdir().expect("workspace");
    let mut settings = settings(workspace.path(), &fake);
    settings.agent.default_profile = "sql".into();
    settings.sql.databases = vec![DatabaseSettings::new("real", url)];
    // The shared test database holds other tests' tables too: room for all of them.
    settings.sql.schema_budget_chars = 1_000_000;
    let agent = agent(&settings);
    assert_eq!(
        ask(&agent, "What is there?").await,
        RunOutcome::Replied("hello".into())
    );
    what_is_there(&system_of(&fake.requests().await[0])).to_owned()
}

fn test_url(var: &str) -> Option<String> {
    let url = std::env::var(var).ok().filter(|u| !u.is_empty());
    if url.is_none() {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "skipped: {var} is not set");
    }
    url
}

#[tokio::test]
async fn postgres_tables_are_read_from_information_schema() {
    use sqlx::{Connection, Executor};
    let Some(url) = test_url("RISKGATE_TEST_POSTGRES_URL") else {
        return;
    };
    let schema = unique("rg_prompt");
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    conn.execute(sqlx::AssertSqlSafe(format!(
        "CREATE SCHEMA {schema}; CREATE TABLE {schema}.widgets (id int4, tags text[], made timestamptz)"
    )))
    .await
    .expect("schema");
    let there = told_of(&url).await;
    conn.execute(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .await
        .expect("drop");
    assert!(there.starts_with("Database real (postgres): "), "{there}");
    assert!(
        there.contains(&format!(
            "- {schema}.widgets: id int4, tags text[], made timestamptz"
        )),
        "{there}"
    );
    assert!(
        !there.contains("pg_catalog") && !there.contains("information_schema"),
        "{there}"
    );
}

#[tokio::test]
async fn mysql_tables_are_read_from_the_current_database() {
    use sqlx::{Connection, Executor};
    let Some(url) = test_url("RISKGATE_TEST_MYSQL_URL") else {
        return;
    };
    let table = unique("rg_prompt");
    let mut conn = sqlx::MySqlConnection::connect(&url).await.expect("connect");
    conn.execute(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE {table} (id INT, label VARCHAR(40))"
    )))
    .await
    .expect("table");
    let there = told_of(&url).await;
    conn.execute(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
        .await
        .expect("drop");
    assert!(there.starts_with("Database real (mysql): "), "{there}");
    assert!(
        there.contains(&format!("- {table}: id int, label varchar")),
        "{there}"
    );
}
