//! MCP servers' tools behind the gate, through the real binary's console with a scripted
//! model: what is offered, what runs without a click, what asks, and the effects on the
//! server's state (read back from the server's own storage), never only the decision.
//!
//! The fixture server (`riskgate-mcp-fixture`) covers annotations, hangs and crashes; the
//! real `@modelcontextprotocol/server-memory` from npm (installed by `.ci/run`, named by
//! `RISKGATE_TEST_MCP_NPM`) covers state. Without it those tests say they skipped.

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::console_scene::{Scene, decisions, model_saw, spare_answers};
use support::fake_llm::{self, FakeLlm, Scripted};

const FIXTURE: &str = env!("CARGO_BIN_EXE_riskgate-mcp-fixture");

/// The npm servers' install, if `.ci/run` made one.
fn npm_server(bin: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("RISKGATE_TEST_MCP_NPM") else {
        eprintln!(
            "skipped: RISKGATE_TEST_MCP_NPM is not set (.ci/run installs the npm MCP servers)"
        );
        return None;
    };
    let path = Path::new(&dir).join("node_modules/.bin").join(bin);
    if !path.exists() {
        eprintln!("skipped: {} is not installed", path.display());
        return None;
    }
    Some(path)
}

/// Writes a configuration file holding `mcp` (TOML) and returns the variable naming it.
fn config(scene: &Scene, mcp: &str) -> (String, String) {
    let path = scene.bot.join("riskgate.toml");
    std::fs::write(
        &path,
        format!("[mcp]\ncall_timeout_secs = 3\nstart_timeout_secs = 20\nrestart_initial_secs = 1\n\n{mcp}"),
    )
    .expect("config");
    ("RISKGATE_CONFIG".to_owned(), path.display().to_string())
}

fn call(id: &str, tool: &str, arguments: Value) -> Scripted {
    fake_llm::tool_calls(&[(id, tool, arguments)])
}

/// The tool messages of the model's last request, joined.
async fn tool_results(fake: &FakeLlm) -> String {
    let requests = fake.requests().await;
    requests
        .last()
        .and_then(|r| r["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names of the tools the model's first request offered, with each one's schema.
async fn offered(fake: &FakeLlm) -> Vec<(String, Value)> {
    let requests = fake.requests().await;
    requests
        .first()
        .and_then(|r| r["tools"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                t["function"]["parameters"].clone(),
            )
        })
        .collect()
}

fn run(scene: &Scene, fake: &FakeLlm, env: &(String, String), answer: &str) -> Vec<Value> {
    scene.run_answering_with(fake, "work with the tools", answer, &[(&env.0, &env.1)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trusted_read_only_tool_runs_without_a_click_and_its_text_reaches_the_model() {
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"fx\"\ncommand = [\"{FIXTURE}\", \"stdio\"]\ntrust_annotations = true\ntools = {{ refuse = \"deny\" }}\n"
        ),
    );
    let mut script = vec![
        call("c1", "mcp__fx__echo", json!({"text": "hello-from-mcp"})),
        call("c2", "mcp__fx__wipe", json!({"risk_level": "low"})),
        call("c3", "mcp__fx__refuse", json!({})),
    ];
    script.extend(spare_answers());
    let fake = FakeLlm::start(script).await;
    let events = run(&scene, &fake, &env, "n");
    // echo: read-only from a trusted server, no click; wipe: destructive, the model's low
    // does not run it; refuse: denied by the operator, never offered, and not run (the
    // model is told no such tool is offered).
    assert_eq!(decisions(&events), ["auto", "confirm"], "{events:?}");
    let saw = tool_results(&fake).await;
    assert!(saw.contains("mcp__fx__refuse"), "{saw}");
    assert!(
        !saw.contains("`x` is required"),
        "the denied tool ran: {saw}"
    );
    assert!(saw.contains("hello-from-mcp"), "{saw}");
    assert!(saw.contains("<tool_output note=\"untrusted data"), "{saw}");
    assert!(
        !saw.contains("wiped (not really)"),
        "the cancelled call ran: {saw}"
    );
    let tools = offered(&fake).await;
    let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"mcp__fx__echo"), "{names:?}");
    assert!(
        !names.contains(&"mcp__fx__refuse"),
        "a denied tool was offered: {names:?}"
    );
    assert!(
        names.contains(&"execute_sql"),
        "the built-ins are still there: {names:?}"
    );
    let echo = &tools
        .iter()
        .find(|(n, _)| n == "mcp__fx__echo")
        .expect("echo")
        .1;
    assert!(echo["properties"]["risk_level"].is_object(), "{echo}");
    assert!(echo["properties"]["text"].is_object(), "{echo}");
    // The approval named the server and the tool and showed the arguments.
    let approval = events
        .iter()
        .find(|e| e["event"] == "approval_requested")
        .expect("an approval");
    let shown = approval.to_string();
    assert!(shown.contains("MCP server fx, tool wipe"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_servers_write_asks_a_cancel_changes_nothing_and_a_confirm_writes() {
    let Some(memory) = npm_server("mcp-server-memory") else {
        return;
    };
    let scene = Scene::new();
    let store = scene.bot.join("memory.jsonl");
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"memory\"\ncommand = [\"{}\"]\nenv = {{ MEMORY_FILE_PATH = \"{}\" }}\ntools = {{ read_graph = \"auto\", delete_entities = \"deny\" }}\n",
            memory.display(),
            store.display()
        ),
    );
    let create = json!({
        "entities": [{"name": "Ada-7f3e", "entityType": "person", "observations": ["wrote the first program"]}],
        "risk_level": "low"
    });
    let mut script = vec![
        call("c1", "mcp__memory__create_entities", create.clone()),
        call("c2", "mcp__memory__read_graph", json!({})),
    ];
    script.extend(spare_answers());
    let fake = FakeLlm::start(script).await;
    let events = run(&scene, &fake, &env, "n");
    assert_eq!(decisions(&events), ["confirm", "auto"], "{events:?}");
    let saw = model_saw(&fake).await;
    // The read ran without a click (operator: auto) and found nothing written.
    assert!(!tool_results(&fake).await.contains("Ada-7f3e"), "{saw}");
    let stored = std::fs::read_to_string(&store).unwrap_or_default();
    assert!(
        !stored.contains("Ada-7f3e"),
        "a cancelled call wrote: {stored}"
    );
    let names: Vec<String> = offered(&fake).await.into_iter().map(|(n, _)| n).collect();
    assert!(
        !names.iter().any(|n| n == "mcp__memory__delete_entities"),
        "{names:?}"
    );

    // Confirmed, the same call writes, and the read sees it.
    let mut script = vec![
        call("c1", "mcp__memory__create_entities", create),
        call("c2", "mcp__memory__read_graph", json!({})),
    ];
    script.extend(spare_answers());
    let fake = FakeLlm::start(script).await;
    let events = run(&scene, &fake, &env, "y");
    assert_eq!(decisions(&events), ["confirm", "auto"], "{events:?}");
    let stored = std::fs::read_to_string(&store).expect("the server stored the entity");
    assert!(stored.contains("Ada-7f3e"), "{stored}");
    assert!(tool_results(&fake).await.contains("Ada-7f3e"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_or_crashes_gives_the_model_a_clear_error_and_the_channel_goes_on() {
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"fx\"\ncommand = [\"{FIXTURE}\", \"stdio\"]\ntools = {{ hang = \"auto\", crash = \"auto\", echo = \"auto\" }}\n"
        ),
    );
    let echo = fake_llm::tool_calls(&[("c3", "mcp__fx__echo", json!({"text": "after-restart"}))]);
    let Scripted::Reply(echo) = echo else {
        unreachable!("tool_calls is a reply")
    };
    let script = vec![
        call("c1", "mcp__fx__hang", json!({})),
        call("c2", "mcp__fx__crash", json!({})),
        fake_llm::text("the server is unwell"),
        // The next message comes a while later, as messages do: the server is back.
        Scripted::Slow(std::time::Duration::from_secs(4), echo),
        fake_llm::text("it answers again"),
    ];
    let fake = FakeLlm::start(script).await;
    let started = std::time::Instant::now();
    let events = scene.run(&fake, "first\nsecond\n", &[(&env.0, &env.1)]);
    assert_eq!(decisions(&events), ["auto", "auto", "auto"], "{events:?}");
    let saw = model_saw(&fake).await;
    assert!(
        saw.contains("did not answer the call of `hang` within 3 s (mcp.call_timeout_secs)"),
        "{saw}"
    );
    assert!(
        saw.contains("went away during the call of `crash`"),
        "{saw}"
    );
    let replies: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "reply")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(
        replies,
        ["the server is unwell", "it answers again"],
        "{events:?}"
    );
    // The server was started again: the second message's call reached it.
    assert!(tool_results(&fake).await.contains("after-restart"), "{saw}");
    // The hung call held the run for the call timeout, not for ever.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_lists_the_servers_and_their_tools() {
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"fx\"\ncommand = [\"{FIXTURE}\", \"stdio\"]\n\n[[mcp.servers]]\nname = \"broken\"\ncommand = [\"{FIXTURE}\", \"exit\", \"3\", \"no such database\"]\n"
        ),
    );
    let fake = FakeLlm::start(spare_answers()).await;
    let events = scene.run(&fake, "/status\n", &[(&env.0, &env.1)]);
    let status = events
        .iter()
        .find(|e| e["event"] == "status")
        .expect("a status");
    let servers = status["mcp_servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 2, "{status}");
    let fx = servers[0].as_str().unwrap_or_default();
    assert!(fx.starts_with("fx: ready, "), "{fx}");
    assert!(fx.contains("(stdio"), "{fx}");
    let broken = servers[1].as_str().unwrap_or_default();
    assert!(broken.starts_with("broken: failed: "), "{broken}");
    assert!(broken.contains("no such database"), "{broken}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_similar_lets_the_same_tool_on_another_thing_run_and_nothing_else() {
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"fx\"\ncommand = [\"{FIXTURE}\", \"stdio\"]\ntrust_annotations = true\n"
        ),
    );
    let mut script = vec![
        // The model rates a read-only tool's call medium: it asks, and "a" confirms it and
        // allows similar calls.
        call(
            "c1",
            "mcp__fx__echo",
            json!({"text": "ticket-17", "risk_level": "medium"}),
        ),
        // The same tool about another identifier: covered by the rule.
        call(
            "c2",
            "mcp__fx__echo",
            json!({"text": "ticket-18", "risk_level": "medium"}),
        ),
        // Free text is what the call does: not covered.
        call(
            "c3",
            "mcp__fx__echo",
            json!({"text": "close every ticket", "risk_level": "medium"}),
        ),
        // Another tool of the server (destructive by MCP's default): never covered.
        call("c4", "mcp__fx__plain", json!({})),
    ];
    script.extend(spare_answers());
    let fake = FakeLlm::start(script).await;
    let events = scene.run_answering_with(&fake, "echo the tickets", "a", &[(&env.0, &env.1)]);
    let calls: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["event"] == "tool_call")
        .map(|e| {
            (
                e["decision"].as_str().unwrap_or_default().to_owned(),
                e["source"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("confirm", "llm"),
        ("auto", "channel_rule"),
        ("confirm", "llm"),
        ("confirm", "default"),
    ];
    assert_eq!(
        calls,
        expected.map(|(d, s)| (d.to_owned(), s.to_owned())),
        "{events:?}"
    );
    // The channel was told what the rule covers.
    let all = serde_json::to_string(&events).expect("json");
    assert!(
        all.contains("`echo` of MCP server `fx` with any `text`"),
        "{all}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_list_change_reaches_the_next_run() {
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"fx\"\ncommand = [\"{FIXTURE}\", \"stdio\"]\ntools = {{ add_tool = \"auto\" }}\n"
        ),
    );
    let script = vec![
        call("c1", "mcp__fx__add_tool", json!({"name": "fresh_tool"})),
        fake_llm::text("added"),
        fake_llm::text("second run"),
    ];
    let fake = FakeLlm::start(script).await;
    let events = scene.run(&fake, "add a tool\nwhat now\n", &[(&env.0, &env.1)]);
    assert_eq!(decisions(&events), ["auto"], "{events:?}");
    let requests = fake.requests().await;
    let offered_in = |request: &Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect()
    };
    let first = offered_in(&requests[0]);
    let last = offered_in(requests.last().expect("requests"));
    assert!(
        !first.iter().any(|n| n == "mcp__fx__fresh_tool"),
        "{first:?}"
    );
    assert!(last.iter().any(|n| n == "mcp__fx__fresh_tool"), "{last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_with_a_token_is_gated_the_same_way() {
    let server = support::mcp::HttpFixture::start(0, Some("token-9d1c")).await;
    let scene = Scene::new();
    let env = config(
        &scene,
        &format!(
            "[[mcp.servers]]\nname = \"remote\"\nurl = \"{}\"\nbearer_token = \"token-9d1c\"\ntrust_annotations = true\n",
            server.url
        ),
    );
    let mut script = vec![
        call("c1", "mcp__remote__echo", json!({"text": "over-http"})),
        call("c2", "mcp__remote__wipe", json!({"risk_level": "low"})),
    ];
    script.extend(spare_answers());
    let fake = FakeLlm::start(script).await;
    let events = run(&scene, &fake, &env, "n");
    assert_eq!(decisions(&events), ["auto", "confirm"], "{events:?}");
    let saw = tool_results(&fake).await;
    assert!(saw.contains("over-http"), "{saw}");
    assert!(!saw.contains("wiped (not really)"), "{saw}");
    // The token never reaches the model or the console's output.
    assert!(!model_saw(&fake).await.contains("token-9d1c"));
    assert!(
        !serde_json::to_string(&events)
            .expect("json")
            .contains("token-9d1c")
    );
    server.stop().await;
}
