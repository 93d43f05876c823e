//! Version control other than git: Subversion's working-copy queries (`svn status`, `svn
//! info`, `svn diff`, `svn cat`, `svn proplist`).
//!
//! Each reads the working copy's `.svn` database and prints. Subversion keeps no setting
//! that runs a program in the working copy (its `diff-cmd` and editor live in the user's
//! configuration, which a line without a click does not see: its `HOME` is its own); the
//! options that name one, or another configuration, wait. So do the forms that ask the
//! repository rather than the working copy, as the other network queries do: `status -u`,
//! another revision (`-r`, `-c`), a URL, and `log`, `blame`, `list`, `mergeinfo`. The forms
//! that throw work away are destructive: `revert` discards local changes, `delete` removes
//! files, `cleanup --remove-unversioned` deletes what was never committed.
//!
//! Not Mercurial: a repository's own `.hg/hgrc` may name Python extensions and hooks that
//! `hg status` would load.

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb, options_before_wait};
use super::table::{self, Effect, Refusal, TABLE, Table, refuse_urls};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[Program::new(&["svn"], Rule::Subcommands(&SVN))];

const SVN: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::judged(&["status", "st", "stat"], |walker, call| {
            working_copy(walker, call, &STATUS)
        }),
        Verb::judged(
            &[
                "info", "diff", "di", "cat", "proplist", "plist", "pl", "propget", "pget", "pg",
            ],
            |walker, call| working_copy(walker, call, &LOCAL),
        ),
        Verb::judged(
            &[
                "log",
                "blame",
                "praise",
                "annotate",
                "ann",
                "list",
                "ls",
                "mergeinfo",
            ],
            |_, call| {
                Judgement::other(format!(
                    "`{}` asks the repository, over the network",
                    call.program
                ))
            },
        ),
        Verb::judged(&["cleanup"], cleanup),
        Verb::destroys(
            &["revert", "delete", "del", "remove", "rm"],
            "throws away local changes or removes files",
        ),
    ],
    ..SUBCOMMANDS
};

/// The options of Subversion's reading subcommands that take a value.
const SPEC: Spec = Spec::values(
    "rclxF",
    &[
        "revision",
        "change",
        "limit",
        "extensions",
        "depth",
        "targets",
        "changelist",
        "cl",
        "config-dir",
        "config-option",
        "diff-cmd",
        "diff3-cmd",
        "editor-cmd",
        "username",
        "password",
        "encoding",
        "show-item",
        "old",
        "new",
        "search",
        "search-and",
        "native-eol",
    ],
);

/// A configuration or a program other than the working copy's own answer.
const RUNS_OR_CONFIGURES: Refusal = Refusal {
    options: &[
        "config-dir",
        "config-option",
        "diff-cmd",
        "diff3-cmd",
        "editor-cmd",
        "username",
        "password",
    ],
    effect: Effect::Unsafe,
    what: "runs a program or reads another configuration or account",
};

/// Another revision than the working copy's base is the repository's.
const OTHER_REVISION: Refusal = Refusal {
    options: &["r", "revision", "c", "change", "old", "new"],
    effect: Effect::Unsafe,
    what: "asks the repository for another revision, over the network",
};

const LOCAL: Table = Table {
    spec: SPEC,
    path_options: &["targets"],
    refused: &[RUNS_OR_CONFIGURES, OTHER_REVISION],
    ..TABLE
};

const STATUS: Table = Table {
    spec: SPEC,
    path_options: &["targets"],
    refused: &[
        RUNS_OR_CONFIGURES,
        OTHER_REVISION,
        Refusal {
            options: &["u", "show-updates"],
            effect: Effect::Unsafe,
            what: "asks the repository for newer revisions, over the network",
        },
    ],
    ..TABLE
};

/// A working-copy query: its table row, and no URL or repository-relative (`^/`) operand.
fn working_copy(walker: &mut Walker<'_>, call: &Invocation<'_>, row: &Table) -> Judgement {
    let mut judgement = table::judge(walker, call, row);
    refuse_urls(&mut judgement, call);
    if let Some(relative) = call
        .args
        .iter()
        .filter_map(|arg| arg.text())
        .find(|text| text.starts_with("^/"))
    {
        judgement.unknown(format!(
            "`{}` is given {relative}, a path in the repository, which it asks over the network",
            call.program
        ));
    }
    judgement
}

/// `svn cleanup` repairs the working copy's database (a write); with
/// `--remove-unversioned` or `--remove-ignored` it deletes files.
fn cleanup(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let removes = call.args.iter().filter_map(|arg| arg.text()).any(|text| {
        ["--remove-unversioned", "--remove-ignored"]
            .iter()
            .any(|option| text.starts_with(option))
    });
    if removes {
        Judgement::destroys(format!(
            "`{}` deletes the files that were never committed",
            call.program
        ))
    } else {
        Judgement::other(format!(
            "`{}` rewrites the working copy's database",
            call.program
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::tools::command::tests::{Expect, check_in_workspace};

    #[test]
    fn subversion_reads_the_working_copy_and_waits_for_the_repository() {
        use Expect::*;
        check_in_workspace(&[
            ("svn status", Safe),
            ("svn st -q src", Safe),
            ("svn status --depth empty notes.txt", Safe),
            ("svn info", Safe),
            ("svn info --show-item revision", Safe),
            ("svn diff", Safe),
            ("svn diff -x -w notes.txt", Safe),
            ("svn cat notes.txt", Safe),
            ("svn proplist -v src", Safe),
            ("svn propget svn:ignore .", Safe),
            ("svn status | grep '^M'", Safe),
            // The repository, over the network.
            ("svn status -u", Unknown),
            ("svn status --show-updates", Unknown),
            ("svn diff -r 10:20", Unknown),
            ("svn diff -c 42", Unknown),
            ("svn cat -r HEAD notes.txt", Unknown),
            ("svn info https://svn.example.org/repo", Unknown),
            ("svn cat ^/trunk/README", Unknown),
            ("svn log", Unknown),
            ("svn log -l 5", Unknown),
            ("svn blame notes.txt", Unknown),
            ("svn list", Unknown),
            // Programs and configurations.
            ("svn diff --diff-cmd ./x.sh", Unknown),
            ("svn diff --diff-cmd=./x.sh", Unknown),
            ("svn status --config-dir ./conf", Unknown),
            (
                "svn status --config-option config:helpers:diff-cmd=x",
                Unknown,
            ),
            ("svn --config-dir ./conf status", Unknown),
            // Outside the workspace.
            ("svn status /etc", Unknown),
            ("svn diff --targets /etc/list", Unknown),
            // Changes.
            ("svn update", Unknown),
            ("svn commit -m x", Unknown),
            ("svn add notes.txt", Unknown),
            ("svn cleanup", Unknown),
            ("svn", Unknown),
            ("svn revert -R .", Destructive),
            ("svn rm notes.txt", Destructive),
            ("svn delete notes.txt", Destructive),
            ("svn cleanup --remove-unversioned", Destructive),
            ("svn cleanup --remove-ignored .", Destructive),
        ]);
    }
}
