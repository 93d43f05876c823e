//! `tar`: listing an archive (`-t`, `--list`) or extracting it to standard output (`-xO`)
//! only reads. Any other mode (create, extract to files, append, update, delete) writes,
//! and options that run programs (`-I`, `-F`, `--to-command`, `--checkpoint-action`,
//! `--rsh-command`, ...), write a snapshot (`-g`) or name a remote archive (`host:file`) are
//! not read-only. Options are read in all three of tar's styles: old (`tar tvf x.tar`, the
//! first word a cluster of letters whose values follow in order), short (`-tvf x.tar`) and
//! long (`--list --file=x.tar`). Whatever is not known to be harmless asks a person.
//!
//! `cpio` lists (`-t`) or extracts (`-i`, destructive like tar's extraction); `rpm2cpio`
//! prints a package's payload.

use super::table::{self, Effect, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};

/// `tar`, in all three option styles; `cpio` and `rpm2cpio`.
pub(super) const PROGRAMS: &[Program] = &[
    // libarchive's `bsdtar` reads the same modes and options; whatever of its own is not
    // known here asks a person.
    Program::new(&["tar", "bsdtar"], Rule::Judge(judge)),
    Program::new(&["cpio"], Rule::Judge(cpio)),
    // Writes the package's payload, a cpio archive, to its output.
    Program::new(&["rpm2cpio"], Rule::Table(&TABLE)),
];

/// `cpio -t` (`--list`) lists the archive on its input; `-i` extracts it and `-p` copies
/// files, both writing over files of the same names; `-o` archives the files whose names
/// come from its input, which the line does not show.
fn cpio(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const CPIO: Table = Table {
        spec: Spec::values(
            "FEHCIORMD",
            &[
                "file",
                "pattern-file",
                "format",
                "owner",
                "message",
                "directory",
            ],
        ),
        path_options: &["F", "E", "I", "D", "file", "pattern-file", "directory"],
        refused: &[
            Refusal {
                options: &["O"],
                effect: Effect::Writes,
                what: "writes the archive to a file",
            },
            Refusal {
                options: &["rsh-command"],
                effect: Effect::Unsafe,
                what: "runs a program to reach a remote archive",
            },
        ],
        ..TABLE
    };
    let items = options::parse(invocation.args, &CPIO.spec);
    let has = |short: char, long: &str| {
        items.iter().any(|item| match item {
            Item::Short { flag, .. } => *flag == short,
            Item::Long { .. } => item.named(&[long], true),
            _ => false,
        })
    };
    if has('t', "list") {
        return table::judge(walker, invocation, &CPIO);
    }
    if has('i', "extract") || has('p', "pass-through") {
        return Judgement::destroys(
            "`cpio` extracts or copies files, writing over files of the same names",
        );
    }
    Judgement::other("`cpio` archives the files named on its input, which the line does not show")
}

/// Letters that take a value, and what the value is.
const SHORT_VALUES: &[(char, Value)] = &[
    ('f', Value::Archive),
    ('C', Value::Path),
    ('T', Value::Path),
    ('X', Value::Path),
    ('b', Value::Text),
    ('H', Value::Text),
    ('K', Value::Text),
    ('N', Value::Text),
    ('V', Value::Text),
    ('L', Value::Text),
    ('I', Value::Program),
    ('F', Value::Program),
    ('g', Value::Writes),
];

/// Letters that only change how a listing is read or shown.
const SHORT_FLAGS: &str = "tvzjJZapkmoPhiBRsSUwO";

/// Long options that take a value, and what the value is.
const LONG_VALUES: &[(&str, Value)] = &[
    ("file", Value::Archive),
    ("directory", Value::Path),
    ("files-from", Value::Path),
    ("exclude-from", Value::Path),
    ("exclude", Value::Text),
    ("blocking-factor", Value::Text),
    ("record-size", Value::Text),
    ("format", Value::Text),
    ("starting-file", Value::Text),
    ("occurrence", Value::Text),
    ("quoting-style", Value::Text),
    ("strip-components", Value::Text),
    ("transform", Value::Text),
    ("xform", Value::Text),
    ("label", Value::Text),
    ("use-compress-program", Value::Program),
    ("to-command", Value::Program),
    ("info-script", Value::Program),
    ("new-volume-script", Value::Program),
    ("rsh-command", Value::Program),
    ("rmt-command", Value::Program),
    ("checkpoint-action", Value::Program),
    ("listed-incremental", Value::Writes),
    ("index-file", Value::Writes),
];

/// Long options without a value that only change how a listing is read or shown.
const LONG_FLAGS: &[&str] = &[
    "list",
    "extract",
    "get",
    "to-stdout",
    "verbose",
    "gzip",
    "gunzip",
    "ungzip",
    "bzip2",
    "xz",
    "lzma",
    "lzip",
    "lzop",
    "zstd",
    "compress",
    "uncompress",
    "auto-compress",
    "wildcards",
    "no-wildcards",
    "anchored",
    "no-anchored",
    "ignore-case",
    "exclude-vcs",
    "null",
    "numeric-owner",
    "utc",
    "full-time",
    "show-transformed-names",
    "force-local",
    "ignore-zeros",
    "totals",
    "block-number",
    "recursion",
    "no-recursion",
    "verbatim-files-from",
    "absolute-names",
    "checkpoint",
    "warning",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// The archive: a file in the workspace, `-`, never a remote `host:file`.
    Archive,
    /// A file or directory, which must be in the workspace.
    Path,
    Text,
    /// A program or script tar runs.
    Program,
    /// A file tar writes.
    Writes,
}

/// What the words of one `tar` command ask for.
#[derive(Default)]
struct Reading {
    list: bool,
    extract: bool,
    to_stdout: bool,
    force_local: bool,
    /// The first mode that writes (`c`, `--delete`, ...).
    writes: Option<String>,
}

/// An option's value: known, only known at run time (`None`), or missing.
type Pending = (String, Value, Option<Option<String>>);

/// The judgement for `tar`.
fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    let mut reading = Reading::default();
    let mut values: Vec<Pending> = Vec::new();
    let next = |index: &mut usize| {
        *index += 1;
        args.get(*index - 1).map(|a| a.text().map(str::to_owned))
    };
    let mut index = 0;
    let mut options_ended = false;
    while let Some(arg) = args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            judgement.unknown(format!(
                "`tar` is given `{}`, which may become any option when the line runs",
                arg.raw
            ));
            continue;
        };
        if options_ended || text == "-" || (!text.starts_with('-') && index > 1) {
            // A member of the archive: a name inside it, not a file here.
            continue;
        }
        if text == "--" {
            options_ended = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(Some(value.to_owned()))),
                None => (long, None),
            };
            if let Some(kind) = long_option(name, &mut reading, &mut judgement) {
                let value = attached.or_else(|| next(&mut index));
                values.push((format!("--{name}"), kind, value));
            }
        } else {
            // `-tvf` or, first, the old style `tvf`: a cluster of letters.
            let old_style = !text.starts_with('-');
            let letters = text.strip_prefix('-').unwrap_or(text);
            for (at, letter) in letters.char_indices() {
                let Some(&(_, kind)) = SHORT_VALUES.iter().find(|(c, _)| *c == letter) else {
                    short_flag(letter, &mut reading, &mut judgement);
                    continue;
                };
                let rest = &letters[at + letter.len_utf8()..];
                let value = if rest.is_empty() || old_style {
                    next(&mut index)
                } else {
                    Some(Some(rest.to_owned()))
                };
                values.push((format!("-{letter}"), kind, value));
                if !old_style {
                    break;
                }
            }
        }
    }
    for (shown, kind, value) in values {
        match value {
            Some(Some(value)) => {
                check_value(walker, &mut judgement, &reading, &shown, kind, &value);
            }
            Some(None) => judgement.unknown(format!(
                "`tar {shown}` is given a value only known when the line runs"
            )),
            None => {}
        }
    }
    if let Some(mode) = reading.writes {
        judgement.unknown(format!("`tar {mode}` writes files, so it is not read-only"));
    } else if !(reading.list || reading.extract && reading.to_stdout) {
        judgement.unknown(
            "`tar` is read-only only when it lists an archive (`-t`) or extracts to standard output (`-xO`)",
        );
    }
    judgement
}

fn short_flag(letter: char, reading: &mut Reading, judgement: &mut Judgement) {
    match letter {
        't' => reading.list = true,
        'x' => reading.extract = true,
        'O' => reading.to_stdout = true,
        'c' | 'r' | 'u' | 'A' | 'd' => {
            reading.writes.get_or_insert(format!("-{letter}"));
        }
        _ if SHORT_FLAGS.contains(letter) => {}
        _ => judgement.unknown(format!(
            "`tar -{letter}` is not an option known to be read-only"
        )),
    }
}

/// Reads one long option; returns what its value is when it takes one.
fn long_option(name: &str, reading: &mut Reading, judgement: &mut Judgement) -> Option<Value> {
    match name {
        "list" => reading.list = true,
        "extract" | "get" => reading.extract = true,
        "to-stdout" => reading.to_stdout = true,
        "force-local" => reading.force_local = true,
        "create" | "append" | "update" | "catenate" | "concatenate" | "delete" | "diff"
        | "compare" => {
            reading.writes.get_or_insert(format!("--{name}"));
        }
        _ if LONG_FLAGS.contains(&name) => {}
        _ => match LONG_VALUES.iter().find(|(long, _)| *long == name) {
            Some(&(_, kind)) => return Some(kind),
            None => judgement.unknown(format!(
                "`tar --{name}` is not an option known to be read-only"
            )),
        },
    }
    None
}

fn check_value(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    reading: &Reading,
    shown: &str,
    kind: Value,
    value: &str,
) {
    match kind {
        Value::Text => {}
        Value::Archive if value == "-" => {}
        Value::Archive => {
            let remote = value
                .split('/')
                .next()
                .is_some_and(|head| head.contains(':'));
            if remote && !reading.force_local {
                judgement.unknown(format!(
                    "`tar {shown} {value}` names an archive on another host"
                ));
            }
            walker.check_path(judgement, "tar", value);
        }
        Value::Path => walker.check_path(judgement, "tar", value),
        Value::Program => judgement.unknown(format!("`tar {shown}` runs a program")),
        Value::Writes => judgement.unknown(format!("`tar {shown}` writes the file {value}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tar_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("bsdtar -tf notes.txt", Safe),
            ("bsdtar -xf notes.txt", NotSafe),
            ("cpio -t < archive.cpio", Safe),
            ("cpio -itv < archive.cpio", Safe),
            ("rpm2cpio htop.rpm | cpio -vt", Safe),
            ("cpio -t -F /tmp/x.cpio", Unknown),
            ("cpio -t -F x.cpio -O out.cpio", Destructive),
            ("cpio -idv < archive.cpio", Destructive),
            ("find . | cpio -pdm /srv/copy", Destructive),
            ("find . | cpio -o > ../out.cpio", NotSafe),
            ("find . -name '*.c' | cpio -o", Unknown),
            ("rpm2cpio /tmp/x.rpm", Unknown),
            ("tar -tf x.tar", Safe),
            ("tar tvf x.tar", Safe),
            ("tar --list --file=x.tar", Safe),
            ("tar -xOf x.tar notes.txt", Safe),
            ("tar -xf x.tar", NotSafe),
            ("tar xf x.tar", NotSafe),
            ("tar -cf out.tar src", NotSafe),
            ("tar -tf x.tar --to-command=sh", NotSafe),
        ]);
    }
}
