//! HAP clips, played without ffmpeg: sylva reads the MOV's sample table
//! itself ([`mov`]), a worker reads each frame and undoes its Snappy
//! compression ([`frame`]), and the frame's BC1/BC3/BC4 blocks are
//! uploaded as they are and turned into the source's colour texture by a
//! pass on the GPU ([`gpu`]), HAP Q's YCoCg included. Where the GPU has no
//! BC compression the worker expands the blocks on the CPU ([`blocks`])
//! and the clip comes as RGBA like any other. This is why VJs keep their
//! libraries in HAP: a 4K frame is a memory copy and a fraction of the
//! upload of RGBA, so many clips play at once. Any other clip, or a HAP
//! clip in another container, is ffmpeg's.

pub mod blocks;
pub mod frame;
pub mod gpu;
pub mod mov;
mod play;

pub use frame::{BlockFormat, FrameError, unpack};
pub use mov::{HapCodec, HapTrack, MovError, hap_track};
pub(super) use play::play;

/// Why a HAP clip does not play.
#[derive(Debug, thiserror::Error)]
pub enum HapError {
    /// Its container is damaged or over the limits.
    #[error("HAP clip: {0}")]
    Movie(#[from] MovError),
    /// Frame `n` is damaged.
    #[error("HAP frame {0}: {1}")]
    Frame(usize, #[source] FrameError),
    /// Frame `n` could not be read.
    #[error("HAP frame {0}: cannot read it: {1}")]
    Read(usize, #[source] std::io::Error),
}
