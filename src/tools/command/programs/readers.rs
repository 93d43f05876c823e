//! Programs that only read, beyond coreutils, found waiting for a click in command lines
//! people publish: the compressed-file readers (`zcat`, `zgrep`, `xzcat`, `bzdiff`, ...),
//! the text tools of util-linux and friends (`join`, `look`, `pr`, `fmt`, `strings`, ...),
//! the ELF readers of binutils (`readelf`, `objdump`, `nm`, `size`), `ag`, the programs
//! that state facts about the machine (`free`, `nproc`, `lscpu`, `uptime`, `cal`, ...), the
//! pagers, `bc`, the look-ups in the manuals (`info`, `whatis`, `apropos`, `whereis`),
//! and in the installed fonts and libraries (`fc-list`, `fc-match`, `pkg-config`), and the
//! zip comment and member readers (`zipnote`, `zipgrep`), `uuencode`, `envsubst`, `mdcat`,
//! `chafa`, `getfattr`, `jot`, more checksums (`b3sum`, `sha3sum`, `xxhsum`), the JSON and
//! field filters `choose`, `jp`, `json_reformat`, `diff-so-fancy`, `qrencode` to the
//! terminal, `dfc`, `dstat`, `fzf --filter`, and `sd` as a filter (given files without
//! `-p`, it rewrites them).
//!
//! The binutils (`nm`, `objdump`, `readelf`, `strings`, `size`, `c++filt`, `ar`,
//! `addr2line`) replace an argument `@FILE` by the words the file holds, options among
//! them, which the line does not show: such a call waits.
//!
//! A pager whose output is not a terminal (a line's never is) copies its files to it like
//! `cat`: no prompt, no command of its own runs. What could still write or run something is
//! refused: a log file (`less -o`), a key-binding file (`less -k`, which may set
//! `LESSOPEN`, a command less runs on every file), `info`'s output and dribble files. `bc`
//! only computes (unlike `dc`, whose `!` runs a shell command, which is not here).
//!
//! The compressors themselves (`gzip`, `xz`, `bzip2`, `zstd`, `unzip`, ...) are judged by
//! form: writing to standard output, listing or testing reads; anything else replaces or
//! writes files beside its input (`gzip f` deletes `f` once `f.gz` is written), which is
//! the destructive floor, so the model's `low` never decides it.
//!
//! Machine facts are drawn where no secret of the host is among them: counts and sizes of
//! CPUs, memory and disks, the time, the locale. Users' sessions and kernel messages (`w`,
//! `dmesg`) are not here; the process listers (`ps`, `lsof`) are in `processes.rs`, read-only
//! only where a line sees its own processes alone.

use super::search::GREP;
use super::table::{Effect, OUTPUT_FILE, Operands, Refusal, TABLE, Table, check_paths, opaque};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::shown_words;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &[
            "zcat", "gzcat", "xzcat", "lzcat", "bzcat", "zstdcat", "lz4cat",
        ],
        Rule::Table(&Table {
            spec: Spec::values("ST", &["suffix", "threads", "memlimit", "format"]),
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "zgrep", "zegrep", "zfgrep", "xzgrep", "xzegrep", "xzfgrep", "bzgrep", "bzegrep",
            "bzfgrep", "lzgrep", "lzegrep", "lzfgrep", "zstdgrep",
        ],
        Rule::Table(&GREP),
    ),
    Program::new(
        &[
            "zdiff", "zcmp", "xzdiff", "xzcmp", "bzdiff", "bzcmp", "lzdiff", "lzcmp",
        ],
        Rule::Table(&Table {
            spec: Spec::values("CUIxXSLWD", &["label", "exclude", "ignore-matching-lines"]),
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "gzip",
            "gunzip",
            "bzip2",
            "bunzip2",
            "xz",
            "unxz",
            "lzma",
            "unlzma",
            "lzip",
            "zstd",
            "unzstd",
            "lz4",
            "unlz4",
            "pigz",
            "unpigz",
            "compress",
            "uncompress",
            "brotli",
        ],
        Rule::Judge(compressor),
    ),
    Program::new(&["unzip"], Rule::Judge(unzip)),
    Program::new(&["getent"], Rule::Judge(getent)),
    Program::new(
        &["zipinfo"],
        Rule::Table(&Table {
            spec: Spec::values("x", &[]),
            ..TABLE
        }),
    ),
    Program::new(
        // A zip archive's comments, printed; `-w` writes comments read from the input
        // into the archive (`-b` names where it builds the new one).
        &["zipnote"],
        Rule::Table(&Table {
            spec: Spec::values("b", &[]),
            refused: &[Refusal {
                options: &["w"],
                effect: Effect::Writes,
                what: "writes comments into the archive",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // `egrep` over the members of a zip archive (`unzip -p` into a pipe); the words
        // after the archive are member names, and options before the pattern are egrep's.
        &["zipgrep"],
        Rule::Table(&Table {
            spec: Spec::values("efmABCd", &[]),
            operands: Operands::PatternThenPaths(&["e", "f"]),
            path_options: &["f"],
            ..TABLE
        }),
    ),
    Program::new(
        // A file encoded for mail, printed; the last operand is the name written into
        // the encoding, not a file opened.
        &["uuencode"],
        Rule::Table(&Table {
            spec: Spec::values("o", &["output-file"]),
            refused: &[Refusal {
                options: &["o", "output-file"],
                effect: Effect::Writes,
                what: "writes its output to a file, replacing it",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["join"],
        Rule::Table(&Table {
            spec: Spec::values("aevot12j", &[]),
            ..TABLE
        }),
    ),
    Program::new(
        &["look"],
        Rule::Table(&Table {
            spec: Spec::values("t", &["terminate"]),
            operands: Operands::PatternThenPaths(&[]),
            ..TABLE
        }),
    ),
    Program::new(
        &["pr"],
        Rule::Table(&Table {
            spec: Spec::values(
                "hlwoNDW",
                &[
                    "header",
                    "length",
                    "width",
                    "indent",
                    "first-line-number",
                    "date-format",
                    "page-width",
                    "sep-string",
                    "separator",
                    "columns",
                    "pages",
                    "expand-tabs",
                    "output-tabs",
                    "number-lines",
                ],
            )
            .optional("eisn"),
            ..TABLE
        }),
    ),
    Program::new(
        &["fmt", "expand", "unexpand", "tsort"],
        Rule::Table(&Table {
            spec: Spec::values("wpgt", &["width", "prefix", "goal", "tabs"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["shuf"],
        Rule::Table(&Table {
            spec: Spec::values(
                "nio",
                &["head-count", "input-range", "output", "random-source"],
            ),
            path_options: &["random-source"],
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        &["iconv"],
        Rule::Table(&Table {
            spec: Spec::values("fto", &["from-code", "to-code", "output"]),
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        &["strings"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ntesT",
                &["bytes", "radix", "encoding", "output-separator", "target"],
            ),
            ..TABLE
        }),
    )
    .reading_argument_files(),
    Program::new(
        &["readelf"],
        Rule::Table(&Table {
            spec: Spec::values(
                "xpRT",
                &[
                    "hex-dump",
                    "string-dump",
                    "relocated-dump",
                    "debug-dump",
                    "dwarf-depth",
                    "dwarf-start",
                    "sym-base",
                ],
            )
            .optional("w"),
            ..TABLE
        }),
    )
    .reading_argument_files(),
    Program::new(
        &["objdump"],
        Rule::Table(&Table {
            spec: Spec::values(
                "bjmMIe",
                &[
                    "target",
                    "section",
                    "architecture",
                    "disassembler-options",
                    "include",
                    "start-address",
                    "stop-address",
                    "adjust-vma",
                    "prefix",
                    "prefix-strip",
                    "insn-width",
                    "dwarf-depth",
                    "dwarf-start",
                    "disassembler-color",
                    "visualize-jumps",
                    "demangle",
                ],
            )
            .optional("W"),
            ..TABLE
        }),
    )
    .reading_argument_files(),
    Program::new(
        &["nm", "size"],
        Rule::Table(&Table {
            spec: Spec::values("tfA", &["radix", "format", "target", "size-sort"]),
            ..TABLE
        }),
    )
    .reading_argument_files(),
    Program::new(
        &["ag"],
        Rule::Table(&Table {
            spec: Spec::values(
                "ABCGgmp",
                &[
                    "after",
                    "before",
                    "context",
                    "file-search-regex",
                    "ignore",
                    "ignore-dir",
                    "max-count",
                    "path-to-ignore",
                    "depth",
                    "workers",
                    "pager",
                    "color-line-number",
                    "color-match",
                    "color-path",
                ],
            ),
            operands: Operands::PatternThenPaths(&["g"]),
            path_options: &["p", "path-to-ignore"],
            refused: &[Refusal {
                options: &["pager"],
                effect: Effect::Unsafe,
                what: "runs a program of its choice on the output",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &[
            "free",
            "nproc",
            "uptime",
            "cal",
            "jcal",
            "ncal",
            "arch",
            "getconf",
            "locale",
            "tty",
            "logname",
            "vmstat",
            "lsblk",
            "lsmem",
            "sleep",
            "yes",
            "factor",
            "groups",
            "lsmod",
            "iostat",
            "mpstat",
            "hostid",
            "uuidgen",
            "colrm",
            "systemd-detect-virt",
            "validlocale",
            "ipcalc",
            "lsirq",
        ],
        Rule::Table(&Table {
            spec: Spec::values(
                "scSdCIwo",
                &["seconds", "count", "ignore", "unit", "output", "width"],
            ),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Its input with the line's environment variables put in (the environment every
        // line gets, as `printenv` prints it); the operand names which ones.
        &["envsubst"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Markdown and images drawn as terminal text. A remote image mdcat would fetch
        // is left to the walls, which hold no network.
        &["mdcat", "chafa"],
        Rule::Table(&Table {
            spec: Spec::values(
                "sfcw",
                &[
                    "columns",
                    "size",
                    "format",
                    "colors",
                    "symbols",
                    "fill",
                    "dither",
                    "work",
                    "font-ratio",
                    "bg",
                    "fg",
                    "duration",
                    "speed",
                    "threads",
                    "color-space",
                    "color-extractor",
                    "glyph-file",
                    "optimize",
                    "scale",
                    "align",
                    "view-size",
                ],
            ),
            path_options: &["glyph-file"],
            ..TABLE
        }),
    ),
    Program::new(&["sd"], Rule::Judge(sd)),
    Program::new(
        // Passwords made up and printed; `-H` seeds them from a file's hash.
        &["pwgen"],
        Rule::Table(&Table {
            spec: Spec::values("NH", &["num-passwords", "sha1", "remove-chars"]),
            operands: Operands::Text,
            path_options: &["H", "sha1"],
            ..TABLE
        }),
    ),
    Program::new(
        // A terminal's description, printed from the terminfo database; `-A` and `-B`
        // name the database directories.
        &["infocmp"],
        Rule::Table(&Table {
            spec: Spec::values("ABRvw", &[]),
            operands: Operands::Text,
            path_options: &["A", "B"],
            ..TABLE
        }),
    ),
    Program::new(
        // The kernel's profiling counters (`/proc/profile`); `-r` resets them and `-M` sets
        // the profiling step, both writes.
        &["readprofile"],
        Rule::Table(&Table {
            spec: Spec::values("mpM", &["mapfile", "profile", "multiplier"]),
            path_options: &["m", "mapfile", "p", "profile"],
            refused: &[Refusal {
                options: &["r", "reset", "M", "multiplier"],
                effect: Effect::Unsafe,
                what: "resets or reconfigures the kernel's profiling counters",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // The kernel's network statistics (`/proc/net/stat`), printed or sampled; `-f`
        // names a statistics file, `-k` the fields.
        &["lnstat", "rtstat", "ctstat"],
        Rule::Table(&Table {
            spec: Spec::values("cfikw", &["count", "file", "interval", "keys", "width"]),
            path_options: &["f", "file"],
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Who is logged in (`who am i` names no file; operands are utmp-style files).
        &["who", "users"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        // Who is logged in and what they run; operands are user names.
        &["w"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // A file's attributes, access lists and path components; the colours `ls` uses.
        &["lsattr", "getfacl", "namei", "dircolors"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        // A file's extended attributes: the ones `-n` names or `-m` matches, shown in the
        // encoding `-e` picks. Setting them is `setfattr`'s.
        &["getfattr"],
        Rule::Table(&Table {
            spec: Spec::values("nme", &["name", "match", "encoding"]),
            ..TABLE
        }),
    ),
    Program::new(
        // Checksums beyond coreutils': BLAKE3 (`-l` output length, `--derive-key` context),
        // SHA-3 (`-a` the variant), xxHash (`-H0`...`-H3` the width). `--check` reads a
        // list of sums and files.
        &["b3sum"],
        Rule::Table(&Table {
            spec: Spec::values("l", &["length", "num-threads", "derive-key", "seek"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["sha3sum"],
        Rule::Table(&Table {
            spec: Spec::values("a", &["algorithm"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["xxhsum", "xxh32sum", "xxh64sum", "xxh128sum", "xxh3sum"],
        Rule::Table(&TABLE),
    ),
    Program::new(
        // Fields by index, like `cut` (`choose 0 2`, `choose -f , 1:3`); `-i` reads a file.
        &["choose"],
        Rule::Table(&Table {
            spec: Spec::values(
                "fio",
                &["field-separator", "input", "output-field-separator"],
            ),
            operands: Operands::Text,
            path_options: &["i", "input"],
            ..TABLE
        }),
    ),
    Program::new(
        // yajl's JSON filters: reformat (`-m` minimised, `-u` without checks) or verify.
        &["json_reformat", "json_verify"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // A JMESPath expression over JSON: the input, or the file `-f` names (`-e` reads the
        // expression from one).
        &["jp"],
        Rule::Table(&Table {
            spec: Spec::values("fe", &["filename", "expr-file"]),
            operands: Operands::Text,
            path_options: &["f", "filename", "e", "expr-file"],
            ..TABLE
        }),
    ),
    Program::new(
        // A QR code of the text, drawn as terminal text (`-t ANSI`, `UTF8`); `-o` writes an
        // image, `-r` reads the text from a file.
        &["qrencode"],
        Rule::Table(&Table {
            spec: Spec::values(
                "orsltvmd",
                &[
                    "output",
                    "read-from",
                    "size",
                    "level",
                    "type",
                    "symversion",
                    "margin",
                    "dpi",
                    "foreground",
                    "background",
                ],
            ),
            operands: Operands::Text,
            path_options: &["r", "read-from"],
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        // diff's output made readable, from its input; `--set-defaults` writes git's
        // global configuration.
        &["diff-so-fancy"],
        Rule::Table(&Table {
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["set-defaults"],
                effect: Effect::Writes,
                what: "writes git's configuration",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // Disk usage of the mounted file systems, like `df`; `-e` picks a format printed to
        // the output.
        &["dfc"],
        Rule::Table(&Table {
            spec: Spec::values("ceptqu", &[]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // System statistics from `/proc` every second (`dstat 1 5`: five times); `--output`
        // writes them to a CSV file.
        &["dstat"],
        Rule::Table(&Table {
            spec: Spec::values("CDIMNST", &["output"]),
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["output"],
                effect: Effect::Writes,
                what: "writes the statistics to a file",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["fzf", "sk"], Rule::Judge(fuzzy_filter)),
    Program::new(
        // UUIDs, made (`-n` how many, `-v` which version) or decoded (`-d`); `-o` writes
        // them to a file.
        &["uuid"],
        Rule::Table(&Table {
            spec: Spec::values("nvFo", &[]),
            operands: Operands::Text,
            refused: &[OUTPUT_FILE],
            ..TABLE
        }),
    ),
    Program::new(
        // Pronounceable passwords; `-r` and `-b` name dictionary and filter files to check
        // against.
        &["apg"],
        Rule::Table(&Table {
            spec: Spec::values("anmxMErbpc", &[]),
            operands: Operands::Text,
            path_options: &["r", "b"],
            ..TABLE
        }),
    ),
    Program::new(
        // qpdf's zlib filter: its input, compressed or uncompressed, to its output.
        &["zlib-flate"],
        Rule::Table(&Table {
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // Which algorithm made a hash; `-o` writes the answer to a file.
        &["hashid"],
        Rule::Table(&Table {
            spec: Spec::values("o", &["outfile"]),
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["o", "outfile"],
                effect: Effect::Writes,
                what: "writes its answer to a file",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        // A `wc` of its own.
        &["cw"],
        Rule::Table(&TABLE),
    ),
    Program::new(&["dc"], Rule::Judge(dc)),
    Program::new(
        // BSD's sequence printer: counts, bounds and steps as operands, a format (`-w`),
        // separator (`-s`) or precision (`-p`) as values.
        &["jot"],
        Rule::Table(&Table {
            spec: Spec::values("wsbp", &[]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["clear"],
        Rule::Table(&Table {
            spec: Spec::values("T", &[]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["more", "zmore", "bzmore", "xzmore", "lzmore"],
        Rule::Table(&Table {
            spec: Spec::values("n", &["lines"]),
            ..TABLE
        }),
    ),
    Program::new(
        &["less", "zless", "bzless", "xzless", "lzless", "zstdless"],
        Rule::Table(&Table {
            spec: Spec::values(
                "bhjkoOpPtTxyz#",
                &[
                    "buffers",
                    "max-back-scroll",
                    "jump-target",
                    "lesskey-file",
                    "lesskey-src",
                    "lesskey-content",
                    "log-file",
                    "LOG-FILE",
                    "pattern",
                    "prompt",
                    "tag",
                    "tag-file",
                    "tabs",
                    "max-forw-scroll",
                    "window",
                    "shift",
                ],
            ),
            path_options: &["T", "tag-file"],
            refused: &[
                Refusal {
                    options: &["o", "O", "log-file", "LOG-FILE"],
                    effect: Effect::Writes,
                    what: "copies its input to a log file, replacing it",
                },
                Refusal {
                    options: &["k", "lesskey-file", "lesskey-src", "lesskey-content"],
                    effect: Effect::Unsafe,
                    what: "reads key bindings that may set LESSOPEN, a command run on every file",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["bc"],
        Rule::Table(&Table {
            spec: Spec::values("ef", &["expression", "file"]),
            path_options: &["f", "file"],
            ..TABLE
        }),
    ),
    Program::new(
        &["info"],
        Rule::Table(&Table {
            spec: Spec::values(
                "dfno",
                &[
                    "directory",
                    "file",
                    "node",
                    "output",
                    "dribble",
                    "restore",
                    "init-file",
                    "apropos",
                    "index-search",
                ],
            ),
            path_options: &["d", "directory", "f", "file", "restore"],
            operands: Operands::Text,
            refused: &[
                OUTPUT_FILE,
                Refusal {
                    options: &["dribble"],
                    effect: Effect::Writes,
                    what: "records keystrokes in a file, replacing it",
                },
                Refusal {
                    options: &["init-file"],
                    effect: Effect::Unsafe,
                    what: "reads key bindings and variables from a file of its choice",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["whatis", "apropos"],
        Rule::Table(&Table {
            spec: Spec::values(
                "sSmMLC",
                &[
                    "sections",
                    "section",
                    "systems",
                    "manpath",
                    "locale",
                    "config-file",
                ],
            ),
            path_options: &["M", "manpath", "C", "config-file"],
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["whereis"],
        Rule::Table(&Table {
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["B", "M", "S"],
                effect: Effect::Unsafe,
                what: "searches directories the line names, beyond the standard ones",
            }],
            ..TABLE
        }),
    ),
    // Demanglers: symbol names from the operands or standard input, to standard output.
    Program::new(
        &["c++filt", "llvm-cxxfilt"],
        Rule::Table(&Table {
            spec: Spec::values("s", &["format"]),
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .reading_argument_files(),
    // The first member of a zip archive (a file in the workspace, or standard input), to
    // standard output.
    Program::new(&["funzip"], Rule::Table(&TABLE)),
    Program::new(
        &["fc-list", "fc-match"],
        Rule::Table(&Table {
            spec: Spec::values("f", &["format"]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        &["pkg-config", "pkgconf"],
        Rule::Table(&Table {
            spec: Spec::values(
                "",
                &[
                    "variable",
                    "define-variable",
                    "atleast-version",
                    "exact-version",
                    "max-version",
                    "atleast-pkgconfig-version",
                    "with-path",
                    "env",
                ],
            ),
            path_options: &["with-path"],
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(
        // The distribution's name and release, from `/etc/os-release` and `/etc/lsb-release`.
        &["lsb_release"],
        Rule::Judge(|_, call| {
            const SHOWS: &[&str] = &[
                "-a",
                "-i",
                "-d",
                "-r",
                "-c",
                "-s",
                "-v",
                "-h",
                "--all",
                "--id",
                "--description",
                "--release",
                "--codename",
                "--short",
                "--version",
                "--help",
            ];
            let bundle = |w: &str| {
                w.len() > 1
                    && w.starts_with('-')
                    && !w.starts_with("--")
                    && w[1..].chars().all(|c| "aidrcsvh".contains(c))
            };
            match shown_words(call.args) {
                Some(words) if words.iter().all(|w| SHOWS.contains(w) || bundle(w)) => {
                    Judgement::whitelisted()
                }
                _ => Judgement::other("`lsb_release` is given a word it does not only print with"),
            }
        }),
    ),
    Program::new(
        // moreutils' readers: `ts` stamps each input line with the time, `errno` explains
        // error numbers, `isutf8` checks that files are UTF-8.
        &["ts", "errno"],
        Rule::Table(&Table {
            spec: Spec::values("", &[]),
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(&["isutf8"], Rule::Table(&TABLE)),
    // `combine FILE OP FILE`: the lines of two files, by set operation.
    Program::new(&["combine"], Rule::Judge(combine)),
    Program::new(
        // Copies its files to its output, with progress on the error stream. `-d` watches
        // another process's files and `-R` reconfigures another `pv`; `-P` writes a pid file.
        &["pv"],
        Rule::Table(&Table {
            spec: Spec::values(
                "LsiNFDBAwHxoR",
                &[
                    "rate-limit",
                    "size",
                    "interval",
                    "name",
                    "format",
                    "delay-start",
                    "buffer-size",
                    "last-written",
                    "width",
                    "height",
                    "extra-display",
                    "output",
                    "remote",
                    "pidfile",
                    "watchfd",
                ],
            ),
            refused: &[
                Refusal {
                    options: &["d", "watchfd", "R", "remote"],
                    effect: Effect::Unsafe,
                    what: "acts on another running process",
                },
                Refusal {
                    options: &["P", "pidfile", "o", "output"],
                    effect: Effect::Writes,
                    what: "writes a file",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        // The time in a zone, from the zone files under `/usr/share/zoneinfo`.
        &["zdump"],
        Rule::Table(&Table {
            spec: Spec::values("ct", &[]),
            ..TABLE
        }),
    ),
    Program::new(
        // What a kernel module is, from `/lib/modules`: a module name, or a file.
        &["modinfo"],
        Rule::Table(&Table {
            spec: Spec::values("Fkb", &["field", "set-version", "basedir"]),
            path_options: &["b", "basedir"],
            ..TABLE
        }),
    ),
    Program::new(
        &["lscpu"],
        Rule::Table(&Table {
            spec: Spec::values("s", &["sysroot", "output", "hierarchic"]),
            path_options: &["s", "sysroot"],
            operands: Operands::Text,
            ..TABLE
        }),
    ),
];

/// Options with which a compressor writes only to standard output, or only lists or tests.
const COMPRESSOR_READS: &[&str] = &[
    "c",
    "stdout",
    "to-stdout",
    "l",
    "list",
    "t",
    "test",
    "h",
    "help",
    "V",
    "version",
    "L",
    "license",
];

/// Options whose value the compressors take (`-S .gz`, `-T 4`, `-o out`).
const COMPRESSOR: Spec = Spec::values(
    "SCTMFDob",
    &[
        "suffix",
        "format",
        "check",
        "threads",
        "memlimit",
        "memory",
        "dict",
        "output",
        "files",
        "files0",
        "block-size",
        "level",
        "patch-from",
        "output-dir-flat",
        "output-dir-mirror",
    ],
);

/// `gzip -c f`, `xz -l f.xz`, `zstd -t f.zst` and `cat f | gzip` read; `gzip f` replaces
/// `f` with `f.gz`, `unxz f.xz` replaces it with `f`, and `zstd f -o g` writes `g`.
fn compressor(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let items = options::parse(invocation.args, &COMPRESSOR);
    if let Some(word) = opaque(&items) {
        return Judgement::destroys(format!(
            "`{program}` is given `{}`, only known when the line runs, and may then write or replace files",
            word.raw
        ));
    }
    if let Some(output) = items.iter().find(|i| {
        i.named(
            &["o", "output", "output-dir-flat", "output-dir-mirror"],
            true,
        )
    }) {
        return Judgement::destroys(format!(
            "`{program} {}` writes a file, replacing any of that name",
            output.shown()
        ));
    }
    if let Some(list) = items.iter().find(|i| i.named(&["files", "files0"], true)) {
        return Judgement::destroys(format!(
            "`{program} {}` compresses or expands the files a list names, replacing them",
            list.shown()
        ));
    }
    let operands = options::operands(&items);
    // lz4's `-l` picks its legacy format, and compresses like any other form.
    let legacy = program.contains("lz4");
    let reads = items.iter().any(|item| match item {
        Item::Short { flag: 'l', .. } if legacy => false,
        Item::Short { .. } | Item::Long { .. } => item.named(COMPRESSOR_READS, false),
        _ => false,
    });
    let only_input = operands.iter().all(|word| word.text() == Some("-"));
    if !reads && !only_input {
        return Judgement::destroys(format!(
            "`{program}` writes the compressed or expanded file beside each file it is given and, unless kept, deletes the original"
        ));
    }
    let mut judgement = Judgement::whitelisted();
    check_paths(walker, &mut judgement, program, &operands);
    judgement
}

/// `unzip -l`, `-v`, `-t`, `-p`, `-c`, `-z`, `-Z` only list, test or print; any other form
/// extracts, and with `-o` overwrites without asking.
/// The databases `getent` may read without a click: accounts without their passwords,
/// groups, host and network names, services, protocols. Not `shadow` or `gshadow` (password
/// hashes), and no option (`-s` picks the service that answers, an LDAP server say).
const GETENT_DATABASES: &[&str] = &[
    "passwd",
    "group",
    "hosts",
    "ahosts",
    "ahostsv4",
    "ahostsv6",
    "networks",
    "services",
    "protocols",
    "rpc",
    "ethers",
    "aliases",
];

fn getent(_walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut words = invocation.args.iter();
    let database = words.next().and_then(|w| w.text());
    let plain = |w: &crate::tools::command::words::Arg| {
        w.text().is_some_and(|t| !t.starts_with('-')) && w.pattern.is_none() && !w.tilde
    };
    match database {
        Some(name) if GETENT_DATABASES.contains(&name) && words.all(plain) => {
            Judgement::whitelisted()
        }
        Some(name) if !name.starts_with('-') && !GETENT_DATABASES.contains(&name) => {
            Judgement::other(format!(
                "`getent {name}` is not a database that may be read without a click"
            ))
        }
        _ => Judgement::other("`getent` is given an option or a word the line does not show"),
    }
}

fn unzip(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const READS: &[char] = &['l', 'v', 't', 'p', 'c', 'z', 'Z'];
    let items = options::parse(invocation.args, &Spec::values("dxP", &[]));
    if let Some(word) = opaque(&items) {
        return Judgement::destroys(format!(
            "`unzip` is given `{}`, only known when the line runs, and may then extract over existing files",
            word.raw
        ));
    }
    let reads = items.iter().any(|item| match item {
        Item::Short { flag, .. } => READS.contains(flag),
        _ => false,
    });
    let extracts_to = items.iter().any(|i| i.named(&["d"], false));
    if !reads || extracts_to {
        return Judgement::destroys(
            "`unzip` extracts the archive's files, writing over files of the same names",
        );
    }
    let operands = options::operands(&items);
    let mut judgement = Judgement::whitelisted();
    // The archive is a file; the words after it name members inside it.
    check_paths(
        walker,
        &mut judgement,
        "unzip",
        operands.get(..1).unwrap_or_default(),
    );
    judgement
}

/// `combine FILE1 and|not|or|xor FILE2` prints the lines of a set operation on two files.
fn combine(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    match shown_words(invocation.args).as_deref() {
        Some([left, op, right]) if matches!(*op, "and" | "not" | "or" | "xor" | "_") => {
            let mut judgement = Judgement::whitelisted();
            for file in [left, right].into_iter().filter(|f| **f != "-") {
                walker.check_path(&mut judgement, "combine", file);
            }
            judgement
        }
        _ => Judgement::other("`combine` is given other words than FILE OP FILE"),
    }
}

/// `sd FIND REPLACE [FILES]`: given files, it rewrites them in place unless `-p`
/// (`--preview`) only prints the result; on its input it is a filter.
fn sd(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const SPEC: Spec = Spec::values("nf", &["max-replacements", "flags"]);
    let items = options::parse(invocation.args, &SPEC);
    let mut judgement = Judgement::whitelisted();
    if let Some(word) = opaque(&items) {
        judgement.destructive(format!(
            "`sd` is given `{}`, which may become a file it rewrites when the line runs",
            word.raw
        ));
    }
    let operands = options::operands(&items);
    let files = operands.get(2..).unwrap_or_default();
    let preview = items
        .iter()
        .any(|item| item.named(&["p", "preview"], false));
    if !files.is_empty() && !preview {
        judgement.destructive("`sd` rewrites the files it is given in place (`sd -p` only prints)");
    }
    check_paths(walker, &mut judgement, "sd", files);
    judgement
}

/// `fzf --filter QUERY` (and skim's `sk --filter`) prints the lines of its input that match,
/// without starting the finder. Without `--filter` it needs a terminal; a preview, a
/// history file or a listening server (`--preview`, `--history`, `--listen`) run or write
/// something, so only options that shape the matching are read here.
fn fuzzy_filter(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const FLAGS: &[&str] = &[
        "-e",
        "--exact",
        "-i",
        "+i",
        "--ignore-case",
        "--no-ignore-case",
        "--smart-case",
        "--no-sort",
        "+s",
        "--tac",
        "--literal",
        "--ansi",
        "--read0",
        "--print0",
        "-1",
        "--select-1",
        "-0",
        "--exit-0",
        "--sync",
        "-x",
        "--extended",
        "+x",
        "--no-extended",
    ];
    const VALUED: &[&str] = &[
        "-d",
        "--delimiter",
        "-n",
        "--nth",
        "--with-nth",
        "--tiebreak",
        "--algo",
        "--scheme",
    ];
    let Some(words) = shown_words(call.args) else {
        return Judgement::other(format!(
            "`{}` is given words only known when the line runs",
            call.program
        ));
    };
    let mut filter = false;
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word, None),
        };
        if matches!(name, "-f" | "--filter") {
            filter = true;
            if inline.is_none() && words.next().is_none() {
                return Judgement::other(format!("`{} {name}` is given no query", call.program));
            }
        } else if VALUED.contains(&name) {
            if inline.is_none() {
                words.next();
            }
        } else if !FLAGS.contains(&name) || inline.is_some() {
            return Judgement::other(format!(
                "`{} {word}` is not an option known to only shape the matching of `--filter`",
                call.program
            ));
        }
    }
    if filter {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` without `--filter` opens its finder, which needs a terminal",
            call.program
        ))
    }
}

/// `dc -e EXPR`: the desk calculator on expressions the line shows. `!` runs a shell
/// command, `?` runs a line of the input as dc code, and `a` turns a number into a character
/// (from which a command could be made), so an expression with any of them waits; so does a
/// program read from files or the input, which the line does not show.
fn dc(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = shown_words(call.args) else {
        return Judgement::other("`dc` is given words only known when the line runs");
    };
    let mut expressions = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        match word {
            "-e" | "--expression" => match words.next() {
                Some(expression) => expressions.push(expression),
                None => return Judgement::other("`dc -e` is given no expression"),
            },
            w if w.starts_with("--expression=") => {
                expressions.push(&w["--expression=".len()..]);
            }
            w if w.starts_with("-e") && w.len() > 2 => expressions.push(&w[2..]),
            _ => {
                return Judgement::other(
                    "`dc` runs a program from a file or its input, which the line does not show",
                );
            }
        }
    }
    match expressions.iter().find(|e| e.contains(['!', '?', 'a'])) {
        _ if expressions.is_empty() => {
            Judgement::other("`dc` runs the program on its input, which the line does not show")
        }
        Some(expression) => Judgement::other(format!(
            "`dc -e {expression}` may run a shell command (`!`), or code from its input (`?`)"
        )),
        None => Judgement::whitelisted(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reader_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("iostat -x 1 3", Safe),
            ("envsubst < notes.txt", Safe),
            ("envsubst '$HOME' < notes.txt", Safe),
            ("envsubst < notes.txt > out.txt", Destructive),
            ("mdcat notes.txt", Safe),
            ("chafa -s 40x20 notes.txt", Safe),
            ("chafa /etc/shadow", Unknown),
            ("sd -p foo bar notes.txt", Safe),
            ("cat notes.txt | sd foo bar", Safe),
            ("sd foo bar notes.txt", Destructive),
            ("sd -F -n 1 foo bar notes.txt", Destructive),
            ("ls | xargs sd foo bar", Destructive),
            ("sd -p foo bar /etc/shadow", Unknown),
            ("zipnote notes.txt", Safe),
            ("zipnote -w notes.txt < notes.txt", Destructive),
            ("zipgrep -i foo notes.txt '*.md'", Safe),
            ("zipgrep -f /etc/shadow notes.txt", Unknown),
            ("zipgrep foo /etc/shadow", Unknown),
            ("uuencode notes.txt notes.txt", Safe),
            ("uuencode -m notes.txt name", Safe),
            ("uuencode -o out.uu notes.txt name", Destructive),
            ("uuencode --output-file=out.uu notes.txt name", Destructive),
            ("uuencode /etc/shadow name", Unknown),
            ("ipcalc 192.168.0.1/24", Safe),
            ("pwgen -s 16 3", Safe),
            ("pwgen -H notes.txt 12", Safe),
            ("pwgen -H /etc/shadow 12", Unknown),
            ("infocmp xterm-256color", Safe),
            ("infocmp -A /etc/terminfo xterm", Unknown),
            // binutils read more words, options among them, from an `@FILE` argument.
            ("nm notes.txt", Safe),
            ("nm @notes.txt", Unknown),
            ("objdump -d @notes.txt", Unknown),
            ("readelf -a @notes.txt", Unknown),
            ("strings @notes.txt", Unknown),
            ("size @notes.txt", Unknown),
            ("c++filt @notes.txt", Unknown),
            ("lsattr -R src", Safe),
            ("getfacl notes.txt", Safe),
            ("getfattr -d notes.txt", Safe),
            ("getfattr -n user.origin -e hex notes.txt", Safe),
            ("getfattr -R -d /etc", Unknown),
            ("jot 5", Safe),
            ("jcal", Safe),
            ("uuid -n 3", Safe),
            ("uuid -o out.txt", Destructive),
            ("apg -n 5 -m 12", Safe),
            ("apg -r /etc/shadow", Unknown),
            ("zlib-flate -uncompress < notes.txt", Safe),
            ("hashid 'abc'", Safe),
            ("hashid -o out.txt abc", Destructive),
            ("cw notes.txt", Safe),
            ("dc -e '2 3 + p'", Safe),
            ("dc -e '!rm notes.txt'", NotSafe),
            ("dc -e '?'", NotSafe),
            ("dc -e '33 a x'", NotSafe),
            ("dc notes.txt", NotSafe),
            ("echo '1 p' | dc", NotSafe),
            ("b3sum --check notes.txt", Safe),
            ("sha3sum -a 256 notes.txt", Safe),
            ("xxh64sum notes.txt", Safe),
            ("b3sum /etc/shadow", Unknown),
            ("choose -f , -i notes.txt 0 2", Safe),
            ("choose -i /etc/shadow 0", Unknown),
            ("json_reformat < notes.txt", Safe),
            ("jp -f notes.txt 'a.b'", Safe),
            ("jp -f /etc/x.json a", Unknown),
            ("qrencode -t ANSI hello", Safe),
            ("qrencode -o qr.png hello", Destructive),
            ("qrencode -r /etc/shadow -t ANSI", Unknown),
            ("git diff | diff-so-fancy", Safe),
            ("diff-so-fancy --set-defaults", Destructive),
            ("dfc -e csv", Safe),
            ("dstat 1 5", Safe),
            ("dstat --output out.csv 1 5", Destructive),
            ("ls | fzf --filter main --exact", Safe),
            ("fzf -f x -d : --nth 2 < notes.txt", Safe),
            ("fzf", NotSafe),
            ("fzf --preview 'rm {}' -f x", NotSafe),
            ("fzf --listen -f x", NotSafe),
            ("fzf --history=h.txt -f x", NotSafe),
            ("jot -w 'line%d' -s , 5 1", Safe),
            ("getfacl -R /etc", Unknown),
            ("namei -l src/main.rs", Safe),
            ("namei -l /etc/shadow", Unknown),
            ("dircolors -p", Safe),
            ("clear", Safe),
            ("mpstat -P ALL", Safe),
            // Compressed files read to standard output.
            ("zcat notes.txt.gz | grep ERROR", Safe),
            ("zgrep -i error notes.txt.gz", Safe),
            ("xzgrep -c ERROR notes.txt.xz", Safe),
            ("bzcat notes.txt.bz2 | head", Safe),
            ("zdiff notes.txt.gz README.md.gz", Safe),
            ("zcat /etc/shadow.gz", Unknown),
            ("zgrep -f /etc/patterns notes.txt.gz", Unknown),
            // Compressors by form: standard output, listing and testing read...
            ("gzip -l notes.txt.gz", Safe),
            ("gzip -dc notes.txt.gz | wc -l", Safe),
            ("gunzip -c notes.txt.gz", Safe),
            ("xz -l notes.txt.xz", Safe),
            ("zstd -t notes.txt.zst", Safe),
            ("cat notes.txt | gzip | wc -c", Safe),
            ("gzip -c notes.txt | base64", Safe),
            ("unzip -l archive.zip", Safe),
            ("unzip -p archive.zip notes.txt", Safe),
            ("zipinfo archive.zip", Safe),
            // ... anything else writes beside the input or replaces it.
            ("gzip notes.txt", Destructive),
            ("gzip -k notes.txt", Destructive),
            ("gunzip notes.txt.gz", Destructive),
            ("gzip -d notes.txt.gz", Destructive),
            ("xz -T0 notes.txt", Destructive),
            ("unxz notes.txt.xz", Destructive),
            ("bzip2 -9 notes.txt", Destructive),
            ("zstd notes.txt -o out.zst", Destructive),
            ("zstd -c notes.txt -o out.zst", Destructive),
            ("lz4 -l notes.txt", Destructive),
            ("gzip -r src", Destructive),
            ("gzip $FLAGS notes.txt", Destructive),
            ("xz --files=list.txt", Destructive),
            ("ls | xargs gzip", Destructive),
            ("find . -name '*.log' -exec gzip {} +", Destructive),
            ("unzip archive.zip", Destructive),
            ("unzip -o archive.zip", Destructive),
            ("unzip -l archive.zip -d out", Destructive),
            // Text tools.
            ("join -t , a.csv b.csv", Safe),
            ("look foo words.txt", Safe),
            ("pr -2 -t notes.txt", Safe),
            ("fmt -w 60 notes.txt", Safe),
            ("shuf -n 3 notes.txt", Safe),
            ("shuf -o out.txt notes.txt", Destructive),
            ("iconv -f latin1 -t utf-8 notes.txt", Safe),
            ("iconv -f latin1 -t utf-8 -o out.txt notes.txt", Destructive),
            ("strings -n 8 a.out", Safe),
            ("readelf -h a.out", Safe),
            ("objdump -d -j .text a.out", Safe),
            ("nm -C a.out | grep main", Safe),
            ("ag -i todo src", Safe),
            ("ag -g rs$ src", Safe),
            ("ag --pager less todo", Unknown),
            ("ag todo /etc", Unknown),
            // Facts about the machine.
            ("free -h", Safe),
            ("nproc", Safe),
            ("lscpu", Safe),
            ("hostid", Safe),
            ("uuidgen -r", Safe),
            ("validlocale de_AU@euro", Safe),
            ("colrm 1 3 < notes.txt", Safe),
            ("systemd-detect-virt -c", Safe),
            ("lsb_release -a", Safe),
            ("modinfo ext4", Safe),
            ("cat notes.txt | ts '%H:%M:%S'", Safe),
            ("errno ENOENT", Safe),
            ("errno -l", Safe),
            ("isutf8 notes.txt", Safe),
            ("combine notes.txt and src/a.txt", Safe),
            ("combine notes.txt xor -", Safe),
            ("combine notes.txt and /etc/shadow", Unknown),
            ("combine notes.txt", Unknown),
            ("pv notes.txt | wc -l", Safe),
            ("pv -L 1m notes.txt", Safe),
            ("pv -d 1234", Unknown),
            ("pv -R 1234 -L 1k", Unknown),
            ("pv -P pid.txt notes.txt", Destructive),
            ("pv ../secret", Unknown),
            ("zdump Europe/Paris", Safe),
            ("zdump -v -c 2020,2021 UTC", Safe),
            ("zdump /etc/shadow", Unknown),
            ("modinfo -F version e1000e", Safe),
            ("modinfo -b /opt/mods ext4", Unknown),
            ("modinfo ../x.ko", Unknown),
            ("lsb_release -sc", Safe),
            ("lsb_release", Safe),
            ("lsb_release -a > out.txt", Destructive),
            ("lsb_release $OPT", Unknown),
            ("lsb_release -x", Unknown),
            ("readprofile", Safe),
            ("readprofile -av", Safe),
            ("readprofile -m System.map", Safe),
            ("readprofile -m /boot/System.map", Unknown),
            ("readprofile -r", Unknown),
            ("readprofile -M 20", Unknown),
            ("lnstat -d", Safe),
            ("lnstat -f rt_cache -c 2", Safe),
            ("lnstat -f /etc/shadow", Unknown),
            ("who", Safe),
            ("who -b", Safe),
            ("who am i", Safe),
            ("who /etc/shadow", Unknown),
            ("users", Safe),
            ("w", Safe),
            ("w -h root", Safe),
            ("uptime -p", Safe),
            ("cal 2026", Safe),
            ("getconf PAGE_SIZE", Safe),
            ("vmstat 1 3", Safe),
            ("lscpu -s /", Unknown),
            ("groups", Safe),
            ("groups alice", Safe),
            ("lsmod | grep ext4", Safe),
            ("getent passwd alice", Safe),
            ("getent group sudo", Safe),
            ("getent hosts localhost", Safe),
            ("getent shadow", Unknown),
            ("getent shadow root", Unknown),
            ("getent gshadow", Unknown),
            ("getent -s ldap passwd", Unknown),
            ("getent passwd -s", Unknown),
            ("getent passwd $USER", NotSafe),
            ("getent", Unknown),
            // Pagers copy their files to the (never a terminal) output.
            ("less notes.txt", Safe),
            ("ag error --color | less -R", Safe),
            ("ls -la | more", Safe),
            ("less -N +G notes.txt", Safe),
            ("zless notes.txt.gz", Safe),
            ("less -o log.txt notes.txt", Destructive),
            ("less --log-file=log.txt notes.txt", Destructive),
            ("ls | less -O log.txt", Destructive),
            ("less -k keys notes.txt", Unknown),
            ("less --lesskey-src=keys notes.txt", Unknown),
            ("less /etc/shadow", Unknown),
            ("more ../x", Unknown),
            ("more -n 5 /etc/shadow", Unknown),
            ("less -n /etc/shadow", Unknown),
            ("less -T /etc/tags -t main", Unknown),
            ("less $OPTS notes.txt", Destructive),
            ("LESSOPEN='|rm x %s' less notes.txt", Destructive),
            ("LESSOPEN='|cat %s' less notes.txt", NotSafe),
            ("ls | xargs less -o log.txt", Destructive),
            // bc computes.
            ("echo '2^10' | bc", Safe),
            ("seq -s+ 1 10 | bc -l", Safe),
            ("bc -l calc.bc", Safe),
            ("bc /etc/secret.bc", Unknown),
            ("bc -f /etc/secret.bc", Unknown),
            ("dc -e '!rm x'", Unknown),
            // Manuals and where programs live.
            ("info ls", Safe),
            ("info coreutils 'ls invocation'", Safe),
            ("info --apropos=sort", Safe),
            ("whatis ls", Safe),
            ("apropos -s 1 copy", Safe),
            ("whereis -b ls", Safe),
            ("info -o out.txt ls", Destructive),
            ("info --output=out.txt ls", Destructive),
            ("info --dribble=keys.txt ls", Destructive),
            ("info --init-file=keys ls", Unknown),
            ("info -f /etc/secret.info", Unknown),
            ("apropos -C /etc/other.conf copy", Unknown),
            ("whereis -B /opt/bin -f ls", Unknown),
            // Fonts and libraries installed.
            ("fc-list : family", Safe),
            ("fc-match -s monospace", Safe),
            ("pkg-config --cflags --libs openssl", Safe),
            ("pkg-config --variable=prefix zlib", Safe),
            ("pkg-config --with-path=/opt/pc --libs x", Unknown),
            ("fc-list > fonts.txt", Destructive),
            // Demanglers and funzip print what they read.
            ("c++filt _ZN3foo3barEv", Safe),
            ("nm prog | c++filt -s gnu-v3", Safe),
            ("llvm-cxxfilt -n _Z1fv", Safe),
            ("funzip notes.txt", Safe),
            ("funzip < notes.txt", Safe),
            ("funzip /etc/archive.zip", Unknown),
            ("c++filt _Z1fv > names.txt", Destructive),
        ]);
    }
}
