//! The showing forms of the link and traffic tools (`ip` and `ss` are in `queries.rs`): `tc`,
//! `devlink`, `rdma`, `bridge`, `vdpa`, `tipc` and `dcb` listing their objects, `iwconfig`
//! showing an interface, `ifconfig`, `route` and `arp` without a change,
//! `ethtool` with one of its show options. A line run without a click may not open a socket
//! of any family (seccomp), so the netlink and `ioctl` queries these make fail there, and
//! what reads `/proc/net` (`route -n`, `ifconfig`'s list) shows the routes and counters that
//! `ip route` and `ss` already may. Every form that changes a link, a queue, a route or a
//! device (`tc qdisc add`, `ifconfig eth0 down`, `route del`, `ethtool -s`, `ethtool -E`
//! writing the EEPROM, `-f` flashing firmware, `-t` testing the link) waits for a person, and
//! so does anything these rules do not know: they list what reads, not what changes.

use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["tc"], Rule::Judge(|_, call| iproute(call, TC_OBJECTS))),
    Program::new(
        &["devlink"],
        Rule::Judge(|_, call| iproute(call, DEVLINK_OBJECTS)),
    ),
    Program::new(
        &["rdma"],
        Rule::Judge(|_, call| iproute(call, RDMA_OBJECTS)),
    ),
    Program::new(
        &["bridge"],
        Rule::Judge(|_, call| iproute(call, BRIDGE_OBJECTS)),
    ),
    Program::new(
        &["vdpa"],
        Rule::Judge(|_, call| iproute(call, VDPA_OBJECTS)),
    ),
    Program::new(
        &["tipc"],
        Rule::Judge(|_, call| iproute(call, TIPC_OBJECTS)),
    ),
    Program::new(&["dcb"], Rule::Judge(|_, call| iproute(call, DCB_OBJECTS))),
    Program::new(&["ifconfig"], Rule::Judge(ifconfig)),
    Program::new(&["iwconfig"], Rule::Judge(iwconfig)),
    Program::new(&["route"], Rule::Judge(route)),
    Program::new(&["arp"], Rule::Judge(arp)),
    Program::new(&["ethtool"], Rule::Judge(ethtool)),
];

const TC_OBJECTS: &[&str] = &["qdisc", "class", "filter", "chain", "action", "actions"];
const DEVLINK_OBJECTS: &[&str] = &[
    "dev",
    "port",
    "sb",
    "resource",
    "region",
    "health",
    "trap",
    "dpipe",
    "table",
    "rate",
    "linecard",
    "lc",
    "param",
    "eswitch",
    "occupancy",
];
const RDMA_OBJECTS: &[&str] = &[
    "dev",
    "link",
    "resource",
    "res",
    "system",
    "sys",
    "statistic",
    "stat",
    "qp",
    "cm_id",
    "cq",
    "mr",
    "pd",
    "srq",
];

/// `bridge`'s ports, forwarding and multicast databases and VLANs.
const BRIDGE_OBJECTS: &[&str] = &["link", "fdb", "mdb", "vlan", "vni"];
/// `vdpa`'s management devices and devices, and a device's configuration and counters.
const VDPA_OBJECTS: &[&str] = &["mgmtdev", "dev", "config", "vstats"];
/// TIPC's bearers, links (and their monitor), media, name table, node, sockets and peers.
const TIPC_OBJECTS: &[&str] = &[
    "bearer",
    "link",
    "media",
    "nametable",
    "node",
    "socket",
    "peer",
    "monitor",
];
/// `dcb`'s data-centre bridging settings of a port.
const DCB_OBJECTS: &[&str] = &[
    "app", "apptrust", "buffer", "dcbx", "ets", "maxrate", "pfc", "rewr",
];

/// Words that show (`dump` only after `table`: `devlink dpipe table dump`; `tipc link
/// monitor summary`, `tipc node get address`).
const SHOWS: &[&str] = &["show", "list", "ls", "info", "summary", "get"];

/// Words that change something, before or after the showing word.
const CHANGES: &[&str] = &[
    "add", "del", "delete", "change", "replace", "set", "flush", "new", "clear", "reload", "flash",
    "recover", "test", "exec", "bind", "unbind", "split", "unsplit", "remove", "enable", "disable",
    "reset",
];

fn unknown_word(program: &str, word: &Arg) -> Judgement {
    Judgement::other(format!(
        "`{program} ... {}` is not one of the forms that only show",
        word.raw
    ))
}

fn changes(program: &str, word: &Arg) -> Judgement {
    Judgement::destroys(format!(
        "`{program} ... {}` may change the machine's links, queues or devices",
        word.raw
    ))
}

/// `tc`/`devlink`/`rdma [options] OBJECT... [show|list|ls [args]]`: objects the program
/// lists, then a showing word or nothing (they show by default); `-batch` runs the commands
/// a file holds.
fn iproute(invocation: &Invocation<'_>, objects: &[&str]) -> Judgement {
    let program = invocation.program;
    let mut words = invocation.args.iter().peekable();
    while let Some(word) = words.next_if(|w| w.text().is_some_and(|t| t.starts_with('-'))) {
        if word.text().is_some_and(|t| t.starts_with("-b")) {
            return Judgement::other(format!("`{program} -batch` runs the commands a file holds"));
        }
    }
    let mut previous = "";
    for word in words.by_ref() {
        let Some(text) = word.text() else {
            return unknown_word(program, word);
        };
        if SHOWS.contains(&text) || (text == "dump" && previous == "table") {
            break;
        }
        if CHANGES.contains(&text) {
            return changes(program, word);
        }
        if !objects.contains(&text) {
            return unknown_word(program, word);
        }
        previous = text;
    }
    for word in words {
        if word.may_be(|t| CHANGES.contains(&t)) {
            return changes(program, word);
        }
        if word.text() == Some("monitor") {
            return unknown_word(program, word);
        }
    }
    Judgement::whitelisted()
}

/// `iwconfig [interface]`: a wireless interface's settings shown; more words set them.
fn iwconfig(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    match invocation.args {
        [] => Judgement::whitelisted(),
        [interface] if interface.text().is_some_and(|t| !t.starts_with('-')) => {
            Judgement::whitelisted()
        }
        _ => Judgement::other("`iwconfig` given more than an interface sets its wireless settings"),
    }
}

/// `ifconfig [-a|-s|-v] [interface]`: more words configure the interface.
fn ifconfig(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut interfaces = 0;
    for word in invocation.args {
        match word.text() {
            Some("-a" | "-s" | "-v" | "-h" | "--help") => {}
            Some(text) if !text.starts_with('-') && interfaces == 0 => interfaces += 1,
            Some(_) if interfaces == 1 => {
                return Judgement::destroys(format!(
                    "`ifconfig ... {}` changes the interface's configuration",
                    word.raw
                ));
            }
            _ => {
                return Judgement::other(format!(
                    "`ifconfig ... {}` configures an interface",
                    word.raw
                ));
            }
        }
    }
    Judgement::whitelisted()
}

/// `route [-n] [-e] [-v] [-C] [-F] [-A family]` prints the routing table; `add`, `del` and
/// `flush` change it.
fn route(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            Some("-A") => {
                words.next();
            }
            Some(text) if text.starts_with('-') && text.len() > 1 => {}
            Some("add" | "del" | "delete" | "flush") => {
                return Judgement::destroys(format!(
                    "`route {}` changes the machine's routing table",
                    word.raw
                ));
            }
            _ => {
                return Judgement::other(format!(
                    "`route ... {}` is not one of the forms that only print",
                    word.raw
                ));
            }
        }
    }
    Judgement::whitelisted()
}

/// `arp` lists the neighbour table (`/proc/net/arp`, as `ip neigh` shows it): `-a`, `-n`,
/// `-e`, `-v`, `-i IF`, `-H TYPE` and host names; `-s` and `-d` add or delete entries and
/// `-f` loads them from a file.
fn arp(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut words = invocation.args.iter();
    while let Some(word) = words.next() {
        match word.text() {
            Some("-i" | "--device" | "-H" | "-t" | "--hw-type") => {
                words.next();
            }
            Some("-s" | "--set" | "-d" | "--delete" | "-f" | "--file" | "-Ds" | "--use-device") => {
                return Judgement::destroys(format!(
                    "`arp {}` changes the machine's neighbour table",
                    word.raw
                ));
            }
            Some(
                "-a" | "--all" | "-n" | "--numeric" | "-e" | "-v" | "--verbose" | "-V"
                | "--version",
            ) => {}
            Some(text) if !text.starts_with('-') => {}
            Some(text)
                if text.len() > 1
                    && text[1..]
                        .chars()
                        .all(|c| matches!(c, 'a' | 'n' | 'e' | 'v')) => {}
            _ => {
                return Judgement::other(format!(
                    "`arp {}` is not one of the forms that only print",
                    word.raw
                ));
            }
        }
    }
    Judgement::whitelisted()
}

/// `ethtool`'s options that only show, each followed by the device.
const ETHTOOL_SHOWS: &[&str] = &[
    "-a",
    "--show-pause",
    "-c",
    "--show-coalesce",
    "-g",
    "--show-ring",
    "-i",
    "--driver",
    "-k",
    "--show-features",
    "--show-offload",
    "-l",
    "--show-channels",
    "-S",
    "--statistics",
    "-T",
    "--show-time-stamping",
    "-P",
    "--show-permaddr",
    "--show-eee",
    "--show-fec",
    "--show-priv-flags",
    "--show-tunnels",
];

/// `ethtool [--json|-I] [SHOW-OPTION] DEVICE`, or `-h`/`--version`. Its other options
/// change the device (`-s`, `-K`, `-G`, `-E` writes the EEPROM, `-f` flashes firmware, `-t`
/// tests the link, `-r` renegotiates, `-p` blinks it, `--reset`).
fn ethtool(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let words: Vec<Option<&str>> = invocation.args.iter().map(Arg::text).collect();
    let rest = match words.as_slice() {
        [Some("-h" | "--help" | "--version")] => return Judgement::whitelisted(),
        [Some("--json" | "-I" | "--include-statistics"), rest @ ..] => rest,
        rest => rest,
    };
    let device = |word: &Option<&str>| word.is_some_and(|t| !t.starts_with('-'));
    let shows = match rest {
        [only] => device(only),
        [Some(option), only] => ETHTOOL_SHOWS.contains(option) && device(only),
        _ => false,
    };
    if shows {
        Judgement::whitelisted()
    } else {
        Judgement::other(
            "`ethtool` is given more than a show option and a device; its other options change the device",
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn link_tools_show_and_their_changing_forms_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("tc -s qdisc show dev eth0", Safe),
            ("tc qdisc", Safe),
            ("tc filter ls dev eth0", Safe),
            ("tc qdisc add dev eth0 root netem delay 100ms", Destructive),
            ("tc qdisc del dev eth0 root", Destructive),
            ("tc qdisc show dev eth0 add", Destructive),
            ("tc -batch cmds.txt", Unknown),
            ("iwconfig", Safe),
            ("iwconfig wlan0", Safe),
            ("iwconfig wlan0 essid home", Unknown),
            ("iwconfig wlan0 txpower off", Unknown),
            ("bridge link", Safe),
            ("bridge -d fdb show", Safe),
            ("bridge fdb add 00:11:22:33:44:55 dev eth0", Destructive),
            ("bridge vlan del vid 2 dev eth0", Destructive),
            ("bridge monitor", Unknown),
            ("bridge -batch cmds.txt", Unknown),
            ("vdpa dev show foo", Safe),
            ("vdpa mgmtdev show", Safe),
            ("vdpa dev config show foo", Safe),
            ("vdpa dev add name foo mgmtdev vdpasim_net", Destructive),
            ("vdpa dev del foo", Destructive),
            ("tipc link monitor summary", Safe),
            ("tipc link monitor list", Safe),
            ("tipc node get address", Safe),
            ("tipc link monitor set threshold 32", Destructive),
            ("tipc bearer enable media eth dev eth0", Destructive),
            ("tipc peer remove address 1.1.1", Destructive),
            ("tipc link stat reset link x", Unknown),
            ("dcb ets show dev eth0", Safe),
            ("dcb ets set dev eth0 willing on", Destructive),
            ("tc monitor", Unknown),
            ("tc qdisc show monitor", Unknown),
            ("tc $OBJ show", Unknown),
            ("tc qdisc show dev $DEV", Destructive),
            ("ifconfig -z", Unknown),
            ("devlink dev show", Safe),
            ("devlink dev show pci/0000:01:00.0", Safe),
            ("devlink dev eswitch show pci/0000:01:00.0", Safe),
            (
                "devlink dpipe table show pci/0000:01:00.0 name mlxsw_erif",
                Safe,
            ),
            (
                "devlink dpipe table dump pci/0000:01:00.0 name mlxsw_erif",
                Safe,
            ),
            ("devlink dev info", Safe),
            ("devlink dev reload pci/0000:01:00.0", Destructive),
            (
                "devlink dev flash pci/0000:01:00.0 file fw.bin",
                Destructive,
            ),
            (
                "devlink dev eswitch set pci/0000:01:00.0 mode switchdev",
                Destructive,
            ),
            (
                "devlink health dump clear pci/0000:01:00.0 reporter fw",
                Unknown,
            ),
            ("devlink port split pci/0000:01:00.0/1 count 4", Destructive),
            ("rdma dev", Safe),
            ("rdma dev show mlx5_3", Safe),
            ("rdma link show mlx5_2/1", Safe),
            ("rdma link add rxe0 type rxe netdev eth0", Destructive),
            ("rdma dev set mlx5_3 name rdma_0", Destructive),
            ("ifconfig", Safe),
            ("ifconfig -a", Safe),
            ("ifconfig eth0", Safe),
            ("ifconfig eth0 down", Destructive),
            (
                "ifconfig eth0 192.168.1.2 netmask 255.255.255.0",
                Destructive,
            ),
            ("route", Safe),
            ("arp -a", Safe),
            ("arp -n -i eth0", Safe),
            ("arp -an host1", Safe),
            ("arp -s 10.0.0.2 00:11:22:33:44:55", Destructive),
            ("arp -d 10.0.0.2", Destructive),
            ("arp -f ethers", Destructive),
            ("route -n", Safe),
            ("route -A inet6", Safe),
            ("route add default gw 10.0.0.1", Destructive),
            ("route del default", Destructive),
            ("route $X", Unknown),
            ("ethtool eth0", Safe),
            ("ethtool -S eth0", Safe),
            ("ethtool -S eth0 | grep error", Safe),
            ("ethtool -i eth0", Safe),
            ("ethtool --json -k eth0", Safe),
            ("ethtool -s eth0 speed 100 duplex full", Unknown),
            ("ethtool -K eth0 tso off", Unknown),
            ("ethtool -E eth0 magic 0x1 offset 0 value 0", Unknown),
            ("ethtool -f eth0 fw.bin", Unknown),
            ("ethtool -t eth0", Unknown),
            ("ethtool -p eth0 5", Unknown),
            ("ethtool --reset eth0 all", Unknown),
            ("ethtool $OPT eth0", Unknown),
        ]);
    }
}
