//! `riskgate console`: the agent in a terminal. Messages are read line by line from stdin
//! (so it can be scripted); an approval shows the call and the reason and takes the next line
//! read after it was shown (`y`/`yes` confirms, anything else cancels). Commands:
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

mod editor;
mod render;

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, oneshot};

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
    /// A streamed answer printed as it comes (text output only: `--json` prints the reply).
    drafted: Mutex<render::Drafted>,
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
            .and_then(|mut drafted| drafted.output(event))
        {
            self.output.part(&text);
        } else if let Some(text) = render::event_text(&self.tools.snapshot(), event) {
            self.output.line(&text);
        }
    }
}

/// What the reader hands the main loop: a message line, or why the input ended early.
type Message = Result<String, ConsoleError>;

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
            let _ = messages.send(Ok(line));
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
            let answer = self.router.take_prompt();
            if !self.output.json {
                self.output.line(&render::approval_prompt(
                    &self.tools.snapshot(),
                    request,
                    std::time::SystemTime::now(),
                ));
            }
            match answer.await {
                Ok(line) => prompt_answer(&line, &self.user, request.similar.is_some()),
                Err(_) => ApprovalOutcome::Cancelled {
                    by: "end of input".to_owned(),
                    reason: None,
                },
            }
        })
    }
}

/// What a line typed at the approval prompt means: `y` confirms, `a` confirms and allows
/// similar calls (where offered), `n because ...` cancels with a reason; anything else
/// cancels.
fn prompt_answer(line: &str, user: &str, similar_offered: bool) -> ApprovalOutcome {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let by = user.to_owned();
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" if rest.is_empty() => ApprovalOutcome::Confirmed { by },
        "a" | "allow" if rest.is_empty() && similar_offered => ApprovalOutcome::AllowSimilar { by },
        "n" | "no" if !rest.trim().is_empty() => ApprovalOutcome::Cancelled {
            by,
            reason: Some(rest.trim().to_owned()),
        },
        _ => ApprovalOutcome::Cancelled { by, reason: None },
    }
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
        async move {
            let found = model.context_window(setting, WINDOW_WAIT).await;
            // Requests from now on are fitted to it.
            model.set_context_window(found);
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
            router,
            tools,
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
        let line = match next {
            Ok(line) => line,
            Err(e) => {
                ended = Err(e);
                break;
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if let Some(command) = text.strip_prefix('/') {
            let window = window.get().copied();
            if !command_line(&agent, mcp.as_ref(), window, &options, &output, command).await {
                break;
            }
            continue;
        }
        let outcome = agent
            .run(&Inbound {
                channel: options.channel.clone(),
                author: options.user.clone(),
                author_name: options.user.clone(),
                text: text.to_owned(),
            })
            .await;
        runs += 1;
        if let RunOutcome::Stopped(StopReason::Model(e)) = outcome {
            model_failures.push(e.to_string());
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
    output.notice(kind, &text, data);
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
