//! A scene for driving the real binary's console with a scripted model: a temporary
//! directory with the bot's working directory (`bot/`, its state database), the workspace
//! (`ws/`) and a planted tree with a secret (`outside/`), secrets in the bot's environment,
//! and helpers to run messages, answer approvals and read what the model was sent.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use super::fake_llm::{self, FakeLlm, Scripted};

/// Secrets in the bot's environment.
pub const BOT_SECRETS: [(&str, &str); 3] = [
    ("DISCORD_TOKEN", "discord-secret-5b1e90"),
    ("OPENAI_API_KEY", "openai-secret-c7d2aa"),
    ("RISKGATE__LLM__API_KEY", "riskgate-llm-secret-31f0"),
];
/// The content of the planted file outside the workspace.
pub const OUTSIDE_SECRET: &str = "outside-secret-8e44c1";

/// Where Landlock is missing, every test here checks instead that nothing runs without a
/// click (`without_the_sandbox_no_line_runs_without_a_click` does that on every machine).
pub fn sandbox_ready() -> bool {
    let ready = riskgate::tools::command::sandbox::kernel_support().is_ready();
    if !ready {
        eprintln!(
            "the kernel has no Landlock ABI 6: sandbox effects are checked as 'nothing auto-runs'"
        );
    }
    ready
}

pub struct Scene {
    _dir: tempfile::TempDir,
    pub bot: PathBuf,
    pub ws: PathBuf,
    pub outside: PathBuf,
}

impl Scene {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let (bot, ws, outside) = (root.join("bot"), root.join("ws"), root.join("outside"));
        for d in [&bot, &ws, &outside, &outside.join("nested")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).expect("write");
        std::fs::write(outside.join("nested/notes.txt"), "outside notes").expect("write");
        Self {
            _dir: dir,
            bot,
            ws,
            outside,
        }
    }

    /// Every file under `outside/` with its content.
    pub fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut files = Vec::new();
        collect(&self.outside, &mut files);
        files
    }

    pub fn console(&self, fake: &FakeLlm, extra_env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_riskgate"));
        command
            .args(["console", "--json", "--user", "mallory"])
            .current_dir(&self.bot)
            .env_remove("RISKGATE_CONFIG")
            .env("RISKGATE__LLM__BASE_URL", fake.base_url())
            .env("RISKGATE__TOOLS__WORKSPACE", &self.ws)
            .env("RISKGATE__HTTP__BLOCK_PRIVATE_NETWORKS", "false")
            // `find -L` through a link to /proc walks until the timeout: keep it short.
            .env("RISKGATE__COMMAND__TIMEOUT_SECS", "8")
            // The scenes compare the workspace before and after: reading the demo
            // database's schema for the prompt would create it there on the first run.
            .env("RISKGATE__SQL__SCHEMA_BUDGET_CHARS", "0")
            .env_remove(riskgate::tools::command::sandbox::SIMULATE_MISSING_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in BOT_SECRETS.iter().chain(extra_env) {
            command.env(name, value);
        }
        command
    }

    /// Runs the console to its end with `stdin`; returns its JSON events.
    pub fn run(&self, fake: &FakeLlm, stdin: &str, extra_env: &[(&str, &str)]) -> Vec<Value> {
        let mut child = self.console(fake, extra_env).spawn().expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write");
        events(child)
    }

    /// Runs one message to its end, answering each approval with `answer` once it is shown
    /// (a line written ahead of a prompt would be a message, not its answer), and with `n`
    /// where the prompt does not take `answer`.
    pub fn run_answering(&self, fake: &FakeLlm, message: &str, answer: &str) -> Vec<Value> {
        self.run_answering_with(fake, message, answer, &[])
    }

    /// [`Scene::run_answering`] with more variables in the bot's environment.
    pub fn run_answering_with(
        &self,
        fake: &FakeLlm,
        message: &str,
        answer: &str,
        extra_env: &[(&str, &str)],
    ) -> Vec<Value> {
        self.run_answering_after(fake, message, answer, extra_env, || {})
    }

    /// [`Scene::run_answering_with`], calling `before_answer` each time an approval is
    /// shown, before it is answered: what it does happens while the bot runs, between two
    /// calls.
    pub fn run_answering_after(
        &self,
        fake: &FakeLlm,
        message: &str,
        answer: &str,
        extra_env: &[(&str, &str)],
        mut before_answer: impl FnMut(),
    ) -> Vec<Value> {
        let mut child = self.console(fake, extra_env).spawn().expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        writeln!(stdin, "{message}").expect("write");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut events = Vec::new();
        for line in stdout.lines() {
            let event: Value = serde_json::from_str(&line.expect("line")).expect("JSON event");
            if event["event"] == "approval_requested" {
                before_answer();
                writeln!(stdin, "{answer}").expect("answer");
            }
            // `answer` is not an answer to this prompt (`a` where it is not offered): it is
            // asked again, and cancelled, so the run goes on instead of waiting the expiry.
            if event["event"] == "unclear_answer" {
                writeln!(stdin, "n").expect("answer");
            }
            let done = event["event"] == "run_finished";
            events.push(event);
            if done {
                break;
            }
        }
        drop(stdin);
        let output = child.wait_with_output().expect("output");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        events
    }
}

pub fn events(child: Child) -> Vec<Value> {
    let output = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON event"))
        .collect()
}

pub fn collect(dir: &Path, files: &mut Vec<(PathBuf, Vec<u8>)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        if meta.is_dir() {
            collect(&path, files);
        } else {
            files.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
}

/// Every request the model received, as one text.
pub async fn model_saw(fake: &FakeLlm) -> String {
    fake.requests()
        .await
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A script: one step per command line (each with its `risk_level`), then a final answer.
pub fn script(lines: &[(&str, Option<&str>)]) -> Vec<Scripted> {
    let mut steps: Vec<Scripted> = lines
        .iter()
        .enumerate()
        .map(|(i, (line, risk))| {
            let mut args = json!({ "command": line });
            if let Some(risk) = risk {
                args["risk_level"] = json!(risk);
            }
            fake_llm::tool_calls(&[(&format!("c{i}"), "execute_command", args)])
        })
        .collect();
    steps.extend(spare_answers());
    steps
}

/// Answers for the lines of stdin left over after the run (the "n"s meant for approvals
/// that did not come): each is read as a new message, and an exhausted script would make
/// the client retry.
pub fn spare_answers() -> Vec<Scripted> {
    vec![fake_llm::text("done"); 16]
}

/// The decisions of the run's tool calls, in order.
pub fn decisions(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "tool_call")
        .map(|e| e["decision"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub fn assert_no_secret(saw: &str) {
    for (name, value) in BOT_SECRETS {
        assert!(!saw.contains(value), "{name} reached the model:\n{saw}");
    }
    assert!(
        !saw.contains(OUTSIDE_SECRET),
        "the outside file reached the model:\n{saw}"
    );
}
