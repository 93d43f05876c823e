//! What the machine's storage is, as its reporting tools print it: LVM's reports (`lvs`,
//! `pvs`, `vgs` and the `*display` commands), `mdadm` asked about arrays, ZFS's listings
//! (`zfs list`/`get`, `zpool list`/`status`/`get`/`history`), `btrfs`'s showing commands,
//! `xfs_info`, `dumpe2fs`, `tune2fs -l`, `losetup` listing, `cryptsetup status`/`luksDump`/
//! `isLuks`, `dmsetup ls`/`info`/`status`/`deps`, `multipath -l`. Facts of the machine as
//! `lsblk` and `findmnt` are; a device or pool they are given is a name they query. They
//! need devices and privileges a line without a click does not have, so there they mostly
//! fail; what they could change, they are never asked to: every other subcommand and option
//! waits (`lvchange`, `mdadm --create`, `zfs destroy`, `btrfs device stats -z`, `tune2fs`
//! without `-l`, `losetup -d`, `cryptsetup open`, `dmsetup table`, whose crypt targets can
//! show keys, and `remove`).

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb};
use super::table::{Effect, Operands, Refusal, TABLE, Table, check_devices};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;
use crate::tools::command::words::Arg;

/// LVM options that change how the command works rather than what it shows: a
/// configuration or profile given on the command line, lock options.
const LVM_SETTINGS: Refusal = Refusal {
    options: &[
        "config",
        "commandprofile",
        "profile",
        "lockopt",
        "driverloaded",
    ],
    effect: Effect::Unsafe,
    what: "changes LVM's configuration for the call",
};

/// LVM's report and display commands.
const LVM_REPORT: Table = Table {
    spec: Spec::values(
        "oOS",
        &[
            "options",
            "sort",
            "select",
            "units",
            "separator",
            "reportformat",
            "configreport",
            "config",
            "commandprofile",
            "profile",
            "lockopt",
            "driverloaded",
        ],
    ),
    operands: Operands::Devices,
    refused: &[LVM_SETTINGS],
    ..TABLE
};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &["lvs", "pvs", "vgs", "lvdisplay", "pvdisplay", "vgdisplay"],
        Rule::Table(&LVM_REPORT),
    ),
    Program::new(
        &["lvremove", "vgremove", "pvremove"],
        Rule::Destroys("removes logical volumes, volume groups or physical volumes"),
    ),
    Program::new(&["mdadm"], Rule::Judge(mdadm)),
    Program::new(&["zfs"], Rule::Subcommands(&ZFS)),
    Program::new(&["zpool"], Rule::Subcommands(&ZPOOL)),
    Program::new(&["btrfs"], Rule::Judge(btrfs)),
    Program::new(
        &["xfs_info", "dumpe2fs"],
        Rule::Table(&Table {
            spec: Spec::values("o", &[]),
            operands: Operands::Devices,
            ..TABLE
        }),
    ),
    Program::new(&["tune2fs"], Rule::Judge(tune2fs)),
    Program::new(&["losetup"], Rule::Judge(losetup)),
    Program::new(&["cryptsetup"], Rule::Subcommands(&CRYPTSETUP)),
    Program::new(&["dmsetup"], Rule::Subcommands(&DMSETUP)),
    Program::new(&["multipath"], Rule::Judge(multipath)),
];

/// A listing whose words are names (pools, datasets, devices), with the options that take a
/// value named.
const fn names(short_values: &'static str) -> Table {
    Table {
        spec: Spec::values(short_values, &[]),
        operands: Operands::Text,
        ..TABLE
    }
}

/// What ZFS's, device-mapper's and LUKS's removing forms do.
const REMOVES_STORAGE: &str = "destroys pools, datasets, snapshots, mappings or keys";

const ZFS: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["destroy", "rollback"], REMOVES_STORAGE),
        Verb::reads(
            &[
                "list",
                "get",
                "holds",
                "userspace",
                "groupspace",
                "projectspace",
                "version",
            ],
            &names("dostST"),
        ),
    ],
    ..SUBCOMMANDS
};

const ZPOOL: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["destroy", "labelclear"], REMOVES_STORAGE),
        Verb::judged(&["list", "status", "iostat"], once),
        Verb::reads(&["get", "history", "version"], &names("o")),
    ],
    ..SUBCOMMANDS
};

/// `zpool list`, `status` and `iostat` once: a number among their words is an interval,
/// and they print again at it until stopped.
fn once(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut words = call.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            None => {
                return Judgement::other(format!(
                    "`{}` is given a word only known when the line runs",
                    call.program
                ));
            }
            Some("-o" | "-T" | "-c") => {
                words.next();
            }
            Some(text) if !text.starts_with('-') && text.parse::<f64>().is_ok() => {
                return Judgement::other(format!(
                    "`{} ... {text}` prints again every {text} seconds until it is stopped",
                    call.program
                ));
            }
            Some(_) => {}
        }
    }
    Judgement::whitelisted()
}

const CRYPTSETUP: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(
            &[
                "erase",
                "luksErase",
                "luksKillSlot",
                "luksRemoveKey",
                "luksFormat",
                "reencrypt",
            ],
            REMOVES_STORAGE,
        ),
        Verb::judged(&["status", "luksDump", "isLuks"], cryptsetup_shows),
    ],
    ..SUBCOMMANDS
};

/// `cryptsetup status NAME`, `luksDump DEVICE`, `isLuks DEVICE`: the mapping and the header
/// shown, never a key (`--dump-master-key`/`--dump-volume-key`, or a key file, wait).
fn cryptsetup_shows(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    for word in call.args {
        match word.text() {
            Some("-v" | "--verbose" | "--debug" | "--debug-json" | "--batch-mode" | "-q") => {}
            // A mapping's name, or a device (any other path is a file).
            Some(text) if !text.starts_with('-') => {
                if text.contains('/') {
                    check_devices(walker, &mut judgement, call.program, &[word]);
                }
            }
            _ => {
                return Judgement::other(format!(
                    "`{} {}` is not one of the options that only show a mapping or a header",
                    call.program, word.raw
                ));
            }
        }
    }
    judgement
}

const DMSETUP: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["remove", "remove_all", "wipe_table"], REMOVES_STORAGE),
        Verb::reads(
            &["ls", "info", "status", "deps", "version", "targets"],
            &names("cjmuo"),
        ),
    ],
    ..SUBCOMMANDS
};

/// `mdadm` asked about arrays and their members: `--detail`/`-D`, `--query`/`-Q`,
/// `--examine`/`-E`, `--examine-bitmap`/`-X`, `--detail-platform`, with `--scan`, `--brief`,
/// `--verbose`, `--export`; every other mode builds, changes or stops an array.
fn mdadm(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const MODES: &[&str] = &[
        "-D",
        "--detail",
        "-Q",
        "--query",
        "-E",
        "--examine",
        "-X",
        "--examine-bitmap",
        "--detail-platform",
    ];
    const FLAGS: &[&str] = &[
        "-s",
        "--scan",
        "-b",
        "--brief",
        "-v",
        "--verbose",
        "-Y",
        "--export",
        "-q",
        "--quiet",
        "--version",
        "-V",
        "--help",
        "-h",
    ];
    const DESTROYS: &[&str] = &[
        "-C",
        "--create",
        "--zero-superblock",
        "-r",
        "--remove",
        "-f",
        "--fail",
    ];
    if let Some(word) = call
        .args
        .iter()
        .find(|a| a.may_be(|t| DESTROYS.contains(&t)))
    {
        return Judgement::destroys(format!(
            "`mdadm {}` builds an array over its members or takes members out of it, erasing what they held",
            word.raw
        ));
    }
    let mut asks = false;
    for word in call.args {
        match word.text() {
            Some(mode) if MODES.contains(&mode) => asks = true,
            Some(flag) if FLAGS.contains(&flag) => {}
            Some(text) if !text.starts_with('-') => {}
            _ => {
                return Judgement::other(format!(
                    "`mdadm {}` is not one of the modes that only report on arrays",
                    word.raw
                ));
            }
        }
    }
    let only_version = call
        .args
        .iter()
        .all(|a| matches!(a.text(), Some("--version" | "-V" | "--help" | "-h")));
    if asks || (only_version && !call.args.is_empty()) {
        let devices: Vec<&Arg> = call
            .args
            .iter()
            .filter(|a| a.text().is_some_and(|t| !t.starts_with('-')))
            .collect();
        let mut judgement = Judgement::whitelisted();
        check_devices(walker, &mut judgement, "mdadm", &devices);
        judgement
    } else {
        Judgement::other(
            "`mdadm` without `--detail`, `--query` or `--examine` may build or change an array",
        )
    }
}

/// `btrfs GROUP COMMAND ...` where the command only shows. btrfs takes any unambiguous
/// prefix of a group's or a command's name (`btrfs fi sh`), so each is resolved against the
/// whole list of its level, and must then be one of the showing ones.
fn btrfs(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const GROUPS: &[(&str, &[&str], &[&str])] = &[
        (
            "filesystem",
            &[
                "df",
                "du",
                "show",
                "sync",
                "defragment",
                "resize",
                "label",
                "usage",
                "mkswapfile",
            ],
            &["df", "du", "show", "usage"],
        ),
        (
            "subvolume",
            &[
                "create",
                "delete",
                "list",
                "snapshot",
                "get-default",
                "set-default",
                "find-new",
                "show",
                "sync",
            ],
            &["list", "get-default", "show"],
        ),
        (
            "device",
            &["add", "delete", "remove", "scan", "ready", "stats", "usage"],
            &["stats", "usage"],
        ),
        (
            "qgroup",
            &[
                "assign",
                "remove",
                "create",
                "destroy",
                "show",
                "limit",
                "clear-stale",
            ],
            &["show"],
        ),
        ("property", &["get", "set", "list"], &["get", "list"]),
        (
            "scrub",
            &["start", "cancel", "resume", "status", "limit"],
            &["status"],
        ),
        (
            "balance",
            &["start", "pause", "cancel", "resume", "status"],
            &["status"],
        ),
        ("replace", &["start", "status", "cancel"], &["status"]),
        ("quota", &["enable", "disable", "rescan"], &[]),
        ("inspect-internal", &[], &[]),
        ("rescue", &[], &[]),
        ("restore", &[], &[]),
        ("check", &[], &[]),
        ("send", &[], &[]),
        ("receive", &[], &[]),
        ("select-super", &[], &[]),
        ("version", &[], &[]),
        ("help", &[], &[]),
    ];
    let words: Vec<Option<&str>> = call.args.iter().map(Arg::text).collect();
    let refuse = |what: String| Judgement::other(what);
    let resolve = super::subcommands::by_prefix;
    let (Some(Some(group)), Some(Some(command))) = (words.first(), words.get(1)) else {
        return match words.as_slice() {
            [Some("version" | "--version" | "help" | "--help")] => Judgement::whitelisted(),
            _ => refuse("`btrfs` is given no group and command it shows with".to_owned()),
        };
    };
    let group_names: Vec<&'static str> = GROUPS.iter().map(|(name, ..)| *name).collect();
    let Some(group) = resolve(group, &group_names) else {
        return refuse(format!(
            "`btrfs {group}` is not a group this check knows to only show"
        ));
    };
    let (_, commands, shows) = GROUPS
        .iter()
        .find(|(name, ..)| *name == group)
        .copied()
        .unwrap_or(("", &[], &[]));
    let resolved = resolve(command, commands);
    if matches!(
        (group, resolved),
        ("subvolume", Some("delete")) | ("device", Some("delete" | "remove"))
    ) {
        return Judgement::destroys(format!(
            "`btrfs {group} {command}` deletes a subvolume or takes a device out"
        ));
    }
    let Some(command) = resolved.filter(|c| shows.contains(c)) else {
        return refuse(format!(
            "`btrfs {group} {command}` is not one of the commands that only show"
        ));
    };
    for word in &words[2..] {
        match word {
            None => {
                return refuse(format!(
                    "`btrfs {group} {command}` is given a word only known when the line runs"
                ));
            }
            // `device stats -z` resets the counters it shows.
            Some(text)
                if command == "stats"
                    && (*text == "--reset"
                        || (text.starts_with('-')
                            && !text.starts_with("--")
                            && text.contains('z'))) =>
            {
                return Judgement::destroys(
                    "`btrfs device stats -z` resets the device's error counters",
                );
            }
            Some(_) => {}
        }
    }
    Judgement::whitelisted()
}

/// `tune2fs -l DEVICE`: the superblock listed. Every other option of `tune2fs` changes the
/// file system.
fn tune2fs(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match call
        .args
        .iter()
        .map(Arg::text)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [Some("-l"), Some(device)] if !device.starts_with('-') => {
            let mut judgement = Judgement::whitelisted();
            check_devices(walker, &mut judgement, "tune2fs", &[&call.args[1]]);
            judgement
        }
        _ => Judgement::other("`tune2fs` without only `-l` and a device changes the file system"),
    }
}

/// `losetup` listing loop devices (alone, `-a`, `-l`, `-j FILE`, one device, output
/// options); with a file it attaches one, `-d`/`-D` detach, `-c` resizes, `-f` finds a free
/// one to attach.
fn losetup(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const FLAGS: &[&str] = &[
        "-a",
        "--all",
        "-l",
        "--list",
        "-n",
        "--noheadings",
        "--raw",
        "-J",
        "--json",
        "-v",
        "--verbose",
        "--output-all",
        "-h",
        "--help",
        "-V",
        "--version",
    ];
    let mut devices = 0;
    let mut judgement = Judgement::whitelisted();
    let mut words = call.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            Some("-O" | "--output") => {
                words.next();
            }
            Some("-j" | "--associated") => match words.next() {
                Some(file) => {
                    super::table::check_paths(walker, &mut judgement, call.program, &[file])
                }
                None => return Judgement::other("`losetup -j` is given no file"),
            },
            Some(flag) if FLAGS.contains(&flag) => {}
            Some(text) if !text.starts_with('-') => {
                devices += 1;
                check_devices(walker, &mut judgement, call.program, &[word]);
            }
            _ => {
                return Judgement::other(format!(
                    "`losetup {}` attaches, detaches or changes a loop device",
                    word.raw
                ));
            }
        }
    }
    if devices > 1 {
        return Judgement::other("`losetup DEVICE FILE` attaches a file to a loop device");
    }
    judgement
}

/// `multipath -l`/`-ll` listing the multipath devices (with `-v N`); its other options
/// flush, reload or write its files.
fn multipath(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words: Vec<Option<&str>> = call.args.iter().map(Arg::text).collect();
    let mut listing = false;
    let mut at = 0;
    while at < words.len() {
        match words[at] {
            Some("-l" | "-ll") => listing = true,
            Some("-v") => at += 1,
            Some(text)
                if text.starts_with("-v") && text[2..].bytes().all(|b| b.is_ascii_digit()) => {}
            Some(text) if !text.starts_with('-') => {}
            _ => {
                return Judgement::other(
                    "`multipath` without only `-l`/`-ll` flushes, reloads or writes its files",
                );
            }
        }
        at += 1;
    }
    if listing {
        Judgement::whitelisted()
    } else {
        Judgement::other("`multipath` without `-l`/`-ll` creates or reloads multipath devices")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn storage_is_reported_and_its_changing_forms_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("lvs", Safe),
            ("lvs -o +devices --units g vg0", Safe),
            ("pvs --noheadings -o pv_name", Safe),
            ("vgdisplay -v vg0", Safe),
            ("lvs --config 'global {}'", Unknown),
            ("mdadm --detail /dev/md0", Safe),
            ("mdadm -D --scan", Safe),
            ("mdadm --query --examine /dev/sda1", Safe),
            (
                "mdadm --create /dev/md0 --level=1 /dev/sda1 /dev/sdb1",
                Destructive,
            ),
            ("mdadm --stop /dev/md0", Unknown),
            ("mdadm /dev/md0 --fail /dev/sda1", Destructive),
            ("mdadm --zero-superblock /dev/sda1", Destructive),
            ("mdadm -C /dev/md0 -l1 -n2 /dev/sda1 /dev/sdb1", Destructive),
            ("lvremove vg0/data", Destructive),
            ("zfs rollback -r tank@snap", Destructive),
            ("zpool labelclear /dev/sda", Destructive),
            ("btrfs sub del /snap", Destructive),
            ("btrfs device remove /dev/sdb /", Destructive),
            ("cryptsetup luksErase /dev/sda2", Destructive),
            ("dmsetup remove_all", Destructive),
            ("mdadm /dev/md0", Unknown),
            ("zfs list", Safe),
            ("zfs list -t snapshot -o name,used", Safe),
            ("zfs get all tank", Safe),
            ("zfs destroy tank/data", Destructive),
            ("zfs send tank@snap", Unknown),
            ("zfs set compression=on tank", Unknown),
            ("zpool status -v", Safe),
            ("zpool list", Safe),
            ("zpool iostat 5", Unknown),
            ("zpool history tank", Safe),
            ("zpool destroy tank", Destructive),
            ("btrfs filesystem show", Safe),
            ("btrfs fi sh", Safe),
            ("btrfs fi df /", Safe),
            ("btrfs subvolume list /", Safe),
            ("btrfs sub snap / /snap", Unknown),
            ("btrfs fi s /", Unknown),
            ("btrfs filesystem resize max /", Unknown),
            ("btrfs device stats /", Safe),
            ("btrfs device stats -z /", Destructive),
            ("btrfs dev stats --reset /", Destructive),
            ("btrfs balance start /", Unknown),
            ("btrfs property set / ro true", Unknown),
            ("xfs_info /dev/sda1", Safe),
            ("dumpe2fs -h /dev/sda1", Safe),
            ("tune2fs -l /dev/sda1", Safe),
            ("tune2fs -l /etc/shadow", Unknown),
            ("dumpe2fs /etc/shadow", Unknown),
            ("dumpe2fs fs.img", Safe),
            ("mdadm --examine /etc/shadow", Unknown),
            ("losetup /etc/shadow", Unknown),
            ("cryptsetup luksDump /etc/shadow", Unknown),
            ("lvs /dev/vg0/data", Safe),
            ("tune2fs -c 30 /dev/sda1", Unknown),
            ("tune2fs -l -c 30 /dev/sda1", Unknown),
            ("losetup", Safe),
            ("losetup -a", Safe),
            ("losetup -l -O NAME,BACK-FILE", Safe),
            ("losetup /dev/loop0", Safe),
            ("losetup /dev/loop0 disk.img", Unknown),
            ("losetup -f disk.img", Unknown),
            ("losetup -d /dev/loop0", Unknown),
            ("losetup -j /etc/shadow", Unknown),
            ("cryptsetup status root", Safe),
            ("cryptsetup luksDump /dev/sda2", Safe),
            ("cryptsetup luksDump --dump-master-key /dev/sda2", Unknown),
            ("cryptsetup open /dev/sda2 root", Unknown),
            ("dmsetup ls", Safe),
            ("dmsetup info -c", Safe),
            ("dmsetup table", Unknown),
            ("dmsetup remove root", Destructive),
            ("multipath -ll", Safe),
            ("multipath -v2 -l", Safe),
            ("multipath -F", Unknown),
            ("multipath", Unknown),
        ]);
    }
}
