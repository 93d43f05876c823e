//! The command line: `assess`, `check-config`, `console` and `run` (the Discord bot, which
//! SIGINT and SIGTERM stop at any moment, connected or not).

pub mod assess;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigError, Settings};
use crate::core::risk::ChannelMode;

/// riskgate: a team's LLM agent behind a risk gate.
#[derive(Debug, Parser)]
#[command(name = "riskgate", version, about, long_about = None)]
pub struct Cli {
    /// Configuration file (TOML). Default: $RISKGATE_CONFIG, else ./riskgate.toml if present.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide tool calls read as JSON lines on stdin; write one decision per line.
    ///
    /// Input:  {"tool": "...", "arguments": {...}, "mode"?: "smart|strict", "dialect"?: "postgres|mysql|sqlite"}
    /// Output: {"decision": "auto|confirm|deny", "source": "...", "reason": "..."}
    /// A bad line gets {"error": "..."} and the run goes on. Blank lines are skipped.
    /// Nothing is executed; no network or database is touched.
    Assess {
        /// The channel mode for lines that do not name one.
        #[arg(long, value_parser = parse_mode)]
        mode: Option<ChannelMode>,
    },
    /// Print the effective settings (secrets redacted), or say which key is wrong, and
    /// whether they are complete for `run` (a Discord token and channels to serve).
    CheckConfig {
        /// Exit with 2 when the settings are not complete for `run`.
        #[arg(long)]
        for_run: bool,
    },
    /// Run the Discord bot until SIGINT or SIGTERM.
    Run,
    /// Chat with the agent in the terminal: messages from stdin, approvals as y/n prompts.
    Console {
        /// The conversation's name.
        #[arg(long, default_value = "console")]
        channel: String,
        /// Your name, shown as the requester of approvals. Default: $USER.
        #[arg(long)]
        user: Option<String>,
        /// Print one JSON object per event instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn parse_mode(s: &str) -> Result<ChannelMode, String> {
    s.parse()
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("i/o error: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Console(#[from] crate::console::ConsoleError),
    #[error(transparent)]
    Bot(Box<crate::discord::BotError>),
    #[error(transparent)]
    Store(#[from] crate::core::ports::StoreError),
    #[error(transparent)]
    App(#[from] crate::app::AppError),
    #[error(
        "the configuration is not complete for `riskgate run` (check-config --for-run): missing {missing}"
    )]
    NotReadyForRun { missing: String },
}

impl From<crate::discord::BotError> for CliError {
    fn from(error: crate::discord::BotError) -> Self {
        Self::Bot(Box::new(error))
    }
}

impl CliError {
    /// Configuration problems exit with 2 (a bad settings file or variable, and the settings
    /// Discord refused: the token, the Message Content intent), everything else with 1.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Config(_) | Self::NotReadyForRun { .. } => ExitCode::from(2),
            Self::Bot(bot) if bot.is_setting() => ExitCode::from(2),
            Self::Io(_) | Self::Console(_) | Self::Bot(_) | Self::Store(_) | Self::App(_) => {
                ExitCode::from(1)
            }
        }
    }
}

/// Loads the settings and starts logging as they say.
fn load(path: Option<&std::path::Path>) -> Result<Settings, CliError> {
    let settings = Settings::load(path)?;
    crate::telemetry::init(&settings.log);
    Ok(settings)
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Assess { mode } => {
            let settings = load(cli.config.as_deref())?;
            let mode = mode.unwrap_or_else(|| settings.risk.mode());
            let gate = crate::tools::builtin_gate(&settings);
            let stdin = io::stdin().lock();
            let stdout = io::stdout().lock();
            match assess::run(&gate, mode, stdin, stdout) {
                // The reader went away (`| head`): nothing more to say.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(e.into()),
                Ok(_) => Ok(()),
            }
        }
        Command::Console {
            channel,
            user,
            json,
        } => {
            let settings = load(cli.config.as_deref())?;
            let user = user
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "you".to_owned());
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(crate::console::run(
                settings,
                crate::console::ConsoleOptions {
                    channel,
                    user,
                    json,
                },
            ))?;
            Ok(())
        }
        Command::Run => {
            let settings = load(cli.config.as_deref())?;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let result = runtime.block_on(run_bot(settings));
            // Tasks still trying to reach Discord or the store must not hold the exit up.
            runtime.shutdown_timeout(Duration::from_secs(2));
            result
        }
        Command::CheckConfig { for_run } => {
            let settings = load(cli.config.as_deref())?;
            let mut out = io::stdout().lock();
            writeln!(out, "# riskgate: effective settings (secrets redacted)")?;
            let readiness = RunReadiness::of(&settings.discord);
            for line in readiness.lines() {
                writeln!(out, "{line}")?;
            }
            writeln!(out, "{}", sandbox_status(&settings))?;
            for line in sql_accounts(&settings) {
                writeln!(out, "{line}")?;
            }
            for line in model_limits(&settings)? {
                writeln!(out, "{line}")?;
            }
            for line in preflight(&settings)? {
                writeln!(out, "{line}")?;
            }
            for line in mcp_servers(&settings)? {
                writeln!(out, "{line}")?;
            }
            out.write_all(settings.to_redacted_toml().as_bytes())?;
            match readiness.missing() {
                Some(missing) if for_run => Err(CliError::NotReadyForRun { missing }),
                _ => Ok(()),
            }
        }
    }
}

/// What `riskgate run` needs of the Discord settings and lacks, as `check-config` says it.
/// The console needs none of it.
struct RunReadiness {
    /// What is missing, each with where to set it.
    missing: Vec<&'static str>,
    /// What is not needed but worth saying.
    notes: Vec<&'static str>,
}

impl RunReadiness {
    fn of(discord: &crate::config::DiscordSettings) -> Self {
        let mut missing = Vec::new();
        let mut notes = Vec::new();
        if discord.token.is_none() {
            missing.push("a bot token (discord.token, DISCORD_TOKEN or DISCORD_TOKEN_FILE)");
        }
        match (discord.channels.is_empty(), discord.allow_dms) {
            (true, false) => missing.push("channels to serve (discord.channels, channel ids)"),
            (true, true) => notes.push("no discord.channels: the bot answers direct messages only"),
            (false, _) => {}
        }
        if discord.guild_id.is_none() {
            notes.push("no discord.guild_id: slash commands are registered globally, which Discord takes up to an hour to show; set it to your server's id to have them at once");
        }
        Self { missing, notes }
    }

    /// TOML comment lines: complete or not (the token only as set, never its value), and
    /// the notes.
    fn lines(&self) -> Vec<String> {
        let verdict = match self.missing() {
            None => "# complete for `riskgate run`: a Discord token is set and there is somewhere to answer".to_owned(),
            Some(missing) => format!(
                "# NOT complete for `riskgate run` (the console needs none of it): missing {missing}"
            ),
        };
        std::iter::once(verdict)
            .chain(self.notes.iter().map(|note| format!("# note: {note}")))
            .collect()
    }

    /// What is missing, joined, or `None` when nothing is.
    fn missing(&self) -> Option<String> {
        (!self.missing.is_empty()).then(|| self.missing.join("; "))
    }
}

/// The command sandbox on this machine, as TOML comment lines for `check-config`.
fn sandbox_status(settings: &Settings) -> String {
    use crate::tools::command::sandbox::{Sandbox, Support, Walls};
    let path = crate::tools::command::execute::safe_path(std::env::var_os("PATH").as_deref());
    let sandbox = Sandbox::new(&settings.command.sandbox, &settings.tools.workspace, &path);
    match sandbox.support() {
        Support::Ready { abi } => format!(
            "# command sandbox: ready (Landlock ABI {abi}, seccomp). Lines run without a click: read-only, no network;\n# confirmed lines: {}. Readable besides the workspace: {}",
            Walls::confirmed(&settings.command.sandbox),
            sandbox
                .read_paths()
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Support::Missing { reason } => format!(
            "# command sandbox: UNAVAILABLE ({reason}).\n# No command line runs without a person's confirmation, and confirmed lines run without the sandbox."
        ),
    }
}

/// The model's context window (the setting, else what the server states within 5 s, else
/// the default) and where the model's limits cannot fit each other, as TOML comment lines.
fn model_limits(settings: &Settings) -> Result<Vec<String>, CliError> {
    let setting = settings.llm.context_window_tokens;
    let window = match crate::app::model_client(settings) {
        Ok(model) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(model.context_window(setting, MODEL_CHECK_WAIT)),
        Err(_) => crate::llm::ContextWindow::resolve(setting, None),
    };
    let warnings = settings
        .llm
        .timing_warnings(window.tokens, settings.agent.run_timeout_secs);
    Ok(std::iter::once(format!("# model: {}", window.describe()))
        .chain(warnings.iter().map(|w| format!("# WARNING: {w}")))
        .collect())
}

/// Every tool's start-up checks (they may connect to the SQL targets), as TOML comment
/// lines; each tool's checks get 20 s.
fn preflight(settings: &Settings) -> Result<Vec<String>, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tools = crate::tools::builtin_tools(settings);
    let mut lines = Vec::new();
    for tool in tools.iter() {
        let name = tool.name();
        let findings = runtime.block_on(async {
            tokio::time::timeout(Duration::from_secs(20), tool.preflight()).await
        });
        match findings {
            Ok(findings) => lines.extend(findings.into_iter().map(|f| {
                let mark = if f.warning { "WARNING: " } else { "" };
                format!("# {mark}{}", f.message)
            })),
            Err(_) => lines.push(format!("# WARNING: the checks of {name} took over 20 s")),
        }
    }
    Ok(lines)
}

/// Each enabled MCP server started once (all at the same time, each within
/// `mcp.start_timeout_secs`) and stopped again: what it lists, or why it cannot start, as
/// TOML comment lines.
fn mcp_servers(settings: &Settings) -> Result<Vec<String>, CliError> {
    if settings.mcp.enabled_servers().next().is_none() {
        return Ok(Vec::new());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let checks = runtime.block_on(crate::mcp::check(&settings.mcp));
    Ok(checks.iter().map(|check| format!("# {check}")).collect())
}

/// Which account each SQL target's auto statements use, as TOML comment lines.
fn sql_accounts(settings: &Settings) -> Vec<String> {
    settings
        .sql
        .databases
        .iter()
        .map(|db| {
            let account = if db.readonly_url.is_some() {
                "its readonly_url".to_owned()
            } else {
                "its url, the same account as confirmed statements (set readonly_url to a read-only account: deploy/OPERATOR.md, \"Least-privilege database accounts\")".to_owned()
            };
            let privileged = if db.allow_privileged_auto {
                "even if that account is privileged (allow_privileged_auto = true)"
            } else {
                "unless that account is privileged (superuser, server files or programs): checked at the first auto statement"
            };
            format!(
                "# sql target {:?}: statements run without a click use {account}, {privileged}.",
                db.name
            )
        })
        .collect()
}

/// `riskgate run`: the store, the model client, the bot; SIGINT or SIGTERM stop it gracefully
/// at any moment, also while the store or Discord is still being reached (exit status 0).
/// `/healthz` and `/metrics` are served from the start (503 until Discord is ready), and the
/// model server is checked beside the connecting, without holding it up.
async fn run_bot(settings: Settings) -> Result<(), CliError> {
    // The signals are caught before anything connects, so a stop asked for while the store
    // or Discord does not answer ends the process instead of waiting for them.
    let stop = CancellationToken::new();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            wait_for_signal().await;
            tracing::info!("signal received: shutting down");
            stop.cancel();
        }
    });
    let observers = crate::discord::Observers {
        metrics: crate::metrics::Metrics::new(),
        health: crate::health::Health::new(Duration::from_secs(
            settings.observability.gateway_grace_secs,
        )),
    };
    serve_observability(&settings, &observers, &stop).await?;
    let model = std::sync::Arc::new(crate::app::model_client(&settings)?);
    tokio::spawn(check_model(
        model.clone(),
        observers.metrics.clone(),
        settings.llm.clone(),
        settings.agent.run_timeout_secs,
    ));
    let starting = async {
        let opened = std::sync::Arc::new(crate::app::open_store(&settings).await?);
        let probe = opened.clone();
        observers
            .health
            .set_store_probe(std::sync::Arc::new(move || {
                let store = probe.clone();
                Box::pin(async move { store.ping().await })
            }))
            .await;
        let store = crate::app::cache_history(opened, &settings);
        Ok::<_, CliError>(
            crate::discord::Bot::build_observed(&settings, model, store, observers).await?,
        )
    };
    let bot = tokio::select! {
        bot = starting => bot?,
        () = stop.cancelled() => {
            tracing::info!("stopped before the bot was connected");
            return Ok(());
        }
    };
    let bot_stop = bot.shutdown_token();
    tokio::spawn(async move {
        stop.cancelled().await;
        bot_stop.cancel();
    });
    bot.run().await?;
    Ok(())
}

/// Serves `/healthz` and `/metrics` on `observability.listen` (if set) until `stop`.
async fn serve_observability(
    settings: &Settings,
    observers: &crate::discord::Observers,
    stop: &CancellationToken,
) -> Result<(), CliError> {
    let listen = &settings.observability.listen;
    if listen.is_empty() {
        return Ok(());
    }
    let listener =
        tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| crate::app::AppError::Setting {
                key: "observability.listen",
                problem: format!("cannot listen on {listen}: {e}"),
            })?;
    tracing::info!(address = %listen, "serving /healthz and /metrics");
    tokio::spawn(crate::metrics::serve(
        listener,
        observers.metrics.clone(),
        observers.health.clone(),
        stop.clone(),
    ));
    Ok(())
}

/// How long the model server's check at start may take.
const MODEL_CHECK_WAIT: Duration = Duration::from_secs(5);

/// Asks the model server for its models once, at start; a failure is a warning naming
/// `llm.base_url` (its password redacted) and what failed, never a reason not to start.
/// Beside it, the model's context window is resolved and kept in `metrics` for `/status`.
async fn check_model(
    model: std::sync::Arc<crate::llm::OpenAiClient>,
    metrics: std::sync::Arc<crate::metrics::Metrics>,
    llm: crate::config::LlmSettings,
    run_timeout_secs: u64,
) {
    let (check, window) = tokio::join!(
        model.check_server(MODEL_CHECK_WAIT),
        model.context_window(llm.context_window_tokens, MODEL_CHECK_WAIT)
    );
    model.set_context_window(window);
    metrics.set_context_window(window);
    for warning in llm.timing_warnings(window.tokens, run_timeout_secs) {
        tracing::warn!(target: crate::telemetry::STATUS, "{warning}");
    }
    let base_url = crate::config::redact_password(&llm.base_url);
    let (answering, said) = check.judge(&llm.model, base_url.trim_end_matches('/'));
    let said = if answering {
        format!("{said}; {}", window.describe())
    } else {
        said
    };
    if answering {
        metrics.set_model_status(crate::metrics::ModelStatus::Answering(said));
    } else {
        tracing::warn!(
            target: crate::telemetry::STATUS,
            "the model server (llm.base_url) {said}; the bot runs meanwhile, answering each message with the model server's error"
        );
        metrics.set_model_status(crate::metrics::ModelStatus::Failing(said));
    }
}

async fn wait_for_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
