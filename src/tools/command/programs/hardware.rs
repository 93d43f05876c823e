//! What the machine's hardware is, as its listing tools print it: `lspci`, `lsusb`,
//! `sensors`, `dmidecode`, `blkid`, `udevadm info`, `hwclock` showing the clock, `partx`
//! listing, `e2freefrag`. These are facts of the machine in the sense `lsblk` and `lscpu`
//! are (devices, temperatures, partition tables, free-space histograms), none of them a
//! secret; a device they are given (`/dev/sda`) is a name they query, not a file the line
//! reads (any other path is checked as a file: `blkid /etc/shadow` waits). A line without a click sees only the CPU facts of `/sys` and no device node, so
//! most of them find nothing there or fail; they wait for nobody because nothing they do
//! changes anything. Their acting forms are refused: `lspci -M` (bus mapping, which its
//! manual warns can hang a machine), `-H` (direct hardware access), `-O`/`-A` (access
//! settings), `-q` (asks the PCI ID database over DNS); `sensors -s` (writes the chips'
//! limits); `dmidecode --dump-bin` (writes a file); `blkid -c`/`-g`/`-w` (its cache
//! file); `udevadm info --cleanup-db` (empties the device database) and every other
//! `udevadm` subcommand; every `hwclock` option but the showing ones; every `partx` action
//! (`-a`, `-d`, `-u` tell the kernel of partitions).

use super::table::{Effect, Operands, Refusal, TABLE, Table, check_devices};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &["lspci"],
        Rule::Table(&Table {
            spec: Spec::values("sdipAOHF", &[]),
            operands: Operands::Text,
            path_options: &["i", "p", "F"],
            refused: &[
                Refusal {
                    options: &["M", "H", "O", "A", "x"],
                    effect: Effect::Unsafe,
                    what: "reaches the hardware itself rather than the kernel's list (bus mapping, direct access, access settings, configuration space)",
                },
                Refusal {
                    options: &["q", "Q"],
                    effect: Effect::Unsafe,
                    what: "asks the PCI ID database over the network",
                },
            ],
            ..TABLE
        }),
    ),
    Program::new(
        &["lsusb"],
        Rule::Table(&Table {
            spec: Spec::values("sdD", &[]),
            operands: Operands::Text,
            path_options: &["D"],
            ..TABLE
        }),
    ),
    Program::new(
        &["sensors"],
        Rule::Table(&Table {
            spec: Spec::values("c", &["config-file"]),
            operands: Operands::Text,
            path_options: &["c", "config-file"],
            refused: &[Refusal {
                options: &["s", "set"],
                effect: Effect::Writes,
                what: "writes the limits of the configuration file into the chips",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["dmidecode"],
        Rule::Table(&Table {
            spec: Spec::values(
                "dtsH",
                &[
                    "dev-mem",
                    "type",
                    "string",
                    "handle",
                    "from-dump",
                    "oem-string",
                    "dump-bin",
                ],
            ),
            operands: Operands::Text,
            path_options: &["from-dump"],
            refused: &[Refusal {
                options: &["dump-bin"],
                effect: Effect::Writes,
                what: "writes the firmware's tables to a file",
            }],
            ..TABLE
        }),
    ),
    Program::new(
        &["blkid"],
        Rule::Table(&Table {
            spec: Spec::values("cosStnuLUOw", &[]),
            operands: Operands::Devices,
            refused: &[Refusal {
                options: &["c", "g", "w"],
                effect: Effect::Writes,
                what: "writes or cleans its cache file",
            }],
            ..TABLE
        }),
    ),
    Program::new(&["udevadm"], Rule::Judge(udevadm)),
    Program::new(&["hwclock"], Rule::Judge(hwclock)),
    Program::new(&["partx"], Rule::Judge(partx)),
    Program::new(
        &["e2freefrag"],
        Rule::Table(&Table {
            spec: Spec::values("c", &[]),
            operands: Operands::Devices,
            ..TABLE
        }),
    ),
];

/// `udevadm info [options] [DEVICE...]` and `udevadm --version`: the device database
/// printed. `-c`/`--cleanup-db` empties it; the other subcommands trigger events, wait,
/// control the daemon, or run rules' programs (`test`).
fn udevadm(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let words: Vec<Option<&str>> = invocation.args.iter().map(Arg::text).collect();
    match words.as_slice() {
        [Some("--version" | "-V" | "--help" | "-h")] => Judgement::whitelisted(),
        [Some("info"), rest @ ..] => {
            for word in rest {
                match word {
                    None => {
                        return Judgement::other(
                            "`udevadm info` is given a word only known when the line runs",
                        );
                    }
                    Some("-c" | "--cleanup-db") => {
                        return Judgement::destroys(
                            "`udevadm info --cleanup-db` empties the device database",
                        );
                    }
                    Some(option)
                        if option.starts_with('-')
                            && !option.starts_with("--")
                            && option.len() > 2
                            && option.contains('c') =>
                    {
                        return Judgement::other(format!(
                            "`udevadm info {option}` may hold `-c`, which empties the device database"
                        ));
                    }
                    Some(_) => {}
                }
            }
            // Devices and the kernel's objects (`/sys/class/net/eth0`) are names it asks
            // about; any other path is a file.
            let mut judgement = Judgement::whitelisted();
            let paths: Vec<&Arg> = invocation.args[1..]
                .iter()
                .filter(|a| {
                    a.text().is_some_and(|t| {
                        t.starts_with('/') && !t.starts_with("/sys/") && !t.contains("/../")
                    })
                })
                .collect();
            check_devices(walker, &mut judgement, "udevadm info", &paths);
            judgement
        }
        _ => Judgement::other(
            "`udevadm` only shows with `info`; its other subcommands trigger events, control the daemon or run rules' programs",
        ),
    }
}

/// `hwclock` showing the hardware clock (`-r`/`--show`, `--get`, with `--utc`,
/// `--localtime`, `-v`); every other option sets a clock or its drift file.
fn hwclock(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    for word in invocation.args {
        match word.text() {
            Some(
                "-r" | "--show" | "--get" | "-u" | "--utc" | "-l" | "--localtime" | "-v"
                | "--verbose" | "--version" | "-V" | "-h" | "--help",
            ) => {}
            _ => {
                return Judgement::other(format!(
                    "`hwclock {}` is not one of the options that only show the clock; the others set it",
                    word.raw
                ));
            }
        }
    }
    Judgement::whitelisted()
}

/// `partx` listing a device's partitions: `--show` (`-s`, the default when no action is
/// given, and what `-P`/`-r` print in other shapes) or `--list`, with its output options;
/// `-a`, `-d` and `-u` tell the kernel of partitions, which changes what the machine sees.
fn partx(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const VALUES: &[&str] = &[
        "-o",
        "--output",
        "-n",
        "--nr",
        "-t",
        "--type",
        "-S",
        "--sector-size",
    ];
    const FLAGS: &[&str] = &[
        "-s",
        "--show",
        "-l",
        "--list",
        "-b",
        "--bytes",
        "-g",
        "--noheadings",
        "-r",
        "--raw",
        "-P",
        "--pairs",
        "-v",
        "--verbose",
        "--output-all",
        "-h",
        "--help",
        "-V",
        "--version",
    ];
    let mut devices = Vec::new();
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            Some(option) if VALUES.contains(&option) => {
                if words.next().and_then(Arg::text).is_none() {
                    return Judgement::other(format!("`partx {option}` is given no known value"));
                }
            }
            Some(option) if FLAGS.contains(&option) => {}
            Some(option) if option.starts_with('-') && option != "-" => {
                return Judgement::other(format!(
                    "`partx {option}` is not one of the options that only list; `-a`, `-d` and `-u` tell the kernel of partitions"
                ));
            }
            Some("-") => {}
            Some(_) => devices.push(word),
            None => {
                return Judgement::other("`partx` is given a word only known when the line runs");
            }
        }
    }
    let mut judgement = Judgement::whitelisted();
    check_devices(walker, &mut judgement, "partx", &devices);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn hardware_is_listed_and_its_acting_forms_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("lspci", Safe),
            ("lspci -nnk -s 00:02.0", Safe),
            ("lspci -vvv", Safe),
            ("lspci -t -v", Safe),
            ("lspci -M", Unknown),
            ("lspci -xxx", Unknown),
            ("lspci -H1", Unknown),
            ("lspci -q", Unknown),
            ("lspci -O dump.name=x", Unknown),
            ("lspci -i /etc/shadow", Unknown),
            ("lsusb", Safe),
            ("lsusb -tv", Safe),
            ("lsusb -d 1d6b:0002 -v", Safe),
            ("lsusb -D /dev/bus/usb/001/001", Unknown),
            ("sensors", Safe),
            ("sensors -u coretemp-isa-0000", Safe),
            ("sensors -s", Destructive),
            ("sensors -c /etc/shadow", Unknown),
            ("dmidecode -t memory", Safe),
            ("dmidecode -s system-product-name", Safe),
            ("dmidecode --dump-bin out.bin", Destructive),
            ("blkid", Safe),
            ("blkid -o list /dev/sda1", Safe),
            ("blkid -c /dev/null /dev/sda1", Destructive),
            ("blkid -g", Destructive),
            ("udevadm info /dev/sda", Safe),
            ("udevadm info -q property -n /dev/sda", Safe),
            ("udevadm info -a -p /sys/class/net/eth0", Safe),
            ("udevadm info --cleanup-db", Destructive),
            ("udevadm info -ec", Unknown),
            ("udevadm trigger", Unknown),
            ("udevadm control --reload", Unknown),
            ("udevadm test /sys/class/net/eth0", Unknown),
            ("hwclock", Safe),
            ("hwclock --show --utc", Safe),
            ("hwclock -w", Unknown),
            ("hwclock --systohc", Unknown),
            ("hwclock --set --date 2020-01-01", Unknown),
            ("partx --show /dev/sdb", Safe),
            ("partx -s -o START,SECTORS -g --nr 5 /dev/sdb", Safe),
            ("partx -o START -g --nr 5 /dev/sdb", Safe),
            ("partx --show - /dev/sdb3", Safe),
            ("partx -a /dev/sdb", Unknown),
            ("partx -sa /dev/sdb", Unknown),
            ("partx --add /dev/sdb", Unknown),
            ("partx -d --nr 1 /dev/sdb", Unknown),
            ("partx -u /dev/sdb", Unknown),
            ("e2freefrag /dev/sda1", Safe),
            ("e2freefrag -c 64 /dev/sda1", Safe),
            ("e2freefrag /etc/shadow", Unknown),
            ("blkid /dev/mapper/root", Safe),
            ("blkid /etc/shadow", Unknown),
            ("blkid /dev/shm/secret", Unknown),
            ("blkid /dev/../etc/shadow", Unknown),
            ("blkid notes.txt", Safe),
            ("partx --show /home/alice/disk.img", Unknown),
            ("udevadm info /etc/shadow", Unknown),
        ]);
    }
}
