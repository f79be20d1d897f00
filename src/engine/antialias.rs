//! Temporal anti-aliasing of the scene (`scene.antialias`,
//! `scene.antialias_history`): the scene's camera is shifted each frame by
//! a point of a Halton sequence within its pixel ([`jitter`], applied by
//! `SceneCamera::look`), and once the last layer in the scene has drawn
//! (after its occlusion), `shaders/compositor/antialias.wgsl` blends each
//! pixel with its history, reprojected through the scene's depth and
//! clamped to the colours around it, into the composite; the result is
//! kept as the next frame's history. Edges and thin branches settle into
//! their coverage over eight frames instead of stepping and shimmering.
//! `compositor.antialias` in the HUD and the bench.

use bytemuck::{Pod, Zeroable};
use glam::Mat4;

use super::camera::CameraUniform;
use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};
use crate::params::{ParamSpec, Registry};

const FILE: &str = "compositor/antialias.wgsl";

/// Frames the shifts take to cover a pixel before they repeat.
pub const JITTER_CYCLE: u64 = 8;

/// The anti-aliasing parameters, in the scene's section.
pub fn antialias_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::bool("scene.antialias", true).with_description(
            "Temporal anti-aliasing of the scene: its camera shifts within a pixel each frame and the frames are gathered (off: every frame as drawn)",
        ),
        ParamSpec::float("scene.antialias_history", 0.9, 0.0, 0.98)
            .with_description("How much of each pixel's history the anti-aliasing keeps a frame (more: smoother, slower to follow)"),
    ]
}

/// The shift of frame `frame`, in pixels within -0.5..0.5 each way: the
/// Halton sequence in bases 2 and 3, which spreads any run of frames
/// evenly over the pixel.
pub fn jitter(frame: u64) -> [f32; 2] {
    let index = frame % JITTER_CYCLE + 1;
    [halton(index, 2) - 0.5, halton(index, 3) - 0.5]
}

fn halton(mut index: u64, base: u64) -> f32 {
    let (mut value, mut scale) = (0.0, 1.0);
    while index > 0 {
        scale /= base as f32;
        value += scale * (index % base) as f32;
        index /= base;
    }
    value
}

/// `struct Antialias` of the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct AntialiasUniforms {
    size: [f32; 4],
    unproject: [[f32; 4]; 4],
    steady: [[f32; 4]; 4],
    before: [[f32; 4]; 4],
    keep: [f32; 4],
}

/// The history and the resolve that gathers into it.
pub struct TemporalAntialias {
    kernel: Kernel,
    uniforms: wgpu::Buffer,
    binding: Binding,
    sampler: wgpu::Sampler,
    /// Two pictures taking turns as this frame's result and the history
    /// it gathers from, so the result is never copied.
    targets: Option<AntialiasTargets>,
    /// The scene's unshifted clip space last frame, when there was one at
    /// this size.
    before: Option<Mat4>,
}

struct AntialiasTargets {
    size: [u32; 2],
    pictures: [RenderTarget; 2],
    /// Which of `pictures` this frame resolves into; the other is the
    /// history.
    resolving: usize,
}

impl TemporalAntialias {
    /// Compiles the resolve; its textures are made at the first frame.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let kernel = Kernel::new(gpu, assets, FILE, "antialias_resolve")?;
        let uniforms = crate::gpu::bindings::uniform_buffer(
            &gpu.device,
            "compositor.antialias",
            size_of::<AntialiasUniforms>(),
        );
        Ok(Self {
            binding: kernel.bind(gpu, &[(0, &uniforms)]),
            kernel,
            uniforms,
            sampler: crate::gpu::bindings::linear_sampler(&gpu.device, "compositor.antialias"),
            targets: None,
            before: None,
        })
    }

    /// The share of history kept this frame; `None` when it is off (the
    /// history is then forgotten, so turning it on starts afresh).
    pub fn wanted(&mut self, registry: &Registry) -> Option<f32> {
        let on = registry.flag("scene.antialias");
        if !on {
            self.before = None;
        }
        on.then(|| registry.float("scene.antialias_history"))
    }

    /// Records the resolve of `now` (the composite, of `size` pixels) over
    /// `depth`, drawn this frame by `camera` (shifted) whose unshifted
    /// clip space is `steady`; returns the anti-aliased picture.
    pub fn resolve(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        now: &wgpu::TextureView,
        depth: &wgpu::TextureView,
        size: [u32; 2],
        camera: &CameraUniform,
        steady: Mat4,
        keep: f32,
    ) -> &wgpu::TextureView {
        if self.targets.as_ref().is_none_or(|t| t.size != size) {
            let target = |label| RenderTarget::new(&gpu.device, label, size, HDR_FORMAT);
            self.targets = Some(AntialiasTargets {
                size,
                pictures: [
                    target("compositor.antialias.0"),
                    target("compositor.antialias.1"),
                ],
                resolving: 0,
            });
            self.before = None;
        }
        let [w, h] = size.map(|n| n.max(1) as f32);
        let uniforms = AntialiasUniforms {
            size: [w, h, 1.0 / w, 1.0 / h],
            unproject: camera.view_proj().inverse().to_cols_array_2d(),
            steady: steady.to_cols_array_2d(),
            before: self.before.unwrap_or(steady).to_cols_array_2d(),
            keep: [
                keep,
                if self.before.is_some() { 1.0 } else { 0.0 },
                0.0,
                0.0,
            ],
        };
        self.before = Some(steady);
        gpu.queue
            .write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&uniforms));
        let Some(targets) = self.targets.as_mut() else {
            unreachable!("made above");
        };
        targets.resolving = 1 - targets.resolving;
        let resolved = &targets.pictures[targets.resolving];
        let history = &targets.pictures[1 - targets.resolving];
        let view = wgpu::BindingResource::TextureView;
        let group = self.kernel.group_at(
            gpu,
            1,
            &[
                entry(0, view(now)),
                entry(1, view(depth)),
                entry(2, view(&history.view)),
                entry(3, wgpu::BindingResource::Sampler(&self.sampler)),
                entry(4, view(&resolved.view)),
            ],
        );
        let label = "compositor.antialias";
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
            (self.kernel).dispatch_with(&mut pass, &self.binding, &group, size[0] * size[1], 64);
        }
        &resolved.view
    }
}

fn entry(binding: u32, resource: wgpu::BindingResource<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shifts_cover_the_pixel_evenly_and_repeat() {
        let shifts: Vec<[f32; 2]> = (0..JITTER_CYCLE).map(jitter).collect();
        for [x, y] in &shifts {
            assert!((-0.5..0.5).contains(x) && (-0.5..0.5).contains(y));
        }
        let mean = |k: usize| shifts.iter().map(|s| s[k]).sum::<f32>() / shifts.len() as f32;
        assert!(mean(0).abs() < 0.07 && mean(1).abs() < 0.07, "{shifts:?}");
        assert_eq!(jitter(3), jitter(3 + JITTER_CYCLE));
        assert_ne!(jitter(3), jitter(4));
    }
}
