//! The SQLite store's one writer, with group commit.
//!
//! SQLite runs one write transaction at a time and, with `synchronous = FULL`, pays a sync
//! of its log on every commit. One statement per transaction makes that sync the cost of
//! every write, and writers meeting a locked database sleep in SQLite's busy handler (1, 2,
//! 5, 10... ms) while the lock is already free. Here every write goes through one
//! connection, in arrival order (the lock is a fair queue), inside a transaction shared by
//! the writes that arrive while the previous commit is syncing:
//!
//! 1. a write takes the connection, opens the transaction if none is open, and runs its
//!    statements inside a savepoint: a failing write is rolled back alone and told at once;
//! 2. it hands the connection on and waits for the commit of the transaction it joined;
//! 3. a committer task commits whatever has joined, as soon as it gets the connection.
//!
//! Under light load each write commits alone, right after it ran; under heavy load one sync
//! covers every write that queued during the previous one. A write's caller hears `Ok` only
//! once its transaction is durable, as before.

use std::sync::{Arc, Weak};

use sqlx::sqlite::SqliteConnection;
use sqlx::{Connection, Executor};
use tokio::sync::{Mutex, Notify, watch};

use super::error::SqlStoreError;

/// How much a write runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    One,
    Several,
}

/// Whether `connection` is inside a transaction (SQLite's own answer, not our bookkeeping).
async fn in_transaction(connection: &mut SqliteConnection) -> bool {
    match connection.lock_handle().await {
        // SAFETY: the handle is locked for the call and valid while `handle` lives.
        Ok(mut handle) => unsafe {
            libsqlite3_sys::sqlite3_get_autocommit(handle.as_raw_handle().as_ptr()) == 0
        },
        // Cannot tell: assume the worst, so the batch is failed rather than trusted.
        Err(_) => false,
    }
}

/// The outcome of one commit, shared by every write that joined it.
type Committed = Option<Result<(), Arc<sqlx::Error>>>;

/// The connection and the transaction being filled.
struct Slot {
    /// `None` once closed.
    connection: Option<SqliteConnection>,
    /// Whether a transaction is open and holds writes not yet committed.
    open: bool,
    /// Tells the writes of the open transaction how its commit went.
    commit: watch::Sender<Committed>,
}

struct Shared {
    slot: Mutex<Slot>,
}

/// The writer of one SQLite store. Dropping the last clone stops its committer.
pub(super) struct Writer {
    shared: Arc<Shared>,
    /// Wakes the committer: a write joined the open transaction, or the writer is gone.
    kick: Arc<Notify>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Takes over `connection` and starts the committer on the current runtime.
    pub(super) fn start(connection: SqliteConnection) -> Self {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot {
                connection: Some(connection),
                open: false,
                commit: watch::Sender::new(None),
            }),
        });
        let kick = Arc::new(Notify::new());
        tokio::spawn(commit_loop(Arc::downgrade(&shared), kick.clone()));
        Self { shared, kick }
    }

    /// Runs `work` on the writer's connection as one atomic unit and returns its result once
    /// the transaction it joined is committed. Errors of `work` come back at once, its
    /// statements rolled back; a failed commit fails every write that joined it.
    pub(super) async fn run<T>(
        &self,
        operation: &'static str,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> Result<T, SqlStoreError>,
    ) -> Result<T, SqlStoreError> {
        self.write(operation, Unit::Several, work).await
    }

    /// Like [`Writer::run`] for `work` that runs exactly one statement: SQLite undoes a
    /// failing statement by itself, so no savepoint is needed around it (one round trip to
    /// the connection instead of three).
    pub(super) async fn run_statement<T>(
        &self,
        operation: &'static str,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> Result<T, SqlStoreError>,
    ) -> Result<T, SqlStoreError> {
        self.write(operation, Unit::One, work).await
    }

    async fn write<T>(
        &self,
        operation: &'static str,
        unit: Unit,
        work: impl AsyncFnOnce(&mut SqliteConnection) -> Result<T, SqlStoreError>,
    ) -> Result<T, SqlStoreError> {
        let (mut committed, value) = {
            let mut slot = self.shared.slot.lock().await;
            let open = slot.open;
            let Some(connection) = slot.connection.as_mut() else {
                return Err(SqlStoreError::Closed { operation });
            };
            if !open {
                // IMMEDIATE: take the write lock now, so a write never fails halfway for
                // want of it (another process may share the file).
                connection
                    .execute("BEGIN IMMEDIATE")
                    .await
                    .map_err(SqlStoreError::query(operation))?;
                slot.open = true;
            }
            let connection = slot.connection.as_mut().expect("checked above");
            if unit == Unit::Several {
                connection
                    .execute("SAVEPOINT write")
                    .await
                    .map_err(SqlStoreError::query(operation))?;
            }
            let outcome = work(connection).await;
            let closed = match unit {
                Unit::Several => {
                    let end = if outcome.is_ok() {
                        "RELEASE write"
                    } else {
                        "ROLLBACK TO write; RELEASE write"
                    };
                    connection.execute(end).await.map(drop)
                }
                Unit::One => Ok(()),
            };
            if let Err(e) = closed {
                // The savepoint could not be closed: what the transaction holds is unknown,
                // so nothing of it may be committed.
                tracing::error!(error = %e, "a write's savepoint could not be closed; rolling the batch back");
                let _ = connection.execute("ROLLBACK").await;
                let cause = Arc::new(e);
                fail_open(&mut slot, cause.clone());
                return Err(SqlStoreError::Commit { operation, cause });
            }
            if let Err(e) = &outcome
                && !in_transaction(connection).await
            {
                // Some errors (disk full, I/O) make SQLite roll back the whole transaction:
                // the writes that joined it are gone, and later ones must not run outside it.
                let cause = Arc::new(sqlx::Error::Protocol(format!(
                    "SQLite rolled the batch back after a failed write: {e}"
                )));
                fail_open(&mut slot, cause);
            }
            let value = outcome?;
            let committed = slot.commit.subscribe();
            drop(slot);
            self.kick.notify_one();
            (committed, value)
        };
        let result = match committed.wait_for(Option::is_some).await {
            Ok(result) => result.clone().expect("waited for Some"),
            // The committer is gone (the store closed) before committing: nothing landed.
            Err(_) => return Err(SqlStoreError::Closed { operation }),
        };
        match result {
            Ok(()) => Ok(value),
            Err(cause) => Err(SqlStoreError::Commit { operation, cause }),
        }
    }

    /// Commits what is pending and closes the connection. Later writes fail with `Closed`.
    pub(super) async fn close(&self) {
        let mut slot = self.shared.slot.lock().await;
        commit_open(&mut slot).await;
        if let Some(connection) = slot.connection.take()
            && let Err(e) = connection.close().await
        {
            tracing::debug!(error = %e, "the state store's writer did not close cleanly");
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // The committer holds only a weak reference; wake it so it sees the writer gone.
        self.kick.notify_one();
    }
}

/// Commits the open transaction, if any, and tells its writes.
async fn commit_open(slot: &mut Slot) {
    if !slot.open {
        return;
    }
    slot.open = false;
    let Some(connection) = slot.connection.as_mut() else {
        return;
    };
    let result = match connection.execute("COMMIT").await {
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::error!(error = %e, "the state store could not commit a batch of writes");
            // A failed COMMIT may leave the transaction open: end it so the next write
            // starts clean.
            let _ = connection.execute("ROLLBACK").await;
            Err(Arc::new(e))
        }
    };
    settle(slot, result);
}

/// Ends the open transaction as failed (it was rolled back) and tells its writes.
fn fail_open(slot: &mut Slot, cause: Arc<sqlx::Error>) {
    slot.open = false;
    settle(slot, Err(cause));
}

/// Tells the writes of the transaction that just ended how it went; later writes join a
/// new one.
fn settle(slot: &mut Slot, result: Result<(), Arc<sqlx::Error>>) {
    slot.commit.send_replace(Some(result));
    slot.commit = watch::Sender::new(None);
}

/// Commits whenever writes have joined the open transaction, until the writer is dropped.
async fn commit_loop(shared: Weak<Shared>, kick: Arc<Notify>) {
    loop {
        kick.notified().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        // Writes queued before this lock join the transaction first: the fair lock is what
        // groups them.
        let mut slot = shared.slot.lock().await;
        commit_open(&mut slot).await;
    }
}
