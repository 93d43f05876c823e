//! The machine itself: disks and file systems, power, processes, accounts, services and
//! scheduled jobs, the host name. Most are destructive whatever their arguments
//! ([`Rule::Destroys`]); `fuser -k`, `crontab -r`, `systemctl stop` (a subcommand row) and `service x stop`
//! only in those forms, and a word only known when the line runs may be that form, so it
//! counts as one. `hostname` prints the name unless it is given one to set; `kill -l` and
//! `kill -L` only list the signals' names and numbers; `sysctl`, `mount`, `swapon` and
//! `ldconfig` only show in their listing forms (`sysctl NAME`, `mount`, `swapon --show`,
//! `ldconfig -p`).

use super::subcommands::{Global, SUBCOMMANDS, SYSTEMD_ELSEWHERE, Subcommands, Verb};
use super::table::{self, Operands, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["modprobe"], Rule::Judge(modprobe)),
    Program::new(
        &[
            "mke2fs",
            "mkswap",
            "wipefs",
            "fdisk",
            "sfdisk",
            "cfdisk",
            "gdisk",
            "sgdisk",
            "parted",
            "blkdiscard",
        ],
        Rule::Destroys("rewrites disks or partitions"),
    ),
    Program::new(
        &["mkfs"],
        Rule::Destroys("creates a file system, erasing what the device held"),
    ),
    Program::new(
        &["shutdown", "reboot", "halt", "poweroff", "init", "telinit"],
        Rule::Destroys("stops or restarts the machine"),
    ),
    Program::new(
        &["pkill", "killall", "killall5", "skill", "xkill"],
        Rule::Destroys(KILLS),
    ),
    Program::new(&["kill"], Rule::Judge(|_, call| kill(call.args))),
    Program::new(
        &["srm", "wipe"],
        Rule::Destroys("overwrites and deletes files"),
    ),
    Program::new(
        &["userdel", "deluser", "groupdel", "delgroup"],
        Rule::Destroys("deletes accounts"),
    ),
    Program::new(&["fuser"], Rule::Judge(fuser)).listing_processes(),
    Program::new(&["crontab"], Rule::Judge(|_, call| crontab(call.args))),
    Program::new(&["systemctl"], Rule::Subcommands(&SYSTEMCTL)),
    Program::new(&["service"], Rule::Judge(|_, call| service(call.args))),
    Program::new(&["hostname"], Rule::Judge(|_, call| hostname_rule(call))),
    Program::new(&["sysctl"], Rule::Judge(|_, call| sysctl(call.args))),
    Program::new(
        &["mount"],
        Rule::Judge(|_, call| {
            lists_only(
                call,
                &["-l", "--show-labels"],
                &["-t", "--types"],
                "mounts or remounts a file system",
            )
        }),
    ),
    Program::new(
        &["swapon"],
        Rule::Judge(|_, call| {
            lists_only(
                call,
                &[
                    "--show",
                    "-s",
                    "--summary",
                    "--bytes",
                    "--noheadings",
                    "--raw",
                ],
                &[],
                "turns swap space on",
            )
        }),
    ),
    Program::new(
        &["ldconfig"],
        Rule::Judge(|_, call| {
            lists_only(
                call,
                &["-p", "--print-cache"],
                &[],
                "rebuilds the loader's cache",
            )
        }),
    ),
];

/// A program that only lists when it is given none but the options in `listing` (or, for
/// `mount`, none at all: it lists the mounted file systems) and those in `with_value`
/// followed by their value; in every other form it does `what`.
fn lists_only(
    call: &Invocation<'_>,
    listing: &[&str],
    with_value: &[&str],
    what: &str,
) -> Judgement {
    let mut words = call.args.iter();
    let mut listed = call.program == "mount";
    while let Some(word) = words.next() {
        match word.text() {
            Some(text) if with_value.contains(&text) => {
                words.next();
            }
            Some(text)
                if listing.contains(&text)
                    || text.starts_with("--show=") && listing.contains(&"--show") =>
            {
                listed = true;
            }
            _ => return Judgement::other(format!("`{}` {what}", call.program)),
        }
    }
    if listed {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!("`{}` {what}", call.program))
    }
}

/// `sysctl NAME...` shows the kernel parameters it names; `-w`, `-p`/`--load`, `--system`
/// and `name=value` set them, and so may a word only known when the line runs. Showing all
/// of them (`-a`, a pattern) waits, and so does a name with `key` in it: among the
/// parameters are keys (`net.ipv4.tcp_fastopen_key`) that root may read.
fn sysctl(args: &[Arg]) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut named = false;
    for arg in args {
        let sets = arg.may_be(|text| {
            text.contains('=') && !text.starts_with('-')
                || matches!(text, "-w" | "--write" | "-p" | "--load" | "--system")
                || text.starts_with("--load=")
                || text.starts_with('-') && !text.starts_with("--") && text.contains(['w', 'p'])
        });
        if sets {
            return Judgement::destroys(format!("`sysctl {}` changes kernel parameters", arg.raw));
        }
        match arg.text() {
            Some(text) if text.starts_with('-') => {
                let shows_many = matches!(text, "--all" | "--pattern" | "-r")
                    || !text.starts_with("--") && text.contains(['a', 'A', 'X', 'r']);
                if shows_many {
                    judgement.unknown(format!(
                        "`sysctl {text}` shows every kernel parameter, keys among them"
                    ));
                }
            }
            Some(text) if text.to_ascii_lowercase().contains("key") => {
                judgement.unknown(format!("`sysctl {text}` may show a key"));
            }
            _ => named = true,
        }
    }
    if !named {
        judgement.unknown("`sysctl` without a parameter's name is not read here");
    }
    judgement
}

const KILLS: &str = "terminates processes";

/// `kill -l [signal...]`, `kill -L` and `kill --list`/`--table` print signal names and
/// numbers, the same words the line shows; any other form sends a signal.
fn kill(args: &[Arg]) -> Judgement {
    let lists = matches!(
        args.first().and_then(Arg::text),
        Some("-l" | "-L" | "--list" | "--table")
    ) || args
        .first()
        .and_then(Arg::text)
        .is_some_and(|t| t.starts_with("--list="));
    let signals_only = args.iter().skip(1).all(|a| {
        a.text()
            .is_some_and(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric()))
    });
    if lists && signals_only {
        Judgement::whitelisted()
    } else {
        Judgement::destroys(KILLS)
    }
}

/// Whether a parsed option list holds the short flag or long option (abbreviations
/// accepted), or a word only known at run time (which may be it).
fn has_option(items: &[Item<'_>], short: Option<char>, long: Option<&str>) -> bool {
    items
        .iter()
        .any(|item| matches!(item, Item::Opaque(_)) || item.is(short, long, true))
}

/// `fuser` names the processes using files, mounts or ports (`fuser telnet/tcp`), as `lsof`
/// does; `-k` (`--kill`) kills them.
fn fuser(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let kills = invocation.args.iter().any(|a| {
        a.may_be(|t| {
            (t.starts_with('-') && !t.starts_with("--") && t.contains('k'))
                || t.strip_prefix("--")
                    .is_some_and(|long| options::long_matches(long, "kill"))
        })
    });
    if kills {
        return Judgement::destroys("`fuser -k` kills the processes using a file");
    }
    const FUSER: Table = Table {
        spec: Spec::values("n", &["namespace"]),
        ..TABLE
    };
    table::judge(walker, invocation, &FUSER)
}

fn crontab(args: &[Arg]) -> Judgement {
    let items = options::parse(args, &Spec::values("u", &[]));
    if has_option(&items, Some('r'), Some("remove")) {
        Judgement::destroys("`crontab -r` deletes the user's crontab")
    } else {
        Judgement::not_whitelisted("crontab")
    }
}

const SYSTEMCTL_OPTIONS: Spec = Spec::values(
    "tspPHMon",
    &[
        "type",
        "signal",
        "property",
        "host",
        "machine",
        "output",
        "lines",
        "state",
        "kill-whom",
        "kill-value",
        "job-mode",
        "root",
        "image",
        "what",
        "timestamp",
        "boot-loader-menu",
        "boot-loader-entry",
        "reboot-argument",
        "message",
        "drop-in",
        "when",
        "check-inhibitors",
        "preset-mode",
    ],
);

/// `systemctl`: the subcommands that stop, disable or power off; any other is not
/// read-only.
const SYSTEMCTL: Subcommands = Subcommands {
    global: Global::Options(SYSTEMCTL_OPTIONS),
    verbs: &[
        Verb::destroys(
            &[
                "stop",
                "kill",
                "disable",
                "mask",
                "poweroff",
                "reboot",
                "halt",
                "kexec",
                "suspend",
                "hibernate",
                "hybrid-sleep",
                "suspend-then-hibernate",
                "soft-reboot",
                "rescue",
                "emergency",
                "isolate",
                "default",
                "exit",
                "switch-root",
                "clean",
            ],
            "stops, disables or powers off services or the machine",
        ),
        Verb::reads(
            &[
                "status",
                "list-units",
                "list-unit-files",
                "list-timers",
                "list-sockets",
                "list-dependencies",
                "list-jobs",
                "is-active",
                "is-enabled",
                "is-failed",
                "is-system-running",
                "get-default",
            ],
            &Table {
                operands: Operands::Text,
                ..TABLE
            },
        ),
    ],
    implied: Some("list-units"),
    elsewhere: SYSTEMD_ELSEWHERE,
    ..SUBCOMMANDS
};

/// `service NAME status` and `service --status-all` ask the init system (or the service's
/// own init script, the machine's) how services are; stopping one is destructive.
fn service(args: &[Arg]) -> Judgement {
    let words: Vec<Option<&str>> = args.iter().map(Arg::text).collect();
    match (words.as_slice(), args.get(1)) {
        ([Some("--status-all")], _) => Judgement::whitelisted(),
        ([Some(name), Some("status")], _) if !name.starts_with('-') && !name.contains('/') => {
            Judgement::whitelisted()
        }
        (_, Some(action)) if action.may_be(|a| matches!(a, "stop" | "force-stop")) => {
            Judgement::destroys(format!(
                "`service {} {}` stops a service",
                args[0].raw, action.raw
            ))
        }
        _ => Judgement::not_whitelisted("service"),
    }
}

/// `hostname` with no operand prints the name; with one, or `-F`/`-b`, it sets it.
fn hostname_rule(invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &Spec::values("F", &["file"]));
    let mut judgement = Judgement::whitelisted();
    for item in &items {
        if item.named(&["F", "file", "b", "boot"], true) {
            judgement.unknown(format!("`hostname {}` sets the host name", item.shown()));
        }
        if let Item::Operand(word) = item {
            judgement.unknown(format!("`hostname {}` sets the host name", word.raw));
        }
    }
    judgement
}

/// `modprobe --show-depends MODULE` (`-D`), `--showconfig` (`-c`) and `--resolve-alias`
/// (`-R`) print what loading would do, and load nothing. `-r` unloads modules; any other
/// form loads one (which a line without a click cannot do anyway).
fn modprobe(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = crate::tools::command::words::shown_words(call.args) else {
        return Judgement::other("`modprobe` is given words only known when the line runs");
    };
    if words.iter().any(|w| {
        matches!(
            *w,
            "-r" | "--remove" | "--remove-dependencies" | "--remove-holders"
        )
    }) {
        return Judgement::destroys("`modprobe -r` unloads kernel modules".to_owned());
    }
    const SHOWS: &[&str] = &[
        "-D",
        "--show-depends",
        "-c",
        "--showconfig",
        "--show-config",
        "-R",
        "--resolve-alias",
    ];
    let shows = words.iter().any(|w| SHOWS.contains(w));
    let others = words.iter().any(|w| {
        w.starts_with('-')
            && !SHOWS.contains(w)
            && !matches!(*w, "-q" | "--quiet" | "-v" | "--verbose")
    });
    if shows && !others {
        Judgement::whitelisted()
    } else {
        Judgement::other("`modprobe` loads a kernel module unless it only shows (`-D`, `-c`, `-R`)")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn system_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("sysctl -a", Unknown),
            ("modprobe --show-depends ext4", Safe),
            ("modprobe -c", Safe),
            ("modprobe ext4", Unknown),
            ("modprobe -r ext4", Destructive),
            ("modprobe -D -r ext4", Destructive),
            ("sysctl -ar tcp", Unknown),
            ("sysctl net.ipv4.tcp_fastopen_key", Unknown),
            ("sysctl kernel.hostname net.ipv4.ip_forward", Safe),
            ("sysctl -n vm.swappiness", Safe),
            ("sysctl -w vm.swappiness=10", Destructive),
            ("sysctl vm.swappiness=10", Destructive),
            ("sysctl -p /etc/sysctl.conf", Destructive),
            ("sysctl --system", Destructive),
            ("sysctl $ARGS", Destructive),
            ("mount", Safe),
            ("mount -l -t ext4", Safe),
            ("mount /dev/sdb1 /mnt", Unknown),
            ("mount -o remount,rw /", Unknown),
            ("swapon --show", Safe),
            ("swapon -s", Safe),
            ("swapon /swapfile", Unknown),
            ("swapon", Unknown),
            ("ldconfig -p", Safe),
            ("ldconfig", Unknown),
            ("ldconfig -v", Unknown),
            ("systemctl", Safe),
            ("systemctl --failed", Safe),
            ("timedatectl", Safe),
            ("lsns", Safe),
            ("lslocks -o PID,PATH", Safe),
            ("ipcs -m", Safe),
            ("hostname evil", Unknown),
            ("crontab -l", Unknown),
            ("systemctl restart nginx", Unknown),
            ("mkfs -t ext4 /dev/sdb", Destructive),
            ("mke2fs /dev/sdb", Destructive),
            ("wipefs -a /dev/sda", Destructive),
            ("fdisk /dev/sda", Destructive),
            ("parted /dev/sda rm 1", Destructive),
            ("shutdown -h now", Destructive),
            ("reboot", Destructive),
            ("halt", Destructive),
            ("poweroff", Destructive),
            ("init 0", Destructive),
            ("telinit 6", Destructive),
            ("kill -9 1", Destructive),
            ("kill -l", Safe),
            ("kill -l 11", Safe),
            ("kill -L", Safe),
            ("kill --list=9", Safe),
            ("kill -l SEGV HUP", Safe),
            ("kill 1234", Destructive),
            ("kill -l 11 -9 1234", Destructive),
            ("kill -s l 1", Destructive),
            ("kill -l $PID", Destructive),
            ("kill -9 -l", Destructive),
            ("kill -- -l", Destructive),
            ("pkill -f bot", Destructive),
            ("killall node", Destructive),
            ("crontab -r", Destructive),
            ("crontab -ir", Destructive),
            ("crontab -u bob -r", Destructive),
            ("systemctl stop nginx", Destructive),
            ("systemctl --now disable nginx", Destructive),
            ("systemctl -q kill nginx", Destructive),
            ("systemctl mask nginx", Destructive),
            ("systemctl poweroff", Destructive),
            ("systemctl $ACTION nginx", Destructive),
            ("fuser -v notes.txt", Safe),
            ("fuser telnet/tcp", Safe),
            ("fuser -n tcp 80", Safe),
            ("fuser -k notes.txt", Destructive),
            ("fuser --kill notes.txt", Destructive),
            ("fuser -vk 80/tcp", Destructive),
            ("fuser -m /dev/sda1", Unknown),
            ("service nginx stop", Destructive),
            ("service nginx status", Safe),
            ("service --status-all", Safe),
            ("service nginx restart", Unknown),
            ("service ../x status", Unknown),
            ("service nginx status extra", Unknown),
        ]);
    }
}
