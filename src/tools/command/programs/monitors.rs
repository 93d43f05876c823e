//! More facts of the machine, from the tools that report them: systemd's `networkctl`,
//! `resolvectl`, `bootctl`, `machinectl` listings, `systemd-cgls` (which lists processes),
//! the firmware's boot entries (`efibootmgr` alone), Secure Boot's state (`mokutil
//! --sb-state`), `fwupdmgr get-devices`, connection tracking and IP sets listed (`conntrack
//! -L`, `ipset list`), CPU frequency and idle states (`cpupower frequency-info`), `kmod
//! list`, `systool`, `slabtop --once`, `vnstat`'s traffic counts, `lshw`, `hwinfo`, and the
//! system summaries (`neofetch`, `screenfetch`, `fastfetch` alone). Each prints and changes
//! nothing; the forms that change (setting DNS, a boot entry, a CPU governor, enrolling a
//! key, flashing firmware) wait, and the ones that remove (`conntrack -F`/`-D`, `ipset
//! destroy`/`flush`, `efibootmgr -B`, `machinectl remove`, `networkctl delete`, `vnstat
//! --remove`) are destructive. A line without a click reaches no daemon and no firmware
//! variable, so most of these fail there and say so.

use super::subcommands::{SUBCOMMANDS, SYSTEMD_ELSEWHERE, Subcommands, Verb};
use super::table::{Effect, Operands, Refusal, TABLE, Table};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::Spec;
use crate::tools::command::words::Arg;

/// A listing whose operands are names (links, machines, interfaces).
const NAMES: Table = Table {
    operands: Operands::Text,
    ..TABLE
};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["networkctl"], Rule::Subcommands(&NETWORKCTL)),
    Program::new(&["resolvectl", "systemd-resolve"], Rule::Judge(resolvectl)),
    Program::new(&["bootctl"], Rule::Subcommands(&BOOTCTL)),
    Program::new(&["machinectl"], Rule::Subcommands(&MACHINECTL)),
    Program::new(
        &["systemd-cgls"],
        Rule::Table(&Table {
            spec: Spec::values("uM", &["unit", "user-unit", "machine"]),
            operands: Operands::Text,
            refused: &[Refusal {
                options: &["M", "machine"],
                effect: Effect::Unsafe,
                what: "lists another machine's or container's groups",
            }],
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(&["efibootmgr"], Rule::Judge(efibootmgr)),
    Program::new(&["mokutil"], Rule::Judge(mokutil)),
    Program::new(&["fwupdmgr"], Rule::Subcommands(&FWUPDMGR)),
    Program::new(&["conntrack"], Rule::Judge(conntrack)),
    Program::new(&["ipset"], Rule::Judge(ipset)),
    Program::new(&["cpupower"], Rule::Subcommands(&CPUPOWER)),
    Program::new(&["kmod"], Rule::Subcommands(&KMOD)),
    Program::new(&["systool"], Rule::Table(&NAMES)),
    Program::new(&["slabtop"], Rule::Judge(slabtop)),
    Program::new(&["vnstat"], Rule::Judge(vnstat)),
    Program::new(&["lshw"], Rule::Judge(lshw)),
    Program::new(&["hwinfo"], Rule::Judge(hwinfo)),
    Program::new(
        &["neofetch", "screenfetch", "fastfetch"],
        Rule::Judge(summary),
    ),
];

const NETWORKCTL: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(&["delete"], "deletes virtual network devices"),
        // Not `cat`: a `.netdev` file may hold a WireGuard private key.
        Verb::reads(&["list", "status", "lldp", "label"], &NAMES),
    ],
    implied: Some("list"),
    elsewhere: SYSTEMD_ELSEWHERE,
    ..SUBCOMMANDS
};

const BOOTCTL: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(
            &["remove"],
            "removes the boot loader from the boot partition",
        ),
        Verb::reads(&["status", "list", "is-installed"], &NAMES),
    ],
    implied: Some("status"),
    ..SUBCOMMANDS
};

const MACHINECTL: Subcommands = Subcommands {
    verbs: &[
        Verb::destroys(
            &["remove", "clean", "terminate", "kill", "poweroff"],
            "removes images or stops machines",
        ),
        Verb::reads(&["list", "list-images"], &NAMES),
    ],
    implied: Some("list"),
    elsewhere: SYSTEMD_ELSEWHERE,
    ..SUBCOMMANDS
};

const FWUPDMGR: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &[
            "get-devices",
            "get-history",
            "get-remotes",
            "get-blocked-firmware",
            "--version",
        ],
        &NAMES,
    )],
    ..SUBCOMMANDS
};

const CPUPOWER: Subcommands = Subcommands {
    verbs: &[Verb::reads(
        &["frequency-info", "idle-info", "info"],
        &NAMES,
    )],
    ..SUBCOMMANDS
};

const KMOD: Subcommands = Subcommands {
    verbs: &[Verb::reads(&["list"], &NAMES)],
    ..SUBCOMMANDS
};

fn words<'a>(call: &Invocation<'a>) -> Option<Vec<&'a str>> {
    call.args.iter().map(Arg::text).collect()
}

fn known_words<'a>(call: &Invocation<'a>) -> Result<Vec<&'a str>, Judgement> {
    words(call).ok_or_else(|| {
        Judgement::other(format!(
            "`{}` is given a word only known when the line runs",
            call.program
        ))
    })
}

/// `resolvectl` showing: `status` (the default), `statistics`, and each per-link setting
/// (`dns`, `domain`, `default-route`, `llmnr`, `mdns`, `dnssec`, `dnsovertls`, `nta`) given
/// at most a link; with values it sets them. `flush-caches`, `reset-*`, `revert`, `query`
/// (which asks the network) and the rest wait. `systemd-resolve --status` is its old form.
fn resolvectl(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const SETTINGS: &[&str] = &[
        "dns",
        "domain",
        "default-route",
        "llmnr",
        "mdns",
        "dnssec",
        "dnsovertls",
        "nta",
    ];
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    let shows = match words.as_slice() {
        [] | ["status" | "statistics" | "--status" | "--statistics"] => true,
        ["status", link] => !link.starts_with('-'),
        [setting] => SETTINGS.contains(setting),
        [setting, link] => SETTINGS.contains(setting) && !link.starts_with('-'),
        _ => false,
    };
    if shows {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{}` is given more than a setting to show; its other forms set DNS, flush caches or ask the network",
            call.program
        ))
    }
}

/// `efibootmgr` alone or with `-v`: the firmware's boot entries listed. `-B` deletes the
/// entry `-b` names; every other option writes the firmware's variables.
fn efibootmgr(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    if words.iter().any(|w| {
        *w == "-B"
            || *w == "--delete-bootnum"
            || (w.starts_with('-') && !w.starts_with("--") && w.contains('B'))
    }) {
        return Judgement::destroys("`efibootmgr -B` deletes a boot entry from the firmware");
    }
    match words.as_slice() {
        [] | ["-v" | "--verbose"] => Judgement::whitelisted(),
        _ => Judgement::other("`efibootmgr` given options writes the firmware's boot variables"),
    }
}

/// `mokutil` asked about Secure Boot and its keys; importing, deleting or resetting keys
/// and turning validation off wait for a person (they take effect at the next boot).
fn mokutil(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_deref() {
        Some(
            [
                "--sb-state" | "--list-enrolled" | "--list-new" | "--list-delete" | "--pk"
                | "--kek" | "--db" | "--dbx" | "--version",
            ],
        ) => Judgement::whitelisted(),
        _ => Judgement::other(
            "`mokutil` given more than a question imports, deletes or resets Secure Boot keys",
        ),
    }
}

/// `conntrack -L`/`-S`/`-C` (list, statistics, count); `-F` flushes and `-D` deletes
/// tracked connections; every other command changes them.
fn conntrack(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    match words.first() {
        Some(&("-F" | "--flush" | "-D" | "--delete")) => {
            Judgement::destroys("`conntrack -F`/`-D` removes tracked connections")
        }
        Some(&("-L" | "--dump" | "-S" | "--stats" | "-C" | "--count")) => {
            if words[1..]
                .iter()
                .any(|w| matches!(*w, "-F" | "--flush" | "-D" | "--delete" | "-E" | "--event"))
            {
                Judgement::other("`conntrack` is given a second command")
            } else {
                Judgement::whitelisted()
            }
        }
        _ => Judgement::other(
            "`conntrack` without `-L`, `-S` or `-C` changes tracked connections or follows events",
        ),
    }
}

/// `ipset list [SET]` (also `-L`, `save` to the output); `destroy`, `flush` and `del`
/// remove sets or their entries; every other command changes them.
fn ipset(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    let verb = words
        .iter()
        .find(|w| !w.starts_with('-') || matches!(**w, "-L" | "-X" | "-F" | "-D"));
    match verb {
        Some(&("list" | "-L" | "save" | "version" | "help"))
            if !words.contains(&"-file") && !words.contains(&"-f") =>
        {
            Judgement::whitelisted()
        }
        Some(&("destroy" | "-X" | "flush" | "-F" | "del" | "-D")) => {
            Judgement::destroys("`ipset destroy`/`flush`/`del` removes sets or their entries")
        }
        _ => Judgement::other("`ipset` without `list` creates, adds to or restores sets"),
    }
}

/// `slabtop --once` (`-o`), with its sort and delay options: one screen of the kernel's
/// slab caches. Without it, it keeps a terminal screen open until stopped.
fn slabtop(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    let once = words.iter().any(|w| matches!(*w, "-o" | "--once"));
    let known = words.iter().enumerate().all(|(at, w)| {
        matches!(*w, "-o" | "--once" | "-s" | "--sort" | "-d" | "--delay")
            || w.starts_with("--sort=")
            || at > 0 && matches!(words[at - 1], "-s" | "--sort" | "-d" | "--delay")
    });
    if once && known {
        Judgement::whitelisted()
    } else {
        Judgement::other("`slabtop` without `--once` keeps a screen open until it is stopped")
    }
}

/// `vnstat` showing its counts (`-h`, `-d`, `-m`, `-y`, `-t`, `-5`, `-s`, `--json`,
/// `--oneline`, `-i IFACE`, `--iflist`); `--remove` deletes an interface's counts, `-l`
/// follows live, and the other options add, rename or change the database.
fn vnstat(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const SHOWS: &[&str] = &[
        "-h",
        "--hours",
        "-hg",
        "--hoursgraph",
        "-d",
        "--days",
        "-m",
        "--months",
        "-y",
        "--years",
        "-t",
        "--top",
        "-5",
        "--fiveminutes",
        "-s",
        "--short",
        "--json",
        "--xml",
        "--oneline",
        "--iflist",
        "--dbiflist",
        "--alert",
        "-q",
        "--query",
        "--version",
        "-v",
        "--help",
    ];
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    if words.contains(&"--remove") {
        return Judgement::destroys("`vnstat --remove` deletes an interface's traffic counts");
    }
    let mut at = 0;
    while at < words.len() {
        match words[at] {
            "-i" | "--iface" | "-b" | "--begin" | "-e" | "--end" | "--limit" => at += 1,
            word if SHOWS.contains(&word) => {}
            // A count after `--json d` or `-d 7`.
            word if word.bytes().all(|b| b.is_ascii_alphanumeric()) && at > 0 => {}
            word => {
                return Judgement::other(format!(
                    "`vnstat {word}` is not one of the options that only show its counts"
                ));
            }
        }
        at += 1;
    }
    Judgement::whitelisted()
}

/// `lshw` in its listing forms (`-short`, `-businfo`, `-json`, `-xml`, `-html`, `-class
/// CLASS`, `-sanitize`, `-numeric`, `-quiet`, `-notime`, `-disable`/`-enable TEST`);
/// `-dump FILE` writes a database.
fn lshw(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    let mut at = 0;
    while at < words.len() {
        match words[at] {
            "-short" | "-businfo" | "-json" | "-xml" | "-html" | "-sanitize" | "-numeric"
            | "-quiet" | "-notime" | "-version" => {}
            "-class" | "-C" | "-c" | "-disable" | "-enable" => at += 1,
            "-dump" => {
                return Judgement::destroys("`lshw -dump` writes its findings to a database file");
            }
            word => {
                return Judgement::other(format!(
                    "`lshw {word}` is not one of its listing options"
                ));
            }
        }
        at += 1;
    }
    Judgement::whitelisted()
}

/// `hwinfo` listing hardware classes (`--cpu`, `--disk`, `--all`, ...) with `--short`;
/// `--log` writes a file and `--save-config` the system's hardware configuration.
fn hwinfo(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const CLASSES: &[&str] = &[
        "all",
        "arch",
        "bios",
        "block",
        "bluetooth",
        "bridge",
        "camera",
        "cdrom",
        "chipcard",
        "cpu",
        "disk",
        "dsl",
        "dvb",
        "fingerprint",
        "floppy",
        "framebuffer",
        "gfxcard",
        "hub",
        "ide",
        "isapnp",
        "isdn",
        "joystick",
        "keyboard",
        "memory",
        "mmc-ctrl",
        "modem",
        "monitor",
        "mouse",
        "netcard",
        "network",
        "partition",
        "pci",
        "pcmcia",
        "pcmcia-ctrl",
        "pppoe",
        "printer",
        "redasd",
        "reallyall",
        "scanner",
        "scsi",
        "smp",
        "sound",
        "storage-ctrl",
        "sys",
        "tape",
        "tv",
        "uml",
        "usb",
        "usb-ctrl",
        "vbe",
        "wlan",
        "xen",
        "zip",
        "short",
        "listmd",
        "version",
        "help",
    ];
    let words = match known_words(call) {
        Ok(words) => words,
        Err(judgement) => return judgement,
    };
    match words
        .iter()
        .find(|w| !w.strip_prefix("--").is_some_and(|c| CLASSES.contains(&c)))
    {
        None => Judgement::whitelisted(),
        Some(word) => Judgement::other(format!(
            "`hwinfo {word}` is not one of its listing options (`--log` and `--save-config` write files)"
        )),
    }
}

/// `neofetch`, `screenfetch`, `fastfetch` alone (or `neofetch --stdout`/`--off`): a
/// summary of the system printed. Their options load configuration files (which neofetch
/// runs as a script), take screenshots or read images.
fn summary(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match (call.program, words(call).as_deref()) {
        (_, Some([])) => Judgement::whitelisted(),
        ("neofetch", Some(["--stdout" | "--off"])) => Judgement::whitelisted(),
        ("screenfetch", Some(["-n" | "-N"])) => Judgement::whitelisted(),
        _ => Judgement::other(format!(
            "`{}` given options may load a configuration that runs code, take a screenshot or read an image",
            call.program
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reporters_print_and_their_changing_forms_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("networkctl", Safe),
            ("networkctl status eth0", Safe),
            ("networkctl delete veth0", Destructive),
            ("networkctl down eth0", Unknown),
            ("networkctl -H host list", Unknown),
            ("resolvectl", Safe),
            ("resolvectl status eth0", Safe),
            ("resolvectl dns", Safe),
            ("resolvectl dns eth0 1.1.1.1", Unknown),
            ("resolvectl flush-caches", Unknown),
            ("resolvectl query example.com", Unknown),
            ("systemd-resolve --status", Safe),
            ("bootctl", Safe),
            ("bootctl list", Safe),
            ("bootctl install", Unknown),
            ("bootctl remove", Destructive),
            ("machinectl list", Safe),
            ("machinectl remove img", Destructive),
            ("machinectl start vm", Unknown),
            ("systemd-cgls", Safe),
            ("systemd-cgls -M web", Unknown),
            ("networkctl cat wg0.netdev", Unknown),
            ("efibootmgr", Safe),
            ("efibootmgr -v", Safe),
            ("efibootmgr -b 0003 -B", Destructive),
            ("efibootmgr -bB 3", Destructive),
            ("efibootmgr -o 0001,0002", Unknown),
            ("efibootmgr -n 0002", Unknown),
            ("mokutil --sb-state", Safe),
            ("mokutil --list-enrolled", Safe),
            ("mokutil --import key.der", Unknown),
            ("mokutil --disable-validation", Unknown),
            ("fwupdmgr get-devices", Safe),
            ("fwupdmgr update", Unknown),
            ("fwupdmgr refresh", Unknown),
            ("conntrack -L", Safe),
            ("conntrack -L -p tcp", Safe),
            ("conntrack -S", Safe),
            ("conntrack -F", Destructive),
            ("conntrack -D -s 10.0.0.1", Destructive),
            ("conntrack -E", Unknown),
            ("ipset list", Safe),
            ("ipset list blocklist", Safe),
            ("ipset destroy blocklist", Destructive),
            ("ipset flush", Destructive),
            ("ipset add blocklist 1.2.3.4", Unknown),
            ("ipset restore -f sets.txt", Unknown),
            ("cpupower frequency-info", Safe),
            ("cpupower frequency-set -g performance", Unknown),
            ("kmod list", Safe),
            ("kmod static-nodes", Unknown),
            ("systool -m e1000", Safe),
            ("slabtop -o", Safe),
            ("slabtop --once --sort=c", Safe),
            ("slabtop", Unknown),
            ("vnstat", Safe),
            ("vnstat -d", Safe),
            ("vnstat -i eth0 -m", Safe),
            ("vnstat --json d 7", Safe),
            ("vnstat -l", Unknown),
            ("vnstat --remove -i eth0 --force", Destructive),
            ("vnstat --add -i eth1", Unknown),
            ("lshw -short", Safe),
            ("lshw -class network -json", Safe),
            ("lshw -dump hw.db", Destructive),
            ("lshw -X", Unknown),
            ("hwinfo --short --cpu", Safe),
            ("hwinfo --log hw.txt", Unknown),
            ("hwinfo --save-config=all", Unknown),
            ("neofetch", Safe),
            ("neofetch --stdout", Safe),
            ("neofetch --config evil.conf", Unknown),
            ("screenfetch -s", Unknown),
            ("fastfetch", Safe),
        ]);
    }
}
