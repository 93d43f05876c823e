//! systemd's readers: `journalctl`, `systemd-delta`, `systemd-analyze`, `busctl` (`systemctl`
//! is in `system.rs` with the other services). What they print is what the sandbox lets them
//! read: the journal lives under `/var/log/journal` and `/run/log/journal`, which a line may
//! not read (unless the operator lists them in `command.sandbox.read_paths`), so `journalctl`
//! finds no journal and says so; `systemd-delta` sees the unit directories under `/usr` and
//! not `/etc`'s; `systemd-analyze`'s queries of the manager and `busctl` need a socket, which
//! a line run without a click may not open, so they fail. They harm nothing in these forms,
//! and the forms that change something wait for a person: `journalctl --vacuum-*`,
//! `--rotate`, `--flush`, `--sync`, `--setup-keys`, `--update-catalog`, `--cursor-file`
//! (writes), `-f` (never ends); `systemd-analyze set-log-level`, `log-level LEVEL`,
//! `verify` (loads units and may run generators); `busctl call`, `set-property`, `emit`,
//! `monitor`, `capture`; and `-H`/`--host`, which runs `ssh`.

use super::subcommands::{SUBCOMMANDS, Subcommands, Verb, options_before_wait};
use super::table::{self, Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["journalctl"], Rule::Table(&JOURNALCTL)),
    Program::new(
        &["systemd-delta"],
        Rule::Table(&Table {
            spec: Spec::values("t", &["type", "diff"]),
            // Prefixes of the unit directories to compare (`/run`, `systemd/system`).
            operands: Operands::Text,
            ..TABLE
        }),
    ),
    Program::new(&["systemd-analyze"], Rule::Judge(systemd_analyze)),
    Program::new(&["busctl"], Rule::Judge(busctl)),
    Program::new(&["loginctl"], Rule::Subcommands(&LOGINCTL)),
];

/// `loginctl`: who is logged in, on which seat; ending sessions is destructive. Alone it
/// lists the sessions.
const LOGINCTL: Subcommands = Subcommands {
    global: options_before_wait(),
    verbs: &[
        Verb::reads(
            &[
                "list-sessions",
                "session-status",
                "show-session",
                "list-users",
                "user-status",
                "show-user",
                "list-seats",
                "seat-status",
                "show-seat",
            ],
            &Table {
                spec: Spec::values("pnoHM", &["property", "lines", "output", "host", "machine"]),
                operands: Operands::Text,
                refused: &[
                    HOST,
                    Refusal {
                        options: &["M", "machine"],
                        effect: Effect::Unsafe,
                        what: "reaches a container's login manager",
                    },
                ],
                ..TABLE
            },
        ),
        Verb::destroys(
            &[
                "terminate-session",
                "terminate-user",
                "terminate-seat",
                "kill-session",
                "kill-user",
                "flush-devices",
            ],
            "ends sessions or their processes",
        ),
    ],
    implied: Some("list-sessions"),
    ..SUBCOMMANDS
};

/// `-H user@host`: reaches another machine through `ssh`.
const HOST: Refusal = Refusal {
    options: &["H", "host"],
    effect: Effect::Unsafe,
    what: "runs `ssh` to reach another machine",
};

const JOURNALCTL: Table = Table {
    spec: Spec::values(
        "uStTpgFMDoc",
        &[
            "unit",
            "user-unit",
            "identifier",
            "exclude-identifier",
            "priority",
            "facility",
            "grep",
            "since",
            "until",
            "field",
            "machine",
            "directory",
            "file",
            "root",
            "image",
            "image-policy",
            "output",
            "output-fields",
            "cursor",
            "after-cursor",
            "cursor-file",
            "namespace",
            "interval",
            "verify-key",
            "vacuum-size",
            "vacuum-files",
            "vacuum-time",
            "invocation",
        ],
    )
    // `-b [ID]`, `-n [N]`: a value only when attached.
    .optional("bn"),
    // Matches (`_PID=1`, `/usr/bin/dbus-daemon`) name no file to read.
    operands: Operands::Text,
    path_options: &["D", "directory", "file", "root"],
    refused: &[
        Refusal {
            options: &[
                "vacuum-size",
                "vacuum-files",
                "vacuum-time",
                "rotate",
                "flush",
                "relinquish-var",
                "smart-relinquish-var",
                "sync",
            ],
            effect: Effect::Writes,
            what: "deletes, moves or rotates journal files",
        },
        Refusal {
            options: &["setup-keys", "update-catalog", "cursor-file"],
            effect: Effect::Writes,
            what: "writes a file",
        },
        Refusal {
            options: &["f", "follow"],
            effect: Effect::Unsafe,
            what: "follows the journal until it is stopped",
        },
        Refusal {
            options: &["image", "M", "machine"],
            effect: Effect::Unsafe,
            what: "mounts a disk image or reads another machine's journal",
        },
    ],
    ..TABLE
};

/// `systemd-analyze`'s options that take a value.
const ANALYZE: Spec = Spec::values(
    "HM",
    &[
        "host",
        "machine",
        "root",
        "image",
        "image-policy",
        "from-pattern",
        "to-pattern",
        "fuzz",
        "instance",
        "iterations",
        "base-time",
        "unit",
        "threshold",
        "security-policy",
        "json",
        "profile",
        "scale-svg",
        "offline",
    ],
);

/// `systemd-analyze` subcommands that only print.
const ANALYZE_READS: &[&str] = &[
    "time",
    "blame",
    "critical-chain",
    "plot",
    "dot",
    "dump",
    "unit-paths",
    "unit-files",
    "exit-status",
    "capability",
    "condition",
    "syscall-filter",
    "filesystems",
    "calendar",
    "timestamp",
    "timespan",
    "cat-config",
    "architectures",
    "smbios11",
    "has-tpm2",
];

/// Subcommands that print a setting without an operand and change it with one.
const ANALYZE_SETTINGS: &[&str] = &["log-level", "log-target", "service-watchdogs"];

/// `systemd-analyze [SUBCOMMAND]`: without one it is `time`.
fn systemd_analyze(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let row = Table {
        spec: ANALYZE,
        operands: Operands::Text,
        path_options: &["root"],
        refused: &[
            HOST,
            Refusal {
                options: &["image", "M", "machine", "generators"],
                effect: Effect::Unsafe,
                what: "mounts a disk image, reaches another machine or runs generators",
            },
        ],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &row);
    let items = options::parse(invocation.args, &ANALYZE);
    let operands = options::operands(&items);
    let Some(verb) = operands.first() else {
        return judgement;
    };
    match verb.text() {
        Some(name) if ANALYZE_READS.contains(&name) => {}
        Some(name) if ANALYZE_SETTINGS.contains(&name) && operands.len() == 1 => {}
        _ => {
            judgement.whitelisted = false;
            judgement.unknown(format!(
                "`systemd-analyze {}` is not a read-only subcommand",
                verb.raw
            ));
        }
    }
    judgement
}

/// `busctl`'s options that take a value.
const BUSCTL: Spec = Spec::values(
    "HM",
    &[
        "host",
        "machine",
        "address",
        "match",
        "size",
        "timeout",
        "json",
        "destination",
        "limit-messages",
    ],
);

/// `busctl` subcommands that only print.
const BUSCTL_READS: &[&str] = &[
    "list",
    "status",
    "tree",
    "introspect",
    "get-property",
    "help",
];

/// `busctl` subcommands that call a method, set a property or send a signal.
const BUSCTL_CHANGES: &[&str] = &["call", "set-property", "emit"];

fn busctl(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let row = Table {
        spec: BUSCTL,
        operands: Operands::Text,
        refused: &[
            HOST,
            Refusal {
                options: &["M", "machine", "address"],
                effect: Effect::Unsafe,
                what: "reaches another machine's or an address's bus",
            },
        ],
        ..TABLE
    };
    let mut judgement = table::judge(walker, invocation, &row);
    let items = options::parse(invocation.args, &BUSCTL);
    let verb = options::operands(&items).first().copied();
    let reads = verb.is_none_or(|v| v.text().is_some_and(|t| BUSCTL_READS.contains(&t)));
    if let Some(verb) = verb.filter(|v| v.may_be(|t| BUSCTL_CHANGES.contains(&t))) {
        judgement.destructive(format!(
            "`busctl {}` calls or changes a service, which may do anything (power the machine off)",
            verb.raw
        ));
    } else if !reads {
        judgement.whitelisted = false;
        judgement.unknown(format!(
            "`busctl {}` is not a read-only subcommand",
            verb.map_or("", |v| v.raw.as_str())
        ));
    }
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn systemd_readers_read_and_their_dangerous_neighbours_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("loginctl", Safe),
            ("loginctl user-status", Safe),
            ("loginctl list-sessions --no-legend", Safe),
            ("loginctl show-session 2 -p Type", Safe),
            ("loginctl -H host list-users", Unknown),
            ("loginctl user-status -H host", Unknown),
            ("loginctl lock-session 2", Unknown),
            ("loginctl terminate-user bob", Destructive),
            ("loginctl kill-session 3", Destructive),
            ("journalctl", Safe),
            ("journalctl -b -p err", Safe),
            ("journalctl -b -1 -n 50", Safe),
            ("journalctl -u dbus", Safe),
            ("journalctl /usr/bin/dbus-daemon", Safe),
            ("journalctl _PID=123", Safe),
            (
                "journalctl _COMM=crond --since '10:00' --until '11:00'",
                Safe,
            ),
            ("journalctl --list-boots", Safe),
            ("journalctl -F _SYSTEMD_UNIT", Safe),
            ("journalctl -o json -n 10", Safe),
            ("journalctl --disk-usage", Safe),
            ("journalctl | grep CRON", Safe),
            ("journalctl -D logs/journal", Safe),
            ("journalctl -D /var/log/journal", Unknown),
            ("journalctl --file=/var/log/journal/x.journal", Unknown),
            ("journalctl --vacuum-size=1G", Destructive),
            ("journalctl --vacuum-time 2d", Destructive),
            ("journalctl --vac=1G", Destructive),
            ("journalctl --rotate", Destructive),
            ("journalctl --flush", Destructive),
            ("journalctl --sync", Destructive),
            ("journalctl --setup-keys", Destructive),
            ("journalctl --update-catalog", Destructive),
            ("journalctl --cursor-file=c -n 5", Destructive),
            ("journalctl -f", Unknown),
            ("journalctl -fu nginx", Unknown),
            ("journalctl --follow", Unknown),
            ("journalctl --image=disk.raw", Unknown),
            ("systemd-delta", Safe),
            ("systemd-delta /run", Safe),
            ("systemd-delta --type=extended /run/systemd/system", Safe),
            ("systemd-analyze", Safe),
            ("systemd-analyze blame", Safe),
            ("systemd-analyze critical-chain nginx.service", Safe),
            ("systemd-analyze calendar weekly", Safe),
            ("systemd-analyze log-level", Safe),
            ("systemd-analyze log-level debug", Unknown),
            ("systemd-analyze set-log-level debug", Unknown),
            ("systemd-analyze service-watchdogs no", Unknown),
            ("systemd-analyze verify unit.service", Unknown),
            ("systemd-analyze -H root@db blame", Unknown),
            ("systemd-analyze $VERB", Unknown),
            ("busctl list", Safe),
            (
                "busctl get-property org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager LogLevel",
                Safe,
            ),
            ("busctl tree org.freedesktop.login1", Safe),
            ("busctl", Safe),
            (
                "busctl set-property org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager LogLevel s debug",
                Destructive,
            ),
            (
                "busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false",
                Destructive,
            ),
            ("busctl monitor", Unknown),
            ("busctl $VERB", Destructive),
            (
                "busctl introspect org.freedesktop.login1 /org/freedesktop/login1",
                Safe,
            ),
            ("busctl capture", Unknown),
            ("busctl -H host list", Unknown),
        ]);
    }
}
