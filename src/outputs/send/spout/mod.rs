//! Spout out (`--send spout:NAME`): the picture as a Direct3D 11 shared
//! texture that Resolume, TouchDesigner, OBS's Spout plugin and every
//! Spout receiver on the same Windows machine take without a copy
//! through the CPU on their side. sylva speaks Spout's protocol itself
//! (the names and bytes in [`protocol`], tested everywhere) rather than
//! linking Spout's C++ SDK, so nothing needs installing. On other
//! systems the target is refused with what to use instead.

pub mod protocol;
#[cfg(windows)]
mod windows;

#[cfg(windows)]
pub use windows::SpoutSender;

use super::kinds::{NameError, SenderKind, Target};
use super::tap::{Sink, SinkError};

/// Why a Spout sender could not start, or dropped a frame.
#[derive(Debug, thiserror::Error)]
pub enum SpoutError {
    /// A name Spout cannot list.
    #[error(transparent)]
    Name(#[from] NameError),
    /// Spout's list has no free slot.
    #[error(
        "Spout's list of senders is full ({0}); close a sender, or raise MaxSenders in Spout's settings"
    )]
    ListFull(usize),
    /// Not on Windows.
    #[error("{0}: Spout is Windows'")]
    NotWindows(String),
    /// One of Spout's Windows objects could not be had.
    #[cfg(windows)]
    #[error(transparent)]
    Shared(#[from] crate::base::spout::windows::SharedError),
    /// Every name like the one asked for is taken.
    #[cfg(windows)]
    #[error("Spout: no free name like {0:?}")]
    NoFreeName(String),
    /// Another program holds the list.
    #[cfg(windows)]
    #[error("Spout: the list of senders is locked by another program")]
    ListLocked,
    /// A receiver holds the sender's description.
    #[cfg(windows)]
    #[error("Spout: {0}'s description is locked")]
    DescriptionLocked(String),
    /// The shared texture could not be made.
    #[cfg(windows)]
    #[error("Spout: shared texture {}x{}: {error}", .size[0], .size[1])]
    Texture {
        /// Its size.
        size: [u32; 2],
        /// Why.
        error: ::windows::core::Error,
    },
    /// Direct3D 11 made no texture.
    #[cfg(windows)]
    #[error("Spout: no shared texture")]
    NoTexture,
    /// The texture's shared handle could not be had.
    #[cfg(windows)]
    #[error("Spout: the texture's shared handle: {0}")]
    SharedHandle(::windows::core::Error),
    /// A frame whose bytes do not fill its size.
    #[cfg(windows)]
    #[error("Spout: a frame of {bytes} bytes for {size:?}")]
    FrameBytes {
        /// Bytes given.
        bytes: usize,
        /// The frame's size.
        size: [u32; 2],
    },
}

/// `spout:NAME`: a Spout sender of this name (Windows).
pub const SENDER: SenderKind = SenderKind {
    form: "spout:NAME (Windows)",
    schemes: &["spout:"],
    check: protocol::check_name,
    missing: if cfg!(windows) {
        None
    } else {
        Some(
            "Spout is Windows'; send NDI instead (ndi:NAME), which Resolume, OBS, TouchDesigner and VDMX receive everywhere",
        )
    },
    open: open_sink,
};

#[cfg(windows)]
fn open_sink(target: &Target, size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Ok(Box::new(SpoutSender::open(target.rest(), size)?))
}

#[cfg(not(windows))]
fn open_sink(target: &Target, _size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Err(SpoutError::NotWindows(target.label().to_string()).into())
}
