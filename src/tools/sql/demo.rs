//! The demo database: a small shop (customers, products, orders) in `demo.db` in the
//! workspace, created on first use when no database is configured, so the quick start has
//! something to ask about.
//!
//! The schema and rows are riskgate's own trusted SQL (`demo.sql`). Creating them is
//! idempotent across calls and processes: under `BEGIN IMMEDIATE` (one writer at a time),
//! the rows go in only while `PRAGMA user_version` is still 0, and then it becomes 1. A file
//! that already holds other tables is left alone.

use std::path::Path;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{Connection, Row};

/// The demo database's file name in the workspace.
pub(crate) const DEMO_FILE: &str = "demo.db";
/// `PRAGMA user_version` of a demo database with its rows in.
const DEMO_VERSION: i64 = 1;
const DEMO_SQL: &str = include_str!("demo.sql");

/// Creates the demo database at `path` unless it exists. The error says what failed.
#[tracing::instrument]
pub(crate) async fn ensure(path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        tokio::fs::create_dir_all(dir).await.map_err(|e| {
            format!(
                "could not create the workspace directory {}: {e}",
                dir.display()
            )
        })?;
    }
    let failed = |e: sqlx::Error| format!("could not create {}: {e}", path.display());
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true);
    let mut conn = SqliteConnection::connect_with(&options)
        .await
        .map_err(failed)?;
    let created = fill(&mut conn).await.map_err(failed);
    if let Err(error) = conn.close().await {
        tracing::debug!(%error, "closing the demo database failed");
    }
    if created? {
        tracing::info!(path = %path.display(), "created the demo database");
    }
    Ok(())
}

/// Puts the schema and rows in, unless done before. Returns whether it did.
async fn fill(conn: &mut SqliteConnection) -> Result<bool, sqlx::Error> {
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let version: i64 = sqlx::raw_sql("PRAGMA user_version")
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    if version != 0 {
        return Ok(false);
    }
    let objects: i64 = sqlx::raw_sql("SELECT count(*) FROM sqlite_schema")
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    if objects > 0 {
        tracing::warn!(
            "the demo database file holds tables riskgate did not create; left as it is"
        );
        return Ok(false);
    }
    sqlx::raw_sql(DEMO_SQL).execute(&mut *tx).await?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "PRAGMA user_version = {DEMO_VERSION}"
    )))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(true)
}
