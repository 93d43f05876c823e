//! Between Rust values and columns: times as integer milliseconds since the Unix epoch,
//! unsigned counters as `BIGINT`, JSON as text, and rows (read by position, the same on
//! both backends) into records.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::error::SqlStoreError;
use crate::core::agent::ChatMessage;
use crate::core::ports::{ApprovalRecord, ApprovalStatus, AuditRecord};

/// Milliseconds since the Unix epoch, rounded down (towards the past, also before 1970), and
/// saturated to the `BIGINT` range. Sub-millisecond precision is not kept: a time read back
/// is the stored one rounded down to the millisecond.
pub fn to_millis(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => {
            let before = before.duration();
            // Round towards the past: 0.5 ms before the epoch is -1 ms.
            let millis = before.as_nanos().div_ceil(1_000_000);
            i64::try_from(millis).map_or(i64::MIN, |m| -m)
        }
    }
}

/// The time `millis` milliseconds after (or before) the Unix epoch; an error for a value
/// the platform's clock cannot hold, never a panic.
pub fn from_millis(millis: i64, what: &'static str) -> Result<SystemTime, SqlStoreError> {
    let offset = Duration::from_millis(millis.unsigned_abs());
    let at = if millis >= 0 {
        UNIX_EPOCH.checked_add(offset)
    } else {
        UNIX_EPOCH.checked_sub(offset)
    };
    at.ok_or_else(|| {
        SqlStoreError::corrupt(what, format!("{millis} ms is not a representable time"))
    })
}

/// An unsigned counter as `BIGINT`, saturated (`u64::MAX` means "too large to say").
pub fn to_bigint(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

pub fn from_bigint(value: i64, what: &'static str) -> Result<u64, SqlStoreError> {
    u64::try_from(value).map_err(|_| SqlStoreError::corrupt(what, format!("{value} is negative")))
}

pub fn message_to_json(message: &ChatMessage) -> Result<String, SqlStoreError> {
    serde_json::to_string(message).map_err(|e| {
        SqlStoreError::Invalid(format!(
            "a conversation message could not be written as JSON: {e}"
        ))
    })
}

pub fn message_from_json(json: &str) -> Result<ChatMessage, SqlStoreError> {
    serde_json::from_str(json).map_err(|e| SqlStoreError::corrupt("messages.message", e))
}

/// The columns of an approval, in the order of [`ApprovalRow`]. A macro, so queries stay
/// `&'static str` (built with `concat!`), which sqlx 0.9 requires of SQL text.
macro_rules! approval_columns {
    () => {
        "id, run_id, channel, requester, tool, arguments, arguments_hash, source, reason, \
         status, decided_by, decided_at, created_at, expires_at, message_ref, note, resume"
    };
}
pub(crate) use approval_columns;

/// An approval as read: see [`approval_columns!`]. A struct rather than a tuple (sqlx reads
/// tuples of at most 16 columns), read by position the same way on both backends.
pub struct ApprovalRow {
    id: String,
    run_id: String,
    channel: String,
    requester: String,
    tool: String,
    /// JSON.
    arguments: String,
    arguments_hash: String,
    source: String,
    reason: String,
    status: String,
    decided_by: Option<String>,
    decided_at: Option<i64>,
    created_at: i64,
    expires_at: i64,
    message_ref: Option<String>,
    note: Option<String>,
    resume: Option<String>,
}

impl<'r, R> sqlx::FromRow<'r, R> for ApprovalRow
where
    R: sqlx::Row,
    usize: sqlx::ColumnIndex<R>,
    String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    fn from_row(row: &'r R) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: row.try_get(0)?,
            run_id: row.try_get(1)?,
            channel: row.try_get(2)?,
            requester: row.try_get(3)?,
            tool: row.try_get(4)?,
            arguments: row.try_get(5)?,
            arguments_hash: row.try_get(6)?,
            source: row.try_get(7)?,
            reason: row.try_get(8)?,
            status: row.try_get(9)?,
            decided_by: row.try_get(10)?,
            decided_at: row.try_get(11)?,
            created_at: row.try_get(12)?,
            expires_at: row.try_get(13)?,
            message_ref: row.try_get(14)?,
            note: row.try_get(15)?,
            resume: row.try_get(16)?,
        })
    }
}

pub fn approval_from_row(row: ApprovalRow) -> Result<ApprovalRecord, SqlStoreError> {
    let ApprovalRow {
        id,
        run_id,
        channel,
        requester,
        tool,
        arguments,
        arguments_hash,
        source,
        reason,
        status,
        decided_by,
        decided_at,
        created_at,
        expires_at,
        message_ref,
        note,
        resume,
    } = row;
    let arguments: Map<String, Value> = serde_json::from_str(&arguments)
        .map_err(|e| SqlStoreError::corrupt("approvals.arguments", e))?;
    let status: ApprovalStatus = status
        .parse()
        .map_err(|e: String| SqlStoreError::corrupt("approvals.status", e))?;
    Ok(ApprovalRecord {
        id,
        run_id,
        channel,
        requester,
        tool,
        arguments,
        arguments_hash,
        source,
        reason,
        status,
        decided_by,
        decided_at: decided_at
            .map(|at| from_millis(at, "approvals.decided_at"))
            .transpose()?,
        created_at: from_millis(created_at, "approvals.created_at")?,
        expires_at: from_millis(expires_at, "approvals.expires_at")?,
        message_ref,
        note,
        resume,
    })
}

/// The arguments of an approval as stored.
pub fn arguments_to_json(arguments: &Map<String, Value>) -> Result<String, SqlStoreError> {
    serde_json::to_string(arguments).map_err(|e| {
        SqlStoreError::Invalid(format!(
            "approval arguments could not be written as JSON: {e}"
        ))
    })
}

/// The columns of an audit record, in the order of [`AuditRow`].
macro_rules! audit_columns {
    () => {
        "at, run_id, channel, user_name, tool, arguments_summary, decision, source, reason, \
         outcome, approval_id, duration_ms, output_bytes, note, result"
    };
}
pub(crate) use audit_columns;

/// An audit record as read: see [`audit_columns!`].
pub type AuditRow = (
    i64,            // at (seconds)
    String,         // run_id
    String,         // channel
    String,         // user_name
    String,         // tool
    String,         // arguments_summary
    String,         // decision
    String,         // source
    String,         // reason
    String,         // outcome
    Option<String>, // approval_id
    i64,            // duration_ms
    i64,            // output_bytes
    Option<String>, // note
    Option<String>, // result
);

/// An enum stored as its label (`confirm`, `destructive_floor`, `not_run`): the same text
/// its serde form and `as_str` give.
fn from_label<T: serde::de::DeserializeOwned>(
    label: &str,
    what: &'static str,
) -> Result<T, SqlStoreError> {
    use serde::de::IntoDeserializer;
    T::deserialize(IntoDeserializer::<serde::de::value::Error>::into_deserializer(label))
        .map_err(|e| SqlStoreError::corrupt(what, format!("{label:?}: {e}")))
}

pub fn audit_from_row(row: AuditRow) -> Result<AuditRecord, SqlStoreError> {
    let (
        at,
        run_id,
        channel,
        user,
        tool,
        arguments_summary,
        decision,
        source,
        reason,
        outcome,
        approval_id,
        duration_ms,
        output_bytes,
        note,
        result,
    ) = row;
    Ok(AuditRecord {
        at: from_bigint(at, "audit.at")?,
        run_id,
        channel,
        user,
        tool,
        arguments_summary,
        decision: from_label(&decision, "audit.decision")?,
        source: from_label(&source, "audit.source")?,
        reason,
        outcome: from_label(&outcome, "audit.outcome")?,
        approval_id,
        duration_ms: from_bigint(duration_ms, "audit.duration_ms")?,
        output_bytes: from_bigint(output_bytes, "audit.output_bytes")?,
        note,
        result,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_labels_read_back_as_the_enums_that_wrote_them() {
        use crate::core::agent::CallOutcome;
        use crate::core::risk::{Decision, DecisionSource};
        for outcome in [
            CallOutcome::Ok,
            CallOutcome::NotRun,
            CallOutcome::Undeliverable,
        ] {
            let read: CallOutcome = from_label(outcome.as_str(), "o").expect("reads");
            assert_eq!(read, outcome);
        }
        let source: DecisionSource = from_label("destructive_floor", "s").expect("reads");
        assert_eq!(source, DecisionSource::DestructiveFloor);
        let decision: Decision = from_label("confirm", "d").expect("reads");
        assert_eq!(decision, Decision::Confirm);
        let bad = from_label::<Decision>("maybe", "audit.decision")
            .expect_err("an unknown label is refused");
        assert!(bad.to_string().contains("audit.decision"), "{bad}");
        assert!(bad.to_string().contains("\"maybe\""), "{bad}");
    }

    #[test]
    fn millis_round_trip_and_round_down() {
        for millis in [0, 1, 1_700_000_000_123, -1, -1_500, i64::MAX / 1_000_000] {
            let at = from_millis(millis, "t").expect("representable");
            assert_eq!(to_millis(at), millis, "{millis}");
        }
        let just_after = UNIX_EPOCH + Duration::from_micros(1_999);
        assert_eq!(to_millis(just_after), 1);
        let just_before = UNIX_EPOCH - Duration::from_micros(500);
        assert_eq!(to_millis(just_before), -1);
        assert_eq!(
            to_millis(from_millis(to_millis(just_before), "t").expect("t")),
            -1
        );
    }

    #[test]
    fn times_beyond_the_platform_are_errors_not_panics() {
        // SystemTime on Linux holds i64 seconds, so every BIGINT of milliseconds fits; the
        // conversion still never panics, whatever the platform.
        for millis in [i64::MAX, i64::MIN] {
            let _ = from_millis(millis, "t");
        }
        assert_eq!(
            to_millis(UNIX_EPOCH + Duration::from_secs(u64::MAX / 1_000)),
            i64::MAX
        );
    }

    #[test]
    fn counters_saturate_and_negative_counters_are_corrupt() {
        assert_eq!(to_bigint(u64::MAX), i64::MAX);
        assert_eq!(to_bigint(42), 42);
        assert_eq!(from_bigint(42, "n").expect("n"), 42);
        assert!(from_bigint(-1, "n").is_err());
    }
}
