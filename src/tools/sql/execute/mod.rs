//! Running one statement on a named target database, behind the engine's own walls.
//!
//! The gate decided the call may run; this module makes a wrong decision survivable. A call
//! that nobody confirmed ([`Access::ReadOnly`]) runs in the engine's read-only mode with a
//! statement time limit, and stops fetching at the row limit. A confirmed call
//! ([`Access::ReadWrite`]) runs in its own transaction, committed only when the statement
//! succeeded. On every path the model's SQL goes through the prepared-statement path
//! (`sqlx::query` / `Executor::prepare`), which PostgreSQL and MySQL refuse to run with more
//! than one statement in it; SQLite's driver would run them all, so SQLite's own parser
//! checks first that there is exactly one.
//!
//! Per engine (see `postgres.rs`, `mysql.rs`, `sqlite.rs`):
//! - PostgreSQL: a fresh connection per call, with `default_transaction_read_only`,
//!   `statement_timeout`, `lock_timeout` and `idle_in_transaction_session_timeout` as
//!   connection options; `BEGIN READ ONLY` ... `ROLLBACK`.
//! - MySQL/MariaDB: a fresh connection per call, `SET SESSION TRANSACTION READ ONLY` and the
//!   server's own statement time limit (MariaDB `max_statement_time`, MySQL
//!   `max_execution_time`).
//! - SQLite: a read-only connection with `query_only`, an authorizer that allows only reads,
//!   and a progress handler that interrupts the statement at its deadline; such connections
//!   are pooled, since they can hold no session state (see `sqlite.rs`).
//!
//! A fresh connection per call also means session state (`SET`, `set_config`, temporary
//! tables, advisory locks) never leaks into the next call, and a connection whose stream was
//! cut at the row limit is simply closed, not drained.

mod mysql;
mod postgres;
mod sqlite;

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use secrecy::{ExposeSecret, SecretString};
use sqlx::mysql::MySqlConnectOptions;
use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Column, Either};

use super::render::{Budget, ResultSet, RowCount, render};
use super::value::Cell;
use crate::config::{DatabaseSettings, Settings, redact_password};
use crate::core::tools::{Approval, SqlDialect, ToolError, ToolOutput};

/// Time a call may take beyond the statement timeout before riskgate itself gives up on it:
/// the engine's own limit should always fire first; this covers a stalled network.
const BACKSTOP_GRACE: Duration = Duration::from_secs(2);

/// Which wall a call runs behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Nobody confirmed the call: the engine's read-only mode, rows capped, rolled back.
    ReadOnly,
    /// A person confirmed this exact call: read-write, in its own transaction.
    ReadWrite,
}

impl From<&Approval> for Access {
    fn from(approval: &Approval) -> Self {
        match approval {
            Approval::Auto => Self::ReadOnly,
            Approval::Confirmed { .. } => Self::ReadWrite,
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadOnly => "read-only",
            Self::ReadWrite => "read-write",
        })
    }
}

/// The limits every call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Rows kept at most; a read-only call stops fetching after one more.
    pub row_limit: usize,
    pub statement_timeout: Duration,
    pub connect_timeout: Duration,
}

impl Limits {
    fn from_settings(settings: &Settings) -> Self {
        Self {
            row_limit: usize::try_from(settings.sql.row_limit).unwrap_or(usize::MAX),
            statement_timeout: Duration::from_millis(settings.sql.statement_timeout_ms),
            connect_timeout: Duration::from_millis(settings.sql.connect_timeout_ms),
        }
    }
}

/// Runs statements on the configured target databases.
#[derive(Debug)]
pub(crate) struct SqlExecutor {
    targets: Vec<Target>,
    limits: Limits,
    budget: Budget,
}

/// One named database and how to reach it.
#[derive(Debug)]
struct Target {
    name: String,
    /// The URL with its password replaced, for messages.
    shown_url: String,
    /// The password as written and as percent-decoded, never to appear in a message.
    secrets: Vec<SecretString>,
    engine: Engine,
}

/// The engine behind a target, with what it takes to connect.
#[derive(Debug)]
enum Engine {
    Postgres(PgConnectOptions),
    Mysql(MySqlConnectOptions),
    Sqlite(sqlite::SqliteTarget),
    /// The URL did not parse into connection options; the message says why.
    Unusable {
        dialect: SqlDialect,
        problem: String,
    },
}

impl Engine {
    fn dialect(&self) -> SqlDialect {
        match self {
            Self::Postgres(_) => SqlDialect::Postgres,
            Self::Mysql(_) => SqlDialect::Mysql,
            Self::Sqlite(_) => SqlDialect::Sqlite,
            Self::Unusable { dialect, .. } => *dialect,
        }
    }
}

impl Target {
    fn from_settings(db: &DatabaseSettings) -> Option<Self> {
        let url = db.url.expose_secret();
        let dialect = db.dialect().ok()?;
        let parsed = match dialect {
            SqlDialect::Postgres => PgConnectOptions::from_str(url).map(Engine::Postgres),
            SqlDialect::Mysql => {
                // sqlx knows only `mysql://`; MariaDB speaks the same protocol.
                let url = match url.split_once("://") {
                    Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => {
                        format!("mysql://{rest}")
                    }
                    _ => url.to_owned(),
                };
                MySqlConnectOptions::from_str(&url).map(Engine::Mysql)
            }
            SqlDialect::Sqlite => SqliteConnectOptions::from_str(url)
                .map(|options| Engine::Sqlite(sqlite::SqliteTarget::new(options, None))),
        };
        let secrets = secrets_of(url);
        let engine = parsed.unwrap_or_else(|e| Engine::Unusable {
            dialect,
            problem: scrub(&e.to_string(), &secrets),
        });
        Some(Self {
            name: db.name.clone(),
            shown_url: redact_password(url),
            secrets,
            engine,
        })
    }

    fn demo(workspace: PathBuf) -> Self {
        let path = workspace.join(super::demo::DEMO_FILE);
        let options = SqliteConnectOptions::new().filename(&path);
        Self {
            name: super::DEMO_DATABASE.to_owned(),
            shown_url: format!("sqlite:{}", path.display()),
            secrets: Vec::new(),
            engine: Engine::Sqlite(sqlite::SqliteTarget::new(options, Some(path))),
        }
    }
}

/// The password of a URL, as written and percent-decoded.
fn secrets_of(url: &str) -> Vec<SecretString> {
    let Some(password) = url::Url::parse(url)
        .ok()
        .and_then(|u| u.password().map(str::to_owned))
    else {
        return Vec::new();
    };
    let mut secrets = vec![SecretString::from(password.clone())];
    if let Some(decoded) = percent_decode(&password).filter(|d| *d != password) {
        secrets.push(SecretString::from(decoded));
    }
    secrets
}

fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let pair = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&pair).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

/// Drivers sometimes echo connection details; a password never leaves in a message.
fn scrub(message: &str, secrets: &[SecretString]) -> String {
    secrets
        .iter()
        .map(ExposeSecret::expose_secret)
        .filter(|s| s.len() >= 3)
        .fold(message.to_owned(), |m, secret| {
            m.replace(secret, crate::config::REDACTED)
        })
}

/// Why a statement did not produce a result, before it is worded for the LLM.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SqlError {
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("connecting took longer than {0:?}")]
    ConnectTimeout(Duration),
    #[error("more than one statement")]
    SeveralStatements,
    #[error("no statement")]
    NoStatement,
    /// The engine refused a write in read-only mode.
    #[error("read-only: {0}")]
    ReadOnly(String),
    /// The statement ran past its time limit and was stopped.
    #[error("timed out")]
    Timeout,
    /// Waited too long for a lock another session holds.
    #[error("lock wait: {0}")]
    Lock(String),
    /// Anything else the engine reported: syntax, unknown table, constraint, and so on.
    #[error("{message}")]
    Engine {
        message: String,
        /// The table or function does not exist: worth telling how to list them.
        missing_object: bool,
    },
    /// Preparing the database itself failed (creating the demo database).
    #[error("{0}")]
    Setup(String),
}

impl SqlError {
    pub(crate) fn engine(message: impl Into<String>) -> Self {
        Self::Engine {
            message: message.into(),
            missing_object: false,
        }
    }
}

/// What a call fetched, before rendering.
#[derive(Debug)]
pub(crate) struct Fetched {
    /// The column names of the first row, when there was one.
    pub columns: Option<Vec<String>>,
    pub rows: Vec<Vec<Cell>>,
    pub count: RowCount,
    /// The sum the engine reported over the statement's results.
    pub rows_affected: u64,
    /// The row limit cut the stream: the connection must not be reused.
    pub cut: bool,
}

/// When [`collect`] stops reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fetch {
    /// Stop as soon as a row beyond the limit shows there are more: nothing else is fetched.
    UpToLimit,
    /// Read to the end (a confirmed statement must complete to mean what was confirmed),
    /// keeping only the rows within the limit and counting the others.
    ToEnd,
}

/// Reads a statement's results: rows (decoded while within `row_limit`) and the engine's
/// counts.
pub(crate) async fn collect<Q, R: sqlx::Row>(
    mut stream: BoxStream<'_, Result<Either<Q, R>, sqlx::Error>>,
    row_limit: usize,
    fetch: Fetch,
    decode: impl Fn(&R) -> Vec<Cell>,
    rows_affected: impl Fn(&Q) -> u64,
) -> Result<Fetched, sqlx::Error> {
    let mut columns = None;
    let mut rows = Vec::new();
    let mut seen: u64 = 0;
    let mut affected: u64 = 0;
    while let Some(item) = stream.next().await {
        match item? {
            Either::Left(done) => affected = affected.saturating_add(rows_affected(&done)),
            Either::Right(row) => {
                seen += 1;
                if columns.is_none() {
                    columns = Some(row.columns().iter().map(|c| c.name().to_owned()).collect());
                }
                if rows.len() < row_limit {
                    rows.push(decode(&row));
                } else if fetch == Fetch::UpToLimit {
                    return Ok(Fetched {
                        columns,
                        rows,
                        count: RowCount::MoreThanKept,
                        rows_affected: affected,
                        cut: true,
                    });
                }
            }
        }
    }
    Ok(Fetched {
        columns,
        rows,
        count: RowCount::Exact(seen),
        rows_affected: affected,
        cut: false,
    })
}

/// Gives up on `work` after `limit`, the backstop behind the engine's own time limit.
pub(crate) async fn within<T>(
    limit: Duration,
    work: impl Future<Output = Result<T, SqlError>>,
) -> Result<T, SqlError> {
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(SqlError::Timeout))
}

/// Connects, or says why not, within the connect timeout.
pub(crate) async fn connect<C>(
    limit: Duration,
    connecting: impl Future<Output = Result<C, sqlx::Error>>,
) -> Result<C, SqlError> {
    match tokio::time::timeout(limit, connecting).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(SqlError::Connect(e.to_string())),
        Err(_) => Err(SqlError::ConnectTimeout(limit)),
    }
}

impl SqlExecutor {
    /// The targets of `[[sql.databases]]`, or the demo database in the workspace when there
    /// are none.
    pub(crate) fn from_settings(settings: &Settings) -> Self {
        let mut targets: Vec<Target> = settings
            .sql
            .databases
            .iter()
            .filter_map(Target::from_settings)
            .collect();
        if targets.is_empty() {
            targets.push(Target::demo(settings.tools.workspace.clone()));
        }
        Self::with_targets(targets, settings)
    }

    /// An executor that knows no database (for a tool built only to assess).
    pub(crate) fn without_targets() -> Self {
        Self::with_targets(Vec::new(), &Settings::default())
    }

    fn with_targets(targets: Vec<Target>, settings: &Settings) -> Self {
        let chars = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Self {
            targets,
            limits: Limits::from_settings(settings),
            budget: Budget {
                llm_chars: chars(settings.output.llm_budget_chars),
                chat_chars: chars(settings.output.chat_budget_chars),
            },
        }
    }

    fn target(&self, name: Option<&str>) -> Result<&Target, ToolError> {
        let found = match name {
            None => self.targets.first(),
            Some(name) => self.targets.iter().find(|t| t.name == name),
        };
        found.ok_or_else(|| {
            let known: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
            let wanted = name.map_or_else(|| "a default database".to_owned(), |n| format!("{n:?}"));
            if known.is_empty() {
                ToolError::Failed(format!(
                    "there is no database to run on: {wanted} has no connection settings here"
                ))
            } else {
                ToolError::InvalidArguments(format!(
                    "there is no database named {wanted}; use one of: {} (leave `database` out for {})",
                    known.join(", "),
                    known[0]
                ))
            }
        })
    }

    /// Runs `sql` on the named database (the first when `None`) behind the wall `access`
    /// picks, and renders the result.
    #[tracing::instrument(skip(self, sql), fields(database, dialect, sql_bytes = sql.len()))]
    pub(crate) async fn run(
        &self,
        sql: &str,
        database: Option<&str>,
        access: Access,
    ) -> Result<ToolOutput, ToolError> {
        let target = self.target(database)?;
        let dialect = target.engine.dialect();
        tracing::Span::current()
            .record("database", target.name.as_str())
            .record("dialect", dialect.as_str());
        if sql.trim().is_empty() {
            return Err(explain(SqlError::NoStatement, target, access, &self.limits));
        }
        if sql.contains('\0') {
            return Err(ToolError::InvalidArguments(
                "the sql contains a NUL character, which no engine accepts; remove it".to_owned(),
            ));
        }
        let backstop = self.limits.statement_timeout + self.limits.connect_timeout + BACKSTOP_GRACE;
        let result = match &target.engine {
            Engine::Postgres(options) => {
                within(backstop, postgres::run(options, sql, access, &self.limits)).await
            }
            Engine::Mysql(options) => {
                within(backstop, mysql::run(options, sql, access, &self.limits)).await
            }
            Engine::Sqlite(target) => within(backstop, target.run(sql, access, &self.limits)).await,
            Engine::Unusable { problem, .. } => Err(SqlError::Connect(format!(
                "its URL does not give usable connection settings: {problem}"
            ))),
        };
        match result {
            Ok(result) => Ok(render(&result, self.budget)),
            Err(error) => {
                tracing::info!(%error, %access, "statement failed");
                Err(explain(error, target, access, &self.limits))
            }
        }
    }
}

/// Builds the [`ResultSet`] of a finished statement. `report_affected` says whether the
/// engine's count of changed rows means something here: engines count differently for
/// statements that return rows (PostgreSQL counts a SELECT's rows as "affected"), so each
/// engine decides.
pub(crate) fn result_set(
    columns: Vec<String>,
    fetched: Fetched,
    report_affected: bool,
) -> ResultSet {
    ResultSet {
        columns,
        rows: fetched.rows,
        count: fetched.count,
        rows_affected: report_affected.then_some(fetched.rows_affected),
    }
}

/// Words a failure for the LLM: what happened, and what to do next.
fn explain(error: SqlError, target: &Target, access: Access, limits: &Limits) -> ToolError {
    let dialect = target.engine.dialect();
    let on = format!("database {:?} ({dialect})", target.name);
    let clean = |m: &str| scrub(m, &target.secrets);
    match error {
        SqlError::Connect(message) => ToolError::Failed(format!(
            "could not connect to {on} at {}: {}. The database may be down or its settings wrong; tell the user, since retrying will not help until that is fixed",
            target.shown_url,
            clean(&message)
        )),
        SqlError::ConnectTimeout(limit) => ToolError::Failed(format!(
            "could not connect to {on} at {} within {}; it may be down or unreachable. Tell the user, or try again later",
            target.shown_url,
            crate::core::tools::format_duration(limit)
        )),
        SqlError::SeveralStatements => ToolError::Refused(format!(
            "the sql holds more than one statement, and {on} runs exactly one per call; nothing was run. Send each statement in its own call"
        )),
        SqlError::NoStatement => ToolError::InvalidArguments(
            "the sql holds no statement (only whitespace or comments); send one SQL statement"
                .to_owned(),
        ),
        SqlError::ReadOnly(message) => match access {
            Access::ReadOnly => ToolError::Refused(format!(
                "the statement tried to change something, but it was not confirmed, so it ran read-only and {on} refused it ({}); nothing was changed. To write, call again with risk_level \"medium\" so a person can confirm",
                clean(&message)
            )),
            Access::ReadWrite => ToolError::Failed(format!(
                "{on} refused to write ({}): the database or the account is read-only. Tell the user",
                clean(&message)
            )),
        },
        SqlError::Timeout => ToolError::Timeout(limits.statement_timeout),
        SqlError::Lock(message) => ToolError::Failed(format!(
            "the statement waited too long for a lock another session holds on {on} ({}); nothing was changed. Try again later or ask the user what holds the lock",
            clean(&message)
        )),
        SqlError::Engine {
            message,
            missing_object,
        } => {
            let hint = if missing_object {
                format!(
                    " To see what exists, list the tables: {}",
                    match dialect {
                        SqlDialect::Postgres =>
                            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
                        SqlDialect::Mysql => "SHOW TABLES",
                        SqlDialect::Sqlite =>
                            "SELECT name, sql FROM sqlite_schema WHERE type IN ('table', 'view')",
                    }
                )
            } else {
                String::new()
            };
            let changed = match access {
                Access::ReadOnly => "nothing was changed",
                Access::ReadWrite => "the transaction was rolled back, so nothing was changed",
            };
            ToolError::Failed(format!(
                "{on} reported an error: {}; {changed}. Fix the statement and call again.{hint}",
                clean(&message)
            ))
        }
        SqlError::Setup(message) => ToolError::Failed(format!(
            "could not prepare {on}: {}. Tell the user",
            clean(&message)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_message() {
        let db = DatabaseSettings {
            name: "shop".into(),
            url: SecretString::from("postgres://app:s3cr%40t@127.0.0.1:1/shop"),
        };
        let target = Target::from_settings(&db).expect("target");
        assert_eq!(target.shown_url, "postgres://app:redacted@127.0.0.1:1/shop");
        let error = explain(
            SqlError::Connect("auth failed for s3cr@t and s3cr%40t".into()),
            &target,
            Access::ReadOnly,
            &Limits::from_settings(&Settings::default()),
        );
        let text = error.to_string();
        assert!(!text.contains("s3cr"), "{text}");
        assert!(
            text.contains("could not connect to database \"shop\" (postgres)"),
            "{text}"
        );
    }

    #[test]
    fn mariadb_urls_are_mysql_urls() {
        let db = DatabaseSettings {
            name: "m".into(),
            url: SecretString::from("mariadb://root@127.0.0.1:3306/test"),
        };
        let target = Target::from_settings(&db).expect("target");
        assert!(
            matches!(target.engine, Engine::Mysql(_)),
            "{:?}",
            target.engine
        );
    }
}
