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
use crate::core::tools::{Approval, Preflight, SqlDialect, ToolError, ToolOutput};

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
    /// Bytes one value may take as the engine sends it (`sql.max_value_bytes`).
    pub max_value_bytes: usize,
    /// Bytes the kept rows may take together (`sql.max_result_bytes`).
    pub max_result_bytes: usize,
    /// Characters of an engine's error text kept (`sql.max_error_chars`).
    pub max_error_chars: usize,
}

impl Limits {
    fn from_settings(settings: &Settings) -> Self {
        Self {
            row_limit: usize::try_from(settings.sql.row_limit).unwrap_or(usize::MAX),
            statement_timeout: Duration::from_millis(settings.sql.statement_timeout_ms),
            connect_timeout: Duration::from_millis(settings.sql.connect_timeout_ms),
            max_value_bytes: usize::try_from(settings.sql.max_value_bytes).unwrap_or(usize::MAX),
            max_result_bytes: usize::try_from(settings.sql.max_result_bytes).unwrap_or(usize::MAX),
            max_error_chars: usize::try_from(settings.sql.max_error_chars).unwrap_or(usize::MAX),
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
    /// The passwords (of both URLs) as written and as percent-decoded, never to appear in a
    /// message.
    secrets: Vec<SecretString>,
    /// How confirmed statements connect (`url`).
    engine: Engine,
    /// How statements that run without a click connect, when `readonly_url` is set.
    auto: Option<AutoAccount>,
    /// The operator lets auto runs use a privileged account (`allow_privileged_auto`).
    allow_privileged_auto: bool,
    /// What the privilege check found about the auto account (empty: nothing), once it ran.
    privileges: tokio::sync::OnceCell<Vec<String>>,
}

/// The least-privilege account of `readonly_url`.
#[derive(Debug)]
struct AutoAccount {
    engine: Engine,
    shown_url: String,
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
        let mut secrets = secrets_of(url);
        let auto = db.readonly_url.as_ref().map(|readonly| {
            let readonly = readonly.expose_secret();
            secrets.extend(secrets_of(readonly));
            AutoAccount {
                engine: engine_of(readonly, dialect, &secrets),
                shown_url: redact_password(readonly),
            }
        });
        Some(Self {
            name: db.name.clone(),
            shown_url: redact_password(url),
            engine: engine_of(url, dialect, &secrets),
            secrets,
            auto,
            allow_privileged_auto: db.allow_privileged_auto,
            privileges: tokio::sync::OnceCell::new(),
        })
    }

    /// The engine (and its URL for messages) a call with `access` connects through.
    fn engine_for(&self, access: Access) -> (&Engine, &str) {
        match (&self.auto, access) {
            (Some(auto), Access::ReadOnly) => (&auto.engine, &auto.shown_url),
            _ => (&self.engine, &self.shown_url),
        }
    }

    fn demo(workspace: PathBuf) -> Self {
        let path = workspace.join(super::demo::DEMO_FILE);
        let options = SqliteConnectOptions::new().filename(&path);
        Self {
            name: super::DEMO_DATABASE.to_owned(),
            shown_url: format!("sqlite:{}", path.display()),
            secrets: Vec::new(),
            engine: Engine::Sqlite(sqlite::SqliteTarget::new(options, Some(path))),
            auto: None,
            allow_privileged_auto: false,
            privileges: tokio::sync::OnceCell::new(),
        }
    }
}

/// Connection options for one URL of a target.
fn engine_of(url: &str, dialect: SqlDialect, secrets: &[SecretString]) -> Engine {
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
    parsed.unwrap_or_else(|e| Engine::Unusable {
        dialect,
        problem: scrub(&e.to_string(), secrets),
    })
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
    /// A value or the result was larger than the settings allow; reading stopped there.
    #[error("too large: {0}")]
    TooLarge(String),
}

impl SqlError {
    pub(crate) fn engine(message: impl Into<String>) -> Self {
        Self::Engine {
            message: message.into(),
            missing_object: false,
        }
    }

    /// The same error with every engine text cut to `max` characters, before it is logged
    /// or shown anywhere: an engine may echo a huge value in its message.
    fn capped(self, max: usize) -> Self {
        let cut = |text: String| cap_chars(text, max);
        match self {
            Self::Connect(m) => Self::Connect(cut(m)),
            Self::ReadOnly(m) => Self::ReadOnly(cut(m)),
            Self::Lock(m) => Self::Lock(cut(m)),
            Self::Engine {
                message,
                missing_object,
            } => Self::Engine {
                message: cut(message),
                missing_object,
            },
            Self::Setup(m) => Self::Setup(cut(m)),
            Self::TooLarge(m) => Self::TooLarge(cut(m)),
            other => other,
        }
    }
}

/// `text` cut to `max` characters, with a note of how much was cut.
fn cap_chars(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        let more = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!("… ({more} more bytes of the message cut)"));
    }
    text
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
    /// A value or the kept rows went past the byte limits: reading stopped, and the call
    /// fails with this description.
    pub too_large: Option<String>,
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

/// The byte sizes of one row's values as the engine sent them: the largest and the sum.
pub(crate) type RowSizes<R> = fn(&R) -> (usize, usize);

/// Reads a statement's results: rows (decoded while within `row_limit`) and the engine's
/// counts. Every row's values are measured as it arrives: a value over
/// `limits.max_value_bytes`, or kept rows over `limits.max_result_bytes` together, stop the
/// reading at once (`too_large`), so at most one row more than the cap is ever held.
pub(crate) async fn collect<Q, R: sqlx::Row>(
    mut stream: BoxStream<'_, Result<Either<Q, R>, sqlx::Error>>,
    limits: &Limits,
    fetch: Fetch,
    decode: impl Fn(&R) -> Vec<Cell>,
    sizes: RowSizes<R>,
    rows_affected: impl Fn(&Q) -> u64,
) -> Result<Fetched, sqlx::Error> {
    let row_limit = limits.row_limit;
    let mut columns = None;
    let mut rows = Vec::new();
    let mut seen: u64 = 0;
    let mut affected: u64 = 0;
    let mut kept_bytes: usize = 0;
    while let Some(item) = stream.next().await {
        match item? {
            Either::Left(done) => affected = affected.saturating_add(rows_affected(&done)),
            Either::Right(row) => {
                seen += 1;
                if columns.is_none() {
                    columns = Some(row.columns().iter().map(|c| c.name().to_owned()).collect());
                }
                let (largest, total) = sizes(&row);
                let too_large = if largest > limits.max_value_bytes {
                    Some(format!(
                        "row {seen} holds a value of {largest} bytes, more than the {} bytes sql.max_value_bytes allows",
                        limits.max_value_bytes
                    ))
                } else if rows.len() < row_limit
                    && kept_bytes.saturating_add(total) > limits.max_result_bytes
                {
                    Some(format!(
                        "the rows up to row {seen} take more than the {} bytes sql.max_result_bytes allows",
                        limits.max_result_bytes
                    ))
                } else {
                    None
                };
                let full = rows.len() >= row_limit;
                if too_large.is_some() || (full && fetch == Fetch::UpToLimit) {
                    // Reading stops here: the connection must not be reused.
                    return Ok(Fetched {
                        columns,
                        rows,
                        count: RowCount::MoreThanKept,
                        rows_affected: affected,
                        cut: true,
                        too_large,
                    });
                }
                if !full {
                    kept_bytes = kept_bytes.saturating_add(total);
                    rows.push(decode(&row));
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
        too_large: None,
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
        if access == Access::ReadOnly {
            self.check_auto_account(target).await?;
        }
        let result = run_on(target, sql, access, &self.limits).await;
        match result {
            Ok(result) => Ok(render(&result, self.budget)),
            Err(error) => {
                let error = error.capped(self.limits.max_error_chars);
                tracing::info!(%error, %access, "statement failed");
                Err(explain(error, target, access, &self.limits))
            }
        }
    }

    /// The targets, by name and dialect, in order (the first is the default).
    pub(crate) fn targets(&self) -> impl Iterator<Item = (&str, SqlDialect)> + '_ {
        self.targets
            .iter()
            .map(|t| (t.name.as_str(), t.engine.dialect()))
    }

    /// Runs `sql`, riskgate's own query of the catalogue, on the target at `index` as a call
    /// nobody confirmed runs (the read-only account, the engine's read-only mode, the time
    /// limits; the demo database created first), keeping up to `rows` rows. The privilege
    /// check of auto calls is not needed: the statement is riskgate's, not the model's.
    /// Returns each row's cells as text and whether those were all the rows, or why the
    /// catalogue could not be read (never with a password in it).
    pub(crate) async fn read_catalogue(
        &self,
        index: usize,
        sql: &str,
        rows: usize,
    ) -> Result<(Vec<Vec<String>>, bool), String> {
        let Some(target) = self.targets.get(index) else {
            return Err("no such database".to_owned());
        };
        let limits = Limits {
            row_limit: rows,
            ..self.limits
        };
        match run_on(target, sql, Access::ReadOnly, &limits).await {
            Ok(result) => Ok((
                result
                    .rows
                    .iter()
                    .map(|row| row.iter().map(|cell| cell.as_text().to_owned()).collect())
                    .collect(),
                matches!(result.count, RowCount::Exact(_)),
            )),
            Err(error) => Err(scrub(
                &error.capped(self.limits.max_error_chars).to_string(),
                &target.secrets,
            )),
        }
    }

    /// Refuses an auto run when the account it would use is privileged (a PostgreSQL
    /// superuser or member of the server-file and program roles, a MySQL account with SUPER,
    /// FILE and the like): such an account reads server files, runs programs or ends other
    /// sessions whatever the read-only transaction says. Checked once per target, on the
    /// first auto run; a failed check is not remembered, so the next call tries again.
    async fn check_auto_account(&self, target: &Target) -> Result<(), ToolError> {
        if target.allow_privileged_auto {
            return Ok(());
        }
        let findings = self.auto_account_findings(target).await?;
        if findings.is_empty() {
            return Ok(());
        }
        let (engine, shown_url) = target.engine_for(Access::ReadOnly);
        let dialect = engine.dialect();
        tracing::warn!(database = %target.name, findings = %findings.join("; "), "auto SQL refused: the read-only account is privileged");
        Err(ToolError::Refused(format!(
            "nothing was run: statements on database {:?} ({dialect}) that nobody confirms use the account of {shown_url}, and that account is privileged ({}), so the read-only transaction would not hold it. Ask with risk_level \"medium\" so a person can confirm the statement; to let reads run without a click, the operator gives this database a least-privilege readonly_url (see deploy/OPERATOR.md)",
            target.name,
            findings.join("; ")
        )))
    }

    /// Checks every target's auto account now, as riskgate starts: one line per target for
    /// the operator (the account is fine, privileged and so refused, or could not be
    /// checked yet). A result is kept like the first auto run's would be.
    pub async fn check_auto_accounts(&self) -> Vec<Preflight> {
        let mut lines = Vec::new();
        for target in &self.targets {
            let name = &target.name;
            let line = match self.auto_account_findings(target).await {
                Ok(findings) if findings.is_empty() => Preflight::fine(format!(
                    "sql target {name:?}: the account of statements run without a click is not privileged; they run"
                )),
                Ok(findings) if target.allow_privileged_auto => Preflight::warning(format!(
                    "sql target {name:?}: the account of statements run without a click is privileged ({}), and allow_privileged_auto lets them run anyway",
                    findings.join("; ")
                )),
                Ok(findings) => Preflight::warning(format!(
                    "sql target {name:?}: statements run without a click are refused, because their account is privileged ({}); give the target a least-privilege readonly_url (deploy/OPERATOR.md)",
                    findings.join("; ")
                )),
                Err(error) => Preflight::warning(format!(
                    "sql target {name:?}: the account of statements run without a click could not be checked yet ({error}); it is checked again at the first such statement"
                )),
            };
            lines.push(line);
        }
        lines
    }

    /// What makes the auto account of `target` privileged (empty: nothing), probed once.
    async fn auto_account_findings<'t>(
        &self,
        target: &'t Target,
    ) -> Result<&'t Vec<String>, ToolError> {
        let (engine, _) = target.engine_for(Access::ReadOnly);
        let backstop = self.limits.statement_timeout + self.limits.connect_timeout + BACKSTOP_GRACE;
        target
            .privileges
            .get_or_try_init(|| async {
                let probed = match engine {
                    Engine::Postgres(options) => {
                        within(backstop, postgres::privileges(options, &self.limits)).await
                    }
                    Engine::Mysql(options) => {
                        within(backstop, mysql::privileges(options, &self.limits)).await
                    }
                    // SQLite runs in this process: auto runs open the file read-only, with
                    // query_only and a read-only authorizer; there is no account to check.
                    Engine::Sqlite(_) | Engine::Unusable { .. } => Ok(Vec::new()),
                };
                probed.map_err(|error| {
                    explain(
                        error.capped(self.limits.max_error_chars),
                        target,
                        Access::ReadOnly,
                        &self.limits,
                    )
                })
            })
            .await
    }
}

/// Runs `sql` on `target` behind the wall `access` picks, within the backstop behind the
/// engine's own time limit.
async fn run_on(
    target: &Target,
    sql: &str,
    access: Access,
    limits: &Limits,
) -> Result<ResultSet, SqlError> {
    let backstop = limits.statement_timeout + limits.connect_timeout + BACKSTOP_GRACE;
    let (engine, _) = target.engine_for(access);
    match engine {
        Engine::Postgres(options) => {
            within(backstop, postgres::run(options, sql, access, limits)).await
        }
        Engine::Mysql(options) => within(backstop, mysql::run(options, sql, access, limits)).await,
        Engine::Sqlite(target) => within(backstop, target.run(sql, access, limits)).await,
        Engine::Unusable { problem, .. } => Err(SqlError::Connect(format!(
            "its URL does not give usable connection settings: {problem}"
        ))),
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
            target.engine_for(access).1,
            clean(&message)
        )),
        SqlError::ConnectTimeout(limit) => ToolError::Failed(format!(
            "could not connect to {on} at {} within {}; it may be down or unreachable. Tell the user, or try again later",
            target.engine_for(access).1,
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
        SqlError::TooLarge(what) => ToolError::Failed(format!(
            "the result from {on} is too large: {}; reading stopped there and {}. Select less: fewer rows (LIMIT), fewer columns, or part of a long value (substr(col, 1, 1000), length(col))",
            clean(&what),
            match access {
                Access::ReadOnly => "nothing was changed",
                Access::ReadWrite => "the transaction was rolled back, so nothing was changed",
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_a_message() {
        let db = DatabaseSettings::new("shop", "postgres://app:s3cr%40t@127.0.0.1:1/shop");
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
        let db = DatabaseSettings::new("m", "mariadb://root@127.0.0.1:3306/test");
        let target = Target::from_settings(&db).expect("target");
        assert!(
            matches!(target.engine, Engine::Mysql(_)),
            "{:?}",
            target.engine
        );
    }
}
