//! `riskgate console` driven through stdin against the fake LLM, checked on `--json` output.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::fake_llm::{self, FakeLlm};

fn console(
    base_url: &str,
    workspace: &std::path::Path,
    stdin: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_riskgate"));
    command
        .args(["console", "--user", "dana"])
        .args(extra)
        .current_dir(workspace)
        .env_remove("RISKGATE_CONFIG")
        .env("RISKGATE__LLM__BASE_URL", base_url)
        .env("RISKGATE__LLM__RETRY_BASE_DELAY_MS", "10")
        .env("RISKGATE__TOOLS__WORKSPACE", workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    child.wait_with_output().expect("output")
}

fn events(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

#[tokio::test]
async fn a_scripted_session_with_an_auto_call_an_approval_and_commands() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "execute_command", json!({"command": "ls"}))]),
        fake_llm::text("There is one file."),
        fake_llm::tool_calls(&[(
            "c2",
            "file_operations",
            json!({"operation": "write", "path": "new.txt", "content": "hi"}),
        )]),
        fake_llm::text("Written."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("report.txt"), "x").expect("write");
    let script =
        "what files are there?\nplease write new.txt\ny\n/mode strict\n/status\n/nonsense\n";
    let output = console(&fake.base_url(), dir.path(), script, &["--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&output);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().expect("event"))
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "tool_call",
            "tool_result",
            "reply",
            "run_finished",
            "run_started",
            "tool_call",
            "approval_requested",
            "approval_resolved",
            "tool_result",
            "reply",
            "run_finished",
            "mode",
            "status",
            "error",
        ],
        "{events:#?}"
    );
    assert_eq!(events[1]["decision"], "auto");
    assert_eq!(events[1]["source"], "whitelist");
    assert!(
        events[2]["chat"]
            .as_str()
            .expect("chat")
            .contains("report.txt")
    );
    assert_eq!(events[3]["text"], "There is one file.");
    assert_eq!(events[6]["decision"], "confirm");
    assert_eq!(events[7]["requester"], "dana");
    assert_eq!(events[8]["outcome"], "confirmed");
    assert_eq!(events[8]["by"], "dana");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).expect("written"),
        "hi"
    );
    assert_eq!(events[12]["mode"], "strict");
    assert_eq!(events[13]["mode"], "strict");
    assert!(
        events[14]["message"]
            .as_str()
            .expect("message")
            .contains("/help")
    );
    assert_eq!(fake.requests().await.len(), 4);
}

#[tokio::test]
async fn anything_but_yes_cancels_and_text_mode_reads_well() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[(
            "c1",
            "execute_command",
            json!({"command": "rm -rf build", "risk_level": "low"}),
        )]),
        fake_llm::text("Fine, nothing deleted."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("build")).expect("mkdir");
    let output = console(&fake.base_url(), dir.path(), "clean the build\nnope\n", &[]);
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("dana wants to run execute_command: rm -rf build"),
        "{stdout}"
    );
    assert!(stdout.contains("destructive_floor"), "{stdout}");
    assert!(stdout.contains("cancelled by dana"), "{stdout}");
    assert!(
        stdout.contains("riskgate: Fine, nothing deleted."),
        "{stdout}"
    );
    assert!(dir.path().join("build").exists(), "nothing was deleted");
    let requests = fake.requests().await;
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")["content"]
        .as_str()
        .expect("text")
        .to_owned();
    let result: Value = serde_json::from_str(&result).expect("typed result");
    assert_eq!(result["status"], "cancelled");
    assert_eq!(result["by"], "dana");
}

#[test]
fn an_unreachable_model_server_is_a_clear_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let dir = tempfile::tempdir().expect("tempdir");
    let output = console(
        &format!("http://127.0.0.1:{port}/v1"),
        dir.path(),
        "hi\n",
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("could not be reached") && stderr.contains("llm.base_url"),
        "{stderr}"
    );
}

#[tokio::test]
async fn history_survives_a_restart_of_the_console() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("Noted: 42."),
        fake_llm::text("It was 42."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let first = console(
        &fake.base_url(),
        dir.path(),
        "remember the number 42\n",
        &["--json"],
    );
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        dir.path().join("riskgate.db").exists(),
        "the default store is a SQLite file"
    );
    let second = console(
        &fake.base_url(),
        dir.path(),
        "what was the number?\n",
        &["--json"],
    );
    assert!(second.status.success());
    let requests = fake.requests().await;
    let contents: Vec<&str> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().expect("text"))
        .collect();
    assert_eq!(
        contents,
        [
            "dana: remember the number 42",
            "Noted: 42.",
            "dana: what was the number?"
        ]
    );
}
