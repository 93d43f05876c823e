//! The hub: every configured server started and kept running, their tools as one set that
//! changes as servers come, go and change their lists, and calls routed to them.
//!
//! Each server has a supervisor task: it connects (within `mcp.start_timeout_secs`), lists
//! the tools, publishes them, then waits for the server to die, to say its tools changed,
//! or for the hub to stop. A server that fails or dies loses its tools from the set and is
//! started again after a wait that doubles from `mcp.restart_initial_secs` up to
//! `mcp.restart_max_secs`. A call takes the server's current connection and never waits
//! for the supervisor, another call, or another server.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientRequest};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connection::{self, Connection};
use super::names;
use super::process::ServerProcess;
use super::redact::Redactor;
use super::result::McpOutput;
use super::settings::{McpServerSettings, McpSettings, ToolPolicy, TransportKind};

/// How long a stopping server may take to exit after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long a server may take to answer a ping after a call saw its connection fail.
const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// How long [`McpHub::settled`] waits at most for lists a server said changed.
const SETTLE_MAX: Duration = Duration::from_secs(3);
/// Characters of a server's error message kept.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// One tool of one server, as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's configured name.
    pub server: String,
    /// The tool's name on the server (what a call sends).
    pub name: String,
    /// The name the model sees: `mcp__<server>__<tool>`, `^[a-zA-Z0-9_-]{1,64}$`.
    pub offered_name: String,
    /// The annotations' title, else the tool's own.
    pub title: Option<String>,
    pub description: String,
    /// The tool's input schema, a JSON Schema object with `"type": "object"` (and
    /// `"properties"`, added empty where the server left it out).
    pub input_schema: Arc<Map<String, Value>>,
    /// The server's annotations. They are the server's claims: see [`McpTool::trusted_hints`].
    pub hints: ToolHints,
    /// The operator's `trust_annotations` for this server.
    pub trust_annotations: bool,
    /// The operator's policy for this tool (`mcp.servers.tools`); never `Deny` here, since
    /// denied tools are not offered.
    pub policy: Option<ToolPolicy>,
}

/// A tool's annotations (MCP `ToolAnnotations`), unset where the server said nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl McpTool {
    /// The annotations, when the operator trusts this server's (`trust_annotations`).
    pub fn trusted_hints(&self) -> Option<ToolHints> {
        self.trust_annotations.then_some(self.hints)
    }
}

/// The tools offered at one moment, sorted by offered name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSet {
    tools: Vec<McpTool>,
}

impl ToolSet {
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The tool offered under `offered_name`.
    pub fn get(&self, offered_name: &str) -> Option<&McpTool> {
        self.tools
            .binary_search_by(|t| t.offered_name.as_str().cmp(offered_name))
            .ok()
            .map(|i| &self.tools[i])
    }

    /// A server's tool by its own name.
    pub fn find(&self, server: &str, tool: &str) -> Option<&McpTool> {
        self.tools
            .iter()
            .find(|t| t.server == server && t.name == tool)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// Where a server stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    /// Being started (the process, the handshake, the first listing).
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// It failed to start or died; `restart_at` is when it is tried again (none once the
    /// hub stopped), `backoff` the wait chosen (it doubles with each failure in a row).
    Failed {
        reason: String,
        restart_at: Option<Instant>,
        backoff: Duration,
    },
    /// The hub stopped it.
    Stopped,
}

impl fmt::Display for ServerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Starting => write!(f, "starting"),
            Self::Ready => write!(f, "ready"),
            Self::Failed {
                reason, restart_at, ..
            } => {
                write!(f, "failed: {reason}")?;
                if let Some(at) = restart_at {
                    let secs = at.saturating_duration_since(Instant::now()).as_secs_f64();
                    write!(f, "; restarting in {} s", secs.ceil())?;
                }
                Ok(())
            }
            Self::Stopped => write!(f, "stopped"),
        }
    }
}

/// One server's status, for `/status`-like reports and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    pub transport: TransportKind,
    pub state: ServerState,
    /// Tools offered from this server now (denied ones not counted).
    pub tools: usize,
    /// A running stdio server's process id (also its process group's).
    pub pid: Option<u32>,
}

impl fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}, {} tool{} ({})",
            self.name,
            self.state,
            self.tools,
            if self.tools == 1 { "" } else { "s" },
            self.transport
        )
    }
}

/// Why a call did not give a result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpError {
    #[error("no MCP tool is offered as `{name}`")]
    UnknownTool { name: String },
    #[error("there is no MCP server `{server}` (or it is disabled)")]
    UnknownServer { server: String },
    #[error("MCP server `{server}` offers no tool `{tool}`")]
    NoSuchTool { server: String, tool: String },
    #[error("the operator denied `{tool}` of MCP server `{server}` (mcp.servers.tools)")]
    Denied { server: String, tool: String },
    #[error("MCP server `{server}` is not available now ({state})")]
    Unavailable { server: String, state: String },
    #[error(
        "MCP server `{server}` did not answer the call of `{tool}` within {} s (mcp.call_timeout_secs); the call was cancelled",
        after.as_secs()
    )]
    Timeout {
        server: String,
        tool: String,
        after: Duration,
    },
    #[error(
        "MCP server `{server}` went away during the call of `{tool}` ({detail}); it is started again automatically"
    )]
    ServerGone {
        server: String,
        tool: String,
        detail: String,
    },
    #[error(
        "MCP server `{server}` refused the call of `{tool}`: {message} (JSON-RPC error {code})"
    )]
    Refused {
        server: String,
        tool: String,
        code: i32,
        message: String,
    },
    /// The tool ran and reported an error (`isError: true`); `output` is what it said.
    #[error("`{tool}` of MCP server `{server}` reported an error: {}", output.text())]
    ToolFailed {
        server: String,
        tool: String,
        output: McpOutput,
    },
    #[error(
        "MCP server `{server}` answered the call of `{tool}` in a way the bot cannot use: {detail}"
    )]
    Protocol {
        server: String,
        tool: String,
        detail: String,
    },
}

/// The MCP servers of one bot, and their tools.
pub struct McpHub {
    shared: Arc<Shared>,
    stop: CancellationToken,
    tasks: TaskTracker,
}

struct Shared {
    settings: McpSettings,
    slots: Vec<Slot>,
    tools: watch::Sender<Arc<ToolSet>>,
    /// Bumped at every change of any server's state, for [`McpHub::start`]'s wait.
    changes: watch::Sender<u64>,
    /// Serialises rebuilding the tool set, so an older set never replaces a newer one.
    publishing: Mutex<()>,
    /// Told each new set, in order, before it is sent on `tools`.
    listeners: Mutex<Vec<Listener>>,
    /// Lists the servers said changed and the hub has not published again yet.
    owed: Arc<watch::Sender<usize>>,
}

type Listener = Box<dyn Fn(&Arc<ToolSet>) + Send + Sync>;

struct Slot {
    settings: McpServerSettings,
    redactor: Redactor,
    live: Mutex<Live>,
    /// A call saw the connection fail: the supervisor checks the server.
    suspect: Notify,
    /// Calls under way; an idle HTTP server is pinged only while there are none (a server
    /// that answers one request at a time would miss the ping's deadline behind a long
    /// call).
    calls: AtomicUsize,
}

/// Counts a call while it is under way.
struct CallUnderWay<'a>(&'a AtomicUsize);

impl<'a> CallUnderWay<'a> {
    fn new(calls: &'a AtomicUsize) -> Self {
        calls.fetch_add(1, Ordering::SeqCst);
        Self(calls)
    }
}

impl Drop for CallUnderWay<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Live {
    state: ServerState,
    peer: Option<Peer<RoleClient>>,
    tools: Vec<rmcp::model::Tool>,
    process: Option<Arc<ServerProcess>>,
}

impl Slot {
    /// A server's slot before its first start.
    fn new(server: &McpServerSettings) -> Self {
        Self {
            settings: server.clone(),
            redactor: Redactor::for_server(server),
            live: Mutex::new(Live {
                state: ServerState::Starting,
                peer: None,
                tools: Vec::new(),
                process: None,
            }),
            suspect: Notify::new(),
            calls: AtomicUsize::new(0),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl McpHub {
    /// Starts every enabled server at once and returns when each is ready or has failed,
    /// or after `mcp.start_timeout_secs` at most; servers not ready by then go on starting
    /// (or restarting) behind the hub.
    pub async fn start(settings: &McpSettings) -> Self {
        let http = connection::http_client();
        let slots = settings.enabled_servers().map(Slot::new).collect();
        let shared = Arc::new(Shared {
            settings: settings.clone(),
            slots,
            tools: watch::Sender::new(Arc::new(ToolSet::default())),
            changes: watch::Sender::new(0),
            publishing: Mutex::new(()),
            listeners: Mutex::new(Vec::new()),
            owed: Arc::new(watch::Sender::new(0)),
        });
        let stop = CancellationToken::new();
        let tasks = TaskTracker::new();
        for index in 0..shared.slots.len() {
            tasks.spawn(supervise(
                shared.clone(),
                index,
                http.clone(),
                stop.child_token(),
            ));
        }
        let hub = Self {
            shared,
            stop,
            tasks,
        };
        let mut changes = hub.shared.changes.subscribe();
        // The first attempts are bounded by the start timeout themselves; the margin covers
        // the bookkeeping after them.
        let deadline = Instant::now() + settings.start_timeout() + Duration::from_secs(1);
        while hub.any_starting() {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { break },
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        hub
    }

    fn any_starting(&self) -> bool {
        self.shared
            .slots
            .iter()
            .any(|slot| slot.live().state == ServerState::Starting)
    }

    /// The tools offered now.
    pub fn tools(&self) -> Arc<ToolSet> {
        self.shared.tools.borrow().clone()
    }

    /// The tools offered, as they change: a new set is sent whenever a server comes, goes
    /// or changes its list.
    pub fn watch_tools(&self) -> watch::Receiver<Arc<ToolSet>> {
        self.shared.tools.subscribe()
    }

    /// Calls `listener` with the tools offered now, and then with each new set as it is
    /// made, before anyone waiting in [`McpHub::settled`] or [`McpHub::watch_tools`] hears
    /// of it. It runs on the task that made the set, under the hub's lock for making sets:
    /// it must be quick and must not call the hub.
    pub fn on_tools(&self, listener: impl Fn(&Arc<ToolSet>) + Send + Sync + 'static) {
        let _serial = self
            .shared
            .publishing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listener(&self.tools());
        self.shared
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(listener));
    }

    /// Resolves once no server's word that its tools changed is waiting for the new list
    /// (a tool call that adds a tool is answered after the server says so, but the list is
    /// taken again after the answer), or after a few seconds: a run about to start is
    /// offered what the servers offer. A server that is slow to list its tools again is
    /// logged and not waited for longer.
    pub async fn settled(&self) {
        let mut owed = self.shared.owed.subscribe();
        let waited = tokio::time::timeout(SETTLE_MAX, owed.wait_for(|owed| *owed == 0)).await;
        if waited.is_err() {
            tracing::warn!(target: "riskgate::mcp", "a server said its tools changed, but its new list did not come within {} s; this run is offered the tools as they were", SETTLE_MAX.as_secs());
        }
    }

    /// Every enabled server's status, in the configuration's order.
    pub fn status(&self) -> Vec<ServerStatus> {
        let tools = self.tools();
        self.shared
            .slots
            .iter()
            .map(|slot| {
                let live = slot.live();
                ServerStatus {
                    name: slot.settings.name.clone(),
                    transport: slot.settings.transport(),
                    state: live.state.clone(),
                    tools: tools
                        .tools()
                        .iter()
                        .filter(|t| t.server == slot.settings.name)
                        .count(),
                    pid: live.process.as_ref().map(|p| p.pid()),
                }
            })
            .collect()
    }

    /// Calls the tool offered as `offered_name`.
    pub async fn call(
        &self,
        offered_name: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpOutput, McpError> {
        let tools = self.tools();
        let Some(tool) = tools.get(offered_name) else {
            return Err(McpError::UnknownTool {
                name: offered_name.to_owned(),
            });
        };
        self.call_tool(&tool.server, &tool.name, arguments).await
    }

    /// Calls `tool` of `server` by the server's own names.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<McpOutput, McpError> {
        let Some(slot) = self.shared.slots.iter().find(|s| s.settings.name == server) else {
            return Err(McpError::UnknownServer {
                server: server.to_owned(),
            });
        };
        if slot.settings.policy(tool) == Some(ToolPolicy::Deny) {
            return Err(McpError::Denied {
                server: server.to_owned(),
                tool: tool.to_owned(),
            });
        }
        let peer = {
            let live = slot.live();
            match (&live.state, &live.peer) {
                (ServerState::Ready, Some(peer)) => {
                    if !live.tools.iter().any(|t| t.name == tool) {
                        return Err(McpError::NoSuchTool {
                            server: server.to_owned(),
                            tool: tool.to_owned(),
                        });
                    }
                    peer.clone()
                }
                (state, _) => {
                    return Err(McpError::Unavailable {
                        server: server.to_owned(),
                        state: state.to_string(),
                    });
                }
            }
        };
        let timeout = self.shared.settings.call_timeout();
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let under_way = CallUnderWay::new(&slot.calls);
        let answer = tokio::time::timeout(timeout, peer.call_tool(params)).await;
        drop(under_way);
        let (server, tool) = (server.to_owned(), tool.to_owned());
        match answer {
            Err(_) => Err(McpError::Timeout {
                server,
                tool,
                after: timeout,
            }),
            Ok(Err(ServiceError::McpError(error))) => Err(McpError::Refused {
                code: error.code.0,
                message: bounded(&slot.redactor.apply(&error.message)),
                server,
                tool,
            }),
            Ok(Err(error @ (ServiceError::TransportClosed | ServiceError::TransportSend(_)))) => {
                slot.suspect.notify_one();
                Err(McpError::ServerGone {
                    detail: bounded(&slot.redactor.apply(&connection::service_error(&error))),
                    server,
                    tool,
                })
            }
            Ok(Err(error)) => Err(McpError::Protocol {
                detail: bounded(&slot.redactor.apply(&connection::service_error(&error))),
                server,
                tool,
            }),
            Ok(Ok(result)) => {
                let failed = result.is_error == Some(true);
                let output = McpOutput::from_result(result, self.shared.settings.result_max_bytes);
                if failed {
                    Err(McpError::ToolFailed {
                        server,
                        tool,
                        output,
                    })
                } else {
                    Ok(output)
                }
            }
        }
    }

    /// Stops every server (SIGTERM to a stdio server's group, SIGKILL after a grace
    /// period) and waits for them, a few seconds at most.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.tasks.close();
        let _ = tokio::time::timeout(STOP_GRACE + Duration::from_secs(3), self.tasks.wait()).await;
        self.kill_all();
    }

    fn kill_all(&self) {
        for slot in &self.shared.slots {
            if let Some(process) = &slot.live().process {
                process.kill();
            }
        }
    }
}

/// A hub dropped without [`McpHub::shutdown`] kills every server's process group at once.
impl Drop for McpHub {
    fn drop(&mut self) {
        self.stop.cancel();
        self.kill_all();
    }
}

fn bounded(text: &str) -> String {
    let mut out: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    if text.chars().count() > MAX_MESSAGE_CHARS {
        out.push('…');
    }
    out
}

/// Why a connection ended.
enum Down {
    Stopped,
    Failed(String),
}

/// One server's life: connect, serve, and after a failure wait and connect again.
async fn supervise(
    shared: Arc<Shared>,
    index: usize,
    http: Result<reqwest_mcp::Client, String>,
    stop: CancellationToken,
) {
    let slot = &shared.slots[index];
    let name = slot.settings.name.clone();
    let mut failures: u32 = 0;
    loop {
        set_state(&shared, index, ServerState::Starting);
        let attempt = tokio::select! {
            attempt = tokio::time::timeout(shared.settings.start_timeout(), open(slot, &http, &shared.owed, shared.settings.start_timeout())) => attempt,
            _ = stop.cancelled() => break,
        };
        let reason = match attempt {
            Err(_) => format!(
                "it did not finish starting within {} s (mcp.start_timeout_secs)",
                shared.settings.start_timeout_secs
            ),
            Ok(Err(reason)) => reason,
            Ok(Ok((connection, tools))) => {
                let up_since = Instant::now();
                {
                    let mut live = slot.live();
                    live.peer = Some(connection.peer().clone());
                    live.tools = tools;
                    live.process = connection.process.clone();
                }
                warn_unknown_policies(slot);
                // The tools first: whoever hears "ready" finds them offered.
                publish(&shared);
                set_state(&shared, index, ServerState::Ready);
                tracing::info!(target: "riskgate::mcp", server = %name, tools = slot.live().tools.len(), "MCP server ready");
                let down = serve(&shared, slot, connection, &stop).await;
                {
                    let mut live = slot.live();
                    live.peer = None;
                    live.tools.clear();
                    live.process = None;
                }
                publish(&shared);
                if up_since.elapsed() >= Duration::from_secs(shared.settings.restart_max_secs) {
                    failures = 0;
                }
                match down {
                    Down::Stopped => break,
                    Down::Failed(reason) => reason,
                }
            }
        };
        let delay = shared.settings.restart_delay(failures);
        failures = failures.saturating_add(1);
        tracing::warn!(
            target: "riskgate::mcp",
            server = %name,
            "MCP server failed: {reason}; its tools are not offered; starting it again in {} s",
            delay.as_secs()
        );
        set_state(
            &shared,
            index,
            ServerState::Failed {
                reason,
                restart_at: Some(Instant::now() + delay),
                backoff: delay,
            },
        );
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.cancelled() => break,
        }
    }
    let mut live = slot.live();
    live.state = match std::mem::replace(&mut live.state, ServerState::Stopped) {
        ServerState::Failed {
            reason, backoff, ..
        } => ServerState::Failed {
            reason,
            restart_at: None,
            backoff,
        },
        _ => ServerState::Stopped,
    };
    drop(live);
    shared.changes.send_modify(|n| *n += 1);
}

/// Connects and lists the tools.
async fn open(
    slot: &Slot,
    http: &Result<reqwest_mcp::Client, String>,
    owed: &Arc<watch::Sender<usize>>,
    list_timeout: Duration,
) -> Result<(Connection, Vec<rmcp::model::Tool>), String> {
    let http = http.as_ref().map_err(Clone::clone)?;
    let connection = connection::connect(&slot.settings, &slot.redactor, http, owed).await?;
    match list_tools(slot, connection.peer(), list_timeout).await {
        Ok(tools) => Ok((connection, tools)),
        Err(reason) => {
            if let Some(process) = &connection.process {
                process.kill();
            }
            Err(reason)
        }
    }
}

/// Every page of the server's tools, one tool per name.
async fn list_tools(
    slot: &Slot,
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Tool>, String> {
    let listed = tokio::time::timeout(timeout, peer.list_all_tools())
        .await
        .map_err(|_| format!("listing its tools took over {} s", timeout.as_secs()))?
        .map_err(|error| {
            slot.redactor.apply(&format!(
                "listing its tools failed: {}",
                connection::service_error(&error)
            ))
        })?;
    let mut seen = BTreeSet::new();
    let mut tools = Vec::with_capacity(listed.len());
    for tool in listed {
        if !seen.insert(tool.name.to_string()) {
            tracing::warn!(target: "riskgate::mcp", server = %slot.settings.name, tool = %tool.name, "the server lists this tool twice; the first is kept");
            continue;
        }
        tools.push(tool);
    }
    Ok(tools)
}

/// Serves a ready connection until it ends: the server died or stopped answering, or the
/// hub stops. Refreshes the tools when the server says they changed.
async fn serve(
    shared: &Shared,
    slot: &Slot,
    connection: Connection,
    stop: &CancellationToken,
) -> Down {
    let Connection {
        service,
        process,
        changes,
    } = connection;
    let peer = service.peer().clone();
    // Boxed, so dropping it below drops the service (and closes the transport) at once.
    let mut closed = Box::pin(service.waiting());
    let watched = process.clone();
    let exited = async move {
        match watched {
            Some(process) => process.exited().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(exited);
    // An HTTP server that goes away while nobody calls it is noticed by a ping.
    let mut pings = tokio::time::interval(Duration::from_secs(shared.settings.ping_interval_secs));
    pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    pings.reset();
    let down = loop {
        tokio::select! {
            _ = stop.cancelled() => break Down::Stopped,
            _ = pings.tick(), if process.is_none() => {
                if slot.calls.load(Ordering::SeqCst) == 0 {
                    slot.suspect.notify_one();
                }
            }
            _ = &mut closed => break Down::Failed("the connection closed".to_owned()),
            _ = &mut exited => break Down::Failed(String::new()),
            _ = changes.heard() => {
                // Paid when this arm ends, after the new list is published (or not).
                let _relisting = changes.take();
                match list_tools(slot, &peer, shared.settings.call_timeout()).await {
                    Ok(tools) => {
                        slot.live().tools = tools;
                        warn_unknown_policies(slot);
                        publish(shared);
                    }
                    Err(reason) => tracing::warn!(target: "riskgate::mcp", server = %slot.settings.name, "the server's tools changed, but {reason}; the old list stays"),
                }
            }
            _ = slot.suspect.notified() => {
                let ping = ClientRequest::PingRequest(Default::default());
                match tokio::time::timeout(PING_TIMEOUT, peer.send_request(ping)).await {
                    // An error the server sent is an answer too: it is there.
                    Ok(Ok(_) | Err(ServiceError::McpError(_))) => {}
                    Ok(Err(error)) => break Down::Failed(format!("it stopped answering: {}", slot.redactor.apply(&connection::service_error(&error)))),
                    Err(_) => break Down::Failed(format!("it did not answer a ping within {} s", PING_TIMEOUT.as_secs())),
                }
            }
        }
    };
    // A change heard but not listed will not be: this connection's tools go now.
    drop(changes.take());
    // Dropping the service's future closes the transport (stdin, or the HTTP session).
    drop(closed);
    match (down, process) {
        (Down::Stopped, Some(process)) => {
            process.terminate(STOP_GRACE).await;
            Down::Stopped
        }
        (Down::Stopped, None) => Down::Stopped,
        (Down::Failed(reason), Some(process)) => {
            let ended = process.ended().await;
            Down::Failed(slot.redactor.apply(&if reason.is_empty()
                || reason == "the connection closed"
            {
                format!("the server {ended}")
            } else {
                format!("{reason}; the server {ended}")
            }))
        }
        (Down::Failed(reason), None) => Down::Failed(reason),
    }
}

fn set_state(shared: &Shared, index: usize, state: ServerState) {
    shared.slots[index].live().state = state;
    shared.changes.send_modify(|n| *n += 1);
}

/// Logs the policies that name a tool the server does not list (a typo, or a tool it
/// dropped), so an operator's `deny` is not believed to hold for a tool that is offered
/// under another name.
fn warn_unknown_policies(slot: &Slot) {
    let live = slot.live();
    for tool in slot.settings.tools.keys() {
        if !live.tools.iter().any(|t| t.name == *tool) {
            tracing::warn!(target: "riskgate::mcp", server = %slot.settings.name, tool = %tool, "mcp.servers.tools names a tool this server does not list");
        }
    }
}

/// Rebuilds the tool set from every ready server and sends it if it changed.
fn publish(shared: &Shared) {
    let _serial = shared
        .publishing
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let mut candidates: Vec<(usize, rmcp::model::Tool)> = Vec::new();
    for (index, slot) in shared.slots.iter().enumerate() {
        let live = slot.live();
        if live.peer.is_none() {
            continue;
        }
        for tool in &live.tools {
            if slot.settings.policy(&tool.name) == Some(ToolPolicy::Deny) {
                continue;
            }
            candidates.push((index, tool.clone()));
        }
    }
    let mut kept: Vec<(usize, rmcp::model::Tool, Map<String, Value>)> = Vec::new();
    for (index, tool) in candidates {
        match object_schema(&tool.input_schema) {
            Ok(schema) => kept.push((index, tool, schema)),
            Err(problem) => {
                tracing::warn!(target: "riskgate::mcp", server = %shared.slots[index].settings.name, tool = %tool.name, "not offered: its input schema {problem}");
            }
        }
    }
    let pairs: Vec<(&str, &str)> = kept
        .iter()
        .map(|(index, tool, _)| {
            (
                shared.slots[*index].settings.name.as_str(),
                tool.name.as_ref(),
            )
        })
        .collect();
    let offered = names::offered_names(&pairs);
    let mut tools: Vec<McpTool> = kept
        .iter()
        .zip(offered)
        .map(|((index, tool, schema), offered_name)| {
            let settings = &shared.slots[*index].settings;
            let annotations = tool.annotations.clone().unwrap_or_default();
            McpTool {
                server: settings.name.clone(),
                name: tool.name.to_string(),
                offered_name,
                title: annotations.title.clone().or_else(|| tool.title.clone()),
                description: tool.description.as_deref().unwrap_or_default().to_owned(),
                input_schema: Arc::new(schema.clone()),
                hints: ToolHints {
                    read_only: annotations.read_only_hint,
                    destructive: annotations.destructive_hint,
                    idempotent: annotations.idempotent_hint,
                    open_world: annotations.open_world_hint,
                },
                trust_annotations: settings.trust_annotations,
                policy: settings.policy(&tool.name),
            }
        })
        .collect();
    tools.sort_by(|a, b| a.offered_name.cmp(&b.offered_name));
    let set = ToolSet { tools };
    if **shared.tools.borrow() == set {
        return;
    }
    let set = Arc::new(set);
    for listener in shared
        .listeners
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        listener(&set);
    }
    shared.tools.send_replace(set);
}

/// The schema as an object schema: `"type": "object"` (added where missing) and
/// `"properties"` (added empty where missing); any other type is refused.
fn object_schema(schema: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    let mut schema = schema.clone();
    match schema.get("type") {
        None => {
            schema.insert("type".to_owned(), Value::String("object".to_owned()));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => return Err(format!("has type {other}, not \"object\"")),
    }
    if !schema.contains_key("properties") {
        schema.insert("properties".to_owned(), Value::Object(Map::new()));
    }
    Ok(schema)
}

/// What [`check`] found for one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCheck {
    pub name: String,
    pub transport: TransportKind,
    pub outcome: Result<CheckedTools, String>,
}

/// A server that started: its tools, and what the operator's policies say of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedTools {
    /// The tools it lists, by their names on the server.
    pub listed: Vec<String>,
    /// Those the operator denied (not offered).
    pub denied: Vec<String>,
    /// Names in `tools = { ... }` the server does not list.
    pub unknown_policies: Vec<String>,
}

impl fmt::Display for ServerCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Ok(tools) => {
                write!(
                    f,
                    "mcp server {:?} ({}): starts, {} tools",
                    self.name,
                    self.transport,
                    tools.listed.len()
                )?;
                if !tools.denied.is_empty() {
                    write!(f, ", denied: {}", tools.denied.join(", "))?;
                }
                if !tools.unknown_policies.is_empty() {
                    write!(
                        f,
                        "; WARNING: mcp.servers.tools names tools it does not list: {}",
                        tools.unknown_policies.join(", ")
                    )?;
                }
                Ok(())
            }
            Err(reason) => write!(
                f,
                "WARNING: mcp server {:?} ({}) cannot start: {reason}",
                self.name, self.transport
            ),
        }
    }
}

/// Tries each enabled server once, at the same time (within `mcp.start_timeout_secs`
/// each), and says what it lists or why it cannot start; every server is stopped again.
/// For `riskgate check-config`.
pub async fn check(settings: &McpSettings) -> Vec<ServerCheck> {
    let http = connection::http_client();
    // Nobody waits for these servers' changes.
    let owed = Arc::new(watch::Sender::new(0));
    let checks = settings.enabled_servers().map(|server| {
        let http = &http;
        let owed = &owed;
        async move {
            let slot = Slot::new(server);
            let opened = tokio::time::timeout(
                settings.start_timeout(),
                open(&slot, http, owed, settings.start_timeout()),
            )
            .await;
            let outcome = match opened {
                Err(_) => Err(format!(
                    "it did not finish starting within {} s (mcp.start_timeout_secs)",
                    settings.start_timeout_secs
                )),
                Ok(Err(reason)) => Err(reason),
                Ok(Ok((connection, tools))) => {
                    let listed: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
                    if let Some(process) = &connection.process {
                        let process = process.clone();
                        drop(connection);
                        process.terminate(STOP_GRACE).await;
                    }
                    Ok(CheckedTools {
                        denied: listed
                            .iter()
                            .filter(|t| server.policy(t) == Some(ToolPolicy::Deny))
                            .cloned()
                            .collect(),
                        unknown_policies: server
                            .tools
                            .keys()
                            .filter(|t| !listed.contains(t))
                            .cloned()
                            .collect(),
                        listed,
                    })
                }
            };
            ServerCheck {
                name: server.name.clone(),
                transport: server.transport(),
                outcome,
            }
        }
    });
    futures_util::future::join_all(checks).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_become_object_schemas_or_are_refused() {
        let schema = object_schema(&Map::new()).expect("empty");
        assert_eq!(
            Value::Object(schema),
            serde_json::json!({"type": "object", "properties": {}})
        );
        let given = serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let Value::Object(given) = given else {
            unreachable!()
        };
        assert_eq!(object_schema(&given).expect("object"), given);
        let Value::Object(array) = serde_json::json!({"type": "array"}) else {
            unreachable!()
        };
        assert!(object_schema(&array).is_err());
    }

    #[test]
    fn states_read_as_sentences() {
        assert_eq!(ServerState::Starting.to_string(), "starting");
        let failed = ServerState::Failed {
            reason: "the server exited with status 2".to_owned(),
            restart_at: None,
            backoff: Duration::from_secs(1),
        };
        assert_eq!(
            failed.to_string(),
            "failed: the server exited with status 2"
        );
    }
}
