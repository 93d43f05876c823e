//! Programs whose options are whole words after one dash or two (`xmllint -noout`,
//! `--xpath EXPR`, `identify -verbose`, `mediainfo --Output=JSON`), which a getopt table
//! would read as bundles of letters. Each is read against a closed list: the options that
//! only choose what is printed, those that take a value, those whose value names a file
//! (checked like an operand), and those that write. Any other option waits for a person,
//! so a new or rare option is never taken for harmless. Operands are files, checked like
//! any other, and `-` (the input).
//!
//! - `xmllint`: parses, validates and queries XML (`--xpath`, `--format`, `--noout`); `-o`/
//!   `--output` writes a file; `--shell` reads commands from its input, among them `save`
//!   and `write`, so it waits.
//! - `identify` (ImageMagick), also as `magick identify`: describes images. An operand with a coder prefix
//!   (`msl:x`, `ephemeral:x`, `text:@list`) or an `@` list waits: MSL scripts write files
//!   and `ephemeral:` deletes the image it reads.
//! - `cloc`: counts lines of code; `--out`, `--report-file`, `--sql`, `--strip-comments` and
//!   `--write-lang-def` write files, and `--vcs`, `--git` and `--config` (a file of more
//!   options) wait.
//! - Media tags and checks: `id3v2 -l`, `mp3info`, `vorbiscomment -l`, `metaflac --list`
//!   and `--show-*`, `pngcheck`, `jpeginfo`, `gifsicle --info`: each option that sets,
//!   removes, extracts or rewrites (`id3v2 -D`, `pngcheck -x`, `jpeginfo -d`, `gifsicle
//!   -b`) writes; any other option waits.
//! - `exiftool`: prints the tags of its files; its rule says what writes or waits.
//! - `actionlint`: checks GitHub Actions workflows; `-shellcheck`, `-pyflakes` (programs it
//!   runs) and `-init-config` wait.
//! - `fdupes`/`jdupes`: list duplicate files; `-d` deletes them, `-L`/`-l`/`-B` replace
//!   them with links, `--log` writes.
//! - `mediainfo`: describes media files; `--LogFile` writes, and an output template read
//!   from a file (`--Output=file://x`) is checked like a path.

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &["xmllint"],
        Rule::Judge(|w, call| judge(w, call, &XMLLINT)),
    ),
    Program::new(
        &["identify"],
        Rule::Judge(|w, call| judge(w, call, &IDENTIFY)),
    ),
    // ImageMagick 7's one program: `magick identify` is `identify`; its other tools
    // (`magick in.png out.jpg`, `mogrify`) write images and wait.
    Program::new(&["magick"], Rule::Subcommands(&MAGICK)),
    Program::new(&["exiftool"], Rule::Judge(exiftool)),
    Program::new(
        &["actionlint"],
        Rule::Judge(|w, call| judge(w, call, &ACTIONLINT)),
    ),
    Program::new(
        &["mediainfo"],
        Rule::Judge(|w, call| judge(w, call, &MEDIAINFO)),
    ),
    Program::new(&["cloc"], Rule::Judge(|w, call| judge(w, call, &CLOC))),
    Program::new(&["id3v2"], Rule::Judge(|w, call| judge(w, call, &ID3V2))),
    Program::new(
        &["mp3info"],
        Rule::Judge(|w, call| judge(w, call, &MP3INFO)),
    ),
    Program::new(
        &["vorbiscomment"],
        Rule::Judge(|w, call| judge(w, call, &VORBISCOMMENT)),
    ),
    Program::new(
        &["metaflac"],
        Rule::Judge(|w, call| judge(w, call, &METAFLAC)),
    ),
    Program::new(
        &["pngcheck"],
        Rule::Judge(|w, call| judge(w, call, &PNGCHECK)),
    ),
    Program::new(
        &["jpeginfo"],
        Rule::Judge(|w, call| judge(w, call, &JPEGINFO)),
    ),
    Program::new(
        &["gifsicle"],
        Rule::Judge(|w, call| judge(w, call, &GIFSICLE)),
    ),
    Program::new(
        &["fdupes", "jdupes"],
        Rule::Judge(|w, call| judge(w, call, &DUPES)),
    ),
];

/// What an exiftool option does, by its name in lower case (`-G1`, `-ee2` and `-w!` by
/// their stems).
#[derive(Debug, PartialEq, Eq)]
enum Exif {
    /// Chooses what is printed, or how.
    Prints,
    /// Chooses what is printed, with the next word as its value.
    PrintsWith,
    /// Writes files: output files, tags copied, originals deleted or restored.
    Writes,
    /// Runs Perl (`-if`, `-p` with `${...;expr}`, `-api Filter`, a config file), reads more
    /// arguments from a file, or keeps running for more commands.
    Runs,
}

/// ExifTool's options, every one of its documented ones, by the word after the dash: a
/// single letter in its case (`-x TAG` excludes a tag, `-X` prints XML; `-p` is a print
/// format, `-P` keeps dates), a longer name in any case, each by its stem (`-G1:2`, `-ee2`,
/// `-w!`, `-r.`). A word that is none of them is a tag name to print (`-Make`,
/// `-EXIF:all`, `-GPS*`).
fn exif_option(word: &str) -> Option<Exif> {
    let stem =
        word.trim_end_matches(|c: char| c.is_ascii_digit() || matches!(c, '!' | '+' | ':' | '.'));
    if stem.chars().count() == 1 {
        return match stem {
            "a" | "b" | "D" | "e" | "E" | "f" | "F" | "g" | "G" | "h" | "H" | "j" | "k" | "l"
            | "L" | "m" | "n" | "P" | "q" | "r" | "s" | "S" | "t" | "T" | "u" | "U" | "v" | "X"
            | "z" => Some(Exif::Prints),
            "c" | "d" | "i" | "x" => Some(Exif::PrintsWith),
            "o" | "w" | "W" => Some(Exif::Writes),
            "p" | "@" => Some(Exif::Runs),
            _ => None,
        };
    }
    let kind = match stem.to_ascii_lowercase().as_str() {
        "duplicates" | "args" | "argformat" | "binary" | "charset" | "decimal" | "composite"
        | "ee" | "extractembedded" | "ex" | "ec" | "escapehtml" | "escapexml" | "escapec"
        | "forceprint" | "fixbase" | "fast" | "groupheadings" | "groupnames" | "htmlformat"
        | "hex" | "htmldump" | "json" | "long" | "latin" | "lang" | "ignoreminorerrors"
        | "printconv" | "php" | "plot" | "short" | "veryshort" | "sort" | "struct" | "tab"
        | "table" | "unknown" | "unknown2" | "verbose" | "xmlformat" | "quiet" | "recurse"
        | "scanforxmp" | "list" | "listw" | "listf" | "listwf" | "listg" | "listd" | "listx"
        | "listgeo" | "ver" | "pause" | "zip" | "csv" | "preserve" | "progress" => Exif::Prints,
        "coordformat" | "csvdelim" | "dateformat" | "listitem" | "sep" | "separator" | "ext"
        | "extension" | "ignore" | "password" | "exclude" | "fileorder" => Exif::PrintsWith,
        "out"
        | "textout"
        | "tagout"
        | "wext"
        | "tagoutext"
        | "overwrite_original"
        | "overwrite_original_in_place"
        | "delete_original"
        | "restore_original"
        | "tagsfromfile"
        | "geotag"
        | "geosync"
        | "geotime"
        | "globaltimeshift"
        | "srcfile"
        | "wm"
        | "writemode"
        | "efile" => Exif::Writes,
        "if" | "printformat" | "config" | "api" | "userparam" | "execute" | "stay_open"
        | "common_args" | "use" | "echo" | "list_dir" | "diff" | "file" | "geolocate" => Exif::Runs,
        _ => return None,
    };
    Some(kind)
}

/// ExifTool prints the metadata of the files it is given. Its options are words after one
/// dash, in any case; a word that is no option is a tag to print. A tag with a value or a
/// source (`-Artist=x`, `-all=`, `-Date<CreateDate`) writes the files, as do `-o`, `-w`,
/// `-tagsFromFile`, `-overwrite_original`, ...; `-if`, `-p` (whose format may hold
/// `${tag;perl}`), `-config`, `-api`, `-@ FILE` and `-stay_open` may run Perl or take
/// more arguments than the line shows, and wait.
fn exiftool(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut words = invocation.args.iter();
    let mut options_ended = false;
    while let Some(arg) = words.next() {
        let Some(text) = arg.text() else {
            judgement.destructive(format!(
                "`exiftool` is given `{}`, which may become a tag to write when the line runs",
                arg.raw
            ));
            continue;
        };
        if options_ended || !text.starts_with('-') || text == "-" {
            if text != "-" {
                walker.check_path(&mut judgement, "exiftool", text);
            }
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        if text.contains(['=', '<', '>']) {
            judgement.destructive(format!("`exiftool {text}` writes a tag into the files"));
            continue;
        }
        if text.starts_with("-@") {
            judgement.unknown(format!(
                "`exiftool {text}` reads more arguments from a file the line does not show"
            ));
            continue;
        }
        // `--TAG` leaves a tag out; it is never an option.
        if text.starts_with("--") {
            continue;
        }
        let name = &text[1..];
        match exif_option(name) {
            Some(Exif::Prints) => {}
            Some(Exif::PrintsWith) => {
                words.next();
            }
            Some(Exif::Writes) => {
                judgement.destructive(format!("`exiftool {text}` writes files"));
            }
            Some(Exif::Runs) => judgement.unknown(format!(
                "`exiftool {text}` may run Perl or take arguments the line does not show"
            )),
            None if name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '*' | '?')) => {
            }
            None => judgement.unknown(format!(
                "`exiftool {text}` is neither an option known to only print nor a tag name"
            )),
        }
    }
    judgement
}

/// actionlint checks GitHub Actions workflows (its flags are Go's, one dash or two, a word
/// each). `-shellcheck` and `-pyflakes` name the programs it runs on the scripts it finds
/// and `-init-config` writes a configuration file: like any flag not listed, they wait. The
/// programs it finds on PATH by itself are the system's.
const ACTIONLINT: Named = Named {
    flags: &[
        "oneline", "color", "no-color", "verbose", "debug", "version", "h", "help",
    ],
    values: &["format", "ignore", "stdin-filename"],
    paths: &["config-file"],
    ..NAMED
};

const MAGICK: Subcommands = Subcommands {
    verbs: &[Verb::judged(&["identify"], |w, call| {
        judge(w, call, &IDENTIFY)
    })],
    ..SUBCOMMANDS
};

/// id3v2: lists an MP3's tags (`-l`) or the frames and genres it knows; every option that
/// sets, converts or deletes tags rewrites the file.
const ID3V2: Named = Named {
    flags: &[
        "l",
        "list",
        "R",
        "list-rfc822",
        "L",
        "list-genres",
        "f",
        "list-frames",
        "v",
        "version",
        "h",
        "help",
    ],
    writes: &[
        "a",
        "artist",
        "A",
        "album",
        "t",
        "song",
        "c",
        "comment",
        "g",
        "genre",
        "y",
        "year",
        "T",
        "track",
        "d",
        "delete-v2",
        "s",
        "delete-v1",
        "D",
        "delete-all",
        "C",
        "convert",
        "r",
        "remove-frame",
    ],
    ..NAMED
};

/// mp3info: prints an MP3's tag and, with `-x`, its technical details (`-p` a format of
/// them); the options that set a tag field or delete the tag rewrite the file.
const MP3INFO: Named = Named {
    flags: &["x", "F", "G", "h", "v"],
    values: &["p", "r"],
    writes: &["t", "a", "l", "y", "c", "g", "n", "d"],
    ..NAMED
};

/// vorbiscomment: lists an Ogg file's comments (the default, `-l`); `-w` and `-a` write
/// them, `-t`/`-d` add or remove one, and `-c` names a file they are written to.
const VORBISCOMMENT: Named = Named {
    flags: &[
        "l", "list", "R", "raw", "e", "escapes", "q", "quiet", "h", "help", "V", "version",
    ],
    writes: &[
        "w",
        "write",
        "a",
        "append",
        "c",
        "commentfile",
        "t",
        "tag",
        "d",
        "rm",
    ],
    ..NAMED
};

/// metaflac: the `--list` and `--show-*` forms print a FLAC file's metadata; every form
/// that sets, imports, exports or removes metadata writes a file.
const METAFLAC: Named = Named {
    flags: &[
        "list",
        "show-md5sum",
        "show-min-blocksize",
        "show-max-blocksize",
        "show-min-framesize",
        "show-max-framesize",
        "show-sample-rate",
        "show-channels",
        "show-bps",
        "show-total-samples",
        "show-vendor-tag",
        "show-all-tags",
        "no-utf8-convert",
        "with-filename",
        "no-filename",
        "version",
        "help",
    ],
    values: &[
        "show-tag",
        "block-number",
        "block-type",
        "except-block-type",
        "application-data-format",
        "data-format",
    ],
    writes: &[
        "set-tag",
        "set-tag-from-file",
        "remove-tag",
        "remove-first-tag",
        "remove-all-tags",
        "remove-all",
        "remove",
        "remove-replay-gain",
        "import-tags-from",
        "export-tags-to",
        "import-cuesheet-from",
        "export-cuesheet-to",
        "import-picture-from",
        "export-picture-to",
        "add-seekpoint",
        "add-replay-gain",
        "scan-replay-gain",
        "add-padding",
        "set-md5sum",
        "set-min-blocksize",
        "set-max-blocksize",
        "set-min-framesize",
        "set-max-framesize",
        "set-sample-rate",
        "set-channels",
        "set-bps",
        "set-total-samples",
        "sort-padding",
        "merge-padding",
        "dont-use-padding",
        "preserve-modtime",
    ],
    ..NAMED
};

/// pngcheck: checks PNG files and prints their chunks; `-x` extracts the images it finds
/// into new files.
const PNGCHECK: Named = Named {
    flags: &["7", "c", "f", "p", "q", "s", "t", "v", "vv", "w", "h"],
    writes: &["x"],
    ..NAMED
};

/// jpeginfo: checks JPEG files and prints what they are; `-d` deletes the broken ones.
const JPEGINFO: Named = Named {
    flags: &[
        "c", "check", "i", "info", "l", "lsstyle", "q", "quiet", "v", "verbose", "h", "help",
    ],
    writes: &["d", "delete"],
    ..NAMED
};

/// gifsicle: with `--info` (`-I`) it prints what a GIF holds instead of the GIF; `-b`
/// rewrites the files in place and `-o` writes one. Any other option transforms the image
/// and waits.
const GIFSICLE: Named = Named {
    flags: &[
        "I",
        "info",
        "sinfo",
        "size-info",
        "cinfo",
        "color-info",
        "xinfo",
        "extension-info",
        "h",
        "help",
        "version",
    ],
    writes: &["b", "batch", "o", "output"],
    ..NAMED
};

/// fdupes and jdupes: list duplicate files; `-d` deletes them, and jdupes' `-L`, `-l` and
/// `-B` replace them with links or shared extents. `--log` writes a file.
const DUPES: Named = Named {
    flags: &[
        "r",
        "recurse",
        "R",
        "recurse:",
        "s",
        "symlinks",
        "H",
        "hardlinks",
        "n",
        "noempty",
        "A",
        "nohidden",
        "S",
        "size",
        "m",
        "summarize",
        "q",
        "quiet",
        "1",
        "sameline",
        "f",
        "omitfirst",
        "t",
        "time",
        "i",
        "reverse",
        "p",
        "permissions",
        "0",
        "print-null",
        "j",
        "json",
        "Q",
        "quick",
        "z",
        "zero-match",
        "h",
        "help",
        "v",
        "version",
    ],
    values: &["o", "order"],
    writes: &[
        "d",
        "delete",
        "I",
        "immediate",
        "N",
        "noprompt",
        "L",
        "link-hard",
        "linkhard",
        "l",
        "link-soft",
        "linksoft",
        "B",
        "dedupe",
        "log",
    ],
    ..NAMED
};

/// How one program's word options read.
struct Named {
    /// Options that take no value.
    flags: &'static [&'static str],
    /// Options that take a value: the next word, or after `=`.
    values: &'static [&'static str],
    /// Options whose value names a file, checked like an operand.
    paths: &'static [&'static str],
    /// Options that write a file, whose value is where.
    writes: &'static [&'static str],
    /// Options written only as `--Name=value`, whose value is checked by `check_value`.
    attached: &'static [&'static str],
    /// Names compared without regard to case (MediaInfo's `--output` is `--Output`).
    any_case: bool,
    /// Refuses an operand the program reads as more than a file.
    operand: fn(&str) -> Option<&'static str>,
    /// Checks the value of an `attached` option: `Some(path)` to check as a path, or why
    /// it waits.
    check_value: fn(&str, &str) -> Result<Option<String>, String>,
}

const NAMED: Named = Named {
    flags: &[],
    values: &[],
    paths: &[],
    writes: &[],
    attached: &[],
    any_case: false,
    operand: |_| None,
    check_value: |_, _| Ok(None),
};

const XMLLINT: Named = Named {
    flags: &[
        "noout",
        "format",
        "html",
        "xmlout",
        "nonet",
        "noblanks",
        "valid",
        "postvalid",
        "dtdattr",
        "noent",
        "nocdata",
        "nsclean",
        "recover",
        "huge",
        "timing",
        "repeat",
        "insert",
        "c14n",
        "c14n11",
        "exc-c14n",
        "dropdtd",
        "loaddtd",
        "stream",
        "walker",
        "sax",
        "sax1",
        "memory",
        "quiet",
        "debug",
        "version",
        "noenc",
        "noxincludenode",
        "nofixup-base-uris",
        "xinclude",
        "load-trace",
        "oldxml10",
        "nodict",
        "nowarning",
        "nocatalogs",
        "auto",
        "push",
        "pedantic",
        "nocompact",
        "testIO",
        "htmlout",
        "debugent",
        "copy",
    ],
    values: &[
        "xpath",
        "encode",
        "dtdvalidfpi",
        "pattern",
        "maxmem",
        "pretty",
        "max-ampl",
    ],
    paths: &["dtdvalid", "relaxng", "schema", "schematron"],
    writes: &["output", "o"],
    ..NAMED
};

const IDENTIFY: Named = Named {
    flags: &[
        "verbose",
        "ping",
        "quiet",
        "regard-warnings",
        "features",
        "moments",
        "unique",
        "monitor",
        "version",
        "strip",
        "negate",
        "auto-orient",
    ],
    values: &[
        "format",
        "precision",
        "density",
        "units",
        "depth",
        "size",
        "colorspace",
        "channel",
        "interlace",
        "limit",
        "fuzz",
        "gamma",
        "sampling-factor",
        "endian",
        "interpolate",
        "virtual-pixel",
        "crop",
        "extract",
        "seed",
        "alpha",
        "grayscale",
        "list",
    ],
    operand: |word| {
        let prefix = word.split_once(':').map(|(p, _)| p);
        if word.starts_with('@') {
            Some("an `@` operand is a file listing more images, not an image")
        } else if prefix.is_some_and(|p| !p.is_empty() && !p.contains('/')) {
            Some("a `coder:` operand may run a script (msl:) or delete the image (ephemeral:)")
        } else {
            None
        }
    },
    ..NAMED
};

const CLOC: Named = Named {
    flags: &[
        "by-file",
        "by-file-by-lang",
        "quiet",
        "json",
        "yaml",
        "csv",
        "md",
        "xml",
        "hide-rate",
        "sum-files",
        "skip-uniqueness",
        "no-recurse",
        "follow-links",
        "show-lang",
        "show-ext",
        "show-os",
        "version",
        "help",
        "fullpath",
        "no-autogen",
        "ignore-whitespace",
        "ignore-case",
        "ignore-case-ext",
        "diff",
        "v",
        "verbose",
        "categorized",
        "counted",
        "found",
        "ignored",
        "unique",
    ],
    values: &[
        "exclude-dir",
        "include-lang",
        "exclude-lang",
        "include-ext",
        "exclude-ext",
        "match-f",
        "not-match-f",
        "match-d",
        "not-match-d",
        "timeout",
        "max-file-size",
        "csv-delimiter",
        "lang-no-ext",
        "force-lang",
        "script-lang",
        "processes",
        "diff-timeout",
        "skip-archive",
        "include-content",
        "exclude-content",
    ],
    paths: &[
        "read-lang-def",
        "force-lang-def",
        "list-file",
        "exclude-list-file",
    ],
    writes: &[
        "out",
        "report-file",
        "sql",
        "strip-comments",
        "write-lang-def",
        "write-lang-def-incl-dup",
    ],
    ..NAMED
};

const MEDIAINFO: Named = Named {
    flags: &[
        "full",
        "f",
        "version",
        "help",
        "language=raw",
        "bom",
        "info-parameters",
    ],
    values: &[],
    writes: &["logfile"],
    attached: &[
        "output",
        "inform",
        "language",
        "logfile",
        "details",
        "parseSpeed",
    ],
    any_case: true,
    check_value: |name, value| {
        if name.eq_ignore_ascii_case("output") || name.eq_ignore_ascii_case("inform") {
            match value.strip_prefix("file://") {
                Some(path) => Ok(Some(path.to_owned())),
                None if value.contains("://") => Err(format!(
                    "`--{name}={value}` names a place that is not a file"
                )),
                None => Ok(None),
            }
        } else {
            Ok(None)
        }
    },
    ..NAMED
};

impl Named {
    fn find<'a>(&self, list: &'a [&'static str], name: &str) -> Option<&'a str> {
        list.iter().copied().find(|known| {
            if self.any_case {
                known.eq_ignore_ascii_case(name)
            } else {
                *known == name
            }
        })
    }
}

/// Reads the words of a [`Named`] program.
fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>, named: &Named) -> Judgement {
    let program = invocation.program;
    let mut judgement = Judgement::whitelisted();
    let mut words = invocation.args.iter();
    let mut options_ended = false;
    while let Some(arg) = words.next() {
        let Some(text) = arg.text() else {
            judgement.unknown(format!(
                "`{program} {}` is given a word only known when the line runs",
                arg.raw
            ));
            continue;
        };
        let option = (!options_ended && text.len() > 1)
            .then(|| text.strip_prefix("--").or_else(|| text.strip_prefix('-')))
            .flatten();
        let Some(option) = option else {
            operand(walker, &mut judgement, program, named, arg, text);
            continue;
        };
        if option.is_empty() {
            options_ended = true;
            continue;
        }
        if named.find(named.flags, option).is_some() {
            continue;
        }
        let (name, attached) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        if named.find(named.writes, name).is_some() {
            judgement.destructive(format!("`{program} {text}` writes to a file"));
            if attached.is_none() {
                words.next();
            }
            continue;
        }
        if let Some(value) = attached
            && named.find(named.attached, name).is_some()
        {
            match (named.check_value)(name, value) {
                Ok(Some(path)) => walker.check_path(&mut judgement, program, &path),
                Ok(None) => {}
                Err(why) => judgement.unknown(why),
            }
            continue;
        }
        let path = named.find(named.paths, name).is_some();
        if path || named.find(named.values, name).is_some() {
            let value = match attached {
                Some(value) => Some(value.to_owned()),
                None => words
                    .next()
                    .map(|v| v.text().unwrap_or_default().to_owned()),
            };
            if path {
                match value {
                    Some(path) if !path.is_empty() => {
                        walker.check_path(&mut judgement, program, &path)
                    }
                    _ => judgement.unknown(format!(
                        "`{program} {text}` reads a file only known when the line runs"
                    )),
                }
            }
            continue;
        }
        judgement.unknown(format!(
            "`{program} {text}` is not an option known to only read"
        ));
    }
    judgement
}

fn operand(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    named: &Named,
    arg: &Arg,
    text: &str,
) {
    if text == "-" {
        return;
    }
    if let Some(why) = (named.operand)(text) {
        judgement.unknown(format!("`{program} {}`: {why}", arg.raw));
        return;
    }
    walker.check_path(judgement, program, text);
}

#[cfg(test)]
mod tests {
    #[test]
    fn word_options_are_read_against_a_closed_list() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("id3v2 -l notes.txt", Safe),
            ("id3v2 --list-genres", Safe),
            ("id3v2 --delete-v2 notes.txt", Destructive),
            ("id3v2 -a Someone notes.txt", Destructive),
            ("id3v2 --TIT2 x notes.txt", Unknown),
            ("mp3info -x -p '%a - %t' notes.txt", Safe),
            ("mp3info -d notes.txt", Destructive),
            ("mp3info -t Title notes.txt", Destructive),
            ("vorbiscomment -l notes.txt", Safe),
            ("vorbiscomment notes.txt", Safe),
            ("vorbiscomment -w -t ARTIST=x notes.txt", Destructive),
            ("vorbiscomment -l -c out.txt notes.txt", Destructive),
            ("metaflac --list notes.txt", Safe),
            (
                "metaflac --show-tag=ARTIST --show-sample-rate notes.txt",
                Safe,
            ),
            ("metaflac --remove-all-tags notes.txt", Destructive),
            ("metaflac --export-tags-to=out.txt notes.txt", Destructive),
            ("metaflac --list /etc/x.flac", Unknown),
            ("pngcheck -v notes.txt", Safe),
            ("pngcheck -x notes.txt", Destructive),
            ("jpeginfo -c notes.txt", Safe),
            ("jpeginfo -c -d notes.txt", Destructive),
            ("gifsicle --info notes.txt", Safe),
            ("gifsicle -b -O2 notes.txt", Destructive),
            ("gifsicle --resize 10x10 notes.txt", Unknown),
            ("fdupes -r .", Safe),
            ("jdupes -r -S src", Safe),
            ("fdupes -rdN .", Unknown),
            ("fdupes -r -d -N .", Destructive),
            ("jdupes -L -r .", Destructive),
            ("fdupes -r /etc", Unknown),
            ("xmllint --noout notes.txt", Safe),
            ("xmllint --format notes.txt", Safe),
            ("xmllint -noout -valid notes.txt", Safe),
            ("xmllint --xpath '//item/@id' notes.txt", Safe),
            ("xmllint --xpath=//a notes.txt", Safe),
            ("xmllint --schema notes.txt --noout notes.txt", Safe),
            ("cat notes.txt | xmllint --format -", Safe),
            ("xmllint --schema /etc/secret.xsd notes.txt", Unknown),
            ("xmllint ../outside.xml", Unknown),
            ("xmllint --format notes.txt -o out.xml", Destructive),
            ("xmllint --format notes.txt --output out.xml", Destructive),
            ("xmllint -output out.xml notes.txt", Destructive),
            ("xmllint --shell notes.txt", Unknown),
            ("xmllint --catalogs notes.txt", Unknown),
            ("identify notes.txt", Safe),
            ("exiftool notes.txt", Safe),
            ("exiftool -a -u -G1 -s notes.txt", Safe),
            ("exiftool -j -n -r -ext jpg .", Safe),
            (
                "exiftool -Make -Model -EXIF:DateTimeOriginal notes.txt",
                Safe,
            ),
            ("exiftool -GPS* --ThumbnailImage -X notes.txt", Safe),
            ("exiftool -d '%Y-%m-%d' -CreateDate notes.txt", Safe),
            ("exiftool -x Make -ee2 -csv notes.txt", Safe),
            ("exiftool -ver", Safe),
            ("exiftool -listw", Safe),
            ("exiftool -all= notes.txt", Destructive),
            ("exiftool -Artist=Someone notes.txt", Destructive),
            (
                "exiftool '-DateTimeOriginal<CreateDate' notes.txt",
                Destructive,
            ),
            ("exiftool -Comment+=x notes.txt", Destructive),
            ("exiftool -o out.jpg notes.txt", Destructive),
            ("exiftool -w txt notes.txt", Destructive),
            ("exiftool -W! %d%f.%t notes.txt", Destructive),
            ("exiftool -tagsFromFile notes.txt notes.txt", Destructive),
            (
                "exiftool -overwrite_original -Title=x notes.txt",
                Destructive,
            ),
            ("exiftool -OVERWRITE_ORIGINAL notes.txt", Destructive),
            ("exiftool -delete_original! notes.txt", Destructive),
            ("exiftool -csv=tags.csv notes.txt", Destructive),
            ("exiftool -if '$Make eq \"x\"' notes.txt", Unknown),
            ("exiftool -p '${Make;system(1)}' notes.txt", Unknown),
            ("exiftool -config x.pl notes.txt", Unknown),
            ("exiftool -api Filter=x notes.txt", Unknown),
            ("exiftool -@ args.txt", Unknown),
            ("exiftool -stay_open True -@ -", Unknown),
            ("exiftool -execute notes.txt", Unknown),
            ("exiftool /etc/shadow", Unknown),
            ("exiftool -- -notes.txt", Safe),
            ("exiftool -- /etc/shadow", Unknown),
            ("magick identify -verbose notes.txt", Safe),
            ("magick identify msl:notes.txt", Unknown),
            ("magick identify /etc/shadow", Unknown),
            ("magick notes.txt out.png", NotSafe),
            ("magick mogrify -resize 50% notes.txt", NotSafe),
            ("identify -verbose notes.txt", Safe),
            ("identify -format '%w x %h' notes.txt", Safe),
            ("identify -ping -quiet notes.txt src/a.png", Safe),
            ("identify msl:notes.txt", Unknown),
            ("identify ephemeral:notes.txt", Unknown),
            ("identify @notes.txt", Unknown),
            ("identify -write out.png notes.txt", Unknown),
            ("identify /etc/shadow", Unknown),
            ("cloc .", Safe),
            ("cloc --by-file --exclude-dir=node_modules,target src", Safe),
            ("cloc --json --quiet src", Safe),
            ("cloc --diff src other", Safe),
            ("cloc --read-lang-def=/etc/x src", Unknown),
            ("cloc --vcs=git", Unknown),
            ("cloc --config opts.txt src", Unknown),
            ("cloc --out=report.txt src", Destructive),
            ("cloc -report-file report.txt src", Destructive),
            ("cloc --strip-comments=nc src", Destructive),
            ("mediainfo notes.txt", Safe),
            ("mediainfo --Full notes.txt", Safe),
            ("mediainfo -f notes.txt", Safe),
            ("mediainfo --Output=JSON notes.txt", Safe),
            ("mediainfo --output=XML notes.txt", Safe),
            ("mediainfo --Inform=file://notes.txt notes.txt", Safe),
            ("mediainfo --Inform=file:///etc/shadow notes.txt", Unknown),
            ("mediainfo --Output=http://example.com/t notes.txt", Unknown),
            ("mediainfo --LogFile=log.txt notes.txt", Destructive),
            ("mediainfo --logfile=log.txt notes.txt", Destructive),
            ("mediainfo --Something notes.txt", Unknown),
        ]);
    }
}
