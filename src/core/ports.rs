//! The traits the core depends on and adapters implement: the model, the approval surface,
//! the conversation store, the event sink and the clock. Tests and front ends plug in here.

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use crate::core::agent::{AgentEvent, ChatMessage, ChatReply, ChatRequest};
use crate::core::risk::{ChannelMode, RiskDecision};
use crate::core::tools::BoxFuture;

/// A model failure, typed so the user is told what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The API key was refused (401/403).
    #[error("the model server refused the API key ({0}); check llm.api_key or OPENAI_API_KEY")]
    Unauthorized(String),
    /// The model name is not known to the server (404 or an error naming the model).
    #[error("the model server does not know the model ({0}); check llm.model")]
    UnknownModel(String),
    /// Nothing answered at the URL.
    #[error(
        "the model server at {url} could not be reached ({reason}); check llm.base_url and that the server runs"
    )]
    Unreachable { url: String, reason: String },
    /// Still failing after the retries (429 / 5xx).
    #[error("the model server kept failing after {attempts} attempts: {last}")]
    Exhausted { attempts: u32, last: String },
    /// Any other refusal (4xx) or an answer that is not a chat completion.
    #[error("the model server answered with an error: {0}")]
    Rejected(String),
    /// The reply could not be read.
    #[error("the model's reply could not be read: {0}")]
    BadReply(String),
    /// The request took too long.
    #[error("the model did not answer within {0:?}")]
    Timeout(Duration),
}

/// An OpenAI-compatible chat model.
pub trait ChatModel: Send + Sync {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>>;
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
    pub decision: RiskDecision,
    pub expires_at: SystemTime,
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalOutcome {
    Confirmed {
        by: String,
    },
    Cancelled {
        by: String,
    },
    /// Nobody answered in time.
    Expired,
}

/// Where approvals are shown and answered: buttons in Discord, a y/n prompt in a terminal.
pub trait ApprovalSurface: Send + Sync {
    /// Shows the request and waits for an answer. The loop stops waiting at `expires_at`
    /// (then the outcome is `Expired`), so an implementation may wait forever.
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome>;
}

/// Receives what the loop does, for a front end to render.
pub trait EventSink: Send + Sync {
    fn emit(&self, channel: &str, event: &AgentEvent);
}

/// A channel's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSettings {
    pub mode: ChannelMode,
    /// The prompt profile: `sql` or `ops`.
    pub profile: String,
}

/// A store failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the state store failed: {0}")]
pub struct StoreError(pub String);

/// The conversation state the loop needs.
pub trait ConversationStore: Send + Sync {
    /// The channel's history, oldest first, within `budget` characters (oldest turns dropped).
    fn load_history<'a>(
        &'a self,
        channel: &'a str,
        budget: usize,
    ) -> BoxFuture<'a, Result<Vec<ChatMessage>, StoreError>>;
    fn append<'a>(
        &'a self,
        channel: &'a str,
        messages: &'a [ChatMessage],
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// `None` when nobody set anything for the channel (the defaults apply).
    fn channel_settings<'a>(
        &'a self,
        channel: &'a str,
    ) -> BoxFuture<'a, Result<Option<ChannelSettings>, StoreError>>;
    fn set_channel_settings<'a>(
        &'a self,
        channel: &'a str,
        settings: &'a ChannelSettings,
        changed_by: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Time, so tests can control it. Durations use tokio's clock (pausable in tests); wall time
/// is for records and expiry timestamps people read.
pub trait Clock: Send + Sync {
    fn now(&self) -> SystemTime;
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}
