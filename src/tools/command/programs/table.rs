//! The one table shape for a program's flags and operands: the options that take a value
//! (a getopt [`Spec`]), the options whose value names a file (checked like operands), the
//! options that make it write or run something (refused), and what its operands are (files,
//! text, or a pattern followed by files). A program described by a [`Table`] row is on the
//! read-only whitelist; [`judge`] reads its words against the row.

use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// What a refused option does.
#[derive(Debug, Clone, Copy)]
pub(super) enum Effect {
    /// Not read-only, but not known to destroy anything (runs a program, follows forever).
    Unsafe,
    /// Writes or replaces a file.
    Writes,
}

/// An option refused because of what it does.
pub(super) struct Refusal {
    pub options: &'static [&'static str],
    pub effect: Effect,
    /// Completes "`program --option` ...".
    pub what: &'static str,
}

/// `-o FILE` / `--output FILE`: the refusal of the many programs whose output option
/// writes a file (`sort`, `base64`, `shuf`, `iconv`, `uconv`).
pub(super) const OUTPUT_FILE: Refusal = Refusal {
    options: &["o", "output"],
    effect: Effect::Writes,
    what: "writes its output to a file, replacing it",
};

#[derive(Debug, Clone, Copy)]
pub(super) enum Operands {
    /// Every operand names a file or directory.
    Paths,
    /// Operands are text (`echo`, `basename`, `which`).
    Text,
    /// The first operand is a pattern unless one of these options gives it; the rest are
    /// files (`grep`, `rg`).
    PatternThenPaths(&'static [&'static str]),
    /// Every operand names a device (`/dev/sda1`, which the program asks the kernel about)
    /// or is a file, checked as one (a file system image in the workspace): `blkid`,
    /// `dumpe2fs` ([`check_devices`]).
    Devices,
    /// Every operand names a device, a mount point (`/`, `/home`: the program asks the
    /// kernel about the file system there, which `mount` lists to every line anyway), or a
    /// file, checked as one: `df` ([`check_file_systems`]).
    FileSystems,
}

/// How a read-only program reads its words. Fields left out take [`TABLE`]'s values.
pub(super) struct Table {
    pub spec: Spec,
    pub operands: Operands,
    /// Options whose value names a file.
    pub path_options: &'static [&'static str],
    /// Options whose value is a file holding more file names (`--files0-from`): given `-`,
    /// the names come from the input and cannot be checked.
    pub names_from: &'static [&'static str],
    pub refused: &'static [Refusal],
}

/// No options with values, every operand a path, nothing refused.
pub(super) const TABLE: Table = Table {
    spec: Spec::NONE,
    operands: Operands::Paths,
    path_options: &[],
    names_from: &[],
    refused: &[],
};

/// Judges a program described by a table row.
pub(super) fn judge(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    tool: &Table,
) -> Judgement {
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
        Operands::Devices => check_devices(walker, &mut judgement, program, &operands),
        Operands::FileSystems => check_file_systems(walker, &mut judgement, program, &operands),
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

pub(super) fn check_value(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    item: &Item<'_>,
) {
    if let Some(text) = item.value().and_then(|v| v.text) {
        walker.check_path(judgement, program, text);
    }
}

pub(super) fn check_paths(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    words: &[&Arg],
) {
    for word in words {
        if let Some(text) = word.text() {
            walker.check_path(judgement, program, text);
        }
    }
}

/// Checks operands that name devices: a name under `/dev` is one the program asks the
/// kernel about, not a file of the team's (but for `/dev/shm` and `/dev/mqueue`, which hold
/// files, and a name with `..` or `.`); anything else is checked as a path.
pub(super) fn check_devices(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    words: &[&Arg],
) {
    for word in words {
        if let Some(text) = word.text()
            && !is_device_name(text)
        {
            walker.check_path(judgement, program, text);
        }
    }
}

/// Checks the operands of a program that reports on file systems: a device or a mount point
/// as written (absolute, no `.` or `..`, in the mount table) is not read, so it may lie
/// outside the workspace; any other path is checked as a file.
pub(super) fn check_file_systems(
    walker: &Walker<'_>,
    judgement: &mut Judgement,
    program: &str,
    words: &[&Arg],
) {
    let mut mounts: Option<Vec<String>> = None;
    for word in words {
        let Some(text) = word.text() else { continue };
        let plain = word.pattern.is_none() && !word.tilde;
        let mut mounted = || {
            let points = mounts.get_or_insert_with(mount_points);
            points.iter().any(|point| point == text)
        };
        let known = FILE_SYSTEM_DIRECTORIES.contains(&text);
        if !(plain && (is_device_name(text) || known || (is_plain_absolute(text) && mounted()))) {
            walker.check_path(judgement, program, text);
        }
    }
}

/// The directories every Linux system has at its top (the file system hierarchy's), often
/// file systems of their own: `df -h /home` tells nothing of their existence.
const FILE_SYSTEM_DIRECTORIES: &[&str] = &[
    "/", "/boot", "/home", "/mnt", "/media", "/opt", "/srv", "/tmp", "/var", "/usr", "/run",
];

/// An absolute path with no `.`, `..` or empty component but the root's (`/`, `/home`).
fn is_plain_absolute(text: &str) -> bool {
    text == "/"
        || text
            .strip_prefix('/')
            .is_some_and(|rest| !rest.split('/').any(|part| matches!(part, "" | "." | "..")))
}

/// The mount points of the machine's mount table as `mount` prints them (`/proc/self/mounts`,
/// its `\040`-style escapes decoded); none when it cannot be read.
fn mount_points() -> Vec<String> {
    let Ok(table) = std::fs::read_to_string("/proc/self/mounts") else {
        return Vec::new();
    };
    table
        .lines()
        .filter_map(|line| line.split(' ').nth(1))
        .map(crate::tools::command::cgroup::unescape)
        .collect()
}

/// Whether `text` names a device node under `/dev` (see [`check_devices`]).
pub(super) fn is_device_name(text: &str) -> bool {
    text.strip_prefix("/dev/").is_some_and(|rest| {
        let mut parts = rest.split('/');
        !rest.is_empty()
            && !matches!(parts.next(), Some("shm" | "mqueue" | ""))
            && !rest.split('/').any(|part| matches!(part, ".." | "." | ""))
    })
}

/// Checks the input files of a command whose operand after the first `inputs` is an output
/// file, and treats a possible output file as destructive.
pub(super) fn output_file_check(
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

/// A URL among `program`'s operands is fetched over the network: it waits.
pub(super) fn refuse_urls(judgement: &mut Judgement, invocation: &Invocation<'_>) {
    if let Some(url) = invocation
        .args
        .iter()
        .filter_map(|arg| arg.text())
        .find(|text| text.contains("://"))
    {
        judgement.unknown(format!(
            "`{}` is given the URL {url}, which it would fetch over the network",
            invocation.program
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_read_and_paths_judged_plain() {
        assert!(mount_points().iter().any(|point| point == "/"));
        assert!(is_plain_absolute("/") && is_plain_absolute("/mnt/usb"));
        assert!(
            !is_plain_absolute("/mnt/../etc")
                && !is_plain_absolute("/mnt/")
                && !is_plain_absolute("mnt")
        );
    }
}
