//! What drives frames: the command-line arguments every show takes, the
//! window (keys, HUD, projector windows), the headless and render loops,
//! the one live frame both the window and headless play (`live`), what
//! the senders are handed of a show (`from_show`), the presets'
//! thumbnails, and the bench (a layer at sizes, or a preset's whole
//! frame).

pub mod bench;
pub mod cli;
pub mod from_show;
pub mod headless;
pub mod live;
pub mod thumbs;
pub mod warm_up;
pub mod whole_frame;
pub mod window;
