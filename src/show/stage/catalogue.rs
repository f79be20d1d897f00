//! What the show offers control surfaces besides parameters: its presets
//! and playlists (the folder listed again every two seconds, so a saved
//! preset appears on a phone without a restart) and which are playing.

use std::time::{Duration, Instant};

use super::Show;
use crate::base::Folder;
use crate::control::Catalogue;

/// How often the presets folder is listed again.
const RELIST: Duration = Duration::from_secs(2);

/// Where the phone page's favourites are kept, in the show folder.
pub const FAVOURITES_FILE: &str = "ui/favourites.json";

/// Favourites at most, and the file's size at most.
const MAX_FAVOURITES: usize = 1_024;
const MAX_FAVOURITES_BYTES: usize = 64 << 10;

/// The catalogue and when the folder was last listed.
#[derive(Debug, Default)]
pub(super) struct CatalogueCache {
    pub(super) catalogue: Catalogue,
    listed: Option<Instant>,
}

impl Show {
    /// Brings the catalogue up to date: what plays now, and the folder's
    /// presets and playlists when it was listed longer ago than [`RELIST`].
    pub(super) fn refresh_catalogue(&mut self) {
        let cache = &mut self.catalogue;
        if cache.listed.is_none_or(|t| t.elapsed() >= RELIST) {
            cache.listed = Some(Instant::now());
            let files = self.assets.list(Folder::Presets, "toml");
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
            let path = self.assets.root().join(FAVOURITES_FILE);
            cache.catalogue.favourites = std::fs::read_to_string(path)
                .ok()
                .filter(|text| checked_favourites(text).is_ok())
                .unwrap_or_else(|| "[]".into());
        }
        cache.catalogue.preset = self.preset.clone();
        cache.catalogue.playlist = self.playlist.as_ref().map(|run| run.name.clone());
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
        let path = self.assets.root().join(FAVOURITES_FILE);
        let written = serde_json::to_string_pretty(&list).unwrap_or_else(|_| "[]".into());
        let saved = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, &written));
        if let Err(error) = saved {
            self.errors
                .report("favourites", format!("{}: {error}", path.display()));
        }
        self.catalogue.catalogue.favourites = serde_json::to_string(&list).unwrap_or_default();
        Ok(())
    }
}
