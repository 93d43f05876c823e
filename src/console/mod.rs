//! `riskgate console`: the agent in a terminal. Messages are read line by line from stdin
//! (so it can be scripted); an approval shows the call and the reason and reads the next line
//! (`y`/`yes` confirms, anything else cancels). Commands: `/mode [strict|smart]`,
//! `/profile [sql|ops]`, `/reset`, `/status`, `/help`, `/quit`. End of input ends the session
//! after the current run. `--json` prints one JSON object per event instead of text.

mod render;

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;

use crate::config::Settings;
use crate::core::agent::{Agent, AgentEvent, Inbound};
use crate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChannelSettings, EventSink,
};
use crate::core::prompt::PROFILES;
use crate::core::risk::ChannelMode;
use crate::core::tools::BoxFuture;

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
}

impl EventSink for ConsoleEvents {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        if self.output.json {
            match serde_json::to_value(event) {
                Ok(value) => self.output.event(&value),
                Err(e) => tracing::error!(error = %e, "an event could not be encoded"),
            }
        } else if let Some(text) = render::event_text(event) {
            self.output.line(&text);
        }
    }
}

/// Lines typed by the person, shared by the main loop and the approval prompt.
type Lines = Arc<tokio::sync::Mutex<mpsc::Receiver<String>>>;

struct ConsoleApprovals {
    lines: Lines,
    output: Output,
    user: String,
}

impl ApprovalSurface for ConsoleApprovals {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            if !self.output.json {
                self.output.line(&render::approval_prompt(request));
            }
            let answer = self.lines.lock().await.recv().await;
            match answer {
                Some(line) if is_yes(&line) => ApprovalOutcome::Confirmed {
                    by: self.user.clone(),
                },
                Some(_) => ApprovalOutcome::Cancelled {
                    by: self.user.clone(),
                },
                None => ApprovalOutcome::Cancelled {
                    by: "end of input".to_owned(),
                },
            }
        })
    }
}

fn is_yes(line: &str) -> bool {
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Runs the console until `/quit` or the end of input.
pub async fn run(settings: Settings, options: ConsoleOptions) -> Result<(), ConsoleError> {
    let model = crate::app::model_client(&settings)?;
    check_reachable(model.endpoint()).await?;

    let output = Output {
        out: Arc::new(Mutex::new(Box::new(std::io::stdout()))),
        json: options.json,
    };
    let (tx, rx) = mpsc::channel::<String>(64);
    let interactive = std::io::stdin().is_terminal();
    // Reading stdin blocks; a thread feeds the lines in.
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            match line {
                Ok(line) => {
                    if tx.blocking_send(line).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "stdin could not be read");
                    break;
                }
            }
        }
    });
    let lines: Lines = Arc::new(tokio::sync::Mutex::new(rx));
    let store = crate::app::cache_history(
        Arc::new(crate::app::open_store(&settings).await?),
        &settings,
    );
    // Approvals a stopped console left waiting can no longer be answered.
    crate::app::abandon_orphaned(store.as_ref()).await?;
    let agent = crate::app::build_agent(
        &settings,
        Arc::new(model),
        store.clone(),
        Arc::new(ConsoleApprovals {
            lines: lines.clone(),
            output: output.clone(),
            user: options.user.clone(),
        }),
        Arc::new(ConsoleEvents {
            output: output.clone(),
        }),
    )?;

    if interactive && !options.json {
        output.line(&format!(
            "riskgate console: model {} at {}. Type a message, or /help.",
            settings.llm.model, settings.llm.base_url
        ));
    }
    loop {
        let next = lines.lock().await.recv().await;
        let Some(line) = next else { break };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if let Some(command) = text.strip_prefix('/') {
            if !command_line(&agent, &options, &output, command).await {
                break;
            }
            continue;
        }
        agent
            .run(&Inbound {
                channel: options.channel.clone(),
                author: options.user.clone(),
                author_name: options.user.clone(),
                text: text.to_owned(),
            })
            .await;
    }
    // Audit records kept during a store outage: written now, or logged if it persists.
    agent.flush_audit_or_log().await;
    Ok(())
}

/// Handles a `/command`; `false` ends the session.
async fn command_line(
    agent: &Agent,
    options: &ConsoleOptions,
    output: &Output,
    command: &str,
) -> bool {
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default().to_ascii_lowercase();
    let argument = words.next();
    let channel = options.channel.as_str();
    let current = match agent.channel_settings(channel).await {
        Ok(settings) => settings,
        Err(e) => {
            output.notice("error", &e.to_string(), json!({}));
            return true;
        }
    };
    match (name.as_str(), argument) {
        ("quit" | "exit", _) => return false,
        ("mode", None) => output.notice(
            "mode",
            &format!("mode: {}", current.mode),
            json!({ "mode": current.mode.as_str() }),
        ),
        ("mode", Some(value)) => match value.parse::<ChannelMode>() {
            Ok(mode) => {
                let changed = ChannelSettings { mode, ..current };
                save(agent, channel, &changed, &options.user, output).await;
                output.notice(
                    "mode",
                    &format!("mode set to {mode}"),
                    json!({ "mode": mode.as_str() }),
                );
            }
            Err(problem) => output.notice("error", &problem, json!({})),
        },
        ("profile", None) => output.notice(
            "profile",
            &format!("profile: {}", current.profile),
            json!({ "profile": current.profile }),
        ),
        ("profile", Some(value)) if PROFILES.contains(&value) => {
            let changed = ChannelSettings {
                profile: value.to_owned(),
                ..current
            };
            save(agent, channel, &changed, &options.user, output).await;
            output.notice(
                "profile",
                &format!("profile set to {value}"),
                json!({ "profile": value }),
            );
        }
        ("profile", Some(value)) => output.notice(
            "error",
            &format!("unknown profile {value:?} (expected sql or ops)"),
            json!({}),
        ),
        ("reset", _) => match agent.store.clear(channel).await {
            Ok(()) => output.notice("reset", "conversation cleared", json!({})),
            Err(e) => output.notice("error", &e.to_string(), json!({})),
        },
        ("status", _) => output.notice(
            "status",
            &format!(
                "mode: {}, profile: {}, protocol: {:?}, tools: {}",
                current.mode,
                current.profile,
                agent.protocol,
                agent
                    .tool_definitions(&current.profile)
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            json!({ "mode": current.mode.as_str(), "profile": current.profile }),
        ),
        ("help", _) => output.notice(
            "help",
            "commands: /mode [strict|smart], /profile [sql|ops], /reset, /status, /quit",
            json!({}),
        ),
        (other, _) => output.notice(
            "error",
            &format!("unknown command /{other}; try /help"),
            json!({}),
        ),
    }
    true
}

async fn save(
    agent: &Agent,
    channel: &str,
    settings: &ChannelSettings,
    user: &str,
    output: &Output,
) {
    if let Err(e) = agent
        .store
        .set_channel_settings(channel, settings, user)
        .await
    {
        output.notice("error", &e.to_string(), json!({}));
    }
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
