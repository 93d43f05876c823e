//! Programs that list processes and what they hold: `ps`, `pgrep`, `pidof`, `pstree`, the
//! batch form of `top`, `lsof`, `lsfd`, and `lsns`, `lslocks`, `lsipc`, `ipcs`. None of them writes or signals anything in the forms let
//! through (`pkill` and `kill` are in `system.rs`), and what they print is what the line can
//! see of `/proc`: in a line's view a `/proc` of its own with `hidepid=invisible`, where a
//! sandboxed process sees only its own descendants (Landlock refuses to trace any other), so
//! `ps aux` lists the line's processes and nothing else, `lsof` only their open files. Each
//! program here is marked as listing processes: where a line cannot get a view (a bot not run
//! as root) lines share the machine's `/proc`, and the runner refuses such a line without a
//! click, since every process's command line would be on show.
//!
//! `top` ends on its own only in its batch form with a count (`top -b -n 1`); `lsof -r`
//! repeats until stopped and `lsof -D` builds a device cache file, so both wait for a person.

use super::table::{Effect, Operands, Refusal, TABLE, Table, check_paths};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        // Namespaces, file locks and IPC objects, each shown with the processes that hold
        // or made them.
        &["lsns", "lslocks", "lsipc", "ipcs"],
        Rule::Table(&Table {
            spec: Spec::values("topi", &["type", "output", "pid", "id"]),
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(
        &["ps"],
        Rule::Table(&Table {
            spec: Spec::values(
                "CGgkOopqstUu",
                &[
                    "cols",
                    "columns",
                    "context",
                    "format",
                    "group",
                    "Group",
                    "pid",
                    "ppid",
                    "quick-pid",
                    "rows",
                    "lines",
                    "sid",
                    "sort",
                    "tty",
                    "user",
                    "User",
                    "width",
                ],
            )
            .exact(),
            // BSD options (`aux`) and lists of fields are words of their own.
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(
        &["pgrep"],
        Rule::Table(&Table {
            spec: Spec::values(
                "dgGPstuUF",
                &[
                    "delimiter",
                    "pgroup",
                    "group",
                    "parent",
                    "session",
                    "terminal",
                    "euid",
                    "uid",
                    "pidfile",
                    "ns",
                    "nslist",
                    "older",
                    "runstates",
                ],
            ),
            operands: Operands::Text,
            path_options: &["F", "pidfile"],
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(
        &["pidof"],
        Rule::Table(&Table {
            spec: Spec::values("od", &["omit-pid", "separator"]),
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(
        &["pstree"],
        Rule::Table(&Table {
            spec: Spec::values("H", &["highlight-pid", "ns-sort"]),
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(
        // A process's memory map and its working directory, by number. `pmap -n`/`-N`
        // write a configuration file (`-N` where it is told); `-C` reads one.
        &["pmap", "pwdx"],
        Rule::Table(&Table {
            spec: Spec::values("ACN", &["range", "read-rc-from", "create-rc-to"]),
            operands: Operands::Text,
            path_options: &["C", "read-rc-from"],
            refused: &[Refusal {
                options: &["n", "N", "create-rc", "create-rc-to"],
                effect: Effect::Writes,
                what: "writes a configuration file",
            }],
            ..TABLE
        }),
    )
    .listing_processes(),
    Program::new(&["top"], Rule::Judge(top)).listing_processes(),
    Program::new(&["lsof"], Rule::Judge(lsof)).listing_processes(),
    // util-linux's `lsfd`: the files the processes hold, as columns; it writes nothing.
    Program::new(
        &["lsfd"],
        Rule::Table(&Table {
            spec: Spec::values("opQC", &["output", "pid", "filter", "counter"]),
            operands: Operands::Text,
            ..TABLE
        }),
    )
    .listing_processes(),
];

/// `top`'s options that take a value (`-n 1`, `-d 0.5`, `-p 1,2`); `-w` may have one
/// attached.
const TOP: Spec = Spec::values("dEenopuU", &[]).optional("w");

/// `top -b -n N` prints N screens and ends; `top -h`/`-v` print help or the version. Any
/// other form runs until it is stopped (and reads commands from a terminal: `k` kills).
fn top(_: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &TOP);
    let has = |flag: char| items.iter().any(|item| item.is(Some(flag), None, false));
    if let Some(word) = super::table::opaque(&items) {
        return Judgement::other(format!(
            "`top` is given `{}`, only known when the line runs",
            word.raw
        ));
    }
    if let Some(word) = options::operands(&items).first() {
        return Judgement::other(format!("`top` does not take `{}`", word.raw));
    }
    if (has('b') && has('n')) || ((has('h') || has('v')) && !has('b')) {
        Judgement::whitelisted()
    } else {
        Judgement::other(
            "`top` runs until it is stopped; only its batch form with a count (`top -b -n 1`) ends on its own",
        )
    }
}

/// `lsof`: options begin with `-` or `+` and take their value from the next word when it
/// does not begin with either, so every other word is checked as a path (a value such as a
/// user name or `TCP:80` stays inside the workspace as a relative path). Refused: `-r`/`+r`
/// (repeats until stopped) and `-D` (builds or updates a device cache file).
fn lsof(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let mut paths = Vec::new();
    let mut options_ended = false;
    for word in invocation.args {
        let Some(text) = word.text() else {
            judgement.unknown(format!(
                "`lsof` is given `{}`, only known when the line runs, which may be `-r` (repeat until stopped)",
                word.raw
            ));
            continue;
        };
        if options_ended || !(text.starts_with('-') || text.starts_with('+')) || text.len() < 2 {
            paths.push(word);
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        let letters = &text[1..];
        if letters.contains('r') {
            judgement.unknown(format!(
                "`lsof {text}` repeats its listing until it is stopped"
            ));
        }
        if text.starts_with('-') && letters.contains('D') {
            judgement.unknown(format!(
                "`lsof {text}` builds or updates a device cache file"
            ));
        }
    }
    check_paths(walker, &mut judgement, "lsof", &paths);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn process_listers_read_and_their_dangerous_neighbours_wait() {
        use crate::tools::command::tests::Expect::{Destructive, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("ps", Safe),
            ("lsfd", Safe),
            ("lsfd -p 1 -o PID,FD,NAME -J", Safe),
            ("lsfd -Q 'FD == 1' | head", Safe),
            ("lsfd > fds.txt", Destructive),
            ("ps aux", Safe),
            ("ps axjf", Safe),
            ("ps -ef", Safe),
            ("ps -eo pid,user,command", Safe),
            ("ps -aufoouser", Safe),
            ("ps --sort=-%mem -eo pid,rss", Safe),
            ("ps aux | grep '[h]ttpd'", Safe),
            ("pgrep error", Safe),
            ("pgrep -u root named", Safe),
            ("pgrep -F run/app.pid", Safe),
            ("pgrep -F /run/sshd.pid", Unknown),
            ("pidof sshd", Safe),
            ("pstree -p", Safe),
            ("pkill error", Destructive),
            ("pkill -u root named", Destructive),
            ("kill $(pgrep error)", Destructive),
            ("top -b -n 1", Safe),
            ("top -bn1", Safe),
            ("top -b -n 2 -d 0.5", Safe),
            ("top -h", Safe),
            ("top", Unknown),
            ("top -b", Unknown),
            ("top -n 1", Unknown),
            ("top -b -n 1 $X", Unknown),
            ("lsof", Safe),
            ("lsof -i", Safe),
            ("lsof -Pnl +M -i4", Safe),
            ("lsof -i TCP:80", Safe),
            ("lsof -i@192.168.1.5", Safe),
            ("lsof -u alice", Safe),
            ("lsof -p 1234", Safe),
            ("lsof src", Safe),
            ("lsof -i 4 -a -p 1234", Safe),
            ("lsof /etc/passwd", Unknown),
            ("lsof +D /home", Unknown),
            ("lsof -r 1", Unknown),
            ("lsof +r 1 -i", Unknown),
            ("lsof -nPr2", Unknown),
            ("lsof -D b", Unknown),
            ("lsof $OPTS", Unknown),
        ]);
    }
}
