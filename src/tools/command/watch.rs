//! Watching the workspace, so that a line run without a click needs no walk of it.
//!
//! Before every such line the workspace must hold no regular file with a hard link outside
//! it and no device node, FIFO or socket ([`check_workspace`] says why). A file with
//! several links is refused unless the names of it recorded here account for every link
//! ([`LinkedFiles`]): all its names are in the workspace. Walking the whole
//! workspace for them costs 1–2 ms per 1,000 entries, on every line. [`WorkspaceWatch`]
//! walks it once instead, with an inotify watch on every directory, and records the entries
//! that offend; before each line it reads what the kernel queued since (without waiting),
//! looks again only at the names those events carry, and looks once more at each entry it
//! recorded (the first one that still offends refuses the line). A line's cost no longer
//! grows with the workspace.
//!
//! What the kernel reports, and when:
//! - A name that appears in a watched directory or leaves it (a file created, linked,
//!   made by `mknod` or `bind`, renamed in or out, removed; a directory likewise) raises an
//!   event on that directory's watch, queued by the system call itself before it returns.
//!   So whatever made an entry before a line's check started (a confirmed line, the files
//!   tool, any other process on this machine) is in the queue that check reads. A new or
//!   moved-in directory gets watches and a walk of its own; a directory removed or moved
//!   away loses them (moved within the workspace, it is both).
//! - A change of a file's link count is reported only to a watch on the file itself, never
//!   to its directory's (`link(2)` and `unlink(2)` raise IN_ATTRIB on the inode alone;
//!   measured on Linux 6.18). Watching every file is out of the question (each watch pins
//!   its inode in memory), so: a link made *inside* the workspace is seen, as a new name;
//!   a file with several links seen after the first walk means one whole walk, which finds
//!   its other names in the workspace (so `ln a b; mv b /elsewhere` leaves `a` recorded);
//!   and a recorded entry whose other names went away (anywhere) is looked at again before
//!   every line, and forgotten. What is not seen is a second name made *outside* the
//!   workspace for a file inside it that had one (`ln ws/notes /elsewhere/x`): nothing
//!   appears in the workspace, and the file is found only by the next whole walk (the next
//!   start, or any of the causes below), where the walk before every line found it at once.
//!
//! Where the watch cannot be sure of what it knows, it walks the whole workspace again
//! before the line: the kernel's queue overflowed (more than `fs.inotify.max_queued_events`
//! changes between two lines, such as a large checkout), the workspace directory was
//! removed, moved or replaced, or a file system was mounted or unmounted in it or above it
//! (`/proc/self/mountinfo` says so when polled; a mount raises no inotify event).
//!
//! Where it cannot be used at all, every line walks as before, up to
//! `command.sandbox.hard_link_scan_limit` entries, and the reason is logged once (and shown
//! by `check-config`): `command.sandbox.watch_workspace = false`; inotify unavailable, or
//! its per-user limits reached (`fs.inotify.max_user_instances`, `max_user_watches`); or the
//! workspace, or a file system mounted in it, of a type whose changes this machine may not
//! see (a network or FUSE file system reports only this machine's own changes; only the
//! usual local and in-memory file systems are trusted). The limit does not bound the
//! watch's own walks: they happen once, not on every line, and the number of watches is
//! bounded by the kernel.
//!
//! Races, as for the whole walk: a change made while a check runs may or may not be seen by
//! it (it is seen by the next one), and nothing stops a change made after the check, while
//! the line runs. Paths are followed by name, so an event is looked at where its directory
//! is now: a directory moved before the check has its move in the same queue, later or
//! earlier, and the walk that follows the move sees what the stale name missed. A directory
//! a walk cannot read or watch is skipped, as the whole walk skips one it cannot read
//! (neither can a line, which runs as the bot's user); a later `chmod` making it readable
//! raises an event on its parent and it is watched then.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::sandbox::{LinkedFiles, Offence, SandboxError, check_workspace};

/// What every directory's watch reports: names appearing or leaving, and attribute changes
/// of its entries (a `chmod` that makes a skipped directory readable); never following a
/// symlink, never a file. (The kernel adds IN_IGNORED, a watch gone with its directory, and
/// IN_UNMOUNT.) The workspace directory's own removal or move needs no event: its identity
/// is compared before every line, which also catches a parent moved, where no event comes.
const WATCHED: u32 = libc::IN_CREATE
    | libc::IN_MOVED_TO
    | libc::IN_MOVED_FROM
    | libc::IN_DELETE
    | libc::IN_ATTRIB
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW;

/// Events that change which names a directory holds.
const NAMES: u32 = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_MOVED_FROM | libc::IN_DELETE;

/// Events after which a name is looked at again.
const LOOK: u32 = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_ATTRIB;

/// Bytes read from the inotify descriptor at a time: room for hundreds of events.
const READ_BUFFER: usize = 64 * 1024;

/// File systems whose every change goes through this machine's kernel, so inotify reports
/// it (`statfs` magic numbers): ext2/3/4, XFS, Btrfs, tmpfs, ramfs, overlayfs, F2FS,
/// bcachefs, ZFS, JFS, ReiserFS, NILFS2. Any other (NFS, SMB, FUSE, 9p, Ceph, ...) may be
/// changed from elsewhere without an event here.
const LOCAL_FILE_SYSTEMS: &[u32] = &[
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0x8584_58F6,
    0x794C_7630,
    0xF2F5_2010,
    0xCA45_1A4E,
    0x2FC1_2FC1,
    0x3153_464A,
    0x5265_4973,
    0x3434,
];

/// The workspace's offending entries, known without walking it before every line.
#[derive(Debug)]
pub struct WorkspaceWatch {
    root: PathBuf,
    limit: u64,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    mode: Mode,
    /// Whole walks made by the watch (the first and each one it made again).
    walks: u64,
}

#[derive(Debug)]
enum Mode {
    /// Not started yet, or to be started again before the next line.
    Cold,
    Watching(Box<Watcher>),
    /// Turned off: every line walks the whole workspace.
    Off,
    /// Every line walks the whole workspace, because inotify cannot serve it (why).
    Walking(String),
}

/// What the watch is doing; for `check-config`, the start-up log and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchState {
    /// The workspace does not exist yet: it is walked and watched before its first line.
    NotStarted,
    /// Watched: `directories` watches, after `walks` whole walks.
    Watching { directories: usize, walks: u64 },
    /// Turned off (`command.sandbox.watch_workspace = false`): every line walks the whole
    /// workspace, up to the limit.
    Off,
    /// Every line walks the whole workspace, up to the limit, because inotify cannot serve
    /// it (why).
    Walking(String),
}

impl WorkspaceWatch {
    /// The watch of `root` (`watched: false` turns it off); `limit` is
    /// `hard_link_scan_limit`, for the walk of every line where the workspace is not
    /// watched. Nothing happens until the first check or [`WorkspaceWatch::start`].
    pub fn new(root: &Path, limit: u64, watched: bool) -> Self {
        let mode = if watched { Mode::Cold } else { Mode::Off };
        Self {
            root: root.to_path_buf(),
            limit,
            state: Mutex::new(State { mode, walks: 0 }),
        }
    }

    /// Walks and watches the workspace now if that has not happened yet (at start, off the
    /// runtime, so the first line does not wait for it), and says how it stands. The reason
    /// not to watch, if any, is for the caller to report.
    pub fn start(&self) -> WatchState {
        let mut state = lock(&self.state);
        if matches!(state.mode, Mode::Cold) {
            self.begin(&mut state, false);
        }
        state.report()
    }

    /// How the watch stands, without starting it.
    pub fn state(&self) -> WatchState {
        lock(&self.state).report()
    }

    /// What a line run without a click needs of the workspace: nothing in it that
    /// [`check_workspace`] refuses, with the same refusals. Watched, this reads the queued
    /// events and looks at what they name and at what was recorded; otherwise it walks.
    pub fn check(&self) -> Result<(), SandboxError> {
        let mut state = lock(&self.state);
        if let Mode::Watching(watcher) = &mut state.mode {
            match watcher.refresh() {
                Ok(()) => return watcher.first_offender(),
                Err(Trouble::Again(why)) => {
                    tracing::debug!(why, "the workspace is walked again");
                    state.mode = Mode::Cold;
                }
                Err(Trouble::Missing) => state.mode = Mode::Cold,
                Err(Trouble::Unusable(why)) => state.fall_back(why, true),
            }
        }
        if matches!(state.mode, Mode::Cold) {
            self.begin(&mut state, true);
        }
        match &mut state.mode {
            Mode::Watching(watcher) => watcher.first_offender(),
            Mode::Cold | Mode::Off | Mode::Walking(_) => check_workspace(&self.root, self.limit),
        }
    }

    /// The first walk, or one made again: watching after it, or walking from now on.
    /// `announce` logs a reason not to watch (at start, the caller reports it).
    fn begin(&self, state: &mut State, announce: bool) {
        let started = Instant::now();
        match Watcher::start(&self.root) {
            Ok(watcher) => {
                state.walks += 1;
                let (directories, recorded) = (watcher.dirs.len(), watcher.offenders.len());
                tracing::debug!(
                    directories,
                    recorded,
                    walks = state.walks,
                    elapsed_ms = started.elapsed().as_millis(),
                    "the workspace is watched for hard links and special files"
                );
                state.mode = Mode::Watching(Box::new(watcher));
            }
            // Made before the next line's check (the runner creates it).
            Err(Trouble::Missing | Trouble::Again(_)) => state.mode = Mode::Cold,
            Err(Trouble::Unusable(why)) => state.fall_back(why, announce),
        }
    }
}

impl State {
    fn fall_back(&mut self, why: String, announce: bool) {
        if announce {
            tracing::warn!(
                %why,
                "the workspace cannot be watched: every command line run without a click first walks the whole workspace (up to command.sandbox.hard_link_scan_limit entries)"
            );
        }
        self.mode = Mode::Walking(why);
    }

    fn report(&self) -> WatchState {
        match &self.mode {
            Mode::Cold => WatchState::NotStarted,
            Mode::Watching(watcher) => WatchState::Watching {
                directories: watcher.dirs.len(),
                walks: self.walks,
            },
            Mode::Off => WatchState::Off,
            Mode::Walking(why) => WatchState::Walking(why.clone()),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why the watch cannot answer from what it knows.
#[derive(Debug)]
enum Trouble {
    /// The workspace does not exist.
    Missing,
    /// What is known may be wrong: walk the whole workspace again.
    Again(&'static str),
    /// inotify cannot serve this workspace: walk before every line.
    Unusable(String),
}

/// One inotify instance watching every directory of the workspace, and what it found.
#[derive(Debug)]
struct Watcher {
    /// The workspace, canonical (as `/proc/self/mountinfo` names mount points).
    root: PathBuf,
    /// The workspace directory's device and inode: another directory put at its path is
    /// not the one watched.
    identity: (u64, u64),
    inotify: OwnedFd,
    /// The mount table, kept open: polling it says whether it changed.
    mountinfo: File,
    /// The mounts at, above or in the workspace when the walk started.
    mounts: Vec<String>,
    /// Each watch's directories, relative to the root (one, unless a bind mount shows a
    /// directory twice).
    dirs: HashMap<i32, Vec<PathBuf>>,
    /// Each watched directory's watch, by path (in component order: a directory's subtree
    /// follows it).
    paths: BTreeMap<PathBuf, i32>,
    /// Entries seen offending, by path.
    offenders: BTreeSet<PathBuf>,
    /// Whether the first walk is under way (every name of every file is seen then).
    starting: bool,
    buffer: Vec<u8>,
}

impl Watcher {
    /// Watches every directory of `root`, adding each watch before reading the directory:
    /// what changes before is read, what changes after is queued.
    fn start(root: &Path) -> Result<Self, Trouble> {
        let root = root.canonicalize().map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Trouble::Missing,
            _ => Trouble::Unusable(format!("the workspace cannot be resolved: {e}")),
        })?;
        // Opened (and so armed) before the mounts are read: a later change shows in a poll.
        let mountinfo = File::open("/proc/self/mountinfo").map_err(|e| {
            Trouble::Unusable(format!(
                "/proc/self/mountinfo cannot be read ({e}), so a file system mounted in the workspace would go unseen"
            ))
        })?;
        let mounts = mounts_around(&root)
            .map_err(|e| Trouble::Unusable(format!("/proc/self/mountinfo cannot be read: {e}")))?;
        for place in std::iter::once(root.clone()).chain(mounted_under(&root, &mounts)) {
            local_file_system(&place)?;
        }
        // SAFETY: inotify_init1 takes flags and returns a new descriptor or -1.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            let error = io::Error::last_os_error();
            let hint = if error.raw_os_error() == Some(libc::EMFILE) {
                " (the limit of inotify instances per user is reached: raise fs.inotify.max_user_instances)"
            } else {
                ""
            };
            return Err(Trouble::Unusable(format!(
                "inotify is unavailable: {error}{hint}"
            )));
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        let meta = std::fs::metadata(&root).map_err(|_| Trouble::Missing)?;
        let mut watcher = Self {
            root,
            identity: (meta.dev(), meta.ino()),
            inotify,
            mountinfo,
            mounts,
            dirs: HashMap::new(),
            paths: BTreeMap::new(),
            offenders: BTreeSet::new(),
            starting: true,
            buffer: vec![0; READ_BUFFER],
        };
        watcher.walk(PathBuf::new())?;
        watcher.starting = false;
        if !watcher.paths.contains_key(Path::new("")) {
            // The workspace directory went away, or cannot be read.
            return Err(Trouble::Missing);
        }
        Ok(watcher)
    }

    /// Brings what is known up to what the kernel queued: `Err` when it cannot.
    fn refresh(&mut self) -> Result<(), Trouble> {
        let meta = std::fs::metadata(&self.root)
            .map_err(|_| Trouble::Again("the workspace directory is gone"))?;
        if (meta.dev(), meta.ino()) != self.identity {
            return Err(Trouble::Again("the workspace directory was replaced"));
        }
        if self.mount_table_changed() {
            let now = mounts_around(&self.root)
                .map_err(|_| Trouble::Again("the mount table could not be read"))?;
            if now != self.mounts {
                return Err(Trouble::Again(
                    "a file system was mounted or unmounted in or above the workspace",
                ));
            }
        }
        self.drain()
    }

    /// Whether the mount table changed since the last poll (the poll itself re-arms it).
    fn mount_table_changed(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.mountinfo.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no waiting.
        let ready = unsafe { libc::poll(&raw mut poll, 1, 0) };
        // A failed poll counts as a change: the table is read again.
        ready < 0 || poll.revents & (libc::POLLPRI | libc::POLLERR) != 0
    }

    /// Reads every queued event, without waiting, and acts on each in order.
    fn drain(&mut self) -> Result<(), Trouble> {
        let mut buffer = std::mem::take(&mut self.buffer);
        let result = loop {
            // SAFETY: reads at most `buffer.len()` bytes into the buffer.
            let read = unsafe {
                libc::read(
                    self.inotify.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                )
            };
            let Ok(read) = usize::try_from(read) else {
                let error = io::Error::last_os_error();
                match error.kind() {
                    io::ErrorKind::WouldBlock => break Ok(()),
                    io::ErrorKind::Interrupted => continue,
                    _ => break Err(Trouble::Again("the workspace's events could not be read")),
                }
            };
            if read == 0 {
                break Ok(());
            }
            if let Err(trouble) = events(&buffer[..read]).try_for_each(|e| self.apply(&e)) {
                break Err(trouble);
            }
        };
        self.buffer = buffer;
        result
    }

    fn apply(&mut self, event: &Event<'_>) -> Result<(), Trouble> {
        if event.mask & libc::IN_Q_OVERFLOW != 0 {
            return Err(Trouble::Again(
                "more changes came than the kernel queues (fs.inotify.max_queued_events)",
            ));
        }
        if event.mask & libc::IN_UNMOUNT != 0 {
            return Err(Trouble::Again(
                "a file system in the workspace was unmounted",
            ));
        }
        // A watch already removed: the walk that followed its removal saw what it reports.
        let Some(parents) = self.dirs.get(&event.wd) else {
            return Ok(());
        };
        if event.mask & libc::IN_IGNORED != 0 {
            self.unwatched(event.wd);
            return Ok(());
        }
        // About the directory itself (an attribute): nothing to look at.
        if event.name.is_empty() {
            return Ok(());
        }
        let name = OsStr::from_bytes(event.name);
        for parent in parents.clone() {
            let path = parent.join(name);
            if event.mask & NAMES == 0
                && (self.paths.contains_key(&path) || self.offenders.contains(&path))
            {
                // The attributes of a watched directory (its entries are watched already),
                // or of a recorded entry (looked at again before every line anyway).
                continue;
            }
            self.forget(&path);
            if event.mask & LOOK != 0 {
                self.look(path)?;
            }
        }
        Ok(())
    }

    /// Looks at `path` as it is now: a directory is walked and watched, an offending entry
    /// recorded, anything else (or nothing there any more) left.
    fn look(&mut self, path: PathBuf) -> Result<(), Trouble> {
        let Ok(meta) = std::fs::symlink_metadata(self.root.join(&path)) else {
            return Ok(());
        };
        if meta.is_dir() {
            self.walk(path)
        } else {
            match Offence::of(meta.file_type(), || Some(meta.nlink())) {
                Some(offence) => self.record(path, offence),
                None => Ok(()),
            }
        }
    }

    /// Records an offending entry. A file with several links found after the first walk
    /// means a whole walk: its other names may be in the workspace too, unrecorded, and
    /// would stay hard links to a file outside once this name is moved out.
    fn record(&mut self, path: PathBuf, offence: Offence) -> Result<(), Trouble> {
        self.offenders.insert(path);
        if !self.starting && matches!(offence, Offence::Links(_)) {
            return Err(Trouble::Again(
                "a file with several links appeared: its other names are looked for",
            ));
        }
        Ok(())
    }

    /// Watches `start` and every directory below it, recording what offends.
    fn walk(&mut self, start: PathBuf) -> Result<(), Trouble> {
        let mut pending = vec![start];
        while let Some(dir) = pending.pop() {
            let full = self.root.join(&dir);
            let wd = match self.add_watch(&full) {
                Ok(wd) => wd,
                Err(error) if matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::ENOMEM)) => {
                    return Err(Trouble::Unusable(format!(
                        "the kernel's limit of inotify watches is reached ({error}; raise fs.inotify.max_user_watches, one is needed per directory of the workspace, and restart)"
                    )));
                }
                // Gone, no longer a directory, or unreadable: as the whole walk, skip it.
                Err(_) => continue,
            };
            self.watched(wd, dir.clone());
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = dir.join(entry.file_name());
                if kind.is_dir() {
                    pending.push(path);
                } else if let Some(offence) =
                    Offence::of(kind, || entry.metadata().ok().map(|m| m.nlink()))
                {
                    self.record(path, offence)?;
                }
            }
        }
        Ok(())
    }

    fn add_watch(&self, dir: &Path) -> io::Result<i32> {
        let path = CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a valid descriptor, a NUL-terminated path and a mask.
        let wd =
            unsafe { libc::inotify_add_watch(self.inotify.as_raw_fd(), path.as_ptr(), WATCHED) };
        if wd < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(wd)
        }
    }

    fn watched(&mut self, wd: i32, dir: PathBuf) {
        if let Some(old) = self.paths.insert(dir.clone(), wd)
            && old != wd
        {
            self.detach(old, &dir);
        }
        let places = self.dirs.entry(wd).or_default();
        if !places.contains(&dir) {
            places.push(dir);
        }
    }

    /// Forgets whatever was known at `path` and below: watches and recorded entries.
    fn forget(&mut self, path: &Path) {
        let below = |p: &&PathBuf| p.starts_with(path);
        let dirs: Vec<(PathBuf, i32)> = self
            .paths
            .range(path.to_path_buf()..)
            .map(|(p, wd)| (p.clone(), *wd))
            .take_while(|(p, _)| below(&p))
            .collect();
        for (dir, wd) in dirs {
            self.paths.remove(&dir);
            self.detach(wd, &dir);
        }
        let entries: Vec<PathBuf> = self
            .offenders
            .range(path.to_path_buf()..)
            .take_while(below)
            .cloned()
            .collect();
        for entry in entries {
            self.offenders.remove(&entry);
        }
    }

    /// `dir` is no longer where watch `wd` is; a watch left nowhere is removed.
    fn detach(&mut self, wd: i32, dir: &Path) {
        let Some(places) = self.dirs.get_mut(&wd) else {
            return;
        };
        places.retain(|p| p != dir);
        if places.is_empty() {
            self.dirs.remove(&wd);
            // SAFETY: a valid descriptor and a watch number; a watch the kernel already
            // dropped only makes this fail.
            unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), wd) };
        }
    }

    /// The kernel dropped watch `wd` (its directory was removed).
    fn unwatched(&mut self, wd: i32) {
        for dir in self.dirs.remove(&wd).unwrap_or_default() {
            if self.paths.get(&dir) == Some(&wd) {
                self.paths.remove(&dir);
            }
        }
    }

    /// The first recorded entry that still offends, looked at now: a special file, or a
    /// file with a link outside the workspace (more links than the names of it recorded
    /// here, see [`LinkedFiles`]). Entries that no longer offend (a link removed, say) are
    /// forgotten on the way.
    fn first_offender(&mut self) -> Result<(), SandboxError> {
        let mut linked = LinkedFiles::default();
        let mut gone = Vec::new();
        for path in &self.offenders {
            let meta = std::fs::symlink_metadata(self.root.join(path)).ok();
            let now = meta
                .as_ref()
                .and_then(|meta| Offence::of(meta.file_type(), || Some(meta.nlink())));
            match (now, meta) {
                (None, _) | (_, None) => gone.push(path.clone()),
                (Some(Offence::Links(_)), Some(meta)) => linked.add(&self.root, path, &meta),
                (Some(offence), _) => return Err(offence.refusal(path)),
            }
        }
        for path in gone {
            self.offenders.remove(&path);
        }
        linked.leading_out()
    }
}

/// One inotify event, its name without the padding.
struct Event<'a> {
    wd: i32,
    mask: u32,
    name: &'a [u8],
}

/// The events in what one read returned (`struct inotify_event`: wd, mask, cookie, length,
/// then the name, NUL-padded to that length).
fn events(bytes: &[u8]) -> impl Iterator<Item = Event<'_>> {
    const HEADER: usize = 16;
    let field = |at: usize| -> [u8; 4] {
        let mut word = [0; 4];
        word.copy_from_slice(&bytes[at..at + 4]);
        word
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        if at + HEADER > bytes.len() {
            return None;
        }
        let wd = i32::from_ne_bytes(field(at));
        let mask = u32::from_ne_bytes(field(at + 4));
        let len = usize::try_from(u32::from_ne_bytes(field(at + 12))).ok()?;
        let end = (at + HEADER)
            .checked_add(len)
            .filter(|&e| e <= bytes.len())?;
        let padded = &bytes[at + HEADER..end];
        let name = &padded[..padded.iter().position(|&b| b == 0).unwrap_or(len)];
        at = end;
        Some(Event { wd, mask, name })
    })
}

/// The lines of `/proc/self/mountinfo` whose mount point is `root`, above it or in it: a
/// change among them changes what the workspace's paths lead to.
fn mounts_around(root: &Path) -> io::Result<Vec<String>> {
    let table = std::fs::read_to_string("/proc/self/mountinfo")?;
    Ok(table
        .lines()
        .filter(|line| {
            mount_point(line)
                .is_some_and(|point| root.starts_with(&point) || point.starts_with(root))
        })
        .map(str::to_owned)
        .collect())
}

/// The mount points strictly inside `root`, from [`mounts_around`]'s lines.
fn mounted_under<'a>(root: &'a Path, mounts: &'a [String]) -> impl Iterator<Item = PathBuf> + 'a {
    mounts
        .iter()
        .filter_map(|line| mount_point(line))
        .filter(move |point| point.starts_with(root) && point != root)
}

/// A mountinfo line's mount point (its fifth field; space, tab, newline and backslash are
/// written as octal escapes).
fn mount_point(line: &str) -> Option<PathBuf> {
    let field = line.split(' ').nth(4)?.as_bytes();
    let mut bytes = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                bytes.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            None => {
                bytes.push(field[i]);
                i += 1;
            }
        }
    }
    Some(PathBuf::from(OsStr::from_bytes(&bytes)))
}

/// Whether changes to the file system at `place` all go through this machine's kernel.
fn local_file_system(place: &Path) -> Result<(), Trouble> {
    let path = CString::new(place.as_os_str().as_bytes())
        .map_err(|_| Trouble::Unusable("a mount point holds a NUL byte".to_owned()))?;
    let mut stat = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: a NUL-terminated path and room for one statfs, filled on success.
    if unsafe { libc::statfs(path.as_ptr(), stat.as_mut_ptr()) } != 0 {
        // Unmounted meanwhile: the mount table's poll says so before the next line.
        return Ok(());
    }
    // SAFETY: statfs succeeded, so the structure is filled.
    let stat = unsafe { stat.assume_init() };
    // The magic number is 32 bits wide, in a field that is wider on some architectures.
    let magic = stat.f_type as u32;
    if LOCAL_FILE_SYSTEMS.contains(&magic) {
        Ok(())
    } else {
        Err(Trouble::Unusable(format!(
            "{} is on a file system (statfs type {magic:#x}) that may change without this machine's kernel seeing it (a network or FUSE file system), so inotify cannot be trusted with it",
            place.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let name = CString::new(path.as_os_str().as_bytes()).expect("path");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    }

    /// A temporary directory holding the workspace `ws` (with `dirs` made in it) and a file
    /// outside it, `outside.txt`.
    fn workspace(dirs: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(dirs)).expect("mkdir");
        std::fs::write(dir.path().join("outside.txt"), "secret").expect("write");
        (dir, ws)
    }

    fn watching(watch: &WorkspaceWatch) -> (usize, u64) {
        match watch.start() {
            WatchState::Watching { directories, walks } => (directories, walks),
            other => panic!("the workspace is not watched here: {other:?}"),
        }
    }

    #[test]
    fn links_and_special_files_made_after_the_walk_are_refused() {
        let (dir, ws) = workspace("a/b");
        std::fs::write(ws.join("a/plain.txt"), "x").expect("write");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        assert_eq!(watching(&watch), (3, 1));
        assert!(watch.check().is_ok());
        assert!(watch.check().is_ok());
        assert_eq!(watching(&watch), (3, 1), "no walk for a line");

        std::fs::hard_link(dir.path().join("outside.txt"), ws.join("a/b/link.txt")).expect("ln");
        match watch.check() {
            Err(SandboxError::HardLink { path, links }) => {
                assert_eq!((path.as_str(), links), ("a/b/link.txt", 2));
            }
            other => panic!("{other:?}"),
        }
        assert!(watch.check().is_err());
        assert_eq!(watching(&watch).1, 2, "one walk for the link's other names");
        // The outside name removed: the link count is 1 again, without an event here.
        std::fs::remove_file(dir.path().join("outside.txt")).expect("rm");
        assert!(watch.check().is_ok());

        mkfifo(&ws.join("a/pipe"));
        match watch.check() {
            Err(SandboxError::SpecialFile { path, kind }) => {
                assert_eq!((path.as_str(), kind), ("a/pipe", "FIFO"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(ws.join("a/pipe")).expect("rm");
        assert!(watch.check().is_ok());
        assert_eq!(watching(&watch), (3, 2), "no walk for a FIFO");
    }

    #[test]
    fn a_links_other_name_stays_refused_when_the_new_one_moves_out() {
        let (dir, ws) = workspace("docs");
        std::fs::write(ws.join("docs/notes"), "x").expect("write");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        watching(&watch);
        std::fs::hard_link(ws.join("docs/notes"), ws.join("copy")).expect("ln");
        // Both names are in the workspace: the file leads nowhere else.
        assert!(watch.check().is_ok());
        // `docs/notes` now has a name outside the workspace, as the walk of every line saw.
        std::fs::rename(ws.join("copy"), dir.path().join("copy")).expect("mv");
        match watch.check() {
            Err(SandboxError::HardLink { path, links }) => {
                assert_eq!((path.as_str(), links), ("docs/notes", 2));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(dir.path().join("copy")).expect("rm");
        assert!(watch.check().is_ok());
    }

    #[test]
    fn new_and_moved_directories_are_watched_and_moved_ones_forgotten() {
        let (dir, ws) = workspace("");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        watching(&watch);
        // A directory made and filled between two checks.
        std::fs::create_dir_all(ws.join("new/deeper")).expect("mkdir");
        std::fs::hard_link(dir.path().join("outside.txt"), ws.join("new/deeper/l")).expect("ln");
        assert!(matches!(
            watch.check(),
            Err(SandboxError::HardLink { path, .. }) if path == "new/deeper/l"
        ));
        // Moved within the workspace, then out of it.
        std::fs::rename(ws.join("new"), ws.join("renamed")).expect("mv");
        assert!(matches!(
            watch.check(),
            Err(SandboxError::HardLink { path, .. }) if path == "renamed/deeper/l"
        ));
        std::fs::rename(ws.join("renamed"), dir.path().join("away")).expect("mv");
        assert!(watch.check().is_ok());
        // A tree with a link built outside and moved in.
        std::fs::create_dir_all(dir.path().join("tree/sub")).expect("mkdir");
        std::fs::write(dir.path().join("tree/sub/plain"), "x").expect("write");
        std::fs::rename(dir.path().join("tree"), ws.join("tree")).expect("mv");
        assert!(watch.check().is_ok());
        std::fs::hard_link(ws.join("tree/sub/plain"), ws.join("tree/sub/again")).expect("ln");
        assert!(watch.check().is_ok(), "both names in the workspace");
        // A third name, outside: no event here, but the recorded names are looked at again
        // before every line, and two names no longer account for three links.
        std::fs::hard_link(ws.join("tree/sub/plain"), dir.path().join("third")).expect("ln");
        assert!(matches!(
            watch.check(),
            Err(SandboxError::HardLink { links: 3, .. })
        ));
        std::fs::remove_file(dir.path().join("third")).expect("rm");
        assert!(watch.check().is_ok());
        std::fs::remove_file(ws.join("tree/sub/again")).expect("rm");
        assert!(watch.check().is_ok());
        // A whole walk for each link found after the first: made, moved in, made.
        assert_eq!(watching(&watch).1, 4);
    }

    #[test]
    fn a_replaced_workspace_directory_is_walked_again() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("parent/ws");
        std::fs::create_dir_all(&ws).expect("mkdir");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        watching(&watch);
        // The workspace's parent moved and made again: no event reaches the old watches.
        std::fs::rename(dir.path().join("parent"), dir.path().join("old")).expect("mv");
        std::fs::create_dir_all(&ws).expect("mkdir");
        mkfifo(&ws.join("pipe"));
        assert!(matches!(
            watch.check(),
            Err(SandboxError::SpecialFile { kind: "FIFO", .. })
        ));
        assert_eq!(watching(&watch).1, 2);
        // The workspace directory itself moved away and made again.
        std::fs::rename(&ws, dir.path().join("moved")).expect("mv");
        std::fs::create_dir_all(&ws).expect("mkdir");
        assert!(watch.check().is_ok());
        mkfifo(&ws.join("pipe"));
        assert!(watch.check().is_err());
        assert_eq!(watching(&watch).1, 3);
    }

    #[test]
    fn more_changes_than_the_kernel_queues_mean_a_whole_walk() {
        let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
            .ok()
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(usize::MAX);
        if queued > 65_536 {
            eprintln!("skipped: the kernel queues {queued} events, too many to overflow here");
            return;
        }
        let (dir, ws) = workspace("");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        watching(&watch);
        for i in 0..=queued {
            std::fs::File::create(ws.join(format!("f{i}"))).expect("create");
        }
        // Its event is lost: the queue is full.
        std::fs::hard_link(dir.path().join("outside.txt"), ws.join("late")).expect("ln");
        assert!(matches!(
            watch.check(),
            Err(SandboxError::HardLink { path, .. }) if path == "late"
        ));
        assert_eq!(watching(&watch).1, 2, "walked again");
    }

    /// Set in the copy of this test that runs in a mount namespace of its own; names the
    /// file it reports to.
    const MOUNT_NAMESPACE: &str = "RISKGATE_WATCH_TEST_MOUNT_NAMESPACE";

    /// A mount raises no inotify event: a FIFO in a file system mounted in the workspace
    /// after the walk is found because the mount table changed. The mount is made in a
    /// namespace of its own (this test runs itself again under `unshare`), so the
    /// machine's mounts never change.
    #[test]
    fn a_file_system_mounted_in_the_workspace_means_a_whole_walk() {
        let Some(report) = std::env::var_os(MOUNT_NAMESPACE) else {
            // SAFETY: geteuid only returns a number.
            if unsafe { libc::geteuid() } != 0 {
                eprintln!("skipped: mounting needs root");
                return;
            }
            let dir = tempfile::tempdir().expect("tempdir");
            let report = dir.path().join("report");
            let name = "tools::command::watch::tests::a_file_system_mounted_in_the_workspace_means_a_whole_walk";
            let status = std::process::Command::new("unshare")
                .args(["--mount", "--propagation", "private", "--"])
                .arg(std::env::current_exe().expect("the test binary"))
                .args(["--exact", name, "--nocapture", "--test-threads", "1"])
                .env(MOUNT_NAMESPACE, &report)
                .status();
            match status {
                Ok(status) => {
                    assert!(status.success(), "the test in its namespace failed");
                    let said = std::fs::read_to_string(&report).expect("the test ran");
                    if said != "found" {
                        eprintln!("skipped: {said}");
                    }
                }
                Err(error) => eprintln!("skipped: unshare cannot run: {error}"),
            }
            return;
        };
        let (_dir, ws) = workspace("sub");
        let watch = WorkspaceWatch::new(&ws, 100, true);
        watching(&watch);
        let target = CString::new(ws.join("sub").as_os_str().as_bytes()).expect("path");
        // SAFETY: NUL-terminated strings; a tmpfs mounted in this process's own namespace.
        let mounted = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if mounted != 0 {
            let error = io::Error::last_os_error();
            std::fs::write(&report, format!("a tmpfs cannot be mounted here: {error}"))
                .expect("report");
            return;
        }
        /// Unmounts before the temporary directory is removed, even when the test fails.
        struct Unmount(CString);
        impl Drop for Unmount {
            fn drop(&mut self) {
                // SAFETY: a NUL-terminated path.
                unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
            }
        }
        let _unmount = Unmount(target);
        mkfifo(&ws.join("sub/pipe"));
        match watch.check() {
            Err(SandboxError::SpecialFile { path, kind }) => {
                assert_eq!((path.as_str(), kind), ("sub/pipe", "FIFO"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(watching(&watch).1, 2);
        std::fs::write(&report, "found").expect("report");
    }

    /// A file system this machine's kernel may not see every change of is walked before
    /// every line instead (procfs stands for NFS or FUSE here: it is on every machine, and
    /// only read).
    #[test]
    fn file_systems_not_known_to_be_local_are_walked_instead() {
        let watch = WorkspaceWatch::new(Path::new("/proc/sys/fs/inotify"), 100, true);
        match watch.start() {
            WatchState::Walking(why) => assert!(why.contains("statfs type 0x9fa0"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(watch.check().is_ok());
        assert!(matches!(watch.state(), WatchState::Walking(_)));
    }

    #[test]
    fn unwatched_workspaces_are_walked_with_the_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..3 {
            std::fs::write(dir.path().join(format!("f{i}")), "x").expect("write");
        }
        let watch = WorkspaceWatch::new(dir.path(), 2, false);
        assert_eq!(watch.start(), WatchState::Off);
        assert!(matches!(
            watch.check(),
            Err(SandboxError::TooLargeToScan { limit: 2 })
        ));
        let missing = WorkspaceWatch::new(&dir.path().join("nowhere"), 2, true);
        assert_eq!(missing.start(), WatchState::NotStarted);
        assert!(missing.check().is_ok());
    }

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        let line = r"36 35 98:0 /mnt1 /srv/my\040work\134x rw,noatime master:1 - ext4 /dev/root rw";
        assert_eq!(mount_point(line), Some(PathBuf::from(r"/srv/my work\x")));
        let mounts = vec![line.to_owned()];
        let under: Vec<PathBuf> = mounted_under(Path::new("/srv"), &mounts).collect();
        assert_eq!(under, [PathBuf::from(r"/srv/my work\x")]);
        assert_eq!(
            mounted_under(Path::new(r"/srv/my work\x"), &mounts).count(),
            0
        );
    }
}
