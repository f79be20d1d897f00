//! Show files: the show folder with its embedded fallbacks, presets, and
//! the watcher that reports edits to them.
//! Playlists, crossfades and installation mode join here.

mod assets;
mod preset;
mod watch;

pub use assets::{Asset, AssetError, Assets, Folder, inside_show};
pub use preset::{Preset, PresetError, PresetParam, toml_of, toml_value};
pub use watch::{ChangedFile, ShowWatcher};
