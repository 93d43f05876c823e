//! The durable store: the bot's state in SQLite or PostgreSQL through sqlx.
//!
//! One type, [`SqlStore`], over a pool of either backend. The SQL is the same text on both
//! (sqlx's SQLite driver reads `$1` placeholders, and both engines have `RETURNING` and
//! `ON CONFLICT`); each query is written once and expanded for each pool by [`with_pool!`].
//! Only the schema differs, in `migrations/sqlite` and `migrations/postgres`, applied when
//! the store connects. (sqlx's `Any` driver would need its `any` feature and maps types
//! more loosely; two concrete pools keep each backend's own types.) The exception is the
//! writes every run makes (start, end, audit, conversation), which [`batch`] sends many at
//! a time, in SQL of each backend's own: one commit then serves many runs, where a
//! statement each made the commits queue (see `BENCHMARKS.md`, Load). Reads, the settings
//! read every run starts with among them, are plain statements on the pool.
//!
//! Decisions happen exactly once because every status change is one conditional statement:
//! `UPDATE approvals ... WHERE id = $4 AND status = 'pending'`. Whichever caller's statement
//! the database applies first changes the row; every other finds it no longer pending.
//!
//! Every operation of the [`Store`] port is retried while the database is unreachable or
//! restarting, for up to `store.retry_window_secs` ([`retry`]). A write whose answer was lost
//! may have landed, so each retried write is idempotent: runs and channel settings are
//! upserts; an approval insert that meets its own row (same id, run and arguments) succeeds;
//! a decision retried after a lost answer finds its own decision and reports it won; an audit
//! insert carries a key of its own and `ON CONFLICT DO NOTHING`. (A conversation turn
//! retried after a lost commit may be saved twice: history, not a record anyone relies on.)

mod batch;
mod codec;
mod error;
mod history;
mod migrations;
mod retry;
mod writer;

pub use error::SqlStoreError;
pub use history::HISTORY_ROW_CAP;
pub use retry::Retry;

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::TryStreamExt;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{ConnectOptions, Connection};

use self::batch::{Batcher, PgLink, SqliteSink, Write};
use self::codec::{
    ApprovalRow, AuditRow, approval_columns, approval_from_row, arguments_to_json, audit_columns,
    audit_from_row, message_from_json, message_to_json, to_millis,
};
use self::history::NewestFirst;
use self::writer::Writer;
use crate::config::redact_password;
use crate::core::agent::ChatMessage;
use crate::core::event::CallOutcome;
use crate::core::ports::{
    ApprovalRecord, ApprovalStatus, AuditRecord, ChannelSettings, Decided, EarlierRun,
    SETTLED_APPROVALS_PER_QUERY, Store, StoreError,
};
use crate::core::risk::ChannelMode;
use crate::core::rules::ChannelRule;
use crate::core::tools::BoxFuture;

/// How long opening a connection may take before the store gives up and says so.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections of the PostgreSQL store's write batcher: one could carry the load; two let a
/// batch be gathered while the previous one is on the wire.
const POSTGRES_BATCH_CONNECTIONS: usize = 2;
/// How long PostgreSQL may take to answer one batch before its connection is given up as
/// hung (the batch's requests fail, and the retry loop sends them again on a new one).
const BATCH_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a SQLite writer waits for another to finish before failing: writers queue
/// instead of failing with "database is locked".
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// SQLite reader connections (the one writer has its own).
const SQLITE_READERS: u32 = 4;
/// PostgreSQL connections unless `store.max_connections` says otherwise.
pub const DEFAULT_POSTGRES_CONNECTIONS: u32 = 16;
/// What to check when a database cannot be opened.
const SQLITE_HINT: &str = "check store.url and that the file's folder exists and is writable";
const POSTGRES_HINT: &str = "check store.url (host, port, user, password, database) and that PostgreSQL is running and reachable";

/// The connections of one backend.
#[derive(Debug, Clone)]
enum Backend {
    /// SQLite runs one writer at a time: every write goes through [`Writer`], one
    /// connection with group commit. Reads use `read` (WAL readers never wait for the
    /// writer). An in-memory database has only the writer's connection, which then serves
    /// reads too.
    Sqlite {
        read: Option<SqlitePool>,
        writer: Arc<Writer>,
    },
    Postgres(PgPool),
}

/// What a write says it was doing when its transaction fails to begin or commit.
const WRITE: &str = "save its changes";

/// Runs `$body` (one statement that reads) with `$pool` bound to something to read with,
/// whichever backend it is: the same code, type-checked against each driver. An in-memory
/// SQLite database reads through its writer.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.backend {
            Backend::Sqlite {
                read: Some($pool), ..
            } => $body,
            Backend::Sqlite { read: None, writer } => {
                writer
                    .run_statement("read", async |$pool: &mut sqlx::SqliteConnection| {
                        Ok::<_, SqlStoreError>($body)
                    })
                    .await?
            }
            Backend::Postgres($pool) => $body,
        }
    };
}

/// Like [`with_pool!`], for one statement that writes. On SQLite `$body` runs in the
/// writer's queue and returns once committed; it must run exactly one statement (several go
/// through `Writer::run`, which makes them one atomic unit).
macro_rules! with_writer {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.backend {
            Backend::Sqlite { writer, .. } => {
                writer
                    .run_statement(WRITE, async |$pool: &mut sqlx::SqliteConnection| {
                        Ok::<_, SqlStoreError>($body)
                    })
                    .await?
            }
            Backend::Postgres($pool) => $body,
        }
    };
}

mod rules;

/// The bot's state in SQLite or PostgreSQL. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct SqlStore {
    backend: Backend,
    /// Takes the writes every run makes (its start and end, audit records, its conversation
    /// turn) and sends them in batches.
    batcher: Batcher<Write>,
    /// `store.url` with its password redacted, for messages and logs.
    url: String,
    /// How long operations keep trying while the database is unreachable.
    retry: Retry,
}

impl SqlStore {
    /// Opens the store at `url` (`sqlite://FILE`, `sqlite::memory:`, `postgres://...`) and
    /// brings its schema up to date. A SQLite file is created if missing and runs in WAL
    /// mode. Errors name the URL with its password redacted and say what failed.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, DEFAULT_POSTGRES_CONNECTIONS).await
    }

    /// Like [`SqlStore::connect`], with at most `max_connections` to PostgreSQL
    /// (`store.max_connections`; SQLite ignores it).
    #[tracing::instrument(skip(url), fields(url = %redact_password(url)), err(level = "debug", Display))]
    pub async fn connect_with(url: &str, max_connections: u32) -> Result<Self, StoreError> {
        let shown = redact_password(url);
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        let store = match scheme.as_deref() {
            Some("sqlite") => Self::open_sqlite(url, shown).await?,
            Some("postgres" | "postgresql") => {
                Self::open_postgres(url, shown, max_connections.max(1)).await?
            }
            _ => return Err(SqlStoreError::UnsupportedUrl { url: shown }.into()),
        };
        tracing::info!(url = %store.url, backend = store.backend_name(), "state store ready");
        Ok(store)
    }

    async fn open_sqlite(url: &str, shown: String) -> Result<Self, SqlStoreError> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|cause| SqlStoreError::InvalidUrl {
                url: shown.clone(),
                cause,
            })?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(SQLITE_BUSY_TIMEOUT)
            .synchronous(sqlx::sqlite::SqliteSynchronous::Full);
        let rest = url.get("sqlite:".len()..).unwrap_or_default();
        let in_memory =
            rest.trim_start_matches('/').starts_with(":memory:") || rest.contains("mode=memory");
        probe(&options, &shown, SQLITE_HINT).await?;
        let open_failed = |cause| SqlStoreError::Connect {
            url: shown.clone(),
            cause,
            hint: SQLITE_HINT,
        };
        let mut connection = options.connect().await.map_err(open_failed)?;
        migrations::sqlite()
            .run(&mut connection)
            .await
            .map_err(|cause| SqlStoreError::Migrate {
                url: shown.clone(),
                cause,
            })?;
        let read = if in_memory {
            // An in-memory database lives as long as its one connection, the writer's: it
            // serves reads as well (a second connection would see another database).
            None
        } else {
            // Readers cannot write even by mistake: a write there would bypass the queue.
            let reading = options.clone().pragma("query_only", "ON");
            // A SQLite connection is a file handle, not a socket: nothing to test before use.
            let pool = SqlitePoolOptions::new()
                .max_connections(SQLITE_READERS)
                .test_before_acquire(false)
                .acquire_timeout(CONNECT_TIMEOUT)
                .connect_with(reading)
                .await
                .map_err(open_failed)?;
            Some(pool)
        };
        let writer = Arc::new(Writer::start(connection));
        // Two sinks on the one writer: a batch runs while the previous one waits for its
        // commit (and joins the transaction after it).
        let batcher = Batcher::start(vec![
            SqliteSink::new(writer.clone()),
            SqliteSink::new(writer.clone()),
        ]);
        Ok(Self {
            backend: Backend::Sqlite { read, writer },
            batcher,
            url: shown,
            retry: Retry {
                cut_off_hung: false,
                ..Retry::default()
            },
        })
    }

    async fn open_postgres(
        url: &str,
        shown: String,
        max_connections: u32,
    ) -> Result<Self, SqlStoreError> {
        let mut options =
            PgConnectOptions::from_str(url).map_err(|cause| SqlStoreError::InvalidUrl {
                url: shown.clone(),
                cause,
            })?;
        if options.get_application_name().is_none() {
            options = options.application_name("riskgate");
        }
        probe(&options, &shown, POSTGRES_HINT).await?;
        // No ping before each statement: sqlx also pings a connection as it comes back to
        // the pool, and a connection the server ended fails its next statement, which the
        // retry loop repeats on another.
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .test_before_acquire(false)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_with(options.clone())
            .await
            .map_err(|cause| SqlStoreError::Connect {
                url: shown.clone(),
                cause,
                hint: POSTGRES_HINT,
            })?;
        migrations::postgres()
            .run(&pool)
            .await
            .map_err(|cause| SqlStoreError::Migrate {
                url: shown.clone(),
                cause,
            })?;
        let opened = |cause| SqlStoreError::Connect {
            url: shown.clone(),
            cause,
            hint: POSTGRES_HINT,
        };
        let mut writers = Vec::with_capacity(POSTGRES_BATCH_CONNECTIONS);
        for _ in 0..POSTGRES_BATCH_CONNECTIONS {
            let link = PgLink::open(options.clone(), BATCH_ANSWER_TIMEOUT);
            writers.push(link.await.map_err(opened)?);
        }
        Ok(Self {
            backend: Backend::Postgres(pool),
            batcher: Batcher::start(writers),
            url: shown,
            retry: Retry::default(),
        })
    }

    /// Sets how long operations keep retrying while the database is unreachable or
    /// restarting (`store.retry_window_secs`; the default is 30 s).
    pub fn with_retry_window(mut self, window: Duration) -> Self {
        self.retry.window = window;
        self
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// The URL it was opened with, password redacted.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Asks the database a trivial question once, without the retry window: `Ok` when it
    /// answered, else why not (the URL never in it). For `/healthz`, which bounds the wait.
    /// A pooled connection the server has closed fails its first statement, so a failure
    /// is asked once more, on a connection the pool then opens anew.
    pub async fn ping(&self) -> Result<(), String> {
        let mut answer = self.ping_once().await;
        if answer.is_err() {
            answer = self.ping_once().await;
        }
        answer.map_err(|e| crate::core::tools::error_chain(&e))
    }

    async fn ping_once(&self) -> Result<(), SqlStoreError> {
        with_pool!(self, pool => {
            sqlx::query("SELECT 1")
                .execute(pool)
                .await
                .map_err(|cause| SqlStoreError::Query {
                    operation: "answer SELECT 1",
                    cause,
                })?;
        });
        Ok(())
    }

    /// Closes the pool, waiting for connections in use to be returned (for a clean shutdown;
    /// SQLite checkpoints its WAL as the last connection closes).
    pub async fn close(&self) {
        // The batcher first: it sends what is queued (through the writer on SQLite).
        self.batcher.close().await;
        match &self.backend {
            Backend::Sqlite { read, writer } => {
                writer.close().await;
                if let Some(read) = read {
                    read.close().await;
                }
            }
            Backend::Postgres(pool) => pool.close().await,
        }
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_history(
        &self,
        channel: &str,
        budget: usize,
    ) -> Result<Vec<ChatMessage>, SqlStoreError> {
        let mut collected = NewestFirst::new(budget);
        with_pool!(self, pool => {
            let mut rows = sqlx::query_as::<_, (String,)>(
                "SELECT message FROM messages WHERE channel = $1 ORDER BY id DESC LIMIT $2",
            )
            .bind(channel)
            .bind(HISTORY_ROW_CAP)
            .fetch(pool);
            while let Some((json,)) = rows
                .try_next()
                .await
                .map_err(SqlStoreError::query("load the conversation"))?
            {
                if !collected.push(message_from_json(&json)?) {
                    break;
                }
            }
        });
        Ok(collected.finish())
    }

    #[tracing::instrument(level = "debug", skip(self, messages), fields(messages = messages.len()), err(level = "debug", Display))]
    async fn append_messages(
        &self,
        channel: &str,
        messages: &[ChatMessage],
    ) -> Result<(), SqlStoreError> {
        let rows = messages
            .iter()
            .map(message_to_json)
            .collect::<Result<Vec<_>, _>>()?;
        if rows.is_empty() {
            return Ok(());
        }
        // A turn is saved whole or not at all, its ids in the order of its messages.
        self.batcher
            .ask(Write::Messages {
                channel: channel.to_owned(),
                rows,
                at: to_millis(SystemTime::now()),
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn clear_history(&self, channel: &str) -> Result<(), SqlStoreError> {
        with_writer!(self, pool => {
            sqlx::query("DELETE FROM messages WHERE channel = $1")
                .bind(channel)
                .execute(pool)
                .await
                .map_err(SqlStoreError::query("forget the conversation"))?;
        });
        Ok(())
    }

    /// Deletes messages older than `before`, and the bookkeeping rows of runs that finished
    /// before it (a missing run and a finished run mean the same to `abandon_orphaned`).
    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn prune(&self, before: SystemTime) -> Result<u64, SqlStoreError> {
        let before = to_millis(before);
        // Two statements, each atomic: a failure between them leaves finished runs for the
        // next pruning.
        let removed = with_writer!(self, pool => {
            sqlx::query("DELETE FROM messages WHERE created_at < $1")
                .bind(before)
                .execute(pool)
                .await
                .map_err(SqlStoreError::query("prune old conversation messages"))?
                .rows_affected()
        });
        with_writer!(self, pool => {
            sqlx::query("DELETE FROM runs WHERE finished_at IS NOT NULL AND finished_at < $1")
                .bind(before)
                .execute(pool)
                .await
                .map_err(SqlStoreError::query("prune finished runs"))?;
        });
        Ok(removed)
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_channel_settings(
        &self,
        channel: &str,
    ) -> Result<Option<ChannelSettings>, SqlStoreError> {
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, (String, String)>(
                "SELECT mode, profile FROM channel_settings WHERE channel = $1",
            )
            .bind(channel)
            .fetch_optional(pool)
            .await
            .map_err(SqlStoreError::query("read the channel's settings"))?
        });
        row.map(|(mode, profile)| {
            let mode = ChannelMode::from_str(&mode)
                .map_err(|e| SqlStoreError::corrupt("channel_settings.mode", e))?;
            Ok(ChannelSettings { mode, profile })
        })
        .transpose()
    }

    #[tracing::instrument(level = "debug", skip(self, settings), fields(mode = %settings.mode, profile = %settings.profile), err(level = "debug", Display))]
    async fn write_channel_settings(
        &self,
        channel: &str,
        settings: &ChannelSettings,
        changed_by: &str,
    ) -> Result<(), SqlStoreError> {
        let now = to_millis(SystemTime::now());
        with_writer!(self, pool => {
            sqlx::query(
                "INSERT INTO channel_settings (channel, mode, profile, changed_by, changed_at) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (channel) DO UPDATE SET mode = excluded.mode, \
                 profile = excluded.profile, changed_by = excluded.changed_by, \
                 changed_at = excluded.changed_at",
            )
            .bind(channel)
            .bind(settings.mode.as_str())
            .bind(settings.profile.as_str())
            .bind(changed_by)
            .bind(now)
            .execute(pool)
            .await
            .map_err(SqlStoreError::query("save the channel's settings"))?;
        });
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn insert_run(
        &self,
        run_id: &str,
        channel: &str,
        instance: &str,
    ) -> Result<(), SqlStoreError> {
        // Starting a run again restarts it, as the in-memory store does.
        self.batcher
            .ask(Write::StartRun {
                id: run_id.to_owned(),
                channel: channel.to_owned(),
                instance: instance.to_owned(),
                at: to_millis(SystemTime::now()),
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn touch_run(&self, run_id: &str) -> Result<(), SqlStoreError> {
        let now = to_millis(SystemTime::now());
        with_writer!(self, pool => {
            sqlx::query("UPDATE runs SET heartbeat_at = $2 WHERE id = $1 AND finished_at IS NULL")
                .bind(run_id)
                .bind(now)
                .execute(pool)
                .await
                .map_err(SqlStoreError::query("record a run's heartbeat"))?;
        });
        Ok(())
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn end_run(&self, run_id: &str) -> Result<(), SqlStoreError> {
        self.batcher
            .ask(Write::EndRun {
                id: run_id.to_owned(),
                at: to_millis(SystemTime::now()),
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self, approval), fields(id = %approval.id, tool = %approval.tool), err(level = "debug", Display))]
    /// `retried`: an earlier attempt failed after possibly reaching the database.
    async fn insert_approval(
        &self,
        approval: &ApprovalRecord,
        retried: bool,
    ) -> Result<(), SqlStoreError> {
        let arguments = arguments_to_json(&approval.arguments)?;
        let inserted = with_writer!(self, pool => {
            sqlx::query(concat!(
                "INSERT INTO approvals (",
                approval_columns!(),
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
            ))
            .bind(approval.id.as_str())
            .bind(approval.run_id.as_str())
            .bind(approval.channel.as_str())
            .bind(approval.requester.as_str())
            .bind(approval.tool.as_str())
            .bind(arguments.as_str())
            .bind(approval.arguments_hash.as_str())
            .bind(approval.source.as_str())
            .bind(approval.reason.as_str())
            .bind(approval.status.as_str())
            .bind(approval.decided_by.as_deref())
            .bind(approval.decided_at.map(to_millis))
            .bind(to_millis(approval.created_at))
            .bind(to_millis(approval.expires_at))
            .bind(approval.message_ref.as_deref())
            .bind(approval.note.as_deref())
            .bind(approval.resume.as_deref())
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(SqlStoreError::query("record the approval"))
        });
        match inserted {
            Ok(()) => Ok(()),
            // A retry whose earlier attempt landed (its answer lost in a restart) meets its
            // own row: that is success. Otherwise an id is recorded once, and a second insert
            // of it stays an error.
            Err(e) if retried && e.is_unique_violation() => {
                match self.read_approval(&approval.id).await? {
                    Some(stored)
                        if stored.run_id == approval.run_id
                            && stored.arguments_hash == approval.arguments_hash =>
                    {
                        tracing::info!(id = %approval.id, "the approval was already recorded by an earlier attempt");
                        Ok(())
                    }
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// One conditional update: of any number of concurrent callers exactly one changes the
    /// row (and gets it back from `RETURNING`); the others change nothing and read what won.
    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn decide(
        &self,
        id: &str,
        status: ApprovalStatus,
        by: Option<&str>,
        note: Option<&str>,
    ) -> Result<Decided, SqlStoreError> {
        if status == ApprovalStatus::Pending {
            return Err(SqlStoreError::Invalid(format!(
                "approval {id} cannot be decided back to pending"
            )));
        }
        let now = to_millis(SystemTime::now());
        let won = with_writer!(self, pool => {
            sqlx::query_as::<_, ApprovalRow>(concat!(
                "UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, note = $5 ",
                "WHERE id = $4 AND status = 'pending' RETURNING ",
                approval_columns!()
            ))
            .bind(status.as_str())
            .bind(by)
            .bind(now)
            .bind(id)
            .bind(note)
            .fetch_optional(pool)
            .await
            .map_err(SqlStoreError::query("record the decision"))?
        });
        if let Some(row) = won {
            return Ok(Decided::Won(approval_from_row(row)?));
        }
        // Decided, expired or abandoned already, and never to change again: what it is now.
        Ok(match self.read_approval(id).await? {
            Some(current) => Decided::Lost(current),
            None => Decided::Missing,
        })
    }

    /// One conditional update: the first claimant's token stays, and only its holder (or
    /// the first claimant retrying) matches it.
    async fn claim(&self, id: &str, claimant: &str) -> Result<bool, SqlStoreError> {
        let claimed = with_writer!(self, pool => {
            sqlx::query(
                "UPDATE approvals SET continued_by = $2 \
                 WHERE id = $1 AND (continued_by IS NULL OR continued_by = $2)",
            )
            .bind(id)
            .bind(claimant)
            .execute(pool)
            .await
            .map_err(SqlStoreError::query("claim the run's continuation"))?
            .rows_affected()
        });
        Ok(claimed == 1)
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, SqlStoreError> {
        let row = with_pool!(self, pool => {
            sqlx::query_as::<_, ApprovalRow>(concat!(
                "SELECT ",
                approval_columns!(),
                " FROM approvals WHERE id = $1"
            ))
            .bind(id)
            .fetch_optional(pool)
            .await
            .map_err(SqlStoreError::query("read the approval"))?
        });
        row.map(approval_from_row).transpose()
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn write_approval_message(
        &self,
        id: &str,
        message_ref: &str,
    ) -> Result<(), SqlStoreError> {
        with_writer!(self, pool => {
            sqlx::query("UPDATE approvals SET message_ref = $2 WHERE id = $1")
                .bind(id)
                .bind(message_ref)
                .execute(pool)
                .await
                .map_err(SqlStoreError::query("record the approval's message"))?;
        });
        Ok(())
    }

    /// The approvals of `ids` that are no longer pending: one statement per
    /// [`SETTLED_APPROVALS_PER_QUERY`] ids, each looked up by its primary key.
    #[tracing::instrument(level = "debug", skip(self, ids), fields(ids = ids.len()), err(level = "debug", Display))]
    async fn read_settled(&self, ids: &[String]) -> Result<Vec<ApprovalRecord>, SqlStoreError> {
        let mut settled = Vec::new();
        for chunk in ids.chunks(SETTLED_APPROVALS_PER_QUERY) {
            let rows = with_pool!(self, pool => {
                let mut query = sqlx::QueryBuilder::new(concat!(
                    "SELECT ",
                    approval_columns!(),
                    " FROM approvals WHERE status <> 'pending' AND id IN ("
                ));
                let mut list = query.separated(", ");
                for id in chunk {
                    list.push_bind(id.as_str());
                }
                list.push_unseparated(")");
                query
                    .build_query_as::<ApprovalRow>()
                    .fetch_all(pool)
                    .await
                    .map_err(SqlStoreError::query("read decided approvals"))?
            });
            for row in rows {
                settled.push(approval_from_row(row)?);
            }
        }
        Ok(settled)
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_live_instance(
        &self,
        run_id: &str,
        stale_before: SystemTime,
    ) -> Result<Option<String>, SqlStoreError> {
        let stale_before = to_millis(stale_before);
        let instance = with_pool!(self, pool => {
            sqlx::query_scalar::<_, String>(
                "SELECT instance FROM runs \
                 WHERE id = $1 AND finished_at IS NULL AND heartbeat_at >= $2",
            )
            .bind(run_id)
            .bind(stale_before)
            .fetch_optional(pool)
            .await
            .map_err(SqlStoreError::query("read the run's process"))?
        });
        Ok(instance)
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_pending(
        &self,
        channel: Option<&str>,
    ) -> Result<Vec<ApprovalRecord>, SqlStoreError> {
        const FAILED: &str = "list pending approvals";
        let rows = with_pool!(self, pool => match channel {
            Some(channel) => sqlx::query_as::<_, ApprovalRow>(concat!(
                "SELECT ",
                approval_columns!(),
                " FROM approvals WHERE status = 'pending' AND channel = $1 ORDER BY created_at, id"
            ))
            .bind(channel)
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query(FAILED))?,
            None => sqlx::query_as::<_, ApprovalRow>(concat!(
                "SELECT ",
                approval_columns!(),
                " FROM approvals WHERE status = 'pending' ORDER BY created_at, id"
            ))
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query(FAILED))?,
        });
        rows.into_iter().map(approval_from_row).collect()
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn expire(&self, now: SystemTime) -> Result<Vec<ApprovalRecord>, SqlStoreError> {
        let now = to_millis(now);
        let rows = with_writer!(self, pool => {
            sqlx::query_as::<_, ApprovalRow>(concat!(
                "UPDATE approvals SET status = 'expired', decided_at = $1 ",
                "WHERE status = 'pending' AND expires_at <= $1 RETURNING ",
                approval_columns!()
            ))
            .bind(now)
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query("expire overdue approvals"))?
        });
        oldest_first(rows)
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn abandon(
        &self,
        stale_before: SystemTime,
    ) -> Result<Vec<ApprovalRecord>, SqlStoreError> {
        let stale_before = to_millis(stale_before);
        let now = to_millis(SystemTime::now());
        let rows = with_writer!(self, pool => {
            // A run is live while it is not finished and its heartbeat is recent; a pending
            // approval of any other run (finished, stale, or gone) is orphaned.
            sqlx::query_as::<_, ApprovalRow>(concat!(
                "UPDATE approvals SET status = 'abandoned', decided_at = $2 ",
                "WHERE status = 'pending' AND run_id NOT IN ",
                "(SELECT id FROM runs WHERE finished_at IS NULL AND heartbeat_at >= $1) ",
                // One that can resume its run stays pending until answered or expired.
                "AND (resume IS NULL OR expires_at <= $2) ",
                "RETURNING ",
                approval_columns!()
            ))
            .bind(stale_before)
            .bind(now)
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query("abandon orphaned approvals"))?
        });
        oldest_first(rows)
    }

    #[tracing::instrument(level = "debug", skip(self, record), fields(tool = %record.tool, outcome = %record.outcome), err(level = "debug", Display))]
    async fn insert_audit(&self, record: &AuditRecord, key: &str) -> Result<(), SqlStoreError> {
        // `key` is the same for every attempt of one `record_audit`: an attempt after one
        // that landed inserts nothing.
        self.batcher
            .ask(Write::Audit {
                record: Box::new(record.clone()),
                key: key.to_owned(),
            })
            .await
    }

    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_audit(
        &self,
        channel: &str,
        limit: usize,
    ) -> Result<Vec<AuditRecord>, SqlStoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = with_pool!(self, pool => {
            sqlx::query_as::<_, AuditRow>(concat!(
                "SELECT ",
                audit_columns!(),
                " FROM audit WHERE channel = $1 ORDER BY id DESC LIMIT $2"
            ))
            .bind(channel)
            .bind(limit)
            .fetch_all(pool)
            .await
            .map_err(SqlStoreError::query("read the audit log"))?
        });
        rows.into_iter().map(audit_from_row).collect()
    }
}

impl SqlStore {
    #[tracing::instrument(level = "debug", skip(self), err(level = "debug", Display))]
    async fn read_earlier_run(
        &self,
        channel: &str,
        tool: &str,
        arguments_hash: &str,
    ) -> Result<Option<EarlierRun>, SqlStoreError> {
        let row: Option<(i64, Option<String>, String, Option<String>)> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT a.at, p.decided_by, a.outcome, a.result \
                 FROM approvals p JOIN audit a ON a.approval_id = p.id \
                 WHERE p.channel = $1 AND p.tool = $2 AND p.arguments_hash = $3 \
                 AND p.status = 'confirmed' AND a.outcome IN ('ok', 'error') \
                 ORDER BY a.id DESC LIMIT 1",
            )
            .bind(channel)
            .bind(tool)
            .bind(arguments_hash)
            .fetch_optional(pool)
            .await
            .map_err(SqlStoreError::query("read the calls this channel ran"))?
        });
        row.map(|(at, confirmed_by, outcome, result)| {
            Ok(EarlierRun {
                at: SystemTime::UNIX_EPOCH
                    + Duration::from_secs(codec::from_bigint(at, "audit.at")?),
                confirmed_by,
                succeeded: outcome == CallOutcome::Ok.as_str(),
                result,
            })
        })
        .transpose()
    }
}

/// Opens one connection outside any pool: a pool retries a refused connection until its
/// acquire timeout and then reports only "pool timed out", losing the cause; a direct
/// attempt fails at once with it ("Connection refused", "password authentication failed").
async fn probe<O>(options: &O, shown: &str, hint: &'static str) -> Result<(), SqlStoreError>
where
    O: ConnectOptions,
    O::Connection: Sized,
{
    match tokio::time::timeout(CONNECT_TIMEOUT, options.connect()).await {
        Err(_) => Err(SqlStoreError::ConnectTimeout {
            url: shown.to_owned(),
            seconds: CONNECT_TIMEOUT.as_secs(),
            hint,
        }),
        Ok(Err(cause)) => Err(SqlStoreError::Connect {
            url: shown.to_owned(),
            cause,
            hint,
        }),
        Ok(Ok(connection)) => {
            // The connection proved the way in; closing it cleanly is a courtesy.
            if let Err(error) = connection.close().await {
                tracing::debug!(%error, "the probe connection did not close cleanly");
            }
            Ok(())
        }
    }
}

/// `RETURNING` rows come in no particular order: oldest first, as the contract lists them.
fn oldest_first(rows: Vec<ApprovalRow>) -> Result<Vec<ApprovalRecord>, SqlStoreError> {
    let mut records = rows
        .into_iter()
        .map(approval_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    records.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(records)
}

/// After an attempt whose effect is unknown (it failed, so it may have landed before its
/// answer was lost), finding the approval decided exactly as asked means the earlier attempt
/// won: say so, so the person who clicked is told their decision counts.
fn own_decision(
    attempt: u32,
    status: ApprovalStatus,
    by: Option<&str>,
    decided: Decided,
) -> Decided {
    match decided {
        Decided::Lost(record)
            if attempt > 1 && record.status == status && record.decided_by.as_deref() == by =>
        {
            Decided::Won(record)
        }
        other => other,
    }
}

/// A key for one audit record, the same across the attempts to write it and unique across
/// processes sharing the database.
fn idempotency_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    format!("{}-{:016x}", crate::core::agent::new_id(), hasher.finish())
}

impl Store for SqlStore {
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("load the conversation", |_| {
                    self.read_history(channel, budget)
                })
                .await?)
        })
    }

    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("save the conversation", |_| {
                    self.append_messages(channel, messages)
                })
                .await?)
        })
    }

    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("forget the conversation", |_| self.clear_history(channel))
                .await?)
        })
    }

    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("prune old conversation history", |_| self.prune(before))
                .await?)
        })
    }

    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the channel settings", |_| {
                    self.read_channel_settings(channel)
                })
                .await?)
        })
    }

    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("change the channel settings", |_| {
                    self.write_channel_settings(channel, settings, changed_by)
                })
                .await?)
        })
    }

    fn start_run<'a>(
        &'a self,
        run_id: &'a str,
        channel: &'a str,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record the start of a run", |_| {
                    self.insert_run(run_id, channel, instance)
                })
                .await?)
        })
    }

    fn heartbeat_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record a run's heartbeat", |_| self.touch_run(run_id))
                .await?)
        })
    }

    fn finish_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record the end of a run", |_| self.end_run(run_id))
                .await?)
        })
    }

    fn create_approval<'a>(
        &'a self,
        approval: &'a ApprovalRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record the approval", |attempt| {
                    self.insert_approval(approval, attempt > 1)
                })
                .await?)
        })
    }

    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>> {
        Box::pin(async move {
            let decided = self
                .retry
                .run("record the decision", |attempt| async move {
                    let decided = self.decide(id, status, by, note).await?;
                    Ok(own_decision(attempt, status, by, decided))
                })
                .await?;
            Ok(decided)
        })
    }

    fn approval<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the approval", |_| self.read_approval(id))
                .await?)
        })
    }

    fn claim_continuation<'a>(
        &'a self,
        id: &'a str,
        claimant: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("claim the run's continuation", |_| self.claim(id, claimant))
                .await?)
        })
    }

    fn set_approval_message<'a>(
        &'a self,
        id: &'a str,
        message_ref: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record the approval's message", |_| {
                    self.write_approval_message(id, message_ref)
                })
                .await?)
        })
    }

    fn settled_approvals<'a>(
        &'a self,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read decided approvals", |_| self.read_settled(ids))
                .await?)
        })
    }

    fn live_run_instance<'a>(
        &'a self,
        run_id: &'a str,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the run's process", |_| {
                    self.read_live_instance(run_id, stale_before)
                })
                .await?)
        })
    }

    fn pending_approvals<'a>(
        &'a self,
        channel: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("list pending approvals", |_| self.read_pending(channel))
                .await?)
        })
    }

    fn expire_overdue<'a>(
        &'a self,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("expire overdue approvals", |_| self.expire(now))
                .await?)
        })
    }

    fn abandon_orphaned<'a>(
        &'a self,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("abandon orphaned approvals", |_| self.abandon(stale_before))
                .await?)
        })
    }

    fn record_audit<'a>(
        &'a self,
        record: &'a AuditRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = idempotency_key();
            Ok(self
                .retry
                .run("write the audit record", |_| {
                    self.insert_audit(record, &key)
                })
                .await?)
        })
    }

    fn recent_audit<'a>(
        &'a self,
        channel: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<AuditRecord>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the audit log", |_| self.read_audit(channel, limit))
                .await?)
        })
    }

    fn earlier_run<'a>(
        &'a self,
        channel: &'a str,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<EarlierRun>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the calls this channel ran", |_| {
                    self.read_earlier_run(channel, tool, arguments_hash)
                })
                .await?)
        })
    }

    fn create_rule<'a>(&'a self, rule: &'a ChannelRule) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("record the rule", |_| self.insert_rule(rule))
                .await?)
        })
    }

    fn channel_rules<'a>(
        &'a self,
        channel: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ChannelRule>, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("read the channel's rules", |_| {
                    self.read_rules(channel, now)
                })
                .await?)
        })
    }

    fn revoke_rule<'a>(
        &'a self,
        channel: &'a str,
        id: &'a str,
        by: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            Ok(self
                .retry
                .run("revoke the rule", |_| self.revoke(channel, id, by))
                .await?)
        })
    }
}
