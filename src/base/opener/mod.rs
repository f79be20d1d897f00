//! One opener for every file a show folder holds, read or written. A file
//! is reached from its folder one name at a time, and a symbolic link at
//! any step is refused (on unix `openat` with `O_NOFOLLOW` from the
//! folder's own descriptor, so a link swapped in between the check and
//! the open is refused too; elsewhere each step's `symlink_metadata`). Only
//! plain files are opened: a FIFO (which would block a reader for ever),
//! a device (`/dev/zero` never ends) or a socket is refused before it is
//! read, and opening never blocks (`O_NONBLOCK`). Every read is capped by
//! the caller's size for its kind of file, checked on the open file and
//! again while reading, so a file that grows cannot pass it.
//!
//! A write goes into a temporary file made new (`O_EXCL`, `O_NOFOLLOW`)
//! beside the target, then renamed over it inside the same folder; a
//! target that is a link or not a plain file is refused. So a peer that
//! can only trigger saves cannot make the show write outside its folder,
//! whatever was planted in it.
//!
//! Paths a person typed on the command line are theirs to aim anywhere:
//! [`open_typed`] follows their links but still opens only plain files
//! within a size.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};

/// Why a file of the show folder was not opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The name is absolute or climbs out with `..`.
    #[error("{0:?} is not a name inside the show folder (no absolute paths, no `..`)")]
    Outside(String),
    /// No such file.
    #[error("{path}: no such file")]
    Missing {
        /// The path asked for.
        path: String,
    },
    /// A step on the way is a symbolic link.
    #[error(
        "{path}: {link} is a symbolic link; a show folder's files are only read and written as plain files inside it"
    )]
    Symlink {
        /// The path asked for.
        path: String,
        /// The step that is a link.
        link: String,
    },
    /// Not a plain file (or a folder on the way that is not a folder).
    #[error("{path} is {what}, not a plain file")]
    NotAFile {
        /// The path asked for.
        path: String,
        /// What it is instead.
        what: &'static str,
    },
    /// Over the size its kind of file may have.
    #[error("{path} is {bytes} bytes; a file of this kind may be at most {limit}")]
    TooLarge {
        /// The path asked for.
        path: String,
        /// Its size (at least).
        bytes: u64,
        /// The cap.
        limit: u64,
    },
    /// The system refused.
    #[error("{path}: {reason}")]
    Io {
        /// The path asked for.
        path: String,
        /// The OS error.
        reason: std::io::Error,
    },
}

impl OpenError {
    /// Whether there was simply no file (a caller may fall back then).
    pub fn is_missing(&self) -> bool {
        matches!(self, OpenError::Missing { .. })
    }
}

/// A plain file opened for reading, and its size when opened.
#[derive(Debug)]
pub struct Opened {
    /// The open file.
    pub file: File,
    /// Its length in bytes.
    pub size: u64,
    /// Where it is, for messages.
    pub path: PathBuf,
}

/// What a directory entry is, read without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Folder,
    Link,
    Other(&'static str),
}

impl Kind {
    fn of(kind: std::fs::FileType) -> Self {
        if kind.is_symlink() {
            return Kind::Link;
        }
        if kind.is_file() {
            return Kind::File;
        }
        if kind.is_dir() {
            return Kind::Folder;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                return Kind::Other("a FIFO");
            }
            if kind.is_socket() {
                return Kind::Other("a socket");
            }
            if kind.is_char_device() || kind.is_block_device() {
                return Kind::Other("a device");
            }
        }
        Kind::Other("something other than a file")
    }

    fn what(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Folder => "a folder",
            Kind::Link => "a symbolic link",
            Kind::Other(what) => what,
        }
    }
}

/// The names of `relative`, each a plain name, or why not.
fn names<'a>(relative: &'a Path, shown: &Path) -> Result<Vec<&'a OsStr>, OpenError> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            _ => return Err(OpenError::Outside(shown.display().to_string())),
        }
    }
    if names.is_empty() {
        return Err(OpenError::Outside(shown.display().to_string()));
    }
    Ok(names)
}

/// Opens `relative` under `root` for reading: no link on the way, a plain
/// file, at most `limit` bytes. The root itself is the show's own choice
/// and may be reached through links.
pub fn open(root: &Path, relative: &Path, limit: u64) -> Result<Opened, OpenError> {
    let path = root.join(relative);
    let shown = path.display().to_string();
    let names = names(relative, relative)?;
    let file = walk::open(root, &names, &shown)?;
    opened(file, path, limit)
}

/// Checks the open `file` is a plain file within `limit`.
fn opened(file: File, path: PathBuf, limit: u64) -> Result<Opened, OpenError> {
    let shown = || path.display().to_string();
    let metadata = file.metadata().map_err(|reason| OpenError::Io {
        path: shown(),
        reason,
    })?;
    let kind = Kind::of(metadata.file_type());
    if kind != Kind::File {
        return Err(OpenError::NotAFile {
            path: shown(),
            what: kind.what(),
        });
    }
    if metadata.len() > limit {
        return Err(OpenError::TooLarge {
            path: shown(),
            bytes: metadata.len(),
            limit,
        });
    }
    Ok(Opened {
        file,
        size: metadata.len(),
        path,
    })
}

/// The whole of `relative` under `root`, as [`open`] opens it.
pub fn read(root: &Path, relative: &Path, limit: u64) -> Result<Vec<u8>, OpenError> {
    read_opened(open(root, relative, limit)?, limit)
}

/// The whole of `relative` under `root` as UTF-8 text.
pub fn read_text(root: &Path, relative: &Path, limit: u64) -> Result<String, OpenError> {
    let path = root.join(relative);
    let bytes = read(root, relative, limit)?;
    String::from_utf8(bytes).map_err(|_| OpenError::Io {
        path: path.display().to_string(),
        reason: std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"),
    })
}

/// Reads an opened file whole, never more than `limit` bytes (a file that
/// grew since it was opened is refused, not read on).
fn read_opened(opened: Opened, limit: u64) -> Result<Vec<u8>, OpenError> {
    let Opened { file, size, path } = opened;
    let mut bytes = Vec::with_capacity(size.min(limit) as usize);
    let read = file
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|reason| OpenError::Io {
            path: path.display().to_string(),
            reason,
        })?;
    if read as u64 > limit {
        return Err(OpenError::TooLarge {
            path: path.display().to_string(),
            bytes: read as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// A read of a show file on a thread of its own, for files read again
/// while the show runs: a slow disk holds the thread, never a frame.
#[derive(Debug)]
pub struct Reading {
    result: Receiver<Result<Vec<u8>, OpenError>>,
}

impl Reading {
    /// Starts reading `relative` under `root`, as [`read`] does.
    pub fn start(root: PathBuf, relative: PathBuf, limit: u64) -> Self {
        let (send, result) = sync_channel(1);
        let shown = root.join(&relative).display().to_string();
        let spawned = std::thread::Builder::new()
            .name("sylva read".into())
            .spawn(move || {
                send.send(read(&root, &relative, limit)).ok();
            });
        if let Err(reason) = spawned {
            let (send, result) = sync_channel(1);
            send.send(Err(OpenError::Io {
                path: shown,
                reason,
            }))
            .ok();
            return Self { result };
        }
        Self { result }
    }

    /// The bytes or why not, once the read is done.
    pub fn finished(&self) -> Option<Result<Vec<u8>, OpenError>> {
        match self.result.try_recv() {
            Ok(read) => Some(read),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(OpenError::Io {
                path: String::new(),
                reason: std::io::Error::other("the reading thread stopped"),
            })),
        }
    }
}

/// Opens a path a person typed (a command-line argument): links are
/// followed, as they meant, but only a plain file within `limit` is
/// opened, and opening never blocks.
pub fn open_typed(path: &Path, limit: u64) -> Result<Opened, OpenError> {
    let shown = path.display().to_string();
    let kind = std::fs::metadata(path)
        .map(|m| Kind::of(m.file_type()))
        .map_err(|reason| io_error(&shown, reason))?;
    if kind != Kind::File {
        return Err(OpenError::NotAFile {
            path: shown,
            what: kind.what(),
        });
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(|e| io_error(&shown, e))?;
    opened(file, path.to_path_buf(), limit)
}

/// The whole of a path a person typed, as [`open_typed`] opens it.
pub fn read_typed(path: &Path, limit: u64) -> Result<Vec<u8>, OpenError> {
    read_opened(open_typed(path, limit)?, limit)
}

/// Writes `bytes` as `relative` under `root`, making the folders on the
/// way: into a temporary file made new beside it, then renamed over it.
/// No link is followed, and a target that is a link or not a plain file
/// is refused. `synced` waits for the disk before the rename (a state
/// file that must survive a power cut). Returns the path written.
pub fn write(
    root: &Path,
    relative: &Path,
    bytes: &[u8],
    synced: bool,
) -> Result<PathBuf, OpenError> {
    let path = root.join(relative);
    let shown = path.display().to_string();
    let names = names(relative, relative)?;
    walk::write(root, &names, bytes, synced, &shown)?;
    Ok(path)
}

/// Writes `bytes` to a path a person typed, as [`write`](fn@write) does inside its
/// folder (the folder itself may be reached through links).
pub fn write_typed(path: &Path, bytes: &[u8], synced: bool) -> Result<PathBuf, OpenError> {
    let shown = path.display().to_string();
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(OpenError::Outside(shown));
    };
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    walk::write(folder, &[name], bytes, synced, &shown)?;
    Ok(path.to_path_buf())
}

/// A name for a temporary file beside `name`, new each call.
fn temporary(name: &OsStr) -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(
        ".{}-{}.partial",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    temp
}

/// The first temporary name beside `name` that `create` makes new (it
/// fails with `AlreadyExists` on a name taken), tried
/// [`TEMPORARY_TRIES`] times: each platform's exclusive create, one
/// retry.
fn create_temporary<T>(
    name: &OsStr,
    shown: &str,
    mut create: impl FnMut(OsString) -> Result<T, OpenError>,
) -> Result<T, OpenError> {
    for _ in 0..TEMPORARY_TRIES {
        match create(temporary(name)) {
            Err(OpenError::Io { reason, .. })
                if reason.kind() == std::io::ErrorKind::AlreadyExists => {}
            made => return made,
        }
    }
    Err(io_error(
        shown,
        std::io::Error::other("no free name for a temporary file beside it"),
    ))
}

fn io_error(path: &str, reason: std::io::Error) -> OpenError {
    if reason.kind() == std::io::ErrorKind::NotFound {
        OpenError::Missing {
            path: path.to_string(),
        }
    } else {
        OpenError::Io {
            path: path.to_string(),
            reason,
        }
    }
}

/// Why an entry of `kind` at `step` on the way to `shown` is not gone
/// through.
fn refused(kind: Kind, shown: &str, step: &str) -> OpenError {
    match kind {
        Kind::Link => OpenError::Symlink {
            path: shown.to_string(),
            link: step.to_string(),
        },
        _ if step == shown => OpenError::NotAFile {
            path: shown.to_string(),
            what: kind.what(),
        },
        _ => OpenError::Io {
            path: shown.to_string(),
            reason: std::io::Error::other(format!("{step} is {}, not a folder", kind.what())),
        },
    }
}

/// Temporary names tried before a write gives up (each is new; only a
/// folder filled with planted names makes them collide).
const TEMPORARY_TRIES: usize = 8;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as walk;

#[cfg(not(unix))]
mod portable;
#[cfg(not(unix))]
use portable as walk;

// The portable walk is compiled and tested on unix too, so the systems
// without `openat` run code that was checked.
#[cfg(all(test, unix))]
#[path = "portable.rs"]
mod portable_on_unix;

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    type Walk = fn(&Path, &[&OsStr], &str) -> Result<File, OpenError>;
    type WriteWalk = fn(&Path, &[&OsStr], &[u8], bool, &str) -> Result<(), OpenError>;

    /// Both walks: this system's and the portable one.
    const WALKS: [(&str, Walk, WriteWalk); 2] = [
        ("unix", unix::open, unix::write),
        ("portable", portable_on_unix::open, portable_on_unix::write),
    ];

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sylva-opener-{name}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(dir.join("show/sub")).ok();
        std::fs::create_dir_all(dir.join("away")).ok();
        std::fs::write(dir.join("show/sub/plain.txt"), "plain").ok();
        std::fs::write(dir.join("away/secret.txt"), "secret").ok();
        std::os::unix::fs::symlink(dir.join("away/secret.txt"), dir.join("show/link.txt")).ok();
        std::os::unix::fs::symlink(dir.join("away"), dir.join("show/linked")).ok();
        let fifo = std::ffi::CString::new(dir.join("show/fifo").as_os_str().as_encoded_bytes());
        if let Ok(fifo) = fifo {
            // SAFETY: a NUL-terminated path; mkfifo only makes the node.
            unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) };
        }
        dir
    }

    fn names(path: &str) -> Vec<&OsStr> {
        Path::new(path).iter().collect()
    }

    #[test]
    fn both_walks_read_plain_files_only() {
        let dir = folder("read");
        let show = dir.join("show");
        for (walk, open, _) in WALKS {
            assert!(
                open(&show, &names("sub/plain.txt"), "plain").is_ok(),
                "{walk}"
            );
            for (path, says) in [
                ("link.txt", "symbolic link"),
                ("linked/secret.txt", "symbolic link"),
                ("fifo", "FIFO"),
                ("sub", "a folder"),
                ("sub/plain.txt/x", "not a folder"),
                ("missing", "no such file"),
            ] {
                let refused = open(&show, &names(path), path).map(drop);
                let said = refused.err().map(|e| e.to_string()).unwrap_or_default();
                assert!(said.contains(says), "{walk}: {path}: {said:?}");
            }
            let device = open(Path::new("/dev"), &names("zero"), "/dev/zero").map(drop);
            assert!(
                device.is_err_and(|e| e.to_string().contains("a device")),
                "{walk}"
            );
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn both_walks_write_through_a_new_file_and_never_through_a_link() {
        let dir = folder("write");
        let show = dir.join("show");
        for (walk, _, write) in WALKS {
            let written = write(&show, &names("new/deeper/file.txt"), b"one", false, "new");
            assert!(written.is_ok(), "{walk}: {written:?}");
            let again = write(&show, &names("new/deeper/file.txt"), b"two", true, "new");
            assert!(again.is_ok(), "{walk}: {again:?}");
            let text = std::fs::read_to_string(show.join("new/deeper/file.txt"));
            assert_eq!(text.ok().as_deref(), Some("two"), "{walk}");
            for path in [
                "link.txt",
                "linked/secret.txt",
                "linked/new.txt",
                "fifo",
                "sub",
            ] {
                let refused = write(&show, &names(path), b"pwned", false, path);
                assert!(refused.is_err(), "{walk}: {path}");
            }
            let secret = std::fs::read_to_string(dir.join("away/secret.txt"));
            assert_eq!(secret.ok().as_deref(), Some("secret"), "{walk}");
            assert!(!dir.join("away/new.txt").exists(), "{walk}");
            // No temporary file is left beside a write.
            let left = std::fs::read_dir(show.join("new/deeper")).map(|d| d.count());
            assert_eq!(left.ok(), Some(1), "{walk}");
            std::fs::remove_dir_all(show.join("new")).ok();
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn reads_stop_at_the_cap_even_for_a_sparse_file() {
        let dir = folder("cap");
        let show = dir.join("show");
        let file = std::fs::File::create(show.join("sparse")).map(|f| f.set_len(1 << 40));
        assert!(file.is_ok_and(|set| set.is_ok()));
        let read = super::read(&show, Path::new("sparse"), 1 << 20);
        assert!(matches!(read, Err(OpenError::TooLarge { .. })), "{read:?}");
        let typed = read_typed(&show.join("sparse"), 1 << 20);
        assert!(
            matches!(typed, Err(OpenError::TooLarge { .. })),
            "{typed:?}"
        );
        let fifo = read_typed(&show.join("fifo"), 1 << 20);
        assert!(fifo.is_err_and(|e| e.to_string().contains("FIFO")));
        std::fs::remove_dir_all(dir).ok();
    }
}
