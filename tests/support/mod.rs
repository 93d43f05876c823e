//! Shared test fixtures: the fake LLM server, the fake Discord and recording adapters.
#![allow(dead_code)]

pub mod console_scene;
pub mod console_session;
pub mod fake_discord;
pub mod fake_llm;
pub mod hooked_store;
pub mod mcp;
pub mod pg_proxy;
pub mod pg_schema;
pub mod pty;
pub mod real_llm;
pub mod turns;
