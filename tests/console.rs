//! `riskgate console` driven through stdin against the fake LLM, checked on `--json` output.
//! A prompt takes only a line written after it was shown, so sessions with approvals are
//! driven like a person would: write, wait for the prompt on stdout, answer.

mod support;

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};
use support::console_session::{Session, command, parse};
use support::fake_llm::{self, FakeLlm};
use support::pty::Terminal;

fn console(
    base_url: &str,
    workspace: &std::path::Path,
    stdin: &str,
    extra: &[&str],
) -> std::process::Output {
    console_bytes(base_url, workspace, stdin.as_bytes(), extra)
}

fn console_bytes(
    base_url: &str,
    workspace: &std::path::Path,
    stdin: &[u8],
    extra: &[&str],
) -> std::process::Output {
    run_with(command(base_url, workspace, extra), stdin)
}

/// Runs `console` to its end with `stdin`.
fn run_with(mut console: std::process::Command, stdin: &[u8]) -> std::process::Output {
    let mut child = console.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write");
    child.wait_with_output().expect("output")
}

/// Each event's kind (`run_started`, `tool_call`, ...), in order.
fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["event"].as_str().expect("event"))
        .collect()
}

/// The text of each message of a request after the system prompt.
fn contents(request: &Value) -> Vec<&str> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().expect("text"))
        .collect()
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
        write_new_txt("c2"),
        fake_llm::text("Written."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("report.txt"), "x").expect("write");
    let mut session = Session::start(&fake.base_url(), dir.path(), &["--json"]);
    session.write("what files are there?\nplease write new.txt\n");
    session.wait_for("approval_requested");
    session.write("y\n/mode strict\n/status\n/nonsense\n");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let events = parse(&lines);
    let kinds = kinds(&events);
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
async fn no_cancels_and_text_mode_reads_well() {
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
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("clean the build\n");
    session.wait_for("confirm? [y/N]");
    session.write("nope\n");
    session.wait_for("\"nope\" is not an answer here");
    // `a` is not offered for a delete: asked again too.
    session.write("a\n");
    session.wait_for("\"a\" is not an answer here");
    session.write("n\n");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let stdout = lines.join("\n");
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
    let contents = contents(&requests[1]);
    assert_eq!(
        contents,
        [
            "dana: remember the number 42",
            "Noted: 42.",
            "dana: what was the number?"
        ]
    );
}

#[tokio::test]
async fn a_line_typed_ahead_of_a_prompt_is_a_message_not_the_answer() {
    let fake_llm::Scripted::Reply(write) = write_new_txt("c1") else {
        panic!("tool_calls is a reply")
    };
    let fake = FakeLlm::start(vec![
        // Slow, so the line typed ahead is surely read before the prompt opens.
        fake_llm::Scripted::Slow(Duration::from_millis(300), write),
        fake_llm::text("Written."),
        fake_llm::text("You are welcome."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &["--json"]);
    // "y" typed ahead: it must not confirm the write.
    session.write("please write new.txt\ny\n");
    session.wait_for("approval_requested");
    assert!(
        !dir.path().join("new.txt").exists(),
        "nothing ran before the answer"
    );
    session.write("yes\n");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let events = parse(&lines);
    let kinds = kinds(&events);
    assert_eq!(
        kinds,
        [
            "run_started",
            "tool_call",
            "approval_requested",
            "approval_resolved",
            "tool_result",
            "reply",
            "run_finished",
            "run_started",
            "reply",
            "run_finished",
        ],
        "{events:#?}"
    );
    assert_eq!(events[3]["outcome"], "confirmed");
    assert_eq!(events[3]["by"], "dana");
    assert_eq!(
        events[7]["text"], "y",
        "the typed-ahead line ran as a message"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).expect("written"),
        "hi"
    );
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 3);
    let last = requests[2]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    assert_eq!(last["content"], "dana: y");
}

#[tokio::test]
async fn a_line_that_is_not_utf8_ends_the_input_with_an_error_naming_it() {
    let fake = FakeLlm::start(vec![fake_llm::text("one"), fake_llm::text("two")]).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let output = console_bytes(
        &fake.base_url(),
        dir.path(),
        b"first message\nsecond \xff\xfe message\nthird message\n",
        &["--json"],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2 of the input is not valid UTF-8") && stderr.contains("iconv"),
        "{stderr}"
    );
    // The line before it ran; nothing after it did.
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0]["messages"]
            .as_array()
            .expect("messages")
            .last()
            .expect("last")["content"],
        "dana: first message"
    );
    let events = events(&output);
    assert_eq!(events.last().expect("events")["event"], "run_finished");
}

#[tokio::test]
async fn a_failing_model_server_makes_the_exit_status_1() {
    for (script, expected) in [
        (
            vec![fake_llm::status(401, "invalid api key", None)],
            "llm.api_key",
        ),
        (
            vec![fake_llm::status(
                404,
                "The model `gpt-9` does not exist",
                None,
            )],
            "llm.model",
        ),
        (
            (0..4)
                .map(|_| fake_llm::status(500, "upstream exploded", None))
                .collect(),
            "upstream exploded",
        ),
    ] {
        let fake = FakeLlm::start(script).await;
        let dir = tempfile::tempdir().expect("tempdir");
        let output = console(&fake.base_url(), dir.path(), "hi\n", &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{expected}: {stderr}");
        assert!(
            stderr.contains("the model server failed 1 of 1 runs") && stderr.contains(expected),
            "{stderr}"
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("error: "), "the run said so too: {stdout}");
    }
}

#[tokio::test]
async fn logs_and_output_into_pipes_have_no_colour_codes() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "execute_command", json!({"command": "ls"}))]),
        fake_llm::text("Listed."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut command = command(&fake.base_url(), dir.path(), &[]);
    command.env("RISKGATE_LOG", "debug").env_remove("NO_COLOR");
    let mut child = command.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"list the files\n")
        .expect("write");
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success());
    assert!(
        output.stderr.len() > 200
            && output
                .stderr
                .windows(4)
                .any(|w| w == b"INFO" || w == b"DEBU"),
        "logging is on: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    for (name, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        assert!(
            !bytes.windows(2).any(|w| w == b"\x1b["),
            "{name} has colour codes: {}",
            String::from_utf8_lossy(bytes)
        );
    }
    assert!(String::from_utf8_lossy(&output.stdout).contains("riskgate: Listed."));
}

#[tokio::test]
async fn a_prompt_names_the_database_and_shows_the_whole_statement() {
    let sql = format!(
        "DELETE FROM orders WHERE id = 1 /* {} */",
        "note ".repeat(400)
    );
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "execute_sql", json!({ "sql": sql }))]),
        fake_llm::text("Left it alone."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("delete order 1\n");
    session.wait_for("confirm? [y/N]");
    session.write("n\n");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let stdout = lines.join("\n");
    assert!(
        stdout.contains("dana wants to run execute_sql on database `demo` (sqlite, the default):"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&sql),
        "the whole statement, nothing cut: {stdout}"
    );
}

#[tokio::test]
async fn a_reason_after_n_reaches_the_model_and_a_allows_similar_calls() {
    // `pinky` is harmless but off the read-only whitelist, so it is asked about.
    let shuf = |id: &str, command: &str| {
        fake_llm::tool_calls(&[(id, "execute_command", json!({ "command": command }))])
    };
    let fake = FakeLlm::start(vec![
        shuf("c1", "pinky -p a b"),
        fake_llm::text("Cancelled."),
        shuf("c2", "pinky -p c d"),
        shuf("c3", "pinky -p e f"),
        fake_llm::text("Done."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("convert 2048\n");
    session.wait_for("confirm? [y/N]");
    session.write("n use powers of ten\n");
    session.wait_for("riskgate: Cancelled.");
    session.write("convert more\n");
    session.wait_for("confirm? [y/N]");
    session.write("a\n");
    session.wait_for("riskgate: Done.");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let stdout = lines.join("\n");
    assert!(
        stdout.contains("a: confirm and allow similar calls for 60 min (`pinky` with flags -p)"),
        "{stdout}"
    );
    assert!(stdout.contains("rule r"), "{stdout}");
    assert!(stdout.contains("[auto, channel_rule"), "{stdout}");
    let prompts = stdout.matches("confirm? [y/N]").count();
    assert_eq!(prompts, 2, "the third call ran under the rule: {stdout}");
    let requests = fake.requests().await;
    let cancelled = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")["content"]
        .as_str()
        .expect("text")
        .to_owned();
    let cancelled: Value = serde_json::from_str(&cancelled).expect("typed result");
    assert_eq!(cancelled["status"], "cancelled");
    assert_eq!(cancelled["reason"], "use powers of ten");
}

/// A call writing `hi` to the new file `new.txt` (it needs a click; `a` is offered).
fn write_new_txt(id: &str) -> fake_llm::Scripted {
    fake_llm::tool_calls(&[(
        id,
        "file_operations",
        json!({"operation": "write", "path": "new.txt", "content": "hi"}),
    )])
}

/// A model that wants to delete `keep.txt` in a workspace holding it (a call that needs a
/// click), then answers `then`.
async fn deleting_keep_txt(then: &str) -> (FakeLlm, tempfile::TempDir) {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[(
            "c1",
            "execute_command",
            json!({"command": "rm -f keep.txt"}),
        )]),
        fake_llm::text(then),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("keep.txt"), "keep").expect("write");
    (fake, dir)
}

/// `/audit` shows why a call was cancelled, in text and in `--json`, as the person wrote it.
#[tokio::test]
async fn audit_shows_a_cancels_reason() {
    for json_mode in [true, false] {
        let (fake, dir) = deleting_keep_txt("I will move it instead.").await;
        let extra: &[&str] = if json_mode { &["--json"] } else { &[] };
        let mut session = Session::start(&fake.base_url(), dir.path(), extra);
        session.write("clean up\n");
        session.wait_for(if json_mode {
            "approval_requested"
        } else {
            "confirm? [y/N]"
        });
        session.write("n move it to trash/ instead\n/audit\n");
        let (status, lines, stderr) = session.finish();
        assert!(status.success(), "{stderr}");
        assert!(dir.path().join("keep.txt").exists(), "nothing ran");
        if json_mode {
            let events = parse(&lines);
            let audit = events
                .iter()
                .find(|e| e["event"] == "audit")
                .unwrap_or_else(|| panic!("an audit event: {events:#?}"));
            assert_eq!(audit["records"][0]["outcome"], "cancelled", "{audit}");
            assert_eq!(
                audit["records"][0]["note"], "reason: move it to trash/ instead",
                "{audit}"
            );
            assert!(
                audit["message"].as_str().is_some_and(
                    |m| m.contains("cancelled by dana (reason: move it to trash/ instead)")
                ),
                "{audit}"
            );
        } else {
            let stdout = lines.join("\n");
            assert!(
                stdout.contains("-> cancelled by dana (reason: move it to trash/ instead)"),
                "{stdout}"
            );
        }
    }
}

/// `/status` shows the model's window as the server states it (here llama.cpp's `/props`)
/// and the channel's tokens as the server counted them, since this process started; the
/// session's output has no event for them.
#[tokio::test]
async fn status_shows_the_window_and_the_tokens_since_the_start() {
    use wiremock::matchers::{method, path};
    let script = || {
        vec![
            fake_llm::with_usage(
                fake_llm::tool_calls(&[("c1", "execute_command", json!({"command": "ls"}))]),
                800,
                20,
            ),
            fake_llm::with_usage(fake_llm::text("One file."), 1200, 5),
        ]
    };
    let fake = FakeLlm::start(script()).await;
    wiremock::Mock::given(method("GET"))
        .and(path("/props"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(json!({"default_generation_settings": {"n_ctx": 4096}})),
        )
        .mount(&fake.server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let output = console(
        &fake.base_url(),
        dir.path(),
        "what files are there?\n/status\n",
        &["--json"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&output);
    let kinds = kinds(&events);
    assert_eq!(
        kinds,
        [
            "run_started",
            "tool_call",
            "tool_result",
            "reply",
            "run_finished",
            "status"
        ],
        "{events:#?}"
    );
    let status = &events[5];
    assert_eq!(
        status["context_window"],
        json!({"tokens": 4096, "source": "llama.cpp's /props (n_ctx)"})
    );
    assert_eq!(
        status["tokens"],
        json!({"prompt": 2000, "completion": 25, "requests": 2, "last_prompt": 1200})
    );
    let message = status["message"].as_str().expect("message");
    assert!(
        message.contains("context window: 4096 tokens (llama.cpp's /props (n_ctx))"),
        "{message}"
    );
    assert!(
        message.contains("tokens since the bot started: 2000 prompt, 25 completion in 2 request(s); the last request's prompt: 1200 tokens, 29% of the window"),
        "{message}"
    );

    // Another process starts from zero, and says so in text as well.
    fake.push(script());
    let output = console(
        &fake.base_url(),
        dir.path(),
        "/status\nwhat files are there?\n/status\n",
        &[],
    );
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let statuses: Vec<&str> = stdout.lines().filter(|l| l.starts_with("mode: ")).collect();
    assert_eq!(statuses.len(), 2, "{stdout}");
    assert!(
        statuses[0].contains("tokens since the bot started: none reported"),
        "{stdout}"
    );
    assert!(
        statuses[1].contains("2000 prompt, 25 completion in 2 request(s)"),
        "{stdout}"
    );
}

/// A step the model takes its time over: long enough that only an interrupt ends it.
fn slow_text(text: &str) -> fake_llm::Scripted {
    let fake_llm::Scripted::Reply(reply) = fake_llm::text(text) else {
        panic!("text is a reply")
    };
    fake_llm::Scripted::Slow(Duration::from_secs(30), reply)
}

/// The last message of the `n`th request the model got.
async fn last_message(fake: &FakeLlm, n: usize) -> Value {
    fake.requests().await[n]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("a message")
        .clone()
}

/// Ctrl-C (SIGINT, as a terminal in cooked mode sends it) during a slow answer: the model
/// request is dropped, the turn ends at once as interrupted, a line typed during it is not
/// sent, and the next message is served, with the interrupted turn in its history.
#[tokio::test]
async fn ctrl_c_interrupts_a_slow_answer_and_the_next_message_is_served() {
    let fake = FakeLlm::start(vec![slow_text("too late"), fake_llm::text("Hello again.")]).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &["--json"]);
    session.write("think about it slowly\n");
    session.wait_for("run_started");
    while fake.requests().await.is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    session.write("typed while it thinks\n");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let interrupted = std::time::Instant::now();
    session.interrupt();
    session.wait_for("\"interrupted\"");
    assert!(
        interrupted.elapsed() < Duration::from_secs(1),
        "the turn ended {:?} after Ctrl-C",
        interrupted.elapsed()
    );
    session.write("hello?\n");
    session.wait_for("Hello again.");
    let (status, lines, stderr) = session.finish();
    assert!(
        status.success(),
        "a Ctrl-C does not end the process: {stderr}"
    );
    let events = parse(&lines);
    assert_eq!(
        kinds(&events),
        [
            "run_started",
            "run_finished",
            "interrupted",
            "dropped",
            "run_started",
            "reply",
            "run_finished"
        ],
        "{events:#?}"
    );
    assert_eq!(events[1]["outcome"], "interrupted");
    assert_eq!(events[3]["text"], "typed while it thinks");
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2, "nothing more was asked: {requests:#?}");
    let contents = contents(&requests[1]);
    // The interrupted question stays; riskgate's notice of the interrupt is kept and shown,
    // never sent as the model's words.
    assert_eq!(contents, ["dana: think about it slowly", "dana: hello?"]);
}

/// Ctrl-C while an approval waits cancels it as `n` would, recorded as cancelled by the
/// person; the model is asked nothing more in that turn.
#[tokio::test]
async fn ctrl_c_at_a_prompt_cancels_the_call_and_ends_the_turn() {
    let (fake, dir) = deleting_keep_txt("Next.").await;
    let mut session = Session::start(&fake.base_url(), dir.path(), &["--json"]);
    session.write("clean up\n");
    session.wait_for("approval_requested");
    session.interrupt();
    session.wait_for("\"interrupted\"");
    session.write("/audit\nnext\n");
    session.wait_for("Next.");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    assert!(dir.path().join("keep.txt").exists(), "nothing ran");
    let events = parse(&lines);
    let resolved = events
        .iter()
        .find(|e| e["event"] == "approval_resolved")
        .unwrap_or_else(|| panic!("resolved: {events:#?}"));
    assert_eq!(resolved["outcome"], "cancelled");
    assert_eq!(resolved["by"], "dana");
    let audit = events
        .iter()
        .find(|e| e["event"] == "audit")
        .unwrap_or_else(|| panic!("audit: {events:#?}"));
    assert_eq!(audit["records"][0]["outcome"], "cancelled", "{audit}");
    assert_eq!(audit["records"][0]["user"], "dana", "{audit}");
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "run_finished")
        .collect();
    assert_eq!(finished[0]["outcome"], "interrupted");
    assert_eq!(
        fake.requests().await.len(),
        2,
        "the cancelled call went back to no model: only `next` was asked"
    );
    assert_eq!(last_message(&fake, 1).await["content"], "dana: next");
}

/// Ctrl-C between turns ends the session as the end of input does (status 0).
#[tokio::test]
async fn ctrl_c_between_turns_ends_the_console() {
    let fake = FakeLlm::start(vec![fake_llm::text("Hi.")]).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("hi\n");
    session.wait_for("riskgate: Hi.");
    // The reply shows just before the turn ends: a Ctrl-C that still meets the turn only
    // interrupts it, so it is pressed again until one comes between turns.
    for _ in 0..10 {
        session.interrupt();
        if session.ends_within(Duration::from_millis(500)) {
            break;
        }
    }
    let (status, _, stderr) = session.finish_without_closing();
    assert!(status.success(), "{status}: {stderr}");
}

/// An answer a prompt does not take is asked again, not taken as a cancel.
#[tokio::test]
async fn an_unclear_answer_is_asked_again() {
    let fake = FakeLlm::start(vec![write_new_txt("c1"), fake_llm::text("Written.")]).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("please write new.txt\n");
    session.wait_for("confirm? [y/N]");
    session.write("yes please\n");
    session.wait_for("\"yes please\" is not an answer here");
    session.wait_for("confirm? [y/N]");
    assert!(!dir.path().join("new.txt").exists(), "nothing ran yet");
    session.write("ok\n");
    session.wait_for("\"ok\" is not an answer here");
    session.wait_for("confirm? [y/N]");
    session.write("y\n");
    session.wait_for("riskgate: Written.");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("new.txt")).expect("written"),
        "hi"
    );
    let stdout = lines.join("\n");
    assert!(stdout.contains("confirmed by dana"), "{stdout}");
    assert_eq!(fake.requests().await.len(), 2);
}

/// Discord markup in an answer (from a conversation kept from Discord, or a model writing
/// for it) reads as names and local times; `/audit` and `/rules` show local times, not
/// Unix seconds. `--json` keeps the text and the numbers as they are.
#[tokio::test]
async fn discord_markup_and_unix_times_read_as_names_and_local_times() {
    let answer =
        "Ask <@123456789012345678> or <@dana> in <#42> before <t:1700000000:t> (<t:1700000000:d>).";
    let script = || {
        vec![
            fake_llm::tool_calls(&[("c1", "execute_command", json!({"command": "ls"}))]),
            fake_llm::text(answer),
        ]
    };
    let fake = FakeLlm::start(script()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = command(&fake.base_url(), dir.path(), &[]);
    // 1700000000 is 2023-11-14 22:13:20 UTC; here, at +05:30, 03:43 the next day.
    text.env("TZ", "<+0530>-05:30");
    let output = run_with(text, b"when?\n/audit\n");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("riskgate: Ask @user or @dana in #channel before 03:43 (2023-11-15)."),
        "{stdout}"
    );
    let audit = stdout
        .lines()
        .find(|l| l.contains(" execute_command auto "))
        .unwrap_or_else(|| panic!("an audit line: {stdout}"));
    let at = audit.split(" execute_command").next().expect("time");
    assert!(
        chrono::NaiveDateTime::parse_from_str(at, "%Y-%m-%d %H:%M:%S").is_ok(),
        "a local time, not Unix seconds: {audit}"
    );

    fake.push(script());
    let output = console(&fake.base_url(), dir.path(), "when?\n", &["--json"]);
    let events = events(&output);
    let reply = events
        .iter()
        .find(|e| e["event"] == "reply")
        .expect("reply");
    assert_eq!(reply["text"], answer);
}

/// At a terminal (a pseudo-terminal, with the line editor): Ctrl-C during a slow answer
/// brings the prompt back within a second and the next message is served; an unclear answer
/// is asked again; Ctrl-C with a line typed only discards it; Ctrl-C at the empty prompt ends
/// the console.
#[tokio::test]
async fn at_a_terminal_ctrl_c_interrupts_the_turn_and_unclear_answers_are_asked_again() {
    let fake = FakeLlm::start(vec![
        slow_text("too late"),
        fake_llm::text("Hello again."),
        write_new_txt("c1"),
        fake_llm::text("Left it."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut console = command(&fake.base_url(), dir.path(), &[]);
    console.env("TERM", "xterm").env("NO_COLOR", "1");
    let mut terminal = Terminal::start(console);
    let wait = Duration::from_secs(30);
    terminal.wait_for("Type a message, or /help.", wait);
    terminal.wait_for("> ", wait);
    terminal.type_keys(b"think about it slowly\r");
    let fake_ref = &fake;
    while fake_ref.requests().await.is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    terminal.type_keys(b"\x03");
    let took = terminal.wait_for("turn interrupted (Ctrl-C)", Duration::from_secs(1));
    terminal.wait_for("> ", Duration::from_secs(1));
    assert!(took < Duration::from_secs(1), "{took:?}");

    terminal.type_keys(b"hello?\r");
    terminal.wait_for("riskgate: Hello again.", wait);

    terminal.type_keys(b"please write new.txt\r");
    terminal.wait_for("confirm? [y/N]", wait);
    terminal.type_keys(b"yes please\r");
    terminal.wait_for("\"yes please\" is not an answer here", wait);
    terminal.wait_for("confirm? [y/N]", wait);
    assert!(!dir.path().join("new.txt").exists(), "nothing ran");
    terminal.type_keys(b"n\r");
    terminal.wait_for("cancelled by dana", wait);
    terminal.wait_for("riskgate: Left it.", wait);

    // A line being typed is discarded, the console goes on; at the empty prompt it ends.
    std::thread::sleep(Duration::from_millis(300));
    terminal.type_keys(b"half a line");
    terminal.wait_for("half a line", wait);
    terminal.type_keys(b"\x03");
    assert_eq!(
        terminal.wait_exit(Duration::from_millis(500)),
        None,
        "Ctrl-C with a line typed only discards it: {}",
        terminal.screen()
    );
    terminal.type_keys(b"\x03");
    let status = terminal
        .wait_exit(Duration::from_secs(5))
        .unwrap_or_else(|| panic!("Ctrl-C at the empty prompt ends it: {}", terminal.screen()));
    assert!(status.success(), "{status}: {}", terminal.stderr());
    assert!(!dir.path().join("new.txt").exists(), "nothing ran");
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 4, "{requests:#?}");
    assert_eq!(last_message(&fake, 1).await["content"], "dana: hello?");
}

/// The model client connects to `llm.base_url` directly: the standard proxy variables
/// (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`) are not read (README, "Configuration"). They are
/// set on the child alone, pointing at a loopback listener that must see no connection.
#[tokio::test]
async fn the_model_client_does_not_use_the_proxy_variables() {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    proxy.set_nonblocking(true).expect("nonblocking");
    let proxy_url = format!("http://{}", proxy.local_addr().expect("addr"));
    let fake = FakeLlm::start(vec![fake_llm::text("Direct.")]).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut console = command(&fake.base_url(), dir.path(), &[]);
    for name in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        console.env(name, &proxy_url);
    }
    // A request sent to the listener would wait for an answer: not for long.
    console
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("RISKGATE__LLM__REQUEST_TIMEOUT_SECS", "5");
    let output = run_with(console, b"hi\n");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("riskgate: Direct."));
    assert!(
        matches!(proxy.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the proxy was asked"
    );
    assert_eq!(fake.requests().await.len(), 1);
}

#[tokio::test]
async fn an_operators_profile_gives_its_prompt_its_tools_and_its_model() {
    let fake = FakeLlm::start(vec![
        fake_llm::text("Payments are fine."),
        fake_llm::text("Still fine."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(
        dir.path().join("payments.md"),
        "You are the PAYMENTS-DESK agent.",
    )
    .expect("prompt");
    std::fs::write(
        &config,
        r#"
[profiles.payments]
summary = "payments data"
prompt_file = "payments.md"
tools = ["execute_sql", "file_operations"]
model = "payments-model-7b"
mode = "strict"
channels = ["console"]
"#,
    )
    .expect("config");
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).expect("ws");
    let mut console = command(&fake.base_url(), &ws, &["--json"]);
    console.env("RISKGATE_CONFIG", &config);
    let output = run_with(
        console,
        b"/profile\n/status\nhow are payments?\n/profile ops\nand now?\n",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events = events(&output);
    let profile = &events[0];
    assert_eq!(profile["profile"], "payments", "{events:#?}");
    assert_eq!(
        profile["profiles"],
        json!([
            {"name": "sql", "summary": "data"},
            {"name": "ops", "summary": "all tools"},
            {"name": "payments", "summary": "payments data"},
        ]),
        "/profile lists the operator's profiles"
    );
    let status = &events[1];
    assert_eq!(status["profile"], "payments", "{status}");
    assert_eq!(status["mode"], "strict", "the profile's mode: {status}");
    assert_eq!(status["model"], "payments-model-7b", "{status}");

    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let first = &requests[0];
    assert_eq!(first["model"], "payments-model-7b");
    let system = first["messages"][0]["content"].as_str().expect("system");
    assert!(
        system.contains("You are the PAYMENTS-DESK agent."),
        "{system}"
    );
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(offered, ["execute_sql", "file_operations"]);
    // Switched to ops: its prompt, every tool, and the client's model.
    let second = &requests[1];
    assert_ne!(second["model"], "payments-model-7b");
    assert!(
        !second["messages"][0]["content"]
            .as_str()
            .expect("system")
            .contains("PAYMENTS-DESK")
    );
    assert_eq!(second["tools"].as_array().expect("tools").len(), 4);
}

#[tokio::test]
async fn a_streamed_answer_is_printed_as_it_comes() {
    let answer = "The first line comes first.\nThen the rest, slowly, word by word, as the model writes it down.";
    let fake = FakeLlm::start(vec![fake_llm::paced(
        fake_llm::text(answer),
        Duration::from_millis(150),
    )])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("tell me\n");
    session.wait_for("riskgate: The first line comes first.");
    let first_line = std::time::Instant::now();
    session.wait_for("writes it down.");
    // The first line was on the screen while the model still wrote the second.
    assert!(
        first_line.elapsed() >= Duration::from_millis(500),
        "{:?}",
        first_line.elapsed()
    );
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let stdout = lines.join("\n");
    assert!(stdout.contains(&format!("riskgate: {answer}")), "{stdout}");
    assert_eq!(
        stdout.matches("first line").count(),
        1,
        "printed once: {stdout}"
    );
}
