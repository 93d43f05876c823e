//! What the loop reports while it works. Front ends render these: the console as text or
//! JSON lines, the Discord adapter as messages and buttons.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::approval::ApprovalStatus;
use crate::core::risk::{Decision, DecisionSource};
use crate::core::tools::Attachment;

/// What became of a call, as the model, the audit log and the front ends read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// It ran and succeeded.
    Ok,
    /// It ran and failed, or was stopped.
    Error,
    /// The gate refused it.
    Denied,
    Cancelled,
    /// Nobody answered in time.
    Expired,
    /// Its run stopped while it waited.
    Abandoned,
    /// Its approval could not be shown to anyone.
    Undeliverable,
    /// Something else kept it from running (the store, a hash mismatch, the run's end).
    NotRun,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
            Self::Abandoned => "abandoned",
            Self::Undeliverable => "undeliverable",
            Self::NotRun => "not_run",
        }
    }

    /// What a settled approval that did not confirm means for its call.
    pub fn of_approval(status: ApprovalStatus) -> Self {
        match status {
            ApprovalStatus::Cancelled => Self::Cancelled,
            ApprovalStatus::Expired => Self::Expired,
            ApprovalStatus::Abandoned => Self::Abandoned,
            ApprovalStatus::Undeliverable => Self::Undeliverable,
            ApprovalStatus::Pending | ApprovalStatus::Confirmed => Self::NotRun,
        }
    }
}

impl std::fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A message started a run.
    RunStarted { author: String, text: String },
    /// The gate decided a call.
    ToolCall {
        call_id: String,
        tool: String,
        arguments: Map<String, Value>,
        decision: Decision,
        source: DecisionSource,
        reason: String,
    },
    /// A call waits for a person.
    ApprovalRequested {
        approval_id: String,
        call_id: String,
        tool: String,
        arguments: Map<String, Value>,
        source: DecisionSource,
        reason: String,
        requester: String,
        /// Seconds since the Unix epoch.
        expires_at: u64,
    },
    /// A person answered, or nobody did in time.
    ApprovalResolved {
        approval_id: String,
        /// `confirmed`, `cancelled`, `expired`, `undeliverable`.
        outcome: ApprovalStatus,
        by: Option<String>,
    },
    /// A call ran (or failed while running).
    ToolResult {
        call_id: String,
        tool: String,
        ok: bool,
        summary: String,
        /// Markdown for chat.
        chat: String,
        #[serde(skip)]
        attachment: Option<Attachment>,
    },
    /// A call did not run: denied, cancelled, expired, or not asked again.
    CallNotRun {
        call_id: String,
        tool: String,
        status: CallOutcome,
        reason: String,
    },
    /// Part of the answer while the model writes it (a streamed reply): `text` follows what
    /// this step's earlier parts said or, with `restart`, replaces it. Only a preview: the
    /// step's `Reply` is the answer, and a step that ends otherwise takes the parts back
    /// with `DraftDropped`. Never reasoning, never a call (`core::agent::draft`).
    ReplyPart { text: String, restart: bool },
    /// What this step's `ReplyPart`s showed is not the answer (the model called a tool, the
    /// reply could not be used, or the run stopped): take it back.
    DraftDropped,
    /// The model's answer for the user.
    Reply { text: String },
    /// Something the user must know: the run stopped early, the model failed, ...
    Error { message: String },
    /// Something the user should know while the run goes on: the state database is slow to
    /// answer, an audit record waits to be written, ...
    Notice { message: String },
    /// A person allowed calls like one they confirmed: a channel rule now lets them run
    /// without asking until `expires_at` (unix seconds).
    RuleCreated {
        rule_id: String,
        tool: String,
        summary: String,
        by: String,
        expires_at: u64,
    },
    /// The model server answered a request and said what it cost (its `usage`). For the
    /// counters: the front ends show nothing for it.
    ModelUsage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
    /// The run is over.
    RunFinished { outcome: String, iterations: u32 },
}
