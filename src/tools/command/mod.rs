//! `execute_command`: one shell command line run in the workspace.

mod assess;
mod danger;
mod git;
mod options;
mod paths;
mod readonly;
mod sed;
mod structure;
mod syntax;
mod words;
mod wrappers;

#[cfg(test)]
mod tests;

pub use assess::{CommandPolicy, assess_command};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::ToolRules;
use crate::core::risk::Assessment;
use crate::core::tools::{AssessContext, RiskAssessor, Tool};
use crate::tools::Workspace;

pub const NAME: &str = "execute_command";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    command: String,
}

/// The command tool: the workspace and the operator's rules.
#[derive(Debug, Clone)]
pub struct CommandTool {
    policy: CommandPolicy,
}

impl CommandTool {
    pub fn new(workspace: Workspace, rules: &ToolRules) -> Self {
        Self {
            policy: CommandPolicy::new(workspace, &rules.allow, &rules.deny),
        }
    }
}

impl RiskAssessor for CommandTool {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        match super::parse_arguments::<CommandArgs>(NAME, arguments) {
            Ok(args) => assess_command(&args.command, &self.policy),
            Err(assessment) => assessment,
        }
    }
}

impl Tool for CommandTool {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Run a shell command line in the workspace directory and return its output and exit status. Read-only commands (ls, cat, grep, git status, ...) run at once; anything else waits for a person."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command line, e.g. `grep -rn TODO src | head -n 20`. Paths are relative to the workspace."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }
}
