//! Programs that read documents and data files and print what they find or convert: `pandoc`
//! (to its output), `xmlstarlet` (its querying subcommands), the csvkit readers (`csvlook`,
//! `csvcut`, `csvstat`, ...), `xsv`, `datamash`, `htmlq`, `units`, `hexyl`, groff and its
//! preprocessors (`tbl`, `pic`, `eqn`), the PDF readers `pdftk ... dump_data` and `mutool
//! info`/`pages`/`show`, the configuration languages' evaluators (`jsonnet`, `cue
//! eval`/`export`/`vet`, `dhall-to-json`, `kustomize build`), the archive listers `7z l`,
//! `unrar l` and `lsar`, `qpdf`'s inspecting forms (`--check`, `--json`, ...), `pygmentize`,
//! `pup`, `aspell list`, the Matroska readers (`mkvinfo`, `mkvmerge -i`/`-J`), `docx2txt FILE
//! -`, `glow FILE`, `tesseract IMAGE stdout`, Graphviz's layouts (`dot -Tsvg`), the text
//! browsers' `-dump`, `pdfgrep`, `atool -l`, `ctags --list-*` and `dos2unix -i`.
//!
//! What would make one write or run something is refused: `pandoc -o` writes a file and
//! its filters (`--lua-filter`, `--filter`, `--pdf-engine`, a defaults file) run programs;
//! `xmlstarlet ed -L` edits in place and `xmlstarlet tr` runs XSLT, which may write files;
//! `htmlq -o`, `xsv -o` and `in2csv --write-sheets` write; `7z d` deletes from an archive;
//! `pygmentize -x` loads a lexer from a Python file; `aspell check` edits a file, and its
//! configuration options may load filters, which are shared libraries; `mkvmerge -o`,
//! `docx2txt FILE` and `tesseract IMAGE BASE` write files (destructive), and tesseract's
//! `-c` variables and configuration names other than an output format may write their own.
//! An operand that is a URL (`pandoc https://...`, which pandoc fetches) waits: the
//! network is closed to a line without a click, and reading it is not reading the
//! workspace. `dc`, whose `!` runs a shell command, is not here; nor is `mlr`, whose
//! expressions may call `system`.

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb};
use super::table::{self, Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, refuse_urls};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::shown_words;

/// Graphviz's layout programs, which share their options.
pub(super) const GRAPHVIZ: &[&str] = &[
    "dot",
    "neato",
    "twopi",
    "circo",
    "fdp",
    "sfdp",
    "osage",
    "patchwork",
];

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["pandoc"], Rule::Judge(pandoc)),
    Program::new(&["xmlstarlet", "xml"], Rule::Subcommands(&XMLSTARLET)),
    Program::new(
        &[
            "csvlook",
            "csvcut",
            "csvstat",
            "csvgrep",
            "csvsort",
            "csvjson",
            "csvformat",
            "in2csv",
            "csvjoin",
            "csvstack",
        ],
        Rule::Table(&Table {
            // Only letters that take a value in every one of them (csvsort's `-r` is a
            // flag, csvgrep's a pattern, so it is not listed).
            spec: Spec::values(
                "dqpzeLKcCmf",
                &[
                    "delimiter",
                    "quotechar",
                    "escapechar",
                    "maxfieldsize",
                    "encoding",
                    "locale",
                    "skip-lines",
                    "columns",
                    "not-columns",
                    "match",
                    "regex",
                    "file",
                    "date-format",
                    "datetime-format",
                    "null-value",
                ],
            ),
            path_options: &["f", "file"],
            refused: &[Refusal {
                options: &["write-sheets"],
                effect: Effect::Writes,
                what: "writes each sheet to a file of its own",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["xsv"], Rule::Subcommands(&XSV)),
    Program::new(
        &["datamash"],
        Rule::Table(&Table {
            spec: Spec::values(
                "tgR",
                &[
                    "field-separator",
                    "group",
                    "output-delimiter",
                    "round",
                    "format",
                    "filler",
                ],
            ),
            // Operations and field numbers; the data comes from the input.
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["htmlq"],
        Rule::Table(&Table {
            spec: Spec::values(
                "fabro",
                &["filename", "attribute", "base", "remove-nodes", "output"],
            ),
            operands: Operands::Text,
            path_options: &["f", "filename"],
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        &["units"],
        Rule::Table(&Table {
            spec: Spec::values("fo", &["file", "output-format", "log", "history"]),
            operands: Operands::Text,
            path_options: &["f", "file"],
            refused: &[Refusal {
                options: &["log", "history"],
                effect: Effect::Writes,
                what: "writes a log or history file",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["hexyl"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ncs",
                &[
                    "length",
                    "bytes",
                    "skip",
                    "block-size",
                    "display-offset",
                    "color",
                    "border",
                    "panels",
                    "group-size",
                    "endianness",
                    "base",
                    "terminal-width",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["groff", "troff", "nroff", "gpic", "pic"],
        Rule::Judge(roff),
    ),
    Program::new(
        &[
            "tbl", "gtbl", "eqn", "geqn", "neqn", "grog", "grotty", "colcrt", "soelim", "preconv",
        ],
        Rule::Table(&TABLE),
    ),
    Program::new(
        // Text out of word-processor files and markup, to the output.
        &[
            "catdoc", "antiword", "cmark", "markdown", "spell", "diction", "soxi", "pdffonts",
        ],
        Rule::Table(&TABLE),
    ),
    Program::new(
        &["wdiff"],
        Rule::Table(&Table {
            spec: Spec::values(
                "wxyz",
                &["start-delete", "end-delete", "start-insert", "end-insert"],
            ),
            ..TABLE
        }),
    ),
    Program::new(
        &["html2text", "odt2txt"],
        Rule::Table(&Table {
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(&["pdftotext", "pdfimages"], Rule::Judge(poppler)),
    Program::new(
        &["dos2unix", "unix2dos", "mac2unix", "unix2mac"],
        Rule::Judge(newlines),
    ),
    Program::new(&["tcpdump"], Rule::Judge(tcpdump)),
    Program::new(
        // Spelling in list mode: the misspelt words of the input or the files.
        &["hunspell"],
        Rule::Judge(|walker, call| {
            let listing = call
                .args
                .iter()
                .any(|arg| arg.text().is_some_and(|t| matches!(t, "-l" | "-L" | "-G")));
            if listing {
                table::judge(
                    walker,
                    call,
                    &Table {
                        spec: Spec::values("dpi", &[]),
                        path_options: &["p"],
                        ..TABLE
                    },
                )
            } else {
                Judgement::other(
                    "`hunspell` without `-l`, `-L` or `-G` checks files interactively and may rewrite them",
                )
            }
        }),
    ),
    Program::new(&["ffprobe"], Rule::Judge(ffprobe)),
    Program::new(&["ffmpeg"], Rule::Judge(ffmpeg_info)),
    Program::new(&["7z", "7za", "7zr", "7zz"], Rule::Subcommands(&SEVEN_ZIP)),
    Program::new(&["zip"], Rule::Judge(zip_show)),
    Program::new(&["pdftk", "pdftk-java"], Rule::Judge(pdftk)),
    Program::new(&["json_pp"], Rule::Judge(json_pp)),
    Program::new(
        // A Matroska file's elements, printed; `-r` writes them to a file instead.
        &["mkvinfo"],
        Rule::Table(&Table {
            spec: Spec::values(
                "r",
                &[
                    "redirect-output",
                    "ui-language",
                    "command-line-charset",
                    "output-charset",
                    "debug",
                    "engage",
                ],
            ),
            refused: &[
                Refusal {
                    options: &["r", "redirect-output"],
                    effect: Effect::Writes,
                    what: "writes what it prints to a file, replacing it",
                },
                Refusal {
                    options: &["g", "gui"],
                    effect: Effect::Unsafe,
                    what: "opens a window",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(&["mkvmerge"], Rule::Judge(mkvmerge_identify)),
    Program::new(&["docx2txt", "docx2txt.pl"], Rule::Judge(docx2txt)),
    Program::new(&["glow"], Rule::Judge(glow)),
    Program::new(&["tesseract"], Rule::Judge(tesseract)),
    Program::new(
        // Graphviz's layouts, drawn to the output in the format `-T` names; `-o` and `-O`
        // write files, `-l` reads a PostScript library.
        GRAPHVIZ,
        Rule::Table(&Table {
            spec: Spec::values("TKGNEloOy", &[]),
            path_options: &["l"],
            refused: &[Refusal {
                options: &["o", "O"],
                effect: Effect::Writes,
                what: "writes the drawing to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["lynx", "links", "elinks", "w3m"],
        Rule::Judge(text_browser_dump),
    ),
    Program::new(
        // grep in the text of PDF files: a pattern, then files; `--cache` keeps the text
        // under the (private) home.
        &["pdfgrep"],
        Rule::Table(&Table {
            spec: Spec::values(
                "mefABC",
                &[
                    "max-count",
                    "regexp",
                    "file",
                    "after-context",
                    "before-context",
                    "context",
                    "page-range",
                    "password",
                    "color",
                    "include",
                    "exclude",
                    "match-prefix-separator",
                ],
            ),
            operands: Operands::PatternThenPaths(&["e", "regexp", "f", "file"]),
            path_options: &["f", "file"],
            ..TABLE
        }),
    ),
    Program::new(&["atool", "als", "acat"], Rule::Judge(atool)),
    Program::new(&["exiv2"], Rule::Judge(exiv2)),
    Program::new(&["flac"], Rule::Judge(flac_test)),
    Program::new(&["optipng"], Rule::Judge(optipng)),
    Program::new(&["enca", "enconv"], Rule::Judge(enca)),
    Program::new(
        // Converts file names from one encoding to another: without `--notest` it only
        // prints what it would rename.
        &["convmv"],
        Rule::Table(&Table {
            spec: Spec::values("ft", &["map"]),
            refused: &[Refusal {
                options: &["notest"],
                effect: Effect::Writes,
                what: "renames the files",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["ctags", "universal-ctags", "exuberant-ctags"],
        Rule::Judge(ctags_lists),
    ),
    Program::new(
        // Evaluates a Jsonnet file (a language without effects) and prints the JSON; `-o`
        // and `-m` write it to files. `-J` names a directory of libraries.
        &["jsonnet"],
        Rule::Table(&Table {
            spec: Spec::values(
                "oJmVAts",
                &[
                    "output-file",
                    "jpath",
                    "multi",
                    "ext-str",
                    "ext-str-file",
                    "ext-code",
                    "ext-code-file",
                    "tla-str",
                    "tla-str-file",
                    "tla-code",
                    "tla-code-file",
                    "max-trace",
                    "max-stack",
                ],
            ),
            path_options: &["J", "jpath"],
            refused: &[Refusal {
                options: &["o", "output-file", "m", "multi"],
                effect: Effect::Writes,
                what: "writes the result to files",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["cue"], Rule::Subcommands(&CUE)),
    Program::new(
        // Dhall (a language without effects but for reading what it imports) to JSON or
        // YAML; `--output` writes a file.
        &["dhall-to-json", "dhall-to-yaml", "dhall-to-yaml-ng"],
        Rule::Table(&Table {
            spec: Spec::values("", &["file", "output", "key", "value"]),
            path_options: &["file"],
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(&["kustomize"], Rule::Subcommands(&KUSTOMIZE)),
    Program::new(&["mutool"], Rule::Subcommands(&MUTOOL)),
    Program::new(&["cabextract"], Rule::Judge(cabextract)),
    Program::new(&["ar"], Rule::Judge(ar)).reading_argument_files(),
    Program::new(&["dpkg-deb"], Rule::Judge(dpkg_deb)),
    Program::new(&["unrar"], Rule::Subcommands(&UNRAR)),
    Program::new(&["qpdf"], Rule::Judge(qpdf_inspect)),
    Program::new(&["pygmentize"], Rule::Judge(pygmentize)),
    Program::new(
        // Parts of HTML picked by CSS selectors, printed; `-f` names the file read.
        &["pup"],
        Rule::Table(&Table {
            spec: Spec::values("fil", &["file", "indent", "limit", "charset"]),
            operands: Operands::Text,
            path_options: &["f", "file"],
            ..TABLE
        }),
    ),
    Program::new(
        // The Unarchiver's lister: an archive's members (`-t` tests them). The words after
        // the archive are members' names.
        &["lsar"],
        Rule::Table(&Table {
            spec: Spec::values("peE", &["password", "encoding", "password-encoding"]),
            ..TABLE
        }),
    ),
    Program::new(&["aspell"], Rule::Judge(aspell)),
];

/// The forms of `qpdf` that only inspect one PDF (`--check`, `--show-npages`, `--json`,
/// ...). Any other option may transform and write (`qpdf in.pdf out.pdf`, `--replace-input`),
/// so only these, the input file and no other operand, are read-only.
fn qpdf_inspect(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const INSPECT: &[&str] = &[
        "check",
        "show-npages",
        "show-pages",
        "with-images",
        "show-encryption",
        "show-xref",
        "show-object",
        "raw-stream-data",
        "filtered-stream-data",
        "show-linearization",
        "check-linearization",
        "is-encrypted",
        "requires-password",
        "list-attachments",
        "show-attachment",
        "json",
        "json-key",
        "json-object",
    ];
    let Some(words) = shown_words(invocation.args) else {
        return Judgement::other("`qpdf` is given a word only known when the line runs");
    };
    let mut inspects = false;
    let mut other = None;
    let mut inputs = Vec::new();
    for word in &words {
        match word.strip_prefix("--") {
            Some(option) => {
                let name = option.split_once('=').map_or(option, |(name, _)| name);
                if INSPECT.contains(&name) {
                    inspects = true;
                } else if matches!(name, "replace-input" | "split-pages") {
                    return Judgement::destroys(format!("`qpdf --{name}` writes PDF files"));
                } else if !matches!(name, "password" | "verbose" | "no-warn") {
                    other.get_or_insert(format!(
                        "`qpdf --{name}` is not an option known to only inspect a PDF"
                    ));
                }
            }
            None if word.starts_with('-') || word.starts_with('@') => {
                other.get_or_insert(format!(
                    "`qpdf {word}` is not an option known to only inspect a PDF"
                ));
            }
            None => inputs.push(*word),
        }
    }
    // Two operands (or more, with the values of options not read here) end in the file
    // written: the floor, whatever else the line holds.
    if let [_, .., output] = inputs.as_slice() {
        return Judgement::destroys(format!(
            "`qpdf` writes the PDF it makes to {output}, replacing it"
        ));
    }
    match (inputs.as_slice(), other) {
        (_, Some(why)) => Judgement::other(why),
        ([input], None) if inspects => {
            let mut judgement = Judgement::whitelisted();
            walker.check_path(&mut judgement, "qpdf", input);
            judgement
        }
        _ => Judgement::other(
            "`qpdf` inspects only with an option such as `--check` and one input file; otherwise it writes a PDF",
        ),
    }
}

/// `pygmentize`: source code highlighted to the output. `-o` writes a file; `-x` lets `-l`
/// and `-f` load a lexer or formatter from a Python file; the HTML formatter's `cssfile`
/// option (in `-O` or `-P`) writes the style sheet to that file.
fn pygmentize(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const PYGMENTIZE: Table = Table {
        spec: Spec::values("lfOPFoSaN", &[]),
        path_options: &["N"],
        refused: &[
            OUTPUT_FILE,
            Refusal {
                options: &["x"],
                effect: Effect::Unsafe,
                what: "loads a lexer or formatter from a Python file, code the line does not show",
            },
        ],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &PYGMENTIZE);
    if invocation
        .args
        .iter()
        .any(|arg| arg.text().is_some_and(|t| t.contains("cssfile")))
    {
        judgement.destructive("`pygmentize -O cssfile=...` writes the style sheet to a file");
    }
    judgement
}

/// `aspell`'s subcommands that print: `list` (the misspelt words of the input), `dump`,
/// `config`, `version`, `help`. `check` (`-c`) edits a file, and options that name
/// configuration files or directories may load filters, which are shared libraries.
fn aspell(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const PRINTS: &[&str] = &["list", "dump", "config", "version", "help", "soundslike"];
    const SETTINGS: &[&str] = &[
        "lang",
        "master",
        "encoding",
        "mode",
        "ignore-case",
        "ignore",
    ];
    let Some(words) = shown_words(invocation.args) else {
        return Judgement::other("`aspell` is given a word only known when the line runs");
    };
    let mut verb = None;
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if let Some(option) = word.strip_prefix("--") {
            let name = option.split_once('=').map_or(option, |(name, _)| name);
            if !SETTINGS.contains(&name) {
                return Judgement::other(format!(
                    "`aspell --{name}` is not a setting known to only choose a language or mode"
                ));
            }
        } else if let Some(option) = word.strip_prefix('-') {
            match option {
                "l" | "d" | "t" | "H" | "e" | "n" | "x" if option.len() == 1 => {
                    if matches!(option, "l" | "d") {
                        words.next();
                    }
                }
                _ => {
                    return Judgement::other(format!(
                        "`aspell -{option}` is not an option known to only read"
                    ));
                }
            }
        } else if verb.is_none() {
            verb = Some(*word);
        }
    }
    match verb {
        Some(verb) if PRINTS.contains(&verb) => Judgement::whitelisted(),
        Some(verb) => Judgement::not_whitelisted(&format!("aspell {verb}")),
        None => Judgement::not_whitelisted("aspell"),
    }
}

/// `pandoc` converts to its output; `-o` writes a file, filters and PDF engines run
/// programs, a defaults file may name either, and embedding resources fetches them.
fn pandoc(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const PANDOC: Table = Table {
        spec: Spec::values(
            "ftrwoLFMVcHABTDd",
            &[
                "from",
                "to",
                "read",
                "write",
                "output",
                "lua-filter",
                "filter",
                "metadata",
                "metadata-file",
                "variable",
                "css",
                "include-in-header",
                "include-before-body",
                "include-after-body",
                "title-prefix",
                "template",
                "data-dir",
                "resource-path",
                "reference-doc",
                "bibliography",
                "csl",
                "abbreviations",
                "pdf-engine",
                "pdf-engine-opt",
                "extract-media",
                "log",
                "defaults",
                "highlight-style",
                "syntax-definition",
                "columns",
                "toc-depth",
                "shift-heading-level-by",
                "tab-stop",
                "dpi",
                "wrap",
                "eol",
                "top-level-division",
                "id-prefix",
                "request-header",
                "print-default-template",
            ],
        ),
        path_options: &[
            "H",
            "B",
            "A",
            "include-in-header",
            "include-before-body",
            "include-after-body",
            "template",
            "data-dir",
            "resource-path",
            "reference-doc",
            "bibliography",
            "csl",
            "abbreviations",
            "metadata-file",
            "syntax-definition",
        ],
        refused: &[
            Refusal {
                options: &["o", "output", "extract-media", "log"],
                effect: Effect::Writes,
                what: "writes a file",
            },
            Refusal {
                options: &[
                    "L",
                    "lua-filter",
                    "F",
                    "filter",
                    "pdf-engine",
                    "pdf-engine-opt",
                    "d",
                    "defaults",
                    "embed-resources",
                    "self-contained",
                    "request-header",
                ],
                effect: Effect::Unsafe,
                what: "runs a filter or another program, or fetches resources",
            },
        ],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &PANDOC);
    refuse_urls(&mut judgement, invocation);
    judgement
}

/// groff and its preprocessors format to their output. Their safer mode (the default) turns
/// off the requests that run a program or open a file for writing (`.sy`, `.pi`, `.pso`,
/// `.open`); `-U` turns them back on. The HTML devices write image files beside the output.
fn roff(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const ROFF: Table = Table {
        spec: Spec::values("dfFIKLmMnoPrTwWD", &[]),
        path_options: &["F", "I", "M"],
        refused: &[Refusal {
            options: &["U"],
            effect: Effect::Unsafe,
            what: "turns off the safer mode, so the document may run programs and write files",
        }],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &ROFF);
    let items = crate::tools::command::options::parse(invocation.args, &ROFF.spec);
    if let Some(device) = items
        .iter()
        .filter(|item| item.named(&["T"], false))
        .find_map(|item| item.value().and_then(|v| v.text))
        .filter(|device| device.contains("html"))
    {
        judgement.unknown(format!(
            "`{} -T{device}` writes image files beside its output",
            invocation.program
        ));
    }
    judgement
}

/// Poppler's single-dash options that take a value (`-f 1`, `-enc UTF-8`).
const POPPLER_VALUES: &[&str] = &[
    "-f", "-l", "-r", "-x", "-y", "-W", "-H", "-enc", "-eol", "-opw", "-upw", "-fixed",
];

/// `pdftotext PDF -` prints the text; given no second file it writes `PDF.txt`, given one
/// it writes that. `pdfimages -list PDF` lists the images; otherwise it writes each to a
/// file.
fn poppler(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let mut judgement = Judgement::whitelisted();
    let mut files = Vec::new();
    let mut listing = false;
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            None => files.push(word),
            Some(text) if POPPLER_VALUES.contains(&text) => {
                words.next();
            }
            Some("-list") => listing = true,
            Some(text) if text.starts_with('-') && text != "-" => {}
            Some(_) => files.push(word),
        }
    }
    let to_output = match program {
        "pdfimages" => listing,
        _ => files.get(1).is_some_and(|out| out.text() == Some("-")),
    };
    if !to_output || files.len() > 2 || files.iter().any(|f| f.text().is_none()) {
        judgement.destructive(format!(
            "`{program}` writes its output to files (`pdftotext PDF -` and `pdfimages -list` print it)"
        ));
    }
    if let Some(pdf) = files.first() {
        table::check_paths(walker, &mut judgement, program, &[pdf]);
    }
    judgement
}

/// `dos2unix`/`unix2dos` convert their input to their output when given no file; given
/// files they rewrite them in place, or with `-n IN OUT` write `OUT`.
fn newlines(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    // `-i[FLAGS]` / `--info[=FLAGS]` counts each file's line breaks and converts nothing.
    let words = shown_words(invocation.args);
    let info = words.as_ref().is_some_and(|words| {
        words.iter().any(|w| {
            // Not `-iso`, a conversion mode.
            w.strip_prefix("-i")
                .is_some_and(|flags| flags.bytes().all(|b| b"0bcdhlmpstu".contains(&b)))
                || *w == "--info"
                || w.starts_with("--info=")
        }) && !words
            .iter()
            .any(|w| matches!(*w, "-n" | "--newfile" | "-N" | "--new"))
    });
    if info {
        let mut judgement = Judgement::whitelisted();
        let files: Vec<_> = invocation
            .args
            .iter()
            .filter(|arg| arg.text().is_some_and(|t| !t.starts_with('-')))
            .collect();
        table::check_paths(walker, &mut judgement, program, &files);
        return judgement;
    }
    let files: Vec<_> = invocation
        .args
        .iter()
        .filter(|arg| arg.text().is_none_or(|t| !t.starts_with('-') || t == "-"))
        .collect();
    let mut judgement = Judgement::whitelisted();
    if !files.is_empty() {
        judgement.destructive(format!(
            "`{program}` rewrites the files it is given, or writes the new file of `-n` (with no file it converts its input to its output)"
        ));
    }
    table::check_paths(walker, &mut judgement, program, &files);
    judgement
}

/// `tcpdump -r FILE` reads a saved capture; without `-r` it captures from an interface.
/// `-w` writes a capture and `-z` runs a command on each file it writes.
fn tcpdump(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const TCPDUMP: Table = Table {
        spec: Spec::values("rwzCGWZVFcsiEMTyBjm", &["number", "relinquish-privileges"]),
        path_options: &["r", "V", "F", "m"],
        refused: &[
            Refusal {
                options: &["w", "C", "G", "W"],
                effect: Effect::Writes,
                what: "writes capture files",
            },
            Refusal {
                options: &["z", "Z", "relinquish-privileges"],
                effect: Effect::Unsafe,
                what: "runs a command on each capture file, or changes user",
            },
        ],
        // The words after the options are a filter expression.
        operands: super::table::Operands::Text,
        ..TABLE
    };
    let reads_a_file = crate::tools::command::options::parse(invocation.args, &TCPDUMP.spec)
        .iter()
        .any(|item| item.named(&["r"], false));
    if !reads_a_file {
        return Judgement::other("`tcpdump` without `-r` captures from a network interface");
    }
    table::judge(walker, invocation, &TCPDUMP)
}

/// ffprobe's options that take a value.
const FFPROBE_VALUES: &[&str] = &[
    "-v",
    "-loglevel",
    "-of",
    "-print_format",
    "-output_format",
    "-select_streams",
    "-show_entries",
    "-read_intervals",
    "-f",
    "-analyzeduration",
    "-probesize",
];

/// `ffprobe` prints what a media file holds. `-report` and `-o` write files; an input that
/// names a protocol (`http://`, `concat:`, `file:`) may reach the network or other files.
/// Its options are single-dash words, read whole; one not known here waits.
fn ffprobe(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut inputs = Vec::new();
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        let Some(text) = word.text() else {
            judgement.destructive(format!(
                "`ffprobe` is given `{}`, which may become `-report` (writes a log file) when the line runs",
                word.raw
            ));
            continue;
        };
        match text {
            "-report" | "-o" => {
                judgement.destructive(format!("`ffprobe {text}` writes a file"));
            }
            "-i" => inputs.extend(words.next()),
            _ if FFPROBE_VALUES.contains(&text) => {
                words.next();
            }
            _ if text.starts_with("-show_")
                || matches!(
                    text,
                    "-hide_banner"
                        | "-pretty"
                        | "-count_frames"
                        | "-count_packets"
                        | "-unit"
                        | "-prefix"
                        | "-byte_binary_prefix"
                        | "-sexagesimal"
                        | "-bitexact"
                ) => {}
            _ if text.starts_with('-') => {
                judgement.unknown(format!("`ffprobe {text}` is an option not read here"));
            }
            _ => inputs.push(word),
        }
    }
    for input in inputs {
        match input.text() {
            Some(text) if text.contains(':') => judgement.unknown(format!(
                "`ffprobe {text}` names a protocol, which may reach the network or another file"
            )),
            Some(text) => walker.check_path(&mut judgement, "ffprobe", text),
            None => judgement.unknown(format!(
                "`ffprobe {}` reads an input only known when the line runs",
                input.raw
            )),
        }
    }
    judgement
}

/// `ffmpeg -i FILE` with no output: it prints what the file holds and stops (complaining
/// that no output is named). Any other form encodes and writes an output file.
fn ffmpeg_info(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = shown_words(call.args).unwrap_or_default();
    let input = match words.as_slice() {
        ["-i", input] | ["-hide_banner", "-i", input] | ["-i", input, "-hide_banner"] => input,
        _ => return Judgement::not_whitelisted(call.program),
    };
    let mut judgement = Judgement::whitelisted();
    if input.contains(':') || input.starts_with('-') {
        judgement.unknown(format!(
            "`ffmpeg -i {input}` names a protocol, which may reach the network or another file"
        ));
    } else {
        walker.check_path(&mut judgement, "ffmpeg", input);
    }
    judgement
}

/// `xmlstarlet`'s reading subcommands, each with its own options (`-o` is a value of
/// `sel`'s but a flag of `fo`'s); `ed -L` edits a file in place, and `tr` (XSLT) may write
/// files or read any, so it is left to a person. An XPath that is an operand is checked
/// like a path, so `/` or `//x` there waits at worst.
const XMLSTARLET: Subcommands = Subcommands {
    verbs: &[
        Verb::judged(&["sel", "select"], |walker, call| {
            const SEL: Table = Table {
                spec: Spec::values(
                    "vmcoeaiNsE",
                    &[
                        "value-of", "match", "copy-of", "output", "elem", "attr", "if", "sort",
                        "var", "encode",
                    ],
                ),
                ..TABLE
            };
            xml_reads(walker, call, &SEL)
        }),
        Verb::judged(&["val", "validate"], |walker, call| {
            const VAL: Table = Table {
                spec: Spec::values("sdr", &["xsd", "dtd", "relaxng"]),
                path_options: &["s", "d", "r", "xsd", "dtd", "relaxng"],
                ..TABLE
            };
            xml_reads(walker, call, &VAL)
        }),
        Verb::judged(&["fo", "format"], |walker, call| {
            const FO: Table = Table {
                spec: Spec::values("se", &["indent-spaces", "encode"]),
                ..TABLE
            };
            xml_reads(walker, call, &FO)
        }),
        Verb::judged(
            &[
                "el", "elements", "c14n", "canonic", "esc", "escape", "unesc", "unescape", "pyx",
                "depyx",
            ],
            |walker, call| xml_reads(walker, call, &TABLE),
        ),
        Verb::judged(&["ed", "edit"], xml_edit),
    ],
    ..SUBCOMMANDS
};

fn xml_reads(walker: &mut Walker<'_>, invocation: &Invocation<'_>, row: &Table) -> Judgement {
    let mut judgement = table::judge(walker, invocation, row);
    refuse_urls(&mut judgement, invocation);
    judgement
}

/// `xmlstarlet ed` prints the edited document unless `-L` rewrites the file; its many
/// options are not read here, so without `-L` it still waits.
fn xml_edit(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let in_place = invocation
        .args
        .iter()
        .any(|arg| arg.text().is_none_or(|t| matches!(t, "-L" | "--inplace")));
    if in_place {
        Judgement::destroys("`xmlstarlet ed -L` rewrites the file in place")
    } else {
        Judgement::other("`xmlstarlet ed`'s options are not read here")
    }
}

/// `xsv`'s reading subcommands; `-o` writes, `index`, `split` and `partition` write files
/// and wait.
const XSV: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &[
            "headers",
            "stats",
            "count",
            "select",
            "search",
            "slice",
            "table",
            "frequency",
            "sample",
            "sort",
            "cat",
            "join",
            "fmt",
            "fixlengths",
            "flatten",
            "input",
        ],
        &Table {
            // `-n` (no headers) and `-i` (ignore case) are flags.
            spec: Spec::values("dslo", &["delimiter", "select", "limit", "output"]),
            refused: &[OUTPUT_FILE],
            ..TABLE
        },
    )],
    ..SUBCOMMANDS
};

/// `7z l` lists, `t` tests, `h` hashes, `i` shows the formats; `d` deletes members.
const SEVEN_ZIP: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(&["l", "t", "h", "i"], &TABLE),
        Verb::destroys(&["d"], "deletes files from the archive"),
        Verb::destroys(&["x", "e"], EXTRACTS),
    ],
    ..SUBCOMMANDS
};

/// `unrar`'s listing, testing and printing commands; `x`/`e` extract over files.
const UNRAR: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(
            &["l", "lb", "lt", "lta", "v", "vb", "vt", "vta", "t", "p"],
            &TABLE,
        ),
        Verb::destroys(&["x", "e"], EXTRACTS),
    ],
    ..SUBCOMMANDS
};

/// `mutool info`, `pages` and `show` print what a PDF holds (`-p` is its password);
/// `show -o` writes it to a file. Every other tool writes a document, and `run` runs a
/// script.
const MUTOOL: Subcommands = Subcommands {
    verbs: &[
        Verb::reads(
            &["info", "pages"],
            &Table {
                spec: Spec::values("p", &[]),
                ..TABLE
            },
        ),
        Verb::judged(&["show"], mutool_show),
    ],
    ..SUBCOMMANDS
};

/// `mutool show [-p PASSWORD] [-o FILE] FILE [WHAT...]`: after the file come object
/// numbers and paths inside the document (`trailer`, `pages/1`), not files.
fn mutool_show(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const SHOW: Table = Table {
        spec: Spec::values("po", &[]),
        operands: Operands::Text,
        refused: &[OUTPUT_FILE],
        ..TABLE
    };
    let mut judgement = table::judge(walker, call, &SHOW);
    let items = options::parse(call.args, &SHOW.spec);
    match options::operands(&items).first().map(|a| a.text()) {
        Some(Some(file)) => walker.check_path(&mut judgement, "mutool show", file),
        Some(None) => {
            judgement.unknown("`mutool show` is given a file only known when the line runs")
        }
        None => {}
    }
    judgement
}

/// `cue eval`, `export`, `vet` and `def` print or check the configuration; `-o` writes a
/// file. `cue cmd` runs the commands a workflow declares, and `fmt`, `import` and `trim`
/// rewrite files: none of them is here.
const CUE: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &["eval", "export", "vet", "def"],
        &Table {
            spec: Spec::values(
                "etlopd",
                &[
                    "expression",
                    "inject",
                    "path",
                    "out",
                    "outfile",
                    "package",
                    "schema",
                ],
            )
            // Go's flags: `--out` is an option of its own, not `--outfile` abbreviated.
            .exact(),
            refused: &[Refusal {
                options: &["o", "outfile"],
                effect: Effect::Writes,
                what: "writes the result to a file",
            }],
            ..TABLE
        },
    )],
    ..SUBCOMMANDS
};

/// `kustomize build DIR` prints the resources it assembles; `-o` writes them to files, the
/// plugin options run programs (`--enable-exec`, `--enable-helm`, `--helm-command`) or
/// containers (`--mount`, `--network`), and a remote base (a URL) is fetched. Every other
/// subcommand edits or creates a kustomization.
const KUSTOMIZE: Subcommands = Subcommands {
    verbs: &[Verb::judged(&["build"], |walker, call| {
        const BUILD: Table = Table {
            spec: Spec::values(
                "o",
                &[
                    "output",
                    "load-restrictor",
                    "reorder",
                    "helm-command",
                    "mount",
                    "env",
                    "helm-api-versions",
                    "helm-kube-version",
                ],
            ),
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &[
                        "enable-exec",
                        "enable-alpha-plugins",
                        "enable-helm",
                        "helm-command",
                        "enable-star",
                        "mount",
                        "network",
                        "env",
                    ],
                    effect: Effect::Unsafe,
                    what: "runs plugins, programs or containers",
                },
                Refusal {
                    options: &["load-restrictor"],
                    effect: Effect::Unsafe,
                    what: "may read files outside the kustomization's directory",
                },
            ],
            ..TABLE
        };
        let mut judgement = table::judge(walker, call, &BUILD);
        refuse_urls(&mut judgement, call);
        judgement
    })],
    ..SUBCOMMANDS
};

/// `json_pp` pretty-prints the JSON on its input: `-f json` (the only input format read
/// here: `-f eval` runs its input as Perl), `-t json|dumper|null`, `-json_opt` options.
fn json_pp(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`json_pp` is given words only known when the line runs");
    };
    let mut words = words.iter();
    while let Some(word) = words.next() {
        let fine = match *word {
            "-v" | "-V" => true,
            "-f" => words.next().is_some_and(|f| *f == "json"),
            "-t" => words
                .next()
                .is_some_and(|t| matches!(*t, "json" | "dumper" | "null")),
            "-json_opt" => words.next().is_some_and(|o| {
                o.split(',').all(|o| {
                    o.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                })
            }),
            _ => false,
        };
        if !fine {
            return Judgement::other(format!(
                "`json_pp {word}` is not a form known to only print JSON (`-f eval` runs its input as Perl)"
            ));
        }
    }
    Judgement::whitelisted()
}

/// `mkvmerge -i FILE` / `-J FILE` (and `--identify`, `--list-types`, `--list-languages`)
/// prints what a file holds, or what the program knows, and writes nothing. Any other form
/// writes the merged file `-o` names.
fn mkvmerge_identify(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const IDENTIFY: &[&str] = &[
        "-i",
        "--identify",
        "-J",
        "--list-types",
        "-l",
        "--list-languages",
    ];
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`mkvmerge` is given words only known when the line runs");
    };
    if let Some(output) = words.iter().find(|w| {
        matches!(**w, "-o" | "--output" | "-r" | "--redirect-output")
            || w.starts_with("--output=")
            || w.starts_with("--redirect-output=")
    }) {
        return Judgement::destroys(format!("`mkvmerge {output}` writes a file, replacing it"));
    }
    if !words.iter().any(|w| IDENTIFY.contains(w)) {
        return Judgement::other(
            "`mkvmerge` merges into the file its `-o` names unless it only identifies (`-i`, `-J`)",
        );
    }
    let mut judgement = Judgement::whitelisted();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        match *word {
            w if IDENTIFY.contains(&w) || matches!(w, "-v" | "--verbose" | "-q" | "--quiet") => {}
            "-F"
            | "--identification-format"
            | "--ui-language"
            | "--command-line-charset"
            | "--output-charset" => {
                words.next();
            }
            w if w.starts_with('@') => {
                return Judgement::other(format!(
                    "`mkvmerge {w}` reads more options from a file, which the line does not show"
                ));
            }
            w if w.starts_with('-') && w != "-" => {
                return Judgement::other(format!(
                    "`mkvmerge {w}` is not an option known to only identify a file"
                ));
            }
            path => walker.check_path(&mut judgement, call.program, path),
        }
    }
    judgement
}

/// `docx2txt FILE -` prints a Word document's text; given the document alone, the Perl
/// `docx2txt` writes the text into `FILE.txt` beside it, replacing what was there.
fn docx2txt(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match shown_words(call.args).as_deref() {
        Some([input, "-"]) if !input.starts_with('-') || *input == "-" => {
            let mut judgement = Judgement::whitelisted();
            if *input != "-" {
                walker.check_path(&mut judgement, call.program, input);
            }
            judgement
        }
        Some(["-h" | "--help"]) => Judgement::whitelisted(),
        _ => Judgement::destroys(format!(
            "`{}` writes the text into a file beside the document (or the one named), replacing it, unless its output is `-`",
            call.program
        )),
    }
}

/// `glow FILE` renders Markdown as terminal text. Without a file it opens its browser of
/// Markdown files, which needs a terminal; `glow config` opens an editor; `-p` runs a pager
/// and `-t` the browser; a URL is fetched.
fn glow(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const STYLES: &[&str] = &[
        "auto",
        "dark",
        "light",
        "notty",
        "ascii",
        "dracula",
        "pink",
        "tokyo-night",
    ];
    let items = options::parse(
        call.args,
        &Spec::values("sw", &["style", "width", "config"]),
    );
    let mut judgement = Judgement::whitelisted();
    refuse_urls(&mut judgement, call);
    for item in &items {
        if item.named(&["p", "pager", "t", "tui"], false) {
            judgement.unknown(format!(
                "`glow {}` runs a pager or its browser, which needs a terminal",
                item.shown()
            ));
        }
        if item.named(&["config"], false) {
            table::check_value(walker, &mut judgement, call.program, item);
        }
        if item.named(&["s", "style"], false)
            && !item
                .value()
                .and_then(|v| v.text)
                .is_some_and(|style| STYLES.contains(&style))
        {
            table::check_value(walker, &mut judgement, call.program, item);
        }
    }
    let operands = options::operands(&items);
    match operands.first().and_then(|arg| arg.text()) {
        None if operands.is_empty() => judgement.unknown(
            "`glow` without a file opens its browser of Markdown files, which needs a terminal",
        ),
        Some("config") => judgement.unknown("`glow config` opens an editor on its settings"),
        _ => table::check_paths(walker, &mut judgement, call.program, &operands),
    }
    judgement
}

/// `tesseract IMAGE stdout` prints the text it recognises (`-` too, for the output);
/// given another output base it writes `BASE.txt` (or `.pdf`, `.hocr`, ...), replacing it.
/// After the output come configuration names: the ones that pick an output format are read
/// here; others may write files of their own (`get.images`, `logfile`, `lstm.train`). `-c`
/// sets an internal variable, some of which name files to write.
fn tesseract(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const LISTS: &[&str] = &[
        "--list-langs",
        "--print-parameters",
        "--help-extra",
        "--help-psm",
        "--help-oem",
        "--version",
        "-v",
        "--help",
        "-h",
    ];
    const FORMATS: &[&str] = &["txt", "tsv", "hocr", "alto", "pdf", "quiet"];
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`tesseract` is given words only known when the line runs");
    };
    let mut judgement = Judgement::whitelisted();
    refuse_urls(&mut judgement, call);
    let mut operands = Vec::new();
    let mut lists = false;
    let mut words = words.iter();
    while let Some(word) = words.next() {
        match *word {
            w if LISTS.contains(&w) => lists = true,
            "-l" | "--psm" | "--oem" | "--dpi" | "--loglevel" => {
                words.next();
            }
            "--tessdata-dir" | "--user-words" | "--user-patterns" => match words.next() {
                Some(path) => walker.check_path(&mut judgement, call.program, path),
                None => judgement.unknown(format!("`tesseract {word}` is given no value")),
            },
            "-c" => judgement.unknown(
                "`tesseract -c` sets an internal variable, some of which name files to write",
            ),
            w if w.starts_with('-') && w != "-" => judgement.unknown(format!(
                "`tesseract {w}` is not an option known to only print what it recognises"
            )),
            operand => operands.push(operand),
        }
    }
    match operands.as_slice() {
        [] if lists => {}
        [image, "stdout" | "-", configs @ ..] => {
            if *image != "-" && *image != "stdin" {
                walker.check_path(&mut judgement, call.program, image);
            }
            if let Some(config) = configs.iter().find(|c| !FORMATS.contains(c)) {
                judgement.unknown(format!(
                    "`tesseract` is given the configuration `{config}`, which may write files of its own"
                ));
            }
        }
        [_, base, ..] => judgement.destructive(format!(
            "`tesseract` writes what it recognises into `{base}.txt` (or another format's file), replacing it; `stdout` prints it"
        )),
        _ => judgement.unknown("`tesseract` is given no image and output to read"),
    }
    judgement
}

/// `lynx -dump FILE` (and `links`, `elinks`, `w3m`): a page rendered as text to the output.
/// Without `-dump` the browser needs a terminal; a URL is fetched over the network; only
/// options that shape the text are read here (others name configuration files, scripts of
/// keystrokes, or places to save to).
fn text_browser_dump(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const FLAGS: &[&str] = &[
        "-dump",
        "--dump",
        "-nolist",
        "-nonumbers",
        "-no-numbering",
        "-no-references",
        "-force_html",
        "-notitle",
        "-underscore",
        "-nomargins",
    ];
    const VALUED: &[&str] = &[
        "-width",
        "-cols",
        "-dump-width",
        "-T",
        "-I",
        "-O",
        "-dump-charset",
        "-display_charset",
        "-assume_charset",
    ];
    let Some(words) = shown_words(call.args) else {
        return Judgement::other(format!(
            "`{}` is given words only known when the line runs",
            call.program
        ));
    };
    let mut judgement = Judgement::whitelisted();
    refuse_urls(&mut judgement, call);
    let mut dump = false;
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with('-') => (name, Some(value)),
            _ => (word, None),
        };
        if FLAGS.contains(&name) && inline.is_none() {
            dump |= matches!(name, "-dump" | "--dump");
        } else if VALUED.contains(&name) {
            if inline.is_none() {
                words.next();
            }
        } else if name.starts_with('-') && name != "-" {
            return Judgement::other(format!(
                "`{} {word}` is not an option known to only shape the text of `-dump`",
                call.program
            ));
        } else {
            walker.check_path(&mut judgement, call.program, word);
        }
    }
    if !dump {
        judgement.unknown(format!(
            "`{}` without `-dump` opens the browser, which needs a terminal",
            call.program
        ));
    }
    judgement
}

/// `atool -l` (`als`) lists an archive and `atool -c` (`acat`) prints its files, through the
/// archiver the archive's name calls for. Any other form extracts (writing over files of
/// the same names: destructive), packs or compares; `-o` and `--config` change which
/// programs it runs.
fn atool(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other(format!(
            "`{}` is given words only known when the line runs",
            call.program
        ));
    };
    let mut reads = matches!(call.program, "als" | "acat");
    let mut judgement = Judgement::whitelisted();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match word {
            "-l" | "--list" | "-c" | "--cat" => reads = true,
            "-q" | "--quiet" | "-v" | "--verbose" | "-E" | "--explain" => {}
            "-F" | "--format" => {
                words.next();
            }
            w if w.starts_with("--format=") => {}
            "-x" | "--extract" | "-X" | "--extract-to" | "-e" | "--each" => {
                return Judgement::destroys(format!(
                    "`{} {word}` extracts the archive, writing over files of the same names",
                    call.program
                ));
            }
            w if w.starts_with('-') && w != "-" => {
                return Judgement::other(format!(
                    "`{} {w}` is not an option known to only list or print an archive",
                    call.program
                ));
            }
            path => walker.check_path(&mut judgement, call.program, path),
        }
    }
    if !reads {
        return Judgement::other(format!(
            "`{}` without `-l` or `-c` extracts or packs archives",
            call.program
        ));
    }
    judgement
}

/// `ctags --list-languages`, `--list-kinds` and the other `--list-*` options print what
/// ctags knows and stop; any other form writes a `tags` file (or reads option files from
/// the workspace).
fn ctags_lists(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let lists = shown_words(call.args).is_some_and(|words| {
        !words.is_empty()
            && words.iter().all(|w| {
                w.starts_with("--list-")
                    && w.trim_start_matches("--list-").bytes().all(|b| {
                        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'=' | b'_' | b',')
                    })
            })
    });
    if lists {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` writes a tags file (`--list-*` only prints what it knows)",
            call.program
        ))
    }
}

/// The operations of pdftk that only print the document's data.
const PDFTK_DUMPS: &[&str] = &[
    "dump_data",
    "dump_data_utf8",
    "dump_data_fields",
    "dump_data_fields_utf8",
    "dump_data_annots",
];

/// `pdftk FILE... dump_data` (and its siblings) prints the documents' metadata, fields or
/// annotations, to the output or to `output -`. With `output FILE` it writes the file, and
/// `burst` and `unpack_files` write a file per page or attachment; any other operation
/// builds a new document and waits.
fn pdftk(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let Some(words) = shown_words(invocation.args) else {
        return Judgement::other(format!(
            "`{program}` is given words only known when the line runs"
        ));
    };
    let lowered: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let writes = lowered
        .iter()
        .position(|w| w == "output")
        .is_some_and(|at| lowered.get(at + 1).is_none_or(|file| file != "-"));
    if writes || lowered.iter().any(|w| w == "burst" || w == "unpack_files") {
        return Judgement::destroys(format!(
            "`{program}` writes the documents it makes to files"
        ));
    }
    let Some(at) = lowered
        .iter()
        .position(|w| PDFTK_DUMPS.contains(&w.as_str()))
    else {
        return Judgement::not_whitelisted(program);
    };
    let after_fine = match &lowered[at + 1..] {
        [] => true,
        [output, dash] => output == "output" && dash == "-",
        _ => false,
    };
    if at == 0 || !after_fine {
        return Judgement::not_whitelisted(program);
    }
    let mut judgement = Judgement::whitelisted();
    for input in &words[..at] {
        if input.contains('=') || input.starts_with('-') {
            judgement.unknown(format!(
                "`{program} {input}` is read here only as a file name"
            ));
        } else {
            walker.check_path(&mut judgement, program, input);
        }
    }
    judgement
}

const EXTRACTS: &str = "extracts the archive's files, writing over files of the same names";

/// `zip -sf ARCHIVE` (`--show-files`) lists an archive's entries; every other form of `zip`
/// writes an archive.
fn zip_show(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    match shown_words(invocation.args).as_deref() {
        Some([show, archive] | [archive, show])
            if matches!(*show, "-sf" | "--show-files") && !archive.starts_with('-') =>
        {
            let mut judgement = Judgement::whitelisted();
            walker.check_path(&mut judgement, "zip", archive);
            judgement
        }
        _ => {
            Judgement::other("`zip` writes an archive unless it only shows one (`zip -sf ARCHIVE`)")
        }
    }
}

/// `cabextract -l` (`--list`) and `-t` (`--test`) read a cabinet file; without them it
/// extracts into the current directory (or `-d DIR`), and `-p` to standard output.
fn cabextract(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const TABLE_ROW: Table = Table {
        spec: Spec::values("dFe", &["directory", "filter", "encoding"]),
        refused: &[Refusal {
            options: &["d", "directory", "f", "fix", "L", "lowercase"],
            effect: Effect::Writes,
            what: "extracts files (only `-l`, `-t` and `-p` read)",
        }],
        ..TABLE
    };
    let reads = invocation.args.iter().any(|a| {
        a.text().is_some_and(|t| {
            matches!(t, "--list" | "--test" | "--pipe")
                || (t.starts_with('-') && !t.starts_with("--") && t.contains(['l', 't', 'p']))
        })
    });
    if !reads {
        return Judgement::destroys(
            "`cabextract` without `-l`, `-t` or `-p` extracts the cabinet's files into the directory",
        );
    }
    table::judge(walker, invocation, &TABLE_ROW)
}

/// `ar t` lists an archive's members and `ar p` prints them; every other operation (`r`,
/// `q`, `d`, `m`, `x`, `s`) writes the archive or extracts files. The operation and its
/// modifiers are the first word, with or without a dash.
fn ar(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let Some((first, rest)) = invocation.args.split_first() else {
        return Judgement::not_whitelisted("ar");
    };
    let letters = first.text().map(|t| t.strip_prefix('-').unwrap_or(t));
    let reads = letters.is_some_and(|l| {
        l.chars().filter(|c| matches!(c, 't' | 'p')).count() == 1
            && l.chars().all(|c| matches!(c, 't' | 'p' | 'v' | 'O'))
    });
    if !reads {
        return Judgement::other(format!(
            "`ar {}` writes the archive or extracts its members (only `t` and `p` read)",
            first.raw
        ));
    }
    let mut judgement = Judgement::whitelisted();
    // The archive, then the names of members to show.
    match rest.first().and_then(|a| a.text()) {
        Some(archive) if !archive.starts_with('-') => {
            walker.check_path(&mut judgement, "ar", archive);
        }
        _ => judgement.unknown("`ar` is given no archive the line shows"),
    }
    judgement
}

/// `dpkg-deb -c` (contents), `-I` (information), `-f` (control fields) and `-W` (what the
/// package is) read a package file; `-x`, `-X`, `-R`, `-e` extract it and `-b` builds one.
fn dpkg_deb(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const READS: &[&str] = &[
        "-c",
        "--contents",
        "-I",
        "--info",
        "-f",
        "--field",
        "-W",
        "--show",
    ];
    let Some(words) = shown_words(invocation.args) else {
        return Judgement::other("`dpkg-deb` is given a word only known when the line runs");
    };
    match words.split_first() {
        Some((mode, [package, names @ ..]))
            if READS.contains(mode)
                && !package.starts_with('-')
                && names.iter().all(|n| !n.starts_with('-')) =>
        {
            let mut judgement = Judgement::whitelisted();
            walker.check_path(&mut judgement, "dpkg-deb", package);
            judgement
        }
        _ => Judgement::other(
            "`dpkg-deb` extracts or builds a package unless it only shows one (`-c`, `-I`, `-f`, `-W` and the package)",
        ),
    }
}

/// `exiv2 FILE` (or `exiv2 pr FILE`, `-p` what to print) prints an image's metadata. Every
/// other action (`rm`, `mv`, `ex`, `in`, `ad`, `mo`, ...) and the options that modify (`-M`,
/// `-m`, `-c`, ...) change the image or write files beside it.
fn exiv2(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`exiv2` is given words only known when the line runs");
    };
    let mut judgement = Judgement::whitelisted();
    let mut files = Vec::new();
    let mut words = words.into_iter().peekable();
    while let Some(word) = words.next() {
        match word {
            "-p" | "-P" | "-g" | "-K" | "-n" | "-Q" => {
                words.next();
            }
            w if w.len() > 2
                && (w.starts_with("-p")
                    || w.starts_with("-P")
                    || w.starts_with("-g")
                    || w.starts_with("-K")) => {}
            "-b" | "-u" | "-q" | "-v" | "-h" | "-V" | "-k" => {}
            w if w.starts_with('-') => {
                return Judgement::destroys(format!(
                    "`exiv2 {w}` is not an option known to only print; exiv2's other options modify the image or write files"
                ));
            }
            "pr" | "print" if files.is_empty() => {}
            "rm" | "delete" | "mv" | "rename" | "ex" | "extract" | "in" | "insert" | "ad"
            | "adjust" | "mo" | "modify" | "fi" | "fixiso" | "fc" | "fixcom"
                if files.is_empty() =>
            {
                return Judgement::destroys(format!(
                    "`exiv2 {word}` changes the image, renames it or writes files beside it"
                ));
            }
            path => files.push(path),
        }
    }
    for path in files {
        walker.check_path(&mut judgement, call.program, path);
    }
    judgement
}

/// `flac -t FILE` decodes to test the file and writes nothing; any other form encodes or
/// decodes into a file beside it (and `--delete-input-file` deletes the original).
fn flac_test(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`flac` is given words only known when the line runs");
    };
    if words.iter().any(|w| w.starts_with("--delete-input")) {
        return Judgement::destroys("`flac --delete-input-file` deletes each file it converts");
    }
    let tests = words.iter().any(|w| matches!(*w, "-t" | "--test"));
    let mut judgement = Judgement::whitelisted();
    for word in &words {
        match *word {
            "-t" | "--test" | "-s" | "--silent" | "-w" | "--warnings-as-errors" => {}
            w if w.starts_with('-') => {
                return Judgement::other(format!(
                    "`flac {w}`: flac writes a file beside each one it is given unless it only tests (`-t`)"
                ));
            }
            path => walker.check_path(&mut judgement, call.program, path),
        }
    }
    if !tests {
        return Judgement::other(
            "`flac` writes a file beside each one it is given unless it only tests (`-t`)",
        );
    }
    judgement
}

/// `optipng -simulate` reports what it would gain; otherwise it rewrites each PNG in place
/// (or into `-out`, `-dir`).
fn optipng(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`optipng` is given words only known when the line runs");
    };
    if !words.contains(&"-simulate")
        || words
            .iter()
            .any(|w| matches!(*w, "-out" | "-dir" | "-backup" | "-keep" | "-log"))
    {
        return Judgement::destroys(
            "`optipng` rewrites each PNG in place, or writes the file `-out` names (`-simulate` only reports)"
                .to_owned(),
        );
    }
    let mut judgement = Judgement::whitelisted();
    for word in words.iter().filter(|w| !w.starts_with('-')) {
        walker.check_path(&mut judgement, call.program, word);
    }
    judgement
}

/// `enca FILE` says which encoding a text is in; `-x ENC` (`--convert-to`) and `-c`
/// (`--auto-convert`) convert the files in place (with none, its input to its output), and
/// `-E` names a program to convert with. `enconv` always converts.
fn enca(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const ENCA: Table = Table {
        spec: Spec::values(
            "LxEC",
            &[
                "language",
                "convert-to",
                "external-converter-program",
                "list",
                "name",
            ],
        ),
        refused: &[Refusal {
            options: &["E", "external-converter-program"],
            effect: Effect::Unsafe,
            what: "names a program to convert with",
        }],
        ..TABLE
    };
    let items = options::parse(call.args, &ENCA.spec);
    let converts = call.program == "enconv"
        || items
            .iter()
            .any(|item| item.named(&["x", "convert-to", "c", "auto-convert"], true));
    let mut judgement = table::judge(walker, call, &ENCA);
    if converts && !options::operands(&items).is_empty() {
        judgement.destructive(format!(
            "`{}` converts the files it is given in place",
            call.program
        ));
    }
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn document_readers_print_and_their_writers_wait() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("zip -sf notes.txt", Safe),
            ("qpdf --check notes.txt", Safe),
            ("mkvinfo notes.txt", Safe),
            ("exiv2 notes.txt", Safe),
            ("exiv2 -pa -K Exif.Image.Model notes.txt", Safe),
            ("exiv2 pr notes.txt", Safe),
            ("exiv2 rm notes.txt", Destructive),
            ("exiv2 -M 'set Exif.Image.Artist x' notes.txt", Destructive),
            ("exiv2 /etc/shadow", Unknown),
            ("flac -t notes.txt", Safe),
            ("flac notes.txt", NotSafe),
            ("flac -t -o out.flac notes.txt", NotSafe),
            ("flac --delete-input-file notes.txt", Destructive),
            ("optipng -simulate notes.txt", Safe),
            ("optipng notes.txt", Destructive),
            ("optipng -simulate -out o.png notes.txt", Destructive),
            ("enca notes.txt", Safe),
            ("enca -x UTF-8 < notes.txt", Safe),
            ("enca -x UTF-8 notes.txt", Destructive),
            ("enca -c notes.txt", Destructive),
            ("enconv notes.txt", Destructive),
            ("enca -E iconv notes.txt", NotSafe),
            ("convmv -f latin1 -t utf8 -r src", Safe),
            ("convmv -f latin1 -t utf8 --notest -r src", Destructive),
            ("dot -Tsvg notes.txt", Safe),
            ("neato -Tplain notes.txt | head", Safe),
            ("dot -Tpng -o out.png notes.txt", Destructive),
            ("dot -O -Tpng notes.txt", Destructive),
            ("dot -l /etc/lib.ps notes.txt", Unknown),
            ("lynx -dump notes.txt", Safe),
            ("lynx -dump -width=120 -nolist notes.txt", Safe),
            ("w3m -dump -cols 80 -T text/html notes.txt", Safe),
            ("elinks --dump notes.txt", Safe),
            ("lynx -dump https://example.com", NotSafe),
            ("lynx notes.txt", NotSafe),
            ("lynx -cmd_script=keys.txt -dump notes.txt", NotSafe),
            ("lynx -dump /etc/shadow", Unknown),
            ("pdfgrep -i -n foo notes.txt", Safe),
            ("pdfgrep -f /etc/patterns notes.txt", Unknown),
            ("atool -l notes.txt", Safe),
            ("acat notes.txt member.txt", Safe),
            ("atool -x notes.txt", Destructive),
            ("atool notes.txt", NotSafe),
            ("atool -o path_unzip=x -l notes.txt", NotSafe),
            ("als /etc/shadow", Unknown),
            ("ctags --list-languages", Safe),
            ("ctags --list-kinds=c", Safe),
            ("ctags -R .", NotSafe),
            ("ctags --list-languages -R .", NotSafe),
            ("dos2unix -i notes.txt", Safe),
            ("dos2unix -ic notes.txt", Safe),
            ("dos2unix --info=u notes.txt", Safe),
            ("dos2unix -iso notes.txt", Destructive),
            ("dos2unix notes.txt", Destructive),
            ("dos2unix -i -n notes.txt out.txt", Destructive),
            ("dos2unix -i /etc/shadow", Unknown),
            ("mkvinfo -r out.txt notes.txt", Destructive),
            ("mkvinfo /etc/shadow", Unknown),
            ("mkvmerge -i notes.txt", Safe),
            ("mkvmerge -J notes.txt", Safe),
            ("mkvmerge --list-types", Safe),
            ("mkvmerge -o out.mkv notes.txt", Destructive),
            ("mkvmerge -i notes.txt --output=out.mkv", Destructive),
            ("mkvmerge -i @options.json", NotSafe),
            ("mkvmerge -i notes.txt --split size:1G", NotSafe),
            ("mkvmerge notes.txt", NotSafe),
            ("docx2txt notes.txt -", Safe),
            ("docx2txt notes.txt", Destructive),
            ("docx2txt notes.txt out.txt", Destructive),
            ("docx2txt /etc/shadow -", Unknown),
            ("glow notes.txt", Safe),
            ("glow -s dark -w 80 notes.txt", Safe),
            ("glow -s style.json notes.txt", Safe),
            ("glow -s /etc/style.json notes.txt", Unknown),
            ("glow", NotSafe),
            ("glow -p notes.txt", NotSafe),
            ("glow -t", NotSafe),
            ("glow config", NotSafe),
            ("glow https://example.com/a.md", NotSafe),
            ("tesseract notes.txt stdout", Safe),
            ("tesseract notes.txt - -l eng --psm 6 tsv", Safe),
            ("tesseract --list-langs", Safe),
            ("tesseract notes.txt out", Destructive),
            ("tesseract notes.txt stdout get.images", NotSafe),
            ("tesseract notes.txt stdout logfile", NotSafe),
            (
                "tesseract notes.txt stdout -c tessedit_write_images=1",
                NotSafe,
            ),
            (
                "tesseract --user-words /etc/shadow notes.txt stdout",
                Unknown,
            ),
            ("tesseract /etc/shadow stdout", Unknown),
            ("qpdf --show-npages --password=x notes.txt", Safe),
            ("qpdf --json=2 --json-key=pages notes.txt", Safe),
            ("qpdf notes.txt out.pdf", Destructive),
            ("qpdf --check notes.txt out.pdf", Destructive),
            ("qpdf --replace-input --check notes.txt", Destructive),
            ("qpdf --check @args.txt", NotSafe),
            ("qpdf --check /etc/shadow", Unknown),
            ("qpdf notes.txt", NotSafe),
            ("qpdf --empty --pages notes.txt 1-2 -- out.pdf", Destructive),
            ("qpdf --decrypt notes.txt", NotSafe),
            ("pygmentize notes.txt", Safe),
            (
                "pygmentize -f html -O full,style=monokai -l rust notes.txt",
                Safe,
            ),
            ("pygmentize -L lexers", Safe),
            ("pygmentize -o out.html notes.txt", Destructive),
            ("pygmentize -x -l lexer.py:Lexer notes.txt", Unknown),
            (
                "pygmentize -f html -O full,cssfile=style.css notes.txt",
                Destructive,
            ),
            (
                "pygmentize -f html -P cssfile=style.css notes.txt",
                Destructive,
            ),
            ("pygmentize /etc/shadow", Unknown),
            ("pup 'a attr{href}' < notes.txt", Safe),
            ("pup -f notes.txt -i 2 'title text{}'", Safe),
            ("pup -f /etc/shadow title", Unknown),
            ("lsar notes.txt", Safe),
            ("lsar -j -p secret notes.txt", Safe),
            ("lsar /etc/shadow", Unknown),
            ("aspell list < notes.txt", Safe),
            ("aspell -l en --mode=markdown list < notes.txt", Safe),
            ("aspell dump dicts", Safe),
            ("aspell check notes.txt", NotSafe),
            ("aspell -c notes.txt", NotSafe),
            ("aspell -a", NotSafe),
            ("aspell --conf=x.conf list", NotSafe),
            ("aspell --filter-path=. list", NotSafe),
            ("aspell list < /etc/shadow", NotSafe),
            ("jsonnet notes.txt", Safe),
            ("jsonnet -J lib --ext-str env=prod notes.txt", Safe),
            ("jsonnet -o out.json notes.txt", Destructive),
            ("jsonnet -m out notes.txt", Destructive),
            ("jsonnet -J /etc notes.txt", Unknown),
            ("cue eval notes.txt", Safe),
            ("cue export -e config --out yaml notes.txt", Safe),
            ("cue vet schema.cue notes.txt", Safe),
            ("cue export -o out.json notes.txt", Destructive),
            ("cue cmd deploy", Unknown),
            ("cue fmt notes.txt", Unknown),
            ("dhall-to-json --file notes.txt", Safe),
            ("cat notes.txt | dhall-to-yaml", Safe),
            (
                "dhall-to-json --file notes.txt --output out.json",
                Destructive,
            ),
            ("dhall-to-json --file /etc/x.dhall", Unknown),
            ("kustomize build src", Safe),
            ("kustomize build src -o out.yaml", Destructive),
            ("kustomize build --enable-helm src", Unknown),
            (
                "kustomize build --enable-alpha-plugins --enable-exec src",
                Unknown,
            ),
            ("kustomize build https://github.com/x/y//base", Unknown),
            ("kustomize build /etc", Unknown),
            ("kustomize edit set image x=y", Unknown),
            ("ffmpeg -i notes.txt", Safe),
            ("ffmpeg -hide_banner -i notes.txt", Safe),
            ("ffmpeg -i notes.txt out.mp4", Unknown),
            ("ffmpeg -i http://example.com/a.mp4", Unknown),
            ("ffmpeg -i /etc/x.mp4", Unknown),
            ("cat notes.txt | json_pp", Safe),
            (
                "json_pp -f json -t dumper -json_opt pretty,utf8 < notes.txt",
                Safe,
            ),
            ("json_pp -f eval < notes.txt", Unknown),
            ("json_pp -t eval < notes.txt", Unknown),
            ("pdftk notes.txt dump_data", Safe),
            ("pdftk notes.txt dump_data_fields_utf8 output -", Safe),
            ("pdftk notes.txt dump_data output meta.txt", Destructive),
            ("pdftk notes.txt burst", Destructive),
            ("pdftk notes.txt cat 1-3 output out.pdf", Destructive),
            ("pdftk notes.txt cat 1-3", Unknown),
            ("pdftk /etc/x.pdf dump_data", Unknown),
            ("pdftk A=notes.txt dump_data", Unknown),
            ("pdftk notes.txt dump_data $MORE", Unknown),
            ("mutool info notes.txt", Safe),
            ("mutool show notes.txt trailer", Safe),
            ("mutool show -o out.txt notes.txt trailer", Destructive),
            ("mutool info /etc/x.pdf", Unknown),
            ("mutool show /etc/x.pdf trailer", Unknown),
            ("mutool clean notes.txt out.pdf", Unknown),
            ("mutool run script.js", Unknown),
            ("zip --show-files notes.txt", Safe),
            ("zip -sf /etc/x.zip", Unknown),
            // A glob may name several archives, or a file named like an option.
            ("zip -sf *.txt", Unknown),
            ("zip -r out.zip src", Unknown),
            ("zip -d notes.txt x", Unknown),
            ("cabextract -l notes.txt", Safe),
            ("cabextract -t notes.txt", Safe),
            ("cabextract -p notes.txt | head", Safe),
            ("cabextract notes.txt", Destructive),
            ("cabextract -l -d out notes.txt", Destructive),
            ("cabextract -l ../x.cab", Unknown),
            ("ar t notes.txt", Safe),
            ("ar tv notes.txt", Safe),
            ("ar -p notes.txt member.o", Safe),
            ("ar x notes.txt", Unknown),
            ("ar rcs lib.a a.o", Unknown),
            ("ar d notes.txt m.o", Unknown),
            ("ar t /opt/x.a", Unknown),
            ("dpkg-deb -c notes.txt", Safe),
            ("dpkg-deb -I notes.txt", Safe),
            ("dpkg-deb -f notes.txt Version", Safe),
            ("dpkg-deb --show notes.txt", Safe),
            ("dpkg-deb -x notes.txt out", Unknown),
            ("dpkg-deb -b src out.deb", Unknown),
            ("dpkg-deb -c notes.txt --admindir=/x", Unknown),
            ("pandoc README.md", Safe),
            ("pandoc -f markdown -t html -s README.md", Safe),
            ("pandoc --toc -t rst notes.md | head", Safe),
            ("pandoc README.md -o README.html", Destructive),
            ("pandoc README.md --output=README.pdf", Destructive),
            ("pandoc --lua-filter f.lua README.md", Unknown),
            ("pandoc -F pandoc-citeproc README.md", Unknown),
            ("pandoc --defaults build.yaml", Unknown),
            ("pandoc -f html -t markdown https://example.com", Unknown),
            ("pandoc --template /etc/t.html README.md", Unknown),
            ("pandoc README.md > out.html", Destructive),
            ("xmlstarlet sel -t -v '//item/@id' data.xml", Safe),
            ("xmlstarlet sel -t -v 'item/@id' data.xml", Safe),
            ("xmlstarlet el -a data.xml", Safe),
            ("xmlstarlet val data.xml", Safe),
            ("xmlstarlet fo data.xml", Safe),
            ("xmlstarlet fo -o data.xml", Safe),
            ("xmlstarlet fo -o /etc/data.xml", Unknown),
            ("xmlstarlet sel -t -o x -v y data.xml", Safe),
            ("xmlstarlet val -s /etc/schema.xsd data.xml", Unknown),
            ("xmlstarlet fo /etc/data.xml", Unknown),
            (
                "xmlstarlet sel -t -c x http://example.com/feed.xml",
                Unknown,
            ),
            ("xmlstarlet ed -L -d '//x' data.xml", Destructive),
            ("xmlstarlet ed -d '//x' data.xml", Unknown),
            ("xmlstarlet tr style.xsl data.xml", Unknown),
            ("csvlook data.csv", Safe),
            ("csvcut -c 1,3 data.csv | csvlook", Safe),
            ("csvgrep -c name -m alice data.csv", Safe),
            ("csvsort -r data.csv", Safe),
            ("csvsort -r /etc/data.csv", Unknown),
            ("csvstat data.csv", Safe),
            ("in2csv data.xlsx", Safe),
            ("in2csv --write-sheets - data.xlsx", Destructive),
            ("csvgrep -c 1 -f /etc/list data.csv", Unknown),
            ("xsv headers data.csv", Safe),
            ("xsv select name,age data.csv", Safe),
            ("xsv stats data.csv | xsv table", Safe),
            ("xsv sort -s age data.csv -o sorted.csv", Destructive),
            ("xsv index data.csv", Unknown),
            ("xsv split out data.csv", Unknown),
            ("datamash sum 1 < numbers.txt", Safe),
            ("datamash -t , -g 1 count 1 < data.csv", Safe),
            ("echo '1 2' | datamash transpose", Safe),
            ("htmlq a --attribute href < page.html", Safe),
            ("htmlq -f page.html title", Safe),
            ("htmlq -f /etc/page.html title", Unknown),
            ("htmlq -o out.txt title < page.html", Destructive),
            ("echo '2^10' | bc", Safe),
            ("bc -l calc.txt", Safe),
            ("units '1 mile' km", Safe),
            ("units --log units.log '1 mile' km", Destructive),
            ("hexyl notes.txt", Safe),
            ("hexyl -n 64 notes.txt", Safe),
            ("hexyl /etc/x.bin", Unknown),
            ("groff -man -Tutf8 ls.1", Safe),
            ("groff -p -t -me -T latin1 foo.me", Safe),
            ("nroff -man perl.1 | less", Safe),
            ("troff -man -rF1 perl.1", Safe),
            ("pic foo.me | tbl | troff -me -Tlatin1 | grotty", Safe),
            ("tbl exum2.n | nroff -ms | colcrt - | more", Safe),
            ("grog meintro.me", Safe),
            ("groff -U -ms doc.ms", Unknown),
            ("pic -U doc.pic", Unknown),
            ("groff -Thtml -ms doc.ms", Unknown),
            ("groff -ms doc.ms > doc.ps", Destructive),
            ("groff -I /etc -ms doc.ms", Unknown),
            ("groff -ms /etc/doc.ms", Unknown),
            ("catdoc report.doc", Safe),
            ("antiword report.doc | less", Safe),
            ("cmark README.md", Safe),
            ("soxi sound.wav", Safe),
            ("pdffonts paper.pdf", Safe),
            ("wdiff -w '[-' -x '-]' a.txt b.txt", Safe),
            ("html2text page.html", Safe),
            ("html2text -o out.txt page.html", Destructive),
            ("odt2txt --output=out.txt doc.odt", Destructive),
            ("pdftotext paper.pdf -", Safe),
            ("pdftotext -layout -f 1 -l 2 paper.pdf - | head", Safe),
            ("pdftotext paper.pdf", Destructive),
            ("pdftotext paper.pdf paper.txt", Destructive),
            ("pdftotext /etc/x.pdf -", Unknown),
            ("pdfimages -list paper.pdf", Safe),
            ("pdfimages paper.pdf img", Destructive),
            ("dos2unix < a.txt", Safe),
            ("cat a.txt | unix2dos | head", Safe),
            ("dos2unix a.txt", Destructive),
            ("dos2unix -n a.txt b.txt", Destructive),
            ("tcpdump -r file.cap", Safe),
            ("tcpdump -nn -r file.cap 'tcp port 80'", Safe),
            ("tcpdump -r /tmp/file.cap", Unknown),
            ("tcpdump -i eth0", Unknown),
            ("tcpdump -r file.cap -w out.cap", Destructive),
            ("tcpdump -r file.cap -z gzip", Unknown),
            ("hunspell -l notes.txt", Safe),
            ("hunspell notes.txt", Unknown),
            ("ffprobe clip.mp4", Safe),
            (
                "ffprobe -v quiet -print_format json -show_format -show_streams clip.mp4",
                Safe,
            ),
            ("ffprobe -hide_banner -i clip.mp4", Safe),
            ("ffprobe -report clip.mp4", Destructive),
            ("ffprobe https://example.com/a.mp4", Unknown),
            ("ffprobe concat:a.mp4|/etc/b.mp4", Unknown),
            ("ffprobe /etc/clip.mp4", Unknown),
            ("ffprobe -dump_attachment:t out clip.mkv", Unknown),
            ("7z l archive.7z", Safe),
            ("7z t archive.7z", Safe),
            ("7z l /opt/archive.7z", Unknown),
            ("7z x archive.7z", Destructive),
            ("7z a new.7z notes.txt", Unknown),
            ("7z d archive.7z old.txt", Destructive),
            ("unrar l archive.rar", Safe),
            ("unrar x archive.rar", Destructive),
            ("unrar lt ../archive.rar", NotSafe),
        ]);
    }
}
