//! The packet filter's rules, listed: `iptables`/`ip6tables`/`ebtables`/`arptables` with
//! `-L`/`-S` (and their printing options), `iptables-save` to its output, `nft list ...`,
//! `firewall-cmd`'s `--list-*`/`--get-*`/`--query-*`/`--info-*`/`--state`, `ufw status`.
//! Facts of the machine's configuration; every other form adds, deletes, flushes or
//! reloads rules, and the forms that remove rules (`iptables -F`/`-D`/`-X`, `nft flush`/
//! `delete`, `ufw reset`/`disable`) are destructive. A line without a click opens no
//! netfilter socket and reaches no D-Bus, so there these fail and say so.

use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &[
            "iptables",
            "ip6tables",
            "iptables-legacy",
            "ip6tables-legacy",
            "iptables-nft",
            "ip6tables-nft",
            "ebtables",
            "arptables",
        ],
        Rule::Judge(iptables),
    ),
    Program::new(
        &["iptables-save", "ip6tables-save"],
        Rule::Judge(iptables_save),
    ),
    Program::new(&["nft"], Rule::Judge(nft)),
    Program::new(&["firewall-cmd"], Rule::Judge(firewall_cmd)),
    Program::new(&["ufw"], Rule::Judge(ufw)),
];

fn words<'a>(call: &Invocation<'a>) -> Vec<Option<&'a str>> {
    call.args.iter().map(Arg::text).collect()
}

/// `iptables -L [CHAIN]` / `-S [CHAIN]` with `-t TABLE`, `-n`, `-v`, `-x`, `-w`,
/// `--line-numbers`, short options alone or together (`-nvL`). `-Z` (even beside `-L`)
/// zeroes the counters it lists; `-F`, `-D`, `-X` remove rules and chains.
fn iptables(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let program = call.program;
    let words = words(call);
    let removes =
        |what: &str| Judgement::destroys(format!("`{program} {what}` removes or zeroes rules"));
    let other = |what: &str| {
        Judgement::other(format!(
            "`{program} {what}` is not one of the options that only list rules"
        ))
    };
    let mut listing = false;
    let mut chains = 0;
    let mut at = 0;
    while at < words.len() {
        let Some(word) = words[at] else {
            return other("(a word only known when the line runs)");
        };
        if let Some(long) = word.strip_prefix("--") {
            match long {
                "list" | "list-rules" => listing = true,
                "numeric" | "verbose" | "exact" | "line-numbers" | "wait" => {}
                "table" => at += 1,
                "flush" | "delete" | "delete-chain" | "zero" => return removes(word),
                "version" | "help" if words.len() == 1 => return Judgement::whitelisted(),
                _ => return other(word),
            }
        } else if let Some(short) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            if short.contains(['F', 'D', 'X', 'Z']) {
                return removes(word);
            }
            if short == "t" {
                at += 1;
            } else if short.starts_with('t') {
                // `-tnat`: the table attached.
            } else if short.chars().all(|c| "nvxwLS".contains(c)) {
                listing |= short.contains(['L', 'S']);
            } else if matches!(short, "V" | "h") && words.len() == 1 {
                return Judgement::whitelisted();
            } else {
                return other(word);
            }
        } else if chains == 0 {
            chains += 1;
        } else {
            return other(word);
        }
        at += 1;
    }
    if listing {
        Judgement::whitelisted()
    } else {
        Judgement::other(format!(
            "`{program}` without `-L` or `-S` changes the rules"
        ))
    }
}

/// `iptables-save` prints the rules (`-c` with counters, `-t TABLE`); `-f FILE` writes them
/// to a file.
fn iptables_save(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let words = words(call);
    let mut at = 0;
    while at < words.len() {
        match words[at] {
            Some("-c" | "--counters" | "-V" | "--version" | "-h" | "--help") => {}
            Some("-t" | "--table" | "-M" | "--modprobe") if words.get(at + 1).is_some() => {
                at += 1;
            }
            Some("-f" | "--file") => {
                return Judgement::destroys(format!(
                    "`{} -f` writes the rules to a file, replacing it",
                    call.program
                ));
            }
            _ => {
                return Judgement::other(format!(
                    "`{}` is given an option that does not only print",
                    call.program
                ));
            }
        }
        at += 1;
    }
    Judgement::whitelisted()
}

/// `nft [-a -n -s -j -t -y -N] list ...`: the ruleset, its tables, chains, sets and maps
/// printed. `flush`, `delete` and `destroy` remove them; `-f` runs the commands a file
/// holds, `-i` reads them from the input; every other command changes the ruleset.
fn nft(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    const FLAGS: &[&str] = &[
        "-a",
        "--handle",
        "-n",
        "--numeric",
        "-s",
        "--stateless",
        "-j",
        "--json",
        "-t",
        "--terse",
        "-y",
        "--numeric-priority",
        "-N",
        "--reversedns",
        "-S",
        "--service",
        "-T",
        "--numeric-time",
        "-p",
        "--numeric-protocol",
    ];
    let words = words(call);
    let mut rest = words
        .iter()
        .skip_while(|w| w.is_some_and(|t| FLAGS.contains(&t)));
    match rest.next() {
        Some(Some("list")) if rest.all(Option::is_some) => Judgement::whitelisted(),
        Some(Some("-v" | "--version" | "-V" | "-h" | "--help")) => Judgement::whitelisted(),
        Some(Some(verb @ ("flush" | "delete" | "destroy" | "reset"))) => Judgement::destroys(
            format!("`nft {verb}` removes rules, chains, tables or their counters"),
        ),
        _ => Judgement::other(
            "`nft` without `list` changes the ruleset, or runs the commands a file holds",
        ),
    }
}

/// `firewall-cmd` asked: `--state`, `--list-*`, `--get-*`, `--query-*`, `--info-*`, with
/// `--zone=`, `--permanent` (the saved configuration), `--policy=`. Every other option
/// changes it; `--reload`/`--complete-reload` and `--remove-*` are among them.
fn firewall_cmd(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut asks = false;
    for word in call.args {
        let Some(text) = word.text() else {
            return Judgement::other(
                "`firewall-cmd` is given a word only known when the line runs",
            );
        };
        let name = text.split('=').next().unwrap_or(text);
        let reads = name == "--state"
            || ["--list-", "--get-", "--query-", "--info-"]
                .iter()
                .any(|prefix| name.starts_with(prefix));
        if reads {
            asks = true;
        } else if !matches!(
            name,
            "--zone"
                | "--permanent"
                | "--policy"
                | "--ipset"
                | "--helper"
                | "--service"
                | "-q"
                | "--quiet"
                | "--version"
                | "-h"
                | "--help"
        ) {
            if name.starts_with("--remove-") || name.starts_with("--delete-") {
                return Judgement::destroys(format!(
                    "`firewall-cmd {text}` removes firewall rules or settings"
                ));
            }
            return Judgement::other(format!(
                "`firewall-cmd {text}` changes the firewall or reloads it"
            ));
        }
    }
    if asks
        || call
            .args
            .iter()
            .all(|a| matches!(a.text(), Some("--version" | "-h" | "--help")))
    {
        Judgement::whitelisted()
    } else {
        Judgement::other("`firewall-cmd` is not asked anything it only shows")
    }
}

/// `ufw status [verbose|numbered]`, `ufw show REPORT`, `ufw version`; `reset` and
/// `disable`, `delete` remove rules or the firewall; every other command changes it.
fn ufw(_: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    match words(call).as_slice() {
        [Some("status")] | [Some("status"), Some("verbose" | "numbered")] => {
            Judgement::whitelisted()
        }
        [Some("show"), Some(_)] | [Some("version" | "--version" | "help" | "--help")] => {
            Judgement::whitelisted()
        }
        [Some(verb @ ("reset" | "disable" | "delete")), ..] => Judgement::destroys(format!(
            "`ufw {verb}` removes firewall rules or turns the firewall off"
        )),
        _ => Judgement::other("`ufw` without `status` or `show` changes the firewall"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn rules_are_listed_and_their_changes_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("iptables -L", Safe),
            ("iptables -L INPUT --line-numbers", Safe),
            ("iptables -nvL", Safe),
            ("iptables -t nat -S", Safe),
            ("ip6tables -L -n -v -x", Safe),
            ("iptables -L -Z", Destructive),
            ("iptables -F", Destructive),
            ("iptables -D INPUT 3", Destructive),
            ("iptables -A INPUT -p tcp --dport 22 -j ACCEPT", Unknown),
            ("iptables -P INPUT DROP", Unknown),
            ("iptables -L INPUT OUTPUT", Unknown),
            ("iptables -t nat", Unknown),
            ("iptables -nvLZ", Destructive),
            ("iptables -tnat -nL", Safe),
            ("iptables -I INPUT 1 -j DROP", Unknown),
            ("iptables-save", Safe),
            ("iptables-save -c -t filter", Safe),
            ("iptables-save -f rules.v4", Destructive),
            ("nft list ruleset", Safe),
            ("nft -a list table inet filter", Safe),
            ("nft flush ruleset", Destructive),
            ("nft delete table inet filter", Destructive),
            (
                "nft add rule inet filter input tcp dport 22 accept",
                Unknown,
            ),
            ("nft -f rules.nft", Unknown),
            ("firewall-cmd --list-all", Safe),
            ("firewall-cmd --zone=public --list-ports", Safe),
            ("firewall-cmd --get-active-zones", Safe),
            ("firewall-cmd --state", Safe),
            ("firewall-cmd --permanent --query-service=http", Safe),
            ("firewall-cmd --reload", Unknown),
            ("firewall-cmd --add-port=80/tcp", Unknown),
            ("firewall-cmd --list-all --add-port=80/tcp", Unknown),
            ("firewall-cmd --permanent --remove-service=ssh", Destructive),
            ("firewall-cmd --zone=public", Unknown),
            ("ufw status", Safe),
            ("ufw status numbered", Safe),
            ("ufw allow 22", Unknown),
            ("ufw reset", Destructive),
            ("ufw delete 3", Destructive),
            ("ufw disable", Destructive),
        ]);
    }
}
