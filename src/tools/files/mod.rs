//! `file_operations`: read, list, check, write, append, create, delete and move files inside
//! the workspace.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

mod beneath;
mod execute;
pub mod rules;
mod show;

pub use rules::PathRules;

use crate::config::{FileSettings, OutputSettings, Settings, ToolRules};
use crate::core::risk::Assessment;
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, CallBrief, RiskAssessor, Tool, ToolError, ToolOutput,
    ToolSet,
};
use crate::tools::Workspace;

pub const NAME: &str = "file_operations";

/// Adds the file tool as `[files]` and `[tools.file_operations]` set it up.
pub fn register(tools: &mut ToolSet, settings: &Settings) {
    let tool = FileTool::new(
        Workspace::new(&settings.tools.workspace),
        &settings.tools.file_operations,
        &settings.files,
        &settings.output,
    );
    tools.register_with(
        std::sync::Arc::new(tool),
        settings.tools.file_operations.enabled,
    );
}

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
    limits: execute::FileLimits,
}

impl FileTool {
    pub fn new(
        workspace: Workspace,
        rules: &ToolRules,
        files: &FileSettings,
        output: &OutputSettings,
    ) -> Self {
        Self {
            workspace,
            rules: PathRules::new(&rules.allow, &rules.deny),
            limits: execute::FileLimits {
                read_limit_bytes: files.read_limit_bytes,
                list_limit: usize::try_from(files.list_limit).unwrap_or(usize::MAX),
                chat_budget: usize::try_from(output.chat_budget_chars).unwrap_or(usize::MAX),
            },
        }
    }

    /// Runs one call on a blocking thread: the file system has no async API worth the name.
    fn run(&self, args: FileArgs, confirmed: bool) -> Result<ToolOutput, ToolError> {
        // Containment is checked again now, symlinks resolved, for a clear refusal; the
        // descriptor-based opens below are what makes it hold when the workspace changes
        // between this check and the open.
        let refused = |a: Assessment| ToolError::Refused(a.reason().to_owned());
        let rel = self.contained("path", &args.path).map_err(refused)?;
        let shown = args.path.as_str();
        let changes = !matches!(
            args.operation,
            FileOperation::Read | FileOperation::List | FileOperation::Exists
        );
        if changes
            && !confirmed
            && let Some(reason) = git_reason(&rel)
        {
            return Err(ToolError::Refused(format!(
                "refused: {shown:?} {reason}, so changing it needs a person's confirmation. Ask again so it can be confirmed"
            )));
        }
        let root = execute::open_root(self.workspace.root())?;
        let at = execute::At {
            root: &root,
            confirmed,
        };
        let limits = self.limits;
        match args.operation {
            FileOperation::Read => execute::read(&at, &rel, shown, limits),
            FileOperation::List => execute::list(&at, &rel, shown, limits),
            FileOperation::Exists => execute::exists(&at, &rel, shown),
            FileOperation::Write | FileOperation::Append => {
                let content = args.content.as_deref().ok_or_else(|| {
                    ToolError::InvalidArguments("write and append need `content`".to_owned())
                })?;
                execute::write(
                    &at,
                    &rel,
                    shown,
                    content,
                    args.operation == FileOperation::Append,
                )
            }
            FileOperation::Mkdir => execute::mkdir(&at, &rel, shown, args.recursive == Some(true)),
            FileOperation::Delete => {
                execute::delete(&at, &rel, shown, args.recursive == Some(true))
            }
            FileOperation::Move => {
                let destination = args.destination.as_deref().ok_or_else(|| {
                    ToolError::InvalidArguments("move needs `destination`".to_owned())
                })?;
                let to = self
                    .contained("destination", destination)
                    .map_err(refused)?;
                if !confirmed && let Some(reason) = git_reason(&to) {
                    return Err(ToolError::Refused(format!(
                        "refused: the destination {destination:?} {reason}, so a move there needs a person's confirmation. Ask again so it can be confirmed"
                    )));
                }
                execute::rename(&at, &rel, shown, &to, destination)
            }
        }
    }

    /// Resolves a path argument to a workspace-relative path, or says why it is forbidden.
    fn contained(&self, label: &str, path: &str) -> Result<PathBuf, Assessment> {
        let resolved = self
            .workspace
            .resolve(path)
            .map_err(|e| Assessment::Forbidden(format!("the {label} {e}")))?;
        let relative = resolved
            .strip_prefix(self.workspace.root())
            .unwrap_or(&resolved)
            .to_path_buf();
        if let Some(denial) = self.rules.denied(&relative) {
            return Err(Assessment::Forbidden(format!(
                "the {label} {path:?} {denial}"
            )));
        }
        Ok(relative)
    }
}

/// Files that make git run programs or fetch from elsewhere: anything in a `.git` directory
/// (or a `.git` file, which points git at another repository), and the files git reads from
/// the work tree (`.gitattributes` names filter and diff drivers, `.gitmodules` submodule
/// URLs, `.gitconfig` and `.lfsconfig` configuration). Names are compared ignoring case, as
/// case-insensitive file systems (and git on them) do. `Some` says why a change is
/// destructive.
fn git_reason(relative: &Path) -> Option<String> {
    const WORK_TREE_FILES: [&str; 4] =
        [".gitattributes", ".gitmodules", ".gitconfig", ".lfsconfig"];
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        let name = component.as_os_str().to_string_lossy().to_ascii_lowercase();
        let name = name.trim_end_matches(['.', ' ']);
        if name == ".git" {
            return Some(
                "is git's own data (hooks and config there make git run programs)".to_owned(),
            );
        }
        if components.peek().is_none() && WORK_TREE_FILES.contains(&name) {
            return Some(format!(
                "is {name}, which git reads and which can make it run programs or fetch code"
            ));
        }
    }
    None
}

impl RiskAssessor for FileTool {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        let args: FileArgs = match super::parse_arguments(NAME, arguments) {
            Ok(args) => args,
            Err(assessment) => return assessment,
        };
        let relative = match self.contained("path", &args.path) {
            Ok(relative) => relative,
            Err(assessment) => return assessment,
        };
        let path = self.workspace.root().join(&relative);
        let shown = &args.path;
        let existing = std::fs::symlink_metadata(&path).is_ok();
        // A regular file with other names may be one outside the workspace.
        if matches!(
            args.operation,
            FileOperation::Read | FileOperation::Write | FileOperation::Append
        ) && let Ok(meta) = std::fs::metadata(&path)
            && meta.is_file()
            && meta.nlink() > 1
        {
            return Assessment::Forbidden(format!(
                "{shown:?} has {} hard links; a hard-linked file may be a file outside the workspace. Copy the content into a new file if you need it",
                meta.nlink()
            ));
        }
        // What git reads is judged by where the path really leads as well as by its name.
        let real = self.workspace.real_path(&path);
        let git = git_reason(&relative).or_else(|| {
            real.strip_prefix(self.workspace.root())
                .ok()
                .and_then(git_reason)
        });
        match args.operation {
            FileOperation::Read | FileOperation::List | FileOperation::Exists => {
                Assessment::Safe(format!(
                    "{} of {shown:?} only reads inside the workspace",
                    operation_word(args.operation)
                ))
            }
            FileOperation::Write | FileOperation::Append => {
                let size = args.content.as_deref().map_or(0, str::len);
                let word = operation_word(args.operation);
                if path.is_dir() {
                    Assessment::Destructive(format!(
                        "{shown:?} is a directory; writing replaces it"
                    ))
                } else if let Some(reason) = git {
                    Assessment::Destructive(format!("{word} of {shown:?}: it {reason}"))
                } else if existing {
                    Assessment::Destructive(format!("{word} of {shown:?} changes an existing file"))
                } else if self.rules.allowed(&relative) {
                    Assessment::Safe(format!(
                        "{word} of the new file {shown:?} is allowed by the operator's rules"
                    ))
                } else {
                    Assessment::Unknown(format!(
                        "{word} of the new file {shown:?} ({size} bytes) changes the workspace"
                    ))
                }
            }
            FileOperation::Mkdir => {
                let word = operation_word(args.operation);
                if let Some(reason) = git {
                    Assessment::Destructive(format!("{word} {shown:?}: it {reason}"))
                } else if self.rules.allowed(&relative) {
                    Assessment::Safe(format!(
                        "{word} {shown:?} is allowed by the operator's rules"
                    ))
                } else {
                    Assessment::Unknown(format!("{word} {shown:?} changes the workspace"))
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
        FileOperation::Mkdir => "creating the directory",
        FileOperation::Delete => "a delete",
        FileOperation::Move => "a move",
    }
}

impl Tool for FileTool {
    fn name(&self) -> &str {
        NAME
    }

    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        show::whole_call(arguments)
    }

    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        show::brief_call(arguments)
    }

    /// Similar operations: the same operation on paths in the same directory (a move also
    /// to the same destination directory).
    fn similarity(&self, arguments: &Map<String, Value>) -> Option<crate::core::rules::Similarity> {
        let args: FileArgs = super::parse_arguments(NAME, arguments).ok()?;
        let directory = |path: &str| {
            let path = path.trim_start_matches("./");
            path.rfind('/')
                .map_or(String::new(), |i| path[..=i].to_owned())
        };
        let operation = format!("{:?}", args.operation).to_lowercase();
        let dir = directory(&args.path);
        let destination = args
            .destination
            .as_deref()
            .map(directory)
            .unwrap_or_default();
        let shown = if dir.is_empty() { "./" } else { dir.as_str() };
        Some(crate::core::rules::Similarity::new(
            format!("`{operation}` in `{shown}`"),
            &[
                ("operation", operation.clone()),
                ("directory", dir.clone()),
                ("destination", destination),
            ],
        ))
    }

    fn description(&self) -> &str {
        "Work with files in the workspace: read a file, list a directory, check that a path exists, write or append a file, create a directory, delete, or move. Paths are relative to the workspace."
    }

    fn prompt_context(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { Some(self.workspace.top_level().await) })
    }

    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: FileArgs = super::call_arguments(NAME, arguments)?;
            let tool = self.clone();
            let confirmed = approval.is_confirmed();
            tokio::task::spawn_blocking(move || tool.run(args, confirmed))
                .await
                .map_err(|e| ToolError::Failed(format!("the file operation stopped: {e}")))?
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(allow: &[&str], deny: &[&str]) -> (tempfile::TempDir, FileTool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let rules = ToolRules {
            enabled: true,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        let tool = FileTool::new(
            Workspace::new(dir.path()),
            &rules,
            &FileSettings::default(),
            &OutputSettings::default(),
        );
        (dir, tool)
    }

    fn assess(tool: &FileTool, args: Value) -> Assessment {
        let Value::Object(args) = args else {
            unreachable!()
        };
        tool.assess(&args, &AssessContext::default())
    }

    #[test]
    fn operations_are_rated_by_what_they_do() {
        let (dir, t) = tool(&[], &[]);
        std::fs::write(dir.path().join("old.txt"), "x").expect("write");
        let cases = [
            (json!({"operation": "read", "path": "old.txt"}), 'S'),
            (json!({"operation": "list", "path": "."}), 'S'),
            (json!({"operation": "exists", "path": "nope"}), 'S'),
            (
                json!({"operation": "write", "path": "new.txt", "content": "x"}),
                'U',
            ),
            (
                json!({"operation": "write", "path": "old.txt", "content": "x"}),
                'D',
            ),
            (
                json!({"operation": "write", "path": ".", "content": "x"}),
                'D',
            ),
            (
                json!({"operation": "append", "path": "old.txt", "content": "x"}),
                'D',
            ),
            (
                json!({"operation": "append", "path": "new.log", "content": "x"}),
                'U',
            ),
            (json!({"operation": "mkdir", "path": "d/e"}), 'U'),
            (json!({"operation": "delete", "path": "old.txt"}), 'D'),
            (
                json!({"operation": "delete", "path": "d", "recursive": true}),
                'D',
            ),
            (
                json!({"operation": "move", "path": "old.txt", "destination": "b.txt"}),
                'D',
            ),
            (json!({"operation": "move", "path": "old.txt"}), 'U'),
            (json!({"operation": "chmod", "path": "old.txt"}), 'U'),
            (json!({"operation": "read"}), 'U'),
            (json!({"operation": "read", "path": "a", "mode": "x"}), 'U'),
        ];
        for (args, kind) in cases {
            let got = assess(&t, args.clone());
            let ok = matches!(
                (&got, kind),
                (Assessment::Safe(_), 'S')
                    | (Assessment::Unknown(_), 'U')
                    | (Assessment::Destructive(_), 'D')
            );
            assert!(ok, "{args} -> {got:?}, expected {kind}");
        }
    }

    #[test]
    fn escapes_are_denied_for_every_operation_and_both_paths() {
        let (dir, t) = tool(&[], &[]);
        let outside = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        for path in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "~/.ssh/id_rsa",
            "link/secret",
            "",
        ] {
            for op in ["read", "list", "exists", "write", "delete"] {
                let got = assess(&t, json!({"operation": op, "path": path}));
                assert!(
                    matches!(got, Assessment::Forbidden(_)),
                    "{op} {path:?} -> {got:?}"
                );
            }
            let got = assess(
                &t,
                json!({"operation": "move", "path": "a.txt", "destination": path}),
            );
            assert!(
                matches!(got, Assessment::Forbidden(_)),
                "move to {path:?} -> {got:?}"
            );
        }
    }

    #[test]
    fn operator_rules_deny_and_allow_paths() {
        let (_dir, t) = tool(&["scratch"], &[".env", "secrets/prod"]);
        for path in [".env", "app/.env", "secrets/prod/key.pem", "secrets/prod"] {
            let got = assess(&t, json!({"operation": "read", "path": path}));
            assert!(matches!(got, Assessment::Forbidden(_)), "{path} -> {got:?}");
        }
        let got = assess(
            &t,
            json!({"operation": "read", "path": "secrets/dev/key.pem"}),
        );
        assert!(matches!(got, Assessment::Safe(_)), "{got:?}");
        let got = assess(
            &t,
            json!({"operation": "write", "path": "scratch/out.txt", "content": "x"}),
        );
        assert!(matches!(got, Assessment::Safe(_)), "{got:?}");
        let got = assess(
            &t,
            json!({"operation": "delete", "path": "scratch/out.txt"}),
        );
        assert!(matches!(got, Assessment::Destructive(_)), "{got:?}");
    }

    #[test]
    fn glob_rules_deny_and_allow_paths_and_name_the_rule() {
        let (_dir, t) = tool(&["out/**/*.csv"], &["*.pem", "**/secrets/**"]);
        for (path, rule) in [
            ("certs/site.pem", "*.pem"),
            ("app/secrets/token", "**/secrets/**"),
        ] {
            let got = assess(&t, json!({"operation": "read", "path": path}));
            assert!(
                matches!(&got, Assessment::Forbidden(r) if r.contains(&format!("deny rule {rule:?}"))),
                "{path} -> {got:?}"
            );
        }
        let got = assess(
            &t,
            json!({"operation": "write", "path": "out/2026/report.csv", "content": "x"}),
        );
        assert!(matches!(got, Assessment::Safe(_)), "{got:?}");
        let got = assess(
            &t,
            json!({"operation": "write", "path": "out/report.txt", "content": "x"}),
        );
        assert!(matches!(got, Assessment::Unknown(_)), "{got:?}");
    }

    #[test]
    fn changes_to_what_git_reads_are_destructive() {
        let (dir, t) = tool(&["scratch"], &[]);
        for path in [
            ".git/config",
            ".git/hooks/pre-commit",
            "sub/.git/config",
            ".GIT/config",
            ".Git./hooks/x",
            ".git",
            ".gitattributes",
            "lib/.gitmodules",
            ".gitconfig",
            "scratch/.git/config",
            "scratch/.lfsconfig",
        ] {
            for op in ["write", "append"] {
                let got = assess(&t, json!({"operation": op, "path": path, "content": "x"}));
                assert!(
                    matches!(got, Assessment::Destructive(_)),
                    "{op} {path} -> {got:?}"
                );
            }
        }
        let got = assess(&t, json!({"operation": "mkdir", "path": ".git/hooks"}));
        assert!(matches!(got, Assessment::Destructive(_)), "{got:?}");
        // A link to `.git` under another name leads to the same files.
        std::fs::create_dir_all(dir.path().join(".git/hooks")).expect("mkdir");
        std::os::unix::fs::symlink(".git/hooks", dir.path().join("h")).expect("symlink");
        let got = assess(
            &t,
            json!({"operation": "write", "path": "h/pre-commit", "content": "x"}),
        );
        assert!(matches!(got, Assessment::Destructive(_)), "{got:?}");
        // Names that merely look alike are ordinary files.
        for path in [
            ".gitignore",
            "git/config",
            "my.git.txt",
            "docs/.github/x.md",
        ] {
            let got = assess(
                &t,
                json!({"operation": "write", "path": path, "content": "x"}),
            );
            assert!(matches!(got, Assessment::Unknown(_)), "{path} -> {got:?}");
        }
    }

    #[test]
    fn hard_linked_files_are_forbidden_to_read_and_write() {
        let (dir, t) = tool(&[], &[]);
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "s3cret").expect("write");
        std::fs::hard_link(outside.path().join("secret"), dir.path().join("copy")).expect("link");
        for op in ["read", "write", "append"] {
            let got = assess(&t, json!({"operation": op, "path": "copy", "content": "x"}));
            assert!(
                matches!(&got, Assessment::Forbidden(r) if r.contains("2 hard links")),
                "{op} -> {got:?}"
            );
        }
    }

    #[test]
    fn a_symlink_to_proc_is_forbidden() {
        let (dir, t) = tool(&[], &[]);
        std::os::unix::fs::symlink("/proc", dir.path().join("sysinfo")).expect("symlink");
        for (op, path) in [
            ("read", "sysinfo/self/environ"),
            ("list", "sysinfo"),
            ("list", "sysinfo/self"),
            ("exists", "sysinfo/self/environ"),
        ] {
            let got = assess(&t, json!({"operation": op, "path": path}));
            assert!(
                matches!(got, Assessment::Forbidden(_)),
                "{op} {path} -> {got:?}"
            );
        }
    }
}
