//! The opener's walk on unix: each step is opened from the folder before
//! it (`openat`) with `O_NOFOLLOW`, so no link is followed even when one
//! is swapped in after a check; a file is opened `O_NONBLOCK`, so a FIFO
//! never holds the open, and looked at before it is opened, so a device
//! is never opened at all.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{Kind, OpenError, create_temporary, io_error, refused};

/// Opens the file `names` leads to under `root`, for reading.
pub(super) fn open(root: &Path, names: &[&OsStr], shown: &str) -> Result<File, OpenError> {
    let Some((last, folders)) = names.split_last() else {
        return Err(OpenError::Outside(shown.to_string()));
    };
    let dir = folder(root, folders, false, shown)?;
    let name = c_name(last, shown)?;
    match kind_at(&dir, &name) {
        Ok(Kind::File) => {}
        Ok(kind) => return Err(refused(kind, shown, shown)),
        Err(error) => return Err(io_error(shown, error)),
    }
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    let fd = open_at(&dir, &name, flags, 0).map_err(|e| stepped(e, shown, shown))?;
    Ok(File::from(fd))
}

/// Writes `bytes` as the file `names` leads to under `root`, through a
/// temporary file made new and renamed over it in the same folder.
pub(super) fn write(
    root: &Path,
    names: &[&OsStr],
    bytes: &[u8],
    synced: bool,
    shown: &str,
) -> Result<(), OpenError> {
    let Some((last, folders)) = names.split_last() else {
        return Err(OpenError::Outside(shown.to_string()));
    };
    let dir = folder(root, folders, true, shown)?;
    let name = c_name(last, shown)?;
    match kind_at(&dir, &name) {
        Ok(Kind::File) => {}
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Ok(kind) => return Err(refused(kind, shown, shown)),
        Err(error) => return Err(io_error(shown, error)),
    }
    let (temp, mut file) = create_new(&dir, last, shown)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| if synced { file.sync_all() } else { Ok(()) })
        .and_then(|()| rename_at(&dir, &temp, &name));
    if let Err(error) = written {
        unlink_at(&dir, &temp);
        return Err(io_error(shown, error));
    }
    Ok(())
}

/// A temporary file beside `name` in `dir`, made new (never an existing
/// file, never through a link).
fn create_new(dir: &OwnedFd, name: &OsStr, shown: &str) -> Result<(CString, File), OpenError> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_NOCTTY;
    create_temporary(name, shown, |temp| {
        let temp = c_name(&temp, shown)?;
        let fd = open_at(dir, &temp, flags, 0o644).map_err(|error| io_error(shown, error))?;
        Ok((temp, File::from(fd)))
    })
}

/// The folder `names` leads to under `root`, each step no link; missing
/// folders are made when `create`.
fn folder(root: &Path, names: &[&OsStr], create: bool, shown: &str) -> Result<OwnedFd, OpenError> {
    let mut dir: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(root)
        .map_err(|e| io_error(shown, e))?
        .into();
    let mut at = root.to_path_buf();
    for name in names {
        at.push(name);
        let step = at.display().to_string();
        let c = c_name(name, shown)?;
        match kind_at(&dir, &c) {
            Ok(Kind::Folder) => {}
            Ok(kind) => return Err(refused(kind, shown, &step)),
            Err(error) if error.kind() == ErrorKind::NotFound && create => {
                // SAFETY: `c` is NUL-terminated and `dir` an open folder.
                let made = unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o755) };
                let error = std::io::Error::last_os_error();
                if made != 0 && error.kind() != ErrorKind::AlreadyExists {
                    return Err(io_error(shown, error));
                }
            }
            Err(error) => return Err(io_error(shown, error)),
        }
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        dir = open_at(&dir, &c, flags, 0).map_err(|e| stepped(e, shown, &step))?;
    }
    Ok(dir)
}

/// An `openat` that failed: a link swapped in after the check, or else.
fn stepped(error: std::io::Error, shown: &str, step: &str) -> OpenError {
    if error.raw_os_error() == Some(libc::ELOOP) {
        refused(Kind::Link, shown, step)
    } else {
        io_error(shown, error)
    }
}

fn c_name(name: &OsStr, shown: &str) -> Result<CString, OpenError> {
    CString::new(name.as_bytes()).map_err(|_| OpenError::Outside(shown.to_string()))
}

/// What `name` in `dir` is, not following a link.
fn kind_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<Kind> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `name` is NUL-terminated, `dir` an open folder, and `stat`
    // is written whole by a call that returns 0.
    let done = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatat returned 0, so it filled `stat`.
    let mode = unsafe { stat.assume_init() }.st_mode & libc::S_IFMT;
    Ok(match mode {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Folder,
        libc::S_IFLNK => Kind::Link,
        libc::S_IFIFO => Kind::Other("a FIFO"),
        libc::S_IFSOCK => Kind::Other("a socket"),
        libc::S_IFCHR | libc::S_IFBLK => Kind::Other("a device"),
        _ => Kind::Other("something other than a file"),
    })
}

fn open_at(
    dir: &OwnedFd,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> std::io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and `dir` an open folder; the mode
    // is read only with O_CREAT.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            libc::c_uint::from(mode),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor openat just returned, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn rename_at(dir: &OwnedFd, from: &CStr, to: &CStr) -> std::io::Result<()> {
    // SAFETY: both names NUL-terminated, `dir` an open folder.
    let done =
        unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn unlink_at(dir: &OwnedFd, name: &CStr) {
    // SAFETY: `name` NUL-terminated, `dir` an open folder; a failure
    // leaves a temporary file behind, nothing worse.
    unsafe {
        libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0);
    }
}
