//! `riskgate assess` and `riskgate check-config` as a user runs them: the real binary, stdin
//! in, stdout and the exit code out.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const CORPUS: &str = include_str!("data/risk_cases.jsonl");

/// Runs the binary in an empty directory with a fresh workspace and no inherited riskgate
/// settings.
fn riskgate(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path().join("workspace");
    let mut command = Command::new(env!("CARGO_BIN_EXE_riskgate"));
    command
        .args(args)
        .current_dir(dir.path())
        .env_remove("RISKGATE_CONFIG")
        .env_remove("DISCORD_TOKEN")
        .env_remove("OPENAI_API_KEY")
        .env_remove("DISCORD_TOKEN_FILE")
        .env_remove("OPENAI_API_KEY_FILE")
        .env("RISKGATE__TOOLS__WORKSPACE", &workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, _) in std::env::vars() {
        if key.starts_with("RISKGATE__") && key != "RISKGATE__TOOLS__WORKSPACE" {
            command.env_remove(key);
        }
    }
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("spawn riskgate");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("riskgate output")
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .expect("utf-8 output")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}

#[test]
fn assess_decides_the_whole_corpus_in_one_run() {
    let output = riskgate(&["assess"], CORPUS, &[]);
    assert!(output.status.success(), "{output:?}");
    let inputs: Vec<Value> = CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("corpus JSON"))
        .collect();
    let outputs = lines(&output);
    assert_eq!(
        outputs.len(),
        inputs.len(),
        "one output line per input line"
    );
    let raw = String::from_utf8(output.stdout.clone()).expect("utf-8");
    for line in raw.lines() {
        // The format is fixed: these three keys first, in this order.
        let d = line.find("\"decision\":").expect("decision");
        let s = line.find(",\"source\":").expect("source");
        let r = line.find(",\"reason\":").expect("reason");
        assert!(d == 1 && d < s && s < r, "{line}");
    }
    let mut mismatches = Vec::new();
    for (input, output) in inputs.iter().zip(&outputs) {
        // `execute_command` lines that may run also say how: their sandbox.
        let runs = output["decision"] != "deny";
        let contained = riskgate::tools::command::sandbox::kernel_support().is_ready();
        let keys = if input["tool"] == "execute_command" && runs {
            let expected = match (output["decision"].as_str(), contained) {
                (Some("auto"), _) => "read-only",
                (_, true) => "workspace-write+network",
                (_, false) => "off",
            };
            assert_eq!(output["sandbox"], expected, "{output}");
            4
        } else {
            3
        };
        assert_eq!(output.as_object().map(|o| o.len()), Some(keys), "{output}");
        let mut expect = input["expect"].clone();
        if input["tool"] == "execute_command" && expect == "auto" && !contained {
            // Where the kernel cannot build the sandbox, no line runs without a click.
            expect = "confirm".into();
        }
        if output["decision"] != expect {
            mismatches.push(format!("{input} -> {output}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn bad_lines_get_an_error_line_and_the_run_goes_on() {
    let input = [
        r#"{"tool": "execute_command", "arguments": {"command": "ls"}}"#,
        "not json at all",
        r#"["a", "list"]"#,
        r#"{"arguments": {"command": "ls"}}"#,
        r#"{"tool": "execute_command"}"#,
        r#"{"tool": "execute_command", "arguments": "ls"}"#,
        r#"{"tool": "execute_command", "arguments": {"command": "ls"}, "mode": "paranoid"}"#,
        r#"{"tool": "execute_sql", "arguments": {"sql": "SELECT 1"}, "dialect": "oracle"}"#,
        "",
        r#"{"tool": "execute_command", "arguments": {"command": "ls"}, "mode": "strict", "extra": 1}"#,
    ]
    .join("\n");
    let output = riskgate(&["assess"], &input, &[]);
    assert!(output.status.success(), "{output:?}");
    let out = lines(&output);
    assert_eq!(out.len(), 9, "the blank line is skipped: {out:?}");
    assert_eq!(out[0]["decision"], "auto");
    for (i, expected) in [
        (1, "not valid JSON"),
        (2, "JSON object"),
        (3, "no `tool`"),
        (4, "no `arguments`"),
        (5, "`arguments` must be a JSON object"),
        (6, "unknown mode"),
        (7, "unknown SQL dialect"),
    ] {
        let error = out[i]["error"]
            .as_str()
            .unwrap_or_else(|| panic!("line {i}: {}", out[i]));
        assert!(error.contains(expected), "line {i}: {error}");
    }
    assert_eq!(out[8]["decision"], "confirm");
    assert_eq!(out[8]["source"], "strict_mode");
}

#[test]
fn invalid_utf8_gets_an_error_line() {
    let mut input = b"\xff\xfe\n".to_vec();
    input.extend_from_slice(br#"{"tool": "execute_command", "arguments": {"command": "pwd"}}"#);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_riskgate"))
        .arg("assess")
        .current_dir(dir.path())
        .env("RISKGATE__TOOLS__WORKSPACE", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("write");
    let output = child.wait_with_output().expect("output");
    let out = lines(&output);
    assert_eq!(out.len(), 2);
    assert!(
        out[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("UTF-8"))
    );
    assert_eq!(out[1]["decision"], "auto");
}

#[test]
fn the_mode_flag_applies_unless_a_line_names_its_own() {
    let input = [
        r#"{"tool": "execute_command", "arguments": {"command": "ls"}}"#,
        r#"{"tool": "execute_command", "arguments": {"command": "ls"}, "mode": "smart"}"#,
    ]
    .join("\n");
    let out = lines(&riskgate(&["assess", "--mode", "strict"], &input, &[]));
    assert_eq!(out[0]["decision"], "confirm");
    assert_eq!(out[0]["source"], "strict_mode");
    assert_eq!(out[1]["decision"], "auto");
    let bad = riskgate(&["assess", "--mode", "lenient"], "", &[]);
    assert!(!bad.status.success());
}

#[test]
fn unknown_and_disabled_tools_are_denied() {
    let input = [
        r#"{"tool": "launch_missiles", "arguments": {}}"#,
        r#"{"tool": "http_request", "arguments": {"method": "GET", "url": "https://example.com/"}}"#,
    ]
    .join("\n");
    let out = lines(&riskgate(
        &["assess"],
        &input,
        &[("RISKGATE__TOOLS__HTTP_REQUEST__ENABLED", "false")],
    ));
    assert_eq!(out[0]["decision"], "deny");
    assert_eq!(out[0]["source"], "policy");
    assert!(
        out[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("launch_missiles"))
    );
    assert_eq!(out[1]["decision"], "deny");
    assert!(
        out[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("disabled"))
    );
}

#[test]
fn the_configured_database_dialect_is_used_unless_a_line_overrides_it() {
    // Backtick identifiers are MySQL's; PostgreSQL cannot parse them.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(
        &config,
        "[[sql.databases]]\nname = \"shop\"\nurl = \"mysql://app:secret@127.0.0.1/shop\"\n",
    )
    .expect("write config");
    let input = [
        r#"{"tool": "execute_sql", "arguments": {"sql": "SELECT `id` FROM `orders`"}}"#,
        r#"{"tool": "execute_sql", "arguments": {"sql": "SELECT `id` FROM `orders`"}, "dialect": "postgres"}"#,
        r#"{"tool": "execute_sql", "arguments": {"sql": "SELECT 1", "database": "nope"}}"#,
    ]
    .join("\n");
    let out = lines(&riskgate(
        &["assess", "--config", config.to_str().expect("utf-8")],
        &input,
        &[],
    ));
    assert_eq!(out[0]["decision"], "auto", "{}", out[0]);
    assert_eq!(out[1]["decision"], "confirm", "{}", out[1]);
    assert_eq!(out[2]["decision"], "deny", "{}", out[2]);
}

#[test]
fn a_name_denied_to_execute_sql_is_denied_to_a_database_client_on_the_line_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(&config, "[tools.execute_sql]\ndeny = [\"secrets\"]\n").expect("write config");
    let input = [
        r#"{"tool": "execute_sql", "arguments": {"sql": "SELECT * FROM secrets"}}"#,
        r#"{"tool": "execute_command", "arguments": {"command": "psql -c 'SELECT * FROM secrets'"}}"#,
        r#"{"tool": "execute_command", "arguments": {"command": "psql -c 'SELECT * FROM users'"}}"#,
    ]
    .join("\n");
    let out = lines(&riskgate(
        &["assess", "--config", config.to_str().expect("utf-8")],
        &input,
        &[],
    ));
    assert_eq!(out[0]["decision"], "deny", "{}", out[0]);
    assert_eq!(out[1]["decision"], "deny", "{}", out[1]);
    assert_eq!(out[1]["source"], "policy", "{}", out[1]);
    assert_eq!(out[2]["decision"], "confirm", "{}", out[2]);
}

#[test]
fn check_config_prints_settings_with_secrets_redacted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(
        &config,
        "[llm]\napi_key = \"sk-file-secret\"\n\n[[sql.databases]]\nname = \"prod\"\nurl = \"postgres://app:pg-secret@db.internal/prod\"\n",
    )
    .expect("write config");
    let output = riskgate(
        &["--config", config.to_str().expect("utf-8"), "check-config"],
        "",
        &[
            ("DISCORD_TOKEN", "discord-secret-token"),
            ("RISKGATE__AGENT__MAX_ITERATIONS", "7"),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    for secret in ["sk-file-secret", "pg-secret", "discord-secret-token"] {
        assert!(!stdout.contains(secret), "{secret} leaked:\n{stdout}");
        assert!(!String::from_utf8_lossy(&output.stderr).contains(secret));
    }
    assert!(stdout.contains("<redacted>"), "{stdout}");
    assert!(
        stdout.contains("max_iterations = 7"),
        "env overrides the file:\n{stdout}"
    );
    assert!(stdout.contains("db.internal"), "{stdout}");
    let parsed: toml::Value = toml::from_str(&stdout).expect("check-config prints TOML");
    assert_eq!(parsed["risk"]["default_mode"].as_str(), Some("smart"));
}

#[test]
fn check_config_takes_lists_databases_and_secret_files_from_the_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let token = dir.path().join("discord_token");
    std::fs::write(&token, "discord-file-secret\n").expect("write");
    let url = dir.path().join("db_url");
    std::fs::write(&url, "postgres://app:pg-file-secret@127.0.0.1:1/prod\n").expect("write");
    let output = riskgate(
        &["check-config"],
        "",
        &[
            ("DISCORD_TOKEN_FILE", token.to_str().expect("utf-8")),
            ("RISKGATE__DISCORD__CHANNELS", "234567890123456789"),
            ("RISKGATE__DISCORD__APPROVER_ROLES", "1,2"),
            ("RISKGATE__SQL__DATABASES__0__NAME", "prod"),
            (
                "RISKGATE__SQL__DATABASES__0__URL_FILE",
                url.to_str().expect("utf-8"),
            ),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    for secret in ["discord-file-secret", "pg-file-secret"] {
        assert!(!stdout.contains(secret), "{secret} leaked:\n{stdout}");
        assert!(!stderr.contains(secret), "{secret} leaked:\n{stderr}");
    }
    let parsed: toml::Value = toml::from_str(&stdout).expect("check-config prints TOML");
    assert_eq!(parsed["discord"]["token"].as_str(), Some("<redacted>"));
    assert_eq!(
        parsed["discord"]["channels"].as_array().map(|a| a
            .iter()
            .filter_map(toml::Value::as_integer)
            .collect::<Vec<_>>()),
        Some(vec![234_567_890_123_456_789])
    );
    assert_eq!(
        parsed["discord"]["approver_roles"].as_array().map(Vec::len),
        Some(2)
    );
    let db = &parsed["sql"]["databases"][0];
    assert_eq!(db["name"].as_str(), Some("prod"));
    assert_eq!(
        db["url"].as_str(),
        Some("postgres://app:redacted@127.0.0.1:1/prod")
    );

    let missing = dir.path().join("missing_token");
    let output = riskgate(
        &["check-config"],
        "",
        &[("DISCORD_TOKEN_FILE", missing.to_str().expect("utf-8"))],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("DISCORD_TOKEN_FILE") && stderr.contains(missing.to_str().expect("utf-8")),
        "{stderr}"
    );
}

#[test]
fn check_config_names_the_bad_key_and_value() {
    for (env, key, value) in [
        (
            ("RISKGATE__RISK__DEFAULT_MODE", "careful"),
            "risk.default_mode",
            "careful",
        ),
        (
            ("RISKGATE__LLM__BASE_URL", "not a url"),
            "llm.base_url",
            "not a url",
        ),
        (
            ("RISKGATE__AGENT__MAX_ITERATIONS", "-4"),
            "agent.max_iterations",
            "-4",
        ),
        (("RISKGATE__LLM__PROTOCOL", "xml"), "llm.protocol", "xml"),
        (("RISKGATE__STORE__URL", "redis://x"), "store.url", "redis"),
        (
            ("RISKGATE__RISK__DESTRUCTIVE_FLOOR", "maybe"),
            "risk.destructive_floor",
            "maybe",
        ),
    ] {
        let output = riskgate(&["check-config"], "", &[env]);
        assert_eq!(output.status.code(), Some(2), "{env:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(key), "{env:?}: {stderr}");
        assert!(stderr.contains(value), "{env:?}: {stderr}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn check_config_reports_unknown_keys_and_missing_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(&config, "[risk]\ndestructve_floor = false\n").expect("write");
    let output = riskgate(
        &["--config", config.to_str().expect("utf-8"), "check-config"],
        "",
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("destructve_floor"));

    let output = riskgate(
        &["--config", "/no/such/riskgate.toml", "check-config"],
        "",
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/no/such/riskgate.toml"));

    let output = riskgate(
        &["check-config"],
        "",
        &[("RISKGATE_CONFIG", "/no/such/other.toml")],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/no/such/other.toml"));
}

#[test]
fn the_readme_quick_start_gives_the_decisions_it_shows() {
    let input = include_str!("data/quickstart.jsonl");
    let out = lines(&riskgate(&["assess"], input, &[]));
    let got: Vec<(&str, &str)> = out
        .iter()
        .map(|o| {
            (
                o["decision"].as_str().unwrap_or("?"),
                o["source"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("auto", "whitelist"),
            ("confirm", "destructive_floor"),
            ("confirm", "default"),
            ("deny", "policy"),
        ]
    );
}

#[test]
fn check_config_says_whether_command_lines_can_run_without_a_click() {
    let missing = riskgate(
        &["check-config"],
        "",
        &[(riskgate::tools::command::sandbox::SIMULATE_MISSING_ENV, "1")],
    );
    assert!(missing.status.success(), "{missing:?}");
    let text = String::from_utf8_lossy(&missing.stdout);
    assert!(
        text.contains("# command sandbox: UNAVAILABLE")
            && text.contains("No command line runs without a person's confirmation"),
        "{text}"
    );
    let here = riskgate(&["check-config"], "", &[]);
    let text = String::from_utf8_lossy(&here.stdout);
    if riskgate::tools::command::sandbox::kernel_support().is_ready() {
        assert!(text.contains("# command sandbox: ready"), "{text}");
        assert!(text.contains("/usr"), "{text}");
        assert!(!text.contains("/etc/shadow"), "{text}");
    } else {
        assert!(text.contains("# command sandbox: UNAVAILABLE"), "{text}");
    }
}

#[test]
fn check_config_says_whether_the_workspace_is_watched() {
    if !riskgate::tools::command::sandbox::kernel_support().is_ready() {
        eprintln!(
            "skipped: without the sandbox no line runs without a click, and nothing is watched"
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("ws/a/b")).expect("mkdir");
    let workspace = ("RISKGATE__TOOLS__WORKSPACE", dir.path().join("ws"));
    let workspace = (workspace.0, workspace.1.to_str().expect("utf-8"));
    let watched = riskgate(&["check-config"], "", &[workspace]);
    let text = String::from_utf8_lossy(&watched.stdout);
    assert!(
        text.contains(
            "# the workspace is watched for hard links and special files (inotify, one watch per directory: 3)"
        ),
        "{text}"
    );
    let off = riskgate(
        &["check-config"],
        "",
        &[
            workspace,
            ("RISKGATE__COMMAND__SANDBOX__WATCH_WORKSPACE", "false"),
        ],
    );
    let text = String::from_utf8_lossy(&off.stdout);
    assert!(
        text.contains("# every command line run without a click first walks the whole workspace")
            && text.contains("hard_link_scan_limit = 200000 entries")
            && text.contains("because command.sandbox.watch_workspace is false"),
        "{text}"
    );
    let missing = riskgate(&["check-config"], "", &[]);
    let text = String::from_utf8_lossy(&missing.stdout);
    assert!(
        text.contains("# the workspace does not exist yet: it is watched"),
        "{text}"
    );
}

#[test]
fn assess_under_a_missing_sandbox_runs_no_command_line_without_a_click() {
    let line = r#"{"tool": "execute_command", "arguments": {"command": "ls"}}"#;
    let output = riskgate(
        &["assess"],
        line,
        &[(riskgate::tools::command::sandbox::SIMULATE_MISSING_ENV, "1")],
    );
    let answer: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(answer["decision"], "confirm", "{answer}");
    assert_eq!(answer["source"], "policy", "{answer}");
    assert_eq!(answer["sandbox"], "off", "{answer}");
}

#[test]
fn check_config_checks_the_account_of_sql_run_without_a_click() {
    let demo = riskgate(&["check-config"], "", &[]);
    let text = String::from_utf8_lossy(&demo.stdout);
    assert!(
        text.contains(
            "sql target \"demo\": the account of statements run without a click is not privileged"
        ),
        "{text}"
    );
    let Some(url) = std::env::var("RISKGATE_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!("skipped the PostgreSQL half: RISKGATE_TEST_POSTGRES_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("riskgate.toml");
    std::fs::write(
        &config,
        format!("[[sql.databases]]\nname = \"main\"\nurl = \"{url}\"\n"),
    )
    .expect("write");
    let output = riskgate(
        &["check-config", "--config", &config.to_string_lossy()],
        "",
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    // The test server's login is a superuser: named at start, before any statement.
    assert!(
        text.contains("# WARNING: sql target \"main\": statements run without a click are refused")
            && text.contains("superuser"),
        "{text}"
    );
}

#[test]
fn check_config_starts_each_mcp_server_once_and_says_why_one_cannot() {
    let fixture = env!("CARGO_BIN_EXE_riskgate-mcp-fixture");
    let servers = serde_json::json!([
        {"name": "fx", "command": [fixture, "stdio"], "env": {"API_KEY": "mcp-env-secret-1"},
         "tools": {"wipe": "deny", "no_such_tool": "auto"}},
        {"name": "broken", "command": [fixture, "exit", "4", "no repository at /srv/repo"]},
    ]);
    let output = riskgate(
        &["check-config"],
        "",
        &[("RISKGATE__MCP__SERVERS", servers.to_string().as_str())],
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "# mcp server \"fx\" (stdio ({fixture})): starts, 19 tools, denied: wipe; WARNING: mcp.servers.tools names tools it does not list: no_such_tool\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "# WARNING: mcp server \"broken\" (stdio ({fixture})) cannot start: the server exited with status 4; its last words on stderr: no repository at /srv/repo\n"
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("mcp-env-secret-1"), "{stdout}");
    let parsed: toml::Value = toml::from_str(&stdout).expect("check-config prints TOML");
    assert_eq!(
        parsed["mcp"]["servers"][0]["env"]["API_KEY"].as_str(),
        Some("<redacted>")
    );
}

/// `check-config` says whether `run` has what it needs (a token, channels), never showing
/// the token; `--for-run` makes a missing piece exit with 2.
#[test]
fn check_config_says_whether_run_has_what_it_needs() {
    let incomplete = riskgate(&["check-config"], "", &[]);
    assert!(incomplete.status.success(), "{incomplete:?}");
    let stdout = String::from_utf8_lossy(&incomplete.stdout);
    assert!(
        stdout.contains("# NOT complete for `riskgate run`")
            && stdout.contains("discord.token")
            && stdout.contains("discord.channels"),
        "{stdout}"
    );
    assert!(stdout.contains("# note: no discord.guild_id"), "{stdout}");

    let refused = riskgate(&["check-config", "--for-run"], "", &[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("not complete for `riskgate run`")
            && stderr.contains("discord.token")
            && stderr.contains("discord.channels"),
        "{stderr}"
    );

    let ready = [
        ("DISCORD_TOKEN", "discord-secret-ready"),
        ("RISKGATE__DISCORD__CHANNELS", "234567890123456789"),
        ("RISKGATE__DISCORD__GUILD_ID", "123456789012345678"),
    ];
    let complete = riskgate(&["check-config", "--for-run"], "", &ready);
    assert!(complete.status.success(), "{complete:?}");
    let stdout = String::from_utf8_lossy(&complete.stdout);
    assert!(stdout.contains("# complete for `riskgate run`"), "{stdout}");
    assert!(!stdout.contains("# note:"), "{stdout}");
    for output in [&stdout, &String::from_utf8_lossy(&complete.stderr)] {
        assert!(!output.contains("discord-secret-ready"), "{output}");
    }
    toml::from_str::<toml::Value>(&stdout).expect("still TOML");
}
