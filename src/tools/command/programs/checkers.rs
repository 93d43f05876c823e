//! Formatters and linters in the modes where they only report: `gofmt -l`, `rustfmt --check`,
//! `black --check`, `isort --diff`, `clang-format` (which prints by default), `shfmt -d`,
//! `autopep8`, `yapf`, `ruff format --check`, `ruff check --no-fix`, `pg_format`,
//! `sqlformat`, `stylua --check`, `taplo fmt --check`, and the checkers that never write
//! (`shellcheck`, `yamllint`, `hadolint`, `typos` without `-w`, `taplo check`, `pyflakes`,
//! `pycodestyle`, `checkbashisms`, `pydocstyle`, `vulture`, `xenon`, `radon`, `proselint`,
//! `vale`, `bandit`, `statix check`, `biome check`, `tsc --noEmit`, `jsonlint`), `goimports`
//! and the Nix formatters in check mode, `tidy` and `js-beautify` to their output; with
//! them the text tools that print what they convert or find (`nkf`, `lexgrog`,
//! `llvm-strings`) and `jar t`, which lists an archive.
//!
//! A formatter's writing mode rewrites its files in place, so it is destructive: `gofmt -w`,
//! `clang-format -i`, `shfmt -w`, `autopep8 -i`, and `rustfmt`, `black` and `isort` given
//! files without the option that makes them report. None of these programs runs code from
//! the files it reads or from the workspace's configuration (that is why `prettier`,
//! `eslint`, `pylint`, `flake8` and `mypy`, whose configuration may name plugins to load,
//! are not here).

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb};
use super::table::{self, Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, check_paths};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["gofmt", "goimports"], Rule::Judge(gofmt)),
    Program::new(&["rustfmt"], Rule::Judge(rustfmt)),
    Program::new(&["black"], Rule::Judge(black)),
    Program::new(&["isort"], Rule::Judge(isort)),
    Program::new(&["clang-format"], Rule::Judge(clang_format)),
    Program::new(&["ruff"], Rule::Subcommands(&RUFF)),
    Program::new(&["stylua"], Rule::Judge(stylua)),
    Program::new(
        // Nix formatters: given files they rewrite them unless checking (`-c`/`--check`).
        &["nixfmt", "alejandra"],
        Rule::Judge(|walker, call| {
            formatter(
                walker,
                call,
                &Table {
                    spec: Spec::values("w", &["width", "indent", "threads", "experimental-config"]),
                    ..TABLE
                },
                &["check", "c"],
            )
        }),
    ),
    Program::new(&["biome", "rome"], Rule::Subcommands(&BIOME)),
    Program::new(
        // Linters that read what they are given and report, loading no code of the
        // project's: prose (`proselint`, whose `--clean` deletes its cache, `write-good`),
        // Python docstrings and dead code (`pydocstyle`, `vulture`), the complexity
        // thresholds of `xenon`, shell scripts' bashisms (`checkbashisms`).
        &["proselint", "write-good", "checkbashisms"],
        Rule::Table(&Table {
            spec: Spec::values("", &["config"]),
            path_options: &["config"],
            refused: &[Refusal {
                options: &["clean"],
                effect: Effect::Writes,
                what: "deletes its cache",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["pydocstyle", "vulture"],
        Rule::Table(&Table {
            spec: Spec::values(
                "",
                &[
                    "config",
                    "convention",
                    "select",
                    "ignore",
                    "add-select",
                    "add-ignore",
                    "match",
                    "match-dir",
                    "ignore-decorators",
                    "ignore-names",
                    "exclude",
                    "min-confidence",
                ],
            ),
            path_options: &["config"],
            ..TABLE
        }),
    ),
    Program::new(
        &["xenon"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ambei",
                &[
                    "max-average",
                    "max-modules",
                    "max-absolute",
                    "exclude",
                    "ignore",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(&["statix"], Rule::Subcommands(&STATIX)),
    Program::new(&["radon"], Rule::Subcommands(&RADON)),
    Program::new(
        // Prose linting with the styles of `.vale.ini`; `sync` downloads packages.
        &["vale"],
        Rule::Judge(|walker, call| {
            if call.args.first().and_then(|a| a.text()) == Some("sync") {
                return Judgement::other("`vale sync` downloads style packages over the network");
            }
            table::judge(
                walker,
                call,
                &Table {
                    spec: Spec::values(
                        "",
                        &["config", "glob", "minAlertLevel", "output", "filter", "ext"],
                    ),
                    path_options: &["config"],
                    ..TABLE
                },
            )
        }),
    ),
    Program::new(
        // Python security linting; `-o` writes the report, `-c` and `-b` read a
        // configuration and a baseline.
        &["bandit"],
        Rule::Table(&Table {
            spec: Spec::values(
                "cpatsfobxn",
                &[
                    "configfile",
                    "profile",
                    "tests",
                    "skip",
                    "format",
                    "output",
                    "baseline",
                    "exclude",
                    "msg-template",
                    "severity-level",
                    "confidence-level",
                    "ini",
                ],
            ),
            path_options: &["c", "configfile", "b", "baseline", "ini"],
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        // JSON validated and pretty-printed to the output; `-i` rewrites the file.
        &["jsonlint", "jsonlint-php", "jsonlint-py"],
        Rule::Table(&Table {
            spec: Spec::values("", &["indent"]),
            refused: &[Refusal {
                options: &["i", "in-place"],
                effect: Effect::Writes,
                what: "rewrites the file in place",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["tsc"], Rule::Judge(tsc_no_emit)),
    Program::new(&["taplo"], Rule::Subcommands(&TAPLO)),
    Program::new(
        // Python's static checkers that never import what they read: pyflakes (no options)
        // and pycodestyle (its configuration files are settings).
        &["pyflakes", "pycodestyle"],
        Rule::Table(&Table {
            spec: Spec::values(
                "",
                &[
                    "config",
                    "exclude",
                    "filename",
                    "select",
                    "ignore",
                    "max-line-length",
                    "max-doc-length",
                    "indent-size",
                    "format",
                ],
            ),
            path_options: &["config"],
            ..TABLE
        }),
    ),
    Program::new(
        // HTML Tidy: the tidied document (or with `-e` only the errors) to the output.
        // `-m` rewrites the files in place, `-o` and `-f` write the output or the errors
        // to a file, and so do the same settings given as options (`--write-back yes`,
        // `--output-file`, `--error-file`); `-config` reads settings that may say the same.
        &["tidy"],
        Rule::Table(&Table {
            spec: Spec::values("ofw", &["output", "file", "wrap", "config"]),
            refused: &[
                Refusal {
                    options: &[
                        "m",
                        "modify",
                        "o",
                        "output",
                        "f",
                        "file",
                        "write-back",
                        "output-file",
                        "error-file",
                    ],
                    effect: Effect::Writes,
                    what: "writes files (in place, or its output or errors)",
                },
                Refusal {
                    options: &["config"],
                    effect: Effect::Unsafe,
                    what: "reads settings from a file, which may say to write",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // js-beautify and its HTML and CSS twins print the result; `-r` replaces the files
        // in place and `-o` writes another. Their configuration (`.jsbeautifyrc`) is JSON.
        &["js-beautify", "html-beautify", "css-beautify"],
        Rule::Table(&Table {
            spec: Spec::values(
                "osfl",
                &[
                    "outfile",
                    "indent-size",
                    "indent-char",
                    "eol",
                    "type",
                    "config",
                    "file",
                ],
            ),
            path_options: &["config", "f", "file"],
            refused: &[Refusal {
                options: &["r", "replace", "o", "outfile"],
                effect: Effect::Writes,
                what: "writes the result over the file or to another",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Lints Dockerfiles; its configuration file is data.
        &["hadolint"],
        Rule::Table(&Table {
            spec: Spec::values(
                "cft",
                &[
                    "config",
                    "format",
                    "failure-threshold",
                    "error",
                    "warning",
                    "info",
                    "style",
                    "ignore",
                    "trusted-registry",
                    "require-label",
                    "file-path-in-report",
                ],
            ),
            path_options: &["c", "config"],
            ..TABLE
        }),
    ),
    Program::new(
        // Finds misspellings; `-w` corrects them in place, `--dump-config` writes the
        // configuration to a file, and `--file-list` reads the names of the files.
        &["typos"],
        Rule::Table(&Table {
            spec: Spec::values(
                "cj",
                &[
                    "config",
                    "format",
                    "exclude",
                    "locale",
                    "file-list",
                    "threads",
                    "color",
                    "dump-config",
                    "type",
                    "type-add",
                ],
            ),
            path_options: &["c", "config", "file-list"],
            names_from: &["file-list"],
            refused: &[
                Refusal {
                    options: &["w", "write-changes"],
                    effect: Effect::Writes,
                    what: "corrects the misspellings in place",
                },
                Refusal {
                    options: &["dump-config"],
                    effect: Effect::Writes,
                    what: "writes the configuration to a file",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // Pretty-prints SQL: pgFormatter (`-i` rewrites the files in place) and sqlparse's
        // `sqlformat`.
        &["pg_format"],
        Rule::Table(&Table {
            spec: Spec::values(
                "cfFmopsSuUwW",
                &[
                    "config",
                    "function-case",
                    "format",
                    "maxlength",
                    "output",
                    "placeholder",
                    "spaces",
                    "separator",
                    "keyword-case",
                    "type-case",
                    "wrap-limit",
                    "wrap-after",
                    "extra-function",
                    "extra-keyword",
                ],
            ),
            path_options: &["c", "config", "extra-function", "extra-keyword"],
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &["i", "inplace"],
                    effect: Effect::Writes,
                    what: "rewrites the files in place",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["sqlformat"],
        Rule::Table(&Table {
            spec: Spec::values(
                "okil",
                &[
                    "outfile",
                    "keywords",
                    "identifiers",
                    "language",
                    "encoding",
                    "indent_width",
                    "wrap_after",
                ],
            ),
            refused: &[Refusal {
                options: &["o", "outfile"],
                effect: Effect::Writes,
                what: "writes the formatted SQL to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["shfmt"],
        Rule::Table(&Table {
            spec: Spec::values("i", &["indent", "filename"]),
            refused: &[IN_PLACE_W],
            ..TABLE
        }),
    ),
    Program::new(
        &["autopep8"],
        Rule::Table(&Table {
            spec: Spec::values(
                "jp",
                &[
                    "jobs",
                    "pep8-passes",
                    "global-config",
                    "select",
                    "ignore",
                    "max-line-length",
                    "line-range",
                    "range",
                    "indent-size",
                    "exclude",
                ],
            ),
            path_options: &["global-config"],
            refused: &[IN_PLACE_I],
            ..TABLE
        }),
    ),
    Program::new(
        &["yapf"],
        Rule::Table(&Table {
            spec: Spec::values("le", &["style", "lines", "exclude"]),
            refused: &[IN_PLACE_I],
            ..TABLE
        }),
    ),
    Program::new(
        &["shellcheck"],
        Rule::Table(&Table {
            spec: Spec::values(
                "efsSoiPW",
                &[
                    "exclude",
                    "format",
                    "shell",
                    "severity",
                    "enable",
                    "include",
                    "source-path",
                    "wiki-link-count",
                    "color",
                    "rcfile",
                ],
            ),
            path_options: &["rcfile"],
            ..TABLE
        }),
    ),
    Program::new(
        &["yamllint"],
        Rule::Table(&Table {
            spec: Spec::values("cdf", &["config-file", "config-data", "format"]),
            path_options: &["c", "config-file"],
            ..TABLE
        }),
    ),
    Program::new(
        &["nkf"],
        Rule::Table(&Table {
            refused: &[Refusal {
                options: &["O", "overwrite", "in-place"],
                effect: Effect::Writes,
                what: "writes its output to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["lexgrog"],
        Rule::Table(&Table {
            spec: Spec::values("E", &["encoding"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["llvm-strings"],
        Rule::Table(&Table {
            spec: Spec::values("nt", &["bytes", "radix"]),
            ..TABLE
        }),
    ),
    Program::new(&["jar"], Rule::Judge(jar)),
    Program::new(&["indent"], Rule::Judge(indent)),
];

/// GNU `indent` formats its input to its output, or its output file (`-o FILE`); given
/// files without `-st` (`--standard-output`), it rewrites them in place. Its options are
/// single-dash words (`-kr`, `-l120`), read whole.
fn indent(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut to_stdout = false;
    let mut files = Vec::new();
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            None => judgement.destructive(format!(
                "`indent` is given `{}`, which may become `-o FILE` or a file it rewrites when the line runs",
                word.raw
            )),
            Some("-o" | "--output-file") => {
                judgement.destructive("`indent -o` writes its output to a file, replacing it");
                words.next();
            }
            Some("-st" | "--standard-output") => to_stdout = true,
            Some(text) if text.starts_with('-') && text != "-" => {}
            Some(_) => files.push(word),
        }
    }
    if !files.is_empty() && !to_stdout {
        judgement
            .destructive("`indent` rewrites the files it is given in place (`indent -st` prints)");
    }
    check_paths(walker, &mut judgement, "indent", &files);
    judgement
}

/// `ruff format --check`/`--diff` and `ruff check --no-fix`/`--diff` report; `ruff format`
/// alone and `ruff check --fix` rewrite the files. `ruff check` alone applies the fixes when
/// the project's configuration says `fix = true`, so it waits. `rule`, `linter` and
/// `version` print what ruff knows. `--config` may be a file outside the workspace or a
/// setting, and waits.
const RUFF: Subcommands = Subcommands {
    verbs: &[
        Verb::judged(&["format"], |walker, call| {
            if !options::names_any(call.args, &[], &["check", "diff"]) {
                return Judgement::destroys("`ruff format` rewrites the files in place");
            }
            table::judge(walker, call, &RUFF_REPORT)
        }),
        Verb::judged(&["check"], |walker, call| {
            if options::names_any(call.args, &[], &["fix", "unsafe-fixes", "add-noqa"]) {
                return Judgement::destroys("`ruff check --fix` rewrites the files in place");
            }
            if !options::names_any(call.args, &[], &["no-fix", "diff"]) {
                return Judgement::other(
                    "`ruff check` fixes the files in place when the project's configuration says `fix = true`; `--no-fix` or `--diff` only report",
                );
            }
            table::judge(walker, call, &RUFF_REPORT)
        }),
        Verb::reads(
            &["rule", "linter", "version"],
            &Table {
                spec: Spec::values("", &["output-format"]),
                operands: Operands::Text,
                ..TABLE
            },
        ),
    ],
    ..SUBCOMMANDS
};

/// The reporting forms of `ruff check` and `ruff format`.
const RUFF_REPORT: Table = Table {
    spec: Spec::values(
        "eo",
        &[
            "config",
            "select",
            "ignore",
            "extend-select",
            "extend-ignore",
            "per-file-ignores",
            "exclude",
            "extend-exclude",
            "output-format",
            "output-file",
            "target-version",
            "line-length",
            "stdin-filename",
            "cache-dir",
            "fixable",
            "unfixable",
            "range",
        ],
    ),
    refused: &[
        Refusal {
            options: &["o", "output-file"],
            effect: Effect::Writes,
            what: "writes the report to a file, replacing it",
        },
        Refusal {
            options: &["config", "cache-dir"],
            effect: Effect::Unsafe,
            what: "takes a configuration file or setting not read here",
        },
        Refusal {
            options: &["watch"],
            effect: Effect::Unsafe,
            what: "runs until stopped",
        },
    ],
    ..TABLE
};

const IN_PLACE_W: Refusal = Refusal {
    options: &["w", "write"],
    effect: Effect::Writes,
    what: "rewrites the files in place",
};

const IN_PLACE_I: Refusal = Refusal {
    options: &["i", "in-place"],
    effect: Effect::Writes,
    what: "rewrites the files in place",
};

/// `gofmt` prints the formatted source, lists (`-l`) or diffs (`-d`); `-w` rewrites the
/// files and `-cpuprofile` writes a profile. Go's flags take one dash or two and are never
/// combined, so a word with two dashes is not read here, and any word holding `w` or `c`
/// as a flag letter (`-w=false` included) counts as the writing flag.
fn gofmt(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const GOFMT: Table = Table {
        spec: Spec::values("r", &[]),
        refused: &[Refusal {
            options: &["w", "c"],
            effect: Effect::Writes,
            what: "rewrites the files in place, or writes a profile",
        }],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &GOFMT);
    if let Some(long) = invocation
        .args
        .iter()
        .find(|arg| arg.text().is_none_or(|text| text.starts_with("--")))
    {
        judgement.unknown(format!(
            "`{} {}` is an option written with two dashes, which is not read here",
            invocation.program, long.raw
        ));
    }
    judgement
}

/// A formatter that rewrites the files it is given unless one of `reports` is: without
/// files it formats its input to its output. `-` alone stands for the input.
fn formatter(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    row: &Table,
    reports: &[&str],
) -> Judgement {
    let program = invocation.program;
    let mut judgement = table::judge(walker, invocation, row);
    let items = options::parse(invocation.args, &row.spec);
    let reporting = items
        .iter()
        .any(|item| item.named(reports, row.spec.abbreviations));
    let files = options::operands(&items);
    let only_input = files.iter().all(|file| file.text() == Some("-"));
    if !reporting && !only_input {
        judgement.destructive(format!(
            "`{program}` rewrites the files it is given in place (`{program} {}` only reports)",
            reports
                .iter()
                .map(|name| if name.len() == 1 {
                    format!("-{name}")
                } else {
                    format!("--{name}")
                })
                .next()
                .unwrap_or_default()
        ));
    }
    judgement
}

/// `rustfmt --check` and `rustfmt --emit stdout` report; `--print-config ... FILE` writes
/// a configuration file.
fn rustfmt(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const RUSTFMT: Table = Table {
        spec: Spec::values(
            "",
            &[
                "config-path",
                "edition",
                "style-edition",
                "emit",
                "config",
                "color",
                "print-config",
            ],
        ),
        path_options: &["config-path"],
        refused: &[Refusal {
            options: &["print-config", "backup"],
            effect: Effect::Writes,
            what: "writes a file",
        }],
        ..TABLE
    };
    let items = options::parse(invocation.args, &RUSTFMT.spec);
    let to_stdout = items.iter().any(|item| {
        item.named(&["emit"], true) && item.value().and_then(|v| v.text) == Some("stdout")
    });
    let emits_files = items.iter().any(|item| {
        item.named(&["emit"], true) && item.value().and_then(|v| v.text) != Some("stdout")
    });
    let reports: &[&str] = if to_stdout { &["emit"] } else { &["check"] };
    let mut judgement = formatter(walker, invocation, &RUSTFMT, reports);
    if emits_files {
        judgement.destructive("`rustfmt --emit` other than `stdout` writes files");
    }
    judgement
}

/// `black --check`, `--diff` or `--code` report; otherwise black rewrites its files.
fn black(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const BLACK: Table = Table {
        spec: Spec::values(
            "ltcW",
            &[
                "line-length",
                "target-version",
                "code",
                "workers",
                "config",
                "include",
                "exclude",
                "extend-exclude",
                "force-exclude",
                "stdin-filename",
                "required-version",
                "python-cell-magics",
            ],
        ),
        path_options: &["config"],
        ..TABLE
    };
    formatter(walker, invocation, &BLACK, &["check", "diff", "c", "code"])
}

/// StyLua: `--check` (`-c`) reports what formatting would change; otherwise it rewrites its
/// files. Its configuration (`stylua.toml`) is settings.
fn stylua(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const STYLUA: Table = Table {
        spec: Spec::values(
            "fg",
            &[
                "config-path",
                "glob",
                "num-threads",
                "output-format",
                "syntax",
                "stdin-filepath",
                "color",
                "call-parentheses",
                "collapse-simple-statement",
                "column-width",
                "indent-type",
                "indent-width",
                "line-endings",
                "quote-style",
                "sort-requires",
            ],
        ),
        path_options: &["f", "config-path"],
        ..TABLE
    };
    formatter(walker, invocation, &STYLUA, &["check", "c"])
}

/// Taplo (TOML): `check`/`lint` validate and report; `fmt --check` reports what formatting
/// would change, and `fmt` otherwise rewrites the files. `--cache-path` names where it
/// writes its schema cache.
const TAPLO: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(&["check", "lint"], &TAPLO_ROW),
        Verb::judged(&["fmt", "format"], |walker, call| {
            formatter(walker, call, &TAPLO_ROW, &["check"])
        }),
    ],
    ..SUBCOMMANDS
};

const TAPLO_ROW: Table = Table {
    spec: Spec::values(
        "co",
        &[
            "config",
            "schema",
            "cache-path",
            "option",
            "colors",
            "stdin-filepath",
        ],
    ),
    path_options: &["c", "config"],
    refused: &[Refusal {
        options: &["cache-path"],
        effect: Effect::Writes,
        what: "writes its schema cache there",
    }],
    ..TABLE
};

/// `isort --check-only` (`-c`), `--diff` and `--stdout` (`-d`) report; otherwise isort
/// rewrites its files.
fn isort(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const ISORT: Table = Table {
        spec: Spec::values(
            "",
            &[
                "settings-path",
                "settings-file",
                "sp",
                "profile",
                "line-length",
                "skip",
                "skip-glob",
                "multi-line",
                "project",
                "src",
                "python-version",
            ],
        ),
        path_options: &["settings-path", "settings-file", "sp"],
        ..TABLE
    };
    formatter(
        walker,
        invocation,
        &ISORT,
        &["check-only", "check", "c", "diff", "stdout", "d"],
    )
}

/// LLVM's options that `clang-format` reads and that only choose what it prints.
const CLANG_FORMAT_OPTIONS: &[&str] = &[
    "style",
    "fallback-style",
    "assume-filename",
    "lines",
    "offset",
    "length",
    "sort-includes",
    "dry-run",
    "n",
    "Werror",
    "Wno-error",
    "ferror-limit",
    "output-replacements-xml",
    "dump-config",
    "verbose",
    "cursor",
    "qualifier-alignment",
];

/// `clang-format` prints the formatted file; `-i` rewrites it. LLVM's options are words
/// with one dash or two (`-style=file`), so each is read whole: `-i` is destructive, a name
/// of [`CLANG_FORMAT_OPTIONS`] reports, any other option is not read here.
fn clang_format(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut files = Vec::new();
    let mut operands_only = false;
    for arg in invocation.args {
        let Some(text) = arg.text() else {
            judgement.destructive(format!(
                "`clang-format` is given `{}`, which may become `-i` (rewrites the files in place) when the line runs",
                arg.raw
            ));
            continue;
        };
        if operands_only || !text.starts_with('-') || text == "-" {
            files.push(arg);
            continue;
        }
        if text == "--" {
            operands_only = true;
            continue;
        }
        let name = text.trim_start_matches('-');
        let name = name.split_once('=').map_or(name, |(name, _)| name);
        if name == "i" {
            judgement.destructive("`clang-format -i` rewrites the files in place");
        } else if !CLANG_FORMAT_OPTIONS.contains(&name) {
            judgement.unknown(format!("`clang-format {text}` is an option not read here"));
        }
    }
    let files: Vec<_> = files
        .into_iter()
        .filter(|file| file.text() != Some("-"))
        .collect();
    check_paths(walker, &mut judgement, "clang-format", &files);
    judgement
}

/// `jar t` (`-t`, `--list`) lists an archive, with `f` naming it; `x` extracts and
/// `c`/`u` write archives; other modes are not read here.
fn jar(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let Some(first) = invocation.args.first() else {
        return Judgement::other("`jar` without a mode is not read here");
    };
    let Some(mode) = first.text() else {
        return Judgement::destroys(format!(
            "`jar {}` may become `jar x` (extracts, overwriting files) when the line runs",
            first.raw
        ));
    };
    if mode.starts_with("--") {
        return jar_long(walker, invocation);
    }
    let letters = mode.strip_prefix('-').unwrap_or(mode);
    if letters.contains(['x', 'c', 'u']) {
        return Judgement::destroys(format!(
            "`jar {mode}` extracts or writes files, overwriting them"
        ));
    }
    if !letters.contains('t') || !letters.chars().all(|c| "tvf0M".contains(c)) {
        return Judgement::other(format!("`jar {mode}` is not a mode read here"));
    }
    let mut judgement = Judgement::whitelisted();
    let rest: Vec<_> = invocation.args[1..].iter().collect();
    if let Some(archive) = rest.first().filter(|_| letters.contains('f')) {
        check_paths(walker, &mut judgement, "jar", &[archive]);
    }
    judgement
}

/// `jar --list --file F [entries]`.
fn jar_long(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let spec = Spec::values("f", &["file"]);
    let items = options::parse(invocation.args, &spec);
    let mut judgement = Judgement::whitelisted();
    let mut listing = false;
    for item in &items {
        match item {
            Item::Long { .. } | Item::Short { .. } if item.named(&["list", "t"], true) => {
                listing = true;
            }
            Item::Long { .. } | Item::Short { .. } if item.named(&["file", "f"], true) => {
                table::check_value(walker, &mut judgement, "jar", item);
            }
            Item::Long { .. } | Item::Short { .. } if item.named(&["verbose", "v"], true) => {}
            Item::Opaque(word) => judgement.destructive(format!(
                "`jar` is given `{}`, which may become `--extract` when the line runs",
                word.raw
            )),
            Item::Operand(_) | Item::EndOfOptions => {}
            other => {
                let shown = other.shown();
                if other.named(&["extract", "create", "update", "x", "c", "u"], true) {
                    judgement.destructive(format!(
                        "`jar {shown}` extracts or writes files, overwriting them"
                    ));
                } else {
                    judgement.unknown(format!("`jar {shown}` is not read here"));
                }
            }
        }
    }
    if !listing {
        judgement.unknown("`jar` without `--list` is not read here");
    }
    judgement
}

/// Biome (and Rome before it): `check`, `lint`, `format` and `ci` report; `--write`,
/// `--apply`, `--fix` (and their unsafe forms) rewrite the files.
const BIOME: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(
            &["check", "lint", "format", "ci"],
            &Table {
                spec: Spec::values(
                    "",
                    &[
                        "config-path",
                        "max-diagnostics",
                        "reporter",
                        "diagnostic-level",
                        "log-level",
                        "log-kind",
                        "stdin-file-path",
                        "vcs-root",
                    ],
                ),
                path_options: &["config-path"],
                refused: &[Refusal {
                    options: &[
                        "write",
                        "apply",
                        "apply-unsafe",
                        "fix",
                        "unsafe",
                        "staged",
                        "changed",
                    ],
                    effect: Effect::Writes,
                    what: "rewrites the files, or asks git which ones to",
                }],
                ..TABLE
            },
        ),
        Verb::reads(
            &["version", "rage", "explain"],
            &Table {
                operands: Operands::Text,
                ..TABLE
            },
        ),
    ],
    ..SUBCOMMANDS
};

/// `statix check` lists antipatterns in Nix code; `fix` rewrites the files and `single -i`
/// one in place.
const STATIX: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["fix"], "rewrites the Nix files it fixes"),
        Verb::reads(
            &["check", "list", "explain"],
            &Table {
                spec: Spec::values("ocs", &["format", "config", "ignore"]),
                path_options: &["c", "config"],
                ..TABLE
            },
        ),
    ],
    ..SUBCOMMANDS
};

/// Radon's metrics of Python code (`cc`, `mi`, `raw`, `hal`), printed; `-O` writes them.
const RADON: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &["cc", "mi", "raw", "hal"],
        &Table {
            spec: Spec::values(
                "neiOo",
                &["min", "max", "exclude", "ignore", "output-file", "order"],
            ),
            refused: &[Refusal {
                options: &["O", "output-file"],
                effect: Effect::Writes,
                what: "writes the report to a file",
            }],
            ..TABLE
        },
    )],
    ..SUBCOMMANDS
};

/// `tsc --noEmit` type-checks and writes nothing (`-p` names the project's configuration);
/// otherwise it writes the compiled files, and `--watch` never ends.
fn tsc_no_emit(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const TSC: Table = Table {
        spec: Spec::values(
            "p",
            &[
                "project",
                "target",
                "module",
                "lib",
                "jsx",
                "moduleResolution",
            ],
        ),
        path_options: &["p", "project"],
        refused: &[Refusal {
            options: &[
                "w",
                "watch",
                "b",
                "build",
                "outDir",
                "outFile",
                "generateTrace",
                "init",
            ],
            effect: Effect::Unsafe,
            what: "writes files or never ends",
        }],
        ..TABLE
    };
    if !call.args.iter().any(|arg| {
        arg.text()
            .is_some_and(|t| t.eq_ignore_ascii_case("--noemit"))
    }) {
        return Judgement::other("`tsc` writes the compiled files unless `--noEmit` is given");
    }
    table::judge(walker, call, &TSC)
}

#[cfg(test)]
mod tests {
    #[test]
    fn checkers_report_and_their_writing_modes_destroy() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("stylua --check src", Safe),
            ("goimports -l .", Safe),
            ("nixfmt --check notes.txt", Safe),
            ("nixfmt notes.txt", Destructive),
            ("alejandra -c .", Safe),
            ("alejandra .", Destructive),
            ("biome check .", Safe),
            ("biome format src", Safe),
            ("biome check --write .", Destructive),
            ("biome lint --apply .", Destructive),
            ("biome check --config-path /etc/biome .", Unknown),
            ("statix check", Safe),
            ("statix fix", Destructive),
            ("radon cc -a src", Safe),
            ("radon mi -O out.txt src", Destructive),
            ("proselint notes.txt", Safe),
            ("proselint --clean", Destructive),
            ("pydocstyle --convention=google src", Safe),
            ("vulture src --min-confidence 80", Safe),
            ("xenon --max-absolute B src", Safe),
            ("checkbashisms -x notes.txt", Safe),
            ("checkbashisms /etc/profile", Unknown),
            ("vale notes.txt", Safe),
            ("vale sync", NotSafe),
            ("vale --config /etc/vale.ini notes.txt", Unknown),
            ("bandit -r src -l", Safe),
            ("bandit -r src -o report.json", Destructive),
            ("bandit -c /etc/bandit.yaml -r src", Unknown),
            ("jsonlint notes.txt", Safe),
            ("jsonlint -i notes.txt", Destructive),
            ("tsc --noEmit", Safe),
            ("tsc --noEmit -p notes.txt", Safe),
            ("tsc", NotSafe),
            ("tsc --noEmit --watch", NotSafe),
            ("tsc --noEmit -p /etc/tsconfig.json", Unknown),
            ("goimports -d src", Safe),
            ("goimports -w src", Destructive),
            ("stylua -c -f notes.txt src", Safe),
            ("stylua src", Destructive),
            ("stylua --check -f /etc/stylua.toml src", Unknown),
            ("taplo check notes.txt", Safe),
            ("taplo lint -c notes.txt notes.txt", Safe),
            ("taplo fmt --check notes.txt", Safe),
            ("taplo fmt notes.txt", Destructive),
            ("taplo check --cache-path cache notes.txt", Destructive),
            ("taplo check /etc/x.toml", Unknown),
            ("pyflakes notes.txt", Safe),
            (
                "pycodestyle --max-line-length 100 --config notes.txt src",
                Safe,
            ),
            ("pycodestyle /etc", Unknown),
            ("tidy -q -e notes.txt", Safe),
            ("tidy -i -q notes.txt", Safe),
            ("tidy -m notes.txt", Destructive),
            ("tidy -o out.html notes.txt", Destructive),
            ("tidy -f errors.txt notes.txt", Destructive),
            ("tidy --write-back yes notes.txt", Destructive),
            ("tidy -config tidy.conf notes.txt", NotSafe),
            ("js-beautify notes.txt", Safe),
            ("html-beautify -s 2 notes.txt", Safe),
            ("js-beautify -r notes.txt", Destructive),
            ("js-beautify -o out.js notes.txt", Destructive),
            ("js-beautify /etc/x.js", Unknown),
            ("actionlint", Safe),
            ("actionlint -oneline -format '{{json .}}' notes.txt", Safe),
            ("actionlint -config-file=notes.txt", Safe),
            ("actionlint -shellcheck ./sc notes.txt", Unknown),
            ("actionlint -pyflakes=./pf", Unknown),
            ("actionlint -init-config", Unknown),
            ("actionlint -config-file /etc/x.yml", Unknown),
            ("actionlint /etc/x.yml", Unknown),
            ("ruff format --check src", Safe),
            ("ruff format --diff notes.txt", Safe),
            ("ruff check --no-fix src", Safe),
            ("ruff check --diff --select E501 src", Safe),
            ("ruff rule E501", Safe),
            ("ruff format src", Destructive),
            ("ruff check --fix src", Destructive),
            ("ruff check --no-fix --fix src", Destructive),
            ("ruff check src", Unknown),
            ("ruff check --no-fix -o report.txt src", Destructive),
            ("ruff check --no-fix --config /etc/ruff.toml src", Unknown),
            ("ruff check --no-fix /etc", Unknown),
            ("ruff format --check $OPT src", Destructive),
            ("hadolint Dockerfile", Safe),
            (
                "hadolint --ignore DL3008 -c .hadolint.yaml Dockerfile",
                Safe,
            ),
            ("hadolint -c /etc/hadolint.yaml Dockerfile", Unknown),
            ("typos", Safe),
            ("typos --diff src", Safe),
            ("typos -w src", Destructive),
            ("typos --dump-config out.toml", Destructive),
            ("pg_format query.sql", Safe),
            ("pg_format -u 2 -s 4 query.sql", Safe),
            ("pg_format -i query.sql", Destructive),
            ("pg_format -o out.sql query.sql", Destructive),
            ("sqlformat -r -k upper query.sql", Safe),
            ("sqlformat -o out.sql query.sql", Destructive),
            ("gofmt -l .", Safe),
            ("gofmt -d main.go", Safe),
            ("gofmt -s main.go", Safe),
            ("gofmt -r 'a[b:len(a)] -> a[b:]' main.go", Safe),
            ("gofmt -w main.go", Destructive),
            ("gofmt -l -w .", Destructive),
            ("gofmt -w=false main.go", Destructive),
            ("gofmt --w main.go", Unknown),
            ("gofmt -cpuprofile p.out main.go", Destructive),
            ("gofmt -l /etc", Unknown),
            ("rustfmt --check src/main.rs", Safe),
            ("rustfmt --emit stdout src/main.rs", Safe),
            ("rustfmt --edition 2021 --check src/lib.rs", Safe),
            ("rustfmt src/main.rs", Destructive),
            ("rustfmt --emit files src/main.rs", Destructive),
            ("rustfmt --print-config default rustfmt.toml", Destructive),
            ("rustfmt --check /etc/x.rs", Unknown),
            ("black --check src", Safe),
            ("black --diff src", Safe),
            ("black -l 100 --check .", Safe),
            ("black -c 'x=1'", Safe),
            ("black -", Safe),
            ("black src", Destructive),
            ("black -l 100 src", Destructive),
            ("black --check --config /etc/black.toml src", Unknown),
            ("isort --check-only --diff app.py", Safe),
            ("isort -c .", Safe),
            ("isort --profile black --diff .", Safe),
            ("isort app.py", Destructive),
            ("clang-format main.c", Safe),
            ("clang-format -style=file main.c", Safe),
            ("clang-format --style=llvm --dry-run -Werror main.c", Safe),
            ("clang-format -dump-config", Safe),
            ("clang-format -i main.c", Destructive),
            ("clang-format -style=google -i main.c", Destructive),
            ("clang-format --i main.c", Destructive),
            ("clang-format -load=plugin.so main.c", Unknown),
            ("clang-format /etc/x.c", Unknown),
            ("shfmt -d script.sh", Safe),
            ("shfmt -l -i 2 .", Safe),
            ("shfmt -w script.sh", Destructive),
            ("shfmt --write script.sh", Destructive),
            ("autopep8 app.py", Safe),
            ("autopep8 --diff app.py", Safe),
            ("autopep8 -i app.py", Destructive),
            ("autopep8 --in-place -a app.py", Destructive),
            ("yapf app.py", Safe),
            ("yapf -d app.py", Safe),
            ("yapf -i app.py", Destructive),
            ("shellcheck script.sh", Safe),
            ("shellcheck -s bash -e SC2086 script.sh", Safe),
            ("shellcheck --rcfile /etc/x script.sh", Unknown),
            ("shellcheck /etc/profile", Unknown),
            ("yamllint config.yaml", Safe),
            ("yamllint -d relaxed .", Safe),
            ("yamllint -c /etc/y.yml config.yaml", Unknown),
            ("nkf -g notes.txt", Safe),
            ("echo テスト | nkf -WwMQ", Safe),
            ("nkf -w --overwrite notes.txt", Destructive),
            ("nkf -O notes.txt out.txt", Destructive),
            ("nkf -w notes.txt > out.txt", Destructive),
            ("lexgrog man.1", Safe),
            ("lexgrog -fw man.1", Safe),
            ("llvm-strings input.txt", Safe),
            ("llvm-strings -n 8 /etc/x", Unknown),
            ("jar tf app.jar", Safe),
            ("jar -tvf app.jar META-INF/MANIFEST.MF", Safe),
            ("jar --list --file app.jar", Safe),
            ("jar tf /opt/app.jar", Unknown),
            ("jar xf app.jar", Destructive),
            ("jar cf app.jar classes", Destructive),
            ("jar --extract --file app.jar", Destructive),
            ("jar --list --file app.jar --extract", Destructive),
            ("jar", Unknown),
            ("indent -i3 -kr -nut -l120", Safe),
            ("indent -st -kr main.c", Safe),
            ("indent -kr main.c", Destructive),
            ("indent main.c -o out.c", Destructive),
            ("indent -st /etc/x.c", Unknown),
        ]);
    }
}
