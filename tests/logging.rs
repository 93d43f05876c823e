//! No secret in any log line: a console session at `trace` level, with every kind of secret
//! configured, in both log formats.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;
use support::fake_llm::{self, FakeLlm};

const SECRETS: [&str; 4] = [
    "sk-test-api-key-0123456789",
    "discord-token-abcdefghijklmnop",
    "db-password-s3cr3t",
    "riskgate-env-key-zyxwvu",
];

/// What a file in the workspace holds: a line of substitutions runs `cat` on it and puts it
/// into the line it judges again, and that line is not logged (command output never is).
const FILE_CONTENT: &str = "workspace-file-content-4711";

async fn session(format: &str) -> (String, String) {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[
            ("c1", "execute_command", json!({"command": "env"})),
            (
                "c2",
                "execute_command",
                json!({"command": "echo $(cat notes.txt)"}),
            ),
        ]),
        fake_llm::text("done"),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("notes.txt"), FILE_CONTENT).expect("notes");
    std::fs::write(
        dir.path().join("riskgate.toml"),
        format!(
            "[[sql.databases]]\nname = \"prod\"\nurl = \"postgres://app:{}@127.0.0.1:9/prod\"\n",
            SECRETS[2]
        ),
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_riskgate"))
        .args(["console", "--json"])
        .current_dir(dir.path())
        .env_remove("RISKGATE_CONFIG")
        .env("RISKGATE_LOG", "trace")
        .env("RISKGATE__LOG__FORMAT", format)
        .env("RISKGATE__LLM__BASE_URL", fake.base_url())
        .env("RISKGATE__TOOLS__WORKSPACE", dir.path())
        .env("OPENAI_API_KEY", SECRETS[0])
        .env("DISCORD_TOKEN", SECRETS[1])
        .env("RISKGATE__LLM__API_KEY", SECRETS[3])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"what is in the environment?\n")
        .expect("write");
    let output = child.wait_with_output().expect("output");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The key was used: the fake saw it (so the test would notice a leak if it were logged).
    let requests = fake.server.received_requests().await.expect("recorded");
    assert_eq!(
        requests[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {}", SECRETS[3]).as_str())
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_no_secret(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} contains {secret}");
    }
}

#[tokio::test]
async fn no_secret_in_text_logs_at_trace_level() {
    let (stdout, stderr) = session("text").await;
    assert!(stderr.lines().count() > 10, "trace logging is on: {stderr}");
    assert_no_secret(&stderr, "the log");
    assert!(
        stderr.contains("the line they make is judged again"),
        "the substitution ran: {stderr}"
    );
    assert!(
        !stderr.contains(FILE_CONTENT),
        "the log holds command output"
    );
    assert_no_secret(&stdout, "the output");
}

#[tokio::test]
async fn json_logs_are_one_object_per_line_and_hold_no_secret() {
    let (stdout, stderr) = session("json").await;
    let mut lines = 0;
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"));
        assert!(
            value.get("level").is_some() && value.get("fields").is_some(),
            "{line}"
        );
        lines += 1;
    }
    assert!(lines > 10, "{stderr}");
    assert_no_secret(&stderr, "the log");
    assert_no_secret(&stdout, "the output");
}
