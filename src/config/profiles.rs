//! `[profiles.NAME]`: the profiles a channel can choose from, as the operator defines them.
//!
//! riskgate ships two, `sql` and `ops`, in this same form ([`shipped`]); an operator's
//! profile of one of those names takes its place. A profile says what the model is told
//! (`prompt`, or `prompt_file`), which tools it offers (`tools`: built-in tools by name;
//! `mcp_servers`: MCP servers by name), and optionally the model its runs ask (`model`), the
//! mode a channel has with it (`mode`), and the channels that start with it (`channels`).
//!
//! ```toml
//! [profiles.payments]
//! summary = "payments data"
//! prompt_file = "prompts/payments.md"   # relative to this file's directory
//! tools = ["execute_sql"]
//! mcp_servers = ["github"]
//! model = "qwen2.5-coder-7b-instruct"
//! mode = "strict"
//! channels = [123456789012345678]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The most characters of a profile's name: it is a slash command's choice.
pub const MAX_NAME_CHARS: usize = 32;

/// One `[profiles.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileSettings {
    /// A few words for people choosing it in `/profile` ("payments data").
    pub summary: String,
    /// What the model is told about its job, after riskgate's own prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// A file holding that text instead; a relative path is read from the directory of the
    /// configuration file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_file: Option<PathBuf>,
    /// The built-in tools it offers, by name; unset: all of them; `[]`: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// The MCP servers whose tools it offers, by name (besides the servers whose own
    /// `profiles` setting names this profile).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<String>,
    /// The model its runs ask; unset: `llm.model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `strict` or `smart`: the mode of a channel that starts with this profile or switches
    /// to it (`/mode` changes it afterwards); unset: the channel's mode stays
    /// (`risk.default_mode` for a new channel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Channels (Discord channel ids; `console`, or the console's `--channel`) that start
    /// with this profile instead of `agent.default_profile`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelName>,
}

/// A channel as the configuration names it: a Discord id (a number) or a name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ChannelName {
    Id(u64),
    Name(String),
}

impl ChannelName {
    /// The channel as the agent knows it.
    pub fn key(&self) -> String {
        match self {
            Self::Id(id) => id.to_string(),
            Self::Name(name) => name.clone(),
        }
    }
}

/// The profiles riskgate ships, in the form an operator writes: `sql` (the SQL tool only,
/// for questions about data) and `ops` (every built-in tool).
pub fn shipped() -> Vec<(String, ProfileSettings)> {
    vec![
        (
            "sql".to_owned(),
            ProfileSettings {
                summary: "data".to_owned(),
                prompt: Some(include_str!("../../prompts/profile_sql.md").to_owned()),
                tools: Some(vec![crate::tools::sql::NAME.to_owned()]),
                ..ProfileSettings::default()
            },
        ),
        (
            "ops".to_owned(),
            ProfileSettings {
                summary: "all tools".to_owned(),
                prompt: Some(include_str!("../../prompts/profile_ops.md").to_owned()),
                ..ProfileSettings::default()
            },
        ),
    ]
}

/// The shipped profiles with the operator's over them: an operator's profile of a shipped
/// name takes its place, in its place; the others follow in name order.
pub fn merged(operator: &BTreeMap<String, ProfileSettings>) -> Vec<(String, ProfileSettings)> {
    let mut all: Vec<(String, ProfileSettings)> = shipped()
        .into_iter()
        .map(|(name, shipped)| {
            let profile = operator.get(&name).cloned().unwrap_or(shipped);
            (name, profile)
        })
        .collect();
    for (name, profile) in operator {
        if !all.iter().any(|(shipped, _)| shipped == name) {
            all.push((name.clone(), profile.clone()));
        }
    }
    all
}

impl ProfileSettings {
    /// The text the model is told: `prompt`, or `prompt_file`'s content, or nothing. `key`
    /// is this profile's table (`profiles.payments`) for the error.
    pub fn prompt_text(&self, key: &str) -> Result<String, ConfigError> {
        match (&self.prompt, &self.prompt_file) {
            (Some(_), Some(_)) => Err(ConfigError::invalid(
                format!("{key}.prompt_file"),
                "set together with prompt",
                "give the prompt inline (prompt) or in a file (prompt_file), not both",
            )),
            (Some(text), None) => Ok(text.clone()),
            (None, Some(path)) => std::fs::read_to_string(path).map_err(|e| {
                ConfigError::invalid(
                    format!("{key}.prompt_file"),
                    path.display().to_string(),
                    format!("cannot read it: {e}"),
                )
            }),
            (None, None) => Ok(String::new()),
        }
    }

    /// `prompt_file` made absolute against `dir`, the configuration file's directory.
    pub(super) fn anchor_prompt_file(&mut self, dir: &Path) {
        if let Some(path) = &mut self.prompt_file
            && path.is_relative()
        {
            *path = dir.join(&*path);
        }
    }
}

/// Whether `name` can name a profile: 1 to [`MAX_NAME_CHARS`] of `a-z`, `0-9`, `_`, `-`.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}
