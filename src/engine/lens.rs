//! The scene's lens: depth of field (`scene.aperture`, `scene.focus`)
//! and the camera's motion blur (`scene.motion_blur`), off by default,
//! run after the scene's anti-aliasing by `shaders/compositor/lens.wgsl`
//! (`compositor.lens.depth_of_field` and `compositor.lens.motion_blur` in
//! the HUD and the bench) and laid over the composite, so the layers drawn
//! over the scene stay sharp. They are parameters like the camera's: a
//! script pulls focus, a fader opens the shutter.

use bytemuck::{Pod, Zeroable};
use glam::Mat4;

use super::camera::CameraUniform;
use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};
use crate::params::{ParamSpec, Registry};

const FILE: &str = "compositor/lens.wgsl";

/// The lens's parameters, in the scene's section.
pub fn lens_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::float("scene.aperture", 0.0, 0.0, 0.03)
            .with_smoothing(0.3)
            .with_description("Depth of field: the blur of what is far from the focus, as a share of the picture's height (0: off)"),
        ParamSpec::float("scene.focus", 0.0, 0.0, 10_000.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("How far from the scene's camera it is sharp (0: at what the camera looks at)"),
        ParamSpec::float("scene.motion_blur", 0.0, 0.0, 1.0)
            .with_smoothing(0.2)
            .with_description("The share of a frame the shutter is open: the camera's moves smear (0: off; 0.5: a film camera's)"),
    ]
}

/// `struct Lens` of the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub(crate) struct LensUniforms {
    size: [f32; 4],
    optics: [f32; 4],
    shutter: [f32; 4],
    unproject: [[f32; 4]; 4],
    steady: [[f32; 4]; 4],
    before: [[f32; 4]; 4],
}

/// What the lens does this frame.
#[derive(Debug, Clone, Copy)]
pub struct LensSettings {
    /// The largest blur, a share of the picture's height.
    aperture: f32,
    /// Metres from the camera.
    focus: f32,
    /// The share of a frame the shutter is open.
    shutter: f32,
}

impl LensSettings {
    /// This frame's, from the scene's parameters; `None` when both are off.
    pub fn of(registry: &Registry) -> Option<Self> {
        let focus = match registry.float("scene.focus") {
            0.0 => registry.float("scene.camera_distance"),
            set => set,
        };
        let settings = Self {
            aperture: registry.float("scene.aperture"),
            focus,
            shutter: registry.float("scene.motion_blur"),
        };
        (settings.aperture > 0.0 || settings.shutter > 0.0).then_some(settings)
    }
}

/// The two passes and the textures between them.
pub struct SceneLens {
    depth_of_field: Kernel,
    motion_blur: Kernel,
    uniforms: wgpu::Buffer,
    bindings: [Binding; 2],
    targets: Option<([u32; 2], [RenderTarget; 2])>,
    /// The scene's unshifted clip space last frame, while the shutter was
    /// open.
    before: Option<Mat4>,
}

impl SceneLens {
    /// Compiles the passes; their textures are made at the first frame.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let depth_of_field = Kernel::new(gpu, assets, FILE, "depth_of_field")?;
        let motion_blur = Kernel::new(gpu, assets, FILE, "motion_blur")?;
        let uniforms = crate::gpu::bindings::uniform_buffer(
            &gpu.device,
            "compositor.lens",
            size_of::<LensUniforms>(),
        );
        Ok(Self {
            bindings: [&depth_of_field, &motion_blur].map(|k| k.bind(gpu, &[(0, &uniforms)])),
            depth_of_field,
            motion_blur,
            uniforms,
            targets: None,
            before: None,
        })
    }

    /// Records the passes `settings` asks for over `now` (the composite,
    /// of `size` pixels) and `depth`, drawn this frame by `camera`
    /// (shifted) whose unshifted clip space is `steady`; returns the
    /// picture through the lens.
    pub fn apply<'a>(
        &'a mut self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        now: &'a wgpu::TextureView,
        depth: &wgpu::TextureView,
        size: [u32; 2],
        camera: &CameraUniform,
        steady: Mat4,
        settings: LensSettings,
    ) -> &'a wgpu::TextureView {
        if self.targets.as_ref().is_none_or(|(at, _)| *at != size) {
            let target = |label| RenderTarget::new(&gpu.device, label, size, HDR_FORMAT);
            self.targets = Some((
                size,
                [target("compositor.lens0"), target("compositor.lens1")],
            ));
            self.before = None;
        }
        // The first frame with the shutter open has no move to smear.
        let before = match settings.shutter > 0.0 {
            true => self.before.replace(steady).unwrap_or(steady),
            false => {
                self.before = None;
                steady
            }
        };
        let [w, h] = size.map(|n| n.max(1) as f32);
        let near = camera.near();
        let uniforms = LensUniforms {
            size: [w, h, 1.0 / w, 1.0 / h],
            optics: [near, settings.focus.max(near), settings.aperture * h, 0.0],
            shutter: [settings.shutter, 0.0, 0.0, 0.0],
            unproject: camera.view_proj().inverse().to_cols_array_2d(),
            steady: steady.to_cols_array_2d(),
            before: before.to_cols_array_2d(),
        };
        gpu.queue
            .write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&uniforms));
        let Some((_, targets)) = &self.targets else {
            unreachable!("made above");
        };
        let passes = [
            (
                "compositor.lens.depth_of_field",
                &self.depth_of_field,
                settings.aperture > 0.0,
            ),
            (
                "compositor.lens.motion_blur",
                &self.motion_blur,
                settings.shutter > 0.0,
            ),
        ];
        let mut from = now;
        let mut written = 0;
        for (k, (label, kernel, wanted)) in passes.into_iter().enumerate() {
            if !wanted {
                continue;
            }
            let to = &targets[written];
            let view = wgpu::BindingResource::TextureView;
            let group = kernel.group_at(
                gpu,
                1,
                &[
                    entry(0, view(from)),
                    entry(1, view(depth)),
                    entry(2, view(&to.view)),
                ],
            );
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
            kernel.dispatch_with(&mut pass, &self.bindings[k], &group, size[0] * size[1], 64);
            from = &to.view;
            written = 1 - written;
        }
        from
    }
}

impl SceneLens {
    /// Forgets the camera's last place (the lens is off this frame), so
    /// opening the shutter later smears no jump.
    pub fn rest(&mut self) {
        self.before = None;
    }
}

fn entry(binding: u32, resource: wgpu::BindingResource<'_>) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry { binding, resource }
}
