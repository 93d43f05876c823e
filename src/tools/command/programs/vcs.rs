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
//! Mercurial's queries of the working copy and the local history (`hg status`, `hg log`,
//! `hg diff`, `hg annotate`, `hg cat`, `hg heads`, ...). A repository's own `.hg/hgrc` may
//! name Python extensions and hooks that `hg status` would load, so a line without a click
//! runs hg with no configuration at all: `HGRCSKIPREPO` (the repository's files are not
//! read), an empty `HGRCPATH` (nor the system's or the user's) and `HGPLAIN` (see
//! `sandbox::hg_environment`). What would bring configuration or code back waits wherever
//! it stands, since hg reads its global options anywhere on the line and takes any
//! unambiguous beginning of a long option: `--config`, `--config-file`, `--debugger`,
//! `--cwd`, `-R`/`--repository` (another repository, maybe outside), and `-S`/`--subrepos`
//! (subrepositories run git or svn). `hg cat -o` writes; the forms that name another
//! repository or a URL (`hg id URL`, `incoming`, `outgoing`) wait like the other network
//! queries; `hg branch NAME` and `hg bookmark NAME` set rather than show. `revert`,
//! `update --clean`, `purge`, `strip`, `rollback` and `remove` throw work away: destructive.

use super::subcommands::{Global, SUBCOMMANDS, Subcommands, Verb, options_before_wait};
use super::table::{self, Effect, Operands, Refusal, TABLE, Table, refuse_urls};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["svn"], Rule::Subcommands(&SVN)),
    Program::new(&["hg"], Rule::Judge(mercurial)),
];

/// Long options of hg that bring configuration or code back, or point it elsewhere; a
/// word that begins one of them (`--conf`) is taken for it, as hg's option parser does.
const HG_REFUSED_LONG: &[&str] = &[
    "config",
    "config-file",
    "debugger",
    "cwd",
    "repository",
    "repo",
    "subrepos",
];

/// Short options of hg that do the same (`-R` another repository, `-S` subrepositories).
const HG_REFUSED_SHORT: &[char] = &['R', 'S'];

/// `hg`: the refusals that hold wherever they stand, then the subcommand's row.
fn mercurial(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    for arg in invocation.args {
        let Some(text) = arg.text() else {
            continue;
        };
        let refused = if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            !name.is_empty() && HG_REFUSED_LONG.iter().any(|o| o.starts_with(name))
        } else {
            text.strip_prefix('-')
                .is_some_and(|short| short.contains(HG_REFUSED_SHORT))
        };
        if refused {
            return Judgement::other(format!(
                "`hg {text}` may load configuration or code, or act on another repository"
            ));
        }
    }
    let mut judgement = super::subcommands::judge(walker, invocation, &HG);
    refuse_urls(&mut judgement, invocation);
    judgement
}

/// The long options of hg's reading subcommands that take a value.
const HG_LONG_VALUES: &[&str] = &[
    "rev",
    "include",
    "exclude",
    "template",
    "style",
    "date",
    "keyword",
    "user",
    "branch",
    "only-branch",
    "prune",
    "limit",
    "line-range",
    "unified",
    "change",
    "from",
    "to",
    "output",
    "skip",
    "encoding",
    "encodingmode",
    "color",
    "pager",
];

/// A row of hg's whose short options taking a value are `shorts` (they differ: `-u` is a
/// user in `log` and the unknown files in `status`, `-b` a branch in `log` and a flag in
/// `diff`).
const fn hg_row(shorts: &'static str, operands: Operands) -> Table {
    Table {
        spec: Spec::values(shorts, HG_LONG_VALUES),
        operands,
        ..TABLE
    }
}

const HG: Subcommands = Subcommands {
    global: Global::Options(Spec::values(
        "",
        &["encoding", "encodingmode", "color", "pager"],
    )),
    verbs: &[
        Verb::reads(&["status", "st"], &hg_row("rIXT", Operands::Paths)),
        Verb::reads(&["diff"], &hg_row("rcIXU", Operands::Paths)),
        Verb::reads(&["log", "history"], &hg_row("dkrLubPlTIX", Operands::Paths)),
        Verb::reads(
            &["annotate", "blame", "files", "parents"],
            &hg_row("rIXT", Operands::Paths),
        ),
        Verb::reads(
            &["cat"],
            &Table {
                refused: &[Refusal {
                    options: &["o", "output"],
                    effect: Effect::Writes,
                    what: "writes each file to a file named by the pattern",
                }],
                ..hg_row("roIXT", Operands::Paths)
            },
        ),
        Verb::reads(&["grep"], &hg_row("rIXT", Operands::PatternThenPaths(&[]))),
        Verb::reads(
            &[
                "summary", "sum", "root", "heads", "branches", "tags", "tip", "manifest",
                "version", "help", "paths",
            ],
            &hg_row("rT", Operands::Text),
        ),
        // The source it is given is a path, checked; a URL waits (see `mercurial`).
        Verb::reads(&["identify", "id"], &hg_row("rT", Operands::Paths)),
        Verb::destroys(
            &[
                "revert", "purge", "clean", "strip", "rollback", "remove", "rm",
            ],
            "throws away local changes, deletes files or removes changesets",
        ),
        Verb::judged(&["update", "up", "checkout", "co"], |_, call| {
            let clean = call.args.iter().any(|arg| {
                arg.text().is_none_or(|t| {
                    t == "--clean"
                        || t.strip_prefix('-')
                            .is_some_and(|short| !short.starts_with('-') && short.contains('C'))
                })
            });
            if clean {
                Judgement::destroys(format!(
                    "`{} --clean` throws away local changes",
                    call.program
                ))
            } else {
                Judgement::not_whitelisted(call.program)
            }
        }),
        Verb::judged(&["branch", "bookmarks", "bookmark"], |_, call| {
            let shows = call.args.iter().all(|arg| {
                arg.text()
                    .is_some_and(|t| matches!(t, "-q" | "--quiet" | "-l" | "--list"))
            });
            if shows {
                Judgement::whitelisted()
            } else {
                Judgement::other(format!(
                    "`{}` given a name or an option sets or moves it",
                    call.program
                ))
            }
        }),
    ],
    ..SUBCOMMANDS
};

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

    #[test]
    fn mercurial_reads_locally_and_waits_for_configuration_and_elsewhere() {
        use Expect::*;
        check_in_workspace(&[
            ("hg status", Safe),
            ("hg st -m src", Safe),
            ("hg status --change tip", Safe),
            ("hg log -l 5", Safe),
            ("hg log -G -T '{rev} {desc}\\n' -k fix -u alice src", Safe),
            ("hg log -p -r tip notes.txt", Safe),
            ("hg diff", Safe),
            ("hg diff -c tip notes.txt", Safe),
            ("hg diff --stat -r 1:2", Safe),
            ("hg annotate -u -l notes.txt", Safe),
            ("hg cat -r 0 notes.txt", Safe),
            ("hg grep -i todo notes.txt", Safe),
            ("hg summary", Safe),
            ("hg root", Safe),
            ("hg heads", Safe),
            ("hg branches", Safe),
            ("hg tags", Safe),
            ("hg id", Safe),
            ("hg branch", Safe),
            ("hg bookmarks", Safe),
            ("hg --color never log -l 3", Safe),
            ("hg log | head", Safe),
            // Configuration and code, wherever they stand, in full or begun.
            ("hg --config extensions.x=./x.py status", Unknown),
            ("hg status --config hooks.pre-status=./x.sh", Unknown),
            ("hg log --conf extensions.x=./x.py", Unknown),
            ("hg log --config-file ./x.rc", Unknown),
            ("hg --debugger log", Unknown),
            ("hg status -S", Unknown),
            ("hg diff --subrepos", Unknown),
            ("hg status -mS", Unknown),
            // Elsewhere.
            ("hg -R /srv/repo log", Unknown),
            ("hg log --repository ../other", Unknown),
            ("hg --cwd /etc status", Unknown),
            ("hg status /etc", Unknown),
            ("hg id https://example.com/repo", Unknown),
            ("hg id ../other", Unknown),
            ("hg incoming", Unknown),
            ("hg outgoing", Unknown),
            // Changes.
            ("hg cat -o out.txt notes.txt", Destructive),
            ("hg cat --output=%s.orig notes.txt", Destructive),
            ("hg branch stable", Unknown),
            ("hg bookmark -d feature", Unknown),
            ("hg commit -m x", Unknown),
            ("hg update -C", Destructive),
            ("hg up --clean default", Destructive),
            ("hg update default", Unknown),
            ("hg revert --all", Destructive),
            ("hg purge", Destructive),
            ("hg strip tip", Destructive),
            ("hg rm notes.txt", Destructive),
            ("hg", Unknown),
        ]);
    }
}
