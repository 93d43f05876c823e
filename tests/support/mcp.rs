//! MCP test helpers: settings for the fixture server (`tests/fixtures/mcp_server.rs`, the
//! `riskgate-mcp-fixture` binary) over stdio or streamable HTTP, waiting on the hub, and
//! looking at processes.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use riskgate::mcp::{McpHub, McpServerSettings, McpSettings, ServerState, ToolSet};
use secrecy::SecretString;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The fixture server's executable.
pub fn fixture_exe() -> &'static str {
    env!("CARGO_BIN_EXE_riskgate-mcp-fixture")
}

/// A stdio server running the fixture.
pub fn stdio_server(name: &str) -> McpServerSettings {
    McpServerSettings {
        name: name.to_owned(),
        command: vec![fixture_exe().to_owned(), "stdio".to_owned()],
        ..McpServerSettings::default()
    }
}

/// A stdio server that runs `command`.
pub fn command_server(name: &str, command: &[&str]) -> McpServerSettings {
    McpServerSettings {
        name: name.to_owned(),
        command: command.iter().map(|s| (*s).to_owned()).collect(),
        ..McpServerSettings::default()
    }
}

/// An HTTP server at `url`, with a bearer token if given.
pub fn http_server(name: &str, url: &str, token: Option<&str>) -> McpServerSettings {
    McpServerSettings {
        name: name.to_owned(),
        url: Some(url.to_owned()),
        bearer_token: token.map(|t| SecretString::from(t.to_owned())),
        ..McpServerSettings::default()
    }
}

/// Test settings: short timeouts and restarts.
pub fn settings(servers: Vec<McpServerSettings>) -> McpSettings {
    McpSettings {
        call_timeout_secs: 10,
        start_timeout_secs: 20,
        restart_initial_secs: 1,
        restart_max_secs: 8,
        ping_interval_secs: 1,
        servers,
        ..McpSettings::default()
    }
}

/// `env` entries for a server.
pub fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, SecretString> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), SecretString::from((*v).to_owned())))
        .collect()
}

/// The fixture serving streamable HTTP on loopback, killed when dropped.
pub struct HttpFixture {
    pub child: Child,
    pub url: String,
    pub port: u16,
}

impl HttpFixture {
    /// Starts it on `port` (0: any free one), requiring `token` if given.
    pub async fn start(port: u16, token: Option<&str>) -> Self {
        let mut command = Command::new(fixture_exe());
        command
            .args(["http", "--port", &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        let mut child = command.spawn().expect("start the HTTP fixture");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the HTTP fixture says where it listens")
            .expect("read")
            .expect("a line");
        let url = line
            .strip_prefix("listening ")
            .expect("listening line")
            .to_owned();
        let port = url
            .rsplit(':')
            .next()
            .and_then(|rest| rest.split('/').next())
            .and_then(|p| p.parse().ok())
            .expect("port");
        Self { child, url, port }
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Waits (10 s at most) until `check` holds for the offered tools.
pub async fn wait_for_tools(hub: &McpHub, what: &str, check: impl Fn(&ToolSet) -> bool) {
    let mut tools = hub.watch_tools();
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if check(&tools.borrow_and_update()) {
                return;
            }
            if tools.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
    assert!(
        waited.is_ok() && check(&hub.tools()),
        "timed out waiting for {what}; tools: {:?}; status: {:?}",
        hub.tools()
            .tools()
            .iter()
            .map(|t| t.offered_name.clone())
            .collect::<Vec<_>>(),
        hub.status()
    );
}

/// Waits (20 s at most) until server `name`'s state satisfies `check`, and returns it.
pub async fn wait_for_state(
    hub: &McpHub,
    name: &str,
    check: impl Fn(&ServerState) -> bool,
) -> ServerState {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let state = hub
            .status()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.state)
            .expect("the server has a status");
        if check(&state) {
            return state;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting on {name}; it is {state}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (20 s at most) until server `name` has failed, and says its state.
pub async fn wait_for_failure(hub: &McpHub, name: &str) -> String {
    wait_for_state(hub, name, |s| matches!(s, ServerState::Failed { .. }))
        .await
        .to_string()
}

/// Whether process `pid` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits (10 s at most) until every pid is gone (or a zombie); the ones still alive.
pub async fn survivors(pids: &[u32]) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A free loopback port (free when asked; the caller binds it soon after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Arguments for a call.
pub fn args(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}
