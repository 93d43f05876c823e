//! Programs that run another command given as their operands: privilege wrappers (`sudo`,
//! `su`, `doas`), process wrappers (`env`, `nice`, `timeout`, `nohup`, `strace`, `jc`, ...) as
//! [`Wrapper`] rows, and `xargs`, `watch`, `parallel`, `at`/`batch` with rules of their own.
//!
//! Each wrapper's own options are read with a small table of the options that take a value,
//! so `timeout -s KILL 5 rm x` finds `rm`. The wrapped command is judged like any other,
//! one level deeper.

use super::shells::{
    asks_about_names, is_name, joined, names_question, program_variable, run_joined,
    script_from_input,
};
use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::options::{self, Item, Spec};
use crate::tools::command::words::Arg;

/// How a wrapper reads its own options and where its command starts.
pub(super) struct Wrapper {
    spec: Spec,
    /// Operands between the options and the command (`timeout`'s duration, `chroot`'s root).
    skip: usize,
    /// Options after which no command runs (`ionice -p`, `command -v`).
    no_command: &'static [&'static str],
    /// Options after which no command runs and the wrapper only prints what it knows
    /// (`numactl -H`).
    shows: &'static [&'static str],
    /// Options whose value is a script handed to a shell (`flock -c`).
    script_options: &'static [&'static str],
    /// Options whose value is a file the wrapper writes (`time -o`, `strace -o`).
    writes: &'static [&'static str],
    /// Options that change what the command does or where it runs (`env -C`, `strace -E`,
    /// `strace --inject`): the line waits for a person.
    alters: &'static [&'static str],
    /// Skips `NAME=value` words before the command (`env`, `sudo`).
    assignments: bool,
    /// Runs the command with other privileges: destructive by itself.
    privileged: bool,
    /// Its operands are not a command (`su user`).
    runs_operands: bool,
    /// Adds nothing of its own (`timeout`, `nice`): the line is as safe as its command.
    transparent: bool,
    /// Given no command, it reads its input and prints (`jc --ls`).
    filters_alone: bool,
}

const WRAPPER: Wrapper = Wrapper {
    spec: Spec::NONE,
    skip: 0,
    no_command: &[],
    shows: &[],
    script_options: &[],
    writes: &[],
    alters: &[],
    assignments: false,
    privileged: false,
    runs_operands: true,
    transparent: false,
    filters_alone: false,
};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(
        &["sudo"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values(
                "ugCDprtTU",
                &[
                    "user",
                    "group",
                    "close-from",
                    "chdir",
                    "prompt",
                    "role",
                    "type",
                    "command-timeout",
                    "other-user",
                    "host",
                ],
            ),
            no_command: &["e", "edit", "l", "list", "v", "validate", "V", "version"],
            assignments: true,
            privileged: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["doas"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("uC", &[]),
            privileged: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["pkexec"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("", &["user"]),
            privileged: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["su", "runuser"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values(
                "cgGsw",
                &[
                    "command",
                    "group",
                    "supp-group",
                    "shell",
                    "whitelist-environment",
                ],
            ),
            script_options: &["c", "command"],
            privileged: true,
            runs_operands: false,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["env"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("uCS", &["unset", "chdir", "split-string"]),
            alters: &["C", "chdir"],
            assignments: true,
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        // Runs the command with resource limits of its own (`--cpu=10`); given `--pid` it
        // reads or sets another process's limits instead.
        &["prlimit"],
        Rule::Judge(prlimit),
    )
    .running_code(),
    Program::new(
        // Runs the command with its memory and CPUs placed on NUMA nodes; `-H` shows the
        // nodes and `-s` the policy, and run nothing. The forms that set the policy of a
        // shared memory segment or a file wait.
        &["numactl"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values(
                "iNmpPCwSfLoI",
                &[
                    "interleave",
                    "cpunodebind",
                    "membind",
                    "preferred",
                    "preferred-many",
                    "physcpubind",
                    "weighted-interleave",
                    "shm",
                    "file",
                    "length",
                    "offset",
                    "shmid",
                ],
            ),
            shows: &["H", "hardware", "s", "show"],
            alters: &[
                "S",
                "shm",
                "f",
                "file",
                "L",
                "length",
                "o",
                "offset",
                "I",
                "shmid",
                "touch",
                "dump",
                "dump-nodes",
                "strict",
            ],
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        // jc turns a command's output into JSON: it reads its input with the parser an
        // option names (`ls -l | jc --ls`), or runs the command that follows its options
        // and parses that (`jc ls -l`, judged as `ls -l`).
        &["jc"],
        Rule::Wraps(&Wrapper {
            transparent: true,
            filters_alone: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        // moreutils: `chronic` shows the command's output only when it fails, `ifne` runs
        // it only when its input is not empty (`-n`: only when it is).
        &["chronic", "ifne"],
        Rule::Wraps(&Wrapper {
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["nice", "gnice"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("n", &["adjustment"]),
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &[
            "setsid",
            "builtin",
            "busybox",
            "toybox",
            "unbuffer",
            "proxychains",
            "proxychains4",
            "torsocks",
            "fakeroot",
            "dbus-run-session",
        ],
        Rule::Wraps(&Wrapper { ..WRAPPER }),
    )
    .running_code(),
    Program::new(
        // Runs the command deaf to hangups, its output into `nohup.out` only when that
        // output is a terminal (a line's never is); the line's end still kills it.
        &["nohup"],
        Rule::Wraps(&Wrapper {
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        // Colours another command's output by the patterns of its configuration (`-c`).
        &["grc"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("c", &["config", "colour"]),
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["timeout", "gtimeout"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("sk", &["signal", "kill-after"]),
            skip: 1,
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["time"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("fo", &["format", "output"]),
            writes: &["o", "output"],
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["stdbuf"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("ioe", &["input", "output", "error"]),
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["ionice"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
            no_command: &["p", "pid", "P", "pgid", "u", "uid"],
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(&["command"], Rule::Judge(command)).running_code(),
    Program::new(
        &["exec"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("a", &[]),
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["chroot"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("", &["userspec", "groups"]),
            skip: 1,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["flock"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("wEc", &["timeout", "conflict-exit-code", "command"]),
            skip: 1,
            script_options: &["c", "command"],
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["taskset"],
        Rule::Wraps(&Wrapper {
            skip: 1,
            no_command: &["p", "pid"],
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["chrt"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("T", &["sched-runtime", "sched-deadline", "sched-period"]),
            skip: 1,
            no_command: &["p", "pid"],
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["strace", "ltrace"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values(
                "eoOpPsSuUXIbaEnA",
                &[
                    "output", "attach", "user", "trace", "env", "inject", "fault",
                ],
            ),
            no_command: &["p", "attach"],
            writes: &["o", "output"],
            alters: &["E", "env", "u", "user", "inject", "fault"],
            transparent: true,
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(
        &["caffeinate"],
        Rule::Wraps(&Wrapper {
            spec: Spec::values("tw", &[]),
            ..WRAPPER
        }),
    )
    .running_code(),
    Program::new(&["xargs"], Rule::Judge(xargs)).running_code(),
    Program::new(&["watch"], Rule::Judge(watch)).running_code(),
    Program::new(&["at", "batch"], Rule::Judge(at)).running_code(),
    Program::new(&["parallel"], Rule::Judge(parallel)).running_code(),
];

/// `command -v NAME` asks what NAME runs (`names.rs`), which the runner answers; `command
/// NAME args` runs NAME, judged one level deeper.
fn command(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    if asks_about_names(invocation) {
        return names_question(walker, invocation);
    }
    wrapped(
        walker,
        invocation,
        &Wrapper {
            no_command: &["v", "V"],
            ..WRAPPER
        },
    )
}

/// `prlimit` running a command with limits of its own, as a wrapper; or given `--pid`,
/// showing that process's limits (every limit, or those named without a value: `--nofile`)
/// — setting one (`--nofile=1024`) waits. In the walls another process is not seen, so
/// there it finds none.
fn prlimit(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    const PRLIMIT: Wrapper = Wrapper {
        spec: Spec::values("po", &["pid", "output"]),
        no_command: &["p", "pid"],
        transparent: true,
        ..WRAPPER
    };
    /// The resources, by their short and long names, and how the output is shaped.
    const SHOWN: &[&str] = &[
        "c",
        "d",
        "e",
        "f",
        "i",
        "l",
        "m",
        "n",
        "q",
        "r",
        "s",
        "t",
        "u",
        "v",
        "x",
        "y",
        "core",
        "data",
        "nice",
        "fsize",
        "sigpending",
        "memlock",
        "rss",
        "nofile",
        "msgqueue",
        "rtprio",
        "stack",
        "cpu",
        "nproc",
        "as",
        "locks",
        "rttime",
        "raw",
        "noheadings",
        "verbose",
    ];
    let is_number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let words: Option<Vec<&str>> = invocation.args.iter().map(Arg::text).collect();
    let shows = words.is_some_and(|words| {
        let mut pid = false;
        let mut rest = words.iter();
        while let Some(word) = rest.next() {
            let ok = match *word {
                "-p" | "--pid" => {
                    pid = true;
                    rest.next().is_some_and(|n| is_number(n))
                }
                "-o" | "--output" => rest.next().is_some(),
                w if w.starts_with("--output=") => true,
                w if w.starts_with("--pid=") => {
                    pid = true;
                    is_number(&w["--pid=".len()..])
                }
                w => {
                    let name = w.strip_prefix("--").or_else(|| w.strip_prefix('-'));
                    name.is_some_and(|name| SHOWN.contains(&name))
                }
            };
            if !ok {
                return false;
            }
        }
        pid
    });
    if shows {
        return Judgement::whitelisted();
    }
    wrapped(walker, invocation, &PRLIMIT)
}

fn names(item: &Item<'_>, list: &[&str]) -> bool {
    item.named(list, true)
}

/// Judges a wrapper described by a [`Wrapper`] row and the command it runs.
pub(super) fn wrapped(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    wrapper: &Wrapper,
) -> Judgement {
    let program = invocation.program;
    let args = invocation.args;
    let depth = invocation.depth + 1;
    let mut judgement = if wrapper.privileged {
        Judgement::destroys(format!(
            "`{program}` runs a command with other privileges (as root, by default)"
        ))
    } else if wrapper.transparent {
        Judgement::whitelisted()
    } else {
        Judgement::not_whitelisted(program)
    };
    let (items, mut start) = options::split_operands(args, &wrapper.spec);
    let mut runs = wrapper.runs_operands;
    for item in &items {
        if names(item, wrapper.no_command) {
            runs = false;
            if wrapper.transparent {
                judgement.whitelisted = false;
                judgement.unknown(format!(
                    "`{program} {}` acts on a running process rather than a command",
                    item.shown()
                ));
            }
        }
        if names(item, wrapper.shows) {
            runs = false;
            if start < args.len() {
                judgement.whitelisted = false;
                judgement.unknown(format!(
                    "`{program} {}` is given more words than it reads",
                    item.shown()
                ));
            }
        }
        if names(item, wrapper.alters) || tampers(program, item) {
            judgement.whitelisted = false;
            judgement.unknown(format!(
                "`{program} {}` changes what the command does or where it runs",
                item.shown()
            ));
        }
        if names(item, wrapper.script_options) {
            match item.value().and_then(|v| v.text) {
                Some(script) => walker.script(script, invocation.stdin, depth),
                None => judgement.destructive(format!(
                    "`{program} {}` runs a script only known when the line runs",
                    item.shown()
                )),
            }
            runs = false;
        }
        if names(item, wrapper.writes) {
            judgement.destructive(format!(
                "`{program} {}` writes to a file, replacing it",
                item.shown()
            ));
        }
        if program == "env" && item.is(Some('S'), Some("split-string"), true) {
            // `env -S 'cmd args'` splits the string into the command's words.
            match item.value().and_then(|v| v.text) {
                Some(split) => {
                    let rest: Vec<&str> = args[start..].iter().map(|a| a.raw.as_str()).collect();
                    let script = format!("{split} {}", rest.join(" "));
                    walker.script(&script, invocation.stdin, depth);
                }
                None => judgement.destructive(
                    "`env -S` runs a command only known when the line runs".to_owned(),
                ),
            }
            runs = false;
        }
    }
    if !runs {
        return judgement;
    }
    if wrapper.assignments {
        while let Some(arg) = args.get(start) {
            let Some((name, _)) = arg.text().and_then(|t| t.split_once('=')) else {
                break;
            };
            if !is_name(name) {
                break;
            }
            if wrapper.transparent && !is_plain_setting(name) {
                judgement.whitelisted = false;
                judgement.unknown(format!(
                    "`{program} {name}=...` sets a variable that may change what the command runs or reads"
                ));
            }
            let value = Arg {
                value: arg
                    .text()
                    .and_then(|t| t.split_once('='))
                    .map(|(_, v)| v.to_owned()),
                ..arg.clone()
            };
            program_variable(walker, name, &value, invocation.depth);
            start += 1;
        }
    }
    let command = args.get(start + wrapper.skip..).unwrap_or_default();
    if command.is_empty() {
        // `env` alone prints the line's environment: the scrubbed one every line gets (PATH,
        // LANG, the line's own directories, the operator's `env_allow` names that do not
        // look secret), never the bot's (see `execute::child_environment`).
        if wrapper.transparent && program != "env" && !wrapper.filters_alone {
            judgement.unknown(format!("`{program}` is given no command to run"));
        }
        return judgement;
    }
    walker.judge(command, invocation.stdin, depth);
    judgement
}

/// `strace -e inject=...` or `-e fault=...` tampers with the command's system calls.
fn tampers(program: &str, item: &Item<'_>) -> bool {
    program == "strace"
        && item.is(Some('e'), None, false)
        && item
            .value()
            .and_then(|v| v.text)
            .is_none_or(|t| t.starts_with("inject") || t.starts_with("fault"))
}

/// A variable `env NAME=value cmd` may set for a command judged on its own: a name in lower
/// case (programs read theirs in upper case: `LD_PRELOAD`, `PATH`, `PAGER`, `PYTHONPATH`),
/// or one of the locale and display settings.
fn is_plain_setting(name: &str) -> bool {
    let lower = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && name.starts_with(|c: char| c.is_ascii_lowercase());
    lower
        || matches!(
            name,
            "LANG" | "LANGUAGE" | "TZ" | "COLUMNS" | "LINES" | "NO_COLOR" | "TERM"
        )
        || (name.starts_with("LC_") && name[3..].chars().all(|c| c.is_ascii_uppercase()))
}

const XARGS: Spec = Spec::values(
    "aEIdLnPs",
    &[
        "arg-file",
        "delimiter",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
)
.optional("eil");

/// `xargs cmd args...` runs `cmd args...` with more arguments read from its input: the
/// words of input the line shows (`echo a b | xargs cat`), else words that may be anything
/// (the names `find` prints). xargs itself only reads; the command is judged on its own.
fn xargs(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (items, start) = options::split_operands(invocation.args, &XARGS);
    let mut judgement = Judgement::whitelisted();
    let mut replaces = false;
    let mut arg_file = false;
    // Options that change how input splits into words (`-0`, `-d ,`, `-E`) make the
    // words xargs passes differ from the line's: they are then unknown.
    const PLAIN: &[&str] = &[
        "n",
        "max-args",
        "r",
        "no-run-if-empty",
        "t",
        "verbose",
        "P",
        "max-procs",
    ];
    let splits_plainly = items.iter().all(|item| item.named(PLAIN, false));
    for item in &items {
        if names(item, &["a", "arg-file"]) {
            arg_file = true;
            if let Some(path) = item.value().and_then(|v| v.text) {
                walker.check_path(&mut judgement, "xargs", path);
            }
        }
        if names(item, &["I", "i", "replace"]) {
            replaces = true;
        }
    }
    let mut command: Vec<Arg> = invocation.args[start..].to_vec();
    if command.is_empty() {
        command.push(Arg {
            value: Some("echo".to_owned()),
            ..Arg::opaque("echo")
        });
    }
    // `find ... -print0 | xargs -0 cmd`: every word is a path under a start point, never
    // an option, and there may be several.
    let nul_separated = items.iter().any(|item| item.named(&["0", "null"], false));
    let only_splits = items
        .iter()
        .all(|item| item.named(PLAIN, false) || item.named(&["0", "null"], false));
    if let Stdin::Paths { start, .. } = invocation.stdin
        && nul_separated
        && only_splits
    {
        command.push(Arg {
            value: Some(format!("{}/{{}}", start.trim_end_matches('/'))),
            several: true,
            ..Arg::opaque("(the paths xargs reads from its input)")
        });
        walker.judge(&command, &Stdin::Inherited, invocation.depth + 1);
        return judgement;
    }
    let shown = match invocation.stdin {
        Stdin::Text(text)
            if splits_plainly && !arg_file && !replaces && !text.contains(['\\', '\'', '"']) =>
        {
            Some(
                text.split_whitespace()
                    .map(Arg::literal)
                    .collect::<Vec<_>>(),
            )
        }
        _ => None,
    };
    match shown {
        Some(words) => command.extend(words),
        None if replaces => {
            // `-I {}`: the input replaces the marker inside the words.
            for word in command.iter_mut().skip(1) {
                if word.text().is_some_and(|t| t.contains("{}")) {
                    *word = Arg::opaque("(a line xargs reads from its input)");
                }
            }
        }
        None => command.push(Arg::opaque("(the arguments xargs reads from its input)")),
    }
    walker.judge(&command, &Stdin::Inherited, invocation.depth + 1);
    judgement
}

const WATCH: Spec = Spec::values("nq", &["interval", "equexit"]).optional("d");

/// `watch cmd ...` hands the words to `sh -c` (or runs them directly with `-x`).
fn watch(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (items, start) = options::split_operands(invocation.args, &WATCH);
    let command = &invocation.args[start..];
    if items.iter().any(|i| i.is(Some('x'), Some("exec"), true)) {
        walker.judge(command, &Stdin::Inherited, invocation.depth + 1);
        return Judgement::not_whitelisted("watch");
    }
    run_joined(walker, invocation, command, "runs a command over and over")
}

const AT: Spec = Spec::values("qfmt", &[]);

/// `at TIME` and `batch` read a script from their input and run it later.
fn at(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let items = options::parse(invocation.args, &AT);
    if items.iter().any(|i| {
        i.is(Some('l'), None, false)
            || i.is(Some('d'), None, false)
            || i.is(Some('r'), None, false)
            || i.is(Some('c'), None, false)
    }) {
        return Judgement::not_whitelisted(program);
    }
    if let Some(file) = items.iter().find(|i| i.is(Some('f'), None, false)) {
        let name = file.value().and_then(|v| v.text).unwrap_or("a file");
        return Judgement::other(format!(
            "`{program}` schedules the script {name}, whose contents are not checked"
        ));
    }
    script_from_input(walker, program, invocation.stdin, invocation.depth + 1)
}

const PARALLEL: Spec = Spec::values(
    "jSLNnsIEad",
    &[
        "jobs",
        "sshlogin",
        "max-lines",
        "max-args",
        "max-chars",
        "arg-file",
        "delimiter",
        "colsep",
        "joblog",
        "results",
        "tmpdir",
        "timeout",
        "retries",
        "workdir",
        "env",
    ],
);

/// GNU `parallel cmd ::: args` runs the command through a shell for each argument.
fn parallel(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (_, start) = options::split_operands(invocation.args, &PARALLEL);
    let rest = &invocation.args[start..];
    let end = rest
        .iter()
        .position(|a| a.may_be(|t| t.starts_with(":::")))
        .unwrap_or(rest.len());
    let mut command = rest[..end].to_vec();
    command.push(Arg::opaque("(the arguments parallel substitutes)"));
    match joined(&rest[..end]) {
        Some(script) if end == 1 => {
            walker.script(&script, &Stdin::Inherited, invocation.depth + 1);
        }
        _ => walker.judge(&command, &Stdin::Inherited, invocation.depth + 1),
    }
    Judgement::not_whitelisted("parallel")
}

#[cfg(test)]
mod tests {
    #[test]
    fn wrappers_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("prlimit --cpu=10 sort -u notes.txt", Safe),
            ("nohup ls -l", Safe),
            ("grc tail notes.txt", Safe),
            ("grc -e ping -c 1 host", NotSafe),
            ("grc rm notes.txt", Destructive),
            ("nohup rm notes.txt", Destructive),
            ("nohup sort -o out.txt notes.txt", Destructive),
            ("numactl --hardware", Safe),
            ("jc --ls < notes.txt", Safe),
            ("ls -l | jc -p --ls", Safe),
            ("jc -p ls -l", Safe),
            ("jc rm notes.txt", Destructive),
            ("jc --ls -- rm notes.txt", Destructive),
            ("jc -p cat /etc/shadow", Unknown),
            ("numactl -s", Safe),
            ("numactl -H -- rm -rf notes.txt", NotSafe),
            ("numactl --interleave=all ls", Safe),
            ("numactl --cpunodebind=0 rm notes.txt", Destructive),
            ("numactl --shm /dev/shm/seg --interleave=all", Unknown),
            ("prlimit --nofile=256 rm -rf src", Destructive),
            // Another process's limits shown; set, or with a command, they wait.
            ("prlimit --pid 13134", Safe),
            ("prlimit -n --pid=13134 -o RESOURCE,SOFT --noheadings", Safe),
            ("prlimit --pid 13134 --nofile=1024", NotSafe),
            ("prlimit --pid 13134 -n1024", NotSafe),
            ("prlimit --pid=1x", NotSafe),
            ("prlimit --pid ''", NotSafe),
            ("prlimit --pid=", NotSafe),
            ("prlimit --pid 13134 ls", NotSafe),
            ("prlimit --pid $P", NotSafe),
            ("timeout 5 ls", Safe),
            ("chronic ls -l", Safe),
            ("grep -l x notes.txt | ifne wc -l", Safe),
            ("chronic rm -rf src", Destructive),
            ("ifne -n rm x", Destructive),
            ("sudo ls", Destructive),
            ("xargs rm", Destructive),
            // NUL-separated paths from find: never options, maybe several.
            ("find . -name '*.txt' -print0 | xargs -0 sort", Safe),
            ("find src -type f -print0 | xargs -0 file", Safe),
            ("find . -print0 | xargs -0 -n 10 -P 2 sed -n 1p", Safe),
            ("find . -print0 | xargs -0 uniq", Destructive),
            ("find . -print0 | xargs -0 rm", Destructive),
            ("find . -print0 | xargs -0 cat /etc/shadow", Unknown),
            ("find /etc -print0 | xargs -0 cat", Unknown),
            ("find . -type f | xargs sort", NotSafe),
            ("find . -print0 | xargs sort", NotSafe),
            ("find . -printf '%f\\0' | xargs -0 sort", NotSafe),
            ("find . -print0 -o -print | xargs -0 sort", NotSafe),
            ("find . -print0 | xargs -0 -I{} sort {}", NotSafe),
            ("find . -print0 | sort -z | xargs -0 file", NotSafe),
            ("find . -print0 | sh", Destructive),
            // Questions about names, answered by the runner; `command NAME` runs NAME.
            ("command -v git", Safe),
            ("command -V git ls", Safe),
            ("type -a ls", Safe),
            ("type -t cd", Safe),
            ("command -v git && git --version", Safe),
            ("command -v $TOOL", Unknown),
            ("command -v git*", Unknown),
            ("command -p ls", Unknown),
            ("command ls", Unknown),
            ("command rm -rf src", Destructive),
            ("command -v git; rm -rf src", Destructive),
            ("type", Unknown),
            ("type -x ls", Unknown),
            ("command -v ./build.sh", Safe),
            ("type /usr/bin/ls", Safe),
            ("command -v /opt/secret/tool", Unknown),
            ("type ../outside/tool", Unknown),
            ("watch ls", Unknown),
            // `env` and `time` are as safe as the command they run.
            ("env", Safe),
            ("env -0", Safe),
            ("printenv", Safe),
            ("printenv HOME", Safe),
            ("env name=1 ls -l", Safe),
            ("env a=1 b=1 ls -l", Safe),
            ("env -u name ls -l", Safe),
            ("env -i ls -l", Safe),
            ("env LC_ALL=C TZ=UTC date", Safe),
            ("env -S 'ls -l'", Safe),
            ("env -i rm x", Destructive),
            ("env name=1 rm -rf src", Destructive),
            ("env LD_PRELOAD=./hook.so ls", Unknown),
            ("env PATH=. ls", Unknown),
            ("env PYTHONPATH=. ls", Unknown),
            ("env PAGER='rm -rf /' git log", Destructive),
            ("env -C / cat etc/shadow", Unknown),
            ("env --chdir=/etc cat passwd", Unknown),
            ("env $CMD", Destructive),
            // bash's keyword, which the runner times; GNU time's options need `command time`.
            ("time ls", Safe),
            ("command time -f %E ls -l", Unknown),
            ("time -o t.txt ls", NotSafe),
            ("command time -o t.txt ls", Destructive),
            ("time rm -rf x", Destructive),
            ("strace ls -l", Safe),
            ("strace -e trace=open ls -l", Safe),
            ("strace -f -c ls -l", Safe),
            ("strace rm x", Destructive),
            ("strace -o trace.txt ls", Destructive),
            ("strace -p 1234", Unknown),
            ("strace -E LD_PRELOAD=./hook.so ls", Unknown),
            ("strace -e inject=unlink:retval=0 ls", Unknown),
            ("strace --inject=all:error=EPERM ls", Unknown),
            ("strace -u nobody ls", Unknown),
        ]);
    }
}
