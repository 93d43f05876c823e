//! Race-free access below the workspace root. Every path the file tool touches is opened
//! relative to a descriptor of the workspace root with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)`: the kernel refuses any step (`..`, an absolute symlink, a symlink
//! that climbs out, a `/proc` magic link) that would leave the root, at the moment of the open,
//! so a symlink swapped in after the gate looked cannot lead outside. Where `openat2` is
//! missing (ENOSYS, or a sandbox that answers EPERM) the same open is done by a descriptor
//! walk, one component at a time with `O_NOFOLLOW`, which refuses every symlink. Everything
//! after the open (reading, listing, creating, renaming, unlinking) works on the descriptors,
//! never on path strings again.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path};

/// `struct open_how` of `linux/openat2.h` (the libc crate's copy is `non_exhaustive`).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// What a directory entry is, without following a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    Symlink,
    /// A device, pipe or socket.
    Other,
}

/// The parts of `stat` the file tool uses.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stat {
    pub kind: Kind,
    pub size: u64,
    pub nlink: u64,
    pub mode: u32,
}

impl Stat {
    fn from_raw(st: &libc::stat) -> Self {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        };
        Self {
            kind,
            size: u64::try_from(st.st_size).unwrap_or(0),
            #[allow(clippy::useless_conversion)] // `nlink_t` is u32 on some targets.
            nlink: u64::from(st.st_nlink),
            mode: st.st_mode & 0o7777,
        }
    }

    pub fn of(file: &File) -> io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata()?;
        let kind = match meta.mode() & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            _ => Kind::Other,
        };
        Ok(Self {
            kind,
            size: meta.size(),
            nlink: meta.nlink(),
            mode: meta.mode() & 0o7777,
        })
    }
}

/// Opens the workspace root itself (a path the operator configured, trusted as it is).
pub(super) fn open_root(root: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
        .open(root)
}

/// The components of a workspace-relative path; anything but plain names (and `.`) is an
/// error, since the caller resolved `..` lexically already.
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the path is not relative to the workspace",
                ));
            }
        }
    }
    Ok(out)
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))
}

/// Opens `rel` below `dir`: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (plus
/// `RESOLVE_NO_SYMLINKS` when `no_symlinks`), or the descriptor walk where `openat2` is not
/// available. `flags` are `open(2)` flags; `O_CLOEXEC` is always added.
pub(super) fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: libc::c_int,
    no_symlinks: bool,
) -> io::Result<File> {
    let parts = names(rel)?;
    match openat2(dir, &parts, flags, no_symlinks) {
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) => {
            walk(dir, &parts, flags)
        }
        other => other,
    }
}

fn openat2(
    dir: BorrowedFd<'_>,
    parts: &[&OsStr],
    flags: libc::c_int,
    no_symlinks: bool,
) -> io::Result<File> {
    let mut joined = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            joined.push(b'/');
        }
        joined.extend_from_slice(part.as_bytes());
    }
    if joined.is_empty() {
        joined.push(b'.');
    }
    let path = CString::new(joined)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))?;
    let mut resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    if no_symlinks {
        resolve |= libc::RESOLVE_NO_SYMLINKS;
    }
    let how = OpenHow {
        flags: u64::try_from(flags | libc::O_CLOEXEC).unwrap_or(0),
        mode: 0,
        resolve,
    };
    // The kernel answers EAGAIN when a concurrent rename made it unsure a lookup stayed
    // beneath; asking again is what the man page advises.
    for _ in 0..16 {
        // SAFETY: `path` is a NUL-terminated string and `how` a properly laid out `open_how`
        // that both outlive the call; the size passed is the size of `how`.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir.as_raw_fd(),
                path.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("bad descriptor"))?;
            // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
            return Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }));
        }
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EAGAIN) {
            return Err(error);
        }
    }
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

/// The fallback: one `openat` per component, none following a symlink.
pub(super) fn walk(dir: BorrowedFd<'_>, parts: &[&OsStr], flags: libc::c_int) -> io::Result<File> {
    let Some((last, inner)) = parts.split_last() else {
        return openat(dir, c".", flags);
    };
    let mut current: Option<File> = None;
    for part in inner {
        let at = current.as_ref().map_or(dir, |f| f.as_fd());
        let name = c_name(part)?;
        let next = match openat(
            at,
            &name,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        ) {
            // O_PATH | O_NOFOLLOW on a symlink with O_DIRECTORY says ENOTDIR: say what it is.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                return Err(match stat_at(at, &name) {
                    Ok(st) if st.kind == Kind::Symlink => io::Error::from_raw_os_error(libc::ELOOP),
                    _ => e,
                });
            }
            other => other?,
        };
        current = Some(next);
    }
    let at = current.as_ref().map_or(dir, |f| f.as_fd());
    let file = openat(at, &c_name(last)?, flags | libc::O_NOFOLLOW)?;
    if flags & libc::O_PATH != 0 && Stat::of(&file)?.kind == Kind::Symlink {
        return Err(io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(file)
}

fn openat(dir: BorrowedFd<'_>, name: &CStr, flags: libc::c_int) -> io::Result<File> {
    openat_mode(dir, name, flags, 0)
}

fn openat_mode(
    dir: BorrowedFd<'_>,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<File> {
    // SAFETY: `name` is NUL-terminated and outlives the call; `dir` is an open descriptor.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Creates `name` in `dir` exclusively (never through a symlink) for writing.
pub(super) fn create_new(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<File> {
    openat_mode(
        dir,
        name,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        mode as libc::mode_t,
    )
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`.
pub(super) fn stat_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<Stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is NUL-terminated, `st` is writable memory of the right type and size.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat returned 0, so it filled `st`.
    let st = unsafe { st.assume_init() };
    Ok(Stat::from_raw(&st))
}

pub(super) fn mkdir_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let rc = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat`: a directory (empty) when `dir_entry`, anything else otherwise.
pub(super) fn unlink_at(dir: BorrowedFd<'_>, name: &CStr, dir_entry: bool) -> io::Result<()> {
    let flags = if dir_entry { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let rc = unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(super) fn rename_at(
    from_dir: BorrowedFd<'_>,
    from: &CStr,
    to_dir: BorrowedFd<'_>,
    to: &CStr,
) -> io::Result<()> {
    // SAFETY: both names are NUL-terminated and outlive the call.
    let rc = unsafe {
        libc::renameat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Gives `from` the second name `to` in the same directory; fails with EEXIST when `to`
/// exists, so nothing is ever replaced.
pub(super) fn link_at(dir: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    // SAFETY: both names are NUL-terminated and outlive the call; flags 0 follows nothing.
    let rc = unsafe {
        libc::linkat(
            dir.as_raw_fd(),
            from.as_ptr(),
            dir.as_raw_fd(),
            to.as_ptr(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The names in an open directory (without `.` and `..`).
pub(super) fn entries(dir: &File) -> io::Result<Vec<OsString>> {
    // fdopendir takes the descriptor over, so it gets its own copy, opened for reading.
    let own = openat(dir.as_fd(), c".", libc::O_RDONLY | libc::O_DIRECTORY)?;
    let raw = std::os::fd::IntoRawFd::into_raw_fd(own);
    // SAFETY: `raw` is an open directory descriptor we own; on success the DIR owns it.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let error = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `raw` is still ours to close.
        drop(unsafe { OwnedFd::from_raw_fd(raw) });
        return Err(error);
    }
    let mut names = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; zeroing it tells the end of the stream from an error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: `stream` is a valid DIR that only this function uses.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let error = io::Error::last_os_error();
            break if error.raw_os_error().unwrap_or(0) == 0 {
                Ok(())
            } else {
                Err(error)
            };
        }
        // SAFETY: readdir returned a valid entry whose `d_name` is NUL-terminated and stays
        // valid until the next readdir on this stream; it is copied out at once.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        let bytes = name.to_bytes();
        if bytes != b"." && bytes != b".." {
            names.push(OsStr::from_bytes(bytes).to_os_string());
        }
    };
    // SAFETY: `stream` came from fdopendir and is closed exactly once.
    unsafe { libc::closedir(stream) };
    result.map(|()| names)
}

/// Deletes the directory `name` in `parent` and everything in it, never following a symlink
/// (a link inside is removed as a link).
pub(super) fn remove_tree(parent: BorrowedFd<'_>, name: &CStr, depth: usize) -> io::Result<()> {
    if depth > 256 {
        return Err(io::Error::other(
            "the directory tree is nested more than 256 deep",
        ));
    }
    let dir = openat(
        parent,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
    )?;
    for entry in entries(&dir)? {
        let entry = c_name(&entry)?;
        match stat_at(dir.as_fd(), &entry)?.kind {
            Kind::Dir => remove_tree(dir.as_fd(), &entry, depth + 1)?,
            _ => unlink_at(dir.as_fd(), &entry, false)?,
        }
    }
    unlink_at(parent, name, true)
}

/// Splits a workspace-relative path into its parent and its last name (`None` for the root).
pub(super) fn split(rel: &Path) -> io::Result<Option<(&Path, CString)>> {
    let parts = names(rel)?;
    let Some(last) = parts.last() else {
        return Ok(None);
    };
    let parent = rel.parent().unwrap_or(Path::new(""));
    Ok(Some((parent, c_name(last)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir, File) {
        let ws = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("secret"), "s3cret").expect("write");
        std::fs::create_dir(ws.path().join("real")).expect("mkdir");
        std::fs::write(ws.path().join("real/inside"), "inside").expect("write");
        std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).expect("symlink");
        std::os::unix::fs::symlink("../../../../../../../../proc", ws.path().join("sysinfo"))
            .expect("symlink");
        std::os::unix::fs::symlink("real", ws.path().join("alias")).expect("symlink");
        let root = open_root(ws.path()).expect("root");
        (ws, outside, root)
    }

    fn read(file: File) -> String {
        std::io::read_to_string(file).expect("read")
    }

    #[test]
    fn openat2_refuses_every_way_out_and_follows_links_that_stay_inside() {
        let (_ws, _outside, root) = setup();
        let fd = root.as_fd();
        for rel in ["out/secret", "sysinfo/self/environ", "out", "sysinfo"] {
            let err =
                open_beneath(fd, Path::new(rel), libc::O_RDONLY, false).expect_err("must not open");
            assert!(
                matches!(err.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP)),
                "{rel}: {err}"
            );
        }
        let inside = open_beneath(fd, Path::new("alias/inside"), libc::O_RDONLY, false)
            .expect("a link inside is followed");
        assert_eq!(read(inside), "inside");
        let err = open_beneath(fd, Path::new("alias/inside"), libc::O_RDONLY, true)
            .expect_err("no symlinks at all");
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
        assert!(open_beneath(fd, Path::new("../x"), libc::O_RDONLY, false).is_err());
    }

    #[test]
    fn the_walk_refuses_every_symlink() {
        let (_ws, _outside, root) = setup();
        let fd = root.as_fd();
        for rel in ["out/secret", "sysinfo/self/environ", "out", "alias/inside"] {
            let parts = names(Path::new(rel)).expect("names");
            let err = walk(fd, &parts, libc::O_RDONLY).expect_err("must not open");
            assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{rel}: {err}");
            let err = walk(fd, &parts, libc::O_PATH).expect_err("must not open");
            assert_eq!(
                err.raw_os_error(),
                Some(libc::ELOOP),
                "{rel} (O_PATH): {err}"
            );
        }
        let parts = names(Path::new("real/inside")).expect("names");
        assert_eq!(
            read(walk(fd, &parts, libc::O_RDONLY).expect("open")),
            "inside"
        );
        let dir = walk(fd, &[], libc::O_RDONLY | libc::O_DIRECTORY).expect("root");
        let mut listed = entries(&dir).expect("entries");
        listed.sort();
        assert_eq!(listed, ["alias", "out", "real", "sysinfo"]);
    }

    #[test]
    fn remove_tree_removes_links_not_their_targets() {
        let (ws, outside, root) = setup();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("real/out")).expect("symlink");
        remove_tree(root.as_fd(), c"real", 0).expect("removed");
        assert!(!ws.path().join("real").exists());
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).expect("read"),
            "s3cret"
        );
    }
}
