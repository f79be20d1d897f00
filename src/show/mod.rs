//! The show: [`Show`], the running session (its registry, clock, layers,
//! compositor, script, control and ear, one frame at a time), how it
//! starts ([`ShowOptions`]), what `sylva check` finds in its files, its
//! playlists and crossfades, its cue timelines, several machines as one
//! show (`ensemble`), and the state an
//! installation resumes from.

pub mod check;
pub mod ensemble;
pub mod fit;
pub mod installation;
pub mod names;
mod options;
pub mod pace;
mod playing;
pub mod playlist;
mod resume;
pub mod save_name;
mod stage;
pub mod timeline;

pub use options::{
    AudioChoice, DEFAULT_SHOW, ShowOptions, open_device, start, start_live_on, start_on,
};
pub use resume::{ShowState, StateError, StateFile};
pub use stage::{
    CommandError, FRAMES_IN_FLIGHT, Led, MAX_SCRIPT_COMMANDS, SaveError, Show, ShowStartError,
    THUMBS_FOLDER,
};
