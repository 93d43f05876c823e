//! `[mcp]` and `[[mcp.servers]]`: which MCP servers the bot reaches, how, and what the
//! operator decided about their tools. Every key is documented in
//! `deploy/riskgate.example.toml`; the environment forms are in [`crate::config::env`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize, Serializer};
use url::Url;

use crate::config::{ConfigError, REDACTED};

/// A server's name is part of every tool name the model sees (`mcp__<server>__<tool>`, 64
/// characters at most), so it is kept short enough to leave room for the tool's.
pub const MAX_SERVER_NAME_CHARS: usize = 32;

/// The MCP client: limits shared by every server, and the servers.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpSettings {
    /// One tool call, from the request to its result; then the call is cancelled (the
    /// server is sent `notifications/cancelled`) and fails with a timeout.
    pub call_timeout_secs: u64,
    /// Starting one server: the process (or the HTTP connection), the handshake and the
    /// first listing of its tools. The bot's start waits at most this long for all of them
    /// together; a server not ready by then goes on starting (or restarting) behind it.
    pub start_timeout_secs: u64,
    /// Bytes of one call's result kept (text, descriptions of other content, structured
    /// content); the rest is cut, and the result says how much was cut.
    pub result_max_bytes: u64,
    /// The first wait before a server that failed or died is started again; it doubles
    /// after each failure that follows, up to `restart_max_secs`, and starts over once a
    /// server stayed up for `restart_max_secs`.
    pub restart_initial_secs: u64,
    pub restart_max_secs: u64,
    pub servers: Vec<McpServerSettings>,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            call_timeout_secs: 60,
            start_timeout_secs: 30,
            result_max_bytes: 1024 * 1024,
            restart_initial_secs: 1,
            restart_max_secs: 300,
            servers: Vec::new(),
        }
    }
}

/// What the operator decided for one of a server's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolPolicy {
    /// Runs without a click (as a call the gate knows is safe).
    Auto,
    /// Always waits for a person.
    Confirm,
    /// Never offered to the model.
    Deny,
}

/// Read by hand, so a wrong value is told the three right ones.
impl<'de> Deserialize<'de> for ToolPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        match value.as_str() {
            "auto" => Ok(Self::Auto),
            "confirm" => Ok(Self::Confirm),
            "deny" => Ok(Self::Deny),
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not a tool policy: write \"auto\" (runs without a click), \"confirm\" (always asks) or \"deny\" (never offered)"
            ))),
        }
    }
}

impl ToolPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Confirm => "confirm",
            Self::Deny => "deny",
        }
    }
}

/// One MCP server: a program the bot starts (stdio) or a URL it connects to (streamable
/// HTTP).
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSettings {
    /// `[a-z0-9_-]`, unique; the tools are offered as `mcp__<name>__<tool>`.
    pub name: String,
    /// A disabled server is not started and its tools are not offered.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// stdio: the program and its arguments. The program is found on PATH (the bot's, or
    /// the one `env` sets).
    #[serde(default)]
    pub command: Vec<String>,
    /// Streamable HTTP: the server's endpoint (`http://` or `https://`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_url"
    )]
    pub url: Option<String>,
    /// HTTP only: sent as `Authorization: Bearer <token>`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_secret"
    )]
    pub bearer_token: Option<SecretString>,
    /// HTTP only: a file holding the token (read at every connection, so a rotated token
    /// is used from the next reconnection on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_file: Option<PathBuf>,
    /// stdio only: the server's whole environment. Nothing else of the bot's reaches it,
    /// except PATH when this does not set PATH. Values are secrets: never printed.
    #[serde(default, serialize_with = "serialize_secret_values")]
    pub env: BTreeMap<String, SecretString>,
    /// Whether the gate may take the server's own annotations (`readOnlyHint`,
    /// `destructiveHint`) as the code's judgement of a call where the operator set no policy.
    #[serde(default)]
    pub trust_annotations: bool,
    /// Per tool (by the server's name for it): `auto`, `confirm` or `deny`.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolPolicy>,
    /// The profiles whose channels are offered this server's tools (`agent.default_profile`
    /// and `/profile` choose a channel's).
    #[serde(default = "offered_to_ops")]
    pub profiles: Vec<String>,
}

fn offered_to_ops() -> Vec<String> {
    vec!["ops".to_owned()]
}

fn enabled_by_default() -> bool {
    true
}

impl Default for McpServerSettings {
    fn default() -> Self {
        Self {
            name: String::new(),
            enabled: true,
            command: Vec::new(),
            url: None,
            bearer_token: None,
            bearer_token_file: None,
            env: BTreeMap::new(),
            trust_annotations: false,
            tools: BTreeMap::new(),
            profiles: offered_to_ops(),
        }
    }
}

/// Never shows the token, the environment's values, or a URL's user, password or query.
impl fmt::Debug for McpServerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerSettings")
            .field("name", &self.name)
            .field("enabled", &self.enabled)
            .field("command", &self.command)
            .field("url", &self.url.as_deref().map(shown_url))
            .field(
                "bearer_token",
                &self.bearer_token.as_ref().map(|_| REDACTED),
            )
            .field("bearer_token_file", &self.bearer_token_file)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("trust_annotations", &self.trust_annotations)
            .field("tools", &self.tools)
            .field("profiles", &self.profiles)
            .finish()
    }
}

impl McpSettings {
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs)
    }

    pub fn start_timeout(&self) -> Duration {
        Duration::from_secs(self.start_timeout_secs)
    }

    /// The `n`th wait before a restart (0 for the first): doubling from
    /// `restart_initial_secs`, capped at `restart_max_secs`.
    pub fn restart_delay(&self, failures_before: u32) -> Duration {
        let initial = self.restart_initial_secs.max(1);
        let factor = 1_u64
            .checked_shl(failures_before.min(63))
            .unwrap_or(u64::MAX);
        Duration::from_secs(
            initial
                .saturating_mul(factor)
                .min(self.restart_max_secs.max(initial)),
        )
    }

    /// Checks what serde cannot: names, exactly one transport, the transport's own keys,
    /// readable token files, limits.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, value) in [
            ("mcp.call_timeout_secs", self.call_timeout_secs),
            ("mcp.start_timeout_secs", self.start_timeout_secs),
            ("mcp.result_max_bytes", self.result_max_bytes),
            ("mcp.restart_initial_secs", self.restart_initial_secs),
            ("mcp.restart_max_secs", self.restart_max_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "0", "must be greater than 0"));
            }
        }
        if self.restart_max_secs < self.restart_initial_secs {
            return Err(ConfigError::invalid(
                "mcp.restart_max_secs",
                self.restart_max_secs.to_string(),
                format!(
                    "must be at least mcp.restart_initial_secs ({})",
                    self.restart_initial_secs
                ),
            ));
        }
        let mut names = BTreeSet::new();
        for (i, server) in self.servers.iter().enumerate() {
            let key = format!("mcp.servers[{i}]");
            server.validate(&key)?;
            if !names.insert(server.name.as_str()) {
                return Err(ConfigError::invalid(
                    format!("{key}.name"),
                    format!("{:?}", server.name),
                    "two servers have this name; give each its own",
                ));
            }
        }
        Ok(())
    }

    /// The servers that are started.
    pub fn enabled_servers(&self) -> impl Iterator<Item = &McpServerSettings> {
        self.servers.iter().filter(|s| s.enabled)
    }
}

/// How the bot reaches a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportKind {
    /// A child process speaking JSON-RPC on its stdin and stdout: its program.
    Stdio { program: String },
    /// Streamable HTTP: the endpoint without user, password or query.
    Http { url: String },
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Stdio { program } => write!(f, "stdio ({program})"),
            Self::Http { url } => write!(f, "streamable HTTP ({url})"),
        }
    }
}

impl McpServerSettings {
    /// The transport as shown in status and logs (no secrets).
    pub fn transport(&self) -> TransportKind {
        match (&self.url, self.command.first()) {
            (Some(url), _) => TransportKind::Http {
                url: shown_url(url),
            },
            (None, Some(program)) => TransportKind::Stdio {
                program: program.clone(),
            },
            (None, None) => TransportKind::Stdio {
                program: String::new(),
            },
        }
    }

    /// The operator's policy for a tool, by the server's name for it.
    pub fn policy(&self, tool: &str) -> Option<ToolPolicy> {
        self.tools.get(tool).copied()
    }

    /// The bearer token, from `bearer_token` or read from `bearer_token_file` now.
    pub fn bearer_token(&self) -> Result<Option<SecretString>, String> {
        if let Some(token) = &self.bearer_token {
            return Ok(Some(token.clone()));
        }
        match &self.bearer_token_file {
            Some(path) => read_token_file(path).map(Some),
            None => Ok(None),
        }
    }

    /// Every secret of this server (the token and the environment's values), to keep them
    /// out of logged text the server wrote.
    pub fn secrets(&self) -> Vec<SecretString> {
        let mut secrets: Vec<SecretString> = self.env.values().cloned().collect();
        if let Ok(Some(token)) = self.bearer_token() {
            secrets.push(token);
        }
        secrets
    }

    fn validate(&self, key: &str) -> Result<(), ConfigError> {
        let name_ok = !self.name.is_empty()
            && self.name.chars().count() <= MAX_SERVER_NAME_CHARS
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
            // `__` separates the server from the tool in an offered name.
            && !self.name.contains("__");
        if !name_ok {
            return Err(ConfigError::invalid(
                format!("{key}.name"),
                format!("{:?}", self.name),
                format!(
                    "a server's name is 1 to {MAX_SERVER_NAME_CHARS} characters of a-z, 0-9, _ and - without `__`, e.g. \"git\" or \"issue-tracker\" (its tools are offered as mcp__<name>__<tool>)"
                ),
            ));
        }
        let key = format!("{key} ({:?})", self.name);
        match (&self.url, self.command.is_empty()) {
            (Some(_), false) => {
                return Err(ConfigError::invalid(
                    format!("{key}.url"),
                    "(with command)",
                    "a server has either `command` (a program the bot starts, stdio) or `url` (streamable HTTP), not both",
                ));
            }
            (None, true) => {
                return Err(ConfigError::invalid(
                    format!("{key}.command"),
                    "[]",
                    "set `command = [\"program\", \"arg\", ...]` for a server the bot starts, or `url = \"http://host:port/mcp\"` for one it connects to",
                ));
            }
            (Some(url), true) => self.validate_http(&key, url)?,
            (None, false) => self.validate_stdio(&key)?,
        }
        for tool in self.tools.keys() {
            if tool.is_empty() {
                return Err(ConfigError::invalid(
                    format!("{key}.tools"),
                    "\"\"",
                    "name each tool as the server lists it, e.g. tools = { delete_issue = \"deny\" }",
                ));
            }
        }
        Ok(())
    }

    fn validate_stdio(&self, key: &str) -> Result<(), ConfigError> {
        if self.command[0].trim().is_empty() {
            return Err(ConfigError::invalid(
                format!("{key}.command"),
                format!("{:?}", self.command),
                "the first entry is the program to start; it is empty",
            ));
        }
        if self.command.iter().any(|part| part.contains('\0')) {
            return Err(ConfigError::invalid(
                format!("{key}.command"),
                "(a part with a NUL character)",
                "a program's arguments cannot hold NUL characters",
            ));
        }
        if self.bearer_token.is_some() || self.bearer_token_file.is_some() {
            return Err(ConfigError::invalid(
                format!("{key}.bearer_token"),
                REDACTED,
                "a bearer token is sent to servers reached by `url`; give a server the bot starts its credentials in `env`",
            ));
        }
        for (name, value) in &self.env {
            let name_ok = !name.is_empty() && !name.contains('=') && !name.contains('\0');
            if !name_ok {
                return Err(ConfigError::invalid(
                    format!("{key}.env"),
                    format!("{name:?}"),
                    "an environment variable's name is not empty and holds no `=` or NUL",
                ));
            }
            if value.expose_secret().contains('\0') {
                return Err(ConfigError::invalid(
                    format!("{key}.env.{name}"),
                    REDACTED,
                    "an environment variable's value cannot hold a NUL character",
                ));
            }
        }
        Ok(())
    }

    fn validate_http(&self, key: &str, url: &str) -> Result<(), ConfigError> {
        let parsed = Url::parse(url).map_err(|e| {
            ConfigError::invalid(
                format!("{key}.url"),
                format!("{:?}", shown_url(url)),
                format!("not a URL ({e}); write e.g. \"http://127.0.0.1:8931/mcp\""),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ConfigError::invalid(
                format!("{key}.url"),
                format!("{:?}", shown_url(url)),
                "a streamable HTTP server's URL starts with http:// or https://",
            ));
        }
        if !self.env.is_empty() {
            return Err(ConfigError::invalid(
                format!("{key}.env"),
                "(set)",
                "`env` is the environment of a server the bot starts (`command`); a server reached by `url` runs elsewhere",
            ));
        }
        match (&self.bearer_token, &self.bearer_token_file) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::invalid(
                    format!("{key}.bearer_token_file"),
                    "(with bearer_token)",
                    "set one of bearer_token and bearer_token_file",
                ));
            }
            (None, Some(path)) => {
                read_token_file(path).map_err(|problem| {
                    ConfigError::invalid(
                        format!("{key}.bearer_token_file"),
                        path.display().to_string(),
                        problem,
                    )
                })?;
            }
            (Some(token), None) if token.expose_secret().trim().is_empty() => {
                return Err(ConfigError::invalid(
                    format!("{key}.bearer_token"),
                    "\"\"",
                    "the token is empty; remove the key for a server without one",
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// A token file's content less one trailing newline; its content never appears in an error.
fn read_token_file(path: &Path) -> Result<SecretString, String> {
    let mut content = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => {
            "the file is not UTF-8 text; put the token alone in it".to_owned()
        }
        _ => format!("cannot read the file ({e}); point bearer_token_file at a readable file"),
    })?;
    if content.ends_with('\n') {
        content.pop();
        if content.ends_with('\r') {
            content.pop();
        }
    }
    if content.trim().is_empty() {
        return Err("the file is empty; put the token alone in it".to_owned());
    }
    Ok(SecretString::from(content))
}

/// A URL as it may be shown: scheme, host, port and path; no user, password, query or
/// fragment (any of which may carry a credential).
pub fn shown_url(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => REDACTED.to_owned(),
    }
}

/// For `check-config`: the URL with its password and query (which may carry a key)
/// replaced by `redacted`.
fn serialize_url<S: Serializer>(url: &Option<String>, serializer: S) -> Result<S::Ok, S::Error> {
    let Some(url) = url else {
        return serializer.serialize_none();
    };
    match Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("redacted"));
            }
            if parsed.query().is_some() {
                parsed.set_query(Some("redacted"));
            }
            serializer.serialize_str(parsed.as_str())
        }
        Err(_) => serializer.serialize_str(REDACTED),
    }
}

fn serialize_secret<S: Serializer>(
    secret: &Option<SecretString>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match secret {
        Some(_) => serializer.serialize_str(REDACTED),
        None => serializer.serialize_none(),
    }
}

fn serialize_secret_values<S: Serializer>(
    env: &BTreeMap<String, SecretString>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(env.len()))?;
    for name in env.keys() {
        map.serialize_entry(name, REDACTED)?;
    }
    map.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restart_delays_double_from_the_first_and_stop_at_the_cap() {
        let settings = McpSettings {
            restart_initial_secs: 2,
            restart_max_secs: 30,
            ..McpSettings::default()
        };
        let delays: Vec<u64> = (0..7)
            .map(|n| settings.restart_delay(n).as_secs())
            .collect();
        assert_eq!(delays, [2, 4, 8, 16, 30, 30, 30]);
        assert_eq!(settings.restart_delay(u32::MAX).as_secs(), 30);
    }

    #[test]
    fn shown_urls_lose_credentials_and_queries() {
        assert_eq!(
            shown_url("https://user:pw@mcp.example.com:8443/mcp?token=abc#x"),
            "https://mcp.example.com:8443/mcp"
        );
        assert_eq!(shown_url("not a url with secret"), REDACTED);
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let server = McpServerSettings {
            name: "gh".to_owned(),
            url: Some("https://u:urlpass@h/mcp?key=querysecret".to_owned()),
            bearer_token: Some(SecretString::from("tokensecret")),
            env: BTreeMap::from([("API_KEY".to_owned(), SecretString::from("envsecret"))]),
            ..McpServerSettings::default()
        };
        let shown = format!("{server:?}");
        for secret in ["urlpass", "querysecret", "tokensecret", "envsecret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("API_KEY"), "{shown}");
    }
}
