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

use crate::config::profiles::ProfileSettings;
use crate::config::{ConfigError, Settings};
use crate::core::profile::{Offers, Profile, Profiles};
use crate::core::risk::Assessment;
use crate::core::risk::ChannelMode;
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

/// The names of the built-in tools, as profiles name them.
pub const BUILTIN_NAMES: &[&str] = &[sql::NAME, command::NAME, files::NAME, http::NAME];

/// The profiles riskgate ships (`sql`: the SQL tool only; `ops`: every tool), with no MCP
/// server and no operator's profile. `default` names the profile of channels nobody
/// switched; `Err` says it names none of them.
pub fn builtin_profiles(default: &str) -> Result<Profiles, String> {
    let mut settings = Settings::default();
    settings.agent.default_profile = default.to_owned();
    profiles(&settings).map_err(|e| e.to_string())
}

/// The profiles of the settings: the shipped ones with the operator's `[profiles.NAME]` over
/// them, each offering the built-in tools it names and the MCP servers it names or that
/// name it (a server's `profiles` setting, `ops` by default). `Err` names the setting that
/// is wrong: an unknown tool, server, mode or default, an unreadable prompt file.
pub fn profiles(settings: &Settings) -> Result<Profiles, ConfigError> {
    let servers = &settings.mcp.servers;
    let all = crate::config::profiles::merged(&settings.profiles);
    let mut list = Vec::with_capacity(all.len());
    for (name, profile) in &all {
        list.push(build_profile(settings, name, profile)?);
    }
    for (i, server) in servers.iter().enumerate() {
        if let Some(unknown) = server
            .profiles
            .iter()
            .find(|p| !all.iter().any(|(name, _)| name == *p))
        {
            return Err(ConfigError::invalid(
                format!("mcp.servers[{i}] ({:?}).profiles", server.name),
                format!("{unknown:?}"),
                format!("no such profile; name some of {}", names(&all)),
            ));
        }
    }
    Profiles::new(list, &settings.agent.default_profile).map_err(|problem| {
        ConfigError::invalid(
            "agent.default_profile",
            format!("{:?}", settings.agent.default_profile),
            problem,
        )
    })
}

fn names(all: &[(String, ProfileSettings)]) -> String {
    all.iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One profile of the settings, checked.
fn build_profile(
    settings: &Settings,
    name: &str,
    profile: &ProfileSettings,
) -> Result<Profile, ConfigError> {
    let key = format!("profiles.{name}");
    if !crate::config::profiles::valid_name(name) {
        return Err(ConfigError::invalid(
            key,
            format!("{name:?}"),
            format!(
                "a profile's name is 1 to {} characters of a-z, 0-9, _ and -",
                crate::config::profiles::MAX_NAME_CHARS
            ),
        ));
    }
    if let Some(tools) = &profile.tools
        && let Some(unknown) = tools.iter().find(|t| !BUILTIN_NAMES.contains(&t.as_str()))
    {
        return Err(ConfigError::invalid(
            format!("{key}.tools"),
            format!("{unknown:?}"),
            format!(
                "no built-in tool has that name; the built-in tools are {} (an MCP server goes in mcp_servers)",
                BUILTIN_NAMES.join(", ")
            ),
        ));
    }
    let configured = &settings.mcp.servers;
    if let Some(unknown) = profile
        .mcp_servers
        .iter()
        .find(|s| !configured.iter().any(|c| &c.name == *s))
    {
        let known: Vec<&str> = configured.iter().map(|c| c.name.as_str()).collect();
        return Err(ConfigError::invalid(
            format!("{key}.mcp_servers"),
            format!("{unknown:?}"),
            if known.is_empty() {
                "no MCP server has that name; there is no [[mcp.servers]] entry".to_owned()
            } else {
                format!(
                    "no MCP server has that name; the servers are {}",
                    known.join(", ")
                )
            },
        ));
    }
    let mode = match &profile.mode {
        None => None,
        Some(mode) => Some(mode.parse::<ChannelMode>().map_err(|problem| {
            ConfigError::invalid(format!("{key}.mode"), format!("{mode:?}"), problem)
        })?),
    };
    let model = match profile.model.as_deref().map(str::trim) {
        Some("") => {
            return Err(ConfigError::invalid(
                format!("{key}.model"),
                "\"\"",
                "name a model, or leave model out to use llm.model",
            ));
        }
        model => model.map(str::to_owned),
    };
    let offered = |server: &crate::mcp::McpServerSettings| {
        server.profiles.iter().any(|p| p == name) || profile.mcp_servers.contains(&server.name)
    };
    let pattern = |server: &crate::mcp::McpServerSettings| {
        format!("{}{}__*", crate::mcp::names::PREFIX, server.name)
    };
    let enabled = || settings.mcp.enabled_servers();
    let offers = match (&profile.tools, profile.mcp_servers.is_empty()) {
        // Everything, but the servers offered elsewhere: also tools that come without a
        // server of the settings.
        (None, true) => Offers::AllBut(enabled().filter(|s| !offered(s)).map(pattern).collect()),
        (tools, _) => {
            let mut names: Vec<String> = match tools {
                Some(tools) => tools.clone(),
                None => BUILTIN_NAMES.iter().map(|t| (*t).to_owned()).collect(),
            };
            names.extend(enabled().filter(|s| offered(s)).map(pattern));
            Offers::Only(names)
        }
    };
    Ok(
        Profile::new(name, &profile.summary, profile.prompt_text(&key)?, offers)
            .with_model(model)
            .with_mode(mode)
            .for_channels(profile.channels.iter().map(|c| c.key()).collect()),
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
        let (mut registered, mut named) = (names.clone(), BUILTIN_NAMES.to_vec());
        registered.sort_unstable();
        named.sort_unstable();
        assert_eq!(registered, named, "profiles can name every built-in tool");
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
        let problem = profiles(&settings)
            .expect_err("an unknown profile")
            .to_string();
        assert!(problem.contains("\"root\""), "{problem}");
    }

    fn payments() -> ProfileSettings {
        ProfileSettings {
            summary: "payments data".to_owned(),
            prompt: Some("You help the payments team.".to_owned()),
            tools: Some(vec![sql::NAME.to_owned()]),
            mcp_servers: vec!["github".to_owned()],
            model: Some("big-model".to_owned()),
            mode: Some("strict".to_owned()),
            channels: vec![crate::config::profiles::ChannelName::Id(42)],
            ..ProfileSettings::default()
        }
    }

    #[test]
    fn an_operators_profile_offers_what_it_names_with_its_model_and_mode() {
        let mut settings = Settings::default();
        settings.mcp.servers = vec![
            crate::mcp::McpServerSettings {
                name: "github".to_owned(),
                command: vec!["srv".to_owned()],
                ..crate::mcp::McpServerSettings::default()
            },
            crate::mcp::McpServerSettings {
                name: "jira".to_owned(),
                command: vec!["srv".to_owned()],
                ..crate::mcp::McpServerSettings::default()
            },
        ];
        settings.profiles.insert("payments".to_owned(), payments());
        let all = profiles(&settings).expect("profiles");
        assert_eq!(all.names().collect::<Vec<_>>(), ["sql", "ops", "payments"]);
        let payments = all.resolve("payments");
        assert_eq!(payments.prompt(), "You help the payments team.");
        assert_eq!(payments.model(), Some("big-model"));
        assert_eq!(payments.mode(), Some(ChannelMode::Strict));
        assert!(payments.offers_tool(sql::NAME));
        assert!(payments.offers_tool("mcp__github__create_issue"));
        for not in [command::NAME, files::NAME, http::NAME, "mcp__jira__search"] {
            assert!(!payments.offers_tool(not), "{not}");
        }
        // The shipped profiles are unchanged: ops has both servers (their default), sql none.
        assert!(all.resolve("ops").offers_tool("mcp__jira__search"));
        assert!(!all.resolve("sql").offers_tool("mcp__github__x"));
        assert_eq!(all.resolve("ops").model(), None);

        // An operator's `ops` takes the shipped one's place.
        settings.profiles.insert(
            "ops".to_owned(),
            ProfileSettings {
                summary: "reads".to_owned(),
                tools: Some(vec![files::NAME.to_owned()]),
                ..ProfileSettings::default()
            },
        );
        let all = profiles(&settings).expect("profiles");
        assert_eq!(all.names().collect::<Vec<_>>(), ["sql", "ops", "payments"]);
        let ops = all.resolve("ops");
        assert!(ops.offers_tool(files::NAME) && !ops.offers_tool(command::NAME));
        assert_eq!((ops.summary(), ops.prompt()), ("reads", ""));
    }

    #[test]
    fn a_profile_naming_what_does_not_exist_is_an_error_that_names_it() {
        let problem = |edit: &dyn Fn(&mut ProfileSettings)| {
            let mut settings = Settings::default();
            let mut profile = payments();
            profile.mcp_servers.clear();
            edit(&mut profile);
            settings.profiles.insert("payments".to_owned(), profile);
            profiles(&settings)
                .expect_err("a wrong profile")
                .to_string()
        };
        let tool = problem(&|p| p.tools = Some(vec!["execute_sq".to_owned()]));
        assert!(
            tool.contains("profiles.payments.tools") && tool.contains("\"execute_sq\""),
            "{tool}"
        );
        let server = problem(&|p| p.mcp_servers = vec!["github".to_owned()]);
        assert!(
            server.contains("profiles.payments.mcp_servers") && server.contains("\"github\""),
            "{server}"
        );
        let mode = problem(&|p| p.mode = Some("lax".to_owned()));
        assert!(mode.contains("profiles.payments.mode"), "{mode}");
        let both = problem(&|p| p.prompt_file = Some("/nonexistent/p.md".into()));
        assert!(both.contains("not both"), "{both}");
        let file = problem(&|p| {
            p.prompt = None;
            p.prompt_file = Some("/nonexistent/p.md".into());
        });
        assert!(
            file.contains("profiles.payments.prompt_file") && file.contains("/nonexistent/p.md"),
            "{file}"
        );
        let model = problem(&|p| p.model = Some(" ".to_owned()));
        assert!(model.contains("profiles.payments.model"), "{model}");

        let mut settings = Settings::default();
        settings.profiles.insert("Pay Ments".to_owned(), payments());
        let name = profiles(&settings).expect_err("a bad name").to_string();
        assert!(name.contains("profiles.Pay Ments"), "{name}");
    }
}
