//! A window's surface as an output: this frame's surface texture, the
//! picture drawn onto it by the blit pass (the HUD goes over it after).

use super::{Blit, Output, Pictures};
use crate::gpu::{Gpu, GpuProfiler};

/// This frame's surface texture, and the pass that draws onto it.
pub struct SurfaceOutput<'a> {
    view: &'a wgpu::TextureView,
    size: [u32; 2],
    blit: &'a Blit,
}

impl<'a> SurfaceOutput<'a> {
    /// The surface texture `view` of `size`, drawn with `blit`.
    pub fn new(view: &'a wgpu::TextureView, size: [u32; 2], blit: &'a Blit) -> Self {
        Self { view, size, blit }
    }
}

impl Output for SurfaceOutput<'_> {
    fn size(&self) -> Option<[u32; 2]> {
        Some(self.size)
    }

    fn record(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        let picture = pictures.canvas;
        self.blit
            .draw(gpu, encoder, profiler, picture.view(), self.view);
    }
}
