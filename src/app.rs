//! Wires the adapters into the core: settings in, a ready [`Agent`] out.

use std::sync::Arc;
use std::time::Duration;

use std::time::SystemTime;

use url::Url;

use crate::config::Settings;
use crate::core::agent::{Agent, AgentLimits, Protocol};
use crate::core::ports::{
    ApprovalRecord, ApprovalSurface, ChannelSettings, ChatModel, EventSink, Store, StoreError,
    SystemClock,
};
use crate::core::prompt::Prompts;
use crate::core::tools::{AssessContext, RiskGate, ToolRegistry, ToolSet};
use crate::llm::{LlmConfig, OpenAiClient};
use crate::mcp::McpHub;
use crate::store::SqlStore;

/// Why the application could not be built.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    Model(#[from] crate::core::ports::ModelError),
    #[error("invalid value for `{key}`: {problem}")]
    Setting { key: &'static str, problem: String },
}

/// The model client the settings describe.
pub fn model_client(settings: &Settings) -> Result<OpenAiClient, AppError> {
    let llm = &settings.llm;
    let base_url = Url::parse(&llm.base_url).map_err(|e| AppError::Setting {
        key: "llm.base_url",
        problem: e.to_string(),
    })?;
    let server = llm.server.parse().map_err(|problem| AppError::Setting {
        key: "llm.server",
        problem,
    })?;
    Ok(OpenAiClient::new(LlmConfig {
        base_url,
        api_key: llm.api_key.clone(),
        model: llm.model.clone(),
        temperature: (llm.temperature >= 0.0).then_some(llm.temperature),
        max_tokens: (llm.max_tokens > 0).then_some(llm.max_tokens),
        server,
        request_timeout: Duration::from_secs(llm.request_timeout_secs),
        stream_idle_timeout: Duration::from_secs(llm.stream_idle_timeout_secs),
        max_retries: llm.max_retries,
        retry_base_delay: Duration::from_millis(llm.retry_base_delay_ms),
        max_retry_wait: Duration::from_secs(llm.max_retry_wait_secs),
        context_window_tokens: llm.context_window_tokens,
        stream: llm.stream,
    })?)
}

/// The agent's limits from the settings.
pub fn agent_limits(settings: &Settings) -> AgentLimits {
    AgentLimits {
        max_iterations: u32::try_from(settings.agent.max_iterations).unwrap_or(u32::MAX),
        run_timeout: Duration::from_secs(settings.agent.run_timeout_secs),
        approval_timeout: Duration::from_secs(settings.agent.approval_timeout_secs),
        allow_similar: Duration::from_secs(settings.agent.allow_similar_secs),
        history_budget_chars: usize::try_from(settings.agent.history_budget_chars)
            .unwrap_or(usize::MAX),
        max_message_chars: usize::try_from(settings.agent.max_message_chars).unwrap_or(usize::MAX),
        max_reply_chars: usize::try_from(settings.agent.max_reply_chars).unwrap_or(usize::MAX),
        tool_output_budget_chars: usize::try_from(settings.output.llm_budget_chars)
            .unwrap_or(usize::MAX),
        ..AgentLimits::default()
    }
}

/// Says at start which tools cannot run calls contained here (the command tool where the
/// kernel lacks its sandbox): no call of theirs runs without a person's confirmation.
fn announce_uncontained(tools: &ToolSet) {
    for tool in tools.iter() {
        if let Some(reason) = tool.uncontained() {
            tracing::warn!(
                tool = tool.name(),
                %reason,
                "no call of this tool runs without a person's confirmation here"
            );
        }
    }
}

/// Runs every tool's start-up checks (the SQL accounts of statements run without a click)
/// without holding up the start, and logs what they find.
fn preflight_in_background(tools: &ToolSet) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    for tool in tools.iter() {
        let tool = Arc::clone(tool);
        runtime.spawn(async move {
            for finding in tool.preflight().await {
                if finding.warning {
                    tracing::warn!(tool = tool.name(), "{}", finding.message);
                } else {
                    tracing::info!(tool = tool.name(), "{}", finding.message);
                }
            }
        });
    }
}

/// Starts the MCP servers of `[[mcp.servers]]` (waiting for them `mcp.start_timeout_secs` at
/// most: a server not ready by then joins when it is), offers their tools through `tools`
/// and keeps them equal to what the servers offer. `None` when no server is enabled. Call
/// [`crate::mcp::McpHub::shutdown`] before the process ends: the servers are processes of
/// their own.
pub async fn start_mcp(settings: &Settings, tools: &ToolRegistry) -> Option<Arc<McpHub>> {
    // No server enabled: no hub.
    settings.mcp.enabled_servers().next()?;
    let hub = Arc::new(McpHub::start(&settings.mcp).await);
    for status in hub.status() {
        if matches!(status.state, crate::mcp::ServerState::Ready) {
            tracing::info!(target: crate::telemetry::STATUS, "MCP server {status}");
        } else {
            tracing::warn!(target: crate::telemetry::STATUS, "MCP server {status}; its tools are offered once it is ready");
        }
    }
    let chat_budget = usize::try_from(settings.output.chat_budget_chars).unwrap_or(usize::MAX);
    crate::tools::mcp::follow(&hub, tools, chat_budget);
    Some(hub)
}

/// `/status`'s line for each MCP server: `kb: ready, 3 tools (stdio)`.
pub fn mcp_status_lines(hub: Option<&Arc<McpHub>>) -> Vec<String> {
    hub.map(|hub| hub.status().iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// Builds an agent from the settings and the front end's adapters, with the built-in tools.
pub fn build_agent(
    settings: &Settings,
    model: Arc<dyn ChatModel>,
    store: Arc<dyn Store>,
    approvals: Arc<dyn ApprovalSurface>,
    events: Arc<dyn EventSink>,
) -> Result<Agent, AppError> {
    let tools = crate::tools::builtin_registry(settings);
    build_agent_with(settings, tools, model, store, approvals, events)
}

/// [`build_agent`] with `tools`, a registry the front end shares (it shows calls as their
/// tools do) and that tools may join or leave while the agent runs.
pub fn build_agent_with(
    settings: &Settings,
    tools: ToolRegistry,
    model: Arc<dyn ChatModel>,
    store: Arc<dyn Store>,
    approvals: Arc<dyn ApprovalSurface>,
    events: Arc<dyn EventSink>,
) -> Result<Agent, AppError> {
    let protocol: Protocol =
        settings
            .llm
            .protocol
            .parse()
            .map_err(|problem| AppError::Setting {
                key: "llm.protocol",
                problem,
            })?;
    let profiles = crate::tools::profiles(settings).map_err(|e| AppError::Setting {
        key: "profiles",
        problem: e.to_string(),
    })?;
    let gate = RiskGate::new(tools, settings.risk.gate_policy());
    let at_start = gate.tools();
    announce_uncontained(&at_start);
    preflight_in_background(&at_start);
    Ok(Agent {
        gate,
        model,
        model_name: settings.llm.model.clone(),
        approvals,
        store,
        events,
        clock: Arc::new(SystemClock),
        prompts: Prompts::default(),
        profiles,
        protocol,
        limits: agent_limits(settings),
        defaults: ChannelSettings {
            mode: settings.risk.mode(),
            profile: settings.agent.default_profile.clone(),
        },
        assess_context: AssessContext::default(),
        instance: instance_name(),
        prepared: Default::default(),
        unwritten_audit: Default::default(),
        summaries: Default::default(),
        usage: Default::default(),
        writes_reasoning: Default::default(),
    })
}

/// Opens the state store of `store.url` (migrations applied, operations retried for
/// `store.retry_window_secs` while the database is unreachable) and applies the history
/// retention.
pub async fn open_store(settings: &Settings) -> Result<SqlStore, StoreError> {
    let store = SqlStore::connect_with(&settings.store.url, settings.store.max_connections)
        .await?
        .with_retry_window(settings.store.retry_window());
    crate::store::apply_retention(&store, &settings.store, SystemTime::now()).await?;
    Ok(store)
}

/// `store` with the conversation of up to `store.history_cache_channels` channels kept in
/// memory in front of it (as it is when that is 0).
pub fn cache_history(store: Arc<dyn Store>, settings: &Settings) -> Arc<dyn Store> {
    match settings.store.history_cache_channels {
        0 => store,
        channels => Arc::new(crate::store::HistoryCache::new(store, channels)),
    }
}

/// Marks approvals whose run has stopped (no heartbeat for [`STALE_RUN`]) `abandoned` and
/// returns them, so a front end can say so where they were shown.
pub async fn abandon_orphaned(store: &dyn Store) -> Result<Vec<ApprovalRecord>, StoreError> {
    let abandoned = store
        .abandon_orphaned(SystemTime::now() - STALE_RUN)
        .await?;
    if !abandoned.is_empty() {
        tracing::info!(
            count = abandoned.len(),
            "approvals of stopped runs marked abandoned"
        );
    }
    Ok(abandoned)
}

/// A run that has not sent a heartbeat for this long is considered gone (runs waiting for a
/// person send one every 30 s).
pub const STALE_RUN: Duration = Duration::from_secs(90);

/// This process's name in the runs table: host and process id.
pub fn instance_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "riskgate".to_owned());
    format!("{host}-{}", std::process::id())
}
