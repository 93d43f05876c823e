//! What a person sees of a call that hides characters, through the riskgate binary: the
//! console's prompt (text and `--json`) shows every invisible, direction-changing or
//! control character as a `\u{…}` escape with a line that says so, the terminal never
//! receives one of them, and a confirm runs the call exactly as the model wrote it (the
//! bytes it writes are checked). The Discord side is in `tests/discord_bot.rs`, beside the
//! harness it shares.

mod support;

use serde_json::{Value, json};
use support::console_session::{Session, parse};
use support::fake_llm::{self, FakeLlm};

/// What the scripted model asks to write: a right-to-left override that makes the name read
/// `report` + `exe.pdf` backwards, a zero-width space, and a terminal escape that would clear
/// the screen.
const WRITTEN: &str = "report\u{202e}fdp.exe\u{200b}\u{1b}[2J";

/// The command that writes it into `out.txt`.
fn command() -> String {
    format!("printf '%s' '{WRITTEN}' > out.txt")
}

/// The call as a person is shown it.
const SHOWN: &str = "printf '%s' 'report\\u{202e}fdp.exe\\u{200b}\\u{1b}[2J' > out.txt";

/// The line that says what the call holds.
const WARNING: &str = "⚠ This call contains 3 characters that are invisible, change the text's direction or can pass for others (1 control character, 1 direction control, 1 invisible character), shown here as `\\u{…}` with the code point in hex. What runs is the call exactly as written, with them in it.";

/// The gate's reason for asking.
const REASON: &str = "`> out.txt` writes to the file out.txt, replacing or growing it";

async fn model_asking_to_write() -> FakeLlm {
    FakeLlm::start(vec![
        fake_llm::tool_calls(&[("c1", "execute_command", json!({ "command": command() }))]),
        fake_llm::text("Written."),
    ])
    .await
}

fn written(dir: &tempfile::TempDir) -> Vec<u8> {
    std::fs::read(dir.path().join("out.txt")).expect("out.txt was written")
}

/// Runs a `--json` console in `dir` against `fake`, confirms the approval when it is shown,
/// and returns every event.
fn confirmed_in_json(fake: &FakeLlm, dir: &tempfile::TempDir) -> Vec<Value> {
    let mut session = Session::start(&fake.base_url(), dir.path(), &["--json"]);
    session.write("write the report name\n");
    session.wait_for("approval_requested");
    session.write("y\n");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    parse(&lines)
}

/// The first event of `kind`.
fn first<'a>(events: &'a [Value], kind: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["event"] == kind)
        .unwrap_or_else(|| panic!("no {kind} event: {events:#?}"))
}

#[tokio::test]
async fn the_console_prompt_shows_hidden_characters_escaped_and_a_confirm_runs_them() {
    let fake = model_asking_to_write().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut session = Session::start(&fake.base_url(), dir.path(), &[]);
    session.write("write the report name\n");
    session.wait_for("confirm? [y/N]");
    assert!(
        !dir.path().join("out.txt").exists(),
        "nothing ran before the answer"
    );
    session.write("y\n");
    session.wait_for("riskgate: Written.");
    let (status, lines, stderr) = session.finish();
    assert!(status.success(), "{stderr}");
    let stdout = lines.join("\n");

    // The exact prompt, from the call to the question (only the time left varies).
    let start = lines
        .iter()
        .position(|l| l.starts_with("?? "))
        .expect("a prompt");
    let prompt = &lines[start..start + 6];
    assert_eq!(
        prompt[..3],
        [
            format!("?? dana wants to run execute_command: {SHOWN}"),
            format!("   {WARNING}"),
            format!("   why confirm: {REASON} (default)"),
        ],
        "{stdout}"
    );
    assert!(
        prompt[3].starts_with("   expires in ") && prompt[3].ends_with(" (then nothing runs)"),
        "{stdout}"
    );
    assert_eq!(
        prompt[4..],
        [
            "   y: confirm · n [reason]: cancel, saying what to do instead",
            "   confirm? [y/N]",
        ]
    );
    // The line that records the call before the prompt shows it escaped too.
    assert!(
        lines.contains(&format!(
            "-> execute_command: {SHOWN} [confirm, default: {REASON}]"
        )),
        "{stdout}"
    );
    // The terminal never received one of the characters.
    for hidden in ['\u{202e}', '\u{200b}', '\u{1b}'] {
        assert!(
            !stdout.contains(hidden),
            "{hidden:?} reached the terminal: {stdout}"
        );
    }
    // What ran is the call as the model wrote it: the bytes, hidden characters and all.
    assert_eq!(written(&dir), WRITTEN.as_bytes());
}

#[tokio::test]
async fn the_json_approval_carries_the_text_shown_beside_the_exact_arguments() {
    let fake = model_asking_to_write().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let events = confirmed_in_json(&fake, &dir);
    let approval = first(&events, "approval_requested");
    // The existing fields are the call as it runs; the added ones are what a UI shows.
    assert_eq!(approval["arguments"], json!({ "command": command() }));
    assert_eq!(approval["reason"], REASON);
    assert_eq!(approval["display"], SHOWN);
    assert_eq!(approval["display_reason"], REASON);
    assert_eq!(approval["warning"], WARNING);
    assert_eq!(
        approval["escaped"],
        json!({"total": 3, "kinds": {"control": 1, "direction": 1, "invisible": 1}})
    );
    let call = first(&events, "tool_call");
    assert_eq!(call["display"], SHOWN);
    assert_eq!(call["arguments"]["command"], command());
    assert_eq!(first(&events, "approval_resolved")["outcome"], "confirmed");
    assert_eq!(written(&dir), WRITTEN.as_bytes());
}

#[tokio::test]
async fn a_plain_call_shows_as_it_is_and_warns_of_nothing() {
    let fake = FakeLlm::start(vec![
        fake_llm::tool_calls(&[(
            "c1",
            "execute_command",
            json!({"command": "printf '%s' 'café 東京 👍🏽' > out.txt"}),
        )]),
        fake_llm::text("Written."),
    ])
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let events = confirmed_in_json(&fake, &dir);
    let approval = first(&events, "approval_requested");
    assert_eq!(approval["display"], "printf '%s' 'café 東京 👍🏽' > out.txt");
    assert_eq!(approval["warning"], json!(null));
    assert_eq!(approval["escaped"], json!({"total": 0, "kinds": {}}));
    assert_eq!(written(&dir), "café 東京 👍🏽".as_bytes());
}
