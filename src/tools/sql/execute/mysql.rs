//! MySQL and MariaDB: a fresh connection per call, its session set up as the wall.
//!
//! After connecting, riskgate sets the server's statement time limit (MariaDB
//! `max_statement_time` in seconds, MySQL `max_execution_time` in milliseconds, told apart by
//! `VERSION()`) and, for a read-only call, `SET SESSION TRANSACTION READ ONLY`, which refuses
//! writes and DDL alike (a stored function that inserts fails with error 1792). `START
//! TRANSACTION READ ONLY` alone would not do: DDL commits implicitly.
//!
//! The statement goes through `COM_STMT_PREPARE`, which takes exactly one statement. Note
//! that sqlx 0.9 sends a query *without* arguments over the text protocol with
//! multi-statements enabled (`raw_sql`, `execute(&str)`); `sqlx::query` always carries an
//! (empty) argument list and so is prepared, and `Executor::prepare` is explicit about it.
//!
//! MySQL's `max_execution_time` covers only SELECT; a confirmed write there is bounded by
//! riskgate's own backstop, which drops the connection (the server then stops the statement
//! when it notices).

use std::fmt::Write as _;

use sqlx::mysql::{
    MySql, MySqlConnectOptions, MySqlConnection, MySqlDatabaseError, MySqlQueryResult, MySqlRow,
};
use sqlx::{AssertSqlSafe, Column, Connection, Decode, Executor, Row, SqlSafeStr, Statement};

use super::{Access, Fetch, Limits, SqlError, collect, connect, result_set};
use crate::tools::sql::render::ResultSet;
use crate::tools::sql::value;

/// Runs one statement behind the wall of `access`.
#[tracing::instrument(skip_all, fields(%access))]
pub(super) async fn run(
    options: &MySqlConnectOptions,
    sql: &str,
    access: Access,
    limits: &Limits,
) -> Result<ResultSet, SqlError> {
    let mut conn = connect(
        limits.connect_timeout,
        MySqlConnection::connect_with(options),
    )
    .await?;
    let outcome = async {
        set_up_session(&mut conn, access, limits).await?;
        run_on(&mut conn, sql, access, limits).await
    }
    .await;
    let closed = match &outcome {
        Ok((_, false)) => conn.close().await,
        // Cut at the row limit, or failed somewhere: do not wait for anything.
        _ => conn.close_hard().await,
    };
    if let Err(error) = closed {
        tracing::debug!(%error, "closing the connection failed");
    }
    outcome.map(|(result, _)| result).map_err(classify)
}

/// The flavour of server, from `VERSION()`: it decides how a statement's time is limited.
fn time_limit_statement(version: &str, limits: &Limits) -> String {
    if version.contains("MariaDB") {
        format!(
            "SET SESSION max_statement_time = {:.3}",
            limits.statement_timeout.as_secs_f64()
        )
    } else {
        format!(
            "SET SESSION max_execution_time = {}",
            limits.statement_timeout.as_millis()
        )
    }
}

async fn set_up_session(
    conn: &mut MySqlConnection,
    access: Access,
    limits: &Limits,
) -> Result<(), sqlx::Error> {
    let version: String = sqlx::raw_sql("SELECT VERSION()")
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    let mut setup = time_limit_statement(&version, limits);
    if access == Access::ReadOnly {
        let _ = write!(setup, "; SET SESSION TRANSACTION READ ONLY");
    }
    // Our own fixed text (the only variable part is a number), so the text path is fine.
    sqlx::raw_sql(AssertSqlSafe(setup))
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Returns the result and whether the row limit cut the stream.
async fn run_on(
    conn: &mut MySqlConnection,
    sql: &str,
    access: Access,
    limits: &Limits,
) -> Result<(ResultSet, bool), sqlx::Error> {
    let sql = AssertSqlSafe(sql.to_owned()).into_sql_str();
    match access {
        Access::ReadOnly => {
            let statement = (&mut *conn).prepare(sql).await?;
            let columns = column_names(&statement);
            let fetched = collect(
                (&mut *conn).fetch_many(statement.query()),
                limits,
                Fetch::UpToLimit,
                value::mysql_row,
                row_sizes,
                MySqlQueryResult::rows_affected,
            )
            .await?;
            if let Some(what) = fetched.too_large {
                return Err(sqlx::Error::Protocol(format!("{TOO_LARGE}{what}")));
            }
            let cut = fetched.cut;
            Ok((result_set(columns, fetched, false), cut))
        }
        Access::ReadWrite => {
            let mut tx = conn.begin().await?;
            let statement = (&mut *tx).prepare(sql).await?;
            let columns = column_names(&statement);
            let fetched = collect(
                (&mut *tx).fetch_many(statement.query()),
                limits,
                Fetch::ToEnd,
                value::mysql_row,
                row_sizes,
                MySqlQueryResult::rows_affected,
            )
            .await?;
            if let Some(what) = fetched.too_large {
                // Not committed: the connection is shut, which rolls back.
                return Err(sqlx::Error::Protocol(format!("{TOO_LARGE}{what}")));
            }
            tx.commit().await?;
            // MySQL reports 0 affected rows for a plain SELECT, so a count means a write.
            let report = columns.is_empty() || fetched.rows_affected > 0;
            Ok((result_set(columns, fetched, report), false))
        }
    }
}

/// Marks the error `run_on` returns when a value or the result was too large.
const TOO_LARGE: &str = "riskgate: too large: ";

/// The sizes of a row's values as the server sent them.
fn row_sizes(row: &MySqlRow) -> (usize, usize) {
    (0..row.len())
        .map(|i| {
            row.try_get_raw(i)
                .ok()
                .and_then(|value| <&[u8] as Decode<MySql>>::decode(value).ok())
                .map_or(0, <[u8]>::len)
        })
        .fold((0, 0), |(largest, total), len| {
            (largest.max(len), total.saturating_add(len))
        })
}

/// Global privileges that make an account privileged for auto runs: they read or write
/// server files, end other sessions, stop the server or step past `read_only`.
const PRIVILEGED: &[&str] = &[
    "ALL PRIVILEGES",
    "SUPER",
    "FILE",
    "SHUTDOWN",
    "CONNECTION ADMIN",
    "CONNECTION_ADMIN",
    "READ_ONLY ADMIN",
    "SYSTEM_VARIABLES_ADMIN",
    "BINLOG ADMIN",
];

/// What makes the account of `options` privileged for auto runs, from `SHOW GRANTS`:
/// the global (`ON *.*`) privileges of [`PRIVILEGED`]. Empty when it has none of them.
pub(super) async fn privileges(
    options: &MySqlConnectOptions,
    limits: &Limits,
) -> Result<Vec<String>, SqlError> {
    let mut conn = connect(
        limits.connect_timeout,
        MySqlConnection::connect_with(options),
    )
    .await?;
    let probed = sqlx::raw_sql("SHOW GRANTS").fetch_all(&mut conn).await;
    if let Err(error) = conn.close().await {
        tracing::debug!(%error, "closing the connection failed");
    }
    let rows = probed.map_err(classify)?;
    let grants: Vec<String> = rows
        .iter()
        .filter_map(|row| row.try_get::<String, _>(0).ok())
        .collect();
    Ok(privileged_grants(&grants))
}

/// The privileged global privileges named in `SHOW GRANTS` lines.
fn privileged_grants(grants: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for grant in grants {
        let upper = grant.to_ascii_uppercase();
        let Some(list) = upper
            .strip_prefix("GRANT ")
            .and_then(|rest| rest.split_once(" ON *.* TO "))
            .map(|(list, _)| list)
        else {
            continue;
        };
        for privilege in list.split(',').map(str::trim) {
            if PRIVILEGED.contains(&privilege)
                && !found.iter().any(|f: &String| f.contains(privilege))
            {
                found.push(format!("it has the global {privilege} privilege"));
            }
        }
    }
    found
}

fn column_names(statement: &sqlx::mysql::MySqlStatement) -> Vec<String> {
    statement
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect()
}

/// Sorts MySQL's and MariaDB's errors by error number.
fn classify(error: sqlx::Error) -> SqlError {
    if let sqlx::Error::Protocol(message) = &error
        && let Some(what) = message.strip_prefix(TOO_LARGE)
    {
        return SqlError::TooLarge(what.to_owned());
    }
    let sqlx::Error::Database(db) = &error else {
        return SqlError::engine(error.to_string());
    };
    let message = db.message().to_owned();
    let Some(number) = db
        .try_downcast_ref::<MySqlDatabaseError>()
        .map(MySqlDatabaseError::number)
    else {
        return SqlError::engine(message);
    };
    match number {
        // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, ER_OPTION_PREVENTS_STATEMENT (--read-only)
        1792 | 1290 => SqlError::ReadOnly(message),
        // MariaDB ER_STATEMENT_TIMEOUT, MySQL ER_QUERY_TIMEOUT
        1969 | 3024 => SqlError::Timeout,
        // ER_LOCK_WAIT_TIMEOUT
        1205 => SqlError::Lock(message),
        // ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR, ER_SP_DOES_NOT_EXIST, ER_BAD_DB_ERROR
        1146 | 1054 | 1305 | 1049 => SqlError::Engine {
            message,
            missing_object: true,
        },
        // ER_PARSE_ERROR: also what a second statement in a prepared statement gets.
        1064 => SqlError::engine(format!(
            "{message} (note: a call runs exactly one statement)"
        )),
        _ => SqlError::engine(message),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_time_limit_follows_the_server() {
        let limits = Limits {
            row_limit: 1,
            statement_timeout: Duration::from_millis(300),
            connect_timeout: Duration::from_secs(1),
            max_value_bytes: 1,
            max_result_bytes: 1,
            max_error_chars: 1,
        };
        assert_eq!(
            time_limit_statement("10.11.19-MariaDB-0+deb12u1", &limits),
            "SET SESSION max_statement_time = 0.300"
        );
        assert_eq!(
            time_limit_statement("8.0.36", &limits),
            "SET SESSION max_execution_time = 300"
        );
    }

    #[test]
    fn privileged_grants_are_found_in_show_grants() {
        let lines = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let root = privileged_grants(&lines(&[
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION",
        ]));
        assert_eq!(root, ["it has the global ALL PRIVILEGES privilege"]);
        let file = privileged_grants(&lines(&["GRANT SELECT, FILE ON *.* TO `x`@`%`"]));
        assert_eq!(file, ["it has the global FILE privilege"]);
        let reader = privileged_grants(&lines(&[
            "GRANT USAGE ON *.* TO `ro`@`%`",
            "GRANT SELECT ON `shop`.* TO `ro`@`%`",
            "GRANT ALL PRIVILEGES ON `scratch`.* TO `ro`@`%`",
        ]));
        assert!(reader.is_empty(), "{reader:?}");
    }
}
