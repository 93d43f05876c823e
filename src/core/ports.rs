//! The traits the core depends on and adapters implement: the model, the approval surface,
//! the conversation store, the event sink and the clock. Tests and front ends plug in here.

use std::time::{Duration, SystemTime};

use serde::Serialize;

pub use crate::core::approval::{
    ApprovalOutcome, ApprovalRecord, ApprovalRequest, ApprovalStatus, Decided, EarlierRun,
};
use crate::core::event::{AgentEvent, CallOutcome};
use crate::core::message::{ChatMessage, ChatReply, ChatRequest, ContextLimits};
use crate::core::risk::{ChannelMode, Decision, DecisionSource};
use crate::core::rules::ChannelRule;
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
    /// Still failing after the retries (429 / 5xx); `status` is the last answer's.
    #[error("the model server kept failing after {attempts} attempts: {last}")]
    Exhausted {
        attempts: u32,
        status: u16,
        last: String,
    },
    /// The server asked to be left alone for longer than the client may wait
    /// (`llm.max_retry_wait_secs`); `until` is when it said to come back, as an HTTP date.
    #[error(
        "the model server asked to wait {} s before the next request ({last}), longer than llm.max_retry_wait_secs allows; try again after {until}",
        wait.as_secs()
    )]
    RetryLater {
        wait: Duration,
        until: String,
        last: String,
    },
    /// The server said the request is longer than the model's context window.
    #[error("the request is longer than the model's context window ({0})")]
    TooLong(String),
    /// The server (or the model it runs) cannot take tool definitions at all.
    #[error(
        "the model server cannot call tools with this setup ({0}). Start it with tool calls on (llama.cpp: llama-server --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser NAME; Ollama: a model tagged for tools), choose a model that supports tools, or set llm.protocol = \"json\" to call tools through the reply text"
    )]
    NoToolSupport(String),
    /// Any other refusal (4xx) or an answer that is not a chat completion.
    #[error("the model server answered with an error: {0}")]
    Rejected(String),
    /// The reply could not be read.
    #[error("the model's reply could not be read: {0}")]
    BadReply(String),
    /// The connection broke off while the answer was coming in.
    #[error("the model server's answer broke off ({0})")]
    Interrupted(String),
    /// The request took too long.
    #[error(
        "the model did not answer within {0:?} (llm.request_timeout_secs); a smaller llm.max_tokens or a faster model helps"
    )]
    Timeout(Duration),
    /// A streamed answer that had begun stopped coming for this long.
    #[error(
        "the model server stopped writing its answer: nothing came for {0:?} (llm.stream_idle_timeout_secs). It may be stuck or overloaded; a server that pauses this long on purpose needs a larger llm.stream_idle_timeout_secs"
    )]
    Stalled(Duration),
    /// A streamed answer kept coming, but was not done within this long in all.
    #[error(
        "the model's answer was still coming after {0:?} (llm.request_timeout_secs, plus llm.max_tokens at 5 tokens a second): the server writes slower than that; a smaller llm.max_tokens or a faster model helps"
    )]
    TooSlow(Duration),
}

/// What a model failure says about the request, and so what the loop may do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFailure {
    /// The server or the way to it failed for now (timeout, no connection, 429, 5xx, an
    /// answer that broke off): the request was not at fault, and the same one may work
    /// later. Nothing about the conversation changes.
    Transient,
    /// The server said the request is too long for the model: a shorter one may work.
    TooLong,
    /// The server refused for a reason of its own (a 4xx, a setup it lacks, an answer
    /// that is not a completion): a person has to look.
    Refused,
}

impl ModelError {
    /// What this failure says about the request (see [`ModelFailure`]).
    pub fn failure(&self) -> ModelFailure {
        match self {
            Self::Unreachable { .. }
            | Self::Exhausted { .. }
            | Self::RetryLater { .. }
            | Self::Interrupted(_)
            | Self::Timeout(_)
            | Self::Stalled(_)
            | Self::TooSlow(_) => ModelFailure::Transient,
            Self::TooLong(_) => ModelFailure::TooLong,
            Self::Unauthorized(_)
            | Self::UnknownModel(_)
            | Self::NoToolSupport(_)
            | Self::Rejected(_)
            | Self::BadReply(_) => ModelFailure::Refused,
        }
    }
}

/// An OpenAI-compatible chat model.
pub trait ChatModel: Send + Sync {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>>;

    /// As [`ChatModel::complete`], telling `listener` what happens meanwhile: each wait
    /// between two attempts, so the people in the channel see why nothing happens, and the
    /// reply's text as it arrives when the reply is streamed. A model that never waits nor
    /// streams (the default) tells nothing.
    fn complete_telling<'a>(
        &'a self,
        request: &'a ChatRequest,
        listener: &'a dyn ReplyListener,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        let _ = listener;
        self.complete(request)
    }

    /// The model's window and reply cap, when known: requests are fitted to them.
    /// `None` (the default): requests go as they are.
    fn context_limits(&self) -> Option<ContextLimits> {
        None
    }
}

/// What a request tells its caller while it is under way ([`ChatModel::complete_telling`]).
pub trait ReplyListener: Send + Sync {
    /// The client waits `retry.wait` before it asks again (a busy or failing server).
    fn waiting(&self, retry: &ModelRetry) {
        let _ = retry;
    }

    /// The reply's text grew by `piece`, as the server streams it. The pieces come in
    /// order, from the attempt that gives the reply, and together are its `content`
    /// exactly (reasoning included: what to show of it is the caller's). Tool calls are
    /// never told in pieces: they come whole, in the reply.
    fn text(&self, piece: &str) {
        let _ = piece;
    }
}

/// A listener that hears nothing.
impl ReplyListener for () {}

/// A wait the model client takes before it tries a request again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRetry {
    /// How long it waits.
    pub wait: Duration,
    /// Whether the server asked for that wait (`Retry-After`), rather than the backoff.
    pub asked: bool,
    /// The attempt that failed, from 1.
    pub attempt: u32,
    /// What the server answered, e.g. `503 Service Unavailable: overloaded`.
    pub last: String,
}

/// Where approvals are shown and answered: buttons in Discord, a y/n prompt in a terminal.
pub trait ApprovalSurface: Send + Sync {
    /// Shows the request and waits for an answer. The loop stops waiting at `expires_at`
    /// (then the outcome is `Expired`), so an implementation may wait forever.
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome>;

    /// Whether a request shown here can still be answered after the process restarts (a
    /// message with buttons can; a terminal prompt cannot). If so, the loop stores where
    /// the run stood with the approval, so the answer can continue it.
    fn resumable(&self) -> bool {
        false
    }
}

/// Receives what the loop does, for a front end to render.
pub trait EventSink: Send + Sync {
    fn emit(&self, channel: &str, event: &AgentEvent);
}

/// A channel's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSettings {
    pub mode: ChannelMode,
    /// The name of the channel's profile (one of the agent's `core::profile::Profiles`; a
    /// name none has any more means the default).
    pub profile: String,
}

/// A store failure: its kind, for callers that act on it, and the whole message (cause
/// included) for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the state store failed: {message}")]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
}

/// What kind of failure a [`StoreError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreErrorKind {
    /// The database is unreachable or did not answer: the same request may work a moment
    /// later.
    Unavailable,
    /// The store is closed: the process is shutting down.
    Closed,
    /// The request broke the store's contract (an id that exists already, a value out of
    /// range).
    Refused,
    /// A stored value cannot be read back.
    Corrupt,
    /// The store could not be opened or brought up to date (its URL, login or migrations).
    Setup,
    /// A statement failed for a reason of its own.
    Failed,
}

impl StoreError {
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// What a person asking for something the store could not do should do next, when the
    /// kind says more than the message.
    pub fn advice(&self) -> Option<&'static str> {
        match self.kind {
            StoreErrorKind::Unavailable => Some("Try again in a minute."),
            StoreErrorKind::Closed => Some("The bot is shutting down; try again once it is back."),
            StoreErrorKind::Corrupt | StoreErrorKind::Setup => {
                Some("Tell the bot's operator; the log has the details.")
            }
            StoreErrorKind::Refused | StoreErrorKind::Failed => None,
        }
    }
}

/// One line of the audit log: every tool call, whatever became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditRecord {
    pub at: u64,
    pub run_id: String,
    pub channel: String,
    pub user: String,
    pub tool: String,
    /// The arguments, shortened for the log.
    pub arguments_summary: String,
    pub decision: Decision,
    pub source: DecisionSource,
    pub reason: String,
    /// What became of the call (stored as `ok`, `error`, `denied`, `cancelled`, ...).
    pub outcome: CallOutcome,
    pub approval_id: Option<String>,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// A cancel's reason, or the channel rule that let the call run (`rule <id>`).
    pub note: Option<String>,
    /// A call that ran: the one line that says what it gave (`3 rows`, `exit status 1`), at
    /// most [`RESULT_EXCERPT_CHARS`], so a later approval of the same call can say what it did.
    pub result: Option<String>,
}

/// How long a call's result line in its audit record may be.
pub const RESULT_EXCERPT_CHARS: usize = 300;

/// The state the agent keeps: conversations, channel settings, runs, approvals, audit.
pub trait Store: Send + Sync {
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
    /// Forgets a channel's conversation (never the audit log).
    fn clear<'a>(&'a self, channel: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Drops conversation messages older than `before` (retention).
    fn prune_history<'a>(&'a self, before: SystemTime) -> BoxFuture<'a, Result<u64, StoreError>>;

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

    /// A run began; `instance` names the process, so several can share one database.
    fn start_run<'a>(
        &'a self,
        run_id: &'a str,
        channel: &'a str,
        instance: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The run is still alive (runs waiting for a person call this now and then).
    fn heartbeat_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    fn finish_run<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    fn create_approval<'a>(
        &'a self,
        approval: &'a ApprovalRecord,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Moves a pending approval to `status` (confirmed, cancelled or expired) with a
    /// conditional update: of any number of concurrent callers exactly one wins.
    fn decide_approval<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>> {
        self.decide_approval_noted(id, status, by, None)
    }
    /// [`Store::decide_approval`] with what the person said (a cancel's reason), kept with
    /// the decision when it wins.
    fn decide_approval_noted<'a>(
        &'a self,
        id: &'a str,
        status: ApprovalStatus,
        by: Option<&'a str>,
        note: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Decided, StoreError>>;
    fn approval<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRecord>, StoreError>>;
    fn set_approval_message<'a>(
        &'a self,
        id: &'a str,
        message_ref: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// Claims the run that waited on the decided approval `id` for `claimant`, a token new
    /// to each attempt to continue it: true for exactly one claimant, and again for that
    /// one when it retries (its first answer lost). A run that can be resumed after a
    /// restart (`resume` set) may be continued by the run that asked or by a click that
    /// resumes it; whoever continues it claims it first, so a decided call runs once.
    fn claim_continuation<'a>(
        &'a self,
        id: &'a str,
        claimant: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// Of the approvals `ids`, those no longer pending, as they now stand. The approval
    /// watch asks this for the approvals its process's runs wait for, so a decision made by
    /// another process sharing the store reaches them: one query per
    /// [`SETTLED_APPROVALS_PER_QUERY`] ids, never one per id.
    fn settled_approvals<'a>(
        &'a self,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>>;
    /// The process (`start_run`'s `instance`) running `run_id` while the run is live: not
    /// finished, and its last heartbeat at or after `stale_before`. `None` for a run that
    /// finished, went stale, or was never recorded.
    fn live_run_instance<'a>(
        &'a self,
        run_id: &'a str,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>>;
    /// Pending approvals, of one channel or of all, oldest first.
    fn pending_approvals<'a>(
        &'a self,
        channel: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>>;
    /// Marks pending approvals past their expiry `expired`; returns those it marked.
    fn expire_overdue<'a>(
        &'a self,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>>;
    /// Marks pending approvals `abandoned` whose run finished or whose run's last heartbeat
    /// is older than `stale_before`, except those that can resume their run (`resume` set)
    /// and have not expired; returns those it marked.
    fn abandon_orphaned<'a>(
        &'a self,
        stale_before: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRecord>, StoreError>>;

    fn record_audit<'a>(&'a self, record: &'a AuditRecord)
    -> BoxFuture<'a, Result<(), StoreError>>;

    fn create_rule<'a>(&'a self, rule: &'a ChannelRule) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The channel's rules that are neither revoked nor expired at `now`, oldest first.
    fn channel_rules<'a>(
        &'a self,
        channel: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Vec<ChannelRule>, StoreError>>;
    /// Revokes one of the channel's active rules; false when there is no such rule.
    fn revoke_rule<'a>(
        &'a self,
        channel: &'a str,
        id: &'a str,
        by: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// The newest audit records of a channel, newest first.
    fn recent_audit<'a>(
        &'a self,
        channel: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<AuditRecord>, StoreError>>;
    /// The newest call of `tool` in `channel` with arguments of this hash
    /// ([`crate::core::agent::arguments_hash`]) that ran after a person confirmed it, if any.
    fn earlier_run<'a>(
        &'a self,
        channel: &'a str,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> BoxFuture<'a, Result<Option<EarlierRun>, StoreError>>;
}

/// How many ids one [`Store::settled_approvals`] query carries at most (far below what
/// SQLite and PostgreSQL take as parameters of one statement); more ids take more queries.
pub const SETTLED_APPROVALS_PER_QUERY: usize = 500;

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

/// Implements [`Store`] methods of a wrapper by handing them to the store it wraps, for
/// the methods the wrapper has nothing to add to: written inside `impl Store for Wrapper`
/// next to the methods it does override, with the name of the field that holds the inner
/// store (an `Arc<dyn Store>` or any other `Store`) and the methods to forward.
///
/// - `forward_store!(inner: channel_settings, start_run);` forwards each call as it is;
/// - `forward_store!(inner via around: load_history, append);` goes through the wrapper's
///   own `around(name, call)`, which gets the method's name (`"load_history"`) and a closure
///   that makes the inner call, and returns the method's future (a test store that delays
///   or fails chosen operations uses it).
///
/// `decide_approval` has a default that calls `decide_approval_noted`: forward that one.
#[macro_export]
macro_rules! forward_store {
    ($inner:ident: $($method:ident),+ $(,)?) => {
        $( $crate::forward_store!(@sig $method [plain $inner]); )+
    };
    ($inner:ident via $around:ident: $($method:ident),+ $(,)?) => {
        $( $crate::forward_store!(@sig $method [$around $inner]); )+
    };
    // Each method's arguments and answer, as the `Store` trait declares them.
    (@sig load_history $how:tt) => {
        $crate::forward_store!(@fn $how 'a load_history(channel: &'a str, budget: usize)
            -> ::std::vec::Vec<$crate::core::message::ChatMessage>);
    };
    (@sig append $how:tt) => {
        $crate::forward_store!(@fn $how 'a append(
            channel: &'a str, messages: &'a [$crate::core::message::ChatMessage]) -> ());
    };
    (@sig clear $how:tt) => {
        $crate::forward_store!(@fn $how 'a clear(channel: &'a str) -> ());
    };
    (@sig prune_history $how:tt) => {
        $crate::forward_store!(@fn $how 'a prune_history(before: ::std::time::SystemTime) -> u64);
    };
    (@sig channel_settings $how:tt) => {
        $crate::forward_store!(@fn $how 'a channel_settings(channel: &'a str)
            -> ::std::option::Option<$crate::core::ports::ChannelSettings>);
    };
    (@sig set_channel_settings $how:tt) => {
        $crate::forward_store!(@fn $how 'a set_channel_settings(channel: &'a str,
            settings: &'a $crate::core::ports::ChannelSettings, changed_by: &'a str) -> ());
    };
    (@sig start_run $how:tt) => {
        $crate::forward_store!(@fn $how 'a start_run(
            run_id: &'a str, channel: &'a str, instance: &'a str) -> ());
    };
    (@sig heartbeat_run $how:tt) => {
        $crate::forward_store!(@fn $how 'a heartbeat_run(run_id: &'a str) -> ());
    };
    (@sig finish_run $how:tt) => {
        $crate::forward_store!(@fn $how 'a finish_run(run_id: &'a str) -> ());
    };
    (@sig create_approval $how:tt) => {
        $crate::forward_store!(@fn $how 'a create_approval(
            approval: &'a $crate::core::ports::ApprovalRecord) -> ());
    };
    (@sig decide_approval_noted $how:tt) => {
        $crate::forward_store!(@fn $how 'a decide_approval_noted(id: &'a str,
            status: $crate::core::ports::ApprovalStatus, by: ::std::option::Option<&'a str>,
            note: ::std::option::Option<&'a str>) -> $crate::core::ports::Decided);
    };
    (@sig approval $how:tt) => {
        $crate::forward_store!(@fn $how 'a approval(id: &'a str)
            -> ::std::option::Option<$crate::core::ports::ApprovalRecord>);
    };
    (@sig set_approval_message $how:tt) => {
        $crate::forward_store!(@fn $how 'a set_approval_message(
            id: &'a str, message_ref: &'a str) -> ());
    };
    (@sig claim_continuation $how:tt) => {
        $crate::forward_store!(@fn $how 'a claim_continuation(id: &'a str, claimant: &'a str)
            -> bool);
    };
    (@sig settled_approvals $how:tt) => {
        $crate::forward_store!(@fn $how 'a settled_approvals(ids: &'a [::std::string::String])
            -> ::std::vec::Vec<$crate::core::ports::ApprovalRecord>);
    };
    (@sig live_run_instance $how:tt) => {
        $crate::forward_store!(@fn $how 'a live_run_instance(
            run_id: &'a str, stale_before: ::std::time::SystemTime)
            -> ::std::option::Option<::std::string::String>);
    };
    (@sig pending_approvals $how:tt) => {
        $crate::forward_store!(@fn $how 'a pending_approvals(
            channel: ::std::option::Option<&'a str>)
            -> ::std::vec::Vec<$crate::core::ports::ApprovalRecord>);
    };
    (@sig expire_overdue $how:tt) => {
        $crate::forward_store!(@fn $how 'a expire_overdue(now: ::std::time::SystemTime)
            -> ::std::vec::Vec<$crate::core::ports::ApprovalRecord>);
    };
    (@sig abandon_orphaned $how:tt) => {
        $crate::forward_store!(@fn $how 'a abandon_orphaned(
            stale_before: ::std::time::SystemTime)
            -> ::std::vec::Vec<$crate::core::ports::ApprovalRecord>);
    };
    (@sig record_audit $how:tt) => {
        $crate::forward_store!(@fn $how 'a record_audit(
            record: &'a $crate::core::ports::AuditRecord) -> ());
    };
    (@sig create_rule $how:tt) => {
        $crate::forward_store!(@fn $how 'a create_rule(
            rule: &'a $crate::core::rules::ChannelRule) -> ());
    };
    (@sig channel_rules $how:tt) => {
        $crate::forward_store!(@fn $how 'a channel_rules(
            channel: &'a str, now: ::std::time::SystemTime)
            -> ::std::vec::Vec<$crate::core::rules::ChannelRule>);
    };
    (@sig revoke_rule $how:tt) => {
        $crate::forward_store!(@fn $how 'a revoke_rule(
            channel: &'a str, id: &'a str, by: &'a str) -> bool);
    };
    (@sig recent_audit $how:tt) => {
        $crate::forward_store!(@fn $how 'a recent_audit(channel: &'a str, limit: usize)
            -> ::std::vec::Vec<$crate::core::ports::AuditRecord>);
    };
    (@sig earlier_run $how:tt) => {
        $crate::forward_store!(@fn $how 'a earlier_run(
            channel: &'a str, tool: &'a str, arguments_hash: &'a str)
            -> ::std::option::Option<$crate::core::ports::EarlierRun>);
    };
    // The method itself.
    (@fn [plain $inner:ident] $lt:lifetime $method:ident($($arg:ident: $ty:ty),*) -> $answer:ty) => {
        fn $method<$lt>(&$lt self, $($arg: $ty),*) -> $crate::core::tools::BoxFuture<
            $lt,
            ::std::result::Result<$answer, $crate::core::ports::StoreError>,
        > {
            self.$inner.$method($($arg),*)
        }
    };
    (@fn [$around:ident $inner:ident] $lt:lifetime $method:ident($($arg:ident: $ty:ty),*) -> $answer:ty) => {
        fn $method<$lt>(&$lt self, $($arg: $ty),*) -> $crate::core::tools::BoxFuture<
            $lt,
            ::std::result::Result<$answer, $crate::core::ports::StoreError>,
        > {
            self.$around(::std::stringify!($method), move || self.$inner.$method($($arg),*))
        }
    };
}
