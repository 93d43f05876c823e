//! The Discord-free heart of riskgate: the risk gate and the tool abstractions.
//!
//! Nothing under `core` may import serenity, sqlx, reqwest or `tokio::process`; adapters
//! implement the core's traits instead (checked by `tests/architecture.rs`).
//!
//! Layout, each module using only those above it (also checked there):
//!
//! - [`risk`]: the pure policy; [`rules`]: channel rules; [`tools`]: the `Tool` trait, tool
//!   sets and the gate; [`profile`]: what a channel's profile offers.
//! - The words every part shares: [`message`] (the conversation, the protocol), [`approval`]
//!   (approvals), [`event`] (what a run reports), [`usage`] (the tokens each channel's
//!   requests cost).
//! - [`ports`]: the traits adapters implement; [`prompt`]: the system prompt.
//! - [`agent`]: the loop; [`commands`]: the channel commands.

pub mod agent;
pub mod approval;
pub mod commands;
pub mod event;
pub mod message;
pub mod ports;
pub mod profile;
pub mod prompt;
pub mod risk;
pub mod rules;
pub mod tools;
pub mod usage;
