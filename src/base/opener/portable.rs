//! The opener's walk where there is no `openat` (Windows): each step's
//! `symlink_metadata` is looked at before going on, a link refused, and
//! the file opened is looked at again once open.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::{Kind, OpenError, create_temporary, io_error, refused};

/// Opens the file `names` leads to under `root`, for reading.
pub(super) fn open(root: &Path, names: &[&OsStr], shown: &str) -> Result<File, OpenError> {
    let Some((last, folders)) = names.split_last() else {
        return Err(OpenError::Outside(shown.to_string()));
    };
    let mut path = folder(root, folders, false, shown)?;
    path.push(last);
    match kind(&path) {
        Ok(Kind::File) => {}
        Ok(other) => return Err(refused(other, shown, shown)),
        Err(error) => return Err(io_error(shown, error)),
    }
    File::open(&path).map_err(|e| io_error(shown, e))
}

/// Writes `bytes` as the file `names` leads to under `root`, through a
/// temporary file made new and renamed over it.
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
    let path = dir.join(last);
    match kind(&path) {
        Ok(Kind::File) => {}
        Err(error) if error.kind() == ErrorKind::NotFound => {}
        Ok(other) => return Err(refused(other, shown, shown)),
        Err(error) => return Err(io_error(shown, error)),
    }
    let (temp, mut file) = create_new(&dir, last, shown)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| if synced { file.sync_all() } else { Ok(()) })
        .and_then(|()| {
            drop(file);
            std::fs::rename(&temp, &path)
        });
    if let Err(error) = written {
        std::fs::remove_file(&temp).ok();
        return Err(io_error(shown, error));
    }
    Ok(())
}

fn create_new(dir: &Path, name: &OsStr, shown: &str) -> Result<(PathBuf, File), OpenError> {
    create_temporary(name, shown, |temp| {
        let temp = dir.join(temp);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map(|file| (temp, file))
            .map_err(|error| io_error(shown, error))
    })
}

/// The folder `names` leads to under `root`, each step no link.
fn folder(root: &Path, names: &[&OsStr], create: bool, shown: &str) -> Result<PathBuf, OpenError> {
    let mut at = root.to_path_buf();
    for name in names {
        at.push(name);
        let step = at.display().to_string();
        match kind(&at) {
            Ok(Kind::Folder) => {}
            Ok(other) => return Err(refused(other, shown, &step)),
            Err(error) if error.kind() == ErrorKind::NotFound && create => {
                std::fs::create_dir(&at).or_else(|e| {
                    if e.kind() == ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(io_error(shown, e))
                    }
                })?;
                if kind(&at).ok() != Some(Kind::Folder) {
                    return Err(refused(Kind::Link, shown, &step));
                }
            }
            Err(error) => return Err(io_error(shown, error)),
        }
    }
    Ok(at)
}

fn kind(path: &Path) -> std::io::Result<Kind> {
    std::fs::symlink_metadata(path).map(|m| Kind::of(m.file_type()))
}
