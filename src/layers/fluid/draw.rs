//! Drawing the fluid: glowing billboards (the seed's look), or a
//! screen-space liquid surface that reads as water — sphere impostors
//! write eye depth, the same discs add up the liquid's thickness and foam,
//! a bilateral blur smooths the depth (twice over, both axes), and a
//! shading pass refracts the layers below through the thickness, absorbs
//! their colour with depth, reflects a sky by Fresnel, adds the light's
//! glint and whitens the foam.

use crate::engine::simulation::Drawer;
use bytemuck::{Pod, Zeroable};

use super::sim::FluidSim;
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::raster::{
    Output, additive, begin_3d_pass, buffers_group, depth_view, instanced_pipeline,
};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};

const EYE_DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Float;
/// Thickness and foam, added up (blendable).
const THICKNESS_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rg16Float;
/// Rounds of the separable depth blur: one leaves the particles' lattice
/// showing as ripples, two read as one smooth body.
const BLUR_ROUNDS: usize = 2;
/// Eye depth where no liquid is (`EMPTY` in surface.wgsl).
const EMPTY: f64 = 1e9;

/// `struct ParticleDraw` in particles.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct ParticleDraw {
    /// Liquid colour (linear), alpha = opacity of the surface.
    pub colour: [f32; 4],
    /// Billboard radius, world units.
    pub radius: f32,
    /// 0 speed, 1 density.
    pub colour_by: u32,
    /// HDR brightness of the billboards.
    pub brightness: f32,
    /// For density colouring.
    pub rest_density: f32,
    /// Absorption per metre of the colours the liquid lacks.
    pub absorption: f32,
    /// Brightness of the foam.
    pub foam: f32,
    /// Keeps the block a multiple of 16 bytes.
    pub _pad: [f32; 2],
}

/// `struct Surface` in surface.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub(crate) struct SurfaceUniform {
    colour: [f32; 4],
    radius_px: f32,
    depth_falloff: f32,
    refraction: f32,
    direction: u32,
    absorption: f32,
    foam: f32,
    _pad: [f32; 2],
}

/// Particles or surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Additive billboards.
    Particles,
    /// The liquid surface.
    Surface,
}

/// Pipelines and screen-sized textures.
pub struct FluidRenderer {
    glow: wgpu::RenderPipeline,
    depth: wgpu::RenderPipeline,
    thickness: wgpu::RenderPipeline,
    blur: FullscreenPipeline,
    shade: FullscreenPipeline,
    surface_layout: wgpu::BindGroupLayout,
    camera: wgpu::Buffer,
    look: wgpu::Buffer,
    surface: [wgpu::Buffer; 2],
    groups: Option<[wgpu::BindGroup; 3]>,
    targets: Option<Targets>,
}

struct Targets {
    size: [u32; 2],
    eye: [RenderTarget; 2],
    thickness: RenderTarget,
    depth: wgpu::TextureView,
}

impl FluidRenderer {
    /// This frame's uploads for a target of `size`: the camera, the look,
    /// the surface passes' uniforms, and the screen-space targets the
    /// surface is built in (made again only when the size changes).
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        size: [u32; 2],
        camera: &CameraUniform,
        look: &ParticleDraw,
    ) {
        gpu.queue
            .write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        gpu.queue
            .write_buffer(&self.look, 0, bytemuck::bytes_of(look));
        if self.targets.as_ref().is_none_or(|t| t.size != size) {
            self.targets = Some(Targets::new(gpu, size));
        }
        let pixels = look.radius * size[1] as f32 / (2.0 * camera_tan(camera));
        for direction in 0..2 {
            let uniform = SurfaceUniform {
                colour: look.colour,
                radius_px: pixels * 5.0,
                depth_falloff: 1.0 / (look.radius * look.radius * 4.0),
                refraction: 0.06,
                direction: direction as u32,
                absorption: look.absorption,
                foam: look.foam,
                _pad: [0.0; 2],
            };
            gpu.queue
                .write_buffer(&self.surface[direction], 0, bytemuck::bytes_of(&uniform));
        }
    }

    /// Records the draw into `target` with what [`FluidRenderer::prepare`]
    /// uploaded; the surface refracts `below`.
    pub fn draw(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &FluidSim,
        (target, below): (&wgpu::TextureView, &wgpu::TextureView),
        style: Look,
    ) {
        let Some([glow_group, depth_group, thickness_group]) = &self.groups else {
            return;
        };
        let instances = 0..sim.count();
        if style == Look::Particles {
            let label = "fluid.draw.particles";
            let mut pass = begin_3d_pass(
                encoder,
                label,
                (target, wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT)),
                None,
                profiler.render_pass(label),
            );
            pass.set_pipeline(&self.glow);
            pass.set_bind_group(0, glow_group, &[]);
            pass.draw(0..6, instances);
            return;
        }
        let Some(targets) = &self.targets else {
            return;
        };
        let empty = wgpu::Color {
            r: EMPTY,
            g: EMPTY,
            b: EMPTY,
            a: EMPTY,
        };
        {
            let label = "fluid.draw.depth";
            let mut pass = begin_3d_pass(
                encoder,
                label,
                (&targets.eye[0].view, wgpu::LoadOp::Clear(empty)),
                Some(&targets.depth),
                profiler.render_pass(label),
            );
            pass.set_pipeline(&self.depth);
            pass.set_bind_group(0, depth_group, &[]);
            pass.draw(0..6, instances.clone());
        }
        {
            let label = "fluid.draw.thickness";
            let mut pass = begin_3d_pass(
                encoder,
                label,
                (
                    &targets.thickness.view,
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                ),
                None,
                profiler.render_pass(label),
            );
            pass.set_pipeline(&self.thickness);
            pass.set_bind_group(0, thickness_group, &[]);
            pass.draw(0..6, instances);
        }
        for round in 0..BLUR_ROUNDS {
            for (direction, (from, to)) in [(0usize, (0usize, 1usize)), (1, (1, 0))] {
                let group = self.surface_group(
                    gpu,
                    direction,
                    (&targets.eye[from].view, below, &targets.thickness.view),
                );
                let label = format!("fluid.draw.blur{round}{direction}");
                let timestamps = profiler.render_pass(&label);
                self.blur
                    .draw(encoder, &label, &targets.eye[to].view, &group, timestamps);
            }
        }
        let group = self.surface_group(
            gpu,
            1,
            (&targets.eye[0].view, below, &targets.thickness.view),
        );
        let timestamps = profiler.render_pass("fluid.draw.shade");
        self.shade
            .draw(encoder, "fluid.draw.shade", target, &group, timestamps);
    }

    fn surface_group(
        &self,
        gpu: &Gpu,
        uniform: usize,
        (depth, below, thickness): (&wgpu::TextureView, &wgpu::TextureView, &wgpu::TextureView),
    ) -> wgpu::BindGroup {
        bind(
            gpu,
            &self.surface_layout,
            "fluid.surface",
            &[
                self.camera.as_entire_binding(),
                self.surface[uniform].as_entire_binding(),
                wgpu::BindingResource::TextureView(depth),
                wgpu::BindingResource::TextureView(below),
                wgpu::BindingResource::TextureView(thickness),
            ],
        )
    }
}

/// tan of half the vertical field of view, from the camera block.
fn camera_tan(camera: &CameraUniform) -> f32 {
    camera.tan_half_fov().max(1e-3)
}

impl Targets {
    fn new(gpu: &Gpu, size: [u32; 2]) -> Self {
        Self {
            size,
            eye: [0, 1].map(|i| {
                RenderTarget::new(
                    &gpu.device,
                    &format!("fluid.eye_depth{i}"),
                    size,
                    EYE_DEPTH_FORMAT,
                )
            }),
            thickness: RenderTarget::new(&gpu.device, "fluid.thickness", size, THICKNESS_FORMAT),
            depth: depth_view(&gpu.device, "fluid.depth_buffer", size),
        }
    }
}

impl Drawer<FluidSim> for FluidRenderer {
    /// Compiles the pipelines.
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let particles = Composer::new(assets)
            .file("fluid/particles.wgsl")?
            .finish()?;
        particles.validate()?;
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("fluid/particles.wgsl"),
                source: wgpu::ShaderSource::Wgsl(particles.text().into()),
            });
        let glow = instanced_pipeline(
            &gpu.device,
            &module,
            "fluid.glow",
            ("vs_disc", "fs_glow"),
            Output {
                format: HDR_FORMAT,
                blend: Some(additive()),
                depth: false,
            },
        );
        let depth = instanced_pipeline(
            &gpu.device,
            &module,
            "fluid.depth",
            ("vs_disc", "fs_depth"),
            Output {
                format: EYE_DEPTH_FORMAT,
                blend: None,
                depth: true,
            },
        );
        let thickness = instanced_pipeline(
            &gpu.device,
            &module,
            "fluid.thickness",
            ("vs_disc", "fs_thickness"),
            Output {
                format: THICKNESS_FORMAT,
                blend: Some(additive()),
                depth: false,
            },
        );
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BuildError::Device {
                label: "fluid/particles.wgsl".into(),
                message: error.to_string(),
            });
        }
        let surface_layout = layout(
            &gpu.device,
            "fluid.surface",
            &[
                Slot::Uniform,
                Slot::Uniform,
                Slot::Texture(false),
                Slot::Texture(false),
                Slot::Texture(false),
            ],
        );
        let surface = Composer::new(assets).file("fluid/surface.wgsl")?.finish()?;
        surface.validate()?;
        let fullscreen = |entry: &str, format| {
            FullscreenPipeline::with_entry(
                &gpu.device,
                entry,
                surface.text(),
                &surface_layout,
                format,
                entry,
            )
        };
        Ok(Self {
            glow,
            depth,
            thickness,
            blur: fullscreen("fs_blur", EYE_DEPTH_FORMAT)?,
            shade: fullscreen("fs_shade", HDR_FORMAT)?,
            surface_layout,
            camera: uniform_buffer(&gpu.device, "fluid.camera", size_of::<CameraUniform>()),
            look: uniform_buffer(&gpu.device, "fluid.look", size_of::<ParticleDraw>()),
            surface: [0, 1].map(|i| {
                uniform_buffer(
                    &gpu.device,
                    &format!("fluid.surface{i}"),
                    size_of::<SurfaceUniform>(),
                )
            }),
            groups: None,
            targets: None,
        })
    }

    /// Binds a (new) simulation's buffers.
    fn attach(&mut self, gpu: &Gpu, sim: &FluidSim) {
        let buffers = [
            (0, &self.camera),
            (1, &self.look),
            (2, &sim.positions),
            (3, &sim.velocities),
            (4, &sim.densities),
        ];
        let group = |pipeline| buffers_group(&gpu.device, pipeline, "fluid.particles", &buffers);
        self.groups = Some([
            group(&self.glow),
            group(&self.depth),
            group(&self.thickness),
        ]);
    }
}
