//! Clicks a team spends on a realistic operations session, with and without channel rules
//! ("Allow similar for 1 h").
//!
//! `cargo bench --bench approval_clicks`
//!
//! A 30-step incident-triage conversation, one tool call per step, through the real loop,
//! gate, sandbox and store: reading compressed logs, sizing compressed backups, checking
//! certificates, converting a latin-1 export, factoring numbers, a dry-run `make`, and two
//! deletions. Each
//! of these is a call the gate asks about (the programs are not on the read-only
//! whitelist, or delete files). The person answers every request with Confirm (rules off),
//! or with "Allow similar" wherever it is offered (rules on). Printed: the clicks, how many
//! calls ran under a rule, and how many of those worked (inside the read-only sandbox every
//! call without a click gets).

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use riskgate::config::Settings;
use riskgate::core::agent::{AgentEvent, ChatReply, ChatRequest, Inbound, ReplyToolCall, Role};
use riskgate::core::ports::{
    ApprovalOutcome, ApprovalRequest, ApprovalSurface, ChatModel, EventSink, ModelError,
};
use riskgate::core::tools::BoxFuture;
use serde_json::json;

/// The session: what the person asks the agent to run, step by step.
fn session() -> Vec<String> {
    let mut steps = Vec::new();
    for i in 0..8 {
        steps.push(format!("zcat logs/app-{i}.log.gz"));
    }
    for i in 0..6 {
        steps.push(format!("gzip -l backups/b-{i}.tgz"));
    }
    for name in ["api", "web", "db", "queue", "auth"] {
        steps.push(format!("openssl x509 -noout -subject -in certs/{name}.pem"));
    }
    for i in 0..4 {
        steps.push(format!("iconv -f latin1 -t utf-8 exports/e-{i}.txt"));
    }
    // (`tar -t` and `numfmt` would run without a click now; these still ask.)
    for n in [1_048_576, 5_000_000, 734_003_200] {
        steps.push(format!("factor {n}"));
    }
    steps.push("make -n deploy".to_owned());
    steps.push("make -n deploy".to_owned());
    steps.push("rm -f tmp/old-0.log".to_owned());
    steps.push("rm -f tmp/old-1.log".to_owned());
    steps
}

/// The files the session reads, made with the system's own tools.
fn workspace(dir: &std::path::Path) {
    let run = |program: &str, args: &[&str]| {
        let status = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        assert!(status.success(), "{program} {args:?}");
    };
    for sub in ["logs", "backups", "certs", "exports", "tmp"] {
        std::fs::create_dir_all(dir.join(sub)).expect("dir");
    }
    for i in 0..8 {
        let log = dir.join(format!("logs/app-{i}.log"));
        std::fs::write(&log, format!("{i} GET /health 200\n").repeat(50)).expect("log");
        run("gzip", &["-f", &format!("logs/app-{i}.log")]);
    }
    for i in 0..6 {
        run("tar", &["-czf", &format!("backups/b-{i}.tgz"), "logs"]);
    }
    for name in ["api", "web", "db", "queue", "auth"] {
        run(
            "openssl",
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                "/dev/null",
                "-days",
                "1",
                "-subj",
                &format!("/CN={name}.internal"),
                "-out",
                &format!("certs/{name}.pem"),
            ],
        );
    }
    for i in 0..4 {
        std::fs::write(
            dir.join(format!("exports/e-{i}.txt")),
            b"caf\xe9 cr\xe8me\n",
        )
        .expect("export");
    }
    std::fs::write(dir.join("Makefile"), "deploy:\n\techo deploying\n").expect("makefile");
    for i in 0..2 {
        std::fs::write(dir.join(format!("tmp/old-{i}.log")), "old").expect("tmp");
    }
}

/// Calls the step's command, then answers in words once it has the result.
struct Scripted {
    steps: Vec<String>,
}

impl ChatModel for Scripted {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatReply, ModelError>> {
        Box::pin(async move {
            let last = request.messages.last().expect("a message");
            if last.role == Role::Tool {
                return Ok(ChatReply {
                    content: Some("Noted.".into()),
                    tool_calls: Vec::new(),
                    finish_reason: Some("stop".into()),
                    usage: None,
                });
            }
            let step: usize = last
                .content
                .as_deref()
                .and_then(|c| c.strip_prefix("step "))
                .and_then(|n| n.parse().ok())
                .expect("a step");
            Ok(ChatReply {
                content: None,
                tool_calls: vec![ReplyToolCall {
                    id: Some(format!("c{step}")),
                    name: "execute_command".into(),
                    arguments: json!({ "command": self.steps[step] }),
                }],
                finish_reason: Some("tool_calls".into()),
                usage: None,
            })
        })
    }
}

/// A person who confirms everything, choosing "Allow similar" where offered if `rules`.
struct Person {
    rules: bool,
    clicks: AtomicUsize,
}

impl ApprovalSurface for Person {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.clicks.fetch_add(1, Ordering::SeqCst);
        let by = "ops".to_owned();
        let outcome = if self.rules && request.similar.is_some() {
            ApprovalOutcome::AllowSimilar { by }
        } else {
            ApprovalOutcome::Confirmed { by }
        };
        Box::pin(async move { outcome })
    }
}

/// Counts calls that ran under a rule, and how many of those worked.
#[derive(Default)]
struct Tally {
    by_rule: Mutex<Vec<String>>,
    worked: Mutex<Vec<String>>,
}

impl EventSink for Tally {
    fn emit(&self, _channel: &str, event: &AgentEvent) {
        match event {
            AgentEvent::ToolCall {
                call_id, source, ..
            } if *source == riskgate::core::risk::DecisionSource::ChannelRule => {
                self.by_rule.lock().expect("tally").push(call_id.clone());
            }
            AgentEvent::ToolResult {
                call_id, ok: true, ..
            } => self.worked.lock().expect("tally").push(call_id.clone()),
            _ => {}
        }
    }
}

struct Figures {
    clicks: usize,
    by_rule: usize,
    by_rule_worked: usize,
    worked: usize,
}

async fn play(rules: bool) -> Figures {
    let dir = tempfile::tempdir().expect("tempdir");
    workspace(dir.path());
    let mut settings = Settings::default();
    settings.tools.workspace = dir.path().to_path_buf();
    if !rules {
        settings.agent.allow_similar_secs = 0;
    }
    let steps = session();
    let person = Arc::new(Person {
        rules,
        clicks: AtomicUsize::new(0),
    });
    let tally = Arc::new(Tally::default());
    let agent = riskgate::app::build_agent(
        &settings,
        Arc::new(Scripted {
            steps: steps.clone(),
        }),
        Arc::new(riskgate::store::MemoryStore::new()),
        person.clone(),
        tally.clone(),
    )
    .expect("agent");
    for step in 0..steps.len() {
        agent
            .run(&Inbound {
                channel: "ops".into(),
                author: "ops".into(),
                author_name: "ops".into(),
                text: format!("step {step}"),
            })
            .await;
    }
    let by_rule = tally.by_rule.lock().expect("tally").clone();
    let worked = tally.worked.lock().expect("tally").clone();
    Figures {
        clicks: person.clicks.load(Ordering::SeqCst),
        by_rule: by_rule.len(),
        by_rule_worked: by_rule.iter().filter(|id| worked.contains(id)).count(),
        worked: worked.len(),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let steps = session().len();
    let without = runtime.block_on(play(false));
    let with = runtime.block_on(play(true));
    println!("approval_clicks: {steps} steps, one call each, every call one the gate asks about");
    for (name, f) in [("rules off", &without), ("rules on", &with)] {
        println!(
            "  {name:9}: {:2} clicks, {:2} calls ran under a rule ({} of them worked), {:2} of {steps} calls worked",
            f.clicks, f.by_rule, f.by_rule_worked, f.worked
        );
    }
    let saved = without.clicks.saturating_sub(with.clicks);
    println!(
        "  saved    : {saved} clicks ({:.0}%)",
        100.0 * saved as f64 / without.clicks.max(1) as f64
    );
}
