//! `execute_command`: one shell command line run in the workspace.
//!
//! Layout:
//! - `assess` — the gate's half: parses the line once, walks it (is it safe, destructive or
//!   unknown) and plans it from the same tree ([`read_line`]).
//! - `programs` — what each program's words mean, one file per program family (coreutils,
//!   git, find, sed, awk, containers, system, wrappers, shells, ...) behind one registry.
//!   `options` reads getopt-style options for them.
//! - [`plan`](mod@plan) — can the line run without a shell, and as which argv vectors.
//! - `loops` — a `for` loop over words the line shows, written out once for each word;
//!   `variables` — the line's own variables (set first with plain values, or never set) and
//!   the machine's, put in as their values.
//! - [`substitute`] — command substitutions on a line run without a click: their scripts
//!   run first, and the line is judged again with their output.
//! - `expand` — riskgate's own glob expansion, kept inside the workspace; [`braces`] and
//!   `arith` — its own brace and integer arithmetic expansion, shared by the assessor and
//!   the plan so both see the same words.
//! - [`execute`] — the walls: scrubbed environment, one process group, timeout, capped
//!   output; planned lines without a shell, the rest through `sh -c`.
//! - `render` — the summary, the LLM text and the chat message; `show` — how a call is shown
//!   to people (the line).
//!
//! The rule between the gate and the walls: a line with a plan runs without a shell whatever
//! the approval; a line that needs a shell runs only when a person confirmed it, and so
//! does a line that lists processes (`ps`, `lsof`) where lines share the machine's `/proc`.

mod arith;
mod assess;
pub mod braces;
pub mod cgroup;
mod conditions;
pub mod execute;
pub mod expand;
mod loops;
pub(crate) mod names;
mod options;
mod parameter;
mod paths;
pub mod plan;
mod programs;
mod reads;
pub mod reaper;
mod render;
pub mod sandbox;
mod show;
pub mod similar;
mod structure;
pub mod substitute;
mod syntax;
mod variables;
pub mod view;
pub mod watch;
mod words;

#[cfg(test)]
mod tests;

pub use assess::{CommandPolicy, LineReading, assess_command, read_line};
pub use execute::{Captured, CommandRunner, Exit, Line, LineOutcome, RunError};
pub use expand::ExpansionRefused;
pub use plan::{NeedsShell, Plan, plan, plan_line};
pub use render::render;
pub use sandbox::{Sandbox, Support, Walls};
pub use substitute::Substituting;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::{CommandSettings, OutputSettings, SandboxSettings, Settings, ToolRules};
use crate::core::risk::{Assessment, Decision};
use crate::core::tools::{
    Approval, AssessContext, BoxFuture, CallBrief, Preflight, Reading, RiskAssessor, Tool,
    ToolError, ToolOutput, ToolSet,
};
use crate::tools::Workspace;

pub const NAME: &str = "execute_command";

/// Adds the command tool as `[command]` and `[tools.execute_command]` set it up; SQL given to
/// database clients on a line is judged with `[tools.execute_sql]`'s rules.
pub fn register(tools: &mut ToolSet, settings: &Settings) {
    let sql = &settings.tools.execute_sql;
    let tool = CommandTool::new(
        Workspace::new(&settings.tools.workspace),
        &settings.tools.execute_command,
        &settings.command,
        &settings.output,
    )
    .with_sql_rules(crate::tools::sql::SqlRules::new(&sql.allow, &sql.deny));
    tools.register_with(
        std::sync::Arc::new(tool),
        settings.tools.execute_command.enabled,
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandArgs {
    command: String,
}

/// Why a call of `execute_command` did not produce output.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("the command line is empty: give a command to run")]
    Empty,
    /// The gate let an auto call through, but the line needs a shell, which only a person
    /// may approve.
    #[error(
        "this line needs a shell because {0}, so it runs only when a person confirms it. Call {NAME} again with risk_level \"medium\" to ask, or write it as plain commands joined by |, &&, || and ;"
    )]
    NeedsConfirmation(NeedsShell),
    /// The gate let an auto call through that lists processes (`ps`), but lines here see
    /// every process on the machine, command lines included: only a person may approve it.
    #[error(
        "`{0}` lists processes, and here a line sees every process on the machine (this bot cannot give lines a /proc of their own), command lines included, so it runs only when a person confirms it. Call {NAME} again with risk_level \"medium\" to ask"
    )]
    ProcessesShared(String),
    /// A line of command substitutions ran them without a click, and with their output
    /// it is no longer a line that may run so.
    #[error(
        "the line's command substitutions ran first, and with their output the line reads `{line}`, which waits for a person: {reason}. Call {NAME} again with that line and risk_level \"medium\" to ask"
    )]
    Substituted { line: String, reason: String },
    /// A substitution's output cannot be put into the line.
    #[error(
        "{0}; call {NAME} again with the words written out, or with risk_level \"medium\" to ask"
    )]
    Substitution(String),
    #[error(transparent)]
    Run(#[from] RunError),
}

impl From<CommandError> for ToolError {
    fn from(error: CommandError) -> Self {
        let message = error.to_string();
        match error {
            CommandError::Empty => Self::InvalidArguments(message),
            CommandError::NeedsConfirmation(_)
            | CommandError::ProcessesShared(_)
            | CommandError::Substituted { .. }
            | CommandError::Substitution(_)
            | CommandError::Run(RunError::Expansion(_)) => Self::Refused(message),
            // FIXME: `ToolError::Timeout` carries only the duration, so what the line wrote
            // before it was killed (`stdout`, `stderr`) stops here; `CommandTool::run` still
            // returns it.
            CommandError::Run(RunError::TimedOut { after, .. }) => Self::Timeout(after),
            CommandError::Run(RunError::Sandbox(_)) => Self::Refused(message),
            CommandError::Run(
                RunError::Workspace { .. }
                | RunError::NotFound { .. }
                | RunError::NotExecutable { .. }
                | RunError::Spawn { .. }
                | RunError::Setup(_),
            ) => Self::Failed(message),
        }
    }
}

/// The command tool: the assessor's policy, the runner and the output budgets.
#[derive(Debug, Clone)]
pub struct CommandTool {
    /// Where lines run: its top level is what the model is told is there.
    workspace: Workspace,
    policy: CommandPolicy,
    runner: CommandRunner,
    budgets: OutputSettings,
    sandbox: SandboxSettings,
}

impl CommandTool {
    /// Takes the bot's environment as it is now (see [`execute::child_environment`]).
    pub fn new(
        workspace: Workspace,
        rules: &ToolRules,
        settings: &CommandSettings,
        budgets: &OutputSettings,
    ) -> Self {
        let runner = CommandRunner::new(workspace.clone(), settings);
        Self {
            policy: CommandPolicy::new(workspace.clone(), &rules.allow, &rules.deny)
                .with_variables(runner.machine_variables())
                .with_environment(runner.environment_names()),
            runner,
            workspace,
            budgets: budgets.clone(),
            sandbox: settings.sandbox.clone(),
        }
    }

    /// The SQL tool's rules, for SQL given to database clients on the line (`psql -c`).
    pub fn with_sql_rules(mut self, rules: crate::tools::sql::SqlRules) -> Self {
        self.policy = self.policy.with_sql_rules(rules);
        self
    }

    /// Whether lines can run without a click here: the kernel can build the sandbox.
    pub fn support(&self) -> &Support {
        self.runner.sandbox().support()
    }

    /// What is bounded or private per line here (control groups, a view of its own).
    pub fn per_line(&self) -> sandbox::PerLine {
        self.runner.sandbox().per_line()
    }

    /// How the workspace's watch for hard links and special files stands (without starting
    /// it: the first line run without a click, or the start-up checks, do).
    pub fn workspace_watch(&self) -> watch::WatchState {
        self.runner.sandbox().workspace_watch()
    }

    /// The walls a line runs in under `approval`. A confirmed line runs without the sandbox
    /// where the kernel cannot build it (a person chose it; nothing auto-runs there).
    pub fn walls(&self, approval: &Approval) -> Walls {
        if approval.is_confirmed() {
            self.confirmed_walls()
        } else {
            Walls::ReadOnly
        }
    }

    fn confirmed_walls(&self) -> Walls {
        if self.support().is_ready() {
            Walls::confirmed(&self.sandbox)
        } else {
            Walls::Off
        }
    }

    /// Runs one line behind the walls. A line with a plan runs without a shell; one without
    /// runs through `sh -c` only when `approval` is a person's confirmation.
    pub async fn run(&self, line: &str, approval: &Approval) -> Result<LineOutcome, CommandError> {
        let read = read_line(line, &self.policy);
        let lists = read.lists_processes.as_deref();
        let substituting = read.substituting.as_ref();
        self.run_planned(line, &read.plan, lists, substituting, approval)
            .await
    }

    /// Runs a line of command substitutions without a click: each script first (each
    /// judged again, and run only if safe), then the line with their output put in, judged
    /// again from scratch and run only if safe. What the scripts wrote to stderr comes
    /// before the line's own, as in a shell; their exit statuses are not the line's. All of
    /// it together gets the time one line gets (`command.timeout_secs`): past it, what runs
    /// is stopped with its processes.
    async fn run_substituting(
        &self,
        substituting: &Substituting,
        approval: &Approval,
    ) -> Result<LineOutcome, CommandError> {
        let limit = self.runner.timeout();
        tokio::time::timeout(limit, self.run_substitutions(substituting, approval))
            .await
            .unwrap_or_else(|_| {
                Err(CommandError::Substitution(format!(
                    "the line's substitutions and the line itself did not end within command.timeout_secs ({} s) in all, and were stopped",
                    limit.as_secs()
                )))
            })
    }

    fn run_substitutions<'a>(
        &'a self,
        substituting: &'a Substituting,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<LineOutcome, CommandError>> {
        Box::pin(async move {
            let started = std::time::Instant::now();
            let mut outputs = Vec::with_capacity(substituting.found.len());
            let mut stderr = Vec::new();
            for found in &substituting.found {
                let outcome = self.run_if_safe(&found.script, approval).await?;
                if outcome.stdout.dropped > 0 {
                    return Err(CommandError::Substitution(format!(
                        "the output of `{}` is longer than command.output_limit_bytes ({} bytes)",
                        found.script,
                        self.runner.output_limit()
                    )));
                }
                stderr.extend_from_slice(&outcome.stderr.bytes);
                outputs.push(outcome.stdout.bytes);
            }
            let line = substituting
                .splice(&outputs)
                .map_err(|error| CommandError::Substitution(error.to_string()))?;
            tracing::info!(
                substituted_bytes = line.len(),
                "command substitutions ran; the line they make is judged again"
            );
            let mut outcome = self.run_if_safe(&line, approval).await?;
            outcome.stderr = outcome.stderr.after(&stderr, self.runner.output_limit());
            outcome.elapsed = started.elapsed();
            Ok(outcome)
        })
    }

    /// Reads `line` and runs it if it is safe as it stands (a part of a line of
    /// substitutions: the gate judged the line, not this part).
    async fn run_if_safe(
        &self,
        line: &str,
        approval: &Approval,
    ) -> Result<LineOutcome, CommandError> {
        let read = read_line(line, &self.policy);
        if !matches!(read.assessment, Assessment::Safe(_)) {
            return Err(CommandError::Substituted {
                line: line.to_owned(),
                reason: read.assessment.reason().to_owned(),
            });
        }
        let lists = read.lists_processes.as_deref();
        let substituting = read.substituting.as_ref();
        self.run_read(line, &read.plan, lists, substituting, approval)
            .await
    }

    /// [`CommandTool::run`] with the line's plan as the gate read it.
    #[tracing::instrument(
        name = "execute_command",
        skip_all,
        fields(line = %line, confirmed = approval.is_confirmed(), shell = tracing::field::Empty)
    )]
    async fn run_planned(
        &self,
        line: &str,
        planned: &Result<Plan, NeedsShell>,
        lists_processes: Option<&str>,
        substituting: Option<&Substituting>,
        approval: &Approval,
    ) -> Result<LineOutcome, CommandError> {
        tracing::Span::current().record("shell", planned.is_err());
        self.run_read(line, planned, lists_processes, substituting, approval)
            .await
    }

    /// [`CommandTool::run_planned`] without a span of its own: the parts of a line of
    /// substitutions run in the span of the line the model wrote, so that what the line
    /// they make holds (the scripts' output) is never logged.
    async fn run_read(
        &self,
        line: &str,
        planned: &Result<Plan, NeedsShell>,
        lists_processes: Option<&str>,
        substituting: Option<&Substituting>,
        approval: &Approval,
    ) -> Result<LineOutcome, CommandError> {
        if let Some(refused) = processes_shared(
            lists_processes,
            approval,
            self.runner.sandbox().lines_see_own_processes(),
        ) {
            tracing::info!(%refused, "refused: an auto-approved line lists processes and lines share /proc here");
            return Err(refused);
        }
        if let Some(substituting) = substituting
            && !approval.is_confirmed()
        {
            return self.run_substituting(substituting, approval).await;
        }
        let walls = self.walls(approval);
        let result = match planned {
            Ok(plan) => self.runner.run(Line::Plan(plan), walls).await,
            Err(NeedsShell::NoCommand) => return Err(CommandError::Empty),
            Err(reason) if !approval.is_confirmed() => {
                tracing::info!(%reason, "refused: an auto-approved line needs a shell");
                return Err(CommandError::NeedsConfirmation(reason.clone()));
            }
            Err(_) => self.runner.run(Line::Shell(line), walls).await,
        };
        match &result {
            Ok(outcome) => tracing::info!(
                exit = %outcome.exit,
                elapsed_ms = outcome.elapsed.as_millis(),
                stdout_bytes = outcome.stdout.total(),
                stderr_bytes = outcome.stderr.total(),
                "command finished"
            ),
            Err(RunError::TimedOut { stdout, stderr, .. }) => tracing::warn!(
                stdout_bytes = stdout.total(),
                stderr_bytes = stderr.total(),
                "command timed out; its process group was killed"
            ),
            Err(error) => tracing::info!(%error, "command did not run"),
        }
        Ok(result?)
    }
}

/// Refuses a line run without a click that lists processes (`lists`, its first such
/// program) where lines do not see their own processes alone (`own_processes`): there its
/// `ps` would show every command line on the machine.
fn processes_shared(
    lists: Option<&str>,
    approval: &Approval,
    own_processes: bool,
) -> Option<CommandError> {
    match lists {
        Some(program) if !approval.is_confirmed() && !own_processes => {
            Some(CommandError::ProcessesShared(program.to_owned()))
        }
        _ => None,
    }
}

/// What the start-up checks say of the workspace's watch.
fn watch_finding(watch: &watch::WatchState, limit: u64) -> Preflight {
    use watch::WatchState;
    let walking = |why: &str| {
        format!(
            "every command line run without a click first walks the whole workspace for hard links and special files (at most command.sandbox.hard_link_scan_limit = {limit} entries; a larger workspace gets no such lines), because {why}"
        )
    };
    match watch {
        WatchState::Watching { directories, .. } => Preflight::fine(format!(
            "the workspace is watched for hard links and special files (inotify, one watch per directory: {directories}): lines run without a click need no walk of it"
        )),
        WatchState::NotStarted => Preflight::fine(
            "the workspace does not exist yet: it is watched for hard links and special files from its first line".to_owned(),
        ),
        WatchState::Off => Preflight::fine(walking("command.sandbox.watch_workspace is false")),
        WatchState::Walking(why) => Preflight::warning(walking(why)),
    }
}

/// What the gate's reading of a line leaves for running it: the line, and its plan (or why
/// it needs a shell) built from the syntax tree the verdict came from ([`read_line`]).
#[derive(Debug)]
pub struct LinePlan {
    pub line: String,
    pub plan: Result<Plan, NeedsShell>,
    /// The line's first read-only command that lists processes ([`LineReading`]).
    pub lists_processes: Option<String>,
    /// How it runs without a click when it holds command substitutions ([`LineReading`]).
    pub substituting: Option<Substituting>,
}

impl RiskAssessor for CommandTool {
    fn assess(&self, arguments: &Map<String, Value>, _ctx: &AssessContext) -> Assessment {
        match super::parse_arguments::<CommandArgs>(NAME, arguments) {
            Ok(args) => assess_command(&args.command, &self.policy),
            Err(assessment) => assessment,
        }
    }

    fn assess_reading(
        &self,
        arguments: &Map<String, Value>,
        _ctx: &AssessContext,
    ) -> (Assessment, Option<Reading>) {
        match super::parse_arguments::<CommandArgs>(NAME, arguments) {
            Ok(args) => {
                let read = read_line(&args.command, &self.policy);
                let plan = LinePlan {
                    line: args.command,
                    plan: read.plan,
                    lists_processes: read.lists_processes,
                    substituting: read.substituting,
                };
                (read.assessment, Some(Reading::new(plan)))
            }
            Err(assessment) => (assessment, None),
        }
    }
}

impl Tool for CommandTool {
    fn name(&self) -> &str {
        NAME
    }

    fn similarity(&self, arguments: &Map<String, Value>) -> Option<crate::core::rules::Similarity> {
        let args: CommandArgs = super::parse_arguments(NAME, arguments).ok()?;
        similar::similarity(&args.command)
    }

    fn description(&self) -> &str {
        "Run a command line in the workspace directory and return its output and exit status. Read-only commands (ls, cat, grep, git status, ...) run at once; anything else waits for a person. Plain commands joined by |, &&, || and ; run without a shell, and so do `( ... )` subshells and `{ ...; }` groups of them, `if ...; then ...; fi`, `[[ -f file ]]` (its file, string and number tests, as `test`), `! cmd`, `cd dir`, `< file`, `2>/dev/null`, `2>&1`, `{a,b}`, `$((1 + 2))`, `$'\\t'`, `<<< 'text'`, here-documents without expansions, `<(cmd)` and `command -v NAME` / `type NAME`. A `$(cmd)` whose command only reads runs first, and the line is judged again with its output; a `for x in WORDS; do ...; done` loop (or `for ((i=1; i<=N; i++))`) is judged written out once for each word, and `cmd | while read -r x; do ...; done` (or `done < file`) once for each line `cmd` prints, after it runs. A script given to `sh -c` or `bash -c` (with `$1`... as the words after it, `find . -exec sh -c 'wc -l \"$1\"' _ {} \\;`) is judged as that script would be as a line. $PATH, $LANG, $USER and $PWD (and `$(pwd)`) are their values, and so are the line's own variables: `name=value; cmd $name` (or `NAME=...`, not one the shell reads) as written, a lower-case `$name` never set and `$1`...`$9` as empty, with `${name%.txt}`, `${name##*/}`, `${#name}`, `${name:0:3}`, `${name/a/b}`, `${name:-default}` done as bash does them (also on a loop's word). Lines that need a shell (other $VARs such as $HOME, ~, writing redirections, other `while` loops, `case`) always need a person's confirmation."
    }

    fn execute<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.execute_read(arguments, approval, None)
    }

    /// Runs the plan the gate judged when `reading` is this line's ([`LinePlan`]); reads the
    /// line again otherwise (after a restart, or when called without the gate).
    fn execute_read<'a>(
        &'a self,
        arguments: &'a Map<String, Value>,
        approval: &'a Approval,
        reading: Option<&'a Reading>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: CommandArgs = super::call_arguments(NAME, arguments)?;
            let judged = reading
                .and_then(Reading::get::<LinePlan>)
                .filter(|read| read.line == args.command);
            let outcome = match judged {
                Some(read) => {
                    let lists = read.lists_processes.as_deref();
                    let substituting = read.substituting.as_ref();
                    self.run_planned(&read.line, &read.plan, lists, substituting, approval)
                        .await?
                }
                None => self.run(&args.command, approval).await?,
            };
            Ok(render(&args.command, &outcome, &self.budgets))
        })
    }

    /// Says what each line gets for itself on this machine (control groups, a view of its
    /// own), warning where one cannot be built, and starts the workspace's watch (its first
    /// walk), saying where lines must walk the workspace instead; the probes and the walk
    /// run here, off the start path.
    fn preflight(&self) -> BoxFuture<'_, Vec<Preflight>> {
        Box::pin(async move {
            if !self.support().is_ready() {
                return Vec::new();
            }
            let sandbox = self.runner.sandbox().clone();
            let found = tokio::task::spawn_blocking(move || {
                (sandbox.per_line(), sandbox.watch_workspace())
            })
            .await;
            let Ok((per_line, watch)) = found else {
                return Vec::new();
            };
            let mut findings: Vec<Preflight> = [per_line.limits, per_line.view]
                .into_iter()
                .map(|found| match found {
                    Ok(what) => Preflight::fine(format!("command lines each get {what}")),
                    Err(why) => Preflight::warning(format!(
                        "command lines are not isolated from each other as fully as they could be: {why}"
                    )),
                })
                .collect();
            findings.push(watch_finding(&watch, self.sandbox.hard_link_scan_limit));
            findings
        })
    }

    fn uncontained(&self) -> Option<&str> {
        match self.support() {
            Support::Ready { .. } => None,
            Support::Missing { reason } => Some(reason),
        }
    }

    fn containment(&self, decision: Decision) -> Option<&'static str> {
        match decision {
            Decision::Auto => Some(Walls::ReadOnly.label()),
            Decision::Confirm => Some(self.confirmed_walls().label()),
            Decision::Deny => None,
        }
    }

    fn prompt_context(&self) -> BoxFuture<'_, Option<String>> {
        Box::pin(async { Some(self.workspace.top_level().await) })
    }

    fn whole_call(&self, arguments: &Map<String, Value>) -> String {
        show::whole_call(arguments)
    }

    fn brief_call(&self, arguments: &Map<String, Value>) -> CallBrief {
        show::brief_call(arguments)
    }

    fn call_line(&self, arguments: &Map<String, Value>) -> String {
        show::call_line(arguments)
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command line, e.g. `ls -la` or `grep -rn PATTERN .`. Paths are relative to the workspace."
                }
            },
            "required": ["command"],
            "additionalProperties": false
        })
    }
}
