//! The Discord-free heart of riskgate: the risk gate and the tool abstractions.
//!
//! Nothing under `core` may import serenity, sqlx, reqwest or `tokio::process`; adapters
//! implement the core's traits instead (checked by `tests/architecture.rs`).

pub mod agent;
pub mod commands;
pub mod ports;
pub mod prompt;
pub mod risk;
pub mod rules;
pub mod tools;
