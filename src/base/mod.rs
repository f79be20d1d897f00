//! The foundation every other tier stands on, importing nothing of
//! sylva's: the show folder's files, the one opener they are read and
//! written through, and their watcher; the child processes the show
//! owns and the worker that keeps slow reads off the frame; the clock and who leads its tempo, the seeded random numbers,
//! debounced rebuilds, the error log the performer reads and the repeats
//! it holds back, threads that restart after a panic, and the name a
//! person meant; what senders and receivers of other applications'
//! pictures share (NDI, Spout, Syphon) and DMX's network protocols.

pub mod child;
pub mod clock;
pub mod dmx;
pub mod files;
pub mod latest;
pub mod ndi;
pub mod nearest;
pub mod opener;
pub mod rebuild;
pub mod repeats;
pub mod rng;
pub mod spout;
pub mod status;
pub mod supervise;
pub mod syphon;
pub mod tempo;
pub mod timecode;
pub mod watch;

pub use files::{Asset, AssetError, Assets, Folder, MAX_FILE_BYTES, inside_show};
pub use watch::{ChangedFile, ShowWatcher};
