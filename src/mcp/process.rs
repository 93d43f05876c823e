//! A stdio server's process: started in a process group of its own with only the
//! environment the operator gave it, and never outliving the bot.
//!
//! A server is often a launcher (`npx` starts `node`, a shell script starts its program), so
//! the whole group is killed, never the first process alone: on shutdown (SIGTERM, then
//! SIGKILL after a grace period), when the hub or this handle is dropped (SIGKILL at once),
//! when the server dies (whatever it left behind), and, through the command tool's reaper,
//! when the bot itself is killed. The group's leader is reaped only after the group was
//! killed, so its number cannot be reused by an unrelated group in between.
//!
//! A server that leaves its group on purpose (`setsid`, a daemon's double fork) is beyond
//! this reach; MCP servers are not daemons.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::redact::Redactor;
use super::settings::McpServerSettings;
use crate::tools::command::reaper::Reaper;

/// Lines of a server's stderr kept to explain why it stopped.
const TAIL_LINES: usize = 8;
/// Characters of one stderr line kept (logged and in the tail).
const LINE_CHARS: usize = 400;
/// Bytes of one stderr line read before the rest of it is skipped.
const LINE_BYTES: usize = 16 * 1024;

/// A running stdio server's process group.
pub struct ServerProcess {
    server: String,
    pid: libc::pid_t,
    /// Held unreaped until the group was killed (see the module's doc).
    child: Mutex<Option<Child>>,
    killed: AtomicBool,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// The parts of a started server.
pub struct Started {
    pub process: Arc<ServerProcess>,
    pub stdout: ChildStdout,
    pub stdin: ChildStdin,
}

/// The environment a server starts with: exactly `env`, plus the bot's PATH when `env`
/// sets none (a program started through `npx`, `uvx` or a `#!/usr/bin/env` line needs one;
/// PATH holds no secret).
pub fn environment(settings: &McpServerSettings) -> Vec<(String, OsString)> {
    use secrecy::ExposeSecret;
    let mut vars: Vec<(String, OsString)> = settings
        .env
        .iter()
        .map(|(name, value)| (name.clone(), OsString::from(value.expose_secret())))
        .collect();
    if !settings.env.contains_key("PATH")
        && let Some(path) = std::env::var_os("PATH")
    {
        vars.push(("PATH".to_owned(), path));
    }
    vars
}

/// Starts the server's program.
pub fn start(settings: &McpServerSettings, redactor: &Redactor) -> Result<Started, String> {
    let Some((program, args)) = settings.command.split_first() else {
        return Err("no command is configured".to_owned());
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(environment(settings))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    let mut child = command.spawn().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => format!(
            "cannot start {program:?}: no such program (on PATH, or at that path); install it or fix `command`"
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start {program:?}: permission denied (is it executable?)")
        }
        _ => format!("cannot start {program:?}: {error}"),
    })?;
    let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return Err(format!("{program:?} exited as soon as it started"));
    };
    if let Some(reaper) = Reaper::get() {
        reaper.watch(pid);
    }
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        // Both were asked for as pipes; without them there is no server to talk to.
        let process = ServerProcess::new(&settings.name, pid, child);
        process.kill();
        return Err("the server's stdin or stdout could not be opened".to_owned());
    };
    let stderr = child.stderr.take();
    let process = Arc::new(ServerProcess::new(&settings.name, pid, child));
    if let Some(stderr) = stderr {
        tokio::spawn(drain_stderr(
            settings.name.clone(),
            stderr,
            redactor.clone(),
            process.tail.clone(),
        ));
    }
    Ok(Started {
        process,
        stdout,
        stdin,
    })
}

impl ServerProcess {
    fn new(server: &str, pid: libc::pid_t, child: Child) -> Self {
        Self {
            server: server.to_owned(),
            pid,
            child: Mutex::new(Some(child)),
            killed: AtomicBool::new(false),
            tail: Arc::new(Mutex::new(VecDeque::new())),
        }
    }

    /// The process id of the server's first process, which is also its group's id.
    pub fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Sends SIGKILL to the whole group, once. Safe from `Drop` and without a runtime.
    pub fn kill(&self) {
        if self.killed.swap(true, Ordering::SeqCst) {
            return;
        }
        // SAFETY: killpg takes two integers; the group's leader is not reaped yet, so the
        // number still names this group.
        unsafe {
            libc::killpg(self.pid, libc::SIGKILL);
        }
        if let Some(reaper) = Reaper::get() {
            reaper.release(self.pid);
        }
    }

    /// The graceful end: SIGTERM to the group, then SIGKILL after `grace` if the server
    /// has not exited.
    pub async fn terminate(&self, grace: Duration) {
        if !self.killed.load(Ordering::SeqCst) {
            // SAFETY: as in `kill`.
            unsafe {
                libc::killpg(self.pid, libc::SIGTERM);
            }
            let _ = tokio::time::timeout(grace, self.exited()).await;
        }
        self.kill();
    }

    /// Resolves when the group's leader has exited, without reaping it (a pidfd). Where
    /// pidfds are missing (Linux before 5.3) it never resolves, and a dead server is
    /// noticed by its closed stdout instead.
    pub async fn exited(&self) {
        // SAFETY: pidfd_open takes a pid and flags, and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) };
        let Ok(fd) = i32::try_from(fd) else {
            return std::future::pending().await;
        };
        if fd < 0 {
            return std::future::pending().await;
        }
        // SAFETY: the descriptor was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the AsyncFd owns the descriptor and it stays open while the AsyncFd lives.
        let registered = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
        };
        match registered {
            Ok(fd) => {
                let _ = fd.readable().await;
            }
            Err(_) => std::future::pending().await,
        }
    }

    /// Kills what is left of the group and says how the server ended: its exit status
    /// and the last lines it wrote to stderr.
    pub async fn ended(&self) -> String {
        self.kill();
        let child = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let status = match child {
            Some(mut child) => tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .ok()
                .and_then(Result::ok),
            None => None,
        };
        // The stderr reader may still be taking the last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut said = match status {
            Some(status) => describe(status),
            None => "ended".to_owned(),
        };
        let tail = self.stderr_tail();
        if !tail.is_empty() {
            said.push_str("; its last words on stderr: ");
            said.push_str(&tail);
        }
        said
    }

    /// The last lines the server wrote to stderr (secrets replaced), joined by ` | `.
    pub fn stderr_tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().cloned().collect::<Vec<_>>().join(" | ")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("server", &self.server)
            .field("pid", &self.pid)
            .finish()
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_owned(),
    }
}

/// Logs each line the server writes to stderr (at debug, secrets replaced) and keeps the
/// last few to explain a failure.
async fn drain_stderr(
    server: String,
    stderr: tokio::process::ChildStderr,
    redactor: Redactor,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_bounded_line(&mut reader, &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text: String = text
            .trim_end()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(LINE_CHARS)
            .collect();
        if text.trim().is_empty() {
            continue;
        }
        let text = redactor.apply(&text);
        tracing::debug!(target: "riskgate::mcp", server = %server, "stderr: {text}");
        let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(text);
    }
}

/// One line of at most [`LINE_BYTES`] (the rest of a longer line is read and dropped);
/// the bytes read, 0 at end of file.
async fn read_bounded_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(total);
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(end) => (&available[..=end], true),
            None => (available, false),
        };
        let room = LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = chunk.len();
        reader.consume(used);
        total += used;
        if done {
            return Ok(total);
        }
    }
}
