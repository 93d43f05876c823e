//! Limits per line, not per process: each sandboxed line runs in a control group of its own
//! whose memory (anonymous, shared mappings and the line's tmpfs pages alike) and number of
//! processes are bounded for the whole line.
//!
//! `setrlimit` bounds one process at a time: three forked children each stay under
//! `RLIMIT_DATA` while together they take three times as much, a shared mapping is not
//! counted at all, and the kernel never applies `RLIMIT_NPROC` to root. A control group
//! counts every process the line starts, whatever it forks, and the kernel's OOM killer or
//! `fork`'s `EAGAIN` stop the line, not the machine.
//!
//! Both cgroup versions are used where the bot may create groups:
//! - **v2** (one unified hierarchy): a line's group is a child of the bot's own group with
//!   `memory.max`, `memory.swap.max = 0` and `pids.max`. A v2 group that enables
//!   controllers for its children may hold no process itself, so when the bot is alone in
//!   its group (a systemd unit with `Delegate=yes`, say) it first moves itself into a leaf
//!   `riskgate-bot` beside the lines' groups. A group shared with other processes is left
//!   alone, and the limits are reported missing.
//! - **v1** (a hierarchy per controller, or the hybrid layout of older distributions):
//!   the line gets a group in the `memory` hierarchy (`memory.limit_in_bytes`, and
//!   `memory.memsw.limit_in_bytes` where swap is accounted) and one in `pids`
//!   (`pids.max`), each below the bot's own group there.
//!
//! Each line process joins its groups in `pre_exec`, before `exec` and before anything it
//! runs can fork, by writing `0` to `cgroup.procs` descriptors opened in the bot. When the
//! line ends every process left in its groups is killed; the empty groups are kept for a
//! later line (their limits rewritten if another runner's differ, their counters read as a
//! difference), since making a group and moving the first process into it costs the kernel
//! an RCU grace period now and then (1-25 ms measured, against ~0.05 ms for a group that
//! exists). Groups are named `riskgate-<bot pid>-<n>`; ones left by a bot that died are
//! removed at the next start.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where the control groups of lines go, as found on this machine, and the groups of
/// finished lines kept for the next ones.
#[derive(Debug)]
pub struct Cgroups {
    found: Found,
    /// Empty groups of lines that ended, each ready for another line. Making a group and
    /// moving a process into a new one costs the kernel an RCU grace period now and then
    /// (milliseconds); moving into a group that exists does not.
    idle: Arc<Mutex<Vec<Vec<Group>>>>,
}

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Lines get groups here: one directory per hierarchy, each the parent of the lines'
    /// groups.
    Ready(Vec<Hierarchy>),
    /// No group can be made; the reason says why and what would make one.
    Missing(String),
}

/// One hierarchy the lines' groups are made in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hierarchy {
    /// The directory whose children the lines' groups are.
    pub parent: PathBuf,
    pub kind: Kind,
}

/// Which limits a hierarchy's groups carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// cgroup v2: memory and processes.
    Unified,
    /// cgroup v1 `memory`.
    Memory,
    /// cgroup v1 `pids`.
    Pids,
}

/// The bounds of one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineLimits {
    pub memory_bytes: u64,
    pub processes: u64,
}

/// A cgroup v2 file system's magic number (`statfs`).
const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;
/// The leaf a bot alone in its v2 group moves into, so its group may enable controllers.
const BOT_LEAF: &str = "riskgate-bot";
/// How long removing a line's groups may wait for its killed processes to be gone.
const REMOVE_GRACE: Duration = Duration::from_millis(500);
/// Groups of finished lines kept for the next ones; more are removed.
const IDLE_KEPT: usize = 16;

impl Cgroups {
    /// Finds where this process may make groups for its lines (creating and removing a
    /// probe group in each hierarchy), and removes groups left by bots that died.
    pub fn probe() -> Self {
        let found = match (
            fs::read_to_string("/proc/self/cgroup"),
            fs::read_to_string("/proc/self/mountinfo"),
        ) {
            (Ok(own), Ok(mounts)) => find(&own, &mounts),
            _ => Found::Missing("the kernel shows no control groups (/proc/self/cgroup)".into()),
        };
        Self::with(found)
    }

    /// Where no group can be made, with why.
    pub fn missing(reason: impl Into<String>) -> Self {
        Self::with(Found::Missing(reason.into()))
    }

    fn with(found: Found) -> Self {
        Self {
            found,
            idle: Arc::default(),
        }
    }

    pub fn found(&self) -> &Found {
        &self.found
    }

    pub fn is_ready(&self) -> bool {
        matches!(self.found, Found::Ready(_))
    }

    /// The groups of one line, with its limits set: those of a finished line where one is
    /// kept, else new ones.
    pub fn line(&self, limits: LineLimits) -> io::Result<Option<LineCgroup>> {
        let Found::Ready(hierarchies) = &self.found else {
            return Ok(None);
        };
        let kept = lock(&self.idle).pop();
        let groups = match kept.map(|groups| limited(groups, limits)) {
            Some(Ok(groups)) => groups,
            // A kept group that cannot take these limits (memory it still holds, say) goes.
            Some(Err(groups)) => {
                remove_all(groups);
                limited(new_groups(hierarchies)?, limits).map_err(|groups| {
                    remove_all(groups);
                    io::Error::other("the new group refused its limits")
                })?
            }
            None => limited(new_groups(hierarchies)?, limits).map_err(|groups| {
                remove_all(groups);
                io::Error::other("the new group refused its limits")
            })?,
        };
        let mut line = LineCgroup {
            groups,
            before: Counters::default(),
            idle: Arc::clone(&self.idle),
        };
        line.before = line.counters();
        Ok(Some(line))
    }
}

/// The file a line process writes `0` to, to join a group. On v1 that is `tasks`, which
/// moves the writing thread alone: a process just forked has one thread, and moving a whole
/// process (`cgroup.procs`) takes the kernel's global thread-group lock for writing, whose
/// RCU synchronisation cost 15-30 ms at the 99th percentile here (measured with strace on
/// the sandbox bench) against ~20 µs for the write itself. v2 moves only whole processes.
fn join_file(kind: Kind) -> &'static str {
    match kind {
        Kind::Unified => "cgroup.procs",
        Kind::Memory | Kind::Pids => "tasks",
    }
}

/// The groups with `limits` written, or back if one refused them.
fn limited(mut groups: Vec<Group>, limits: LineLimits) -> Result<Vec<Group>, Vec<Group>> {
    for group in &mut groups {
        if let Err(error) = group.limit(limits) {
            tracing::debug!(group = %group.dir.display(), %error, "a line's group refused its limits");
            return Err(groups);
        }
    }
    Ok(groups)
}

/// The groups of a new line, named `riskgate-<bot pid>-<n>`, one per hierarchy.
fn new_groups(hierarchies: &[Hierarchy]) -> io::Result<Vec<Group>> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        "riskgate-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut groups = Vec::with_capacity(hierarchies.len());
    for hierarchy in hierarchies {
        let dir = hierarchy.parent.join(&name);
        fs::create_dir(&dir)?;
        let procs = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.join(join_file(hierarchy.kind)));
        let procs = match procs {
            Ok(file) => OwnedFd::from(file),
            Err(e) => {
                let _ = fs::remove_dir(&dir);
                remove_all(groups);
                return Err(e);
            }
        };
        groups.push(Group {
            dir,
            kind: hierarchy.kind,
            procs,
            limits: None,
        });
    }
    Ok(groups)
}

fn find(own: &str, mounts: &str) -> Found {
    let found = match unified(own, mounts) {
        Some(dir) if controllers(&dir).is_some_and(|c| has_both(&c)) => {
            prepare_unified(&dir).map(|parent| {
                vec![Hierarchy {
                    parent,
                    kind: Kind::Unified,
                }]
            })
        }
        _ => legacy(own, mounts),
    };
    let found = found.and_then(|hierarchies| {
        for hierarchy in &hierarchies {
            remove_stale(&hierarchy.parent);
            check_writable(&hierarchy.parent)?;
        }
        Ok(hierarchies)
    });
    match found {
        Ok(hierarchies) => Found::Ready(hierarchies),
        Err(reason) => Found::Missing(reason),
    }
}

impl std::fmt::Display for Cgroups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.found {
            Found::Ready(hierarchies) => {
                let shown: Vec<String> = hierarchies
                    .iter()
                    .map(|h| h.parent.display().to_string())
                    .collect();
                let version = if hierarchies.iter().any(|h| h.kind == Kind::Unified) {
                    "cgroup v2"
                } else {
                    "cgroup v1"
                };
                write!(f, "{version} groups under {}", shown.join(" and "))
            }
            Found::Missing(reason) => f.write_str(reason),
        }
    }
}

/// The groups of one running line. Dropping it kills what is left in them, and keeps them
/// for the next line once empty (or removes them).
#[derive(Debug)]
pub struct LineCgroup {
    groups: Vec<Group>,
    /// The groups' counters when the line started (a kept group has a past).
    before: Counters,
    idle: Arc<Mutex<Vec<Vec<Group>>>>,
}

#[derive(Debug)]
struct Group {
    dir: PathBuf,
    kind: Kind,
    /// `cgroup.procs` (v2) or `tasks` (v1), open for writing: a line process joins by
    /// writing `0` (see [`join_file`]).
    procs: OwnedFd,
    /// The limits last written.
    limits: Option<LineLimits>,
}

/// The kernel's counts of refusals: memory charges refused or OOM kills, forks refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counters {
    memory: u64,
    forks: u64,
}

impl Group {
    /// Writes `limits`, unless they are the ones written last.
    fn limit(&mut self, limits: LineLimits) -> io::Result<()> {
        if self.limits == Some(limits) {
            return Ok(());
        }
        let memory = limits.memory_bytes.to_string();
        let processes = limits.processes.to_string();
        match self.kind {
            Kind::Unified => {
                write_control(&self.dir, "memory.max", &memory)?;
                // Without swap accounting the file is absent; the limit above still holds.
                let _ = write_control(&self.dir, "memory.swap.max", "0");
                write_control(&self.dir, "pids.max", &processes)?;
            }
            Kind::Memory => {
                // With swap accounted, memory+swap may never be below memory alone: when
                // raising, memory+swap goes first; when lowering (a new group's limit is
                // unlimited), memory alone does.
                let swap = self.dir.join("memory.memsw.limit_in_bytes").exists();
                let raise = self
                    .limits
                    .is_some_and(|old| old.memory_bytes < limits.memory_bytes);
                if swap && raise {
                    write_control(&self.dir, "memory.memsw.limit_in_bytes", &memory)?;
                }
                write_control(&self.dir, "memory.limit_in_bytes", &memory)?;
                if swap && !raise {
                    write_control(&self.dir, "memory.memsw.limit_in_bytes", &memory)?;
                }
            }
            Kind::Pids => write_control(&self.dir, "pids.max", &processes)?,
        }
        self.limits = Some(limits);
        Ok(())
    }

    /// This group's counts of refusals.
    fn counters(&self) -> Counters {
        let read = |file: &str| fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        let number = |file: &str| read(file).trim().parse::<u64>().unwrap_or(0);
        match self.kind {
            Kind::Unified => {
                let events = read("memory.events");
                Counters {
                    memory: counter(&events, "oom_kill") + counter(&events, "max"),
                    forks: counter(&read("pids.events"), "max"),
                }
            }
            // The OOM killer's count, and charges refused (with swap accounted, refusals are
            // counted in `memory.memsw.failcnt`).
            Kind::Memory => Counters {
                memory: counter(&read("memory.oom_control"), "oom_kill")
                    + number("memory.failcnt")
                    + number("memory.memsw.failcnt"),
                forks: 0,
            },
            Kind::Pids => Counters {
                memory: 0,
                forks: counter(&read("pids.events"), "max"),
            },
        }
    }
}

impl LineCgroup {
    /// The `cgroup.procs` descriptors a line process writes `0` to before it runs anything.
    pub fn joins(&self) -> impl Iterator<Item = &OwnedFd> {
        self.groups.iter().map(|g| &g.procs)
    }

    fn counters(&self) -> Counters {
        self.groups
            .iter()
            .map(Group::counters)
            .fold(Counters::default(), |a, b| Counters {
                memory: a.memory + b.memory,
                forks: a.forks + b.forks,
            })
    }

    /// Which limits the line reached since it started: (memory, processes).
    pub fn reached(&self) -> (bool, bool) {
        let now = self.counters();
        (
            now.memory > self.before.memory,
            now.forks > self.before.forks,
        )
    }

    /// Kills what is left in the groups; keeps them for another line once they are empty,
    /// or removes them.
    fn release(&mut self) {
        let groups = std::mem::take(&mut self.groups);
        if groups.is_empty() {
            return;
        }
        let deadline = std::time::Instant::now() + REMOVE_GRACE;
        loop {
            for group in &groups {
                kill_members(&group.dir, group.kind);
            }
            if groups.iter().all(is_empty) {
                let mut idle = lock(&self.idle);
                if idle.len() < IDLE_KEPT {
                    idle.push(groups);
                    return;
                }
                drop(idle);
                break;
            }
            if std::time::Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        remove_all(groups);
    }
}

impl Drop for LineCgroup {
    fn drop(&mut self) {
        self.release();
    }
}

fn is_empty(group: &Group) -> bool {
    fs::read_to_string(group.dir.join("cgroup.procs")).is_ok_and(|procs| procs.trim().is_empty())
}

/// Removes groups, killing what is in them, waiting a little for the killed to be gone.
fn remove_all(groups: Vec<Group>) {
    let deadline = std::time::Instant::now() + REMOVE_GRACE;
    for group in groups {
        drop(group.procs);
        loop {
            kill_members(&group.dir, group.kind);
            match fs::remove_dir(&group.dir) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(error) if std::time::Instant::now() >= deadline => {
                    tracing::warn!(group = %group.dir.display(), %error, "a line's control group could not be removed; the next start removes it");
                    break;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// SIGKILL to every process in the group: at once with `cgroup.kill` (v2, Linux 5.14),
/// else one by one from `cgroup.procs`.
fn kill_members(dir: &Path, kind: Kind) {
    if kind == Kind::Unified && write_control(dir, "cgroup.kill", "1").is_ok() {
        return;
    }
    let Ok(members) = fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in members
        .lines()
        .filter_map(|l| l.trim().parse::<libc::pid_t>().ok())
    {
        // SAFETY: kill takes plain integers. The pid was read from the line's own group, and
        // a process in it cannot be reaped and recycled while it is listed there.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

fn write_control(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    fs::OpenOptions::new()
        .write(true)
        .open(dir.join(file))?
        .write_all(value.as_bytes())
}

/// The value of `key` in a flat keyed file (`memory.events`, `pids.events`).
fn counter(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(name, _)| *name == key)
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

/// The bot's directory in the unified (v2) hierarchy, where one is mounted.
fn unified(own: &str, mounts: &str) -> Option<PathBuf> {
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mount = mount_points(mounts)
        .into_iter()
        .find(|m| m.fstype == "cgroup2")?;
    let dir = mount.join(path)?;
    // SAFETY: statfs writes only into `stat`, valid for the whole call; the path is a
    // NUL-terminated copy.
    let magic = {
        let c = std::ffi::CString::new(mount.point.as_os_str().as_encoded_bytes()).ok()?;
        let mut stat = std::mem::MaybeUninit::<libc::statfs>::zeroed();
        if unsafe { libc::statfs(c.as_ptr(), stat.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: statfs returned 0, so it filled `stat`.
        #[allow(clippy::useless_conversion)] // `f_type`'s type differs between C libraries
        i64::from(unsafe { stat.assume_init() }.f_type)
    };
    (magic == CGROUP2_SUPER_MAGIC).then_some(dir)
}

/// The controllers a v2 group offers its children.
fn controllers(dir: &Path) -> Option<Vec<String>> {
    let text = fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    Some(text.split_whitespace().map(str::to_owned).collect())
}

fn has_both(controllers: &[String]) -> bool {
    ["memory", "pids"]
        .iter()
        .all(|c| controllers.iter().any(|have| have == c))
}

/// Makes the bot's v2 group able to hold the lines' groups: its children get the memory and
/// pids controllers, which a group may only give while it holds no process itself. A bot
/// alone in its group moves into a leaf of its own first.
fn prepare_unified(dir: &Path) -> Result<PathBuf, String> {
    let enabled = fs::read_to_string(dir.join("cgroup.subtree_control"))
        .map(|text| {
            let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
            has_both(&words)
        })
        .unwrap_or(false);
    if enabled {
        return Ok(dir.to_path_buf());
    }
    let procs = fs::read_to_string(dir.join("cgroup.procs")).map_err(|e| {
        format!(
            "the bot's control group {} cannot be read: {e}",
            dir.display()
        )
    })?;
    let me = std::process::id().to_string();
    let others = procs.lines().filter(|p| p.trim() != me).count();
    if others > 0 {
        return Err(format!(
            "the bot's control group {} holds {others} other process(es), so it cannot give its children the memory and pids controllers; run the bot in a group of its own (systemd: Delegate=yes)",
            dir.display()
        ));
    }
    let leaf = dir.join(BOT_LEAF);
    let moved = fs::create_dir(&leaf)
        .or_else(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                Ok(())
            } else {
                Err(e)
            }
        })
        .and_then(|()| write_control(&leaf, "cgroup.procs", &me))
        .and_then(|()| write_control(dir, "cgroup.subtree_control", "+memory +pids"));
    moved.map_err(|e| {
        format!(
            "the bot may not manage its control group {}: {e}; run it as root, or with a delegated group (systemd: Delegate=yes)",
            dir.display()
        )
    })?;
    Ok(dir.to_path_buf())
}

/// The bot's directories in the v1 `memory` and `pids` hierarchies.
fn legacy(own: &str, mounts: &str) -> Result<Vec<Hierarchy>, String> {
    let points = mount_points(mounts);
    let mut found = Vec::new();
    for (controller, kind) in [("memory", Kind::Memory), ("pids", Kind::Pids)] {
        let path = own.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, list, path) = (parts.next()?, parts.next()?, parts.next()?);
            list.split(',').any(|c| c == controller).then_some(path)
        });
        let mount = points
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller));
        let Some(dir) = path.zip(mount).and_then(|(path, mount)| mount.join(path)) else {
            return Err(format!(
                "no cgroup hierarchy with the {controller} controller is mounted (neither v2 with memory and pids, nor v1)"
            ));
        };
        found.push(Hierarchy { parent: dir, kind });
    }
    Ok(found)
}

/// One mounted cgroup file system, from `/proc/self/mountinfo`.
#[derive(Debug, PartialEq, Eq)]
struct MountPoint {
    /// The directory of the hierarchy the mount shows at its mount point.
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

impl MountPoint {
    /// Where the group at `path` (as `/proc/self/cgroup` names it) is under this mount.
    fn join(&self, path: &str) -> Option<PathBuf> {
        let relative = if self.root == "/" {
            path
        } else {
            path.strip_prefix(&self.root)?
        };
        let relative = relative.trim_start_matches('/');
        if relative.split('/').any(|part| part == "..") {
            return None;
        }
        Some(if relative.is_empty() {
            self.point.clone()
        } else {
            self.point.join(relative)
        })
    }
}

/// The cgroup mounts in a mountinfo text (fields: id, parent, dev, root, point, options,
/// optional fields, `-`, fstype, source, super options).
fn mount_points(mountinfo: &str) -> Vec<MountPoint> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let mut rest = after.split(' ');
            let fstype = rest.next()?;
            let options = rest.nth(1).unwrap_or("");
            if !fstype.starts_with("cgroup") {
                return None;
            }
            Some(MountPoint {
                root: unescape(fields.get(3)?),
                point: PathBuf::from(unescape(fields.get(4)?)),
                fstype: fstype.to_owned(),
                options: options.to_owned(),
            })
        })
        .collect()
}

/// mountinfo (and the mount table, `/proc/self/mounts`) escapes space, tab, newline and
/// backslash as three octal digits.
pub(super) fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && let Ok(value) = u8::from_str_radix(&field[i + 1..i + 4], 8)
        {
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Creates and removes a probe group, so a hierarchy that only looks usable is reported.
fn check_writable(parent: &Path) -> Result<(), String> {
    let probe = parent.join(format!("riskgate-{}-probe", std::process::id()));
    fs::create_dir(&probe)
        .and_then(|()| fs::remove_dir(&probe))
        .map_err(|e| {
            format!(
                "the bot may not create control groups in {}: {e}; run it as root, or with a delegated group (systemd: Delegate=yes)",
                parent.display()
            )
        })
}

/// Removes the (empty) groups of lines whose bot is gone.
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = stale_owner(&name) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let _ = fs::remove_dir(entry.path());
    }
}

/// The bot pid in a line group's name `riskgate-<pid>-<n>`.
fn stale_owner(name: &OsStr) -> Option<u32> {
    let name = name.to_str()?;
    let rest = name.strip_prefix("riskgate-")?;
    let (pid, _) = rest.split_once('-')?;
    pid.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn mountinfo_gives_the_cgroup_mounts() {
        let points = mount_points(HYBRID);
        assert_eq!(points.len(), 4);
        assert_eq!(points[0].point, PathBuf::from("/sys/fs/cgroup/memory"));
        assert_eq!(points[0].options, "rw,memory");
        assert_eq!(points[3].fstype, "cgroup2");
    }

    #[test]
    fn v1_groups_are_found_below_the_bots_own() {
        let own = "8:pids:/\n4:memory:/svc/abc\n0::/\n";
        let found = legacy(own, HYBRID).expect("v1");
        assert_eq!(
            found,
            vec![
                Hierarchy {
                    parent: PathBuf::from("/sys/fs/cgroup/memory/svc/abc"),
                    kind: Kind::Memory
                },
                Hierarchy {
                    parent: PathBuf::from("/sys/fs/cgroup/pids"),
                    kind: Kind::Pids
                },
            ]
        );
        let without_pids = "4:memory:/\n";
        assert!(legacy(without_pids, HYBRID).unwrap_err().contains("pids"));
    }

    #[test]
    fn a_mount_of_a_sub_hierarchy_strips_its_root() {
        let info = "50 1 0:40 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let point = &mount_points(info)[0];
        assert_eq!(
            point.join("/docker/abc/lines"),
            Some(PathBuf::from("/sys/fs/cgroup/lines"))
        );
        assert_eq!(
            point.join("/docker/abc"),
            Some(PathBuf::from("/sys/fs/cgroup"))
        );
        assert_eq!(point.join("/elsewhere"), None);
        assert_eq!(point.join("/docker/abc/../x"), None);
    }

    #[test]
    fn escaped_mount_points_are_read_back() {
        assert_eq!(unescape(r"/mnt/with\040space"), "/mnt/with space");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape(r"/odd\"), r"/odd\");
    }

    #[test]
    fn keyed_counters_are_read() {
        let events = "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n";
        assert_eq!(counter(events, "oom_kill"), 1);
        assert_eq!(counter(events, "max"), 3);
        assert_eq!(counter(events, "absent"), 0);
    }

    #[test]
    fn only_line_groups_of_a_bot_are_stale_candidates() {
        assert_eq!(stale_owner(OsStr::new("riskgate-123-7")), Some(123));
        assert_eq!(stale_owner(OsStr::new("riskgate-bot")), None);
        assert_eq!(stale_owner(OsStr::new("other-123-7")), None);
    }
}
