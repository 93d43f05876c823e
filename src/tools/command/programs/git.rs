//! `git`: global options vetted, read-only subcommands whitelisted with their dangerous
//! options refused, and the destructive forms (`push --force`, `reset --hard`, `clean -f`,
//! `branch -D`, `checkout -f` / `-- paths`, `restore`, `stash drop|clear`, `rm`) found in
//! any spelling getopt accepts: combined short flags (`-fdx`), abbreviated long options
//! (`--forc`), `+refspec` and `:ref` pushes. A subcommand or argument only known when the
//! line runs may be a destructive form, so it counts as one.
//!
//! Each subcommand is a row of one table ([`GIT`], the shape of `subcommands.rs`), its
//! destroying and reading forms judged together.
//!
//! Operands of read-only subcommands are checked as paths; revisions such as `HEAD~3` or
//! `main..feature` pass that check because they are relative names inside the workspace.

use super::subcommands::{Global, SUBCOMMANDS, Subcommands, Verb, verb};
use super::table::{Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// `git`, every subcommand.
pub(super) const PROGRAMS: &[Program] = &[Program::new(&["git"], Rule::Subcommands(&GIT))];

/// Every subcommand with a row: the destroying ones first (a subcommand only known when the
/// line runs counts as the first), then the reading ones. Any other is not read-only.
const GIT: Subcommands = Subcommands {
    global: Global::Reader(globals),
    verbs: &[
        Verb::judged(&["push"], push),
        Verb::judged(&["reset"], |_, call| {
            destroys_with(call, &[], &["hard"], "discards uncommitted changes")
        }),
        Verb::judged(&["clean"], |_, call| {
            destroys_with(call, &['f'], &["force"], "deletes untracked files")
        }),
        Verb::judged(&["branch"], branch),
        Verb::judged(&["tag"], tag),
        Verb::judged(&["update-ref"], |_, call| {
            destroys_with(call, &['d'], &["delete"], "deletes a ref")
        }),
        Verb::judged(&["reflog"], reflog),
        Verb::judged(&["gc"], |_, call| {
            destroys_with(
                call,
                &[],
                &["prune"],
                "deletes unreachable commits for good",
            )
        }),
        Verb::destroys(&["prune"], "deletes unreachable commits for good"),
        Verb::destroys(
            &["filter-branch", "filter-repo"],
            "rewrites the whole history of the repository",
        ),
        Verb::judged(&["switch"], switch),
        Verb::judged(&["checkout"], |walker, call| {
            match checkout(walker, call.args) {
                Some(reason) => Judgement::destroys(reason),
                None => Judgement::not_whitelisted(call.program),
            }
        }),
        Verb::destroys(
            &["restore"],
            "overwrites files with their committed content, discarding changes",
        ),
        Verb::destroys(&["rm"], "deletes files"),
        Verb::judged(&["stash"], stash),
        Verb::judged(&["apply"], apply),
        Verb::judged(&["worktree"], worktree),
        Verb::judged(
            &[
                "log",
                "show",
                "diff",
                "whatchanged",
                "shortlog",
                "diff-tree",
                "diff-index",
                "diff-files",
                "range-diff",
            ],
            |w, call| {
                let name = verb(call);
                reading(|j| diff_family(w, name, call.args, j, name != "shortlog"))
            },
        ),
        Verb::reads(&["status"], &STATUS),
        Verb::judged(
            &[
                "rev-parse",
                "rev-list",
                "describe",
                "show-ref",
                "for-each-ref",
                "ls-tree",
                "merge-base",
                "name-rev",
                "version",
                "count-objects",
                "show-branch",
                "cherry",
                "check-ignore",
                "check-attr",
                "check-ref-format",
            ],
            |w, call| reading(|j| revisions(w, verb(call), call.args, j)),
        ),
        Verb::reads(&["ls-files"], &LS_FILES),
        Verb::reads(
            &["fsck"],
            &Table {
                operands: Operands::Text,
                refused: &[Refusal {
                    options: &["lost-found"],
                    effect: Effect::Writes,
                    what: "writes the dangling objects into .git/lost-found",
                }],
                ..TABLE
            },
        ),
        // Checks pack files against their index and, with `-v`, lists their objects.
        Verb::reads(&["verify-pack"], &TABLE),
        Verb::reads(
            &["var"],
            &Table {
                operands: Operands::Text,
                ..TABLE
            },
        ),
        Verb::nested(&["notes"], &NOTES),
        Verb::nested(&["submodule"], &SUBMODULE),
        Verb::nested(&["bisect"], &BISECT),
        Verb::nested(&["multi-pack-index"], &MULTI_PACK_INDEX),
        Verb::reads(&["column"], &COLUMN),
        Verb::reads(&["blame", "annotate"], &BLAME),
        Verb::reads(&["cat-file"], &CAT_FILE),
        Verb::reads(&["grep"], &GREP),
        Verb::judged(&["remote"], |_, call| {
            let listing = call
                .args
                .iter()
                .all(|a| matches!(a.text(), Some("-v" | "--verbose")));
            // `get-url NAME` prints the remote's URL from the configuration; `show` asks the
            // remote itself, over the network, unless `-n` keeps it to what is known here.
            let rest_is = |allowed: &[&str]| {
                call.args[1..].iter().all(|a| {
                    a.text()
                        .is_some_and(|t| !t.starts_with('-') || allowed.contains(&t))
                })
            };
            let url = matches!(call.args.first().and_then(Arg::text), Some("get-url"))
                && rest_is(&["--push", "--all"]);
            let shown_here = matches!(call.args.first().and_then(Arg::text), Some("show"))
                && call.args[1..].iter().any(|a| a.text() == Some("-n"))
                && rest_is(&["-n", "-v", "--verbose"]);
            reading(|j| {
                if !listing && !url && !shown_here {
                    j.unknown("only `git remote`, `git remote -v`, `git remote get-url NAME` and `git remote show -n NAME` are whitelisted");
                }
            })
        }),
        Verb::reads(
            &["stripspace", "patch-id", "get-tar-commit-id"],
            &STRIPSPACE,
        ),
        Verb::reads(&["check-mailmap"], &CHECK_MAILMAP),
        Verb::reads(&["show-index"], &SHOW_INDEX),
        Verb::judged(&["symbolic-ref"], symbolic_ref),
        Verb::judged(&["hash-object"], hash_object),
        Verb::nested(&["commit-graph"], &COMMIT_GRAPH),
        Verb::reads(&["archive"], &ARCHIVE),
        Verb::judged(&["format-patch"], |walker, call| {
            if call.args.iter().any(|a| a.text() == Some("--stdout")) {
                super::table::judge(walker, call, &FORMAT_PATCH)
            } else {
                Judgement::destroys(
                    "`git format-patch` writes a file per commit, replacing files of the same names (`--stdout` prints them)".to_owned(),
                )
            }
        }),
        Verb::nested(&["bundle"], &BUNDLE),
        Verb::nested(&["sparse-checkout"], &SPARSE_CHECKOUT),
        Verb::nested(&["rerere"], &RERERE),
        Verb::judged(&["config"], |w, call| {
            reading(|j| config(w, call.args, j, call.depth))
        }),
    ],
    without: Some("without a subcommand is not a read-only git command"),
    ..SUBCOMMANDS
};

/// `git column`: lays out its standard input in columns.
const COLUMN: Table = Table {
    spec: Spec::values(
        "",
        &[
            "command", "mode", "raw-mode", "width", "indent", "nl", "padding",
        ],
    ),
    operands: Operands::Text,
    ..TABLE
};

const STATUS: Table = Table {
    spec: Spec::values("", &["ignore-submodules", "column", "find-renames"]).optional("uM"),
    ..TABLE
};

/// Words that name revisions or objects, not files.
const REVISIONS: Table = Table {
    operands: Operands::Text,
    ..TABLE
};

/// `git notes` lists (also without a subcommand) and shows; `remove` and `prune` delete.
const NOTES: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(&["list", "show"], &REVISIONS),
        Verb::destroys(&["remove", "prune"], "deletes notes"),
    ],
    implied: Some("list"),
    ..SUBCOMMANDS
};

/// `git submodule` shows each submodule's commit (also without a subcommand); `foreach`
/// runs a command, `update` and `deinit` change the working tree.
const SUBMODULE: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["status", "summary"], &REVISIONS)],
    implied: Some("status"),
    ..SUBCOMMANDS
};

/// `git bisect log` prints the session; every other form moves `HEAD`.
const BISECT: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["log"], &REVISIONS)],
    ..SUBCOMMANDS
};

/// `git stripspace`: its input without trailing blanks (and comments, with `-s`).
const STRIPSPACE: Table = Table {
    operands: Operands::Text,
    ..TABLE
};

/// `git check-mailmap`: the canonical name and address of each contact given (or read from
/// the input, `--stdin`), by the repository's mailmap or the one `--mailmap-file` names.
const CHECK_MAILMAP: Table = Table {
    spec: Spec::values("", &["mailmap-file", "mailmap-blob"]),
    operands: Operands::Text,
    path_options: &["mailmap-file"],
    ..TABLE
};

/// `git show-index`: the objects of the pack index on its input.
const SHOW_INDEX: Table = Table {
    spec: Spec::values("", &["object-format"]),
    operands: Operands::Text,
    ..TABLE
};

/// `git commit-graph verify` checks the commit-graph file; `write` replaces it.
const COMMIT_GRAPH: Subcommands = Subcommands {
    global: Global::Options(Spec::values("", &["object-dir"])),
    verbs: &[Verb::reads(
        &["verify"],
        &Table {
            spec: Spec::values("", &["object-dir"]),
            path_options: &["object-dir"],
            ..REVISIONS
        },
    )],
    ..SUBCOMMANDS
};

/// `git symbolic-ref NAME` prints where a symbolic ref points; given a second name it
/// points it there, and `-d` deletes it.
fn symbolic_ref(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let spec = Spec::values("m", &[]);
    let items = options::parse(call.args, &spec);
    if items.iter().any(|item| item.named(&["d", "delete"], true)) {
        return Judgement::destroys("`git symbolic-ref -d` deletes a symbolic ref".to_owned());
    }
    let operands = options::operands(&items);
    let opaque = super::table::opaque(&items).is_some();
    reading(|j| {
        if operands.len() != 1 || opaque || items.iter().any(|item| item.named(&["m"], false)) {
            j.unknown("`git symbolic-ref` with more than one name points a ref elsewhere");
        }
    })
}

/// `git hash-object FILE...` prints the object name a file would have; `-w` writes the
/// object into the repository, and `--stdin-paths` reads the files' names from the input,
/// where they cannot be checked.
fn hash_object(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let spec = Spec::values("t", &["path"]);
    let items = options::parse(call.args, &spec);
    let mut judgement = Judgement::whitelisted();
    if items.iter().any(|item| item.is(Some('w'), None, false)) {
        judgement.unknown("`git hash-object -w` writes the object into the repository");
    }
    if items.iter().any(|item| item.named(&["stdin-paths"], true)) {
        judgement.unknown(
            "`git hash-object --stdin-paths` reads the names of the files to hash from its input, which cannot be checked",
        );
    }
    if super::table::opaque(&items).is_some() {
        judgement.unknown("`git hash-object` is given a word only known when the line runs");
    }
    operands_as_paths(walker, "git hash-object", &items, &mut judgement);
    judgement
}

/// `git archive TREE [PATH...]`: an archive of a tree, to the output. `-o` writes it to a
/// file; `--remote` asks another repository (over the network, running `--exec` there);
/// `--add-file` reads a file into it.
const ARCHIVE: Table = Table {
    spec: Spec::values(
        "o",
        &[
            "output",
            "remote",
            "exec",
            "format",
            "prefix",
            "add-file",
            "add-virtual-file",
            "mtime",
        ],
    ),
    operands: Operands::Text,
    path_options: &["add-file"],
    refused: &[
        Refusal {
            options: &["o", "output"],
            effect: Effect::Writes,
            what: "writes the archive to a file, replacing it",
        },
        Refusal {
            options: &["remote", "exec"],
            effect: Effect::Unsafe,
            what: "asks another repository, over the network",
        },
    ],
    ..TABLE
};

/// `git format-patch --stdout`: the commits as mails, to the output; `-o` names the
/// directory the files would go to, and the files of `--signature-file` and
/// `--description-file` are read.
const FORMAT_PATCH: Table = Table {
    spec: Spec::values(
        "ov",
        &[
            "output-directory",
            "start-number",
            "subject-prefix",
            "reroll-count",
            "to",
            "cc",
            "from",
            "in-reply-to",
            "signature",
            "signature-file",
            "description-file",
            "suffix",
            "base",
            "interdiff",
            "range-diff",
            "creation-factor",
            "filename-max-length",
        ],
    ),
    operands: Operands::Text,
    path_options: &["signature-file", "description-file"],
    refused: &[Refusal {
        options: &["o", "output-directory"],
        effect: Effect::Writes,
        what: "writes the patches into a directory",
    }],
    ..TABLE
};

/// `git bundle verify` and `list-heads` read a bundle file; `create` writes one.
const BUNDLE: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["create"], "writes a bundle file, replacing it"),
        Verb::reads(&["verify", "list-heads"], &TABLE),
    ],
    ..SUBCOMMANDS
};

/// `git sparse-checkout list` prints the patterns; the other forms change which files the
/// working tree holds.
const SPARSE_CHECKOUT: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["list"], &REVISIONS)],
    ..SUBCOMMANDS
};

/// `git rerere status`, `diff` and `remaining` show recorded conflict resolutions; `clear`,
/// `forget` and `gc` delete them, and `rerere` alone records.
const RERERE: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(
            &["clear", "forget", "gc"],
            "deletes recorded conflict resolutions",
        ),
        Verb::reads(&["status", "diff", "remaining"], &REVISIONS),
    ],
    ..SUBCOMMANDS
};

/// `git multi-pack-index verify` checks the index; `write`, `expire` and `repack` change
/// the object store.
const MULTI_PACK_INDEX: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["verify"], &REVISIONS)],
    ..SUBCOMMANDS
};

/// `--exclude-from` names a file.
const LS_FILES: Table = Table {
    spec: Spec::values(
        "xX",
        &[
            "exclude",
            "exclude-from",
            "exclude-per-directory",
            "format",
            "with-tree",
        ],
    ),
    path_options: &["X", "exclude-from"],
    ..TABLE
};

const BLAME: Table = Table {
    spec: Spec::values(
        "LS",
        &["contents", "ignore-rev", "ignore-revs-file", "date"],
    ),
    path_options: &["S", "contents", "ignore-revs-file"],
    refused: &[Refusal {
        options: &["textconv"],
        effect: Effect::Unsafe,
        what: "runs text conversion programs",
    }],
    ..TABLE
};

const CAT_FILE: Table = Table {
    spec: Spec::values("", &["path"]),
    refused: &[Refusal {
        options: &["textconv", "filters"],
        effect: Effect::Unsafe,
        what: "runs conversion programs",
    }],
    ..TABLE
};

/// The first operand is the pattern unless `-e`/`-f` gives it.
const GREP: Table = Table {
    spec: Spec::values(
        "efABCm",
        &[
            "max-depth",
            "threads",
            "max-count",
            "context",
            "after-context",
            "before-context",
        ],
    )
    .optional("O"),
    operands: Operands::PatternThenPaths(&["e", "f"]),
    path_options: &["f"],
    refused: &[Refusal {
        options: &["O", "open-files-in-pager"],
        effect: Effect::Unsafe,
        what: "opens the files in a pager program",
    }],
    ..TABLE
};

/// A read-only subcommand: `rule` adds what its words make unsafe.
fn reading(rule: impl FnOnce(&mut Judgement)) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    rule(&mut judgement);
    judgement
}

/// Destructive with one of the options, otherwise not read-only.
fn destroys_with(call: &Invocation<'_>, short: &[char], long: &[&str], what: &str) -> Judgement {
    if options::names_any(call.args, short, long) {
        let option = long.first().map_or_else(
            || format!("-{}", short.first().copied().unwrap_or('?')),
            |l| format!("--{l}"),
        );
        Judgement::destroys(format!("`{} {option}` {what}", call.program))
    } else {
        Judgement::not_whitelisted(call.program)
    }
}

/// Configuration keys whose value is a command git runs.
fn runs_program(key: &str) -> bool {
    const SUFFIXES: &[&str] = &[
        ".pager",
        ".editor",
        ".sshcommand",
        ".fsmonitor",
        ".external",
        ".helper",
        ".program",
        ".command",
        ".textconv",
        ".driver",
        ".clean",
        ".smudge",
        ".process",
        ".packobjectshook",
        ".receivepack",
        ".uploadpack",
        ".gitproxy",
        ".difffilter",
        ".askpass",
    ];
    let key = key.to_ascii_lowercase();
    key.starts_with("pager.") || SUFFIXES.iter().any(|suffix| key.ends_with(suffix))
}

/// The options before the subcommand: `-C dir` is checked as a path, `-c key=value` judged
/// for the program it may make git run, the rest refused unless known to be harmless.
/// Returns where the subcommand is.
fn globals(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    judgement: &mut Judgement,
) -> usize {
    let args = invocation.args;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        let Some(text) = arg.text() else { break };
        if !text.starts_with('-') {
            break;
        }
        index += 1;
        match text {
            "-C" => {
                match args.get(index).and_then(Arg::text) {
                    Some(dir) => walker.check_path(judgement, "git -C", dir),
                    None => judgement
                        .unknown("`git -C` is given a directory only known when the line runs"),
                }
                index += 1;
            }
            "-c" => {
                config_override(walker, judgement, args.get(index), invocation.depth);
                index += 1;
            }
            "--config-env" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
            | "--super-prefix" | "--attr-source" | "--list-cmds" => {
                let takes_value = !matches!(text, "--exec-path");
                if takes_value {
                    index += 1;
                }
                global_refusal(judgement, text);
            }
            _ if text.starts_with("-c") => {
                let value = Arg {
                    value: Some(text[2..].to_owned()),
                    ..arg.clone()
                };
                config_override(walker, judgement, Some(&value), invocation.depth);
            }
            _ if text.starts_with("-C") => {
                walker.check_path(judgement, "git -C", &text[2..]);
            }
            _ => global_refusal(judgement, text),
        }
    }
    index
}

fn global_refusal(judgement: &mut Judgement, option: &str) {
    let (name, _) = option.split_once('=').unwrap_or((option, ""));
    let reason = match name.trim_start_matches('-') {
        "P" | "no-pager" | "no-replace-objects" | "literal-pathspecs" | "glob-pathspecs"
        | "noglob-pathspecs" | "icase-pathspecs" | "no-optional-locks" | "no-lazy-fetch"
        | "no-advice" | "bare" | "version" | "help" | "html-path" | "man-path" | "info-path"
        | "list-cmds" => return,
        "config-env" => {
            "`git --config-env` sets configuration from the environment, which can make git run programs"
        }
        "exec-path" => "`git --exec-path` changes where git finds its programs",
        "git-dir" | "work-tree" => "`git --git-dir`/`--work-tree` point git at another repository",
        "p" | "paginate" => "`git --paginate` runs a pager program",
        _ => {
            judgement.unknown(format!(
                "`git {option}` is not a global option known to be safe"
            ));
            return;
        }
    };
    judgement.unknown(reason);
}

/// Configuration keys that only shape what git prints (colours, columns, abbreviations,
/// dates, renames in diffs): `git -c color.ui=always log` reads as `git log`. Not `log.*` as
/// a whole (`log.showSignature` runs gpg), nor `pager.*`, `diff.*` drivers or `core.*`
/// beyond these.
const DISPLAY_KEYS: &[&str] = &[
    "color.ui",
    "color.diff",
    "color.status",
    "color.branch",
    "color.grep",
    "color.decorate",
    "core.quotepath",
    "core.abbrev",
    "column.ui",
    "log.date",
    "log.decorate",
    "log.abbrevcommit",
    "diff.renames",
    "diff.noprefix",
    "diff.mnemonicprefix",
    "diff.relative",
    "status.short",
    "status.branch",
    "grep.linenumber",
    "grep.extendedregexp",
    "blame.date",
    "i18n.logoutputencoding",
];

/// `git -c key=value`: safe only for a key that shapes what git prints ([`DISPLAY_KEYS`]);
/// a key whose value git runs is judged as a script.
fn config_override(
    walker: &mut Walker<'_>,
    judgement: &mut Judgement,
    setting: Option<&Arg>,
    depth: usize,
) {
    let display = setting
        .and_then(Arg::text)
        .and_then(|text| text.split_once('='))
        .is_some_and(|(key, _)| DISPLAY_KEYS.contains(&key.to_ascii_lowercase().as_str()));
    if display {
        return;
    }
    judgement.unknown("`git -c` overrides configuration, which can make git run programs");
    let Some(setting) = setting else { return };
    let Some(text) = setting.text() else {
        judgement.destructive(format!(
            "`git -c {}` sets configuration only known when the line runs, which can make git run any program",
            setting.raw
        ));
        return;
    };
    let Some((key, value)) = text.split_once('=') else {
        return;
    };
    stored_program(walker, key, value, depth);
}

/// Judges a configuration value git will run: a program-valued key, or an alias (a `!`
/// alias is a shell command; any other alias is more git arguments).
fn stored_program(walker: &mut Walker<'_>, key: &str, value: &str, depth: usize) {
    if key.to_ascii_lowercase().starts_with("alias.") {
        match value.strip_prefix('!') {
            Some(script) => walker.script(script, &Stdin::Inherited, depth + 1),
            None => walker.script(&format!("git {value}"), &Stdin::Inherited, depth + 1),
        }
    } else if runs_program(key) {
        walker.script(value, &Stdin::Inherited, depth + 1);
    }
}

/// The non-option words of `args` (after `--` as well).
fn plain_operands(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    let mut after_dashes = false;
    args.iter().filter(move |arg| match arg.text() {
        Some("--") if !after_dashes => {
            after_dashes = true;
            false
        }
        Some(text) => after_dashes || !text.starts_with('-'),
        None => true,
    })
}

/// `git push` with `--force`, `--mirror`, `--delete` or `--prune`, or a `+refspec` or
/// `:ref`, rewrites or deletes remote branches.
fn push(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let args = call.args;
    if options::names_any(
        args,
        &['f', 'd'],
        &["force", "force-with-lease", "mirror", "delete", "prune"],
    ) {
        return Judgement::destroys(
            "`git push` with --force, --mirror, --delete or --prune rewrites or deletes remote branches",
        );
    }
    match plain_operands(args)
        .skip(1)
        .find(|a| a.may_be(|t| t.starts_with('+') || t.starts_with(':')))
    {
        Some(refspec) => Judgement::destroys(format!(
            "`git push ... {}` force-pushes or deletes a remote branch",
            refspec.raw
        )),
        None => Judgement::not_whitelisted(call.program),
    }
}

/// `git branch -D` (or `-d --force`) and `-M`/`-C` destroy; otherwise only listing reads.
fn branch(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let args = call.args;
    let force_delete = options::names_any(args, &['D'], &[])
        || (options::names_any(args, &['d'], &["delete"])
            && options::names_any(args, &['f'], &["force"]));
    if force_delete {
        return Judgement::destroys("`git branch -D` deletes a branch even if it is not merged");
    }
    if options::names_any(args, &['M', 'C'], &[]) {
        return Judgement::destroys(
            "`git branch -M`/`-C` replaces an existing branch of the new name",
        );
    }
    reading(|j| {
        listing(
            walker,
            "branch",
            args,
            j,
            &['a', 'r', 'v', 'l', 'i', 'q'],
            BRANCH_LISTING,
        )
    })
}

/// `git tag -d`/`-f` destroy; otherwise only listing reads.
fn tag(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    if options::names_any(call.args, &['d', 'f'], &["delete", "force"]) {
        return Judgement::destroys("`git tag -d`/`-f` deletes or replaces a tag");
    }
    reading(|j| listing(walker, "tag", call.args, j, &['l', 'n', 'i'], TAG_LISTING))
}

/// `git reflog expire|delete` drop history; `git reflog [show] [options]` reads.
fn reflog(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let args = call.args;
    if let Some(verb) = plain_operands(args).next()
        && verb.may_be(|v| matches!(v, "expire" | "delete"))
    {
        return Judgement::destroys(format!(
            "`git reflog {}` drops the history that recovers lost commits",
            verb.raw
        ));
    }
    match args.first().and_then(Arg::text) {
        None | Some("list" | "exists") => Judgement::whitelisted(),
        Some("show") => reading(|j| diff_family(walker, "reflog show", &args[1..], j, true)),
        Some(text) if text.starts_with('-') => {
            reading(|j| diff_family(walker, "reflog", args, j, true))
        }
        _ => Judgement::not_whitelisted(call.program),
    }
}

/// `git apply` with `--stat`, `--numstat`, `--summary` or `--check` (and without `--apply`)
/// only reports on the patch: what it touches, or whether it would apply. Any other form
/// changes the files the patch names, or deletes them.
fn apply(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let reports = options::names_any(call.args, &[], &["stat", "numstat", "summary", "check"]);
    if !reports || options::names_any(call.args, &[], &["apply"]) {
        return Judgement::destroys(
            "`git apply` changes the files the patch names, and deletes those it removes",
        );
    }
    super::table::judge(walker, call, &APPLY_REPORT)
}

/// `git apply`'s reporting forms: the patches are files; `--build-fake-ancestor` writes an
/// index file, and `--unsafe-paths` lets the patch name files outside the repository.
const APPLY_REPORT: Table = Table {
    spec: Spec::values(
        "pC",
        &[
            "whitespace",
            "exclude",
            "include",
            "directory",
            "build-fake-ancestor",
        ],
    ),
    refused: &[
        Refusal {
            options: &["build-fake-ancestor"],
            effect: Effect::Writes,
            what: "writes an index file",
        },
        Refusal {
            options: &["unsafe-paths"],
            effect: Effect::Unsafe,
            what: "lets the patch name files outside the repository",
        },
    ],
    ..TABLE
};

/// `git switch -C` resets a branch and `--force` discards changes.
fn switch(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    if options::names_any(call.args, &['C'], &["force-create"]) {
        return Judgement::destroys("`git switch -C` resets an existing branch");
    }
    if options::names_any(call.args, &['f'], &["force", "discard-changes"]) {
        return Judgement::destroys("`git switch --force` discards uncommitted changes");
    }
    Judgement::not_whitelisted(call.program)
}

/// `git stash drop|clear` delete stashes; `list` and `show` read.
fn stash(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let args = call.args;
    let Some(verb) = plain_operands(args).next() else {
        return Judgement::not_whitelisted(call.program);
    };
    if verb.may_be(|v| matches!(v, "drop" | "clear")) {
        return Judgement::destroys(format!("`git stash {}` deletes stashed changes", verb.raw));
    }
    match verb.text() {
        Some("list") => reading(|j| diff_family(walker, "stash list", &args[1..], j, true)),
        Some("show") => reading(|j| diff_family(walker, "stash show", &args[1..], j, true)),
        _ => Judgement::not_whitelisted(call.program),
    }
}

/// `git worktree remove --force` deletes a worktree with its changes; `list` reads.
fn worktree(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let args = call.args;
    if let Some(verb) = plain_operands(args).next()
        && verb.may_be(|v| v == "remove")
        && options::names_any(args, &['f'], &["force"])
    {
        return Judgement::destroys(
            "`git worktree remove --force` deletes a worktree with its changes",
        );
    }
    let listing_only = args.first().and_then(Arg::text) == Some("list")
        && args[1..].iter().all(|a| {
            matches!(
                a.text(),
                Some("--porcelain" | "-v" | "--verbose" | "-z" | "--expire")
            ) || a.text().is_some_and(|t| !t.starts_with('-'))
        });
    if listing_only {
        Judgement::whitelisted()
    } else {
        Judgement::not_whitelisted(call.program)
    }
}

/// `git checkout` discards changes with `-f`, with `-- paths`, or when an operand names a
/// path (`.`, an existing file).
fn checkout(walker: &Walker<'_>, args: &[Arg]) -> Option<String> {
    if options::names_any(args, &['f'], &["force"]) {
        return Some("`git checkout -f` discards uncommitted changes".to_owned());
    }
    if options::names_any(args, &['B'], &[]) {
        return Some("`git checkout -B` resets an existing branch".to_owned());
    }
    let spec = Spec::values("bB", &["orphan", "conflict", "pathspec-from-file"]);
    let items = options::parse(args, &spec);
    let mut after_dashes = false;
    for item in &items {
        match item {
            Item::EndOfOptions => after_dashes = true,
            Item::Opaque(word) => {
                return Some(format!(
                    "`git checkout {}` may name files, whose changes it would discard",
                    word.raw
                ));
            }
            Item::Operand(word) => {
                let text = word.text().unwrap_or_default();
                // git expands pathspec globs itself, quoted or not.
                let names_path = after_dashes
                    || word.pattern.is_some()
                    || text.contains(['*', '?', '['])
                    || text == "."
                    || text.starts_with(":/")
                    || walker.workspace().root().join(text).exists();
                if names_path {
                    return Some(format!(
                        "`git checkout {text}` overwrites files with their committed content, discarding changes"
                    ));
                }
            }
            _ if item.named(&["pathspec-from-file"], true) => {
                return Some(
                    "`git checkout --pathspec-from-file` discards changes to files".to_owned(),
                );
            }
            _ => {}
        }
    }
    None
}

/// Options refused on the diff-producing subcommands.
const DIFF_REFUSED: &[(&str, &str)] = &[
    ("ext-diff", "runs an external diff program"),
    ("textconv", "runs text conversion programs"),
];

const LOG_SPEC: Spec = Spec::values(
    "nSGLO",
    &[
        "max-count",
        "skip",
        "since",
        "after",
        "until",
        "before",
        "author",
        "committer",
        "grep",
        "min-parents",
        "max-parents",
        "encoding",
        "grep-reflog",
        "exclude",
        "output",
        "diff-filter",
        "src-prefix",
        "dst-prefix",
        "line-prefix",
        "word-diff-regex",
        "find-object",
        "ignore-matching-lines",
        "anchored",
        "decorate-refs",
        "decorate-refs-exclude",
    ],
);

/// Long options of `git branch` that only list branches.
const BRANCH_LISTING: &[&str] = &[
    "list",
    "all",
    "remotes",
    "verbose",
    "color",
    "no-color",
    "column",
    "no-column",
    "sort",
    "merged",
    "no-merged",
    "contains",
    "no-contains",
    "points-at",
    "format",
    "ignore-case",
    "abbrev",
    "no-abbrev",
    "show-current",
    "quiet",
    "omit-empty",
];

/// Long options of `git tag` that only list tags.
const TAG_LISTING: &[&str] = &[
    "list",
    "sort",
    "contains",
    "no-contains",
    "merged",
    "no-merged",
    "points-at",
    "format",
    "column",
    "no-column",
    "ignore-case",
    "color",
    "omit-empty",
];

/// `git rev-parse`, `rev-list`, `describe` and the other plumbing that names objects and refs.
fn revisions(walker: &mut Walker<'_>, name: &str, args: &[Arg], judgement: &mut Judgement) {
    let spec = Spec::values(
        "",
        &[
            "prefix",
            "default",
            "format",
            "sort",
            "count",
            "points-at",
            "match",
            "exclude",
            "contains",
            "no-contains",
            "merged",
            "no-merged",
        ],
    );
    let items = options::parse(args, &spec);
    operands_as_paths(walker, &format!("git {name}"), &items, judgement);
}

fn diff_family(
    walker: &mut Walker<'_>,
    name: &str,
    args: &[Arg],
    judgement: &mut Judgement,
    refuse_c: bool,
) {
    let items = options::parse(args, &LOG_SPEC);
    if let Some(word) = super::table::opaque(&items) {
        judgement.destructive(format!(
            "`git {name}` is given `{}`, which may become `--output` (write a file) when the line runs",
            word.raw
        ));
    }
    for item in &items {
        if item.named(&["output"], true) {
            let file = item.value().and_then(|v| v.text).unwrap_or("a file");
            judgement.destructive(format!(
                "`git {name} --output` writes to the file {file}, replacing it"
            ));
        }
        for (option, what) in DIFF_REFUSED {
            // `--text` is an option of its own, not an abbreviation of `--textconv`.
            if item.named(&[option], true) && !matches!(item, Item::Long { name: "text", .. }) {
                judgement.unknown(format!("`git {name} --{option}` {what}"));
            }
        }
        if refuse_c && item.is(Some('c'), None, false) {
            judgement.unknown(format!("`git {name} -c` is not whitelisted"));
        }
        if item.named(&["O"], false) {
            value_as_path(walker, &format!("git {name}"), item, judgement);
        }
    }
    operands_as_paths(walker, &format!("git {name}"), &items, judgement);
}

/// `git branch` / `git tag` listing: only listing options, and operands only as patterns
/// after `--list`.
fn listing(
    walker: &mut Walker<'_>,
    name: &str,
    args: &[Arg],
    judgement: &mut Judgement,
    short: &[char],
    long: &[&str],
) {
    let spec = Spec::values("", &["sort", "format", "points-at", "abbrev", "column"]).optional("n");
    let items = options::parse(args, &spec);
    let mut listing = false;
    let mut commit_value_pending = false;
    let mut operands = 0;
    for item in &items {
        match item {
            Item::Short { flag, .. } => {
                if *flag == 'l' {
                    listing = true;
                }
                if !short.contains(flag) {
                    judgement.unknown(format!("`git {name} -{flag}` changes branches or tags"));
                }
                commit_value_pending = false;
            }
            Item::Long {
                name: option,
                value,
                ..
            } => {
                if options::long_matches(option, "list") {
                    listing = true;
                }
                if !long.iter().any(|l| options::long_matches(option, l)) {
                    judgement.unknown(format!("`git {name} --{option}` changes branches or tags"));
                }
                // `--merged`, `--contains` and friends take an optional commit.
                commit_value_pending = value.is_none()
                    && ["merged", "no-merged", "contains", "no-contains"]
                        .iter()
                        .any(|l| options::long_matches(option, l));
            }
            Item::Operand(word) | Item::Opaque(word) => {
                if commit_value_pending {
                    commit_value_pending = false;
                    continue;
                }
                operands += 1;
                if let Some(text) = word.text() {
                    walker.check_path(judgement, &format!("git {name}"), text);
                }
            }
            Item::EndOfOptions => {}
        }
    }
    if operands > 0 && !listing {
        judgement.unknown(format!("`git {name}` with a name creates a branch or tag"));
    }
}

/// `git config` reading: `--get`, `--get-all`, `--get-regexp`, `--list`, or the `get` and
/// `list` subcommands.
fn config(walker: &mut Walker<'_>, args: &[Arg], judgement: &mut Judgement, depth: usize) {
    const READ: &[&str] = &["get", "get-all", "get-regexp", "list"];
    const MODIFIERS: &[&str] = &[
        "global",
        "system",
        "local",
        "worktree",
        "file",
        "blob",
        "show-origin",
        "show-scope",
        "name-only",
        "null",
        "includes",
        "no-includes",
        "type",
        "bool",
        "int",
        "bool-or-int",
        "path",
        "expiry-date",
        "default",
        "all",
        "regexp",
        "value",
        "fixed-value",
    ];
    let spec = Spec::values("f", &["file", "blob", "type", "default", "value"]);
    let items = options::parse(args, &spec);
    let mut reads = false;
    let operands = options::operands(&items);
    // `git config core.pager 'cmd'` stores a program git runs later: judge it now.
    if let [key, value, ..] = operands.as_slice()
        && let (Some(key), Some(value)) = (key.text(), value.text())
    {
        stored_program(walker, key, value, depth);
    }
    if let Some(verb) = operands.first().and_then(|w| w.text())
        && matches!(verb, "get" | "list")
    {
        reads = true;
    }
    // `git config user.name`: a key alone (a section and a name, never a subcommand such
    // as `edit`) is read; a value after it would set it.
    if let [key] = operands.as_slice()
        && key
            .text()
            .is_some_and(|k| k.contains('.') && !k.starts_with('.'))
    {
        reads = true;
    }
    for item in &items {
        match item {
            Item::Short { flag: 'l', .. } => reads = true,
            Item::Short { flag: 'z', .. } => {}
            Item::Short { flag: 'f', .. } => value_as_path(walker, "git config", item, judgement),
            Item::Long { name, .. } if READ.contains(name) => reads = true,
            Item::Long { name: "file", .. } => {
                value_as_path(walker, "git config", item, judgement);
            }
            Item::Long { name, .. } if MODIFIERS.contains(name) => {}
            Item::Short { .. } | Item::Long { .. } => {
                judgement.unknown(format!(
                    "`git config {}` may change configuration",
                    item.shown()
                ));
            }
            _ => {}
        }
    }
    if !reads {
        judgement.unknown("`git config` without --get or --list may change configuration");
    }
}

fn value_as_path(walker: &Walker<'_>, program: &str, item: &Item<'_>, judgement: &mut Judgement) {
    if let Some(text) = item.value().and_then(|v| v.text) {
        walker.check_path(judgement, program, text);
    }
}

fn operands_as_paths(
    walker: &Walker<'_>,
    program: &str,
    items: &[Item<'_>],
    judgement: &mut Judgement,
) {
    for word in options::operands(items) {
        if let Some(text) = word.text() {
            walker.check_path(judgement, program, text);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn git_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("git remote get-url origin", Safe),
            ("git remote get-url --push origin", Safe),
            ("git remote show origin", NotSafe),
            ("git remote set-url origin x", NotSafe),
            ("git remote get-url -x origin", NotSafe),
            ("git stripspace -s < notes.txt", Safe),
            ("git remote show -n origin", Safe),
            ("git remote show origin -n", Safe),
            ("git remote show -x -n origin", NotSafe),
            ("git patch-id --stable < notes.txt", Safe),
            ("git get-tar-commit-id < notes.txt", Safe),
            ("git show-index < notes.txt", Safe),
            ("git check-mailmap 'Alice <a@example.com>'", Safe),
            ("git check-mailmap --mailmap-file=notes.txt Alice", Safe),
            (
                "git check-mailmap --mailmap-file=/etc/passwd Alice",
                NotSafe,
            ),
            ("git symbolic-ref HEAD", Safe),
            ("git symbolic-ref --short -q HEAD", Safe),
            ("git symbolic-ref HEAD refs/heads/other", NotSafe),
            ("git symbolic-ref -m why HEAD", NotSafe),
            ("git symbolic-ref -d HEAD", Destructive),
            ("git symbolic-ref --delete HEAD", Destructive),
            ("git hash-object notes.txt", Safe),
            ("git hash-object -t blob --path=x.txt notes.txt", Safe),
            ("git hash-object -w notes.txt", NotSafe),
            ("git hash-object --stdin-paths < notes.txt", NotSafe),
            ("git hash-object ../outside.txt", NotSafe),
            ("git commit-graph verify", Safe),
            ("git commit-graph verify --shallow", Safe),
            ("git commit-graph verify --object-dir=/etc", NotSafe),
            ("git commit-graph write", NotSafe),
            ("git archive HEAD | tar -t", Safe),
            ("git archive --format=tar --prefix=p/ HEAD src", Safe),
            ("git archive -o out.tar HEAD", Destructive),
            ("git archive --output=out.zip HEAD", Destructive),
            (
                "git archive --remote=https://example.com/r.git HEAD",
                NotSafe,
            ),
            ("git archive --add-file=/etc/shadow HEAD", Unknown),
            ("git format-patch -1 --stdout", Safe),
            ("git format-patch --stdout main..feature | wc -l", Safe),
            ("git format-patch -1", Destructive),
            ("git format-patch -1 --stdout -o out", Destructive),
            (
                "git format-patch --stdout --signature-file=/etc/shadow -1",
                Unknown,
            ),
            ("git bundle verify notes.txt", Safe),
            ("git bundle list-heads notes.txt", Safe),
            ("git bundle verify /etc/shadow", Unknown),
            ("git bundle create repo.bundle --all", Destructive),
            ("git bundle unbundle notes.txt", NotSafe),
            ("git sparse-checkout list", Safe),
            ("git sparse-checkout set src", NotSafe),
            ("git rerere status", Safe),
            ("git rerere diff", Safe),
            ("git rerere clear", Destructive),
            ("git rerere forget notes.txt", Destructive),
            ("git rerere", NotSafe),
            ("git range-diff @{u} @{1} @", Safe),
            ("git apply --check fix.patch", Safe),
            ("git apply --stat --numstat -p1 fix.patch", Safe),
            ("git diff | git apply --check -", Safe),
            ("git apply --summary < fix.patch", Safe),
            ("git apply fix.patch", Destructive),
            ("git apply -R fix.patch", Destructive),
            ("git apply --stat --apply fix.patch", Destructive),
            (
                "git apply --check --build-fake-ancestor=idx fix.patch",
                Destructive,
            ),
            ("git apply --check --unsafe-paths fix.patch", Unknown),
            ("git apply --check /etc/fix.patch", Unknown),
            ("git apply --check $PATCH", Destructive),
            ("git range-diff main...topic --output=x.diff", Destructive),
            ("git fsck", Safe),
            ("git verify-pack -v notes.txt", Safe),
            ("git verify-pack -s /etc/shadow", Unknown),
            ("git fsck --full --no-dangling", Safe),
            ("git fsck --lost-found", Destructive),
            ("git var -l", Safe),
            ("git notes", Safe),
            ("git notes show HEAD", Safe),
            ("git notes add -m x", Unknown),
            ("git notes remove HEAD", Destructive),
            ("git submodule", Safe),
            ("git submodule status --recursive", Safe),
            ("git submodule foreach 'rm -rf x'", NotSafe),
            ("git submodule update --init", Unknown),
            ("git bisect log", Safe),
            ("git bisect start", Unknown),
            ("git multi-pack-index verify", Safe),
            ("git multi-pack-index write", Unknown),
            ("git status -uno src", Safe),
            ("git show-branch --list", Safe),
            ("git branch | git column --mode=column --padding=2", Safe),
            ("seq 1 20 | git column --mode=row", Safe),
            ("git column --mode=column > cols.txt", Destructive),
            ("git cherry -v origin/main", Safe),
            ("git check-ignore -v notes.txt", Safe),
            ("git check-attr --all -- notes.txt", Safe),
            ("git reflog list", Safe),
            ("git reflog -n 5", Safe),
            ("git reflog expire --expire=now --all", Destructive),
            ("git config --list --show-origin", Safe),
            ("git config --local --list", Safe),
            ("git config --global --get user.name", Safe),
            ("git config --local user.name eve", Unknown),
            ("git config --global --unset user.name", Unknown),
            ("git config --show-origin core.pager 'sh -c id'", Unknown),
            ("git diff-tree --stat HEAD", Safe),
            ("git diff-tree --output=out.txt HEAD", Destructive),
            ("git diff-index --ext-diff HEAD", Unknown),
            ("git ls-files -X .gitignore src", Safe),
            ("git ls-files --exclude-from=/etc/passwd", Unknown),
            ("git annotate README.md", Safe),
            ("git blame --textconv README.md", Unknown),
            ("git cat-file -p HEAD:README.md", Safe),
            ("git cat-file --filters HEAD:README.md", Unknown),
            ("git grep -n TODO src", Safe),
            ("git grep -f /etc/patterns", Unknown),
            ("git grep TODO /etc", Unknown),
            ("git log --oneline -n 5", Safe),
            ("git stash list", Safe),
            ("git worktree list", Safe),
            ("git reflog", Safe),
            ("git $VERB", Destructive),
            ("git -C src $VERB", Destructive),
            ("git branch new-branch", Unknown),
            ("git branch -m old new", Unknown),
            ("git tag v1.0", Unknown),
            ("git checkout main", Unknown),
            ("git checkout -b feature", Unknown),
            ("git log --ext-diff", Unknown),
            ("git diff --textconv", Unknown),
            ("git log -c", Unknown),
            ("git -c core.pager=less log", Unknown),
            ("git -c color.ui=always status", Safe),
            ("git -c core.quotePath=false ls-files", Safe),
            ("git -c log.showSignature=true log", Unknown),
            ("git -c color.ui=always -c core.fsmonitor=x status", Unknown),
            ("git -c color.ui log", Unknown),
            ("git --git-dir=/tmp/x log", Unknown),
            ("git --exec-path=/tmp log", Unknown),
            ("git grep -O foo", Unknown),
            ("git config user.name x", Unknown),
            ("git config user.name", Safe),
            ("git config --global core.editor", Safe),
            ("git config --file ../other/config user.name", Unknown),
            ("git config edit", Unknown),
            ("git config --add user.name", Unknown),
            ("git config -e", Unknown),
            ("git config --unset user.name", Unknown),
            ("git remote add origin x", Unknown),
            ("git stash", Unknown),
            ("git stash pop", Unknown),
            ("git push origin main", Unknown),
            ("git reset HEAD~1", Unknown),
            ("git clean -n", Unknown),
            ("git commit -m x", Unknown),
            ("git", Unknown),
            ("git push --force origin main", Destructive),
            ("git push -f", Destructive),
            ("git push -uf origin main", Destructive),
            ("git push --force-with-lease", Destructive),
            (
                "git push --force-with-lease=main:abc origin main",
                Destructive,
            ),
            ("git push --forc", Destructive),
            ("git push origin +main", Destructive),
            ("git push origin +main:main", Destructive),
            ("git push origin :old-branch", Destructive),
            ("git push --delete origin x", Destructive),
            ("git push -d origin x", Destructive),
            ("git push --mirror", Destructive),
            ("git push --prune origin", Destructive),
            ("git push origin $REFSPEC", Destructive),
            ("git -C src push -f", Destructive),
            ("git --no-pager push -f", Destructive),
            ("git reset --hard", Destructive),
            ("git reset --hard HEAD~3", Destructive),
            ("git reset -q --hard origin/main", Destructive),
            ("git clean -fdx", Destructive),
            ("git clean -xdf", Destructive),
            ("git clean -df", Destructive),
            ("git clean -f", Destructive),
            ("git clean --force", Destructive),
            ("git branch -D main", Destructive),
            ("git branch --delete --force x", Destructive),
            ("git branch -df x", Destructive),
            ("git branch -d -f x", Destructive),
            ("git checkout -f", Destructive),
            ("git checkout -f main", Destructive),
            ("git checkout -- src/main.rs", Destructive),
            ("git checkout HEAD -- README.md", Destructive),
            ("git checkout .", Destructive),
            ("git checkout README.md", Destructive),
            ("git checkout '*.rs'", Destructive),
            ("git switch --discard-changes main", Destructive),
            ("git restore src/main.rs", Destructive),
            ("git restore --staged README.md", Destructive),
            ("git stash drop", Destructive),
            ("git stash clear", Destructive),
            ("git rm README.md", Destructive),
            ("git worktree remove --force ../wt", Destructive),
            ("git log --output=x", Destructive),
            ("git diff --output x", Destructive),
        ]);
    }
}
