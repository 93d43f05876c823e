//! The environment layer of the configuration: `RISKGATE__SECTION__KEY` variables, the
//! plain `DISCORD_TOKEN` and `OPENAI_API_KEY`, and `*_FILE` variables that name a file
//! holding a secret (the container-secrets convention).
//!
//! The forms, all documented in `deploy/riskgate.example.toml` and `deploy/OPERATOR.md`:
//!
//! - a key: `RISKGATE__LLM__MODEL=llama3.1`, `RISKGATE__TOOLS__EXECUTE_SQL__ENABLED=false`;
//! - a list key (every key whose value is a list): one value, a comma-separated list, or a
//!   JSON array: `RISKGATE__DISCORD__CHANNELS=123`, `=123,456`, `=[123,456]`; empty clears
//!   the list. Discord ids must be numbers;
//! - a list of tables (`sql.databases`): a JSON array,
//!   `RISKGATE__SQL__DATABASES='[{"name":"main","url":"postgres://..."}]'`, and/or one
//!   variable per field of a numbered entry, `RISKGATE__SQL__DATABASES__0__URL=...`, which
//!   sets that field of the entry the file (or the JSON variable) defines, or adds the entry
//!   next in line; `mcp.servers` likewise (`RISKGATE__MCP__SERVERS__0__COMMAND=npx,-y,pkg`,
//!   a list field as above);
//! - a table of names (a server's `env` and `tools`): a JSON object,
//!   `RISKGATE__MCP__SERVERS__0__ENV='{"GITHUB_TOKEN":"..."}'`, and/or one variable per
//!   name, which keeps its case: `RISKGATE__MCP__SERVERS__0__ENV__GITHUB_TOKEN=...`,
//!   `RISKGATE__MCP__SERVERS__0__TOOLS__delete_issue=deny`;
//! - a secret from a file: any variable above with `_FILE` appended to its name
//!   (`RISKGATE__LLM__API_KEY_FILE=/run/secrets/openai`), and `DISCORD_TOKEN_FILE`,
//!   `OPENAI_API_KEY_FILE`. The file's content, less one trailing newline, is the value; it
//!   never appears in a message.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use config::{Map, Value, ValueKind};

use super::{ConfigError, Settings};

/// Every variable of the layer starts with this (in any case, like the key names).
pub const PREFIX: &str = "RISKGATE__";
/// Appended to a variable's name, it names a file holding the value.
pub const FILE_SUFFIX: &str = "_FILE";

/// Lists whose entries are tables; the environment gives them as JSON or field by field.
const TABLE_LISTS: &[&str] = &["sql.databases", "mcp.servers"];

/// Keys whose value is a table of names the operator chooses (a server's environment, its
/// tools' policies): given as a JSON object, or one variable per name, the name keeping the
/// case it is written in (`RISKGATE__MCP__SERVERS__0__ENV__GITHUB_TOKEN`).
const MAP_KEYS: &[&str] = &["mcp.servers.env", "mcp.servers.tools"];

/// Keys that hold Discord ids (snowflakes), alone or in a list.
const DISCORD_ID_KEYS: &[&str] = &[
    "discord.guild_id",
    "discord.channels",
    "discord.approver_roles",
    "discord.admin_roles",
];

/// What to do when a Discord id is not a number.
const DISCORD_ID_HINT: &str = "a Discord id is a number such as 234567890123456789: in Discord turn on Developer Mode (User Settings > Advanced), then right-click the channel, role or server and choose Copy ID";

/// The process's variables that matter here, by name.
pub struct Environment {
    vars: BTreeMap<String, String>,
}

/// Where the values read from files came from, to keep their content out of error
/// messages: config error origin -> (variable, path).
pub type FileOrigins = BTreeMap<String, (String, PathBuf)>;

impl Environment {
    /// The given variables (tests pass their own; [`Environment::process`] reads the real ones).
    pub fn new<K: Into<String>, V: Into<String>>(vars: impl IntoIterator<Item = (K, V)>) -> Self {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The process environment. Variables of other programs that are not UTF-8 are skipped;
    /// one of riskgate's that is not UTF-8 is an error.
    pub fn process() -> Result<Self, ConfigError> {
        let mut vars = BTreeMap::new();
        for (name, value) in std::env::vars_os() {
            let Ok(name) = name.into_string() else {
                continue;
            };
            match value.into_string() {
                Ok(value) => {
                    vars.insert(name, value);
                }
                Err(_) if is_ours(&name) => {
                    return Err(ConfigError::Env {
                        var: name,
                        problem: "its value is not valid UTF-8; set it to text".to_owned(),
                    });
                }
                Err(_) => {}
            }
        }
        Ok(Self { vars })
    }

    /// A plain variable such as `RISKGATE_CONFIG`, as it is.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A plain secret variable (`DISCORD_TOKEN`) or the file its `_FILE` twin names. Empty
    /// counts as unset (`OPENAI_API_KEY=` in an env file means no key).
    pub fn secret(&self, name: &str) -> Result<Option<String>, ConfigError> {
        let file_var = format!("{name}{FILE_SUFFIX}");
        let direct = self.var(name).filter(|v| !v.is_empty());
        let file = self.var(&file_var).filter(|v| !v.is_empty());
        match (direct, file) {
            (Some(_), Some(_)) => Err(ConfigError::Env {
                var: file_var,
                problem: format!("{name} is set as well; set only one of them"),
            }),
            (Some(value), None) => Ok(Some(value.to_owned())),
            (None, Some(path)) => read_secret_file(&file_var, Path::new(path)).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Applies every `RISKGATE__...` variable to `tree` (the defaults and the file, merged),
    /// and returns where the values read from files came from.
    pub fn overlay(&self, tree: &mut Value) -> Result<FileOrigins, ConfigError> {
        let schema = Schema::new();
        let mut entries: Vec<(Vec<Segment>, String, String, Option<PathBuf>)> = Vec::new();
        let mut seen: BTreeMap<Vec<Segment>, String> = BTreeMap::new();
        for (var, value) in &self.vars {
            if !is_ours(var) {
                continue;
            }
            let rest = &var[PREFIX.len()..];
            let from_file = rest.len() > FILE_SUFFIX.len()
                && rest.is_char_boundary(rest.len() - FILE_SUFFIX.len())
                && rest[rest.len() - FILE_SUFFIX.len()..].eq_ignore_ascii_case(FILE_SUFFIX);
            let rest = if from_file {
                &rest[..rest.len() - FILE_SUFFIX.len()]
            } else {
                rest
            };
            let segments = parse_segments(var, rest)?;
            if let Some(other) = seen.insert(segments.clone(), var.clone()) {
                return Err(ConfigError::Env {
                    var: var.clone(),
                    problem: format!(
                        "{other} sets the same key `{}`; set only one of them",
                        dotted(&segments)
                    ),
                });
            }
            let (value, path) = if from_file {
                let path = PathBuf::from(value);
                (read_secret_file(var, &path)?, Some(path))
            } else {
                (value.clone(), None)
            };
            entries.push((segments, var.clone(), value, path));
        }
        // A whole list before its numbered entries, and entry 0 before entry 1.
        entries.sort_by(|a, b| (a.0.len(), &a.0).cmp(&(b.0.len(), &b.0)));
        let mut origins = FileOrigins::new();
        for (segments, var, value, path) in entries {
            let origin = match &path {
                Some(path) => {
                    let origin = format!("the file {} (named by {var})", path.display());
                    origins.insert(origin.clone(), (var.clone(), path.clone()));
                    origin
                }
                None => format!("the environment variable {var}"),
            };
            let leaf = schema.value(&segments, &var, &value, &origin)?;
            set(tree, &segments, &var, leaf, &schema.lists)?;
        }
        Ok(origins)
    }
}

/// Whether a variable belongs to the `RISKGATE__` layer.
fn is_ours(name: &str) -> bool {
    name.len() > PREFIX.len()
        && name.is_char_boundary(PREFIX.len())
        && name[..PREFIX.len()].eq_ignore_ascii_case(PREFIX)
}

/// Reads a secret file: its content less one trailing newline. The content never appears in
/// an error.
fn read_secret_file(var: &str, path: &Path) -> Result<String, ConfigError> {
    let error = |reason: String| ConfigError::SecretFile {
        var: var.to_owned(),
        path: path.to_path_buf(),
        reason,
    };
    let mut content = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => error("it is not UTF-8 text".to_owned()),
        _ => error(e.to_string()),
    })?;
    if content.ends_with('\n') {
        content.pop();
        if content.ends_with('\r') {
            content.pop();
        }
    }
    if content.is_empty() {
        return Err(error("it is empty".to_owned()));
    }
    Ok(content)
}

/// One part of a variable's name: a key, or the number of a list entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Segment {
    Index(usize),
    Key(String),
}

/// The parts of a variable's name after the prefix: keys in lower case, except a name
/// under one of [`MAP_KEYS`], which keeps its case (and may be all digits).
fn parse_segments(var: &str, rest: &str) -> Result<Vec<Segment>, ConfigError> {
    let mut segments = Vec::new();
    for part in rest.split("__") {
        if part.is_empty() {
            return Err(ConfigError::Env {
                var: var.to_owned(),
                problem: "its name has an empty part; write RISKGATE__SECTION__KEY, parts separated by two underscores".to_owned(),
            });
        }
        let in_map = matches!(segments.last(), Some(Segment::Key(_)))
            && MAP_KEYS.contains(&schema_key(&segments).as_str());
        let segment = if in_map {
            Segment::Key(part.to_owned())
        } else if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse()
                .map(Segment::Index)
                .map_err(|_| ConfigError::Env {
                    var: var.to_owned(),
                    problem: format!("{part} is too large for an entry number"),
                })?
        } else {
            Segment::Key(part.to_ascii_lowercase())
        };
        segments.push(segment);
    }
    Ok(segments)
}

/// The key a variable sets, as written in the file (`sql.databases[0].url`).
fn dotted(segments: &[Segment]) -> String {
    let mut out = String::new();
    for segment in segments {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The key without entry numbers (`sql.databases.url`), to look it up in the schema.
fn schema_key(segments: &[Segment]) -> String {
    let mut keys: Vec<&str> = segments
        .iter()
        .filter_map(|s| match s {
            Segment::Key(k) => Some(k.as_str()),
            Segment::Index(_) => None,
        })
        .collect();
    // A profile's name is the operator's: every profile has the same keys.
    if keys.len() > 2 && keys[0] == "profiles" {
        keys[1] = "*";
    }
    keys.join(".")
}

/// What the environment layer needs to know of the settings' shape: which keys hold lists.
struct Schema {
    lists: BTreeSet<String>,
}

impl Schema {
    /// Found from the defaults, so a list key added later is a list here too.
    fn new() -> Self {
        let mut lists = BTreeSet::new();
        if let Ok(defaults) = toml::Value::try_from(Settings::default()) {
            collect_lists("", &defaults, &mut lists);
        }
        // The lists inside an entry of a list of tables (a server's `command`).
        if let Ok(server) = toml::Value::try_from(crate::mcp::McpServerSettings::default()) {
            collect_lists("mcp.servers", &server, &mut lists);
        }
        // And inside a profile, its lists filled so that none is left out as empty.
        let profile = super::profiles::ProfileSettings {
            tools: Some(vec![String::new()]),
            mcp_servers: vec![String::new()],
            channels: vec![super::profiles::ChannelName::Id(0)],
            ..Default::default()
        };
        if let Ok(profile) = toml::Value::try_from(profile) {
            collect_lists("profiles.*", &profile, &mut lists);
        }
        Self { lists }
    }

    /// The value a variable gives its key.
    fn value(
        &self,
        segments: &[Segment],
        var: &str,
        value: &str,
        origin: &str,
    ) -> Result<Value, ConfigError> {
        let key = schema_key(segments);
        let whole = matches!(segments.last(), Some(Segment::Key(_)));
        let origin = origin.to_owned();
        let env_error = |problem: String| ConfigError::Env {
            var: var.to_owned(),
            problem,
        };
        if whole && TABLE_LISTS.contains(&key.as_str()) {
            let trimmed = value.trim();
            if trimmed.is_empty() {
                return Ok(Value::new(Some(&origin), ValueKind::Array(Vec::new())));
            }
            let upper = var.to_ascii_uppercase();
            let base = upper.strip_suffix(FILE_SUFFIX).unwrap_or(&upper);
            let example = format!(
                "write a JSON list such as [{{\"name\":\"main\",\"url\":\"postgres://user:password@host/db\"}}], or set each field of a numbered entry: {base}__0__NAME, {base}__0__URL"
            );
            let json: serde_json::Value = serde_json::from_str(trimmed)
                .map_err(|e| env_error(format!("`{key}` is not valid JSON ({e}); {example}")))?;
            if !json
                .as_array()
                .is_some_and(|a| a.iter().all(|e| e.is_object()))
            {
                return Err(env_error(format!(
                    "`{key}` must be a JSON list of tables; {example}"
                )));
            }
            return Ok(from_json(&json, &origin));
        }
        if whole && MAP_KEYS.contains(&key.as_str()) {
            let trimmed = value.trim();
            if trimmed.is_empty() {
                return Ok(Value::new(Some(&origin), ValueKind::Table(Map::new())));
            }
            let json: serde_json::Value = serde_json::from_str(trimmed).map_err(|e| {
                env_error(format!(
                    "`{key}` is a table: write a JSON object such as {{\"NAME\": \"value\"}} ({e}), or set one name per variable: {}__NAME",
                    var.to_ascii_uppercase().trim_end_matches(FILE_SUFFIX)
                ))
            })?;
            let is_table_of_strings = json
                .as_object()
                .is_some_and(|o| o.values().all(serde_json::Value::is_string));
            if !is_table_of_strings {
                return Err(env_error(format!(
                    "`{key}` must be a JSON object of names to strings"
                )));
            }
            return Ok(from_json(&json, &origin));
        }
        let is_id = DISCORD_ID_KEYS.contains(&key.as_str());
        if whole && self.lists.contains(&key) {
            let items = split_list(value).map_err(|problem| {
                env_error(format!(
                    "`{key}` is a list: {problem}; write one value, values separated by commas, or a JSON array"
                ))
            })?;
            let items = items
                .into_iter()
                .map(|item| {
                    if is_id {
                        discord_id(&key, &item)
                            .map(|id| Value::new(Some(&origin), ValueKind::U64(id)))
                            .map_err(&env_error)
                    } else {
                        Ok(Value::new(Some(&origin), ValueKind::String(item)))
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::new(Some(&origin), ValueKind::Array(items)));
        }
        if is_id {
            if value.trim().is_empty() {
                return Ok(Value::new(Some(&origin), ValueKind::Nil));
            }
            let id = discord_id(&key, value.trim()).map_err(env_error)?;
            return Ok(Value::new(Some(&origin), ValueKind::U64(id)));
        }
        // Scalars stay text: the settings' types parse it (numbers, true/false/on/off/yes/no).
        Ok(Value::new(
            Some(&origin),
            ValueKind::String(value.to_owned()),
        ))
    }
}

fn collect_lists(prefix: &str, value: &toml::Value, out: &mut BTreeSet<String>) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                collect_lists(&key, v, out);
            }
        }
        toml::Value::Array(_) => {
            out.insert(prefix.to_owned());
        }
        _ => {}
    }
}

/// A list variable's entries: a JSON array (of strings and numbers), else comma-separated
/// values, trimmed; empty is the empty list.
fn split_list(value: &str) -> Result<Vec<String>, String> {
    let trimmed = value.trim();
    if trimmed.starts_with('[') {
        let json: Vec<serde_json::Value> = serde_json::from_str(trimmed)
            .map_err(|e| format!("it starts with [ but is not a JSON array ({e})"))?;
        return json
            .into_iter()
            .map(|item| match item {
                serde_json::Value::String(s) => Ok(s),
                serde_json::Value::Number(n) => Ok(n.to_string()),
                other => Err(format!(
                    "its JSON array holds {other}, not a string or number"
                )),
            })
            .collect();
    }
    Ok(trimmed
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect())
}

fn discord_id(key: &str, item: &str) -> Result<u64, String> {
    item.parse::<u64>().map_err(|_| {
        format!("`{key}` takes Discord ids, and {item:?} is not one; {DISCORD_ID_HINT}")
    })
}

fn from_json(json: &serde_json::Value, origin: &str) -> Value {
    let origin = origin.to_owned();
    let kind = match json {
        serde_json::Value::Null => ValueKind::Nil,
        serde_json::Value::Bool(b) => ValueKind::Boolean(*b),
        serde_json::Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                ValueKind::U64(u)
            } else if let Some(i) = n.as_i64() {
                ValueKind::I64(i)
            } else {
                ValueKind::Float(n.as_f64().unwrap_or_default())
            }
        }
        serde_json::Value::String(s) => ValueKind::String(s.clone()),
        serde_json::Value::Array(items) => {
            ValueKind::Array(items.iter().map(|i| from_json(i, &origin)).collect())
        }
        serde_json::Value::Object(map) => ValueKind::Table(
            map.iter()
                .map(|(k, v)| (k.clone(), from_json(v, &origin)))
                .collect::<Map<_, _>>(),
        ),
    };
    Value::new(Some(&origin), kind)
}

/// Puts `leaf` at `segments` in `tree`, creating sections and list entries on the way.
fn set(
    tree: &mut Value,
    segments: &[Segment],
    var: &str,
    leaf: Value,
    lists: &BTreeSet<String>,
) -> Result<(), ConfigError> {
    let env_error = |problem: String| ConfigError::Env {
        var: var.to_owned(),
        problem,
    };
    let mut node = tree;
    for (depth, segment) in segments.iter().enumerate() {
        let here = dotted(&segments[..depth]);
        let last = depth + 1 == segments.len();
        node = match segment {
            Segment::Key(key) => {
                let names_a_list = matches!(segments[..depth].last(), Some(Segment::Key(_)))
                    && lists.contains(&schema_key(&segments[..depth]));
                if names_a_list || matches!(node.kind, ValueKind::Array(_)) {
                    return Err(env_error(format!(
                        "`{here}` is a list: name an entry by its number, e.g. {}",
                        numbered(var, depth)
                    )));
                }
                if !matches!(node.kind, ValueKind::Table(_)) {
                    node.kind = ValueKind::Table(Map::new());
                }
                let ValueKind::Table(table) = &mut node.kind else {
                    return Err(env_error(format!("`{here}` is not a section")));
                };
                table
                    .entry(key.clone())
                    .or_insert_with(|| Value::new(None, ValueKind::Nil))
            }
            Segment::Index(index) => {
                if matches!(node.kind, ValueKind::Nil) {
                    node.kind = ValueKind::Array(Vec::new());
                }
                let ValueKind::Array(items) = &mut node.kind else {
                    return Err(env_error(format!(
                        "`{here}` is not a list, so it has no entry {index}"
                    )));
                };
                if *index > items.len() {
                    return Err(env_error(format!(
                        "`{here}` has {} entries, so the next one is number {}; number entries 0, 1, 2, ... without gaps (entries from the configuration file count)",
                        items.len(),
                        items.len()
                    )));
                }
                if *index == items.len() {
                    items.push(Value::new(None, ValueKind::Nil));
                }
                &mut items[*index]
            }
        };
        if last {
            *node = leaf;
            return Ok(());
        }
    }
    Ok(())
}

/// `var` with an entry number where part `depth` names a list's field without one:
/// `RISKGATE__SQL__DATABASES__URL` -> `..._DATABASES__0__URL`; a part in place of the number,
/// as in `RISKGATE__SQL__DATABASES__MAIN__URL`, is replaced.
fn numbered(var: &str, depth: usize) -> String {
    let upper = var.to_ascii_uppercase();
    let parts: Vec<&str> = upper[PREFIX.len()..].split("__").collect();
    let mut out: Vec<&str> = parts[..depth].to_vec();
    out.push("0");
    if parts.len() - depth == 1 {
        out.push(parts[depth]);
    } else {
        out.extend(&parts[depth + 1..]);
    }
    format!("{PREFIX}{}", out.join("__"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_found_from_the_defaults() {
        let schema = Schema::new();
        for key in [
            "discord.channels",
            "discord.approver_roles",
            "discord.admin_roles",
            "tools.execute_sql.allow",
            "tools.http_request.deny",
            "command.env_allow",
            "command.sandbox.read_paths",
            "sql.databases",
            "mcp.servers",
            "mcp.servers.command",
        ] {
            assert!(schema.lists.contains(key), "{key} is not seen as a list");
        }
        assert!(!schema.lists.contains("llm.model"));
    }

    #[test]
    fn no_key_ends_in_the_file_suffix() {
        // A key named `..._file` could not be told from a secret file variable.
        let mut keys = BTreeSet::new();
        let defaults = toml::Value::try_from(Settings::default()).expect("defaults");
        fn walk(prefix: &str, value: &toml::Value, out: &mut BTreeSet<String>) {
            if let toml::Value::Table(t) = value {
                for (k, v) in t {
                    out.insert(k.clone());
                    walk(&format!("{prefix}.{k}"), v, out);
                }
            }
        }
        walk("", &defaults, &mut keys);
        assert!(keys.len() > 50, "{keys:?}");
        for key in keys {
            assert!(!key.ends_with("_file"), "{key}");
        }
    }

    #[test]
    fn list_values_split_on_commas_or_read_json() {
        assert_eq!(split_list("123").expect("one"), ["123"]);
        assert_eq!(split_list(" 1, 2 ,3,").expect("some"), ["1", "2", "3"]);
        assert_eq!(split_list("[1, \"a,b\"]").expect("json"), ["1", "a,b"]);
        assert!(split_list("").expect("empty").is_empty());
        assert!(split_list("[1,").is_err());
        assert!(split_list("[null]").is_err());
    }

    #[test]
    fn a_list_field_without_a_number_gets_one_in_the_hint() {
        assert_eq!(
            numbered("RISKGATE__SQL__DATABASES__URL", 2),
            "RISKGATE__SQL__DATABASES__0__URL"
        );
        assert_eq!(
            numbered("RISKGATE__SQL__DATABASES__MAIN__URL", 2),
            "RISKGATE__SQL__DATABASES__0__URL"
        );
    }
}
