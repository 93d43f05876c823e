//! PostgreSQL: a fresh connection per call whose session settings are the walls.
//!
//! The limits travel as connection options (`-c statement_timeout=...` in the startup
//! packet), so they hold before the first statement and come after any the URL sets, which
//! they override. A read-only call also gets `default_transaction_read_only=on` and runs
//! inside `BEGIN READ ONLY` ... `ROLLBACK`: a function that writes (`SELECT bump()`) fails
//! there with SQLSTATE 25006. The statement is prepared (`Parse`), and PostgreSQL refuses a
//! prepared statement with more than one command in it.
//!
//! When the row limit cuts a read, the connection is shut without reading the rest: dropping
//! a stream would leave PostgreSQL sending every remaining row, and a pooled connection would
//! have to drain them first.
//!
//! A value is measured on the server, before it is sent: sqlx reads a whole row into memory
//! before riskgate sees it, so a `SELECT repeat('x', 500000000)` measured here would already
//! have cost the bot a gigabyte. A query is run wrapped ([`guarded`]): each column whose text
//! is longer than `sql.max_value_bytes` arrives as NULL, and one extra column carries the
//! length of the largest such value, which fails the call as too large. A statement that
//! cannot be wrapped (SHOW, EXPLAIN, a write with RETURNING) runs as written, measured as its
//! rows arrive.

use sqlx::postgres::{PgConnectOptions, PgConnection, PgDatabaseError, PgQueryResult, PgRow};
use sqlx::{AssertSqlSafe, Column, Connection, Executor, Row, SqlSafeStr, Statement};

use super::{Access, Fetch, Fetched, Limits, SqlError, collect, connect, result_set};
use crate::tools::sql::render::ResultSet;
use crate::tools::sql::value;

/// Runs one statement behind the wall of `access`.
#[tracing::instrument(skip_all, fields(%access))]
pub(super) async fn run(
    options: &PgConnectOptions,
    sql: &str,
    access: Access,
    limits: &Limits,
) -> Result<ResultSet, SqlError> {
    let options = session_options(options, access, limits);
    let mut conn = connect(limits.connect_timeout, PgConnection::connect_with(&options)).await?;
    let outcome = run_on(&mut conn, sql, access, limits).await;
    let closed = match &outcome {
        Ok((_, Ending::Finished)) => conn.close().await,
        // Cut at the row limit, or failed somewhere: do not wait for anything.
        _ => conn.close_hard().await,
    };
    if let Err(error) = closed {
        tracing::debug!(%error, "closing the connection failed");
    }
    outcome.map(|(result, _)| result).map_err(classify)
}

/// Marks the error `run_on` returns when a value or the result was too large.
const TOO_LARGE: &str = "riskgate: too large: ";

/// The sizes of a row's values as PostgreSQL sent them.
fn row_sizes(row: &PgRow) -> (usize, usize) {
    (0..row.len())
        .map(|i| {
            row.try_get_raw(i)
                .ok()
                .and_then(|value| value.as_bytes().ok().map(<[u8]>::len))
                .unwrap_or(0)
        })
        .fold((0, 0), |(largest, total), len| {
            (largest.max(len), total.saturating_add(len))
        })
}

/// The statement wrapped so that no value longer than `max_value` bytes (as text) leaves
/// the server: each of the `columns` columns is replaced by NULL when too long, and a last
/// column holds the length of the longest replaced value (NULL when none was). `None` for a
/// statement without columns. `OFFSET 0` keeps PostgreSQL from inlining the statement, so
/// each value is computed once.
fn guarded(sql: &str, columns: usize, max_value: usize) -> Option<String> {
    if columns == 0 {
        return None;
    }
    let body = sql.trim_end().trim_end_matches(';').trim_end();
    let names: Vec<String> = (1..=columns).map(|i| format!("c{i}")).collect();
    let length = |name: &str| format!("octet_length(q.{name}::text)");
    let values: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "CASE WHEN {} > {max_value} THEN NULL ELSE q.{name} END",
                length(name)
            )
        })
        .collect();
    let oversized: Vec<String> = names
        .iter()
        .map(|name| {
            let length = length(name);
            format!("CASE WHEN {length} > {max_value} THEN {length} END")
        })
        .collect();
    Some(format!(
        "SELECT {}, GREATEST({})::bigint AS riskgate_oversized FROM (SELECT * FROM (\n{body}\n) AS riskgate_statement OFFSET 0) AS q({})",
        values.join(", "),
        oversized.join(", "),
        names.join(", ")
    ))
}

/// The sizes of a guarded row: its values as sent, and the largest value the server held
/// back (the last column).
fn guarded_sizes(row: &PgRow) -> (usize, usize) {
    let last = row.len().saturating_sub(1);
    let held_back = row
        .try_get::<Option<i64>, _>(last)
        .ok()
        .flatten()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    let (largest, total) = row_sizes(row);
    (largest.max(held_back), total)
}

/// What makes the account of `options` privileged for auto runs: a superuser, or a member
/// of a role that reads or writes server files, runs server programs or signals other
/// sessions, or a role with REPLICATION (its read-only transactions can still consume a
/// logical replication slot's changes with `pg_logical_slot_get_changes`, or advance and
/// drop slots). Empty when it is none of these.
pub(super) async fn privileges(
    options: &PgConnectOptions,
    limits: &Limits,
) -> Result<Vec<String>, SqlError> {
    let options = session_options(options, Access::ReadOnly, limits);
    let mut conn = connect(limits.connect_timeout, PgConnection::connect_with(&options)).await?;
    let probed = sqlx::raw_sql(
        "SELECT current_user::text, \
                (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), \
                pg_has_role(current_user, 'pg_execute_server_program', 'USAGE'), \
                pg_has_role(current_user, 'pg_read_server_files', 'USAGE'), \
                pg_has_role(current_user, 'pg_write_server_files', 'USAGE'), \
                pg_has_role(current_user, 'pg_signal_backend', 'USAGE'), \
                (SELECT rolreplication FROM pg_roles WHERE rolname = current_user)",
    )
    .fetch_one(&mut conn)
    .await;
    if let Err(error) = conn.close().await {
        tracing::debug!(%error, "closing the connection failed");
    }
    let row = probed.map_err(classify)?;
    let flag = |i: usize| {
        row.try_get::<Option<bool>, _>(i)
            .ok()
            .flatten()
            .unwrap_or(false)
    };
    let user: String = row.try_get(0).unwrap_or_default();
    if flag(1) {
        return Ok(vec![format!("role {user} is a superuser")]);
    }
    Ok([
        (2, "pg_execute_server_program (runs programs on the server)"),
        (3, "pg_read_server_files (reads server files)"),
        (4, "pg_write_server_files (writes server files)"),
        (5, "pg_signal_backend (ends other sessions)"),
    ]
    .into_iter()
    .filter(|(i, _)| flag(*i))
    .map(|(_, role)| format!("role {user} is a member of {role}"))
    .chain(
        flag(6)
            .then(|| format!("role {user} has REPLICATION (consumes and drops replication slots)")),
    )
    .collect())
}

/// How a statement's connection is left.
enum Ending {
    /// The statement completed and the transaction ended: a graceful close.
    Finished,
    /// The row limit cut the stream: rows may still be in flight.
    Cut,
}

fn session_options(base: &PgConnectOptions, access: Access, limits: &Limits) -> PgConnectOptions {
    let ms = limits.statement_timeout.as_millis().to_string();
    let mut settings = vec![
        ("statement_timeout", ms.clone()),
        ("lock_timeout", ms.clone()),
        // Our own calls never idle inside a transaction; if this process stalls there, the
        // server ends the session rather than hold locks or a snapshot.
        ("idle_in_transaction_session_timeout", ms),
    ];
    if access == Access::ReadOnly {
        settings.push(("default_transaction_read_only", "on".to_owned()));
    }
    let options = base.clone().options(settings);
    if options.get_application_name().is_some() {
        options
    } else {
        options.application_name("riskgate")
    }
}

/// The guarded form of `sql` (see `guarded`), prepared inside a savepoint: if PostgreSQL
/// cannot take it, the transaction is as it was and the statement runs as written (`None`).
async fn prepare_guarded<'c>(
    tx: &mut sqlx::Transaction<'c, sqlx::Postgres>,
    sql: &str,
    columns: usize,
    limits: &Limits,
) -> Result<Option<sqlx::postgres::PgStatement>, sqlx::Error> {
    let Some(text) = guarded(sql, columns, limits.max_value_bytes) else {
        return Ok(None);
    };
    sqlx::raw_sql("SAVEPOINT riskgate_guard")
        .execute(&mut **tx)
        .await?;
    match (&mut **tx)
        .prepare(AssertSqlSafe(text).into_sql_str())
        .await
    {
        Ok(prepared) => Ok(Some(prepared)),
        Err(sqlx::Error::Database(_)) => {
            sqlx::raw_sql("ROLLBACK TO SAVEPOINT riskgate_guard")
                .execute(&mut **tx)
                .await?;
            Ok(None)
        }
        Err(other) => Err(other),
    }
}

async fn run_on(
    conn: &mut PgConnection,
    sql: &str,
    access: Access,
    limits: &Limits,
) -> Result<(ResultSet, Ending), sqlx::Error> {
    let mut tx = match access {
        Access::ReadOnly => conn.begin_with("BEGIN READ ONLY").await?,
        Access::ReadWrite => conn.begin().await?,
    };
    let statement = (&mut *tx)
        .prepare(AssertSqlSafe(sql.to_owned()).into_sql_str())
        .await?;
    let columns: Vec<String> = statement
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    let fetch = match access {
        Access::ReadOnly => Fetch::UpToLimit,
        Access::ReadWrite => Fetch::ToEnd,
    };
    let wrapped = prepare_guarded(&mut tx, sql, columns.len(), limits).await?;
    let fetched = match &wrapped {
        Some(prepared) => {
            let fetched = collect(
                (&mut *tx).fetch_many(prepared.query()),
                limits,
                fetch,
                |row| {
                    let mut cells = value::postgres_row(row);
                    cells.pop();
                    cells
                },
                guarded_sizes,
                PgQueryResult::rows_affected,
            )
            .await?;
            Fetched {
                columns: fetched.columns.map(|mut names| {
                    names.pop();
                    names
                }),
                ..fetched
            }
        }
        None => {
            collect(
                (&mut *tx).fetch_many(statement.query()),
                limits,
                fetch,
                value::postgres_row,
                row_sizes,
                PgQueryResult::rows_affected,
            )
            .await?
        }
    };

    if let Some(what) = fetched.too_large {
        // The connection is shut without reading on, which also rolls back.
        return Err(sqlx::Error::Protocol(format!("{TOO_LARGE}{what}")));
    }
    if fetched.cut {
        // Dropping the transaction queues a ROLLBACK that is never sent: the connection is
        // shut, which rolls back on the server.
        return Ok((result_set(columns, fetched, false), Ending::Cut));
    }
    match access {
        Access::ReadOnly => {
            tx.rollback().await?;
            Ok((result_set(columns, fetched, false), Ending::Finished))
        }
        Access::ReadWrite => {
            // A statement that returns rows reports them as "affected" whether it wrote or
            // not; a transaction ID is assigned only by a write.
            let wrote = columns.is_empty() || transaction_wrote(&mut tx).await?;
            tx.commit().await?;
            Ok((result_set(columns, fetched, wrote), Ending::Finished))
        }
    }
}

async fn transaction_wrote(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    let row = sqlx::raw_sql("SELECT txid_current_if_assigned() IS NOT NULL")
        .fetch_one(conn)
        .await?;
    row.try_get(0)
}

/// Sorts PostgreSQL's errors by SQLSTATE.
fn classify(error: sqlx::Error) -> SqlError {
    if let sqlx::Error::Protocol(message) = &error
        && let Some(what) = message.strip_prefix(TOO_LARGE)
    {
        return SqlError::TooLarge(what.to_owned());
    }
    let sqlx::Error::Database(db) = &error else {
        return SqlError::engine(error.to_string());
    };
    let mut message = db.message().to_owned();
    if let Some(pg) = db.try_downcast_ref::<PgDatabaseError>() {
        if let Some(detail) = pg.detail() {
            message.push_str(&format!(" (detail: {detail})"));
        }
        if let Some(hint) = pg.hint() {
            message.push_str(&format!(" (hint: {hint})"));
        }
    }
    match db.code().as_deref() {
        // read_only_sql_transaction
        Some("25006") => SqlError::ReadOnly(message),
        // query_canceled: statement_timeout
        Some("57014") => SqlError::Timeout,
        // lock_not_available: lock_timeout
        Some("55P03") => SqlError::Lock(message),
        // syntax_error, for "cannot insert multiple commands into a prepared statement"
        Some("42601") if message.contains("multiple commands") => SqlError::SeveralStatements,
        // undefined_table, undefined_function, undefined_column, invalid_schema_name
        Some("42P01" | "42883" | "42703" | "3F000") => SqlError::Engine {
            message,
            missing_object: true,
        },
        _ => SqlError::engine(message),
    }
}
