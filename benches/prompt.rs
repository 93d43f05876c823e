//! The size of what every request starts with: each shipped profile's system prompt (and,
//! in the native protocol, its tool definitions) for the default configuration, the demo
//! SQLite database and a workspace holding only it, in characters and in the conservative
//! token estimate requests are fitted with (`core/agent/fit.rs`: three bytes a token).
//!
//! `cargo test --bench prompt` (sizes do not depend on the build profile); `-- --show`
//! prints the prompts too.

use std::sync::Arc;

use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, ChatReply, ChatRequest, Protocol};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError,
};
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;

/// A model that is never asked: only the prompt is measured.
struct Unasked;

impl ChatModel for Unasked {
    fn complete<'a>(&'a self, _: &'a ChatRequest) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async { Err(ModelError::Rejected("not asked".into())) })
    }
}

impl ApprovalSurface for Unasked {
    fn request<'a>(&'a self, _: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

impl EventSink for Unasked {
    fn emit(&self, _: &str, _: &AgentEvent) {}
}

#[tokio::main]
async fn main() {
    let show = std::env::args().any(|a| a == "--show");
    let workspace = tempfile::tempdir().expect("a temporary workspace");
    println!("profile  protocol  system chars  system tokens  tool tokens  total tokens");
    for protocol in [Protocol::Native, Protocol::Json] {
        let mut settings = Settings::default();
        settings.tools.workspace = workspace.path().to_owned();
        settings.llm.protocol = protocol.as_str().to_owned();
        let unasked = Arc::new(Unasked);
        let agent = riskgate::app::build_agent(
            &settings,
            unasked.clone(),
            Arc::new(MemoryStore::new()),
            unasked.clone(),
            unasked,
        )
        .expect("agent");
        for profile in agent
            .profiles
            .names()
            .map(str::to_owned)
            .collect::<Vec<_>>()
        {
            let opening = agent.opening(&profile).await;
            println!(
                "{profile:<8} {:<9} {:>12}  {:>13}  {:>11}  {:>12}",
                protocol.as_str(),
                opening.system.chars().count(),
                opening.system_tokens,
                opening.tools_tokens,
                opening.system_tokens + opening.tools_tokens
            );
            if show {
                println!("{}", opening.system);
            }
        }
    }
}
