//! Programs that show what files hold or how they differ, other than coreutils: `diff`,
//! `diff3`, `ptx`, `addr2line`, `cmp`, `file`, `hexdump`, `tree`, `ogginfo`, the fuzzy and recursive hashers (`ssdeep`,
//! `hashdeep`, `md5deep`, ...), and the readers of patches (`diffstat`, patchutils'
//! `lsdiff`, `filterdiff`, `grepdiff`, `interdiff`) and `icdiff` as [`Table`] rows; `xxd`
//! (whose second file operand is written), `jq` (whose filter may read the environment or
//! load modules), `patchelf --print-*` (any other option rewrites the file) and `patch
//! --dry-run` (without it, `patch` rewrites the files its patch names: destructive) with
//! rules of their own.

use super::table::{
    Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, check_paths, output_file_check,
};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;
use crate::tools::command::words::Arg;

/// The options of patchutils' filters that take a value.
const PATCHUTILS_VALUES: &[&str] = &[
    "include",
    "include-from-file",
    "exclude",
    "exclude-from-file",
    "strip-match",
    "strip",
    "git-prefixes",
    "addprefix",
    "addoldprefix",
    "addnewprefix",
    "hunks",
    "lines",
    "files",
    "format",
    "as-numbered-lines",
    "file",
    "output-matching",
];

/// patchutils' `--in-place`: the result replaces the patch files.
const IN_PLACE: Refusal = Refusal {
    options: &["in-place"],
    effect: Effect::Writes,
    what: "writes the result back over the patch files",
};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    // What a file is: its character set (`uchardet`), its checksum (`crc32`), its MIME type
    // from the shared MIME database (`mimetype`). None has an option that writes.
    Program::new(&["uchardet", "crc32"], Rule::Table(&TABLE)),
    Program::new(
        // difftastic: a structural diff of two files or directories, printed.
        &["difft"],
        Rule::Table(&Table {
            spec: Spec::values(
                "",
                &[
                    "color",
                    "display",
                    "width",
                    "tab-width",
                    "language",
                    "override",
                    "context",
                    "byte-limit",
                    "graph-limit",
                    "parse-error-limit",
                    "background",
                    "syntax-highlight",
                    "sort-paths",
                ],
            ),
            ..TABLE
        }),
    ),
    // What an Ogg or Opus stream holds, checked; what a packet capture file holds
    // (`capinfos`); the file capabilities of programs (`getcap`). None writes.
    Program::new(
        &["ogginfo", "opusinfo", "capinfos", "getcap"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        // The processor's CPUID leaves, from the instruction or from a raw dump (`-f`).
        &["cpuid"],
        Rule::Table(&Table {
            spec: Spec::values("flsC", &["file", "leaf", "subleaf", "cpu"]),
            path_options: &["f", "file"],
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Fuzzy hashes of files, or matches against a file of known ones (`-m`, `-k`).
        &["ssdeep"],
        Rule::Table(&Table {
            spec: Spec::values("mkt", &[]),
            path_options: &["m", "k"],
            ..TABLE
        }),
    ),
    Program::new(
        // Recursive hashes of files, matched against files of known hashes (`-m`, `-x`,
        // `-k`, ...); `-W` writes the output to a file, and `-f` reads the names of the
        // files to hash from a file.
        &[
            "hashdeep",
            "md5deep",
            "sha1deep",
            "sha256deep",
            "tigerdeep",
            "whirlpooldeep",
        ],
        Rule::Table(&Table {
            spec: Spec::values("mMxXaAjiIopWfkc", &[]),
            path_options: &["m", "M", "x", "X", "k", "f"],
            names_from: &["f"],
            refused: &[Refusal {
                options: &["W"],
                effect: Effect::Writes,
                what: "writes its output to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // A histogram of what a patch changes; `-D`/`-S` name the directories it counts the
        // changed files' lines in; `-o` and `-e` send its output or its errors to a file.
        &["diffstat"],
        Rule::Table(&Table {
            spec: Spec::values("DefnNoprSw", &[]),
            path_options: &["D", "S"],
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &["e"],
                    effect: Effect::Writes,
                    what: "writes its errors to a file, replacing it",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // patchutils: list the files a patch touches (`lsdiff`), keep or drop parts of it
        // (`filterdiff`), by a pattern in its lines (`grepdiff`), and compare, combine or
        // swap two patches (`interdiff`, `combinediff`, `flipdiff`), printing the result;
        // `--in-place` writes it back over the patch files. Pattern files are paths.
        &["filterdiff", "lsdiff"],
        Rule::Table(&Table {
            spec: Spec::values("iIpxX#F", PATCHUTILS_VALUES),
            path_options: &["I", "include-from-file", "X", "exclude-from-file"],
            refused: &[IN_PLACE],
            ..TABLE
        }),
    ),
    Program::new(
        &["grepdiff"],
        Rule::Table(&Table {
            spec: Spec::values("iIpxX#Ff", PATCHUTILS_VALUES),
            operands: Operands::PatternThenPaths(&["f", "file"]),
            path_options: &[
                "I",
                "include-from-file",
                "X",
                "exclude-from-file",
                "f",
                "file",
            ],
            refused: &[IN_PLACE],
            ..TABLE
        }),
    ),
    Program::new(
        &["interdiff", "combinediff", "flipdiff"],
        Rule::Table(&Table {
            spec: Spec::values("pUd", &["strip-match", "unified", "drop-context"]),
            refused: &[IN_PLACE],
            ..TABLE
        }),
    ),
    Program::new(
        &["mimetype"],
        Rule::Table(&Table {
            spec: Spec::values("l", &["language", "output-format", "database", "separator"]),
            path_options: &["database"],
            ..TABLE
        }),
    ),
    Program::new(
        &["sdiff"],
        Rule::Table(&Table {
            spec: Spec::values(
                "wIo",
                &["width", "ignore-matching-lines", "output", "tabsize"],
            ),
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &["diff-program"],
                    effect: Effect::Unsafe,
                    what: "runs a program of its choice",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // Three-way comparison and merge, printed; `--diff-program` runs a program of its
        // choice in diff's place.
        &["diff3"],
        Rule::Table(&Table {
            spec: Spec::values("L", &["label", "diff-program"]),
            refused: &[Refusal {
                options: &["diff-program"],
                effect: Effect::Unsafe,
                what: "runs a program of its choice",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Permuted indexes of the input files, printed. Its files of words to break on,
        // ignore or keep are paths; in the traditional mode (`-G`) a second operand is the
        // file it writes.
        &["ptx"],
        Rule::Table(&Table {
            spec: Spec::values(
                "bgiFoSwW",
                &[
                    "break-file",
                    "gap-size",
                    "ignore-file",
                    "flag-truncation",
                    "only-file",
                    "sentence-regexp",
                    "width",
                    "word-regexp",
                    "format",
                    "macro-name",
                ],
            ),
            path_options: &["b", "break-file", "i", "ignore-file", "o", "only-file"],
            refused: &[Refusal {
                options: &["G", "traditional"],
                effect: Effect::Writes,
                what: "writes its second operand",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Source lines of addresses in a program (binutils); `-e` names the program.
        &["addr2line"],
        Rule::Table(&Table {
            spec: Spec::values("bej", &["exe", "target", "section"]),
            operands: Operands::Text,
            path_options: &["e", "exe"],
            ..TABLE
        }),
    )
    .reading_argument_files(),
    Program::new(
        &["diff", "colordiff"],
        Rule::Table(&Table {
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
            ..TABLE
        }),
    ),
    Program::new(
        // Two files side by side, coloured; nothing is written.
        &["icdiff"],
        Rule::Table(&Table {
            spec: Spec::values(
                "LU",
                &[
                    "cols",
                    "encoding",
                    "head",
                    "label",
                    "output-encoding",
                    "tabsize",
                    "unified",
                    "exclude-lines",
                    "color-map",
                ],
            ),
            ..TABLE
        }),
    ),
    Program::new(&["patchelf"], Rule::Judge(patchelf)),
    Program::new(&["ldd"], Rule::Judge(ldd)),
    Program::new(&["qemu-img"], Rule::Judge(qemu_img)),
    Program::new(
        // A Java class's members and bytecode. `-J` hands an option to the virtual machine
        // it runs on (`-J-javaagent:...` loads code).
        &["javap"],
        Rule::Table(&Table {
            refused: &[Refusal {
                options: &["J"],
                effect: Effect::Unsafe,
                what: "hands an option to the Java virtual machine, which may load code",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["pax"], Rule::Judge(pax)),
    Program::new(&["patch"], Rule::Judge(patch_dry_run)),
    Program::new(
        &["cmp"],
        Rule::Table(&Table {
            spec: Spec::values("in", &["ignore-initial", "bytes"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["file"],
        Rule::Table(&Table {
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
            ..TABLE
        }),
    ),
    Program::new(
        &["hexdump", "hd"],
        Rule::Table(&Table {
            spec: Spec::values("efns", &[]),
            path_options: &["f"],
            ..TABLE
        }),
    ),
    Program::new(
        &["tree"],
        Rule::Table(&Table {
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
            ..TABLE
        }),
    ),
    Program::new(&["xxd"], Rule::Judge(xxd_rule)),
    Program::new(&["jq", "gojq"], Rule::Judge(jq_rule)),
];

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

/// `patchelf --print-interpreter`, `--print-rpath`, `--print-needed`, ... print what an
/// ELF file names; every other option rewrites the file in place (or into `--output`).
fn patchelf(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const PRINTS: &[&str] = &[
        "--print-interpreter",
        "--print-os-abi",
        "--print-soname",
        "--print-rpath",
        "--print-needed",
        "--print-execstack",
        "--debug",
        "--version",
        "--help",
    ];
    let Some(words) = crate::tools::command::words::shown_words(call.args) else {
        return Judgement::other("`patchelf` is given words only known when the line runs");
    };
    let mut judgement = Judgement::whitelisted();
    for word in words {
        if PRINTS.contains(&word) {
            continue;
        }
        if word.starts_with('-') && word != "-" {
            return Judgement::destroys(format!(
                "`patchelf {word}` rewrites the ELF file in place (or into the file `--output` names)"
            ));
        }
        walker.check_path(&mut judgement, call.program, word);
    }
    judgement
}

/// `ldd PROGRAM...`: the shared libraries a program loads, as the dynamic loader resolves
/// them. The loader loads the program to tell, and a program built to can run code as it is
/// loaded, so only the machine's own installed programs (under `/usr`, `/bin`, `/lib`: the
/// public trees, never the workspace's files) are asked about.
fn ldd(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const OPTIONS: &[&str] = &[
        "-v",
        "--verbose",
        "-u",
        "--unused",
        "-d",
        "--data-relocs",
        "-r",
        "--function-relocs",
    ];
    let Some(words) = crate::tools::command::words::shown_words(call.args) else {
        return Judgement::other("`ldd` is given words only known when the line runs");
    };
    let mut programs = 0;
    for word in words {
        if OPTIONS.contains(&word) {
            continue;
        }
        if word.starts_with('-') || !crate::tools::command::paths::is_public_system_path(word) {
            return Judgement::other(format!(
                "`ldd` has the loader load {word}, which runs code of the program's own as it loads; only the machine's installed programs (under /usr, /bin, /lib) are asked about without a click"
            ));
        }
        programs += 1;
    }
    match programs {
        0 => Judgement::other("`ldd` without a program to ask about"),
        _ => Judgement::whitelisted(),
    }
}

/// `patch --dry-run` prints which hunks of the patch would apply, and changes no file. Any
/// other form patches the files the patch names; `-o` and `-r` name files to write.
fn patch_dry_run(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const PATCH: Table = Table {
        spec: Spec::values(
            "pFdiDVBYzgor",
            &[
                "strip",
                "fuzz",
                "directory",
                "input",
                "ifdef",
                "version-control",
                "prefix",
                "basename-prefix",
                "suffix",
                "get",
                "output",
                "reject-file",
                "quoting-style",
                "reject-format",
                "read-only",
            ],
        ),
        path_options: &["d", "directory", "i", "input"],
        refused: &[Refusal {
            options: &["o", "output", "r", "reject-file"],
            effect: Effect::Writes,
            what: "names a file to write",
        }],
        ..TABLE
    };
    if !call.args.iter().any(|arg| arg.text() == Some("--dry-run")) {
        return Judgement::destroys(
            "`patch` rewrites the files its patch names (`--dry-run` only reports)".to_owned(),
        );
    }
    super::table::judge(walker, call, &PATCH)
}

/// `qemu-img info`, `check` (not `-r`, which repairs), `compare`, `map`, `measure` and
/// `snapshot -l` read disk images and print; the other subcommands create, convert, commit,
/// rebase, resize or amend images. An image named by a protocol or a JSON description
/// (`nbd:...`, `http://...`, `json:{...}`) is reached over the network or names other files;
/// `--object` may read a secret's file.
fn qemu_img(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const READS: &[&str] = &["info", "check", "compare", "map", "measure", "snapshot"];
    let Some(words) = crate::tools::command::words::shown_words(call.args) else {
        return Judgement::other("`qemu-img` is given words only known when the line runs");
    };
    let Some((&verb, rest)) = words.split_first() else {
        return Judgement::other("`qemu-img` is given no subcommand");
    };
    if !READS.contains(&verb) {
        return match verb {
            "commit" | "rebase" | "resize" | "amend" | "convert" | "create" | "dd" | "bitmap" => {
                Judgement::destroys(format!("`qemu-img {verb}` writes or changes disk images"))
            }
            _ => Judgement::other(format!(
                "`qemu-img {verb}` is not a subcommand known to only read"
            )),
        };
    }
    let mut judgement = Judgement::whitelisted();
    let mut listed = false;
    let mut words = rest.iter();
    while let Some(&word) = words.next() {
        match word {
            // `snapshot -l` lists; elsewhere (`measure -l`) `-l` names a snapshot.
            "-l" if verb == "snapshot" => listed = true,
            "-f" | "-F" | "-O" | "-o" | "-l" | "--size" | "--start-offset" | "--max-length"
            | "-T" | "--cache" => {
                words.next();
            }
            "--object" => {
                return Judgement::other(
                    "`qemu-img --object` defines an object, which may read a secret's file",
                );
            }
            "-r" if verb == "check" => {
                return Judgement::destroys("`qemu-img check -r` repairs the image in place");
            }
            "-c" | "-a" | "-d" if verb == "snapshot" => {
                return Judgement::destroys(format!(
                    "`qemu-img snapshot {word}` creates, applies or deletes a snapshot in the image"
                ));
            }
            w if w.starts_with('-') => {
                if !w.starts_with("--output")
                    && !matches!(
                        w,
                        "-q" | "-U" | "--force-share" | "--backing-chain" | "--image-opts" | "-s"
                            | "-p" | "--limits"
                    )
                {
                    return Judgement::other(format!(
                        "`qemu-img {verb} {w}` is not an option known to only read"
                    ));
                }
            }
            path if path.contains(':') => judgement.unknown(format!(
                "`qemu-img` is given `{path}`, an image reached through a protocol or described in JSON"
            )),
            path => walker.check_path(&mut judgement, call.program, path),
        }
    }
    if verb == "snapshot" && !listed {
        judgement.unknown("`qemu-img snapshot` without `-l` changes the image's snapshots");
    }
    judgement
}

/// `pax` lists an archive (`-f ARCHIVE`, or its input) unless `-r` or `-w` is given: `-r`
/// extracts, writing over files of the same names; `-w` writes an archive of the files, to
/// the output or into the file `-f` names (replacing it); `-a` appends to one; `-i` asks
/// at the terminal.
fn pax(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const PAX: Table = Table {
        spec: Spec::values("bfopsxBEGTU", &[]),
        path_options: &["f"],
        refused: &[
            Refusal {
                options: &["r", "a"],
                effect: Effect::Writes,
                what: "extracts the archive, or appends to it, writing over files",
            },
            Refusal {
                options: &["i"],
                effect: Effect::Unsafe,
                what: "asks at the terminal for each name",
            },
        ],
        ..TABLE
    };
    let items = crate::tools::command::options::parse(call.args, &PAX.spec);
    let writes = items.iter().any(|item| item.named(&["w"], false));
    let into_file = items.iter().any(|item| item.named(&["f"], false));
    let mut judgement = super::table::judge(walker, call, &PAX);
    if writes && into_file {
        judgement.destructive("`pax -w -f` writes an archive into the file, replacing it");
    }
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn inspect_rules_give_each_form_its_verdict() {
        {
            use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
            crate::tools::command::tests::check_in_workspace(&[
                ("icdiff notes.txt notes.txt", Safe),
                ("hd notes.txt", Safe),
                ("qemu-img info notes.txt", Safe),
                (
                    "qemu-img info --output=json --backing-chain -U notes.txt",
                    Safe,
                ),
                ("qemu-img check notes.txt", Safe),
                ("qemu-img snapshot -l notes.txt", Safe),
                ("qemu-img measure -l snap -O raw notes.txt", Safe),
                ("qemu-img compare notes.txt notes.txt", Safe),
                ("qemu-img check -r all notes.txt", Destructive),
                ("qemu-img snapshot -d s1 notes.txt", Destructive),
                ("qemu-img convert -O raw notes.txt out.raw", Destructive),
                ("qemu-img resize notes.txt +1G", Destructive),
                ("qemu-img snapshot notes.txt", NotSafe),
                ("qemu-img info nbd://host/x", NotSafe),
                (
                    "qemu-img info 'json:{\"file.filename\":\"/etc/shadow\"}'",
                    NotSafe,
                ),
                (
                    "qemu-img info --object secret,id=s,file=/etc/shadow notes.txt",
                    NotSafe,
                ),
                ("qemu-img info /etc/shadow", Unknown),
                ("javap -c notes.txt", Safe),
                ("javap -J-javaagent:agent.jar Foo", NotSafe),
                ("pax -f notes.txt", Safe),
                ("pax -w src", Safe),
                ("pax -r -f notes.txt", Destructive),
                ("pax -w -f out.tar src", Destructive),
                ("pax -f /etc/shadow", Unknown),
                ("icdiff --cols=120 -U 3 -L a -L b notes.txt notes.txt", Safe),
                ("icdiff notes.txt /etc/shadow", Unknown),
                ("patchelf --print-interpreter notes.txt", Safe),
                ("patchelf --print-rpath --print-needed notes.txt", Safe),
                ("ldd /usr/bin/ls", Safe),
                ("ldd -v -u /bin/sh /usr/bin/env", Safe),
                ("ldd notes.txt", Unknown),
                ("ldd ./a.out /usr/bin/ls", Unknown),
                ("ldd /usr/local/bin/tool", Unknown),
                ("ldd /usr/bin/../../tmp/x", Unknown),
                ("ldd -x /usr/bin/ls", Unknown),
                ("ldd", Unknown),
                ("ldd /usr/bin/ls > libs.txt", Destructive),
                ("patchelf --set-rpath /opt notes.txt", Destructive),
                ("patchelf --print-rpath --output out notes.txt", Destructive),
                ("patchelf --print-soname /etc/shadow", Unknown),
                ("patch --dry-run -p1 -i notes.txt", Safe),
                ("patch --dry-run -p1 < notes.txt", Safe),
                ("patch -p1 < notes.txt", Destructive),
                ("patch -p1 -i notes.txt", Destructive),
                (
                    "patch --dry-run -o out.txt notes.txt notes.txt",
                    Destructive,
                ),
                (
                    "patch --dry-run -r rejects notes.txt notes.txt",
                    Destructive,
                ),
                ("patch --dry-run -i /etc/shadow", Unknown),
                ("patch --dry-run -d /etc -i notes.txt", Unknown),
                ("patch $OPTS --dry-run -i notes.txt", NotSafe),
                ("diff3 notes.txt notes.txt notes.txt", Safe),
                (
                    "diff3 -m -L a -L b -L c notes.txt notes.txt notes.txt",
                    Safe,
                ),
                (
                    "diff3 --diff-program=sh notes.txt notes.txt notes.txt",
                    Unknown,
                ),
                ("diff3 notes.txt notes.txt /etc/shadow", Unknown),
                ("ptx -w 60 notes.txt", Safe),
                ("ptx -i notes.txt notes.txt", Safe),
                ("ptx -i /etc/shadow notes.txt", Unknown),
                ("addr2line -f -C -e notes.txt 0x4005 0x4010", Safe),
                ("addr2line -e /etc/shadow 0x1", Unknown),
                ("addr2line -e notes.txt @notes.txt", Unknown),
            ]);
            crate::tools::command::tests::check_in_workspace(&[(
                "ptx -G notes.txt out.txt",
                crate::tools::command::tests::Expect::Destructive,
            )]);
        }
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("uchardet notes.txt", Safe),
            ("diffstat -p1 fix.patch", Safe),
            ("ogginfo notes.txt", Safe),
            ("capinfos notes.txt", Safe),
            ("getcap -r src", Safe),
            ("getcap /usr/bin/ping", Safe),
            ("cpuid -1 -l 7", Safe),
            ("cpuid -f /etc/dump", Unknown),
            ("ssdeep -r src", Safe),
            ("ssdeep -m known.txt notes.txt", Safe),
            ("ssdeep -m /etc/known notes.txt", Unknown),
            ("hashdeep -r -c sha256 src", Safe),
            ("md5deep -r -x known.txt src", Safe),
            ("sha256deep -W out.txt -r src", Destructive),
            ("find . -type f | md5deep -f -", Unknown),
            ("git diff | diffstat -C -w 60", Safe),
            ("diffstat -o out.txt fix.patch", Destructive),
            ("diffstat -e err.txt fix.patch", Destructive),
            ("diffstat -D /etc fix.patch", Unknown),
            ("lsdiff -n fix.patch", Safe),
            ("filterdiff -i '*/lp.c' -z fix.patch.gz", Safe),
            ("filterdiff --in-place -x '*.md' fix.patch", Destructive),
            ("filterdiff -X /etc/patterns fix.patch", Unknown),
            ("grepdiff --output-matching=hunk TODO fix.patch", Safe),
            ("grepdiff -f patterns.txt fix.patch", Safe),
            ("grepdiff TODO /etc/fix.patch", Unknown),
            ("interdiff -p1 a.patch b.patch", Safe),
            ("combinediff a.patch b.patch", Safe),
            ("flipdiff --in-place a.patch b.patch", Destructive),
            ("difft notes.txt src/a.c", Safe),
            (
                "difft --display side-by-side --color never notes.txt src/a.c",
                Safe,
            ),
            ("difft notes.txt ../other.txt", Unknown),
            ("crc32 notes.txt src/a.c", Safe),
            ("mimetype -b notes.txt", Safe),
            ("mimetype --database /etc/secret notes.txt", Unknown),
            ("crc32 /etc/shadow", Unknown),
            ("uchardet notes.txt > out.txt", Destructive),
            ("sdiff a.txt b.txt", Safe),
            ("sdiff -w 80 a.txt b.txt", Safe),
            ("sdiff -o merged.txt a.txt b.txt", Destructive),
            ("sdiff --diff-program=./x a.txt b.txt", Unknown),
            ("colordiff -u a.txt b.txt", Safe),
            ("colordiff a.txt /etc/passwd", Unknown),
            ("sort --compress-program=gzip notes.txt", Unknown),
            ("jq -n env", Unknown),
            ("jq -n '$ENV.DISCORD_TOKEN'", Unknown),
            ("jq -f prog.jq data.json", Unknown),
            ("tree -R -H . src", Unknown),
            ("sort -o out.txt notes.txt", Destructive),
            ("sort --output=out.txt notes.txt", Destructive),
            ("sort -rno out.txt notes.txt", Destructive),
            ("xxd notes.txt out.hex", Destructive),
            ("tree -o out.html", Destructive),
        ]);
    }
}
