//! The master section's bloom (`shaders/compositor/bloom.wgsl`): the
//! composite's light above a threshold at half size, blurred across and
//! down, for the master pass to add before its tonemap. Off (no passes)
//! while `master.bloom` is 0.

use bytemuck::{Pod, Zeroable};

use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};

/// `struct Bloom` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub(crate) struct BloomUniforms {
    threshold: f32,
    radius: f32,
    direction: u32,
    _pad: u32,
}

/// The bloom's pipelines and half-size targets.
pub struct Bloom {
    bright: FullscreenPipeline,
    blur: FullscreenPipeline,
    layout: wgpu::BindGroupLayout,
    /// The bright pass's, then the blur across and down.
    uniforms: [wgpu::Buffer; 3],
    targets: [RenderTarget; 2],
}

impl Bloom {
    /// Compiles the passes from the composed `source`.
    pub fn new(device: &wgpu::Device, source: &str) -> Result<Self, BuildError> {
        let layout = layout(
            device,
            "compositor.bloom",
            &[Slot::Uniform, Slot::Texture(true), Slot::Sampler],
        );
        let pass = |entry| {
            FullscreenPipeline::with_entry(
                device,
                "compositor/bloom.wgsl",
                source,
                &layout,
                HDR_FORMAT,
                entry,
            )
        };
        Ok(Self {
            bright: pass("fs_bright")?,
            blur: pass("fs_blur")?,
            uniforms: [0, 1, 2].map(|i| {
                uniform_buffer(
                    device,
                    &format!("compositor.bloom{i}"),
                    size_of::<BloomUniforms>(),
                )
            }),
            targets: half_targets(device, [2, 2]),
            layout,
        })
    }

    /// Half-size targets for a composite of `size`.
    pub fn fit(&mut self, device: &wgpu::Device, size: [u32; 2]) {
        self.targets = half_targets(device, size);
    }

    /// The blurred light (black until the first bloom).
    pub fn light(&self) -> &wgpu::TextureView {
        &self.targets[0].view
    }

    /// Records the passes over `composite`: light above `threshold`,
    /// blurred `radius` half-size pixels.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        composite: &wgpu::TextureView,
        sampler: &wgpu::Sampler,
        threshold: f32,
        radius: f32,
    ) {
        let [light, across] = &self.targets;
        let passes = [
            (
                "compositor.bloom.bright",
                &self.bright,
                composite,
                &light.view,
            ),
            (
                "compositor.bloom.across",
                &self.blur,
                &light.view,
                &across.view,
            ),
            (
                "compositor.bloom.down",
                &self.blur,
                &across.view,
                &light.view,
            ),
        ];
        for (direction, (label, pipeline, from, to)) in passes.into_iter().enumerate() {
            let uniforms = BloomUniforms {
                threshold,
                radius,
                direction: u32::from(direction == 2),
                _pad: 0,
            };
            let buffer = &self.uniforms[direction];
            gpu.queue
                .write_buffer(buffer, 0, bytemuck::bytes_of(&uniforms));
            let group = bind(
                gpu,
                &self.layout,
                label,
                &[
                    buffer.as_entire_binding(),
                    wgpu::BindingResource::TextureView(from),
                    wgpu::BindingResource::Sampler(sampler),
                ],
            );
            let timestamps = profiler.render_pass(label);
            pipeline.draw(encoder, label, to, &group, timestamps);
        }
    }
}

fn half_targets(device: &wgpu::Device, size: [u32; 2]) -> [RenderTarget; 2] {
    let half = size.map(|s| s.div_ceil(2).max(1));
    [0, 1].map(|i| {
        RenderTarget::new(
            device,
            &format!("compositor.bloom_target{i}"),
            half,
            HDR_FORMAT,
        )
    })
}
