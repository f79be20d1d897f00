//! The foundation every other tier stands on, importing nothing of
//! sylva's: the show folder's files and their watcher, the clock and who
//! leads its tempo, the seeded random numbers, debounced rebuilds, the
//! error log the performer reads, threads that restart after a panic, and
//! the name a person meant.

pub mod clock;
pub mod files;
pub mod nearest;
pub mod rebuild;
pub mod rng;
pub mod status;
pub mod supervise;
pub mod tempo;
pub mod watch;

pub use files::{Asset, AssetError, Assets, Folder, MAX_FILE_BYTES, inside_show};
pub use watch::{ChangedFile, ShowWatcher};
