//! The operating-system sandbox every command line runs in (Linux: Landlock and seccomp).
//!
//! The gate decides whether a person is asked; this module decides what a line can do once
//! it runs. A line that runs without a click ([`Walls::ReadOnly`]) may:
//! - read (and run programs from) the system directories, the directories of the programs on
//!   the sandboxed PATH with their install prefixes, a few named files under `/etc` and
//!   `/dev`, the CPU and memory-node facts of `/sys` ([`SYS_READ_PATHS`]), the installed
//!   packages' databases ([`PACKAGE_READ_PATHS`]), `/proc` (other processes' private files stay closed: Landlock refuses to trace
//!   or inspect a process outside the sandbox, which `/proc/<pid>/environ` requires), the
//!   operator's `command.sandbox.read_paths`, and the workspace;
//! - write nothing but a private temporary directory (`TMPDIR`), removed after the line;
//! - make no network connection (Landlock's TCP rules, and seccomp refuses `socket` for
//!   every address family but the kernel's own routing and socket-diagnostics netlink, which
//!   `ip addr` and `ss` read and which change nothing for a process without capabilities)
//!   and reach no other process (Landlock scopes signals and abstract
//!   UNIX sockets; seccomp refuses ptrace, `process_vm_*`, io_uring, `setsid` and
//!   `setpgid`, so nothing leaves the line's process group);
//! - use at most the memory, CPU seconds, processes, file size and open files of the
//!   settings (`setrlimit`), and holds no capability, even when the bot runs as root.
//!
//! In a line without a click, a `git` process, or a wrapper that names git among its
//! arguments (`timeout 5 git diff`, `xargs git log`) or a shell given a script that names it
//! (`sh -c 'git diff'`), gets the right to execute only git
//! itself (its binary, its loader, its exec path, and the wrapper), and git's system and
//! global configuration are ignored with the program-running keys turned off
//! ([`git_environment`]): a repository's
//! `.git/config`, `.gitattributes` or a tracked `.gitconfig` cannot make a read-only git
//! command run a program (fsmonitor, hooks, external diff, textconv, filters).
//!
//! Mercurial, in a line without a click, reads no configuration at all
//! ([`hg_environment`]): a repository's `.hg/hgrc` cannot load an extension or run a hook.
//!
//! Confirmed lines run inside the same walls with the workspace writable and the network
//! open by default (`command.sandbox.confirmed_*`), or without Landlock and seccomp when the
//! operator turns `confirmed_sandboxed` off.
//!
//! Every child, sandboxed or not, gets `PR_SET_PDEATHSIG` (it dies with the bot), and its
//! process group is watched by the [`reaper`](super::reaper), a small process that kills
//! the groups of running lines when the bot dies, so a grandchild cannot outlive it either.
//!
//! Everything is built in the bot before the fork (the ruleset's descriptor, the seccomp
//! program); the child only makes system calls, as a forked child of a threaded process
//! must. Where the kernel lacks Landlock ABI [`MIN_ABI`] (signal scoping), [`Support`] is
//! `Missing` and the gate lets no command line run without a click.

use std::collections::{BTreeSet, HashMap};
use std::ffi::{CString, OsString};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

use super::cgroup::{Cgroups, Found, LineCgroup, LineLimits};
use super::view::{Layout, LineView, ViewPlan, ViewSupport};
use super::watch::{WatchState, WorkspaceWatch};
use crate::config::SandboxSettings;

/// The Landlock ABI the sandbox needs: 4 brought TCP rules, 6 the scoping of signals and
/// abstract UNIX sockets.
pub const MIN_ABI: u32 = 6;

/// Set to `1` in the bot's environment, this makes the sandbox report itself missing, as on
/// a kernel without Landlock: only ever stricter (no line runs without a click). For
/// trying that path on a machine that has Landlock.
pub const SIMULATE_MISSING_ENV: &str = "RISKGATE_SANDBOX_SIMULATE_MISSING";

/// System directories every sandboxed process may read and run programs from.
pub const SYSTEM_READ_PATHS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
];

/// Files and directories under `/etc` that programs read to start and to behave (the
/// loader's cache, users and groups for `ls -l`, time zones, locales, alternatives behind
/// `python3` and friends, `file`'s magic, name resolution, OpenSSL's configuration (node
/// reads it to start), CA certificates for confirmed lines with network, and the files that
/// say what the system is (`/etc/os-release`, `/etc/lsb-release` and `/etc/debian_version`,
/// which `lsb_release` reads, `/etc/issue`, `/etc/shells`). Nothing else of `/etc` is
/// readable: not `/etc/shadow`, SSH host keys, or an operator's `/etc/riskgate`.
pub const ETC_READ_PATHS: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/alternatives",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/mime.types",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/issue",
    "/etc/shells",
    "/etc/perl",
    "/etc/python3",
    "/etc/terminfo",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/pki/tls/certs",
    "/etc/crypto-policies",
    "/etc/manpath.config",
    "/etc/groff",
    "/etc/dpkg",
    "/etc/pacman.conf",
];

/// The installed packages' databases, which the package managers' queries read (`dpkg -l`,
/// `dpkg -S`, `apt list --installed`, `rpm -qa`, `pacman -Q`): what is installed, from
/// which package, and the public package indexes. Not `/etc/apt`'s configuration or
/// sources, which may hold a repository's or a proxy's credentials (`auth.conf.d`).
pub const PACKAGE_READ_PATHS: &[&str] = &[
    "/var/lib/dpkg",
    "/var/lib/apt/lists",
    "/var/cache/apt",
    "/var/lib/rpm",
    "/var/lib/pacman/local",
    "/var/lib/pacman/sync",
];

/// The parts of `/sys` that state facts about the CPUs and memory nodes (`lscpu`, `nproc`,
/// `lsmem`, `numactl -H` read them): their topology, caches and frequencies. Nothing else of
/// `/sys` is readable: not the devices' own directories, which hold serial numbers and
/// hardware addresses, nor the firmware's tables.
pub const SYS_READ_PATHS: &[&str] = &[
    "/sys/devices/system/cpu",
    "/sys/devices/system/node",
    "/sys/devices/system/memory",
];

/// Devices a sandboxed process may read.
pub const READ_DEVICES: &[&str] = &["/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/// The one device it may also write.
pub const NULL_DEVICE: &str = "/dev/null";
/// The process file system: the line's own where it has a view, else the machine's.
const PROC: &str = "/proc";

/// The per-line limits a line ran into, each with its setting's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LimitsReached {
    /// `memory_bytes`, when the line's memory group refused or reclaimed memory.
    pub memory: Option<u64>,
    /// `processes`, when a fork was refused.
    pub processes: Option<u64>,
}

/// How a line runs; what `riskgate assess` reports as `"sandbox"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walls {
    /// Without a click: read-only, private TMPDIR, no network.
    ReadOnly,
    /// Confirmed, inside the sandbox with what the settings allow.
    Confirmed {
        workspace_write: bool,
        network: bool,
    },
    /// Confirmed with the sandbox turned off (`command.sandbox.confirmed_sandboxed = false`).
    Off,
}

impl Walls {
    /// The walls of a confirmed line under `settings`.
    pub fn confirmed(settings: &SandboxSettings) -> Self {
        if settings.confirmed_sandboxed {
            Self::Confirmed {
                workspace_write: settings.confirmed_workspace_write,
                network: settings.confirmed_network,
            }
        } else {
            Self::Off
        }
    }

    /// A short name: `read-only`, `workspace-write`, `workspace-write+network`,
    /// `read-only+network`, `off`.
    pub fn label(self) -> &'static str {
        match self {
            Self::ReadOnly
            | Self::Confirmed {
                workspace_write: false,
                network: false,
            } => "read-only",
            Self::Confirmed {
                workspace_write: true,
                network: false,
            } => "workspace-write",
            Self::Confirmed {
                workspace_write: true,
                network: true,
            } => "workspace-write+network",
            Self::Confirmed {
                workspace_write: false,
                network: true,
            } => "read-only+network",
            Self::Off => "off",
        }
    }

    fn network(self) -> bool {
        match self {
            Self::ReadOnly => false,
            Self::Confirmed { network, .. } => network,
            Self::Off => true,
        }
    }

    fn workspace_write(self) -> bool {
        match self {
            Self::ReadOnly => false,
            Self::Confirmed {
                workspace_write, ..
            } => workspace_write,
            Self::Off => true,
        }
    }
}

impl fmt::Display for Walls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Whether this kernel can build the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Ready { abi: u32 },
    Missing { reason: String },
}

impl Support {
    pub fn is_ready(&self) -> bool {
        matches!(self, Self::Ready { .. })
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ready { abi } => write!(f, "Landlock ABI {abi} and seccomp"),
            Self::Missing { reason } => f.write_str(reason),
        }
    }
}

/// What the kernel offers, probed once per process.
pub fn kernel_support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(probe).clone()
}

fn probe() -> Support {
    if std::env::var_os(SIMULATE_MISSING_ENV).is_some_and(|v| v == "1") {
        return Support::Missing {
            reason: format!("{SIMULATE_MISSING_ENV}=1 makes the sandbox report itself missing"),
        };
    }
    if !cfg!(target_os = "linux") {
        return Support::Missing {
            reason: "the sandbox needs Linux (Landlock and seccomp)".to_owned(),
        };
    }
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only asks for
    // the ABI version; it reads and writes no memory of ours.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0_usize,
            1_u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if abi < 0 {
        let error = io::Error::last_os_error();
        let why = match error.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel was built without Landlock".to_owned(),
            Some(libc::EOPNOTSUPP) => {
                "Landlock is built into the kernel but not enabled (add `landlock` to the `lsm=` boot parameter)"
                    .to_owned()
            }
            _ => format!("asking the kernel for Landlock failed: {error}"),
        };
        return Support::Missing {
            reason: format!("{why}; a container's seccomp profile can also hide it"),
        };
    }
    let abi = u32::try_from(abi).unwrap_or(0);
    if abi < MIN_ABI {
        return Support::Missing {
            reason: format!(
                "the kernel has Landlock ABI {abi}, and the sandbox needs ABI {MIN_ABI} (Linux 6.12 or later) to keep signals and sockets inside it"
            ),
        };
    }
    Support::Ready { abi }
}

/// Why a line's sandbox could not be built; the line does not run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "no command runs without a person's confirmation here, because the sandbox is unavailable: {0}"
    )]
    Unavailable(String),
    #[error("the sandbox's private temporary directory could not be created: {0}")]
    TempDir(#[source] io::Error),
    #[error("the sandbox could not be built: {0}")]
    Build(String),
    #[error(
        "nothing ran: the workspace holds a file with {links} hard links (`{path}`), not all of them names in the workspace, and a line run without a person's confirmation could read a file outside the workspace through such a link. Ask with risk_level \"medium\" so a person confirms the line, or remove the extra links (copy the file instead)"
    )]
    HardLink { path: String, links: u64 },
    #[error(
        "nothing ran: the workspace holds a {kind} (`{path}`), and a line run without a person's confirmation could read through it what lies outside the workspace, or wait on it. Ask with risk_level \"medium\" so a person confirms the line, or remove it"
    )]
    SpecialFile { path: String, kind: &'static str },
    #[error(
        "nothing ran: the workspace has more than {limit} entries, too many to check for hard links before a line runs without a person's confirmation. Ask with risk_level \"medium\", or raise command.sandbox.hard_link_scan_limit"
    )]
    TooLargeToScan { limit: u64 },
}

/// Looks through the workspace, before a line runs without a click, for what the sandbox's
/// path rules cannot judge: a regular file with a hard link outside the workspace (Landlock
/// judges paths, and a hard link inside the workspace is a path inside it, whatever file it
/// names), and a special file: a device node (reading it reads a disk or a terminal, i.e.
/// what lies outside the workspace), a FIFO (reading it waits for, and takes, what another
/// process writes) or a socket. A file whose every link is a name in the workspace leads
/// nowhere else ([`LinkedFiles`]): cargo links its outputs into `target/debug`, Mercurial
/// its journal into `.hg`. Stops at the first special file, or after `limit` entries.
/// Symlinks are not followed (the sandbox refuses what they lead to outside).
///
/// This is the whole walk, every time: lines use it where the workspace is not watched
/// ([`WorkspaceWatch`](super::watch::WorkspaceWatch) says when).
pub fn check_workspace(root: &Path, limit: u64) -> Result<(), SandboxError> {
    let mut seen: u64 = 0;
    let mut linked = LinkedFiles::default();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > limit {
                return Err(SandboxError::TooLargeToScan { limit });
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
                continue;
            }
            let meta = std::cell::OnceCell::new();
            let offence = Offence::of(kind, || {
                meta.get_or_init(|| entry.metadata().ok())
                    .as_ref()
                    .map(MetadataExt::nlink)
            });
            let path = entry.path();
            let shown = path.strip_prefix(root).unwrap_or(&path);
            match (offence, meta.get().and_then(Option::as_ref)) {
                (None, _) => {}
                (Some(Offence::Links(_)), Some(meta)) => linked.add(root, shown, meta),
                (Some(offence), _) => return Err(offence.refusal(shown)),
            }
        }
    }
    linked.leading_out()
}

/// The workspace's files with several hard links, each by the names of it the workspace
/// holds. A name is a directory entry, the directory's device and inode and the entry's
/// name, so a directory shown twice (a bind mount) does not count its entries twice. A file
/// with fewer such names than links has a name elsewhere, through which a line could read
/// or be given what lies outside; one with as many has none.
#[derive(Debug, Default)]
pub(super) struct LinkedFiles {
    /// By the file's device and inode.
    files: HashMap<(u64, u64), LinkedFile>,
    /// The directories looked at, by path: device and inode (many names share one).
    directories: HashMap<PathBuf, Option<(u64, u64)>>,
}

#[derive(Debug)]
struct LinkedFile {
    /// Its link count, the highest seen.
    links: u64,
    /// The names of it seen: directory device and inode, entry name.
    names: BTreeSet<(u64, u64, OsString)>,
    /// The first of its paths (shown in a refusal).
    shown: PathBuf,
}

impl LinkedFiles {
    /// Adds the name `shown` (relative to `root`) of the file `meta` describes.
    pub(super) fn add(&mut self, root: &Path, shown: &Path, meta: &std::fs::Metadata) {
        let full = root.join(shown);
        // The directory as it is (a walk's paths hold no symlink, but another path to the
        // same entry counts once). A name whose directory cannot be looked at counts for
        // nothing: the file is refused unless its other names account for every link.
        let directory = full.parent().and_then(|parent| {
            *self
                .directories
                .entry(parent.to_path_buf())
                .or_insert_with(|| {
                    std::fs::metadata(parent)
                        .ok()
                        .map(|dir| (dir.dev(), dir.ino()))
                })
        });
        let file = self
            .files
            .entry((meta.dev(), meta.ino()))
            .or_insert_with(|| LinkedFile {
                links: meta.nlink(),
                names: BTreeSet::new(),
                shown: shown.to_path_buf(),
            });
        file.links = file.links.max(meta.nlink());
        if shown < file.shown.as_path() {
            file.shown = shown.to_path_buf();
        }
        if let (Some((dev, ino)), Some(name)) = (directory, full.file_name()) {
            file.names.insert((dev, ino, name.to_owned()));
        }
    }

    /// The refusal for the first file (by path) with a link outside the workspace.
    pub(super) fn leading_out(&self) -> Result<(), SandboxError> {
        match self
            .files
            .values()
            .filter(|file| (file.names.len() as u64) < file.links)
            .min_by(|a, b| a.shown.cmp(&b.shown))
        {
            Some(file) => Err(Offence::Links(file.links).refusal(&file.shown)),
            None => Ok(()),
        }
    }
}

/// Why an entry of the workspace stops lines run without a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Offence {
    /// A regular file with this many hard links.
    Links(u64),
    /// A device node, FIFO or socket, by name.
    Special(&'static str),
}

impl Offence {
    /// An entry of type `kind`; `links` is asked only for a regular file.
    pub(super) fn of(kind: std::fs::FileType, links: impl FnOnce() -> Option<u64>) -> Option<Self> {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_block_device() {
            Some(Self::Special("block device"))
        } else if kind.is_char_device() {
            Some(Self::Special("character device"))
        } else if kind.is_fifo() {
            Some(Self::Special("FIFO"))
        } else if kind.is_socket() {
            Some(Self::Special("socket"))
        } else if kind.is_file() {
            links().filter(|&n| n > 1).map(Self::Links)
        } else {
            None
        }
    }

    /// The refusal of a line, naming the entry by its path in the workspace.
    pub(super) fn refusal(self, shown: &Path) -> SandboxError {
        let path = shown.display().to_string();
        match self {
            Self::Links(links) => SandboxError::HardLink { path, links },
            Self::Special(kind) => SandboxError::SpecialFile { path, kind },
        }
    }
}

/// The sandbox of one runner: what every line shares, built once.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

struct Inner {
    support: Support,
    settings: SandboxSettings,
    /// Paths every process may read, opened once (`O_PATH`); `/proc` is apart.
    reads: Vec<Grant>,
    /// The machine's `/proc`, for lines without a view of their own.
    proc: Option<Grant>,
    /// The operator's files every line's HOME starts with (`home_files`), read at start.
    home_files: Vec<(PathBuf, Vec<u8>)>,
    /// Rooms with a view made ahead for the next line: `[writable workspace, read-only]`.
    prepared: std::sync::Mutex<[Option<Room>; 2]>,
    /// Whether a room of each kind is being made ahead.
    preparing: [std::sync::atomic::AtomicBool; 2],
    /// `/dev/null`, readable and writable.
    null: Option<Grant>,
    workspace: PathBuf,
    /// Where `git` is on the sandboxed PATH.
    git: Option<PathBuf>,
    /// What lines run without a click need of the workspace, known without a walk of it.
    watch: WorkspaceWatch,
    offline: Arc<Filters>,
    online: Arc<Filters>,
}

/// A path a rule names, kept open so each line's ruleset is built without a path lookup.
struct Grant {
    path: PathBuf,
    fd: PathFd,
    dir: bool,
}

impl Grant {
    fn open(path: &Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        let fd = PathFd::new(path).ok()?;
        Some(Self {
            path: path.to_path_buf(),
            fd,
            dir: meta.is_dir(),
        })
    }
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox")
            .field("support", &self.inner.support)
            .field(
                "reads",
                &self
                    .inner
                    .reads
                    .iter()
                    .map(|g| g.path.display().to_string())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Sandbox {
    /// The sandbox for lines run in `workspace` with `search_path` as PATH, on this kernel.
    pub fn new(settings: &SandboxSettings, workspace: &Path, search_path: &OsString) -> Self {
        Self::with_support(settings, workspace, search_path, kernel_support())
    }

    /// [`Sandbox::new`] with the kernel's answer given, so tests can take the missing path.
    pub fn with_support(
        settings: &SandboxSettings,
        workspace: &Path,
        search_path: &OsString,
        support: Support,
    ) -> Self {
        let mut paths: Vec<PathBuf> = SYSTEM_READ_PATHS
            .iter()
            .chain(ETC_READ_PATHS)
            .chain(SYS_READ_PATHS)
            .chain(PACKAGE_READ_PATHS)
            .chain(READ_DEVICES)
            .map(PathBuf::from)
            .collect();
        paths.extend(program_directories(search_path));
        paths.extend(settings.read_paths.iter().cloned());
        let mut seen = Vec::new();
        paths.retain(|path| {
            let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
            let new = !seen.contains(&canonical);
            seen.push(canonical);
            new
        });
        let reads = paths
            .iter()
            .filter(|p| p.as_path() != Path::new(PROC))
            .filter_map(|p| Grant::open(p))
            .collect();
        let (offline, online) = match (Filters::build(false), Filters::build(true)) {
            (Ok(offline), Ok(online)) => (offline, online),
            (Err(e), _) | (_, Err(e)) => {
                return Self::unavailable(settings, workspace, e);
            }
        };
        Self {
            inner: Arc::new(Inner {
                watch: workspace_watch(settings, workspace, &support),
                support,
                settings: settings.clone(),
                reads,
                proc: Grant::open(Path::new(PROC)),
                home_files: read_home_files(settings),
                prepared: std::sync::Mutex::default(),
                preparing: Default::default(),
                null: Grant::open(Path::new(NULL_DEVICE)),
                workspace: workspace.to_path_buf(),
                git: find_on_path(search_path, "git"),
                offline: Arc::new(offline),
                online: Arc::new(online),
            }),
        }
    }

    fn unavailable(settings: &SandboxSettings, workspace: &Path, reason: String) -> Self {
        let support = Support::Missing { reason };
        Self {
            inner: Arc::new(Inner {
                watch: workspace_watch(settings, workspace, &support),
                support,
                settings: settings.clone(),
                reads: Vec::new(),
                proc: None,
                home_files: read_home_files(settings),
                prepared: std::sync::Mutex::default(),
                preparing: Default::default(),
                null: None,
                workspace: workspace.to_path_buf(),
                git: None,
                offline: Arc::default(),
                online: Arc::default(),
            }),
        }
    }

    pub fn support(&self) -> &Support {
        &self.inner.support
    }

    pub fn settings(&self) -> &SandboxSettings {
        &self.inner.settings
    }

    /// What a line run without a click needs of the workspace before it starts: no regular
    /// file with a hard link outside it, no device node, FIFO or socket ([`check_workspace`]'s
    /// refusals), known from the workspace's watch or, where it is not watched, by walking
    /// it.
    pub fn check_workspace(&self) -> Result<(), SandboxError> {
        self.inner.watch.check()
    }

    /// Walks and watches the workspace now unless done (at start, off the runtime), and
    /// says how it stands.
    pub fn watch_workspace(&self) -> WatchState {
        self.inner.watch.start()
    }

    /// How the workspace's watch stands, without starting it.
    pub fn workspace_watch(&self) -> WatchState {
        self.inner.watch.state()
    }

    /// The paths every sandboxed process may read, as found on this machine.
    pub fn read_paths(&self) -> Vec<&Path> {
        let reads = self.inner.reads.iter().chain(&self.inner.proc);
        reads.map(|g| g.path.as_path()).collect()
    }

    /// Where lines get control groups, found on first use (not by `riskgate assess`, which
    /// runs nothing).
    fn cgroups(&self) -> &'static Cgroups {
        static MISSING: OnceLock<Cgroups> = OnceLock::new();
        if self.inner.support.is_ready() {
            per_line_cgroups()
        } else {
            MISSING.get_or_init(|| Cgroups::missing("lines run without the sandbox here"))
        }
    }

    /// Whether lines get a view of their own, found on first use.
    fn view(&self) -> &'static ViewSupport {
        static MISSING: OnceLock<ViewSupport> = OnceLock::new();
        if self.inner.support.is_ready() {
            per_line_view()
        } else {
            MISSING
                .get_or_init(|| ViewSupport::Missing("lines run without the sandbox here".into()))
        }
    }

    /// Whether a line sees its own processes alone: each line gets a view with a private
    /// `/proc` (probed on first use). Where not, `ps` in a line lists the whole machine.
    pub fn lines_see_own_processes(&self) -> bool {
        self.view().is_ready()
    }

    /// What is bounded or private per line here, and what is not (with why): for the
    /// start-up log and `check-config`.
    pub fn per_line(&self) -> PerLine {
        let s = &self.inner.settings;
        let cgroups = self.cgroups();
        let limits = match cgroups.found() {
            Found::Ready(_) => Ok(format!(
                "memory {} and {} processes per line ({cgroups})",
                bytes(s.memory_bytes),
                s.processes,
            )),
            Found::Missing(reason) => Err(format!(
                "memory and processes are limited per process only (setrlimit: a line may fork past them, shared memory is not counted, and RLIMIT_NPROC counts every process of the bot's user, or nothing for root), because {reason}"
            )),
        };
        let view = match self.view() {
            ViewSupport::Ready => Ok(format!(
                "a /proc showing only the line's own processes, HOME and TMPDIR in a tmpfs of {}, the workspace seen nodev",
                bytes(s.tmp_bytes)
            )),
            ViewSupport::Missing(reason) => Err(format!(
                "lines see every process in /proc (command lines included; mounting the machine's /proc with hidepid=invisible hides them), keep HOME and TMPDIR on disk (each file bounded by file_size_bytes, not the whole), and confirmed lines may read a device node in the workspace, because {reason}"
            )),
        };
        PerLine { limits, view }
    }

    /// Prepares one line's sandbox: its private directory (HOME, TMPDIR and XDG
    /// directories, empty but for the operator's `home_files`), and for sandboxed walls its
    /// control groups and its view. `ReadOnly` and sandboxed confirmed walls fail where the
    /// kernel lacks Landlock.
    pub fn line(&self, walls: Walls) -> Result<LineSandbox, SandboxError> {
        if walls != Walls::Off
            && let Support::Missing { reason } = &self.inner.support
        {
            return Err(SandboxError::Unavailable(reason.clone()));
        }
        let settings = &self.inner.settings;
        let sandboxed = walls != Walls::Off;
        let room = if sandboxed && self.view().is_ready() {
            let read_only = !walls.workspace_write();
            let kept = lock(&self.inner.prepared)[usize::from(read_only)].take();
            match kept {
                Some(room) => room,
                None => self.room(Some(read_only))?,
            }
        } else {
            self.room(None)?
        };
        let cgroup = if sandboxed {
            let limits = LineLimits {
                memory_bytes: settings.memory_bytes,
                processes: settings.processes,
            };
            self.cgroups()
                .line(limits)
                .map_err(|e| SandboxError::Build(format!("the line's control groups: {e}")))?
        } else {
            None
        };
        let workspace =
            PathFd::new(&self.inner.workspace).map_err(|e| SandboxError::Build(e.to_string()))?;
        Ok(LineSandbox {
            inner: Arc::clone(&self.inner),
            walls,
            cgroup,
            room,
            workspace,
            shared: OnceLock::new(),
        })
    }

    /// A line's private directory: inside a view of its own (`Some(read_only)`: how the
    /// workspace is mounted there), or on disk.
    fn room(&self, view: Option<bool>) -> Result<Room, SandboxError> {
        let dir = tempfile::Builder::new()
            .prefix("riskgate-line-")
            .tempdir()
            .map_err(SandboxError::TempDir)?;
        let private = Private::new(dir.path());
        let layout = private.layout(&self.inner.home_files);
        let place = match view {
            Some(read_only) => {
                let plan = ViewPlan::new(
                    dir.path(),
                    &self.inner.workspace,
                    self.inner.settings.tmp_bytes,
                    read_only,
                    &layout,
                )
                .and_then(|plan| LineView::create(&plan))
                .map_err(|e| SandboxError::Build(e.to_string()))?;
                Place::View(plan)
            }
            None => {
                layout.create_on_disk().map_err(SandboxError::TempDir)?;
                Place::Disk(
                    PathFd::new(dir.path()).map_err(|e| SandboxError::Build(e.to_string()))?,
                )
            }
        };
        Ok(Room {
            place,
            private,
            _dir: dir,
        })
    }

    /// Makes the next line's room with a view (`read_only`: how the workspace is mounted
    /// there) unless one is kept or being made: called as a line's sandbox ends, off the
    /// line's path, so the next line does not wait for the fork and the mounts (~0.6 ms
    /// measured) and its processes do not contend with them. One is kept per kind of
    /// workspace mount; nothing in it was ever used.
    fn prepare(&self, read_only: bool) {
        use std::sync::atomic::Ordering;
        let slot = usize::from(read_only);
        if lock(&self.inner.prepared)[slot].is_some()
            || self.inner.preparing[slot].swap(true, Ordering::AcqRel)
        {
            return;
        }
        let made = self.room(Some(read_only));
        self.inner.preparing[slot].store(false, Ordering::Release);
        match made {
            Ok(room) => {
                let mut prepared = lock(&self.inner.prepared);
                if prepared[slot].is_none() {
                    prepared[slot] = Some(room);
                }
            }
            Err(error) => tracing::debug!(%error, "a line's view could not be made ahead"),
        }
    }
}

/// The workspace's watch under `settings`: off where the operator turned it off, or where
/// no line runs without a click (every check walks then, and the first never does).
fn workspace_watch(
    settings: &SandboxSettings,
    workspace: &Path,
    support: &Support,
) -> WorkspaceWatch {
    let watched = settings.watch_workspace && support.is_ready();
    WorkspaceWatch::new(workspace, settings.hard_link_scan_limit, watched)
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What lines get per line on this machine; `Err` says what is missing and why.
#[derive(Debug, Clone)]
pub struct PerLine {
    /// Memory and processes bounded for the whole line (control groups).
    pub limits: Result<String, String>,
    /// A view of its own: private `/proc`, a bounded tmpfs, a `nodev` workspace.
    pub view: Result<String, String>,
}

impl PerLine {
    /// Whether a device node in the workspace reads as nothing in a line's view.
    pub fn workspace_nodev(&self) -> bool {
        self.view.is_ok()
    }
}

/// A size for people: `1 GiB`, `512 MiB`, or bytes.
fn bytes(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", n / GIB)
    } else if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else {
        format!("{n} bytes")
    }
}

/// The control groups of this process's lines, found once.
fn per_line_cgroups() -> &'static Cgroups {
    static CGROUPS: OnceLock<Cgroups> = OnceLock::new();
    CGROUPS.get_or_init(Cgroups::probe)
}

/// Whether this process can give lines a view of their own, found once.
fn per_line_view() -> &'static ViewSupport {
    static VIEW: OnceLock<ViewSupport> = OnceLock::new();
    VIEW.get_or_init(ViewSupport::probe)
}

/// The operator's `home_files`, read once; a file that cannot be read is logged and left
/// out (`check-config` names it before the bot starts).
fn read_home_files(settings: &SandboxSettings) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    for (name, source) in &settings.home_files {
        match std::fs::read(source) {
            Ok(bytes) => files.push((PathBuf::from(name), bytes)),
            Err(error) => tracing::error!(
                file = %source.display(),
                %error,
                "command.sandbox.home_files names a file that cannot be read; lines start without it"
            ),
        }
    }
    files
}

/// A line's private directory: everything it may write outside the workspace, made for it
/// and removed after it. Nothing an earlier line or call left is in it.
#[derive(Debug, Clone)]
pub struct Private {
    root: PathBuf,
}

impl Private {
    fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    /// HOME.
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    /// TMPDIR.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// XDG_RUNTIME_DIR.
    pub fn run(&self) -> PathBuf {
        self.root.join("run")
    }

    /// Its directories, and the operator's files in HOME (their parent directories made
    /// first).
    fn layout(&self, home_files: &[(PathBuf, Vec<u8>)]) -> Layout {
        let home = self.home();
        let mut dirs = vec![home.clone(), self.tmp(), self.run()];
        let mut files = Vec::new();
        for (name, bytes) in home_files {
            let path = home.join(name);
            let mut parents: Vec<PathBuf> = path
                .ancestors()
                .skip(1)
                .take_while(|a| *a != home)
                .map(Path::to_path_buf)
                .collect();
            parents.reverse();
            for parent in parents {
                if !dirs.contains(&parent) {
                    dirs.push(parent);
                }
            }
            files.push((path, bytes.clone()));
        }
        Layout { dirs, files }
    }

    /// The variables that put a program's per-user files in the private directory: HOME,
    /// TMPDIR and the XDG base directories; git reads no system configuration, and as
    /// global configuration only the operator's `.gitconfig` from `home_files` (if any).
    pub fn environment(&self, operator_gitconfig: bool) -> Vec<(OsString, OsString)> {
        let home = self.home();
        let global = if operator_gitconfig {
            home.join(".gitconfig").into_os_string()
        } else {
            OsString::from(NULL_DEVICE)
        };
        vec![
            ("HOME".into(), home.clone().into_os_string()),
            ("TMPDIR".into(), self.tmp().into_os_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join(".config").into_os_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                home.join(".cache").into_os_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                home.join(".local/share").into_os_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join(".local/state").into_os_string(),
            ),
            ("XDG_RUNTIME_DIR".into(), self.run().into_os_string()),
            ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
            ("GIT_CONFIG_GLOBAL".into(), global),
        ]
    }
}

/// Variables the line's own directories and git's lock-down set: `command.env_allow` cannot
/// pass the bot's values of these.
pub const RESERVED_VARIABLES: &[&str] = &[
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CEILING_DIRECTORIES",
];

/// One line's sandbox: its walls, its private directory (removed when this is dropped),
/// its control groups and its view. Fields drop in order: the groups (killing what is left),
/// the view (ending its mounts), then the directory.
pub struct LineSandbox {
    inner: Arc<Inner>,
    walls: Walls,
    cgroup: Option<LineCgroup>,
    room: Room,
    workspace: PathFd,
    /// The ruleset of the line's processes other than git, built for the first and
    /// enforced by each (a ruleset can restrict any number of processes).
    shared: OnceLock<Arc<OwnedFd>>,
}

/// A line's private directory and where its processes see it. Fields drop in order: the
/// view (ending its mounts), then the directory.
struct Room {
    place: Place,
    private: Private,
    /// Held for its drop: removes the private directory once the view is gone.
    _dir: tempfile::TempDir,
}

/// Where a line's private directory is, as its processes see it.
enum Place {
    /// In the line's own view (a tmpfs), with the view's `/proc`.
    View(LineView),
    /// On disk, beside the machine's `/proc` (no view could be made, or walls are off).
    Disk(PathFd),
}

/// What a process's `pre_exec` needs, all of it prepared in the bot.
struct ChildSetup {
    ruleset: Option<Arc<OwnedFd>>,
    filters: Option<Arc<Filters>>,
    limits: Vec<(libc::__rlimit_resource_t, libc::rlim_t)>,
    parent: libc::pid_t,
    /// The line's `cgroup.procs` descriptors, owned by its [`LineCgroup`].
    joins: Vec<RawFd>,
    /// The line's mount namespace, owned by its [`LineView`], and the directory to return
    /// to after joining it (joining moves a process to the namespace's root).
    view: Option<(RawFd, CString)>,
}

impl LineSandbox {
    pub fn walls(&self) -> Walls {
        self.walls
    }

    /// Ends the line's sandbox (what is left in its groups killed, its view's mounts and
    /// its private directory removed), then makes the next line's view ahead. Blocks: call
    /// it off the runtime's threads, after the line's outcome is known.
    pub fn end(self) {
        let next = match self.room.place {
            Place::View(_) => Some((
                Sandbox {
                    inner: Arc::clone(&self.inner),
                },
                !self.walls.workspace_write(),
            )),
            Place::Disk(_) => None,
        };
        drop(self);
        if let Some((sandbox, read_only)) = next {
            sandbox.prepare(read_only);
        }
    }

    /// The line's private directory.
    pub fn private(&self) -> &Private {
        &self.room.private
    }

    /// The line's private temporary directory.
    pub fn tmpdir(&self) -> PathBuf {
        self.room.private.tmp()
    }

    /// The variables of the line's private directories (see [`Private::environment`]).
    pub fn environment(&self) -> Vec<(OsString, OsString)> {
        let gitconfig = self
            .inner
            .home_files
            .iter()
            .any(|(name, _)| name == Path::new(".gitconfig"));
        self.room.private.environment(gitconfig)
    }

    /// What the line ran into: its memory or process limit (read from its groups).
    pub fn limits_reached(&self) -> LimitsReached {
        let Some(cgroup) = &self.cgroup else {
            return LimitsReached::default();
        };
        let (memory, processes) = cgroup.reached();
        LimitsReached {
            memory: memory.then_some(self.inner.settings.memory_bytes),
            processes: processes.then_some(self.inner.settings.processes),
        }
    }

    /// Puts `command`, which will run `program` in `cwd`, inside the walls: a `pre_exec`
    /// that sets the parent-death signal, joins the line's control groups and view, sets
    /// the limits, drops capabilities, and enforces the Landlock ruleset and the seccomp
    /// filters, in that order, before `exec`.
    pub fn confine(
        &self,
        command: &mut tokio::process::Command,
        program: &Path,
        args: &[std::ffi::OsString],
        cwd: &Path,
    ) -> Result<(), SandboxError> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let setup = if self.walls == Walls::Off {
            ChildSetup {
                ruleset: None,
                filters: None,
                limits: Vec::new(),
                parent,
                joins: Vec::new(),
                view: None,
            }
        } else {
            let filters = if self.walls.network() {
                &self.inner.online
            } else {
                &self.inner.offline
            };
            let view = match &self.room.place {
                Place::View(view) => {
                    let cwd = CString::new(cwd.as_os_str().as_bytes())
                        .map_err(|e| SandboxError::Build(e.to_string()))?;
                    Some((view.namespace(), cwd))
                }
                Place::Disk(_) => None,
            };
            ChildSetup {
                ruleset: Some(self.ruleset(program, args)?),
                filters: Some(Arc::clone(filters)),
                limits: self.limits(),
                parent,
                joins: self
                    .cgroup
                    .iter()
                    .flat_map(LineCgroup::joins)
                    .map(AsRawFd::as_raw_fd)
                    .collect(),
                view,
            }
        };
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe work is allowed; `enter` makes system calls only, on memory that
        // was prepared before the fork (it allocates nothing and takes no lock).
        unsafe {
            command.pre_exec(move || setup.enter());
        }
        Ok(())
    }

    /// The private directory as the line's processes see it: the view's tmpfs, or the
    /// directory on disk.
    fn private_fd(&self) -> &PathFd {
        match &self.room.place {
            Place::View(view) => view.private_root(),
            Place::Disk(fd) => fd,
        }
    }

    /// `/proc` as the line's processes see it: the view's own, or the machine's.
    fn proc_fd(&self) -> Option<&PathFd> {
        match &self.room.place {
            Place::View(view) => Some(view.proc_root()),
            Place::Disk(_) => self.inner.proc.as_ref().map(|g| &g.fd),
        }
    }

    /// The limits of each process. `RLIMIT_NPROC` counts every process of the bot's user
    /// (and not at all for root), so it stands in only where the line has no pids group.
    fn limits(&self) -> Vec<(libc::__rlimit_resource_t, libc::rlim_t)> {
        let s = &self.inner.settings;
        let mut limits = vec![
            (libc::RLIMIT_DATA, s.memory_bytes),
            (libc::RLIMIT_CPU, s.cpu_secs),
            (libc::RLIMIT_FSIZE, s.file_size_bytes),
            (libc::RLIMIT_NOFILE, s.open_files),
            (libc::RLIMIT_CORE, 0),
        ];
        if self.cgroup.is_none() {
            limits.push((libc::RLIMIT_NPROC, s.processes));
        }
        limits
    }

    /// The Landlock ruleset of one process of the line: its own where it runs git in a line
    /// without a click, else the line's shared one.
    fn ruleset(
        &self,
        program: &Path,
        args: &[std::ffi::OsString],
    ) -> Result<Arc<OwnedFd>, SandboxError> {
        let git = if self.walls == Walls::ReadOnly {
            GitExec::of(program, args, self.inner.git.as_deref())
        } else {
            None
        };
        let build = |git: Option<GitExec>| {
            self.build_ruleset(git)
                .map(Arc::new)
                .map_err(|e| SandboxError::Build(e.to_string()))
        };
        if git.is_some() {
            return build(git);
        }
        if let Some(shared) = self.shared.get() {
            return Ok(Arc::clone(shared));
        }
        let built = build(None)?;
        Ok(Arc::clone(self.shared.get_or_init(|| built)))
    }

    fn build_ruleset(&self, git: Option<GitExec>) -> Result<OwnedFd, landlock::RulesetError> {
        let all = AccessFs::from_all(ABI::V5);
        let read = AccessFs::from_read(ABI::V5);
        // A git process reads like the others but may execute only git.
        let shared_read = if git.is_some() {
            read & !AccessFs::Execute
        } else {
            read
        };
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(all)?
            .scope(Scope::from_all(ABI::V6))?;
        if !self.walls.network() {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
        }
        let mut created = ruleset.create()?;
        fn rule(fd: &PathFd, dir: bool, rights: BitFlags<AccessFs>) -> PathBeneath<&PathFd> {
            let rights = if dir {
                rights
            } else {
                rights & AccessFs::from_file(ABI::V5)
            };
            PathBeneath::new(fd, rights)
        }
        for grant in &self.inner.reads {
            created = created.add_rule(rule(&grant.fd, grant.dir, shared_read))?;
        }
        if let Some(null) = &self.inner.null {
            created = created.add_rule(rule(
                &null.fd,
                false,
                AccessFs::ReadFile | AccessFs::WriteFile,
            ))?;
        }
        let workspace = if self.walls.workspace_write() {
            all
        } else {
            shared_read
        };
        created = created.add_rule(rule(&self.workspace, true, workspace))?;
        created = created.add_rule(rule(self.private_fd(), true, all & !AccessFs::Execute))?;
        if let Some(proc) = self.proc_fd() {
            created = created.add_rule(rule(proc, true, shared_read))?;
        }
        if let Some(git) = git {
            for path in git.paths() {
                if let Some(grant) = Grant::open(&path) {
                    created = created.add_rule(rule(&grant.fd, grant.dir, read))?;
                }
            }
        }
        Option::<OwnedFd>::from(created).ok_or(landlock::RulesetError::CreateRuleset(
            landlock::CreateRulesetError::MissingHandledAccess,
        ))
    }
}

impl ChildSetup {
    /// Runs in the child after fork: system calls only.
    fn enter(&self) -> io::Result<()> {
        // SAFETY (whole block): each call is a plain system call on integers or on memory
        // prepared before the fork and not mutated since; none allocates or locks.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            // The bot may have died between the fork and the line above.
            if libc::getppid() != self.parent {
                return Err(io::Error::other("the bot exited"));
            }
            // Into the line's groups before anything can fork; `0` is this process.
            for &fd in &self.joins {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            if let Some((namespace, cwd)) = &self.view {
                check(libc::setns(*namespace, libc::CLONE_NEWNS))?;
                check(libc::chdir(cwd.as_ptr()))?;
            }
            for &(resource, value) in &self.limits {
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                check(libc::setrlimit(resource, &limit))?;
            }
            if self.ruleset.is_none() {
                return Ok(());
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            drop_capabilities()?;
            if let Some(ruleset) = &self.ruleset {
                let rc =
                    libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0_u32);
                if rc != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if let Some(filters) = &self.filters {
                seccompiler::apply_filter(&filters.program)
                    .map_err(|_| io::Error::last_os_error())?;
            }
        }
        Ok(())
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Empties the permitted, effective and inheritable capability sets (and with them the
/// ambient set). With `no_new_privs` set, `exec` cannot give them back, not even to root.
fn drop_capabilities() -> io::Result<()> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a header and two data structs of the layout above (version 3),
    // which live on this stack for the whole call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The namespace flags `clone` may not carry: a line cannot make a namespace of its own
/// (a user namespace would give it capabilities there, a network namespace interfaces).
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The seccomp program of a sandboxed process: one program, since the kernel compiles and
/// caches each program a process installs (two cost ~0.15 ms more per process, measured).
/// Everything not named is allowed. In order:
/// - a system call number with the x32 bit set is refused (`EPERM`): numbers of that ABI
///   are not the ones the rules below name;
/// - `clone3` answers `ENOSYS`: its flags are in memory a filter cannot read, and `ENOSYS`
///   makes the C library and language runtimes fall back to `clone`, whose flags are checked;
/// - the architecture is checked (a call through another ABI kills the process), then the
///   refused calls answer `EPERM` (`offline` also refuses `socket` but for routing and
///   socket-diagnostics netlink), and `clone` with any
///   namespace flag.
#[derive(Default)]
struct Filters {
    program: BpfProgram,
}

/// `SECCOMP_RET_ERRNO` with an errno.
fn errno_action(errno: libc::c_int) -> u32 {
    0x0005_0000 | (errno.unsigned_abs() & 0xffff)
}

impl Filters {
    fn build(network: bool) -> Result<Self, String> {
        let refused: Vec<libc::c_long> = vec![
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_setsid,
            libc::SYS_setpgid,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_open_by_handle_at,
            libc::SYS_name_to_handle_at,
            libc::SYS_kexec_load,
            libc::SYS_init_module,
            libc::SYS_finit_module,
            libc::SYS_delete_module,
            libc::SYS_reboot,
            libc::SYS_swapon,
            libc::SYS_swapoff,
            libc::SYS_acct,
            libc::SYS_syslog,
            libc::SYS_fsopen,
            libc::SYS_fsmount,
            libc::SYS_move_mount,
            libc::SYS_open_tree,
        ];
        let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> = refused
            .into_iter()
            .map(|nr| (nr, Vec::<SeccompRule>::new()))
            .collect();
        if !network {
            rules.insert(libc::SYS_socket, offline_socket_rules()?);
        }
        rules.insert(libc::SYS_clone, namespace_flag_rules()?);
        let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM.unsigned_abs()),
            arch,
        )
        .map_err(|e| e.to_string())?;
        let rest: BpfProgram = filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| e.to_string())?;
        let clone3 = u32::try_from(libc::SYS_clone3).map_err(|e| e.to_string())?;
        let insn = |code: u16, jt: u8, jf: u8, k: u32| seccompiler::sock_filter { code, jt, jf, k };
        // BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JGE|BPF_K, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K.
        let (load, jge, jeq, ret) = (0x20, 0x35, 0x15, 0x06);
        let mut program = vec![
            insn(load, 0, 0, 0), // the system call's number
            insn(jge, 0, 1, 0x4000_0000),
            insn(ret, 0, 0, errno_action(libc::EPERM)),
            insn(jeq, 0, 1, clone3),
            insn(ret, 0, 0, errno_action(libc::ENOSYS)),
        ];
        program.extend(rest);
        Ok(Self { program })
    }
}

/// One rule per namespace flag: `clone` whose first argument has it set.
/// The sockets a line without network may not open: every one but a netlink socket of the
/// routing or socket-diagnostics family, which is how `ip addr`, `ip route` and `ss` ask the
/// kernel what they list. Without `CAP_NET_ADMIN` (a line holds no capability, and cannot
/// make a user namespace to hold one) the kernel answers such a socket's questions and
/// refuses every change it asks for (`ip link set`, `ss -K`), and it reaches no other
/// process or machine.
fn offline_socket_rules() -> Result<Vec<SeccompRule>, String> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition};
    let netlink = u64::from(libc::AF_NETLINK.unsigned_abs());
    let condition = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
    };
    let rule =
        |conditions: Vec<SeccompCondition>| SeccompRule::new(conditions).map_err(|e| e.to_string());
    Ok(vec![
        // Any family but netlink.
        rule(vec![condition(0, SeccompCmpOp::Ne, netlink)?])?,
        // Netlink, of any protocol but these two.
        rule(vec![
            condition(0, SeccompCmpOp::Eq, netlink)?,
            condition(
                2,
                SeccompCmpOp::Ne,
                u64::from(libc::NETLINK_ROUTE.unsigned_abs()),
            )?,
            condition(
                2,
                SeccompCmpOp::Ne,
                u64::from(libc::NETLINK_SOCK_DIAG.unsigned_abs()),
            )?,
        ])?,
    ])
}

fn namespace_flag_rules() -> Result<Vec<SeccompRule>, String> {
    use seccompiler::{SeccompCmpArgLen, SeccompCmpOp, SeccompCondition};
    NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = u64::from(flag.unsigned_abs());
            let condition = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .map_err(|e| e.to_string())?;
            SeccompRule::new(vec![condition]).map_err(|e| e.to_string())
        })
        .collect()
}

/// The directories of the programs on PATH, and the install prefix of each entry named
/// `bin`, `sbin` or `shims` whose parent has a `lib` or `libexec` directory (a Python under
/// a version manager needs its `lib/`). Other parents stay closed: `~/.cargo` holds
/// credentials beside its `bin`.
pub fn program_directories(search_path: &OsString) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for entry in search_path.as_bytes().split(|&b| b == b':') {
        if !entry.starts_with(b"/") {
            continue;
        }
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(entry));
        let Ok(dir) = dir.canonicalize() else {
            continue;
        };
        let prefix = dir
            .file_name()
            .filter(|name| matches!(name.as_bytes(), b"bin" | b"sbin" | b"shims"))
            .and(dir.parent())
            .filter(|parent| parent.join("lib").is_dir() || parent.join("libexec").is_dir())
            .map(Path::to_path_buf);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
        if let Some(prefix) = prefix
            && prefix != Path::new("/")
            && !dirs.contains(&prefix)
        {
            dirs.push(prefix);
        }
    }
    dirs
}

/// The shells, whose script may start git (`sh -c 'git diff'`); the gate's rule for them
/// is registered under the same names.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh", "rbash", "fish", "csh",
    "tcsh",
];

/// Whether `text` holds the word `git` (`git log | head`, `/usr/bin/git status`): words are
/// runs of letters, digits, `-`, `_`, `.` and `+`.
pub(super) fn names_git_word(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+')))
        .any(|word| word == "git")
}

/// What a process that runs git may execute: git's binary, the loader that starts it and
/// its exec path (`libexec/git-core` or `lib/git-core` beside it), and, for a wrapper that
/// names git among its arguments (`timeout 5 git diff`, `xargs git log`), the wrapper
/// itself. Nothing else: no shell, no textconv, no filter, no hook.
struct GitExec {
    binary: PathBuf,
    wrapper: Option<PathBuf>,
}

impl GitExec {
    /// `None` when the process neither is git nor names it (`git_on_path` is where `git`
    /// resolves on the sandboxed PATH).
    fn of(program: &Path, args: &[std::ffi::OsString], git_on_path: Option<&Path>) -> Option<Self> {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let is_git = |p: &Path| p.file_name().is_some_and(|n| n.as_bytes() == b"git");
        if is_git(program) {
            return Some(Self {
                binary: canonical(program),
                wrapper: None,
            });
        }
        // A shell given a script that names git starts git itself, with the shell's walls.
        let shell = program
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| SHELLS.contains(&name));
        let names_git = args.iter().any(|arg| {
            is_git(Path::new(arg)) || (shell && arg.to_str().is_some_and(names_git_word))
        });
        let git = git_on_path?;
        names_git.then(|| Self {
            binary: canonical(git),
            wrapper: Some(canonical(program)),
        })
    }

    fn paths(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for binary in std::iter::once(&self.binary).chain(&self.wrapper) {
            paths.push(binary.clone());
            if let Some(interpreter) = elf_interpreter(binary) {
                paths.push(interpreter.canonicalize().unwrap_or(interpreter));
            }
        }
        if let Some(prefix) = self.binary.parent().and_then(Path::parent) {
            paths.push(prefix.join("libexec/git-core"));
            paths.push(prefix.join("lib/git-core"));
        }
        paths
    }
}

/// The first executable `name` on `search_path`.
fn find_on_path(search_path: &OsString, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    search_path
        .as_bytes()
        .split(|&b| b == b':')
        .filter(|dir| dir.starts_with(b"/"))
        .map(|dir| Path::new(std::ffi::OsStr::from_bytes(dir)).join(name))
        .find(|path| {
            std::fs::metadata(path)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The program interpreter (`PT_INTERP`) of a 64-bit little-endian ELF file: the dynamic
/// loader the kernel opens for execution along with it.
fn elf_interpreter(path: &Path) -> Option<PathBuf> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let mut header = [0_u8; 64];
    file.read_exact(&mut header).ok()?;
    // ELF magic, 64-bit class, little-endian.
    if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return None;
    }
    let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    let u64_at = |b: &[u8], at: usize| {
        let mut bytes = [0_u8; 8];
        bytes.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let table = u64_at(&header, 32);
    let entry_size = usize::from(u16_at(&header, 54));
    let count = usize::from(u16_at(&header, 56));
    if entry_size < 56 || count > 256 {
        return None;
    }
    let mut entries = vec![0_u8; entry_size * count];
    file.seek(SeekFrom::Start(table)).ok()?;
    file.read_exact(&mut entries).ok()?;
    const PT_INTERP: u32 = 3;
    let entry = entries
        .chunks(entry_size)
        .find(|e| u32::from_le_bytes([e[0], e[1], e[2], e[3]]) == PT_INTERP)?;
    let offset = u64_at(entry, 8);
    let size = usize::try_from(u64_at(entry, 32)).ok()?;
    if size == 0 || size > 4096 {
        return None;
    }
    let mut name = vec![0_u8; size];
    file.seek(SeekFrom::Start(offset)).ok()?;
    file.read_exact(&mut name).ok()?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    name.truncate(end);
    Some(PathBuf::from(std::ffi::OsString::from_vec(name)))
}

/// What git gets in every line besides [`Private::environment`]'s lock-down: no repository
/// above the workspace.
pub fn git_ceiling(workspace: &Path) -> Vec<(OsString, OsString)> {
    workspace
        .parent()
        .map(|parent| {
            (
                OsString::from("GIT_CEILING_DIRECTORIES"),
                parent.as_os_str().to_owned(),
            )
        })
        .into_iter()
        .collect()
}

/// The environment git gets in lines run without a click, on top of every line's (no
/// system configuration, no global one but the operator's, no repository above the
/// workspace): the configuration keys that make read-only commands run programs turned
/// off at the command-line level, which overrides the repository's own `.git/config`. What
/// names a program by a driver of `.gitattributes` (textconv, filters) is stopped by the
/// sandbox instead: a git process may execute only git.
pub fn git_environment() -> Vec<(OsString, OsString)> {
    let overrides: &[(&str, &str)] = &[
        ("core.fsmonitor", "false"),
        ("core.hooksPath", "/dev/null"),
        ("core.pager", "cat"),
        ("diff.external", ""),
        ("log.showSignature", "false"),
        ("gpg.program", "/dev/null"),
        ("credential.helper", ""),
        ("protocol.allow", "never"),
        ("safe.directory", "*"),
    ];
    let mut env: Vec<(OsString, OsString)> = vec![
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
        ("GIT_OPTIONAL_LOCKS".into(), "0".into()),
        (
            "GIT_CONFIG_COUNT".into(),
            overrides.len().to_string().into(),
        ),
    ];
    for (i, (key, value)) in overrides.iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}").into(), (*key).into()));
        env.push((format!("GIT_CONFIG_VALUE_{i}").into(), (*value).into()));
    }
    env
}

/// The environment Mercurial gets in lines run without a click: no configuration at all.
/// `HGRCSKIPREPO` keeps the repository's own `.hg/hgrc` (and a shared source's) unread,
/// where extensions (Python code) and hooks would be named; an empty `HGRCPATH` keeps the
/// system's and the user's unread too; `HGPLAIN` turns off aliases and output settings.
pub fn hg_environment() -> Vec<(OsString, OsString)> {
    [("HGRCSKIPREPO", "1"), ("HGRCPATH", ""), ("HGPLAIN", "1")]
        .into_iter()
        .map(|(name, value)| (name.into(), value.into()))
        .collect()
}

/// What Python gets in a line without a click: `PYTHONSAFEPATH` keeps the current
/// directory (the workspace) off the module path, so `python3 -m json.tool` imports the
/// standard library's module, not a `json/` of the workspace (Python 3.11 and later read
/// it; an older Python still runs inside the walls); no user site directory; no bytecode
/// written.
pub fn python_environment() -> Vec<(OsString, OsString)> {
    [
        ("PYTHONSAFEPATH", "1"),
        ("PYTHONNOUSERSITE", "1"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ]
    .into_iter()
    .map(|(name, value)| (name.into(), value.into()))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walls_have_stable_names() {
        assert_eq!(Walls::ReadOnly.label(), "read-only");
        let settings = SandboxSettings::default();
        assert_eq!(
            Walls::confirmed(&settings).label(),
            "workspace-write+network"
        );
        let off = SandboxSettings {
            confirmed_sandboxed: false,
            ..SandboxSettings::default()
        };
        assert_eq!(Walls::confirmed(&off), Walls::Off);
    }

    #[test]
    fn the_seccomp_programs_build() {
        let offline = Filters::build(false).expect("offline");
        let online = Filters::build(true).expect("online");
        assert!(offline.program.len() > online.program.len());
    }

    #[test]
    fn a_hard_linked_file_is_found_anywhere_in_the_workspace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("a/b")).expect("mkdir");
        std::fs::write(ws.join("a/plain.txt"), "x").expect("write");
        assert!(check_workspace(&ws, 100).is_ok());
        std::fs::write(dir.path().join("outside.txt"), "secret").expect("write");
        std::fs::hard_link(dir.path().join("outside.txt"), ws.join("a/b/link.txt")).expect("link");
        match check_workspace(&ws, 100) {
            Err(SandboxError::HardLink { path, links }) => {
                assert_eq!(path, "a/b/link.txt");
                assert_eq!(links, 2);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            check_workspace(&ws, 2),
            Err(SandboxError::TooLargeToScan { limit: 2 })
        ));
    }

    /// A file whose every link is a name in the workspace (cargo's `target/debug`,
    /// Mercurial's journal) leads nowhere else; one more name outside, and it does. Another
    /// path to the same directory entry (through a symlinked directory, or a bind mount)
    /// is not another name.
    #[test]
    fn hard_links_all_inside_the_workspace_lead_nowhere_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("target/debug/deps")).expect("mkdir");
        std::fs::write(ws.join("target/debug/deps/app-1f2e"), "binary").expect("write");
        std::fs::hard_link(
            ws.join("target/debug/deps/app-1f2e"),
            ws.join("target/debug/app"),
        )
        .expect("link");
        assert!(check_workspace(&ws, 100).is_ok());
        std::fs::hard_link(ws.join("target/debug/app"), dir.path().join("elsewhere"))
            .expect("link");
        match check_workspace(&ws, 100) {
            Err(SandboxError::HardLink { path, links }) => {
                assert_eq!((path.as_str(), links), ("target/debug/app", 3));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(dir.path().join("elsewhere")).expect("rm");
        assert!(check_workspace(&ws, 100).is_ok());

        // One name inside, counted through two paths, and one outside.
        std::fs::write(dir.path().join("secret"), "s").expect("write");
        std::fs::hard_link(dir.path().join("secret"), ws.join("target/copy")).expect("link");
        std::os::unix::fs::symlink(ws.join("target"), ws.join("alias")).expect("symlink");
        let meta = std::fs::symlink_metadata(ws.join("target/copy")).expect("stat");
        let mut linked = LinkedFiles::default();
        linked.add(&ws, Path::new("target/copy"), &meta);
        linked.add(&ws, Path::new("alias/copy"), &meta);
        assert!(matches!(
            linked.leading_out(),
            Err(SandboxError::HardLink { links: 2, .. })
        ));
    }

    #[test]
    fn fifos_and_sockets_in_the_workspace_are_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("deep")).expect("mkdir");
        assert!(check_workspace(&ws, 100).is_ok());
        let fifo =
            std::ffi::CString::new(ws.join("deep/pipe").as_os_str().as_bytes()).expect("path");
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        match check_workspace(&ws, 100) {
            Err(SandboxError::SpecialFile { path, kind }) => {
                assert_eq!((path.as_str(), kind), ("deep/pipe", "FIFO"));
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(ws.join("deep/pipe")).expect("rm");
        let _socket = std::os::unix::net::UnixListener::bind(ws.join("s")).expect("bind");
        assert!(matches!(
            check_workspace(&ws, 100),
            Err(SandboxError::SpecialFile { kind: "socket", .. })
        ));
    }

    #[test]
    fn a_lines_home_holds_the_operators_files_below_their_parents() {
        let private = Private::new(Path::new("/tmp/line"));
        let layout = private.layout(&[
            (PathBuf::from(".config/pip/pip.conf"), b"[global]".to_vec()),
            (PathBuf::from(".gitconfig"), b"[user]".to_vec()),
        ]);
        let dirs: Vec<&str> = layout.dirs.iter().filter_map(|d| d.to_str()).collect();
        assert_eq!(
            dirs,
            [
                "/tmp/line/home",
                "/tmp/line/tmp",
                "/tmp/line/run",
                "/tmp/line/home/.config",
                "/tmp/line/home/.config/pip",
            ]
        );
        assert_eq!(
            layout.files[0].0,
            Path::new("/tmp/line/home/.config/pip/pip.conf")
        );
        let with = private.environment(true);
        let global = |env: &[(OsString, OsString)]| {
            env.iter()
                .find(|(name, _)| name == "GIT_CONFIG_GLOBAL")
                .map(|(_, value)| value.clone())
        };
        assert_eq!(global(&with), Some("/tmp/line/home/.gitconfig".into()));
        assert_eq!(
            global(&private.environment(false)),
            Some("/dev/null".into())
        );
        for name in ["HOME", "TMPDIR", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM"] {
            assert!(RESERVED_VARIABLES.contains(&name), "{name}");
            assert!(with.iter().any(|(n, _)| n == name), "{name}");
        }
    }

    #[test]
    fn the_loader_of_a_dynamic_program_is_found() {
        let sh = Path::new("/bin/sh").canonicalize().expect("sh");
        let interpreter = elf_interpreter(&sh).expect("a dynamically linked sh");
        assert!(interpreter.is_absolute(), "{}", interpreter.display());
        assert!(interpreter.exists(), "{}", interpreter.display());
    }

    #[test]
    fn program_directories_add_install_prefixes_only_where_they_look_like_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let versioned = root.join("versions/3.11/bin");
        let cargo = root.join("cargo/bin");
        std::fs::create_dir_all(&versioned).expect("mkdir");
        std::fs::create_dir_all(root.join("versions/3.11/lib")).expect("mkdir");
        std::fs::create_dir_all(&cargo).expect("mkdir");
        std::fs::write(root.join("cargo/credentials.toml"), "token").expect("write");
        let path = OsString::from(format!(
            "{}:{}:relative/bin",
            versioned.display(),
            cargo.display()
        ));
        let dirs = program_directories(&path);
        assert_eq!(
            dirs,
            vec![versioned.clone(), root.join("versions/3.11"), cargo.clone()]
        );
    }
}
