//! Typed settings, layered: built-in defaults -> an optional `riskgate.toml` (path from
//! `--config` or `RISKGATE_CONFIG`) -> environment variables `RISKGATE__SECTION__KEY`.
//!
//! Lists, `sql.databases` and secrets in files (`*_FILE`) have forms of their own in the
//! environment: see [`env`] and `deploy/riskgate.example.toml`.
//!
//! Every key is documented in `deploy/riskgate.example.toml`. Secrets are held as
//! [`SecretString`] and never printed: `riskgate check-config` shows them as `<redacted>`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};
use url::Url;

use crate::core::risk::{ChannelMode, GatePolicy};
use crate::core::tools::SqlDialect;

pub mod env;
pub mod profiles;
pub mod timing;

/// The environment variable that names the configuration file when `--config` is not given.
pub const CONFIG_PATH_ENV: &str = "RISKGATE_CONFIG";
/// The file read from the working directory when no path is given, if it exists.
pub const DEFAULT_CONFIG_FILE: &str = "riskgate.toml";
/// Shown in place of every secret.
pub const REDACTED: &str = "<redacted>";

/// A configuration that could not be loaded, or that loaded but makes no sense.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {path} does not exist")]
    MissingFile { path: PathBuf },
    #[error(
        "configuration file {path} is a directory, not a file: point --config or RISKGATE_CONFIG at the TOML file (e.g. {path}/riskgate.toml)"
    )]
    DirectoryGiven { path: PathBuf },
    #[error("could not load the configuration: {0}")]
    Load(#[from] config::ConfigError),
    #[error("environment variable {var}: {problem}")]
    Env { var: String, problem: String },
    #[error(
        "cannot read {path}, the file {var} names: {reason}. Put the value alone in that file (one trailing newline is fine) or point {var} at the right file"
    )]
    SecretFile {
        var: String,
        path: PathBuf,
        reason: String,
    },
    #[error("invalid value for `{key}`: {value}: {problem}")]
    Invalid {
        key: String,
        value: String,
        problem: String,
    },
    #[error(
        "`{key}` is no longer a setting ({why}): delete it from the configuration file, or unset {var}"
    )]
    Retired {
        key: &'static str,
        var: String,
        why: &'static str,
    },
}

/// Keys earlier versions read (`section.key`), and why they went: a configuration that
/// still sets one is told so by name instead of meeting serde's "unknown field".
const RETIRED_KEYS: &[(&str, &str)] = &[(
    "agent.remembered_profiles",
    "every run now reads its channel's settings before it asks the model",
)];

/// Fails on the first key of [`RETIRED_KEYS`] that `tree` (defaults, file and environment
/// merged) still sets.
fn reject_retired(tree: &config::Value) -> Result<(), ConfigError> {
    let config::ValueKind::Table(sections) = &tree.kind else {
        return Ok(());
    };
    for &(full, why) in RETIRED_KEYS {
        let Some((section, key)) = full.split_once('.') else {
            continue;
        };
        let set = matches!(
            sections.get(section).map(|value| &value.kind),
            Some(config::ValueKind::Table(keys)) if keys.contains_key(key)
        );
        if set {
            let var = format!("{}{}", env::PREFIX, full.replace('.', "__")).to_ascii_uppercase();
            return Err(ConfigError::Retired {
                key: full,
                var,
                why,
            });
        }
    }
    Ok(())
}

impl ConfigError {
    pub(crate) fn invalid(
        key: impl Into<String>,
        value: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self::Invalid {
            key: key.into(),
            value: value.into(),
            problem: problem.into(),
        }
    }
}

/// All settings.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub llm: LlmSettings,
    pub discord: DiscordSettings,
    pub store: StoreSettings,
    pub agent: AgentSettings,
    pub risk: RiskSettings,
    pub tools: ToolsSettings,
    pub sql: SqlSettings,
    pub command: CommandSettings,
    pub files: FileSettings,
    pub http: HttpSettings,
    pub output: OutputSettings,
    pub log: LogSettings,
    pub observability: ObservabilitySettings,
    pub mcp: crate::mcp::McpSettings,
    /// `[profiles.NAME]`: the operator's profiles (see [`profiles`]).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub profiles: std::collections::BTreeMap<String, profiles::ProfileSettings>,
}

/// The operators' HTTP port.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ObservabilitySettings {
    /// `host:port` for `/healthz` and Prometheus `/metrics` (`riskgate run`); empty: off.
    pub listen: String,
    /// How long Discord's gateway may stay disconnected (a resume, a reconnect) before
    /// `/healthz` answers 503.
    pub gateway_grace_secs: u64,
}

impl Default for ObservabilitySettings {
    fn default() -> Self {
        Self {
            listen: String::new(),
            gateway_grace_secs: 30,
        }
    }
}

/// Logging (to stderr).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `text` for people, `json` for log collectors (one object per line).
    pub format: String,
    /// A tracing filter such as `info` or `riskgate=debug,warn`; `RISKGATE_LOG` overrides it.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        Self {
            format: "text".to_owned(),
            level: "warn".to_owned(),
        }
    }
}

/// The OpenAI-compatible model endpoint (used by `console` and `run`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    pub base_url: String,
    /// Also read from `OPENAI_API_KEY`.
    #[serde(serialize_with = "redact_option")]
    pub api_key: Option<SecretString>,
    pub model: String,
    /// `native` (tool calls in the API) or `json` (tool calls written in the reply text).
    pub protocol: String,
    /// Sampling temperature; some reasoning models only accept their default: set it to a
    /// negative number to leave it out of requests.
    pub temperature: f32,
    /// Without streaming, one whole request, the model's reading of the prompt and its
    /// writing included: 270 s fits `max_tokens` (1024) at 5 tokens a second (205 s) and
    /// a minute for the prompt. With streaming, the wait for the answer to begin (the
    /// prompt's reading); the answer then goes on as long as it keeps coming (see
    /// `stream_idle_timeout_secs`), at most this plus `max_tokens` at 5 tokens a second.
    pub request_timeout_secs: u64,
    /// With streaming, the longest silence between two pieces of an answer that has begun:
    /// a server that stops writing for longer is given up on, and the run says so. Below
    /// `request_timeout_secs`; a model writing even 1 token a second never comes near 60 s.
    pub stream_idle_timeout_secs: u64,
    /// The reply's length cap in tokens, sent as `max_tokens` (0: none is sent). Without
    /// one, a rambling small model runs into the timeout while the server goes on
    /// generating, and the next requests queue behind it. 1024 leaves three quarters of
    /// a 4096-token window to the prompt and history, and takes 205 s at 5 tokens a
    /// second, within `request_timeout_secs`.
    pub max_tokens: u32,
    /// What kind of server this is, for the few request fields servers disagree on:
    /// `generic` (the default, what every server accepts) or `openai` (OpenAI's own API,
    /// whose newer models take the cap only as `max_completion_tokens`).
    pub server: String,
    /// Retries after a 429 or 5xx answer (with backoff, honouring Retry-After in seconds or
    /// as an HTTP date).
    pub max_retries: u32,
    /// The first backoff between retries; doubled each time, plus random jitter up to as
    /// much again, at most 30 s.
    pub retry_base_delay_ms: u64,
    /// The longest Retry-After the client waits out before asking again; a server that
    /// asks for more is not asked again in that run, and the channel is told when to try.
    pub max_retry_wait_secs: u64,
    /// How many tokens the model takes in one request (prompt, history and reply). 0: what
    /// the server states at start (vLLM's `max_model_len`, llama.cpp's `/props`, Ollama's
    /// `num_ctx` or its default), else 8192.
    pub context_window_tokens: u32,
    /// Ask for replies as a stream (server-sent events) and show each answer as it is
    /// written. A server that refuses to stream is asked again without it, once, and not
    /// asked to stream again while the process runs.
    pub stream: bool,
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            base_url: "http://127.0.0.1:11434/v1".to_owned(),
            api_key: None,
            model: "llama3.1".to_owned(),
            protocol: "native".to_owned(),
            temperature: 0.2,
            request_timeout_secs: 270,
            stream_idle_timeout_secs: 60,
            max_tokens: 1024,
            server: "generic".to_owned(),
            max_retries: 3,
            retry_base_delay_ms: 500,
            max_retry_wait_secs: 60,
            context_window_tokens: 0,
            stream: true,
        }
    }
}

/// The Discord connection (used by `run`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiscordSettings {
    /// Also read from `DISCORD_TOKEN`.
    #[serde(serialize_with = "redact_option")]
    pub token: Option<SecretString>,
    /// Test-only: routes serenity's REST and gateway traffic to a local fake.
    pub api_base_url: Option<String>,
    /// Test-only: the PEM certificate to trust for an `https://` `api_base_url`. The fake
    /// is then reached as discord.com itself, with serenity's rate limiter on as in
    /// production (with an `http://` URL the limiter is off: it follows no proxy).
    pub api_ca_pem: Option<String>,
    /// Slash commands are registered for this guild (instant) when set, else globally.
    pub guild_id: Option<u64>,
    /// Channels the bot serves, with the threads under them.
    pub channels: Vec<u64>,
    /// Members with one of these roles may confirm anyone's request.
    pub approver_roles: Vec<u64>,
    /// Members with one of these roles may change a channel's mode and profile (as may
    /// anyone with Manage Channels).
    pub admin_roles: Vec<u64>,
    /// Forbid confirming one's own request (cancelling stays allowed).
    pub require_different_approver: bool,
    /// Forbid confirming one's own request when the call is destructive (the class the
    /// destructive floor knows); other requests stay self-approvable.
    pub destructive_needs_other_approver: bool,
    /// Answer direct messages.
    pub allow_dms: bool,
    /// Messages waiting per channel while a run works; beyond that the bot says it is busy.
    pub queue_limit: u64,
    /// Sharding: the total number of shards (0: one process serves every guild), and this
    /// process's range `shard_first..=shard_last`.
    pub shard_total: u64,
    pub shard_first: u64,
    pub shard_last: u64,
    /// On SIGINT/SIGTERM, how long running steps may take to finish before the bot exits.
    pub shutdown_grace_secs: u64,
    /// Who may start runs: these members (user ids), and members with one of
    /// `allowed_roles`. Both empty: everyone who can write where the bot listens.
    pub allowed_users: Vec<u64>,
    pub allowed_roles: Vec<u64>,
    /// Per-channel lists that replace the two above in that channel (and its threads).
    pub channel_access: Vec<ChannelAccess>,
    /// Tell a member who may not start runs so, once per channel (else ignore them).
    pub notify_refused: bool,
    /// Messages one run may post besides its approvals and its reply (results, notices,
    /// refusals); the last of them carries the rest as one attached file, posted just
    /// before the reply.
    pub max_messages_per_run: u64,
    /// A text that would take more messages than this is posted as its start, with the
    /// whole text attached.
    pub max_parts_per_text: u64,
    /// Retries of a send that met a 5xx, a 429 or a dropped connection, with exponential
    /// backoff from `retry_base_ms` (with jitter, at most 10 s apart).
    pub send_retries: u64,
    pub retry_base_ms: u64,
    /// The longest rate-limit wait a send sits out (serenity waits exactly what Discord
    /// asks); a longer one ends that send with a logged error instead of holding the
    /// channel.
    pub max_rate_limit_wait_secs: u64,
    /// The largest attachment the bot downloads for the model, in bytes: a text file over it
    /// is named to the model as not read, and its download stops at this many bytes even
    /// when Discord declared it smaller.
    pub max_attachment_bytes: u64,
    /// Characters of one message's attachments the model reads at most, shared between
    /// them; the rest is cut with a note saying how much was left out.
    pub attachment_budget_chars: u64,
}

impl DiscordSettings {
    /// The address of a local fake Discord that speaks TLS (`api_base_url =
    /// https://IP:PORT`), which the bot reaches as discord.com.
    pub fn fake_tls_address(&self) -> Option<std::net::SocketAddr> {
        let url = Url::parse(self.api_base_url.as_deref()?).ok()?;
        if url.scheme() != "https" {
            return None;
        }
        let ip: std::net::IpAddr = url.host_str()?.trim_matches(['[', ']']).parse().ok()?;
        Some(std::net::SocketAddr::new(ip, url.port()?))
    }
}

/// Who may start runs in one channel, replacing `discord.allowed_users`/`allowed_roles`
/// there.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelAccess {
    pub channel: u64,
    pub allowed_users: Vec<u64>,
    pub allowed_roles: Vec<u64>,
}

impl Default for DiscordSettings {
    fn default() -> Self {
        Self {
            token: None,
            api_base_url: None,
            api_ca_pem: None,
            guild_id: None,
            channels: Vec::new(),
            approver_roles: Vec::new(),
            admin_roles: Vec::new(),
            require_different_approver: false,
            destructive_needs_other_approver: false,
            allow_dms: false,
            queue_limit: 5,
            shard_total: 0,
            shard_first: 0,
            shard_last: 0,
            shutdown_grace_secs: 30,
            allowed_users: Vec::new(),
            allowed_roles: Vec::new(),
            channel_access: Vec::new(),
            notify_refused: true,
            max_messages_per_run: 12,
            max_parts_per_text: 3,
            send_retries: 4,
            retry_base_ms: 500,
            max_rate_limit_wait_secs: 60,
            max_attachment_bytes: 262_144,
            attachment_budget_chars: 24_000,
        }
    }
}

/// Default of `store.retry_window_secs`: long enough for a PostgreSQL restart.
pub const DEFAULT_STORE_RETRY_WINDOW_SECS: u64 = 30;

/// Where the bot keeps its own state.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    #[serde(serialize_with = "redact_url_password")]
    pub url: String,
    /// Conversation messages older than this many days are deleted at start; 0 keeps them
    /// forever. The audit log and approvals are always kept.
    pub history_retention_days: u64,
    /// How often the bot marks overdue approvals expired and those of stopped runs
    /// abandoned, and edits their messages.
    pub sweep_interval_secs: u64,
    /// How long a store operation keeps retrying while the database is unreachable or
    /// restarting (connection refused or reset, PostgreSQL 57P01/57P03, ...) before it fails
    /// and the affected channel is told. 0 tries once.
    pub retry_window_secs: u64,
    /// PostgreSQL: connections of the store's pool at most (a share of the server's
    /// `max_connections`); the write batcher opens two more. SQLite always uses one writer
    /// and four readers.
    pub max_connections: u32,
    /// Channels whose recent conversation is kept in memory, so a run does not wait for
    /// the database to read it (each holds at most `agent.history_budget_chars`). 0 reads
    /// the database every time.
    pub history_cache_channels: usize,
    /// How often, while runs of this process wait for a person, one query asks the store
    /// whether another process sharing it (another shard) decided their approvals, so a
    /// decision made anywhere reaches the waiting run within about this long. A click
    /// handled by a process in which no run waits for it leaves a run that asked and still
    /// lives elsewhere three such intervals to go on before it continues the run itself.
    pub approval_watch_ms: u64,
}

impl Default for StoreSettings {
    fn default() -> Self {
        Self {
            url: "sqlite://riskgate.db".to_owned(),
            history_retention_days: 0,
            sweep_interval_secs: 15,
            retry_window_secs: DEFAULT_STORE_RETRY_WINDOW_SECS,
            max_connections: 16,
            history_cache_channels: 1000,
            approval_watch_ms: 1000,
        }
    }
}

impl StoreSettings {
    /// How long conversation messages are kept; `None` for ever.
    pub fn history_retention(&self) -> Option<std::time::Duration> {
        (self.history_retention_days > 0).then(|| {
            std::time::Duration::from_secs(self.history_retention_days.saturating_mul(86_400))
        })
    }

    /// `store.retry_window_secs` as a duration.
    pub fn retry_window(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.retry_window_secs)
    }
}

/// Limits of one agent run.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSettings {
    /// LLM calls per run at most.
    pub max_iterations: i64,
    /// Wall-clock time of a run, not counting time spent waiting for a person.
    pub run_timeout_secs: u64,
    /// How long an approval waits for a person before it expires.
    pub approval_timeout_secs: u64,
    /// How long a channel rule made with "Allow similar" lasts; 0: the choice is not
    /// offered.
    pub allow_similar_secs: u64,
    /// Characters of conversation history sent with each request (oldest turns dropped).
    pub history_budget_chars: u64,
    /// Characters of a person's message at most: a longer one is refused with a reply and
    /// never reaches the model or the history.
    pub max_message_chars: u64,
    /// Characters of the model's text in one reply at most: a longer one is cut, with a
    /// note, before it is shown, stored or sent again.
    pub max_reply_chars: u64,
    /// The prompt profile of a channel nobody has switched: `sql` or `ops`.
    pub default_profile: String,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            run_timeout_secs: 300,
            approval_timeout_secs: 600,
            allow_similar_secs: 3_600,
            history_budget_chars: 24_000,
            max_message_chars: 100_000,
            max_reply_chars: 20_000,
            default_profile: "ops".to_owned(),
        }
    }
}

/// The risk gate's policy.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RiskSettings {
    /// The mode of a channel nobody has switched: `smart` or `strict`.
    pub default_mode: String,
    /// When on, `risk_level: low` cannot auto-run a call known to be destructive.
    pub destructive_floor: bool,
}

impl Default for RiskSettings {
    fn default() -> Self {
        Self {
            default_mode: ChannelMode::Smart.as_str().to_owned(),
            destructive_floor: true,
        }
    }
}

impl RiskSettings {
    /// The policy part the pure gate needs.
    pub fn gate_policy(&self) -> GatePolicy {
        GatePolicy {
            destructive_floor: self.destructive_floor,
        }
    }

    /// The validated default mode.
    pub fn mode(&self) -> ChannelMode {
        self.default_mode.parse().unwrap_or_default()
    }
}

/// The tools and the directory they work in.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsSettings {
    /// Every file and command path must stay inside this directory.
    pub workspace: PathBuf,
    pub execute_sql: ToolRules,
    pub execute_command: ToolRules,
    pub file_operations: ToolRules,
    pub http_request: ToolRules,
}

impl Default for ToolsSettings {
    fn default() -> Self {
        Self {
            workspace: PathBuf::from("./workspace"),
            execute_sql: ToolRules::default(),
            execute_command: ToolRules::default(),
            file_operations: ToolRules::default(),
            http_request: ToolRules::default(),
        }
    }
}

/// An operator's additions to one tool's gate. What an entry means depends on the tool;
/// `deploy/riskgate.example.toml` says it for each.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolRules {
    /// A disabled tool is denied by policy.
    pub enabled: bool,
    /// Entries treated as clearly safe.
    pub allow: Vec<String>,
    /// Entries nobody may run.
    pub deny: Vec<String>,
}

impl Default for ToolRules {
    fn default() -> Self {
        Self {
            enabled: true,
            allow: Vec::new(),
            deny: Vec::new(),
        }
    }
}

/// Target databases of `execute_sql` and how statements run there.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SqlSettings {
    /// Rows returned at most; the rest is never fetched.
    pub row_limit: u64,
    /// A statement running longer is cancelled by the engine.
    pub statement_timeout_ms: u64,
    /// Connecting longer than this fails the call.
    pub connect_timeout_ms: u64,
    /// Bytes one result value may take; a longer value fails the call with a message, read
    /// no further (SQLite refuses to build it at all).
    pub max_value_bytes: u64,
    /// Bytes all the values of one result may take together; reading stops there.
    pub max_result_bytes: u64,
    /// Characters of an engine's error text kept; the rest is cut before it goes anywhere.
    pub max_error_chars: u64,
    /// Characters the databases' tables and columns may take in the system prompt of the
    /// profiles that offer `execute_sql`, all databases together; a larger schema is
    /// summarised (every table named with its column count, columns for as many as fit).
    /// 0: the prompt names no tables.
    pub schema_budget_chars: u64,
    /// Seconds the schema read for the prompt is kept before a run's start reads it again;
    /// a confirmed statement (which may have created or changed a table) makes the next run
    /// read it at once. 0: read again only after a confirmed statement.
    pub schema_refresh_secs: u64,
    /// Named databases; the first is the default. Empty: a demo SQLite database in the
    /// workspace.
    pub databases: Vec<DatabaseSettings>,
}

impl Default for SqlSettings {
    fn default() -> Self {
        Self {
            row_limit: 200,
            statement_timeout_ms: 10_000,
            connect_timeout_ms: 5_000,
            max_value_bytes: 1024 * 1024,
            max_result_bytes: 8 * 1024 * 1024,
            max_error_chars: 2_000,
            schema_budget_chars: 3_000,
            schema_refresh_secs: 600,
            databases: Vec::new(),
        }
    }
}

/// How `execute_command` runs a line.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandSettings {
    /// The whole process group is killed after this long.
    pub timeout_secs: u64,
    /// Bytes kept of stdout and of stderr each; the rest is counted and dropped.
    pub output_limit_bytes: u64,
    /// Environment variables passed to commands besides PATH, HOME and LANG. The bot's own
    /// secrets are never passed, whatever this says.
    pub env_allow: Vec<String>,
    /// The operating-system sandbox every line runs in.
    pub sandbox: SandboxSettings,
}

impl Default for CommandSettings {
    fn default() -> Self {
        Self {
            timeout_secs: 30,
            output_limit_bytes: 1024 * 1024,
            env_allow: Vec::new(),
            sandbox: SandboxSettings::default(),
        }
    }
}

/// The sandbox of `execute_command` (Landlock and seccomp on Linux). A line that runs without
/// a person's click always runs inside it, read-only and without network; where the kernel
/// cannot build it, no line runs without a click. Confirmed lines run inside it too, with
/// what the settings below allow.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    /// Whether confirmed lines run sandboxed (`true`) or as the bot's user with no walls
    /// but the scrubbed environment, the timeout and the output caps (`false`).
    pub confirmed_sandboxed: bool,
    /// Confirmed lines may write in the workspace.
    pub confirmed_workspace_write: bool,
    /// Confirmed lines may use the network.
    pub confirmed_network: bool,
    /// Extra paths every line may read (and run programs from), besides the system
    /// directories, the directories of the programs on PATH and the workspace.
    pub read_paths: Vec<PathBuf>,
    /// Memory of the whole line, in bytes: every process it starts, shared mappings and its
    /// tmpfs included (a control group per line, where the bot may make one); also each
    /// process's heap (RLIMIT_DATA).
    pub memory_bytes: u64,
    /// CPU seconds per process (RLIMIT_CPU).
    pub cpu_secs: u64,
    /// Processes and threads of the whole line (a control group per line); also of the
    /// bot's user per process (RLIMIT_NPROC, which the kernel does not apply to root).
    pub processes: u64,
    /// Bytes a line may keep in its private directory (HOME, TMPDIR, XDG directories): a
    /// tmpfs of this size, where the bot may make a view per line.
    pub tmp_bytes: u64,
    /// Files every line's private HOME starts with: a path relative to HOME (".gitconfig",
    /// ".npmrc", ".config/pip/pip.conf") to the operator's file, read at start. Nothing else
    /// of any per-user configuration reaches a line: each starts with an empty HOME.
    pub home_files: std::collections::BTreeMap<String, PathBuf>,
    /// Largest file a process may write (RLIMIT_FSIZE), in bytes.
    pub file_size_bytes: u64,
    /// Open files per process (RLIMIT_NOFILE).
    pub open_files: u64,
    /// Whether the workspace is watched (inotify) for files with a hard link outside it and
    /// special files: walked once, then followed
    /// by the kernel's change events, so a line run without a click needs no walk of it.
    /// `false`, or where inotify cannot be used (`check-config` says why), every such line
    /// first walks the whole workspace.
    pub watch_workspace: bool,
    /// Entries of the workspace walked before each line run without a click where the
    /// workspace is not watched; a larger workspace gets no such lines there. A watched
    /// workspace is walked once, whatever its size.
    pub hard_link_scan_limit: u64,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            confirmed_sandboxed: true,
            confirmed_workspace_write: true,
            confirmed_network: true,
            read_paths: Vec::new(),
            memory_bytes: 1024 * 1024 * 1024,
            cpu_secs: 60,
            processes: 512,
            tmp_bytes: 512 * 1024 * 1024,
            home_files: std::collections::BTreeMap::new(),
            file_size_bytes: 256 * 1024 * 1024,
            open_files: 1024,
            watch_workspace: true,
            hard_link_scan_limit: 200_000,
        }
    }
}

/// How `file_operations` reads and lists.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct FileSettings {
    /// Bytes read from a file at most.
    pub read_limit_bytes: u64,
    /// Entries listed at most.
    pub list_limit: u64,
}

impl Default for FileSettings {
    fn default() -> Self {
        Self {
            read_limit_bytes: 1024 * 1024,
            list_limit: 500,
        }
    }
}

/// How much of a tool's output the LLM reads.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputSettings {
    /// Characters of tool output the LLM reads per call; the rest is cut with a note.
    pub llm_budget_chars: u64,
    /// Characters of a chat rendering before the full output goes to an attachment.
    pub chat_budget_chars: u64,
}

impl Default for OutputSettings {
    fn default() -> Self {
        Self {
            llm_budget_chars: 8_000,
            chat_budget_chars: 1_800,
        }
    }
}

/// One target database.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSettings {
    pub name: String,
    /// How confirmed statements connect (a person approved that exact statement).
    #[serde(serialize_with = "redact_secret_url")]
    pub url: SecretString,
    /// How statements that run without a click connect: a least-privilege, read-only
    /// account. Left out, `url` is used for both. Either way riskgate checks the account
    /// auto runs use, and refuses auto runs on a privileged one (see `allow_privileged_auto`).
    #[serde(
        default,
        serialize_with = "redact_option_url",
        skip_serializing_if = "Option::is_none"
    )]
    pub readonly_url: Option<SecretString>,
    /// Lets statements run without a click even when their account is privileged (a
    /// PostgreSQL superuser or member of pg_read_server_files and kin, a MySQL account with
    /// SUPER or FILE). Off by default: such an account reads server files and more, whatever
    /// the read-only transaction says.
    #[serde(default)]
    pub allow_privileged_auto: bool,
}

impl DatabaseSettings {
    /// A target reached with one URL for every call, and the default checks.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            url: SecretString::from(url.into()),
            readonly_url: None,
            allow_privileged_auto: false,
        }
    }

    /// The URL statements that run without a click use.
    pub fn auto_url(&self) -> &SecretString {
        self.readonly_url.as_ref().unwrap_or(&self.url)
    }

    /// The dialect implied by the URL's scheme.
    pub fn dialect(&self) -> Result<SqlDialect, String> {
        dialect_of_url(self.url.expose_secret())
    }
}

/// Which dialect a database URL speaks, from its scheme.
pub fn dialect_of_url(url: &str) -> Result<SqlDialect, String> {
    let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or_default();
    match scheme.to_ascii_lowercase().as_str() {
        "postgres" | "postgresql" => Ok(SqlDialect::Postgres),
        "mysql" | "mariadb" => Ok(SqlDialect::Mysql),
        "sqlite" => Ok(SqlDialect::Sqlite),
        "" => Err("not a URL: it has no scheme".to_owned()),
        other => Err(format!(
            "unsupported scheme {other:?} (expected postgres://, mysql://, mariadb:// or sqlite:)"
        )),
    }
}

/// The `http_request` tool.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Refuse loopback, private, link-local and unspecified addresses and `localhost`, by
    /// the URL's text and again by the addresses a name resolves to.
    pub block_private_networks: bool,
    /// The whole request, body included, must finish within this.
    pub timeout_secs: u64,
    pub connect_timeout_secs: u64,
    /// Body bytes kept at most; reading stops there.
    pub max_response_bytes: u64,
    /// Redirects followed at most, each hop checked like the first URL. Only a GET or HEAD
    /// follows redirects; any other request returns its redirect as the result.
    pub max_redirects: u64,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            block_private_networks: true,
            timeout_secs: 30,
            connect_timeout_secs: 10,
            max_response_bytes: 5 * 1024 * 1024,
            max_redirects: 5,
        }
    }
}

impl Settings {
    /// Loads the layered configuration. `path` is `--config`; without it `RISKGATE_CONFIG`,
    /// then `./riskgate.toml` if present.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        Self::load_env(path, &env::Environment::process()?)
    }

    /// [`Settings::load`] with the environment given as variables, so tests need not touch
    /// the process environment.
    pub fn load_from<K: Into<String>, V: Into<String>>(
        path: Option<&Path>,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConfigError> {
        Self::load_env(path, &env::Environment::new(vars))
    }

    fn load_env(path: Option<&Path>, env: &env::Environment) -> Result<Self, ConfigError> {
        let mut builder = config::Config::builder();
        // Plain variables a user may already have set are the lowest layer above defaults.
        if let Some(token) = env.secret("DISCORD_TOKEN")? {
            builder = builder.set_default("discord.token", token)?;
        }
        if let Some(key) = env.secret("OPENAI_API_KEY")? {
            builder = builder.set_default("llm.api_key", key)?;
        }
        let explicit = path
            .map(Path::to_path_buf)
            .or_else(|| env.var(CONFIG_PATH_ENV).map(PathBuf::from));
        match &explicit {
            Some(path) => {
                if path.is_dir() {
                    return Err(ConfigError::DirectoryGiven { path: path.clone() });
                }
                if !path.is_file() {
                    return Err(ConfigError::MissingFile { path: path.clone() });
                }
                builder = builder.add_source(
                    config::File::from(path.as_path()).format(config::FileFormat::Toml),
                );
            }
            None => {
                builder = builder.add_source(
                    config::File::with_name(DEFAULT_CONFIG_FILE)
                        .format(config::FileFormat::Toml)
                        .required(false),
                );
            }
        }
        let mut tree = builder.build()?.cache;
        let file_origins = env.overlay(&mut tree)?;
        reject_retired(&tree)?;
        let mut settings: Settings = tree
            .try_deserialize()
            .map_err(|error| hide_file_content(error, &file_origins))?;
        // A profile's prompt file is found beside the configuration file that names it.
        if let Some(dir) = explicit.as_deref().and_then(Path::parent) {
            for profile in settings.profiles.values_mut() {
                profile.anchor_prompt_file(dir);
            }
        }
        settings.validate()?;
        Ok(settings)
    }

    /// Checks what serde cannot: URLs, modes, limits, names.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_llm()?;
        self.validate_places()?;
        self.validate_choices()?;
        self.validate_counts()?;
        self.validate_discord()?;
        self.validate_file_rules()?;
        self.validate_sandbox()?;
        self.validate_databases()?;
        self.mcp.validate()
    }

    /// The command sandbox's per-line bounds and the operator's HOME files.
    fn validate_sandbox(&self) -> Result<(), ConfigError> {
        let s = &self.command.sandbox;
        for (key, value, least) in [
            ("command.sandbox.memory_bytes", s.memory_bytes, 16 << 20),
            ("command.sandbox.processes", s.processes, 1),
            ("command.sandbox.tmp_bytes", s.tmp_bytes, 64 << 10),
        ] {
            if value < least {
                return Err(ConfigError::invalid(
                    key,
                    value.to_string(),
                    format!("must be at least {least}"),
                ));
            }
        }
        for (name, source) in &s.home_files {
            let key = format!("command.sandbox.home_files.\"{name}\"");
            let relative = Path::new(name);
            let plain = !name.is_empty()
                && relative.is_relative()
                && relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !plain {
                return Err(ConfigError::invalid(
                    key,
                    source.display().to_string(),
                    "the name is where the file goes in each line's HOME: a relative path without `..`, e.g. \".gitconfig\" or \".config/pip/pip.conf\"",
                ));
            }
            if !std::fs::metadata(source).is_ok_and(|m| m.is_file()) {
                return Err(ConfigError::invalid(
                    key,
                    source.display().to_string(),
                    "not a readable file: give the path of the operator's file every line's HOME should start with",
                ));
            }
        }
        Ok(())
    }

    /// The model server: its URL, protocol, kind and model.
    fn validate_llm(&self) -> Result<(), ConfigError> {
        check_http_url("llm.base_url", &self.llm.base_url)?;
        if !matches!(self.llm.protocol.as_str(), "native" | "json") {
            return Err(ConfigError::invalid(
                "llm.protocol",
                format!("{:?}", self.llm.protocol),
                "expected native or json",
            ));
        }
        if let Err(problem) = self.llm.server.parse::<crate::llm::ServerKind>() {
            return Err(ConfigError::invalid(
                "llm.server",
                format!("{:?}", self.llm.server),
                problem,
            ));
        }
        if self.llm.model.trim().is_empty() {
            return Err(ConfigError::invalid(
                "llm.model",
                "\"\"",
                "a model name is required",
            ));
        }
        Ok(())
    }

    /// Where things are: the fake Discord's URL and the bot's own store.
    fn validate_places(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.discord.api_base_url {
            check_http_url("discord.api_base_url", url)?;
        }
        if self.discord.api_ca_pem.is_some() && self.discord.fake_tls_address().is_none() {
            return Err(ConfigError::invalid(
                "discord.api_ca_pem",
                "(a certificate)",
                "is for a local fake Discord that speaks TLS: set discord.api_base_url = \"https://IP:PORT\" too, or leave both unset",
            ));
        }
        match dialect_of_url(&self.store.url) {
            Ok(SqlDialect::Sqlite | SqlDialect::Postgres) => {}
            Ok(SqlDialect::Mysql) => {
                return Err(ConfigError::invalid(
                    "store.url",
                    redact_password(&self.store.url),
                    "the bot's own state lives in SQLite or PostgreSQL",
                ));
            }
            Err(problem) => {
                return Err(ConfigError::invalid(
                    "store.url",
                    redact_password(&self.store.url),
                    problem,
                ));
            }
        }
        Ok(())
    }

    /// Settings that take one of a few values.
    /// `log.level`: a filter the logger takes, whose bare words are levels. The logger
    /// would read a misspelt level ("degub") as a target's name and log at another level
    /// than meant without a word, and would drop a filter it cannot parse for `warn`.
    fn validate_log_level(&self) -> Result<(), ConfigError> {
        const LEVELS: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
        let level = &self.log.level;
        let problem = match tracing_subscriber::EnvFilter::try_new(level) {
            Err(e) => Some(format!("not a log filter ({e})")),
            Ok(_) => level
                .split(',')
                .map(str::trim)
                .find(|d| {
                    !d.is_empty()
                        && !d.contains(['=', '['])
                        && !LEVELS.iter().any(|l| d.eq_ignore_ascii_case(l))
                })
                .map(|word| format!("{word:?} is not a level")),
        };
        match problem {
            None => Ok(()),
            Some(problem) => Err(ConfigError::invalid(
                "log.level",
                format!("{level:?}"),
                format!(
                    "{problem}: use a level ({}) or directives such as \"warn,riskgate=debug\"",
                    LEVELS.join(", ")
                ),
            )),
        }
    }

    fn validate_choices(&self) -> Result<(), ConfigError> {
        self.validate_log_level()?;
        if self.agent.max_iterations < 1 {
            return Err(ConfigError::invalid(
                "agent.max_iterations",
                self.agent.max_iterations.to_string(),
                "must be at least 1",
            ));
        }
        self.risk
            .default_mode
            .parse::<ChannelMode>()
            .map_err(|problem| {
                ConfigError::invalid(
                    "risk.default_mode",
                    format!("{:?}", self.risk.default_mode),
                    problem,
                )
            })?;
        if self.tools.workspace.as_os_str().is_empty() {
            return Err(ConfigError::invalid(
                "tools.workspace",
                "\"\"",
                "a directory is required",
            ));
        }
        if !self.observability.listen.is_empty()
            && self
                .observability
                .listen
                .parse::<std::net::SocketAddr>()
                .is_err()
        {
            return Err(ConfigError::invalid(
                "observability.listen",
                format!("{:?}", self.observability.listen),
                "expected host:port with an IP address, e.g. 127.0.0.1:9464",
            ));
        }
        if !matches!(self.log.format.as_str(), "text" | "json") {
            return Err(ConfigError::invalid(
                "log.format",
                format!("{:?}", self.log.format),
                "expected text or json",
            ));
        }
        crate::tools::profiles(self)?;
        Ok(())
    }

    /// Limits that must be above zero.
    fn validate_counts(&self) -> Result<(), ConfigError> {
        for (key, value) in [
            ("llm.request_timeout_secs", self.llm.request_timeout_secs),
            (
                "llm.stream_idle_timeout_secs",
                self.llm.stream_idle_timeout_secs,
            ),
            ("store.sweep_interval_secs", self.store.sweep_interval_secs),
            ("store.approval_watch_ms", self.store.approval_watch_ms),
            (
                "store.max_connections",
                u64::from(self.store.max_connections),
            ),
            ("agent.run_timeout_secs", self.agent.run_timeout_secs),
            (
                "agent.approval_timeout_secs",
                self.agent.approval_timeout_secs,
            ),
            (
                "agent.history_budget_chars",
                self.agent.history_budget_chars,
            ),
            ("agent.max_message_chars", self.agent.max_message_chars),
            ("agent.max_reply_chars", self.agent.max_reply_chars),
            ("sql.row_limit", self.sql.row_limit),
            ("sql.statement_timeout_ms", self.sql.statement_timeout_ms),
            ("sql.connect_timeout_ms", self.sql.connect_timeout_ms),
            ("sql.max_value_bytes", self.sql.max_value_bytes),
            ("sql.max_result_bytes", self.sql.max_result_bytes),
            ("sql.max_error_chars", self.sql.max_error_chars),
            ("command.timeout_secs", self.command.timeout_secs),
            (
                "command.output_limit_bytes",
                self.command.output_limit_bytes,
            ),
            ("files.read_limit_bytes", self.files.read_limit_bytes),
            ("files.list_limit", self.files.list_limit),
            ("http.timeout_secs", self.http.timeout_secs),
            ("http.connect_timeout_secs", self.http.connect_timeout_secs),
            ("http.max_response_bytes", self.http.max_response_bytes),
            ("output.llm_budget_chars", self.output.llm_budget_chars),
            ("output.chat_budget_chars", self.output.chat_budget_chars),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "0", "must be greater than 0"));
            }
        }
        Ok(())
    }

    /// Sharding and the Discord limits.
    fn validate_discord(&self) -> Result<(), ConfigError> {
        let discord = &self.discord;
        if discord.shard_total > 0
            && (discord.shard_first > discord.shard_last
                || discord.shard_last >= discord.shard_total)
        {
            return Err(ConfigError::invalid(
                "discord.shard_last",
                discord.shard_last.to_string(),
                format!(
                    "the shard range {}..={} must lie within 0..{} (discord.shard_total)",
                    discord.shard_first, discord.shard_last, discord.shard_total
                ),
            ));
        }
        for (key, value) in [
            ("discord.queue_limit", discord.queue_limit),
            ("discord.max_messages_per_run", discord.max_messages_per_run),
            ("discord.max_parts_per_text", discord.max_parts_per_text),
            ("discord.max_attachment_bytes", discord.max_attachment_bytes),
            (
                "discord.attachment_budget_chars",
                discord.attachment_budget_chars,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "0", "must be greater than 0"));
            }
        }
        // A message longer than agent.max_message_chars is refused whole: its attachments must
        // leave room for the message's own text and their headers.
        let half = self.agent.max_message_chars / 2;
        if discord.attachment_budget_chars > half {
            return Err(ConfigError::invalid(
                "discord.attachment_budget_chars",
                discord.attachment_budget_chars.to_string(),
                format!(
                    "must be at most half of agent.max_message_chars ({half} of {}), so a message's own text and its attachments' headers fit beside them; lower it or raise agent.max_message_chars",
                    self.agent.max_message_chars
                ),
            ));
        }
        Ok(())
    }

    /// `file_operations` allow and deny entries: each a path or a valid glob pattern.
    fn validate_file_rules(&self) -> Result<(), ConfigError> {
        let rules = &self.tools.file_operations;
        for (key, entries) in [
            ("tools.file_operations.allow", &rules.allow),
            ("tools.file_operations.deny", &rules.deny),
        ] {
            crate::tools::files::rules::check(entries).map_err(|error| {
                ConfigError::invalid(key, format!("{:?}", error.entry), error.advice())
            })?;
        }
        Ok(())
    }

    /// Each target database: a unique name, a URL an engine can read, and a read-only URL
    /// that reaches the same engine.
    fn validate_databases(&self) -> Result<(), ConfigError> {
        let mut names = BTreeSet::new();
        for (i, db) in self.sql.databases.iter().enumerate() {
            let key = format!("sql.databases[{i}]");
            if db.name.trim().is_empty() {
                return Err(ConfigError::invalid(
                    format!("{key}.name"),
                    "\"\"",
                    "every database needs a name",
                ));
            }
            if !names.insert(db.name.as_str()) {
                return Err(ConfigError::invalid(
                    format!("{key}.name"),
                    format!("{:?}", db.name),
                    "two databases have this name",
                ));
            }
            let dialect = db.dialect().map_err(|problem| {
                ConfigError::invalid(
                    format!("{key}.url"),
                    redact_password(db.url.expose_secret()),
                    problem,
                )
            })?;
            if let Some(readonly) = &db.readonly_url {
                let shown = redact_password(readonly.expose_secret());
                let readonly_dialect =
                    dialect_of_url(readonly.expose_secret()).map_err(|problem| {
                        ConfigError::invalid(format!("{key}.readonly_url"), &shown, problem)
                    })?;
                if readonly_dialect != dialect {
                    return Err(ConfigError::invalid(
                        format!("{key}.readonly_url"),
                        shown,
                        format!("it must reach the same engine as url ({dialect})"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The effective settings as TOML, secrets redacted.
    pub fn to_redacted_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot render settings: {e}\n"))
    }
}

/// A value read from a secret file that the settings' types refuse is reported without the
/// content (it may be a secret put in the wrong variable).
fn hide_file_content(error: config::ConfigError, files: &env::FileOrigins) -> ConfigError {
    match &error {
        config::ConfigError::Type {
            origin: Some(origin),
            expected,
            key,
            ..
        } => match files.get(origin) {
            Some((var, path)) => ConfigError::invalid(
                key.clone().unwrap_or_default(),
                format!(
                    "the content of {} (named by {var}), not shown",
                    path.display()
                ),
                format!("expected {expected}"),
            ),
            None => error.into(),
        },
        _ => error.into(),
    }
}

fn check_http_url(key: &str, value: &str) -> Result<(), ConfigError> {
    let url = Url::parse(value)
        .map_err(|e| ConfigError::invalid(key, format!("{value:?}"), format!("not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigError::invalid(
            key,
            format!("{value:?}"),
            "expected an http:// or https:// URL",
        ));
    }
    Ok(())
}

/// Replaces the password of a URL (`scheme://user:password@host`) with `<redacted>`.
pub fn redact_password(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            // Setting a password fails only for URLs that cannot have one, which this has.
            let _ = parsed.set_password(Some("redacted"));
            parsed.to_string()
        }
        Ok(_) => url.to_owned(),
        Err(_) => REDACTED.to_owned(),
    }
}

fn redact_option<S: Serializer>(
    secret: &Option<SecretString>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match secret {
        Some(_) => serializer.serialize_str(REDACTED),
        None => serializer.serialize_str(""),
    }
}

fn redact_secret_url<S: Serializer>(url: &SecretString, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&redact_password(url.expose_secret()))
}

fn redact_option_url<S: Serializer>(
    url: &Option<SecretString>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match url {
        Some(url) => serializer.serialize_str(&redact_password(url.expose_secret())),
        None => serializer.serialize_none(),
    }
}

fn redact_url_password<S: Serializer>(url: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&redact_password(url))
}
