//! The shell command assessor: parses the line with brush-parser (bash mode) and walks the
//! whole syntax tree, including what runs out of sight: command and process substitutions,
//! compound commands, function bodies, scripts handed to `sh -c`, `eval`, here-documents and
//! pipes into a shell, and commands run by wrappers (`sudo`, `timeout`, `xargs`,
//! `find -exec`, ...).
//!
//! Every part is judged on its own and the worst judgement wins:
//! - `Forbidden`: a command matches an operator deny rule.
//! - `Destructive`: a command known to destroy or overwrite (the rules in `programs`),
//!   output redirection onto a file, a shell running code the line does not show, or a line
//!   that cannot be parsed or is nested too deeply to check.
//! - `Unknown`: anything not shown to be safe, with the first problem as the reason.
//! - `Safe`: one complete command whose parts are all simple, literal, unredirected
//!   commands on the read-only whitelist (`programs`), with safe options and paths inside
//!   the workspace, joined only by `&&`, `||`, `;` and `|` and grouped only by subshells,
//!   which the plan runs without a shell (a safe verdict without a plan waits all the same).
//!
//! The line is parsed once ([`read_line`]): the walker judges that tree and the line's plan
//! is built from it; the gate hands that plan to the runner (`LinePlan`), so a planned line
//! runs the words that were judged. (A run resumed after a restart plans the stored line
//! with `read_line`, the same parse and planning.)

use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectKind,
    IoFileRedirectTarget, IoRedirect, Pipeline, SeparatorOperator, SimpleCommand,
};

use super::conditions::{self, TestFound};
use super::loops::{self, CountedLoop, LoopFound};
use super::plan::{self, NeedsShell, Plan};
use super::reads::{self, ReadLoop, ReadMode};
use super::sandbox::NULL_DEVICE;
use super::substitute::{self, Substituting};
use super::syntax::ParseFailure;
use super::words::{self, Arg, WordReport};
use super::{paths, programs, syntax, variables};
use crate::core::risk::Assessment;
use crate::tools::Workspace;
use crate::tools::sql::SqlRules;
use crate::tools::workspace::canonicalize_existing_prefix;

/// Scripts inside scripts (substitutions, `sh -c`, wrappers) deeper than this are not
/// followed; the line is then treated as destructive, since what it runs cannot be seen.
pub(super) const MAX_DEPTH: usize = 8;

/// Directories a line may change into (`cd`) that the assessor follows.
const MAX_DIRECTORIES: usize = 8;

/// What the command assessor needs: the workspace and the operator's rules.
#[derive(Debug, Clone)]
pub struct CommandPolicy {
    pub workspace: Workspace,
    /// Extra whitelisted command prefixes, as words (`["make", "test"]`).
    pub allow: Vec<Vec<String>>,
    /// Command prefixes nobody may run, as words (`["kubectl", "delete"]`).
    pub deny: Vec<Vec<String>>,
    /// The SQL tool's rules, for SQL given to a database client on the line (`psql -c`):
    /// a name the operator denies to `execute_sql` is denied there too.
    pub sql: SqlRules,
    /// Variables every line starts with whose values are the machine's, not a secret
    /// (`PATH`, `LANG`): a line's `$PATH` is judged and run as its value. The workspace's
    /// directory is `PWD` for a line that does not change directory.
    pub variables: Vec<(String, String)>,
    /// The names every line's environment holds, whatever their values (none by default).
    pub environment: Vec<String>,
}

impl CommandPolicy {
    pub fn new(workspace: Workspace, allow: &[String], deny: &[String]) -> Self {
        let words = |entries: &[String]| {
            entries
                .iter()
                .map(|e| e.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .filter(|w| !w.is_empty())
                .collect()
        };
        Self {
            workspace,
            allow: words(allow),
            deny: words(deny),
            sql: SqlRules::default(),
            variables: Vec::new(),
            environment: Vec::new(),
        }
    }

    /// The SQL tool's rules for SQL on the line (by default, none).
    pub fn with_sql_rules(self, sql: SqlRules) -> Self {
        Self { sql, ..self }
    }

    /// The variables every line starts with that are not secret (by default, none).
    pub fn with_variables(self, variables: Vec<(String, String)>) -> Self {
        Self { variables, ..self }
    }

    /// The names of the variables every line's environment holds (by default, none): a
    /// name among them is never taken for one the line owns ([`variables`]).
    pub fn with_environment(self, environment: Vec<String>) -> Self {
        Self {
            environment,
            ..self
        }
    }

    /// The values a line's `$NAME` stands for ([`CommandPolicy::variables`] and `PWD`). A
    /// workspace not made yet is `PWD` where the runner will make it (the part of its path
    /// that exists with its symlinks followed, as the line's `pwd` will print it).
    fn known_values(&self) -> Vec<(String, String)> {
        let mut known = self.variables.clone();
        let root = canonicalize_existing_prefix(self.workspace.root());
        if root.is_absolute()
            && let Some(root) = root.to_str()
        {
            known.push(("PWD".to_owned(), root.to_owned()));
        }
        known
    }
}

/// How a process substitution `<(...)` is shown among a command's words.
const SUBSTITUTION_RAW: &str = "<(...)";

/// Judges one command line.
pub fn assess_command(line: &str, policy: &CommandPolicy) -> Assessment {
    let parsed = syntax::parse_script(line);
    let (assessment, walker) = walk_line(line, &parsed, policy, Nesting::LINE);
    if matches!(assessment, Assessment::Safe(_)) {
        return planned_or_unknown(assessment, &plan::plan_parsed(&parsed));
    }
    if matches!(
        assessment,
        Assessment::Unknown(_) | Assessment::Destructive(_)
    ) && !(walker.line_substitutions.is_empty()
        && walker.line_loops.is_empty()
        && walker.line_reads.is_empty()
        && walker.line_tests.is_empty()
        && walker.line_counted.is_empty()
        && !walker.line_variables)
    {
        return read_line(line, policy).assessment;
    }
    assessment
}

/// A safe line runs without a click only through its plan, so a safe line without one
/// (its commands all read-only, but only a shell could run them together: `set -e; ls`)
/// waits for a person.
fn planned_or_unknown(assessment: Assessment, plan: &Result<Plan, NeedsShell>) -> Assessment {
    match (assessment, plan) {
        (Assessment::Safe(_), Err(needs)) => {
            Assessment::Unknown(format!("the line needs a shell because {needs}"))
        }
        (assessment, _) => assessment,
    }
}

/// A command line as the gate reads it, from one parse: the verdict, and the plan the
/// runner executes (or why the line needs a shell). The plan is built from the syntax tree
/// the walker judged, so for a line with a plan the argv vectors that run are the words
/// that were judged.
#[derive(Debug)]
pub struct LineReading {
    pub assessment: Assessment,
    pub plan: Result<Plan, NeedsShell>,
    /// The first read-only command of the line that lists processes (`ps`, `lsof`): it
    /// runs without a click only where the line sees its own processes alone.
    pub lists_processes: Option<String>,
    /// A line of command substitutions judged safe: without a click it runs by running
    /// them first and judging the line again with their output ([`substitute`]).
    pub substituting: Option<Substituting>,
}

/// Parses `line` once, judges it and plans it; see [`LineReading`]. ([`assess_command`]
/// plans only the lines whose verdict depends on having a plan.)
pub fn read_line(line: &str, policy: &CommandPolicy) -> LineReading {
    read_line_nested(line, policy, Nesting::LINE)
}

/// Where a line being read stands: how many rewrites and substitutions deep, and whether it
/// is a substitution's script, whose names the line around it may set (`for i in 1 2; do
/// echo $(echo $i); done`), so that none of them is taken for one never set.
#[derive(Debug, Clone, Copy)]
struct Nesting {
    depth: usize,
    script: bool,
}

impl Nesting {
    const LINE: Self = Self {
        depth: 0,
        script: false,
    };

    fn deeper(self) -> Self {
        Self {
            depth: self.depth + 1,
            ..self
        }
    }

    fn script(self) -> Self {
        Self {
            depth: self.depth + 1,
            script: true,
        }
    }
}

/// [`read_line`] for a line `nesting` deep.
fn read_line_nested(line: &str, policy: &CommandPolicy, nesting: Nesting) -> LineReading {
    let parsed = syntax::parse_script(line);
    let (assessment, walker) = walk_line(line, &parsed, policy, nesting);
    let plan = plan::plan_parsed(&parsed);
    let assessment = planned_or_unknown(assessment, &plan);
    if matches!(assessment, Assessment::Unknown(_))
        && !walker.line_substitutions.is_empty()
        && let Some(reading) =
            read_substituting(line, policy, &walker.line_substitutions, nesting, &[])
    {
        return LineReading { plan, ..reading };
    }
    // A loop written out, or a machine's variable put in, is what the shell runs, word for
    // word: the line it makes is judged instead, even where a word only known when the line
    // runs made this reading destructive (`find $PWD ...` may have become `find -delete`).
    let rewritable = parsed.is_ok()
        && matches!(
            assessment,
            Assessment::Unknown(_) | Assessment::Destructive(_)
        );
    // Where the line it makes is not safe, its verdict is the more exact one: the person is
    // told what the loop runs (`cat /etc/passwd`), not only that it is a loop.
    let mut exact = None;
    if rewritable && !walker.line_loops.is_empty() {
        match read_written_out(line, policy, &walker.line_loops, nesting) {
            Ok(reading) => return reading,
            Err(judged) => exact = exact.or(judged),
        }
    }
    if rewritable
        && walker
            .line_substitutions
            .iter()
            .any(|s| prints_directory(s))
    {
        match read_with_directory(line, policy, nesting) {
            Ok(reading) => return reading,
            Err(judged) => exact = exact.or(judged),
        }
    }
    if rewritable && walker.line_variables {
        match read_with_values(line, policy, nesting) {
            Ok(reading) => return reading,
            Err(judged) => exact = exact.or(judged),
        }
    }
    if rewritable && !walker.line_counted.is_empty() {
        let written = loops::write_counted(line, &walker.line_counted);
        match written.map(|written| {
            read_rewritten(
                &written,
                policy,
                nesting,
                "; its `for ((...))` loops are counted out",
            )
        }) {
            Some(Ok(reading)) => return reading,
            Some(Err(judged)) => exact = exact.or(judged),
            None => {}
        }
    }
    if rewritable && !walker.line_tests.is_empty() {
        match read_as_test_commands(line, policy, &walker.line_tests, nesting) {
            Ok(reading) => return reading,
            Err(judged) => exact = exact.or(judged),
        }
    }
    if rewritable
        && !walker.line_reads.is_empty()
        && let Some(reading) = read_while_reads(line, policy, &walker.line_reads, nesting)
    {
        return reading;
    }
    let assessment = match exact {
        // Never less severe than this reading.
        Some(judged)
            if !matches!(assessment, Assessment::Destructive(_))
                || matches!(judged, Assessment::Destructive(_)) =>
        {
            judged
        }
        _ => assessment,
    };
    LineReading {
        assessment,
        plan,
        lists_processes: walker.lists_processes,
        substituting: None,
    }
}

/// What a line rewritten as the shell runs it gives: its reading when safe; otherwise the
/// verdict on the line it makes, when it could be made and judged.
type Rewritten = Result<LineReading, Option<Assessment>>;

/// The reading of a line whose `for` loops, written out once for each of their words
/// ([`loops`]), make a safe line: that line's reading, plan and all.
fn read_written_out(
    line: &str,
    policy: &CommandPolicy,
    found: &[LoopFound],
    nesting: Nesting,
) -> Rewritten {
    // A name the shell or the line's programs read (`for PATH in bin; do ls; done` looks
    // `ls` up there) would not be set in the written-out subshell.
    if found
        .iter()
        .any(|found| variables::read_by_the_shell(&found.name, &policy.environment))
    {
        return Err(None);
    }
    let written =
        loops::write_out(line, found, |word| loop_words(word, &policy.workspace)).ok_or(None)?;
    read_rewritten(
        &written,
        policy,
        nesting,
        "; its `for` loops are written out once for each of their words",
    )
}

/// The reading of a line whose `while read` loops, rewritten as `for` loops over their
/// input ([`reads`]), make a line of substitutions judged safe: the input runs first when
/// the line runs, and the loops are written out once for each line it gives.
fn read_while_reads(
    line: &str,
    policy: &CommandPolicy,
    found: &[ReadLoop],
    nesting: Nesting,
) -> Option<LineReading> {
    if nesting.depth >= MAX_DEPTH {
        return None;
    }
    let (written, marks) = reads::rewrite(line, found)?;
    // Only the substitutions of the rewritten line know how to read their output: it is
    // read as a line of substitutions or not at all (a rewriting of it would lose them).
    let parsed = syntax::parse_script(&written);
    let (assessment, walker) = walk_line(&written, &parsed, policy, nesting);
    if !matches!(assessment, Assessment::Unknown(_)) || walker.line_substitutions.is_empty() {
        return None;
    }
    let reading = read_substituting(
        &written,
        policy,
        &walker.line_substitutions,
        nesting.deeper(),
        &marks,
    )?;
    let Assessment::Safe(reason) = &reading.assessment else {
        return None;
    };
    Some(LineReading {
        assessment: Assessment::Safe(format!(
            "{reason}; its `while read` loops are read as `for` loops over the lines their input gives"
        )),
        ..reading
    })
}

/// The reading of a line whose `[[ ... ]]` are read as the `test` commands they amount to
/// ([`conditions`]), when that line is safe.
fn read_as_test_commands(
    line: &str,
    policy: &CommandPolicy,
    found: &[TestFound],
    nesting: Nesting,
) -> Rewritten {
    let written = conditions::rewrite(line, found).ok_or(None)?;
    read_rewritten(
        &written,
        policy,
        nesting,
        "; its `[[ ... ]]` are read as the `test` commands they amount to",
    )
}

/// The reading of a line whose variables — the machine's (`$PATH`, `$PWD`:
/// [`CommandPolicy`]) and the line's own ([`variables`]) — are put in as their values, as a
/// substitution's output is, when that line is safe.
fn read_with_values(line: &str, policy: &CommandPolicy, nesting: Nesting) -> Rewritten {
    let environment = (!nesting.script).then_some(policy.environment.as_slice());
    let written = variables::put_in(line, &policy.known_values(), environment).ok_or(None)?;
    read_rewritten(
        &written,
        policy,
        nesting,
        "; its variables are put in as their values (the machine's PATH, LANG, USER and PWD, and the line's own: a name it never sets, and `$1` to `$9`, are empty)",
    )
}

/// Whether a substitution's script is `pwd`, which prints the directory the line runs in:
/// the workspace's, `$PWD`, where nothing changes it.
fn prints_directory(script: &str) -> bool {
    matches!(script.trim(), "pwd" | "pwd -L" | "pwd -P")
}

/// The reading of a line whose `$(pwd)` and `` `pwd` `` are written as `$PWD`, whose value
/// is known (`find $(pwd) -name '*.txt'` may not become `find -delete`, as the output of
/// another substitution might): the workspace's directory, put in where nothing changes
/// directory ([`read_rewritten`] refuses a line that does).
fn read_with_directory(line: &str, policy: &CommandPolicy, nesting: Nesting) -> Rewritten {
    let mut found = substitute::scan(line).ok_or(None)?;
    found.retain(|found| prints_directory(&found.script));
    let written = Substituting {
        line: line.to_owned(),
        scripts: found.len(),
        found,
    }
    .written_as("$PWD");
    // Where the line it makes is not safe, the line as written says why.
    read_rewritten(
        &written,
        policy,
        nesting,
        "; its `$(pwd)` is the workspace's directory",
    )
    .map_err(|_| None)
}

/// The reading of `written`, a line rewritten as the shell would run it word for word, when
/// it is safe and changes no directory (a written-out loop runs in one subshell, and `PWD`
/// is the workspace's only where nothing changes it); its reason says how it was written
/// (`how`, once however deep).
fn read_rewritten(written: &str, policy: &CommandPolicy, nesting: Nesting, how: &str) -> Rewritten {
    if nesting.depth >= MAX_DEPTH {
        return Err(None);
    }
    let reading = read_line_nested(written, policy, nesting.deeper());
    let Assessment::Safe(reason) = &reading.assessment else {
        // A line the rewriting made that the parser cannot read is not what the shell runs
        // (`cat <<< $x` with `x` empty).
        let exact = syntax::parse_script(written).is_ok();
        return Err(exact.then_some(reading.assessment));
    };
    if let Ok(plan) = &reading.plan
        && plan::changes_directory(plan)
    {
        return Err(None);
    }
    let reason = match reason.contains(how) {
        true => reason.clone(),
        false => format!("{reason}{how}"),
    };
    Ok(LineReading {
        assessment: Assessment::Safe(reason),
        ..reading
    })
}

/// The words one word of a `for` loop's list stands for before the loop starts: its braces
/// and globs expanded (inside the workspace); `None` for one only known when the line runs.
fn loop_words(raw: &str, workspace: &Workspace) -> Option<Vec<String>> {
    let mut values = Vec::new();
    for report in words::analyze_expanded(raw) {
        if report.problem.is_some() || report.failure.is_some() || report.arg.tilde {
            return None;
        }
        let word = plan::Word {
            text: report.arg.value?,
            pattern: report.arg.pattern,
        };
        for value in super::expand::expand(&word, workspace).ok()? {
            values.push(value.into_string().ok()?);
        }
    }
    Some(values)
}

/// The reading of a line whose only unknowns are its command substitutions, when each
/// substitution's script is safe and so is the line with a placeholder word for each: it
/// runs without a click by running the scripts first and judging the line again with their
/// output ([`substitute`]). `parsed` are the scripts the parser found at the line's own
/// level, which the scanner must find too. Its `plan` is left for the caller.
fn read_substituting(
    line: &str,
    policy: &CommandPolicy,
    parsed: &[String],
    nesting: Nesting,
    lines: &[(usize, ReadMode)],
) -> Option<LineReading> {
    if nesting.depth >= MAX_DEPTH {
        return None;
    }
    let mut found = substitute::scan(line)?;
    for (start, mode) in lines {
        found.iter_mut().find(|found| found.start == *start)?.lines = Some(*mode);
    }
    let mut scanned: Vec<&str> = found.iter().map(|found| found.script.as_str()).collect();
    let mut parsed: Vec<&str> = parsed.iter().map(String::as_str).collect();
    scanned.sort_unstable();
    parsed.sort_unstable();
    if scanned != parsed || found.len() > substitute::MAX_SCRIPTS {
        return None;
    }
    let mut substituting = Substituting {
        scripts: found.len(),
        line: line.to_owned(),
        found,
    };
    let outer = read_line_nested(&substituting.placeholder_line(), policy, nesting.deeper());
    let (Assessment::Safe(outer_reason), Ok(outer_plan)) = (&outer.assessment, &outer.plan) else {
        return None;
    };
    if plan::changes_directory_before_its_end(outer_plan) {
        return None;
    }
    let mut lists_processes = outer.lists_processes.clone();
    let mut first = Vec::new();
    for found in &substituting.found {
        let inner = read_line_nested(&found.script, policy, nesting.script());
        let Assessment::Safe(reason) = inner.assessment else {
            return None;
        };
        substituting.scripts += inner.substituting.map_or(0, |inner| inner.scripts);
        if substituting.scripts > substitute::MAX_SCRIPTS {
            return None;
        }
        lists_processes = lists_processes.or(inner.lists_processes);
        if !first.contains(&reason) {
            first.push(reason);
        }
    }
    Some(LineReading {
        assessment: Assessment::Safe(format!(
            "{outer_reason}; its substitutions run first ({}), and the line is judged again with their output",
            first.join("; ")
        )),
        plan: Err(NeedsShell::NoCommand),
        lists_processes,
        substituting: Some(substituting),
    })
}

fn walk_line<'p>(
    line: &str,
    parsed: &Result<ast::Program, ParseFailure>,
    policy: &'p CommandPolicy,
    nesting: Nesting,
) -> (Assessment, Walker<'p>) {
    let mut walker = Walker::new(policy, nesting);
    let assessment = if line.trim().is_empty() {
        Assessment::Unknown("the command line is empty".to_owned())
    } else {
        walker.parsed_script(line, parsed, &Stdin::Inherited, 0, Level::Line);
        std::mem::take(&mut walker.verdict).into_assessment()
    };
    (assessment, walker)
}

/// The words of each command of the line itself (not of the scripts inside it) as the
/// walker judged them, in order, with the line's reading from the same parse.
#[cfg(test)]
pub(super) fn judged_words(line: &str, policy: &CommandPolicy) -> (LineReading, Vec<Vec<String>>) {
    let parsed = syntax::parse_script(line);
    let (assessment, walker) = walk_line(line, &parsed, policy, Nesting::LINE);
    let plan = plan::plan_parsed(&parsed);
    let assessment = planned_or_unknown(assessment, &plan);
    let reading = LineReading {
        assessment,
        plan,
        lists_processes: walker.lists_processes,
        substituting: None,
    };
    (reading, walker.judged)
}

/// Which script the walker reads: the line itself, or one inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Line,
    Nested,
}

/// The findings so far. Of each kind the reason kept is the first one found at the
/// shallowest level, so `echo hi | sh` is blamed on `sh`, not on the `hi` it runs.
#[derive(Debug, Default)]
struct Verdict {
    forbidden: Option<String>,
    destructive: Option<(usize, String)>,
    unknown: Option<(usize, String)>,
    /// Whitelisted commands seen, in order, for the reason of a safe line.
    read_only: Vec<String>,
    /// What a safe line's reason adds: its last command, a `cd`, leaves the workspace.
    leaves: bool,
}

impl Verdict {
    fn into_assessment(self) -> Assessment {
        if let Some(reason) = self.forbidden {
            Assessment::Forbidden(reason)
        } else if let Some((_, reason)) = self.destructive {
            Assessment::Destructive(reason)
        } else if let Some((_, reason)) = self.unknown {
            Assessment::Unknown(reason)
        } else if self.read_only.is_empty() {
            Assessment::Unknown("the line runs no command".to_owned())
        } else {
            let leaves = match self.leaves {
                true => {
                    "; its last command, a `cd` out of the workspace, is refused when it runs (the line stays in the workspace) and nothing runs after it"
                }
                false => "",
            };
            Assessment::Safe(format!(
                "read-only commands: {}{leaves}",
                self.read_only.join(", ")
            ))
        }
    }
}

/// Where a command's standard input comes from, as far as the line shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stdin {
    /// The tool's own input (nothing, in practice).
    Inherited,
    /// Text the line shows: a here-document or here-string without expansions, or the
    /// output of `echo`/`printf` with literal words.
    Text(String),
    /// A file (`< file`), whose contents the line does not show.
    File(String),
    /// The output of a command the line does not show (`curl ... |`).
    Unseen(String),
    /// Paths separated by NUL bytes, each starting with `start` or another start point that
    /// is not an option (`find . -print0`): none of them can be read as an option.
    Paths { from: String, start: String },
}

/// One command to judge: its program name (the base name of what was written), the words
/// after it, and where its input comes from.
pub(super) struct Invocation<'a> {
    /// The base name (`rm` for `/bin/rm`).
    pub program: &'a str,
    pub args: &'a [Arg],
    pub stdin: &'a Stdin,
    pub depth: usize,
}

/// What the command tables say about one command (not about the commands it runs, which
/// are judged on their own).
#[derive(Debug, Default)]
pub(super) struct Judgement {
    /// The command is on the read-only whitelist (its options and paths may still fail).
    pub whitelisted: bool,
    pub destructive: Option<String>,
    pub unknown: Option<String>,
}

impl Judgement {
    pub(super) fn whitelisted() -> Self {
        Self {
            whitelisted: true,
            ..Self::default()
        }
    }

    pub(super) fn other(reason: impl Into<String>) -> Self {
        Self {
            unknown: Some(reason.into()),
            ..Self::default()
        }
    }

    pub(super) fn destroys(reason: impl Into<String>) -> Self {
        Self {
            destructive: Some(reason.into()),
            ..Self::default()
        }
    }

    pub(super) fn unknown(&mut self, reason: impl Into<String>) {
        if self.unknown.is_none() {
            self.unknown = Some(reason.into());
        }
    }

    pub(super) fn destructive(&mut self, reason: impl Into<String>) {
        if self.destructive.is_none() {
            self.destructive = Some(reason.into());
        }
    }

    pub(super) fn not_whitelisted(program: &str) -> Self {
        Self::other(format!("`{program}` is not on the read-only whitelist"))
    }
}

/// Walks syntax trees and records what it finds.
pub(super) struct Walker<'p> {
    pub policy: &'p CommandPolicy,
    /// How deep the line this walker reads is among the lines read for it (a script a shell
    /// is given is read as a line of its own, one deeper): bounds those readings.
    nesting: Nesting,
    verdict: Verdict,
    /// How deep in nested scripts and wrapped commands the walk is.
    depth: usize,
    /// Every directory the next command may run in, relative to the workspace root (`""`
    /// is the root): `cd` adds to them; paths are checked from each.
    cwds: Vec<String>,
    /// Where the `cd` just judged leads, when it succeeds, with the depth it was judged at:
    /// only a `cd` that is itself a command of the list changes the directory.
    cd_targets: Option<(usize, Vec<String>)>,
    /// Why a `cd` judged so far may have left the workspace: harmless as the line's last
    /// command (the runner, which never leaves the workspace on a line without a click,
    /// says so and changes nothing), but every command after it would run out there.
    left_workspace: Option<String>,
    /// The first whitelisted command that lists processes (see [`LineReading`]).
    lists_processes: Option<String>,
    /// The scripts of the command substitutions in the line's own words.
    line_substitutions: Vec<String>,
    /// The `for` loops of the line itself with a list of words.
    line_loops: Vec<LoopFound>,
    /// The `while read` loops of the line itself in a form [`reads`] takes.
    line_reads: Vec<ReadLoop>,
    /// The `[[ ... ]]` of the line itself that amount to `test` commands ([`conditions`]).
    line_tests: Vec<TestFound>,
    /// The counting loops (`for ((i=0; i<3; i++))`) of the line itself that count plainly.
    line_counted: Vec<CountedLoop>,
    /// Whether a word of the line itself expands a variable, or a command of it only
    /// assigns.
    line_variables: bool,
    /// Walking the line again as dash reads it: what the line holds for a rewrite was found
    /// on the first walk, and is not found twice.
    as_dash: bool,
    /// The words of each command of the line itself, as judged (see [`judged_words`]).
    #[cfg(test)]
    judged: Vec<Vec<String>>,
}

impl<'p> Walker<'p> {
    fn new(policy: &'p CommandPolicy, nesting: Nesting) -> Self {
        Self {
            policy,
            nesting,
            verdict: Verdict::default(),
            depth: 0,
            cwds: vec![String::new()],
            cd_targets: None,
            left_workspace: None,
            lists_processes: None,
            line_substitutions: Vec::new(),
            line_loops: Vec::new(),
            line_reads: Vec::new(),
            line_tests: Vec::new(),
            line_counted: Vec::new(),
            line_variables: false,
            as_dash: false,
            #[cfg(test)]
            judged: Vec::new(),
        }
    }

    /// The directories the next command may run in.
    pub(super) fn cwds(&self) -> &[String] {
        &self.cwds
    }

    pub(super) fn workspace(&self) -> &Workspace {
        &self.policy.workspace
    }

    pub(super) fn forbidden(&mut self, reason: String) {
        self.verdict.forbidden.get_or_insert(reason);
    }

    pub(super) fn destructive(&mut self, reason: String) {
        keep_shallowest(&mut self.verdict.destructive, self.depth, reason);
    }

    pub(super) fn unknown(&mut self, reason: String) {
        keep_shallowest(&mut self.verdict.unknown, self.depth, reason);
    }

    fn read_only(&mut self, program: &str) {
        if !self.verdict.read_only.iter().any(|p| p == program) {
            self.verdict.read_only.push(program.to_owned());
        }
    }

    /// Parses and walks a script inside the line (a substitution, `sh -c`, a wrapped
    /// command's script); the line itself is walked by [`read_line`].
    pub(super) fn script(&mut self, text: &str, stdin: &Stdin, depth: usize) {
        let outer = std::mem::replace(&mut self.depth, depth);
        self.script_at_depth(text, stdin, depth);
        self.depth = outer;
    }

    /// Whether `script`, given to a shell, would run without a click as a line of its own:
    /// judged safe with a plan (every construct in it one riskgate runs itself, and so
    /// judges whole), nothing to run first and no process listed. The walk of
    /// [`Walker::script`] judges it as dash reads it too, where that differs.
    pub(super) fn script_runs_alone(&self, script: &str) -> bool {
        let nesting = self.nesting.script();
        if nesting.depth >= MAX_DEPTH {
            return false;
        }
        let reading = read_line_nested(script, self.policy, nesting);
        matches!(reading.assessment, Assessment::Safe(_))
            && reading.plan.is_ok()
            && reading.substituting.is_none()
            && reading.lists_processes.is_none()
    }

    fn script_at_depth(&mut self, text: &str, stdin: &Stdin, depth: usize) {
        if depth > MAX_DEPTH {
            self.destructive(format!(
                "it nests scripts more than {MAX_DEPTH} levels deep, too deep to check what they run"
            ));
            return;
        }
        self.parsed_script(
            text,
            &syntax::parse_script(text),
            stdin,
            depth,
            Level::Nested,
        );
    }

    /// Walks a script already parsed. The line itself must be one complete command to be
    /// safe.
    fn parsed_script(
        &mut self,
        text: &str,
        parsed: &Result<ast::Program, ParseFailure>,
        stdin: &Stdin,
        depth: usize,
        level: Level,
    ) {
        let program = match parsed {
            Ok(program) => program,
            Err(failure) => {
                self.destructive(failure.reason());
                return;
            }
        };
        if level == Level::Line {
            match program.complete_commands.len() {
                0 => self.unknown("the line holds no command".to_owned()),
                1 => {}
                _ => self.unknown(
                    "the line holds more than one command (separated by a newline)".to_owned(),
                ),
            }
        }
        let left_before = self.left_workspace.clone();
        for list in &program.complete_commands {
            self.list(list, stdin, depth);
        }
        // The executor runs lines it cannot plan with /bin/sh (dash), which reads some bash
        // syntax differently; whatever dash would run is judged too. A line with a plan
        // never reaches a shell, whoever approves it, so only its plan's reading counts. (The
        // plan is built from the tree just walked; only where dash could differ.)
        if let Some(dash) = syntax::parse_as_dash(text) {
            if level == Level::Line && plan::plan_parsed(parsed).is_ok() {
                return;
            }
            self.as_dash = true;
            self.left_workspace = left_before;
            for list in &dash.complete_commands {
                self.list(list, stdin, depth);
            }
            self.as_dash = false;
        }
    }

    fn list(&mut self, list: &CompoundList, stdin: &Stdin, depth: usize) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            if matches!(separator, SeparatorOperator::Async) {
                // The floor: a job left running is beyond the result, the sandbox's end and
                // the person's view, so the model's `low` never decides it.
                self.destructive(format!(
                    "`{and_or} &` runs in the background, beyond the reach of the result"
                ));
            }
            self.and_or(and_or, stdin, depth);
        }
    }

    /// Walks pipelines joined by `&&` and `||`, following where `cd` may lead: right after
    /// `cd dir &&` the directory is `dir`; anywhere else in the list, and after it, it is any
    /// of the directories seen so far.
    fn and_or(&mut self, and_or: &ast::AndOrList, stdin: &Stdin, depth: usize) {
        let mut seen = self.cwds.clone();
        let mut previous: Option<Vec<String>> = None;
        for (operator, pipeline) in and_or.iter() {
            self.cwds = match (operator, previous.take()) {
                (ast::PipelineOperator::And, Some(targets)) => targets,
                (ast::PipelineOperator::And, None) => self.cwds.clone(),
                _ => seen.clone(),
            };
            self.cd_targets = None;
            self.pipeline(pipeline, stdin, depth);
            if let Some((at, targets)) = self.cd_targets.take()
                && at == depth
            {
                if pipeline.seq.len() > 1 {
                    self.unknown("`cd` in a pipeline changes nothing".to_owned());
                }
                for target in &targets {
                    if !seen.contains(target) {
                        seen.push(target.clone());
                    }
                }
                previous = Some(targets);
            }
        }
        if seen.len() > MAX_DIRECTORIES {
            self.unknown(format!(
                "the line may change into more than {MAX_DIRECTORIES} directories"
            ));
            seen.truncate(MAX_DIRECTORIES);
        }
        self.cwds = seen;
    }

    fn pipeline(&mut self, pipeline: &Pipeline, stdin: &Stdin, depth: usize) {
        // `time` alone or `time -p` times a pipeline of programs, which the runner does as
        // bash would; `time -f ...` (meant for GNU time, a command `-f` in bash) and a timed
        // subshell or `cd` need bash.
        if pipeline.timed.is_some() {
            fn program(command: &Command) -> Option<&str> {
                match command {
                    Command::Simple(simple) => {
                        simple.word_or_name.as_ref().map(|w| w.value.as_str())
                    }
                    _ => None,
                }
            }
            let plain = pipeline
                .seq
                .iter()
                .all(|c| program(c).is_some_and(|p| p != "cd"))
                && pipeline
                    .seq
                    .first()
                    .and_then(program)
                    .is_some_and(|p| !p.starts_with('-'));
            if !plain {
                self.unknown(
                    "`time` here needs a shell: it is given options other than `-p`, or times a subshell or `cd`"
                        .to_owned(),
                );
            }
        }
        if depth == 0
            && !self.as_dash
            && let Some(found) = reads::find(pipeline)
        {
            self.line_reads.push(found);
        }
        let mut input = stdin.clone();
        for command in &pipeline.seq {
            input = self.command(command, &input, depth);
        }
    }

    /// Walks one command and returns what its standard output holds, as far as it is known.
    fn command(&mut self, command: &Command, stdin: &Stdin, depth: usize) -> Stdin {
        if let Some(left) = &self.left_workspace {
            self.unknown(format!("{left}, and what runs after it would run there"));
        }
        match command {
            Command::Simple(simple) => self.simple(simple, stdin, depth),
            Command::Compound(compound, redirects) => {
                let mut input = stdin.clone();
                for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
                    if let Some(new_input) = self.redirect(redirect, depth) {
                        input = new_input;
                    }
                }
                self.compound(compound, &input, depth);
                Stdin::Unseen(describe_compound(compound).to_owned())
            }
            Command::Function(function) => {
                self.unknown(format!("it defines the function `{}`", function.fname));
                let ast::FunctionBody(body, redirects) = &function.body;
                for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
                    self.redirect(redirect, depth);
                }
                self.compound(body, &Stdin::Inherited, depth);
                Stdin::Unseen("a function definition".to_owned())
            }
            Command::ExtendedTest(test, redirects) => {
                self.unknown("`[[ ... ]]` is not on the read-only whitelist".to_owned());
                if depth == 0
                    && !self.as_dash
                    && redirects.is_none()
                    && let Some(written) = conditions::as_test_commands(&test.expr)
                {
                    self.line_tests.push(TestFound {
                        start: test.loc.start.index,
                        end: test.loc.end.index,
                        written,
                    });
                }
                self.extended_test(&test.expr, depth);
                for redirect in redirects.iter().flat_map(|list| list.0.iter()) {
                    self.redirect(redirect, depth);
                }
                Stdin::Unseen("`[[ ... ]]`".to_owned())
            }
        }
    }

    fn compound(&mut self, compound: &CompoundCommand, stdin: &Stdin, depth: usize) {
        if let CompoundCommand::Subshell(subshell) = compound {
            self.subshell(&subshell.list, stdin, depth);
            return;
        }
        // A group runs its list in the line's own shell: a `cd` in it lasts after it (the
        // plan runs a group as a subshell, so it takes none that changes directory).
        if let CompoundCommand::BraceGroup(group) = compound {
            self.list(&group.list, stdin, depth);
            return;
        }
        // An `if` runs its conditions and bodies in the line's own shell: judged by them (the
        // plan takes none that changes directory).
        if let CompoundCommand::IfClause(clause) = compound {
            self.if_clause(clause, stdin, depth);
            return;
        }
        self.unknown(format!(
            "{} is not a simple command",
            describe_compound(compound)
        ));
        match compound {
            CompoundCommand::Arithmetic(arithmetic) => {
                self.hidden(&arithmetic.expr.value, depth);
            }
            CompoundCommand::ArithmeticForClause(clause) => {
                let part = |expr: &Option<ast::UnexpandedArithmeticExpr>| {
                    expr.as_ref()
                        .map_or(String::new(), |expr| expr.value.clone())
                };
                if depth == 0
                    && !self.as_dash
                    && let Some((name, values)) = loops::counted(
                        &part(&clause.initializer),
                        &part(&clause.condition),
                        &part(&clause.updater),
                    )
                {
                    self.line_counted.push(CountedLoop {
                        start: clause.loc.start.index,
                        body_start: clause.body.loc.start.index,
                        name,
                        values,
                    });
                }
                for expr in [&clause.initializer, &clause.condition, &clause.updater]
                    .into_iter()
                    .flatten()
                {
                    self.hidden(&expr.value, depth);
                }
                self.list(&clause.body.list, stdin, depth);
            }
            CompoundCommand::BraceGroup(group) => self.list(&group.list, stdin, depth),
            CompoundCommand::Subshell(subshell) => self.subshell(&subshell.list, stdin, depth),
            CompoundCommand::ForClause(clause) => {
                if depth == 0 && !self.as_dash {
                    // The parser gives no list both for `for i; do` and for `for i in ; do`,
                    // which [`loops::write_out`] tells apart.
                    let values = clause.values.iter().flatten();
                    self.line_loops.push(LoopFound {
                        start: clause.loc.start.index,
                        end: clause.loc.end.index,
                        name: clause.variable_name.clone(),
                        words: values.map(|word| word.value.clone()).collect(),
                        body_start: clause.body.loc.start.index,
                        body_end: clause.body.loc.end.index,
                    });
                }
                for word in clause.values.iter().flatten() {
                    self.word(&word.value, depth);
                }
                self.list(&clause.body.list, stdin, depth);
            }
            CompoundCommand::CaseClause(clause) => {
                self.word(&clause.value.value, depth);
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        self.word(&pattern.value, depth);
                    }
                    if let Some(body) = &item.cmd {
                        self.list(body, stdin, depth);
                    }
                }
            }
            CompoundCommand::IfClause(clause) => self.if_clause(clause, stdin, depth),
            CompoundCommand::WhileClause(clause) | CompoundCommand::UntilClause(clause) => {
                self.list(&clause.0, stdin, depth);
                self.list(&clause.1.list, stdin, depth);
            }
            CompoundCommand::Coprocess(coprocess) => {
                self.command(&coprocess.body, &Stdin::Inherited, depth);
            }
        }
    }

    fn if_clause(&mut self, clause: &ast::IfClauseCommand, stdin: &Stdin, depth: usize) {
        self.list(&clause.condition, stdin, depth);
        self.list(&clause.then, stdin, depth);
        for branch in clause.elses.iter().flatten() {
            if let Some(condition) = &branch.condition {
                self.list(condition, stdin, depth);
            }
            self.list(&branch.body, stdin, depth);
        }
    }

    /// `( list )`: judged by what it runs, like the line (the plan runs it without a shell).
    /// A `cd` inside moves only the subshell, so the directories after it are those before.
    fn subshell(&mut self, list: &CompoundList, stdin: &Stdin, depth: usize) {
        let outside = self.cwds.clone();
        self.list(list, stdin, depth);
        self.cwds = outside;
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as E;
        match expr {
            E::And(left, right) | E::Or(left, right) => {
                self.extended_test(left, depth);
                self.extended_test(right, depth);
            }
            E::Not(inner) | E::Parenthesized(inner) => self.extended_test(inner, depth),
            E::UnaryTest(_, word) => {
                self.word(&word.value, depth);
            }
            E::BinaryTest(_, left, right) => {
                self.word(&left.value, depth);
                self.word(&right.value, depth);
            }
        }
    }

    /// Reads a word: records why its value is unknown, judges the commands it substitutes,
    /// and checks where a glob in it may lead.
    fn word(&mut self, raw: &str, depth: usize) -> Arg {
        self.read_word(words::analyze(raw), depth)
    }

    /// The words a command word becomes after brace expansion, each read like [`Self::word`].
    fn words(&mut self, raw: &str, depth: usize) -> Vec<Arg> {
        words::analyze_expanded(raw)
            .into_iter()
            .map(|report| self.read_word(report, depth))
            .collect()
    }

    fn read_word(&mut self, report: WordReport, depth: usize) -> Arg {
        let WordReport {
            arg,
            problem,
            substitutions,
            failure,
        } = report;
        if let Some(failure) = failure {
            self.destructive(failure.reason());
        }
        if let Some(problem) = problem {
            self.line_variables |= depth == 0 && arg.raw.contains('$');
            self.unknown(problem);
        }
        for script in substitutions {
            self.script(&script, &Stdin::Inherited, depth + 1);
            if depth == 0 && !self.as_dash {
                self.line_substitutions.push(script);
            }
        }
        if let Some(pattern) = &arg.pattern
            && let Some(problem) = self.glob_problem(pattern, &arg.raw)
        {
            self.unknown(problem);
        }
        arg
    }

    /// Judges the substitutions hidden in text the shell expands (arithmetic, patterns).
    fn hidden(&mut self, text: &str, depth: usize) {
        let (substitutions, failure) = words::hidden_substitutions(text);
        if let Some(failure) = failure {
            self.destructive(failure.reason());
        }
        for script in substitutions {
            self.script(&script, &Stdin::Inherited, depth + 1);
        }
    }

    fn simple(&mut self, simple: &SimpleCommand, stdin: &Stdin, depth: usize) -> Stdin {
        let mut input = stdin.clone();
        let mut args = Vec::new();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    // A command of nothing but assignments may be one of the line's own
                    // variables, which [`variables`] takes away.
                    self.line_variables |= depth == 0 && simple.word_or_name.is_none();
                    self.assignment(assignment, word, depth);
                }
                CommandPrefixOrSuffixItem::Word(word) => {
                    args.extend(self.words(&word.value, depth));
                }
                other => self.redirect_or_substitution(other, &mut input, &mut args, depth),
            }
        }
        if let Some(name) = &simple.word_or_name {
            args.extend(self.words(&name.value, depth));
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                // After the name an assignment is an ordinary word (`dd if=/dev/zero`), which
                // brush-parser still reports as an assignment.
                CommandPrefixOrSuffixItem::Word(word)
                | CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                    args.extend(self.words(&word.value, depth));
                }
                other => self.redirect_or_substitution(other, &mut input, &mut args, depth),
            }
        }
        if args.is_empty() {
            return Stdin::Unseen("an assignment".to_owned());
        }
        self.record_judged(&args, depth);
        self.judge(&args, &input, depth);
        // Tildes are judged after the command, so a path check can name the path instead.
        if let Some(word) = args.iter().find(|arg| arg.tilde) {
            self.unknown(format!("`{}` expands `~` to a home directory", word.raw));
        }
        programs::output_of(&args, &input)
    }

    /// Keeps the words of a command of the line itself, for the test that a plan runs what
    /// was judged.
    #[cfg(test)]
    fn record_judged(&mut self, args: &[Arg], depth: usize) {
        if depth == 0 {
            let words = args.iter().map(|a| a.text().unwrap_or(&a.raw).to_owned());
            self.judged.push(words.collect());
        }
    }

    #[cfg(not(test))]
    fn record_judged(&mut self, _args: &[Arg], _depth: usize) {}

    fn redirect_or_substitution(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        input: &mut Stdin,
        args: &mut Vec<Arg>,
        depth: usize,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => {
                if let Some(new_input) = self.redirect(redirect, depth) {
                    *input = new_input;
                }
            }
            // `<( lists )`: the lists run beside the command, judged like a subshell's, and
            // the command reads their output from the pipe it holds at `/dev/fd/N` (the
            // plan's numbering: 63 for the first, then down), a path of its own.
            CommandPrefixOrSuffixItem::ProcessSubstitution(
                ast::ProcessSubstitutionKind::Read,
                subshell,
            ) => {
                self.list(&subshell.list, &Stdin::Inherited, depth + 1);
                let before = args.iter().filter(|a| a.raw == SUBSTITUTION_RAW).count();
                let fd = super::plan::FIRST_SUBSTITUTION_FD - i32::try_from(before).unwrap_or(0);
                args.push(Arg {
                    raw: SUBSTITUTION_RAW.to_owned(),
                    value: Some(format!("/dev/fd/{fd}")),
                    pattern: None,
                    tilde: false,
                    several: false,
                });
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(
                ast::ProcessSubstitutionKind::Write,
                subshell,
            ) => {
                self.unknown(
                    "`>(...)` is a process substitution that takes the command's output".to_owned(),
                );
                self.list(
                    &subshell.list,
                    &Stdin::Unseen("the command's output".to_owned()),
                    depth + 1,
                );
                args.push(Arg::opaque(">(...)"));
            }
            CommandPrefixOrSuffixItem::Word(word)
            | CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                args.extend(self.words(&word.value, depth));
            }
        }
    }

    fn assignment(&mut self, assignment: &ast::Assignment, word: &ast::Word, depth: usize) {
        let inert = match (&assignment.name, &assignment.value) {
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Scalar(value)) => {
                !assignment.append
                    && super::plan::INERT_VARIABLES.contains(&name.as_str())
                    && self.word(&value.value, depth).text().is_some()
            }
            _ => false,
        };
        if !inert {
            self.unknown(format!("`{}` sets a variable for the command", word.value));
        }
        let values: Vec<&ast::Word> = match &assignment.value {
            ast::AssignmentValue::Scalar(value) => vec![value],
            ast::AssignmentValue::Array(values) => values
                .iter()
                .flat_map(|(key, value)| key.iter().chain(std::iter::once(value)))
                .collect(),
        };
        for value in values {
            let arg = self.word(&value.value, depth);
            let name = match &assignment.name {
                ast::AssignmentName::VariableName(name)
                | ast::AssignmentName::ArrayElementName(name, _) => name.as_str(),
            };
            programs::program_variable(self, name, &arg, depth);
        }
    }

    /// Judges a redirection; returns the new standard input when it replaces it.
    fn redirect(&mut self, redirect: &IoRedirect, depth: usize) -> Option<Stdin> {
        match redirect {
            IoRedirect::File(fd, kind, target) => {
                let symbol = redirect_symbol(kind);
                match target {
                    IoFileRedirectTarget::Filename(word) => {
                        self.file_redirect(*fd, kind, &word.value, depth)
                    }
                    IoFileRedirectTarget::Fd(number) => {
                        let shown = format!(
                            "{}{symbol}{number}",
                            fd.map(|f| f.to_string()).unwrap_or_default()
                        );
                        self.duplicate(kind, *fd, &number.to_string(), &shown);
                        None
                    }
                    IoFileRedirectTarget::Duplicate(word) => {
                        let arg = self.word(&word.value, depth);
                        let is_descriptor = arg.text().is_some_and(|t| {
                            let digits = t.strip_suffix('-').unwrap_or(t);
                            digits.chars().all(|c| c.is_ascii_digit())
                        });
                        if !is_descriptor && matches!(kind, IoFileRedirectKind::DuplicateOutput) {
                            // `>&word` with a word that is not a descriptor writes to a file.
                            self.write_redirect(&format!(">&{}", word.value), &arg);
                        } else {
                            let shown = format!(
                                "{}{symbol}{}",
                                fd.map(|f| f.to_string()).unwrap_or_default(),
                                word.value
                            );
                            self.duplicate(kind, *fd, arg.text().unwrap_or_default(), &shown);
                        }
                        None
                    }
                    IoFileRedirectTarget::ProcessSubstitution(_, subshell) => {
                        self.unknown(
                            "a redirection from or into a process substitution runs another command"
                                .to_owned(),
                        );
                        self.list(&subshell.list, &Stdin::Inherited, depth + 1);
                        let reads_stdin =
                            matches!(kind, IoFileRedirectKind::Read) && fd.is_none_or(|fd| fd == 0);
                        reads_stdin.then(|| Stdin::Unseen("a process substitution".to_owned()))
                    }
                }
            }
            IoRedirect::OutputAndError(word, append) => {
                let arg = self.word(&word.value, depth);
                let symbol = if *append { "&>>" } else { "&>" };
                self.write_redirect(&format!("{symbol} {}", word.value), &arg);
                None
            }
            IoRedirect::HereDocument(fd, document) => self.here_document(*fd, document, depth),
            IoRedirect::HereString(fd, word) => {
                let arg = self.word(&word.value, depth);
                if arg.value.is_none() {
                    self.unknown(format!(
                        "`<<< {}` feeds the command a here-string only known when the line runs",
                        word.value
                    ));
                }
                let reads_stdin = fd.is_none_or(|fd| fd == 0);
                if !reads_stdin {
                    self.unknown(format!(
                        "`<<< {}` feeds text to another descriptor than the input",
                        word.value
                    ));
                }
                reads_stdin.then(|| match arg.value {
                    Some(text) => Stdin::Text(text + "\n"),
                    None => Stdin::Unseen(format!("the here-string {}", word.value)),
                })
            }
        }
    }

    /// `N< file`, `N> file` and the like: writes are judged by their target; input must be
    /// a plain word naming a place inside the workspace (or /dev/null), for standard input.
    fn file_redirect(
        &mut self,
        fd: Option<i32>,
        kind: &IoFileRedirectKind,
        raw: &str,
        depth: usize,
    ) -> Option<Stdin> {
        let writes = matches!(
            kind,
            IoFileRedirectKind::Write
                | IoFileRedirectKind::Append
                | IoFileRedirectKind::Clobber
                | IoFileRedirectKind::ReadAndWrite
        );
        let symbol = redirect_symbol(kind);
        let arg = self.word(raw, depth);
        if writes && fd.is_some_and(|fd| fd != 1 && fd != 2) {
            self.unknown(format!(
                "`{}{symbol} {}` opens another file descriptor",
                fd.unwrap_or_default(),
                raw
            ));
        }
        if writes {
            self.write_redirect(&format!("{symbol} {}", raw), &arg);
            return None;
        }
        let reads_stdin = fd.is_none_or(|fd| fd == 0);
        match arg.text() {
            Some(_) if arg.pattern.is_some() => {
                self.unknown(format!("`< {}` redirects input from a pattern", raw))
            }
            Some(NULL_DEVICE) => {}
            // The runner opens a `<` file itself, in the bot: a descriptor path would be
            // one of the bot's.
            Some(path) if path.starts_with("/dev/fd/") || path.starts_with("/proc/self/") => {
                self.unknown(format!("`< {raw}` opens a descriptor of riskgate's own"));
            }
            Some(path) => {
                if let Some(problem) = self.path_problem("<", path) {
                    self.unknown(problem);
                }
            }
            None => {}
        }
        if !reads_stdin {
            self.unknown(format!(
                "`{}< {}` opens a file on another descriptor",
                fd.unwrap_or_default(),
                raw
            ));
        }
        reads_stdin.then(|| Stdin::File(raw.to_owned()))
    }

    /// A here-document: its text is the command's input when the line shows it.
    fn here_document(
        &mut self,
        fd: Option<i32>,
        document: &ast::IoHereDocument,
        depth: usize,
    ) -> Option<Stdin> {
        let mut text = document.doc.value.clone();
        if document.remove_tabs {
            text = text
                .lines()
                .map(|line| line.trim_start_matches('\t'))
                .collect::<Vec<_>>()
                .join("\n");
        }
        let mut visible = true;
        if document.requires_expansion {
            let (expands, substitutions, failure) = words::heredoc_expansions(&text);
            if let Some(failure) = failure {
                self.destructive(failure.reason());
            }
            for script in substitutions {
                self.script(&script, &Stdin::Inherited, depth + 1);
            }
            visible = !expands;
        }
        let reads_stdin = fd.is_none_or(|fd| fd == 0);
        if !visible {
            self.unknown("a here-document with expansions feeds the command its input".to_owned());
        }
        if !reads_stdin {
            self.unknown(
                "a here-document feeds text to another descriptor than the input".to_owned(),
            );
        }
        reads_stdin.then(|| {
            if visible {
                Stdin::Text(text)
            } else {
                Stdin::Unseen("a here-document with expansions".to_owned())
            }
        })
    }

    /// `N>&M`: standard output and error may become copies of each other (`2>&1`, `>&2`),
    /// which the plan runs itself; any other descriptor, or closing one, needs a shell.
    fn duplicate(&mut self, kind: &IoFileRedirectKind, fd: Option<i32>, to: &str, shown: &str) {
        let output = matches!(kind, IoFileRedirectKind::DuplicateOutput);
        let standard = |n: i32| n == 1 || n == 2;
        if !(output && fd.is_none_or(standard) && to.parse().is_ok_and(standard)) {
            self.unknown(format!("`{shown}` redirects a file descriptor"));
        }
    }

    /// Output redirected onto a file replaces or grows it; onto `/dev/null` it is dropped,
    /// which the plan does itself; onto the other standard streams it only moves output.
    fn write_redirect(&mut self, shown: &str, target: &Arg) {
        match target.text() {
            Some(NULL_DEVICE) if target.pattern.is_none() => {}
            Some(path) if is_sink(path) => {
                self.unknown(format!("`{shown}` redirects output"));
            }
            Some(path) => self.destructive(format!(
                "`{shown}` writes to the file {path}, replacing or growing it"
            )),
            None => self.destructive(format!(
                "`{shown}` writes to a file only named when the line runs"
            )),
        }
    }

    /// Judges one command (a simple command, or one run by a wrapper) from its words.
    pub(super) fn judge(&mut self, args: &[Arg], stdin: &Stdin, depth: usize) {
        let outer = std::mem::replace(&mut self.depth, depth);
        self.judge_at_depth(args, stdin, depth);
        self.depth = outer;
    }

    fn judge_at_depth(&mut self, args: &[Arg], stdin: &Stdin, depth: usize) {
        let Some(first) = args.first() else {
            return;
        };
        if depth > MAX_DEPTH {
            self.destructive(format!(
                "it nests commands more than {MAX_DEPTH} levels deep, too deep to check what they run"
            ));
            return;
        }
        if self.denied(args) {
            return;
        }
        let Some(written) = first.text() else {
            self.destructive(format!(
                "the command name `{}` is only known when the line runs, so it could be any command",
                first.raw
            ));
            return;
        };
        if first.pattern.is_some() {
            self.destructive(format!(
                "the command name `{}` is a pattern that expands to file names, so it could be any command",
                first.raw
            ));
            return;
        }
        let program = written.rsplit('/').next().unwrap_or(written);
        let invocation = Invocation {
            program,
            args: &args[1..],
            stdin,
            depth,
        };
        let mut judgement = programs::judge(self, &invocation);
        if written.contains('/') && judgement.whitelisted && !in_system_directory(written) {
            judgement.whitelisted = false;
            judgement.unknown(format!(
                "`{written}` runs a program by path, not the whitelisted `{program}`"
            ));
        }
        if let Some(reason) = judgement.destructive {
            self.destructive(reason);
        }
        if let Some(length) = self.allowed(args) {
            // An operator allow rule vouches for the command; its words must still be
            // literal (checked by the walk) and its paths inside the workspace.
            if judgement.whitelisted
                && let Some(reason) = judgement.unknown
            {
                self.unknown(reason);
            }
            for arg in &args[length..] {
                self.loose_path_check(written, arg);
            }
            let rule: Vec<&str> = args[..length].iter().filter_map(Arg::text).collect();
            self.read_only(&format!("{} (operator allow rule)", rule.join(" ")));
            return;
        }
        match judgement.unknown {
            Some(reason) => self.unknown(reason),
            None if judgement.whitelisted => {
                if programs::lists_processes(program) && self.lists_processes.is_none() {
                    self.lists_processes = Some(program.to_owned());
                }
                self.read_only(program);
            }
            None => self.unknown(format!("`{program}` is not on the read-only whitelist")),
        }
    }

    /// Forbids a command whose leading words match an operator deny rule. A word only known
    /// at run time that may complete a match makes the command destructive in doubt.
    fn denied(&mut self, args: &[Arg]) -> bool {
        let policy = self.policy;
        for rule in &policy.deny {
            if rule.len() > args.len() {
                continue;
            }
            let mut certain = true;
            let matches = rule
                .iter()
                .zip(args)
                .enumerate()
                .all(|(index, (want, arg))| match arg.text() {
                    Some(text) if index == 0 => text == want || base_name(text) == base_name(want),
                    Some(text) => text == want,
                    None => {
                        certain = false;
                        true
                    }
                });
            if matches && certain {
                self.forbidden(format!(
                    "`{}` matches the operator's deny rule `{}`",
                    args.iter()
                        .map(|a| a.raw.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    rule.join(" ")
                ));
                return true;
            }
            if matches {
                self.destructive(format!(
                    "`{}` may match the operator's deny rule `{}` when the line runs",
                    args.iter()
                        .map(|a| a.raw.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    rule.join(" ")
                ));
            }
        }
        false
    }

    /// The length of the operator allow rule the command's leading words match exactly.
    fn allowed(&self, args: &[Arg]) -> Option<usize> {
        self.policy
            .allow
            .iter()
            .filter(|rule| {
                rule.len() <= args.len()
                    && rule
                        .iter()
                        .zip(args)
                        .all(|(want, arg)| arg.text() == Some(want.as_str()))
            })
            .map(Vec::len)
            .max()
    }

    /// Checks a word of a command whose syntax is not known: as a path unless it is an
    /// option, and the value of `--opt=value` or `NAME=value` too.
    fn loose_path_check(&mut self, program: &str, arg: &Arg) {
        let Some(text) = arg.text() else {
            return;
        };
        let mut candidates = Vec::new();
        if !text.starts_with('-') {
            candidates.push(text);
        }
        if let Some((_, value)) = text.split_once('=') {
            candidates.push(value);
        }
        for candidate in candidates {
            if let Some(problem) = self.path_problem(program, candidate) {
                self.unknown(problem);
            }
        }
    }

    /// Checks operands and option values that name files.
    pub(super) fn check_path(&self, judgement: &mut Judgement, program: &str, path: &str) {
        if let Some(problem) = self.path_problem(program, path) {
            judgement.unknown(problem);
        }
    }

    /// Why `path` may lead outside the workspace from any directory the command may run in.
    pub(super) fn path_problem(&self, program: &str, path: &str) -> Option<String> {
        self.cwds.iter().find_map(|cwd| {
            paths::path_problem(self.workspace(), program, &in_directory(cwd, path))
        })
    }

    /// Why the directory `path` may lie outside the workspace from any directory the
    /// command may run in: the machine's public files are readable, but a line only ever
    /// changes into the workspace's directories.
    pub(super) fn directory_problem(&self, program: &str, path: &str) -> Option<String> {
        self.cwds.iter().find_map(|cwd| {
            paths::workspace_problem(self.workspace(), program, &in_directory(cwd, path))
        })
    }

    /// Why the glob `pattern` may expand outside the workspace from any directory the
    /// command may run in.
    fn glob_problem(&self, pattern: &str, shown: &str) -> Option<String> {
        self.cwds.iter().find_map(|cwd| {
            let escaped = glob::Pattern::escape(cwd);
            paths::glob_problem(self.workspace(), &in_directory(&escaped, pattern), shown)
        })
    }

    /// Records where a successful `cd` leads (`targets`, one per directory it may start in).
    pub(super) fn changes_directory(&mut self, depth: usize, targets: Vec<String>) {
        self.cd_targets = Some((depth, targets));
    }

    /// Records that a `cd` may lead out of the workspace (`problem` says how): nothing may
    /// run after it.
    pub(super) fn leaves_workspace(&mut self, problem: String) {
        self.left_workspace.get_or_insert(problem);
        self.verdict.leaves = true;
    }
}

/// Keeps `reason` if there is none yet or it was found at a shallower level.
fn keep_shallowest(slot: &mut Option<(usize, String)>, depth: usize, reason: String) {
    if slot.as_ref().is_none_or(|(kept, _)| depth < *kept) {
        *slot = Some((depth, reason));
    }
}

/// `path` as seen from the directory `cwd` (relative to the workspace root, `""` for the
/// root itself); absolute paths and `~` stay as they are.
/// The system's own program directories, owned by root and read-only to the bot: a program
/// named by its path there (`/bin/ls`, `/usr/bin/find`) is the program its name says, the
/// one the sandboxed PATH finds.
const SYSTEM_PROGRAM_DIRECTORIES: &[&str] = &["/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/"];

/// Whether `written` names a program directly in one of [`SYSTEM_PROGRAM_DIRECTORIES`].
fn in_system_directory(written: &str) -> bool {
    SYSTEM_PROGRAM_DIRECTORIES.iter().any(|directory| {
        written
            .strip_prefix(directory)
            .is_some_and(|name| !name.is_empty() && !name.contains('/'))
    })
}

pub(super) fn in_directory(cwd: &str, path: &str) -> String {
    if cwd.is_empty() || path.starts_with(['/', '~']) {
        path.to_owned()
    } else {
        format!("{cwd}/{path}")
    }
}

fn base_name(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

/// Output targets that are not files: writing there replaces nothing.
pub(super) fn is_sink(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/fd/1" | "/dev/fd/2"
    )
}

fn redirect_symbol(kind: &IoFileRedirectKind) -> &'static str {
    match kind {
        IoFileRedirectKind::Read => "<",
        IoFileRedirectKind::Write => ">",
        IoFileRedirectKind::Append => ">>",
        IoFileRedirectKind::ReadAndWrite => "<>",
        IoFileRedirectKind::Clobber => ">|",
        IoFileRedirectKind::DuplicateInput => "<&",
        IoFileRedirectKind::DuplicateOutput => ">&",
    }
}

fn describe_compound(compound: &CompoundCommand) -> &'static str {
    match compound {
        CompoundCommand::Arithmetic(_) => "`(( ... ))`",
        CompoundCommand::ArithmeticForClause(_) => "a `for (( ... ))` loop",
        CompoundCommand::BraceGroup(_) => "a `{ ...; }` group",
        CompoundCommand::Subshell(_) => "a `( ... )` subshell",
        CompoundCommand::ForClause(_) => "a `for` loop",
        CompoundCommand::CaseClause(_) => "a `case` statement",
        CompoundCommand::IfClause(_) => "an `if` statement",
        CompoundCommand::WhileClause(_) => "a `while` loop",
        CompoundCommand::UntilClause(_) => "an `until` loop",
        CompoundCommand::Coprocess(_) => "a `coproc`",
    }
}
