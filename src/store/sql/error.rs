//! What can go wrong in the SQL store, said so an operator knows what to fix. The core sees
//! these as a [`StoreError`] carrying the whole message (cause included) and its kind.

use crate::core::ports::{StoreError, StoreErrorKind};

/// A failure of the SQL store.
#[derive(Debug, thiserror::Error)]
pub enum SqlStoreError {
    /// `store.url` names a backend the store does not speak.
    #[error(
        "store.url {url} is not a state store URL: use sqlite://FILE (created if missing) or postgres://USER@HOST/DATABASE"
    )]
    UnsupportedUrl { url: String },
    /// The URL could not be read by the driver.
    #[error("store.url {url} is not valid: {cause}")]
    InvalidUrl { url: String, cause: sqlx::Error },
    /// Nothing answered, the login was refused, or the file could not be opened.
    #[error("could not open the state store at {url}: {cause}; {hint}")]
    Connect {
        url: String,
        cause: sqlx::Error,
        /// What to check, for this backend.
        hint: &'static str,
    },
    /// The connection attempt hung.
    #[error("could not open the state store at {url}: no answer within {seconds} s; {hint}")]
    ConnectTimeout {
        url: String,
        seconds: u64,
        hint: &'static str,
    },
    /// A migration failed; the database is left at the last migration that succeeded.
    #[error("could not bring the state store at {url} up to date: {cause}")]
    Migrate {
        url: String,
        cause: sqlx::migrate::MigrateError,
    },
    /// A statement failed.
    #[error("the state store could not {operation}: {cause}")]
    Query {
        operation: &'static str,
        cause: sqlx::Error,
    },
    /// A stored value cannot be read back (a row written by something else, or a value out
    /// of range).
    #[error("the state store holds a value it cannot read ({what}): {problem}")]
    Corrupt { what: &'static str, problem: String },
    /// The caller asked for something the contract forbids.
    #[error("the state store refused a request: {0}")]
    Invalid(String),
    /// The transaction a write joined could not be committed (SQLite's group commit: every
    /// write of the batch gets the same cause).
    #[error("the state store could not {operation}: the commit failed: {cause}")]
    Commit {
        operation: &'static str,
        cause: std::sync::Arc<sqlx::Error>,
    },
    /// The batch of writes this one was sent in failed as a whole (the database was away):
    /// every write of the batch gets the same cause.
    #[error("the state store could not {operation}: {cause}")]
    Batched {
        operation: &'static str,
        cause: std::sync::Arc<SqlStoreError>,
    },
    /// The store was closed (the process is shutting down).
    #[error("the state store could not {operation}: it is closed")]
    Closed { operation: &'static str },
    /// One attempt got no answer at all (a hung connection).
    #[error("the state store did not answer within {seconds} s while trying to {operation}")]
    NoAnswer {
        operation: &'static str,
        seconds: u64,
    },
    /// The database stayed unreachable for the whole retry window (`store.retry_window_secs`).
    #[error(
        "the state database is unreachable: could not {operation} after {attempts} attempts over {seconds} s (store.retry_window_secs); last error: {last}"
    )]
    Unreachable {
        operation: &'static str,
        attempts: u32,
        seconds: u64,
        last: Box<SqlStoreError>,
    },
}

impl SqlStoreError {
    /// Wraps a driver error with what the store was doing.
    pub(crate) fn query(operation: &'static str) -> impl FnOnce(sqlx::Error) -> Self {
        move |cause| Self::Query { operation, cause }
    }

    /// Whether the failure came from the database being unreachable or restarting (not from
    /// the statement), so the same operation may succeed a moment later.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Query { cause, .. } => super::retry::is_transient(cause),
            Self::Commit { cause, .. } => super::retry::is_transient(cause),
            Self::Batched { cause, .. } => cause.is_transient(),
            Self::NoAnswer { .. } | Self::Unreachable { .. } => true,
            _ => false,
        }
    }

    /// Whether a statement broke a unique or primary key constraint.
    pub(crate) fn is_unique_violation(&self) -> bool {
        matches!(self, Self::Query { cause: sqlx::Error::Database(db), .. } if db.is_unique_violation())
    }

    /// The kind the core sees.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            _ if self.is_transient() => StoreErrorKind::Unavailable,
            Self::Closed { .. } => StoreErrorKind::Closed,
            Self::Corrupt { .. } => StoreErrorKind::Corrupt,
            Self::Invalid(_) => StoreErrorKind::Refused,
            Self::Query { .. } if self.is_unique_violation() => StoreErrorKind::Refused,
            Self::Batched { cause, .. } => cause.kind(),
            Self::UnsupportedUrl { .. }
            | Self::InvalidUrl { .. }
            | Self::Connect { .. }
            | Self::ConnectTimeout { .. }
            | Self::Migrate { .. } => StoreErrorKind::Setup,
            Self::Query { .. }
            | Self::Commit { .. }
            | Self::NoAnswer { .. }
            | Self::Unreachable { .. } => StoreErrorKind::Failed,
        }
    }

    pub(crate) fn corrupt(what: &'static str, problem: impl ToString) -> Self {
        Self::Corrupt {
            what,
            problem: problem.to_string(),
        }
    }
}

impl From<SqlStoreError> for StoreError {
    fn from(error: SqlStoreError) -> Self {
        // Each variant's message includes its cause (the causes are not `source()`s, so a
        // chain printer does not repeat them).
        StoreError::new(error.kind(), error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_sees_what_kind_of_failure_each_one_is() {
        let kind = |error: SqlStoreError| StoreError::from(error).kind();
        assert_eq!(
            kind(SqlStoreError::Unreachable {
                operation: "save",
                attempts: 3,
                seconds: 30,
                last: Box::new(SqlStoreError::Closed { operation: "save" }),
            }),
            StoreErrorKind::Unavailable
        );
        assert_eq!(
            kind(SqlStoreError::query("save")(sqlx::Error::PoolTimedOut)),
            StoreErrorKind::Unavailable
        );
        assert_eq!(
            kind(SqlStoreError::Closed { operation: "save" }),
            StoreErrorKind::Closed
        );
        assert_eq!(
            kind(SqlStoreError::corrupt("approvals.status", "bogus")),
            StoreErrorKind::Corrupt
        );
        assert_eq!(
            kind(SqlStoreError::Invalid("no".into())),
            StoreErrorKind::Refused
        );
        assert_eq!(
            kind(SqlStoreError::UnsupportedUrl { url: "x://".into() }),
            StoreErrorKind::Setup
        );
        assert_eq!(
            kind(SqlStoreError::query("save")(sqlx::Error::RowNotFound)),
            StoreErrorKind::Failed
        );
    }
}
