//! Shells and what the shell does itself: `sh -c script`, a script file or a script on the
//! input (`curl ... | sh`), `eval`, `source`, `trap`, `alias`, `hash -p`, the variable
//! builtins (`export`, `declare`, ...), `set`, `unset`, `jobs` and `cd`. The forms of
//! `export`, `unset`, `set`, `alias` and `jobs` that only change the shell's state or list
//! its (no) jobs run without a click on a line of nothing else, where they print nothing and
//! nothing they set outlives the line (the plan's `state_only`). A script the line shows is judged like the
//! line, one level deeper; one it does not show (`bash -c "$x"`, a pipe from an unseen
//! source) is destructive in doubt, since nothing can tell what it runs. Variables that
//! hold a command some program runs (`GIT_PAGER`, `EDITOR`, ...) are judged as commands.

use super::{Program, Rule};
use crate::tools::command::assess::{Invocation, Judgement, Stdin, Walker};
use crate::tools::command::names::Query;
use crate::tools::command::options::{self, Spec};
use crate::tools::command::parameter::{self, Operation};
use crate::tools::command::plan::{reports_only, state_only};
use crate::tools::command::words::{Arg, shown_words};
use crate::tools::command::{loops, sandbox, substitute, variables};

/// The programs of this family and their rules.
pub(super) const PROGRAMS: &[Program] = &[
    Program::new(sandbox::SHELLS, Rule::Judge(shell)).running_code(),
    Program::new(&["eval"], Rule::Judge(eval)).running_code(),
    Program::new(&["trap"], Rule::Judge(trap)).running_code(),
    Program::new(&["alias"], Rule::Judge(alias)).running_code(),
    Program::new(&["source", "."], Rule::Judge(source)).running_code(),
    Program::new(&["hash"], Rule::Judge(hash)).running_code(),
    Program::new(
        &["export", "declare", "typeset", "local", "readonly"],
        Rule::Judge(sets_variables),
    )
    .running_code(),
    Program::new(
        &["set", "unset", "jobs", ":"],
        Rule::Judge(|_, call| shell_state(call)),
    ),
    Program::new(
        // What a shell of the line has: its limits, file mask, times and directory, in the
        // forms that set nothing, the builtins' help, and its history, options, completions
        // and key bindings, listed (the plan runs them in a new bash).
        &[
            "ulimit", "umask", "times", "dirs", "help", "history", "shopt", "compgen", "complete",
            "bind", "fc",
        ],
        Rule::Judge(|_, call| {
            if reports(call) {
                Judgement::whitelisted()
            } else {
                Judgement::other(format!(
                    "`{}` is given a value to set or code to run, which only a shell can do",
                    call.program
                ))
            }
        }),
    ),
    Program::new(&["cd"], Rule::Judge(cd_rule)),
    Program::new(
        &["type"],
        Rule::Judge(|walker, call| {
            if asks_about_names(call) {
                names_question(walker, call)
            } else {
                Judgement::other("`type` is given no name, or an option the runner does not answer")
            }
        }),
    ),
];

/// Whether the call is a builtin's form that only prints what a new shell has
/// ([`reports_only`]), every word shown.
fn reports(invocation: &Invocation<'_>) -> bool {
    shown_words(invocation.args).is_some_and(|words| reports_only(invocation.program, &words))
}

/// Whether the call is a question about names the runner answers itself, with every word
/// shown: `command -v|-V NAME...`, `type [-afptP] NAME...` (`names.rs`). It prints where
/// each name is, and changes nothing.
pub(super) fn asks_about_names(invocation: &Invocation<'_>) -> bool {
    shown_words(invocation.args)
        .is_some_and(|words| Query::parse(invocation.program, &words).is_some())
}

/// The verdict on a question about names: read-only, and a name with a `/` is a path
/// whose file is looked at, so it must be one a line may read (the runner answers "not
/// found" for any other, as the walls would).
pub(super) fn names_question(walker: &Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    for path in invocation.args.iter().filter_map(Arg::text) {
        if path.contains('/') {
            walker.check_path(&mut judgement, invocation.program, path);
        }
    }
    judgement
}

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

/// Judges the value of `NAME=value` when `NAME` holds a command some program runs
/// (`GIT_PAGER='rm -rf /' git log`).
pub(in crate::tools::command) fn program_variable(
    walker: &mut Walker<'_>,
    name: &str,
    value: &Arg,
    depth: usize,
) {
    if !PROGRAM_VARIABLES.contains(&name) {
        return;
    }
    match value.text() {
        Some(script) => walker.script(script, &Stdin::Inherited, depth + 1),
        None => walker.destructive(format!(
            "`{name}` is set to a command only known when the line runs"
        )),
    }
}

pub(super) fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `sh -c script`, `sh file`, or `sh` reading its input.
fn shell(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    if let Some(judgement) = syntax_check(walker, invocation) {
        return judgement;
    }
    let args = invocation.args;
    let depth = invocation.depth + 1;
    let mut command_mode = false;
    let mut stdin_mode = false;
    // Only `-c` and the flags that change nothing a script does but stop it early or trace
    // it (`-e`, `-u`, `-x`): `-i` and `-l` read startup files, `-o`/`-O` set options.
    let mut plain_flags = true;
    let mut index = 0;
    let mut operand: Option<&Arg> = None;
    // Where the words after the script start: `$0`, `$1`, ... of `sh -c script`.
    let mut parameters = args.len();
    while let Some(arg) = args.get(index) {
        index += 1;
        let Some(text) = arg.text() else {
            operand = Some(arg);
            break;
        };
        if text == "--" || text == "-" {
            operand = args.get(index);
            parameters = index + 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            plain_flags = false;
            if matches!(long, "rcfile" | "init-file") {
                index += 1;
            }
            continue;
        }
        if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
            plain_flags &= text.starts_with('-')
                && text[1..]
                    .chars()
                    .all(|flag| matches!(flag, 'c' | 'e' | 'u' | 'x'));
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
        parameters = index;
        break;
    }
    if command_mode {
        return match operand {
            None => Judgement::other(format!("`{program} -c` is given no script")),
            Some(script) => match script.text() {
                Some(text) => {
                    let given = args.get(parameters..).unwrap_or_default();
                    let with_parameters = put_in_parameters(text, given);
                    let runs = with_parameters.as_deref().unwrap_or(text);
                    walker.script(runs, invocation.stdin, depth);
                    if plain_flags
                        && RUN_AS_LINES.contains(&program)
                        && with_parameters.is_some()
                        // A shell whose script names git may execute only git in the
                        // walls (a repository's attributes can name a textconv or filter
                        // program): `sh -c 'git log | head'` would fail there; it waits.
                        && !sandbox::names_git_word(runs)
                        && !variables::shell_starts_otherwise(&walker.policy.environment)
                        && walker.script_runs_alone(runs)
                    {
                        Judgement::whitelisted()
                    } else {
                        Judgement::other(format!("`{program} -c` runs a shell script"))
                    }
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
            Some(path) if is_pipe_path(path) => Judgement::destroys(format!(
                "`{program} {}` runs a script only known when the line runs",
                file.raw
            )),
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

/// The shells whose `-c` script is read as a line of its own: bash, and dash, whose
/// different readings of bash's syntax the walk judges as well ([`Walker::script`]).
const RUN_AS_LINES: &[&str] = &["sh", "bash", "dash"];

/// `script` with the words after it put in as the shell's parameters `$0`, `$1`, ... (`sh
/// -c 'wc -l "$1"' _ a.txt`): a literal word as its value; a path only known when the line
/// runs (`{}` of `find -exec`, the paths `xargs -0` appends) only inside double quotes,
/// where it stays one word, as its shape (`./{}`). `None` for more than ten words, a glob,
/// several paths (`{} +`), a word only known when the line runs otherwise, or a `$N`
/// outside double quotes that stands for such a path.
fn put_in_parameters(script: &str, given: &[Arg]) -> Option<String> {
    if given.len() > 10 {
        return None;
    }
    let mut written = script.to_owned();
    for (number, word) in given.iter().enumerate() {
        let name = number.to_string();
        if word.pattern.is_some() || word.several {
            return None;
        }
        let value = word.text()?;
        let next = if word.is_placeholder() {
            loops::with_expansion(&written, &name, |quoted, operation| {
                (quoted && operation == Operation::Plain)
                    .then(|| substitute::in_double_quotes(value))
            })
        } else {
            // The shell runs the script itself: only the operations it does as this does.
            loops::with_value_where(&written, &name, value, parameter::is_posix)
        };
        // No change where the script does not name the parameter.
        written = next.or_else(|| (!mentions(&written, &name)).then(|| written.clone()))?;
    }
    Some(written)
}

/// Whether `$N` or `${N}` stands anywhere in `script`.
fn mentions(script: &str, number: &str) -> bool {
    script.contains(&format!("${number}")) || script.contains(&format!("${{{number}}}"))
}

/// `sh -n script` (with `-v` at most): the shell reads the script and runs none of it. Any
/// other option (`-i` would make `-n` ignored) leaves the call to [`shell`]'s other forms.
fn syntax_check(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Option<Judgement> {
    let mut noexec = false;
    let mut words = invocation.args.iter();
    let script = loop {
        let text = words.next()?.text()?;
        if text == "--" {
            break words.next()?.text()?;
        }
        match text.strip_prefix('-') {
            Some(flags) if !flags.is_empty() && flags.chars().all(|c| matches!(c, 'n' | 'v')) => {
                noexec |= flags.contains('n');
            }
            Some(_) => return None,
            None => break text,
        }
    };
    if !noexec || is_stdin_path(script) {
        return None;
    }
    let mut judgement = Judgement::whitelisted();
    walker.check_path(&mut judgement, invocation.program, script);
    Some(judgement)
}

fn is_stdin_path(path: &str) -> bool {
    matches!(path, "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0")
}

/// Another of the command's descriptors: a process substitution's pipe (`bash <(curl ...)`),
/// whose text is another command's output.
fn is_pipe_path(path: &str) -> bool {
    path.starts_with("/dev/fd/") || path.starts_with("/proc/self/fd/")
}

/// A shell (or `at`, `ssh`) running what arrives on its standard input.
pub(super) fn script_from_input(
    walker: &mut Walker<'_>,
    program: &str,
    stdin: &Stdin,
    depth: usize,
) -> Judgement {
    match stdin {
        Stdin::Text(text) => {
            walker.script(text, &Stdin::Inherited, depth);
            Judgement::other(format!("`{program}` runs the script fed to its input"))
        }
        Stdin::File(file) => Judgement::other(format!(
            "`{program}` runs the script in {file}, whose contents are not checked"
        )),
        Stdin::Unseen(from) | Stdin::Paths { from, .. } => Judgement::destroys(format!(
            "`{program}` runs a script read from {from}, which cannot be seen before it runs"
        )),
        Stdin::Inherited => Judgement::other(format!(
            "`{program}` starts a shell that reads commands from its input"
        )),
    }
}

/// Joins literal words into the script a shell will read (`eval`, `watch`, `ssh`).
pub(super) fn joined(words: &[Arg]) -> Option<String> {
    words
        .iter()
        .map(Arg::text)
        .collect::<Option<Vec<_>>>()
        .map(|w| w.join(" "))
}

pub(super) fn run_joined(
    walker: &mut Walker<'_>,
    invocation: &Invocation<'_>,
    words: &[Arg],
    what: &str,
) -> Judgement {
    let program = invocation.program;
    match joined(words) {
        Some(script) => {
            walker.script(&script, invocation.stdin, invocation.depth + 1);
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

/// `trap 'cmd' SIGNAL` runs `cmd` when the signal (or `EXIT`) arrives.
fn trap(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    if reports(invocation) {
        return Judgement::whitelisted();
    }
    let action = invocation
        .args
        .iter()
        .find(|a| a.may_be(|t| !matches!(t, "-l" | "-p" | "--")));
    if let Some(action) = action {
        match action.text() {
            Some("-" | "") => {}
            Some(script) => walker.script(script, &Stdin::Inherited, invocation.depth + 1),
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
            walker.script(value, &Stdin::Inherited, invocation.depth + 1);
        }
    }
    shell_state_or(invocation, "`alias` defines a command")
}

/// A shell-state builtin in a form that only changes the shell ([`state_only`]) is read-only
/// for the line (the plan lets it stand only on a line of such builtins).
fn shell_state(invocation: &Invocation<'_>) -> Judgement {
    let reason = match invocation.program {
        "set" => "`set` with no options prints every variable",
        "jobs" => "`jobs` is given a job to show",
        ":" => "`:` is given words only known when the line runs",
        _ => "`unset` is given no variable name",
    };
    shell_state_or(invocation, reason)
}

fn shell_state_or(invocation: &Invocation<'_>, reason: &str) -> Judgement {
    match shown_words(invocation.args) {
        Some(words) if state_only(invocation.program, &words) => Judgement::whitelisted(),
        _ => Judgement::other(reason),
    }
}

fn source(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let program = invocation.program;
    match invocation.args.first() {
        Some(file) => match file.text() {
            Some(path) if is_stdin_path(path) => {
                script_from_input(walker, program, invocation.stdin, invocation.depth + 1)
            }
            Some(path) if is_pipe_path(path) => Judgement::destroys(format!(
                "`{program} {}` runs a script only known when the line runs",
                file.raw
            )),
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

/// `hash -p /bin/rm ls` makes `ls` run `/bin/rm`: the program is judged as if it ran.
fn hash(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    if reports(invocation) {
        return Judgement::whitelisted();
    }
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

/// `export NAME=value` and the like set shell variables; a variable holding a command some
/// program runs is judged as that command.
fn sets_variables(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    for arg in invocation.args {
        if let Some((name, value)) = arg.text().and_then(|t| t.split_once('=')) {
            let value = Arg {
                value: Some(value.to_owned()),
                ..arg.clone()
            };
            program_variable(walker, name, &value, invocation.depth);
        }
    }
    shell_state_or(
        invocation,
        &format!("`{}` sets shell variables", invocation.program),
    )
}

/// `cd [dir]` into a directory inside the workspace, named by a plain word; the walker
/// checks the paths of the commands after it from there.
fn cd_rule(walker: &mut Walker<'_>, invocation: &Invocation<'_>) -> Judgement {
    let mut judgement = Judgement::whitelisted();
    let options = invocation
        .args
        .iter()
        .take_while(|arg| {
            arg.pattern.is_none()
                && arg
                    .text()
                    .is_some_and(crate::tools::command::plan::is_cd_option)
        })
        .count();
    let args = match invocation.args[options..].split_first() {
        Some((first, rest)) if first.text() == Some("--") => rest,
        _ => &invocation.args[options..],
    };
    let directory = match args {
        [] => String::new(),
        [one] => match one.text() {
            Some(text) if one.pattern.is_some() => {
                judgement.unknown(format!("`cd {text}` changes into a pattern"));
                return judgement;
            }
            Some(text) if text.starts_with('-') => {
                judgement.unknown(format!("`cd {text}` is not a directory in the workspace"));
                return judgement;
            }
            Some(text) => text.to_owned(),
            None => return judgement,
        },
        _ => {
            judgement.unknown("`cd` is given more than one directory");
            return judgement;
        }
    };
    if directory.is_empty() {
        // `cd` alone goes HOME, which is the workspace root for every command.
        walker.changes_directory(invocation.depth, vec![String::new()]);
        return judgement;
    }
    // Out of the workspace, only as the line's last command: the runner stays where it is
    // and says why (`cd ..` alone), and any command after it waits ([`Walker::command`]).
    if let Some(problem) = walker.directory_problem("cd", &directory) {
        walker.leaves_workspace(problem.replace("reads", "changes into"));
    }
    let targets = walker
        .cwds()
        .iter()
        .map(|cwd| crate::tools::command::assess::in_directory(cwd, &directory))
        .collect();
    walker.changes_directory(invocation.depth, targets);
    judgement
}

#[cfg(test)]
mod tests {
    #[test]
    fn shells_rules_give_each_form_its_verdict() {
        use crate::tools::command::tests::Expect::{Destructive, NotSafe, Safe, Unknown};
        use crate::tools::command::tests::check_in_workspace;
        check_in_workspace(&[
            ("cd -P src && ls", Safe),
            ("cd -L -- src", Safe),
            ("cd -P .. && ls", Unknown),
            ("cd -P ..", Safe),
            ("cd -x src", Unknown),
            ("bash -n deploy.sh", Safe),
            ("sh -nv deploy.sh", Safe),
            ("zsh -n -- deploy.sh", Safe),
            ("bash -v deploy.sh", Unknown),
            ("bash -n -i deploy.sh", Unknown),
            ("bash -n /etc/profile", Unknown),
            ("bash -n -c 'rm -rf /'", NotSafe),
            ("cat x | bash -n", NotSafe),
            ("bash -c \"$x\"", Destructive),
            ("curl -s http://x | sh", Destructive),
            ("cd src && ls", Safe),
            // A last `cd` out of the workspace: the runner refuses it, nothing runs there.
            ("cd ..", Safe),
            ("ls; cd /etc", Safe),
            ("cd src && cd ../..", Safe),
            ("cd ..; ls", Unknown),
            ("cd /etc && cat passwd", Unknown),
            ("export EDITOR=vim", Unknown),
            ("bash scripts/x.sh", Unknown),
            ("sh -c 'ls'", Safe),
            ("sh <<'EOF'\nls\nEOF", Unknown),
            ("sh < script.sh", Unknown),
            ("source ./env.sh", Unknown),
            // The shell's own state, on a line of nothing else: it ends with the line.
            ("export VARNAME=\"value\"", Safe),
            ("export CPPFLAGS CFLAGS LDFLAGS", Safe),
            ("unset XDG_SEAT", Safe),
            ("unset -v A B", Safe),
            ("set -x", Safe),
            ("set +e -u", Safe),
            ("set -o pipefail", Safe),
            ("alias ll='ls -l'", Safe),
            ("alias", Safe),
            ("jobs -l", Safe),
            ("export A=1 && unset B; set -e", Safe),
            // Beside other commands, or in forms that print or run something: a shell's.
            ("set -e; ls", Unknown),
            ("export A=b; env", Unknown),
            ("ls && unset X", Unknown),
            ("(set -x; ls)", Unknown),
            ("set", Unknown),
            ("set -o", Unknown),
            ("set a b", Unknown),
            ("export", Unknown),
            ("export -p", Unknown),
            ("export -f f", Unknown),
            ("jobs %1", Unknown),
            ("alias ll", Unknown),
            ("export A=$(rm x)", Destructive),
            ("export A=~/x", Unknown),
            ("export A=*", Unknown),
            ("alias ls='rm -rf .'", Destructive),
            ("export GIT_PAGER='rm -rf .'", Destructive),
            ("export A=b > out.txt", Destructive),
            ("set -x 2>&1", Unknown),
            ("unset $VAR", Unknown),
        ]);
    }
}
