//! The MCP client: tools of Model Context Protocol servers, for the agent to call through
//! the gate like its own.
//!
//! [`McpHub::start`] starts every enabled server of `[[mcp.servers]]` (stdio servers as
//! child processes in process groups of their own, streamable HTTP servers by URL), lists
//! their tools and keeps them running: a server that cannot start or dies loses its tools
//! until it is back, restarted with backoff. [`McpHub::tools`] is the set offered now and
//! [`McpHub::watch_tools`] sends each new set; [`McpHub::call`] calls one tool with a
//! timeout and returns its result as clean, capped parts ([`McpOutput`]), or an
//! [`McpError`] that says what went wrong. [`check`] tries each server once for
//! `riskgate check-config`.
//!
//! Nothing here decides whether a call may run: the tool layer puts every call through the
//! gate first, with the operator's policy and (for servers the operator trusts) the tool's
//! annotations from [`McpTool`].
//!
//! - `settings.rs`: `[mcp]`, `[[mcp.servers]]`, validation.
//! - `hub.rs`: the hub, one supervisor task per server, the tool set, calls, `check`.
//! - `connection.rs`: one connection (rmcp client, stdio or streamable HTTP), the handshake.
//! - `process.rs`: a stdio server's process group: environment, stderr, exit, kill.
//! - `names.rs`: offered names (`mcp__<server>__<tool>`, valid for the OpenAI API).
//! - `result.rs`: a call's result, described and capped.
//! - `redact.rs`: a server's secrets kept out of logged and reported text.

mod connection;
mod hub;
pub mod names;
mod process;
mod redact;
mod result;
mod settings;

pub use hub::{
    CheckedTools, McpError, McpHub, McpTool, ServerCheck, ServerState, ServerStatus, ToolHints,
    ToolSet, check,
};
pub use process::environment as server_environment;
pub use result::{Cut, McpOutput, NonText, NonTextKind, Part};
pub use settings::{
    MAX_SERVER_NAME_CHARS, McpServerSettings, McpSettings, ToolPolicy, TransportKind, shown_url,
};
