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

use super::kinds::{SenderKind, Target};
use super::tap::Sink;

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
fn open_sink(target: &Target, size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, String> {
    Ok(Box::new(SpoutSender::open(target.rest(), size)?))
}

#[cfg(not(windows))]
fn open_sink(target: &Target, _size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, String> {
    Err(format!("{}: Spout is Windows'", target.label()))
}
