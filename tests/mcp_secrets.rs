//! No MCP secret (a bearer token, an environment value, a URL's password or query) in any
//! log line at `trace`, in a server's status, in a call's error, in `check-config`'s report
//! or in Debug output, while servers fail in ways that put the secrets in front of the hub:
//! a server that prints its secret to stderr as it dies, one that returns its environment,
//! an HTTP server that refuses the token.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use riskgate::mcp::{McpHub, check};
use serde_json::json;
use support::mcp::{
    HttpFixture, args, command_server, env, fixture_exe, http_server, settings, stdio_server,
};

const ENV_SECRET: &str = "env-secret-value-7f3a";
const TOKEN: &str = "bearer-secret-token-91bc";
const WRONG_TOKEN: &str = "wrong-secret-token-44de";
const URL_PASSWORD: &str = "url-password-5e6f";
const URL_QUERY_KEY: &str = "query-key-2d8c";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_a_log_line_a_status_an_error_or_debug_output() {
    let logs = Captured::default();
    let writer = logs.clone();
    // Every target at trace, through the same directives the bot uses.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            riskgate::telemetry::directives("trace"),
        ))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let fixture = HttpFixture::start(0, Some(TOKEN)).await;
    let with_secrets_in_url = fixture
        .url
        .replace("http://", &format!("http://user:{URL_PASSWORD}@"))
        + &format!("?key={URL_QUERY_KEY}");
    let mut dying = command_server(
        "dying",
        &[fixture_exe(), "exit", "3", "login failed for ", "API_KEY"],
    );
    dying.env = env(&[("API_KEY", ENV_SECRET)]);
    let mut echoing = stdio_server("echoing");
    echoing.env = env(&[("API_KEY", ENV_SECRET)]);
    let config = settings(vec![
        dying,
        echoing,
        http_server("web", &fixture.url, Some(TOKEN)),
        http_server("refused", &with_secrets_in_url, Some(WRONG_TOKEN)),
    ]);

    let hub = McpHub::start(&config).await;
    let mut shown = String::new();
    for status in hub.status() {
        shown.push_str(&format!("{status}\n{status:?}\n"));
    }
    assert!(shown.contains("web: ready"), "{shown}");
    assert!(
        shown.contains("login failed for <redacted>"),
        "the dying server's words are kept, its secret replaced: {shown}"
    );
    // The server's own result may hold its secret (it is the server's data, framed as
    // untrusted by the tool layer); the hub logs none of it.
    let environment = hub
        .call("mcp__echoing__environment", args(json!({})))
        .await
        .expect("environment")
        .text();
    assert!(environment.contains(ENV_SECRET), "the server saw its value");
    for failing in ["mcp__web__refuse", "mcp__web__fail", "mcp__refused__echo"] {
        let error = hub.call(failing, args(json!({}))).await.expect_err(failing);
        shown.push_str(&format!("{error}\n{error:?}\n"));
    }
    let unavailable = hub
        .call_tool("refused", "echo", args(json!({})))
        .await
        .expect_err("refused is down");
    shown.push_str(&format!("{unavailable}\n{unavailable:?}\n"));
    for line in check(&config).await {
        shown.push_str(&format!("{line}\n{line:?}\n"));
    }
    shown.push_str(&format!("{config:?}\n"));
    assert!(
        shown.contains("refused the bearer token"),
        "the refusal is reported: {shown}"
    );
    hub.shutdown().await;
    fixture.stop().await;

    let logged = String::from_utf8_lossy(&logs.0.lock().unwrap_or_else(PoisonError::into_inner))
        .into_owned();
    assert!(
        logged.contains("MCP server failed") && logged.contains("riskgate::mcp"),
        "the hub logged at all: {logged}"
    );
    for secret in [ENV_SECRET, TOKEN, WRONG_TOKEN, URL_PASSWORD, URL_QUERY_KEY] {
        assert!(
            !shown.contains(secret),
            "{secret} in what the hub shows:\n{shown}"
        );
        assert!(!logged.contains(secret), "{secret} in the logs:\n{logged}");
    }
}
