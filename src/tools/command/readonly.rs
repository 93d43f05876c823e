//! The read-only whitelist: commands that only read and print, each with the options that
//! take a value, the options that name files (checked like operands), the options that
//! make it write or run something (refused), and what its operands are (files, text, or a
//! pattern followed by files). `sed`, `find`, `jq`, `xxd`, `date`, `hostname` and `uniq`
//! need more than a table and have their own rules below; `git` has its own module.

use super::assess::{Invocation, Judgement, Walker};
use super::options::{self, Item, Spec};
use super::sed;
use super::words::Arg;

/// What a refused option does.
#[derive(Debug, Clone, Copy)]
enum Effect {
    /// Not read-only, but not known to destroy anything (runs a program, follows forever).
    Unsafe,
    /// Writes or replaces a file.
    Writes,
}

struct Refusal {
    options: &'static [&'static str],
    effect: Effect,
    what: &'static str,
}

#[derive(Debug, Clone, Copy)]
enum Operands {
    /// Every operand names a file or directory.
    Paths,
    /// Operands are text (`echo`, `basename`, `which`).
    Text,
    /// The first operand is a pattern unless one of these options gives it; the rest are
    /// files (`grep`, `rg`).
    PatternThenPaths(&'static [&'static str]),
}

struct Tool {
    names: &'static [&'static str],
    spec: Spec,
    operands: Operands,
    /// Options whose value names a file.
    path_options: &'static [&'static str],
    /// Options whose value is a file holding more file names (`--files0-from`): given `-`,
    /// the names come from the input and cannot be checked.
    names_from: &'static [&'static str],
    refused: &'static [Refusal],
}

const TOOL: Tool = Tool {
    names: &[],
    spec: Spec::NONE,
    operands: Operands::Paths,
    path_options: &[],
    names_from: &[],
    refused: &[],
};

const TOOLS: &[Tool] = &[
    Tool {
        names: &["ls"],
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
        ..TOOL
    },
    Tool {
        names: &[
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
        ],
        ..TOOL
    },
    Tool {
        names: &["tac"],
        spec: Spec::values("s", &["separator"]),
        ..TOOL
    },
    Tool {
        names: &["cksum"],
        spec: Spec::values("al", &["algorithm", "length"]),
        ..TOOL
    },
    Tool {
        names: &[
            "pwd", "echo", "printf", "true", "false", "whoami", "id", "uname", "dirname", "which",
            "seq", "tr",
        ],
        spec: Spec::values("fs", &["format", "separator"]),
        operands: Operands::Text,
        ..TOOL
    },
    Tool {
        names: &["expr"],
        operands: Operands::Text,
        ..TOOL
    },
    Tool {
        names: &["numfmt"],
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
        ..TOOL
    },
    Tool {
        names: &["basename"],
        spec: Spec::values("s", &["suffix"]),
        operands: Operands::Text,
        ..TOOL
    },
    Tool {
        names: &["grep", "egrep", "fgrep"],
        spec: Spec::values(
            "efmABCdD",
            &[
                "regexp",
                "file",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "directories",
                "devices",
                "label",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "binary-files",
                "group-separator",
            ],
        ),
        operands: Operands::PatternThenPaths(&["e", "regexp", "f", "file"]),
        path_options: &["f", "file", "exclude-from"],
        ..TOOL
    },
    Tool {
        names: &["rg"],
        spec: Spec::values(
            "ABCefgjmMrtTEd",
            &[
                "after-context",
                "before-context",
                "context",
                "regexp",
                "file",
                "glob",
                "iglob",
                "threads",
                "max-count",
                "max-columns",
                "replace",
                "type",
                "type-not",
                "encoding",
                "max-depth",
                "max-filesize",
                "colors",
                "color",
                "context-separator",
                "field-context-separator",
                "field-match-separator",
                "ignore-file",
                "path-separator",
                "sort",
                "sortr",
                "type-add",
                "type-clear",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
                "pre",
                "pre-glob",
                "hostname-bin",
                "hyperlink-format",
                "generate",
            ],
        )
        .exact(),
        operands: Operands::PatternThenPaths(&[
            "e",
            "regexp",
            "f",
            "file",
            "files",
            "type-list",
            "generate",
        ]),
        path_options: &["f", "file", "ignore-file"],
        names_from: &[],
        refused: &[
            Refusal {
                options: &["pre", "pre-glob"],
                effect: Effect::Unsafe,
                what: "runs a program on every file it searches",
            },
            Refusal {
                options: &["z", "search-zip"],
                effect: Effect::Unsafe,
                what: "runs decompression programs",
            },
            Refusal {
                options: &["hostname-bin"],
                effect: Effect::Unsafe,
                what: "runs a program to find the host name",
            },
        ],
    },
    Tool {
        names: &["head"],
        spec: Spec::values("nc", &["lines", "bytes"]),
        ..TOOL
    },
    Tool {
        names: &["tail"],
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
        ..TOOL
    },
    Tool {
        names: &["wc"],
        spec: Spec::values("", &["files0-from"]),
        path_options: &["files0-from"],
        names_from: &["files0-from"],
        ..TOOL
    },
    Tool {
        names: &["sort"],
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
            Refusal {
                options: &["o", "output"],
                effect: Effect::Writes,
                what: "writes its output to a file, replacing it",
            },
            Refusal {
                options: &["compress-program"],
                effect: Effect::Unsafe,
                what: "runs a compression program",
            },
        ],
        ..TOOL
    },
    Tool {
        names: &["cut"],
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
        ..TOOL
    },
    Tool {
        names: &["nl"],
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
        ..TOOL
    },
    Tool {
        names: &["fold"],
        spec: Spec::values("w", &["width"]),
        ..TOOL
    },
    Tool {
        names: &["column"],
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
        ..TOOL
    },
    Tool {
        names: &["paste"],
        spec: Spec::values("d", &["delimiters"]),
        ..TOOL
    },
    Tool {
        names: &["comm"],
        spec: Spec::values("", &["output-delimiter"]),
        ..TOOL
    },
    Tool {
        names: &["diff"],
        spec: Spec::values(
            "CUIFxXSLWD",
            &[
                "ignore-matching-lines",
                "show-function-line",
                "exclude",
                "exclude-from",
                "starting-file",
                "label",
                "line-format",
                "old-line-format",
                "new-line-format",
                "unchanged-line-format",
                "old-group-format",
                "new-group-format",
                "changed-group-format",
                "unchanged-group-format",
                "width",
                "tabsize",
                "ifdef",
                "from-file",
                "to-file",
                "horizon-lines",
                "palette",
            ],
        ),
        path_options: &["X", "exclude-from", "from-file", "to-file"],
        ..TOOL
    },
    Tool {
        names: &["cmp"],
        spec: Spec::values("in", &["ignore-initial", "bytes"]),
        ..TOOL
    },
    Tool {
        names: &["file"],
        spec: Spec::values(
            "mfFeP",
            &[
                "magic-file",
                "files-from",
                "separator",
                "exclude",
                "exclude-quiet",
                "parameter",
            ],
        ),
        path_options: &["m", "magic-file", "f", "files-from"],
        names_from: &["f", "files-from"],
        refused: &[Refusal {
            options: &["C", "compile"],
            effect: Effect::Writes,
            what: "compiles magic files, writing magic.mgc",
        }],
        ..TOOL
    },
    Tool {
        names: &["stat"],
        spec: Spec::values("c", &["format", "printf", "cached"]),
        ..TOOL
    },
    Tool {
        names: &["du"],
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
        ..TOOL
    },
    Tool {
        names: &["df"],
        spec: Spec::values("Btx", &["block-size", "type", "exclude-type"]),
        ..TOOL
    },
    Tool {
        names: &["realpath"],
        spec: Spec::values("", &["relative-to", "relative-base"]),
        path_options: &["relative-to", "relative-base"],
        ..TOOL
    },
    Tool {
        names: &["base64", "base32", "basenc"],
        spec: Spec::values("wo", &["wrap", "output"]),
        refused: &[Refusal {
            options: &["o", "output"],
            effect: Effect::Writes,
            what: "writes its output to a file, replacing it",
        }],
        ..TOOL
    },
    Tool {
        names: &["od"],
        spec: Spec::values(
            "AjNSt",
            &["address-radix", "skip-bytes", "read-bytes", "format"],
        )
        .optional("w"),
        ..TOOL
    },
    Tool {
        names: &["hexdump"],
        spec: Spec::values("efns", &[]),
        path_options: &["f"],
        ..TOOL
    },
    Tool {
        names: &["tree"],
        spec: Spec::values(
            "LPIHTo",
            &[
                "charset",
                "filelimit",
                "timefmt",
                "sort",
                "hintro",
                "houtro",
                "gitfile",
            ],
        )
        .exact(),
        path_options: &["hintro", "houtro", "gitfile"],
        refused: &[
            Refusal {
                options: &["o"],
                effect: Effect::Writes,
                what: "writes its output to a file, replacing it",
            },
            Refusal {
                options: &["R"],
                effect: Effect::Unsafe,
                what: "writes a listing file into every directory",
            },
        ],
        ..TOOL
    },
];

/// The judgement for a whitelisted command, or `None` when the command is not on the list.
pub(super) fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Option<Judgement> {
    let program = invocation.program;
    if let Some(tool) = TOOLS.iter().find(|t| t.names.contains(&program)) {
        return Some(table_rule(walker, invocation, tool));
    }
    Some(match program {
        "sed" => sed_rule(walker, invocation),
        "find" => find_rule(walker, invocation),
        "jq" => jq_rule(walker, invocation),
        "xxd" => xxd_rule(walker, invocation),
        "date" => date_rule(walker, invocation),
        "hostname" => hostname_rule(invocation),
        "uniq" => uniq_rule(walker, invocation),
        "test" | "[" => test_rule(walker, invocation),
        "cd" => cd_rule(walker, invocation),
        "tar" => super::tar::judge(walker, invocation),
        _ => return None,
    })
}

fn table_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>, tool: &Tool) -> Judgement {
    let program = invocation.program;
    let abbreviations = tool.spec.abbreviations;
    let items = options::parse(invocation.args, &tool.spec);
    let mut judgement = Judgement::whitelisted();
    let writer = tool
        .refused
        .iter()
        .find(|r| matches!(r.effect, Effect::Writes));
    if let (Some(writer), Some(word)) = (writer, opaque(&items)) {
        judgement.destructive(format!(
            "`{program}` is given `{}`, which may become `{}` ({}) when the line runs",
            word.raw,
            option_shown(writer.options),
            writer.what
        ));
    }
    for item in &items {
        for refusal in tool.refused {
            if item.named(refusal.options, abbreviations) {
                let reason = format!("`{program} {}` {}", item.shown(), refusal.what);
                match refusal.effect {
                    Effect::Unsafe => judgement.unknown(reason),
                    Effect::Writes => judgement.destructive(reason),
                }
            }
        }
        if item.named(tool.path_options, abbreviations) {
            check_value(walker, &mut judgement, program, item);
        }
        if item.named(tool.names_from, abbreviations)
            && item.value().and_then(|v| v.text) == Some("-")
        {
            judgement.unknown(format!(
                "`{program} {} -` reads the names of the files to open from its input, which cannot be checked",
                item.shown()
            ));
        }
    }
    let operands = options::operands(&items);
    match tool.operands {
        Operands::Text => {}
        Operands::Paths => check_paths(walker, &mut judgement, program, &operands),
        Operands::PatternThenPaths(pattern_options) => {
            let pattern_given = items
                .iter()
                .any(|item| item.named(pattern_options, abbreviations));
            let files = if pattern_given {
                &operands[..]
            } else {
                operands.get(1..).unwrap_or_default()
            };
            check_paths(walker, &mut judgement, program, files);
        }
    }
    judgement
}

/// The first word only known at run time, which may turn out to be any option.
pub(super) fn opaque<'a>(items: &[Item<'a>]) -> Option<&'a Arg> {
    items.iter().find_map(|item| match item {
        Item::Opaque(word) => Some(*word),
        _ => None,
    })
}

/// `-o`/`--output` from a list of option names.
fn option_shown(options: &[&str]) -> String {
    options
        .iter()
        .map(|o| {
            if o.len() == 1 {
                format!("-{o}")
            } else {
                format!("--{o}")
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn check_value(walker: &Walker<'_>, judgement: &mut Judgement, program: &str, item: &Item<'_>) {
    if let Some(text) = item.value().and_then(|v| v.text) {
        walker.check_path(judgement, program, text);
    }
}

fn check_paths(walker: &Walker<'_>, judgement: &mut Judgement, program: &str, words: &[&Arg]) {
    for word in words {
        if let Some(text) = word.text() {
            walker.check_path(judgement, program, text);
        }
    }
}

const SED: Spec = Spec::values("elf", &["expression", "line-length", "file"]).optional("i");

/// Options `sed -n` may take and stay read-only.
const SED_OPTIONS: &[&str] = &[
    "n",
    "quiet",
    "silent",
    "e",
    "expression",
    "E",
    "r",
    "regexp-extended",
    "s",
    "separate",
    "z",
    "null-data",
    "zero-terminated",
    "u",
    "unbuffered",
    "l",
    "line-length",
    "posix",
    "debug",
    "sandbox",
    "b",
    "binary",
    "help",
    "version",
];

/// `sed -n` with a script that only prints.
fn sed_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &SED);
    let mut judgement = Judgement::whitelisted();
    if let Some(word) = opaque(&items) {
        judgement.destructive(format!(
            "`sed` is given `{}`, which may become `-i` (rewrite files in place) when the line runs",
            word.raw
        ));
    }
    let mut quiet = false;
    let mut scripts: Vec<&str> = Vec::new();
    for item in &items {
        if item.named(&["i", "in-place"], true) {
            judgement.destructive("`sed -i` rewrites files in place, replacing their contents");
        } else if item.named(&["f", "file"], true) {
            judgement.unknown("`sed -f` reads its script from a file, which is not checked");
        } else if item.named(&["n", "quiet", "silent"], true) {
            quiet = true;
        } else if item.named(&["e", "expression"], true) {
            scripts.extend(item.value().and_then(|v| v.text));
        } else if matches!(item, Item::Short { .. } | Item::Long { .. })
            && !item.named(SED_OPTIONS, true)
        {
            judgement.unknown(format!(
                "`sed {}` is not an option known to be read-only",
                item.shown()
            ));
        }
    }
    let given_by_option = items.iter().any(|i| i.named(&["e", "expression"], true));
    let operands = options::operands(&items);
    let files = if given_by_option {
        &operands[..]
    } else {
        match operands.split_first() {
            Some((script, rest)) => {
                scripts.extend(script.text());
                rest
            }
            None => &[],
        }
    };
    if !quiet {
        judgement.unknown(
            "`sed` without `-n` is not whitelisted; only `sed -n` with a print-only script is",
        );
    }
    for script in scripts {
        if let Err(reason) = sed::check_print_only(script) {
            judgement.unknown(format!("the sed script `{script}` {reason}"));
        }
    }
    check_paths(walker, &mut judgement, "sed", files);
    judgement
}

/// `find` primaries that take one value which is not a file.
const FIND_VALUES: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-size",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-fstype",
    "-maxdepth",
    "-mindepth",
    "-context",
    "-printf",
    "-regextype",
];

/// `find` primaries whose value names a file.
const FIND_PATHS: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"];

/// `find` without actions that delete, write or run; `-exec` and friends run a command,
/// which is judged on its own.
fn find_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    if let Some(opaque) = args.iter().find(|a| a.text().is_none()) {
        judgement.destructive(format!(
            "`find` is given `{}`, which may become `-delete` or `-exec` when the line runs",
            opaque.raw
        ));
    }
    let text = |index: usize| args.get(index).and_then(Arg::text);
    let mut index = 0;
    // Global options.
    while let Some(word) = text(index) {
        match word {
            "-H" | "-L" | "-P" => index += 1,
            "-D" => index += 2,
            _ if word.starts_with("-O") => index += 1,
            _ => break,
        }
    }
    // Starting points.
    let mut starts = Vec::new();
    while let Some(word) = text(index) {
        if word.starts_with('-') || matches!(word, "(" | "!" | ")" | ",") {
            break;
        }
        walker.check_path(&mut judgement, "find", word);
        starts.push(word);
        index += 1;
    }
    // The expression.
    while index < args.len() {
        let Some(word) = text(index) else {
            index += 1;
            continue;
        };
        index += 1;
        match word {
            "-delete" => judgement.destructive("`find -delete` removes every file it matches"),
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let (command, end) = find_command(args, index, &starts);
                if word.starts_with("-ok") {
                    judgement.unknown(format!("`find {word}` asks on its input before it runs"));
                }
                walker.judge(
                    &command,
                    &super::assess::Stdin::Inherited,
                    invocation.depth + 1,
                );
                index = end + 1;
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                let file = text(index).unwrap_or("a file");
                judgement.destructive(format!(
                    "`find {word}` writes to the file {file}, replacing it"
                ));
                index += if word == "-fprintf" { 2 } else { 1 };
            }
            "-files0-from" if text(index) == Some("-") => {
                judgement.unknown(
                    "`find -files0-from -` reads its starting points from its input, which cannot be checked",
                );
                index += 1;
            }
            _ if FIND_PATHS.contains(&word) => {
                if let Some(path) = text(index) {
                    walker.check_path(&mut judgement, "find", path);
                }
                index += 1;
            }
            _ if word.starts_with("-newer") && word.len() == 8 => {
                // `-newerXY ref`: a time string when Y is `t`, else a file.
                if !word.ends_with('t')
                    && let Some(path) = text(index)
                {
                    walker.check_path(&mut judgement, "find", path);
                }
                index += 1;
            }
            _ if FIND_VALUES.contains(&word) => index += 1,
            _ => {}
        }
    }
    judgement
}

/// The command of `find -exec` starting at `start`, and where its `;` or `+` is. `{}`
/// alone, after the program, is a path under a starting point (`./x`), never an option;
/// anywhere else what replaces it is only known at run time.
fn find_command(args: &[Arg], start: usize, starts: &[&str]) -> (Vec<Arg>, usize) {
    let mut end = start;
    while let Some(part) = args.get(end) {
        let text = part.text();
        if text == Some(";")
            || (text == Some("+") && end > start && args[end - 1].text() == Some("{}"))
        {
            break;
        }
        end += 1;
    }
    let first_start = starts.first().copied().unwrap_or(".");
    let command = args[start..end.min(args.len())]
        .iter()
        .enumerate()
        .map(|(at, a)| match a.text() {
            Some("{}") if at > 0 => Arg {
                value: Some(format!("{}/{{}}", first_start.trim_end_matches('/'))),
                ..Arg::opaque("{}")
            },
            Some(t) if t.contains("{}") => Arg::opaque("{}"),
            _ => a.clone(),
        })
        .collect();
    (command, end)
}

/// `jq` reading files, with a filter that does not read the environment or load modules.
fn jq_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    let mut positional: Vec<&Arg> = Vec::new();
    let mut from_file = false;
    let mut positional_are_args = false;
    let mut index = 0;
    while let Some(arg) = args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            positional.push(arg);
            continue;
        };
        match text {
            "--arg" | "--argjson" => index += 2,
            "--slurpfile" | "--rawfile" => {
                if let Some(path) = args.get(index + 1).and_then(Arg::text) {
                    walker.check_path(&mut judgement, "jq", path);
                }
                index += 2;
            }
            "--indent" => index += 1,
            "--args" | "--jsonargs" => positional_are_args = true,
            "-f" | "--from-file" => from_file = true,
            "-L" => {
                if let Some(path) = args.get(index).and_then(Arg::text) {
                    walker.check_path(&mut judgement, "jq", path);
                }
                index += 1;
            }
            _ if text.starts_with("-L") => {
                walker.check_path(&mut judgement, "jq", &text[2..]);
            }
            "-" => positional.push(arg),
            _ if text.starts_with('-') && text.len() > 1 => {
                if !text.starts_with("--") && text.contains('f') {
                    from_file = true;
                }
            }
            _ => positional.push(arg),
        }
    }
    let mut files = positional.as_slice();
    if from_file {
        judgement.unknown("`jq -f` reads its filter from a file, which is not checked");
    } else if let Some((filter, rest)) = positional.split_first() {
        if let Some(text) = filter.text()
            && let Some(reason) = jq_filter_problem(text)
        {
            judgement.unknown(reason);
        }
        files = rest;
    }
    if !positional_are_args {
        check_paths(walker, &mut judgement, "jq", files);
    }
    judgement
}

fn jq_filter_problem(filter: &str) -> Option<String> {
    let words = filter.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'));
    for word in words {
        match word {
            "env" | "$ENV" => {
                return Some(
                    "the jq filter reads environment variables (`env`, `$ENV`), which may hold secrets"
                        .to_owned(),
                );
            }
            "import" | "include" => {
                return Some("the jq filter loads modules from outside the line".to_owned());
            }
            _ => {}
        }
    }
    None
}

/// `xxd` options that take a value, by first letter (`-c 16`, `-c16`, `-cols 16`).
const XXD_VALUES: &str = "cglsonR";

/// `xxd [options] [infile [outfile]]`: a second file is written.
fn xxd_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    let mut files: Vec<&Arg> = Vec::new();
    let mut index = 0;
    let mut options_ended = false;
    while let Some(arg) = args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            files.push(arg);
            continue;
        };
        if options_ended || text == "-" || !text.starts_with('-') {
            files.push(arg);
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        let name = &text[1..];
        let takes_value = name.chars().next().is_some_and(|c| XXD_VALUES.contains(c))
            && (name.len() == 1 || name.chars().all(|c| c.is_ascii_alphabetic()));
        if takes_value {
            index += 1;
        }
    }
    output_file_check(walker, &mut judgement, "xxd", &files, 1);
    judgement
}

/// `uniq [input [output]]`: a second file is written.
fn uniq_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let spec = Spec::values("fsw", &["skip-fields", "skip-chars", "check-chars"]);
    let items = options::parse(invocation.args, &spec);
    let mut judgement = Judgement::whitelisted();
    let files = options::operands(&items);
    output_file_check(walker, &mut judgement, "uniq", &files, 1);
    judgement
}

/// Checks the input files of a command whose operand after the first `inputs` is an output
/// file, and treats a possible output file as destructive.
fn output_file_check(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    files: &[&Arg],
    inputs: usize,
) {
    if let Some(output) = files.get(inputs).filter(|f| f.text() != Some("-")) {
        judgement.destructive(format!(
            "`{program}` writes its output to the file {}, replacing it",
            output.raw
        ));
    } else if let Some(several) = files.iter().find(|f| f.may_be_several()) {
        judgement.destructive(format!(
            "`{program}` is given `{}`, which may become several files, the last of which it would overwrite",
            several.raw
        ));
    }
    check_paths(
        walker,
        judgement,
        program,
        files.get(..inputs).unwrap_or(files),
    );
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

/// `hostname` with no operand prints the name; with one, or `-F`/`-b`, it sets it.
fn hostname_rule(invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &Spec::values("F", &["file"]));
    let mut judgement = Judgement::whitelisted();
    for item in &items {
        if item.named(&["F", "file", "b", "boot"], true) {
            judgement.unknown(format!("`hostname {}` sets the host name", item.shown()));
        }
        if let Item::Operand(word) = item {
            judgement.unknown(format!("`hostname {}` sets the host name", word.raw));
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

/// `cd [dir]` into a directory inside the workspace, named by a plain word; the walker
/// checks the paths of the commands after it from there.
fn cd_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let args = match invocation.args.split_first() {
        Some((first, rest)) if first.text() == Some("--") => rest,
        _ => invocation.args,
    };
    let directory = match args {
        [] => String::new(),
        [one] => match one.text() {
            Some(text) if one.pattern.is_some() => {
                judgement.unknown(format!("`cd {text}` changes into a pattern"));
                return judgement;
            }
            Some(text) if text.starts_with('-') => {
                judgement.unknown(format!("`cd {text}` is not a directory in the workspace"));
                return judgement;
            }
            Some(text) => text.to_owned(),
            None => return judgement,
        },
        _ => {
            judgement.unknown("`cd` is given more than one directory");
            return judgement;
        }
    };
    if directory.is_empty() {
        // `cd` alone goes HOME, which is the workspace root for every command.
        walker.changes_directory(invocation.depth, vec![String::new()]);
        return judgement;
    }
    if let Some(problem) = walker.path_problem("cd", &directory) {
        judgement.unknown(problem.replace("reads", "changes into"));
    }
    let targets = walker
        .cwds()
        .iter()
        .map(|cwd| super::assess::in_directory(cwd, &directory))
        .collect();
    walker.changes_directory(invocation.depth, targets);
    judgement
}
