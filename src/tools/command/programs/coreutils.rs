//! GNU coreutils and their shell-builtin twins (`echo`, `printf`, `test`, `[`, `true`,
//! `pwd`): the read-only ones as [`Table`] rows, the ones that delete or overwrite
//! (`rm`, `mv`, `dd`, `shred`, `truncate`, ...) as [`Rule::Destroys`], and the ones whose
//! verdict depends on the form as rules of their own: `cp`/`install` replacing a file,
//! `tee` writing one, `chmod -R`, `date -s`, `uniq in out`, the files `test` asks about.
//! Also what `echo`, `printf` and `cat` print, for the command they feed ([`output_of`]).

use super::table::{
    Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, check_value, output_file_check,
};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker, is_sink};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["mktemp"], Rule::Judge(|_, call| mktemp(call))),
    Program::new(
        &["ls", "vdir", "dir"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ITw",
                &[
                    "ignore",
                    "hide",
                    "width",
                    "tabsize",
                    "block-size",
                    "format",
                    "indicator-style",
                    "quoting-style",
                    "sort",
                    "time",
                    "time-style",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "cat",
            "rev",
            "readlink",
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "sum",
            "md5",
            "shasum",
        ],
        Rule::Table(&TABLE),
    ),
    Program::new(
        &["tac"],
        Rule::Table(&Table {
            spec: Spec::values("s", &["separator"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["cksum"],
        Rule::Table(&Table {
            spec: Spec::values("al", &["algorithm", "length"]),
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "pwd", "echo", "printf", "true", "false", "whoami", "id", "uname", "dirname", "which",
            "seq", "tr", "printenv",
        ],
        Rule::Table(&Table {
            spec: Spec::values("fs", &["format", "separator"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["expr"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["numfmt"],
        Rule::Table(&Table {
            spec: Spec::values(
                "d",
                &[
                    "delimiter",
                    "field",
                    "format",
                    "from",
                    "from-unit",
                    "to",
                    "to-unit",
                    "padding",
                    "round",
                    "suffix",
                    "unit-separator",
                    "invalid",
                ],
            ),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["basename"],
        Rule::Table(&Table {
            spec: Spec::values("s", &["suffix"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["head"],
        Rule::Table(&Table {
            spec: Spec::values("nc", &["lines", "bytes"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["tail"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ncs",
                &[
                    "lines",
                    "bytes",
                    "sleep-interval",
                    "pid",
                    "max-unchanged-stats",
                ],
            ),
            refused: &[Refusal {
                options: &["f", "F", "follow"],
                effect: Effect::Unsafe,
                what: "follows the file and never ends",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["wc"],
        Rule::Table(&Table {
            spec: Spec::values("", &["files0-from"]),
            path_options: &["files0-from"],
            names_from: &["files0-from"],
            ..TABLE
        }),
    ),
    Program::new(
        &["sort"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ktSTo",
                &[
                    "key",
                    "field-separator",
                    "buffer-size",
                    "temporary-directory",
                    "parallel",
                    "batch-size",
                    "files0-from",
                    "random-source",
                    "sort",
                    "output",
                    "compress-program",
                ],
            ),
            path_options: &["T", "temporary-directory", "files0-from", "random-source"],
            names_from: &["files0-from"],
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &["compress-program"],
                    effect: Effect::Unsafe,
                    what: "runs a compression program",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["cut"],
        Rule::Table(&Table {
            spec: Spec::values(
                "bcdf",
                &[
                    "bytes",
                    "characters",
                    "delimiter",
                    "fields",
                    "output-delimiter",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["nl"],
        Rule::Table(&Table {
            spec: Spec::values(
                "bdfhilnsvw",
                &[
                    "body-numbering",
                    "section-delimiter",
                    "footer-numbering",
                    "header-numbering",
                    "line-increment",
                    "join-blank-lines",
                    "number-format",
                    "number-separator",
                    "starting-line-number",
                    "number-width",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["fold"],
        Rule::Table(&Table {
            spec: Spec::values("w", &["width"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["column"],
        Rule::Table(&Table {
            spec: Spec::values(
                "cEHilNOopRrsTWC",
                &[
                    "output-width",
                    "table-noextreme",
                    "table-hide",
                    "tree-id",
                    "table-columns-limit",
                    "table-columns",
                    "table-name",
                    "table-order",
                    "output-separator",
                    "tree-parent",
                    "table-right",
                    "tree",
                    "separator",
                    "table-truncate",
                    "table-wrap",
                    "table-column",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["paste"],
        Rule::Table(&Table {
            spec: Spec::values("d", &["delimiters"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["comm"],
        Rule::Table(&Table {
            spec: Spec::values("", &["output-delimiter"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["stat"],
        Rule::Table(&Table {
            spec: Spec::values("c", &["format", "printf", "cached"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["du"],
        Rule::Table(&Table {
            spec: Spec::values(
                "dBtX",
                &[
                    "max-depth",
                    "block-size",
                    "threshold",
                    "exclude",
                    "exclude-from",
                    "files0-from",
                    "time-style",
                ],
            ),
            path_options: &["X", "exclude-from", "files0-from"],
            names_from: &["files0-from"],
            ..TABLE
        }),
    ),
    Program::new(
        &["df"],
        Rule::Table(&Table {
            spec: Spec::values("Btx", &["block-size", "type", "exclude-type"]),
            operands: Operands::FileSystems,
            ..TABLE
        }),
    ),
    Program::new(
        &["realpath"],
        Rule::Table(&Table {
            spec: Spec::values("", &["relative-to", "relative-base"]),
            path_options: &["relative-to", "relative-base"],
            ..TABLE
        }),
    ),
    Program::new(
        &["base64", "base32", "basenc"],
        Rule::Table(&Table {
            spec: Spec::values("wo", &["wrap", "output"]),
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        &["od"],
        Rule::Table(&Table {
            spec: Spec::values(
                "AjNSt",
                &["address-radix", "skip-bytes", "read-bytes", "format"],
            )
            .optional("w"),
            ..TABLE
        }),
    ),
    Program::new(&["uniq"], Rule::Judge(uniq_rule)),
    Program::new(&["date"], Rule::Judge(date_rule)),
    Program::new(&["test", "["], Rule::Judge(test_rule)),
    Program::new(&["rm"], Rule::Destroys("deletes files")).answering_standard_options(),
    Program::new(&["rmdir"], Rule::Destroys("removes directories")).answering_standard_options(),
    Program::new(&["unlink"], Rule::Destroys("deletes a file")).answering_standard_options(),
    Program::new(
        &["shred"],
        Rule::Destroys("overwrites files to destroy their contents"),
    )
    .answering_standard_options(),
    Program::new(
        &["dd"],
        Rule::Destroys("copies raw data and can overwrite files and whole disks"),
    )
    .answering_standard_options(),
    Program::new(
        &["truncate"],
        Rule::Destroys("cuts files to a new size, discarding their data"),
    )
    .answering_standard_options(),
    Program::new(
        &["rename", "file-rename", "prename", "perl-rename"],
        Rule::Judge(rename),
    ),
    Program::new(
        &["mv"],
        Rule::Destroys("moves files, removing the old name and possibly replacing the target"),
    )
    .answering_standard_options(),
    Program::new(
        &["chmod", "chown", "chgrp"],
        Rule::Judge(|_, call| recursive_permissions(call.program, call.args)),
    ),
    Program::new(&["tee"], Rule::Judge(|_, call| tee(call.args))),
    Program::new(
        &["cp", "install"],
        Rule::Judge(|walker, call| copy(walker, call.program, call.args)),
    ),
];

/// `uniq [input [output]]`: a second file is written.
fn uniq_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let spec = Spec::values("fsw", &["skip-fields", "skip-chars", "check-chars"]);
    let items = options::parse(invocation.args, &spec);
    let mut judgement = Judgement::whitelisted();
    let files = options::operands(&items);
    output_file_check(walker, &mut judgement, "uniq", &files, 1);
    judgement
}

const DATE: Spec = Spec::values("dfrs", &["date", "file", "reference", "set", "rfc-3339"]);

/// `date` prints the time; `-s`/`--set` or an operand that is not `+FORMAT` sets the clock.
fn date_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &DATE);
    let mut judgement = Judgement::whitelisted();
    for item in &items {
        if item.named(&["s", "set"], true) {
            judgement.unknown("`date -s` sets the system clock");
        }
        if item.named(&["f", "file", "r", "reference"], true) {
            check_value(walker, &mut judgement, "date", item);
        }
        if let Item::Operand(word) = item
            && word.text().is_some_and(|t| !t.starts_with('+'))
        {
            judgement.unknown(format!("`date {}` sets the system clock", word.raw));
        }
    }
    judgement
}

/// `test` and `[` operators whose operand names a file.
const FILE_TESTS: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-G", "-h", "-k", "-L", "-N", "-O", "-p", "-r", "-s",
    "-S", "-u", "-w", "-x",
];

/// `test`/`[` only answer with a status; the files they ask about must be in the workspace.
fn test_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut args = invocation.args;
    if invocation.program == "[" {
        match args.split_last() {
            Some((last, rest)) if last.text() == Some("]") => args = rest,
            _ => judgement.unknown("`[` without its closing `]`"),
        }
    }
    let text = |index: usize| args.get(index).and_then(Arg::text);
    for index in 0..args.len() {
        let Some(word) = text(index) else { continue };
        // `-a` between two expressions is "and"; before one operand it asks for a file.
        let unary = FILE_TESTS.contains(&word) && (word != "-a" || index == 0);
        if unary && let Some(path) = text(index + 1) {
            walker.check_path(&mut judgement, invocation.program, path);
        }
        if matches!(word, "-nt" | "-ot" | "-ef") {
            for side in [index.wrapping_sub(1), index + 1] {
                if let Some(path) = text(side) {
                    walker.check_path(&mut judgement, invocation.program, path);
                }
            }
        }
    }
    judgement
}

fn recursive_permissions(program: &str, args: &[Arg]) -> Judgement {
    // `chmod -x file` is a mode, not an option, but `R` is never a mode letter.
    let recursive = args.iter().any(|arg| {
        arg.may_be(|text| {
            (text.starts_with('-') && !text.starts_with("--") && text.contains('R'))
                || text
                    .strip_prefix("--")
                    .is_some_and(|long| options::long_matches(long, "recursive"))
        })
    });
    if recursive {
        Judgement::destroys(format!(
            "`{program} -R` changes ownership or permissions of a whole tree at once"
        ))
    } else {
        Judgement::not_whitelisted(program)
    }
}

fn tee(args: &[Arg]) -> Judgement {
    let items = options::parse(args, &Spec::NONE);
    let files: Vec<&Arg> = options::operands(&items)
        .into_iter()
        .filter(|a| a.may_be(|t| !is_sink(t)))
        .collect();
    match files.first() {
        Some(file) => Judgement::destroys(format!(
            "`tee` writes to the file {}, replacing or growing it",
            file.raw
        )),
        // Only the output and sinks (`/dev/null`, `/dev/tty`): it copies its input as `cat`
        // does.
        None => Judgement::whitelisted(),
    }
}

const COPY: Spec = Spec::values(
    "tSmogb",
    &[
        "target-directory",
        "suffix",
        "sparse",
        "no-preserve",
        "mode",
        "owner",
        "group",
        "strip-program",
    ],
);

/// `cp`/`install` replace the target when it exists (and no `-n` stops them); a target
/// only known at run time may be any existing file.
fn copy(walker: &Walker<'_>, program: &str, args: &[Arg]) -> Judgement {
    let items = options::parse(args, &COPY);
    if items
        .iter()
        .any(|i| i.named(&["n", "no-clobber"], true) || i.is(None, Some("update=none"), false))
    {
        return Judgement::not_whitelisted(program);
    }
    let directory = items
        .iter()
        .find(|i| i.named(&["t", "target-directory"], true))
        .and_then(|i| i.value());
    let operands = options::operands(&items);
    let (target, sources): (Option<&str>, &[&Arg]) = match directory {
        Some(value) => (value.text, &operands[..]),
        None => match operands.split_last() {
            Some((target, sources)) if !sources.is_empty() => {
                if target.text().is_none() {
                    return Judgement::destroys(format!(
                        "`{program}` copies onto `{}`, which may be an existing file",
                        target.raw
                    ));
                }
                (target.text(), sources)
            }
            _ => return Judgement::not_whitelisted(program),
        },
    };
    let Some(target) = target else {
        return Judgement::not_whitelisted(program);
    };
    let root = walker.workspace().root();
    let target_path = root.join(target);
    let clobbered = if target_path.is_dir() {
        sources.iter().filter_map(|s| s.text()).find_map(|source| {
            let name = std::path::Path::new(source).file_name()?;
            let path = target_path.join(name);
            path.exists().then(|| path.display().to_string())
        })
    } else {
        target_path.exists().then(|| target.to_owned())
    };
    match clobbered {
        Some(path) => Judgement::destroys(format!("`{program}` replaces the existing file {path}")),
        None => Judgement::not_whitelisted(program),
    }
}

/// What a command writes to its standard output, when the line shows it: `echo` and
/// `printf` with literal words and plain escapes, `cat` passing on visible input.
pub(in crate::tools::command) fn output_of(args: &[Arg], stdin: &Stdin) -> Stdin {
    let unseen = || {
        Stdin::Unseen(
            args.first()
                .map(|a| format!("`{}`", a.raw))
                .unwrap_or_default(),
        )
    };
    let Some(words) = args
        .iter()
        .map(|a| a.pattern.is_none().then_some(a.text()).flatten())
        .collect::<Option<Vec<&str>>>()
    else {
        return unseen();
    };
    let Some((name, rest)) = words.split_first() else {
        return unseen();
    };
    if *name == "find"
        && let Some(start) = find_prints_paths(rest)
    {
        return Stdin::Paths {
            from: format!("`{}`", args[0].raw),
            start,
        };
    }
    let rendered = match *name {
        "echo" => render_echo(rest),
        "printf" => render_printf(rest),
        "cat" if rest.iter().all(|w| *w == "-") => match stdin {
            Stdin::Text(text) => Some(text.clone()),
            _ => None,
        },
        _ => None,
    };
    rendered.map_or_else(unseen, Stdin::Text)
}

/// The first start point of a `find` whose only output is `-print0`: every path it prints
/// begins with one of its start points, and a start point never begins with `-` (find
/// would read it as an expression), so no path is an option to the program that reads
/// them. `None` for any other output (`-print`'s lines split at blanks under `xargs`,
/// `-printf '%f'` prints bare names) or a run that does more (`-exec`, `-delete`).
fn find_prints_paths(words: &[&str]) -> Option<String> {
    const OUTPUTS: &[&str] = &[
        "-print", "-printf", "-fprint", "-fprint0", "-fprintf", "-ls", "-fls", "-exec", "-execdir",
        "-ok", "-okdir", "-delete", "-quit",
    ];
    let mut rest = words;
    // Options before the start points: -H, -L, -P, -D debugopts, -Olevel.
    while let Some((first, tail)) = rest.split_first() {
        match *first {
            "-H" | "-L" | "-P" => rest = tail,
            "-D" => rest = tail.get(1..)?,
            o if o.starts_with("-O") => rest = tail,
            _ => break,
        }
    }
    let starts: Vec<&str> = rest
        .iter()
        .take_while(|w| !w.starts_with(['-', '(', '!']))
        .copied()
        .collect();
    let expression = &rest[starts.len()..];
    let prints = expression.iter().filter(|w| **w == "-print0").count() == 1;
    let other = expression.iter().any(|w| OUTPUTS.contains(w));
    (prints && !other).then(|| starts.first().copied().unwrap_or(".").to_owned())
}

/// `echo`'s output; `None` when escapes could change it (bash and dash disagree on them).
fn render_echo(words: &[&str]) -> Option<String> {
    let mut newline = true;
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        let flags = first
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && f.chars().all(|c| matches!(c, 'n' | 'e' | 'E')));
        let Some(flags) = flags else { break };
        if flags.contains('n') {
            newline = false;
        }
        rest = tail;
    }
    let text = rest.join(" ");
    if text.contains('\\') {
        return None;
    }
    Some(if newline { text + "\n" } else { text })
}

/// `printf`'s output for formats with only `%s`, `%b`, `%%` and the escapes `\n`, `\t`,
/// `\\`; `None` for anything else.
fn render_printf(words: &[&str]) -> Option<String> {
    let (format, mut values) = words.split_first()?;
    if values.iter().any(|v| v.contains('\\')) {
        return None;
    }
    let mut out = String::new();
    loop {
        let mut chars = format.chars();
        let mut consumed_any = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next()? {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    '\\' => out.push('\\'),
                    _ => return None,
                },
                '%' => match chars.next()? {
                    '%' => out.push('%'),
                    's' | 'b' => {
                        if let Some((value, tail)) = values.split_first() {
                            out.push_str(value);
                            values = tail;
                            consumed_any = true;
                        }
                    }
                    _ => return None,
                },
                other => out.push(other),
            }
        }
        if values.is_empty() || !consumed_any {
            return Some(out);
        }
    }
}

/// `mktemp -u` (`--dry-run`) prints a name and creates nothing; otherwise it creates the
/// file or directory.
fn mktemp(call: &Invocation<'_>) -> Judgement {
    let items = options::parse(call.args, &Spec::values("pt", &["tmpdir", "suffix"]));
    if items.iter().any(|item| item.named(&["u", "dry-run"], true)) {
        Judgement::whitelisted()
    } else {
        Judgement::other("`mktemp` creates a file or directory (`mktemp -u` only prints a name)")
    }
}

/// `rename` (Perl's `rename EXPR FILES`, or util-linux's `rename FROM TO FILES`) renames
/// files, removing the old names and possibly replacing others: destructive, like `mv`.
/// With `-n` (`--nono`, `--no-act`, `--dry-run`) either prints what it would rename and
/// renames nothing; Perl's still evaluates its expression, so the call is read-only only
/// when that expression is Perl the filter reader accepts whole (`s/\.jpeg$/.jpg/`).
fn rename(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const DRY: &[&str] = &["-n", "--nono", "--no-act", "--dry-run", "--just-print"];
    const FLAGS: &[&str] = &[
        "-v",
        "--verbose",
        "-0",
        "--null",
        "-s",
        "--symlink",
        "-o",
        "--no-overwrite",
    ];
    let program = call.program;
    let bundled_dry = |w: &str| {
        w.strip_prefix('-')
            .filter(|flags| !flags.starts_with('-') && flags.contains('n'))
            .is_some_and(|flags| flags.chars().all(|c| "nv0so".contains(c)))
    };
    let dry = call
        .args
        .iter()
        .filter(|arg| arg.pattern.is_none())
        .filter_map(Arg::text)
        .any(|w| DRY.contains(&w) || bundled_dry(w));
    if !dry {
        return Judgement::destroys(format!(
            "`{program}` renames files, removing the old names and possibly replacing others (`-n` only prints)"
        ));
    }
    let mut codes: Vec<&Arg> = Vec::new();
    let mut operands: Vec<&Arg> = Vec::new();
    let mut args = call.args.iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.text() else {
            return Judgement::other(format!(
                "`{program}` is given `{}`, only known when the line runs",
                arg.raw
            ));
        };
        match text {
            _ if arg.pattern.is_some() => operands.push(arg),
            "-e" | "-E" => match args.next() {
                Some(code) => codes.push(code),
                None => {
                    return Judgement::other(format!("`{program} {text}` is given no expression"));
                }
            },
            "--" => operands.extend(args.by_ref()),
            w if DRY.contains(&w) || FLAGS.contains(&w) || bundled_dry(w) => {}
            w if w.starts_with('-') && w != "-" => {
                return Judgement::other(format!("`{program} {w}` is not an option read here"));
            }
            _ => operands.push(arg),
        }
    }
    let files = if codes.is_empty() {
        match operands.split_first() {
            Some((code, files)) => {
                codes.push(code);
                files
            }
            None => return Judgement::other(format!("`{program}` is given no expression")),
        }
    } else {
        &operands[..]
    };
    if let Some(code) = codes
        .iter()
        .find(|code| code.pattern.is_some() || !code.text().is_some_and(super::perl::reads_code))
    {
        return Judgement::other(format!(
            "`{program} -n` still evaluates `{}` as Perl, which the filter reader does not accept whole",
            code.raw
        ));
    }
    let mut judgement = Judgement::whitelisted();
    super::table::check_paths(walker, &mut judgement, program, files);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn coreutils_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("mktemp -u", Safe),
            ("vdir src", Safe),
            ("rename -n 's/\\.jpeg$/.jpg/' *.txt", Safe),
            ("rename -nv 'y/A-Z/a-z/' notes.txt", Safe),
            ("rename 's/\\.jpeg$/.jpg/' *.txt", Destructive),
            ("rename -v s/a/b/ notes.txt", Destructive),
            ("rename foo bar notes.txt", Destructive),
            ("rename -n 's/x/system(\"id\")/e' notes.txt", NotSafe),
            ("rename -n 'system(\"rm x\")' notes.txt", NotSafe),
            ("rename -n foo bar notes.txt", NotSafe),
            ("rename -n s/a/b/ /etc/*", NotSafe),
            ("rename -n -e s/a/b/ -e y/x/y/ notes.txt", Safe),
            ("mktemp -u -t build.XXXX", Safe),
            ("mktemp", Unknown),
            ("mktemp -d", Unknown),
            ("md5 notes.txt", Safe),
            ("shasum -a 256 notes.txt", Safe),
            ("shasum -c sums.txt", Safe),
            ("tail -f app.log", Unknown),
            ("tail -F app.log", Unknown),
            ("tail --follow=name app.log", Unknown),
            ("tail -qf app.log", Unknown),
            ("tail -n5 -f app.log", Unknown),
            ("date -s 2020-01-01", Unknown),
            ("date 010100002020", Unknown),
            ("chmod 644 notes.txt", Unknown),
            ("cp /etc/passwd .", Unknown),
            ("cp notes.txt new.txt", Unknown),
            ("cp -n notes.txt README.md", Unknown),
            ("ls | tee", Safe),
            ("ls | tee /dev/tty | wc -l", Safe),
            ("ls | tee -a /dev/null", Safe),
            ("ls | tee /dev/null out.txt", Destructive),
            ("echo ls | sh", Unknown),
            ("rmdir olddir", Destructive),
            ("unlink x", Destructive),
            ("shred x", Destructive),
            ("dd if=/dev/zero of=/dev/sda", Destructive),
            ("truncate -s 0 app.log", Destructive),
            ("mv a b", Destructive),
            ("chmod -R 777 .", Destructive),
            ("chmod -Rv 777 .", Destructive),
            ("chmod -vR 777 .", Destructive),
            ("chmod --recursive 777 .", Destructive),
            ("chmod --rec 777 .", Destructive),
            ("chown -R root .", Destructive),
            ("chgrp -R staff .", Destructive),
            ("chmod $FLAGS 777 .", Destructive),
            ("tee out.txt", Destructive),
            ("echo x | tee -a app.log", Destructive),
            ("uniq notes.txt out.txt", Destructive),
            ("uniq $FILES", Destructive),
        ]);
    }
}
