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
