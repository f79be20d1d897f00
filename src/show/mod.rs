//! Show files: the show folder with its embedded fallbacks, presets, and
//! the watcher that reports edits to them.
//! Playlists, crossfades and installation mode join here.

mod assets;
mod preset;
pub mod save_name;
mod watch;

pub use assets::{Asset, AssetError, Assets, Folder, MAX_FILE_BYTES, inside_show};
pub use preset::{MAX_LAYERS, MAX_PARAMS, Preset, PresetError, PresetParam, toml_of, toml_value};
pub use watch::{ChangedFile, ShowWatcher};
