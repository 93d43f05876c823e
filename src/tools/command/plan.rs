//! Planning a command line that needs no shell.
//!
//! [`plan`] parses a line with the bash grammar (brush-parser, the assessor's guarded parse;
//! the assessor plans the very tree it judged with `plan_parsed`) and, when the line is one
//! complete command made only of simple commands whose words are all literal, joined only by
//! `|`, `&&`, `||` and `;` and grouped only by subshells `( ... )`, returns a [`Plan`]: and-or
//! lists of pipelines of argv vectors (a stage may be a [`Subshell`] of such lists), the
//! words already unquoted. Such a line runs without a shell (see `execute`), so nothing in it
//! can expand, substitute or redirect: what the gate read is exactly what runs.
//!
//! A plan also holds what riskgate does itself, the same way the assessor reads it: brace
//! expansion ([`braces`](super::braces)), arithmetic on integer literals (`$((1 + 2))`),
//! `cd dir` as a pipeline of its own (the runner changes the line's directory), and the
//! redirections that write no file ([`Redirect`]: `< file`, `N>/dev/null`, `2>&1`, `>&2`),
//! the input texts the line shows whole (`<<< 'text'`, a here-document whose delimiter is
//! quoted or whose body holds nothing a shell would expand or unescape), process
//! substitutions `<( ... )` (planned lists run beside the command, which reads their output
//! at the word `/dev/fd/N`, as in bash), and `NAME=value` before a program for the variables that only choose how it prints
//! ([`INERT_VARIABLES`]: `TZ=UTC date`, `LC_ALL=C sort`), set in that program's environment,
//! and the questions about names `command -v|-V NAME` and `type [-afptP] NAME`, which the
//! runner answers itself (`names.rs`).
//!
//! Everything else — `$VAR`, `$(...)`, backquotes, `~`, other assignments, other redirections,
//! here-documents with expansions, `>( ... )`, `&`, compound commands other than subshells, `!`, `time`, functions, several
//! lines, other shell builtins — has no plan: [`plan_line`] says why, and such a line
//! runs through `sh -c` only when a person confirmed it.
//!
//! Unquoted glob characters (`*`, `?`, `[`) are the one thing a planned word may still
//! contain. They are kept as a pattern next to the literal text and expanded by riskgate
//! itself, inside the workspace, just before the pipeline runs.

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};
use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::{ParserImpl, ParserOptions};

use super::names::{BUILTINS, QUERY_PROGRAMS, Query};
use super::syntax::ParseFailure;

/// A line that can run without a shell: its `;`-separated and-or lists, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub lists: Vec<AndOrList>,
}

/// Pipelines joined by `&&` and `||`, evaluated left to right like sh: a pipeline after `&&`
/// runs when the last status was zero, after `||` when it was not; a skipped pipeline leaves
/// the status as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOrList {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

/// How a pipeline hangs on the status before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// `&&`: run on success.
    And,
    /// `||`: run on failure.
    Or,
}

/// Stages whose stdout feeds the next one's stdin. Its status is the last stage's (no
/// `pipefail`, like sh).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub stages: Vec<Stage>,
    /// `time PIPELINE`: once every stage has ended, the runner writes the time it took and
    /// the CPU time its processes used to the line's stderr, as bash does.
    pub timed: Option<Timing>,
    /// `! PIPELINE`: its status inverted (0 when it failed, 1 when it succeeded).
    pub negated: bool,
}

/// How a timed pipeline's times are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// bash's own: `real\t0m0.012s` and the like, after an empty line.
    Bash,
    /// `time -p`: POSIX's `real 0.01`.
    Posix,
}

/// One stage of a pipeline: a program, or a subshell of planned lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    Command(SimpleCommand),
    Subshell(Subshell),
    If(Conditional),
}

/// `if C1; then B1; elif C2; then B2; else B3; fi`: each condition runs in turn until one
/// succeeds, then its body; the status is the body's, or 0 when no body runs. Planned like a
/// subshell, in a copy of the line's directory, which is what it does as long as nothing
/// in it changes directory (such an `if` needs a shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conditional {
    /// Each condition with the body it chooses, in order.
    pub branches: Vec<(Plan, Plan)>,
    /// The `else` body.
    pub otherwise: Option<Plan>,
    pub redirects: Vec<Redirect>,
}

impl Conditional {
    /// Every list it may run: conditions, bodies and the `else` body.
    pub fn plans(&self) -> impl Iterator<Item = &Plan> {
        self.branches
            .iter()
            .flat_map(|(condition, body)| [condition, body])
            .chain(self.otherwise.iter())
    }
}

/// `( lists )`: and-or lists run one after the other on the stage's standard streams, in a
/// copy of the line's directory, like sh's subshell: a `cd` inside changes nothing after
/// it. Its status is its last pipeline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subshell {
    pub body: Plan,
    /// Applied to the stage's standard streams before the body runs, like a command's.
    pub redirects: Vec<Redirect>,
}

/// Subshells inside subshells deeper than this need a shell (the assessor follows no
/// deeper either).
const MAX_SUBSHELL_DEPTH: usize = super::assess::MAX_DEPTH;

/// One program and its arguments. `words` is never empty; the first names the program and is
/// never a glob pattern. `cd` is one too: the runner changes the line's directory itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<Word>,
    /// Applied in order, after the pipe ends are in place, like sh.
    pub redirects: Vec<Redirect>,
    /// `NAME=value` before the program, set in its environment: only the variables of
    /// [`INERT_VARIABLES`], with a literal value (an assignment is never glob-expanded).
    pub env: Vec<(String, String)>,
    /// Process substitutions `<( lists )` among its words: each is the word
    /// `/dev/fd/N`, and the runner runs the subshell beside the command with its output on
    /// a pipe the command holds as descriptor `N` (63 for the first, as in bash, then 62,
    /// ...).
    pub inputs: Vec<(i32, Subshell)>,
}

/// The descriptor of a command's first process substitution; later ones count down.
pub const FIRST_SUBSTITUTION_FD: i32 = 63;
/// Process substitutions one command may have.
pub const MAX_SUBSTITUTIONS: usize = 8;

/// Variables that choose how a program formats what it prints (time zone, locale, width,
/// colour) and nothing it runs, loads or writes: the ones a planned line may set for a
/// command (`TZ=UTC date`, `LC_ALL=C sort`). Any other assignment needs a shell.
pub const INERT_VARIABLES: &[&str] = &[
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
];

/// A redirection the runner performs itself. None of them writes to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `< path`: standard input from a file, as written (relative to the line's directory).
    Input(String),
    /// `N> /dev/null`, `N>> /dev/null`, `&> /dev/null`: descriptor 1 or 2 discarded.
    Discard(i32),
    /// `N>&M`: descriptor `fd` (1 or 2) becomes a copy of `to` (1 or 2).
    Duplicate { fd: i32, to: i32 },
    /// `<<< word` or a here-document the line shows whole (no expansion in it): standard
    /// input is this text.
    Text(String),
}

/// The one file a planned redirection may write.
const NULL_DEVICE: &str = "/dev/null";

/// One word with its quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The literal value, what the program gets when there is nothing to expand.
    pub text: String,
    /// The glob pattern, when the word has an unquoted `*`, `?` or `[`: the unquoted parts as
    /// written (`**` folded to `*`, since bash without `globstar` reads it so), the quoted
    /// parts escaped.
    pub pattern: Option<String>,
}

impl Word {
    /// A word that expands to nothing but itself.
    pub fn literal(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            pattern: None,
        }
    }
}

impl SimpleCommand {
    /// The program name as written.
    pub fn program(&self) -> &str {
        self.words.first().map_or("", |w| w.text.as_str())
    }

    /// The literal words, before glob expansion.
    pub fn argv(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }
}

impl Plan {
    /// Every simple command of the line, subshells' included, in the order written.
    pub fn commands(&self) -> impl Iterator<Item = &SimpleCommand> {
        let mut commands = Vec::new();
        self.collect_commands(&mut commands);
        commands.into_iter()
    }

    fn collect_commands<'a>(&'a self, into: &mut Vec<&'a SimpleCommand>) {
        let pipelines = self
            .lists
            .iter()
            .flat_map(|list| std::iter::once(&list.first).chain(list.rest.iter().map(|(_, p)| p)));
        for stage in pipelines.flat_map(|p| p.stages.iter()) {
            match stage {
                Stage::Command(command) => {
                    into.push(command);
                    for (_, input) in &command.inputs {
                        input.body.collect_commands(into);
                    }
                }
                Stage::Subshell(subshell) => subshell.body.collect_commands(into),
                Stage::If(conditional) => {
                    for plan in conditional.plans() {
                        plan.collect_commands(into);
                    }
                }
            }
        }
    }
}

impl Pipeline {
    /// The pipeline's one stage when it is the command `cd`, which the runner performs
    /// itself.
    pub fn lone_cd(&self) -> Option<&SimpleCommand> {
        match self.stages.as_slice() {
            [Stage::Command(command)] if command.program() == "cd" => Some(command),
            _ => None,
        }
    }
}

/// Why a line has no plan and needs a shell. Reads after "the line needs a shell because".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NeedsShell {
    /// Blank or only a comment: there is nothing to run, with or without a shell.
    #[error("it contains no command")]
    NoCommand,
    #[error("it does not parse as a command line ({0})")]
    Syntax(String),
    #[error("it holds several commands on separate lines")]
    SeveralLines,
    #[error("it starts a background job (`&`)")]
    Background,
    #[error(
        "it uses a compound command (`{{ ... }}`, if, for, while, case, or subshells nested more than {MAX_SUBSHELL_DEPTH} deep)"
    )]
    Compound,
    #[error("it defines a function")]
    Function,
    #[error("it uses `[[ ... ]]`")]
    ExtendedTest,
    #[error(
        "it times with `time` a subshell, `cd`, or a command named like an option (`time -f` is GNU time's: write `/usr/bin/time -f ...`)"
    )]
    Timed,
    #[error("it redirects input or output (`{0}`)")]
    Redirection(String),
    #[error("it uses process substitution")]
    ProcessSubstitution,
    #[error("it assigns a variable (`{0}`)")]
    Assignment(String),
    #[error("it uses {kind} in `{word}`")]
    Expansion { kind: &'static str, word: String },
    #[error("`{0}` is a shell builtin, which only a shell can run")]
    Builtin(String),
    #[error("`{0}` changes the shell for the commands after it, which only a shell can do")]
    ShellState(String),
    #[error("its program name `{0}` is a glob pattern")]
    GlobbedProgram(String),
}

/// Shell builtins that change the shell itself or exist only inside it: bash's builtins
/// but `cd` (which the runner performs) and those with a faithful program twin (`echo`,
/// `printf`, `test`, `[`, `true`, `false`, `pwd`, `kill`), which are left to that program.
/// Without a shell they would fail, or worse, run a same-named program that does something
/// else (`cd` in a child process changes nothing, so `cd src && ls` would list the wrong
/// directory).
fn is_shell_only_builtin(name: &str) -> bool {
    const PROGRAM_TWINS: &[&str] = &[
        "cd", "echo", "printf", "test", "[", "true", "false", "pwd", "kill",
    ];
    BUILTINS.contains(&name) && !PROGRAM_TWINS.contains(&name)
}

/// Builtins that only change the shell's own state (variables, options, aliases) or list
/// its jobs, in the forms that print nothing in a new shell ([`state_only`]). A line made
/// of nothing else does nothing that outlives it, which the runner does itself: each
/// succeeds and prints nothing, as in `sh -c`. Beside other commands, the state they set
/// matters (`set -e`, `export A=b; env`), and only a shell can keep it.
const STATE_BUILTINS: &[&str] = &["export", "unset", "set", "alias", "jobs", ":"];

/// Whether `program args` is a shell-state builtin in a form that prints nothing and only
/// changes the shell (see [`STATE_BUILTINS`]): `export NAME[=value]...`, `unset [-fv]
/// NAME...`, `set` with single-letter options or `-o NAME`, `alias` alone or
/// `alias NAME=value...`, `jobs [-lnprs]`; and `:`, which does nothing with its words.
pub(super) fn state_only(program: &str, args: &[&str]) -> bool {
    let name = |word: &str| {
        let mut chars = word.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let definition = |word: &str| word.split_once('=').is_some_and(|(n, _)| name(n));
    let flags = |word: &str, allowed: &str| {
        word.len() > 1 && word[1..].chars().all(|c| allowed.contains(c))
    };
    match program {
        "export" => !args.is_empty() && args.iter().all(|a| name(a) || definition(a)),
        "unset" => {
            let (options, names): (Vec<&str>, Vec<&str>) =
                args.iter().partition(|a| a.starts_with('-'));
            !names.is_empty()
                && names.iter().all(|a| name(a))
                && options.iter().all(|o| flags(o, "fv"))
        }
        "set" => {
            let mut words = args.iter();
            let mut any = false;
            while let Some(word) = words.next() {
                any = true;
                let ok = match *word {
                    "-o" | "+o" => words.next().is_some_and(|option| name(option)),
                    other if other.starts_with(['-', '+']) => flags(other, "abefhkmnptuvxBCEHPT"),
                    _ => false,
                };
                if !ok {
                    return false;
                }
            }
            any
        }
        "alias" => args.iter().all(|a| definition(a)),
        "jobs" => args.iter().all(|a| a.starts_with('-') && flags(a, "lnprs")),
        ":" => true,
        _ => false,
    }
}

/// Builtins that only print what a shell of the line has, in the forms that change nothing
/// ([`reports_only`]): `ulimit` without a value, `umask` without a mode, `times`, `dirs`,
/// the builtins' help, the history, traps, options, completions, key bindings and hashed
/// programs of a shell. The plan runs each in a new `bash` (its words handed to the script
/// as arguments, never read as shell text), whose limits, mask, times and directory are
/// the line's, so the answer is the one a shell running the line would print (a
/// non-interactive shell's: no history, no traps, no completions, nothing hashed).
const REPORT_BUILTINS: &[&str] = &[
    "ulimit", "umask", "times", "dirs", "help", "history", "trap", "shopt", "compgen", "complete",
    "bind", "fc", "hash",
];

/// `compgen -A` actions that list names a shell knows, not files, users or hosts.
const COMPGEN_ACTIONS: &[&str] = &[
    "alias",
    "arrayvar",
    "binding",
    "builtin",
    "command",
    "disabled",
    "enabled",
    "export",
    "function",
    "helptopic",
    "keyword",
    "running",
    "setopt",
    "shopt",
    "signal",
    "stopped",
    "variable",
];

/// Whether `program args` is a [`REPORT_BUILTINS`] form that only prints: `ulimit` with
/// options and no value (`ulimit -a`, `ulimit -Hn`), `umask [-S] [-p]`, `times`, `dirs
/// [-lpv]`, `help [-dms] [PATTERN...]` (the builtins' own documentation), `history [N]`,
/// `trap` listing (`-l`, `-p [SIGNAL...]`) or resetting (`trap SIGNAL`, `trap - SIGNAL...`:
/// never with an action, which the new shell would run as it exits), `shopt [-opq]
/// [NAME...]`, `compgen` of the shell's own names (`-abcjksve`, `-A ACTION`; not files, and
/// not `-W`/`-F`/`-C`, which run code), `complete [-p] [NAME...]`, `bind -lpPsSvV`, `fc -l
/// [-nr] [FIRST [LAST]]`, `hash [-l]` and `hash -t NAME...`.
pub(super) fn reports_only(program: &str, args: &[&str]) -> bool {
    let is_flags = |word: &str, allowed: &str| {
        word.len() > 1 && word.starts_with('-') && word[1..].chars().all(|c| allowed.contains(c))
    };
    let flags = |allowed: &str| args.iter().all(|word| is_flags(word, allowed));
    let number = |word: &str| !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit());
    // A signal's name or number (`INT`, `SIGRTMIN+1`, `15`), or a trap's pseudo-signal.
    let signal = |word: &str| {
        !word.starts_with('-')
            && !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-')
    };
    // A command's name: no option, no path.
    let command = |word: &str| {
        !word.starts_with('-')
            && !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.+".contains(&b))
    };
    // Options, then operands, split at the first word that is not an option (or `--`).
    let split = |allowed: &str| -> Option<(Vec<&str>, Vec<&str>)> {
        let mut options = Vec::new();
        let mut words = args.iter().copied().peekable();
        while let Some(word) = words.next_if(|w| w.starts_with('-') && *w != "-") {
            if word == "--" {
                break;
            }
            if !is_flags(word, allowed) {
                return None;
            }
            options.push(word);
        }
        Some((options, words.collect()))
    };
    match program {
        "ulimit" => flags("abcdefiklmnpqrstuvxPRTHS"),
        "umask" => flags("Sp"),
        "times" => args.is_empty(),
        "dirs" => flags("lpv"),
        "help" => args.iter().all(|word| {
            !word.starts_with('-')
                || (word.len() > 1 && word[1..].chars().all(|c| "dms".contains(c)))
        }),
        "history" => match args {
            [] => true,
            [count] => number(count),
            _ => false,
        },
        "trap" => match split("lp") {
            Some((options, operands)) if !options.is_empty() => operands.iter().all(|w| signal(w)),
            Some((_, operands)) => match operands.as_slice() {
                [] => true,
                [one] => signal(one),
                ["-", rest @ ..] => !rest.is_empty() && rest.iter().all(|w| signal(w)),
                _ => false,
            },
            None => false,
        },
        "shopt" => split("opq").is_some_and(|(_, names)| {
            names
                .iter()
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        }),
        "compgen" => {
            let mut words = args.iter().copied();
            let mut operand = None;
            while let Some(word) = words.next() {
                if operand.is_some() {
                    return false;
                }
                match word {
                    "-A" => {
                        if !words.next().is_some_and(|a| COMPGEN_ACTIONS.contains(&a)) {
                            return false;
                        }
                    }
                    "--" => operand = words.next().or(Some("")),
                    w if w.starts_with('-') && w != "-" => {
                        if !is_flags(w, "abcjksve") {
                            return false;
                        }
                    }
                    w => operand = Some(w),
                }
            }
            // The one word whose completions are listed: a name, never a path.
            operand.is_none_or(|w| !w.contains('/'))
        }
        "complete" => split("p").is_some_and(|(_, names)| names.iter().all(|w| command(w))),
        "bind" => flags("lpPsSvV"),
        "fc" => match split("lnr") {
            Some((options, range)) => {
                options.iter().any(|o| o.contains('l'))
                    && range.len() <= 2
                    && range
                        .iter()
                        .all(|w| number(w) || (w.starts_with('-') && number(&w[1..])))
            }
            None => false,
        },
        "hash" => match args {
            [] => true,
            ["-l"] => true,
            ["-t", names @ ..] => !names.is_empty() && names.iter().all(|w| command(w)),
            _ => false,
        },
        _ => false,
    }
}

/// The command that runs a [`REPORT_BUILTINS`] form: `bash -p -c 'builtin NAME "$@"' NAME
/// ARGS...` (`-p`: no `BASH_ENV` and no functions from the environment).
fn report_in_bash(words: Vec<Word>) -> Vec<Word> {
    let name = words.first().map(|w| w.text.clone()).unwrap_or_default();
    let mut planned = vec![
        Word::literal("bash"),
        Word::literal("-p"),
        Word::literal("-c"),
        Word::literal(format!("builtin {name} \"$@\"")),
    ];
    planned.extend(words);
    planned
}

/// Whether a planned command is a shell-state builtin the runner performs itself.
pub fn is_state_builtin(command: &SimpleCommand) -> bool {
    STATE_BUILTINS.contains(&command.program())
}

/// Whether a planned command is a question about names the runner answers itself
/// (`command -v git`, `type ls`: the plan holds no other form of them).
pub fn is_query_builtin(command: &SimpleCommand) -> bool {
    QUERY_PROGRAMS.contains(&command.program())
}

/// Whether a timed pipeline is one the runner times as bash would: processes only, the first
/// not named like an option, no `cd`.
pub(super) fn timed_plainly(stages: &[Stage]) -> bool {
    stages.iter().all(|stage| match stage {
        Stage::Command(command) => command.program() != "cd",
        Stage::Subshell(_) | Stage::If(_) => false,
    }) && stages.first().is_some_and(|stage| match stage {
        Stage::Command(command) => !command.program().starts_with('-'),
        Stage::Subshell(_) | Stage::If(_) => false,
    })
}

/// Whether any command of the plan, in a subshell or a process substitution too, is a
/// `cd`: the directory a later command runs in depends on it.
pub fn changes_directory(plan: &Plan) -> bool {
    lists_change_directory(&plan.lists)
}

/// [`changes_directory`] of some of a plan's lists.
fn lists_change_directory(lists: &[AndOrList]) -> bool {
    let command_changes = |command: &SimpleCommand| {
        command.program() == "cd"
            || command
                .inputs
                .iter()
                .any(|(_, input)| changes_directory(&input.body))
    };
    lists.iter().any(|list| {
        std::iter::once(&list.first)
            .chain(list.rest.iter().map(|(_, pipeline)| pipeline))
            .flat_map(|pipeline| &pipeline.stages)
            .any(|stage| match stage {
                Stage::Command(command) => command_changes(command),
                Stage::Subshell(subshell) => changes_directory(&subshell.body),
                Stage::If(conditional) => conditional.plans().any(changes_directory),
            })
    })
}

/// Whether a `cd` of the plan comes before its very end: any `cd` but one that is the
/// line's last command on its own (`ls; cd ..`), after which nothing runs, so that what ran
/// before it (a substitution run first among them) ran where the line started.
pub fn changes_directory_before_its_end(plan: &Plan) -> bool {
    let Some((last, before)) = plan.lists.split_last() else {
        return false;
    };
    let last_alone = match (last.rest.as_slice(), last.first.stages.as_slice()) {
        ([], [Stage::Command(command)]) => command.program() == "cd" && command.inputs.is_empty(),
        _ => false,
    };
    lists_change_directory(if last_alone { before } else { &plan.lists })
}

/// The plan of `line`, or `None` when it needs a shell.
pub fn plan(line: &str) -> Option<Plan> {
    plan_line(line).ok()
}

/// The plan of `line`, or why it needs a shell. The line is parsed exactly as the assessor
/// parses it (`syntax::parse_script`), and the assessor builds its plan from that same tree
/// (`plan_parsed`): the argv vectors the runner executes are the words the gate judged.
pub fn plan_line(line: &str) -> Result<Plan, NeedsShell> {
    plan_parsed(&super::syntax::parse_script(line))
}

/// The plan of a parsed line, or why it needs a shell. brush-parser's word parser panics
/// on a few number overflows; such a word has no plan.
pub(super) fn plan_parsed(parsed: &Result<ast::Program, ParseFailure>) -> Result<Plan, NeedsShell> {
    let program = parsed
        .as_ref()
        .map_err(|failure| NeedsShell::Syntax(failure.detail()))?;
    catch_unwind(AssertUnwindSafe(|| plan_program(program)))
        .unwrap_or_else(|_| Err(NeedsShell::Syntax("the parser failed on it".to_owned())))
}

fn plan_program(program: &ast::Program) -> Result<Plan, NeedsShell> {
    let complete = match program.complete_commands.as_slice() {
        [] => return Err(NeedsShell::NoCommand),
        [one] => one,
        _ => return Err(NeedsShell::SeveralLines),
    };
    let plan = Planner {
        options: parser_options(),
        subshells: 0,
    }
    .lists(complete)?;
    // `:` changes nothing, and stands anywhere.
    let changes_state = |c: &SimpleCommand| is_state_builtin(c) && c.program() != ":";
    let state = plan.commands().find(|c| changes_state(c));
    if let Some(first) = state
        && plan.commands().any(|c| !is_state_builtin(c))
    {
        return Err(NeedsShell::ShellState(first.program().to_owned()));
    }
    Ok(plan)
}

/// The options words are unquoted with: bash's, without `extglob` (a word with an extended
/// glob pattern is refused before it gets here).
fn parser_options() -> ParserOptions {
    ParserOptions {
        enable_extended_globbing: false,
        posix_mode: false,
        sh_mode: false,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: ParserImpl::Peg,
    }
}

/// Plans the lists of a line, and of the subshells in it.
struct Planner {
    options: ParserOptions,
    /// How deep in subshells the planner is.
    subshells: usize,
}

impl Planner {
    /// `;`-separated and-or lists: a line, or a subshell's body.
    fn lists(&mut self, list: &ast::CompoundList) -> Result<Plan, NeedsShell> {
        let lists = list
            .0
            .iter()
            .map(|ast::CompoundListItem(list, separator)| match separator {
                ast::SeparatorOperator::Async => Err(NeedsShell::Background),
                ast::SeparatorOperator::Sequence => self.and_or_list(list),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if lists.is_empty() {
            return Err(NeedsShell::NoCommand);
        }
        Ok(Plan { lists })
    }

    fn and_or_list(&mut self, list: &ast::AndOrList) -> Result<AndOrList, NeedsShell> {
        let first = self.pipeline(&list.first)?;
        let rest = list
            .additional
            .iter()
            .map(|next| match next {
                ast::AndOr::And(p) => Ok((Connector::And, self.pipeline(p)?)),
                ast::AndOr::Or(p) => Ok((Connector::Or, self.pipeline(p)?)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AndOrList { first, rest })
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) -> Result<Pipeline, NeedsShell> {
        let timed = pipeline.timed.as_ref().map(|timed| {
            if timed.is_posix_output() {
                Timing::Posix
            } else {
                Timing::Bash
            }
        });
        let stages = pipeline
            .seq
            .iter()
            .map(|command| match command {
                ast::Command::Simple(simple) => self.simple_command(simple).map(Stage::Command),
                ast::Command::Compound(ast::CompoundCommand::Subshell(subshell), redirects) => self
                    .subshell(&subshell.list, redirects.as_ref())
                    .map(Stage::Subshell),
                // `{ ...; }` runs in the shell itself, a subshell in a pipeline: as a
                // subshell it does the same unless it changes directory, which would last.
                ast::Command::Compound(ast::CompoundCommand::BraceGroup(group), redirects) => {
                    let group = self.subshell(&group.list, redirects.as_ref())?;
                    match changes_directory(&group.body) {
                        true => Err(NeedsShell::Compound),
                        false => Ok(Stage::Subshell(group)),
                    }
                }
                ast::Command::Compound(ast::CompoundCommand::IfClause(clause), redirects) => {
                    self.conditional(clause, redirects.as_ref()).map(Stage::If)
                }
                ast::Command::Compound(..) => Err(NeedsShell::Compound),
                ast::Command::Function(_) => Err(NeedsShell::Function),
                ast::Command::ExtendedTest(..) => Err(NeedsShell::ExtendedTest),
            })
            .collect::<Result<Vec<_>, _>>()?;
        for stage in &stages {
            if let Stage::Command(command) = stage
                && command.program() == "cd"
                && (stages.len() > 1 || cd_directory(command).is_none())
            {
                return Err(NeedsShell::Builtin("cd".to_owned()));
            }
        }
        // bash's `time` takes only `-p`: `time -f FMT cmd` runs a command named `-f` there
        // (GNU time's options are meant), and it times a subshell or `cd` in the shell
        // itself, whose CPU time only bash can tell.
        if timed.is_some() && !timed_plainly(&stages) {
            return Err(NeedsShell::Timed);
        }
        Ok(Pipeline {
            stages,
            timed,
            negated: pipeline.bang,
        })
    }

    fn conditional(
        &mut self,
        clause: &ast::IfClauseCommand,
        redirects: Option<&ast::RedirectList>,
    ) -> Result<Conditional, NeedsShell> {
        // The redirections and the depth of a subshell, with the clause's lists.
        let Subshell { body, redirects } = self.subshell(&clause.condition, redirects)?;
        self.subshells += 1;
        let rest = self.branches(clause, body);
        self.subshells -= 1;
        let (branches, otherwise) = rest?;
        let conditional = Conditional {
            branches,
            otherwise,
            redirects,
        };
        if conditional.plans().any(changes_directory) {
            return Err(NeedsShell::Compound);
        }
        Ok(conditional)
    }

    /// The branches of an `if` whose first condition is planned (`condition`).
    #[allow(clippy::type_complexity)]
    fn branches(
        &mut self,
        clause: &ast::IfClauseCommand,
        condition: Plan,
    ) -> Result<(Vec<(Plan, Plan)>, Option<Plan>), NeedsShell> {
        let mut branches = vec![(condition, self.lists(&clause.then)?)];
        let mut otherwise = None;
        for branch in clause.elses.iter().flatten() {
            let body = self.lists(&branch.body)?;
            match &branch.condition {
                Some(condition) if otherwise.is_none() => {
                    branches.push((self.lists(condition)?, body));
                }
                None if otherwise.is_none() => otherwise = Some(body),
                _ => return Err(NeedsShell::Compound),
            }
        }
        Ok((branches, otherwise))
    }

    fn subshell(
        &mut self,
        body: &ast::CompoundList,
        redirects: Option<&ast::RedirectList>,
    ) -> Result<Subshell, NeedsShell> {
        if self.subshells >= MAX_SUBSHELL_DEPTH {
            return Err(NeedsShell::Compound);
        }
        let redirects = redirects
            .iter()
            .flat_map(|list| list.0.iter())
            .map(|io| redirect(io, &self.options))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        self.subshells += 1;
        let body = self.lists(body);
        self.subshells -= 1;
        Ok(Subshell {
            body: body?,
            redirects,
        })
    }
}

/// The directory a planned `cd` changes into: `Some(None)` (the home directory, which is
/// the workspace) for `cd` alone; `None` for a form the runner does not take (an option,
/// `-`, a pattern, several words). Its redirections only say where its complaint goes.
pub fn cd_directory(command: &SimpleCommand) -> Option<Option<&str>> {
    // `-P`/`-L` (and bash's `-e`): how symlinks are followed, which the runner does the one
    // way it knows (the real path, checked against the workspace).
    let options = command.words[1..]
        .iter()
        .take_while(|word| word.pattern.is_none() && is_cd_option(&word.text))
        .count();
    let words = match command.words.get(1 + options) {
        Some(word) if word.text == "--" => &command.words[2 + options..],
        _ => &command.words[1 + options..],
    };
    match words {
        [] => Some(None),
        [word]
            if word.pattern.is_none() && !word.text.starts_with('-') && !word.text.is_empty() =>
        {
            Some(Some(word.text.as_str()))
        }
        _ => None,
    }
}

/// A `cd` option word: `-P`, `-L`, `-e` or a cluster of them.
pub fn is_cd_option(text: &str) -> bool {
    text.strip_prefix('-').is_some_and(|flags| {
        !flags.is_empty() && flags.chars().all(|c| matches!(c, 'L' | 'P' | 'e'))
    })
}

impl Planner {
    fn simple_command(
        &mut self,
        command: &ast::SimpleCommand,
    ) -> Result<SimpleCommand, NeedsShell> {
        let options = &self.options.clone();
        let mut planned = SimpleCommand {
            words: Vec::new(),
            redirects: Vec::new(),
            env: Vec::new(),
            inputs: Vec::new(),
        };
        // A prefix holds only assignments and redirections (`a=b ls`, `<in ls`).
        for item in command.prefix.iter().flat_map(|p| p.0.iter()) {
            prefix_or_suffix_item(item, true, options, &mut planned)?;
        }
        let Some(name) = &command.word_or_name else {
            return Err(NeedsShell::NoCommand);
        };
        let mut names = expanded_words(&name.value, options)?.into_iter();
        let program = names.next().ok_or(NeedsShell::NoCommand)?;
        if program.pattern.is_some() {
            return Err(NeedsShell::GlobbedProgram(program.text));
        }
        let state = STATE_BUILTINS.contains(&program.text.as_str());
        let query = QUERY_PROGRAMS.contains(&program.text.as_str());
        let report = REPORT_BUILTINS.contains(&program.text.as_str());
        if is_shell_only_builtin(&program.text) && !state && !query && !report {
            return Err(NeedsShell::Builtin(program.text));
        }
        planned.words.push(program);
        planned.words.extend(names);
        for item in command.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(
                    ast::ProcessSubstitutionKind::Read,
                    subshell,
                ) if planned.inputs.len() < MAX_SUBSTITUTIONS => {
                    let body = self.subshell(&subshell.list, None)?;
                    let fd =
                        FIRST_SUBSTITUTION_FD - i32::try_from(planned.inputs.len()).unwrap_or(0);
                    planned.words.push(Word::literal(format!("/dev/fd/{fd}")));
                    planned.inputs.push((fd, body));
                }
                _ => prefix_or_suffix_item(item, false, options, &mut planned)?,
            }
        }
        if query {
            let argv = planned.argv();
            let literal = planned.words.iter().all(|w| w.pattern.is_none());
            if !(literal
                && planned.inputs.is_empty()
                && Query::parse(argv[0], &argv[1..]).is_some())
            {
                return Err(NeedsShell::Builtin(argv[0].to_owned()));
            }
        }
        if report {
            let argv = planned.argv();
            let literal = planned.words.iter().all(|w| w.pattern.is_none());
            if !(literal && planned.inputs.is_empty() && reports_only(argv[0], &argv[1..])) {
                return Err(NeedsShell::Builtin(argv[0].to_owned()));
            }
            planned.words = report_in_bash(std::mem::take(&mut planned.words));
        }
        if state {
            let argv = planned.argv();
            let literal = planned.words.iter().all(|w| w.pattern.is_none());
            if !(literal
                && planned.redirects.is_empty()
                && planned.inputs.is_empty()
                && state_only(argv[0], &argv[1..]))
            {
                return Err(NeedsShell::Builtin(argv[0].to_owned()));
            }
        }
        Ok(planned)
    }
}

/// The redirection the runner performs itself, or why a shell must.
fn redirect(
    redirect: &ast::IoRedirect,
    options: &ParserOptions,
) -> Result<Vec<Redirect>, NeedsShell> {
    use ast::{IoFileRedirectKind as Kind, IoFileRedirectTarget as Target};
    let refused = || NeedsShell::Redirection(redirect.to_string().trim().to_owned());
    let standard = |fd: i32| (fd == 1 || fd == 2).then_some(fd);
    let literal = |raw: &ast::Word| {
        word(&raw.value, false, options)
            .ok()
            .filter(|w| w.pattern.is_none())
            .map(|w| w.text)
    };
    let planned = match redirect {
        ast::IoRedirect::File(fd, Kind::Read, Target::Filename(target))
            if fd.is_none_or(|fd| fd == 0) =>
        {
            vec![Redirect::Input(literal(target).ok_or_else(refused)?)]
        }
        ast::IoRedirect::File(
            fd,
            Kind::Write | Kind::Append | Kind::Clobber,
            Target::Filename(target),
        ) => {
            let fd = standard(fd.unwrap_or(1)).ok_or_else(refused)?;
            if literal(target).as_deref() != Some(NULL_DEVICE) {
                return Err(refused());
            }
            vec![Redirect::Discard(fd)]
        }
        ast::IoRedirect::File(fd, Kind::DuplicateOutput, target) => {
            let to = match target {
                Target::Fd(to) => Some(*to),
                Target::Duplicate(word) => literal(word).and_then(|t| t.parse().ok()),
                _ => None,
            };
            let fd = standard(fd.unwrap_or(1)).ok_or_else(refused)?;
            let to = to.and_then(standard).ok_or_else(refused)?;
            vec![Redirect::Duplicate { fd, to }]
        }
        ast::IoRedirect::OutputAndError(target, _)
            if literal(target).as_deref() == Some(NULL_DEVICE) =>
        {
            vec![Redirect::Discard(1), Redirect::Discard(2)]
        }
        // A here-string is never globbed, but `literal` refuses a pattern anyway.
        ast::IoRedirect::HereString(fd, word) if fd.is_none_or(|fd| fd == 0) => {
            vec![Redirect::Text(literal(word).ok_or_else(refused)? + "\n")]
        }
        ast::IoRedirect::HereDocument(fd, document) if fd.is_none_or(|fd| fd == 0) => {
            vec![Redirect::Text(
                here_document_text(document).ok_or_else(refused)?,
            )]
        }
        _ => return Err(refused()),
    };
    Ok(planned)
}

/// The text of a here-document as the command reads it, when the line shows it whole: its
/// delimiter quoted (`<<'EOF'`), or nothing in it a shell would expand or unescape (`$`,
/// backquotes, backslashes). With `<<-`, leading tabs go from every line.
fn here_document_text(document: &ast::IoHereDocument) -> Option<String> {
    let body = &document.doc.value;
    if document.requires_expansion && body.contains(['$', '`', '\\']) {
        return None;
    }
    // No longer than the line it is part of, whose length is capped.
    let text: String = if document.remove_tabs {
        body.split_inclusive('\n')
            .map(|line| line.trim_start_matches('\t'))
            .collect()
    } else {
        body.clone()
    };
    Some(text)
}

/// The words one word becomes after brace expansion, each unquoted.
fn expanded_words(raw: &str, options: &ParserOptions) -> Result<Vec<Word>, NeedsShell> {
    match super::braces::expand_braces(raw) {
        Ok(Some(words)) => words.iter().map(|w| word(w, false, options)).collect(),
        Ok(None) => Ok(vec![word(raw, false, options)?]),
        Err(refused) => Err(NeedsShell::Expansion {
            kind: match refused {
                super::braces::BracesRefused::TooMany(_) => "a brace expansion too large",
                super::braces::BracesRefused::Unsupported(_) => "brace expansion",
            },
            word: raw.to_owned(),
        }),
    }
}

fn prefix_or_suffix_item(
    item: &ast::CommandPrefixOrSuffixItem,
    in_prefix: bool,
    options: &ParserOptions,
    command: &mut SimpleCommand,
) -> Result<(), NeedsShell> {
    let words = &mut command.words;
    match item {
        ast::CommandPrefixOrSuffixItem::IoRedirect(io) => {
            command.redirects.extend(redirect(io, options)?);
            Ok(())
        }
        ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {
            Err(NeedsShell::ProcessSubstitution)
        }
        // Before the program name it sets a variable; after it (`make CC=cc`), bash passes
        // it on as a word, but still expands `~` after the `=` or a `:`.
        ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, raw) => {
            if in_prefix {
                let set = inert_assignment(assignment, options)
                    .ok_or_else(|| NeedsShell::Assignment(raw.value.clone()))?;
                command.env.push(set);
                return Ok(());
            }
            if super::braces::expand_braces(&raw.value).is_ok_and(|w| w.is_some()) {
                words.extend(expanded_words(&raw.value, options)?);
                return Ok(());
            }
            words.push(word(&raw.value, true, options)?);
            Ok(())
        }
        ast::CommandPrefixOrSuffixItem::Word(raw) => {
            if in_prefix {
                // The grammar puts no plain words before the name; refuse if it ever does.
                return Err(NeedsShell::Syntax(format!(
                    "unexpected word `{}` before the command name",
                    raw.value
                )));
            }
            words.extend(expanded_words(&raw.value, options)?);
            Ok(())
        }
    }
}

/// `NAME=value` of an inert variable ([`INERT_VARIABLES`]) with a value that expands to
/// nothing but itself (no `~`, variable or substitution; a glob stays as written, as bash
/// leaves it in an assignment), as the name and the unquoted value.
fn inert_assignment(
    assignment: &ast::Assignment,
    options: &ParserOptions,
) -> Option<(String, String)> {
    let ast::AssignmentName::VariableName(name) = &assignment.name else {
        return None;
    };
    let ast::AssignmentValue::Scalar(value) = &assignment.value else {
        return None;
    };
    if assignment.append || !INERT_VARIABLES.contains(&name.as_str()) {
        return None;
    }
    if super::braces::has_expression(&value.value) {
        return None;
    }
    let value = word(&value.value, true, options).ok()?;
    Some((name.clone(), value.text))
}

/// Unquotes one word, or says which expansion it uses. `assignment_shaped` words
/// (`name=value` after the program) are refused when an unquoted `~` could expand.
fn word(raw: &str, assignment_shaped: bool, options: &ParserOptions) -> Result<Word, NeedsShell> {
    let expansion = |kind: &'static str| NeedsShell::Expansion {
        kind,
        word: raw.to_owned(),
    };
    // Brace expansion happens before quote removal, on the raw text, and is done by
    // `expanded_words` before a word gets here; any expression left is refused. (Not with
    // brush-parser's brace parser, which backtracks exponentially on `{a,{a,{a,...`.)
    if super::braces::has_expression(raw) {
        return Err(expansion("brace expansion"));
    }
    let pieces =
        brush_parser::word::parse(raw, options).map_err(|e| NeedsShell::Syntax(e.to_string()))?;
    let mut unquoted = Unquoted::default();
    for WordPieceWithSource { piece, .. } in &pieces {
        match piece {
            WordPiece::Text(text) => {
                if assignment_shaped && text.contains('~') {
                    return Err(expansion("tilde expansion"));
                }
                // The line is parsed as bash reads it with `extglob` on (like the assessor
                // does); riskgate does not expand these patterns itself.
                if super::words::has_extglob(text) {
                    return Err(expansion("an extended glob pattern"));
                }
                unquoted.push_unquoted(text);
            }
            WordPiece::SingleQuotedText(text) => unquoted.push_quoted(text),
            WordPiece::EscapeSequence(escaped) => unquoted.push_quoted(unescape(escaped)),
            WordPiece::AnsiCQuotedText(inner) => {
                let text =
                    super::words::ansi_c(inner).ok_or_else(|| expansion(expansion_kind(piece)))?;
                unquoted.push_quoted(&text);
            }
            WordPiece::ArithmeticExpression(expression) => {
                let number = super::arith::evaluate(&expression.value)
                    .ok_or_else(|| expansion("arithmetic expansion"))?;
                unquoted.push_quoted(&number.to_string());
            }
            WordPiece::DoubleQuotedSequence(inner) => {
                for WordPieceWithSource { piece, .. } in inner {
                    match piece {
                        WordPiece::Text(text) => unquoted.push_quoted(text),
                        WordPiece::EscapeSequence(escaped) => {
                            unquoted.push_quoted(unescape(escaped));
                        }
                        WordPiece::ArithmeticExpression(expression) => {
                            let number = super::arith::evaluate(&expression.value)
                                .ok_or_else(|| expansion("arithmetic expansion"))?;
                            unquoted.push_quoted(&number.to_string());
                        }
                        other => return Err(expansion(expansion_kind(other))),
                    }
                }
            }
            other => return Err(expansion(expansion_kind(other))),
        }
    }
    Ok(unquoted.finish())
}

/// What a non-literal piece is called in a message.
fn expansion_kind(piece: &WordPiece) -> &'static str {
    match piece {
        WordPiece::Text(_)
        | WordPiece::SingleQuotedText(_)
        | WordPiece::EscapeSequence(_)
        | WordPiece::DoubleQuotedSequence(_) => "nested quoting",
        WordPiece::AnsiCQuotedText(_) => "ANSI-C quoting (`$'...'`)",
        WordPiece::GettextDoubleQuotedSequence(_) => "locale quoting (`$\"...\"`)",
        WordPiece::TildeExpansion(_) => "tilde expansion",
        WordPiece::ParameterExpansion(_) => "a variable expansion",
        WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
            "a command substitution"
        }
        WordPiece::ArithmeticExpression(_) => "arithmetic expansion",
    }
}

/// `\x` -> `x`; a backslash-newline is a line continuation and stands for nothing.
fn unescape(escaped: &str) -> &str {
    let rest = escaped.strip_prefix('\\').unwrap_or(escaped);
    if rest == "\n" { "" } else { rest }
}

/// A word being unquoted: its literal text and, alongside, its glob pattern.
#[derive(Default)]
struct Unquoted {
    text: String,
    pattern: String,
    has_glob: bool,
}

impl Unquoted {
    fn push_unquoted(&mut self, text: &str) {
        self.text.push_str(text);
        for (at, c) in text.char_indices() {
            // A `[` opens a bracket expression only when a `]` follows (`[` alone is the
            // program `[`), as the assessor reads it.
            if matches!(c, '*' | '?') || (c == '[' && text[at..].contains(']')) {
                self.has_glob = true;
            }
            if c == '*' && self.pattern.ends_with('*') {
                continue;
            }
            self.pattern.push(c);
        }
    }

    fn push_quoted(&mut self, text: &str) {
        self.text.push_str(text);
        self.pattern.push_str(&glob::Pattern::escape(text));
    }

    fn finish(self) -> Word {
        Word {
            text: self.text,
            pattern: self.has_glob.then_some(self.pattern),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One and-or list as text: `(connector, pipeline)` pairs, each pipeline a list of argv
    /// vectors; the first pipeline's connector is `""`.
    type ListShape = Vec<(&'static str, Vec<Vec<String>>)>;

    /// A plan as nested text, one [`ListShape`] per `;`-separated list.
    fn shape(line: &str) -> Vec<ListShape> {
        let plan = plan(line).unwrap_or_else(|| panic!("{line:?} should have a plan"));
        let argvs = |p: &Pipeline| {
            p.stages
                .iter()
                .map(|stage| match stage {
                    Stage::Command(c) => c.argv().into_iter().map(str::to_owned).collect(),
                    Stage::Subshell(_) => vec!["(subshell)".to_owned()],
                    Stage::If(_) => vec!["(if)".to_owned()],
                })
                .collect::<Vec<Vec<String>>>()
        };
        plan.lists
            .iter()
            .map(|list| {
                std::iter::once(("", argvs(&list.first)))
                    .chain(list.rest.iter().map(|(c, p)| {
                        let op = match c {
                            Connector::And => "&&",
                            Connector::Or => "||",
                        };
                        (op, argvs(p))
                    }))
                    .collect()
            })
            .collect()
    }

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_pipeline_is_planned() {
        assert_eq!(
            shape("ls | wc -l"),
            vec![vec![("", vec![argv(&["ls"]), argv(&["wc", "-l"])])]]
        );
    }

    #[test]
    fn and_or_lists_keep_their_connectors() {
        assert_eq!(
            shape(r#"grep -rn "a b" src && echo ok"#),
            vec![vec![
                ("", vec![argv(&["grep", "-rn", "a b", "src"])]),
                ("&&", vec![argv(&["echo", "ok"])]),
            ]]
        );
        assert_eq!(
            shape("false || echo y; echo z"),
            vec![
                vec![
                    ("", vec![argv(&["false"])]),
                    ("||", vec![argv(&["echo", "y"])])
                ],
                vec![("", vec![argv(&["echo", "z"])])],
            ]
        );
    }

    #[test]
    fn quotes_and_escapes_come_off() {
        assert_eq!(
            shape(r#"echo 'a;b' "c d" e\ f"#),
            vec![vec![("", vec![argv(&["echo", "a;b", "c d", "e f"])])]]
        );
        assert_eq!(
            shape(
                r#"printf '%s\n' "a\b" "\$x" "q\"q" 'it'"'"'s' \\ x\
y"#
            ),
            vec![vec![(
                "",
                vec![argv(&[
                    "printf", "%s\\n", "a\\b", "$x", "q\"q", "it's", "\\", "xy"
                ])]
            )]]
        );
        // A trailing `;` and a comment change nothing.
        assert_eq!(shape("ls; # list"), vec![vec![("", vec![argv(&["ls"])])]]);
    }

    #[test]
    fn words_that_only_look_special_stay_literal() {
        assert_eq!(
            shape("echo a=b x{} {a} a~b HEAD~1 '$HOME' \"{a,b}\" --"),
            vec![vec![(
                "",
                vec![argv(&[
                    "echo", "a=b", "x{}", "{a}", "a~b", "HEAD~1", "$HOME", "{a,b}", "--"
                ])]
            )]]
        );
        // `make CC=cc` passes the assignment-shaped word on.
        assert_eq!(
            shape("make CC=cc"),
            vec![vec![("", vec![argv(&["make", "CC=cc"])])]]
        );
    }

    #[test]
    fn inert_variables_before_the_program_go_into_its_environment() {
        let plan =
            plan("TZ='America/Los Angeles' LC_ALL=C date | LANG=C.UTF-8 sort").expect("a plan");
        let envs: Vec<Vec<(String, String)>> =
            plan.commands().map(|command| command.env.clone()).collect();
        let pair = |name: &str, value: &str| (name.to_owned(), value.to_owned());
        assert_eq!(
            envs,
            [
                vec![pair("TZ", "America/Los Angeles"), pair("LC_ALL", "C")],
                vec![pair("LANG", "C.UTF-8")],
            ]
        );
        // An assignment is not glob-expanded: the value stays as written.
        let plan = plan_line("TZ=* date").expect("a plan");
        let command = plan.commands().next().expect("a command");
        assert_eq!(command.env, [pair("TZ", "*")]);
        assert_eq!(command.argv(), ["date"]);
    }

    #[test]
    fn lines_a_shell_must_run_have_no_plan() {
        for line in [
            "echo $HOME",
            "echo ${HOME}",
            "echo \"$HOME\"",
            "echo $(id)",
            "echo `id`",
            "echo \"$(id)\"",
            "echo $((x+2))",
            "echo $((1/0))",
            "ls > x",
            "ls 2>x",
            "ls 3>&1",
            "ls 2>&-",
            "ls >/dev/stderr",
            "cat 3< x",
            "cat < *.txt",
            "cat < $f",
            "cat <> x",
            "{ cd src; }",
            "(ls &)",
            "(ls) > x",
            "(echo $x)",
            "(ls; { cd src; })",
            "a=b ls",
            "a=b",
            "TZ=UTC",
            "LD_PRELOAD=x ls",
            "TZ=$Z date",
            "TZ+=x date",
            "TZ={a,b} date",
            "ls &",
            "ls & pwd",
            "cat <<EOF",
            "cat <<EOF\n$HOME\nEOF",
            "cat <<EOF\n`id`\nEOF",
            "cat <<EOF\na\\\nb\nEOF",
            "cat <<< $x",
            "cat <<< ~",
            "cat <<< *",
            "cat 3<<< hi",
            "cat 3<<EOF\nhi\nEOF",
            "ls\npwd",
            "ls ~",
            "ls ~/x",
            "make DIR=~/x",
            "echo {a,$b}",
            "echo x{1..999}",
            "echo $'\\u00e9'",
            "echo $\"a\"",
            "tee >(wc -l)",
            "wc -l < <(ls)",
            "<(ls) cat",
            "cat <(ls) <(ls) <(ls) <(ls) <(ls) <(ls) <(ls) <(ls) <(ls)",
            "cat <(echo $x)",
            "cat <(ls &)",
            "time -f %E ls",
            "[[ -f x ]]",
            "f() { ls; }",
            "if true; then cd src; fi",
            "for f in a; do ls; done",
            "cd - && ls",
            "cd -x src",
            "cd a b",
            "cd src | ls",
            "cd src*",
            "cd src > x",
            "cd src 2>x",
            "export A=b; ls",
            "export A=~/x",
            "set -e && ls",
            "(unset A) | cat",
            "set",
            "exec ls",
            "eval ls",
            ". ./env",
            "source x",
            "*.sh",
            "ls &&",
            "echo 'unterminated",
            "",
            "   ",
            "# only a comment",
        ] {
            assert_eq!(plan(line), None, "{line:?} must need a shell");
        }
    }

    #[test]
    fn the_reason_names_the_shell_feature() {
        let reason = |line: &str| plan_line(line).err().map(|e| e.to_string());
        assert_eq!(
            reason("echo $HOME"),
            Some("it uses a variable expansion in `$HOME`".to_owned())
        );
        assert_eq!(
            reason("ls > x"),
            Some("it redirects input or output (`> x`)".to_owned())
        );
        assert_eq!(
            reason("cd - && ls"),
            Some("`cd` is a shell builtin, which only a shell can run".to_owned())
        );
        assert_eq!(plan_line(""), Err(NeedsShell::NoCommand));
        assert_eq!(plan_line("ls\npwd"), Err(NeedsShell::SeveralLines));
        assert_eq!(plan_line("ls &"), Err(NeedsShell::Background));
    }

    #[test]
    fn globs_keep_a_pattern_with_quoted_parts_escaped() {
        let plan = plan(r#"ls *.rs 'a*'b "[x]"? src/**/*.md x"#).expect("plan");
        let words = &plan.commands().next().expect("a command").words;
        assert_eq!(words[1].text, "*.rs");
        assert_eq!(words[1].pattern.as_deref(), Some("*.rs"));
        // Quoted glob characters are literal: no pattern at all.
        assert_eq!(words[2], Word::literal("a*b"));
        assert_eq!(words[3].text, "[x]?");
        assert_eq!(words[3].pattern.as_deref(), Some("[[]x[]]?"));
        // Without globstar, bash reads `**` as `*`; the glob crate would recurse.
        assert_eq!(words[4].pattern.as_deref(), Some("src/*/*.md"));
        assert_eq!(words[5], Word::literal("x"));
    }

    #[test]
    fn commands_lists_every_simple_command_in_order() {
        for line in ["a | b && c || d; e", "(a; (b | c)) | d && (e)"] {
            let planned = plan(line).expect("plan");
            let names: Vec<_> = planned.commands().map(SimpleCommand::program).collect();
            assert_eq!(names, ["a", "b", "c", "d", "e"], "{line:?}");
        }
    }

    #[test]
    fn a_timed_pipeline_of_programs_is_planned_and_other_timings_need_bash() {
        let timing = |line: &str| plan(line).map(|p| p.lists[0].first.timed);
        assert_eq!(timing("time ls -l"), Some(Some(Timing::Bash)));
        assert_eq!(timing("time -p ls | wc -l"), Some(Some(Timing::Posix)));
        assert_eq!(timing("ls"), Some(None));
        for line in [
            "time -f %E ls",
            "time (ls)",
            "time cd src",
            "time ls | (cat)",
        ] {
            assert_eq!(plan_line(line), Err(NeedsShell::Timed), "{line:?}");
        }
    }

    #[test]
    fn builtins_that_only_report_run_in_bash_with_their_words_as_arguments() {
        let script = "builtin ulimit \"$@\"";
        assert_eq!(
            shape("ulimit -a | grep open"),
            vec![vec![(
                "",
                vec![
                    argv(&["bash", "-p", "-c", script, "ulimit", "-a"]),
                    argv(&["grep", "open"]),
                ]
            )]]
        );
        for line in [
            "umask",
            "umask -S",
            "times",
            "dirs -v",
            "ulimit -Hn",
            "history 5",
            "trap -l",
            "trap - INT TERM",
            "shopt -q extglob",
            "compgen -A signal",
            "complete -p",
            "bind -l",
            "fc -ln 1 3",
            "hash -t ls",
        ] {
            let planned = plan(line).unwrap_or_else(|| panic!("{line:?} should have a plan"));
            let argv: Vec<&str> = planned.commands().flat_map(SimpleCommand::argv).collect();
            assert_eq!(argv[..3], ["bash", "-p", "-c"], "{line:?}");
        }
        for line in [
            "ulimit -n 4096",
            "ulimit unlimited",
            "umask 077",
            "umask u-w",
            "dirs -c",
            "dirs +1",
            "times x",
            "ulimit -n*",
            "history -c",
            "trap 'echo bye' EXIT",
            "trap echo INT TERM",
            "shopt -s extglob",
            "compgen -W 'x y' x",
            "compgen -C 'echo x' x",
            "compgen -f",
            "compgen -b -- a/b",
            "complete -F f git",
            "bind -x x:y",
            "fc",
            "fc -l -e vi",
            "hash -r",
        ] {
            let program = line.split(' ').next().unwrap_or_default().to_owned();
            assert_eq!(
                plan_line(line),
                Err(NeedsShell::Builtin(program)),
                "{line:?}"
            );
        }
    }

    #[test]
    fn shell_state_builtins_stand_only_on_a_line_of_their_own() {
        for line in [
            "export A=b",
            "export A B=1",
            "unset -v A",
            "set -eux",
            "set +o pipefail",
            "alias ll='ls -l' la='ls -a'",
            "alias",
            "jobs",
            "export A=1; set -x && (unset A)",
        ] {
            let planned = plan(line).unwrap_or_else(|| panic!("{line:?} should have a plan"));
            assert!(planned.commands().all(is_state_builtin), "{line:?}");
        }
        assert_eq!(
            plan_line("set -e; false"),
            Err(NeedsShell::ShellState("set".to_owned()))
        );
        assert_eq!(
            plan_line("set -o"),
            Err(NeedsShell::Builtin("set".to_owned()))
        );
        assert!(!state_only("export", &[]));
        assert!(!state_only("export", &["-n", "A"]));
        assert!(!state_only("unset", &["1A"]));
        assert!(!state_only("set", &["-x", "file"]));
        assert!(!state_only("jobs", &["-x"]));
        assert!(!state_only("declare", &["A=1"]));
    }

    #[test]
    fn cd_takes_its_symlink_options_and_one_directory() {
        let directory = |line: &str| {
            let planned = plan(line).expect("plan");
            let command = planned.commands().next().expect("a command").clone();
            cd_directory(&command).map(|d| d.map(str::to_owned))
        };
        assert_eq!(directory("cd -P src"), Some(Some("src".to_owned())));
        assert_eq!(directory("cd -L -- src"), Some(Some("src".to_owned())));
        assert_eq!(directory("cd -P"), Some(None));
        assert_eq!(
            plan_line("cd -x src").err(),
            Some(NeedsShell::Builtin("cd".to_owned()))
        );
        assert_eq!(
            plan_line("cd -P a b").err(),
            Some(NeedsShell::Builtin("cd".to_owned()))
        );
    }

    #[test]
    fn input_texts_the_line_shows_whole_are_planned() {
        let redirects = |line: &str| {
            let planned = plan(line).expect("plan");
            match planned.lists[0].first.stages.as_slice() {
                [Stage::Command(command), ..] => command.redirects.clone(),
                other => panic!("a command first: {other:?}"),
            }
        };
        let text = |t: &str| vec![Redirect::Text(t.to_owned())];
        assert_eq!(redirects("cat <<< 'a b'"), text("a b\n"));
        assert_eq!(redirects("cat <<< '$HOME'\\ x"), text("$HOME x\n"));
        assert_eq!(
            redirects("cat <<'EOF'\n$HOME `id`\nEOF"),
            text("$HOME `id`\n")
        );
        assert_eq!(redirects("cat <<EOF | wc -l\nplain\nEOF"), text("plain\n"));
        assert_eq!(redirects("cat <<-EOF\n\tx\n\t\ty\n\tEOF"), text("x\ny\n"));
        assert_eq!(redirects("cat 0<<< x"), text("x\n"));
    }

    #[test]
    fn process_substitutions_are_words_of_the_commands_own_descriptors() {
        let planned = plan("diff <(sort a) <(cd sub && ls) x").expect("plan");
        let [Stage::Command(command)] = planned.lists[0].first.stages.as_slice() else {
            panic!("one command: {planned:?}");
        };
        assert_eq!(command.argv(), ["diff", "/dev/fd/63", "/dev/fd/62", "x"]);
        let fds: Vec<i32> = command.inputs.iter().map(|(fd, _)| *fd).collect();
        assert_eq!(fds, [63, 62]);
        let programs: Vec<&str> = planned.commands().map(SimpleCommand::program).collect();
        assert_eq!(programs, ["diff", "sort", "cd", "ls"]);
    }

    #[test]
    fn a_subshell_is_a_stage_with_lists_and_redirections() {
        assert_eq!(
            shape("(cd src && ls) | wc -l"),
            vec![vec![("", vec![argv(&["(subshell)"]), argv(&["wc", "-l"])])]]
        );
        let planned = plan("(cd src && ls; pwd) 2>/dev/null").expect("plan");
        let [Stage::Subshell(subshell)] = planned.lists[0].first.stages.as_slice() else {
            panic!("one subshell stage: {planned:?}");
        };
        assert_eq!(subshell.redirects, [Redirect::Discard(2)]);
        let inner: Vec<_> = subshell.body.commands().map(SimpleCommand::argv).collect();
        assert_eq!(inner, [vec!["cd", "src"], vec!["ls"], vec!["pwd"]]);
        // `cd` inside a subshell is still a pipeline of its own.
        assert_eq!(
            plan_line("(cd src | ls)"),
            Err(NeedsShell::Builtin("cd".to_owned()))
        );
        // Nested deeper than the assessor follows: a shell's. (brush-parser reads `( ( ls ) )`
        // as arithmetic, so each level holds a command first.)
        let deep = |n: usize| format!("{}ls{}", "(ls; ".repeat(n), ")".repeat(n));
        assert_eq!(plan_line(&deep(MAX_SUBSHELL_DEPTH)).err(), None);
        assert_eq!(
            plan_line(&deep(MAX_SUBSHELL_DEPTH + 1)),
            Err(NeedsShell::Compound)
        );
    }
}
