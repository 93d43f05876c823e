//! Other machines: `ssh host cmd` runs its words as a script there (judged like one here),
//! and `rsync` with `--delete` or `--remove-source-files` removes files.

use super::shells::{run_joined, script_from_input};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["ssh"], Rule::Judge(ssh)).running_code(),
    Program::new(&["rsync"], Rule::Judge(|_, call| rsync(call.args))),
];

const SSH: Spec = Spec::values("BbcDEeFIiJLlmOoPpQRSWw", &[]).exact();

/// `ssh host cmd ...` runs the words as a script on the remote host.
fn ssh(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (_, start) = options::split_operands(invocation.args, &SSH);
    let command = invocation.args.get(start + 1..).unwrap_or_default();
    if command.is_empty() {
        if start < invocation.args.len() && !matches!(invocation.stdin, Stdin::Inherited) {
            return script_from_input(walker, "ssh", invocation.stdin, invocation.depth + 1);
        }
        return Judgement::other("`ssh` opens a shell on another machine");
    }
    run_joined(
        walker,
        invocation,
        command,
        "runs a command on another machine",
    )
}

fn rsync(args: &[Arg]) -> Judgement {
    let deletes = args
        .iter()
        .any(|a| a.may_be(|t| t.starts_with("--del") || t == "--remove-source-files"));
    if deletes {
        Judgement::destroys("`rsync --delete` removes files at the destination")
    } else {
        Judgement::not_whitelisted("rsync")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn remote_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("ssh host ls", Unknown),
            ("rsync -a --delete src/ dst/", Destructive),
        ]);
    }
}
