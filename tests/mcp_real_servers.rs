//! The MCP hub against real servers from npm, pinned in `tests/mcp_npm/package-lock.json`:
//! `@modelcontextprotocol/server-memory` (state that calls change, and that a call the hub
//! refuses does not) and `@modelcontextprotocol/server-everything` over stdio and over
//! streamable HTTP.
//!
//! They run when `RISKGATE_TEST_MCP_NPM` names the directory they were installed into
//! (`.ci/run` does `npm ci` there); without it each test says it skipped and passes.

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use riskgate::mcp::{McpError, McpHub, NonTextKind, Part, ServerState, ToolPolicy};
use serde_json::json;
use support::mcp::{args, env, free_port, http_server, settings};
use tokio::io::{AsyncBufReadExt, BufReader};

const NPM_DIR: &str = "RISKGATE_TEST_MCP_NPM";

/// The installed servers' directory, or `None` (and a line saying so) when not set.
fn npm_dir(test: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(NPM_DIR) else {
        // Straight to stderr: the test harness captures eprintln! of a passing test.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "skipped {test}: set {NPM_DIR} to a directory where `npm ci` installed tests/mcp_npm (see .ci/run)"
        );
        return None;
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("node_modules/.bin").is_dir(),
        "{NPM_DIR}={} has no node_modules/.bin: run npm ci --prefix there",
        dir.display()
    );
    Some(dir)
}

/// A server's launcher script (`#!/usr/bin/env node`: it needs PATH to find node).
fn bin(dir: &std::path::Path, name: &str) -> String {
    dir.join("node_modules/.bin")
        .join(name)
        .display()
        .to_string()
}

#[tokio::test]
async fn memory_server_keeps_what_a_call_created_and_nothing_a_refused_call_would_have_changed() {
    let Some(dir) = npm_dir("memory_server") else {
        return;
    };
    let data = tempfile::tempdir().expect("tempdir");
    let memory_file = data.path().join("memory.jsonl");
    let mut server = support::mcp::command_server("memory", &[&bin(&dir, "mcp-server-memory")]);
    server.env = env(&[("MEMORY_FILE_PATH", &memory_file.display().to_string())]);
    server.tools = [("delete_entities".to_owned(), ToolPolicy::Deny)].into();
    let hub = McpHub::start(&settings(vec![server])).await;
    assert_eq!(
        hub.status()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.status()
    );
    let tools = hub.tools();
    for name in [
        "create_entities",
        "read_graph",
        "add_observations",
        "search_nodes",
    ] {
        assert!(tools.find("memory", name).is_some(), "{name} offered");
    }
    assert!(
        tools.find("memory", "delete_entities").is_none(),
        "denied, not offered"
    );
    assert_eq!(
        tools
            .get("mcp__memory__read_graph")
            .expect("read_graph")
            .hints
            .read_only,
        Some(true)
    );

    let created = hub
        .call(
            "mcp__memory__create_entities",
            args(json!({"entities": [{
                "name": "riskgate",
                "entityType": "project",
                "observations": ["puts tool calls through a gate"]
            }]})),
        )
        .await
        .expect("create_entities");
    assert!(created.text().contains("riskgate"), "{}", created.text());

    let graph = hub
        .call("mcp__memory__read_graph", args(json!({})))
        .await
        .expect("read_graph")
        .text();
    assert!(
        graph.contains("riskgate") && graph.contains("puts tool calls through a gate"),
        "{graph}"
    );

    // A call the hub refuses never reaches the server.
    let denied = hub
        .call_tool(
            "memory",
            "delete_entities",
            args(json!({"entityNames": ["riskgate"]})),
        )
        .await;
    assert!(matches!(denied, Err(McpError::Denied { .. })), "{denied:?}");
    let unknown = hub
        .call(
            "mcp__memory__delete_entities",
            args(json!({"entityNames": ["riskgate"]})),
        )
        .await;
    assert!(
        matches!(unknown, Err(McpError::UnknownTool { .. })),
        "{unknown:?}"
    );
    let graph_after = hub
        .call("mcp__memory__read_graph", args(json!({})))
        .await
        .expect("read_graph")
        .text();
    assert_eq!(graph_after, graph, "the state is unchanged");
    let stored = std::fs::read_to_string(&memory_file).expect("the server's file");
    assert!(stored.contains("\"name\":\"riskgate\""), "{stored}");

    // A bad argument is the server's refusal or reported error, never a crash of the hub.
    let bad = hub
        .call(
            "mcp__memory__create_entities",
            args(json!({"entities": "nope"})),
        )
        .await;
    assert!(
        matches!(
            bad,
            Err(McpError::Refused { .. } | McpError::ToolFailed { .. })
        ),
        "{bad:?}"
    );
    assert_eq!(hub.status()[0].state, ServerState::Ready);
    hub.shutdown().await;
}

#[tokio::test]
async fn everything_server_over_stdio_sees_only_path_and_its_content_is_described() {
    let Some(dir) = npm_dir("everything_server_over_stdio") else {
        return;
    };
    let server = support::mcp::command_server(
        "everything",
        &[&bin(&dir, "mcp-server-everything"), "stdio"],
    );
    let hub = McpHub::start(&settings(vec![server])).await;
    assert_eq!(
        hub.status()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.status()
    );
    let echo = hub
        .call("mcp__everything__echo", args(json!({"message": "hello"})))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "Echo: hello");
    assert_eq!(
        hub.tools()
            .get("mcp__everything__echo")
            .expect("echo")
            .hints
            .read_only,
        Some(true)
    );

    let image = hub
        .call("mcp__everything__get-tiny-image", args(json!({})))
        .await
        .expect("image");
    let described: Vec<String> = image
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Other(other) if other.kind == NonTextKind::Image => Some(other.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(described.len(), 1, "{image:?}");
    assert!(
        described[0].starts_with("[image, image/png, "),
        "{described:?}"
    );
    assert!(
        !image.text().contains("iVBORw0KGgo"),
        "the bytes are not carried"
    );

    let sum = hub
        .call("mcp__everything__get-sum", args(json!({"a": 2, "b": 40})))
        .await
        .expect("sum");
    assert!(sum.text().contains("42"), "{}", sum.text());

    // The environment the server runs with: PATH alone (node finds itself through it).
    let vars: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
        &hub.call("mcp__everything__get-env", args(json!({})))
            .await
            .expect("get-env")
            .text(),
    )
    .expect("JSON");
    assert_eq!(
        vars.keys().map(String::as_str).collect::<Vec<_>>(),
        ["PATH"],
        "{vars:?}"
    );
    let pid = hub.status()[0].pid.expect("pid");
    hub.shutdown().await;
    assert_eq!(support::mcp::survivors(&[pid]).await, Vec::<u32>::new());
}

#[tokio::test]
async fn everything_server_over_streamable_http() {
    let Some(dir) = npm_dir("everything_server_over_streamable_http") else {
        return;
    };
    let port = free_port();
    let mut server = tokio::process::Command::new(bin(&dir, "mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the everything server");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr")).lines();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("read") {
            if line.contains("listening on port") {
                return;
            }
        }
        panic!("the server ended before it listened");
    })
    .await
    .expect("the server listens");
    // Keep its stderr drained.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

    let url = format!("http://127.0.0.1:{port}/mcp");
    let hub = McpHub::start(&settings(vec![http_server("web", &url, None)])).await;
    assert_eq!(
        hub.status()[0].state,
        ServerState::Ready,
        "{:?}",
        hub.status()
    );
    assert!(hub.tools().len() >= 10, "{:?}", hub.tools());
    let echo = hub
        .call("mcp__web__echo", args(json!({"message": "over http"})))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "Echo: over http");
    let structured = hub
        .call(
            "mcp__web__get-structured-content",
            args(json!({"location": "New York"})),
        )
        .await
        .expect("structured");
    assert!(structured.structured.is_some(), "{structured:?}");
    hub.shutdown().await;
    let _ = server.kill().await;
}
