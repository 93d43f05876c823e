//! Newer listing and inspection tools people reach for instead of the classic ones, each of
//! which only reads: `eza`/`exa` and `lsd` (listings, like `ls`), `dust` and `duf` (disk
//! usage, like `du` and `df`), `tokei` (lines of code), `pdfinfo` (a PDF's metadata) and
//! `yq` (a query over YAML, JSON or XML, like `jq`).
//!
//! What would make one write is refused: `yq -i` rewrites its file in place and `yq -s`
//! writes a file per document; an expression that may `load` a file waits, since that
//! file's path is not an operand the checks see. Options whose value is a word are listed only where they
//! surely take one (a word swallowed as a value would escape the operand checks); a value
//! missed is read as an operand and checked as a path, which costs a click at worst.
//! Also the printers of text and pictures (`cowsay`, `figlet`, `toilet`, `lolcat`,
//! `fortune`), `gron` (JSON flattened to lines, like `jq`), `scc` (lines of code),
//! `perldoc` and `scriptreplay`. A cow file is Perl code, so `cowsay -f` takes a cow of
//! the system's by name only.
//!
//! Programs whose options also come with a single dash (`cloc -out=f`, `xmllint -output f`,
//! Perl's and libxml2's parsers accept both) are not here: a refusal written for `--out`
//! would not see `-out`.

use super::table::{self, Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["cowsay", "cowthink"], Rule::Judge(cowsay)),
    Program::new(
        // Words in big letters, and a pony that says them.
        &["banner", "ponysay", "ponythink"],
        Rule::Table(&Table {
            spec: Spec::values("wfW", &["width", "pony", "wrap"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Images drawn as terminal text; `jp2a --output` and `timg -o` write a file.
        &["jp2a", "img2txt", "catimg", "viu", "timg"],
        Rule::Table(&Table {
            spec: Spec::values(
                "whWHfgrlo",
                &[
                    "width",
                    "height",
                    "size",
                    "format",
                    "output",
                    "chars",
                    "background",
                ],
            ),
            refused: &[Refusal {
                options: &["o", "output"],
                effect: Effect::Writes,
                what: "writes the picture to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Colours for logs and source code, to the output. `highlight`'s language
        // definitions, themes and plug-ins are Lua scripts: the options that load them
        // from elsewhere than the system's directory run code; `-o`/`-d` write files.
        &["ccze", "highlight"],
        Rule::Table(&Table {
            spec: Spec::values(
                "moiSOdFp",
                &[
                    "mode",
                    "outfile",
                    "input",
                    "syntax",
                    "out-format",
                    "outdir",
                    "style",
                    "plug-in",
                    "data-dir",
                    "add-data-dir",
                    "config-file",
                    "rcfile",
                    "plugin",
                ],
            ),
            path_options: &["i", "input"],
            refused: &[
                Refusal {
                    options: &["o", "outfile", "d", "outdir"],
                    effect: Effect::Writes,
                    what: "writes the coloured text to a file",
                },
                Refusal {
                    options: &[
                        "plug-in",
                        "data-dir",
                        "add-data-dir",
                        "config-file",
                        "F",
                        "rcfile",
                        "p",
                        "plugin",
                    ],
                    effect: Effect::Unsafe,
                    what: "loads definitions or plug-ins, which are code, from a file",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // A manual page formatted to the output.
        &["mandoc"],
        Rule::Table(&Table {
            spec: Spec::values("IKmMOTW", &[]),
            ..TABLE
        }),
    ),
    Program::new(&["asciinema"], Rule::Judge(asciinema_cat)),
    Program::new(&["ncdu"], Rule::Judge(ncdu_export)),
    Program::new(&["gum"], Rule::Judge(gum_prints)),
    Program::new(
        &["figlet", "toilet"],
        Rule::Table(&Table {
            spec: Spec::values(
                "fdwmCFEI",
                &["font", "directory", "width", "filter", "export"],
            ),
            operands: Operands::Text,
            // Font files and directories are data, read like any file.
            path_options: &["f", "font", "d", "directory", "C"],
            ..TABLE
        }),
    ),
    Program::new(
        &["lolcat"],
        Rule::Table(&Table {
            spec: Spec::values("pFSds", &["spread", "freq", "seed", "duration", "speed"]),
            ..TABLE
        }),
    ),
    Program::new(
        // Fortune files or directories, each perhaps after a percentage (`50% funny`).
        &["fortune"],
        Rule::Table(&Table {
            spec: Spec::values("mn", &[]),
            ..TABLE
        }),
    ),
    Program::new(&["gron"], Rule::Judge(gron)),
    Program::new(
        &["scc"],
        Rule::Table(&Table {
            spec: Spec::values(
                "fsiwxMz",
                &[
                    "format",
                    "sort",
                    "include-ext",
                    "exclude-dir",
                    "not-match",
                    "exclude-ext",
                    "count-as",
                    "remap-all",
                    "remap-unknown",
                    "file-gc-count",
                    "avg-wage",
                    "overhead",
                    "eaf",
                    "sql-project",
                    "format-multi",
                    "output",
                    "directory-walker-job-workers",
                    "file-process-job-workers",
                    "file-list-queue-size",
                    "large-byte-count",
                    "large-line-count",
                    "uloc",
                ],
            )
            // Go's flag parsing takes no abbreviations: `--format` is not `--format-multi`.
            .exact(),
            refused: &[Refusal {
                options: &["o", "output", "format-multi"],
                effect: Effect::Writes,
                what: "writes its report to a file",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Replays a recorded terminal session to the output, by its timing file.
        &["scriptreplay"],
        Rule::Table(&Table {
            spec: Spec::values(
                "tIOBTdm",
                &[
                    "timing",
                    "log-in",
                    "log-out",
                    "log-io",
                    "log-timing",
                    "divisor",
                    "maxdelay",
                    "target",
                    "cr-mode",
                ],
            ),
            path_options: &[
                "t",
                "timing",
                "I",
                "log-in",
                "O",
                "log-out",
                "B",
                "log-io",
                "T",
                "log-timing",
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // Perl's documentation, rendered to the output. `-M` and `-o` load a formatter
        // module, `-w` passes it options, `-d` writes the page to a file.
        &["perldoc"],
        Rule::Table(&Table {
            spec: Spec::values("MwdLoX", &[]),
            operands: Operands::Text,
            refused: &[
                Refusal {
                    options: &["M", "o", "w"],
                    effect: Effect::Unsafe,
                    what: "loads another formatter module, which is code",
                },
                Refusal {
                    options: &["d"],
                    effect: Effect::Writes,
                    what: "writes the page to a file",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["eza", "exa"],
        Rule::Table(&Table {
            spec: Spec::values(
                "LIst",
                &["level", "ignore-glob", "sort", "time", "time-style"],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["lsd"],
        Rule::Table(&Table {
            spec: Spec::values("I", &["depth", "ignore-glob", "config-file"]),
            path_options: &["config-file"],
            ..TABLE
        }),
    ),
    Program::new(
        &["dust"],
        Rule::Table(&Table {
            spec: Spec::values(
                "dnXevzw",
                &[
                    "depth",
                    "number-of-lines",
                    "ignore-directory",
                    "filter",
                    "invert-filter",
                    "min-size",
                    "terminal-width",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["duf"],
        Rule::Table(&Table {
            spec: Spec::values(
                "",
                &[
                    "only",
                    "hide",
                    "only-mp",
                    "hide-mp",
                    "only-fs",
                    "hide-fs",
                    "output",
                    "sort",
                    "width",
                    "theme",
                    "style",
                    "avail-threshold",
                    "usage-threshold",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["tokei"],
        Rule::Table(&Table {
            // `--output` is the format printed (json, yaml), not a file.
            spec: Spec::values(
                "oetscin",
                &[
                    "output",
                    "exclude",
                    "type",
                    "sort",
                    "columns",
                    "input",
                    "num-format",
                ],
            ),
            path_options: &["i", "input"],
            ..TABLE
        }),
    ),
    Program::new(
        &["pdfinfo"],
        // poppler's pdfinfo has no option that writes; its single-dash options with values
        // (`-f 1`, `-enc UTF-8`) leave words that are checked as paths.
        Rule::Table(&TABLE),
    ),
    Program::new(&["yq"], Rule::Judge(yq)),
];

/// `yq`'s words: an expression, then files.
const YQ: Table = Table {
    spec: Spec::values(
        "opI",
        &[
            "output-format",
            "input-format",
            "indent",
            "expression",
            "from-file",
            "split-exp",
        ],
    ),
    operands: Operands::PatternThenPaths(&["expression", "from-file"]),
    path_options: &["from-file"],
    refused: &[
        Refusal {
            options: &["i", "inplace", "in-place"],
            effect: Effect::Writes,
            what: "rewrites its file in place",
        },
        Refusal {
            options: &["s", "split-exp"],
            effect: Effect::Writes,
            what: "writes each document to a file of its own",
        },
    ],
    ..TABLE
};

/// `yq` by its table, and its expression: the `load` operators (`load("f")`, `load_str`,
/// ...) read a file the line names only inside the expression, so its path is not checked.
fn yq(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = table::judge(walker, invocation, &YQ);
    if invocation
        .args
        .iter()
        .any(|arg| arg.text().is_none_or(|text| text.contains("load")))
    {
        judgement.unknown("a `yq` expression may `load` a file the line does not name as one");
    }
    judgement
}

/// `cowsay`/`cowthink`: the message is text; `-f` names a cow file, which is Perl code the
/// program runs, so only a name from the system's cow directory counts (no `/`).
fn cowsay(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const COWSAY: Table = Table {
        spec: Spec::values("efTW", &[]),
        operands: Operands::Text,
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &COWSAY);
    for item in crate::tools::command::options::parse(invocation.args, &COWSAY.spec) {
        if item.named(&["f"], false) {
            let cow = item.value().and_then(|value| value.text);
            if cow.is_none_or(|cow| cow.contains('/')) {
                judgement.unknown(format!(
                    "`{} {}` loads a cow file from a path, and a cow file is Perl code",
                    invocation.program,
                    item.shown()
                ));
            }
        }
    }
    judgement
}

/// `gron` flattens JSON from its files or input; given a URL it fetches it.
fn gron(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = table::judge(walker, invocation, &TABLE);
    table::refuse_urls(&mut judgement, invocation);
    judgement
}

/// `asciinema cat FILE` prints a recording's output at once; `play` replays it in real time,
/// `rec` records a shell and `upload` sends a file over the network.
fn asciinema_cat(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match call.args.split_first() {
        Some((verb, files)) if verb.text() == Some("cat") => {
            let mut judgement = Judgement::whitelisted();
            table::refuse_urls(&mut judgement, call);
            table::check_paths(
                walker,
                &mut judgement,
                call.program,
                &files.iter().collect::<Vec<_>>(),
            );
            judgement
        }
        _ => Judgement::not_whitelisted(call.program),
    }
}

/// `ncdu -o- DIR` scans a directory and prints what it found as JSON; any other form opens
/// its browser, which needs a terminal (and can delete what it shows), or writes the scan
/// to the file `-o` names.
fn ncdu_export(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const NCDU: Table = Table {
        spec: Spec::values("oeX", &["exclude", "exclude-from"]),
        path_options: &["X", "exclude-from"],
        ..TABLE
    };
    let items = crate::tools::command::options::parse(call.args, &NCDU.spec);
    let to_output = items
        .iter()
        .filter(|item| item.named(&["o"], false))
        .map(|item| item.value().and_then(|v| v.text))
        .collect::<Vec<_>>();
    match to_output.as_slice() {
        [Some("-")] => table::judge(walker, call, &NCDU),
        [] => Judgement::other(
            "`ncdu` without `-o -` opens its browser, which needs a terminal and deletes what it is asked to",
        ),
        _ => Judgement::destroys(
            "`ncdu -o FILE` writes the scan to the file, replacing it".to_owned(),
        ),
    }
}

/// `gum format`, `style` and `join` print what they are given; the other subcommands ask at
/// the terminal (`choose`, `input`, `confirm`, `filter`, `file`, `pager`, `table`, `write`),
/// run a command (`spin`) or may write a file (`log --file`).
fn gum_prints(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match call.args.first().and_then(|arg| arg.text()) {
        Some("format" | "style" | "join") => Judgement::whitelisted(),
        _ => Judgement::not_whitelisted(call.program),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn viewer_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("banner hello", Safe),
            ("ponysay hello", Safe),
            ("jp2a --width=80 notes.txt", Safe),
            ("viu -w 40 notes.txt", Safe),
            ("jp2a --output=art.txt notes.txt", Destructive),
            ("timg -o out.txt notes.txt", Destructive),
            ("img2txt /etc/shadow", Unknown),
            ("ccze -A < notes.txt", Safe),
            ("highlight -O ansi notes.txt", Safe),
            ("highlight -o out.html notes.txt", Destructive),
            ("highlight --plug-in=x.lua notes.txt", NotSafe),
            ("highlight --data-dir=. notes.txt", NotSafe),
            ("mandoc -T utf8 notes.txt", Safe),
            ("asciinema cat notes.txt", Safe),
            ("asciinema rec demo.cast", NotSafe),
            ("asciinema upload notes.txt", NotSafe),
            ("asciinema cat https://asciinema.org/a/1", NotSafe),
            ("ncdu -o- .", Safe),
            ("ncdu -x -o - src", Safe),
            ("ncdu", NotSafe),
            ("ncdu -o scan.json .", Destructive),
            ("ncdu -o- /etc", Unknown),
            ("gum format '# hi'", Safe),
            ("gum style --bold hi", Safe),
            ("gum spin -- rm -rf x", NotSafe),
            ("gum choose a b", NotSafe),
            ("gum log --file out.log hi", NotSafe),
            (
                "scriptreplay --log-timing file.tm --log-out script.out",
                Safe,
            ),
            ("scriptreplay -t timing.log typescript 2", Safe),
            ("scriptreplay -t /var/log/t.log", Unknown),
            ("cowsay hello", Safe),
            ("cowsay -f tux hello there", Safe),
            ("cowthink -e oo -T U moo", Safe),
            ("cowsay -f ./evil.cow hi", Unknown),
            ("cowsay -f/usr/share/cowsay/cows/tux.cow hi", Unknown),
            ("figlet hello", Safe),
            ("figlet -f big hello", Safe),
            ("toilet -f mono12 -F metal hi", Safe),
            ("figlet -f /etc/shadow x", Unknown),
            ("echo hi | lolcat", Safe),
            ("lolcat -p 2 notes.txt", Safe),
            ("fortune", Safe),
            ("fortune -s 50% fortunes", Safe),
            ("fortune /var/games/secret", Unknown),
            ("gron data.json", Safe),
            ("gron --ungron flat.txt", Safe),
            ("gron https://example.com/a.json", Unknown),
            ("scc", Safe),
            ("scc --format json src", Safe),
            ("scc -o report.txt", Destructive),
            ("scc --format-multi tabular:out.txt", Destructive),
            ("perldoc cpan", Safe),
            ("perldoc -f print", Safe),
            ("perldoc -l JSON::PP", Safe),
            ("perldoc -M Pod::Text::Color cpan", Unknown),
            ("perldoc -o man cpan", Unknown),
            ("perldoc -d out.txt cpan", Destructive),
            ("eza -la", Safe),
            ("eza --tree --level 2 src", Safe),
            ("exa -l --sort=size --git", Safe),
            ("eza -I '*.o' src", Safe),
            ("eza /etc", Unknown),
            ("eza -la ~", NotSafe),
            ("eza > list.txt", Destructive),
            ("lsd -la", Safe),
            ("lsd --tree --depth 2", Safe),
            ("lsd --config-file /etc/secret.yaml", Unknown),
            ("lsd ../", Unknown),
            ("dust", Safe),
            ("dust -d 2 src", Safe),
            ("dust -X target .", Safe),
            ("dust /", Unknown),
            ("duf", Safe),
            ("duf --only local --output mountpoint,size", Safe),
            ("duf --json", Safe),
            ("duf /home", Unknown),
            ("tokei", Safe),
            ("tokei src --output json", Safe),
            ("tokei -e target -t Rust", Safe),
            ("tokei --input /etc/stats.json", Unknown),
            ("tokei ../other", Unknown),
            ("pdfinfo notes.pdf", Safe),
            ("pdfinfo -meta notes.pdf", Safe),
            ("pdfinfo /etc/x.pdf", Unknown),
            ("yq '.a.b' config.yaml", Safe),
            ("yq -o json '.' config.yaml", Safe),
            ("yq e '.a' config.yaml", Safe),
            ("cat config.yaml | yq '.items[0]'", Safe),
            ("yq '.a' /etc/x.yaml", Unknown),
            ("yq -i '.a = 1' config.yaml", Destructive),
            ("yq --inplace '.a = 1' config.yaml", Destructive),
            ("yq -s '.name' docs.yaml", Destructive),
            ("yq --from-file /etc/q.yq config.yaml", Unknown),
            ("yq '.a' config.yaml > out.yaml", Destructive),
            ("yq 'load(\"/etc/shadow\")' config.yaml", Unknown),
            ("yq -n 'load_str(\"../x\")'", Unknown),
        ]);
    }
}
