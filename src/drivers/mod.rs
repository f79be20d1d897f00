//! What drives frames: the command-line arguments every show takes, the
//! window (keys, HUD), the headless and render loops, the one live frame
//! both the window and headless play (`live`), the presets'
//! thumbnails, the bench (a layer
//! at sizes, or a preset's whole frame), the
//! video writer `render --video` pipes frames into (ffmpeg's error output
//! kept to check what it made), and the senders that take the picture out
//! of a live show (NDI, streams, recording).

pub mod bench;
pub mod cli;
pub mod headless;
pub mod live;
pub mod send;
pub mod stderr_tail;
pub mod thumbs;
pub mod video;
pub mod warm_up;
pub mod whole_frame;
pub mod window;
