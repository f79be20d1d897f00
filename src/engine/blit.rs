//! Drawing the picture onto another texture of any size and format by
//! sampling it (`shaders/outputs/blit.wgsl`): how a window's surface gets
//! the frame, and the pass mapping warps will grow from.

use crate::base::Assets;
use crate::gpu::bindings::{Slot, bind, layout, linear_sampler};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler};

/// The blit pass for one target format.
pub struct Blit {
    pipeline: FullscreenPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
}

impl Blit {
    /// The pass drawing into targets of `format`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        format: wgpu::TextureFormat,
    ) -> Result<Self, BuildError> {
        let file = "outputs/blit.wgsl";
        let composed = Composer::new(assets)
            .file(file)
            .and_then(Composer::finish)?;
        composed.validate()?;
        let layout = layout(
            &gpu.device,
            "outputs.blit",
            &[Slot::Texture(true), Slot::Sampler],
        );
        let pipeline =
            FullscreenPipeline::new(&gpu.device, file, composed.text(), &layout, format)?;
        let sampler = linear_sampler(&gpu.device, "outputs.blit");
        Ok(Self {
            pipeline,
            layout,
            sampler,
        })
    }

    /// Draws `from` over the whole of `to`.
    pub fn draw(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        from: &wgpu::TextureView,
        to: &wgpu::TextureView,
    ) {
        let bind_group = bind(
            gpu,
            &self.layout,
            "outputs.blit",
            &[
                wgpu::BindingResource::TextureView(from),
                wgpu::BindingResource::Sampler(&self.sampler),
            ],
        );
        self.pipeline.draw(
            encoder,
            "outputs.blit",
            to,
            &bind_group,
            profiler.render_pass("outputs.blit"),
        );
    }
}
