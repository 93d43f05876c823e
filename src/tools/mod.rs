//! The built-in tools, one folder each, and each folder the whole of its tool: its name,
//! description and parameters, its assessor (its half of the risk gate), its executor, how
//! its calls are shown (`show.rs`) and its results rendered, what makes two calls alike
//! (`similar.rs`), and how it is built from the settings (`register`).
//!
//! - `sql/`: `execute_sql`; `command/`: `execute_command`; `files/`: `file_operations`;
//!   `http/`: `http_request`.
//!
//! Nothing outside a tool's folder knows a tool by its name: [`BUILTINS`] registers each,
//! and [`builtin_profiles`] says which profile offers which.

pub mod command;
pub mod files;
pub mod http;
pub mod legible;
pub mod mcp;
pub mod render;
pub mod sql;
pub mod workspace;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::config::Settings;
use crate::core::profile::{Offers, Profile, Profiles};
use crate::core::risk::Assessment;
use crate::core::tools::{RiskGate, ToolRegistry, ToolSet};

pub use workspace::{PathEscape, Workspace};

/// How each built-in tool is built from the settings and added to a set: one line per tool.
/// A tool the operator switched off is added as switched off, so a call to it is denied by
/// policy with a reason that says so.
pub const BUILTINS: &[fn(&mut ToolSet, &Settings)] = &[
    sql::register,
    command::register,
    files::register,
    http::register,
];

/// The built-in tools as the settings set them up.
pub fn builtin_tools(settings: &Settings) -> ToolSet {
    let mut tools = ToolSet::new();
    for register in BUILTINS {
        register(&mut tools, settings);
    }
    tools
}

/// A registry that starts with the built-in tools.
pub fn builtin_registry(settings: &Settings) -> ToolRegistry {
    ToolRegistry::from(builtin_tools(settings))
}

/// The gate of the built-in tools under the settings' policy.
pub fn builtin_gate(settings: &Settings) -> RiskGate {
    RiskGate::new(builtin_registry(settings), settings.risk.gate_policy())
}

/// The profiles riskgate ships: `sql` (the SQL tool only, for questions about data) and
/// `ops` (every tool there is). `default` names the profile of channels nobody switched
/// (`agent.default_profile`); `Err` says it names none of them.
pub fn builtin_profiles(default: &str) -> Result<Profiles, String> {
    profiles_with_servers(default, &[])
}

/// The profiles with the MCP servers each offers: a server's tools go to the profiles its
/// `profiles` setting names (`ops` by default), and to no other.
pub fn profiles(settings: &Settings) -> Result<Profiles, String> {
    let servers: Vec<(&str, &[String])> = settings
        .mcp
        .enabled_servers()
        .map(|s| (s.name.as_str(), s.profiles.as_slice()))
        .collect();
    let profiles = profiles_with_servers(&settings.agent.default_profile, &servers)?;
    for (server, named) in &servers {
        if let Some(unknown) = named.iter().find(|p| profiles.get(p).is_none()) {
            return Err(format!(
                "MCP server {server:?} names the profile {unknown:?} in its profiles; the profiles are {}",
                profiles.names().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    Ok(profiles)
}

fn profiles_with_servers(default: &str, servers: &[(&str, &[String])]) -> Result<Profiles, String> {
    let pattern = |server: &str| format!("{}{server}__*", crate::mcp::names::PREFIX);
    let offered_to = |profile: &str| {
        servers
            .iter()
            .filter(|(_, named)| named.iter().any(|p| p == profile))
            .map(|(server, _)| pattern(server))
            .collect::<Vec<_>>()
    };
    let not_offered_to = |profile: &str| {
        servers
            .iter()
            .filter(|(_, named)| !named.iter().any(|p| p == profile))
            .map(|(server, _)| pattern(server))
            .collect::<Vec<_>>()
    };
    let mut sql_tools = vec![sql::NAME.to_owned()];
    sql_tools.extend(offered_to("sql"));
    Profiles::new(
        vec![
            Profile::new(
                "sql",
                "data",
                include_str!("../../prompts/profile_sql.md"),
                Offers::Only(sql_tools),
            ),
            Profile::new(
                "ops",
                "all tools",
                include_str!("../../prompts/profile_ops.md"),
                Offers::AllBut(not_offered_to("ops")),
            ),
        ],
        default,
    )
}

/// Reads a tool's typed arguments for its executor; `Err` goes back to the LLM.
pub(crate) fn call_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<T, crate::core::tools::ToolError> {
    serde_json::from_value(Value::Object(arguments.clone()))
        .map_err(|e| crate::core::tools::ToolError::InvalidArguments(format!("{tool}: {e}")))
}

/// Reads a tool's typed arguments. `Err` is an assessment that says what is wrong, so a
/// malformed call is never auto-run.
pub(crate) fn parse_arguments<T: DeserializeOwned>(
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<T, Assessment> {
    serde_json::from_value(Value::Object(arguments.clone())).map_err(|e| {
        Assessment::Unknown(format!(
            "the arguments of {tool} do not match its schema: {e}"
        ))
    })
}

/// The built-in tools with the default settings (a workspace that is never created), for
/// tests of what shows their calls.
#[cfg(test)]
pub(crate) fn tools_for_tests() -> ToolSet {
    let mut settings = Settings::default();
    settings.tools.workspace = std::path::PathBuf::from("/nonexistent/riskgate-test-workspace");
    builtin_tools(&settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tools::check_tool_name;

    #[test]
    fn every_built_in_tool_is_registered_once_under_a_name_models_take() {
        let mut settings = Settings::default();
        let workspace = tempfile::tempdir().expect("tempdir");
        settings.tools.workspace = workspace.path().to_path_buf();
        let tools = builtin_tools(&settings);
        let names: Vec<&str> = tools.names().collect();
        assert_eq!(
            names,
            [command::NAME, sql::NAME, files::NAME, http::NAME],
            "one tool per registration line, by name"
        );
        for name in names {
            assert_eq!(check_tool_name(name), Ok(()), "{name}");
        }
        // A switched-off tool stays known, so its calls are refused by name.
        settings.tools.http_request.enabled = false;
        let tools = builtin_tools(&settings);
        assert!(tools.is_disabled(http::NAME) && tools.get(http::NAME).is_none());
    }

    #[test]
    fn the_sql_profile_offers_only_the_sql_tool_and_ops_everything() {
        let profiles = builtin_profiles("ops").expect("profiles");
        assert_eq!(profiles.names().collect::<Vec<_>>(), ["sql", "ops"]);
        let sql = profiles.resolve("sql");
        assert!(sql.offers_tool(sql::NAME));
        for other in [command::NAME, files::NAME, http::NAME, "mcp__x__y"] {
            assert!(!sql.offers_tool(other), "{other}");
            assert!(profiles.resolve("ops").offers_tool(other), "{other}");
        }
        assert!(builtin_profiles("root").is_err());
    }

    #[test]
    fn each_mcp_server_is_offered_to_the_profiles_it_names_and_no_other() {
        let mut settings = Settings::default();
        let server = |name: &str, profiles: &[&str]| crate::mcp::McpServerSettings {
            name: name.to_owned(),
            command: vec!["srv".to_owned()],
            profiles: profiles.iter().map(|p| (*p).to_owned()).collect(),
            ..crate::mcp::McpServerSettings::default()
        };
        settings.mcp.servers = vec![
            server("git", &["ops"]),
            server("warehouse", &["sql"]),
            server("both", &["sql", "ops"]),
        ];
        let offered = profiles(&settings).expect("profiles");
        let (sql, ops) = (offered.resolve("sql"), offered.resolve("ops"));
        assert!(ops.offers_tool("mcp__git__log") && !sql.offers_tool("mcp__git__log"));
        assert!(sql.offers_tool("mcp__warehouse__query"));
        assert!(!ops.offers_tool("mcp__warehouse__query"));
        assert!(sql.offers_tool("mcp__both__x") && ops.offers_tool("mcp__both__x"));
        // The built-ins are offered as before.
        assert!(sql.offers_tool(sql::NAME) && !sql.offers_tool(command::NAME));
        assert!(ops.offers_tool(command::NAME));
        settings.mcp.servers = vec![server("git", &["root"])];
        let problem = profiles(&settings).expect_err("an unknown profile");
        assert!(problem.contains("\"root\""), "{problem}");
    }
}
