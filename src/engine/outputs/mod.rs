//! Where a finished frame goes. The engine renders each frame into a
//! picture it owns ([`Picture`]); an [`Output`] delivers it: into a
//! texture to read back (PNG frames, `--video`, tests), onto a window's
//! surface ([`SurfaceOutput`], the HUD drawn over it after), and later to
//! mapping warps, senders and recording, each a small implementation of
//! the one trait (ruffle's `RenderTarget`).

mod blit;
mod picture;
mod surface;
mod texture;

pub use blit::Blit;
pub use picture::Picture;
pub use surface::SurfaceOutput;

use crate::gpu::{Gpu, GpuProfiler};

/// What a frame is delivered to.
pub trait Output {
    /// The size in pixels the engine renders the frame at for this output.
    fn size(&self) -> [u32; 2];

    /// Records delivering `picture` (the finished frame, of [`size`]) into
    /// `encoder`, timed through `profiler`.
    ///
    /// [`size`]: Output::size
    fn deliver(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        picture: &Picture,
    );
}
