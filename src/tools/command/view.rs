//! A line's own view of the file system: a mount namespace made for the line, which every
//! process of the line joins before it runs anything.
//!
//! In that view, and only there:
//! - `/proc` is a fresh procfs mounted with `hidepid=invisible`: a process sees only the
//!   processes it could trace, and Landlock lets a sandboxed process trace only its own
//!   descendants, so the bot, other lines and every other program on the machine are
//!   absent (their command lines, which may carry passwords, included);
//! - the line's private directory (its HOME, TMPDIR and XDG directories) is a tmpfs of
//!   `command.sandbox.tmp_bytes`, so what a line keeps there is bounded (its pages also
//!   count towards the line's memory group) and is gone with the line;
//! - the workspace is mounted again on itself `nodev` and `nosuid` (and read-only for a
//!   line without a click): a device node an archive left there reads as nothing.
//!
//! The view is made by a small process forked from the bot (system calls only, as a forked
//! child of a threaded process must): it leaves the bot's mount namespace, mounts the
//! above, tells the bot, and waits. The bot opens the namespace (`/proc/<pid>/ns/mnt`), the
//! new `/proc` and the private directory through it (`/proc/<pid>/root/...`, for the
//! line's Landlock rules, which name those mounts and not the bot's), then lets it exit:
//! the open namespace keeps the mounts alive until the line is over, and dropping
//! [`LineView`] ends them. Making a view needs `CAP_SYS_ADMIN` (a bot run as root); where
//! it cannot be made, [`ViewSupport::Missing`] says why, lines share the machine's `/proc`
//! and their private directory lives on disk.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::PathFd;

/// Whether lines get a view of their own here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewSupport {
    Ready,
    Missing(String),
}

impl ViewSupport {
    /// Makes one view in a temporary directory, as a line would, and says whether it worked.
    pub fn probe() -> Self {
        let result = tempfile::Builder::new()
            .prefix("riskgate-view-probe-")
            .tempdir()
            .map_err(|e| format!("no temporary directory for the probe: {e}"))
            .and_then(|dir| {
                let plan = ViewPlan::new(
                    dir.path(),
                    dir.path(),
                    1024 * 1024,
                    false,
                    &Layout::default(),
                )
                .map_err(|e| e.to_string())?;
                LineView::create(&plan).map(drop).map_err(|e| e.to_string())
            });
        match result {
            Ok(()) => Self::Ready,
            Err(reason) => Self::Missing(reason),
        }
    }

    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready)
    }
}

/// What a line's private directory holds when it starts: directories (created in order) and
/// files with their bytes, as absolute paths.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub dirs: Vec<PathBuf>,
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

impl Layout {
    /// Creates the layout with ordinary calls (where there is no view, on disk).
    pub fn create_on_disk(&self) -> io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        for dir in &self.dirs {
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        }
        for (path, bytes) in &self.files {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)?;
            io::Write::write_all(&mut file, bytes)?;
        }
        Ok(())
    }
}

/// Everything the forked process needs, prepared in the bot (it may not allocate).
pub struct ViewPlan {
    private: CString,
    /// `hidepid=2` (invisible) with a `gid` the line is not in: members of the mount's
    /// `gid` see every process, and its default is root's group, which the line has.
    proc_options: CString,
    tmpfs_options: CString,
    workspace: CString,
    /// The flags of the workspace's second mount: its own kept, `nodev` and `nosuid` added.
    workspace_flags: libc::c_ulong,
    dirs: Vec<CString>,
    files: Vec<(CString, Vec<u8>)>,
    private_path: PathBuf,
}

/// The steps of the forked process, for saying which one failed.
const STEPS: &[&str] = &[
    "",
    "setting its parent-death signal",
    "leaving the bot's mount namespace (unshare: the bot needs CAP_SYS_ADMIN, i.e. to run as root)",
    "making its mounts private",
    "mounting a /proc of its own",
    "mounting the private directory's tmpfs",
    "creating the private directory's layout",
    "mounting the workspace again",
    "making the workspace nodev and nosuid",
    "telling the bot",
];

impl ViewPlan {
    /// The view of a line whose private directory is `private`, in `workspace`, with
    /// `tmp_bytes` of tmpfs; `read_only` mounts the workspace read-only too.
    pub fn new(
        private: &Path,
        workspace: &Path,
        tmp_bytes: u64,
        read_only: bool,
        layout: &Layout,
    ) -> io::Result<Self> {
        let c = |path: &Path| {
            CString::new(path.as_os_str().as_bytes()).map_err(|e| io::Error::other(e.to_string()))
        };
        let kept = mount_flags(workspace)?;
        let mut workspace_flags = kept | libc::MS_NODEV | libc::MS_NOSUID;
        if read_only {
            workspace_flags |= libc::MS_RDONLY;
        }
        Ok(Self {
            private: c(private)?,
            proc_options: CString::new(format!("hidepid=2,gid={}", outsider_gid()))
                .map_err(|e| io::Error::other(e.to_string()))?,
            tmpfs_options: CString::new(format!("size={tmp_bytes},mode=0700"))
                .map_err(|e| io::Error::other(e.to_string()))?,
            workspace: c(workspace)?,
            workspace_flags,
            dirs: layout
                .dirs
                .iter()
                .map(|d| c(d))
                .collect::<io::Result<_>>()?,
            files: layout
                .files
                .iter()
                .map(|(p, bytes)| Ok((c(p)?, bytes.clone())))
                .collect::<io::Result<_>>()?,
            private_path: private.to_path_buf(),
        })
    }
}

/// A group id neither the bot nor its lines belong to (they keep the bot's groups).
fn outsider_gid() -> libc::gid_t {
    // SAFETY: getegid has no preconditions.
    let own = unsafe { libc::getegid() };
    let mut groups = [0 as libc::gid_t; 256];
    // SAFETY: getgroups writes at most `groups.len()` ids into the array.
    let count = unsafe { libc::getgroups(groups.len() as libc::c_int, groups.as_mut_ptr()) };
    let member = |gid: libc::gid_t| {
        gid == own || groups[..usize::try_from(count).unwrap_or(0)].contains(&gid)
    };
    // High ids that no distribution hands out; the first the bot is not in.
    (0..16)
        .map(|i| 0x7fff_fff0 - i)
        .find(|gid| !member(*gid))
        .unwrap_or(0x7fff_fff0)
}

/// The per-mount flags of the file system holding `path` that a bind remount must repeat
/// (a remount sets them all at once).
fn mount_flags(path: &Path) -> io::Result<libc::c_ulong> {
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|e| io::Error::other(e.to_string()))?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: statvfs writes only into `stat`, valid for the whole call.
    if unsafe { libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it filled `stat`.
    let flags = unsafe { stat.assume_init() }.f_flag;
    let pairs = [
        (libc::ST_RDONLY, libc::MS_RDONLY),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs
        .iter()
        .filter(|(st, _)| flags & st == *st)
        .fold(0, |acc, (_, ms)| acc | ms))
}

/// One line's view: the namespace its processes join, and the mounts its Landlock rules
/// name. Dropping it ends the mounts (the tmpfs and what the line left in it).
pub struct LineView {
    namespace: OwnedFd,
    proc_root: PathFd,
    private_root: PathFd,
}

impl std::fmt::Debug for LineView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineView")
            .field("namespace", &self.namespace.as_raw_fd())
            .finish_non_exhaustive()
    }
}

impl LineView {
    /// Forks the process that makes the view, and keeps the view.
    pub fn create(plan: &ViewPlan) -> io::Result<Self> {
        let (ready_read, ready_write) = pipe()?;
        let (go_read, go_write) = pipe()?;
        // SAFETY: fork has no preconditions; the child runs `make_view`, which makes only
        // async-signal-safe system calls on memory prepared before the fork and never
        // returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            let ends = [ready_read.as_raw_fd(), go_write.as_raw_fd()];
            // SAFETY: we are the forked child; it never returns.
            unsafe { make_view(plan, ready_write.as_raw_fd(), go_read.as_raw_fd(), ends) }
        }
        drop(ready_write);
        drop(go_read);
        let opened = Self::adopt(pid, plan, ready_read);
        // The process may go now; the namespace lives on in our descriptor.
        drop(go_write);
        reap(pid);
        opened
    }

    fn adopt(pid: libc::pid_t, plan: &ViewPlan, ready: OwnedFd) -> io::Result<Self> {
        let mut report = [0_u8; 8];
        let mut got = 0;
        while got < report.len() {
            // SAFETY: reads into the rest of `report`, which is valid for that many bytes.
            let n = unsafe {
                libc::read(
                    ready.as_raw_fd(),
                    report[got..].as_mut_ptr().cast(),
                    report.len() - got,
                )
            };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                return Err(io::Error::other(
                    "the process making the line's view ended without a word",
                ));
            }
            got += usize::try_from(n).unwrap_or(0);
        }
        let step = u32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
        let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
        if step != 0 {
            let what = usize::try_from(step)
                .ok()
                .and_then(|s| STEPS.get(s))
                .unwrap_or(&"an unknown step");
            return Err(io::Error::other(format!(
                "the line's view could not be made: {what} failed: {}",
                io::Error::from_raw_os_error(errno)
            )));
        }
        let root = PathBuf::from(format!("/proc/{pid}/root"));
        let namespace = std::fs::File::open(format!("/proc/{pid}/ns/mnt"))?;
        let inside = |path: &Path| root.join(path.strip_prefix("/").unwrap_or(path));
        let fd = |path: PathBuf| PathFd::new(path).map_err(|e| io::Error::other(e.to_string()));
        Ok(Self {
            namespace: OwnedFd::from(namespace),
            proc_root: fd(inside(Path::new("/proc")))?,
            private_root: fd(inside(&plan.private_path))?,
        })
    }

    /// The namespace descriptor a line process joins (`setns`).
    pub fn namespace(&self) -> RawFd {
        self.namespace.as_raw_fd()
    }

    /// The view's `/proc`, for the line's Landlock rules.
    pub fn proc_root(&self) -> &PathFd {
        &self.proc_root
    }

    /// The view's private directory (the tmpfs), for the line's Landlock rules.
    pub fn private_root(&self) -> &PathFd {
        &self.private_root
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits for the view's process, which exits as soon as its pipe closes.
fn reap(pid: libc::pid_t) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only into `status`.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// The forked process's whole life: make the view, report, wait until the bot has opened
/// it, exit. `bots_ends` are the bot's ends of the two pipes, which the fork copied: closed
/// first, so the bot's close of `go` is an end of file here.
///
/// # Safety
/// Call only in a freshly forked child; it never returns.
unsafe fn make_view(plan: &ViewPlan, ready: RawFd, go: RawFd, bots_ends: [RawFd; 2]) -> ! {
    // SAFETY (whole body): plain system calls on integers, on this stack's memory and on
    // the plan, prepared before the fork and not changed since.
    unsafe {
        for fd in bots_ends {
            libc::close(fd);
        }
        // Every other descriptor the fork copied goes too: those of another view being
        // made at the same time (this process would hold that one's pipe open, and that
        // one this one's: both would wait for ever), and a running line's output pipes
        // (its reader would wait for this process to end).
        close_all_but(ready, go);
        let step = view_steps(plan);
        let errno = if step == 0 {
            0
        } else {
            *libc::__errno_location()
        };
        let mut report = [0_u8; 8];
        report[..4].copy_from_slice(&step.to_ne_bytes());
        report[4..].copy_from_slice(&errno.to_ne_bytes());
        libc::write(ready, report.as_ptr().cast(), report.len());
        if step == 0 {
            let mut byte = 0_u8;
            // Blocks until the bot closes its end.
            while libc::read(go, (&raw mut byte).cast(), 1) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
        }
        libc::_exit(i32::from(step != 0));
    }
}

/// Closes every descriptor from 3 on but `keep_a` and `keep_b` (`close_range`, Linux 5.9;
/// one by one up to the descriptor limit where it is missing).
///
/// # Safety
/// As [`make_view`].
unsafe fn close_all_but(keep_a: RawFd, keep_b: RawFd) {
    let (low, high) = (keep_a.min(keep_b), keep_a.max(keep_b));
    let spans = [(3, low - 1), (low + 1, high - 1), (high + 1, RawFd::MAX)];
    // SAFETY: system calls on integers only.
    unsafe {
        for (first, last) in spans {
            if first > last {
                continue;
            }
            let (first_u, last_u) = (first.unsigned_abs(), last.unsigned_abs());
            if libc::syscall(libc::SYS_close_range, first_u, last_u, 0_u32) == 0 {
                continue;
            }
            let limit = libc::sysconf(libc::_SC_OPEN_MAX);
            let limit = RawFd::try_from(limit).unwrap_or(1024).min(last);
            for fd in first..=limit {
                libc::close(fd);
            }
        }
    }
}

/// Makes the view; 0, or the number of the step that failed (see [`STEPS`]) with `errno`
/// set.
///
/// # Safety
/// As [`make_view`].
unsafe fn view_steps(plan: &ViewPlan) -> u32 {
    const ROOT: &std::ffi::CStr = c"/";
    const PROC: &std::ffi::CStr = c"/proc";
    const PROC_TYPE: &std::ffi::CStr = c"proc";
    const TMPFS: &std::ffi::CStr = c"tmpfs";
    let none = std::ptr::null::<libc::c_char>();
    // SAFETY (whole body): each call is a system call on NUL-terminated strings and buffers
    // that live in the plan or in static memory.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return 1;
        }
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return 2;
        }
        if libc::mount(
            none,
            ROOT.as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return 3;
        }
        let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        if libc::mount(
            PROC_TYPE.as_ptr(),
            PROC.as_ptr(),
            PROC_TYPE.as_ptr(),
            proc_flags,
            plan.proc_options.as_ptr().cast(),
        ) != 0
        {
            return 4;
        }
        if libc::mount(
            TMPFS.as_ptr(),
            plan.private.as_ptr(),
            TMPFS.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            plan.tmpfs_options.as_ptr().cast(),
        ) != 0
        {
            return 5;
        }
        if !create_layout(plan) {
            return 6;
        }
        if libc::mount(
            plan.workspace.as_ptr(),
            plan.workspace.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            return 7;
        }
        if libc::mount(
            none,
            plan.workspace.as_ptr(),
            none,
            libc::MS_BIND | libc::MS_REMOUNT | plan.workspace_flags,
            std::ptr::null(),
        ) != 0
        {
            return 8;
        }
        0
    }
}

/// The private directory's directories and files, with system calls only.
///
/// # Safety
/// As [`make_view`].
unsafe fn create_layout(plan: &ViewPlan) -> bool {
    // SAFETY (whole body): system calls on the plan's strings and buffers.
    unsafe {
        for dir in &plan.dirs {
            if libc::mkdir(dir.as_ptr(), 0o700) != 0 {
                return false;
            }
        }
        for (path, bytes) in &plan.files {
            let fd = libc::open(
                path.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600,
            );
            if fd < 0 {
                return false;
            }
            let mut written = 0;
            while written < bytes.len() {
                let n = libc::write(fd, bytes[written..].as_ptr().cast(), bytes.len() - written);
                if n <= 0 {
                    libc::close(fd);
                    return false;
                }
                written += n as usize;
            }
            libc::close(fd);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_keeps_its_own_mount_flags_and_gains_nodev() {
        let dir = tempfile::tempdir().expect("tempdir");
        let layout = Layout::default();
        let plan = ViewPlan::new(dir.path(), dir.path(), 4096, true, &layout).expect("plan");
        assert_ne!(plan.workspace_flags & libc::MS_NODEV, 0);
        assert_ne!(plan.workspace_flags & libc::MS_NOSUID, 0);
        assert_ne!(plan.workspace_flags & libc::MS_RDONLY, 0);
        let writable = ViewPlan::new(dir.path(), dir.path(), 4096, false, &layout).expect("plan");
        assert_eq!(writable.workspace_flags & libc::MS_RDONLY, 0);
        assert_eq!(
            plan.tmpfs_options.to_str().ok(),
            Some("size=4096,mode=0700")
        );
    }

    /// Views made on several threads at once all come back: each making process holds only
    /// its own pipes, not another's (two makers holding each other's pipe waited for ever;
    /// 2,000 views on four threads showed it every time).
    #[test]
    fn views_made_at_once_do_not_wait_for_each_other() {
        let workspace = tempfile::tempdir().expect("workspace");
        let probe = tempfile::tempdir().expect("probe");
        let probe_plan = ViewPlan::new(
            probe.path(),
            workspace.path(),
            1 << 20,
            true,
            &Layout::default(),
        )
        .expect("plan");
        if let Err(error) = LineView::create(&probe_plan) {
            eprintln!("skipped: no line views here ({error})");
            return;
        }
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..4 {
            let (done, workspace) = (done.clone(), workspace.path().to_path_buf());
            std::thread::spawn(move || {
                for _ in 0..500 {
                    let dir = tempfile::tempdir().expect("private");
                    let plan =
                        ViewPlan::new(dir.path(), &workspace, 1 << 20, false, &Layout::default())
                            .expect("plan");
                    drop(LineView::create(&plan).expect("view"));
                }
                done.send(()).expect("send");
            });
        }
        for _ in 0..4 {
            finished
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("a thread making views never came back");
        }
    }

    #[test]
    fn a_layout_on_disk_has_its_directories_and_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let layout = Layout {
            dirs: vec![home.clone(), home.join(".config")],
            files: vec![(home.join(".config/x"), b"operator".to_vec())],
        };
        layout.create_on_disk().expect("layout");
        assert_eq!(
            std::fs::read(home.join(".config/x")).expect("read"),
            b"operator"
        );
        // A second creation meets what is there and fails instead of following it.
        assert!(layout.create_on_disk().is_err());
    }
}
