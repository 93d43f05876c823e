//! The MCP hub against the fixture server (`tests/fixtures/mcp_server.rs`) as a real child
//! process over stdio and as a real streamable HTTP server on loopback: what is offered,
//! what a call returns, and what happens when a server hangs, crashes, will not start,
//! changes its tools, or is left running when the hub goes.

mod support;

use std::time::Duration;

use riskgate::mcp::{
    McpError, McpHub, NonTextKind, Part, ServerState, ToolHints, ToolPolicy, check, names,
};
use serde_json::json;
use support::mcp::{
    HttpFixture, alive, args, command_server, env, fixture_exe, free_port, http_server, settings,
    stdio_server, survivors, wait_for_failure, wait_for_state, wait_for_tools,
};

/// Tools the fixture lists (over several pages of four).
const FIXTURE_TOOLS: usize = 19;

#[tokio::test]
async fn every_page_of_tools_is_offered_with_names_annotations_and_policies() {
    let mut server = stdio_server("fx");
    server.trust_annotations = true;
    server.tools = [
        ("wipe".to_owned(), ToolPolicy::Deny),
        ("echo".to_owned(), ToolPolicy::Auto),
        ("plain".to_owned(), ToolPolicy::Confirm),
    ]
    .into();
    let hub = McpHub::start(&settings(vec![server])).await;
    let tools = hub.tools();
    assert_eq!(tools.len(), FIXTURE_TOOLS - 1, "{:?}", hub.status());
    assert!(
        tools.find("fx", "wipe").is_none(),
        "a denied tool is not offered"
    );

    let echo = tools.get("mcp__fx__echo").expect("echo");
    assert_eq!(echo.server, "fx");
    assert_eq!(echo.name, "echo");
    assert_eq!(echo.title.as_deref(), Some("Echo back"));
    assert_eq!(echo.description, "Returns its text.");
    assert_eq!(echo.policy, Some(ToolPolicy::Auto));
    assert!(echo.trust_annotations);
    let read_only = ToolHints {
        read_only: Some(true),
        destructive: Some(false),
        idempotent: Some(true),
        open_world: Some(false),
    };
    assert_eq!(echo.hints, read_only);
    assert_eq!(echo.trusted_hints(), Some(read_only));
    assert_eq!(
        serde_json::Value::Object((*echo.input_schema).clone()),
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );

    let plain = tools.get("mcp__fx__plain").expect("plain");
    assert_eq!(plain.hints, ToolHints::default());
    assert_eq!(plain.policy, Some(ToolPolicy::Confirm));
    let contradictory = tools.get("mcp__fx__contradictory").expect("contradictory");
    assert_eq!(
        (
            contradictory.hints.read_only,
            contradictory.hints.destructive
        ),
        (Some(true), Some(true))
    );
    assert_eq!(contradictory.policy, None);

    // Names the OpenAI API would refuse are made valid, distinct and stable.
    let odd = tools.find("fx", "odd.name with spaces/é").expect("odd");
    assert!(
        odd.offered_name
            .starts_with("mcp__fx__odd_name_with_spaces__")
    );
    let long = tools
        .find(
            "fx",
            "a_tool_whose_name_is_far_too_long_to_fit_in_sixty_four_characters_with_its_prefix",
        )
        .expect("long");
    assert_eq!(long.offered_name.len(), names::MAX_NAME_CHARS);
    let mut offered: Vec<&str> = tools
        .tools()
        .iter()
        .map(|t| t.offered_name.as_str())
        .collect();
    assert!(offered.iter().all(|n| names::is_valid_function_name(n)));
    offered.dedup();
    assert_eq!(offered.len(), FIXTURE_TOOLS - 1);

    let status = hub.status();
    assert_eq!(status.len(), 1);
    assert_eq!(status[0].state, ServerState::Ready);
    assert_eq!(status[0].tools, FIXTURE_TOOLS - 1);
    assert!(status[0].pid.is_some_and(alive));
    assert!(
        status[0]
            .to_string()
            .starts_with(&format!("fx: ready, {} tools (stdio (", FIXTURE_TOOLS - 1)),
        "{}",
        status[0]
    );

    // A denied tool cannot be called by its server's name either; nothing reaches it.
    let denied = hub.call_tool("fx", "wipe", args(json!({}))).await;
    assert!(matches!(denied, Err(McpError::Denied { .. })), "{denied:?}");
    let unknown = hub.call("mcp__fx__nothing", args(json!({}))).await;
    assert!(
        matches!(unknown, Err(McpError::UnknownTool { .. })),
        "{unknown:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn results_are_text_with_other_content_described_and_structured_content_kept() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
    let echo = hub
        .call("mcp__fx__echo", args(json!({"text": "hello, world"})))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "hello, world");
    assert_eq!(echo.cut, None);

    let media = hub
        .call("mcp__fx__media", args(json!({})))
        .await
        .expect("media");
    assert_eq!(
        media.text(),
        "here is everything\n\
         [image, image/png, 70 bytes]\n\
         [audio, audio/wav, 12 bytes]\n\
         [resource file:///notes.txt, text/plain, 12 bytes]\n\
         [resource file:///blob.bin, application/octet-stream, 6 bytes]\n\
         [resource link file:///reports/q3.pdf \"q3.pdf\", application/pdf, 123456 bytes]"
    );
    let kinds: Vec<NonTextKind> = media
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Other(other) => Some(other.kind),
            Part::Text(_) => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            NonTextKind::Image,
            NonTextKind::Audio,
            NonTextKind::Resource,
            NonTextKind::Resource,
            NonTextKind::ResourceLink
        ]
    );
    // The image's bytes are not in the result.
    assert!(!format!("{media:?}").contains("iVBORw0KGgo"));

    let structured = hub
        .call("mcp__fx__structured", args(json!({})))
        .await
        .expect("structured");
    assert_eq!(
        structured.structured,
        Some(json!({"temperature": 21.5, "unit": "C"}))
    );
    let only = hub
        .call("mcp__fx__structured_only", args(json!({})))
        .await
        .expect("structured only");
    assert_eq!(only.text(), r#"{"rows":[1,2,3]}"#);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_huge_result_is_cut_to_the_cap_and_says_how_much() {
    let mut config = settings(vec![stdio_server("fx")]);
    config.result_max_bytes = 10_001;
    let hub = McpHub::start(&config).await;
    let output = hub
        .call("mcp__fx__huge", args(json!({"bytes": 3_000_000})))
        .await
        .expect("huge");
    let text = output.text();
    // Two-byte characters: the cut falls on a boundary below the odd cap.
    assert_eq!(text.len(), 10_000);
    assert!(text.chars().all(|c| c == 'é'));
    let cut = output.cut.expect("the cut is reported");
    assert_eq!((cut.total_bytes, cut.kept_bytes), (3_000_000, 10_000));
    assert_eq!(
        cut.to_string(),
        "the result was 3000000 bytes; 10000 bytes kept"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_reported_error_and_a_refusal_are_distinct_errors_with_the_servers_words() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
    match hub.call("mcp__fx__fail", args(json!({}))).await {
        Err(McpError::ToolFailed { output, tool, .. }) => {
            assert_eq!(tool, "fail");
            assert_eq!(output.text(), "the widget is broken");
        }
        other => panic!("expected ToolFailed, got {other:?}"),
    }
    match hub.call("mcp__fx__refuse", args(json!({}))).await {
        Err(McpError::Refused { code, message, .. }) => {
            assert_eq!(code, -32602);
            assert_eq!(message, "bad arguments: `x` is required");
        }
        other => panic!("expected Refused, got {other:?}"),
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn a_hung_call_times_out_while_other_calls_still_answer() {
    let mut config = settings(vec![stdio_server("fx"), stdio_server("other")]);
    config.call_timeout_secs = 5;
    let hub = McpHub::start(&config).await;
    let hung = hub.call("mcp__fx__hang", args(json!({})));
    tokio::pin!(hung);
    // While the hung call waits, calls to the same server and to another one answer.
    for tool in ["mcp__fx__echo", "mcp__other__echo"] {
        tokio::select! {
            biased;
            answer = hub.call(tool, args(json!({"text": "still here"}))) => {
                assert_eq!(answer.expect("answer").text(), "still here");
            }
            early = &mut hung => panic!("the hung call ended first: {early:?}"),
        }
    }
    match hung.await {
        Err(error @ McpError::Timeout { .. }) => {
            assert_eq!(
                error.to_string(),
                "MCP server `fx` did not answer the call of `hang` within 5 s (mcp.call_timeout_secs); the call was cancelled"
            );
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    // The server was told: it saw the call cancelled.
    let mut told = String::new();
    for _ in 0..100 {
        told = hub
            .call("mcp__fx__cancelled", args(json!({})))
            .await
            .expect("cancelled")
            .text();
        if told == "1" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(told, "1", "the server heard of the cancel");
    // The server that hung one call still serves the next.
    let after = hub
        .call("mcp__fx__echo", args(json!({"text": "after"})))
        .await
        .expect("after the timeout");
    assert_eq!(after.text(), "after");
    assert_eq!(hub.status()[0].state, ServerState::Ready);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_is_restarted_with_growing_backoff_and_its_tools_return() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx"), stdio_server("calm")])).await;
    let first_pid = hub.status()[0].pid.expect("pid");

    let crashed = hub.call("mcp__fx__crash", args(json!({}))).await;
    match &crashed {
        Err(McpError::ServerGone { server, tool, .. }) => {
            assert_eq!((server.as_str(), tool.as_str()), ("fx", "crash"));
        }
        other => panic!("expected ServerGone, got {other:?}"),
    }
    let state = wait_for_state(&hub, "fx", |s| matches!(s, ServerState::Failed { .. })).await;
    let ServerState::Failed {
        reason,
        restart_at,
        backoff,
    } = &state
    else {
        unreachable!()
    };
    assert!(
        reason.contains("exited with status 3")
            && reason.contains("crashing on purpose in the middle of a call"),
        "{reason}"
    );
    assert!(restart_at.is_some());
    assert_eq!(*backoff, Duration::from_secs(1));
    assert!(state.to_string().contains("; restarting in "), "{state}");
    // Its tools are gone while it is down; the other server's stay.
    assert!(hub.tools().tools().iter().all(|t| t.server == "calm"));
    let unavailable = hub
        .call_tool("fx", "echo", args(json!({"text": "x"})))
        .await;
    assert!(
        matches!(&unavailable, Err(McpError::Unavailable { state, .. }) if state.starts_with("failed: the server exited with status 3")),
        "{unavailable:?}"
    );

    wait_for_tools(&hub, "fx's tools back", |tools| {
        tools.find("fx", "echo").is_some()
    })
    .await;
    let second_pid = hub.status()[0].pid.expect("pid");
    assert_ne!(first_pid, second_pid, "a new process");
    assert!(!alive(first_pid));
    let echo = hub
        .call("mcp__fx__echo", args(json!({"text": "back"})))
        .await
        .expect("echo after the restart");
    assert_eq!(echo.text(), "back");

    // A second crash soon after: the wait doubles.
    let _ = hub.call("mcp__fx__crash", args(json!({}))).await;
    let state = wait_for_state(&hub, "fx", |s| matches!(s, ServerState::Failed { .. })).await;
    assert!(
        matches!(state, ServerState::Failed { backoff, .. } if backoff == Duration::from_secs(2)),
        "{state:?}"
    );
    wait_for_tools(&hub, "fx's tools back again", |tools| {
        tools.find("fx", "echo").is_some()
    })
    .await;
    hub.shutdown().await;
}

#[tokio::test]
async fn servers_that_cannot_start_leave_the_hub_running_and_say_why() {
    let closed_port = free_port();
    let config = settings(vec![
        stdio_server("good"),
        command_server(
            "exits",
            &[fixture_exe(), "exit", "2", "config missing: FOO_URL"],
        ),
        command_server("missing", &["/nonexistent/mcp-server"]),
        http_server(
            "nobody",
            &format!("http://127.0.0.1:{closed_port}/mcp"),
            None,
        ),
    ]);
    let hub = McpHub::start(&config).await;
    let tools = hub.tools();
    assert_eq!(tools.len(), FIXTURE_TOOLS);
    assert!(tools.tools().iter().all(|t| t.server == "good"));
    let reasons: Vec<(String, String)> = hub
        .status()
        .into_iter()
        .map(|s| (s.name.clone(), s.state.to_string()))
        .collect();
    let reason = |name: &str| {
        reasons
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, r)| r.clone())
            .expect("status")
    };
    assert_eq!(reason("good"), "ready");
    assert!(
        reason("exits").starts_with("failed: the server exited with status 2; its last words on stderr: config missing: FOO_URL"),
        "{}",
        reason("exits")
    );
    assert!(
        reason("missing")
            .starts_with("failed: cannot start \"/nonexistent/mcp-server\": no such program"),
        "{}",
        reason("missing")
    );
    assert!(
        reason("nobody").starts_with("failed: cannot connect: "),
        "{}",
        reason("nobody")
    );
    // The good server answers while the others fail and restart.
    hub.call("mcp__good__echo", args(json!({"text": "ok"})))
        .await
        .expect("the good server answers");

    // check-config's view: the same reasons, each server tried once.
    let checks = check(&config).await;
    let lines: Vec<String> = checks.iter().map(ToString::to_string).collect();
    assert!(
        lines[0].starts_with("mcp server \"good\" (stdio (")
            && lines[0].ends_with(&format!(": starts, {FIXTURE_TOOLS} tools")),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("cannot start: the server exited with status 2; its last words on stderr: config missing: FOO_URL"),
        "{lines:?}"
    );
    assert!(lines[2].contains("no such program"), "{lines:?}");
    assert!(
        lines[3].contains("cannot start: cannot connect: ")
            && lines[3].contains("Connection refused")
            && lines[3].ends_with("(while trying to send initialize request)"),
        "{lines:?}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_hangs_at_start_is_given_up_after_the_start_timeout() {
    // `sleep` never answers the handshake.
    let mut config = settings(vec![
        command_server("silent", &[fixture_exe(), "sleep"]),
        stdio_server("good"),
    ]);
    config.start_timeout_secs = 2;
    let hub = McpHub::start(&config).await;
    // The start returned with the good server ready and the silent one given up on.
    assert_eq!(hub.status()[1].state, ServerState::Ready);
    let said = wait_for_failure(&hub, "silent").await;
    assert!(
        said.starts_with("failed: it did not finish starting within 2 s (mcp.start_timeout_secs)"),
        "{said}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_changed_tool_list_is_published_to_watchers() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
    let mut watcher = hub.watch_tools();
    watcher.borrow_and_update();
    hub.call("mcp__fx__add_tool", args(json!({"name": "fresh"})))
        .await
        .expect("add");
    wait_for_tools(&hub, "the added tool", |t| {
        t.get("mcp__fx__fresh").is_some()
    })
    .await;
    assert!(watcher.has_changed().expect("open"), "watchers hear of it");
    assert_eq!(hub.tools().len(), FIXTURE_TOOLS + 1);
    assert_eq!(
        hub.call("mcp__fx__fresh", args(json!({})))
            .await
            .expect("the new tool")
            .text(),
        "fresh ran"
    );
    hub.call("mcp__fx__remove_tool", args(json!({"name": "fresh"})))
        .await
        .expect("remove");
    wait_for_tools(&hub, "the tool removed", |t| {
        t.get("mcp__fx__fresh").is_none()
    })
    .await;
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_follows_a_list_a_call_changed_once_the_hub_has_heard_of_it() {
    // The server says its list changed before it answers the call, and the hub takes the
    // list again after that. rmcp hands the notice to the hub on a task of its own, so the
    // hub may hear of it a moment after the answer; from then on, a run that waits for the
    // registry to settle is offered the new list (in a run, the model's answer lies
    // between the call and the next run's start).
    let hub = std::sync::Arc::new(McpHub::start(&settings(vec![stdio_server("fx")])).await);
    let registry = riskgate::core::tools::ToolRegistry::new();
    riskgate::tools::mcp::follow(&hub, &registry, 1_800);
    assert_eq!(registry.names().len(), FIXTURE_TOOLS);
    let settles_to = |name: String, present: bool| {
        let registry = registry.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            loop {
                registry.settled().await;
                if registry.get(&name).is_some() == present {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{name} present: {}; {registry:?}",
                    !present
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    };
    for round in 0..5 {
        let name = format!("fresh{round}");
        hub.call("mcp__fx__add_tool", args(json!({ "name": name })))
            .await
            .expect("add");
        settles_to(format!("mcp__fx__{name}"), true).await;
        hub.call("mcp__fx__remove_tool", args(json!({ "name": name })))
            .await
            .expect("remove");
        settles_to(format!("mcp__fx__{name}"), false).await;
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn a_stdio_server_sees_only_its_configured_environment_and_path() {
    let mut plain = stdio_server("plain");
    plain.env = env(&[("FIXTURE_SETTING", "value-1")]);
    let mut own_path = stdio_server("own_path");
    own_path.env = env(&[("PATH", "/opt/server/bin")]);
    let hub = McpHub::start(&settings(vec![plain, own_path])).await;
    let seen = |text: String| -> serde_json::Map<String, serde_json::Value> {
        serde_json::from_str(&text).expect("JSON")
    };
    let vars = seen(
        hub.call("mcp__plain__environment", args(json!({})))
            .await
            .expect("environment")
            .text(),
    );
    let names: Vec<&str> = vars.keys().map(String::as_str).collect();
    assert_eq!(names, ["FIXTURE_SETTING", "PATH"], "{vars:?}");
    assert_eq!(vars["FIXTURE_SETTING"], "value-1");
    assert_eq!(
        vars["PATH"],
        std::env::var("PATH").expect("the tests have a PATH")
    );
    // Something the test process has is not passed on.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert!(!vars.contains_key("CARGO_MANIFEST_DIR"));

    let vars = seen(
        hub.call("mcp__own_path__environment", args(json!({})))
            .await
            .expect("environment")
            .text(),
    );
    assert_eq!(
        serde_json::Value::Object(vars),
        json!({"PATH": "/opt/server/bin"})
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn the_http_fixture_needs_the_bearer_token_and_serves_calls_and_list_changes() {
    let fixture = HttpFixture::start(0, Some("right-token-123")).await;
    let mut config = settings(vec![
        http_server("web", &fixture.url, Some("right-token-123")),
        http_server("wrong", &fixture.url, Some("wrong-token-456")),
        http_server("none", &fixture.url, None),
    ]);
    config.call_timeout_secs = 5;
    let hub = McpHub::start(&config).await;
    let status = hub.status();
    assert_eq!(status[0].state, ServerState::Ready, "{status:?}");
    assert_eq!(status[0].tools, FIXTURE_TOOLS);
    assert_eq!(status[0].pid, None);
    assert!(
        status[1].state.to_string().starts_with(
            "failed: the server refused the bearer token (HTTP 401/403): check bearer_token or bearer_token_file"
        ),
        "{}",
        status[1].state
    );
    assert!(
        status[2].state.to_string().starts_with(
            "failed: the server requires authorization (HTTP 401/403): set bearer_token or bearer_token_file"
        ),
        "{}",
        status[2].state
    );

    let echo = hub
        .call("mcp__web__echo", args(json!({"text": "over http"})))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "over http");
    let media = hub
        .call("mcp__web__media", args(json!({})))
        .await
        .expect("media");
    assert!(media.text().contains("[image, image/png, 70 bytes]"));

    // A hung call times out; another answers meanwhile.
    let hung = hub.call("mcp__web__hang", args(json!({})));
    tokio::pin!(hung);
    tokio::select! {
        biased;
        answer = hub.call("mcp__web__echo", args(json!({"text": "meanwhile"}))) => {
            assert_eq!(answer.expect("answer").text(), "meanwhile");
        }
        early = &mut hung => panic!("the hung call ended first: {early:?}"),
    }
    assert!(matches!(hung.await, Err(McpError::Timeout { .. })));

    // The server's notification reaches the hub over HTTP.
    hub.call("mcp__web__add_tool", args(json!({"name": "fresh"})))
        .await
        .expect("add");
    wait_for_tools(&hub, "the tool added over HTTP", |t| {
        t.get("mcp__web__fresh").is_some()
    })
    .await;
    hub.shutdown().await;
    fixture.stop().await;
}

#[tokio::test]
async fn an_idle_http_server_that_goes_away_is_noticed_by_its_ping() {
    let fixture = HttpFixture::start(0, None).await;
    let hub = McpHub::start(&settings(vec![http_server("web", &fixture.url, None)])).await;
    assert_eq!(hub.tools().len(), FIXTURE_TOOLS);
    fixture.stop().await;
    // No call: the ping (every second here) finds it gone.
    let said = wait_for_failure(&hub, "web").await;
    assert!(said.starts_with("failed: it stopped answering"), "{said}");
    assert!(hub.tools().is_empty());
    hub.shutdown().await;
}

#[tokio::test]
async fn an_http_server_that_goes_away_loses_its_tools_and_gets_them_back_when_it_returns() {
    let fixture = HttpFixture::start(0, None).await;
    let port = fixture.port;
    let hub = McpHub::start(&settings(vec![http_server("web", &fixture.url, None)])).await;
    assert_eq!(hub.tools().len(), FIXTURE_TOOLS);
    fixture.stop().await;

    let gone = hub.call("mcp__web__echo", args(json!({"text": "x"}))).await;
    assert!(matches!(gone, Err(McpError::ServerGone { .. })), "{gone:?}");
    wait_for_state(&hub, "web", |s| matches!(s, ServerState::Failed { .. })).await;
    assert!(hub.tools().is_empty());

    let back = HttpFixture::start(port, None).await;
    wait_for_tools(&hub, "the returned server's tools", |t| {
        t.len() == FIXTURE_TOOLS
    })
    .await;
    let echo = hub
        .call("mcp__web__echo", args(json!({"text": "again"})))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "again");
    hub.shutdown().await;
    back.stop().await;
}

/// The pids of a fixture server and of the grandchild it started.
async fn server_and_grandchild(hub: &McpHub, tool: &str) -> (u32, u32) {
    let answer = hub
        .call(tool, args(json!({})))
        .await
        .expect("spawn_grandchild")
        .text();
    let pids: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let pid = |key: &str| {
        pids[key]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .expect("pid")
    };
    (pid("pid"), pid("grandchild"))
}

#[tokio::test]
async fn no_process_outlives_a_dropped_hub_grandchildren_included() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx"), stdio_server("two")])).await;
    let (server, grandchild) = server_and_grandchild(&hub, "mcp__fx__spawn_grandchild").await;
    let (server_two, grandchild_two) =
        server_and_grandchild(&hub, "mcp__two__spawn_grandchild").await;
    let pids = [server, grandchild, server_two, grandchild_two];
    assert!(pids.iter().all(|&p| alive(p)), "all running first");
    drop(hub);
    assert_eq!(survivors(&pids).await, Vec::<u32>::new());
}

#[tokio::test]
async fn shutdown_stops_every_server_and_says_so() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
    let (server, grandchild) = server_and_grandchild(&hub, "mcp__fx__spawn_grandchild").await;
    hub.shutdown().await;
    assert_eq!(survivors(&[server, grandchild]).await, Vec::<u32>::new());
    assert_eq!(hub.status()[0].state, ServerState::Stopped);
    assert!(hub.tools().is_empty());
}

#[tokio::test]
async fn a_dead_servers_leftover_processes_are_killed_before_it_is_restarted() {
    let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
    let (_, grandchild) = server_and_grandchild(&hub, "mcp__fx__spawn_grandchild").await;
    let _ = hub.call("mcp__fx__crash", args(json!({}))).await;
    assert_eq!(survivors(&[grandchild]).await, Vec::<u32>::new());
    hub.shutdown().await;
}

/// As when the bot exits: its runtime goes first (no task of the hub runs again), then
/// the hub.
#[test]
fn no_process_outlives_a_hub_dropped_after_its_runtime() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (hub, pids) = runtime.block_on(async {
        let hub = McpHub::start(&settings(vec![stdio_server("fx")])).await;
        let (server, grandchild) = server_and_grandchild(&hub, "mcp__fx__spawn_grandchild").await;
        (hub, [server, grandchild])
    });
    assert!(pids.iter().all(|&p| alive(p)), "all running first");
    drop(runtime);
    drop(hub);
    let checker = tokio::runtime::Runtime::new().expect("runtime");
    assert_eq!(checker.block_on(survivors(&pids)), Vec::<u32>::new());
}
