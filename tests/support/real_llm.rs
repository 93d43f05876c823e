//! The settings for a real model server, as `tests/real_model.rs` and
//! `benches/real_model.rs` read them from the environment: `RISKGATE_TEST_LLM_URL` (the
//! caller's), `RISKGATE_TEST_LLM_MODEL` (default `local`), `RISKGATE_TEST_LLM_PROTOCOL`
//! (`native` or `json`, default `native`) and `RISKGATE_TEST_LLM_MAX_TOKENS` (default:
//! `llm.max_tokens`'s).

use riskgate::config::Settings;

/// The defaults, with the model server at `url` and the environment's choices, working in
/// `workspace`.
pub fn settings(url: &str, workspace: &std::path::Path) -> Settings {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.to_path_buf();
    settings.llm.base_url = url.to_owned();
    settings.llm.model =
        std::env::var("RISKGATE_TEST_LLM_MODEL").unwrap_or_else(|_| "local".into());
    settings.llm.protocol =
        std::env::var("RISKGATE_TEST_LLM_PROTOCOL").unwrap_or_else(|_| "native".into());
    if let Some(cap) = std::env::var("RISKGATE_TEST_LLM_MAX_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        settings.llm.max_tokens = cap;
    }
    settings
}
