//! Running file operations through descriptors (see `beneath.rs`): every path is opened
//! below the workspace root's descriptor, so what the gate checked is what is touched. Reads
//! are capped and binary files described; a file with more than one hard link is refused
//! (another name of it may be outside the workspace); writes are atomic (a temp file in the
//! parent directory's descriptor, renamed over the target). A call that runs without a click
//! (`Approval::Auto`) follows no symlink at all when it changes something and never replaces
//! an existing file, so what the gate saw as a new file cannot turn into an overwrite.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::beneath::{self, Kind, Stat};
use crate::core::tools::{Attachment, ToolError, ToolOutput, format_bytes};
use crate::tools::render::{code_block, cut, hex_preview, looks_like_text};

/// Limits of one call.
#[derive(Debug, Clone, Copy)]
pub(super) struct FileLimits {
    pub read_limit_bytes: u64,
    pub list_limit: usize,
    pub chat_budget: usize,
}

/// Where a call works: the root's descriptor, and whether a person confirmed the call.
pub(super) struct At<'a> {
    pub root: &'a File,
    pub confirmed: bool,
}

impl At<'_> {
    /// Opens `rel` below the root. Changes that run without a click follow no symlink.
    fn open(&self, rel: &Path, flags: libc::c_int, changes: bool) -> std::io::Result<File> {
        beneath::open_beneath(self.root.as_fd(), rel, flags, changes && !self.confirmed)
    }

    /// Opens the directory that holds `rel`, and names the entry in it.
    fn parent(
        &self,
        verb: &str,
        rel: &Path,
        shown: &str,
        changes: bool,
    ) -> Result<(File, std::ffi::CString), ToolError> {
        let Some((parent, name)) = beneath::split(rel).map_err(|e| io_error(verb, shown, &e))?
        else {
            return Err(ToolError::Refused(format!(
                "refused: {shown:?} is the workspace root itself, which cannot be {verb}d; name a path inside it"
            )));
        };
        let dir = self
            .open(parent, libc::O_PATH | libc::O_DIRECTORY, changes)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::ENOTDIR) => ToolError::Failed(format!(
                    "the directory of {shown:?} does not exist; create it first with mkdir"
                )),
                _ => io_error(verb, shown, &e),
            })?;
        Ok((dir, name))
    }
}

/// Opens the workspace root, the anchor of every other open.
pub(super) fn open_root(root: &Path) -> Result<File, ToolError> {
    beneath::open_root(root).map_err(|e| {
        ToolError::Failed(format!(
            "the workspace {} cannot be opened ({e}); create it, or set tools.workspace to a directory that exists",
            root.display()
        ))
    })
}

/// Refuses a regular file with more than one hard link: any of its other names may be
/// outside the workspace.
fn check_links(verb: &str, shown: &str, st: &Stat) -> Result<(), ToolError> {
    if st.kind == Kind::File && st.nlink > 1 {
        return Err(ToolError::Refused(format!(
            "refused to {verb} {shown:?}: it has {} hard links, and a hard-linked file may be a file outside the workspace. Copy the content into a new file if you need it",
            st.nlink
        )));
    }
    Ok(())
}

pub(super) fn read(
    at: &At<'_>,
    rel: &Path,
    shown: &str,
    limits: FileLimits,
) -> Result<ToolOutput, ToolError> {
    // O_NONBLOCK: opening a named pipe must not hang; reads of regular files ignore it.
    let file = at
        .open(
            rel,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
            false,
        )
        .map_err(|e| io_error("read", shown, &e))?;
    let st = Stat::of(&file).map_err(|e| io_error("read", shown, &e))?;
    match st.kind {
        Kind::Dir => {
            return Err(ToolError::Failed(format!(
                "{shown:?} is a directory; use the list operation to see what is in it"
            )));
        }
        Kind::File => {}
        _ => {
            return Err(ToolError::Failed(format!(
                "{shown:?} is not a regular file (a device, pipe or socket); only regular files can be read"
            )));
        }
    }
    check_links("read", shown, &st)?;
    let size = st.size;
    let mut bytes = Vec::with_capacity(size.min(limits.read_limit_bytes) as usize);
    file.take(limits.read_limit_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", shown, &e))?;
    let partial = (bytes.len() as u64) < size;
    if !looks_like_text(&bytes) {
        let description = format!(
            "{shown} is a binary file of {}; it starts with: {}",
            format_bytes(size),
            hex_preview(&bytes, 32)
        );
        return Ok(ToolOutput {
            summary: format!("binary file, {}", format_bytes(size)),
            text: description.clone(),
            chat: format!("`{shown}`: {description}"),
            attachment: None,
        });
    }
    let content = String::from_utf8_lossy(&bytes).into_owned();
    let lines = content.lines().count();
    let mut summary = format!("{}, {lines} lines", format_bytes(size));
    let mut text = content.clone();
    if partial {
        summary.push_str(&format!(
            "; only the first {} read",
            format_bytes(limits.read_limit_bytes)
        ));
        text.push_str(&format!(
            "\n[... file continues: {} of {} read]",
            format_bytes(bytes.len() as u64),
            format_bytes(size)
        ));
    }
    let (shown_content, was_cut) = cut(&content, limits.chat_budget);
    let language = Path::new(shown)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    let mut chat = format!(
        "`{shown}` ({summary})\n{}",
        code_block(language, &shown_content)
    );
    if was_cut || partial {
        chat.push_str("\n(full content attached)");
    }
    Ok(ToolOutput {
        summary,
        text,
        chat,
        attachment: (was_cut || partial).then(|| Attachment {
            filename: file_name(rel),
            bytes,
        }),
    })
}

pub(super) fn list(
    at: &At<'_>,
    rel: &Path,
    shown: &str,
    limits: FileLimits,
) -> Result<ToolOutput, ToolError> {
    let dir = at
        .open(rel, libc::O_RDONLY | libc::O_DIRECTORY, false)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOTDIR) => ToolError::Failed(format!(
                "{shown:?} is not a directory; use the read operation for a file"
            )),
            _ => io_error("list", shown, &e),
        })?;
    let names = beneath::entries(&dir).map_err(|e| io_error("list", shown, &e))?;
    let mut entries: Vec<(String, String, String)> = Vec::new();
    for name in names {
        let shown_name = name.to_string_lossy().into_owned();
        let st = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(name.as_os_str()))
            .ok()
            .and_then(|c| beneath::stat_at(dir.as_fd(), &c).ok());
        let (kind, size) = match st.map(|s| (s.kind, s.size)) {
            Some((Kind::Symlink, _)) => ("link", String::new()),
            Some((Kind::Dir, _)) => ("dir", String::new()),
            Some((_, size)) => ("file", format_bytes(size)),
            None => ("?", String::new()),
        };
        let name = if kind == "dir" {
            format!("{shown_name}/")
        } else {
            shown_name
        };
        entries.push((name, kind.to_owned(), size));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let total = entries.len();
    entries.truncate(limits.list_limit);
    let listing: String = entries
        .iter()
        .map(|(name, kind, size)| format!("{kind:<4} {size:>10}  {name}\n"))
        .collect();
    let summary = if total > entries.len() {
        format!("{} of {total} entries", entries.len())
    } else {
        format!("{total} entries")
    };
    let (shown_listing, was_cut) = cut(&listing, limits.chat_budget);
    let mut chat = format!("`{shown}` ({summary})\n{}", code_block("", &shown_listing));
    if was_cut {
        chat.push_str("\n(full listing attached)");
    }
    Ok(ToolOutput {
        summary,
        text: if listing.is_empty() {
            "(empty directory)".to_owned()
        } else {
            listing.clone()
        },
        chat,
        attachment: was_cut.then(|| Attachment {
            filename: "listing.txt".to_owned(),
            bytes: listing.into_bytes(),
        }),
    })
}

pub(super) fn exists(at: &At<'_>, rel: &Path, shown: &str) -> Result<ToolOutput, ToolError> {
    let Some((parent, name)) = beneath::split(rel).map_err(|e| io_error("check", shown, &e))?
    else {
        return Ok(simple(format!("{shown} exists: a directory")));
    };
    let dir = match at.open(parent, libc::O_PATH | libc::O_DIRECTORY, false) {
        Ok(dir) => dir,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
            return Ok(simple(format!("{shown} does not exist")));
        }
        Err(e) => return Err(io_error("check", shown, &e)),
    };
    let text = match beneath::stat_at(dir.as_fd(), &name) {
        Ok(st) => match st.kind {
            Kind::Dir => format!("{shown} exists: a directory"),
            Kind::Symlink => format!("{shown} exists: a symbolic link"),
            _ => format!("{shown} exists: a file of {}", format_bytes(st.size)),
        },
        Err(_) => format!("{shown} does not exist"),
    };
    Ok(simple(text))
}

/// Replaces (or creates) a file atomically: the content goes to a temp file in the same
/// directory, which is then renamed over the target (without a click: linked to the new name,
/// which fails if the name exists by then).
pub(super) fn write(
    at: &At<'_>,
    rel: &Path,
    shown: &str,
    content: &str,
    append: bool,
) -> Result<ToolOutput, ToolError> {
    let verb = if append { "append" } else { "write" };
    let (dir, name) = at.parent(verb, rel, shown, true)?;
    let existing = match beneath::stat_at(dir.as_fd(), &name) {
        Ok(st) => Some(st),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
        Err(e) => return Err(io_error(verb, shown, &e)),
    };
    let mut previous = Vec::new();
    // A new file keeps the temp file's 0600 (as before); a replaced one keeps its own mode.
    let mut mode = None;
    if let Some(st) = existing {
        if st.kind == Kind::Dir {
            return Err(ToolError::Failed(format!("{shown:?} is a directory")));
        }
        if !at.confirmed {
            return Err(ToolError::Refused(format!(
                "refused: {shown:?} exists now, and a {verb} without a person's confirmation may only create a new file. Ask again so the change can be confirmed"
            )));
        }
        // The current content (for append), its permissions and its links, through the
        // same race-free open (a symlink that stays inside is followed for a confirmed call).
        let file = at
            .open(
                rel,
                libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
                true,
            )
            .map_err(|e| io_error(verb, shown, &e))?;
        let current = Stat::of(&file).map_err(|e| io_error(verb, shown, &e))?;
        if current.kind != Kind::File {
            return Err(ToolError::Failed(format!(
                "{shown:?} is not a regular file; only regular files can be written"
            )));
        }
        check_links(verb, shown, &current)?;
        mode = Some(current.mode);
        if append {
            (&file)
                .read_to_end(&mut previous)
                .map_err(|e| io_error(verb, shown, &e))?;
        }
    }
    let (temp_name, mut temp) = temp_file(&dir, verb, shown)?;
    let written = (|| {
        if let Some(mode) = mode {
            temp.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        temp.write_all(&previous)?;
        temp.write_all(content.as_bytes())?;
        temp.sync_all()
    })();
    drop(temp);
    let placed = written.and_then(|()| {
        if at.confirmed {
            beneath::rename_at(dir.as_fd(), &temp_name, dir.as_fd(), &name)
        } else {
            beneath::link_at(dir.as_fd(), &temp_name, &name)
                .and_then(|()| beneath::unlink_at(dir.as_fd(), &temp_name, false))
        }
    });
    if let Err(e) = placed {
        let _ = beneath::unlink_at(dir.as_fd(), &temp_name, false);
        if e.raw_os_error() == Some(libc::EEXIST) {
            return Err(ToolError::Refused(format!(
                "refused: {shown:?} appeared while the {verb} ran, and a {verb} without a person's confirmation may only create a new file. Ask again so the change can be confirmed"
            )));
        }
        return Err(io_error(verb, shown, &e));
    }
    let written = content.len() as u64;
    Ok(simple(if append {
        format!(
            "appended {} to {shown} (now {})",
            format_bytes(written),
            format_bytes(previous.len() as u64 + written)
        )
    } else {
        format!("wrote {} to {shown}", format_bytes(written))
    }))
}

/// A new, empty temp file in `dir`, created exclusively.
fn temp_file(dir: &File, verb: &str, shown: &str) -> Result<(std::ffi::CString, File), ToolError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!(".riskgate-{}-{nanos:x}-{n}", std::process::id());
        let name = std::ffi::CString::new(name)
            .map_err(|_| ToolError::Failed("a temp file name had a NUL byte".to_owned()))?;
        match beneath::create_new(dir.as_fd(), &name, 0o600) {
            Ok(file) => return Ok((name, file)),
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => last = Some(e),
            Err(e) => return Err(io_error(verb, shown, &e)),
        }
    }
    let e = last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EEXIST));
    Err(io_error(verb, shown, &e))
}

pub(super) fn mkdir(
    at: &At<'_>,
    rel: &Path,
    shown: &str,
    parents: bool,
) -> Result<ToolOutput, ToolError> {
    if !parents {
        let (dir, name) = at.parent("create", rel, shown, true).map_err(|e| match e {
            ToolError::Failed(_) => ToolError::Failed(format!(
                "the parent of {shown:?} does not exist; pass recursive: true to create it too"
            )),
            other => other,
        })?;
        beneath::mkdir_at(dir.as_fd(), &name).map_err(|e| mkdir_error(shown, &e))?;
        return Ok(simple(format!("created the directory {shown}")));
    }
    let parts: Vec<_> = rel.components().collect();
    if parts.is_empty() {
        return Err(ToolError::Failed(format!("{shown:?} already exists")));
    }
    for i in 1..=parts.len() {
        let prefix: std::path::PathBuf = parts[..i].iter().collect();
        let (dir, name) = at.parent("create", &prefix, shown, true)?;
        match beneath::mkdir_at(dir.as_fd(), &name) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) && i < parts.len() => {}
            Err(e) => return Err(mkdir_error(shown, &e)),
        }
    }
    Ok(simple(format!("created the directory {shown}")))
}

fn mkdir_error(shown: &str, e: &std::io::Error) -> ToolError {
    match e.raw_os_error() {
        Some(libc::EEXIST) => ToolError::Failed(format!("{shown:?} already exists")),
        _ => io_error("create", shown, e),
    }
}

pub(super) fn delete(
    at: &At<'_>,
    rel: &Path,
    shown: &str,
    recursive: bool,
) -> Result<ToolOutput, ToolError> {
    let (dir, name) = at.parent("delete", rel, shown, true).map_err(|e| match e {
        ToolError::Failed(_) => {
            ToolError::Failed(format!("could not delete {shown:?}: it does not exist"))
        }
        other => other,
    })?;
    let st = beneath::stat_at(dir.as_fd(), &name).map_err(|e| io_error("delete", shown, &e))?;
    if st.kind == Kind::Dir {
        if recursive {
            beneath::remove_tree(dir.as_fd(), &name, 0)
                .map_err(|e| io_error("delete", shown, &e))?;
            return Ok(simple(format!(
                "deleted the directory {shown} and everything in it"
            )));
        }
        beneath::unlink_at(dir.as_fd(), &name, true).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOTEMPTY) {
                ToolError::Failed(format!(
                    "{shown:?} is a directory that is not empty; pass recursive: true to delete it with its contents"
                ))
            } else {
                io_error("delete", shown, &e)
            }
        })?;
        return Ok(simple(format!("deleted the empty directory {shown}")));
    }
    // A symlink is removed as a link; its target is never touched.
    beneath::unlink_at(dir.as_fd(), &name, false).map_err(|e| io_error("delete", shown, &e))?;
    Ok(simple(format!("deleted {shown}")))
}

pub(super) fn rename(
    at: &At<'_>,
    from: &Path,
    shown: &str,
    to: &Path,
    shown_to: &str,
) -> Result<ToolOutput, ToolError> {
    let (from_dir, from_name) = at.parent("move", from, shown, true)?;
    beneath::stat_at(from_dir.as_fd(), &from_name).map_err(|e| io_error("move", shown, &e))?;
    let (to_dir, to_name) = at.parent("move", to, shown_to, true)?;
    match beneath::stat_at(to_dir.as_fd(), &to_name) {
        Ok(st) if st.kind == Kind::Dir => {
            return Err(ToolError::Failed(format!(
                "the destination {shown_to:?} is an existing directory; name the new path in full"
            )));
        }
        Ok(_) if !at.confirmed => {
            return Err(ToolError::Refused(format!(
                "refused: the destination {shown_to:?} exists, and a move without a person's confirmation may not replace it. Ask again so the change can be confirmed"
            )));
        }
        _ => {}
    }
    beneath::rename_at(from_dir.as_fd(), &from_name, to_dir.as_fd(), &to_name)
        .map_err(|e| io_error("move", shown, &e))?;
    Ok(simple(format!("moved {shown} to {shown_to}")))
}

fn simple(text: String) -> ToolOutput {
    ToolOutput {
        summary: text.clone(),
        chat: text.clone(),
        text,
        attachment: None,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_owned())
}

fn io_error(verb: &str, shown: &str, e: &std::io::Error) -> ToolError {
    if matches!(e.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP)) {
        return ToolError::Refused(format!(
            "refused to {verb} {shown:?}: the path goes through a symlink that leads outside the workspace (or, for a change nobody confirmed, through any symlink). Use the real path inside the workspace"
        ));
    }
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    };
    ToolError::Failed(format!("could not {verb} {shown:?}: {what}"))
}
