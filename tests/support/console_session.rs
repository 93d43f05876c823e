//! `riskgate console` as a test drives it: the riskgate binary with the fake model server's
//! address and a temporary workspace, read line by line so a test can wait for a prompt
//! before it answers (a prompt takes only a line written after it was shown).

use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The console as user `dana`, its model at `base_url`, working in `workspace`.
pub fn command(base_url: &str, workspace: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_riskgate"));
    command
        .args(["console", "--user", "dana"])
        .args(extra)
        .current_dir(workspace)
        .env_remove("RISKGATE_CONFIG")
        .env("RISKGATE__LLM__BASE_URL", base_url)
        .env("RISKGATE__LLM__RETRY_BASE_DELAY_MS", "10")
        .env("RISKGATE__TOOLS__WORKSPACE", workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A console driven line by line: stdout is read as it comes, so a test can wait for a
/// prompt before it answers.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Session {
    pub fn start(base_url: &str, workspace: &std::path::Path, extra: &[&str]) -> Self {
        let mut child = command(base_url, workspace, extra).spawn().expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn write(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(text.as_bytes()).expect("write");
        stdin.flush().expect("flush");
    }

    /// Sends the console SIGINT, as Ctrl-C at a terminal in cooked mode does.
    pub fn interrupt(&self) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "kill failed");
    }

    /// Reads stdout until a line contains `marker`.
    pub fn wait_for(&mut self, marker: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(marker);
                    self.seen.push(line);
                    if found {
                        return;
                    }
                }
                Err(e) => panic!(
                    "{marker:?} never showed ({e}); stdout so far: {:#?}",
                    self.seen
                ),
            }
        }
    }

    /// Ends the input, waits for the console, and returns its status, every stdout line and
    /// stderr.
    pub fn finish(mut self) -> (std::process::ExitStatus, Vec<String>, String) {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().expect("wait");
        self.seen.extend(self.lines.iter());
        (
            output.status,
            self.seen,
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

impl Session {
    /// Whether the console ends by itself within `within`.
    pub fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if self.child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits for the console to end by itself (its input left open); returns as
    /// [`Session::finish`] does. Panics if it has not ended within 10 s.
    pub fn finish_without_closing(mut self) -> (std::process::ExitStatus, Vec<String>, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().expect("try_wait").is_none() {
            assert!(
                Instant::now() < deadline,
                "the console did not end; stdout so far: {:#?}",
                self.seen
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.finish()
    }
}

/// Every line as the JSON event it must be.
pub fn parse(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?}: {e}")))
        .collect()
}
