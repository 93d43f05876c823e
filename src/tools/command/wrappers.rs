//! Commands that run other commands: privilege wrappers (`sudo`, `su`, `doas`), process
//! wrappers (`env`, `nice`, `timeout`, `xargs`, `watch`, `ssh`, ...), shells given a script
//! (`sh -c`, a here-document or a pipe into `sh`), `eval`, `trap` and `alias`.
//!
//! Each wrapper's own options are read with a small table of the options that take a value,
//! so `timeout -s KILL 5 rm x` finds `rm`. The wrapped command is judged like any other,
//! one level deeper. A script the line does not show (`curl ... | sh`, `bash -c "$x"`) is
//! destructive in doubt: nothing can tell what it runs.

use super::assess::{Invocation, Judgement, Stdin, Walker};
use super::options::{self, Item, Spec};
use super::words::Arg;

/// How a wrapper reads its own options and where its command starts.
struct Wrapper {
    names: &'static [&'static str],
    spec: Spec,
    /// Operands between the options and the command (`timeout`'s duration, `chroot`'s root).
    skip: usize,
    /// Options after which no command runs (`ionice -p`, `command -v`).
    no_command: &'static [&'static str],
    /// Options whose value is a script handed to a shell (`flock -c`).
    script_options: &'static [&'static str],
    /// Options whose value is a file the wrapper writes (`time -o`, `strace -o`).
    writes: &'static [&'static str],
    /// Skips `NAME=value` words before the command (`env`, `sudo`).
    assignments: bool,
    /// Runs the command with other privileges: destructive by itself.
    privileged: bool,
    /// Its operands are not a command (`su user`).
    runs_operands: bool,
    /// Adds nothing of its own (`timeout`, `nice`): the line is as safe as its command.
    transparent: bool,
}

const WRAPPER: Wrapper = Wrapper {
    names: &[],
    spec: Spec::NONE,
    skip: 0,
    no_command: &[],
    script_options: &[],
    writes: &[],
    assignments: false,
    privileged: false,
    runs_operands: true,
    transparent: false,
};

const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["sudo"],
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
    },
    Wrapper {
        names: &["doas"],
        spec: Spec::values("uC", &[]),
        privileged: true,
        ..WRAPPER
    },
    Wrapper {
        names: &["pkexec"],
        spec: Spec::values("", &["user"]),
        privileged: true,
        ..WRAPPER
    },
    Wrapper {
        names: &["su", "runuser"],
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
    },
    Wrapper {
        names: &["env"],
        spec: Spec::values("uCS", &["unset", "chdir", "split-string"]),
        assignments: true,
        ..WRAPPER
    },
    Wrapper {
        names: &["nice", "gnice"],
        spec: Spec::values("n", &["adjustment"]),
        transparent: true,
        ..WRAPPER
    },
    Wrapper {
        names: &[
            "nohup",
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
        ..WRAPPER
    },
    Wrapper {
        names: &["timeout", "gtimeout"],
        spec: Spec::values("sk", &["signal", "kill-after"]),
        skip: 1,
        transparent: true,
        ..WRAPPER
    },
    Wrapper {
        names: &["time"],
        spec: Spec::values("fo", &["format", "output"]),
        writes: &["o", "output"],
        ..WRAPPER
    },
    Wrapper {
        names: &["stdbuf"],
        spec: Spec::values("ioe", &["input", "output", "error"]),
        ..WRAPPER
    },
    Wrapper {
        names: &["ionice"],
        spec: Spec::values("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
        no_command: &["p", "pid", "P", "pgid", "u", "uid"],
        ..WRAPPER
    },
    Wrapper {
        names: &["command"],
        no_command: &["v", "V"],
        ..WRAPPER
    },
    Wrapper {
        names: &["exec"],
        spec: Spec::values("a", &[]),
        ..WRAPPER
    },
    Wrapper {
        names: &["chroot"],
        spec: Spec::values("", &["userspec", "groups"]),
        skip: 1,
        ..WRAPPER
    },
    Wrapper {
        names: &["flock"],
        spec: Spec::values("wEc", &["timeout", "conflict-exit-code", "command"]),
        skip: 1,
        script_options: &["c", "command"],
        ..WRAPPER
    },
    Wrapper {
        names: &["taskset"],
        skip: 1,
        no_command: &["p", "pid"],
        ..WRAPPER
    },
    Wrapper {
        names: &["chrt"],
        spec: Spec::values("T", &["sched-runtime", "sched-deadline", "sched-period"]),
        skip: 1,
        no_command: &["p", "pid"],
        ..WRAPPER
    },
    Wrapper {
        names: &["strace", "ltrace"],
        spec: Spec::values("eoOpPsSuUXIbaEnA", &["output", "attach", "user", "trace"]),
        no_command: &["p", "attach"],
        writes: &["o", "output"],
        ..WRAPPER
    },
    Wrapper {
        names: &["caffeinate"],
        spec: Spec::values("tw", &[]),
        ..WRAPPER
    },
];

/// Shells that take `-c script`, a script file, or a script on their input.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "rbash", "fish", "csh",
    "tcsh",
];

/// Environment variables whose value is a command some program runs.
const PROGRAM_VARIABLES: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "FCEDIT",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "PROMPT_COMMAND",
];

/// Programs that run other programs or code given to them: shells, wrappers, interpreters,
/// `awk`. A channel rule never covers them, since the flag shape says nothing of what they run.
pub(super) fn runs_other_code(program: &str) -> bool {
    SHELLS.contains(&program)
        || WRAPPERS.iter().any(|w| w.names.contains(&program))
        || matches!(
            program,
            "xargs"
                | "watch"
                | "ssh"
                | "eval"
                | "trap"
                | "alias"
                | "source"
                | "."
                | "at"
                | "batch"
                | "parallel"
                | "hash"
                | "export"
                | "declare"
                | "typeset"
                | "local"
                | "readonly"
                | "awk"
                | "gawk"
                | "mawk"
                | "nawk"
                | "python"
                | "python2"
                | "python3"
                | "perl"
                | "ruby"
                | "node"
                | "nodejs"
                | "php"
                | "lua"
                | "find"
                | "sed"
        )
}

/// The judgement for a command that runs other commands, or `None` for any other command.
pub(super) fn judge(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Option<Judgement> {
    let program = invocation.program;
    if SHELLS.contains(&program) {
        return Some(shell(walker, invocation));
    }
    if let Some(wrapper) = WRAPPERS.iter().find(|w| w.names.contains(&program)) {
        return Some(wrapped(walker, invocation, wrapper));
    }
    Some(match program {
        "xargs" => xargs(walker, invocation),
        "watch" => watch(walker, invocation),
        "ssh" => ssh(walker, invocation),
        "eval" => eval(walker, invocation),
        "trap" => trap(walker, invocation),
        "alias" => alias(walker, invocation),
        "source" | "." => source(walker, invocation),
        "at" | "batch" => at(walker, invocation),
        "parallel" => parallel(walker, invocation),
        "hash" => hash(walker, invocation),
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for arg in invocation.args {
                if let Some((name, value)) = arg.text().and_then(|t| t.split_once('=')) {
                    let value = Arg {
                        value: Some(value.to_owned()),
                        ..arg.clone()
                    };
                    program_variable(walker, name, &value, invocation.depth);
                }
            }
            Judgement::other(format!("`{program}` sets shell variables"))
        }
        "awk" | "gawk" | "mawk" | "nawk" => awk(walker, invocation),
        "python" | "python2" | "python3" | "perl" | "ruby" | "node" | "nodejs" | "php" | "lua" => {
            interpreter(walker, invocation)
        }
        _ => return None,
    })
}

/// Judges the value of `NAME=value` when `NAME` holds a command some program runs
/// (`GIT_PAGER='rm -rf /' git log`).
pub(super) fn program_variable(walker: &mut Walker<'_>, name: &str, value: &Arg, depth: usize) {
    if !PROGRAM_VARIABLES.contains(&name) {
        return;
    }
    match value.text() {
        Some(script) => walker.script(script, &Stdin::Inherited, depth + 1, false),
        None => walker.destructive(format!(
            "`{name}` is set to a command only known when the line runs"
        )),
    }
}

fn names(item: &Item<'_>, list: &[&str]) -> bool {
    item.named(list, true)
}

fn wrapped(walker: &mut Walker<'_>, invocation: &Invocation<'_>, wrapper: &Wrapper) -> Judgement {
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
        }
        if names(item, wrapper.script_options) {
            match item.value().and_then(|v| v.text) {
                Some(script) => walker.script(script, invocation.stdin, depth, false),
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
                    walker.script(&script, invocation.stdin, depth, false);
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
        if wrapper.transparent {
            judgement.unknown(format!("`{program}` is given no command to run"));
        }
        if program == "env" {
            judgement.unknown("`env` prints the environment, which may hold secrets");
        }
        return judgement;
    }
    walker.judge(command, invocation.stdin, depth);
    judgement
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `sh -c script`, `sh file`, or `sh` reading its input.
fn shell(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    let args = invocation.args;
    let depth = invocation.depth + 1;
    let mut command_mode = false;
    let mut stdin_mode = false;
    let mut index = 0;
    let mut operand: Option<&Arg> = None;
    while let Some(arg) = args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            operand = Some(arg);
            break;
        };
        if text == "--" || text == "-" {
            operand = args.get(index);
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            if matches!(long, "rcfile" | "init-file") {
                index += 1;
            }
            continue;
        }
        if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
            for flag in text[1..].chars() {
                match flag {
                    'c' => command_mode = true,
                    's' if text.starts_with('-') => stdin_mode = true,
                    'o' | 'O' => index += 1,
                    _ => {}
                }
            }
            continue;
        }
        operand = Some(arg);
        break;
    }
    if command_mode {
        return match operand {
            None => Judgement::other(format!("`{program} -c` is given no script")),
            Some(script) => match script.text() {
                Some(text) => {
                    walker.script(text, invocation.stdin, depth, false);
                    Judgement::other(format!("`{program} -c` runs a shell script"))
                }
                None => Judgement::destroys(format!(
                    "`{program} -c {}` runs a script only known when the line runs",
                    script.raw
                )),
            },
        };
    }
    if stdin_mode {
        // `sh -s args...`: the operands are arguments, the script comes from the input.
        return script_from_input(walker, program, invocation.stdin, depth);
    }
    match operand {
        Some(file) => match file.text() {
            Some(path) if is_stdin_path(path) => {
                script_from_input(walker, program, invocation.stdin, depth)
            }
            Some(path) => Judgement::other(format!(
                "`{program}` runs the script {path}, whose contents are not checked"
            )),
            None => Judgement::destroys(format!(
                "`{program} {}` runs a script only known when the line runs",
                file.raw
            )),
        },
        None => script_from_input(walker, program, invocation.stdin, depth),
    }
}

fn is_stdin_path(path: &str) -> bool {
    matches!(path, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// A shell (or `at`, `ssh`) running what arrives on its standard input.
fn script_from_input(
    walker: &mut Walker<'_>,
    program: &str,
    stdin: &Stdin,
    depth: usize,
) -> Judgement {
    match stdin {
        Stdin::Text(text) => {
            walker.script(text, &Stdin::Inherited, depth, false);
            Judgement::other(format!("`{program}` runs the script fed to its input"))
        }
        Stdin::File(file) => Judgement::other(format!(
            "`{program}` runs the script in {file}, whose contents are not checked"
        )),
        Stdin::Unseen(from) => Judgement::destroys(format!(
            "`{program}` runs a script read from {from}, which cannot be seen before it runs"
        )),
        Stdin::Inherited => Judgement::other(format!(
            "`{program}` starts a shell that reads commands from its input"
        )),
    }
}

/// Joins literal words into the script a shell will read (`eval`, `watch`, `ssh`).
fn joined(words: &[Arg]) -> Option<String> {
    words
        .iter()
        .map(Arg::text)
        .collect::<Option<Vec<_>>>()
        .map(|w| w.join(" "))
}

fn run_joined(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    words: &[Arg],
    what: &str,
) -> Judgement {
    let program = invocation.program;
    match joined(words) {
        Some(script) => {
            walker.script(&script, invocation.stdin, invocation.depth + 1, false);
            Judgement::other(format!("`{program}` {what}"))
        }
        None => Judgement::destroys(format!(
            "`{program}` runs text only known when the line runs, so it could run anything"
        )),
    }
}

fn eval(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    run_joined(
        walker,
        invocation,
        invocation.args,
        "runs its words as a command",
    )
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
    let splits_plainly = items.iter().all(|item| {
        item.named(
            &[
                "n",
                "max-args",
                "r",
                "no-run-if-empty",
                "t",
                "verbose",
                "P",
                "max-procs",
            ],
            false,
        )
    });
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

const SSH: Spec = Spec::values("BbcDEeFIiJLlmOoPpQRSWw", &[]).exact();

/// `ssh host cmd ...` runs the words as a script on the remote host.
fn ssh(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let (_, start) = options::split_operands(invocation.args, &SSH);
    let command = invocation.args.get(start + 1..).unwrap_or_default();
    if command.is_empty() {
        if start < invocation.args.len() && !matches!(invocation.stdin, Stdin::Inherited) {
            return script_from_input(walker, "ssh", invocation.stdin, invocation.depth + 1);
        }
        return Judgement::other("`ssh` opens a shell on another machine");
    }
    run_joined(
        walker,
        invocation,
        command,
        "runs a command on another machine",
    )
}

/// `trap 'cmd' SIGNAL` runs `cmd` when the signal (or `EXIT`) arrives.
fn trap(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let action = invocation
        .args
        .iter()
        .find(|a| a.may_be(|t| !matches!(t, "-l" | "-p" | "--")));
    if let Some(action) = action {
        match action.text() {
            Some("-" | "") => {}
            Some(script) => walker.script(script, &Stdin::Inherited, invocation.depth + 1, false),
            None => {
                return Judgement::destroys(
                    "`trap` sets a handler only known when the line runs".to_owned(),
                );
            }
        }
    }
    Judgement::other("`trap` sets a signal handler")
}

/// `alias name='cmd'` defines a command; its text is judged as if it ran.
fn alias(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    for arg in invocation.args {
        if let Some((_, value)) = arg.text().and_then(|t| t.split_once('=')) {
            walker.script(value, &Stdin::Inherited, invocation.depth + 1, false);
        }
    }
    Judgement::other("`alias` defines a command")
}

fn source(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    match invocation.args.first() {
        Some(file) => match file.text() {
            Some(path) if is_stdin_path(path) => {
                script_from_input(walker, program, invocation.stdin, invocation.depth + 1)
            }
            Some(path) => Judgement::other(format!(
                "`{program}` runs the script {path}, whose contents are not checked"
            )),
            None => Judgement::destroys(format!(
                "`{program} {}` runs a script only known when the line runs",
                file.raw
            )),
        },
        None => Judgement::other(format!("`{program}` is given no script")),
    }
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
            walker.script(&script, &Stdin::Inherited, invocation.depth + 1, false);
        }
        _ => walker.judge(&command, &Stdin::Inherited, invocation.depth + 1),
    }
    Judgement::not_whitelisted("parallel")
}

/// `hash -p /bin/rm ls` makes `ls` run `/bin/rm`: the program is judged as if it ran.
fn hash(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let items = options::parse(invocation.args, &Spec::values("p", &[]));
    for item in &items {
        if item.is(Some('p'), None, false) {
            let program = match item.value().and_then(|v| v.text) {
                Some(path) => Arg {
                    value: Some(path.to_owned()),
                    ..Arg::opaque(path)
                },
                None => Arg::opaque("(a program named when the line runs)"),
            };
            walker.judge(&[program], &Stdin::Inherited, invocation.depth + 1);
        }
    }
    Judgement::other("`hash` changes which program a command name runs")
}

/// An interpreter given no program on its command line reads one from its input; from a
/// pipe whose source the line does not show, that is code nobody has seen.
fn interpreter(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    for code in invocation.args.iter().filter_map(Arg::text) {
        embedded_commands(walker, code, invocation.depth);
    }
    // `perl -pi -e ...` and `ruby -i` rewrite their file operands in place.
    if matches!(program, "perl" | "ruby")
        && invocation.args.iter().any(|a| {
            a.text().is_some_and(|t| {
                t.starts_with('-')
                    && !t.starts_with("--")
                    && t[1..].starts_with(|c: char| c != 'e')
                    && t.contains('i')
            })
        })
    {
        return Judgement::destroys(format!(
            "`{program} -i` rewrites files in place, replacing their contents"
        ));
    }
    let mut reads_input = true;
    let mut index = 0;
    while let Some(arg) = invocation.args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            reads_input = false;
            break;
        };
        if text == "-" {
            break;
        }
        if text == "--" {
            reads_input = invocation.args.get(index).is_none();
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            if matches!(long, "eval" | "print") || long.starts_with("eval=") {
                reads_input = false;
                break;
            }
            continue;
        }
        if let Some(cluster) = text.strip_prefix('-') {
            // `-c`/`-m` (python), `-e`/`-E` (perl, ruby, node), `-r` (php), `-p` (node).
            if cluster.contains(['c', 'm', 'e', 'E', 'r', 'p']) {
                reads_input = false;
                break;
            }
            if matches!(cluster, "W" | "X" | "I") {
                index += 1;
            }
            continue;
        }
        reads_input = false;
        break;
    }
    if !reads_input {
        return Judgement::not_whitelisted(program);
    }
    match invocation.stdin {
        Stdin::Unseen(from) => Judgement::destroys(format!(
            "`{program}` runs a program read from {from}, which cannot be seen before it runs"
        )),
        Stdin::Text(_) => {
            Judgement::other(format!("`{program}` runs the program fed to its input"))
        }
        Stdin::File(file) => Judgement::other(format!(
            "`{program}` runs the program in {file}, whose contents are not checked"
        )),
        Stdin::Inherited => Judgement::not_whitelisted(program),
    }
}

/// awk options that only set variables, separators and dialects.
const AWK_OPTIONS: &[&str] = &[
    "F",
    "v",
    "field-separator",
    "assign",
    "posix",
    "traditional",
    "re-interval",
    "characters-as-bytes",
    "sandbox",
    "b",
    "c",
    "P",
    "r",
    "S",
];

/// `awk` runs shell commands from its program: `system("cmd")`, `print | "cmd"` and
/// `"cmd" | getline`; `print > "file"` writes a file.
///
/// A program that only prints (see [`super::awk`]), given as a plain word with options that
/// only set variables and separators, reading files in the workspace, is read-only.
fn awk(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let spec = Spec::values("fvF", &["file", "assign", "field-separator"]);
    let items = options::parse(invocation.args, &spec);
    let program_from_file = items.iter().any(|i| i.named(&["f", "file"], true));
    for item in &items {
        let known = item.named(AWK_OPTIONS, false);
        if matches!(item, Item::Short { .. } | Item::Long { .. }) && !known {
            judgement.unknown(format!(
                "`{} {}` is not an option known to be read-only",
                invocation.program,
                item.shown()
            ));
        }
        if let Item::Opaque(word) = item {
            judgement.unknown(format!(
                "`{}` is given `{}`, which may become any option when the line runs",
                invocation.program, word.raw
            ));
        }
    }
    let operands = options::operands(&items);
    let program = if program_from_file {
        judgement.unknown("`awk -f` reads its program from a file, which is not checked");
        None
    } else {
        operands.first().copied()
    };
    let files = if program_from_file {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    for file in files.iter().filter_map(|f| f.text()) {
        // `name=value` between files sets a variable.
        if !file.split_once('=').is_some_and(|(name, _)| is_name(name)) {
            walker.check_path(&mut judgement, invocation.program, file);
        }
    }
    match program.map(Arg::text) {
        Some(Some(code)) => {
            if let Some(problem) = super::awk::print_only_problem(code) {
                judgement.unknown(format!("the awk program {problem}"));
            }
        }
        Some(None) => judgement.unknown("the awk program is only known when the line runs"),
        None if !program_from_file => judgement.unknown("`awk` is given no program"),
        None => {}
    }
    if let Some(code) = program.and_then(Arg::text) {
        embedded_commands(walker, code, invocation.depth);
        for target in string_literals_after(code, &[">", ">>"]) {
            if !super::assess::is_sink(&target) {
                judgement.destructive(format!(
                    "the awk program writes to the file {target}, replacing or growing it"
                ));
            }
        }
        // `print | "cmd"` feeds what the program prints to cmd.
        let printed = Stdin::Unseen("what the awk program prints".to_owned());
        for command in string_literals_after(code, &["|"]) {
            walker.script(&command, &printed, invocation.depth + 1, false);
        }
        for command in string_literals_before(code, "| getline") {
            walker.script(&command, &Stdin::Inherited, invocation.depth + 1, false);
        }
    }
    judgement
}

/// Judges the shell commands that inline program text hands to `system(...)`,
/// `popen(...)` and the like: the string literals inside the call, joined, are the command
/// (`system("rm -rf " $1)` runs `rm -rf ...`).
fn embedded_commands(walker: &mut Walker<'_>, code: &str, depth: usize) {
    const CALLS: &[&str] = &[
        "system(",
        "popen(",
        "exec(",
        "execSync(",
        "spawnSync(",
        "shell_exec(",
    ];
    for call in CALLS {
        let mut rest = code;
        while let Some(at) = rest.find(call) {
            let inside = &rest[at + call.len()..];
            let end = closing_paren(inside).unwrap_or(inside.len());
            let literals = string_literals(&inside[..end]);
            if !literals.is_empty() {
                walker.script(&literals.concat(), &Stdin::Inherited, depth + 1, false);
            }
            rest = &inside[end..];
        }
    }
}

/// Where the parenthesis opened just before `text` closes (ignoring quoted text).
fn closing_paren(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') if depth == 0 => return Some(at),
            (None, ')') => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The contents of the `"..."` and `'...'` literals in `text`, escapes resolved.
fn string_literals(text: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '"' && c != '\'' {
            continue;
        }
        let mut literal = String::new();
        while let Some(inner) = chars.next() {
            match inner {
                '\\' => literal.extend(chars.next()),
                q if q == c => break,
                other => literal.push(other),
            }
        }
        literals.push(literal);
    }
    literals
}

/// String literals that directly follow one of `operators` (`print > "file"`).
fn string_literals_after(code: &str, operators: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for operator in operators {
        for (at, _) in code.match_indices(operator) {
            let after = code[at + operator.len()..].trim_start();
            if after.starts_with('"') {
                found.extend(string_literals(after).into_iter().next());
            }
        }
    }
    found
}

/// String literals that directly precede `operator` (`"cmd" | getline`).
fn string_literals_before(code: &str, operator: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices(operator) {
        let before = code[..at].trim_end();
        if let Some(body) = before.strip_suffix('"')
            && let Some(start) = body.rfind('"')
        {
            found.push(body[start + 1..].to_owned());
        }
    }
    found
}
