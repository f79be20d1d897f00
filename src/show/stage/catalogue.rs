//! What the show offers control surfaces besides parameters: its presets
//! and playlists (the folder listed again every two seconds, so a saved
//! preset appears on a phone without a restart), which are playing, the
//! shader library a shader layer's `file` picks from, and the NDI sources
//! on the network a texture input may name.

use std::path::Path;
use std::time::{Duration, Instant};

use super::Show;
use crate::base::Folder;
use crate::base::opener::{self, Reading};
use crate::control::{Catalogue, ControlOptions};
use crate::engine::inputs::ndi::NdiFinder;
use crate::layers::shader::isf::library;

/// The folder in the presets folder where each preset's thumbnail is
/// kept, `NAME.png` (`sylva thumbs` renders them).
pub const THUMBS_FOLDER: &str = "thumbs";

/// How often the presets folder is listed again.
const RELIST: Duration = Duration::from_secs(2);

/// Where the phone page's favourites are kept, in the show folder.
pub const FAVOURITES_FILE: &str = "ui/favourites.json";

/// Favourites at most, and the file's size at most.
const MAX_FAVOURITES: usize = 1_024;
const MAX_FAVOURITES_BYTES: usize = 64 << 10;

/// The catalogue, when the folder was last listed, and the favourites
/// file being read (on a thread of its own: a frame never waits on it).
#[derive(Debug, Default)]
pub(super) struct CatalogueCache {
    pub(super) catalogue: Catalogue,
    listed: Option<Instant>,
    favourites: Option<Reading>,
    /// Listening for NDI sources, from the first listing on.
    finder: Option<NdiFinder>,
}

impl Show {
    /// `control` with this show's thumbnails folder for the phone page.
    pub fn with_thumbs(&self, control: &ControlOptions) -> ControlOptions {
        ControlOptions {
            thumbs: Some(self.ground.assets.dir(Folder::Presets).join(THUMBS_FOLDER)),
            ..control.clone()
        }
    }

    /// Brings the catalogue up to date: what plays now, and the folder's
    /// presets and playlists when it was listed longer ago than [`RELIST`].
    pub(super) fn refresh_catalogue(&mut self) {
        let cache = &mut self.requests.catalogue;
        if cache.listed.is_none_or(|t| t.elapsed() >= RELIST) {
            cache.listed = Some(Instant::now());
            let files = self.ground.assets.list(Folder::Presets, "toml");
            let names = |prefix: &str| -> Vec<String> {
                files
                    .iter()
                    .filter_map(|f| f.strip_prefix(prefix)?.strip_suffix(".toml"))
                    .filter(|name| !name.contains('/'))
                    .map(str::to_string)
                    .collect()
            };
            cache.catalogue.presets = names("");
            cache.catalogue.playlists = names("playlists/");
            cache.catalogue.shaders = library::offered(&self.ground.assets);
            let finder = (cache.finder)
                .get_or_insert_with(|| NdiFinder::start(crate::base::ndi::candidates()));
            cache.catalogue.ndi_sources = finder.sources();
            if cache.favourites.is_none() {
                cache.favourites = Some(Reading::start(
                    self.ground.assets.root().to_path_buf(),
                    FAVOURITES_FILE.into(),
                    MAX_FAVOURITES_BYTES as u64,
                ));
            }
        }
        if let Some(read) = cache.favourites.as_ref().and_then(Reading::finished) {
            cache.favourites = None;
            // No file is no favourites; anything else in the way (a link,
            // a FIFO, a file too large or malformed) is said on screen
            // and the page shows none.
            let text = match read {
                Err(error) if error.is_missing() => Ok("[]".to_string()),
                Err(error) => Err(error.to_string()),
                Ok(bytes) => String::from_utf8(bytes)
                    .map_err(|_| format!("{FAVOURITES_FILE}: not UTF-8 text"))
                    .and_then(|text| checked_favourites(&text).map(|_| text)),
            };
            match text {
                Ok(text) => {
                    self.ground.errors.clear("favourites");
                    cache.catalogue.favourites = text;
                }
                Err(why) => {
                    self.ground.errors.report("favourites", why);
                    cache.catalogue.favourites = "[]".into();
                }
            }
        }
        cache.catalogue.preset = self.presets.running.clone();
        cache.catalogue.playlist = self.playing.run.as_ref().map(|run| run.name.clone());
    }
}

impl Show {
    /// What control surfaces are offered now (presets, playlists, the
    /// favourites as far as they have been read), brought up to date.
    pub fn catalogue(&mut self) -> &Catalogue {
        self.refresh_catalogue();
        &self.requests.catalogue.catalogue
    }
}

/// `text` if it is a JSON list of at most [`MAX_FAVOURITES`] OSC addresses
/// within [`MAX_FAVOURITES_BYTES`], or why not.
fn checked_favourites(text: &str) -> Result<Vec<String>, String> {
    if text.len() > MAX_FAVOURITES_BYTES {
        return Err(format!("favourites over {MAX_FAVOURITES_BYTES} bytes"));
    }
    let list: Vec<String> = serde_json::from_str(text)
        .map_err(|e| format!("favourites are not a JSON list of addresses: {e}"))?;
    if list.len() > MAX_FAVOURITES || list.iter().any(|a| !a.starts_with('/') || a.len() > 256) {
        return Err(format!(
            "favourites: at most {MAX_FAVOURITES} OSC addresses"
        ));
    }
    Ok(list)
}

impl Show {
    /// Keeps the phone page's favourites in the show folder
    /// (`ui/favourites.json`), after checking them.
    pub(super) fn keep_favourites(&mut self, text: &str) -> Result<(), super::CommandError> {
        let list = checked_favourites(text).map_err(super::CommandError::Favourites)?;
        // Pretty where that stays within what is read back.
        let written = serde_json::to_string_pretty(&list)
            .ok()
            .filter(|text| text.len() <= MAX_FAVOURITES_BYTES)
            .or_else(|| serde_json::to_string(&list).ok())
            .unwrap_or_else(|| "[]".into());
        // A read started before this write would bring the old list back.
        self.requests.catalogue.favourites = None;
        // Through the opener: a link planted as the file (or a folder on
        // its way) is refused, never written through.
        let saved = opener::write(
            self.ground.assets.root(),
            Path::new(FAVOURITES_FILE),
            written.as_bytes(),
            false,
        );
        if let Err(error) = saved {
            self.ground.errors.report("favourites", error);
        }
        self.requests.catalogue.catalogue.favourites =
            serde_json::to_string(&list).unwrap_or_default();
        Ok(())
    }
}
