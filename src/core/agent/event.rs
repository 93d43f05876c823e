//! What the loop reports while it works. Front ends render these: the console as text or
//! JSON lines, the Discord adapter as messages and buttons.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::tools::Attachment;

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
        decision: String,
        source: String,
        reason: String,
    },
    /// A call waits for a person.
    ApprovalRequested {
        approval_id: String,
        call_id: String,
        tool: String,
        arguments: Map<String, Value>,
        source: String,
        reason: String,
        requester: String,
        /// Seconds since the Unix epoch.
        expires_at: u64,
    },
    /// A person answered, or nobody did in time.
    ApprovalResolved {
        approval_id: String,
        /// `confirmed`, `cancelled` or `expired`.
        outcome: String,
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
        status: String,
        reason: String,
    },
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
    /// The run is over.
    RunFinished { outcome: String, iterations: u32 },
}
