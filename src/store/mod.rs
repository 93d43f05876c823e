//! Where the bot keeps its own state: conversations, channel settings, runs, approvals and
//! the audit log. [`SqlStore`] keeps it in SQLite or PostgreSQL (`store.url`);
//! [`MemoryStore`] keeps it for the life of the process (tests, benchmarks, the console).
//! Both implement [`Store`] with the same contract. [`HistoryCache`] keeps the recent
//! conversation of active channels in memory in front of either.

mod cache;
mod memory;
mod sql;

pub use cache::HistoryCache;
pub use memory::MemoryStore;
pub use sql::{HISTORY_ROW_CAP, SqlStore, SqlStoreError};

use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::StoreSettings;
use crate::core::ports::{Store, StoreError};

/// Applies `store.history_retention_days`: deletes conversation messages older than that
/// (never the audit log, never approvals). The application runs it at start; with a
/// retention of 0 it does nothing. Returns how many messages it deleted.
pub async fn apply_retention(
    store: &dyn Store,
    settings: &StoreSettings,
    now: SystemTime,
) -> Result<u64, StoreError> {
    let Some(keep) = settings.history_retention() else {
        return Ok(0);
    };
    let before = now.checked_sub(keep).unwrap_or(UNIX_EPOCH);
    let removed = store.prune_history(before).await?;
    tracing::info!(
        removed,
        retention_days = settings.history_retention_days,
        "pruned old conversation history"
    );
    Ok(removed)
}
