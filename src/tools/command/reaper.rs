//! The reaper: a small process that kills the process groups of running lines when the bot
//! dies, however it dies (SIGKILL included), so nothing a line started outlives the bot.
//!
//! `PR_SET_PDEATHSIG` kills a line's direct children with the bot, but a grandchild
//! (`timeout 100 sleep 100` forks `sleep`) would be left to init. Each line runs in a
//! process group of its own that its processes cannot leave (the sandbox refuses `setsid`
//! and `setpgid`), so the reaper only has to know the groups: the bot writes
//! "watch `pgid`" when a line's leader starts and "release `pgid`" just before it reaps the
//! leader (after the line's last `killpg`, while the number is still reserved by the
//! unreaped leader). When the pipe from the bot reaches end of file — the kernel closes it
//! as the bot exits — the reaper sends SIGKILL to every group it still watches and exits.
//!
//! The reaper is forked from the bot, once, on the first line. A forked child of a threaded
//! process may only make async-signal-safe calls, so it allocates nothing: it reads fixed
//! eight-byte messages into an array on its stack, and uses plain system calls.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Groups the reaper can watch at once; more lines running at the same time than this are
/// still killed by their own timeout and by the parent-death signal of their direct
/// children, only their grandchildren are not watched.
const CAPACITY: usize = 8192;

const WATCH: i32 = 1;
const RELEASE: i32 = 2;

/// The bot's end of the pipe to the reaper.
pub struct Reaper {
    pipe: Mutex<std::fs::File>,
    pid: libc::pid_t,
}

impl Reaper {
    /// The process's reaper, started on first use; `None` if it could not be started (then
    /// lines still run, with the parent-death signal as their only tie to the bot).
    pub fn get() -> Option<&'static Self> {
        static REAPER: OnceLock<Option<Reaper>> = OnceLock::new();
        REAPER
            .get_or_init(|| match Self::start() {
                Ok(reaper) => Some(reaper),
                Err(error) => {
                    tracing::warn!(%error, "the reaper of command lines could not be started; a line's grandchildren may outlive a killed bot");
                    None
                }
            })
            .as_ref()
    }

    /// The reaper's process id.
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Asks the reaper to kill `pgid` if the bot dies.
    pub fn watch(&self, pgid: libc::pid_t) {
        self.send(WATCH, pgid);
    }

    /// The group is over; the reaper forgets it.
    pub fn release(&self, pgid: libc::pid_t) {
        self.send(RELEASE, pgid);
    }

    fn send(&self, op: i32, pgid: libc::pid_t) {
        let mut message = [0_u8; 8];
        message[..4].copy_from_slice(&op.to_ne_bytes());
        message[4..].copy_from_slice(&pgid.to_ne_bytes());
        // Eight bytes are below PIPE_BUF, so the write is atomic; the reaper reads promptly,
        // so a full pipe would mean it is gone.
        let mut pipe = self.pipe.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = pipe.write_all(&message) {
            tracing::debug!(%error, "the reaper did not take a message");
        }
    }

    fn start() -> io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into `fds`. O_CLOEXEC: no line inherits the
        // bot's end (it would keep the pipe open after the bot died).
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nothing else.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: fork has no preconditions; the child below runs `serve`, which makes only
        // async-signal-safe system calls and never returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // SAFETY: we are the forked child; `serve` never returns.
            unsafe { serve(read_end.as_raw_fd()) }
        }
        drop(read_end);
        Ok(Self {
            pipe: Mutex::new(std::fs::File::from(write_end)),
            pid,
        })
    }
}

/// The reaper's whole life, in the forked child.
///
/// # Safety
/// Call only in a freshly forked child; it never returns.
unsafe fn serve(pipe: libc::c_int) -> ! {
    // SAFETY (whole body): plain system calls on integers and on this stack's memory.
    unsafe {
        // Keep only the pipe from the bot: as descriptor 3, everything above closed (the
        // bot's end of this pipe among them, or end of file would never come).
        if pipe != 3 {
            libc::dup2(pipe, 3);
        }
        libc::syscall(libc::SYS_close_range, 4_u32, u32::MAX, 0_u32);
        // Out of the bot's session and process group, deaf to the terminal's signals: a
        // Ctrl-C meant for the bot must not take the reaper first.
        libc::setsid();
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(signal, libc::SIG_IGN);
        }
        libc::prctl(libc::PR_SET_NAME, c"riskgate-reaper".as_ptr(), 0, 0, 0);
        let mut groups = [0 as libc::pid_t; CAPACITY];
        let mut message = [0_u8; 8];
        loop {
            let mut filled = 0;
            while filled < message.len() {
                let n = libc::read(
                    3,
                    message.as_mut_ptr().add(filled).cast(),
                    message.len() - filled,
                );
                if n > 0 {
                    filled += n as usize;
                } else if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                } else {
                    // End of file or an error: the bot is gone.
                    for &group in &groups {
                        if group > 0 {
                            libc::killpg(group, libc::SIGKILL);
                        }
                    }
                    libc::_exit(0);
                }
            }
            let op = i32::from_ne_bytes([message[0], message[1], message[2], message[3]]);
            let pgid = i32::from_ne_bytes([message[4], message[5], message[6], message[7]]);
            if pgid <= 0 {
                continue;
            }
            match op {
                WATCH => {
                    if let Some(slot) = groups.iter_mut().find(|g| **g == 0) {
                        *slot = pgid;
                    }
                }
                RELEASE => {
                    if let Some(slot) = groups.iter_mut().find(|g| **g == pgid) {
                        *slot = 0;
                    }
                }
                _ => {}
            }
        }
    }
}
