//! The show: [`Show`], the running show (its registry, clock, layers,
//! compositor and script, one frame at a time), and its files: the show
//! folder with its embedded fallbacks, presets, and the watcher that
//! reports edits to them.
//! Playlists and crossfades play here, and the state an installation
//! resumes from is kept here.

mod assets;
pub mod mapping_files;
mod playing;
pub mod playlist;
mod preset;
mod resume;
pub mod save_name;
mod stack;
mod stage;
mod watch;

pub use assets::{Asset, AssetError, Assets, Folder, MAX_FILE_BYTES, inside_show};
pub use mapping_files::LoadedMappings;
pub use preset::{MAX_LAYERS, MAX_PARAMS, Preset, PresetError, PresetParam, toml_of, toml_value};
pub use resume::{ShowState, StateError, StateFile};
pub use stack::{Outgoing, Stack};
pub use stage::{CommandError, FRAMES_IN_FLIGHT, MAX_SCRIPT_COMMANDS, SaveError, Show, ShowError};
pub use watch::{ChangedFile, ShowWatcher};
