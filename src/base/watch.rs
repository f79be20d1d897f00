//! The file watcher: a notify watcher on every folder of the show
//! (`Folder::WATCHED`: shaders, scripts, presets, outputs, media), the one
//! way the show learns of a saved file, and a thread that debounces its events (editors write
//! twice, save by writing a temporary file and renaming it, or delete and
//! recreate) into one batch of changed names. The main thread drains the
//! batches at the start of a frame; nothing here touches the GPU or Lua.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
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

/// Watches the show folder's directories that exist.
pub struct ShowWatcher {
    _watcher: notify::RecommendedWatcher,
    batches: Receiver<Vec<ChangedFile>>,
}

impl ShowWatcher {
    /// Starts watching; `wake` is called after each batch is sent (the
    /// window uses it to wake its event loop). `None` when no folder exists
    /// on disk (the show runs on embedded files only).
    pub fn start(
        assets: &Assets,
        wake: Box<dyn Fn() + Send>,
        errors: ErrorLog,
    ) -> notify::Result<Option<Self>> {
        let dirs: Vec<(Folder, PathBuf)> = Folder::WATCHED
            .iter()
            .filter_map(|f| std::fs::canonicalize(assets.dir(*f)).ok().map(|d| (*f, d)))
            .filter(|(_, d)| d.is_dir())
            .collect();
        if dirs.is_empty() {
            return Ok(None);
        }
        let (raw_sender, raw) = channel::<notify::Result<notify::Event>>();
        let mut watcher = notify::recommended_watcher(raw_sender)?;
        for (_, dir) in &dirs {
            watcher.watch(dir, RecursiveMode::Recursive)?;
        }
        let (sender, batches) = channel();
        crate::base::supervise::spawn("sylva-watch", errors, move || {
            debounce(&raw, &sender, &dirs, wake.as_ref())
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

fn debounce(
    raw: &Receiver<notify::Result<notify::Event>>,
    sender: &Sender<Vec<ChangedFile>>,
    dirs: &[(Folder, PathBuf)],
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
                pending.extend(event.paths.iter().filter_map(|p| classify(p, dirs)));
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
