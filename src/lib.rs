//! riskgate lets a team chat with an LLM agent whose every tool call passes a risk gate:
//! safe calls run at once, risky calls wait for a person, and nothing destructive runs
//! because the model said it was fine.
//!
//! # Layout
//!
//! - [`core`]: the Discord-free heart. [`core::risk`] holds the pure policy
//!   ([`core::risk::decide`]) and its types; [`core::tools`] the [`core::tools::Tool`] trait
//!   (everything about one tool), the tool sets and the [`core::tools::RiskGate`] that puts
//!   a call through both; [`core::profile`] what a channel's profile offers.
//! - [`tools`]: the four built-in tools, one folder each holding all of its tool (schema,
//!   assessor, executor, views): `execute_sql` (sqlparser, in the target's dialect),
//!   `execute_command` (a bash grammar from brush-parser), `file_operations` (workspace
//!   containment, symlinks resolved) and `http_request` (scheme, host and address checks).
//! - [`store`]: the bot's own state: [`store::SqlStore`] (SQLite or PostgreSQL, migrations
//!   embedded) and [`store::MemoryStore`], both implementing [`core::ports::Store`].
//! - [`llm`]: the OpenAI-compatible model client (the [`core::ports::ChatModel`] port).
//! - [`mcp`]: the MCP client: servers' tools (stdio and streamable HTTP), kept running.
//! - [`discord`]: `riskgate run`, the Discord front end (serenity): relay, outbox,
//!   approvals with buttons, slash commands.
//! - [`console`]: `riskgate console`, the terminal front end.
//! - [`app`]: wiring: the model client, the store and the agent from the settings.
//! - [`config`]: typed, layered settings (file, environment, `*_FILE` secrets).
//! - [`cli`]: `riskgate assess` and `riskgate check-config`.
//! - [`metrics`]: counters and latency histograms, served on `/metrics`.
//! - [`health`]: what `/healthz` answers (Discord ready, the state database answering).
//! - [`telemetry`]: logging to stderr.

pub mod app;
pub mod cli;
pub mod config;
pub mod console;
pub mod core;
pub mod discord;
pub mod health;
pub mod llm;
pub mod mcp;
pub mod metrics;
pub mod store;
pub mod telemetry;
pub mod tools;
