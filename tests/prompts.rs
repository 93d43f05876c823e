//! Snapshots of every rendered system prompt and of the first request body, so a change to
//! what the model is told shows up in review.

mod support;

use std::sync::Arc;

use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, Inbound, Protocol};
use riskgate::core::ports::{ApprovalOutcome, ApprovalRequest, ApprovalSurface, EventSink};
use riskgate::core::prompt::Prompts;
use riskgate::core::tools::BoxFuture;
use riskgate::store::MemoryStore;
use support::fake_llm::{self, FakeLlm};

/// The default settings in a workspace of the test's own: the prompt names what is there,
/// the demo database (created as the schema is read) and nothing else, never the path.
fn settings(workspace: &tempfile::TempDir) -> Settings {
    let mut settings = Settings::default();
    settings.tools.workspace = workspace.path().to_owned();
    settings
}

#[tokio::test]
async fn rendered_system_prompts() {
    let workspace = tempfile::tempdir().expect("workspace");
    let gate = riskgate::tools::builtin_gate(&settings(&workspace));
    let set = gate.registry().snapshot();
    let prompts = Prompts::default();
    let profiles = riskgate::tools::builtin_profiles("ops").expect("profiles");
    assert_eq!(profiles.names().collect::<Vec<_>>(), ["sql", "ops"]);
    for profile in profiles.iter() {
        // Asked first, as a run does: the tools' definitions name what it read.
        let context = riskgate::core::prompt::tools_context(&set, profile).await;
        let tools: Vec<_> = gate
            .registry()
            .definitions()
            .into_iter()
            .filter(|d| profile.offers_tool(&d.name))
            .collect();
        for (protocol, name) in [(Protocol::Native, "native"), (Protocol::Json, "json")] {
            insta::assert_snapshot!(
                format!("system_prompt_{}_{name}", profile.name()),
                prompts.system_prompt(profile, protocol, &tools, &context)
            );
        }
    }
}

struct Nobody;

impl ApprovalSurface for Nobody {
    fn request<'a>(&'a self, _r: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async { ApprovalOutcome::Expired })
    }
}

impl EventSink for Nobody {
    fn emit(&self, _channel: &str, _event: &AgentEvent) {}
}

#[tokio::test]
async fn the_first_request_body() {
    let fake = FakeLlm::start(vec![fake_llm::text("hello")]).await;
    let workspace = tempfile::tempdir().expect("workspace");
    let mut settings = settings(&workspace);
    settings.llm.base_url = fake.base_url();
    settings.llm.model = "test-model".into();
    let model = Arc::new(riskgate::app::model_client(&settings).expect("client"));
    let agent = riskgate::app::build_agent(
        &settings,
        model,
        Arc::new(MemoryStore::new()),
        Arc::new(Nobody),
        Arc::new(Nobody),
    )
    .expect("agent");
    agent
        .run(&Inbound {
            channel: "c".into(),
            author: "erin".into(),
            author_name: "erin".into(),
            text: "How many orders came in today?".into(),
        })
        .await;
    let requests = fake.requests().await;
    insta::assert_json_snapshot!("first_request_body_native", requests[0]);
}
