//! Shared test fixtures: the fake LLM server and recording adapters.
#![allow(dead_code)]

pub mod fake_llm;
