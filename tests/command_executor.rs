//! The command executor against real processes: plans run without a shell and follow sh's
//! semantics, lines that need a shell run only when confirmed, no secret reaches a child,
//! timeouts kill the whole process group, output is capped, exits are reported.

use std::sync::Once;
use std::time::{Duration, Instant};

use riskgate::config::{CommandSettings, OutputSettings, ToolRules};
use riskgate::core::risk::Assessment;
use riskgate::core::tools::{Approval, Tool, ToolError, ToolOutput};
use riskgate::tools::Workspace;
use riskgate::tools::command::sandbox::{git_environment, hg_environment, python_environment};
use riskgate::tools::command::{
    CommandError, CommandPolicy, CommandTool, Exit, RunError, assess_command,
};
use serde_json::{Map, Value, json};

/// Secrets the bot might hold, set in this process before any tool is built.
const SECRETS: [(&str, &str); 5] = [
    ("DISCORD_TOKEN", "discord-secret-7f3a"),
    ("RISKGATE__DISCORD__TOKEN", "riskgate-discord-secret-4c81"),
    ("OPENAI_API_KEY", "openai-secret-91bc"),
    ("RISKGATE__LLM__API_KEY", "riskgate-secret-d20e"),
    ("MY_SECRET_TOKEN", "my-secret-55aa"),
];
/// A harmless variable the operator allow-lists.
const VISIBLE: (&str, &str) = ("COMMAND_EXECUTOR_TEST_VISIBLE", "visible-value-1234");

static ENVIRONMENT: Once = Once::new();

fn set_bot_environment() {
    ENVIRONMENT.call_once(|| {
        for (name, value) in SECRETS.iter().chain([&VISIBLE]) {
            // SAFETY: every test calls this first, before it builds a tool or spawns anything,
            // and `Once` makes the others wait until it is done; nothing in this binary reads
            // the environment from C code meanwhile.
            unsafe { std::env::set_var(name, value) };
        }
    });
}

struct TestTool {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    tool: CommandTool,
}

fn settings(timeout_secs: u64, output_limit_bytes: u64) -> CommandSettings {
    CommandSettings {
        timeout_secs,
        output_limit_bytes,
        // MY_SECRET_TOKEN is allow-listed on purpose: it must still not be passed.
        env_allow: vec![VISIBLE.0.to_owned(), "MY_SECRET_TOKEN".to_owned()],
        ..CommandSettings::default()
    }
}

fn tool_with(settings: CommandSettings) -> TestTool {
    set_bot_environment();
    let dir = tempfile::tempdir().expect("tempdir");
    // A workspace that does not exist yet: the executor creates it.
    let root = dir.path().join("workspace");
    let tool = CommandTool::new(
        Workspace::new(&root),
        &ToolRules::default(),
        &settings,
        &OutputSettings::default(),
    );
    let root = std::fs::canonicalize(dir.path())
        .expect("canonical")
        .join("workspace");
    TestTool {
        _dir: dir,
        root,
        tool,
    }
}

fn tool() -> TestTool {
    tool_with(settings(30, 1024 * 1024))
}

fn confirmed() -> Approval {
    Approval::Confirmed {
        by: "tester".to_owned(),
    }
}

fn arguments(line: &str) -> Map<String, Value> {
    match json!({ "command": line }) {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

impl TestTool {
    async fn execute(&self, line: &str, approval: &Approval) -> Result<ToolOutput, ToolError> {
        self.tool.execute(&arguments(line), approval).await
    }

    async fn auto(&self, line: &str) -> ToolOutput {
        self.execute(line, &Approval::Auto)
            .await
            .unwrap_or_else(|e| panic!("{line:?} failed: {e}"))
    }

    async fn confirmed(&self, line: &str) -> ToolOutput {
        self.execute(line, &confirmed())
            .await
            .unwrap_or_else(|e| panic!("{line:?} failed: {e}"))
    }

    /// Stdout and exit of a line, through `CommandTool::run`.
    async fn stdout_and_exit(&self, line: &str, approval: &Approval) -> (String, Exit) {
        let outcome = self
            .tool
            .run(line, approval)
            .await
            .unwrap_or_else(|e| panic!("{line:?} failed: {e}"));
        (
            String::from_utf8(outcome.stdout.bytes).expect("utf-8"),
            outcome.exit,
        )
    }
}

/// Processes whose command line contains `needle`. Zombies have an empty command line, so
/// only processes that still run count.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Waits up to two seconds for every process matching `needle` to be gone.
async fn assert_all_gone(needle: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = processes_with(needle);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes outlived their line: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn quoted_words_reach_the_program_exactly() {
    let t = tool();
    let out = t
        .auto(r#"printf '[%s]\n' 'a;b' "c d" e\ f '$HOME' '*'"#)
        .await;
    assert_eq!(out.summary, "exit status 0, 5 lines");
    assert!(
        out.text
            .contains("stdout:\n[a;b]\n[c d]\n[e f]\n[$HOME]\n[*]\n"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn pipelines_connect_stdout_to_stdin() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    for name in ["b.txt", "a.txt", "c.md"] {
        std::fs::write(t.root.join(name), "x\n").expect("write");
    }
    let (stdout, exit) = t.stdout_and_exit("ls | wc -l", &Approval::Auto).await;
    assert_eq!((stdout.trim(), exit), ("3", Exit::Code(0)));
    let (stdout, _) = t
        .stdout_and_exit("printf 'b\\na\\nc\\n' | sort | head -n 2", &Approval::Auto)
        .await;
    assert_eq!(stdout, "a\nb\n");
    // Globs are expanded by riskgate, sorted, relative to the workspace.
    let (stdout, _) = t.stdout_and_exit("echo *.txt", &Approval::Auto).await;
    assert_eq!(stdout, "a.txt b.txt\n");
}

/// `TZ=...` before a program sets it for that program alone, as sh does, in a line that
/// runs without a shell.
#[tokio::test]
async fn an_inert_variable_is_set_for_its_command_alone() {
    let t = tool();
    let (stdout, exit) = t
        .stdout_and_exit("TZ=XYZ-3 date +%Z; date +%Z", &Approval::Auto)
        .await;
    let zones: Vec<&str> = stdout.lines().collect();
    assert_eq!(exit, Exit::Code(0));
    assert_eq!(zones.len(), 2, "{stdout}");
    assert_eq!(zones[0], "XYZ");
    assert_ne!(zones[1], "XYZ", "{stdout}");
    let (stdout, _) = t
        .stdout_and_exit(
            "echo b a | LC_ALL=C tr ' ' '\\n' | LC_ALL=C sort",
            &Approval::Auto,
        )
        .await;
    assert_eq!(stdout, "a\nb\n");
}

/// The runner's `&&`, `||` and `;` give what sh gives, output and status.
#[tokio::test]
async fn and_or_lists_follow_sh() {
    let t = tool();
    for line in [
        "false && echo x",
        "false || echo y",
        "false; echo z",
        "true && echo a || echo b",
        "false && echo a || echo b",
        "true || echo a && echo b",
        "false || false && echo a; echo after",
        "echo one; false",
        "false | true",
        "true | false",
        "sh -c 'exit 3' || echo three",
        "sh -c 'exit 3'; sh -c 'exit 4'",
    ] {
        let (stdout, exit) = t.stdout_and_exit(line, &Approval::Auto).await;
        let reference = std::process::Command::new("/bin/sh")
            .args(["-c", line])
            .output()
            .expect("sh runs");
        assert_eq!(
            stdout,
            String::from_utf8_lossy(&reference.stdout),
            "stdout of {line:?}"
        );
        assert_eq!(
            exit,
            Exit::Code(reference.status.code().expect("exited")),
            "status of {line:?}"
        );
    }
}

#[tokio::test]
async fn no_secret_reaches_a_command() {
    let t = tool();
    // `env` and `printenv` are read-only to the gate: they print the line's environment.
    let policy = CommandPolicy::new(Workspace::new(&t.root), &[], &[]);
    for line in ["env", "printenv", "env -i printenv"] {
        let verdict = assess_command(line, &policy);
        assert!(
            matches!(verdict, Assessment::Safe(_)),
            "{line}: {verdict:?}"
        );
    }
    // `env` has a plan: it runs without a shell, automatically.
    let env = t.auto("env").await.text;
    let printenv = t.auto("printenv").await.text;
    // `echo $DISCORD_TOKEN` needs a shell: a person confirmed it.
    let echoed = t
        .confirmed("echo $DISCORD_TOKEN $MY_SECRET_TOKEN")
        .await
        .text;
    let shell_env = t.confirmed("env | sort").await.text;
    for text in [&env, &printenv, &echoed, &shell_env] {
        for (name, value) in SECRETS {
            assert!(!text.contains(value), "{name} leaked:\n{text}");
            assert!(
                !text.contains(&format!("{name}=")),
                "{name} leaked:\n{text}"
            );
        }
    }
    assert!(
        env.contains(&format!("{}={}", VISIBLE.0, VISIBLE.1)),
        "{env}"
    );
    assert!(env.contains("HOME=/"), "{env}");
    assert!(
        !env.contains(&format!("HOME={}", t.root.display())),
        "HOME is the line's own, not the workspace:\n{env}"
    );
    assert!(env.contains("PATH=/"), "{env}");
    assert!(env.contains("LANG="), "{env}");
    assert!(env.contains("GIT_CONFIG_GLOBAL=/dev/null"), "{env}");
    // Nothing else: PATH, LANG, USER and LOGNAME (the account lines run as), the
    // allow-listed variable, the line's private HOME, TMPDIR
    // and XDG directories, git's lock-down for every line, and (in a line run without a
    // click) git's hardening, Mercurial's empty configuration and Python's safe path.
    let mut names: Vec<&str> = env
        .lines()
        .skip_while(|l| *l != "stdout:")
        .skip(1)
        .take_while(|l| !l.starts_with("stderr:"))
        .filter_map(|l| l.split_once('=').map(|(name, _)| name))
        .collect();
    let git: Vec<String> = git_environment()
        .into_iter()
        .chain(hg_environment())
        .chain(python_environment())
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    assert!(git.len() > 6, "{git:?}");
    for name in &git {
        assert!(names.contains(&name.as_str()), "{name} missing: {names:?}");
    }
    names.retain(|name| !git.iter().any(|g| g == name));
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "COMMAND_EXECUTOR_TEST_VISIBLE",
            "GIT_CEILING_DIRECTORIES",
            "GIT_CONFIG_GLOBAL",
            "GIT_CONFIG_NOSYSTEM",
            "HOME",
            "LANG",
            "LOGNAME",
            "PATH",
            "TMPDIR",
            "USER",
            "XDG_CACHE_HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_RUNTIME_DIR",
            "XDG_STATE_HOME",
        ],
    );
}

#[tokio::test]
async fn cwd_is_the_workspace_and_home_is_the_lines_own() {
    let t = tool();
    assert!(!t.root.exists(), "the workspace starts missing");
    let (pwd, _) = t.stdout_and_exit("pwd", &Approval::Auto).await;
    assert_eq!(pwd.trim_end(), t.root.display().to_string());
    // Each line gets a HOME of its own, empty, and gone after it: what one line (or a call
    // run without a click) leaves there cannot steer the next.
    let line = "echo $HOME; ls -A $HOME; echo planted > $HOME/.gitconfig";
    let (first, _) = t.stdout_and_exit(line, &confirmed()).await;
    let (second, _) = t.stdout_and_exit(line, &confirmed()).await;
    let first_home = first.lines().next().expect("HOME").to_owned();
    let second_home = second.lines().next().expect("HOME").to_owned();
    assert!(first_home.starts_with('/'), "{first}");
    assert!(
        !first_home.starts_with(&t.root.display().to_string()),
        "{first}"
    );
    assert_ne!(first_home, second_home);
    assert_eq!(
        second.lines().count(),
        1,
        "the second HOME starts empty: {second}"
    );
    // Removed just after the line (off its path); where the line had a view of its own the
    // directory was only ever a tmpfs inside it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::path::Path::new(&first_home).exists() {
        assert!(Instant::now() < deadline, "{first_home} outlived its line");
        std::thread::sleep(Duration::from_millis(10));
    }
    // A relative program path is found in the workspace, not the bot's directory.
    std::fs::write(
        t.root.join("hello.sh"),
        "#!/bin/sh\necho hello from $(pwd)\n",
    )
    .expect("write");
    let (hello, _) = t.stdout_and_exit("sh hello.sh", &Approval::Auto).await;
    assert_eq!(hello.trim_end(), format!("hello from {}", t.root.display()));
}

/// The process group id in `/proc/PID/stat` text (field 5; the name in field 2 is `(sh)`).
fn pgid_in_stat(stat: &str) -> &str {
    stat.split(' ').nth(4).expect("stat has a pgrp field")
}

#[tokio::test]
async fn every_process_of_a_line_shares_one_new_group() {
    let t = tool();
    // Three pipelines; the first (the group's leader) has exited before the others start.
    let line = "sh -c 'cat /proc/$$/stat'; sh -c 'cat /proc/$$/stat' | cat; true && sh -c 'cat /proc/$$/stat'";
    let (stdout, exit) = t.stdout_and_exit(line, &Approval::Auto).await;
    assert_eq!(exit, Exit::Code(0));
    let groups: Vec<&str> = stdout.lines().map(pgid_in_stat).collect();
    assert_eq!(groups.len(), 3, "{stdout}");
    assert!(groups.iter().all(|g| *g == groups[0]), "{groups:?}");
    // The group is the leader's own: its pid.
    let leader_pid = stdout.lines().next().and_then(|l| l.split(' ').next());
    assert_eq!(leader_pid, Some(groups[0]));
    let ours = std::fs::read_to_string("/proc/self/stat").expect("stat");
    assert_ne!(pgid_in_stat(&ours), groups[0], "a new group, not the bot's");
}

#[tokio::test]
async fn a_timeout_kills_the_command() {
    let t = tool_with(settings(1, 1024 * 1024));
    let started = Instant::now();
    let result = t.execute("sleep 100", &Approval::Auto).await;
    assert_eq!(result, Err(ToolError::Timeout(Duration::from_secs(1))));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_timeout_kills_what_the_command_forked() {
    let t = tool_with(settings(1, 1024 * 1024));
    // Through the shell, confirmed: sh forks a background sleep and a foreground one.
    let result = t
        .execute("sleep 123.456 & sleep 123.456", &confirmed())
        .await;
    assert_eq!(result, Err(ToolError::Timeout(Duration::from_secs(1))));
    assert_all_gone("123.456").await;
    // A plan that starts a shell itself: the same.
    let result = t
        .execute("sh -c 'sleep 123.457 & sleep 123.457'", &Approval::Auto)
        .await;
    assert_eq!(result, Err(ToolError::Timeout(Duration::from_secs(1))));
    assert_all_gone("123.457").await;
}

#[tokio::test]
async fn a_timeout_keeps_what_was_written_before() {
    // Two seconds, so a loaded machine still gets to the echoes before the kill.
    let t = tool_with(settings(2, 1024 * 1024));
    let result = t
        .tool
        .run(
            "sh -c 'echo started; echo warming >&2; sleep 100'",
            &Approval::Auto,
        )
        .await;
    match result {
        Err(CommandError::Run(RunError::TimedOut {
            after,
            stdout,
            stderr,
        })) => {
            assert_eq!(after, Duration::from_secs(2));
            assert_eq!(stdout.bytes, b"started\n");
            assert_eq!(stderr.bytes, b"warming\n");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn nothing_a_line_started_outlives_it() {
    let t = tool();
    // The background sleep does not hold the output pipes, so the line ends at once...
    let started = Instant::now();
    let out = t
        .confirmed("sleep 123.458 >/dev/null 2>&1 & echo done")
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.text.contains("stdout:\ndone"), "{}", out.text);
    // ...and the group is killed with it.
    assert_all_gone("123.458").await;
}

#[tokio::test]
async fn a_cancelled_call_takes_its_processes_with_it() {
    let t = tool();
    let call = t.execute("sleep 123.459", &Approval::Auto);
    let cancelled = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(cancelled.is_err(), "the call was still running");
    assert_all_gone("123.459").await;
}

#[tokio::test]
async fn ten_megabytes_of_output_are_capped() {
    let limit = 64 * 1024;
    let t = tool_with(settings(30, limit));
    let started = Instant::now();
    let line = r"head -c 10000000 /dev/zero | tr '\0' a";
    let outcome = t.tool.run(line, &Approval::Auto).await.expect("runs");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(outcome.stdout.bytes.len() as u64, limit);
    assert!(outcome.stdout.bytes.iter().all(|&b| b == b'a'));
    assert_eq!(outcome.stdout.dropped, 10_000_000 - limit);
    let out = t.auto(line).await;
    assert_eq!(out.summary, "exit status 0, 1 line, 9.5 MiB not shown");
    assert!(
        out.text.contains("[9934464 bytes more not shown]"),
        "{}",
        out.summary
    );
    assert!(out.attachment.is_some(), "the cut output is attached");
    // stderr has its own cap.
    let outcome = t
        .tool
        .run("sh -c 'head -c 3000000 /dev/zero >&2'", &Approval::Auto)
        .await
        .expect("runs");
    assert_eq!(outcome.stderr.bytes.len() as u64, limit);
    assert_eq!(outcome.stderr.dropped, 3_000_000 - limit);
}

#[tokio::test]
async fn a_non_zero_exit_is_output_not_an_error() {
    let t = tool();
    let out = t.auto("ls /nonexistent-dir-xyz").await;
    assert!(
        out.summary
            .starts_with("exit status 2, 0 lines, 1 line on stderr"),
        "{}",
        out.summary
    );
    assert!(out.text.contains("stderr:\nls: "), "{}", out.text);
    assert!(out.chat.ends_with("exit status 2"), "{}", out.chat);
    // A signal is reported too.
    let out = t.auto("sh -c 'kill -9 $$'").await;
    assert!(
        out.summary.starts_with("killed by signal 9"),
        "{}",
        out.summary
    );
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error_and_nothing_runs() {
    let t = tool();
    let result = t
        .execute("touch ran.txt; no-such-cmd-xyz --flag", &Approval::Auto)
        .await;
    match result {
        Err(ToolError::Failed(message)) => {
            assert!(
                message.contains("command not found: `no-such-cmd-xyz`"),
                "{message}"
            );
            assert!(message.contains("nothing in the line ran"), "{message}");
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(!t.root.join("ran.txt").exists(), "the first command ran");
    // A line with a plan never goes through a shell, confirmed or not.
    assert!(matches!(
        t.execute("no-such-cmd-xyz", &confirmed()).await,
        Err(ToolError::Failed(_))
    ));
    // Through the shell, a missing program is the shell's business: status 127.
    let out = t.confirmed("no-such-cmd-xyz \"$HOME\"").await;
    assert!(
        out.summary.starts_with("exit status 127"),
        "{}",
        out.summary
    );
}

/// `ps`, `pgrep` and `lsof` read without a click, and a line sees only its own processes:
/// another process's command line (with a password in it) is not among what they list.
/// Where lines cannot get a private `/proc`, such a line is refused without a click.
#[tokio::test]
async fn process_listers_see_only_the_lines_own_processes() {
    const SECRET: &str = "ps-secret-3e9d";
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let policy = CommandPolicy::new(Workspace::new(&t.root), &[], &[]);
    let lines = [
        "ps aux",
        "ps -eo pid,args",
        "pgrep -a sleep",
        "top -b -n 1",
        "lsof -n",
    ];
    for line in lines {
        let verdict = assess_command(line, &policy);
        assert!(
            matches!(verdict, Assessment::Safe(_)),
            "{line}: {verdict:?}"
        );
    }
    let mut other = std::process::Command::new("sh")
        .args([
            "-c",
            "sleep 30; :",
            "sh",
            &format!("--db-password={SECRET}"),
        ])
        .spawn()
        .expect("spawn");
    // The control: from outside a line the secret is plain to see (once `exec` is done).
    let deadline = Instant::now() + Duration::from_secs(5);
    while processes_with(SECRET).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the control cannot see the secret: the test proves nothing"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let own = std::process::id().to_string();
    let private = t.tool.per_line().view.is_ok();
    for line in lines {
        let result = t.execute(line, &Approval::Auto).await;
        if !private {
            match result {
                Err(ToolError::Refused(message)) => {
                    assert!(message.contains("lists processes"), "{message}");
                }
                other => panic!("{line:?} should be refused without a private /proc: {other:?}"),
            }
            continue;
        }
        let text = result
            .unwrap_or_else(|e| panic!("{line:?} failed: {e}"))
            .text;
        assert!(
            !text.contains(SECRET),
            "{line} shows another process:\n{text}"
        );
        assert!(
            !text.contains("--db-password"),
            "{line} shows another process:\n{text}"
        );
        let pids: Vec<&str> = text
            .lines()
            // Not `top`'s summary (`Tasks: 1 total`).
            .filter(|l| {
                !l.split_whitespace()
                    .next()
                    .is_some_and(|w| w.ends_with(':'))
            })
            .filter_map(|l| {
                // The PID column: first (`ps -o pid`, `top`, `pgrep`) or second (`ps aux`,
                // `lsof`).
                l.split_whitespace()
                    .take(2)
                    .find(|w| w.chars().all(|c| c.is_ascii_digit()))
            })
            .collect();
        // Each lists its own process (`pgrep sleep` finds none: no `sleep` runs in the line).
        assert!(
            line.starts_with("pgrep") || !pids.is_empty(),
            "{line} listed nothing:\n{text}"
        );
        assert!(
            !pids.contains(&own.as_str()) && !pids.contains(&"1"),
            "{line} lists a process outside the line: {pids:?}\n{text}"
        );
    }
    if private {
        let listed = t.auto("ps -eo args").await.text;
        assert!(listed.contains("ps -eo args"), "ps sees itself:\n{listed}");
    }
    other.kill().expect("kill");
    other.wait().expect("wait");
}

#[tokio::test]
async fn an_auto_line_that_needs_a_shell_is_refused_and_runs_when_confirmed() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    for line in [
        "echo $HOME",
        "ls > listing.txt",
        "cd - && ls",
        "{ cd .; ls; }",
    ] {
        match t.execute(line, &Approval::Auto).await {
            Err(ToolError::Refused(message)) => {
                assert!(message.contains("needs a shell"), "{message}");
                assert!(message.contains("a person confirms"), "{message}");
                assert!(message.contains("risk_level \"medium\""), "{message}");
            }
            other => panic!("{line:?} should be refused, got {other:?}"),
        }
    }
    assert!(!t.root.join("listing.txt").exists());
    let out = t.confirmed("ls > listing.txt").await;
    assert!(out.summary.starts_with("exit status 0"), "{}", out.summary);
    assert!(t.root.join("listing.txt").exists());
}

#[tokio::test]
async fn a_glob_leading_out_of_the_workspace_is_refused() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "top secret").expect("write");
    std::os::unix::fs::symlink(outside.path(), t.root.join("link")).expect("symlink");
    for line in ["cat link/*", "cat ../*", "cat /etc/pass*"] {
        match t.execute(line, &Approval::Auto).await {
            Err(ToolError::Refused(message)) => {
                assert!(message.contains("outside the workspace"), "{message}");
            }
            other => panic!("{line:?} should be refused, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn empty_lines_are_invalid() {
    let t = tool();
    for line in ["", "   ", "# just a comment"] {
        assert!(
            matches!(
                t.execute(line, &confirmed()).await,
                Err(ToolError::InvalidArguments(_))
            ),
            "{line:?}"
        );
    }
}

#[tokio::test]
async fn chat_shows_the_command_and_output_in_code_blocks() {
    let t = tool();
    let out = t.auto("printf 'x```y\\n'").await;
    assert_eq!(
        out.chat,
        "```sh\nprintf 'x`\u{200b}`\u{200b}`y\\n'\n```\n```\nx`\u{200b}`\u{200b}`y\n```\nexit status 0"
    );
}

/// What a line wrote to stdout and stderr, and how it ended.
async fn outputs(t: &TestTool, line: &str, approval: &Approval) -> (String, String, Exit) {
    let outcome = t
        .tool
        .run(line, approval)
        .await
        .unwrap_or_else(|e| panic!("{line:?} failed: {e}"));
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (
        text(outcome.stdout.bytes),
        text(outcome.stderr.bytes),
        outcome.exit,
    )
}

#[tokio::test]
async fn redirections_and_cd_run_in_the_plan_in_sh_order() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("sub")).expect("mkdir");
    std::fs::write(t.root.join("sub/inner.txt"), "inner\n").expect("write");
    let auto = Approval::Auto;
    let (out, _, exit) = outputs(&t, "cd sub && cat < inner.txt 2>/dev/null", &auto).await;
    assert_eq!((out.as_str(), exit), ("inner\n", Exit::Code(0)));
    // `2>&1 >/dev/null`: the error goes where stdout was, then stdout is dropped.
    let (out, err, _) = outputs(&t, "ls missing 2>&1 >/dev/null", &auto).await;
    assert!(out.contains("missing"), "{out}");
    assert!(err.is_empty(), "{err}");
    let (out, err, _) = outputs(&t, "ls missing >/dev/null 2>&1", &auto).await;
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let (out, _, _) = outputs(&t, "echo {a,b} $((2 * 3)) >&2 2>/dev/null; pwd", &auto).await;
    assert_eq!(out, format!("{}\n", t.root.display()));
    let (out, err, _) = outputs(&t, "cd nowhere 2>/dev/null || echo no-such-dir", &auto).await;
    assert_eq!((out.as_str(), err.as_str()), ("no-such-dir\n", ""));
    // `cd` alone goes back to the workspace; a later `;` list keeps the directory.
    let (out, _, _) = outputs(&t, "cd sub; ls; cd; ls", &auto).await;
    assert_eq!(out, "inner.txt\nsub\n");
}

/// A here-string or a here-document the line shows whole is the command's input, fed by
/// the runner as sh would: a here-string with a newline after it, `<<-` without leading tabs.
#[tokio::test]
async fn here_strings_and_documents_feed_the_command_as_sh_does() {
    let t = tool();
    let auto = Approval::Auto;
    let big = "x".repeat(60_000);
    for (line, want) in [
        ("tr a-z A-Z <<< 'hello world'", "HELLO WORLD\n".to_owned()),
        ("wc -c <<< abc", "4\n".to_owned()),
        (
            "cat <<'EOF'\nkeep $HOME as it is\nEOF",
            "keep $HOME as it is\n".to_owned(),
        ),
        ("sort <<EOF | head -n 2\nc\nb\na\nEOF", "a\nb\n".to_owned()),
        ("cat <<-EOF\n\t\tindented\n\tEOF", "indented\n".to_owned()),
        // Later than `< file`, it wins, as in sh.
        ("cat < /dev/null <<< last", "last\n".to_owned()),
        // Nearly as long as a line may be: read however the command reads it.
        (&format!("wc -c <<< {big}"), "60001\n".to_owned()),
    ] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        let shown: String = line.chars().take(80).collect();
        assert_eq!(
            (out.as_str(), exit),
            (want.as_str(), Exit::Code(0)),
            "{shown:?}: {err}"
        );
    }
}

/// The machine's public files and the devices of zeros and random bytes are read without a
/// click, as operands and through `<` (which the runner opens itself).
#[tokio::test]
async fn public_files_and_random_devices_are_read_without_a_click() {
    let t = tool();
    let auto = Approval::Auto;
    for (line, want) in [
        ("tr -dc a-z < /dev/urandom | head -c 10 | wc -c", "10\n"),
        ("head -c 4 /dev/zero | od -An -tx1", " 00 00 00 00\n"),
        ("grep -c MemTotal < /proc/meminfo", "1\n"),
        ("head -c 3 /dev/random | wc -c", "3\n"),
    ] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(
            (out.as_str(), exit),
            (want, Exit::Code(0)),
            "{line:?}: {err}"
        );
    }
    // The files that say what the system is, where this machine has them, read whole.
    for file in [
        "/etc/os-release",
        "/etc/lsb-release",
        "/etc/debian_version",
        "/etc/issue",
        "/etc/shells",
    ] {
        let Ok(want) = std::fs::read_to_string(file) else {
            continue;
        };
        let (out, err, exit) = outputs(&t, &format!("cat {file}"), &auto).await;
        assert_eq!((out, exit), (want, Exit::Code(0)), "{file}: {err}");
    }
    // `lsb_release` finds what it reads, where the machine has it.
    if std::path::Path::new("/usr/bin/lsb_release").exists() {
        let (out, err, exit) = outputs(&t, "lsb_release -si", &auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(!out.trim().is_empty() && !out.contains("n/a"), "{out}{err}");
    }
}

/// `<( ... )` runs beside the command, which reads its output at `/dev/fd/N` as in bash:
/// several at once, a `cd` inside staying inside, a producer that never ends stopped when
/// its reader is done.
#[tokio::test]
async fn process_substitutions_feed_the_command_through_its_own_descriptors() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("sub")).expect("mkdir");
    std::fs::write(t.root.join("a.txt"), "b\na\nc\n").expect("write");
    std::fs::write(t.root.join("sub/b.txt"), "c\nb\nd\n").expect("write");
    let auto = Approval::Auto;
    for (line, want) in [
        ("comm -12 <(sort a.txt) <(sort sub/b.txt)", "b\nc\n"),
        (
            "paste -d, <(sort a.txt) <(cd sub && sort b.txt)",
            "a,b\nb,c\nc,d\n",
        ),
        ("cat <(echo one) <(echo two) | wc -l", "2\n"),
        ("head -n 2 <(yes)", "y\ny\n"),
        // A command that never opens its substitution: the producer stops with it.
        ("echo <(yes)", "/dev/fd/63\n"),
        ("grep -c . <(ls missing 2>/dev/null; echo x)", "1\n"),
        (
            "cat <(echo in) ; pwd",
            &format!("in\n{}\n", t.root.display()),
        ),
    ] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(
            (out.as_str(), exit),
            (want, Exit::Code(0)),
            "{line:?}: {err}"
        );
    }
    // The command's status is the line's, not the substitution's.
    let (out, _, exit) = outputs(&t, "cat <(false) <(echo ok)", &auto).await;
    assert_eq!((out.as_str(), exit), ("ok\n", Exit::Code(0)));
}

/// A subshell runs in the plan like a stage of its own: its commands one after the other
/// on the stage's streams, at once with the stages beside it, its `cd` its own.
#[tokio::test]
async fn subshells_run_in_the_plan_like_sh() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("sub")).expect("mkdir");
    for (file, text) in [("sub/a.txt", "b\na\n"), ("top.txt", "c\n")] {
        std::fs::write(t.root.join(file), text).expect("write");
    }
    let auto = Approval::Auto;
    for (line, want) in [
        ("(cd sub && ls) | wc -l", "1\n"),
        // The `cd` inside moves only the subshell.
        ("(cd sub); ls", "sub\ntop.txt\n"),
        ("(cd sub && cat a.txt; cat ../top.txt) | sort", "a\nb\nc\n"),
        ("(echo z; cat top.txt) | sort -r", "z\nc\n"),
        // The subshell reads the pipe before it; every command in it shares that input.
        (
            "printf '1\\n2\\n3\\n' | (head -n 1; echo --; cat)",
            "1\n--\n",
        ),
        ("(false || echo no) && (echo yes)", "no\nyes\n"),
        ("(ls missing 2>&1) | wc -l", "1\n"),
        ("((echo inner) | cat)", "inner\n"),
        (
            "(cd sub && ls) > /dev/null; pwd",
            &format!("{}\n", t.root.display()),
        ),
    ] {
        let (out, _, _) = outputs(&t, line, &auto).await;
        assert_eq!(out, want, "{line:?}");
    }
    // Its status is its last command's.
    let (_, _, exit) = outputs(&t, "(true; false)", &auto).await;
    assert_eq!(exit, Exit::Code(1));
    // A subshell at the head of a pipeline writes more than a pipe holds while the stage
    // after it reads: the stages run at once.
    let (out, _, exit) = outputs(&t, "(seq 100000; seq 5) | tail -n 1", &auto).await;
    assert_eq!((out.as_str(), exit), ("5\n", Exit::Code(0)));
    let (out, _, exit) = outputs(&t, "seq 100000 | (wc -l; cat) | head -c 7", &auto).await;
    assert_eq!((out.as_str(), exit), ("100000\n", Exit::Code(0)));
    // Without a click, a `cd` in a subshell stays inside the workspace too.
    let (out, err, exit) = outputs(&t, "(cd .. && ls)", &auto).await;
    assert_eq!(exit, Exit::Code(1));
    assert!(err.contains("outside the workspace"), "{err}");
    assert!(out.is_empty(), "{out}");
}

/// A line of shell-state builtins only does nothing that outlives it: it runs without a
/// shell, prints nothing and succeeds, as `sh -c` would; beside another command it needs a
/// shell.
#[tokio::test]
async fn a_line_of_shell_state_builtins_only_succeeds() {
    let t = tool();
    let auto = Approval::Auto;
    for line in ["export A=b", "set -x; unset A", "alias ll='ls -l'", "jobs"] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(
            (out.as_str(), err.as_str(), exit),
            ("", "", Exit::Code(0)),
            "{line:?}"
        );
    }
    match t.execute("export A=b; env", &auto).await {
        Err(ToolError::Refused(message)) => assert!(message.contains("needs a shell"), "{message}"),
        other => panic!("should be refused, got {other:?}"),
    }
    // Confirmed, sh runs it with the state it sets.
    let (out, _, _) = outputs(&t, "export A=visible-b; printenv A", &confirmed()).await;
    assert_eq!(out, "visible-b\n");
}

/// `command -v NAME` and `type NAME` are answered by the runner, without a shell, from the
/// PATH the line's commands get: the same file `which` finds there, bash's words for
/// builtins, bash's exit statuses, on whatever streams the stage has; an answer longer
/// than a pipe holds reaches a reader started after it.
#[tokio::test]
async fn questions_about_names_are_answered_without_a_shell() {
    let t = tool();
    let auto = Approval::Auto;
    let (which, _, exit) = outputs(&t, "which sh", &auto).await;
    assert_eq!(exit, Exit::Code(0));
    assert!(which.starts_with('/'), "{which}");
    let (out, err, exit) = outputs(&t, "command -v sh", &auto).await;
    assert_eq!(
        (out.as_str(), err.as_str(), exit),
        (which.as_str(), "", Exit::Code(0))
    );
    let (out, _, _) = outputs(&t, "type sh", &auto).await;
    assert_eq!(out, format!("sh is {which}"));
    let many = "cd ".repeat(20_000);
    for (line, want) in [
        (
            "command -v no-such-program-here || echo missing",
            "missing\n".to_owned(),
        ),
        ("command -v sh >/dev/null && echo yes", "yes\n".to_owned()),
        ("type -t cd if sh", "builtin\nkeyword\nfile\n".to_owned()),
        ("type no-such-program-here 2>&1 | wc -l", "1\n".to_owned()),
        ("type -t ls | tr a-z A-Z", "FILE\n".to_owned()),
        ("(command -v sh; type -t cd) | wc -l", "2\n".to_owned()),
        ("cat <(type -t if)", "keyword\n".to_owned()),
        (&format!("type -t {many}| wc -l"), "20000\n".to_owned()),
    ] {
        let (out, err, _) = outputs(&t, line, &auto).await;
        let shown: String = line.chars().take(80).collect();
        assert_eq!(out, want, "{shown:?}: {err}");
    }
    // A name with a slash is looked at only where the walls let a line look: an
    // executable outside the workspace is not found without a click.
    let outside = tempfile::tempdir().expect("tempdir");
    let tool_path = outside.path().join("tool");
    std::fs::write(&tool_path, "#!/bin/sh\n").expect("write");
    let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
    std::fs::set_permissions(&tool_path, mode).expect("chmod");
    let line = format!("command -v {} || echo hidden", tool_path.display());
    let (out, _, _) = outputs(&t, &line, &auto).await;
    assert_eq!(out, "hidden\n");
    let (out, _, _) = outputs(&t, &line, &confirmed()).await;
    assert_eq!(out, format!("{}\n", tool_path.display()));
    let (out, err, exit) = outputs(&t, "type no-such-program-here", &auto).await;
    assert_eq!(
        (out.as_str(), err.as_str(), exit),
        ("", "type: no-such-program-here: not found\n", Exit::Code(1))
    );
}

#[tokio::test]
async fn builtins_that_report_answer_as_a_shell_of_the_line_would() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let auto = Approval::Auto;
    // The same words through a shell, confirmed, and planned without a click.
    for (line, shell) in [
        ("ulimit -n", "bash -c 'ulimit -n'"),
        ("ulimit -a | grep -c .", "bash -c 'ulimit -a' | grep -c ."),
        ("umask", "bash -c umask"),
        ("umask -S", "bash -c 'umask -S'"),
        ("help -d cd pwd", "bash -c 'help -d cd pwd'"),
        ("trap -l | head -n 2", "bash -c 'trap -l' | head -n 2"),
        ("shopt | grep -c .", "bash -c shopt | grep -c ."),
        (
            "compgen -b | sort | head -n 3",
            "bash -c 'compgen -b' | sort | head -n 3",
        ),
        (
            "compgen -A signal | grep -c SIG",
            "bash -c 'compgen -A signal' | grep -c SIG",
        ),
    ] {
        let (planned, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(exit, Exit::Code(0), "{line:?}: {err}");
        let (through_shell, _, _) = outputs(&t, shell, &confirmed()).await;
        assert_eq!(planned, through_shell, "{line:?}");
        assert!(!planned.trim().is_empty(), "{line:?}");
    }
    let (out, _, _) = outputs(&t, "umask", &auto).await;
    assert!(
        out.len() == 5 && out.chars().take(4).all(|c| c.is_digit(8)),
        "{out:?}"
    );
    let (out, _, _) = outputs(&t, "times | wc -l", &auto).await;
    assert_eq!(out, "2\n");
    let root = std::fs::canonicalize(&t.root).expect("canonical");
    let (out, _, _) = outputs(&t, "dirs", &auto).await;
    assert_eq!(out, format!("{}\n", root.display()));
    // A new shell has no history, no traps and nothing hashed, and says so as bash does.
    for (line, want_out, want_err) in [
        ("history", "", ""),
        ("trap - EXIT", "", ""),
        ("fc -l", "", ""),
        ("hash", "hash: hash table empty\n", ""),
    ] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(
            (out.as_str(), err.as_str(), exit),
            (want_out, want_err, Exit::Code(0)),
            "{line:?}"
        );
    }
    // A word that would be shell text stays one argument of the builtin.
    let (out, err, _) = outputs(&t, "ulimit -n; echo ran", &auto).await;
    assert!(out.ends_with("ran\n"), "{out:?} {err:?}");
}

#[tokio::test]
async fn a_perl_filter_runs_without_a_click() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("f.txt"), "a 1\nb 2\nab 3\n").expect("write");
    let auto = Approval::Auto;
    for (line, want) in [
        ("perl -ne 'print if /b/' f.txt", "b 2\nab 3\n"),
        ("perl -lane 'print $F[1]' f.txt", "1\n2\n3\n"),
        ("perl -pe 's/a/A/g' f.txt | head -n 1", "A 1\n"),
        (
            "perl -lne '$s += (split)[1]; END { print $s }' f.txt",
            "6\n",
        ),
    ] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(
            (out.as_str(), exit),
            (want, Exit::Code(0)),
            "{line:?}: {err}"
        );
    }
}

#[tokio::test]
async fn without_a_click_cd_and_input_stay_inside_the_workspace() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.txt"), "top secret").expect("write");
    std::os::unix::fs::symlink(outside.path(), t.root.join("link")).expect("symlink");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), t.root.join("leak"))
        .expect("symlink");
    let auto = Approval::Auto;
    let absolute = format!("cat < {}/secret.txt", outside.path().display());
    for (line, problem) in [
        ("cd .. && ls", "outside the workspace"),
        ("cd link && cat secret.txt", "outside the workspace"),
        ("cat < leak", "outside the workspace"),
        (absolute.as_str(), "outside the workspace"),
    ] {
        let started = Instant::now();
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{line:?} blocked"
        );
        assert_eq!(exit, Exit::Code(1), "{line:?}");
        assert!(err.contains(problem), "{line:?}: {err}");
        assert!(
            !out.contains("top secret") && !out.contains("secret.txt"),
            "{out}"
        );
    }
    // A `cd` out of the workspace that ends a line runs without a click: it is refused,
    // and whether the directory outside exists is not looked up.
    let missing = format!("cd {}/nowhere", outside.path().display());
    let file = format!("cd {}/secret.txt", outside.path().display());
    for line in ["cd ..", "cd link", missing.as_str(), file.as_str()] {
        let (out, err, exit) = outputs(&t, line, &auto).await;
        assert_eq!(exit, Exit::Code(1), "{line:?}");
        assert!(
            err.ends_with(": outside the workspace\n"),
            "{line:?}: {err}"
        );
        assert_eq!(out, "", "{line:?}");
    }
    // A person may take a line out of the workspace (its sandbox still holds there).
    let (out, _, exit) = outputs(&t, "cd .. && pwd", &confirmed()).await;
    assert_eq!(exit, Exit::Code(0));
    let parent = t.root.parent().expect("parent");
    assert_eq!(out, format!("{}\n", parent.display()));
    // A FIFO in the workspace: no line runs without a click, and a confirmed `< fifo` is
    // refused by the runner at once instead of blocking the bot.
    let fifo = std::ffi::CString::new(t.root.join("fifo").to_str().expect("utf-8")).expect("c");
    // SAFETY: a valid NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let refused = t.tool.run("ls", &auto).await.expect_err("refused");
    assert!(
        refused.to_string().contains("holds a FIFO (`fifo`)"),
        "{refused}"
    );
    let started = Instant::now();
    let (_, err, exit) = outputs(&t, "cat < fifo", &confirmed()).await;
    assert!(started.elapsed() < Duration::from_secs(5), "blocked");
    assert_eq!(exit, Exit::Code(1));
    assert!(err.contains("not a regular file"), "{err}");
}

/// What runs is what was judged: given the gate's reading of a line, the tool runs the plan
/// in it, not a fresh reading of the text; a reading of another line is not used.
#[tokio::test]
async fn the_plan_the_gate_read_is_the_plan_that_runs() {
    use riskgate::core::tools::{AssessContext, Reading, RiskAssessor};
    use riskgate::tools::command::{LinePlan, plan_line};

    let t = tool();
    // The output's stdout section (the text starts with the line as given).
    let stdout = |output: ToolOutput| {
        let text = output.text;
        let (_, rest) = text.split_once("stdout:\n").expect("a stdout section");
        rest.lines().next().unwrap_or_default().to_owned()
    };
    let read = |line: &str| {
        let (assessment, reading) = t
            .tool
            .assess_reading(&arguments(line), &AssessContext::default());
        assert!(
            matches!(assessment, riskgate::core::risk::Assessment::Safe(_)),
            "{line}: {assessment:?}"
        );
        reading.expect("the command tool leaves its reading")
    };

    let judged = read("echo judged");
    let ran = t
        .tool
        .execute_read(&arguments("echo judged"), &Approval::Auto, Some(&judged))
        .await
        .expect("runs");
    assert_eq!(stdout(ran), "judged");

    // A line of substitutions, and a loop, run from the gate's reading.
    for (line, printed) in [
        ("echo $(echo sub)stituted", "substituted"),
        ("for w in looped; do echo $w; done", "looped"),
    ] {
        let judged = read(line);
        let ran = t
            .tool
            .execute_read(&arguments(line), &Approval::Auto, Some(&judged))
            .await
            .expect("runs");
        assert_eq!(stdout(ran), printed, "{line}");
    }

    // A reading whose plan differs from a fresh reading of its line: its plan runs.
    let carried = Reading::new(LinePlan {
        line: "echo typed".to_owned(),
        plan: plan_line("echo carried"),
        lists_processes: None,
        substituting: None,
    });
    let ran = t
        .tool
        .execute_read(&arguments("echo typed"), &Approval::Auto, Some(&carried))
        .await
        .expect("runs");
    assert_eq!(stdout(ran), "carried");

    // The reading of another line is not this line's: the line is read again.
    let ran = t
        .tool
        .execute_read(&arguments("echo own"), &Approval::Auto, Some(&judged))
        .await
        .expect("runs");
    assert_eq!(stdout(ran), "own");
}

/// The refusal a line run without a click meets, as the sandbox's error.
async fn refusal(t: &TestTool, line: &str) -> riskgate::tools::command::sandbox::SandboxError {
    match t.tool.run(line, &Approval::Auto).await {
        Err(CommandError::Run(RunError::Sandbox(error))) => error,
        Err(other) => panic!("{line:?} failed otherwise: {other}"),
        Ok(outcome) => panic!(
            "{line:?} ran: {}",
            String::from_utf8_lossy(&outcome.stdout.bytes)
        ),
    }
}

/// Once the workspace is watched (after the first line without a click), what appears in
/// it later stops the next such line exactly as the walk before every line stopped it: a
/// hard link to a file outside, a FIFO, a link in a new directory, one in a directory moved
/// in, one a confirmed line made. The outside file's content reaches no output (a confirmed
/// line shows it is there to be read); removing each lets lines run again; and lines walk
/// nothing.
#[tokio::test]
async fn what_appears_in_a_watched_workspace_stops_the_next_line_without_a_click() {
    use riskgate::tools::command::sandbox::{SandboxError, kernel_support};
    use riskgate::tools::command::watch::WatchState;
    if !kernel_support().is_ready() {
        eprintln!("skipped: the kernel cannot build the sandbox, so no line runs without a click");
        return;
    }
    const SECRET: &str = "outside-secret-6b1d";
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("notes.txt"), "workspace notes\n").expect("write");
    let outside = tempfile::tempdir().expect("tempdir");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, format!("{SECRET}\n")).expect("write");
    let auto = Approval::Auto;
    assert_eq!(t.tool.workspace_watch(), WatchState::NotStarted);
    let (out, _) = t.stdout_and_exit("cat notes.txt", &auto).await;
    assert_eq!(out, "workspace notes\n");
    assert!(
        matches!(
            t.tool.workspace_watch(),
            WatchState::Watching { walks: 1, .. }
        ),
        "{:?}",
        t.tool.workspace_watch()
    );
    let no_secret = |error: &SandboxError| {
        assert!(!error.to_string().contains(SECRET), "{error}");
    };

    // A hard link to a file outside: the link leads to the secret, and no auto line runs.
    std::fs::hard_link(&secret, t.root.join("linked.txt")).expect("ln");
    let (out, _) = t.stdout_and_exit("cat linked.txt", &confirmed()).await;
    assert_eq!(out, format!("{SECRET}\n"), "the link leads outside");
    for line in [
        "cat linked.txt",
        "cat notes.txt",
        "grep -r outside-secret .",
    ] {
        let error = refusal(&t, line).await;
        no_secret(&error);
        assert!(
            matches!(&error, SandboxError::HardLink { path, links: 2 } if path == "linked.txt"),
            "{line}: {error:?}"
        );
        assert!(error.to_string().contains("hard links"), "{error}");
    }
    std::fs::remove_file(t.root.join("linked.txt")).expect("rm");
    let (out, _) = t.stdout_and_exit("cat notes.txt", &auto).await;
    assert_eq!(out, "workspace notes\n");

    // A FIFO.
    let fifo = std::ffi::CString::new(t.root.join("pipe").to_str().expect("utf-8")).expect("c");
    // SAFETY: a valid NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let error = refusal(&t, "ls").await;
    assert!(
        matches!(&error, SandboxError::SpecialFile { path, kind: "FIFO" } if path == "pipe"),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("holds a FIFO (`pipe`)"),
        "{error}"
    );
    std::fs::remove_file(t.root.join("pipe")).expect("rm");
    let (out, _) = t.stdout_and_exit("ls", &auto).await;
    assert_eq!(out, "notes.txt\n");

    // A link in a directory made after the walk.
    std::fs::create_dir_all(t.root.join("new/deeper")).expect("mkdir");
    std::fs::hard_link(&secret, t.root.join("new/deeper/l.txt")).expect("ln");
    let error = refusal(&t, "cat new/deeper/l.txt").await;
    no_secret(&error);
    assert!(
        matches!(&error, SandboxError::HardLink { path, .. } if path == "new/deeper/l.txt"),
        "{error:?}"
    );
    std::fs::remove_file(t.root.join("new/deeper/l.txt")).expect("rm");
    let (out, _) = t.stdout_and_exit("ls new", &auto).await;
    assert_eq!(out, "deeper\n");

    // A link in a directory built outside and moved in.
    std::fs::create_dir_all(outside.path().join("incoming/sub")).expect("mkdir");
    std::fs::hard_link(&secret, outside.path().join("incoming/sub/l.txt")).expect("ln");
    std::fs::rename(outside.path().join("incoming"), t.root.join("incoming")).expect("mv");
    let error = refusal(&t, "cat incoming/sub/l.txt").await;
    no_secret(&error);
    assert!(
        matches!(&error, SandboxError::HardLink { path, .. } if path == "incoming/sub/l.txt"),
        "{error:?}"
    );
    std::fs::remove_file(t.root.join("incoming/sub/l.txt")).expect("rm");
    let (out, _) = t.stdout_and_exit("ls incoming/sub", &auto).await;
    assert_eq!(out, "");

    // A link a confirmed line made in the workspace: both names are here, so the file
    // leads nowhere else (cargo links its outputs so, Mercurial its journal).
    t.confirmed("ln notes.txt again.txt").await;
    let (out, _) = t.stdout_and_exit("cat again.txt", &auto).await;
    assert_eq!(out, "workspace notes\n");
    // A third name outside, where no event reaches the watch: the names recorded in the
    // workspace no longer account for every link.
    let third = outside.path().join("third.txt");
    std::fs::hard_link(t.root.join("notes.txt"), &third).expect("ln");
    let error = refusal(&t, "cat notes.txt").await;
    assert!(
        matches!(&error, SandboxError::HardLink { path, links: 3 } if path == "again.txt"),
        "{error:?}"
    );
    std::fs::remove_file(&third).expect("rm");
    let (out, _) = t.stdout_and_exit("cat notes.txt", &auto).await;
    assert_eq!(out, "workspace notes\n");
    t.confirmed("rm again.txt").await;
    let (out, _) = t.stdout_and_exit("cat notes.txt", &auto).await;
    assert_eq!(out, "workspace notes\n");

    // Lines walk nothing (each new link above meant one walk, for its other names).
    let walks = || match t.tool.workspace_watch() {
        WatchState::Watching { walks, .. } => walks,
        other => panic!("{other:?}"),
    };
    let before = walks();
    for _ in 0..3 {
        t.stdout_and_exit("cat notes.txt", &auto).await;
    }
    assert_eq!(walks(), before);
}

/// Whether `program` is on this machine's PATH.
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The facts a line without a click is let through to read answer as they do outside the
/// walls: the CPUs (`/sys/devices/system/cpu`), the interfaces, addresses and sockets the
/// kernel lists over routing and socket-diagnostics netlink, the manual. What those
/// sockets could change is refused by the kernel, and no other socket opens.
#[tokio::test]
async fn machine_facts_answer_inside_the_walls_and_change_nothing() {
    use riskgate::tools::command::sandbox::kernel_support;
    if !kernel_support().is_ready() {
        eprintln!("skipped: the kernel cannot build the sandbox, so no line runs without a click");
        return;
    }
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let auto = Approval::Auto;
    let cpus = std::thread::available_parallelism().expect("cpus").get();
    let (out, err, exit) = outputs(&t, "nproc --all", &auto).await;
    assert_eq!((out, exit), (format!("{cpus}\n"), Exit::Code(0)), "{err}");
    // A file system asked about by its mount point or a top directory.
    let (out, err, exit) = outputs(&t, "df -P / /tmp", &auto).await;
    assert_eq!(exit, Exit::Code(0), "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
    if installed("lscpu") {
        let (out, err, exit) = outputs(&t, "lscpu", &auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(
            out.lines()
                .any(|l| l.starts_with("CPU(s):") && l.trim_end().ends_with(&format!(" {cpus}"))),
            "{out}"
        );
    }
    let python = installed("python3");
    if python {
        // Netlink of another family (the kernel's device events), and any other socket,
        // stay refused.
        for line in [
            "python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 15)'",
            "python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)'",
            "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'",
            "python3 -c 'import socket; socket.socket(socket.AF_UNIX)'",
        ] {
            let (_, err, exit) = outputs(&t, line, &auto).await;
            assert_ne!(exit, Exit::Code(0), "{line}");
            assert!(err.contains("PermissionError"), "{line}: {err}");
        }
        let (out, err, _) = outputs(
            &t,
            "python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); print(\"route\")'",
            &auto,
        )
        .await;
        assert_eq!(out, "route\n", "{err}");
    }
    if installed("ip") {
        let (out, err, exit) = outputs(&t, "ip -o link show lo", &auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(out.starts_with("1: lo:"), "{out}");
        // A change asked over the same socket is refused: setting the loopback's MTU to
        // the value it has (so that nothing would change even if the walls failed).
        let mtu = std::fs::read_to_string("/sys/class/net/lo/mtu").expect("lo mtu");
        let line = format!("ip link set lo mtu {}", mtu.trim());
        let (_, err, exit) = outputs(&t, &line, &auto).await;
        assert_ne!(exit, Exit::Code(0), "{line}");
        assert!(err.contains("Operation not permitted"), "{err}");
    }
    if installed("ss") {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (out, err, exit) = outputs(&t, "ss -tln", &auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(out.contains(&format!("127.0.0.1:{port}")), "{out}");
        assert!(!err.contains("netlink"), "{err}");
    }
    // The installed packages' database is read; apt's credentials are not.
    if installed("dpkg-query") && std::path::Path::new("/var/lib/dpkg/status").is_file() {
        let (out, err, exit) = outputs(&t, "dpkg-query -W dpkg", &auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(out.starts_with("dpkg\t"), "{out}");
        let (out, err, exit) = outputs(&t, "dpkg -S /usr/bin/dpkg", &auto).await;
        assert_eq!(
            (out.as_str(), exit),
            ("dpkg: /usr/bin/dpkg\n", Exit::Code(0)),
            "{err}"
        );
    }
    if std::path::Path::new("/etc/apt/auth.conf.d").is_dir() {
        let (_, err, exit) = outputs(&t, "ls /etc/apt/auth.conf.d", &auto).await;
        assert_ne!(exit, Exit::Code(0));
        assert!(err.contains("Permission denied"), "{err}");
    }
    if installed("man") && std::path::Path::new("/usr/share/man/man1").is_dir() {
        let (out, err, _) = outputs(&t, "man man | head -n 3", &auto).await;
        assert!(out.contains("NAME") || out.contains("MAN("), "{out} {err}");
        assert!(!err.contains("manpath.config"), "{err}");
    }
}

/// A disk image's facts are read inside the walls, and a repair asked there changes
/// nothing: the walls hold the image read-only whatever the gate said.
#[tokio::test]
async fn qemu_img_reads_an_image_inside_the_walls_and_changes_nothing() {
    use riskgate::tools::command::sandbox::kernel_support;
    if !kernel_support().is_ready() || !installed("qemu-img") {
        eprintln!("skipped: no sandbox here, or no qemu-img on PATH");
        return;
    }
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let image = t.root.join("disk.qcow2");
    let status = std::process::Command::new("qemu-img")
        .args(["create", "-q", "-f", "qcow2"])
        .arg(&image)
        .arg("1M")
        .status()
        .expect("qemu-img create");
    assert!(status.success());
    let before = std::fs::read(&image).expect("read image");
    let (out, err, exit) = outputs(
        &t,
        "qemu-img info --output=json disk.qcow2",
        &Approval::Auto,
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{err}");
    assert!(out.contains("\"virtual-size\": 1048576"), "{out}");
    let (out, err, exit) = outputs(&t, "qemu-img check disk.qcow2", &Approval::Auto).await;
    assert_eq!(exit, Exit::Code(0), "{out} {err}");
    let (_, _, exit) = outputs(&t, "qemu-img resize disk.qcow2 2M", &Approval::Auto).await;
    assert_ne!(exit, Exit::Code(0));
    assert_eq!(std::fs::read(&image).expect("read image"), before);
}

/// `time` writes how long the pipeline took and the CPU time its processes used, to the
/// line's stderr and in bash's words, whatever the command's own redirections.
#[tokio::test]
async fn time_reports_as_bash_does() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let auto = Approval::Auto;
    let seconds = |text: &str| -> f64 {
        let (minutes, rest) = text
            .trim_end_matches('s')
            .split_once('m')
            .expect("XmY.YYYs");
        minutes.parse::<f64>().expect("minutes") * 60.0 + rest.parse::<f64>().expect("seconds")
    };
    let (out, err, exit) = outputs(&t, "time sleep 0.3 2>/dev/null", &auto).await;
    assert_eq!((out.as_str(), exit), ("", Exit::Code(0)));
    let lines: Vec<&str> = err.split('\n').collect();
    assert_eq!(lines.len(), 5, "{err:?}");
    assert_eq!(lines[0], "");
    let field = |line: &str, name: &str| -> f64 {
        let (label, value) = line.split_once('\t').expect("tab");
        assert_eq!(label, name, "{err:?}");
        seconds(value)
    };
    let real = field(lines[1], "real");
    assert!((0.3..5.0).contains(&real), "{err:?}");
    assert!(field(lines[2], "user") < 0.2, "{err:?}");
    assert!(field(lines[3], "sys") < 0.2, "{err:?}");
    // CPU time is counted for the processes of the pipeline, and what they waited for.
    let busy = "time -p sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' | cat";
    let (_, err, exit) = outputs(&t, busy, &auto).await;
    assert_eq!(exit, Exit::Code(0), "{err}");
    let posix: Vec<(&str, f64)> = err
        .lines()
        .map(|line| {
            let (name, value) = line.split_once(' ').expect("POSIX format");
            (name, value.parse::<f64>().expect("seconds"))
        })
        .collect();
    assert_eq!(
        posix.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        ["real", "user", "sys"],
        "{err:?}"
    );
    assert!(posix[1].1 + posix[2].1 > 0.05, "{err:?}");
    assert!(posix[0].1 >= posix[1].1 - 0.05, "{err:?}");
}

/// `python3 -m json.tool` without a click runs the standard library's module: a `json`
/// package planted in the workspace (the current directory, first on Python's path
/// otherwise) is not imported.
#[tokio::test]
async fn python_modules_come_from_the_standard_library_not_the_workspace() {
    use riskgate::tools::command::sandbox::kernel_support;
    let safe_path = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)",
        ])
        .status()
        .is_ok_and(|status| status.success());
    if !kernel_support().is_ready() || !safe_path {
        eprintln!("skipped: no sandbox here, or no Python 3.11 or later on PATH");
        return;
    }
    let t = tool();
    std::fs::create_dir_all(t.root.join("json")).expect("mkdir");
    std::fs::write(
        t.root.join("json/__init__.py"),
        "print('planted package ran')\n",
    )
    .expect("write");
    std::fs::write(t.root.join("json/tool.py"), "print('planted tool ran')\n").expect("write");
    std::fs::write(t.root.join("data.json"), "{\"b\": 1, \"a\": [1, 2]}").expect("write");
    let (out, err, exit) = outputs(
        &t,
        "python3 -m json.tool --sort-keys data.json",
        &Approval::Auto,
    )
    .await;
    assert_eq!(exit, Exit::Code(0), "{err}");
    assert!(
        !out.contains("planted") && !err.contains("planted"),
        "{out} {err}"
    );
    assert_eq!(
        out,
        "{\n    \"a\": [\n        1,\n        2\n    ],\n    \"b\": 1\n}\n"
    );
    // Confirmed, the line runs as Python would anywhere: the workspace's package wins.
    let (out, _, _) = outputs(&t, "python3 -m json.tool data.json", &confirmed()).await;
    assert!(out.contains("planted"), "{out}");
}

#[tokio::test]
async fn substitutions_run_first_and_give_what_a_shell_gives() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("a.txt"), "alpha\n").expect("write");
    std::fs::write(t.root.join("b c.txt"), "beta\n").expect("write");
    std::fs::write(t.root.join("list.txt"), "a.txt\n").expect("write");
    // Each line run without a click gives what the shell gives it when confirmed: the
    // output split into words where unquoted (and its globs expanded), kept whole in
    // double quotes, trailing newlines dropped, nothing in it run or expanded again.
    for line in [
        "cat $(cat list.txt)",
        "echo \"files: $(ls *.txt | wc -l)\"",
        "echo $(printf 'x  y\\n\\n') \"$(printf 'x  y\\n\\n')\"",
        "echo $(echo '*.txt')",
        "echo $(echo 'a;b' '$HOME' '~' '{a,b}' 'x=1' '#c' if)",
        "wc -c $(find . -name 'a*' | sort)",
        "echo \"$(cat $(cat list.txt))\" `cat list.txt`",
        "ls $(echo 'b c.txt') 2>/dev/null || echo failed",
        "echo $(ls missing 2>&1 | wc -l) done",
        // Blanks at either end of an output part it from the text beside it.
        "echo a$(printf ' b ')c d$(printf ' ')e f$(printf '\\t')g",
        // Beside forms dash reads otherwise (the line is walked twice).
        "echo $(echo a) $((1+1)) | od -c",
        // Literals in a base: hexadecimal, binary, and `10#` keeping `08` decimal.
        "echo $((16#ff)) $((10#08 + 1)) $((2#1010 << 1)) $((36#Zz)) \"$((1<<10))\"",
    ] {
        let auto = outputs(&t, line, &Approval::Auto).await;
        let shell = outputs(&t, line, &confirmed()).await;
        assert_eq!(auto, shell, "{line}");
    }
    let (out, err, exit) = outputs(&t, "echo $(ls missing) ok", &Approval::Auto).await;
    assert_eq!((out.as_str(), exit), ("ok\n", Exit::Code(0)));
    assert!(
        err.contains("missing"),
        "the substitution's stderr comes first: {err}"
    );
}

#[tokio::test]
async fn a_substitution_that_turns_the_line_is_refused_and_changes_nothing() {
    let t = tool_with(settings(30, 64));
    std::fs::create_dir_all(t.root.join("keep")).expect("mkdir");
    std::fs::write(t.root.join("keep/file.txt"), "kept\n").expect("write");
    // Judged before it runs, each line is safe; with the output in it, it is not, and
    // the refusal shows the line it became.
    for (line, became) in [
        ("cat $(echo /etc/hostname)", "cat /etc/hostname"),
        ("wc -l $(echo ../x)", "wc -l ../x"),
    ] {
        match t.execute(line, &Approval::Auto).await {
            Err(ToolError::Refused(message)) => {
                assert!(message.contains(&format!("`{became}`")), "{message}");
                assert!(message.contains("waits for a person"), "{message}");
            }
            other => panic!("{line:?} should be refused, got {other:?}"),
        }
    }
    // Where a substitution's output becomes a writing or deleting option, the line it
    // makes is refused before it runs.
    for writes in [
        "sort $(echo -o keep/file.txt) keep/file.txt",
        "find keep $(echo -delete)",
        "find $(echo keep -delete)",
        "find `echo keep` -exec rm {} +",
    ] {
        assert!(
            matches!(
                t.execute(writes, &Approval::Auto).await,
                Err(ToolError::Refused(_))
            ),
            "{writes}"
        );
    }
    // Where it is the directory find starts from, the line runs as bash runs it.
    assert_safe_and_runs_as_bash(&t, "find $(pwd)/keep -name '*.txt'").await;
    assert_safe_and_runs_as_bash(&t, "find `pwd` -type f | wc -l").await;
    assert_eq!(
        std::fs::read_to_string(t.root.join("keep/file.txt")).expect("still there"),
        "kept\n"
    );
    match t.execute("echo $(seq 1 100)", &Approval::Auto).await {
        Err(ToolError::Refused(message)) => {
            assert!(message.contains("command.output_limit_bytes"), "{message}");
        }
        other => panic!("a long substitution should be refused, got {other:?}"),
    }
    // A line that changes directory before its substitution is left to a shell.
    match t.execute("cd keep && echo $(pwd)", &Approval::Auto).await {
        Err(ToolError::Refused(message)) => assert!(message.contains("needs a shell"), "{message}"),
        other => panic!("should need a shell, got {other:?}"),
    }
}

/// A tool whose workspace holds a directory and files whose names a shell would split or
/// expand (a blank, `;`, `$`, `*`).
fn tool_with_loop_files() -> TestTool {
    let t = tool();
    std::fs::create_dir_all(t.root.join("sub")).expect("mkdir");
    std::fs::write(t.root.join("a.txt"), "alpha\n").expect("write");
    std::fs::write(t.root.join("b c.txt"), "beta\ngamma\n").expect("write");
    std::fs::write(t.root.join("x;y  $z*.txt"), "delta\n").expect("write");
    t
}

#[tokio::test]
async fn for_loops_run_written_out_and_give_what_a_shell_gives() {
    let t = tool_with_loop_files();
    for line in [
        "for i in 1 2 3; do echo $i; done",
        "for f in *.txt; do wc -l \"$f\"; done",
        "for f in *.txt; do echo $f; done | sort -r",
        "for i in $(seq 1 4); do echo \"line $i\" '$i'; done",
        "for i in `seq 2`; do for j in a b; do echo $i$j; done; done",
        "for i in {1..3} x; do echo ${i}; done && echo after",
        "for f in *.none; do echo \"$f\"; done",
        "for f in *.txt; do echo $(wc -c < \"$f\"); done",
        "for i in 1 2 3; do echo $(($i * 2)); done",
        "for ((i=1; i<=3; i++)); do echo \"Welcome $i times\"; done",
        "for (( n = 10; n > 0; n -= 4 )); do head -c $n a.txt; echo; done | sort",
        "for ((i=0; i<0; i++)); do echo never; done && echo none",
        "for f in *.txt; do echo \"${f%.txt}.md\" ${#f} \"${f^^}\"; done",
        "for f in *.txt; do wc -l \"${f%.txt}.txt\" \"${f/.txt/}\"; done",
        "for f in sub/*; do echo \"${f##*/}\" \"${f:0:3}\"; done",
    ] {
        // A confirmed loop runs written out too, so the shell's own run is the reference.
        assert_safe_and_runs_as_bash(&t, line).await;
    }
}

/// A script given to `sh -c`/`bash -c` runs in the walls as the shell runs it, its
/// parameters put in for the gate: file names with blanks, quotes, `;`, `$` and `*` reach
/// the script as one word each and run nothing of their own.
#[tokio::test]
async fn shell_scripts_given_as_words_run_as_the_shell_runs_them() {
    let t = tool_with_loop_files();
    std::fs::write(t.root.join("q'uote; touch pwned.txt"), "epsilon\n").expect("write");
    for line in [
        "sh -c 'ls | wc -l'",
        "bash -c 'echo \"$0\" $1 ${2}' one two three",
        "sh -c 'wc -l \"$1\"' _ 'b c.txt'",
        "find . -name '*.txt' -exec sh -c 'wc -c \"$1\"' _ {} \\; | sort",
        "find . -name '*.txt' -exec bash -c 'echo \"== $0\"; head -n 1 \"$0\"' {} \\; | sort",
        "timeout 5 sh -ec 'cd sub && ls | wc -l'",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    assert!(
        !t.root.join("pwned.txt").exists(),
        "a file name ran as a command"
    );
}

#[tokio::test]
async fn while_read_loops_run_over_their_input_and_give_what_a_shell_gives() {
    let t = tool_with_loop_files();
    // Blanks at either end, a quote, a glob character, an empty line, and a last line
    // without a newline (which `read` does not return).
    std::fs::write(
        t.root.join("lines"),
        "  two  spaces  \nit's\n*.txt\n\n\tlast\tbut one\nno newline",
    )
    .expect("write");
    std::fs::write(t.root.join("empty"), "").expect("write");
    for line in [
        "cat lines | while read line; do echo \"[$line]\"; done",
        "cat lines | while read -r line; do echo [$line]; done",
        "while IFS= read -r line; do echo \"[$line]\"; done < lines",
        "while read -r l; do printf '%s|' \"$l\"; done < lines; echo",
        "ls | while read -r f; do wc -l \"$f\"; done | sort",
        "find . -name '*.txt' | sort | while read -r f; do echo \"== $f\"; head -n 1 \"$f\"; done",
        "while read -r f; do echo \"$f\"; done < <(ls sub)",
        "while read -r f; do echo \"$f\"; done < empty && echo none",
        "n=1; ls *.txt | while read -r f; do head -n $n \"$f\"; done",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    // `read` without -r would take a backslash apart: refused when the line runs, the
    // person asked.
    std::fs::write(t.root.join("slashes"), "a\\b\n").expect("write");
    let message = refused(&t, "cat slashes | while read l; do echo $l; done").await;
    assert!(message.contains("read -r"), "{message}");
    assert_safe_and_runs_as_bash(&t, "cat slashes | while read -r l; do echo $l; done").await;
    // A line of the input that makes the body read outside the workspace is judged when
    // the line runs: refused, and what is there is not seen.
    let outside = t.root.parent().expect("parent").join("outside.txt");
    std::fs::write(&outside, "not-for-the-chat\n").expect("write");
    std::fs::write(
        t.root.join("names"),
        format!("a.txt\n{}\n", outside.display()),
    )
    .expect("write");
    let message = refused(&t, "cat names | while read -r f; do cat \"$f\"; done").await;
    assert!(message.contains("outside the workspace"), "{message}");
    assert!(!message.contains("not-for-the-chat"), "{message}");
}

#[tokio::test]
async fn a_substitution_assigned_to_a_name_is_one_word_as_in_a_shell() {
    let t = tool_with_loop_files();
    std::fs::write(t.root.join("quote"), "it's \"q\" \\n $HOME\n\n").expect("write");
    for line in [
        "q=$(cat quote); echo \"[$q]\" $q",
        "n=$(wc -l < a.txt); echo \"lines: $n\"",
        "x=`ls`; echo $x",
        "files=$(ls *.txt); echo \"$files\"",
        "f=$(ls *.txt | head -n 1) && wc -l \"$f\"",
        "count=$(grep -c a *.txt); echo found $count",
        "FILES=$(ls *.txt); echo $FILES; echo \"$FILES\"",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
}

#[tokio::test]
async fn conditional_expressions_run_as_test_commands_and_give_what_a_shell_gives() {
    let t = tool_with_loop_files();
    std::fs::write(t.root.join("empty"), "").expect("write");
    for line in [
        "[[ -f a.txt ]] && echo file",
        "[[ -d a.txt ]] || echo not a directory",
        "[[ -s empty ]] || echo empty",
        "[[ -e sub && ( -f 'b c.txt' || ! -d sub ) ]] && echo yes",
        "[[ ! -e missing && abc == \"abc\" && 10 -gt -2 ]] && echo all",
        "[[ x != y ]] && [[ -z \"\" ]] && [[ -n 'a b' ]] && echo strings",
        "if [[ -d sub ]]; then ls sub; else echo none; fi",
        "for f in a*.txt; do [[ -s $f ]] && wc -l \"$f\"; done",
        "n=3; [[ $n -ge 2 ]] && echo big",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    // `[[ ]]` would not split a substitution's output: several words there make a line that
    // is refused when it runs.
    let message = refused(&t, "[[ -f $(echo a.txt sub) ]] && echo y").await;
    assert!(message.contains("a.txt sub"), "{message}");
}

/// Why `line`, run without a click, is refused (the test fails if it runs).
async fn refused(t: &TestTool, line: &str) -> String {
    match t.execute(line, &Approval::Auto).await {
        Err(ToolError::Refused(message)) => message,
        other => panic!("{line} should be refused, got {other:?}"),
    }
}

/// `line` is safe, and run without a click it prints and exits as `bash -c` does in an
/// environment of PATH and LANG alone.
async fn assert_safe_and_runs_as_bash(t: &TestTool, line: &str) {
    let policy = CommandPolicy::new(Workspace::new(&t.root), &[], &[]);
    let assessment = assess_command(line, &policy);
    assert!(
        matches!(assessment, riskgate::core::risk::Assessment::Safe(_)),
        "{line}: {assessment:?}"
    );
    let (out, err, exit) = outputs(t, line, &Approval::Auto).await;
    let bash = std::process::Command::new("bash")
        .args(["-c", line])
        .current_dir(&t.root)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .output()
        .expect("bash runs");
    assert_eq!(out, String::from_utf8_lossy(&bash.stdout), "{line}");
    assert_eq!(err, String::from_utf8_lossy(&bash.stderr), "{line}");
    assert_eq!(
        exit,
        Exit::Code(bash.status.code().expect("exited")),
        "{line}"
    );
}

#[tokio::test]
async fn ansi_c_quoting_gives_what_bash_gives() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("data.tsv"), "b\t2\na\t3\nc\t1\n").expect("write");
    std::fs::write(t.root.join("tab\tname.txt"), "x\n").expect("write");
    for line in [
        "sort -t $'\\t' -k2 data.tsv",
        "cut -d $'\\t' -f1 data.tsv | tr $'\\n' ,",
        "echo $'a\\tb' $'\\x41\\101' $'it\\'s' $'\\\\' x$'\\e'y | od -c",
        "printf '%s\\n' $'*' | wc -c",
        "cat $'tab\\tname.txt'",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
}

#[tokio::test]
async fn brace_groups_give_what_bash_gives() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("src")).expect("mkdir");
    std::fs::write(t.root.join("notes.txt"), "b\na\n").expect("write");
    for line in [
        "{ ls; pwd; } | wc -l",
        "{ cat notes.txt; echo c; } | sort",
        "ls missing 2>/dev/null && { echo found; } || { echo none; ls src; }",
        "{ ls missing; echo after; } 2>/dev/null",
        "{ false; } || echo failed",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    // A `cd` in a group lasts after it, which a plan's subshell would not do: a shell runs
    // that line once confirmed.
    match t.execute("{ cd src; }; pwd", &Approval::Auto).await {
        Err(ToolError::Refused(message)) => assert!(message.contains("needs a shell"), "{message}"),
        other => panic!("a group that changes directory should wait, got {other:?}"),
    }
}

#[tokio::test]
async fn the_machines_programs_and_interrupts_are_read_in_the_walls() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    // The libraries' names (their load addresses move from run to run).
    let names = "ldd /usr/bin/ls | awk '{print $1}'";
    let (out, err, exit) = outputs(&t, names, &Approval::Auto).await;
    let direct = std::process::Command::new("bash")
        .args(["-c", names])
        .output()
        .expect("bash runs");
    assert_eq!(exit, Exit::Code(0), "{err}");
    assert_eq!(out, String::from_utf8_lossy(&direct.stdout));
    assert!(out.contains("libc.so"), "{out}");
    if std::path::Path::new("/usr/bin/lsirq").exists() {
        let (out, err, exit) = outputs(&t, "lsirq -n -o IRQ | wc -l", &Approval::Auto).await;
        assert_eq!(exit, Exit::Code(0), "{err}");
        assert!(out.trim().parse::<u32>().is_ok_and(|n| n > 0), "{out}");
    }
}

#[tokio::test]
async fn if_statements_give_what_bash_gives() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("src")).expect("mkdir");
    std::fs::write(t.root.join("notes.txt"), "foo\nbar\n").expect("write");
    for line in [
        "if [ -f notes.txt ]; then echo yes; else echo no; fi",
        "if [ -f missing ]; then echo yes; else echo no; fi",
        "if grep -q baz notes.txt; then echo found; fi; echo after",
        "if false; then echo a; elif grep -c foo notes.txt; then echo b; else echo c; fi | sort",
        "if false; then echo a; elif false; then echo b; fi && echo none-ran",
        "if true; then false; fi || echo the-body-failed",
        "if ls missing; then echo a; fi 2>/dev/null; echo status-kept",
        "ls src && if [ -d src ]; then ls -d src; fi",
        "if ! grep -q baz notes.txt; then echo missing; fi",
        "! grep -q foo notes.txt || echo present; ! ls missing 2>/dev/null && echo gone",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    match t
        .execute("if true; then cd src; fi; pwd", &Approval::Auto)
        .await
    {
        Err(ToolError::Refused(message)) => assert!(message.contains("needs a shell"), "{message}"),
        other => panic!("an `if` that changes directory should wait, got {other:?}"),
    }
}

/// A value only known when the line runs that an operation is not done on (`${f%.txt}` of a
/// name outside ASCII) stops the line before anything of it runs, and says why.
#[tokio::test]
async fn an_operation_on_a_value_it_cannot_follow_stops_the_line() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("caf\u{e9}.txt"), "x\n").expect("write");
    let message = refused(&t, "for f in $(ls); do echo ${f%.txt}; done").await;
    assert!(message.contains("waits for a person"), "{message}");
    assert_safe_and_runs_as_bash(&t, "for f in $(ls); do echo \"$f\"; done").await;
}

#[tokio::test]
async fn the_lines_own_variables_give_what_a_shell_gives() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("my docs")).expect("mkdir");
    std::fs::write(t.root.join("my docs/a.txt"), "alpha\nbeta\ngamma\n").expect("write");
    std::fs::write(t.root.join("b c.txt"), "delta\n").expect("write");
    for line in [
        "name=world; echo \"hello $name\" '$name'",
        "dir='my docs' && ls \"$dir\" && wc -l \"${dir}/a.txt\"",
        "n=2; head -n $n \"my docs/a.txt\"",
        "pat=*.txt; ls $pat",
        "a=1\nb=\"two words\"\necho $a-$b [$b]",
        "echo \"[$unset]\" [$unset] a${unset}b",
        "ls $nowhere",
        "sep=,; echo \"$PWD\" | tr / \"$sep\" | wc -c",
        "f=a.tar.gz; echo ${f%.*} ${f%%.*} ${f#*.} ${f##*.} ${#f} ${f:2:3} ${f//a/A}",
        "d='my docs'; echo \"${d^^}\" ${d%docs} [${unset:-dflt}] [${d:+set}]",
        "p=\"my docs/a.txt\"; wc -l \"${p%/*}/${p##*/}\"",
        "f=x-y; echo ${f#x} ${f/-/_}",
        "find ${1:-.} -name '*.txt' | sort; echo \"[$1]\" ${#2}",
        // Lines that only set their own variables, or export one, leave nothing behind.
        "x=5",
        "n=$(wc -l < \"my docs/a.txt\"); m=2",
        "export LISTING=$(ls | sort)",
        ": these words do nothing && echo done",
    ] {
        assert_safe_and_runs_as_bash(&t, line).await;
    }
    // What the values make is judged: a path outside, a deletion, a name set twice or
    // set after its use, and a name the shell or the environment holds, all wait.
    for line in [
        "dir=/etc; ls $dir",
        "f=\"b c.txt\"; rm \"$f\"",
        "x=a; x=b; echo $x",
        "echo $x; x=1",
        "PATH=/tmp; ls",
        "echo $HOME",
        "f=\"b c.txt\"; rm \"${f%.txt}.txt\"",
        "f=x/etc; ls ${f#x}",
        "f=a; echo ${f@Q}",
        "x=$(rm \"b c.txt\")",
        "export X=$(rm \"b c.txt\")",
        "x=5; export x; ls",
    ] {
        match t.execute(line, &Approval::Auto).await {
            Err(ToolError::Refused(_)) => {}
            other => panic!("{line:?} should wait, got {other:?}"),
        }
    }
    assert!(t.root.join("b c.txt").exists());
    // `$USER` and `$LOGNAME` are the account the line runs as, what `whoami` says.
    let (user, exit) = t
        .stdout_and_exit("echo \"$USER:$LOGNAME\"", &Approval::Auto)
        .await;
    assert_eq!(exit, Exit::Code(0));
    let (whoami, _) = t.stdout_and_exit("whoami", &Approval::Auto).await;
    let name = whoami.trim();
    assert!(!name.is_empty());
    assert_eq!(user, format!("{name}:{name}\n"));
}

#[tokio::test]
async fn a_line_of_substitutions_gets_one_lines_time_in_all() {
    let t = tool_with(settings(2, 1024 * 1024));
    std::fs::create_dir_all(&t.root).expect("mkdir");
    let started = Instant::now();
    match t
        .execute("echo $(sleep 1.2) $(sleep 7.77)", &Approval::Auto)
        .await
    {
        Err(ToolError::Refused(message)) => {
            assert!(message.contains("command.timeout_secs (2 s)"), "{message}");
        }
        other => panic!("the line should be stopped, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_all_gone("sleep 7.77").await;
}

#[tokio::test]
async fn the_machines_variables_are_the_lines_own_values() {
    let t = tool();
    std::fs::create_dir_all(t.root.join("sub")).expect("mkdir");
    let auto = Approval::Auto;
    let (path, _, _) = outputs(&t, "printenv PATH", &auto).await;
    let (pwd, _, _) = outputs(&t, "pwd", &auto).await;
    let (lang, _, _) = outputs(&t, "printenv LANG", &auto).await;
    let (out, _, _) = outputs(&t, "echo \"$PATH\" ${LANG} '$PWD' $PWD", &auto).await;
    assert_eq!(
        out,
        format!(
            "{} {} $PWD {}\n",
            path.trim_end(),
            lang.trim_end(),
            pwd.trim_end()
        )
    );
    let (out, _, _) = outputs(&t, "echo $PATH | tr : '\\n' | head -n 1", &auto).await;
    assert_eq!(
        out.trim_end(),
        path.trim_end().split(':').next().expect("an entry")
    );
    let (out, _, _) = outputs(&t, "ls $PWD", &auto).await;
    assert_eq!(out, "sub\n");
    // A secret's name, the line's own directories and a directory changed first wait.
    for line in ["echo $MY_SECRET_TOKEN", "echo $HOME", "cd sub && echo $PWD"] {
        match t.execute(line, &auto).await {
            Err(ToolError::Refused(message)) => {
                assert!(message.contains("needs a shell"), "{message}")
            }
            other => panic!("{line:?} should wait, got {other:?}"),
        }
    }
}

/// The hardware listers run without a click in the walls, where no device node is shown,
/// and change nothing: the workspace holds what it held, and each ends on its own (an
/// error of not finding the device is an answer too). Programs not installed are skipped.
#[tokio::test]
async fn hardware_listers_run_in_the_walls_and_change_nothing() {
    let t = tool();
    std::fs::create_dir_all(&t.root).expect("mkdir");
    std::fs::write(t.root.join("keep.txt"), "kept\n").expect("write");
    let before = std::fs::read_dir(&t.root).expect("list").count();
    let mut ran = 0;
    for line in [
        "blkid",
        "hwclock --show",
        "partx --show /dev/riskgate-none",
        "e2freefrag /dev/riskgate-none",
        "bridge link",
        "lspci -nn",
        "lsusb",
        "udevadm info /dev/riskgate-none",
    ] {
        let program = line.split(' ').next().unwrap_or_default();
        let installed = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !installed {
            eprintln!("skipped {program}: not installed");
            continue;
        }
        let policy = CommandPolicy::new(Workspace::new(&t.root), &[], &[]);
        assert!(
            matches!(
                assess_command(line, &policy),
                riskgate::core::risk::Assessment::Safe(_)
            ),
            "{line}"
        );
        t.tool
            .run(line, &Approval::Auto)
            .await
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        ran += 1;
    }
    assert!(ran > 0, "none of the listers is installed");
    assert_eq!(std::fs::read_dir(&t.root).expect("list").count(), before);
    assert_eq!(
        std::fs::read_to_string(t.root.join("keep.txt")).expect("read"),
        "kept\n"
    );
}
