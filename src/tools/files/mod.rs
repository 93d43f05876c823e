//! `file_operations`: read, list, check, write, append, create, delete and move files inside
//! the workspace.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::ToolRules;
use crate::core::risk::Assessment;
use crate::core::tools::{AssessContext, RiskAssessor, Tool};
use crate::tools::Workspace;

pub const NAME: &str = "file_operations";

/// The operations of `file_operations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileOperation {
    Read,
    List,
    Exists,
    Write,
    Append,
    Mkdir,
    Delete,
    Move,
}

impl FileOperation {
    pub const ALL: [&'static str; 8] = [
        "read", "list", "exists", "write", "append", "mkdir", "delete", "move",
    ];
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArgs {
    operation: FileOperation,
    path: String,
    #[serde(default)]
    destination: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    recursive: Option<bool>,
}

/// The file tool: the workspace and the operator's path rules.
#[derive(Debug, Clone)]
pub struct FileTool {
    workspace: Workspace,
    rules: PathRules,
}

impl FileTool {
    pub fn new(workspace: Workspace, rules: &ToolRules) -> Self {
        Self {
            workspace,
            rules: PathRules::new(&rules.allow, &rules.deny),
        }
    }

    /// Resolves a path argument, or says why it is forbidden.
    fn contained(&self, label: &str, path: &str) -> Result<PathBuf, Assessment> {
        let resolved = self
            .workspace
            .resolve(path)
            .map_err(|e| Assessment::Forbidden(format!("the {label} {e}")))?;
        let relative = resolved
            .strip_prefix(self.workspace.root())
            .unwrap_or(&resolved);
        if let Some(entry) = self.rules.denied(relative) {
            return Err(Assessment::Forbidden(format!(
                "the {label} {path:?} is covered by the operator's deny rule {entry:?}"
            )));
        }
        Ok(resolved)
    }
}

/// Operator path rules from `[tools.file_operations]`. An entry without `/` matches any path
/// component of that name (`.env`, `.git`); an entry with `/` matches that workspace-relative
/// path and everything below it.
#[derive(Debug, Clone, Default)]
pub struct PathRules {
    allow: Vec<String>,
    deny: Vec<String>,
}

impl PathRules {
    pub fn new(allow: &[String], deny: &[String]) -> Self {
        let clean = |entries: &[String]| {
            entries
                .iter()
                .map(|e| e.trim().trim_matches('/').to_owned())
                .filter(|e| !e.is_empty())
                .collect()
        };
        Self {
            allow: clean(allow),
            deny: clean(deny),
        }
    }

    fn denied(&self, relative: &Path) -> Option<&str> {
        self.deny
            .iter()
            .find(|entry| matches_rule(entry, relative))
            .map(String::as_str)
    }

    fn allowed(&self, relative: &Path) -> bool {
        self.allow.iter().any(|entry| matches_rule(entry, relative))
    }
}

fn matches_rule(entry: &str, relative: &Path) -> bool {
    if entry.contains('/') {
        relative.starts_with(entry)
    } else {
        relative.components().any(|c| c.as_os_str() == entry)
    }
}

impl RiskAssessor for FileTool {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        let args: FileArgs = match super::parse_arguments(NAME, arguments) {
            Ok(args) => args,
            Err(assessment) => return assessment,
        };
        let path = match self.contained("path", &args.path) {
            Ok(path) => path,
            Err(assessment) => return assessment,
        };
        let relative = path
            .strip_prefix(self.workspace.root())
            .unwrap_or(&path)
            .to_path_buf();
        let shown = &args.path;
        match args.operation {
            FileOperation::Read | FileOperation::List | FileOperation::Exists => {
                Assessment::Safe(format!(
                    "{} of {shown:?} only reads inside the workspace",
                    operation_word(args.operation)
                ))
            }
            FileOperation::Write => {
                let size = args.content.as_deref().map_or(0, str::len);
                if path.is_dir() {
                    Assessment::Destructive(format!(
                        "{shown:?} is a directory; writing replaces it"
                    ))
                } else if path.exists() {
                    Assessment::Destructive(format!(
                        "writing {shown:?} overwrites an existing file"
                    ))
                } else if self.rules.allowed(&relative) {
                    Assessment::Safe(format!(
                        "writing the new file {shown:?} is allowed by the operator's rules"
                    ))
                } else {
                    Assessment::Unknown(format!(
                        "writing the new file {shown:?} ({size} bytes) changes the workspace"
                    ))
                }
            }
            FileOperation::Append | FileOperation::Mkdir => {
                let word = operation_word(args.operation);
                if self.rules.allowed(&relative) {
                    Assessment::Safe(format!(
                        "{word} of {shown:?} is allowed by the operator's rules"
                    ))
                } else {
                    Assessment::Unknown(format!("{word} of {shown:?} changes the workspace"))
                }
            }
            FileOperation::Delete => {
                let what = if args.recursive == Some(true) {
                    "recursively deletes"
                } else {
                    "deletes"
                };
                Assessment::Destructive(format!("this {what} {shown:?}"))
            }
            FileOperation::Move => {
                let Some(destination) = args.destination.as_deref() else {
                    return Assessment::Unknown("a move needs a `destination` argument".to_owned());
                };
                if let Err(assessment) = self.contained("destination", destination) {
                    return assessment;
                }
                Assessment::Destructive(format!(
                    "moving {shown:?} to {destination:?} removes the original name and may overwrite the destination"
                ))
            }
        }
    }
}

fn operation_word(operation: FileOperation) -> &'static str {
    match operation {
        FileOperation::Read => "a read",
        FileOperation::List => "a listing",
        FileOperation::Exists => "an existence check",
        FileOperation::Write => "a write",
        FileOperation::Append => "an append",
        FileOperation::Mkdir => "creating a directory",
        FileOperation::Delete => "a delete",
        FileOperation::Move => "a move",
    }
}

impl Tool for FileTool {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "Work with files in the workspace: read a file, list a directory, check that a path exists, write or append a file, create a directory, delete, or move. Paths are relative to the workspace."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "enum": FileOperation::ALL,
                    "description": "What to do."
                },
                "path": {
                    "type": "string",
                    "description": "The file or directory, relative to the workspace."
                },
                "destination": {
                    "type": "string",
                    "description": "For move: the new path."
                },
                "content": {
                    "type": "string",
                    "description": "For write and append: the text to write."
                },
                "recursive": {
                    "type": "boolean",
                    "description": "For delete: also delete a non-empty directory. For mkdir: create missing parents."
                }
            },
            "required": ["operation", "path"],
            "additionalProperties": false
        })
    }
}
