//! The example configuration documents every key, and loads to the defaults.

use riskgate::config::Settings;

/// No environment variables at all.
const NO_ENV: [(&str, &str); 0] = [];

fn keys(prefix: &str, value: &toml::Value, out: &mut Vec<String>) {
    if let toml::Value::Table(table) = value {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            keys(&key, v, out);
            out.push(key);
        }
    }
}

#[test]
fn the_example_config_loads_and_documents_every_key() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/riskgate.example.toml");
    let example = std::fs::read_to_string(path).expect("example config");
    let loaded = Settings::load_from(Some(std::path::Path::new(path)), NO_ENV)
        .expect("the example config is valid");
    assert_eq!(
        loaded.to_redacted_toml(),
        Settings::default().to_redacted_toml(),
        "the example shows the defaults"
    );

    let defaults: toml::Value =
        toml::from_str(&Settings::default().to_redacted_toml()).expect("toml");
    let mut all = Vec::new();
    keys("", &defaults, &mut all);
    // Keys that are unset by default appear commented out in the example.
    all.extend(
        [
            "llm.api_key",
            "discord.token",
            "discord.api_base_url",
            "discord.guild_id",
            "sql.databases",
            "mcp.servers",
            "mcp.servers.name",
            "mcp.servers.enabled",
            "mcp.servers.command",
            "mcp.servers.url",
            "mcp.servers.bearer_token",
            "mcp.servers.bearer_token_file",
            "mcp.servers.env",
            "mcp.servers.trust_annotations",
            "mcp.servers.tools",
            "profiles",
            "profiles.summary",
            "profiles.prompt",
            "profiles.prompt_file",
            "profiles.tools",
            "profiles.mcp_servers",
            "profiles.model",
            "profiles.mode",
            "profiles.channels",
        ]
        .map(String::from),
    );
    for key in all {
        let last = key.rsplit('.').next().expect("a key");
        let documented = [
            format!("{last} ="),
            format!("[{key}]"),
            format!("[[{key}]]"),
            format!("[{key}."),
            format!("[[{key}."),
        ]
        .iter()
        .any(|form| example.contains(form.as_str()));
        assert!(
            documented,
            "deploy/riskgate.example.toml does not document `{key}`"
        );
    }
}

#[test]
fn plain_environment_variables_fill_secrets_but_config_keys_win() {
    let env = [
        ("DISCORD_TOKEN", "from-plain-env"),
        ("OPENAI_API_KEY", "sk-plain"),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(&file, "[llm]\napi_key = \"sk-from-file\"\n").expect("write");
    let settings = Settings::load_from(Some(&file), env).expect("load");
    use secrecy::ExposeSecret;
    assert_eq!(
        settings
            .discord
            .token
            .as_ref()
            .map(|t| t.expose_secret().to_owned()),
        Some("from-plain-env".to_owned())
    );
    assert_eq!(
        settings
            .llm
            .api_key
            .as_ref()
            .map(|t| t.expose_secret().to_owned()),
        Some("sk-from-file".to_owned())
    );
    let rendered = settings.to_redacted_toml();
    assert!(!rendered.contains("from-plain-env") && !rendered.contains("sk-from-file"));
}

#[test]
fn database_urls_must_name_a_known_engine_and_unique_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    for (body, key) in [
        (
            "[[sql.databases]]\nname = \"a\"\nurl = \"oracle://x\"\n",
            "sql.databases[0].url",
        ),
        (
            "[[sql.databases]]\nname = \"a\"\nurl = \"sqlite:a.db\"\n[[sql.databases]]\nname = \"a\"\nurl = \"sqlite:b.db\"\n",
            "sql.databases[1].name",
        ),
        (
            "[[sql.databases]]\nname = \"\"\nurl = \"sqlite:a.db\"\n",
            "sql.databases[0].name",
        ),
    ] {
        std::fs::write(&file, body).expect("write");
        let error = Settings::load_from(Some(&file), NO_ENV).expect_err(body);
        assert!(error.to_string().contains(key), "{error}");
    }
}

#[test]
fn an_invalid_file_pattern_is_refused_at_load_with_the_pattern_and_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(
        &file,
        "[tools.file_operations]\nallow = [\"scratch\"]\ndeny = [\"*.pem\", \"keys/[a-\"]\n",
    )
    .expect("write");
    let said = Settings::load_from(Some(&file), NO_ENV)
        .expect_err("an unclosed character class")
        .to_string();
    assert!(
        said.contains("tools.file_operations.deny")
            && said.contains("\"keys/[a-\"")
            && said.contains("not a valid pattern")
            && said.contains("put a \\ before"),
        "{said}"
    );
    let said = load_env(&[("RISKGATE__TOOLS__FILE_OPERATIONS__ALLOW", "out/{a,b")])
        .expect_err("an unclosed alternation")
        .to_string();
    assert!(said.contains("tools.file_operations.allow"), "{said}");
    let fine = load_env(&[(
        "RISKGATE__TOOLS__FILE_OPERATIONS__DENY",
        r#"["*.pem", "**/secrets/**", "config/*.key", ".env"]"#,
    )])
    .expect("valid patterns load");
    assert_eq!(fine.tools.file_operations.deny.len(), 4);
}

/// Loads with no file but the given variables (a directory without `riskgate.toml` is not
/// guaranteed, so an empty file is named).
fn load_env(vars: &[(&str, &str)]) -> Result<Settings, riskgate::config::ConfigError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(&file, "").expect("write");
    Settings::load_from(Some(&file), vars.iter().copied())
}

#[test]
fn a_list_key_takes_one_value_a_comma_list_or_json() {
    let one = load_env(&[
        ("RISKGATE__DISCORD__CHANNELS", "123"),
        ("RISKGATE__DISCORD__APPROVER_ROLES", "456"),
        ("RISKGATE__DISCORD__ADMIN_ROLES", "789"),
        ("RISKGATE__COMMAND__ENV_ALLOW", "TERM"),
        ("RISKGATE__COMMAND__SANDBOX__READ_PATHS", "/opt/tools"),
        ("RISKGATE__TOOLS__EXECUTE_SQL__ALLOW", "nextval"),
        ("RISKGATE__TOOLS__HTTP_REQUEST__DENY", "10.0.0.0/8"),
    ])
    .expect("single values");
    assert_eq!(one.discord.channels, [123]);
    assert_eq!(one.discord.approver_roles, [456]);
    assert_eq!(one.discord.admin_roles, [789]);
    assert_eq!(one.command.env_allow, ["TERM"]);
    assert_eq!(
        one.command.sandbox.read_paths,
        [std::path::PathBuf::from("/opt/tools")]
    );
    assert_eq!(one.tools.execute_sql.allow, ["nextval"]);
    assert_eq!(one.tools.http_request.deny, ["10.0.0.0/8"]);

    let many = load_env(&[
        (
            "RISKGATE__DISCORD__CHANNELS",
            "234567890123456789, 345678901234567890",
        ),
        (
            "RISKGATE__TOOLS__EXECUTE_COMMAND__DENY",
            "kubectl delete,terraform",
        ),
        (
            "RISKGATE__TOOLS__FILE_OPERATIONS__DENY",
            r#"[".env", "a,b"]"#,
        ),
        ("RISKGATE__DISCORD__APPROVER_ROLES", "[1, 2]"),
    ])
    .expect("lists");
    assert_eq!(
        many.discord.channels,
        [234_567_890_123_456_789, 345_678_901_234_567_890]
    );
    assert_eq!(
        many.tools.execute_command.deny,
        ["kubectl delete", "terraform"]
    );
    assert_eq!(many.tools.file_operations.deny, [".env", "a,b"]);
    assert_eq!(many.discord.approver_roles, [1, 2]);

    // Empty clears a list the file set.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(&file, "[discord]\nchannels = [1, 2]\n").expect("write");
    let cleared =
        Settings::load_from(Some(&file), [("RISKGATE__DISCORD__CHANNELS", "")]).expect("empty");
    assert!(cleared.discord.channels.is_empty());
}

#[test]
fn scalars_of_every_type_come_from_the_environment() {
    let settings = load_env(&[
        ("RISKGATE__DISCORD__GUILD_ID", "123456789012345678"),
        ("RISKGATE__DISCORD__ALLOW_DMS", "true"),
        ("RISKGATE__LLM__TEMPERATURE", "0.5"),
        ("RISKGATE__LLM__MODEL", "123"),
        ("RISKGATE__LLM__STREAM", "false"),
        ("RISKGATE__TOOLS__EXECUTE_SQL__ENABLED", "false"),
        ("RISKGATE__COMMAND__SANDBOX__CPU_SECS", "7"),
    ])
    .expect("scalars");
    assert_eq!(settings.discord.guild_id, Some(123_456_789_012_345_678));
    assert!(settings.discord.allow_dms);
    assert!((settings.llm.temperature - 0.5).abs() < f32::EPSILON);
    assert_eq!(settings.llm.model, "123");
    assert!(!settings.llm.stream, "streaming is on unless turned off");
    assert!(Settings::default().llm.stream);
    assert!(!settings.tools.execute_sql.enabled);
    assert_eq!(settings.command.sandbox.cpu_secs, 7);
}

#[test]
fn a_discord_id_that_is_not_a_number_says_where_ids_come_from() {
    for (var, value) in [
        ("RISKGATE__DISCORD__CHANNELS", "123,general"),
        ("RISKGATE__DISCORD__ADMIN_ROLES", "@admins"),
        ("RISKGATE__DISCORD__GUILD_ID", "my-server"),
    ] {
        let error = load_env(&[(var, value)]).expect_err(var).to_string();
        assert!(error.contains(var), "{error}");
        assert!(error.contains("Copy ID"), "{error}");
    }
    let error = load_env(&[("RISKGATE__DISCORD__QUEUE_LIMIT", "many")])
        .expect_err("not a number")
        .to_string();
    assert!(
        error.contains("discord.queue_limit") && error.contains("RISKGATE__DISCORD__QUEUE_LIMIT"),
        "{error}"
    );
}

#[test]
fn attachment_limits_must_be_positive_and_leave_room_in_a_message() {
    let error = load_env(&[("RISKGATE__DISCORD__MAX_ATTACHMENT_BYTES", "0")])
        .expect_err("zero")
        .to_string();
    assert!(
        error.contains("discord.max_attachment_bytes") && error.contains("greater than 0"),
        "{error}"
    );
    let error = load_env(&[("RISKGATE__DISCORD__ATTACHMENT_BUDGET_CHARS", "60000")])
        .expect_err("over half of agent.max_message_chars")
        .to_string();
    assert!(
        error.contains("discord.attachment_budget_chars")
            && error.contains("at most half of agent.max_message_chars (50000 of 100000)"),
        "{error}"
    );
    let fits = load_env(&[
        ("RISKGATE__DISCORD__ATTACHMENT_BUDGET_CHARS", "60000"),
        ("RISKGATE__AGENT__MAX_MESSAGE_CHARS", "120000"),
    ])
    .expect("room enough");
    assert_eq!(fits.discord.attachment_budget_chars, 60_000);
}

#[test]
fn sql_databases_come_from_json_or_numbered_fields() {
    use secrecy::ExposeSecret;
    let json = load_env(&[(
        "RISKGATE__SQL__DATABASES",
        r#"[{"name":"main","url":"postgres://app:pw@db/shop","readonly_url":"postgres://ro:pw@db/shop"},
            {"name":"local","url":"sqlite:local.db","allow_privileged_auto":true}]"#,
    )])
    .expect("json");
    let names: Vec<_> = json.sql.databases.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["main", "local"]);
    assert_eq!(
        json.sql.databases[0]
            .readonly_url
            .as_ref()
            .map(|u| u.expose_secret().to_owned()),
        Some("postgres://ro:pw@db/shop".to_owned())
    );
    assert!(json.sql.databases[1].allow_privileged_auto);

    let fields = load_env(&[
        ("RISKGATE__SQL__DATABASES__0__NAME", "main"),
        (
            "RISKGATE__SQL__DATABASES__0__URL",
            "postgres://app:pw@db/shop",
        ),
        ("RISKGATE__SQL__DATABASES__1__NAME", "other"),
        ("RISKGATE__SQL__DATABASES__1__URL", "mysql://app:pw@db2/x"),
        ("RISKGATE__SQL__DATABASES__1__ALLOW_PRIVILEGED_AUTO", "true"),
    ])
    .expect("numbered fields");
    assert_eq!(fields.sql.databases.len(), 2);
    assert_eq!(fields.sql.databases[1].name, "other");
    assert_eq!(
        fields.sql.databases[1].url.expose_secret(),
        "mysql://app:pw@db2/x"
    );
    assert!(fields.sql.databases[1].allow_privileged_auto);
    let rendered = fields.to_redacted_toml();
    assert!(!rendered.contains(":pw@"), "{rendered}");

    // A numbered field sets that field of the entry the file defines.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(
        &file,
        "[[sql.databases]]\nname = \"shop\"\nurl = \"postgres://app@db/shop\"\n",
    )
    .expect("write");
    let patched = Settings::load_from(
        Some(&file),
        [(
            "RISKGATE__SQL__DATABASES__0__URL",
            "postgres://app:secret@db/shop",
        )],
    )
    .expect("patched");
    assert_eq!(patched.sql.databases.len(), 1);
    assert_eq!(patched.sql.databases[0].name, "shop");
    assert_eq!(
        patched.sql.databases[0].url.expose_secret(),
        "postgres://app:secret@db/shop"
    );
}

#[test]
fn bad_sql_databases_variables_say_what_to_write() {
    for (vars, needle) in [
        (
            vec![("RISKGATE__SQL__DATABASES", "postgres://app@db/shop")],
            "JSON",
        ),
        (
            vec![("RISKGATE__SQL__DATABASES", r#"["main"]"#)],
            "JSON list of tables",
        ),
        (
            vec![("RISKGATE__SQL__DATABASES__1__NAME", "gap")],
            "without gaps",
        ),
        (
            vec![("RISKGATE__SQL__DATABASES__MAIN__URL", "sqlite:a.db")],
            "RISKGATE__SQL__DATABASES__0__URL",
        ),
        (
            vec![("RISKGATE__SQL__DATABASES__0__URL", "sqlite:a.db")],
            "name",
        ),
    ] {
        let error = load_env(&vars).expect_err(needle).to_string();
        assert!(error.contains(needle), "{vars:?}: {error}");
    }
}

#[test]
fn secrets_come_from_files_named_by_file_variables() {
    use secrecy::ExposeSecret;
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, content: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, content).expect("write");
        path.display().to_string()
    };
    let token = write("token", "discord-file-token\n");
    let key = write("key", "sk-file-key\r\n");
    let url = write("url", "postgres://app:file-pw@db/shop\n\n");
    let settings = load_env(&[
        ("DISCORD_TOKEN_FILE", &token),
        ("RISKGATE__LLM__API_KEY_FILE", &key),
        ("RISKGATE__SQL__DATABASES__0__NAME", "shop"),
        ("RISKGATE__SQL__DATABASES__0__URL_FILE", &url),
    ])
    .expect("files");
    assert_eq!(
        settings.discord.token.as_ref().map(|t| t.expose_secret()),
        Some("discord-file-token")
    );
    assert_eq!(
        settings.llm.api_key.as_ref().map(|t| t.expose_secret()),
        Some("sk-file-key")
    );
    // Only one trailing newline goes.
    assert_eq!(
        settings.sql.databases[0].url.expose_secret(),
        "postgres://app:file-pw@db/shop\n"
    );
    let rendered = settings.to_redacted_toml();
    for secret in ["discord-file-token", "sk-file-key", "file-pw"] {
        assert!(!rendered.contains(secret), "{rendered}");
    }

    let openai = write("openai", "sk-plain-file");
    let plain = load_env(&[("OPENAI_API_KEY_FILE", &openai)]).expect("plain file");
    assert_eq!(
        plain.llm.api_key.as_ref().map(|t| t.expose_secret()),
        Some("sk-plain-file")
    );
}

#[test]
fn a_secret_file_that_cannot_be_used_is_named_but_never_shown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope").display().to_string();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").expect("write");
    let empty = empty.display().to_string();
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "hunter2-secret\n").expect("write");
    let wrong = wrong.display().to_string();
    let token = dir.path().join("token");
    std::fs::write(&token, "tok").expect("write");
    let token = token.display().to_string();
    for (vars, needles) in [
        (
            vec![("RISKGATE__LLM__API_KEY_FILE", missing.as_str())],
            vec![
                "RISKGATE__LLM__API_KEY_FILE",
                missing.as_str(),
                "No such file",
            ],
        ),
        (
            vec![("DISCORD_TOKEN_FILE", missing.as_str())],
            vec!["DISCORD_TOKEN_FILE", missing.as_str()],
        ),
        (
            vec![("RISKGATE__DISCORD__TOKEN_FILE", empty.as_str())],
            vec!["RISKGATE__DISCORD__TOKEN_FILE", "empty"],
        ),
        (
            // A secret put in a numeric key's file: the error names it, not its content.
            vec![("RISKGATE__DISCORD__QUEUE_LIMIT_FILE", wrong.as_str())],
            vec!["discord.queue_limit", wrong.as_str(), "not shown"],
        ),
        (
            vec![
                ("DISCORD_TOKEN", "x"),
                ("DISCORD_TOKEN_FILE", token.as_str()),
            ],
            vec!["DISCORD_TOKEN", "only one"],
        ),
        (
            vec![
                ("RISKGATE__LLM__API_KEY", "x"),
                ("RISKGATE__LLM__API_KEY_FILE", token.as_str()),
            ],
            vec!["llm.api_key", "only one"],
        ),
    ] {
        let error = load_env(&vars).expect_err(needles[0]).to_string();
        for needle in &needles {
            assert!(error.contains(needle), "{vars:?}: {error}");
        }
        assert!(!error.contains("hunter2"), "{error}");
    }
}

#[test]
fn a_misspelt_key_in_the_environment_is_an_error() {
    let error = load_env(&[("RISKGATE__DISCORD__CHANELS", "1")])
        .expect_err("typo")
        .to_string();
    assert!(error.contains("chanels"), "{error}");
    let error = load_env(&[("RISKGATE__DISCORD____CHANNELS", "1")])
        .expect_err("empty part")
        .to_string();
    assert!(
        error.contains("RISKGATE__DISCORD____CHANNELS") && error.contains("empty part"),
        "{error}"
    );
}

#[test]
fn a_retired_key_is_named_with_what_to_do_instead_of_failing_as_unknown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(&file, "[agent]\nremembered_profiles = 50000\n").expect("write");
    let error = Settings::load_from(Some(&file), NO_ENV)
        .expect_err("a retired key is refused")
        .to_string();
    assert!(
        error.contains("`agent.remembered_profiles` is no longer a setting"),
        "{error}"
    );
    assert!(error.contains("delete it"), "{error}");
    assert!(
        !error.contains("unknown field"),
        "the key is named as retired, not unknown: {error}"
    );

    // Set in the environment instead: the variable is named.
    std::fs::write(&file, "").expect("write");
    let error = Settings::load_from(Some(&file), [("RISKGATE__AGENT__REMEMBERED_PROFILES", "0")])
        .expect_err("a retired key is refused")
        .to_string();
    assert!(
        error.contains("unset RISKGATE__AGENT__REMEMBERED_PROFILES"),
        "{error}"
    );
}

#[test]
fn home_files_must_be_readable_files_named_by_a_plain_path_in_home() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    let gitconfig = dir.path().join("gitconfig");
    std::fs::write(&gitconfig, "[user]\n\tname = bot\n").expect("write");
    let source = gitconfig.display();
    let missing = dir.path().join("missing").display().to_string();
    for (name, path, problem) in [
        ("../.gitconfig", source.to_string(), "without `..`"),
        ("/etc/gitconfig", source.to_string(), "a relative path"),
        (".npmrc", missing, "not a readable file"),
    ] {
        std::fs::write(
            &file,
            format!("[command.sandbox.home_files]\n\"{name}\" = \"{path}\"\n"),
        )
        .expect("write");
        let said = Settings::load_from(Some(&file), NO_ENV)
            .expect_err(name)
            .to_string();
        assert!(
            said.contains("command.sandbox.home_files") && said.contains(problem),
            "{name}: {said}"
        );
    }
    std::fs::write(
        &file,
        format!("[command.sandbox.home_files]\n\".config/git/config\" = \"{source}\"\n"),
    )
    .expect("write");
    let fine = Settings::load_from(Some(&file), NO_ENV).expect("a plain name loads");
    assert_eq!(
        fine.command.sandbox.home_files.get(".config/git/config"),
        Some(&gitconfig)
    );
}

#[test]
fn mcp_servers_load_from_the_file_and_every_environment_form() {
    use secrecy::ExposeSecret;
    let dir = tempfile::tempdir().expect("tempdir");
    let token = dir.path().join("token");
    std::fs::write(&token, "file-token-abc\n").expect("token");
    let gh = dir.path().join("gh");
    std::fs::write(&gh, "ghp-from-file-123\n").expect("gh");
    let file = dir.path().join("riskgate.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[mcp]
call_timeout_secs = 12
[[mcp.servers]]
name = "git"
command = ["mcp-server-git", "--repository", "/srv/repo"]
env = {{ LOG_LEVEL = "debug" }}
trust_annotations = true
tools = {{ git_commit = "confirm", git_reset = "deny" }}
[[mcp.servers]]
name = "web"
url = "http://127.0.0.1:8931/mcp"
bearer_token_file = "{}"
enabled = false
"#,
            token.display()
        ),
    )
    .expect("write");
    let gh_path = gh.display().to_string();
    let env = [
        (
            "RISKGATE__MCP__SERVERS__0__ENV__GITHUB_TOKEN_FILE",
            gh_path.as_str(),
        ),
        ("RISKGATE__MCP__SERVERS__0__TOOLS__Git_Push", "deny"),
        ("RISKGATE__MCP__SERVERS__2__NAME", "memory"),
        (
            "RISKGATE__MCP__SERVERS__2__COMMAND",
            "npx,-y,@modelcontextprotocol/server-memory",
        ),
        (
            "RISKGATE__MCP__SERVERS__2__ENV",
            r#"{"MEMORY_FILE_PATH": "/var/lib/memory.json"}"#,
        ),
    ];
    let settings = Settings::load_from(Some(&file), env).expect("load");
    let mcp = &settings.mcp;
    assert_eq!(mcp.call_timeout_secs, 12);
    assert_eq!(mcp.servers.len(), 3);
    let git = &mcp.servers[0];
    assert_eq!(git.command, ["mcp-server-git", "--repository", "/srv/repo"]);
    assert!(git.trust_annotations && git.enabled);
    let env: Vec<(&str, &str)> = git
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.expose_secret()))
        .collect();
    assert_eq!(
        env,
        [
            ("GITHUB_TOKEN", "ghp-from-file-123"),
            ("LOG_LEVEL", "debug")
        ]
    );
    use riskgate::mcp::ToolPolicy;
    assert_eq!(git.policy("git_reset"), Some(ToolPolicy::Deny));
    assert_eq!(git.policy("git_commit"), Some(ToolPolicy::Confirm));
    assert_eq!(
        git.policy("Git_Push"),
        Some(ToolPolicy::Deny),
        "the name keeps its case"
    );
    let web = &mcp.servers[1];
    assert!(!web.enabled);
    assert_eq!(
        web.bearer_token()
            .expect("readable")
            .map(|t| t.expose_secret().to_owned()),
        Some("file-token-abc".to_owned())
    );
    let memory = &mcp.servers[2];
    assert_eq!(
        memory.command,
        ["npx", "-y", "@modelcontextprotocol/server-memory"]
    );
    assert_eq!(
        memory.env["MEMORY_FILE_PATH"].expose_secret(),
        "/var/lib/memory.json"
    );
    assert_eq!(mcp.enabled_servers().count(), 2);

    // The whole list as JSON, and the token through the environment's file form.
    let json = r#"[{"name":"web","url":"https://mcp.example.com/mcp?key=q-secret-1"}]"#;
    let token_path = token.display().to_string();
    let settings = Settings::load_from(
        None,
        [
            ("RISKGATE__MCP__SERVERS", json),
            (
                "RISKGATE__MCP__SERVERS__0__BEARER_TOKEN_FILE",
                token_path.as_str(),
            ),
        ],
    )
    .expect("load");
    let web = &settings.mcp.servers[0];
    assert_eq!(
        web.bearer_token
            .as_ref()
            .map(|t| t.expose_secret().to_owned()),
        Some("file-token-abc".to_owned())
    );
    let rendered = settings.to_redacted_toml();
    assert!(
        !rendered.contains("file-token-abc") && !rendered.contains("q-secret-1"),
        "{rendered}"
    );
    assert!(
        rendered.contains("bearer_token = \"<redacted>\""),
        "{rendered}"
    );
}

#[test]
fn mcp_server_mistakes_are_refused_naming_the_key_and_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("riskgate.toml");
    let missing = dir.path().join("no-such-token");
    let cases = [
        (
            "[[mcp.servers]]\nname = \"Git Hub\"\ncommand = [\"x\"]\n".to_owned(),
            &["mcp.servers[0].name", "a-z, 0-9, _ and -"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n".to_owned(),
            &["mcp.servers[0] (\"x\").url", "not both"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\n".to_owned(),
            &["mcp.servers[0] (\"x\").command", "or `url ="][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\ncommand = [\"x\"]\nbearer_token = \"t0ken-value\"\n"
                .to_owned(),
            &["mcp.servers[0] (\"x\").bearer_token", "in `env`"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\nurl = \"http://h/mcp\"\nenv = { A = \"b\" }\n"
                .to_owned(),
            &["mcp.servers[0] (\"x\").env", "runs elsewhere"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\nurl = \"ftp://h/mcp\"\n".to_owned(),
            &["mcp.servers[0] (\"x\").url", "http:// or https://"][..],
        ),
        (
            format!(
                "[[mcp.servers]]\nname = \"x\"\nurl = \"http://h/mcp\"\nbearer_token_file = \"{}\"\n",
                missing.display()
            ),
            &["bearer_token_file", "cannot read the file"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\ncommand = [\"a\"]\n[[mcp.servers]]\nname = \"x\"\ncommand = [\"b\"]\n".to_owned(),
            &["mcp.servers[1].name", "two servers have this name"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\ncommand = [\"a\"]\ntools = { t = \"maybe\" }\n"
                .to_owned(),
            &["maybe", "auto", "confirm", "deny"][..],
        ),
        (
            "[mcp]\ncall_timeout_secs = 0\n".to_owned(),
            &["mcp.call_timeout_secs", "greater than 0"][..],
        ),
        (
            "[[mcp.servers]]\nname = \"x\"\ncommand = [\"a\"]\nbogus = 1\n".to_owned(),
            &["bogus"][..],
        ),
    ];
    for (body, expected) in cases {
        std::fs::write(&file, &body).expect("write");
        let said = Settings::load_from(Some(&file), NO_ENV)
            .expect_err(&body)
            .to_string();
        for part in expected {
            assert!(said.contains(part), "{body}\n-> {said}\n(missing {part:?})");
        }
        assert!(!said.contains("t0ken-value"), "{said}");
    }
}

#[test]
fn an_operators_profile_loads_from_the_file_with_its_prompt_beside_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("prompts")).expect("mkdir");
    std::fs::write(
        dir.path().join("prompts/payments.md"),
        "You help the payments team.\n",
    )
    .expect("prompt");
    let file = dir.path().join("riskgate.toml");
    let config = |profile: &str| {
        std::fs::write(
            &file,
            format!(
                r#"
[agent]
default_profile = "payments"
[[mcp.servers]]
name = "github"
command = ["mcp-server-github"]
[profiles.payments]
summary = "payments data"
{profile}
"#
            ),
        )
        .expect("write");
        Settings::load_from(Some(&file), Vec::<(String, String)>::new())
    };
    let settings = config(
        r#"prompt_file = "prompts/payments.md"
tools = ["execute_sql"]
mcp_servers = ["github"]
model = "big-model"
mode = "strict"
channels = [123456789012345678, "console"]"#,
    )
    .expect("a valid profile");
    let profiles = riskgate::tools::profiles(&settings).expect("profiles");
    let payments = profiles.default_profile();
    assert_eq!(payments.name(), "payments");
    // Read from beside the configuration file, wherever the process runs.
    assert_eq!(payments.prompt(), "You help the payments team.\n");
    assert_eq!(payments.model(), Some("big-model"));
    assert_eq!(payments.channels(), ["123456789012345678", "console"]);
    assert!(payments.offers_tool("mcp__github__create_issue"));
    assert!(!payments.offers_tool("execute_command"));
    // check-config shows what the operator wrote, not the prompt's text.
    let shown = settings.to_redacted_toml();
    assert!(shown.contains("[profiles.payments]"), "{shown}");
    assert!(!shown.contains("payments team"), "{shown}");

    for (profile, key, named) in [
        (
            r#"tools = ["execute_sq"]"#,
            "profiles.payments.tools",
            "execute_sq",
        ),
        (
            r#"mcp_servers = ["gitlab"]"#,
            "profiles.payments.mcp_servers",
            "gitlab",
        ),
        (r#"mode = "lax""#, "profiles.payments.mode", "lax"),
        (
            r#"prompt_file = "missing.md""#,
            "profiles.payments.prompt_file",
            "missing.md",
        ),
        (r#"colour = "red""#, "colour", "colour"),
    ] {
        let problem = config(profile).expect_err(profile).to_string();
        assert!(
            problem.contains(key) && problem.contains(named),
            "{profile}: {problem}"
        );
    }
}

#[test]
fn a_profile_comes_from_the_environment_too() {
    let settings = load_env(&[
        ("RISKGATE__PROFILES__PAYMENTS__MODEL", "big"),
        (
            "RISKGATE__PROFILES__PAYMENTS__TOOLS",
            "execute_sql,file_operations",
        ),
        ("RISKGATE__PROFILES__PAYMENTS__MODE", "strict"),
        ("RISKGATE__PROFILES__PAYMENTS__CHANNELS", "123,console"),
    ])
    .expect("a profile from the environment");
    let profiles = riskgate::tools::profiles(&settings).expect("profiles");
    let payments = profiles.get("payments").expect("payments");
    assert_eq!(payments.model(), Some("big"));
    assert!(payments.offers_tool("file_operations") && !payments.offers_tool("http_request"));
    assert_eq!(payments.channels(), ["123", "console"]);
    let error = load_env(&[("RISKGATE__PROFILES__PAYMENTS__TOOLS", "execute_sq")])
        .expect_err("an unknown tool")
        .to_string();
    assert!(error.contains("profiles.payments.tools"), "{error}");
}

#[test]
fn an_invalid_log_level_is_refused_naming_the_key() {
    for level in ["degub", "warn,riskgate=loud", "info,[{", "warn,verbose"] {
        let error = load_env(&[("RISKGATE__LOG__LEVEL", level)])
            .expect_err(level)
            .to_string();
        assert!(
            error.contains("`log.level`") && error.contains("use a level (off, error"),
            "{level}: {error}"
        );
    }
    for level in [
        "warn",
        "INFO",
        "off",
        "warn,riskgate=debug",
        "info,rmcp=warn",
        "",
    ] {
        let settings = load_env(&[("RISKGATE__LOG__LEVEL", level)]);
        assert!(settings.is_ok(), "{level}: {settings:?}");
    }
}

#[test]
fn a_config_path_that_is_a_directory_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shown = dir.path().display().to_string();
    let given = Settings::load_from(Some(dir.path()), NO_ENV).expect_err("a directory");
    let named =
        Settings::load_from(None, [("RISKGATE_CONFIG", shown.as_str())]).expect_err("a directory");
    for error in [given.to_string(), named.to_string()] {
        assert!(
            error.contains(&format!("{shown} is a directory, not a file"))
                && error.contains("riskgate.toml"),
            "{error}"
        );
    }
}

/// Where the model's limits cannot fit each other, `check-config` (and the start of `run`
/// and `console`) says so, naming the keys and what to set; the defaults fit.
#[test]
fn model_limits_that_cannot_fit_each_other_are_named_with_what_to_set() {
    let warnings = |vars: &[(&str, &str)], window: u32| {
        let settings = load_env(vars).expect("valid settings");
        settings
            .llm
            .timing_warnings(window, settings.agent.run_timeout_secs)
    };
    assert_eq!(
        warnings(&[], 4096),
        Vec::<String>::new(),
        "the defaults fit"
    );
    for (vars, window, expected) in [
        (
            // 2048 tokens in 60 s without streaming: 35 tokens a second.
            &[
                ("RISKGATE__LLM__STREAM", "false"),
                ("RISKGATE__LLM__MAX_TOKENS", "2048"),
                ("RISKGATE__LLM__REQUEST_TIMEOUT_SECS", "60"),
            ][..],
            32_768,
            "llm.max_tokens = 2048 in llm.request_timeout_secs = 60 needs the model to write 35 tokens a second without streaming (a local model on a CPU writes 5-20), so long answers are cut off: set llm.request_timeout_secs to at least 470 (2048 tokens at 5 a second, plus 60 s to read the prompt), lower llm.max_tokens, or set llm.stream = true",
        ),
        (
            &[("RISKGATE__LLM__STREAM_IDLE_TIMEOUT_SECS", "270")][..],
            8192,
            "llm.stream_idle_timeout_secs = 270 is not below llm.request_timeout_secs = 270: a stream that stops coming is noticed no sooner than a whole request times out; set llm.stream_idle_timeout_secs below it (the default is 60)",
        ),
        (
            &[("RISKGATE__LLM__MAX_TOKENS", "2048")][..],
            4096,
            "llm.max_tokens = 2048 is more than a quarter of the model's context window (4096 tokens): each reply's room leaves too little for the prompt, the tools and the history; set llm.max_tokens to at most 1024, or give the model a larger window (the server's context size, or llm.context_window_tokens)",
        ),
        (
            &[("RISKGATE__AGENT__RUN_TIMEOUT_SECS", "120")][..],
            8192,
            "agent.run_timeout_secs = 120 is shorter than llm.request_timeout_secs = 270: a run ends before a slow model's request does; set agent.run_timeout_secs to at least 270",
        ),
    ] {
        assert_eq!(warnings(vars, window), [expected], "{vars:?}");
    }
    // 20 tokens a second without streaming still fits; streaming never needs a speed.
    assert!(
        warnings(
            &[
                ("RISKGATE__LLM__STREAM", "false"),
                ("RISKGATE__LLM__MAX_TOKENS", "1024"),
                ("RISKGATE__LLM__REQUEST_TIMEOUT_SECS", "52"),
            ],
            8192
        )
        .is_empty()
    );
    assert!(
        warnings(
            &[
                ("RISKGATE__LLM__MAX_TOKENS", "2048"),
                ("RISKGATE__LLM__REQUEST_TIMEOUT_SECS", "90"),
            ],
            32_768
        )
        .is_empty()
    );
}

#[test]
fn the_stream_idle_timeout_must_be_positive() {
    let error = load_env(&[("RISKGATE__LLM__STREAM_IDLE_TIMEOUT_SECS", "0")])
        .expect_err("0")
        .to_string();
    assert!(
        error.contains("`llm.stream_idle_timeout_secs`") && error.contains("greater than 0"),
        "{error}"
    );
}
