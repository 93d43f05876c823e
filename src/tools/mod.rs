//! The four built-in tools: `execute_sql`, `execute_command`, `file_operations` and
//! `http_request`. Each has a schema, an assessor (its half of the risk gate) and, from the
//! executor issue on, an executor.

pub mod command;
pub mod files;
pub mod http;
pub mod legible;
pub mod render;
pub mod sql;
pub mod workspace;

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::config::Settings;
use crate::core::risk::Assessment;
use crate::core::tools::{RiskGate, ToolRegistry};

pub use workspace::{PathEscape, Workspace};

/// Builds the registry of built-in tools from the settings. Disabled tools are registered as
/// disabled, so a call to one is denied by policy with a reason that says so.
pub fn builtin_registry(settings: &Settings) -> ToolRegistry {
    let workspace = Workspace::new(&settings.tools.workspace);
    let mut registry = ToolRegistry::new();
    let tools = &settings.tools;
    registry.register_with(
        Arc::new(sql::SqlTool::from_settings(settings)),
        tools.execute_sql.enabled,
    );
    registry.register_with(
        Arc::new(
            command::CommandTool::new(
                workspace.clone(),
                &tools.execute_command,
                &settings.command,
                &settings.output,
            )
            .with_sql_rules(sql::SqlRules::new(
                &tools.execute_sql.allow,
                &tools.execute_sql.deny,
            )),
        ),
        tools.execute_command.enabled,
    );
    registry.register_with(
        Arc::new(files::FileTool::new(
            workspace,
            &tools.file_operations,
            &settings.files,
            &settings.output,
        )),
        tools.file_operations.enabled,
    );
    registry.register_with(
        Arc::new(http::HttpTool::new(
            &settings.http,
            &tools.http_request,
            &settings.output,
        )),
        tools.http_request.enabled,
    );
    registry
}

/// The gate of the built-in tools under the settings' policy.
pub fn builtin_gate(settings: &Settings) -> RiskGate {
    RiskGate::new(builtin_registry(settings), settings.risk.gate_policy())
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
