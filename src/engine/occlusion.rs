//! Ambient occlusion in screen space (`scene.occlusion`,
//! `scene.occlusion_radius`): after the last layer in the shared scene has
//! drawn, `shaders/compositor/occlusion.wgsl` estimates from the scene's
//! depth how much of the sky each point's surroundings hide (a crease, a
//! tree's foot, the figure's armpit) and blurs it within surfaces; the
//! compositor multiplies the composite by it, so layers after the scene's
//! (an overlay, a feedback shader) are not darkened. Two compute passes,
//! `compositor.occlusion.trace` and `.blur`, then the multiply blend
//! `compositor.occlusion`.

use bytemuck::{Pod, Zeroable};

use super::camera::CameraUniform;
use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};
use crate::params::{ParamSpec, Registry};

const FILE: &str = "compositor/occlusion.wgsl";

/// The occlusion parameters, in the scene's section.
pub fn occlusion_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::float("scene.occlusion", 0.8, 0.0, 1.0)
            .with_smoothing(0.2)
            .with_description(
                "How much ambient occlusion darkens creases and feet in the scene (0: off, its passes skipped)",
            ),
        ParamSpec::float("scene.occlusion_radius", 1.0, 0.01, 100.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("How far around a point the occlusion looks for what hides its sky"),
        ParamSpec::float("scene.occlusion_intensity", 1.0, 0.0, 4.0)
            .with_smoothing(0.2)
            .with_description("How dark a deep crease gets before `scene.occlusion` mixes it in"),
    ]
}

/// `struct Occlusion` of the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct OcclusionUniforms {
    size: [f32; 4],
    lens: [f32; 4],
    shape: [f32; 4],
}

impl OcclusionUniforms {
    /// For a scene seen through a lens of `tan_half` (of the vertical
    /// field of view) and near plane `near` into a depth of `size` pixels,
    /// looking `radius` metres around each point at `intensity`.
    pub fn new(size: [u32; 2], tan_half: f32, near: f32, radius: f32, intensity: f32) -> Self {
        let [w, h] = size.map(|n| n.max(1) as f32);
        Self {
            size: [w, h, 1.0 / w, 1.0 / h],
            lens: [tan_half, w / h, near, 0.0],
            // A flat surface's own samples stand within a few millimetres
            // of its plane a metre away (the depth's rounding, a pixel's
            // step): no darker for it.
            shape: [radius, intensity, 0.002, 0.0],
        }
    }

    /// For the scene seen by `camera`, looking `radius` metres around
    /// each point at `intensity`.
    pub fn of_camera(camera: &CameraUniform, size: [u32; 2], radius: f32, intensity: f32) -> Self {
        let (tan_half, near) = (camera.tan_half_fov(), camera.near());
        Self::new(size, tan_half, near, radius, intensity)
    }

    fn size(&self) -> [u32; 2] {
        [self.size[0] as u32, self.size[1] as u32]
    }
}

/// The size-dependent textures: the traced occlusion with each pixel's
/// eye depth, and the blurred occlusion the compositor multiplies by.
struct OcclusionTargets {
    size: [u32; 2],
    traced: RenderTarget,
    blurred: RenderTarget,
}

/// The two passes and their textures.
pub struct Occlusion {
    trace: Kernel,
    blur: Kernel,
    uniforms: wgpu::Buffer,
    trace_binding: Binding,
    blur_binding: Binding,
    targets: Option<OcclusionTargets>,
}

impl Occlusion {
    /// Compiles the passes; their textures are made at the first frame.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let trace = Kernel::new(gpu, assets, FILE, "occlusion_trace")?;
        let blur = Kernel::new(gpu, assets, FILE, "occlusion_blur")?;
        let uniforms = crate::gpu::bindings::uniform_buffer(
            &gpu.device,
            "compositor.occlusion",
            size_of::<OcclusionUniforms>(),
        );
        Ok(Self {
            trace_binding: trace.bind(gpu, &[(0, &uniforms)]),
            blur_binding: blur.bind(gpu, &[(0, &uniforms)]),
            trace,
            blur,
            uniforms,
            targets: None,
        })
    }

    /// How strongly the scene is occluded this frame, and the radius and
    /// intensity to trace it with; `None` when it is off.
    pub fn wanted(registry: &Registry) -> Option<(f32, (f32, f32))> {
        let amount = registry.float("scene.occlusion");
        let reach = (
            registry.float("scene.occlusion_radius"),
            registry.float("scene.occlusion_intensity"),
        );
        (amount > 0.0).then_some((amount, reach))
    }

    /// Records both passes over `depth` (of the size `uniforms` give) and
    /// returns the occlusion, (ao, ao, ao, 1) a pixel, for a multiply
    /// blend.
    pub fn trace(
        &mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        depth: &wgpu::TextureView,
        uniforms: &OcclusionUniforms,
    ) -> &wgpu::TextureView {
        let size = uniforms.size();
        gpu.queue
            .write_buffer(&self.uniforms, 0, bytemuck::bytes_of(uniforms));
        if self.targets.as_ref().is_none_or(|t| t.size != size) {
            let target = |label| RenderTarget::new(&gpu.device, label, size, HDR_FORMAT);
            self.targets = Some(OcclusionTargets {
                size,
                traced: target("compositor.occlusion.traced"),
                blurred: target("compositor.occlusion.blurred"),
            });
        }
        let Some(targets) = &self.targets else {
            unreachable!("made above");
        };
        let texture = wgpu::BindingResource::TextureView;
        let traced_group = self.trace.group_at(
            gpu,
            1,
            &[
                entry(0, texture(depth)),
                entry(1, texture(&targets.traced.view)),
            ],
        );
        let blurred_group = self.blur.group_at(
            gpu,
            1,
            &[
                entry(2, texture(&targets.traced.view)),
                entry(3, texture(&targets.blurred.view)),
            ],
        );
        let pixels = size[0] * size[1];
        for (label, kernel, binding, group) in [
            (
                "compositor.occlusion.trace",
                &self.trace,
                &self.trace_binding,
                &traced_group,
            ),
            (
                "compositor.occlusion.blur",
                &self.blur,
                &self.blur_binding,
                &blurred_group,
            ),
        ] {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
            kernel.dispatch_with(&mut pass, binding, group, pixels, 64);
        }
        &targets.blurred.view
    }
}

fn entry(binding: u32, resource: wgpu::BindingResource<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource }
}
