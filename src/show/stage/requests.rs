//! The requests part of [`Show`]: what reaches the show between frames
//! and is taken in at the start of the next one.
//!
//! [`Show`]: super::Show

use std::collections::BTreeSet;
use std::time::Instant;

use super::SAVE_INTERVAL;
use super::catalogue::CatalogueCache;
use crate::base::{ChangedFile, ShowWatcher};

/// Requests waiting for the next frame.
#[derive(Debug, Default)]
pub(super) struct PendingRequests {
    /// A preset to load, crossfading over so many seconds if given.
    pub(super) load: Option<(String, Option<f32>)>,
    /// A name to save the running show under.
    pub(super) save: Option<String>,
    /// Layers to reseed.
    pub(super) reseed: BTreeSet<String>,
    /// Whether every layer is to be reseeded.
    pub(super) reseed_all: bool,
    /// Whether the outputs file is to be written back.
    pub(super) save_outputs: bool,
    /// The parameter a control surface is to learn a control for.
    pub(super) learn: Option<String>,
}

/// The requests queued for the next frame, when a preset was last saved
/// (saves asked for from outside are rate-limited), the show folder's
/// watcher (files saved) and the catalogue of presets and playlists
/// control surfaces pick from.
#[derive(Default)]
pub(super) struct Requests {
    /// Requests waiting for the next frame.
    pub(super) pending: PendingRequests,
    /// When a save asked for from outside last ran.
    pub(super) last_save: Option<Instant>,
    /// The show folder's watcher, once watching.
    pub(super) watcher: Option<ShowWatcher>,
    /// The presets and playlists control surfaces offer.
    pub(super) catalogue: CatalogueCache,
}

impl Requests {
    /// Whether a save may run now (at most one per [`SAVE_INTERVAL`]);
    /// if so, it is counted as run.
    pub(super) fn save_due(&mut self) -> bool {
        if self.last_save.is_some_and(|t| t.elapsed() < SAVE_INTERVAL) {
            return false;
        }
        self.last_save = Some(Instant::now());
        true
    }

    /// The files saved since the last call, if the folder is watched.
    pub(super) fn saved_files(&self) -> Option<Vec<ChangedFile>> {
        self.watcher.as_ref().map(ShowWatcher::drain)
    }
}
