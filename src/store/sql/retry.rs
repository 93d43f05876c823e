//! Riding out a database restart: which failures are worth another attempt, and the loop
//! that makes them within `store.retry_window_secs`.
//!
//! A PostgreSQL restart closes every connection (clients see FATAL 57P01 or a reset socket)
//! and refuses new ones for a while (57P03, connection refused). sqlx's pool opens fresh
//! connections by itself, but the statement that was on a killed connection fails at once.
//! [`Retry::run`] repeats the whole operation, with backoff, while the failure is transient
//! and the window lasts. Anything else (a constraint, a bad value, a syntax error) fails at
//! once: repeating it would give the same answer.
//!
//! A repeated write must not count twice when the first attempt reached the database but its
//! answer was lost: each write the store retries is idempotent (see the callers in `mod.rs`).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use super::error::SqlStoreError;

/// The first pause between attempts; it doubles up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(2);
/// Even with the window used up, one attempt gets this long (so a zero window still makes
/// one real attempt, bounded).
const MIN_ATTEMPT: Duration = Duration::from_secs(2);

/// How long the store keeps trying when the database is unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    pub window: Duration,
    /// Whether an attempt still running when the window ends is cut off: for a server over
    /// the network, whose connection may hang. Not for SQLite, whose writers legitimately
    /// queue for the one writer connection and which has no connection to lose.
    pub cut_off_hung: bool,
}

impl Default for Retry {
    fn default() -> Self {
        Self {
            window: Duration::from_secs(crate::config::DEFAULT_STORE_RETRY_WINDOW_SECS),
            cut_off_hung: true,
        }
    }
}

impl Retry {
    /// Runs `attempt` until it succeeds, fails for good, or the window is used up. Each
    /// attempt is told its number (1, 2, ...): after a failed attempt the effect of that
    /// attempt is unknown, which an idempotent write may need to know. With `cut_off_hung`
    /// (and a window), an attempt is cut off when the window ends (a hung connection must not
    /// hold a run for ever); a cut-off or unanswered write may still have landed, which is why
    /// every retried write is idempotent. A zero window makes exactly one attempt, uncut.
    pub async fn run<T, F, Fut>(
        &self,
        operation: &'static str,
        mut attempt: F,
    ) -> Result<T, SqlStoreError>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, SqlStoreError>>,
    {
        let started = Instant::now();
        let mut delay = FIRST_DELAY;
        let mut number = 0u32;
        loop {
            number += 1;
            let budget = self
                .window
                .saturating_sub(started.elapsed())
                .max(MIN_ATTEMPT);
            let result = if self.cut_off_hung && !self.window.is_zero() {
                match tokio::time::timeout(budget, attempt(number)).await {
                    Ok(result) => result,
                    Err(_) => Err(SqlStoreError::NoAnswer {
                        operation,
                        seconds: budget.as_secs(),
                    }),
                }
            } else {
                attempt(number).await
            };
            let error = match result {
                Ok(value) => {
                    if number > 1 {
                        tracing::info!(
                            operation,
                            attempts = number,
                            waited_ms = started.elapsed().as_millis() as u64,
                            "the state store answers again"
                        );
                    }
                    return Ok(value);
                }
                Err(error) => error,
            };
            if !error.is_transient() {
                return Err(error);
            }
            let elapsed = started.elapsed();
            if elapsed + delay >= self.window {
                tracing::error!(
                    operation,
                    attempts = number,
                    window_secs = self.window.as_secs(),
                    error = %error,
                    "the state store stayed unreachable for the whole retry window"
                );
                return Err(SqlStoreError::Unreachable {
                    operation,
                    attempts: number,
                    seconds: elapsed.as_secs(),
                    last: Box::new(error),
                });
            }
            if number == 1 {
                tracing::warn!(operation, error = %error, "the state store is unreachable; retrying");
            } else {
                tracing::debug!(operation, attempt = number, error = %error, "still unreachable");
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_DELAY);
        }
    }
}

/// Whether a driver error is one a restarting or briefly unreachable database gives, so the
/// same statement may succeed on a new connection.
pub fn is_transient(error: &sqlx::Error) -> bool {
    match error {
        // Reset, refused, broken pipe, unexpected EOF: the connection or the server went away.
        sqlx::Error::Io(_) => true,
        // No connection could be opened within the pool's acquire timeout.
        sqlx::Error::PoolTimedOut => true,
        // The handshake of a new connection was cut (the server was going down).
        sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| transient_sqlstate(&code)),
        _ => false,
    }
}

/// PostgreSQL SQLSTATEs that mean "the server, not the statement": class 08 (connection
/// exceptions), 57P01 admin_shutdown (a fast shutdown or `pg_terminate_backend`), 57P02
/// crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down), 53300
/// too_many_connections (everyone reconnecting at once), and 40001 / 40P01 (serialization
/// failure, deadlock: the transaction was rolled back and may be run again). Not 57014
/// (query_canceled: a statement timeout) nor 57P04 (database dropped).
fn transient_sqlstate(code: &str) -> bool {
    code.starts_with("08")
        || matches!(
            code,
            "57P01" | "57P02" | "57P03" | "53300" | "40001" | "40P01"
        )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn io(kind: std::io::ErrorKind) -> SqlStoreError {
        SqlStoreError::Query {
            operation: "test",
            cause: sqlx::Error::Io(std::io::Error::from(kind)),
        }
    }

    #[test]
    fn sqlstates() {
        for code in [
            "57P01", "57P02", "57P03", "08006", "08001", "08003", "53300", "40001",
        ] {
            assert!(transient_sqlstate(code), "{code}");
        }
        for code in ["57014", "57P04", "23505", "42P01", "22P02", "42601"] {
            assert!(!transient_sqlstate(code), "{code}");
        }
    }

    #[test]
    fn driver_errors() {
        assert!(is_transient(&sqlx::Error::PoolTimedOut));
        assert!(is_transient(&sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset
        ))));
        assert!(!is_transient(&sqlx::Error::RowNotFound));
        assert!(!is_transient(&sqlx::Error::PoolClosed));
        assert!(!is_transient(&sqlx::Error::Protocol("bad".into())));
    }

    #[tokio::test(start_paused = true)]
    async fn retries_transient_failures_until_they_pass() {
        let calls = AtomicU32::new(0);
        let retry = Retry {
            window: Duration::from_secs(30),
            cut_off_hung: true,
        };
        let value = retry
            .run("test", |n| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < 4 {
                        Err(io(std::io::ErrorKind::ConnectionReset))
                    } else {
                        Ok(n)
                    }
                }
            })
            .await
            .expect("fourth attempt succeeds");
        assert_eq!(value, 4);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn does_not_retry_what_would_fail_again() {
        let calls = AtomicU32::new(0);
        let error = Retry::default()
            .run("test", |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err::<(), _>(SqlStoreError::Invalid("no".into())) }
            })
            .await
            .expect_err("fails");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(matches!(error, SqlStoreError::Invalid(_)), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn gives_up_at_the_end_of_the_window() {
        let started = Instant::now();
        let retry = Retry {
            window: Duration::from_secs(5),
            cut_off_hung: true,
        };
        let error = retry
            .run("write the audit record", |_| async {
                Err::<(), _>(io(std::io::ErrorKind::ConnectionRefused))
            })
            .await
            .expect_err("never answers");
        assert!(
            started.elapsed() <= Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            started.elapsed() >= Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let message = error.to_string();
        assert!(message.contains("unreachable"), "{message}");
        assert!(message.contains("write the audit record"), "{message}");
        assert!(
            error.is_transient(),
            "still a transient failure to the caller"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_hung_attempt_is_cut_off() {
        let retry = Retry {
            window: Duration::from_secs(3),
            cut_off_hung: true,
        };
        let error = retry
            .run("read the approval", |_| {
                std::future::pending::<Result<(), SqlStoreError>>()
            })
            .await
            .expect_err("hangs");
        assert!(error.is_transient());
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_window_tries_once() {
        let calls = AtomicU32::new(0);
        let retry = Retry {
            window: Duration::ZERO,
            cut_off_hung: true,
        };
        let error = retry
            .run("read the approval", |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async { Err::<(), _>(io(std::io::ErrorKind::ConnectionReset)) }
            })
            .await
            .expect_err("fails");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(error.to_string().contains("unreachable"), "{error}");
    }
}
