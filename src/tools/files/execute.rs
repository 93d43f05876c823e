//! Running file operations: containment checked again at execution time (symlinks
//! resolved), reads capped and binary files described, writes atomic (temp file + rename).

use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use crate::core::tools::{Attachment, ToolError, ToolOutput, format_bytes};
use crate::tools::render::{code_block, cut, hex_preview, looks_like_text};

/// Limits of one call.
#[derive(Debug, Clone, Copy)]
pub(super) struct FileLimits {
    pub read_limit_bytes: u64,
    pub list_limit: usize,
    pub chat_budget: usize,
}

pub(super) fn read(path: &Path, shown: &str, limits: FileLimits) -> Result<ToolOutput, ToolError> {
    let meta = fs::metadata(path).map_err(|e| io_error("read", shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown:?} is a directory; use the list operation to see what is in it"
        )));
    }
    let size = meta.len();
    let mut bytes = Vec::with_capacity(size.min(limits.read_limit_bytes) as usize);
    fs::File::open(path)
        .and_then(|f| f.take(limits.read_limit_bytes).read_to_end(&mut bytes))
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
            filename: file_name(path),
            bytes,
        }),
    })
}

pub(super) fn list(path: &Path, shown: &str, limits: FileLimits) -> Result<ToolOutput, ToolError> {
    let mut entries: Vec<(String, String, String)> = Vec::new();
    let reader = fs::read_dir(path).map_err(|e| io_error("list", shown, &e))?;
    for entry in reader {
        let entry = entry.map_err(|e| io_error("list", shown, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let meta = entry.metadata();
        let file_type = entry.file_type().ok();
        let (kind, size) = match (file_type, meta) {
            (Some(t), _) if t.is_symlink() => ("link", String::new()),
            (Some(t), _) if t.is_dir() => ("dir", String::new()),
            (_, Ok(m)) => ("file", format_bytes(m.len())),
            (_, Err(_)) => ("?", String::new()),
        };
        let name = if kind == "dir" {
            format!("{name}/")
        } else {
            name
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

pub(super) fn exists(path: &Path, shown: &str) -> ToolOutput {
    let text = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => format!("{shown} exists: a directory"),
        Ok(m) if m.file_type().is_symlink() => format!("{shown} exists: a symbolic link"),
        Ok(m) => format!("{shown} exists: a file of {}", format_bytes(m.len())),
        Err(_) => format!("{shown} does not exist"),
    };
    simple(text)
}

/// Replaces (or creates) a file atomically: the content goes to a temp file in the same
/// directory, which is then renamed over the target.
pub(super) fn write(
    path: &Path,
    shown: &str,
    content: &str,
    append: bool,
) -> Result<ToolOutput, ToolError> {
    if path.is_dir() {
        return Err(ToolError::Failed(format!("{shown:?} is a directory")));
    }
    let parent = path
        .parent()
        .ok_or_else(|| ToolError::Failed(format!("{shown:?} has no parent directory")))?;
    if !parent.is_dir() {
        return Err(ToolError::Failed(format!(
            "the directory of {shown:?} does not exist; create it first with mkdir"
        )));
    }
    let verb = if append { "append" } else { "write" };
    let mut temp = tempfile::Builder::new()
        .prefix(".riskgate-")
        .tempfile_in(parent)
        .map_err(|e| io_error(verb, shown, &e))?;
    let mut previous = 0;
    if append && path.exists() {
        let mut existing = fs::File::open(path).map_err(|e| io_error(verb, shown, &e))?;
        previous = std::io::copy(&mut existing, temp.as_file_mut())
            .map_err(|e| io_error(verb, shown, &e))?;
    }
    if let Ok(meta) = fs::metadata(path) {
        // Keep the file's permissions across the rename.
        let _ = temp.as_file().set_permissions(meta.permissions());
    }
    temp.write_all(content.as_bytes())
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| io_error(verb, shown, &e))?;
    temp.persist(path)
        .map_err(|e| io_error(verb, shown, &e.error))?;
    let written = content.len() as u64;
    Ok(simple(if append {
        format!(
            "appended {} to {shown} (now {})",
            format_bytes(written),
            format_bytes(previous + written)
        )
    } else {
        format!("wrote {} to {shown}", format_bytes(written))
    }))
}

pub(super) fn mkdir(path: &Path, shown: &str, parents: bool) -> Result<ToolOutput, ToolError> {
    if path.exists() {
        return Err(ToolError::Failed(format!("{shown:?} already exists")));
    }
    let result = if parents {
        fs::create_dir_all(path)
    } else {
        fs::create_dir(path)
    };
    result.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::Failed(format!(
                "the parent of {shown:?} does not exist; pass recursive: true to create it too"
            ))
        } else {
            io_error("create", shown, &e)
        }
    })?;
    Ok(simple(format!("created the directory {shown}")))
}

pub(super) fn delete(path: &Path, shown: &str, recursive: bool) -> Result<ToolOutput, ToolError> {
    let meta = fs::symlink_metadata(path).map_err(|e| io_error("delete", shown, &e))?;
    if meta.is_dir() {
        if recursive {
            fs::remove_dir_all(path).map_err(|e| io_error("delete", shown, &e))?;
            return Ok(simple(format!(
                "deleted the directory {shown} and everything in it"
            )));
        }
        fs::remove_dir(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::DirectoryNotEmpty {
                ToolError::Failed(format!(
                    "{shown:?} is a directory that is not empty; pass recursive: true to delete it with its contents"
                ))
            } else {
                io_error("delete", shown, &e)
            }
        })?;
        return Ok(simple(format!("deleted the empty directory {shown}")));
    }
    fs::remove_file(path).map_err(|e| io_error("delete", shown, &e))?;
    Ok(simple(format!("deleted {shown}")))
}

pub(super) fn rename(
    from: &Path,
    shown: &str,
    to: &Path,
    shown_to: &str,
) -> Result<ToolOutput, ToolError> {
    fs::symlink_metadata(from).map_err(|e| io_error("move", shown, &e))?;
    if to.is_dir() {
        return Err(ToolError::Failed(format!(
            "the destination {shown_to:?} is an existing directory; name the new path in full"
        )));
    }
    fs::rename(from, to).map_err(|e| io_error("move", shown, &e))?;
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
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    };
    ToolError::Failed(format!("could not {verb} {shown:?}: {what}"))
}
