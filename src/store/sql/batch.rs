//! The writes every run makes (its start and end, an audit record per call, its
//! conversation turn) reach the database in batches.
//!
//! A one-row write costs little inside the database and a lot around it: on PostgreSQL a
//! round trip, a backend woken and a commit (and from sqlx's pool two more round trips: it
//! pings a connection as it leaves the pool and as it comes back); on SQLite a round trip to
//! the connection's thread. Here one task takes the writes as data, off a queue, and sends
//! whatever has queued as one atomic unit:
//!
//! - PostgreSQL ([`PgLink`]): one statement on a connection of its own, arrays of values
//!   unnested by four data-modifying CTEs: one round trip and one commit per batch;
//! - SQLite ([`SqliteSink`]): at most one multi-row statement per kind of write, as one unit
//!   of the store's [`Writer`] (which commits it with whatever else joined the transaction).
//!
//! Writes that arrive while a batch is out form the next one: under light load each write
//! goes alone, at once; under heavy load one round trip and one commit serve dozens.
//!
//! - A caller hears `Ok` once its batch is committed.
//! - A batch refused for a reason of its own (a constraint, a value) is sent again one write
//!   at a time, so each write gets its own answer and none fails for another's.
//! - A batch that fails because the database is away fails each of its writes with that
//!   error; the store's retry loop tries them again (each write is idempotent, see `mod.rs`).
//! - Two writes to the same run, or with the same audit key, never share a batch: the CTEs of
//!   one PostgreSQL statement see one snapshot, so they could not see each other.
//! - A write whose caller gave up (cut off by the retry loop) before it was sent is dropped.
//!
//! Reads, the channel-settings read that starts every run among them, do not come here: they
//! go straight to the store's pool, which the run's writes do not crowd.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::sqlite::SqliteConnection;
use sqlx::{ConnectOptions, Connection, QueryBuilder, Sqlite};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::codec::{audit_columns, to_bigint};
use super::error::SqlStoreError;
use super::writer::Writer;
use crate::core::ports::AuditRecord;
use crate::core::tools::BoxFuture;

/// The most writes one batch carries.
const MAX_BATCH: usize = 1024;

/// What one batch does on PostgreSQL: each CTE takes its rows from arrays (empty when the
/// batch has none of that kind). Messages are inserted in the order of their array, so each
/// turn's ids follow its messages.
///
/// Before its first message takes an id, a batch holds a transaction-scoped advisory lock
/// keyed by the `messages` table, until it commits: the batcher has two connections, and two
/// inserts drawing ids from the one sequence at once would interleave their turns (a tool
/// result apart from its call). The lock's CTE is joined to the rows, so it is taken before
/// any row reaches the insert (a sort sits between them); a batch without messages takes
/// no lock, or takes it for nothing.
const POSTGRES_BATCH: &str = concat!(
    "WITH started AS (",
    "INSERT INTO runs (id, channel, instance, started_at, heartbeat_at) ",
    "SELECT s.id, s.channel, s.instance, s.at, s.at ",
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[]) AS s(id, channel, instance, at) ",
    "ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, instance = excluded.instance, ",
    "started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, finished_at = NULL",
    "), ended AS (",
    "UPDATE runs SET finished_at = e.at, heartbeat_at = e.at ",
    "FROM unnest($5::text[], $6::int8[]) AS e(id, at) ",
    "WHERE runs.id = e.id AND runs.finished_at IS NULL",
    "), audited AS (",
    "INSERT INTO audit (",
    audit_columns!(),
    ", idempotency_key) ",
    "SELECT * FROM unnest($7::int8[], $8::text[], $9::text[], $10::text[], $11::text[], ",
    "$12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::int8[], ",
    "$19::int8[], $20::text[], $21::text[], $22::text[]) ",
    "ON CONFLICT (idempotency_key) DO NOTHING",
    "), turn_order AS (",
    "SELECT pg_advisory_xact_lock('messages'::regclass::oid::int8)",
    "), saved AS (",
    "INSERT INTO messages (channel, message, created_at) ",
    "SELECT m.channel, m.message, m.at ",
    "FROM unnest($23::text[], $24::text[], $25::int8[]) WITH ORDINALITY AS m(channel, message, at, n) ",
    "CROSS JOIN turn_order ",
    "ORDER BY m.n",
    ") SELECT 1"
);

/// Rows of one multi-row INSERT into `messages` on SQLite (3 parameters each, well under
/// SQLite's limit of 32,766).
const SQLITE_MESSAGES_PER_INSERT: usize = 500;

/// One write.
#[derive(Debug, Clone)]
pub(super) enum Write {
    /// Records (or restarts) a run.
    StartRun {
        id: String,
        channel: String,
        instance: String,
        at: i64,
    },
    /// Marks a run finished, unless it already is.
    EndRun { id: String, at: i64 },
    /// One audit record under its idempotency key (a second insert with the key does
    /// nothing).
    Audit {
        record: Box<AuditRecord>,
        key: String,
    },
    /// A conversation turn: its messages' JSON, in order.
    Messages {
        channel: String,
        rows: Vec<String>,
        at: i64,
    },
}

impl Request for Write {
    type Answer = ();
    const SEVERAL: &'static str = "save a batch of writes";

    fn operation(&self) -> &'static str {
        match self {
            Self::StartRun { .. } => "record the start of a run",
            Self::EndRun { .. } => "record the end of a run",
            Self::Audit { .. } => "write the audit record",
            Self::Messages { .. } => "save the conversation",
        }
    }

    fn key(&self) -> Option<(&'static str, &str)> {
        match self {
            Self::StartRun { id, .. } | Self::EndRun { id, .. } => Some(("run", id)),
            Self::Audit { key, .. } => Some(("audit", key)),
            Self::Messages { .. } => None,
        }
    }
}

/// Something a batcher takes.
pub(super) trait Request: Send + Sync + 'static {
    type Answer: Send + 'static;
    /// What a batch of several such requests does, for errors.
    const SEVERAL: &'static str;

    /// What the request does, for errors.
    fn operation(&self) -> &'static str;

    /// What must not appear twice in one batch.
    fn key(&self) -> Option<(&'static str, &str)> {
        None
    }
}

/// Where batches go: `send` handles `requests` as one atomic unit (all land or none; a write
/// is answered once committed) and gives one answer per request, in order. `operation` names
/// the unit in errors.
pub(super) trait Sink<R: Request>: Send + 'static {
    fn send<'a>(
        &'a mut self,
        operation: &'static str,
        requests: &'a [&'a R],
    ) -> BoxFuture<'a, Result<Vec<R::Answer>, SqlStoreError>>;

    /// Lets go of what the sink holds.
    fn close(&mut self) -> BoxFuture<'_, ()>;
}

/// Why a request was not carried out.
#[derive(Debug)]
enum Failure {
    /// The request's own failure (it was sent alone).
    Own(SqlStoreError),
    /// The batch it was part of failed (the database was away, or did not answer).
    Shared(Arc<SqlStoreError>),
    /// The store is closed.
    Closed,
}

impl Failure {
    fn into_error(self, operation: &'static str) -> SqlStoreError {
        match self {
            Self::Own(error) => error,
            Self::Shared(cause) => SqlStoreError::Batched { operation, cause },
            Self::Closed => SqlStoreError::Closed { operation },
        }
    }
}

type Reply<R> = oneshot::Sender<Result<<R as Request>::Answer, Failure>>;

enum Job<R: Request> {
    Request {
        request: R,
        reply: Reply<R>,
    },
    /// Sends what came before, closes the sinks and stops.
    Close(oneshot::Sender<()>),
}

/// Sends the requests of one kind in batches. Cheap to clone.
pub(super) struct Batcher<R: Request> {
    queue: mpsc::UnboundedSender<Job<R>>,
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl<R: Request> Clone for Batcher<R> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            task: self.task.clone(),
        }
    }
}

impl<R: Request> std::fmt::Debug for Batcher<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").finish_non_exhaustive()
    }
}

impl<R: Request> Batcher<R> {
    /// Starts the batcher on the current runtime. Each sink has one batch out at a time.
    pub(super) fn start<S: Sink<R>>(sinks: Vec<S>) -> Self {
        assert!(!sinks.is_empty(), "a batcher needs a sink");
        let (queue, jobs) = mpsc::unbounded_channel();
        let task = tokio::spawn(serve(jobs, sinks));
        Self {
            queue,
            task: Arc::new(Mutex::new(Some(task))),
        }
    }

    /// Queues `request` and waits for its answer (for a write: until it is committed).
    pub(super) async fn ask(&self, request: R) -> Result<R::Answer, SqlStoreError> {
        let operation = request.operation();
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Job::Request { request, reply })
            .map_err(|_| SqlStoreError::Closed { operation })?;
        match answer.await {
            Ok(answer) => answer.map_err(|failure| failure.into_error(operation)),
            // The batcher stopped without answering: the store closed.
            Err(_) => Err(SqlStoreError::Closed { operation }),
        }
    }

    /// Sends every request queued so far, then closes the sinks. Later requests fail with
    /// `Closed`.
    pub(super) async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.queue.send(Job::Close(done)).is_ok() {
            let _ = closed.await;
        }
        if let Some(task) = self.task.lock().await.take()
            && let Err(e) = task.await
        {
            tracing::error!(error = %e, "a batching task of the state store stopped abnormally");
        }
    }
}

/// Takes requests off the queue and sends them in batches until told to close: a batch is
/// gathered when a sink is free, from everything queued by then.
async fn serve<R: Request, S: Sink<R>>(mut jobs: mpsc::UnboundedReceiver<Job<R>>, sinks: Vec<S>) {
    let count = sinks.len();
    let (free, mut idle) = mpsc::unbounded_channel();
    for sink in sinks {
        let _ = free.send(sink);
    }
    let mut held = None;
    loop {
        let first = match held.take() {
            Some(job) => job,
            None => match jobs.recv().await {
                Some(job) => job,
                None => break,
            },
        };
        let Some(mut sink) = idle.recv().await else {
            break;
        };
        let mut batch = Batch::default();
        let mut closing = None;
        match first {
            Job::Request { request, reply } => batch.push(request, reply),
            Job::Close(done) => closing = Some(done),
        }
        while closing.is_none() && batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(Job::Request { request, reply }) if batch.takes(&request) => {
                    batch.push(request, reply);
                }
                Ok(other) => {
                    // A request that must wait for the next batch, or the close: either
                    // goes after this batch.
                    held = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        if let Some(done) = closing {
            // Every sink back, then closed: nothing is out any more.
            let mut sinks = vec![sink];
            while sinks.len() < count {
                match idle.recv().await {
                    Some(sink) => sinks.push(sink),
                    None => break,
                }
            }
            for sink in &mut sinks {
                sink.close().await;
            }
            let _ = done.send(());
            break;
        }
        let free = free.clone();
        tokio::spawn(async move {
            batch.send(&mut sink).await;
            let _ = free.send(sink);
        });
    }
    // Whatever is still queued is told the store closed.
    jobs.close();
    while let Ok(job) = jobs.try_recv() {
        if let Job::Request { reply, .. } = job {
            let _ = reply.send(Err(Failure::Closed));
        }
    }
}

/// Requests gathered for one batch.
struct Batch<R: Request> {
    requests: Vec<(R, Reply<R>)>,
    keys: HashSet<(&'static str, String)>,
}

impl<R: Request> Default for Batch<R> {
    fn default() -> Self {
        Self {
            requests: Vec::new(),
            keys: HashSet::new(),
        }
    }
}

impl<R: Request> Batch<R> {
    fn len(&self) -> usize {
        self.requests.len()
    }

    /// Whether `request` may join (it touches nothing another request of the batch touches).
    fn takes(&self, request: &R) -> bool {
        request
            .key()
            .is_none_or(|(kind, key)| !self.keys.contains(&(kind, key.to_owned())))
    }

    fn push(&mut self, request: R, reply: Reply<R>) {
        if let Some((kind, key)) = request.key() {
            self.keys.insert((kind, key.to_owned()));
        }
        self.requests.push((request, reply));
    }

    /// Sends the requests whose callers still wait, and answers each.
    async fn send(self, sink: &mut impl Sink<R>) {
        let (requests, replies): (Vec<_>, Vec<_>) = self
            .requests
            .into_iter()
            .filter(|(_, reply)| !reply.is_closed())
            .unzip();
        let sent = match requests.as_slice() {
            [] => return,
            [one] => sink.send(one.operation(), &[one]).await,
            several => {
                let several: Vec<&R> = several.iter().collect();
                sink.send(R::SEVERAL, &several).await
            }
        };
        match sent {
            Ok(answers) => {
                debug_assert_eq!(answers.len(), replies.len(), "one answer per request");
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = reply.send(Ok(answer));
                }
            }
            Err(e) if requests.len() == 1 => {
                if let Some(reply) = replies.into_iter().next() {
                    let _ = reply.send(Err(Failure::Own(e)));
                }
            }
            Err(e) if e.is_transient() => {
                tracing::warn!(error = %e, requests = requests.len(), "a batch of the state store's requests failed; each will be retried");
                let cause = Arc::new(e);
                for reply in replies {
                    let _ = reply.send(Err(Failure::Shared(cause.clone())));
                }
            }
            Err(e) => {
                // Something in the batch was refused, so nothing of it landed. Each request
                // goes again alone: only the one at fault fails.
                tracing::debug!(error = %e, requests = requests.len(), "a batch of the state store's requests was refused; sending them one by one");
                for (request, reply) in requests.iter().zip(replies) {
                    let answer =
                        sink.send(request.operation(), &[request])
                            .await
                            .and_then(|answers| {
                                answers.into_iter().next().ok_or_else(|| {
                                    SqlStoreError::Invalid(
                                        "a batch came back without an answer".into(),
                                    )
                                })
                            });
                    let _ = reply.send(answer.map_err(Failure::Own));
                }
            }
        }
    }
}

/// PostgreSQL: a connection of the batcher's own (outside sqlx's pool, so without its pings),
/// reopened when lost.
pub(super) struct PgLink {
    connection: Option<PgConnection>,
    options: PgConnectOptions,
    /// How long one batch may go unanswered before its connection is given up.
    answer_within: Duration,
}

impl PgLink {
    /// Opens a link (the first connection at once, so a bad URL fails the store's start).
    pub(super) async fn open(
        options: PgConnectOptions,
        answer_within: Duration,
    ) -> Result<Self, sqlx::Error> {
        let connection = options.connect().await?;
        Ok(Self {
            connection: Some(connection),
            options,
            answer_within,
        })
    }

    /// Runs `work` on the connection, opening one first if needed, within `answer_within`.
    async fn run<T>(
        &mut self,
        work: impl AsyncFnOnce(&mut PgConnection) -> Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            None => {
                let opened = tokio::time::timeout(self.answer_within, self.options.connect())
                    .await
                    .map_err(|_| no_answer("connecting"))??;
                self.connection.insert(opened)
            }
        };
        let done = tokio::time::timeout(self.answer_within, work(connection))
            .await
            .map_err(|_| no_answer("answering"))
            .and_then(|result| result);
        if let Err(e) = &done
            && lost(e)
        {
            // A statement cut off, or a connection the server ended: its state is unknown,
            // so the next batch starts on a new one.
            self.connection = None;
        }
        done
    }

    async fn shut(&mut self) {
        close_quietly(self.connection.take()).await;
    }
}

impl Sink<Write> for PgLink {
    fn send<'a>(
        &'a mut self,
        operation: &'static str,
        writes: &'a [&'a Write],
    ) -> BoxFuture<'a, Result<Vec<()>, SqlStoreError>> {
        Box::pin(async move {
            let kinds = Kinds::of(writes.iter().copied());
            let columns = Columns::of(&kinds);
            self.run(async |connection| columns.query().execute(connection).await)
                .await
                .map_err(SqlStoreError::query(operation))?;
            Ok(vec![(); writes.len()])
        })
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(self.shut())
    }
}

/// Closes a batcher's connection, if it still has one (a clean close is a courtesy: the
/// server or SQLite copes with a dropped one).
async fn close_quietly(connection: Option<impl Connection>) {
    if let Some(connection) = connection
        && let Err(e) = connection.close().await
    {
        tracing::debug!(error = %e, "a state store connection did not close cleanly");
    }
}

/// A stand-in error for a round trip that got no answer in time (transient, as a reset
/// socket is).
fn no_answer(doing: &str) -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("the state database did not answer while {doing}"),
    ))
}

/// Whether a failure leaves the connection unusable or in doubt (anything but an error the
/// server reported about the statement itself).
fn lost(error: &sqlx::Error) -> bool {
    !matches!(error, sqlx::Error::Database(_)) || super::retry::is_transient(error)
}

/// SQLite: batches go through the store's one [`Writer`], as one unit.
pub(super) struct SqliteSink {
    writer: Arc<Writer>,
}

impl SqliteSink {
    pub(super) fn new(writer: Arc<Writer>) -> Self {
        Self { writer }
    }
}

impl Sink<Write> for SqliteSink {
    fn send<'a>(
        &'a mut self,
        operation: &'static str,
        writes: &'a [&'a Write],
    ) -> BoxFuture<'a, Result<Vec<()>, SqlStoreError>> {
        Box::pin(async move {
            let kinds = Kinds::of(writes.iter().copied());
            let work = async |connection: &mut SqliteConnection| {
                sqlite_batch(connection, operation, &kinds).await
            };
            if kinds.sqlite_statements() == 1 {
                // SQLite undoes a failing statement by itself: no savepoint needed.
                self.writer.run_statement(operation, work).await?;
            } else {
                self.writer.run(operation, work).await?;
            }
            Ok(vec![(); writes.len()])
        })
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        // The store closes the writer after the batcher.
        Box::pin(async {})
    }
}

/// A batch's writes by kind, each kind in the order of the batch.
#[derive(Default)]
struct Kinds<'w> {
    /// (run id, channel, instance, at)
    starts: Vec<(&'w str, &'w str, &'w str, i64)>,
    /// (run id, at)
    ends: Vec<(&'w str, i64)>,
    /// (record, idempotency key)
    audits: Vec<(&'w AuditRecord, &'w str)>,
    /// Every turn's messages, turn after turn: (channel, JSON, at).
    messages: Vec<(&'w str, &'w str, i64)>,
}

impl<'w> Kinds<'w> {
    fn of(writes: impl IntoIterator<Item = &'w Write>) -> Self {
        let mut kinds = Self::default();
        for write in writes {
            match write {
                Write::StartRun {
                    id,
                    channel,
                    instance,
                    at,
                } => kinds.starts.push((id, channel, instance, *at)),
                Write::EndRun { id, at } => kinds.ends.push((id, *at)),
                Write::Audit { record, key } => kinds.audits.push((record, key)),
                Write::Messages { channel, rows, at } => kinds
                    .messages
                    .extend(rows.iter().map(|row| (channel.as_str(), row.as_str(), *at))),
            }
        }
        kinds
    }

    /// How many statements [`sqlite_batch`] runs for them.
    fn sqlite_statements(&self) -> usize {
        [
            !self.starts.is_empty(),
            !self.ends.is_empty(),
            !self.audits.is_empty(),
        ]
        .into_iter()
        .filter(|present| *present)
        .count()
            + self.messages.len().div_ceil(SQLITE_MESSAGES_PER_INSERT)
    }
}

/// Runs a batch on SQLite: one multi-row statement per kind of write (messages in chunks),
/// each turn's messages in order.
async fn sqlite_batch(
    connection: &mut SqliteConnection,
    operation: &'static str,
    kinds: &Kinds<'_>,
) -> Result<(), SqlStoreError> {
    let failed = SqlStoreError::query;
    let Kinds {
        starts,
        ends,
        audits,
        messages,
    } = kinds;
    if !starts.is_empty() {
        let mut insert = QueryBuilder::<Sqlite>::new(
            "INSERT INTO runs (id, channel, instance, started_at, heartbeat_at) ",
        );
        insert.push_values(starts, |mut row, (id, channel, instance, at)| {
            row.push_bind(*id)
                .push_bind(*channel)
                .push_bind(*instance)
                .push_bind(*at)
                .push_bind(*at);
        });
        // Starting a run again restarts it, as the in-memory store does.
        insert.push(
            " ON CONFLICT (id) DO UPDATE SET channel = excluded.channel, \
             instance = excluded.instance, started_at = excluded.started_at, \
             heartbeat_at = excluded.heartbeat_at, finished_at = NULL",
        );
        insert
            .build()
            .execute(&mut *connection)
            .await
            .map_err(failed(operation))?;
    }
    if !ends.is_empty() {
        let mut update = QueryBuilder::<Sqlite>::new(
            "UPDATE runs SET finished_at = e.column2, heartbeat_at = e.column2 FROM (",
        );
        update.push_values(ends, |mut row, (id, at)| {
            row.push_bind(*id).push_bind(*at);
        });
        update.push(") AS e WHERE runs.id = e.column1 AND runs.finished_at IS NULL");
        update
            .build()
            .execute(&mut *connection)
            .await
            .map_err(failed(operation))?;
    }
    if !audits.is_empty() {
        let mut insert = QueryBuilder::<Sqlite>::new(concat!(
            "INSERT INTO audit (",
            audit_columns!(),
            ", idempotency_key) "
        ));
        insert.push_values(audits, |mut row, (record, key)| {
            row.push_bind(to_bigint(record.at))
                .push_bind(record.run_id.as_str())
                .push_bind(record.channel.as_str())
                .push_bind(record.user.as_str())
                .push_bind(record.tool.as_str())
                .push_bind(record.arguments_summary.as_str())
                .push_bind(record.decision.as_str())
                .push_bind(record.source.as_str())
                .push_bind(record.reason.as_str())
                .push_bind(record.outcome.as_str())
                .push_bind(record.approval_id.as_deref())
                .push_bind(to_bigint(record.duration_ms))
                .push_bind(to_bigint(record.output_bytes))
                .push_bind(record.note.as_deref())
                .push_bind(record.result.as_deref())
                .push_bind(*key);
        });
        // An attempt after one that landed (same key) inserts nothing.
        insert.push(" ON CONFLICT (idempotency_key) DO NOTHING");
        insert
            .build()
            .execute(&mut *connection)
            .await
            .map_err(failed(operation))?;
    }
    // SQLite numbers the rows of one INSERT in the order of its VALUES.
    for chunk in messages.chunks(SQLITE_MESSAGES_PER_INSERT) {
        let mut insert =
            QueryBuilder::<Sqlite>::new("INSERT INTO messages (channel, message, created_at) ");
        insert.push_values(chunk, |mut row, (channel, json, at)| {
            row.push_bind(*channel).push_bind(*json).push_bind(*at);
        });
        insert
            .build()
            .execute(&mut *connection)
            .await
            .map_err(failed(operation))?;
    }
    Ok(())
}

/// A batch as the statement's arrays.
struct Columns<'w> {
    start_id: Vec<&'w str>,
    start_channel: Vec<&'w str>,
    start_instance: Vec<&'w str>,
    start_at: Vec<i64>,
    end_id: Vec<&'w str>,
    end_at: Vec<i64>,
    audit_at: Vec<i64>,
    audit_run_id: Vec<&'w str>,
    audit_channel: Vec<&'w str>,
    audit_user: Vec<&'w str>,
    audit_tool: Vec<&'w str>,
    audit_summary: Vec<&'w str>,
    audit_decision: Vec<&'w str>,
    audit_source: Vec<&'w str>,
    audit_reason: Vec<&'w str>,
    audit_outcome: Vec<&'w str>,
    audit_approval: Vec<Option<&'w str>>,
    audit_duration: Vec<i64>,
    audit_bytes: Vec<i64>,
    audit_note: Vec<Option<&'w str>>,
    audit_result: Vec<Option<&'w str>>,
    audit_key: Vec<&'w str>,
    message_channel: Vec<&'w str>,
    message_json: Vec<&'w str>,
    message_at: Vec<i64>,
}

impl<'w> Columns<'w> {
    fn of(kinds: &Kinds<'w>) -> Self {
        let Kinds {
            starts,
            ends,
            audits,
            messages,
        } = kinds;
        Self {
            start_id: starts.iter().map(|start| start.0).collect(),
            start_channel: starts.iter().map(|start| start.1).collect(),
            start_instance: starts.iter().map(|start| start.2).collect(),
            start_at: starts.iter().map(|start| start.3).collect(),
            end_id: ends.iter().map(|end| end.0).collect(),
            end_at: ends.iter().map(|end| end.1).collect(),
            audit_at: audits.iter().map(|(r, _)| to_bigint(r.at)).collect(),
            audit_run_id: audits.iter().map(|(r, _)| r.run_id.as_str()).collect(),
            audit_channel: audits.iter().map(|(r, _)| r.channel.as_str()).collect(),
            audit_user: audits.iter().map(|(r, _)| r.user.as_str()).collect(),
            audit_tool: audits.iter().map(|(r, _)| r.tool.as_str()).collect(),
            audit_summary: audits
                .iter()
                .map(|(r, _)| r.arguments_summary.as_str())
                .collect(),
            audit_decision: audits.iter().map(|(r, _)| r.decision.as_str()).collect(),
            audit_source: audits.iter().map(|(r, _)| r.source.as_str()).collect(),
            audit_reason: audits.iter().map(|(r, _)| r.reason.as_str()).collect(),
            audit_outcome: audits.iter().map(|(r, _)| r.outcome.as_str()).collect(),
            audit_approval: audits
                .iter()
                .map(|(r, _)| r.approval_id.as_deref())
                .collect(),
            audit_duration: audits
                .iter()
                .map(|(r, _)| to_bigint(r.duration_ms))
                .collect(),
            audit_bytes: audits
                .iter()
                .map(|(r, _)| to_bigint(r.output_bytes))
                .collect(),
            audit_note: audits.iter().map(|(r, _)| r.note.as_deref()).collect(),
            audit_result: audits.iter().map(|(r, _)| r.result.as_deref()).collect(),
            audit_key: audits.iter().map(|(_, key)| *key).collect(),
            message_channel: messages.iter().map(|message| message.0).collect(),
            message_json: messages.iter().map(|message| message.1).collect(),
            message_at: messages.iter().map(|message| message.2).collect(),
        }
    }

    fn query(&self) -> sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments> {
        sqlx::query(POSTGRES_BATCH)
            .bind(&self.start_id)
            .bind(&self.start_channel)
            .bind(&self.start_instance)
            .bind(&self.start_at)
            .bind(&self.end_id)
            .bind(&self.end_at)
            .bind(&self.audit_at)
            .bind(&self.audit_run_id)
            .bind(&self.audit_channel)
            .bind(&self.audit_user)
            .bind(&self.audit_tool)
            .bind(&self.audit_summary)
            .bind(&self.audit_decision)
            .bind(&self.audit_source)
            .bind(&self.audit_reason)
            .bind(&self.audit_outcome)
            .bind(&self.audit_approval)
            .bind(&self.audit_duration)
            .bind(&self.audit_bytes)
            .bind(&self.audit_note)
            .bind(&self.audit_result)
            .bind(&self.audit_key)
            .bind(&self.message_channel)
            .bind(&self.message_json)
            .bind(&self.message_at)
    }
}
