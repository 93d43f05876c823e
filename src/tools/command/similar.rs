//! What makes two command lines "similar" for a channel rule: the same program, the same
//! subcommand (for programs that have them) and the same set of flags, whatever their
//! operands and flag values. Only a line of one simple command that runs without a shell
//! can have a rule, and never a program that runs other programs or code (shells, wrappers,
//! interpreters, `find` with its `-exec`, `sed` with its `e` command).

use crate::core::rules::Similarity;

use super::plan::plan_line;
use super::programs::runs_other_code;

/// Programs whose first operand names what they do (`git log`, `kubectl get`).
const WITH_SUBCOMMANDS: &[&str] = &[
    "git",
    "kubectl",
    "oc",
    "helm",
    "docker",
    "podman",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "pip",
    "pip3",
    "go",
    "systemctl",
    "journalctl",
    "terraform",
    "aws",
    "gcloud",
    "az",
    "gh",
    "apt",
    "brew",
    "make",
    "rustup",
    "poetry",
    "uv",
];

/// The similarity of `line`, or `None` when no rule may cover it.
pub fn similarity(line: &str) -> Option<Similarity> {
    let plan = plan_line(line).ok()?;
    let mut commands = plan.commands();
    let command = commands.next()?;
    if commands.next().is_some() {
        return None;
    }
    // Globs expand to what the workspace holds at the time: a shape, not a value.
    if command.words.iter().any(|w| w.pattern.is_some()) {
        return None;
    }
    let argv = command.argv();
    let (program, rest) = argv.split_first()?;
    if program.contains('/') || runs_other_code(program) {
        return None;
    }
    let subcommand = WITH_SUBCOMMANDS
        .contains(program)
        .then(|| rest.iter().find(|a| !a.starts_with('-')).copied())
        .flatten()
        .filter(|word| {
            word.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
        });
    let mut flags: Vec<&str> = rest
        .iter()
        .take_while(|a| **a != "--")
        .filter(|a| a.starts_with('-') && a.len() > 1)
        .map(|a| a.split_once('=').map_or(*a, |(name, _)| name))
        .collect();
    flags.sort_unstable();
    flags.dedup();
    let name = match subcommand {
        Some(sub) => format!("`{program} {sub}`"),
        None => format!("`{program}`"),
    };
    let summary = if flags.is_empty() {
        format!("{name} without flags")
    } else {
        format!("{name} with flags {}", flags.join(" "))
    };
    Some(Similarity::new(
        summary,
        &[
            ("program", (*program).to_owned()),
            ("subcommand", subcommand.unwrap_or_default().to_owned()),
            ("flags", flags.join(" ")),
        ],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(line: &str) -> Option<Vec<String>> {
        similarity(line).map(|s| s.key.into_values().collect())
    }

    #[test]
    fn lines_with_the_same_program_subcommand_and_flags_are_similar() {
        assert_eq!(
            key("kubectl get pods -n prod"),
            key("kubectl get deployments -n staging")
        );
        assert_ne!(
            key("kubectl get pods -n prod"),
            key("kubectl delete pods -n prod")
        );
        assert_ne!(
            key("kubectl get pods -n prod"),
            key("kubectl get pods -n prod -o yaml")
        );
        assert_eq!(key("ls -la src"), key("ls -la docs"));
        assert_ne!(key("ls -la src"), key("ls src"));
        assert_eq!(
            key("git log --oneline -n 5"),
            key("git log -n 20 --oneline")
        );
        assert_eq!(key("git log --format=%H"), key("git log --format=%s"));
        let summary = similarity("kubectl get pods -n prod").map(|s| s.summary);
        assert_eq!(summary.as_deref(), Some("`kubectl get` with flags -n"));
    }

    #[test]
    fn no_rule_covers_shell_lines_several_commands_or_code_runners() {
        for line in [
            "ls | head",
            "ls && rm -rf x",
            "echo $(id)",
            "ls *.txt",
            "bash -c 'ls'",
            "sh script.sh",
            "python3 -c 'print(1)'",
            "env ls",
            "sudo ls",
            "xargs rm",
            "find . -name x -exec rm {} +",
            "sed -n 1p x",
            "awk '{print}' x",
            "./run.sh",
            "/usr/bin/ls",
            "timeout 5 ls",
        ] {
            assert_eq!(similarity(line), None, "{line}");
        }
    }
}
