//! SQLite: walls built into the connection, since SQLite has no server to hold them.
//!
//! - **One statement.** sqlx's SQLite driver runs *every* statement of a query string, one
//!   after the other (`SELECT 1; DELETE FROM t` deletes), on `sqlx::query` as on `raw_sql`.
//!   So before anything runs, SQLite's own parser (`sqlite3_prepare_v3`, which compiles only
//!   the first statement and reports where it stopped) checks that nothing but whitespace and
//!   comments follows the first statement. The check runs on both paths; a pooled reader
//!   remembers the texts it found to be one statement.
//! - **Read-only calls** use a connection opened read-only (`SQLITE_OPEN_READONLY`), with
//!   `PRAGMA query_only = ON` (read-only alone still allows temporary tables and
//!   `VACUUM INTO` a new file), and an authorizer that lets a statement compile only if all
//!   it does is read: SELECT, reading tables, functions other than `load_extension`,
//!   recursive CTEs, and PRAGMAs that read (no value, or a table name as argument). Writes,
//!   `PRAGMA x = y`, ATTACH, BEGIN, temporary objects and the rest fail to compile.
//! - **Time.** A progress handler interrupts a statement that runs past its deadline
//!   (`SQLITE_INTERRUPT` becomes [`SqlError::Timeout`]); `busy_timeout` bounds waits on locks.
//!
//! Because such a connection cannot change its own session (no PRAGMA assignments, ATTACH,
//! temporary tables or open transactions get past the authorizer, and `query_only` holds),
//! read-only connections are pooled: there is nothing to reset between calls, and opening
//! one costs far more than a small query (a thread and a file open in sqlx). A connection
//! whose statement failed or was cut at the row limit is closed, not pooled. Confirmed calls
//! open a fresh read-write connection each time.

use std::collections::HashSet;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libsqlite3_sys as ffi;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteQueryResult};
use sqlx::{AssertSqlSafe, Connection, Executor};
use tokio::sync::OnceCell;

use super::{Access, Fetch, Limits, SqlError, collect, connect, result_set};
use crate::tools::sql::demo;
use crate::tools::sql::render::ResultSet;
use crate::tools::sql::value;

/// Virtual-machine instructions between two looks at the deadline.
const PROGRESS_OPS: i32 = 1_000;
/// Idle read-only connections kept per database.
const IDLE_READERS: usize = 4;

/// A SQLite database file and its pool of read-only connections.
pub(crate) struct SqliteTarget {
    options: SqliteConnectOptions,
    /// The demo database's path: it is created there on first use.
    demo: Option<PathBuf>,
    demo_ready: OnceCell<()>,
    idle: Mutex<Vec<Reader>>,
}

impl std::fmt::Debug for SqliteTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteTarget")
            .field("file", &self.options.get_filename())
            .field("demo", &self.demo.is_some())
            .finish_non_exhaustive()
    }
}

/// A pooled read-only connection and the deadline its progress handler watches.
struct Reader {
    conn: SqliteConnection,
    deadline: Arc<Deadline>,
    /// Statement texts SQLite found to hold exactly one statement. Where a statement ends
    /// is a matter of SQLite's grammar alone, never of the schema, so a verdict holds for
    /// good; like sqlx's own statement cache it is keyed by the exact text, and it spares a
    /// repeated query the check's extra round trip to the worker thread and prepare.
    single_statements: HashSet<String>,
}

/// Verdicts kept per connection; the set starts over when full.
const VERDICTS: usize = 256;

/// When the current statement must stop, readable from SQLite's worker thread.
struct Deadline {
    epoch: Instant,
    /// Nanoseconds after `epoch`.
    until: AtomicU64,
}

impl Deadline {
    fn new() -> Self {
        Self {
            epoch: Instant::now(),
            until: AtomicU64::new(u64::MAX),
        }
    }

    fn nanos(d: Duration) -> u64 {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    }

    fn start(&self, limit: Duration) {
        let until = Self::nanos(self.epoch.elapsed()).saturating_add(Self::nanos(limit));
        self.until.store(until, Ordering::Relaxed);
    }

    fn passed(&self) -> bool {
        Self::nanos(self.epoch.elapsed()) > self.until.load(Ordering::Relaxed)
    }
}

impl SqliteTarget {
    pub(crate) fn new(options: SqliteConnectOptions, demo: Option<PathBuf>) -> Self {
        Self {
            options,
            demo,
            demo_ready: OnceCell::new(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Runs one statement behind the wall of `access`.
    #[tracing::instrument(skip_all, fields(%access))]
    pub(crate) async fn run(
        &self,
        sql: &str,
        access: Access,
        limits: &Limits,
    ) -> Result<ResultSet, SqlError> {
        if let Some(path) = &self.demo {
            self.demo_ready
                .get_or_try_init(|| demo::ensure(path))
                .await
                .map_err(SqlError::Setup)?;
        }
        match access {
            Access::ReadOnly => self.read(sql, limits).await,
            Access::ReadWrite => self.write(sql, limits).await,
        }
    }

    async fn read(&self, sql: &str, limits: &Limits) -> Result<ResultSet, SqlError> {
        let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let mut reader = match idle {
            Some(reader) => reader,
            None => self.open_reader(limits).await?,
        };
        let checked = if reader.single_statements.contains(sql) {
            None
        } else {
            let columns = statement_shape(&mut reader.conn, sql).await?;
            if reader.single_statements.len() >= VERDICTS {
                reader.single_statements.clear();
            }
            reader.single_statements.insert(sql.to_owned());
            Some(columns)
        };
        reader.deadline.start(limits.statement_timeout);
        let fetched = collect(
            reader
                .conn
                .fetch_many(sqlx::query(AssertSqlSafe(sql.to_owned()))),
            limits,
            Fetch::UpToLimit,
            value::sqlite_row,
            no_sizes,
            SqliteQueryResult::rows_affected,
        )
        .await
        .map_err(classify)?;
        let columns = match (checked, &fetched.columns) {
            (Some(columns), _) => columns,
            (None, Some(columns)) => columns.clone(),
            // A known statement that returned no rows: ask SQLite for its columns.
            (None, None) => statement_shape(&mut reader.conn, sql).await?,
        };
        if !fetched.cut
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < IDLE_READERS
        {
            idle.push(reader);
        }
        // A reader cut at the row limit is dropped: its worker thread stops at the next row
        // (or at the deadline) and closes the database.
        Ok(result_set(columns, fetched, false))
    }

    async fn open_reader(&self, limits: &Limits) -> Result<Reader, SqlError> {
        let options = self
            .options
            .clone()
            .read_only(true)
            .create_if_missing(false)
            .pragma("query_only", "ON")
            .busy_timeout(limits.statement_timeout);
        let mut conn = connect(
            limits.connect_timeout,
            SqliteConnection::connect_with(&options),
        )
        .await?;
        let deadline = Arc::new(Deadline::new());
        let mut handle = conn.lock_handle().await.map_err(classify)?;
        let watched = Arc::clone(&deadline);
        handle.set_progress_handler(PROGRESS_OPS, move || !watched.passed());
        // SAFETY: as below, the locked handle keeps sqlx's worker thread away.
        unsafe { limit_length(handle.as_raw_handle().as_ptr(), limits) };
        // SAFETY: the locked handle guarantees that sqlx's worker thread makes no call on
        // this connection while we hold it; the callback is a plain function without state
        // (null user data), so nothing it uses can be freed before the connection.
        let rc = unsafe {
            ffi::sqlite3_set_authorizer(
                handle.as_raw_handle().as_ptr(),
                Some(read_only_authorizer),
                ptr::null_mut(),
            )
        };
        drop(handle);
        if rc != ffi::SQLITE_OK {
            return Err(SqlError::Setup(format!(
                "could not install the read-only authorizer (SQLite code {rc})"
            )));
        }
        Ok(Reader {
            conn,
            deadline,
            single_statements: HashSet::new(),
        })
    }

    async fn write(&self, sql: &str, limits: &Limits) -> Result<ResultSet, SqlError> {
        let options = self
            .options
            .clone()
            .read_only(false)
            .busy_timeout(limits.statement_timeout);
        let mut conn = connect(
            limits.connect_timeout,
            SqliteConnection::connect_with(&options),
        )
        .await?;
        let outcome = write_on(&mut conn, sql, limits).await;
        if let Err(error) = conn.close().await {
            tracing::debug!(%error, "closing the connection failed");
        }
        outcome
    }
}

async fn write_on(
    conn: &mut SqliteConnection,
    sql: &str,
    limits: &Limits,
) -> Result<ResultSet, SqlError> {
    let columns = statement_shape(conn, sql).await?;
    let deadline = Instant::now() + limits.statement_timeout;
    let mut handle = conn.lock_handle().await.map_err(classify)?;
    handle.set_progress_handler(PROGRESS_OPS, move || Instant::now() < deadline);
    // SAFETY: the locked handle keeps sqlx's worker thread away while the limit is set.
    unsafe { limit_length(handle.as_raw_handle().as_ptr(), limits) };
    drop(handle);
    // IMMEDIATE takes the write lock up front, so a write never fails halfway on a lock
    // upgrade; busy_timeout bounds the wait for it.
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await.map_err(classify)?;
    let fetched = collect(
        (&mut *tx).fetch_many(sqlx::query(AssertSqlSafe(sql.to_owned()))),
        limits,
        Fetch::ToEnd,
        value::sqlite_row,
        no_sizes,
        SqliteQueryResult::rows_affected,
    )
    .await
    .map_err(classify)?;
    tx.commit().await.map_err(classify)?;
    // `changes()` is 0 on a fresh connection until something writes.
    let report = columns.is_empty() || fetched.rows_affected > 0;
    Ok(result_set(columns, fetched, report))
}

/// SQLite measures nothing it sends: its values are in this process already, and the
/// length limit below keeps each one within `sql.max_value_bytes`.
fn no_sizes(_row: &sqlx::sqlite::SqliteRow) -> (usize, usize) {
    (0, 0)
}

/// Caps the length of every string and blob the connection builds or reads at
/// `limits.max_value_bytes` (`SQLITE_LIMIT_LENGTH`): `zeroblob(500000000)` or a huge
/// `printf`/`replace` fails with "string or blob too big" instead of being allocated.
///
/// # Safety
/// `db` must be an open connection that no other thread uses during the call.
unsafe fn limit_length(db: *mut ffi::sqlite3, limits: &Limits) {
    let cap = c_int::try_from(limits.max_value_bytes).unwrap_or(c_int::MAX);
    // SAFETY: the caller's promise.
    unsafe { ffi::sqlite3_limit(db, ffi::SQLITE_LIMIT_LENGTH, cap.max(1)) };
}

/// What SQLite's parser found in a statement text.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    /// Exactly one statement, with these result columns (none for a statement without rows).
    One(Vec<String>),
    /// Only whitespace and comments.
    Empty,
    /// More than one statement, or something after the first that is not one.
    Several,
}

/// Checks that `sql` is exactly one statement and returns its result columns, without
/// running anything.
async fn statement_shape(conn: &mut SqliteConnection, sql: &str) -> Result<Vec<String>, SqlError> {
    let mut handle = conn.lock_handle().await.map_err(classify)?;
    // SAFETY: while the handle is locked, sqlx's worker thread makes no call on this
    // connection, and the pointer stays valid.
    let shape = unsafe { shape_of(handle.as_raw_handle().as_ptr(), sql) };
    match shape {
        Ok(Shape::One(columns)) => Ok(columns),
        Ok(Shape::Empty) => Err(SqlError::NoStatement),
        Ok(Shape::Several) => Err(SqlError::SeveralStatements),
        Err((code, message)) => Err(classify_code(code, message)),
    }
}

/// Prepares the first statement of `sql` and then whatever follows it, finalizing each:
/// SQLite compiles one statement per call and says where it stopped.
///
/// # Safety
/// `db` must be an open connection that no other thread uses during the call.
unsafe fn shape_of(db: *mut ffi::sqlite3, sql: &str) -> Result<Shape, (c_int, String)> {
    let mut rest = sql.as_bytes();
    let mut first: Option<Vec<String>> = None;
    while !rest.is_empty() {
        let len = c_int::try_from(rest.len())
            .map_err(|_| (ffi::SQLITE_TOOBIG, "the statement is too long".to_owned()))?;
        let mut statement: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let mut tail: *const c_char = ptr::null();
        // SAFETY: `rest` is valid for `len` bytes; the out pointers are valid locals.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(db, rest.as_ptr().cast(), len, 0, &mut statement, &mut tail)
        };
        if rc != ffi::SQLITE_OK {
            if first.is_some() {
                return Ok(Shape::Several);
            }
            // SAFETY: `db` is valid (caller's promise).
            return Err(unsafe { last_error(db) });
        }
        let consumed = if tail.is_null() {
            rest.len()
        } else {
            (tail as usize)
                .saturating_sub(rest.as_ptr() as usize)
                .min(rest.len())
        };
        if !statement.is_null() {
            // SAFETY: `statement` is a valid prepared statement, finalized right after.
            let columns = unsafe { column_names(statement) };
            unsafe { ffi::sqlite3_finalize(statement) };
            if first.is_some() {
                return Ok(Shape::Several);
            }
            first = Some(columns);
        }
        if consumed == 0 {
            break;
        }
        rest = &rest[consumed..];
    }
    Ok(first.map_or(Shape::Empty, Shape::One))
}

/// # Safety
/// `statement` must be a valid prepared statement.
unsafe fn column_names(statement: *mut ffi::sqlite3_stmt) -> Vec<String> {
    // SAFETY: the caller's promise; names are copied before the statement is finalized.
    unsafe {
        let count = ffi::sqlite3_column_count(statement);
        (0..count)
            .map(|i| {
                let name = ffi::sqlite3_column_name(statement, i);
                if name.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(name).to_string_lossy().into_owned()
                }
            })
            .collect()
    }
}

/// # Safety
/// `db` must be an open connection.
unsafe fn last_error(db: *mut ffi::sqlite3) -> (c_int, String) {
    // SAFETY: the caller's promise; the message is copied at once.
    unsafe {
        let code = ffi::sqlite3_extended_errcode(db);
        let message = ffi::sqlite3_errmsg(db);
        let message = if message.is_null() {
            "unknown error".to_owned()
        } else {
            CStr::from_ptr(message).to_string_lossy().into_owned()
        };
        (code, message)
    }
}

/// PRAGMAs whose argument names a table, index or schema rather than setting a value.
const PRAGMAS_TAKING_A_NAME: &[&str] = &[
    "foreign_key_check",
    "foreign_key_list",
    "index_info",
    "index_list",
    "index_xinfo",
    "integrity_check",
    "quick_check",
    "table_info",
    "table_list",
    "table_xinfo",
];

/// # Safety
/// `text` must be null or a NUL-terminated string.
unsafe fn c_text<'a>(text: *const c_char) -> Option<&'a str> {
    if text.is_null() {
        None
    } else {
        // SAFETY: the caller's promise.
        unsafe { CStr::from_ptr(text) }.to_str().ok()
    }
}

/// SQLite's authorizer for read-only connections: consulted while a statement compiles, it
/// allows reading and nothing else (https://www.sqlite.org/c3ref/c_alter_table.html).
unsafe extern "C" fn read_only_authorizer(
    _user_data: *mut c_void,
    action: c_int,
    arg1: *const c_char,
    arg2: *const c_char,
    _database: *const c_char,
    _trigger_or_view: *const c_char,
) -> c_int {
    // SAFETY: SQLite passes null or NUL-terminated strings.
    let (arg1, arg2) = unsafe { (c_text(arg1), c_text(arg2)) };
    let allowed = match action {
        ffi::SQLITE_SELECT | ffi::SQLITE_READ | ffi::SQLITE_RECURSIVE => true,
        // arg2 is the function's name.
        ffi::SQLITE_FUNCTION => !arg2.is_some_and(|f| f.eq_ignore_ascii_case("load_extension")),
        // arg1 is the pragma's name, arg2 its argument: reading a setting passes none.
        ffi::SQLITE_PRAGMA => {
            arg2.is_none()
                || arg1.is_some_and(|p| {
                    PRAGMAS_TAKING_A_NAME
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(p))
                })
        }
        _ => false,
    };
    if allowed {
        ffi::SQLITE_OK
    } else {
        ffi::SQLITE_DENY
    }
}

/// Sorts sqlx's SQLite errors by result code.
fn classify(error: sqlx::Error) -> SqlError {
    match &error {
        sqlx::Error::Database(db) => {
            let code = db.code().and_then(|c| c.parse::<c_int>().ok()).unwrap_or(0);
            classify_code(code, db.message().to_owned())
        }
        _ => SqlError::engine(error.to_string()),
    }
}

fn classify_code(code: c_int, message: String) -> SqlError {
    // The primary result code is the low byte of the extended one.
    match code & 0xff {
        ffi::SQLITE_READONLY => SqlError::ReadOnly(message),
        ffi::SQLITE_AUTH => SqlError::ReadOnly(format!(
            "{message}: a read-only call may only read, so writes, PRAGMA assignments, ATTACH, transactions and temporary objects are refused"
        )),
        ffi::SQLITE_INTERRUPT => SqlError::Timeout,
        ffi::SQLITE_TOOBIG => SqlError::TooLarge(format!(
            "{message}: a value would be longer than sql.max_value_bytes allows"
        )),
        ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED => SqlError::Lock(message),
        _ if ["no such table", "no such column", "no such function"]
            .iter()
            .any(|p| message.starts_with(p)) =>
        {
            SqlError::Engine {
                message,
                missing_object: true,
            }
        }
        _ => SqlError::engine(message),
    }
}
