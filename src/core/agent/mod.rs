//! The agent loop: a person's message in, the model's reply out, every tool call in between
//! through the risk gate.
//!
//! One run: load the channel's history -> ask the model -> for each tool call: check the
//! arguments, decide (gate), run it at once, or ask a person and wait, or refuse -> give the
//! result back to the model -> ... until the model answers in text, a `terminate: true` call
//! ends it, or a limit is reached. Time spent waiting for a person does not count against the
//! run's wall-clock limit; approvals expire on their own clock.

mod call;
mod channel_rules;
pub mod draft;
mod fit;
mod history;
mod memory;
mod protocol;
mod repeats;
mod resume;
mod run_messages;
mod text_calls;

// The core's vocabulary, where the loop's users have always found it.
pub use crate::core::event::{AgentEvent, CallOutcome};
pub use crate::core::message::{
    CallRecord, ChatMessage, ChatReply, ChatRequest, Protocol, ReplyToolCall, Role,
};
pub use history::trim_to_budget;
pub use memory::Summaries;
pub use protocol::{CallSlot, ParsedCall, ReplyKind, json_objects};

use fit::Budget;
use memory::Memory;
use run_messages::RunMessages;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::core::ports::{
    ApprovalSurface, AuditRecord, ChannelSettings, ChatModel, Clock, EventSink, ModelError,
    ModelFailure, ModelRetry, ReplyListener, Store, StoreError,
};
use crate::core::profile::{Profile, Profiles};
use crate::core::prompt::Prompts;
use crate::core::tools::{
    AssessContext, BoxFuture, RiskGate, ToolDefinition, ToolSet, canonical_json, check_arguments,
};
use crate::core::usage::UsageLedger;

/// Characters of a failed call's error shown in the chat; the model gets up to its own
/// output budget, framed as data.
const ERROR_CHAT_CHARS: usize = 1_500;

/// The model's text in a reply, cut to `limit` characters with a note saying so: a
/// rambling model's 20 MB answer is not shown, stored and sent back whole.
fn capped(kind: ReplyKind, limit: usize) -> ReplyKind {
    let cut = |text: String| {
        let total = text.chars().count();
        if total <= limit {
            return text;
        }
        let mut kept: String = text.chars().take(limit).collect();
        kept.push_str(&format!(
            "\n[... {} more characters of this reply were cut (agent.max_reply_chars)]",
            total - limit
        ));
        kept
    };
    match kind {
        ReplyKind::Text(text) => ReplyKind::Text(cut(text)),
        ReplyKind::Calls { content, slots } => ReplyKind::Calls {
            content: content.map(cut),
            slots,
        },
        ReplyKind::Malformed { raw, problem } => ReplyKind::Malformed {
            raw: cut(raw),
            problem,
        },
    }
}

/// A wait of the model client at least this long is told to the channel, so people know
/// why nothing happens; shorter backoffs pass unnoticed.
const MODEL_WAIT_NOTICE: Duration = Duration::from_secs(2);

/// The limits of one run (`[agent]` in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    /// LLM calls per run at most.
    pub max_iterations: u32,
    /// Wall-clock time per run, not counting time spent waiting for a person.
    pub run_timeout: Duration,
    /// How long an approval waits for a person.
    pub approval_timeout: Duration,
    /// Characters of history sent with each request. A person's message longer than half of
    /// it is stored cut (see [`history::fit_for_history`]); the run it starts sees it whole.
    pub history_budget_chars: usize,
    /// Characters of a person's message at most: a longer one is refused before it reaches
    /// the model or the history.
    pub max_message_chars: usize,
    /// Characters of one tool result the model reads.
    pub tool_output_budget_chars: usize,
    /// Characters of the model's text in one reply at most: a longer answer (or text beside
    /// calls) is cut, with a note, before it is shown, stored or sent again.
    pub max_reply_chars: usize,
    /// Malformed replies in a row before the run gives up.
    pub max_malformed_in_a_row: u32,
    /// A store operation that takes longer than this gets a notice in the channel (the
    /// store retries while the database restarts; people should know why nothing happens).
    pub store_notice_after: Duration,
    /// How long a channel rule made by "allow similar" lasts; zero: not offered.
    pub allow_similar: Duration,
}

impl Default for AgentLimits {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            run_timeout: Duration::from_secs(300),
            approval_timeout: Duration::from_secs(600),
            history_budget_chars: 24_000,
            max_message_chars: 100_000,
            tool_output_budget_chars: 8_000,
            max_reply_chars: 20_000,
            max_malformed_in_a_row: 3,
            store_notice_after: Duration::from_secs(3),
            allow_similar: Duration::from_secs(3_600),
        }
    }
}

/// A person's message for the agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Inbound {
    pub channel: String,
    /// Who wrote it, as a stable id (a Discord user id, a console user name): the requester
    /// of any approval in the run.
    pub author: String,
    /// How the model and people see the author.
    pub author_name: String,
    pub text: String,
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The model answered in text.
    Replied(String),
    /// A `terminate: true` call ended the run with its result.
    Terminated { tool: String, result: String },
    /// The run stopped before an answer.
    Stopped(StopReason),
}

/// How a run's steps ended: the outcome, and how many model steps were taken.
struct Ended {
    outcome: RunOutcome,
    iterations: u32,
}

impl Ended {
    fn before_any_step(outcome: RunOutcome) -> Self {
        Self {
            outcome,
            iterations: 0,
        }
    }
}

/// A store failure as the channel reads it: the failure, and what to do when its kind says.
/// A model failure as the channel reads it: what failed, and what became of the
/// conversation. No model failure changes what the store holds.
fn stopped_by_model(error: &ModelError) -> String {
    match error.failure() {
        ModelFailure::Transient => format!(
            "{error}. Nothing was lost: this channel's conversation is kept as it was, and this message was not added to it. Send it again once the model server answers{}",
            match error {
                ModelError::RetryLater { until, .. } => format!(" (after {until})"),
                _ => " (usually within a minute or two)".to_owned(),
            }
        ),
        ModelFailure::TooLong => format!(
            "{error}. Nothing was deleted: send a shorter message, or use a model with a larger context window"
        ),
        ModelFailure::Refused => format!(
            "{error}. Nothing was deleted; if the refusal is about something in this channel's earlier conversation, /reset clears it"
        ),
    }
}

/// What the channel is told while the model client waits before asking again.
fn model_wait_notice(retry: &ModelRetry) -> String {
    let why = if retry.asked {
        "as it asked"
    } else {
        "backing off"
    };
    format!(
        "the model server answered {} (attempt {}); I am trying again in {} s, {why}. Nothing is lost meanwhile",
        retry.last,
        retry.attempt,
        retry.wait.as_secs_f64().ceil()
    )
}

fn stopped_by_store(error: &StoreError) -> String {
    match error.advice() {
        Some(advice) => format!("{error}. {advice}"),
        None => error.to_string(),
    }
}

/// Why a run stopped early. Each is told to the user as an [`AgentEvent::Error`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StopReason {
    #[error(
        "I stopped after {0} steps without a final answer (agent.max_iterations); ask me to continue if the work is not done"
    )]
    MaxIterations(u32),
    #[error("I stopped because the run took longer than {0:?} (agent.run_timeout_secs)")]
    WallClock(Duration),
    #[error(
        "I stopped because the model sent {count} replies in a row that I could not use (the last one: {problem}). Small models often do this: try the other tool protocol (llm.protocol = \"{other}\" instead of \"{protocol}\") or a larger model",
        other = protocol.other().as_str(),
        protocol = protocol.as_str()
    )]
    Malformed {
        count: u32,
        /// What was wrong with the last one.
        problem: String,
        /// The protocol the model was asked to speak.
        protocol: Protocol,
    },
    #[error("{}", stopped_by_model(.0))]
    Model(ModelError),
    #[error("{}", stopped_by_store(.0))]
    Store(StoreError),
    #[error(
        "your message has {chars} characters, more than the {limit} I accept (agent.max_message_chars), so nothing was sent to the model; send a shorter message, or put the text in a file in the workspace and ask me to read it"
    )]
    MessageTooLong { chars: usize, limit: usize },
    #[error(
        "I stopped because my approval request could not be posted in this channel, so nobody could answer it; the bot's log names the channel and the permission it needs"
    )]
    Undeliverable,
    #[error(
        "I stopped here because this run was continued elsewhere: the approval I waited for was decided, and a resumed copy of this run took it over, so nothing ran twice"
    )]
    ContinuedElsewhere,
    #[error("I stopped because you interrupted me before I answered")]
    Interrupted,
}

impl RunOutcome {
    fn label(&self) -> &'static str {
        match self {
            Self::Replied(_) => "replied",
            Self::Terminated { .. } => "terminated",
            Self::Stopped(StopReason::MaxIterations(_)) => "max_iterations",
            Self::Stopped(StopReason::WallClock(_)) => "wall_clock",
            Self::Stopped(StopReason::Malformed { .. }) => "malformed",
            Self::Stopped(StopReason::Model(_)) => "model_error",
            Self::Stopped(StopReason::Store(_)) => "store_error",
            Self::Stopped(StopReason::MessageTooLong { .. }) => "message_too_long",
            Self::Stopped(StopReason::Undeliverable) => "undeliverable",
            Self::Stopped(StopReason::ContinuedElsewhere) => "continued_elsewhere",
            Self::Stopped(StopReason::Interrupted) => "interrupted",
        }
    }
}

/// Everything a run needs, wired by the application.
pub struct Agent {
    pub gate: RiskGate,
    pub model: Arc<dyn ChatModel>,
    /// The model's name, as `/status` shows it.
    pub model_name: String,
    pub approvals: Arc<dyn ApprovalSurface>,
    pub store: Arc<dyn Store>,
    pub events: Arc<dyn EventSink>,
    pub clock: Arc<dyn Clock>,
    pub prompts: Prompts,
    /// The profiles a channel can choose from: what each offers, what it tells the model.
    pub profiles: Profiles,
    pub protocol: Protocol,
    pub limits: AgentLimits,
    /// Mode and profile of a channel nobody has configured.
    pub defaults: ChannelSettings,
    /// Dialect and other per-call context for the assessors.
    pub assess_context: AssessContext,
    /// This process, in the runs table (several instances may share a database).
    pub instance: String,
    /// What each profile's runs send every time, built on first use and again when the
    /// tools change.
    pub prepared: PreparedCache,
    /// Audit records of calls that ran (or were refused) while the store could not take
    /// them, oldest first; see [`Agent::flush_audit`].
    pub unwritten_audit: AuditSpool,
    /// The channels' summaries of their older conversation (see [`memory`]).
    pub summaries: Summaries,
    /// The tokens each channel's requests cost since the start, for `/status`.
    pub usage: UsageLedger,
    /// A reply of this model has held reasoning in its text: streamed replies show nothing
    /// before their `</think>` from then on (see [`draft`]).
    pub writes_reasoning: AtomicBool,
}

/// Audit records waiting for the store. The lock is held while they are written, so no tool
/// runs while an earlier record is still unwritten.
pub type AuditSpool = tokio::sync::Mutex<Vec<AuditRecord>>;

/// What the channel is told while a store operation waits for the database.
const STORE_SLOW: &str =
    "the state database is not answering (it may be restarting); still trying…";

/// The per-profile parts of every request, and the tools they were made from: a run takes
/// these at its start and keeps them, so tools that come or go meanwhile do not change it.
#[derive(Debug)]
pub struct Prepared {
    /// The tools as they stood when this was made: the set the run's calls are checked
    /// against, gated, shown and run with.
    tools: Arc<ToolSet>,
    system: String,
    /// What the tools said is there when `system` was made from it.
    context: Vec<String>,
    request_tools: Arc<[ToolDefinition]>,
    /// Tokens `request_tools` take in a request.
    tools_tokens: usize,
    offered: HashSet<String>,
    /// Every real tool's name: the only names a call written in prose may give.
    known: HashSet<String>,
    /// The model the profile asks, if not the client's.
    model: Option<String>,
}

/// What every request of a run in one profile starts with, before any conversation: for
/// measuring the prompt ([`Agent::opening`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// The system prompt as a run sends it (without a channel's summary).
    pub system: String,
    /// Its tokens, counted high as requests are fitted (see [`fit`]).
    pub system_tokens: usize,
    /// The tool definitions' tokens (none in the JSON protocol, whose prompt holds them).
    pub tools_tokens: usize,
}

/// Prepared requests by profile. Empty at first; filled as profiles are used, each made
/// again once the tools it was made from have changed.
pub type PreparedCache = std::sync::Mutex<std::collections::HashMap<String, Arc<Prepared>>>;

/// How often a run waiting for a person tells the store it is alive.
const HEARTBEAT: Duration = Duration::from_secs(30);

/// The wall clock of a run, paused while a person decides.
struct RunTimer {
    deadline: Instant,
    limit: Duration,
}

impl RunTimer {
    fn new(limit: Duration) -> Self {
        Self {
            deadline: Instant::now() + limit,
            limit,
        }
    }

    fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Time spent waiting for a person does not count.
    fn exclude(&mut self, waited: Duration) {
        self.deadline += waited;
    }
}

/// The store writes of a run that no effect has had to wait for yet: the run's start, then
/// the audit records of the calls that ran. They go on while the model thinks about the next
/// step (a step's overhead does not include their commit) and are settled, in order, before
/// the next tool runs or a person is asked, and before the run ends.
struct Behind<'a> {
    /// The run's start, until it has been written (or has failed).
    start: Option<BoxFuture<'a, Result<(), StoreError>>>,
    /// Whether the run's start was written.
    recorded: bool,
    /// Audit records, one after another. Each one keeps itself if the store cannot take it
    /// ([`Agent::audit`]), so they cannot fail here.
    audits: Option<BoxFuture<'a, ()>>,
}

impl<'a> Behind<'a> {
    fn starting(start: BoxFuture<'a, Result<(), StoreError>>) -> Self {
        Self {
            start: Some(start),
            recorded: false,
            audits: None,
        }
    }

    /// Queues an audit record after the ones already queued.
    fn push(&mut self, audit: BoxFuture<'a, ()>) {
        self.audits = Some(match self.audits.take() {
            None => audit,
            Some(earlier) => Box::pin(async move {
                earlier.await;
                audit.await;
            }),
        });
    }

    /// Waits for everything queued. An error says the run's start could not be written.
    async fn settle(&mut self) -> Result<(), StoreError> {
        if let Some(start) = self.start.take() {
            start.await?;
            self.recorded = true;
        }
        if let Some(audits) = self.audits.take() {
            audits.await;
        }
        Ok(())
    }

    /// Whether the run's start was written (after [`Behind::settle`]).
    fn recorded(&self) -> bool {
        self.recorded
    }
}

/// A model call's result, or the run's time running out first.
type Asked = Result<Result<ChatReply, ModelError>, tokio::time::error::Elapsed>;

/// What a step hears while the model answers: a wait of the client is told to the channel,
/// the reply's text is shown as a draft ([`draft::Draft`]). Dropped before its step's
/// reply was the answer, it takes the draft back.
struct Listening<'a> {
    agent: &'a Agent,
    channel: &'a str,
    draft: std::sync::Mutex<draft::Draft>,
}

impl<'a> Listening<'a> {
    fn new(agent: &'a Agent, channel: &'a str) -> Self {
        let reasons = agent.writes_reasoning.load(Ordering::Relaxed);
        Self {
            agent,
            channel,
            draft: std::sync::Mutex::new(draft::Draft::new(reasons)),
        }
    }

    fn draft(&self) -> std::sync::MutexGuard<'_, draft::Draft> {
        // A draft is text and offsets: whatever a panicking holder left is usable.
        self.draft
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The step's reply is not the answer: what its draft showed is taken back.
    fn take_back(&self) {
        let dropped = self.draft().take_back();
        if let Some(event) = dropped {
            self.agent.emit(self.channel, event);
        }
    }

    /// The step's reply is the answer: `text` replaces the draft.
    fn answer(&self, text: &str) {
        self.draft().answered();
        self.agent.emit(
            self.channel,
            AgentEvent::Reply {
                text: text.to_owned(),
            },
        );
    }
}

impl ReplyListener for Listening<'_> {
    fn waiting(&self, retry: &ModelRetry) {
        if retry.wait >= MODEL_WAIT_NOTICE {
            self.agent.emit(
                self.channel,
                AgentEvent::Notice {
                    message: model_wait_notice(retry),
                },
            );
        }
    }

    fn text(&self, piece: &str) {
        let part = self.draft().push(piece);
        if let Some(event) = part {
            self.agent.emit(self.channel, event);
        }
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.take_back();
    }
}

/// A call's audit record with what became of the call.
fn completed(mut record: AuditRecord, result: &CallResult, elapsed: Duration) -> AuditRecord {
    record.outcome = result.outcome;
    record.duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    record.output_bytes = result.output_bytes;
    record
}

/// What became of one call, as the model reads it and as the audit log records it.
struct CallResult {
    text: String,
    /// Whether the call ran and succeeded (for `terminate`).
    ran: bool,
    outcome: CallOutcome,
    output_bytes: u64,
    /// The run ends after this call, for this reason.
    ends_run: Option<StopReason>,
}

/// What a run's steps share.
struct RunContext<'r> {
    inbound: &'r Inbound,
    run_id: &'r str,
    settings: &'r ChannelSettings,
    prepared: &'r Prepared,
    /// Cancelled when the person interrupts the run (see [`Agent::run_interruptible`]).
    interrupt: &'r CancellationToken,
}

impl RunContext<'_> {
    /// The run's tools: the set it took at its start.
    fn tools(&self) -> &ToolSet {
        &self.prepared.tools
    }

    /// `work`'s result, or `None` once the run is interrupted: `work` is then dropped (a
    /// model request with it).
    async fn unless_interrupted<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            biased;
            () = self.interrupt.cancelled() => None,
            done = work => Some(done),
        }
    }
}

/// The calls of one reply, and any text that came with them.
struct Exchange {
    content: Option<String>,
    slots: Vec<CallSlot>,
}

/// What came of running the calls of one reply.
#[derive(Default)]
struct SlotsRun {
    stop: Option<RunOutcome>,
    any_malformed: bool,
    any_checked: bool,
}

/// Where a run stands between steps.
#[derive(Default)]
struct Progress {
    iterations: u32,
    next_id: u64,
    malformed_in_a_row: u32,
    /// What was wrong with the last reply that could not be used.
    last_problem: String,
    /// Calls a person cancelled in this run (tool and canonical arguments).
    cancelled: HashSet<String>,
    /// What came of each call of this run, for a repeat of one.
    repeats: repeats::Repeats,
    /// The results the model was given in this run, to tell an echo from an answer.
    results: Vec<String>,
}

/// Why a text reply is not an answer but a copy of a tool result this run gave the model
/// (small models answered with riskgate's own result JSON), if it is one. Only replies
/// that are structured like a result count: a JSON object or array found verbatim in a
/// result, riskgate's `{"status", "reason"}` shape, or the frame tool output comes in.
fn echoed_result(text: &str, results: &[String]) -> Option<String> {
    const PROBLEM: &str = "the reply repeats a tool result instead of answering; read the result and answer the user in plain words";
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    if inner.contains("<tool_output") || inner.starts_with("Result of your ") {
        return Some(PROBLEM.to_owned());
    }
    if !(inner.starts_with('{') || inner.starts_with('[')) {
        return None;
    }
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(inner)
        && object.contains_key("status")
        && object.contains_key("reason")
    {
        return Some(PROBLEM.to_owned());
    }
    let compact = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let reply = compact(inner);
    results
        .iter()
        .any(|result| compact(result).contains(&reply))
        .then(|| PROBLEM.to_owned())
}

impl Agent {
    /// The settings of a channel: stored ones, else the defaults.
    pub async fn channel_settings(&self, channel: &str) -> Result<ChannelSettings, StoreError> {
        Ok(self
            .store
            .channel_settings(channel)
            .await?
            .unwrap_or_else(|| self.profiles.defaults_for(channel, &self.defaults)))
    }

    /// Runs one message to its end. Everything the user should see is emitted as events;
    /// the outcome says how it ended.
    pub async fn run(&self, inbound: &Inbound) -> RunOutcome {
        self.run_interruptible(inbound, &CancellationToken::new())
            .await
    }

    /// [`Agent::run`], which a person can interrupt by cancelling `interrupt`: a model
    /// request under way is dropped and none is sent after, and the run ends as
    /// [`StopReason::Interrupted`], recorded and saved like any other stop. A tool that
    /// runs finishes first; an approval is the front end's to settle (as a cancel).
    #[tracing::instrument(skip_all, fields(channel = %inbound.channel, author = %inbound.author))]
    pub async fn run_interruptible(
        &self,
        inbound: &Inbound,
        interrupt: &CancellationToken,
    ) -> RunOutcome {
        let channel = inbound.channel.as_str();
        if let Some(refused) = self.refuse_too_long(inbound) {
            return refused;
        }
        self.emit(
            channel,
            AgentEvent::RunStarted {
                author: inbound.author_name.clone(),
                text: inbound.text.clone(),
            },
        );
        let mut messages =
            RunMessages::new(ChatMessage::user(Some(&inbound.author_name), &inbound.text));
        let run_id = new_id();
        // The run's start is recorded while the model thinks about its first step; no tool
        // runs and nobody is asked before it is (see `Behind`).
        let mut behind = Behind::starting(Box::pin(self.patiently(
            channel,
            self.store.start_run(&run_id, channel, &self.instance),
        )));
        let ended = self
            .drive(inbound, &run_id, interrupt, &mut behind, &mut messages)
            .await;
        self.conclude(channel, &run_id, behind, ended, &messages)
            .await
    }

    /// The end of a run: its writes settled, its messages saved, the channel told how it
    /// ended.
    async fn conclude(
        &self,
        channel: &str,
        run_id: &str,
        mut behind: Behind<'_>,
        Ended {
            outcome,
            iterations,
        }: Ended,
        messages: &RunMessages,
    ) -> RunOutcome {
        let outcome = match behind.settle().await {
            Ok(()) => outcome,
            // Only reached when the run stopped before its first model call came back.
            Err(e) => RunOutcome::Stopped(StopReason::Store(e)),
        };
        let recorded = behind.recorded();
        let new_messages = self.for_history(&outcome, messages);
        // The end of the run and its messages, at once: on SQLite they share one commit.
        let (finished, saved) = tokio::join!(
            async {
                // A run that could not be recorded has nothing to mark finished.
                if recorded {
                    self.patiently(channel, self.store.finish_run(run_id)).await
                } else {
                    Ok(())
                }
            },
            async {
                if new_messages.is_empty() {
                    Ok(())
                } else {
                    self.patiently(channel, self.store.append(channel, &new_messages))
                        .await
                }
            },
        );
        if let Err(e) = finished {
            tracing::error!(error = %e, run_id, "could not mark the run finished");
        }
        if let Err(e) = saved {
            tracing::error!(error = %e, "could not save the conversation");
            self.emit(
                channel,
                AgentEvent::Error {
                    message: format!("this conversation could not be saved: {e}"),
                },
            );
        }
        self.tell_stop(channel, &outcome, iterations);
        // Records kept while the store was down go in as soon as it answers again.
        let kept = self.unwritten_audit.lock().await.len();
        if kept > 0
            && let Err(e) = self.flush_audit().await
        {
            tracing::warn!(error = %e, kept, "unwritten audit records are still waiting for the store");
        }
        self.emit(
            channel,
            AgentEvent::RunFinished {
                outcome: outcome.label().to_owned(),
                iterations,
            },
        );
        outcome
    }

    /// Tells the channel why the run stopped without an answer, if it did. A run whose
    /// continuation another copy claimed ends quietly: that copy tells the channel what
    /// became of the call.
    fn tell_stop(&self, channel: &str, outcome: &RunOutcome, iterations: u32) {
        match outcome {
            RunOutcome::Stopped(reason @ StopReason::ContinuedElsewhere) => {
                tracing::info!(%reason, "run ended: another copy went on past its approval");
            }
            // The person who interrupted it knows; the front end says it was.
            RunOutcome::Stopped(reason @ StopReason::Interrupted) => {
                tracing::info!(%reason, "run ended: interrupted");
            }
            RunOutcome::Stopped(reason) => {
                if matches!(reason, StopReason::MaxIterations(_)) {
                    tracing::warn!(iterations, "run stopped at the iteration cap");
                } else {
                    tracing::warn!(%reason, "run stopped");
                }
                self.emit(
                    channel,
                    AgentEvent::Error {
                        message: reason.to_string(),
                    },
                );
            }
            RunOutcome::Replied(_) | RunOutcome::Terminated { .. } => {}
        }
    }

    /// What later runs read of this one: see [`RunMessages::for_history`]; the person's
    /// message cut to fit the history (this run saw it whole). Nothing, for a run whose
    /// continuation another copy claimed: that copy saves the whole turn, the person's
    /// message first. Nothing either when the model server failed for now (see
    /// [`ModelFailure::Transient`]) before anything of the run was kept: the person is told
    /// to send the message again, and the conversation stays byte for byte as it was.
    fn for_history(&self, outcome: &RunOutcome, messages: &RunMessages) -> Vec<ChatMessage> {
        if matches!(outcome, RunOutcome::Stopped(StopReason::ContinuedElsewhere)) {
            return Vec::new();
        }
        let note = match outcome {
            RunOutcome::Stopped(StopReason::Model(e))
                if e.failure() == ModelFailure::Transient && messages.only_the_question() =>
            {
                return Vec::new();
            }
            RunOutcome::Stopped(reason) => Some(format!("(No answer: {reason}.)")),
            RunOutcome::Replied(_) | RunOutcome::Terminated { .. } => None,
        };
        let mut kept = messages.for_history(note);
        if let Some(message) = kept.first_mut() {
            message.content = message.content.as_deref().map(|text| {
                history::fit_for_history(text, self.limits.history_budget_chars / 2)
                    .unwrap_or_else(|| text.to_owned())
            });
        }
        kept
    }

    /// A message over `max_message_chars` ends its run before anything else: no model call,
    /// no store write, no history. The person is told why and what to do instead.
    fn refuse_too_long(&self, inbound: &Inbound) -> Option<RunOutcome> {
        let limit = self.limits.max_message_chars;
        // Bytes bound characters from above: most messages skip the count.
        if inbound.text.len() <= limit {
            return None;
        }
        let chars = inbound.text.chars().count();
        if chars <= limit {
            return None;
        }
        let channel = inbound.channel.as_str();
        let reason = StopReason::MessageTooLong { chars, limit };
        tracing::warn!(
            chars,
            limit,
            "a message over agent.max_message_chars was refused"
        );
        let preview: String = inbound.text.chars().take(200).collect();
        self.emit(
            channel,
            AgentEvent::RunStarted {
                author: inbound.author_name.clone(),
                text: format!(
                    "{preview} [... {} more characters, refused]",
                    chars.saturating_sub(200)
                ),
            },
        );
        self.emit(
            channel,
            AgentEvent::Error {
                message: reason.to_string(),
            },
        );
        let outcome = RunOutcome::Stopped(reason);
        self.emit(
            channel,
            AgentEvent::RunFinished {
                outcome: outcome.label().to_owned(),
                iterations: 0,
            },
        );
        Some(outcome)
    }

    async fn drive<'a>(
        &'a self,
        inbound: &Inbound,
        run_id: &str,
        interrupt: &CancellationToken,
        behind: &mut Behind<'a>,
        messages: &mut RunMessages,
    ) -> Ended {
        let channel = inbound.channel.as_str();
        let mut timer = RunTimer::new(self.limits.run_timeout);
        let (settings, history) = match self.begin(channel).await {
            Ok(begun) => begun,
            Err(e) => return Ended::before_any_step(RunOutcome::Stopped(StopReason::Store(e))),
        };
        // A change of the tools on its way (an earlier call made a server list new ones)
        // lands before the run takes its set.
        self.gate.registry().settled().await;
        let prepared = self.prepared(&settings.profile).await;
        // Compacting the history may ask the model for a summary: an interrupt drops it.
        let memory = tokio::select! {
            biased;
            () = interrupt.cancelled() => {
                return Ended::before_any_step(RunOutcome::Stopped(StopReason::Interrupted));
            }
            memory = self.memory(
                channel,
                &prepared,
                history,
                &messages.all()[0],
                self.budget(),
            ) => memory,
        };
        let context = RunContext {
            inbound,
            run_id,
            settings: &settings,
            prepared: &prepared,
            interrupt,
        };
        let mut progress = Progress::default();
        let outcome = self
            .steps(
                &context,
                memory,
                behind,
                &mut timer,
                messages,
                &mut progress,
            )
            .await;
        Ended {
            outcome,
            iterations: progress.iterations,
        }
    }

    /// The run's steps from where it stands: ask the model, act on the reply, until an
    /// answer or a stop.
    async fn steps<'a>(
        &'a self,
        context: &RunContext<'_>,
        mut memory: Memory,
        behind: &mut Behind<'a>,
        timer: &mut RunTimer,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> RunOutcome {
        let channel = context.inbound.channel.as_str();
        let prepared = context.prepared;
        let mut budget = self.budget();
        loop {
            if progress.iterations >= self.limits.max_iterations {
                return RunOutcome::Stopped(StopReason::MaxIterations(progress.iterations));
            }
            progress.iterations += 1;
            let request = self.request(prepared, &memory, messages.all(), budget);
            let listening = Listening::new(self, channel);
            // The writes left behind by the previous step land while the model thinks,
            // also when the person interrupts it.
            let (asked, settled) = tokio::join!(
                context.unless_interrupted(self.ask(channel, &request, timer, &listening)),
                behind.settle()
            );
            if let Err(e) = settled {
                return RunOutcome::Stopped(StopReason::Store(e));
            }
            let Some(asked) = asked else {
                return RunOutcome::Stopped(StopReason::Interrupted);
            };
            let shorter = self.shorter_if_too_long(
                channel,
                asked,
                &request,
                prepared,
                &mut memory,
                messages,
                timer,
                &mut budget,
                &listening,
            );
            let Some(asked) = context.unless_interrupted(shorter).await else {
                return RunOutcome::Stopped(StopReason::Interrupted);
            };
            let reply = match asked {
                Err(_) => return RunOutcome::Stopped(StopReason::WallClock(timer.limit)),
                Ok(Err(e)) => return RunOutcome::Stopped(StopReason::Model(e)),
                Ok(Ok(reply)) => self.without_reasoning(reply),
            };
            let kind = self
                .protocol
                .interpret(&reply, &mut progress.next_id, &prepared.known);
            let kind = capped(kind, self.limits.max_reply_chars);
            let answer = match &kind {
                ReplyKind::Text(text) => echoed_result(text, &progress.results).is_none(),
                _ => false,
            };
            if !answer {
                listening.take_back();
            }
            let stop = match kind {
                ReplyKind::Text(text) if answer => {
                    messages.push(ChatMessage::assistant(&text));
                    listening.answer(&text);
                    Some(RunOutcome::Replied(text))
                }
                ReplyKind::Text(text) => {
                    let problem = echoed_result(&text, &progress.results).unwrap_or_default();
                    self.unusable(text, problem, messages, progress)
                }
                ReplyKind::Malformed { raw, problem } => {
                    self.unusable(raw, problem, messages, progress)
                }
                ReplyKind::Calls { content, slots } => {
                    let exchange = Exchange { content, slots };
                    self.run_calls(context, exchange, behind, timer, messages, progress)
                        .await
                }
            };
            if let Some(outcome) = stop {
                return outcome;
            }
        }
    }

    /// Reads the channel's settings and history, both at once: the first model call needs
    /// the profile, and every run takes its mode from the store, whatever any process
    /// changed a moment ago.
    async fn begin(
        &self,
        channel: &str,
    ) -> Result<(ChannelSettings, Vec<ChatMessage>), StoreError> {
        let (settings, history) = tokio::join!(
            self.patiently(channel, self.channel_settings(channel)),
            self.history_of(channel)
        );
        Ok((settings?, history?))
    }

    /// A reply that could not be used: sent back with a correction during this run only.
    /// Returns the stop when too many came in a row.
    fn unusable(
        &self,
        raw: String,
        problem: String,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> Option<RunOutcome> {
        tracing::info!(%problem, "malformed reply");
        if !raw.is_empty() {
            messages.push_transient(ChatMessage::assistant(raw));
        }
        messages.push_transient(ChatMessage::user(None, self.protocol.correction(&problem)));
        progress.last_problem = problem;
        progress.malformed_in_a_row += 1;
        self.too_many_malformed(progress)
    }

    fn too_many_malformed(&self, progress: &Progress) -> Option<RunOutcome> {
        (progress.malformed_in_a_row >= self.limits.max_malformed_in_a_row).then(|| {
            RunOutcome::Stopped(StopReason::Malformed {
                count: progress.malformed_in_a_row,
                problem: progress.last_problem.clone(),
                protocol: self.protocol,
            })
        })
    }

    /// When the server said the request is longer than the model's context window, asks
    /// once more with less: where the window is known, the conversation compacted harder
    /// and the request fitted to two thirds of the budget (for the rest of the run too);
    /// where it is not, without the earlier conversation, for this run only
    /// (`RunMessages::history_left_out`), telling the channel. Nothing is deleted either way:
    /// the store keeps the whole conversation. No other failure leads here: a server that
    /// failed for now says nothing about the request.
    #[allow(clippy::too_many_arguments)]
    async fn shorter_if_too_long(
        &self,
        channel: &str,
        asked: Asked,
        refused_request: &ChatRequest,
        prepared: &Prepared,
        memory: &mut Memory,
        messages: &mut RunMessages,
        timer: &RunTimer,
        budget: &mut Option<Budget>,
        listening: &Listening<'_>,
    ) -> Asked {
        let refused = match &asked {
            Ok(Err(e)) if e.failure() == ModelFailure::TooLong => e.to_string(),
            _ => return asked,
        };
        if let Some(current) = *budget {
            tracing::warn!(error = %refused, "the model server refused a request as longer than its window; compacting harder and asking once more (the stored conversation stays)");
            let counted = fit::messages_tokens(&refused_request.messages)
                + fit::tools_tokens(&refused_request.tools);
            let harder = current.harder(counted);
            *budget = Some(harder);
            let fixed = self.fixed_tokens(prepared, None, &messages.all()[0]);
            let taken = std::mem::take(memory);
            *memory = self.compacted(channel, taken, fixed, harder).await;
            let request = self.request(prepared, memory, messages.all(), *budget);
            return self.ask(channel, &request, timer, listening).await;
        }
        if memory.recent.is_empty() && memory.summary.is_none() {
            return asked;
        }
        tracing::warn!(error = %refused, "the request is too long for the model; asking again without the earlier conversation, which stays stored");
        *memory = Memory::default();
        messages.history_left_out = true;
        let again = self
            .ask(
                channel,
                &self.request(prepared, memory, messages.all(), None),
                timer,
                listening,
            )
            .await;
        if matches!(again, Ok(Ok(_))) {
            self.emit(
                channel,
                AgentEvent::Notice {
                    message: format!(
                        "this channel's conversation is longer than the model's context window ({refused}), so I answered from your message alone, without the earlier conversation. Nothing was deleted: the conversation is kept, and /reset clears it if you want a fresh start"
                    ),
                },
            );
        }
        again
    }

    /// Runs the calls of one reply through the gate, in order; every call gets a result,
    /// also after a stop. Returns the stop, if one came.
    async fn run_calls<'a>(
        &'a self,
        context: &RunContext<'_>,
        exchange: Exchange,
        behind: &mut Behind<'a>,
        timer: &mut RunTimer,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> Option<RunOutcome> {
        let start = messages.len();
        let Exchange { content, slots } = exchange;
        messages.push(self.protocol.assistant_message(content.as_deref(), &slots));
        let ran = self
            .run_slots(context, &slots, behind, timer, messages, progress)
            .await;
        if !ran.any_checked {
            // Nothing in this reply could be used: later runs need not see it.
            messages.transient_from(start);
        }
        self.after_slots(ran, progress)
    }

    /// A stop after a reply's calls, or too many unusable replies in a row.
    fn after_slots(&self, ran: SlotsRun, progress: &mut Progress) -> Option<RunOutcome> {
        if ran.stop.is_some() {
            return ran.stop;
        }
        if ran.any_malformed {
            progress.malformed_in_a_row += 1;
            return self.too_many_malformed(progress);
        }
        progress.malformed_in_a_row = 0;
        None
    }

    /// Runs `slots` (calls of one reply whose assistant message is already in `messages`),
    /// pushing each one's result.
    async fn run_slots<'a>(
        &'a self,
        context: &RunContext<'_>,
        slots: &[CallSlot],
        behind: &mut Behind<'a>,
        timer: &mut RunTimer,
        messages: &mut RunMessages,
        progress: &mut Progress,
    ) -> SlotsRun {
        let channel = context.inbound.channel.as_str();
        let mut ran = SlotsRun::default();
        for (i, slot) in slots.iter().enumerate() {
            let (id, tool) = slot_id_and_tool(slot);
            // After a stop, the remaining calls still get a result so every call pairs.
            if ran.stop.is_some() {
                let text = status_json("not_run", "the run stopped before this call");
                messages.push(self.protocol.result_message(id, tool, &text));
                continue;
            }
            let checked = match slot {
                CallSlot::Malformed { problem, .. } => Err(problem.clone()),
                CallSlot::Call(call) => self.check_call(call, context.prepared).map(|()| call),
            };
            let call = match checked {
                Ok(call) => call,
                Err(problem) => {
                    ran.any_malformed = true;
                    let text = format!("error: {}", self.protocol.correction(&problem));
                    progress.last_problem = problem;
                    messages.push(self.protocol.result_message(id, tool, &text));
                    continue;
                }
            };
            ran.any_checked = true;
            // Nothing runs and nobody is asked before the run's start and every earlier
            // audit record are written.
            if let Err(e) = behind.settle().await {
                ran.stop = Some(RunOutcome::Stopped(StopReason::Store(e)));
                return ran;
            }
            let started = Instant::now();
            let (iterations, next_id, results) =
                (progress.iterations, progress.next_id, &progress.results);
            let (messages_now, rest) = (&*messages, &slots[i + 1..]);
            let checkpoint = |cancelled: &HashSet<String>| {
                let at = resume::At {
                    call,
                    rest,
                    iterations,
                    next_id,
                    results,
                    cancelled,
                };
                self.checkpoint(context, messages_now, at)
            };
            let (result, audit) = self
                .handle_call(
                    context,
                    call,
                    timer,
                    &mut progress.cancelled,
                    &mut progress.repeats,
                    &checkpoint,
                )
                .await;
            let record = completed(audit, &result, started.elapsed());
            behind.push(Box::pin(self.audit(record)));
            messages.push(
                self.protocol
                    .result_message(&call.id, &call.tool, &result.text),
            );
            progress.results.push(result.text.clone());
            ran.stop = self.stop_after(channel, call, result, timer);
        }
        ran
    }

    /// Whether the run ends after this call: its time ran out, the call's result ends it,
    /// or the call said `terminate`.
    fn stop_after(
        &self,
        channel: &str,
        call: &ParsedCall,
        result: CallResult,
        timer: &RunTimer,
    ) -> Option<RunOutcome> {
        if timer.remaining().is_zero() {
            return Some(RunOutcome::Stopped(StopReason::WallClock(timer.limit)));
        }
        if let Some(reason) = result.ends_run {
            return Some(RunOutcome::Stopped(reason));
        }
        if !call.terminate {
            return None;
        }
        if result.ran {
            self.emit(
                channel,
                AgentEvent::Reply {
                    text: format!("(finished with the result of {})", call.tool),
                },
            );
        }
        Some(RunOutcome::Terminated {
            tool: call.tool.clone(),
            result: result.text.clone(),
        })
    }

    /// The channel's history as the model reads it: within the budget, only what people and
    /// the model said (see [`history::said`]), every call paired with a result (see
    /// [`history::repaired`]).
    async fn history_of(&self, channel: &str) -> Result<Vec<ChatMessage>, StoreError> {
        self.patiently(
            channel,
            self.store
                .load_history(channel, self.limits.history_budget_chars),
        )
        .await
        .map(|messages| history::repaired(history::said(messages)))
    }

    /// One model call, within what is left of the run's time, telling `listening` what
    /// happens meanwhile (a wait of the client, the reply's text as it streams). What the
    /// server says the request cost goes to the channel's line in [`Agent::usage`] and out as
    /// [`AgentEvent::ModelUsage`], for the counters.
    async fn ask(
        &self,
        channel: &str,
        request: &ChatRequest,
        timer: &RunTimer,
        listening: &Listening<'_>,
    ) -> Asked {
        let asked = tokio::time::timeout(
            timer.remaining(),
            self.model.complete_telling(request, listening),
        )
        .await;
        if let Ok(Ok(reply)) = &asked {
            self.count_usage(channel, reply);
        }
        asked
    }

    /// `reply` without the reasoning the model wrote into its text ([`draft::answer_part`]):
    /// what follows `</think>` is all that is shown, stored and sent back. A reply that held
    /// reasoning makes later streamed replies wait for their `</think>` before they show.
    fn without_reasoning(&self, mut reply: ChatReply) -> ChatReply {
        if let Some(content) = &reply.content {
            let (answer, reasoned) = draft::answer_part(content);
            if reasoned {
                self.writes_reasoning.store(true, Ordering::Relaxed);
                reply.content = Some(answer.to_owned());
            }
        }
        reply
    }

    /// Adds what the server says `reply` cost to the channel's tokens.
    fn count_usage(&self, channel: &str, reply: &ChatReply) {
        if let Some(usage) = reply.usage {
            self.usage.record(channel, usage);
            self.emit(
                channel,
                AgentEvent::ModelUsage {
                    prompt_tokens: usage.prompt_tokens,
                    completion_tokens: usage.completion_tokens,
                },
            );
        }
    }

    /// The window requests are fitted to, when the model says what it is.
    fn budget(&self) -> Option<Budget> {
        self.model.context_limits().map(Budget::of)
    }

    /// Tokens a run's request takes before any conversation: the system prompt with the
    /// channel's summary, the tools, and the person's message.
    fn fixed_tokens(
        &self,
        prepared: &Prepared,
        summary: Option<&str>,
        first: &ChatMessage,
    ) -> usize {
        fit::message_tokens(&ChatMessage::system(memory::with_summary(
            &prepared.system,
            summary,
        ))) + prepared.tools_tokens
            + fit::message_tokens(first)
    }

    /// The channel's memory for this run: its history as it is when the window is unknown,
    /// else with the older part summarised when it no longer fits (see [`memory`]).
    async fn memory(
        &self,
        channel: &str,
        prepared: &Prepared,
        history: Vec<ChatMessage>,
        first: &ChatMessage,
        budget: Option<Budget>,
    ) -> Memory {
        match budget {
            None => Memory::verbatim(history),
            Some(budget) => {
                let fixed = self.fixed_tokens(prepared, None, first);
                self.memory_for(channel, history, fixed, budget).await
            }
        }
    }

    /// One model request: the profile's system prompt (with the channel's summary) and
    /// tools, the recent conversation, this run's messages so far; fitted to `budget` (see
    /// [`fit`]): older results of the run shortened, the oldest turns left out, as needed.
    fn request(
        &self,
        prepared: &Prepared,
        memory: &Memory,
        new_messages: &[ChatMessage],
        budget: Option<Budget>,
    ) -> ChatRequest {
        let system = ChatMessage::system(memory::with_summary(
            &prepared.system,
            memory.summary.as_deref(),
        ));
        let mut run = new_messages.to_vec();
        let (history, max_reply_tokens) = match budget {
            None => (&memory.recent[..], None),
            Some(budget) => {
                let room = budget
                    .prompt()
                    .saturating_sub(fit::message_tokens(&system) + prepared.tools_tokens);
                let mut taken = fit::shorten_older_results(&mut run, room);
                if taken > room {
                    taken = fit::cut_latest_results(&mut run, room);
                }
                let start = fit::recent_start(&memory.recent, room.saturating_sub(taken));
                (&memory.recent[start..], Some(budget.reply_cap()))
            }
        };
        let mut messages = Vec::with_capacity(history.len() + run.len() + 1);
        messages.push(system);
        messages.extend(history.iter().cloned());
        messages.extend(run);
        ChatRequest {
            messages,
            tools: prepared.request_tools.clone(),
            max_reply_tokens,
            model: prepared.model.clone(),
        }
    }

    /// The tool definitions, system prompt and offered names of the profile `name` (see
    /// [`Profiles::resolve`]) with the tools as they stand and what they say is there
    /// ([`crate::core::prompt::tools_context`], asked each time: the tools keep what is slow
    /// to read): the same for every run while both stay, so they are built once for each.
    async fn prepared(&self, name: &str) -> Arc<Prepared> {
        let tools = self.gate.tools();
        let profile = self.profiles.resolve(name);
        let context = crate::core::prompt::tools_context(&tools, profile).await;
        if let Ok(cache) = self.prepared.lock()
            && let Some(prepared) = cache.get(name)
            && Arc::ptr_eq(&prepared.tools, &tools)
            && prepared.context == context
        {
            return prepared.clone();
        }
        let offered = offered_definitions(&tools, profile);
        let request_tools: Arc<[ToolDefinition]> = match self.protocol {
            Protocol::Native => offered.clone().into(),
            Protocol::Json => Arc::from(Vec::new()),
        };
        let prepared = Arc::new(Prepared {
            system: self
                .prompts
                .system_prompt(profile, self.protocol, &offered, &context),
            context,
            offered: offered.iter().map(|t| t.name.clone()).collect(),
            known: tools.names().map(str::to_owned).collect(),
            tools_tokens: fit::tools_tokens(&request_tools),
            request_tools,
            tools,
            model: profile.model().map(str::to_owned),
        });
        if let Ok(mut cache) = self.prepared.lock() {
            cache.insert(name.to_owned(), prepared.clone());
        }
        prepared
    }

    /// What a run in the profile `name` sends before any conversation, as things stand now.
    pub async fn opening(&self, name: &str) -> Opening {
        let prepared = self.prepared(name).await;
        Opening {
            system_tokens: fit::message_tokens(&ChatMessage::system(prepared.system.clone())),
            system: prepared.system.clone(),
            tools_tokens: prepared.tools_tokens,
        }
    }

    /// (profile, tool name) for every tool each profile offers, as `/status` lists them.
    pub fn profile_tools(&self) -> Vec<(String, String)> {
        let tools = self.gate.tools();
        self.profiles
            .iter()
            .flat_map(|profile| {
                offered_definitions(&tools, profile)
                    .into_iter()
                    .map(move |tool| (profile.name().to_owned(), tool.name))
            })
            .collect()
    }

    /// The definitions of the tools the profile `name` offers, as they stand now.
    pub fn tool_definitions(&self, name: &str) -> Vec<ToolDefinition> {
        offered_definitions(&self.gate.tools(), self.profiles.resolve(name))
    }

    /// Checks a call before the gate: a tool the profile offers, with arguments that fit its
    /// schema. Unknown tools are reported to the model, not run.
    fn check_call(&self, call: &ParsedCall, prepared: &Prepared) -> Result<(), String> {
        let offered = &prepared.offered;
        let Some(tool) = prepared.tools.get(&call.tool) else {
            let mut known: Vec<&String> = offered.iter().collect();
            known.sort();
            return Err(format!(
                "there is no tool named {:?}; the tools are: {}",
                call.tool,
                known
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        if !offered.contains(&call.tool) {
            return Err(format!(
                "the tool {:?} is not available in this channel's profile",
                call.tool
            ));
        }
        let mut arguments = call.arguments.clone();
        arguments.remove(crate::core::tools::RISK_LEVEL_PARAM);
        check_arguments(&tool.parameters(), &arguments)
            .map_err(|problem| format!("the arguments of {} do not fit: {problem}", call.tool))
    }

    /// Writes a call's audit record. The store retries while the database restarts; if it
    /// still cannot take the record, the record is kept in [`Agent::unwritten_audit`] (never
    /// dropped), the channel is told, and no tool runs until it is written.
    async fn audit(&self, record: AuditRecord) {
        let channel = record.channel.as_str();
        if let Err(e) = self
            .patiently(channel, self.store.record_audit(&record))
            .await
        {
            tracing::error!(error = %e, tool = %record.tool, run_id = %record.run_id, "could not write the audit record; kept until the store answers");
            self.emit(
                channel,
                AgentEvent::Notice {
                    message: format!(
                        "the audit record of `{}` could not be written yet ({e}); it is kept and will be written when the state database answers again, and no tool runs until then",
                        record.tool
                    ),
                },
            );
            self.unwritten_audit.lock().await.push(record);
        }
    }

    /// Writes the audit records kept while the store was unreachable, oldest first; stops at
    /// the first failure and keeps the rest. Returns how many it wrote. Runs before every
    /// tool execution, after every run, and from the front end's periodic sweep.
    pub async fn flush_audit(&self) -> Result<usize, StoreError> {
        let mut spool = self.unwritten_audit.lock().await;
        let mut written = 0;
        while let Some(record) = spool.first() {
            self.store.record_audit(record).await?;
            spool.remove(0);
            written += 1;
        }
        if written > 0 {
            tracing::info!(
                written,
                "audit records kept during a store outage were written"
            );
        }
        Ok(written)
    }

    /// At shutdown: writes the kept audit records, or, if the store still does not answer,
    /// logs each one (without its arguments, which may hold secrets) at error level so an
    /// operator can restore them.
    pub async fn flush_audit_or_log(&self) {
        if let Err(e) = self.flush_audit().await {
            let spool = self.unwritten_audit.lock().await;
            for record in spool.iter() {
                tracing::error!(
                    error = %e,
                    at = record.at,
                    run_id = %record.run_id,
                    channel = %record.channel,
                    user = %record.user,
                    tool = %record.tool,
                    decision = %record.decision,
                    source = %record.source,
                    outcome = %record.outcome,
                    approval_id = record.approval_id.as_deref().unwrap_or(""),
                    duration_ms = record.duration_ms,
                    "an audit record could not be written before exit"
                );
            }
        }
    }

    /// Awaits a store operation; if it takes longer than `store_notice_after` (the store is
    /// retrying while the database restarts), tells the channel why nothing happens.
    async fn patiently<T>(
        &self,
        channel: &str,
        operation: impl std::future::Future<Output = T>,
    ) -> T {
        tokio::pin!(operation);
        tokio::select! {
            done = &mut operation => return done,
            _ = tokio::time::sleep(self.limits.store_notice_after) => {}
        }
        self.emit(
            channel,
            AgentEvent::Notice {
                message: STORE_SLOW.to_owned(),
            },
        );
        operation.await
    }

    fn not_run(
        &self,
        channel: &str,
        call: &ParsedCall,
        status: CallOutcome,
        reason: &str,
        extra: Value,
    ) -> CallResult {
        self.emit(
            channel,
            AgentEvent::CallNotRun {
                call_id: call.id.clone(),
                tool: call.tool.clone(),
                status,
                reason: reason.to_owned(),
            },
        );
        not_run_result(status, reason, extra)
    }

    fn emit(&self, channel: &str, event: AgentEvent) {
        self.events.emit(channel, &event);
    }
}

/// The result the model gets for a call that did not run (see [`Agent::not_run`], which
/// also tells the channel).
fn not_run_result(status: CallOutcome, reason: &str, extra: Value) -> CallResult {
    let mut result = json!({ "status": status, "reason": reason });
    if let (Some(object), Value::Object(extra)) = (result.as_object_mut(), extra) {
        object.extend(extra);
    }
    CallResult {
        text: result.to_string(),
        ran: false,
        outcome: status,
        output_bytes: 0,
        ends_run: None,
    }
}

fn slot_id_and_tool(slot: &CallSlot) -> (&str, &str) {
    match slot {
        CallSlot::Call(call) => (&call.id, &call.tool),
        CallSlot::Malformed { id, tool, .. } => (id, tool),
    }
}

fn status_json(status: &str, reason: &str) -> String {
    json!({ "status": status, "reason": reason }).to_string()
}

fn unix_seconds(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The arguments, shortened for the audit log.
/// The definitions of the tools in `tools` that `profile` offers.
fn offered_definitions(tools: &ToolSet, profile: &Profile) -> Vec<ToolDefinition> {
    tools
        .definitions()
        .into_iter()
        .filter(|definition| profile.offers_tool(&definition.name))
        .collect()
}

fn summarize(arguments: &serde_json::Map<String, Value>) -> String {
    crate::core::tools::shorten(&canonical_json(&Value::Object(arguments.clone())), 500)
}

/// SHA-256 (hex) of the canonical JSON of the arguments.
pub fn arguments_hash(arguments: &serde_json::Map<String, Value>) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(canonical_json(&Value::Object(arguments.clone())).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new id for runs and approvals: unique across processes and restarts.
pub fn new_id() -> String {
    // UUIDv7: time-ordered (ids sort by creation, as the store's listings expect) and
    // unique across processes that share one PostgreSQL; `uuid` makes them from the clock
    // and a random part, which a per-process counter could not.
    uuid::Uuid::now_v7().simple().to_string()
}
