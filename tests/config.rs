//! The example configuration documents every key, and loads to the defaults.

use riskgate::config::Settings;

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
    let loaded = Settings::load_from(Some(std::path::Path::new(path)), |_| None)
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
    let env = |name: &str| match name {
        "DISCORD_TOKEN" => Some("from-plain-env".to_owned()),
        "OPENAI_API_KEY" => Some("sk-plain".to_owned()),
        _ => None,
    };
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
        let error = Settings::load_from(Some(&file), |_| None).expect_err(body);
        assert!(error.to_string().contains(key), "{error}");
    }
}
