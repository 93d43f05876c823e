//! A program run in a pseudo-terminal, as a person at a terminal runs it: its stdin and
//! stdout are the terminal (the pty's slave side, its controlling terminal, in a session of
//! its own), the test types on the master side and reads what the terminal shows. Made with
//! libc's `openpty` (libc is already a dependency): a crate for it would add nothing a test
//! needs.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A terminal's cursor position request; line editors send it at each new line.
const CURSOR_REQUEST: &[u8] = b"\x1b[6n";
/// The answer of a terminal whose cursor is at the start of the first line.
const CURSOR_ANSWER: &[u8] = b"\x1b[1;1R";

/// What the terminal showed so far (as written, and with escape sequences removed), and
/// how far tests read it.
#[derive(Default)]
struct Screen {
    raw: Vec<u8>,
    text: String,
    read_to: usize,
    closed: bool,
}

pub struct Terminal {
    child: Child,
    keyboard: std::fs::File,
    screen: Arc<(Mutex<Screen>, Condvar)>,
}

impl Terminal {
    /// Starts `command` with the terminal as its stdin and stdout (stderr as `command` says).
    pub fn start(mut command: Command) -> Self {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: 40,
            ws_col: 200,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two descriptors into the integers given; the name is not
        // asked for, the settings are the default ones and the size outlives the call.
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        for fd in [&master, &slave] {
            set_cloexec(fd);
        }
        command
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")));
        // SAFETY: only async-signal-safe calls between fork and exec: a new session, whose
        // controlling terminal stdin (the pty) becomes, so Ctrl-C reaches this child alone.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("spawn in the terminal");
        drop(slave);
        let keyboard = std::fs::File::from(master);
        let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
        let reader = keyboard.try_clone().expect("dup");
        let answerer = keyboard.try_clone().expect("dup");
        std::thread::spawn({
            let screen = screen.clone();
            move || show(reader, answerer, &screen)
        });
        Self {
            child,
            keyboard,
            screen,
        }
    }

    /// Types `bytes` (`\r` is Enter, `\x03` Ctrl-C, `\x04` Ctrl-D).
    pub fn type_keys(&mut self, bytes: &[u8]) {
        self.keyboard.write_all(bytes).expect("type");
        self.keyboard.flush().expect("flush");
    }

    /// Waits until the terminal shows `text` after what was read before; returns how long
    /// that took. Panics, with the screen, after `within`.
    pub fn wait_for(&self, text: &str, within: Duration) -> Duration {
        let started = Instant::now();
        let (lock, shown) = &*self.screen;
        let mut screen = lock.lock().expect("screen");
        loop {
            if let Some(at) = screen.text[screen.read_to..].find(text) {
                screen.read_to += at + text.len();
                return started.elapsed();
            }
            let left = within.saturating_sub(started.elapsed());
            assert!(
                !left.is_zero() && !screen.closed,
                "{text:?} not shown within {within:?}; the terminal shows:\n{}",
                screen.text
            );
            screen = shown.wait_timeout(screen, left).expect("screen").0;
        }
    }

    /// Everything the terminal showed, escape sequences removed.
    pub fn screen(&self) -> String {
        self.screen.0.lock().expect("screen").text.clone()
    }

    /// Waits up to `within` for the program to end; `None` if it has not.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The program's stderr, once it ended (if it was piped).
    pub fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn set_cloexec(fd: &OwnedFd) {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor owned here.
    let set = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    assert_eq!(set, 0, "fcntl: {}", std::io::Error::last_os_error());
}

/// Reads what the program writes to the terminal into `screen` until it closes, answering
/// cursor position requests as a terminal does.
fn show(mut terminal: std::fs::File, mut answer: std::fs::File, screen: &(Mutex<Screen>, Condvar)) {
    let mut buf = [0u8; 4096];
    loop {
        let read = match terminal.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => &buf[..n],
        };
        if read
            .windows(CURSOR_REQUEST.len())
            .any(|w| w == CURSOR_REQUEST)
        {
            let _ = answer.write_all(CURSOR_ANSWER);
        }
        let (lock, shown) = screen;
        let mut screen = lock.lock().expect("screen");
        screen.raw.extend_from_slice(read);
        // From the start: a sequence may have been cut between two reads.
        screen.text = plain(&String::from_utf8_lossy(&screen.raw));
        shown.notify_all();
    }
    let (lock, shown) = screen;
    lock.lock().expect("screen").closed = true;
    shown.notify_all();
}

/// `text` without terminal escape sequences (CSI `ESC [ ... final`, and other `ESC x`) and
/// carriage returns.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
