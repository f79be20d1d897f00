//! Show files: the show folder with its embedded fallbacks, and presets.
//! Playlists, crossfades and installation mode join here.

mod assets;
mod preset;

pub use assets::{Asset, AssetError, Assets, Folder, inside_show};
pub use preset::{Preset, PresetError, PresetParam, toml_value};
