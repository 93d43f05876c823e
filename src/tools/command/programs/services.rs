//! Servers and desktop tools asked what they hold, and configuration checked by the program
//! that reads it: `asterisk -rx "sip show peers"` (a `show` command of the running PBX),
//! `apachectl configtest`/`-S`/`-M`, `nginx -t`, `promtool check config FILE`, `wmctrl -l`
//! (the X server's windows), `multipass list`/`info`, `zoneadm list`; and local listings:
//! `cheat` showing a cheatsheet, `cpan -l`, `ansible-galaxy list`, `run-parts --list`/
//! `--test`.
//!
//! Each only prints; their other forms (reloading a server, closing a window, editing or
//! removing a cheatsheet, running the scripts of a directory) wait, and the configuration
//! checks take only the system's own configuration: one named on the line (`nginx -c`,
//! `apachectl -f`) may load modules, code of its author's. A line without a click reaches
//! no daemon's socket, no X server and no system configuration outside the readable set,
//! so most of these fail there and say so.

use super::table::check_paths;
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::words::Arg;

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(&["asterisk"], Rule::Judge(|_, call| asterisk(call))),
    Program::new(
        &["apachectl", "apache2ctl"],
        Rule::Judge(|_, call| apachectl(call)),
    ),
    Program::new(&["nginx"], Rule::Judge(|_, call| nginx(call))),
    Program::new(&["promtool"], Rule::Judge(promtool)),
    Program::new(&["wmctrl"], Rule::Judge(|_, call| wmctrl(call))),
    Program::new(&["multipass"], Rule::Judge(|_, call| multipass(call))),
    Program::new(&["zoneadm"], Rule::Judge(|_, call| zoneadm(call))),
    Program::new(&["cheat"], Rule::Judge(|_, call| cheat(call))),
    Program::new(&["cpan"], Rule::Judge(|_, call| cpan(call))),
    Program::new(
        &["ansible-galaxy"],
        Rule::Judge(|_, call| ansible_galaxy(call)),
    ),
    Program::new(&["run-parts"], Rule::Judge(run_parts)),
];

/// The call's words as the line shows them, or `None` where one is only known when the line
/// runs or is a pattern.
fn words<'a>(call: &'a Invocation<'_>) -> Option<Vec<&'a str>> {
    call.args
        .iter()
        .map(|arg| arg.text().filter(|_| arg.pattern.is_none() && !arg.tilde))
        .collect()
}

/// Read-only where `reads` says so of the words; otherwise "`program` ..." with `what`.
fn judged(call: &Invocation<'_>, reads: impl Fn(&[&str]) -> bool, what: &str) -> Judgement {
    match words(call) {
        Some(words) if reads(&words) => Judgement::whitelisted(),
        Some(_) => Judgement::other(format!("`{}` {what}", call.program)),
        None => Judgement::not_whitelisted(call.program),
    }
}

/// `asterisk -rx "CMD"` (or `-r -x`, `-x`, with `-v`/`-q`): CMD sent to the running PBX's
/// console, read-only where it is a `show` command (`core show channels`, `sip show
/// peers`), not of the internal database (`database show`, which may hold credentials).
fn asterisk(call: &Invocation<'_>) -> Judgement {
    // Stopping the PBX (`core stop now`, `core stop gracefully`) ends every call it carries.
    let stops = call.args.iter().any(|arg| {
        arg.text()
            .is_some_and(|t| t.split_whitespace().take(2).eq(["core", "stop"]))
    });
    if stops {
        return Judgement::destroys(
            "`asterisk -rx 'core stop ...'` stops the PBX and every call it carries",
        );
    }
    judged(
        call,
        |words| {
            let mut command = None;
            let mut rest = words.iter();
            while let Some(word) = rest.next() {
                let flags = match word.strip_prefix('-') {
                    Some(flags) if !flags.is_empty() => flags,
                    _ => return false,
                };
                if !flags.chars().all(|c| matches!(c, 'r' | 'x' | 'v' | 'q')) {
                    return false;
                }
                if flags.ends_with('x') {
                    command = rest.next();
                } else if flags.contains('x') {
                    return false;
                }
            }
            command.is_some_and(|command| {
                let parts: Vec<&str> = command.split_whitespace().collect();
                let show = parts.first() == Some(&"show") || parts.get(1) == Some(&"show");
                show && parts.first() != Some(&"database")
            })
        },
        "is given a command for the PBX other than a `show` command",
    )
}

/// `apachectl configtest`, `-t` (with `-D DUMP_...`), `-S`, `-M`, `-v`, `-V`, `-l`, `-L`:
/// the system's configuration checked or described.
fn apachectl(call: &Invocation<'_>) -> Judgement {
    let stops = call
        .args
        .iter()
        .any(|arg| matches!(arg.text(), Some("stop" | "graceful-stop")));
    if stops {
        return Judgement::destroys(format!("`{} stop` stops the web server", call.program));
    }
    judged(
        call,
        |words| match words {
            ["configtest" | "-t" | "-S" | "-M" | "-v" | "-V" | "-l" | "-L"] => true,
            ["-t", "-D", dump] => dump.starts_with("DUMP_"),
            _ => false,
        },
        "starts, stops or reconfigures the server, or reads a configuration the line names",
    )
}

/// `nginx -t` (with `-q`): the system's configuration tested.
fn nginx(call: &Invocation<'_>) -> Judgement {
    let words: Vec<Option<&str>> = call.args.iter().map(Arg::text).collect();
    let stops = words
        .windows(2)
        .any(|pair| matches!(pair, [Some("-s"), Some("stop" | "quit")]));
    if stops {
        return Judgement::destroys("`nginx -s stop` stops the web server");
    }
    judged(
        call,
        |words| {
            matches!(
                words,
                ["-t"] | ["-q", "-t"] | ["-t", "-q"] | ["-tq" | "-qt"]
            )
        },
        "starts or signals the server, or reads a configuration the line names",
    )
}

/// `promtool check config|rules|metrics|web-config FILE...`: the files parsed and checked.
fn promtool(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let mut judgement = judged(
        call,
        |words| {
            matches!(
                words,
                ["check", "config" | "rules" | "web-config", _, ..] | ["check", "metrics"]
            ) && words[2..].iter().all(|w| !w.starts_with('-'))
        },
        "is given something other than `check` of files",
    );
    if judgement.whitelisted {
        let files: Vec<&Arg> = call.args.iter().skip(2).collect();
        check_paths(walker, &mut judgement, call.program, &files);
    }
    judgement
}

/// `wmctrl -l`/`-d`/`-m` (with `-p`, `-G`, `-x`, `-v`): the windows, desktops and window
/// manager listed.
fn wmctrl(call: &Invocation<'_>) -> Judgement {
    judged(
        call,
        |words| {
            let flags: String = words
                .iter()
                .map(|w| {
                    w.strip_prefix('-')
                        .filter(|f| !f.is_empty() && !f.starts_with('-'))
                })
                .collect::<Option<String>>()
                .unwrap_or_default();
            flags.chars().any(|c| matches!(c, 'l' | 'd' | 'm'))
                && flags
                    .chars()
                    .all(|c| matches!(c, 'l' | 'd' | 'm' | 'p' | 'G' | 'x' | 'v'))
        },
        "acts on windows or desktops",
    )
}

/// `multipass` alone (its usage), `list`/`ls`, `info`, `version`, `networks`, `aliases`.
fn multipass(call: &Invocation<'_>) -> Judgement {
    judged(
        call,
        |words| match words.split_first() {
            None => true,
            Some((verb, rest)) => {
                matches!(
                    *verb,
                    "list" | "ls" | "info" | "version" | "networks" | "aliases"
                ) && rest.iter().all(|w| {
                    !w.starts_with('-')
                        || matches!(*w, "--all" | "--format" | "csv" | "json" | "yaml" | "table")
                })
            }
        },
        "starts, changes or removes instances",
    )
}

/// `zoneadm list` (with `-c`, `-i`, `-p`, `-v`) and `zoneadm -z ZONE verify`.
fn zoneadm(call: &Invocation<'_>) -> Judgement {
    judged(
        call,
        |words| match words {
            ["list", flags @ ..] => flags.iter().all(|flag| {
                flag.strip_prefix('-').is_some_and(|f| {
                    !f.is_empty() && f.chars().all(|c| matches!(c, 'c' | 'i' | 'p' | 'v'))
                })
            }),
            ["-z", zone, "verify"] => !zone.starts_with('-'),
            _ => false,
        },
        "installs, boots, halts or removes zones",
    )
}

/// `cheat NAME` and its listing and searching options; not `-e`/`--edit`, which opens an
/// editor on the sheet, nor `--rm`, which deletes it.
fn cheat(call: &Invocation<'_>) -> Judgement {
    const FLAGS: &[&str] = &[
        "-l",
        "--list",
        "-r",
        "--regex",
        "-c",
        "--colorize",
        "-T",
        "--tags",
        "-d",
        "--directories",
        "-v",
        "--version",
        "-a",
        "--all",
        "--conf",
        "--init",
    ];
    const VALUED: &[&str] = &["-s", "--search", "-t", "--tag", "-p", "--path"];
    judged(
        call,
        |words| {
            let mut names = 0;
            let mut rest = words.iter();
            while let Some(word) = rest.next() {
                if VALUED.contains(word) {
                    if rest.next().is_none() {
                        return false;
                    }
                } else if word.starts_with('-') {
                    let valued = VALUED
                        .iter()
                        .any(|v| v.starts_with("--") && word.starts_with(&format!("{v}=")));
                    if !FLAGS.contains(word) && !valued {
                        return false;
                    }
                } else {
                    names += 1;
                }
            }
            names <= 1
        },
        "edits or removes a cheatsheet",
    )
}

/// `cpan -l` (the installed modules) and `cpan -v`.
fn cpan(call: &Invocation<'_>) -> Judgement {
    judged(
        call,
        |words| matches!(words, ["-l"] | ["-v"]),
        "installs, builds or fetches modules",
    )
}

/// `ansible-galaxy list`, `role list`, `collection list` (with `--format`).
fn ansible_galaxy(call: &Invocation<'_>) -> Judgement {
    judged(
        call,
        |words| {
            let rest = match words {
                ["list", rest @ ..] | ["role" | "collection", "list", rest @ ..] => rest,
                _ => return false,
            };
            match rest {
                [] => true,
                ["--format", format] => matches!(*format, "human" | "yaml" | "json"),
                _ => false,
            }
        },
        "installs, removes, builds or publishes roles and collections",
    )
}

/// `run-parts --list` or `--test` (the scripts it would run, named; none runs), with
/// `--regex`, `--lsbsysinit`, `--reverse`, `-v`, and the directory, checked as a path.
fn run_parts(walker: &mut Walker<'_>, call: &Invocation<'_>) -> Judgement {
    let Some(words) = words(call) else {
        return Judgement::not_whitelisted(call.program);
    };
    let mut directories = Vec::new();
    let mut names_only = false;
    let mut rest = call.args.iter().zip(&words);
    while let Some((arg, word)) = rest.next() {
        match *word {
            "--list" | "--test" => names_only = true,
            "--lsbsysinit" | "--reverse" | "-v" | "--verbose" | "--" => {}
            "--regex" => {
                if rest.next().is_none() {
                    names_only = false;
                    break;
                }
            }
            w if w.starts_with("--regex=") => {}
            w if w.starts_with('-') => {
                names_only = false;
                break;
            }
            _ => directories.push(arg),
        }
    }
    if !names_only || directories.len() != 1 {
        return Judgement::other(
            "`run-parts` without `--list` or `--test` runs every script of the directory",
        );
    }
    let mut judgement = Judgement::whitelisted();
    check_paths(walker, &mut judgement, call.program, &directories);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn servers_and_tools_report_and_their_other_forms_wait() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("asterisk -rx \"sip show peers\"", Safe),
            ("asterisk -r -x 'core show channels'", Safe),
            ("asterisk -rvx 'pjsip show endpoints'", Safe),
            ("asterisk -rx 'core restart now'", NotSafe),
            ("asterisk -rx 'core stop now'", Destructive),
            ("apachectl -k stop", Destructive),
            ("nginx -s quit", Destructive),
            ("nginx -s reopen", NotSafe),
            ("asterisk -rx 'database show'", NotSafe),
            ("asterisk -rx 'channel request hangup all'", NotSafe),
            ("asterisk -r", NotSafe),
            ("asterisk -C my.conf -rx 'sip show peers'", NotSafe),
            ("asterisk -xr 'sip show peers'", NotSafe),
            ("apachectl configtest", Safe),
            ("apache2ctl -S", Safe),
            ("apachectl -t -D DUMP_MODULES", Safe),
            ("apachectl graceful", NotSafe),
            ("apachectl -f ./httpd.conf -t", NotSafe),
            ("nginx -t", Safe),
            ("nginx -s reload", NotSafe),
            ("nginx -t -c nginx.conf", NotSafe),
            ("promtool check config prometheus.yml", Safe),
            ("promtool check rules a.yml b.yml", Safe),
            (
                "promtool check config /etc/prometheus/prometheus.yml",
                NotSafe,
            ),
            (
                "promtool tsdb create-blocks-from openmetrics x data",
                NotSafe,
            ),
            ("wmctrl -l", Safe),
            ("wmctrl -lpG", Safe),
            ("wmctrl -d", Safe),
            ("wmctrl -c Firefox", NotSafe),
            ("wmctrl -l -c Firefox", NotSafe),
            ("multipass", Safe),
            ("multipass list --format json", Safe),
            ("multipass info --all", Safe),
            ("multipass delete vm", NotSafe),
            ("multipass exec vm -- ls", NotSafe),
            ("zoneadm list -cv", Safe),
            ("zoneadm -z public verify", Safe),
            ("zoneadm -z public halt", NotSafe),
            ("cheat tar", Safe),
            ("cheat -l", Safe),
            ("cheat -s tar", Safe),
            ("cheat -v", Safe),
            ("cheat -e tar", NotSafe),
            ("cheat --rm tar", NotSafe),
            ("cheat tar zip", NotSafe),
            ("cpan -l", Safe),
            ("cpan -i JSON::PP", NotSafe),
            ("ansible-galaxy list", Safe),
            ("ansible-galaxy collection list --format json", Safe),
            ("ansible-galaxy install geerlingguy.nginx", NotSafe),
            ("run-parts --list --regex '^p.*d$' src", Safe),
            ("run-parts --test src", Safe),
            ("run-parts src", NotSafe),
            ("run-parts --list /etc", NotSafe),
            ("run-parts --list --arg=x src", NotSafe),
        ]);
    }
}
