//! Approvals as the core speaks of them: a call waiting for a person
//! ([`ApprovalRequest`]), how the person answered ([`ApprovalOutcome`]), and the approval as
//! stored ([`ApprovalRecord`], [`ApprovalStatus`], [`Decided`]). The ports, the loop and the
//! events all use these words, so they have a module of their own.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::risk::RiskDecision;

/// Where an approval stands. Only `Pending` may change, and only once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    Confirmed,
    Cancelled,
    Expired,
    /// Its run no longer exists (the process stopped while it waited).
    Abandoned,
    /// It could not be shown to anyone, so nobody could answer.
    Undeliverable,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Confirmed => "confirmed",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
            Self::Abandoned => "abandoned",
            Self::Undeliverable => "undeliverable",
        }
    }
}

impl std::fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ApprovalStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(Self::Pending),
            "confirmed" => Ok(Self::Confirmed),
            "cancelled" => Ok(Self::Cancelled),
            "expired" => Ok(Self::Expired),
            "abandoned" => Ok(Self::Abandoned),
            "undeliverable" => Ok(Self::Undeliverable),
            other => Err(format!("unknown approval status {other:?}")),
        }
    }
}

/// An approval as stored: the exact call, why it needs a person, and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRecord {
    pub id: String,
    pub run_id: String,
    pub channel: String,
    pub requester: String,
    pub tool: String,
    /// The exact arguments that run if it is confirmed (`risk_level` taken out).
    pub arguments: Map<String, Value>,
    /// SHA-256 of the canonical JSON of `arguments`, checked before execution.
    pub arguments_hash: String,
    pub source: String,
    pub reason: String,
    pub status: ApprovalStatus,
    pub decided_by: Option<String>,
    pub decided_at: Option<SystemTime>,
    pub created_at: SystemTime,
    pub expires_at: SystemTime,
    /// The chat message that shows it (a front end's reference), once posted.
    pub message_ref: Option<String>,
    /// What the person who decided said (a cancel's reason), if anything.
    pub note: Option<String>,
    /// Where the run that asked stood (JSON, see `core::agent::resume`), so a click after a
    /// restart can continue it; `None` where the surface cannot be answered after a restart.
    pub resume: Option<String>,
}

/// The result of trying to decide an approval: exactly one caller wins.
#[derive(Debug, Clone, PartialEq)]
pub enum Decided {
    /// This caller's decision was recorded; the record as it now stands.
    Won(ApprovalRecord),
    /// Someone decided first (or it expired or was abandoned); what it is now.
    Lost(ApprovalRecord),
    /// No approval has that id.
    Missing,
}

/// A call waiting for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub id: String,
    pub channel: String,
    /// Who asked the agent (the author of the message that started the run).
    pub requester: String,
    pub tool: String,
    /// The exact arguments that will run if confirmed (`risk_level` already taken out).
    pub arguments: Map<String, Value>,
    /// Where it runs, when the arguments do not say it all (the SQL tool's target database,
    /// named or the default): `Tool::target`.
    pub target: Option<String>,
    pub decision: RiskDecision,
    pub expires_at: SystemTime,
    /// What "allow similar calls for a while" would cover, when a person may choose it here
    /// (smart mode, a confirm a rule may lift, a tool that can describe similar calls, and
    /// `agent.allow_similar_secs` above 0), and for how long.
    pub similar: Option<(crate::core::rules::Similarity, Duration)>,
    /// The last time this channel ran this exact call (same tool, same arguments) after a
    /// person confirmed it, so whoever is asked now sees that confirming runs it again.
    pub earlier: Option<EarlierRun>,
}

/// A confirmed call that already ran in the channel: when, who confirmed it, and what came
/// of it ([`crate::core::ports::Store::earlier_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierRun {
    /// When it ran (the audit record's time).
    pub at: SystemTime,
    /// Who confirmed it.
    pub confirmed_by: Option<String>,
    /// Whether it succeeded (`false`: it ran and failed, or was stopped).
    pub succeeded: bool,
    /// The line that says what it gave (`3 rows`, `exit status 0`), when it was recorded.
    pub result: Option<String>,
}

impl EarlierRun {
    /// Seconds since the Unix epoch, for front ends that show times their own way.
    pub fn unix_seconds(&self) -> u64 {
        self.at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// The warning an approval carries, given how the front end writes the time and a
    /// person: "this channel already ran this exact call …; confirming runs it again".
    pub fn warning(&self, when: &str, person: impl Fn(&str) -> String) -> String {
        let by = self
            .confirmed_by
            .as_deref()
            .map(|by| format!(", confirmed by {}", person(by)))
            .unwrap_or_default();
        let how = if self.succeeded {
            "succeeded"
        } else {
            "failed"
        };
        let what = self
            .result
            .as_deref()
            .map(|r| format!(": {}", r.split_whitespace().collect::<Vec<_>>().join(" ")))
            .unwrap_or_default();
        format!(
            "This channel already ran this exact call {when}{by}, and it {how}{what}. Confirming runs it again."
        )
    }
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    Confirmed {
        by: String,
    },
    Cancelled {
        by: String,
        /// What the person said the agent should do instead, if anything.
        reason: Option<String>,
    },
    /// Confirmed, and calls like it may run without asking in this channel for a while
    /// (a channel rule, created by the loop).
    AllowSimilar {
        by: String,
    },
    /// Nobody answered in time.
    Expired,
    /// The request could not be shown to anyone (the chat refused the message: a missing
    /// permission, a deleted channel, or the chat service down through every retry).
    Undeliverable {
        reason: String,
    },
}
