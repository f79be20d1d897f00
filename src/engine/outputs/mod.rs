//! Where a finished frame goes. The engine renders each frame into a
//! picture it owns ([`Picture`]); an [`Output`] delivers it: into a
//! texture to read back (PNG frames, `--video`, tests) or onto a window's
//! surface ([`SurfaceOutput`], the HUD drawn over it after), each a small
//! implementation of the one trait (ruffle's `RenderTarget`). An outputs
//! file (`plan`) adds [`MappedOutputs`]: projector outputs that each warp
//! their region of the picture (`geometry`, `warp`).

mod blit;
pub mod geometry;
pub mod grips;
mod mapped;
mod picture;
pub mod plan;
mod surface;
mod texture;
mod warp;

pub use blit::Blit;
pub use mapped::{
    MIN_SCALE, MappedOutput, MappedOutputs, Mask, PATTERN, SCALE, drawn_size, output_params,
    read_masks,
};
pub use picture::Picture;
pub use plan::{OutputPlan, OutputsError, OutputsPlan};
pub use surface::SurfaceOutput;
pub use warp::WarpUniforms;

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
