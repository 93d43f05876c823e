//! The workspace: the one directory tools may touch. Paths are resolved against its root,
//! lexically first (absolute paths, `~`, `..` escapes), then through symlinks for the part of
//! the path that exists, so a link inside the workspace cannot lead outside it.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathEscape {
    #[error("path {0:?} is empty")]
    Empty(String),
    #[error("path {0:?} is outside the workspace")]
    Outside(String),
    #[error("path {0:?} starts with `~`, which names a home directory outside the workspace")]
    Home(String),
    #[error("path {0:?} leaves the workspace through `..`")]
    DotDot(String),
    #[error("path {path:?} leads outside the workspace through the symlink {link:?}")]
    Symlink { path: String, link: String },
    #[error("path {0:?} contains a NUL byte")]
    Nul(String),
}

/// Entries of the top level the model is told of at most ([`Workspace::top_level`]).
const TOP_LEVEL_SHOWN: usize = 40;
/// Entries read at most to find the first ones by name: a huge top level is not read whole
/// at every run's start.
const TOP_LEVEL_READ: usize = 10_000;
/// Characters of one name shown at most.
const NAME_CHARS: usize = 60;

/// The workspace root, made absolute (and canonical when it exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// `root` may be relative (to the current directory) and need not exist yet.
    pub fn new(root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        let absolute = if root.is_absolute() {
            root.to_path_buf()
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(root))
                .unwrap_or_else(|_| root.to_path_buf())
        };
        let normalized = normalize(&absolute).unwrap_or(absolute);
        Self {
            root: canonicalize_existing_prefix(&normalized),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The top level in one line, for the system prompt of the profiles whose tools work
    /// here: the first [`TOP_LEVEL_SHOWN`] entries by name, directories marked with `/`, and
    /// how many more there are. Read anew each time (one directory listing); a workspace
    /// that cannot be read gets a line that says so.
    pub async fn top_level(&self) -> String {
        const LEAD: &str = "The workspace (the working directory; paths are relative to it)";
        let (mut entries, complete) = match self.read_top_level().await {
            Ok(read) => read,
            Err(error) => return format!("{LEAD} could not be listed: {error}."),
        };
        if entries.is_empty() && complete {
            return format!("{LEAD} is empty.");
        }
        entries.sort();
        let total = entries.len();
        let shown: Vec<String> = entries
            .iter()
            .take(TOP_LEVEL_SHOWN)
            .map(|(name, dir)| shown_name(name, *dir))
            .collect();
        let more = total - shown.len();
        let shown = shown.join(", ");
        match (more, complete) {
            (0, true) => format!("{LEAD} holds: {shown}."),
            (_, true) => format!(
                "{LEAD} holds {total} entries; the first {TOP_LEVEL_SHOWN} by name: {shown}, and {more} more."
            ),
            (_, false) => {
                format!("{LEAD} holds over {total} entries, among them: {shown}, and many more.")
            }
        }
    }

    /// Up to [`TOP_LEVEL_READ`] entries of the root (name, whether a directory), and whether
    /// that was all of them.
    async fn read_top_level(&self) -> std::io::Result<(Vec<(String, bool)>, bool)> {
        let mut dir = tokio::fs::read_dir(&self.root).await?;
        let mut entries = Vec::new();
        while let Some(entry) = dir.next_entry().await? {
            if entries.len() == TOP_LEVEL_READ {
                return Ok((entries, false));
            }
            let is_dir = entry.file_type().await.is_ok_and(|t| t.is_dir());
            entries.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
        }
        Ok((entries, true))
    }

    /// Resolves `path` (relative to the root, or absolute inside it) to an absolute path
    /// inside the workspace, or says why it is not inside.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, PathEscape> {
        let lexical = self.resolve_lexically(path)?;
        self.check_symlinks(path, &lexical)?;
        Ok(lexical)
    }

    /// The lexical half of [`Workspace::resolve`]: no file system access.
    pub fn resolve_lexically(&self, path: &str) -> Result<PathBuf, PathEscape> {
        if path.is_empty() {
            return Err(PathEscape::Empty(path.to_owned()));
        }
        if path.contains('\0') {
            return Err(PathEscape::Nul(path.to_owned()));
        }
        if path.starts_with('~') {
            return Err(PathEscape::Home(path.to_owned()));
        }
        let candidate = Path::new(path);
        let joined = if candidate.is_absolute() {
            candidate.to_path_buf()
        } else {
            self.root.join(candidate)
        };
        let Some(normalized) = normalize(&joined) else {
            return Err(PathEscape::DotDot(path.to_owned()));
        };
        if normalized.starts_with(&self.root) {
            Ok(normalized)
        } else if candidate.is_absolute() {
            Err(PathEscape::Outside(path.to_owned()))
        } else {
            Err(PathEscape::DotDot(path.to_owned()))
        }
    }

    /// Where a path inside the workspace really is: symlinks resolved in the part of it that
    /// exists, the rest kept as written. Used to judge what a change would touch (a link
    /// named `cfg` pointing at `.git` makes `cfg/config` git's configuration).
    pub fn real_path(&self, resolved: &Path) -> PathBuf {
        canonicalize_existing_prefix(resolved)
    }

    /// Follows symlinks in the existing part of `resolved` and checks the target stays inside.
    fn check_symlinks(&self, original: &str, resolved: &Path) -> Result<(), PathEscape> {
        // The deepest ancestor (or the path itself) that exists decides where it really is.
        let mut existing = resolved;
        loop {
            if std::fs::symlink_metadata(existing).is_ok() {
                break;
            }
            match existing.parent() {
                Some(parent) => existing = parent,
                None => return Ok(()),
            }
        }
        // Nothing below a root that does not exist yet can be a link.
        if !existing.starts_with(&self.root) {
            return Ok(());
        }
        let Ok(real) = std::fs::canonicalize(existing) else {
            // A dangling link: where it points decides.
            return match std::fs::read_link(existing) {
                Ok(target) => {
                    let base = existing.parent().unwrap_or(&self.root);
                    let target = if target.is_absolute() {
                        target
                    } else {
                        base.join(target)
                    };
                    match normalize(&target) {
                        Some(t) if t.starts_with(&self.root) => Ok(()),
                        _ => Err(PathEscape::Symlink {
                            path: original.to_owned(),
                            link: existing.display().to_string(),
                        }),
                    }
                }
                Err(_) => Ok(()),
            };
        };
        if real.starts_with(&self.root) {
            Ok(())
        } else {
            Err(PathEscape::Symlink {
                path: original.to_owned(),
                link: existing.display().to_string(),
            })
        }
    }
}

/// A name as the prompt shows it: in backticks, a directory with `/` after it; a name with
/// a control character or a backtick as a quoted string with escapes, so it cannot break the
/// line; a long one cut.
fn shown_name(name: &str, dir: bool) -> String {
    let cut: String = match name.char_indices().nth(NAME_CHARS) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_owned(),
    };
    let slash = if dir { "/" } else { "" };
    if cut.chars().any(|c| c.is_control() || c == '`') {
        format!("{:?}", format!("{cut}{slash}"))
    } else {
        format!("`{cut}{slash}`")
    }
}

/// Resolves symlinks in the longest prefix of `path` that exists, and keeps the rest as is:
/// a workspace that is created later sits where its parent really is.
pub(crate) fn canonicalize_existing_prefix(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Removes `.` and resolves `..` without touching the file system. `None` when `..` climbs
/// above the root of an absolute path.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_top_level_is_one_capped_line() {
        const LEAD: &str = "The workspace (the working directory; paths are relative to it)";
        let dir = tempfile::tempdir().expect("dir");
        let workspace = Workspace::new(dir.path());
        assert_eq!(workspace.top_level().await, format!("{LEAD} is empty."));
        std::fs::create_dir(dir.path().join("logs")).expect("dir");
        std::fs::write(dir.path().join("a`b\nc"), "").expect("file");
        assert_eq!(
            workspace.top_level().await,
            format!("{LEAD} holds: \"a`b\\nc\", `logs/`.")
        );
        for i in 0..50 {
            std::fs::write(dir.path().join(format!("f{i:02}")), "").expect("file");
        }
        let line = workspace.top_level().await;
        assert!(
            line.starts_with(&format!(
                "{LEAD} holds 52 entries; the first 40 by name: \"a`b\\nc\", `f00`, "
            )),
            "{line}"
        );
        assert!(line.ends_with(", `f38`, and 12 more."), "{line}");
        assert_eq!(line.lines().count(), 1);
        let gone = Workspace::new(dir.path().join("missing"));
        assert!(
            gone.top_level()
                .await
                .starts_with(&format!("{LEAD} could not be listed: ")),
            "{}",
            gone.top_level().await
        );
    }

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path());
        (dir, ws)
    }

    #[test]
    fn relative_paths_stay_inside() {
        let (_dir, ws) = workspace();
        assert_eq!(ws.resolve("a/b/../c.txt"), Ok(ws.root().join("a/c.txt")));
        assert_eq!(ws.resolve("."), Ok(ws.root().to_path_buf()));
        assert_eq!(ws.resolve("./x"), Ok(ws.root().join("x")));
    }

    #[test]
    fn escapes_are_refused() {
        let (_dir, ws) = workspace();
        assert!(matches!(ws.resolve("../x"), Err(PathEscape::DotDot(_))));
        assert!(matches!(
            ws.resolve("a/../../x"),
            Err(PathEscape::DotDot(_))
        ));
        assert!(matches!(
            ws.resolve("/etc/passwd"),
            Err(PathEscape::Outside(_))
        ));
        assert!(matches!(ws.resolve("~/.ssh"), Err(PathEscape::Home(_))));
        assert!(matches!(ws.resolve(""), Err(PathEscape::Empty(_))));
    }

    #[test]
    fn absolute_paths_inside_the_root_are_fine() {
        let (_dir, ws) = workspace();
        let inside = ws.root().join("notes.txt");
        let text = inside.to_str().expect("utf-8 temp path");
        assert_eq!(ws.resolve(text), Ok(inside.clone()));
    }

    #[test]
    fn symlinks_leading_outside_are_refused() {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "x").expect("write");
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).expect("symlink");
        assert!(matches!(
            ws.resolve("link/secret"),
            Err(PathEscape::Symlink { .. })
        ));
        // A path below the link that does not exist yet is refused too.
        assert!(matches!(
            ws.resolve("link/new.txt"),
            Err(PathEscape::Symlink { .. })
        ));
        std::os::unix::fs::symlink("/nonexistent/target", dir.path().join("dangling"))
            .expect("symlink");
        assert!(matches!(
            ws.resolve("dangling"),
            Err(PathEscape::Symlink { .. })
        ));
    }

    #[test]
    fn a_workspace_that_does_not_exist_yet_contains_its_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path().join("not/yet"));
        assert_eq!(ws.resolve("src/main.rs"), Ok(ws.root().join("src/main.rs")));
        assert!(matches!(ws.resolve("../x"), Err(PathEscape::DotDot(_))));
        // Created later, it is the same place.
        std::fs::create_dir_all(dir.path().join("not/yet")).expect("mkdir");
        assert_eq!(Workspace::new(dir.path().join("not/yet")).root(), ws.root());
    }

    #[test]
    fn symlinks_inside_are_fine() {
        let (dir, ws) = workspace();
        std::fs::create_dir(dir.path().join("real")).expect("mkdir");
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("alias"))
            .expect("symlink");
        assert!(ws.resolve("alias/file").is_ok());
    }
}
