//! Why the show refused to start, a command or a save: the errors its
//! callers see, each a message for the screen.

use super::MAX_SAVED_PRESETS;
use crate::base::AssetError;
use crate::engine::PresetError;
use crate::engine::compositor::CompositorError;
use crate::params::ParamError;
use crate::show::check::CheckError;
use crate::show::save_name::SaveNameError;

/// Why a show could not start.
#[derive(Debug, thiserror::Error)]
pub enum ShowStartError {
    /// A built-in compositor shader failed.
    #[error(transparent)]
    Compositor(#[from] CompositorError),
    /// The Lua state could not be created.
    #[error("cannot start Lua: {0}")]
    Script(String),
}

/// Why the show refused a command.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A parameter write that does not fit (unknown name, wrong type).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No layer of that id to reseed.
    #[error("no layer {0:?} to reseed")]
    NoLayer(String),
    /// No playlist of that name, or a malformed one.
    #[error(transparent)]
    Playlist(#[from] PresetError),
    /// A playlist step with none playing, or an entry it lacks.
    #[error("{0}")]
    NoPlaylist(String),
    /// No parameter of that name to learn.
    #[error("no parameter {0:?} to learn")]
    NoParam(String),
    /// Nothing to step through.
    #[error("the show folder has no presets to step through")]
    NoPresets,
    /// The learned mapping could not be written.
    #[error("cannot keep the learned mapping: {0}")]
    KeepLearned(crate::base::opener::OpenError),
    /// Favourites from the phone page that are not a list of addresses.
    #[error("{0}")]
    Favourites(String),
    /// A mapping save with no outputs file in use.
    #[error("no outputs file in use (start with --outputs NAME)")]
    NoOutputs,
    /// A state file's clock or place that cannot be resumed.
    #[error("cannot resume {0}; starting from the top")]
    Unresumable(String),
    /// A performer's change on a machine that follows another: only the
    /// leader's performers play an ensemble.
    #[error("this machine follows a leader: play the leader")]
    Following,
    /// A timeline that cannot be read or played.
    #[error("{0}")]
    Timeline(String),
    /// A playlist place that does not fit the playlist.
    #[error("cannot resume {0}; starting from the top")]
    UnresumablePlace(crate::show::playlist::PlaceError),
}

/// Why a preset was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A name from the network, a controller or a script that is not plain.
    #[error(transparent)]
    Name(#[from] SaveNameError),
    /// A name the performer typed that leaves the show folder.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// The show folder holds as many presets as it may.
    #[error(
        "{name}: the show already has {saved} presets (at most {MAX_SAVED_PRESETS}); overwrite one or remove some"
    )]
    Full {
        /// The name asked for.
        name: String,
        /// Presets there now.
        saved: usize,
    },
    /// The text would not load back.
    #[error("not saved, it would not load: {0}")]
    WouldNotLoad(#[from] CheckError),
    /// The text would not parse back.
    #[error("not saved, it would not load: {0}")]
    WouldNotParse(#[from] PresetError),
    /// The running show could not be written as TOML.
    #[error("cannot write the show as TOML: {0}")]
    Toml(#[from] toml::ser::Error),
    /// The file could not be written (or a link, a FIFO or a folder
    /// stands in its place, or on its way).
    #[error("not saved: {0}")]
    Write(#[from] crate::base::opener::OpenError),
}
