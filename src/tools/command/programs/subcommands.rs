//! The one table shape for programs whose first operand is a subcommand (`git log`,
//! `kubectl delete`, `systemctl stop`): how the options before the subcommand are read, then
//! a row per subcommand saying what it is:
//!
//! - [`Does::Reads`] — read-only, its words judged against a [`Table`] row like any
//!   read-only program's;
//! - [`Does::Destroys`] — destructive whatever follows;
//! - [`Does::Judge`] — its words decide, read by a rule of its own (`git push --force`,
//!   `kubectl exec pod -- cmd`, which hands `cmd` back to the walker);
//! - [`Does::Nested`] — another level of subcommands (`docker container rm`).
//!
//! A subcommand in no row is not on the read-only whitelist, so a person confirms it. A
//! subcommand only known when the line runs (`git $VERB`) counts as the first row it could
//! be that is not read-only: destructive.
//!
//! A rule of a row is given the words after its subcommand as an [`Invocation`] whose
//! program is the subcommand as shown (`git log`), so its reasons name both; [`verb`] gives
//! the subcommand back.

use super::table::{self, Table};
use crate::tools::command::assess::{Invocation, Judgement, Walker};
use crate::tools::command::options::{self, Spec};
use crate::tools::command::words::Arg;

/// A rule of its own, given the subcommand's words.
pub(super) type VerbJudge = fn(&mut Walker<'_>, &Invocation<'_>) -> Judgement;

/// A program's subcommands. Fields left out take [`SUBCOMMANDS`]'s values.
pub(super) struct Subcommands {
    pub global: Global,
    pub verbs: &'static [Verb],
    /// Subcommands are named in any case (`redis-cli flushall`).
    pub any_case: bool,
    /// What the program does without a subcommand, completing "`program` ..." (by default
    /// it is not read-only).
    pub without: Option<&'static str>,
    /// Every operand is a subcommand of its own (`mysqladmin drop db flush-logs`), each
    /// judged; otherwise the words after the first are the subcommand's.
    pub several: bool,
    /// The subcommand a call without one runs (`systemctl` lists the units, `timedatectl`
    /// shows the status): judged as that row with no words.
    pub implied: Option<&'static str>,
    /// Short and long option names that make the program act on another machine or
    /// container (systemd's `-H user@host`, which runs ssh, and `-M container`), wherever
    /// they stand: such a call waits for a person.
    pub elsewhere: &'static [&'static str],
}

/// systemd's tools' options that reach another machine (`-H`, over ssh) or a container
/// (`-M`).
pub(super) const SYSTEMD_ELSEWHERE: &[&str] = &["H", "host", "M", "machine"];

/// How the options before the subcommand are read.
pub(super) enum Global {
    /// getopt options, those taking a value named; none of them changes the verdict.
    Options(Spec),
    /// A reader of its own: judges the options it reads and returns where the subcommand
    /// is (`git -c key=value` may make git run a program).
    Reader(fn(&mut Walker<'_>, &Invocation<'_>, &mut Judgement) -> usize),
}

/// For programs whose options before the subcommand are not read here (`pip --python`,
/// `npm --userconfig`): the subcommand is the first word that is not an option, and any
/// option before it makes the call wait.
pub(super) const fn options_before_wait() -> Global {
    Global::Reader(first_word_is_the_subcommand)
}

fn first_word_is_the_subcommand(
    _walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    judgement: &mut Judgement,
) -> usize {
    let at = invocation
        .args
        .iter()
        .position(|arg| !arg.text().is_some_and(|text| text.starts_with('-')))
        .unwrap_or(invocation.args.len());
    if at > 0 {
        judgement.unknown(format!(
            "`{}` is given options before its subcommand, which are not read",
            invocation.program
        ));
    }
    at
}

/// Whether `arg` may be one of the option `names` (single letters as `-X`, alone or in a
/// cluster of short options; longer names as `--name` or `--name=value`). A word only
/// known when the line runs may be anything.
fn names_one_of(arg: &Arg, names: &[&str]) -> bool {
    if names.is_empty() {
        return false;
    }
    arg.may_be(|text| {
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            names.iter().any(|n| n.len() > 1 && *n == name)
        } else if let Some(short) = text.strip_prefix('-') {
            short
                .chars()
                .any(|c| names.iter().any(|n| n.len() == 1 && n.starts_with(c)))
        } else {
            false
        }
    })
}

/// One row: a subcommand under each of its names, and what it is.
pub(super) struct Verb {
    /// A name ending in `*` stands for every name it begins (`flush*`).
    pub names: &'static [&'static str],
    pub does: Does,
}

pub(super) enum Does {
    /// Only reads; its options and operands as a table row.
    Reads(&'static Table),
    /// Destroys whatever follows; the text completes "`program subcommand` ...".
    Destroys(&'static str),
    /// Its words decide.
    Judge(VerbJudge),
    /// Another level of subcommands.
    Nested(&'static Subcommands),
}

impl Verb {
    pub(super) const fn reads(names: &'static [&'static str], row: &'static Table) -> Self {
        Self {
            names,
            does: Does::Reads(row),
        }
    }

    pub(super) const fn destroys(names: &'static [&'static str], what: &'static str) -> Self {
        Self {
            names,
            does: Does::Destroys(what),
        }
    }

    pub(super) const fn judged(names: &'static [&'static str], judge: VerbJudge) -> Self {
        Self {
            names,
            does: Does::Judge(judge),
        }
    }

    pub(super) const fn nested(
        names: &'static [&'static str],
        level: &'static Subcommands,
    ) -> Self {
        Self {
            names,
            does: Does::Nested(level),
        }
    }

    fn named(&self, name: &str, any_case: bool) -> bool {
        self.names.iter().any(|n| match n.strip_suffix('*') {
            Some(prefix) if any_case => name
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix)),
            Some(prefix) => name.starts_with(prefix),
            None if any_case => name.eq_ignore_ascii_case(n),
            None => name == *n,
        })
    }
}

/// No options before the subcommand, no rows, one subcommand.
pub(super) const SUBCOMMANDS: Subcommands = Subcommands {
    global: Global::Options(Spec::NONE),
    verbs: &[],
    any_case: false,
    without: None,
    several: false,
    implied: None,
    elsewhere: &[],
};

/// The name among `names` that `given` stands for, for programs that take any unambiguous
/// prefix of a subcommand (`nmcli c s`, `btrfs fi sh`): itself, or the one name it begins;
/// `None` where none or several fit. `names` must be the program's whole list at that
/// level, so that a prefix the program finds ambiguous is ambiguous here too.
pub(super) fn by_prefix(given: &str, names: &[&'static str]) -> Option<&'static str> {
    if let Some(exact) = names.iter().find(|name| **name == given) {
        return Some(exact);
    }
    let mut found = names.iter().filter(|name| name.starts_with(given));
    match (found.next(), found.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}

/// The subcommand a row's rule was given: the last word of its program as shown.
pub(super) fn verb<'a>(call: &Invocation<'a>) -> &'a str {
    call.program.rsplit(' ').next().unwrap_or(call.program)
}

/// Judges a program with subcommands against its table.
pub(super) fn judge(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    table: &Subcommands,
) -> Judgement {
    let program = invocation.program;
    let args = invocation.args;
    let mut judgement = Judgement::whitelisted();
    if let Some(word) = args.iter().find(|a| names_one_of(a, table.elsewhere)) {
        judgement.unknown(format!(
            "`{program} {}` acts on another machine or container",
            word.raw
        ));
    }
    let at = match &table.global {
        Global::Options(spec) => {
            let items = options::parse(args, spec);
            options::operands(&items)
                .first()
                .and_then(|first| args.iter().position(|a| std::ptr::eq(a, *first)))
                .unwrap_or(args.len())
        }
        Global::Reader(read) => read(walker, invocation, &mut judgement),
    };
    if at >= args.len() {
        if let Some(verb) = table.implied
            && let Some(row) = table.verbs.iter().find(|v| v.named(verb, table.any_case))
        {
            let shown = format!("{program} {verb}");
            let call = Invocation {
                program: &shown,
                args: &[],
                stdin: invocation.stdin,
                depth: invocation.depth,
            };
            merge(&mut judgement, run(walker, &call, row));
            return judgement;
        }
        judgement.whitelisted = false;
        judgement.unknown(match table.without {
            Some(what) => format!("`{program}` {what}"),
            None => format!("`{program}` without a subcommand is not a read-only command"),
        });
        return judgement;
    }
    let verbs: Vec<usize> = if table.several {
        let spec = match &table.global {
            Global::Options(spec) => spec,
            Global::Reader(_) => &Spec::NONE,
        };
        let items = options::parse(&args[at..], spec);
        options::operands(&items)
            .iter()
            .filter_map(|word| args.iter().position(|a| std::ptr::eq(a, *word)))
            .collect()
    } else {
        vec![at]
    };
    for at in verbs {
        let verdict = one(walker, invocation, table, at);
        merge(&mut judgement, verdict);
    }
    judgement
}

/// The subcommand at `at` with the words after it.
fn one(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    table: &Subcommands,
    at: usize,
) -> Judgement {
    let program = invocation.program;
    let word = &invocation.args[at];
    let Some(name) = word.text().filter(|_| word.pattern.is_none()) else {
        return unseen(program, &word.raw, table);
    };
    let shown = format!("{program} {name}");
    let Some(row) = table.verbs.iter().find(|v| v.named(name, table.any_case)) else {
        return Judgement::not_whitelisted(&shown);
    };
    let call = Invocation {
        program: &shown,
        args: &invocation.args[at + 1..],
        stdin: invocation.stdin,
        depth: invocation.depth,
    };
    run(walker, &call, row)
}

/// A row's verdict on `call`, whose program is the subcommand as shown.
fn run(walker: &mut Walker<'_>, call: &Invocation<'_>, row: &Verb) -> Judgement {
    match &row.does {
        Does::Reads(table) => table::judge(walker, call, table),
        Does::Destroys(what) => Judgement::destroys(format!("`{}` {what}", call.program)),
        Does::Judge(rule) => rule(walker, call),
        Does::Nested(level) => judge(walker, call, level),
    }
}

/// A subcommand only known when the line runs: the first row it may be that is not only
/// reading makes it destructive.
fn unseen(program: &str, raw: &str, table: &Subcommands) -> Judgement {
    let risky = table
        .verbs
        .iter()
        .filter(|v| !matches!(v.does, Does::Reads(_)))
        .flat_map(|v| v.names)
        .next();
    match risky {
        Some(name) => Judgement::destroys(format!(
            "`{program} {raw}` could be `{program} {}` when the line runs",
            name.trim_end_matches('*')
        )),
        None => Judgement::not_whitelisted(&format!("{program} {raw}")),
    }
}

/// Adds what `from` says to `into`: whitelisted only if both are; the first reasons kept.
fn merge(into: &mut Judgement, from: Judgement) {
    into.whitelisted &= from.whitelisted;
    if let Some(reason) = from.destructive {
        into.destructive(reason);
    }
    if let Some(reason) = from.unknown {
        into.unknown(reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_found_by_name_prefix_and_case_as_its_table_says() {
        let exact = Verb::destroys(&["rm"], "removes");
        assert!(exact.named("rm", false));
        assert!(!exact.named("RM", false) && exact.named("RM", true));
        assert!(!exact.named("rmi", false));
        let prefix = Verb::destroys(&["flush*"], "flushes");
        assert!(prefix.named("flush-logs", false) && prefix.named("flush", false));
        assert!(!prefix.named("FLUSHALL", false) && prefix.named("FLUSHALL", true));
        assert!(!prefix.named("flus", true));
    }
}
