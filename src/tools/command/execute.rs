//! Running a command line: the walls behind the gate.
//!
//! A line with a [`Plan`] runs without a shell: riskgate resolves each program on PATH
//! before anything starts, expands globs inside the workspace, connects each pipeline's
//! processes stdout to stdin itself, follows `&&`, `||` and `;` by exit status like sh, and
//! runs a subshell stage's lists itself, beside the other stages, in a copy of the line's
//! directory. A
//! line without a plan runs as `sh -c LINE`; whether it may is the caller's decision.
//!
//! Every child, either way:
//! - runs in the workspace root (created if missing) with a scrubbed environment: PATH
//!   (absolute entries only), HOME = the workspace, LANG, and the `env_allow` names that do
//!   not look like secrets ([`child_environment`]);
//! - has its stdin closed, or fed by the process before it in a pipeline;
//! - belongs to one process group per line, so a timeout kills the whole group, grandchildren
//!   included, and nothing a line started outlives it once it is over;
//! - writes into two pipes, stdout and stderr, shared by the whole line like a shell's, read
//!   to the end and kept up to `output_limit_bytes` each (the rest counted and dropped, so
//!   no child ever blocks on a full pipe).
//!
//! The process group is named after its first process (the leader), and the number stays
//! ours only while that process is not reaped. So the leader is watched with
//! `waitid(WNOWAIT)`, which reads its status without reaping it, and reaped only after the
//! last `killpg`: the group can never be a recycled number that names someone else's
//! processes, and later pipelines of the line (`a; b`) can still join it after `a` exited.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{self, PipeReader};
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use super::expand::{ExpansionRefused, expand_in};
use super::names::{Answer, Query, executables_on};
use super::plan::{
    AndOrList, Conditional, Connector, Pipeline, Plan, Redirect, SimpleCommand, Stage, Subshell,
    Timing, cd_directory, is_query_builtin, is_state_builtin,
};
use super::reaper::Reaper;
use super::sandbox::{
    LimitsReached, LineSandbox, NULL_DEVICE, RESERVED_VARIABLES, Sandbox, SandboxError, Walls,
    git_ceiling, git_environment, hg_environment, python_environment,
};
use crate::config::CommandSettings;
use crate::core::tools::format_duration;
use crate::tools::Workspace;

/// PATH when the bot's own PATH has no absolute entry.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The shell of lines without a plan, by absolute path so PATH cannot swap it.
pub const SHELL: &str = "/bin/sh";
/// LANG when the bot has none.
const DEFAULT_LANG: &str = "C.UTF-8";
/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 64 * 1024;
/// After a timeout kills the group, how long the readers may take to drain the pipes.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// How long reaping a killed leader may take before it is left to tokio's orphan reaper.
const REAP_GRACE: Duration = Duration::from_secs(1);

/// Parts of a variable name that mark it as a secret, upper-cased.
const SECRET_PARTS: &[&str] = &[
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "DATABASE_URL",
    "PRIVATE",
    "COOKIE",
    // SSH_AUTH_SOCK lends out the keys of an ssh-agent.
    "AUTH_SOCK",
];
/// Prefixes of the bot's own configuration and credentials.
const SECRET_PREFIXES: &[&str] = &["RISKGATE", "DISCORD", "OPENAI"];

/// Whether an environment variable's name looks like it holds a secret. Such a variable is
/// never passed to a command, even when `env_allow` lists it.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_PARTS.iter().any(|part| upper.contains(part))
        || SECRET_PREFIXES.iter().any(|prefix| upper.starts_with(prefix))
        // MYSQL_PWD and friends; PWD and OLDPWD themselves are only directories.
        || upper.ends_with("_PWD")
}

/// PATH for commands: the absolute entries of `parent`, else [`DEFAULT_PATH`]. An empty or
/// relative entry would search the working directory, the workspace, where anyone who can
/// write a file could plant an `ls`.
pub fn safe_path(parent: Option<&OsStr>) -> OsString {
    let kept: Vec<&[u8]> = parent
        .map(|path| {
            path.as_bytes()
                .split(|&b| b == b':')
                .filter(|entry| entry.starts_with(b"/"))
                .collect()
        })
        .unwrap_or_default();
    if kept.is_empty() {
        OsString::from(DEFAULT_PATH)
    } else {
        OsString::from_vec(kept.join(&b':'))
    }
}

/// The name of the account the bot runs as (its effective user's, from the user database),
/// which every line runs as too: what `whoami` prints.
fn account_name() -> Option<OsString> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut buffer = vec![0 as libc::c_char; 4096];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to fill in.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffer and entry outlive the call, and the length is the buffer's.
    let status = unsafe {
        libc::getpwuid_r(
            uid,
            &raw mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &raw mut found,
        )
    };
    if status != 0 || found.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded, so pw_name points at a NUL-terminated name in `buffer`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    Some(OsString::from_vec(name.to_bytes().to_vec()))
}

/// The environment every child shares, from the bot's own (`parent` looks a name up):
/// PATH ([`safe_path`]), LANG (the bot's, else `C.UTF-8`), USER and LOGNAME (the account
/// lines run as, [`account_name`], else the bot's USER), and each name in `env_allow` the
/// bot has, unless it looks secret ([`is_secret_name`]) or is one a line's own directories
/// set ([`RESERVED_VARIABLES`]: HOME, TMPDIR, XDG, git's configuration). Each line adds its
/// private HOME, TMPDIR and XDG directories.
pub fn child_environment(
    parent: impl Fn(&str) -> Option<OsString>,
    env_allow: &[String],
) -> Vec<(OsString, OsString)> {
    let lang = parent("LANG")
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| OsString::from(DEFAULT_LANG));
    let mut env = vec![
        (OsString::from("PATH"), safe_path(parent("PATH").as_deref())),
        (OsString::from("LANG"), lang),
    ];
    if let Some(user) = account_name().or_else(|| parent("USER").filter(|u| !u.is_empty())) {
        env.push((OsString::from("USER"), user.clone()));
        env.push((OsString::from("LOGNAME"), user));
    }
    for name in env_allow {
        if is_secret_name(name) {
            tracing::warn!(
                variable = %name,
                "command.env_allow lists a variable that looks like a secret; it is not passed to commands"
            );
            continue;
        }
        if RESERVED_VARIABLES.contains(&name.as_str()) {
            tracing::warn!(
                variable = %name,
                "command.env_allow lists a variable each line sets itself (its private HOME, TMPDIR and XDG directories, git's lock-down); the bot's value is not passed (files a line should start with go in command.sandbox.home_files)"
            );
            continue;
        }
        let valid = !name.is_empty() && !name.contains(['=', '\0']);
        if !valid
            || env
                .iter()
                .any(|(known, _)| known.as_os_str() == OsStr::new(name))
        {
            continue;
        }
        if let Some(value) = parent(name) {
            env.push((OsString::from(name), value));
        }
    }
    env
}

/// How a process, pipeline or line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl Exit {
    /// Success for `&&` and `||`: status zero.
    pub fn success(self) -> bool {
        self == Self::Code(0)
    }
}

impl From<ExitStatus> for Exit {
    fn from(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => Self::Code(code),
            (None, Some(signal)) => Self::Signal(signal),
            // A process that was waited for either exited or was killed; keep the raw
            // status rather than invent one.
            (None, None) => Self::Code(status.into_raw()),
        }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(code) => write!(f, "exit status {code}"),
            Self::Signal(signal) => write!(f, "killed by signal {signal}"),
        }
    }
}

/// What one output stream of a line produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first `output_limit_bytes` bytes.
    pub bytes: Vec<u8>,
    /// Bytes read past the limit and dropped.
    pub dropped: u64,
    /// Newlines in everything read, kept or dropped.
    newlines: u64,
    /// Whether the last byte read was not a newline (an unterminated last line).
    open_line: bool,
}

impl Captured {
    /// Adds what was read, keeping at most `limit` bytes in all.
    pub(super) fn push(&mut self, chunk: &[u8], limit: usize) {
        let room = limit.saturating_sub(self.bytes.len());
        let (kept, dropped) = chunk.split_at(room.min(chunk.len()));
        self.bytes.extend_from_slice(kept);
        self.dropped += dropped.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        if let Some(&last) = chunk.last() {
            self.open_line = last != b'\n';
        }
    }

    /// Lines in everything read, kept or dropped; an unterminated last line counts.
    pub fn lines(&self) -> u64 {
        self.newlines + u64::from(self.open_line)
    }

    /// Bytes read in all.
    pub fn total(&self) -> u64 {
        self.bytes.len() as u64 + self.dropped
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// `before`, then this stream, kept to `limit` bytes in all as if read in that order.
    pub(super) fn after(self, before: &[u8], limit: usize) -> Self {
        let mut joined = Self::default();
        joined.push(before, limit);
        let newlines_before = joined.newlines;
        joined.push(&self.bytes, limit);
        joined.dropped += self.dropped;
        joined.newlines = newlines_before + self.newlines;
        if !self.is_empty() {
            joined.open_line = self.open_line;
        }
        joined
    }
}

/// A line that ran to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineOutcome {
    /// The status of the last pipeline that ran, like sh's `$?`.
    pub exit: Exit,
    /// The sandbox it ran in.
    pub walls: Walls,
    pub stdout: Captured,
    pub stderr: Captured,
    pub elapsed: Duration,
    /// The per-line limits the line ran into, if any.
    pub limits: LimitsReached,
}

/// Why a line did not run to its end. A non-zero exit is not one of these: it is an
/// outcome.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the workspace {path} cannot be created: {source}")]
    Workspace { path: PathBuf, source: io::Error },
    #[error(
        "command not found: `{program}` is not on PATH ({path}); nothing in the line ran. Check the name, or ask for a program that is installed"
    )]
    NotFound { program: String, path: String },
    #[error("`{program}` cannot be run: {problem}; nothing in the line ran")]
    NotExecutable { program: String, problem: String },
    #[error("`{program}` could not be started: {source}")]
    Spawn { program: String, source: io::Error },
    #[error(transparent)]
    Expansion(#[from] ExpansionRefused),
    #[error("the line could not be set up: {0}")]
    Setup(#[source] io::Error),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error("timed out after {}; the whole process group was killed", format_duration(*after))]
    TimedOut {
        after: Duration,
        /// What the line wrote before it was killed.
        stdout: Captured,
        stderr: Captured,
    },
}

/// A line to run: planned, or for the shell.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    Plan(&'a Plan),
    Shell(&'a str),
}

/// Runs lines in the workspace under the command settings.
#[derive(Debug, Clone)]
pub struct CommandRunner {
    workspace: Workspace,
    /// The complete environment of every child, computed once.
    env: Vec<(OsString, OsString)>,
    /// The PATH in `env`, where programs are looked up.
    search_path: OsString,
    timeout: Duration,
    output_limit: usize,
    sandbox: Sandbox,
}

impl CommandRunner {
    /// The variables every line starts with whose values are the machine's, not a secret
    /// nor the line's own: `PATH`, `LANG`, `USER` and `LOGNAME` (the gate judges `$PATH`
    /// as its value).
    pub fn machine_variables(&self) -> Vec<(String, String)> {
        const MACHINE: &[&str] = &["PATH", "LANG", "USER", "LOGNAME"];
        self.env
            .iter()
            .filter(|(name, _)| name.to_str().is_some_and(|name| MACHINE.contains(&name)))
            .filter_map(|(name, value)| {
                Some((name.to_str()?.to_owned(), value.to_str()?.to_owned()))
            })
            .collect()
    }

    /// The names of every variable a line's environment holds (the machine's, the
    /// operator's `command.env_allow`, and those each line sets itself): a name the line
    /// expands that is none of these, nor one the shell sets, is empty when it starts.
    pub fn environment_names(&self) -> Vec<String> {
        self.env
            .iter()
            .filter_map(|(name, _)| name.to_str().map(str::to_owned))
            .chain(RESERVED_VARIABLES.iter().map(|name| (*name).to_owned()))
            .collect()
    }

    /// Bytes of each output stream a line keeps (`command.output_limit_bytes`).
    pub fn output_limit(&self) -> usize {
        self.output_limit
    }

    /// Takes the bot's environment as it is now.
    pub fn new(workspace: Workspace, settings: &CommandSettings) -> Self {
        let env = child_environment(|name| std::env::var_os(name), &settings.env_allow);
        let search_path = env
            .iter()
            .find(|(name, _)| name == "PATH")
            .map_or_else(|| OsString::from(DEFAULT_PATH), |(_, value)| value.clone());
        let sandbox = Sandbox::new(&settings.sandbox, workspace.root(), &search_path);
        Self {
            workspace,
            env,
            search_path,
            timeout: Duration::from_secs(settings.timeout_secs),
            output_limit: usize::try_from(settings.output_limit_bytes).unwrap_or(usize::MAX),
            sandbox,
        }
    }

    /// The sandbox lines run in.
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs `line` inside `walls` to its end, or until the timeout kills it.
    pub async fn run(&self, line: Line<'_>, walls: Walls) -> Result<LineOutcome, RunError> {
        let started = Instant::now();
        let root = self.workspace.root();
        tokio::fs::create_dir_all(root)
            .await
            .map_err(|source| RunError::Workspace {
                path: root.to_path_buf(),
                source,
            })?;
        let programs = match line {
            Line::Plan(plan) => self.preflight(plan)?,
            Line::Shell(_) => HashMap::new(),
        };
        let line_sandbox = if walls == Walls::Off {
            self.sandbox.line(walls)?
        } else {
            // The workspace check and the line's walls touch the disk (the check a whole
            // workspace where it is not watched, or after a change it cannot follow): off
            // the runtime's other tasks, without a hop to another thread where the runtime
            // can lend this one out (a hop cost ~0.4 ms a line, measured).
            let sandbox = self.sandbox.clone();
            blocking(move || {
                if walls == Walls::ReadOnly {
                    sandbox.check_workspace()?;
                }
                sandbox.line(walls)
            })
            .await?
        };
        let jail = Jail::new(self, line_sandbox);
        let (stdout_reader, stdout_writer) = io::pipe().map_err(RunError::Setup)?;
        let (stderr_reader, stderr_writer) = io::pipe().map_err(RunError::Setup)?;
        let mut stdout = OutputReader::start(stdout_reader, self.output_limit)?;
        let mut stderr = OutputReader::start(stderr_reader, self.output_limit)?;
        let streams = Streams {
            stdin: None,
            stdout: OwnedFd::from(stdout_writer),
            stderr: OwnedFd::from(stderr_writer),
        };
        let group = ProcessGroup::default();
        let finished = tokio::time::timeout(self.timeout, async {
            let exit = jail.steps(line, &programs, &group, streams).await?;
            // Output ends when every process holding the pipes is gone, as with `$(...)`.
            stdout.finish().await;
            stderr.finish().await;
            Ok::<_, RunError>(exit)
        })
        .await;
        // Whatever happened, nothing the line started outlives it.
        group.kill();
        group.reap().await;
        let limits = jail.finish();
        match finished {
            Ok(Ok(exit)) => Ok(LineOutcome {
                exit,
                walls,
                stdout: stdout.take(),
                stderr: stderr.take(),
                elapsed: started.elapsed(),
                limits,
            }),
            Ok(Err(error)) => Err(error),
            Err(_elapsed) => {
                stdout.finish_within(DRAIN_GRACE).await;
                stderr.finish_within(DRAIN_GRACE).await;
                Err(RunError::TimedOut {
                    after: self.timeout,
                    stdout: stdout.take(),
                    stderr: stderr.take(),
                })
            }
        }
    }

    /// Resolves every program of the plan, so a missing one fails the line before any of it
    /// runs, and refuses a glob that names a place outside the workspace.
    fn preflight<'p>(&self, plan: &'p Plan) -> Result<HashMap<&'p str, PathBuf>, RunError> {
        let mut programs = HashMap::new();
        // After a `cd`, a program named by a path is found from the new directory, when its
        // pipeline starts.
        let moves = plan.commands().any(|c| c.program() == "cd");
        for command in plan.commands() {
            let name = command.program();
            // `cd` and the shell-state builtins are the runner's own.
            let own = name == "cd" || is_state_builtin(command) || is_query_builtin(command);
            let later = moves && name.contains('/');
            if !own && !later && !programs.contains_key(name) {
                programs.insert(name, self.resolve_program(name)?);
            }
            for word in command.words.iter().filter(|w| w.pattern.is_some()) {
                self.workspace.resolve_lexically(&word.text).map_err(|e| {
                    ExpansionRefused::PatternOutside {
                        pattern: word.text.clone(),
                        reason: e.to_string(),
                    }
                })?;
            }
        }
        Ok(programs)
    }

    /// Where `name` is: on PATH, or relative to the workspace when it has a `/`.
    fn resolve_program(&self, name: &str) -> Result<PathBuf, RunError> {
        self.resolve_program_in(name, self.workspace.root())
    }

    /// Where `name` is: on PATH, or relative to `cwd` when it has a `/`.
    fn resolve_program_in(&self, name: &str, cwd: &Path) -> Result<PathBuf, RunError> {
        if name.contains('/') {
            let candidate = cwd.join(name);
            return match std::fs::metadata(&candidate) {
                Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {
                    Ok(candidate)
                }
                Ok(_) => Err(RunError::NotExecutable {
                    program: name.to_owned(),
                    problem: "it is not an executable file".to_owned(),
                }),
                Err(e) => Err(RunError::NotExecutable {
                    program: name.to_owned(),
                    problem: e.to_string(),
                }),
            };
        }
        if let Some(found) = executables_on(&self.search_path, name).next() {
            return Ok(found);
        }
        Err(RunError::NotFound {
            program: name.to_owned(),
            path: self.search_path.to_string_lossy().into_owned(),
        })
    }
}

/// One line's run: the runner, the line's sandbox and the environment of its processes.
struct Jail<'r> {
    runner: &'r CommandRunner,
    sandbox: LineSandbox,
    env: Vec<(OsString, OsString)>,
    walls: Walls,
}

impl<'r> Jail<'r> {
    /// The line's run in `sandbox`: every process gets the runner's environment, the line's
    /// private directories, and git's and Mercurial's lock-down.
    fn new(runner: &'r CommandRunner, sandbox: LineSandbox) -> Self {
        let walls = sandbox.walls();
        let mut env = runner.env.clone();
        env.extend(sandbox.environment());
        env.extend(git_ceiling(runner.workspace.root()));
        if walls == Walls::ReadOnly {
            env.extend(git_environment());
            env.extend(hg_environment());
            env.extend(python_environment());
        }
        Self {
            runner,
            sandbox,
            env,
            walls,
        }
    }

    /// Says which limits the line ran into, and ends its sandbox (what is left in its groups
    /// killed, its view's mounts and its private directory removed, the next view made
    /// ahead: [`LineSandbox::end`]) off the runtime's threads and off the caller's path: the
    /// outcome does not wait for it. Should the runtime stop before the task starts,
    /// dropping the task drops the sandbox, which removes it all the same.
    fn finish(self) -> LimitsReached {
        let sandbox = self.sandbox;
        let limits = sandbox.limits_reached();
        drop(tokio::task::spawn_blocking(move || sandbox.end()));
        limits
    }

    /// Runs the processes of the line; the line's ends of the output pipes close when this
    /// returns.
    async fn steps(
        &self,
        line: Line<'_>,
        programs: &HashMap<&str, PathBuf>,
        group: &ProcessGroup,
        streams: Streams,
    ) -> Result<Exit, RunError> {
        match line {
            Line::Plan(plan) => {
                // The line's directory, which `cd` changes, like a shell's.
                let mut cwd = self.runner.workspace.root().to_path_buf();
                self.run_lists(&plan.lists, programs, group, &streams, &mut cwd)
                    .await
            }
            Line::Shell(text) => {
                let root = self.runner.workspace.root();
                let mut command = self.command(Path::new(SHELL), "sh", ["-c", text], root)?;
                command
                    .stdin(Stdio::null())
                    .stdout(Stdio::from(streams.copy(&streams.stdout)?))
                    .stderr(Stdio::from(streams.copy(&streams.stderr)?));
                let member = group.spawn(&mut command, "sh")?;
                drop(command);
                member.wait().await
            }
        }
    }

    /// Runs `;`-separated and-or lists in `cwd` on `streams`: the line's, or a subshell's.
    async fn run_lists(
        &self,
        lists: &[AndOrList],
        programs: &HashMap<&str, PathBuf>,
        group: &ProcessGroup,
        streams: &Streams,
        cwd: &mut PathBuf,
    ) -> Result<Exit, RunError> {
        let mut last = Exit::Code(0);
        for list in lists {
            last = self
                .run_pipeline(&list.first, programs, group, streams, cwd)
                .await?;
            for (connector, pipeline) in &list.rest {
                let runs = match connector {
                    Connector::And => last.success(),
                    Connector::Or => !last.success(),
                };
                if runs {
                    last = self
                        .run_pipeline(pipeline, programs, group, streams, cwd)
                        .await?;
                }
            }
        }
        Ok(last)
    }

    /// Runs one pipeline and gives its status (inverted after `!`).
    async fn run_pipeline(
        &self,
        pipeline: &Pipeline,
        programs: &HashMap<&str, PathBuf>,
        group: &ProcessGroup,
        streams: &Streams,
        cwd: &mut PathBuf,
    ) -> Result<Exit, RunError> {
        let exit = self
            .run_stages(pipeline, programs, group, streams, cwd)
            .await?;
        Ok(match (pipeline.negated, exit.success()) {
            (false, _) => exit,
            (true, true) => Exit::Code(1),
            (true, false) => Exit::Code(0),
        })
    }

    async fn run_stages(
        &self,
        pipeline: &Pipeline,
        programs: &HashMap<&str, PathBuf>,
        group: &ProcessGroup,
        streams: &Streams,
        cwd: &mut PathBuf,
    ) -> Result<Exit, RunError> {
        if let Some(command) = pipeline.lone_cd() {
            return self.change_directory(command, cwd, streams);
        }
        // Globs expand when their pipeline starts, as in sh (a subshell's when its own
        // pipelines start), and a refused one stops the line before this pipeline runs.
        let arguments = pipeline
            .stages
            .iter()
            .map(|stage| match stage {
                Stage::Command(command) => self.arguments(command, cwd),
                Stage::Subshell(_) | Stage::If(_) => Ok(Vec::new()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut members: Vec<MemberWait<'_>> = Vec::with_capacity(pipeline.stages.len());
        // `time`: from the first process's start to the last one's end, and the CPU time
        // each process (and what it waited for) used, as bash counts them.
        let timing = pipeline.timed.map(|how| {
            (
                how,
                Instant::now(),
                Arc::new(Mutex::new(CpuTimes::default())),
            )
        });
        let mut stdin = Some(streams.input()?);
        let count = pipeline.stages.len();
        for (i, (stage, args)) in pipeline.stages.iter().zip(arguments).enumerate() {
            let (stdout, next_stdin) = if i + 1 == count {
                (streams.copy(&streams.stdout)?, None)
            } else {
                let (reader, writer) = io::pipe().map_err(RunError::Setup)?;
                (OwnedFd::from(writer), Some(OwnedFd::from(reader)))
            };
            let base = [
                stdin
                    .take()
                    .map_or_else(|| null_device(false).map(OwnedFd::from), Ok)?,
                stdout,
                streams.copy(&streams.stderr)?,
            ];
            stdin = next_stdin;
            let redirects = match stage {
                Stage::Command(command) => &command.redirects,
                Stage::Subshell(subshell) => &subshell.redirects,
                Stage::If(conditional) => &conditional.redirects,
            };
            let [input, output, error] = match self.redirected(base, redirects, cwd) {
                Ok(fds) => fds,
                Err(problem) => {
                    // Like sh: the stage does not run, and fails.
                    streams.complain(&format!("riskgate: {problem}\n"));
                    members.push(Box::pin(std::future::ready(Ok(Exit::Code(1)))));
                    continue;
                }
            };
            let stage_streams = Streams {
                stdin: Some(input),
                stdout: output,
                stderr: error,
            };
            // A command's process substitutions start beside it, each writing into a pipe
            // whose other end the command holds; they are waited for with the pipeline.
            let inputs = match stage {
                Stage::Command(command)
                    if !is_state_builtin(command) && !is_query_builtin(command) =>
                {
                    self.start_inputs(command, programs, group, streams, cwd, &mut members)?
                }
                _ => Vec::new(),
            };
            members.push(match stage {
                // A line of shell-state builtins only (the plan holds them nowhere else):
                // nothing outlives the line, so each succeeds and prints nothing, as in sh.
                Stage::Command(command) if is_state_builtin(command) => {
                    Box::pin(std::future::ready(Ok(Exit::Code(0))))
                }
                // `command -v NAME`, `type NAME`: answered here, on the stage's streams.
                Stage::Command(command) if is_query_builtin(command) => {
                    self.answer_query(command, stage_streams, cwd)
                }
                Stage::Command(command) => {
                    let member =
                        self.start(command, args, programs, group, stage_streams, cwd, &inputs)?;
                    // The command holds the read ends now; the subshell's end of the pipe
                    // sees the command's exit.
                    drop(inputs);
                    match &timing {
                        Some((_, _, used)) => Box::pin(member.wait_counting(Arc::clone(used))),
                        None => Box::pin(member.wait()),
                    }
                }
                Stage::Subshell(subshell) => {
                    self.subshell(subshell, programs, group, stage_streams, cwd.clone())
                }
                Stage::If(conditional) => {
                    self.conditional(conditional, programs, group, stage_streams, cwd.clone())
                }
            });
        }
        drop(stdin);
        // Every stage runs at once, as in sh: a subshell's commands start as it gets to them,
        // while the processes beside it read and write.
        let mut exit = Exit::Code(0);
        for finished in futures_util::future::join_all(members).await {
            exit = finished?;
        }
        if let Some((how, started, used)) = timing {
            let used = *lock(&used);
            streams.complain(&used.report(how, started.elapsed()));
        }
        Ok(exit)
    }

    /// Answers a question about names ([`Query`]) from the PATH the line's commands get:
    /// writes what bash would print to the stage's streams, off the runtime (a pipe to a
    /// stage not started yet fills after 64 KiB), and ends with bash's exit status. A
    /// reader that stops early only loses the answer, as a builtin dies of SIGPIPE.
    fn answer_query<'a>(
        &self,
        command: &SimpleCommand,
        streams: Streams,
        cwd: &Path,
    ) -> MemberWait<'a> {
        let argv = command.argv();
        let answer = match Query::parse(argv[0], &argv[1..]) {
            // A name with a `/` is looked at only where the walls would let the line look.
            Some(query) => query.answer(&self.runner.search_path, cwd, &|path: &Path| {
                self.walls != Walls::ReadOnly
                    || std::fs::canonicalize(path).is_ok_and(|real| self.readable(&real))
            }),
            // The plan holds no other form (`plan::is_query_builtin`).
            None => Answer {
                stdout: String::new(),
                stderr: format!("riskgate: `{}` is not a question it answers\n", argv[0]),
                code: 2,
            },
        };
        Box::pin(async move {
            let code = answer.code;
            let written = tokio::task::spawn_blocking(move || {
                use std::io::Write;
                for (fd, text) in [
                    (streams.stdout, answer.stdout),
                    (streams.stderr, answer.stderr),
                ] {
                    if !text.is_empty() {
                        let _ = std::fs::File::from(fd).write_all(text.as_bytes());
                    }
                }
            })
            .await;
            written.map_err(|join| RunError::Setup(io::Error::other(join)))?;
            Ok(Exit::Code(code))
        })
    }

    /// Starts the process substitutions `<( ... )` of `command`, each a subshell writing
    /// into a pipe, and returns the read ends with the descriptor each is to be in the
    /// command (`/dev/fd/N`, as its word says). The subshells read nothing (`/dev/null`)
    /// and complain to the line's stderr, as in bash.
    fn start_inputs<'a>(
        &'a self,
        command: &'a SimpleCommand,
        programs: &'a HashMap<&str, PathBuf>,
        group: &'a ProcessGroup,
        streams: &Streams,
        cwd: &Path,
        members: &mut Vec<MemberWait<'a>>,
    ) -> Result<Vec<(i32, OwnedFd)>, RunError> {
        let mut inputs = Vec::with_capacity(command.inputs.len());
        for (fd, subshell) in &command.inputs {
            let (reader, writer) = io::pipe().map_err(RunError::Setup)?;
            let streams = Streams {
                stdin: None,
                stdout: OwnedFd::from(writer),
                stderr: streams.copy(&streams.stderr)?,
            };
            members.push(self.subshell(subshell, programs, group, streams, cwd.to_path_buf()));
            inputs.push((*fd, OwnedFd::from(reader)));
        }
        Ok(inputs)
    }

    /// Starts one program of a pipeline on `streams`, in the line's group, holding `inputs`
    /// (the read ends of its process substitutions) at their descriptors.
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        command: &SimpleCommand,
        args: Vec<OsString>,
        programs: &HashMap<&str, PathBuf>,
        group: &ProcessGroup,
        streams: Streams,
        cwd: &Path,
        inputs: &[(i32, OwnedFd)],
    ) -> Result<Member, RunError> {
        let name = command.program();
        let program = match programs.get(name) {
            Some(path) => path.clone(),
            None => self.runner.resolve_program_in(name, cwd)?,
        };
        let mut process = self.command(&program, name, args, cwd)?;
        if !inputs.is_empty() {
            let placed: Vec<(i32, RawFd)> = inputs
                .iter()
                .map(|(at, fd)| (*at, fd.as_raw_fd()))
                .collect();
            // SAFETY: the closure runs in the forked child before exec and only makes
            // `fcntl` and `dup2` calls on integers (async-signal-safe); `inputs` outlives
            // the spawn below, so each descriptor is open in the child.
            unsafe {
                process.pre_exec(move || place_descriptors(&placed));
            }
        }
        process
            .envs(command.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::from(streams.input()?))
            .stdout(Stdio::from(streams.stdout))
            .stderr(Stdio::from(streams.stderr));
        // The Command holds the parent's copies of the pipe ends; a reader sees EOF only
        // once they are closed (when `process` is dropped, on return).
        group.spawn(&mut process, name)
    }

    /// A subshell stage: its lists on its own `streams`, from a copy of the line's
    /// directory. Its ends of the pipes close when it is over.
    fn subshell<'a>(
        &'a self,
        subshell: &'a Subshell,
        programs: &'a HashMap<&str, PathBuf>,
        group: &'a ProcessGroup,
        streams: Streams,
        mut cwd: PathBuf,
    ) -> MemberWait<'a> {
        Box::pin(async move {
            self.run_lists(&subshell.body.lists, programs, group, &streams, &mut cwd)
                .await
        })
    }

    /// An `if`: each condition in turn until one succeeds, then its body; 0 when no body
    /// runs. Like a subshell, in a copy of the directory (the plan holds no `cd` in it).
    fn conditional<'a>(
        &'a self,
        conditional: &'a Conditional,
        programs: &'a HashMap<&str, PathBuf>,
        group: &'a ProcessGroup,
        streams: Streams,
        mut cwd: PathBuf,
    ) -> MemberWait<'a> {
        Box::pin(async move {
            for (condition, body) in &conditional.branches {
                let chosen = self
                    .run_lists(&condition.lists, programs, group, &streams, &mut cwd)
                    .await?;
                if chosen.success() {
                    return self
                        .run_lists(&body.lists, programs, group, &streams, &mut cwd)
                        .await;
                }
            }
            match &conditional.otherwise {
                Some(body) => {
                    self.run_lists(&body.lists, programs, group, &streams, &mut cwd)
                        .await
                }
                None => Ok(Exit::Code(0)),
            }
        })
    }

    /// Applies a command's redirections, in order, to its standard descriptors.
    fn redirected(
        &self,
        mut fds: [OwnedFd; 3],
        redirects: &[Redirect],
        cwd: &Path,
    ) -> Result<[OwnedFd; 3], String> {
        let slot = |fd: i32| usize::try_from(fd).ok().filter(|fd| *fd < 3);
        for redirect in redirects {
            match redirect {
                Redirect::Input(path) => fds[0] = self.open_input(path, cwd)?,
                Redirect::Discard(fd) => {
                    let fd = slot(*fd).ok_or("a descriptor other than 1 or 2")?;
                    fds[fd] = null_device(true).map_err(|e| e.to_string())?.into();
                }
                Redirect::Text(text) => fds[0] = text_input(text)?,
                Redirect::Duplicate { fd, to } => {
                    let (fd, to) = slot(*fd)
                        .zip(slot(*to))
                        .ok_or("a descriptor other than 1 or 2")?;
                    fds[fd] = fds[to].try_clone().map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(fds)
    }

    /// Whether a line without a click may read the real path `real`: inside the workspace
    /// or among the machine's public files.
    fn readable(&self, real: &Path) -> bool {
        real.starts_with(self.runner.workspace.root())
            || real
                .to_str()
                .is_some_and(super::paths::is_public_system_path)
    }

    /// Opens `path` for `< path`: /dev/null, or a regular file, which a line without a click
    /// may only read inside the workspace or among the machine's public files. Opened
    /// without blocking, so a FIFO cannot stall the bot.
    fn open_input(&self, path: &str, cwd: &Path) -> Result<OwnedFd, String> {
        if path == NULL_DEVICE {
            return null_device(false)
                .map(OwnedFd::from)
                .map_err(|e| e.to_string());
        }
        let full = cwd.join(path);
        let real = std::fs::canonicalize(&full).map_err(|e| format!("{path}: {e}"))?;
        let readable = |real: &Path| self.readable(real);
        if self.walls == Walls::ReadOnly && !readable(&real) {
            return Err(format!("{path}: outside the workspace"));
        }
        // Only regular files are opened at all, and the devices of zeros and random bytes:
        // opening another device may do something.
        let device = super::sandbox::READ_DEVICES
            .iter()
            .any(|name| real == Path::new(name));
        if !device && !std::fs::metadata(&real).is_ok_and(|meta| meta.is_file()) {
            return Err(format!("{path}: not a regular file"));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
            .open(&full)
            .map_err(|e| format!("{path}: {e}"))?;
        let meta = file.metadata().map_err(|e| format!("{path}: {e}"))?;
        if !meta.is_file() && !device {
            return Err(format!("{path}: not a regular file"));
        }
        let fd = OwnedFd::from(file);
        // The bot opens the file, outside Landlock: what was opened, not what the path said
        // a moment before, must be inside the workspace (a symlink swapped in between is
        // caught here; hard links stop lines without a click before they start).
        if self.walls == Walls::ReadOnly {
            let opened = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                .map_err(|e| format!("{path}: {e}"))?;
            if !readable(&opened) {
                return Err(format!("{path}: outside the workspace"));
            }
        }
        // SAFETY: fcntl on a descriptor we own, with integer arguments only.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        // SAFETY: as above; clears O_NONBLOCK so the reader sees ordinary blocking reads.
        if flags < 0
            || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0
        {
            return Err(format!("{path}: {}", io::Error::last_os_error()));
        }
        Ok(fd)
    }

    /// `cd [dir]`: the line's directory for the pipelines after it. A line without a click
    /// stays inside the workspace. Like sh, a failure is reported and the status is 1.
    fn change_directory(
        &self,
        command: &SimpleCommand,
        cwd: &mut PathBuf,
        streams: &Streams,
    ) -> Result<Exit, RunError> {
        let root = self.runner.workspace.root();
        let target = match cd_directory(command) {
            Some(Some(directory)) => cwd.join(directory),
            Some(None) => root.to_path_buf(),
            None => {
                streams.complain("cd: riskgate takes `cd` with one directory only\n");
                return Ok(Exit::Code(2));
            }
        };
        let shown = target.display();
        // Without a click the line stays in the workspace, and learns nothing of what lies
        // outside it: whether such a directory exists is not looked up.
        let outside = self.walls == Walls::ReadOnly
            && target
                .to_str()
                .is_none_or(|path| self.runner.workspace.resolve(path).is_err());
        let checked = (!outside).then(|| std::fs::canonicalize(&target));
        let problem = match checked {
            None => Some(format!("cd: {shown}: outside the workspace")),
            Some(Err(e)) => Some(format!("cd: {shown}: {e}")),
            Some(Ok(real)) if !real.is_dir() => Some(format!("cd: {shown}: not a directory")),
            Some(Ok(real)) if self.walls == Walls::ReadOnly && !real.starts_with(root) => {
                Some(format!("cd: {shown}: outside the workspace"))
            }
            Some(Ok(real)) => {
                *cwd = real;
                None
            }
        };
        let Some(problem) = problem else {
            return Ok(Exit::Code(0));
        };
        // Said where the command's stderr goes (`cd x 2>/dev/null || ...`).
        let standard = [
            streams.input()?,
            streams.copy(&streams.stdout)?,
            streams.copy(&streams.stderr)?,
        ];
        let redirected = self.redirected(standard, &command.redirects, cwd);
        if let Ok([_, _, error]) = redirected {
            use std::io::Write;
            let _ = std::fs::File::from(error).write_all(format!("{problem}\n").as_bytes());
        }
        Ok(Exit::Code(1))
    }

    /// The arguments after the program name, globs expanded from the line's directory.
    fn arguments(
        &self,
        command: &SimpleCommand,
        cwd: &Path,
    ) -> Result<Vec<OsString>, ExpansionRefused> {
        let mut arguments = Vec::new();
        for word in command.words.iter().skip(1) {
            arguments.extend(expand_in(word, &self.runner.workspace, cwd)?);
        }
        Ok(arguments)
    }

    /// A process with the walls every child gets, but no stdio and no group yet.
    fn command<I, S>(
        &self,
        program: &Path,
        arg0: &str,
        args: I,
        cwd: &Path,
    ) -> Result<Command, RunError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<OsString> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
        let mut command = Command::new(program);
        command
            .arg0(arg0)
            .args(&args)
            .current_dir(cwd)
            .env_clear()
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .kill_on_drop(true);
        self.sandbox.confine(&mut command, program, &args, cwd)?;
        Ok(command)
    }
}

/// Runs blocking `work`: in place on a multi-threaded runtime (its other tasks move to
/// another worker), else on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, SandboxError> + Send + 'static,
) -> Result<T, RunError> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        return tokio::task::block_in_place(work).map_err(RunError::from);
    }
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| RunError::Setup(io::Error::other(join)))?
        .map_err(RunError::from)
}

/// Where the commands of a line, or of one of its stages, read and write: the line's output
/// pipes, or a stage's ends of the pipes beside it.
struct Streams {
    /// `None`: `/dev/null`.
    stdin: Option<OwnedFd>,
    stdout: OwnedFd,
    stderr: OwnedFd,
}

impl Streams {
    /// A descriptor of standard input for one command: a copy, as every command of a
    /// subshell shares its input.
    fn input(&self) -> Result<OwnedFd, RunError> {
        match &self.stdin {
            Some(fd) => self.copy(fd),
            None => null_device(false).map(OwnedFd::from),
        }
    }

    fn copy(&self, fd: &OwnedFd) -> Result<OwnedFd, RunError> {
        fd.try_clone().map_err(RunError::Setup)
    }

    /// Writes what the runner itself has to say (a failed `cd` or redirection) to the
    /// stderr, as a shell would. Best effort: the reader drains the pipe.
    fn complain(&self, message: &str) {
        use std::io::Write;
        if let Ok(fd) = self.stderr.try_clone() {
            let _ = std::fs::File::from(fd).write_all(message.as_bytes());
        }
    }
}

/// The end of one stage of a pipeline: a process's, or a subshell's.
type MemberWait<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Exit, RunError>> + Send + 'a>>;

/// In a child before exec: each `(at, fd)` becomes descriptor `at`, open across exec.
/// Every `fd` is first copied above all targets, so no `dup2` closes one still to be placed.
fn place_descriptors(placed: &[(i32, RawFd)]) -> io::Result<()> {
    const ABOVE: libc::c_int = 100;
    let mut copies = [0 as RawFd; super::plan::MAX_SUBSTITUTIONS];
    for (copy, (_, fd)) in copies.iter_mut().zip(placed) {
        // SAFETY: fcntl on an open descriptor with integer arguments.
        *copy = unsafe { libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, ABOVE) };
        if *copy < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    for (copy, (at, _)) in copies.iter().zip(placed) {
        // SAFETY: dup2 on descriptors we hold; the copy is above every target, so it is
        // never the target itself, and the new descriptor is open across exec.
        if unsafe { libc::dup2(*copy, *at) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Standard input holding `text` (a here-string or here-document): an anonymous file in
/// memory, written whole and rewound, so no write can block however the command reads.
fn text_input(text: &str) -> Result<OwnedFd, String> {
    use std::io::{Seek, Write};
    // SAFETY: memfd_create with a NUL-terminated name and flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"riskgate-here-text".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("here-text: {}", io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(text.as_bytes())
        .and_then(|()| file.rewind())
        .map_err(|e| format!("here-text: {e}"))?;
    Ok(file.into())
}

/// `/dev/null`, for reading or writing.
fn null_device(write: bool) -> Result<std::fs::File, RunError> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open(NULL_DEVICE)
        .map_err(RunError::Setup)
}

/// The process group of one line. Its id is the leader's pid, which stays ours for as long
/// as the leader is not reaped; so the leader is reaped only by [`ProcessGroup::reap`], after
/// the last [`ProcessGroup::kill`].
#[derive(Default)]
struct ProcessGroup {
    /// Shared by the stages of a pipeline, which start processes at once.
    leader: Mutex<Option<Leader>>,
}

/// The first process of a line, whose pid names the group.
struct Leader {
    child: Child,
    pgid: libc::pid_t,
}

/// A process of the line, to wait for.
enum Member {
    /// The group leader: waited for without being reaped.
    Leader(libc::pid_t),
    Other(Child),
}

impl ProcessGroup {
    /// Starts `command` in the group; the first one starts the group.
    fn spawn(&self, command: &mut Command, program: &str) -> Result<Member, RunError> {
        let spawn_error = |source| RunError::Spawn {
            program: program.to_owned(),
            source,
        };
        let mut leader_slot = lock(&self.leader);
        if let Some(leader) = &*leader_slot {
            command.process_group(leader.pgid);
            return command.spawn().map(Member::Other).map_err(spawn_error);
        }
        command.process_group(0);
        let child = command.spawn().map_err(spawn_error)?;
        let pgid = child
            .id()
            .and_then(|id| libc::pid_t::try_from(id).ok())
            .ok_or_else(|| spawn_error(io::Error::other("the new process has no id")))?;
        if let Some(reaper) = Reaper::get() {
            reaper.watch(pgid);
        }
        *leader_slot = Some(Leader { child, pgid });
        Ok(Member::Leader(pgid))
    }

    /// SIGKILL to every process still in the group.
    fn kill(&self) {
        let leader = lock(&self.leader);
        let Some(leader) = &*leader else {
            return;
        };
        // SAFETY: killpg takes plain integers and touches no memory of ours. The group id is
        // the pid of our leader, which is not reaped yet (see `reap`), so the kernel cannot
        // have handed the number to another process or group: the signal reaches only
        // processes this line started and what they forked without leaving the group.
        let rc = unsafe { libc::killpg(leader.pgid, libc::SIGKILL) };
        if rc != 0 {
            tracing::debug!(pgid = leader.pgid, error = %io::Error::last_os_error(), "killpg");
        }
    }

    /// Reaps the leader; after this the group id is no longer ours to signal.
    async fn reap(&self) {
        let taken = lock(&self.leader).take();
        if let Some(mut leader) = taken {
            // The group was killed and its number is still ours: the reaper may forget it.
            if let Some(reaper) = Reaper::get() {
                reaper.release(leader.pgid);
            }
            // A process stuck in the kernel may take a while to die; dropping it then leaves
            // it to tokio's orphan reaper.
            let _ = tokio::time::timeout(REAP_GRACE, leader.child.wait()).await;
        }
    }
}

impl Drop for ProcessGroup {
    /// A line abandoned half-way (its call cancelled) still takes its processes with it.
    fn drop(&mut self) {
        self.kill();
    }
}

/// The CPU time the processes of a timed pipeline used, in user and in system mode.
#[derive(Debug, Clone, Copy, Default)]
struct CpuTimes {
    user: Duration,
    system: Duration,
}

impl CpuTimes {
    fn add(&mut self, usage: &libc::rusage) {
        let time = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        self.user += time(usage.ru_utime);
        self.system += time(usage.ru_stime);
    }

    /// What bash's `time` writes: its own format (`real\t0m1.500s`, after an empty line) or,
    /// with `-p`, POSIX's (`real 1.50`).
    fn report(self, how: Timing, real: Duration) -> String {
        match how {
            Timing::Bash => {
                let bash = |d: Duration| {
                    let millis = d.as_millis();
                    format!(
                        "{}m{}.{:03}s",
                        millis / 60_000,
                        millis / 1000 % 60,
                        millis % 1000
                    )
                };
                format!(
                    "\nreal\t{}\nuser\t{}\nsys\t{}\n",
                    bash(real),
                    bash(self.user),
                    bash(self.system)
                )
            }
            Timing::Posix => {
                let posix = |d: Duration| {
                    let centis = d.as_millis() / 10;
                    format!("{}.{:02}", centis / 100, centis % 100)
                };
                format!(
                    "real {}\nuser {}\nsys {}\n",
                    posix(real),
                    posix(self.user),
                    posix(self.system)
                )
            }
        }
    }
}

impl Member {
    /// [`Member::wait`], adding the CPU time the process used (with the children it waited
    /// for) to `used`: read from the zombie before it is reaped.
    async fn wait_counting(self, used: Arc<Mutex<CpuTimes>>) -> Result<Exit, RunError> {
        let pid = match &self {
            Self::Leader(pid) => Some(*pid),
            Self::Other(child) => child.id().and_then(|id| libc::pid_t::try_from(id).ok()),
        };
        if let Some(pid) = pid {
            let usage = tokio::task::spawn_blocking(move || exited_usage(pid))
                .await
                .unwrap_or_else(|join| Err(io::Error::other(join)));
            if let Ok(usage) = usage {
                lock(&used).add(&usage);
            }
        }
        self.wait().await
    }

    async fn wait(self) -> Result<Exit, RunError> {
        let status = match self {
            Self::Other(mut child) => child.wait().await.map(Exit::from),
            Self::Leader(pid) => tokio::task::spawn_blocking(move || wait_without_reaping(pid))
                .await
                .unwrap_or_else(|join| Err(io::Error::other(join))),
        };
        status.map_err(RunError::Setup)
    }
}

/// Blocks until the child `pid` has exited and returns the resources it and the children
/// it reaped used, leaving it a zombie for [`Member::wait`] to reap.
fn exited_usage(pid: libc::pid_t) -> io::Result<libc::rusage> {
    let id = libc::id_t::try_from(pid).map_err(io::Error::other)?;
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        let mut usage = MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: Linux's waitid takes a fifth argument, a rusage it fills for the child it
        // reports (with WNOWAIT too, from the zombie); both buffers are valid and writable
        // for the whole call, and the child stays waitable for tokio or `wait_without_reaping`.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_waitid,
                libc::P_PID,
                id,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
                usage.as_mut_ptr(),
            )
        };
        if rc == 0 {
            // SAFETY: the call succeeded and filled `usage` (zeroed before, so every field
            // is initialised either way).
            return Ok(unsafe { usage.assume_init() });
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Blocks until the child `pid` has exited and returns how, leaving it a zombie (so its pid,
/// and the group named after it, stay reserved).
fn wait_without_reaping(pid: libc::pid_t) -> io::Result<Exit> {
    let id = libc::id_t::try_from(pid).map_err(io::Error::other)?;
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is a valid, writable siginfo_t for the whole call; waitid writes
        // only into it. WNOWAIT leaves the child waitable, so tokio's `Child::wait` still
        // reaps it later.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                id,
                info.as_mut_ptr(),
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            // SAFETY: waitid returned 0 without WNOHANG, so it filled `info` for a child that
            // exited (it started zeroed, so every field is initialised either way).
            let info = unsafe { info.assume_init() };
            // SAFETY: for a SIGCHLD-style siginfo_t from waitid, `si_status` is the field
            // the kernel set: the exit code or the signal number.
            let status = unsafe { info.si_status() };
            return Ok(match info.si_code {
                libc::CLD_EXITED => Exit::Code(status),
                _ => Exit::Signal(status),
            });
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Reads one output pipe to its end in a task, keeping what fits.
struct OutputReader {
    captured: Arc<Mutex<Captured>>,
    task: Option<JoinHandle<()>>,
}

impl OutputReader {
    fn start(reader: PipeReader, limit: usize) -> Result<Self, RunError> {
        let receiver =
            pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(RunError::Setup)?;
        let captured = Arc::new(Mutex::new(Captured::default()));
        let task = tokio::spawn(drain(receiver, Arc::clone(&captured), limit));
        Ok(Self {
            captured,
            task: Some(task),
        })
    }

    /// Waits until the pipe's last writer closed it.
    async fn finish(&mut self) {
        if let Some(task) = &mut self.task {
            let _ = task.await;
            self.task = None;
        }
    }

    /// Waits at most `grace`, then stops reading.
    async fn finish_within(&mut self, grace: Duration) {
        if let Some(task) = &mut self.task {
            let _ = tokio::time::timeout(grace, task).await;
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    fn take(&mut self) -> Captured {
        std::mem::take(&mut *lock(&self.captured))
    }
}

impl Drop for OutputReader {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn drain(mut receiver: pipe::Receiver, captured: Arc<Mutex<Captured>>, limit: usize) {
    let mut buffer = vec![0_u8; READ_CHUNK];
    loop {
        match receiver.read(&mut buffer).await {
            Ok(0) => return,
            Ok(n) => lock(&captured).push(&buffer[..n], limit),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!(error = %e, "reading command output failed");
                return;
            }
        }
    }
}

/// A poisoned lock still holds good data: a panic elsewhere cannot corrupt a Vec push or
/// an `Option` set.
fn lock<T>(guarded: &Mutex<T>) -> MutexGuard<'_, T> {
    guarded.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for name in [
            "DISCORD_TOKEN",
            "OPENAI_API_KEY",
            "RISKGATE__LLM__API_KEY",
            "MY_SECRET_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "MYSQL_PWD",
            "DATABASE_URL",
            "GITHUB_TOKEN",
            "SSH_AUTH_SOCK",
            "gpg_private_dir",
            "discord_whatever",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "TERM",
            "TZ",
            "CARGO_HOME",
            "PWD",
            "GIT_AUTHOR_NAME",
            "LC_ALL",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn path_keeps_only_absolute_entries() {
        assert_eq!(
            safe_path(Some(OsStr::new("/opt/bin::.:bin:/usr/bin:"))),
            OsString::from("/opt/bin:/usr/bin")
        );
        assert_eq!(
            safe_path(Some(OsStr::new(".:"))),
            OsString::from(DEFAULT_PATH)
        );
        assert_eq!(safe_path(None), OsString::from(DEFAULT_PATH));
    }

    #[test]
    fn the_environment_is_scrubbed_and_allow_listed() {
        let parent = |name: &str| {
            let value = match name {
                "PATH" => "/usr/bin:.",
                "HOME" => "/home/bot",
                "TERM" => "xterm",
                "DISCORD_TOKEN" => "secret",
                "GIT_AUTHOR_NAME" => "bot",
                _ => return None,
            };
            Some(OsString::from(value))
        };
        let allow = [
            "TERM",
            "DISCORD_TOKEN",
            "GIT_AUTHOR_NAME",
            "UNSET_VAR",
            "HOME",
            "A=B",
        ]
        .map(String::from);
        let env = child_environment(parent, &allow);
        let env: Vec<(String, String)> = env
            .into_iter()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        let user = account_name()
            .expect("this test runs as an account with a name")
            .into_string()
            .expect("utf-8");
        let expected: Vec<(String, String)> = [
            ("PATH", "/usr/bin"),
            ("LANG", DEFAULT_LANG),
            ("USER", user.as_str()),
            ("LOGNAME", user.as_str()),
            ("TERM", "xterm"),
            ("GIT_AUTHOR_NAME", "bot"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(env, expected);
    }

    #[test]
    fn capture_keeps_the_limit_and_counts_the_rest() {
        let mut captured = Captured::default();
        captured.push(b"one\ntwo\n", 6);
        captured.push(b"three", 6);
        assert_eq!(captured.bytes, b"one\ntw");
        assert_eq!(captured.dropped, 7);
        assert_eq!(captured.total(), 13);
        assert_eq!(captured.lines(), 3);
        captured.push(b"\n", 6);
        assert_eq!(captured.lines(), 3);
    }

    #[test]
    fn exits_read_like_sh() {
        assert_eq!(Exit::Code(2).to_string(), "exit status 2");
        assert_eq!(Exit::Signal(9).to_string(), "killed by signal 9");
        assert!(Exit::Code(0).success());
        assert!(!Exit::Signal(0).success());
    }
}
