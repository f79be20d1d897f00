//! The file watcher: a notify watcher on every folder of the show
//! (`Folder::WATCHED`: shaders, scripts, presets, outputs, media), the one
//! way the show learns of a saved file (a folder made while the show runs
//! is watched from then on, its files counted as changed), and a thread that debounces its events (editors write
//! twice, save by writing a temporary file and renaming it, or delete and
//! recreate) into one batch of changed names. The main thread drains the
//! batches at the start of a frame; nothing here touches the GPU or Lua.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use super::files::{Assets, Folder};
use crate::base::status::ErrorLog;

/// Quiet time after the last event before a batch is sent.
const DEBOUNCE: Duration = Duration::from_millis(120);

/// A file that changed, relative to its show folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChangedFile {
    /// Which folder.
    pub folder: Folder,
    /// Path inside it, with `/` separators (`shader/sky.wgsl`).
    pub name: String,
}

/// Watches the show folder's directories that exist, and the show folder
/// for one of them made while the show runs.
pub struct ShowWatcher {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    batches: Receiver<Vec<ChangedFile>>,
}

/// The folders watched, and those not there yet: the show folder is
/// watched (not its depth) for them to appear.
struct Folders {
    watched: Vec<(Folder, PathBuf)>,
    waiting: Vec<(Folder, PathBuf)>,
}

impl ShowWatcher {
    /// Starts watching; `wake` is called after each batch is sent (the
    /// window uses it to wake its event loop). A folder that cannot be
    /// watched is said in the log and the others are watched. `None` when
    /// there is nothing on disk to watch (the show runs on embedded files
    /// only).
    pub fn start(
        assets: &Assets,
        wake: Box<dyn Fn() + Send>,
        errors: ErrorLog,
    ) -> notify::Result<Option<Self>> {
        let (raw_sender, raw) = channel::<notify::Result<notify::Event>>();
        let watcher = Arc::new(Mutex::new(notify::recommended_watcher(raw_sender)?));
        let mut folders = Folders {
            watched: Vec::new(),
            waiting: Vec::new(),
        };
        let root = std::fs::canonicalize(assets.root()).ok();
        for folder in Folder::WATCHED {
            match std::fs::canonicalize(assets.dir(folder)) {
                Ok(dir) if dir.is_dir() => {
                    let watched = watch(&watcher, &dir, RecursiveMode::Recursive);
                    folders.watched.extend(watched.then_some((folder, dir)));
                }
                // Not there yet: watched once it is made in the show
                // folder (a folder given on the command line is not).
                _ if assets.dir(folder) == assets.root().join(folder.name()) => {
                    if let Some(root) = &root {
                        folders.waiting.push((folder, root.join(folder.name())));
                    }
                }
                _ => {}
            }
        }
        if let Some(root) = root.filter(|_| !folders.waiting.is_empty())
            && !watch(&watcher, &root, RecursiveMode::NonRecursive)
        {
            folders.waiting.clear();
        }
        if folders.watched.is_empty() && folders.waiting.is_empty() {
            return Ok(None);
        }
        let (sender, batches) = channel();
        let folders = Arc::new(Mutex::new(folders));
        let watching = watcher.clone();
        crate::base::supervise::spawn("sylva-watch", errors, move || {
            debounce(&raw, &sender, &folders, &watching, wake.as_ref())
        })
        .map_err(|e| notify::Error::generic(&e.to_string()))?;
        tracing::info!("watching the show folder for changes");
        Ok(Some(Self {
            _watcher: watcher,
            batches,
        }))
    }

    /// Every change reported since the last call, without repeats.
    pub fn drain(&self) -> Vec<ChangedFile> {
        let set: BTreeSet<ChangedFile> = self.batches.try_iter().flatten().collect();
        set.into_iter().collect()
    }
}

/// Watches `dir`; says why not in the log when it cannot be.
fn watch(watcher: &Mutex<notify::RecommendedWatcher>, dir: &Path, mode: RecursiveMode) -> bool {
    let mut watcher = watcher.lock().unwrap_or_else(PoisonError::into_inner);
    match watcher.watch(dir, mode) {
        Ok(()) => true,
        Err(error) => {
            super::status::warn_held(
                "file watcher",
                format_args!("{} is not watched: {error}", dir.display()),
            );
            false
        }
    }
}

/// A waiting folder that `path` made: watched from now on, and every file
/// already in it counted as changed (they may have come with it).
fn appeared(
    path: &Path,
    folders: &Mutex<Folders>,
    watcher: &Mutex<notify::RecommendedWatcher>,
    pending: &mut BTreeSet<ChangedFile>,
) {
    let mut folders = folders.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(at) = folders.waiting.iter().position(|(_, dir)| dir == path) else {
        return;
    };
    if !path.is_dir() || !watch(watcher, path, RecursiveMode::Recursive) {
        return;
    }
    let (folder, dir) = folders.waiting.remove(at);
    let mut files = Vec::new();
    files_in(&dir, Path::new(""), &mut files);
    pending.extend(files.into_iter().map(|name| ChangedFile { folder, name }));
    folders.watched.push((folder, dir));
}

/// The most files of a folder that appeared counted as changed: a folder
/// copied in whole is a handful of files, not a disk.
const MOST_FILES: usize = 4096;

/// The files under `base/relative` (not following links), at most
/// [`MOST_FILES`].
fn files_in(base: &Path, relative: &Path, names: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(base.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        if names.len() >= MOST_FILES {
            return;
        }
        let path = relative.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_in(base, &path, names),
            Ok(kind) if kind.is_file() => names.push(path.to_string_lossy().replace('\\', "/")),
            _ => {}
        }
    }
}

fn debounce(
    raw: &Receiver<notify::Result<notify::Event>>,
    sender: &Sender<Vec<ChangedFile>>,
    folders: &Mutex<Folders>,
    watcher: &Mutex<notify::RecommendedWatcher>,
    wake: &(dyn Fn() + Send),
) {
    let mut pending: BTreeSet<ChangedFile> = BTreeSet::new();
    loop {
        let timeout = if pending.is_empty() {
            Duration::from_secs(3600)
        } else {
            DEBOUNCE
        };
        match raw.recv_timeout(timeout) {
            Ok(Ok(event)) if is_change(&event.kind) => {
                for path in &event.paths {
                    appeared(path, folders, watcher, &mut pending);
                }
                let watched = folders.lock().unwrap_or_else(PoisonError::into_inner);
                let changed = event
                    .paths
                    .iter()
                    .filter_map(|p| classify(p, &watched.watched));
                pending.extend(changed);
            }
            Ok(Ok(_)) => {}
            Ok(Err(error)) => super::status::warn_held("file watcher", error),
            Err(RecvTimeoutError::Timeout) => {
                if pending.is_empty() {
                    continue;
                }
                let batch: Vec<ChangedFile> = std::mem::take(&mut pending).into_iter().collect();
                if sender.send(batch).is_err() {
                    return;
                }
                wake();
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

fn is_change(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)
    )
}

/// The folder and name of `path`, if it lies in a watched folder and is
/// not an editor's temporary or backup file.
fn classify(path: &Path, dirs: &[(Folder, PathBuf)]) -> Option<ChangedFile> {
    let file_name = path.file_name()?.to_string_lossy();
    let temporary =
        file_name.starts_with('.') || file_name.ends_with('~') || file_name.ends_with(".swp");
    if temporary {
        return None;
    }
    dirs.iter().find_map(|(folder, dir)| {
        let relative = path.strip_prefix(dir).ok()?;
        Some(ChangedFile {
            folder: *folder,
            name: relative.to_string_lossy().replace('\\', "/"),
        })
    })
}
