//! Whether the paths a command names stay inside the workspace, or are among the machine's
//! public files ([`PUBLIC_FILES`], [`PUBLIC_TREES`]) that every line may read.
//!
//! A literal path goes through [`Workspace::resolve`]: lexically (absolute paths, `~`, `..`)
//! and, for the part that exists, through symlinks. A glob pattern is first judged by its
//! shape (it must not be absolute, start with `~` or hold a `..` component), then expanded
//! here against the file system, bounded, so that a match that is a symlink leading out, or a
//! file name that starts with `-` (which the command would read as an option), is caught as
//! well. A wildcard never matches `.` or `..` (riskgate expands patterns itself, from the
//! directory's entries, which hold neither), and matches a leading dot only where the
//! component starts with a literal one (`.*`, `.[!.]*`), as in bash.

use std::path::{Component, Path, PathBuf};

use crate::tools::workspace::canonicalize_existing_prefix;
use crate::tools::{PathEscape, Workspace};

/// At most this many directory entries are looked at while expanding one pattern.
const MAX_GLOB_ENTRIES: usize = 10_000;

/// The machine's own files that any line may read: facts about the machine (what `free`,
/// `lscpu` and `uptime` print, read where they read them) and the system's public tables.
/// The endless devices of zeros and random bytes are among them (`head -c 16 /dev/urandom`).
/// Each is one the sandbox shows to every line as well (a test holds the two lists
/// together); none is a secret of the host's. Not `/etc/passwd` or `/etc/group` (the
/// machine's accounts), not `/proc/cmdline` (a kernel command line may carry a key), nothing
/// under `/proc/<pid>` or `/proc/self`.
pub(super) const PUBLIC_FILES: &[&str] = &[
    "/etc/hosts",
    "/etc/services",
    "/etc/protocols",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/issue",
    "/etc/shells",
    "/etc/timezone",
    "/etc/locale.alias",
    "/etc/mime.types",
    "/etc/magic",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/version",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/stat",
    "/proc/vmstat",
    "/proc/mdstat",
    "/proc/partitions",
    "/proc/diskstats",
    "/proc/swaps",
    "/proc/filesystems",
    "/proc/devices",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/crypto",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
];

/// The system's program and data directories, which hold the installed software and its
/// shared data (`/usr/share/dict/words`, `/usr/include`) and which the sandbox lets every
/// line read and run programs from. Not `/usr/local`, where a machine's own configuration
/// may live (`/usr/local/etc`).
pub(super) const PUBLIC_TREES: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"];
const PRIVATE_IN_TREES: &[&str] = &["/usr/local"];

/// Why `path`, named by `program`, is not known to stay inside the workspace or to be one of
/// the machine's public files.
pub(super) fn path_problem(workspace: &Workspace, program: &str, path: &str) -> Option<String> {
    // `/dev/null` reads as empty, and every line may open it (`grep PAT /dev/null {}` makes
    // grep name the file of each match).
    if path.is_empty()
        || path == "-"
        || path == "/dev/null"
        || is_own_descriptor(path)
        || is_public_system_path(path)
    {
        return None;
    }
    workspace_problem(workspace, program, path)
}

/// `/dev/fd/N`: a descriptor the command holds, which is all a line's process may open
/// through it (the runner passes a command nothing but its standard streams and the pipes
/// of its process substitutions `<(...)`, whose words these are).
fn is_own_descriptor(path: &str) -> bool {
    path.strip_prefix("/dev/fd/")
        .is_some_and(|n| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Why `path` is not known to stay inside the workspace, with no exception: for a directory
/// a line changes into, which must be the workspace's.
pub(super) fn workspace_problem(
    workspace: &Workspace,
    program: &str,
    path: &str,
) -> Option<String> {
    let escape = workspace.resolve(path).err()?;
    Some(describe(program, path, &escape))
}

/// Whether `path` is absolute, climbs through no `..`, and both as written and as it
/// really is (symlinks followed in the part of it that exists) is one of [`PUBLIC_FILES`]
/// or beneath one of [`PUBLIC_TREES`]: `/usr/lib/ssl/private`, a link to
/// `/etc/ssl/private`, is not, nor is `/proc/self/environ`; and a link elsewhere that leads
/// into `/usr` is not either, since whoever may write there could turn it before it is read.
pub(super) fn is_public_system_path(path: &str) -> bool {
    let path = Path::new(path);
    if !path.is_absolute() || path.components().any(|c| c == Component::ParentDir) {
        return false;
    }
    let written: PathBuf = path.components().collect();
    is_public(&written) && is_public(&canonicalize_existing_prefix(path))
}

fn is_public(path: &Path) -> bool {
    PUBLIC_FILES.iter().any(|file| path == Path::new(file))
        || (PUBLIC_TREES.iter().any(|tree| path.starts_with(tree))
            && !PRIVATE_IN_TREES
                .iter()
                .any(|private| path.starts_with(private) || Path::new(private).starts_with(path)))
}

fn describe(program: &str, path: &str, escape: &PathEscape) -> String {
    match escape {
        PathEscape::Outside(_) => format!("`{program}` reads {path}, outside the workspace"),
        PathEscape::Home(_) => {
            format!("`{program}` reads {path}, in a home directory outside the workspace")
        }
        PathEscape::DotDot(_) => {
            format!("`{program}` reads {path}, which climbs out of the workspace through `..`")
        }
        PathEscape::Symlink { link, .. } => format!(
            "`{program}` reads {path}, which leads outside the workspace through the symlink {link}"
        ),
        PathEscape::Empty(_) | PathEscape::Nul(_) => {
            format!("`{program}` names {path:?}, which is not a usable path")
        }
    }
}

/// Why the glob `pattern` (as written: `shown`) may expand to names outside the workspace,
/// or to a name the command would take for an option.
pub(super) fn glob_problem(workspace: &Workspace, pattern: &str, shown: &str) -> Option<String> {
    if pattern.starts_with('/') {
        return Some(format!(
            "the pattern `{shown}` expands to names outside the workspace"
        ));
    }
    if pattern.starts_with('~') {
        return Some(format!(
            "the pattern `{shown}` expands to names in a home directory"
        ));
    }
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    for component in &components {
        let literal = unescape(component);
        if !is_glob(component) && literal == ".." {
            return Some(format!(
                "the pattern `{shown}` climbs out of the workspace through `..`"
            ));
        }
    }
    expansion_problem(workspace, &components, shown)
}

/// Expands the pattern (bounded) and checks every name it yields.
fn expansion_problem(workspace: &Workspace, components: &[&str], shown: &str) -> Option<String> {
    let mut candidates: Vec<PathBuf> = vec![PathBuf::new()];
    let mut budget = MAX_GLOB_ENTRIES;
    for component in components {
        if !is_glob(component) {
            let literal = unescape(component);
            for candidate in &mut candidates {
                candidate.push(&literal);
            }
            continue;
        }
        let mut next = Vec::new();
        for candidate in &candidates {
            let directory = workspace.root().join(candidate);
            let Ok(entries) = std::fs::read_dir(&directory) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return Some(format!(
                        "the pattern `{shown}` matches too many names to check"
                    ));
                }
                budget -= 1;
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    continue;
                };
                // Only a literal leading dot matches one (`.*`, not `*` or `[.]*`).
                if name.starts_with('.') && !unescape(component).starts_with('.') {
                    continue;
                }
                if glob_matches(component, name) {
                    if name.starts_with('-') {
                        return Some(format!(
                            "the pattern `{shown}` matches the file name `{name}`, which a command would read as an option"
                        ));
                    }
                    next.push(candidate.join(name));
                }
            }
        }
        candidates = next;
    }
    candidates
        .iter()
        .filter(|candidate| !candidate.as_os_str().is_empty())
        .find_map(|candidate| {
            let text = candidate.to_str()?;
            match workspace.resolve(text) {
                Ok(_) => None,
                Err(escape) => Some(match escape {
                    PathEscape::Symlink { link, .. } => format!(
                        "the pattern `{shown}` matches {text}, which leads outside the workspace through the symlink {link}"
                    ),
                    other => format!("the pattern `{shown}` matches {text}: {other}"),
                }),
            }
        })
}

/// Whether a component (escaped form) holds an unescaped `*`, `?` or `[`.
fn is_glob(component: &str) -> bool {
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

fn unescape(component: &str) -> String {
    let mut out = String::with_capacity(component.len());
    let mut chars = component.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// fnmatch for one path component: `*`, `?`, `[...]` (with `!`/`^` negation and ranges),
/// and `\` escapes. Character classes (`[[:alpha:]]`) match any character, which can only
/// make the check see more matches than bash would.
pub(super) fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches_from(&pattern, &name)
}

fn matches_from(pattern: &[char], name: &[char]) -> bool {
    // Iterative matching with single-star backtracking.
    let (mut p, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() {
            match pattern[p] {
                '*' => {
                    star = Some((p, n));
                    p += 1;
                    continue;
                }
                '?' => {
                    p += 1;
                    n += 1;
                    continue;
                }
                '[' => {
                    if let Some((matched, next)) = bracket(pattern, p, name[n]) {
                        if matched {
                            p = next;
                            n += 1;
                            continue;
                        }
                    } else if name[n] == '[' {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
                '\\' if p + 1 < pattern.len() => {
                    if pattern[p + 1] == name[n] {
                        p += 2;
                        n += 1;
                        continue;
                    }
                }
                literal => {
                    if literal == name[n] {
                        p += 1;
                        n += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((star_p, star_n)) => {
                p = star_p + 1;
                n = star_n + 1;
                star = Some((star_p, star_n + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

/// Matches `c` against the bracket expression starting at `pattern[start] == '['`.
/// Returns whether it matched and where the pattern continues, or `None` when the bracket is
/// not closed (then `[` is an ordinary character).
fn bracket(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(pattern.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let current = *pattern.get(i)?;
        if current == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if current == '[' && pattern.get(i + 1) == Some(&':') {
            // A character class: find its end and count it as matching anything.
            let end = (i + 2..pattern.len().saturating_sub(1))
                .find(|&j| pattern[j] == ':' && pattern[j + 1] == ']')?;
            matched = true;
            i = end + 2;
            continue;
        }
        let low = if current == '\\' {
            i += 1;
            *pattern.get(i)?
        } else {
            current
        };
        if pattern.get(i + 1) == Some(&'-') && pattern.get(i + 2).is_some_and(|h| *h != ']') {
            let high = *pattern.get(i + 2)?;
            if low <= c && c <= high {
                matched = true;
            }
            i += 3;
        } else {
            if low == c {
                matched = true;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_basics() {
        assert!(glob_matches("*.rs", "main.rs"));
        assert!(!glob_matches("*.rs", "main.rc"));
        assert!(glob_matches("ma?n.*", "main.rs"));
        assert!(glob_matches("[a-c]x", "bx"));
        assert!(!glob_matches("[!a-c]x", "bx"));
        assert!(glob_matches("\\*", "*"));
        assert!(!glob_matches("\\*", "a"));
        assert!(glob_matches("[[:alpha:]]*", "z1"));
        assert!(glob_matches("a[", "a["));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("*a*b", "xxaxxb"));
    }

    #[test]
    fn pattern_shapes_that_leave_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path());
        let outside = tempfile::tempdir().expect("tempdir");
        let planted = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(outside.path(), planted.path().join(".out")).expect("symlink");
        let with_link = Workspace::new(planted.path());
        // A hidden symlink out is a match of `.*`, checked like any other; `[.]*` and `*`
        // do not match a leading dot.
        for pattern in [".*", ".o*/x", "\\.*"] {
            assert!(
                glob_problem(&with_link, pattern, pattern).is_some(),
                "{pattern}"
            );
        }
        for pattern in ["[.]*", "*", "?out"] {
            assert_eq!(
                glob_problem(&with_link, pattern, pattern),
                None,
                "{pattern}"
            );
        }
        for pattern in ["/etc/*", "~/*", "../*", "src/../../*", ".*/../x"] {
            assert!(
                glob_problem(&workspace, pattern, pattern).is_some(),
                "{pattern}"
            );
        }
        // A wildcard never matches `.` or `..`: hidden names are expanded and checked.
        for pattern in [
            "*.txt", "src/*.rs", "*/mod.rs", "\\*", ".*", "a/.?/x", "[.]*", "\\.*",
        ] {
            assert_eq!(
                glob_problem(&workspace, pattern, pattern),
                None,
                "{pattern}"
            );
        }
    }

    #[test]
    fn the_machines_public_files_are_readable_and_nothing_beside_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let workspace = Workspace::new(dir.path());
        for public in [
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/etc/hosts",
            "/usr/bin",
            "/usr/share/dict/words",
            "/usr/include/stdio.h",
            "/usr/./share",
            "/dev/urandom",
        ] {
            assert_eq!(path_problem(&workspace, "cat", public), None, "{public}");
        }
        for private in [
            "/etc/shadow",
            "/etc/passwd",
            "/etc",
            "/proc/cmdline",
            "/proc/self/environ",
            "/proc/1/environ",
            "/proc/self/root/etc/shadow",
            "/usr/../etc/shadow",
            "/usr/local/etc/app.conf",
            "/dev/sda",
            "/dev/mem",
            "/dev/tty",
            "/usr",
            "/",
            "~/usr/bin",
        ] {
            assert!(
                path_problem(&workspace, "cat", private).is_some(),
                "{private}"
            );
        }
        // No exception for a directory to change into: a line stays in the workspace.
        assert!(workspace_problem(&workspace, "cd", "/usr/bin").is_some());
    }

    #[test]
    fn a_symlink_beneath_a_public_tree_is_judged_where_it_leads() {
        let outside = tempfile::tempdir().expect("tempdir");
        // `/proc/self` is a link out of the listed files into one process's directory.
        assert!(!is_public_system_path("/proc/self/stat"));
        assert!(!is_public_system_path("/proc/thread-self/stat"));
        // A link elsewhere that leads into a public tree is not public (it could be turned
        // before the line reads it); `/lib`, a link to `/usr/lib` on merged systems, is.
        // A link in `/usr` that leads out of the public trees (`/usr/lib/ssl/private` to
        // `/etc/ssl/private` on Debian) is judged by where it leads, and so is what is
        // beneath it.
        let link = links_out_of_usr()
            .next()
            .expect("a symlink in /usr that leads to /etc");
        assert!(!is_public_system_path(&link), "{link}");
        assert!(!is_public_system_path(&format!("{link}/key.pem")), "{link}");
        std::os::unix::fs::symlink("/usr/bin", outside.path().join("bin")).expect("symlink");
        let through = outside.path().join("bin/ls");
        assert!(!is_public_system_path(&through.to_string_lossy()));
        assert!(is_public_system_path("/lib"));
    }

    /// Symlinks within four levels of `/usr` that lead into `/etc`, to a file not public.
    fn links_out_of_usr() -> impl Iterator<Item = String> {
        let mut found = Vec::new();
        let mut dirs = vec![(PathBuf::from("/usr"), 0)];
        while let Some((dir, depth)) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_symlink() {
                    if std::fs::canonicalize(&path).is_ok_and(|real| {
                        real.starts_with("/etc")
                            && !PUBLIC_FILES.iter().any(|f| real == Path::new(f))
                    }) {
                        found.push(path.to_string_lossy().into_owned());
                    }
                } else if kind.is_dir() && depth < 4 {
                    dirs.push((path, depth + 1));
                }
            }
        }
        found.into_iter()
    }

    #[test]
    fn every_public_file_is_one_the_sandbox_shows_every_line() {
        use crate::tools::command::sandbox::{ETC_READ_PATHS, READ_DEVICES, SYSTEM_READ_PATHS};
        for file in PUBLIC_FILES {
            let shown = ETC_READ_PATHS.contains(file)
                || READ_DEVICES.contains(file)
                || SYSTEM_READ_PATHS
                    .iter()
                    .any(|tree| Path::new(file).starts_with(tree));
            assert!(shown, "{file} is not readable in the sandbox");
        }
        for tree in PUBLIC_TREES {
            assert!(SYSTEM_READ_PATHS.contains(tree), "{tree}");
        }
    }

    #[test]
    fn expansion_catches_symlinks_and_dash_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        std::fs::write(dir.path().join("src/a.txt"), "a").expect("write");
        std::fs::write(outside.path().join("secret.txt"), "s").expect("write");
        let workspace = Workspace::new(dir.path());
        assert_eq!(glob_problem(&workspace, "*/*.txt", "*/*.txt"), None);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        let problem = glob_problem(&workspace, "*/*.txt", "*/*.txt").expect("symlink caught");
        assert!(problem.contains("symlink"), "{problem}");
        std::fs::write(dir.path().join("src/-rf"), "").expect("write");
        let problem = glob_problem(&workspace, "src/*", "src/*").expect("dash caught");
        assert!(problem.contains("option"), "{problem}");
    }
}
