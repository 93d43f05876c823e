//! `execute_command`: one shell command line run in the workspace.

mod assess;
pub mod expand;
pub mod plan;

pub use assess::{CommandPolicy, assess_command};
pub use expand::ExpansionRefused;
pub use plan::{NeedsShell, Plan, plan, plan_line};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::ToolRules;
use crate::core::risk::Assessment;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, RiskAssessor, Tool, ToolError, ToolOutput,
};
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

    fn execute<'a>(
        &'a self,
        _arguments: &'a Map<String, Value>,
        _approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async {
            Err(ToolError::Failed(
                "the executor is being written".to_owned(),
            ))
        })
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
