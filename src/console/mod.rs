//! `riskgate console`: the agent in a terminal. Messages are read line by line from stdin
//! (so it can be scripted); an approval shows the call and the reason and takes the next line
//! read after it was shown (`y`/`yes` confirms, `n`/`no` or Enter alone cancels, `n` and a
//! reason cancels saying why, `a` confirms and allows similar calls where offered; anything
//! else is asked again). Commands:
//! `/mode [strict|smart]`, `/profile [sql|ops]` (the agent's profiles), `/reset`, `/status`,
//! `/help`, `/quit`.
//! `--json` prints one JSON object per event instead of text. Where stdin and stdout are a
//! terminal (and not `--json`), lines are typed in a line editor with the session's history
//! (`editor.rs`); piped input is read as it comes.
//!
//! One thread reads stdin and routes each line as it is read (see [`Router`]): to the open
//! approval prompt if there is one, else to the queue of messages, which run one after
//! another. A line typed ahead, before a prompt was shown, stays a message: it is never
//! taken as an answer. End of input cancels an open prompt and ends the session after the
//! queued messages. A line that is not UTF-8 ends the input with an error naming it, after
//! the lines before it have run. The session exits with 1 if the model server failed a run.
//!
//! Ctrl-C (SIGINT, or the key in the line editor) interrupts the turn under way (see
//! [`Router::interrupt`]): an open prompt is cancelled as `n` would, the model request is
//! dropped, and lines typed during the turn are dropped; between turns, at an empty line, it
//! ends the session as Ctrl-D does. The console catches SIGINT before anything else starts,
//! so it never dies of one halfway through writing.

mod editor;
mod render;

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::config::Settings;
use crate::core::agent::{Agent, AgentEvent, Inbound, RunOutcome, StopReason};
use crate::core::commands::{self, Caller, ChannelCommand, CommandEnv};
use crate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use crate::core::tools::{BoxFuture, ToolRegistry};
use crate::llm::ContextWindow;

/// How long each of the questions that learn the model's context window may take.
const WINDOW_WAIT: Duration = Duration::from_secs(5);

/// Console options from the command line.
#[derive(Debug, Clone)]
pub struct ConsoleOptions {
    /// The conversation's name (its history and settings are kept under it).
    pub channel: String,
    /// Who is typing: the requester of approvals.
    pub user: String,
    /// One JSON object per event instead of text.
    pub json: bool,
}

/// Why the console could not run.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error(transparent)]
    App(#[from] crate::app::AppError),
    #[error(
        "the model server at {url} could not be reached ({reason}); check llm.base_url and that the server runs"
    )]
    Unreachable { url: String, reason: String },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "line {line} of the input is not valid UTF-8, so the input ended there (the lines before it were handled); convert the input to UTF-8, e.g. with iconv"
    )]
    InvalidUtf8 { line: usize },
    #[error("the input could not be read after line {line}: {reason}")]
    Input { line: usize, reason: String },
    #[error(
        "the model server failed {failed} of {runs} runs (the last: {last}); fix that and run the console again"
    )]
    ModelFailed {
        failed: usize,
        runs: usize,
        last: String,
    },
    #[error(transparent)]
    Store(#[from] crate::core::ports::StoreError),
}

/// Where everything is printed; shared by the event sink and the approval prompt.
#[derive(Clone)]
struct Output {
    out: Arc<Mutex<Box<dyn Write + Send>>>,
    json: bool,
}

impl Output {
    fn line(&self, text: &str) {
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
        }
    }

    fn event(&self, value: &serde_json::Value) {
        self.line(&value.to_string());
    }

    /// Text printed as it comes, without a line break of its own.
    fn part(&self, text: &str) {
        if let Ok(mut out) = self.out.lock() {
            let _ = write!(out, "{text}");
            let _ = out.flush();
        }
    }

    /// A console message: JSON as `{"event": kind, ...}`, text as the message.
    fn notice(&self, kind: &str, message: &str, extra: serde_json::Value) {
        if self.json {
            let mut value = json!({ "event": kind, "message": message });
            if let (Some(v), serde_json::Value::Object(extra)) = (value.as_object_mut(), extra) {
                v.extend(extra);
            }
            self.event(&value);
        } else {
            self.line(&render::clean(message));
        }
    }
}

struct ConsoleEvents {
    output: Output,
    router: Arc<Router>,
    /// The agent's tools: each call is shown as its tool shows it.
    tools: ToolRegistry,
    /// The console's user and conversation, for Discord mentions in what it prints.
    user: String,
    channel: String,
    /// A streamed answer printed as it comes (text output only: `--json` prints the reply).
    drafted: Mutex<render::Drafted>,
}

impl ConsoleEvents {
    fn names(&self) -> render::Names<'_> {
        render::Names {
            user: &self.user,
            channel: &self.channel,
        }
    }
}

impl EventSink for ConsoleEvents {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        // The prompt opens before it is shown: whoever answers after seeing it is heard.
        if matches!(event, AgentEvent::ApprovalRequested { .. }) {
            self.router.open_prompt();
        }
        // What a request cost is for `/status` and the counters, not the session's output.
        if matches!(event, AgentEvent::ModelUsage { .. }) {
            return;
        }
        if self.output.json {
            // A streamed answer's draft is for people: `--json` gives the reply, whole.
            if matches!(
                event,
                AgentEvent::ReplyPart { .. } | AgentEvent::DraftDropped
            ) {
                return;
            }
            match serde_json::to_value(event) {
                Ok(mut value) => {
                    if let (Some(object), Some(shown)) = (
                        value.as_object_mut(),
                        render::shown_fields(&self.tools.snapshot(), event),
                    ) {
                        object.extend(shown);
                    }
                    self.output.event(&value);
                }
                Err(e) => tracing::error!(error = %e, "an event could not be encoded"),
            }
        } else if let Some(text) = self
            .drafted
            .lock()
            .ok()
            .and_then(|mut drafted| drafted.output(event, self.names()))
        {
            self.output.part(&text);
        } else if let Some(text) = render::event_text(&self.tools.snapshot(), self.names(), event) {
            self.output.line(&text);
        }
    }
}

/// What the reader hands the main loop: a message line (with the number of interrupts
/// before it was read), or why the input ended early.
type Message = Result<(u64, String), ConsoleError>;

/// Routes each line of stdin the moment it is read: to the open approval prompt if there is
/// one, else to the message queue. Lines read before a prompt opened are already queued, so
/// type-ahead can never answer a prompt.
struct Router {
    state: Mutex<RouterState>,
}

#[derive(Default)]
struct RouterState {
    /// Where the answer to the open prompt goes.
    answer: Option<oneshot::Sender<String>>,
    /// Where the open prompt waits for it, until the approval surface takes it.
    waiting: Option<oneshot::Receiver<String>>,
    /// The input has ended: a prompt opened now is cancelled at once.
    closed: bool,
    /// The message queue; dropped when the input ends, which ends the session once the
    /// queued messages have run.
    messages: Option<mpsc::UnboundedSender<Message>>,
    /// The turn under way, which Ctrl-C interrupts; `None` between turns.
    turn: Option<CancellationToken>,
    /// How many turns Ctrl-C interrupted: a line read before the last one is dropped.
    interrupts: u64,
}

impl Router {
    fn state(&self) -> std::sync::MutexGuard<'_, RouterState> {
        // The state is two options and a flag: whatever a panicking holder left is usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a prompt: the next line read answers it.
    fn open_prompt(&self) {
        let (answer, waiting) = oneshot::channel();
        let mut state = self.state();
        if !state.closed {
            state.answer = Some(answer);
        }
        state.waiting = Some(waiting);
    }

    /// The answer of the prompt opened last, opening one if none is.
    fn take_prompt(&self) -> oneshot::Receiver<String> {
        if let Some(waiting) = self.state().waiting.take() {
            return waiting;
        }
        self.open_prompt();
        self.state()
            .waiting
            .take()
            .unwrap_or_else(|| oneshot::channel().1)
    }

    /// A line just read: the open prompt's answer, else a message.
    fn deliver(&self, line: String) {
        let mut state = self.state();
        let line = match state.answer.take() {
            // A prompt that expired in the meantime no longer listens: the line is a message.
            Some(answer) => match answer.send(line) {
                Ok(()) => return,
                Err(line) => line,
            },
            None => line,
        };
        if let Some(messages) = &state.messages {
            let _ = messages.send(Ok((state.interrupts, line)));
        }
    }

    /// A turn starts: Ctrl-C from now on interrupts it (cancels the token returned).
    fn begin_turn(&self) -> CancellationToken {
        let turn = CancellationToken::new();
        self.state().turn = Some(turn.clone());
        turn
    }

    /// The turn ended: Ctrl-C at an empty line ends the session again, and a prompt it
    /// left open (shown, never waited for) takes no line.
    fn end_turn(&self) {
        let mut state = self.state();
        state.turn = None;
        state.answer = None;
        state.waiting = None;
    }

    /// The token of the turn under way, or one nothing cancels between turns.
    fn turn(&self) -> CancellationToken {
        self.state().turn.clone().unwrap_or_default()
    }

    /// Whether a line read after `interrupts` interrupts was read before a later one, so
    /// it belongs to an interrupted turn.
    fn interrupted_since(&self, interrupts: u64) -> bool {
        self.state().interrupts > interrupts
    }

    /// Ctrl-C. During a turn it interrupts the turn (its open prompt is cancelled, see
    /// [`ConsoleApprovals`]) and drops the lines read until now; between turns it ends the
    /// input when the line being typed was empty (`line_empty`; a terminal in cooked mode
    /// has discarded it already) and otherwise only discards that line. It never ends the
    /// process itself: the session ends as at the end of input. Returns whether the input
    /// ended.
    fn interrupt(&self, line_empty: bool) -> bool {
        let mut state = self.state();
        match &state.turn {
            // A second Ctrl-C while the turn winds down only interrupts it again.
            Some(turn) => {
                turn.cancel();
                state.interrupts += 1;
                false
            }
            None if line_empty => {
                drop(state);
                self.close(None);
                true
            }
            None => false,
        }
    }

    /// The input ended, with an error or without: an open prompt is cancelled, and the
    /// queue ends after the error, if any.
    fn close(&self, error: Option<ConsoleError>) {
        let mut state = self.state();
        state.closed = true;
        state.answer = None;
        if let (Some(messages), Some(error)) = (state.messages.take(), error) {
            let _ = messages.send(Err(error));
        }
    }
}

/// Reads `input` line by line into `router` until it ends or a line is not UTF-8.
fn read_input(mut input: impl BufRead, router: &Router) {
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return router.close(None),
            Ok(_) => {
                number += 1;
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                match String::from_utf8(std::mem::take(&mut line)) {
                    Ok(text) => router.deliver(text),
                    Err(_) => {
                        return router.close(Some(ConsoleError::InvalidUtf8 { line: number }));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return router.close(Some(ConsoleError::Input {
                    line: number,
                    reason: e.to_string(),
                }));
            }
        }
    }
}

/// Starts reading stdin on a thread that routes the lines as they come (reading blocks):
/// with the line editor when `edit` and both ends are a terminal, else line by line.
/// Returns where output goes.
fn start_reading(router: Arc<Router>, edit: bool) -> Box<dyn Write + Send> {
    if edit && std::io::stdout().is_terminal() {
        match editor::start(router.clone()) {
            Ok(out) => return out,
            Err(e) => {
                tracing::warn!(error = %e, "the line editor could not start; reading plain lines");
            }
        }
    }
    std::thread::spawn(move || read_input(std::io::stdin().lock(), &router));
    Box::new(std::io::stdout())
}

struct ConsoleApprovals {
    router: Arc<Router>,
    output: Output,
    user: String,
    tools: ToolRegistry,
}

impl ApprovalSurface for ConsoleApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            let turn = self.router.turn();
            let interrupted = || ApprovalOutcome::Cancelled {
                by: self.user.clone(),
                reason: None,
            };
            let mut answer = self.router.take_prompt();
            // A later call of an interrupted turn is cancelled without being shown.
            if turn.is_cancelled() {
                return interrupted();
            }
            if !self.output.json {
                self.output.line(&render::approval_prompt(
                    &self.tools.snapshot(),
                    request,
                    std::time::SystemTime::now(),
                ));
            }
            let offered = request.similar.is_some();
            loop {
                let line = tokio::select! {
                    // Ctrl-C: cancelled by the person at the console, as `n` would.
                    () = turn.cancelled() => return interrupted(),
                    line = &mut answer => line,
                };
                let Ok(line) = line else {
                    return ApprovalOutcome::Cancelled {
                        by: "end of input".to_owned(),
                        reason: None,
                    };
                };
                if let Some(outcome) = prompt_answer(&line, &self.user, offered) {
                    return outcome;
                }
                // The next line read after saying so answers.
                answer = self.router.take_prompt();
                self.output.notice(
                    "unclear_answer",
                    &render::unclear_answer(&line, offered),
                    json!({ "approval_id": request.id, "answer": line }),
                );
            }
        })
    }
}

/// What a line typed at the approval prompt means: `y` confirms, `a` confirms and allows
/// similar calls (where offered), `n` (or Enter alone, the default the prompt shows)
/// cancels, `n because ...` cancels with a reason. `None` for anything else ("yes please",
/// `a` where it is not offered): the prompt asks again rather than guess.
fn prompt_answer(line: &str, user: &str, similar_offered: bool) -> Option<ApprovalOutcome> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let (rest, by) = (rest.trim(), user.to_owned());
    Some(match word.to_ascii_lowercase().as_str() {
        "y" | "yes" if rest.is_empty() => ApprovalOutcome::Confirmed { by },
        "a" | "allow" if rest.is_empty() && similar_offered => ApprovalOutcome::AllowSimilar { by },
        "" | "n" | "no" => ApprovalOutcome::Cancelled {
            by,
            reason: (!rest.is_empty()).then(|| rest.to_owned()),
        },
        _ => return None,
    })
}

/// Runs the console until `/quit` or the end of input.
pub async fn run(settings: Settings, options: ConsoleOptions) -> Result<(), ConsoleError> {
    let model = Arc::new(crate::app::model_client(&settings)?);
    check_reachable(model.endpoint()).await?;
    // The model's window, for requests and `/status`: asked beside the session, never
    // holding it up.
    let window: Arc<OnceLock<ContextWindow>> = Arc::default();
    tokio::spawn({
        let (model, window) = (model.clone(), window.clone());
        let setting = settings.llm.context_window_tokens;
        let (llm, run_timeout_secs) = (settings.llm.clone(), settings.agent.run_timeout_secs);
        async move {
            let found = model.context_window(setting, WINDOW_WAIT).await;
            // Requests from now on are fitted to it.
            model.set_context_window(found);
            for warning in llm.timing_warnings(found.tokens, run_timeout_secs) {
                tracing::warn!("{warning}");
            }
            let _ = window.set(found);
        }
    });

    let (tx, mut messages) = mpsc::unbounded_channel::<Message>();
    let router = Arc::new(Router {
        state: Mutex::new(RouterState {
            messages: Some(tx),
            ..RouterState::default()
        }),
    });
    // Before the line editor starts: it keeps the handler it finds and puts it back after
    // each line, so SIGINT never falls back to ending the process.
    catch_interrupts(router.clone())?;
    let interactive = std::io::stdin().is_terminal();
    let output = Output {
        out: Arc::new(Mutex::new(start_reading(
            router.clone(),
            interactive && !options.json,
        ))),
        json: options.json,
    };
    let store = crate::app::cache_history(
        Arc::new(crate::app::open_store(&settings).await?),
        &settings,
    );
    // Approvals a stopped console left waiting can no longer be answered.
    crate::app::abandon_orphaned(store.as_ref()).await?;
    let tools = crate::tools::builtin_registry(&settings);
    let mcp = crate::app::start_mcp(&settings, &tools).await;
    let agent = crate::app::build_agent_with(
        &settings,
        tools.clone(),
        model,
        store.clone(),
        Arc::new(ConsoleApprovals {
            router: router.clone(),
            output: output.clone(),
            user: options.user.clone(),
            tools: tools.clone(),
        }),
        Arc::new(ConsoleEvents {
            output: output.clone(),
            router: router.clone(),
            tools,
            user: options.user.clone(),
            channel: options.channel.clone(),
            drafted: Mutex::default(),
        }),
    )?;

    if interactive && !options.json {
        output.line(&format!(
            "riskgate console: model {} at {}. Type a message, or /help.",
            settings.llm.model, settings.llm.base_url
        ));
    }
    let mut runs = 0usize;
    let mut model_failures: Vec<String> = Vec::new();
    let mut ended = Ok(());
    while let Some(next) = messages.recv().await {
        let (interrupts, line) = match next {
            Ok(read) => read,
            Err(e) => {
                ended = Err(e);
                break;
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if router.interrupted_since(interrupts) {
            output.notice(
                "dropped",
                &format!("not sent, typed during the interrupted turn: {text}"),
                json!({ "text": text }),
            );
            continue;
        }
        let turn = router.begin_turn();
        if let Some(command) = text.strip_prefix('/') {
            let window = window.get().copied();
            let go_on =
                command_line(&agent, mcp.as_ref(), window, &options, &output, command).await;
            router.end_turn();
            if !go_on {
                break;
            }
            continue;
        }
        let inbound = Inbound {
            channel: options.channel.clone(),
            author: options.user.clone(),
            author_name: options.user.clone(),
            text: text.to_owned(),
        };
        let outcome = agent.run_interruptible(&inbound, &turn).await;
        router.end_turn();
        runs += 1;
        match outcome {
            RunOutcome::Stopped(StopReason::Model(e)) => model_failures.push(e.to_string()),
            RunOutcome::Stopped(StopReason::Interrupted) => output.notice(
                "interrupted",
                "turn interrupted (Ctrl-C): nothing more was asked of the model; type the next message",
                json!({}),
            ),
            _ => {}
        }
    }
    // Audit records kept during a store outage: written now, or logged if it persists.
    agent.flush_audit_or_log().await;
    if let Some(mcp) = mcp {
        mcp.shutdown().await;
    }
    ended?;
    match model_failures.pop() {
        Some(last) => Err(ConsoleError::ModelFailed {
            failed: model_failures.len() + 1,
            runs,
            last,
        }),
        None => Ok(()),
    }
}

/// Hands every SIGINT to `router` for the rest of the process (see [`Router::interrupt`]):
/// from now on the signal no longer ends it.
fn catch_interrupts(router: Arc<Router>) -> Result<(), ConsoleError> {
    let mut interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    tokio::spawn(async move {
        while interrupts.recv().await.is_some() {
            let _ = router.interrupt(true);
        }
    });
    Ok(())
}

/// Handles a `/command`; `false` ends the session. The channel commands are the core's
/// (`core::commands`): this only reads the line and renders the outcome.
async fn command_line(
    agent: &Agent,
    mcp: Option<&Arc<crate::mcp::McpHub>>,
    window: Option<ContextWindow>,
    options: &ConsoleOptions,
    output: &Output,
    command: &str,
) -> bool {
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default().to_ascii_lowercase();
    let rest: Vec<&str> = words.collect();
    let argument = (!rest.is_empty()).then(|| rest.join(" "));
    match name.as_str() {
        "quit" | "exit" => return false,
        "help" => {
            output.notice(
                "help",
                &format!(
                    "commands: /mode [strict|smart], /profile [{}], /status, /reset, /pending, /audit [n], /rules [revoke ID], /quit",
                    agent.profiles.names().collect::<Vec<_>>().join("|")
                ),
                json!({}),
            );
            return true;
        }
        _ => {}
    }
    let parsed = match ChannelCommand::parse(&name, argument.as_deref(), &agent.profiles) {
        Ok(parsed) => parsed,
        Err(problem) => {
            output.notice("error", &format!("{problem} Try /help."), json!({}));
            return true;
        }
    };
    let tools = agent.gate.tools();
    let env = CommandEnv {
        store: agent.store.as_ref(),
        defaults: &agent.defaults,
        model: &agent.model_name,
        protocol: agent.protocol.as_str(),
        profiles: &agent.profiles,
        tools: &tools,
        servers: &crate::app::mcp_status_lines(mcp),
        context_window: window.map(Into::into),
        usage: &agent.usage,
    };
    // The console's user runs the bot: they may change and revoke anything.
    let caller = Caller {
        user: &options.user,
        may_configure: true,
        may_approve: true,
    };
    let outcome = commands::apply(&env, &options.channel, caller, parsed).await;
    let (kind, text, data) = render::command_outcome(&tools, &name, outcome);
    let names = render::Names {
        user: &options.user,
        channel: &options.channel,
    };
    output.notice(kind, &render::readable(&text, names), data);
    true
}

/// Fails fast, with a clear message, when nothing listens at the model's address.
async fn check_reachable(endpoint: &url::Url) -> Result<(), ConsoleError> {
    let host = endpoint.host_str().unwrap_or("localhost").to_owned();
    let port = endpoint.port_or_known_default().unwrap_or(80);
    let connect = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port));
    match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(ConsoleError::Unreachable {
            url: endpoint.to_string(),
            reason: e.to_string(),
        }),
        Err(_) => Err(ConsoleError::Unreachable {
            url: endpoint.to_string(),
            reason: "no answer within 5 s".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str, offered: bool) -> Option<ApprovalOutcome> {
        prompt_answer(line, "dana", offered)
    }

    #[test]
    fn a_prompt_takes_yes_no_a_reason_or_a_and_nothing_else() {
        let by = || "dana".to_owned();
        for line in ["y", "YES", " yes "] {
            assert_eq!(
                answer(line, false),
                Some(ApprovalOutcome::Confirmed { by: by() })
            );
        }
        for line in ["", "n", "No"] {
            assert_eq!(
                answer(line, false),
                Some(ApprovalOutcome::Cancelled {
                    by: by(),
                    reason: None
                }),
                "{line:?}"
            );
        }
        assert_eq!(
            answer("n  use the backup ", false),
            Some(ApprovalOutcome::Cancelled {
                by: by(),
                reason: Some("use the backup".to_owned())
            })
        );
        assert_eq!(
            answer("a", true),
            Some(ApprovalOutcome::AllowSimilar { by: by() })
        );
        for line in ["yes please", "a", "sure", "nope", "y y", "ok"] {
            assert_eq!(answer(line, false), None, "{line:?} is asked again");
        }
    }

    fn router() -> (Router, mpsc::UnboundedReceiver<Message>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let router = Router {
            state: Mutex::new(RouterState {
                messages: Some(tx),
                ..RouterState::default()
            }),
        };
        (router, rx)
    }

    #[test]
    fn ctrl_c_interrupts_a_turn_and_ends_the_input_only_between_turns() {
        let (router, mut rx) = router();
        let turn = router.begin_turn();
        router.deliver("typed during the turn".to_owned());
        assert!(
            !router.interrupt(true),
            "a turn is interrupted, not the input"
        );
        assert!(turn.is_cancelled());
        assert!(
            !router.interrupt(true),
            "a second Ctrl-C only interrupts again"
        );
        router.end_turn();
        let Ok((read_at, _)) = rx.try_recv().expect("queued") else {
            panic!("a line")
        };
        assert!(router.interrupted_since(read_at), "typed before the Ctrl-C");
        router.deliver("typed after".to_owned());
        let Ok((read_at, _)) = rx.try_recv().expect("queued") else {
            panic!("a line")
        };
        assert!(!router.interrupted_since(read_at));
        assert!(
            !router.interrupt(false),
            "a line being typed is only discarded"
        );
        assert!(rx.try_recv().is_err(), "the input goes on");
        assert!(router.interrupt(true), "at an empty line it ends the input");
        assert!(matches!(
            rx.try_recv(),
            Err(mpsc::error::TryRecvError::Disconnected)
        ));
    }
}
