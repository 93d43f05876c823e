//! The shell command assessor. (Being written.)

use crate::core::risk::Assessment;
use crate::tools::Workspace;

/// What the command assessor needs: the workspace and the operator's rules.
#[derive(Debug, Clone)]
pub struct CommandPolicy {
    pub workspace: Workspace,
    /// Extra whitelisted command prefixes, as words (`["make", "test"]`).
    pub allow: Vec<Vec<String>>,
    /// Command prefixes nobody may run, as words (`["kubectl", "delete"]`).
    pub deny: Vec<Vec<String>>,
}

impl CommandPolicy {
    pub fn new(workspace: Workspace, allow: &[String], deny: &[String]) -> Self {
        let words = |entries: &[String]| {
            entries
                .iter()
                .map(|e| e.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .filter(|w| !w.is_empty())
                .collect()
        };
        Self {
            workspace,
            allow: words(allow),
            deny: words(deny),
        }
    }
}

/// Judges one command line.
pub fn assess_command(_line: &str, _policy: &CommandPolicy) -> Assessment {
    Assessment::Unknown("the command assessor is being written".to_owned())
}
