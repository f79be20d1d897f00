//! Drawing the fluid: glowing streaks (the seed's look, splatted by
//! compute: glow.rs), or a screen-space liquid surface that reads as water — the particles are
//! splatted by compute as spheres into eye depth (the nearest surface),
//! thickness and foam (`splat.wgsl`: a thread a row of a disc, atomics per
//! pixel, no rasterizer), a bilateral blur smooths the depth (twice over,
//! both axes), and a shading pass refracts the layers below through the
//! thickness, absorbs their colour with depth, reflects a sky by Fresnel,
//! adds the light's glint and whitens the foam.

use crate::engine::simulation::Drawer;
use bytemuck::{Pod, Zeroable};

use super::glow::{Glow, SplatBuffers};
use super::sim::FluidSim;
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::compute::{Binding, Kernel, storage_buffer};
use crate::gpu::wgsl::Composer;
use crate::gpu::{
    BuildError, DepthWriter, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget,
};

const EYE_DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Float;
/// Thickness and foam (red, green), written by the splat's resolve.
const THICKNESS_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// Rounds of the separable depth blur: one leaves the particles' lattice
/// showing as ripples, two read as one smooth body.
const BLUR_ROUNDS: usize = 2;
/// Eye depth where no liquid is (`EMPTY` in surface.wgsl, `EMPTY_BITS`
/// in splat.wgsl).
const EMPTY: f32 = 1e9;
/// Fixed-point steps of the thickness sums in one particle's radius:
/// fine enough for a thin sheet, room for 30,000 overlapping particles.
const THICKNESS_STEPS: f32 = 65_536.0;

/// `struct ParticleDraw` in particle_look.wgsl.
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
    /// Seconds of motion a particle's glow is drawn along (0: a disc).
    pub streak: f32,
    /// Keeps the block a multiple of 16 bytes.
    pub _pad: f32,
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

/// `struct Splat` in splat.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub(crate) struct SplatUniform {
    size: [u32; 2],
    particle_count: u32,
    scale: f32,
    in_scene: u32,
    white_count: u32,
    _pad: [u32; 2],
}

/// Particles or surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Glowing discs and streaks.
    Particles,
    /// The liquid surface.
    Surface,
}

/// Pipelines and screen-sized textures.
pub struct FluidRenderer {
    glow: Glow,
    splat: SplatKernels,
    blur: FullscreenPipeline,
    shade: FullscreenPipeline,
    /// The surface into the scene's depth, when the fluid is in the scene.
    surface_depth: DepthWriter,
    surface_layout: wgpu::BindGroupLayout,
    camera: wgpu::Buffer,
    look: wgpu::Buffer,
    surface: [wgpu::Buffer; 2],
    /// `Splat`, the widest disc, and the rows' dispatch (the glow's too).
    splat_buffers: [wgpu::Buffer; 3],
    /// The simulation's positions, velocities and densities.
    particles: Option<[wgpu::Buffer; 3]>,
    /// Its white water's positions and velocities, and its slots.
    white: Option<([wgpu::Buffer; 2], u32)>,
    targets: Option<FluidTargets>,
}

/// The splat's entry points (splat.wgsl).
struct SplatKernels {
    measure: Kernel,
    size: Kernel,
    rows: Kernel,
    resolve: Kernel,
    white: Kernel,
}

/// The splat's kernels bound to a target's sums: measure, size, rows and
/// resolve, and the white water's when there is any.
type SplatBindings = ([Binding; 4], Option<Binding>);

impl SplatKernels {
    /// The kernels bound to `buffers`, the per-pixel sums (`depth_bits`,
    /// `layer_sums`) and the white water's positions and velocities.
    fn bind(
        &self,
        gpu: &Gpu,
        buffers: SplatBuffers<'_>,
        depth_bits: &wgpu::Buffer,
        layer_sums: &wgpu::Buffer,
        white: Option<&[wgpu::Buffer; 2]>,
    ) -> SplatBindings {
        let SplatBuffers {
            camera,
            look,
            particles: [positions, velocities, densities],
            splat: [splat, footprint, dispatch],
        } = buffers;
        let white = white.map(|[white_positions, white_velocities]| {
            self.white.bind(
                gpu,
                &[
                    (0, camera),
                    (1, look),
                    (5, splat),
                    (7, depth_bits),
                    (8, layer_sums),
                    (10, white_positions),
                    (11, white_velocities),
                ],
            )
        });
        let kernels = [
            self.measure.bind(
                gpu,
                &[
                    (0, camera),
                    (1, look),
                    (2, positions),
                    (5, splat),
                    (6, footprint),
                ],
            ),
            self.size
                .bind(gpu, &[(5, splat), (6, footprint), (9, dispatch)]),
            self.rows.bind(
                gpu,
                &[
                    (0, camera),
                    (1, look),
                    (2, positions),
                    (3, velocities),
                    (4, densities),
                    (5, splat),
                    (6, footprint),
                    (7, depth_bits),
                    (8, layer_sums),
                ],
            ),
            self.resolve.bind(
                gpu,
                &[(0, camera), (5, splat), (7, depth_bits), (8, layer_sums)],
            ),
        ];
        (kernels, white)
    }
}

struct FluidTargets {
    size: [u32; 2],
    eye: [RenderTarget; 2],
    thickness: RenderTarget,
    /// The nearest eye depth's bits and the thickness and foam sums, per
    /// pixel; the resolve leaves them cleared.
    sums: [wgpu::Buffer; 2],
    /// The splat's kernels bound to these sums and the particles (made in
    /// `prepare` once both are known).
    bindings: Option<SplatBindings>,
}

impl FluidRenderer {
    /// This frame's uploads for a target of `size`: the camera, the look,
    /// the surface passes' uniforms, and the screen-space targets the
    /// surface is built in (made again only when the size changes).
    /// `particles` and `in_scene` set the splat's uniforms.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        size: [u32; 2],
        camera: &CameraUniform,
        look: &ParticleDraw,
        particles: u32,
        in_scene: bool,
    ) {
        gpu.queue
            .write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        gpu.queue
            .write_buffer(&self.look, 0, bytemuck::bytes_of(look));
        if self.targets.as_ref().is_none_or(|t| t.size != size) {
            self.targets = Some(FluidTargets::new(gpu, size));
        }
        let splat = SplatUniform {
            size,
            particle_count: particles,
            scale: THICKNESS_STEPS / look.radius.max(1e-6),
            in_scene: u32::from(in_scene),
            white_count: self.white.as_ref().map_or(0, |(_, slots)| *slots),
            _pad: [0; 2],
        };
        gpu.queue
            .write_buffer(&self.splat_buffers[0], 0, bytemuck::bytes_of(&splat));
        if let (Some(targets), Some(buffers)) = (self.targets.as_mut(), &self.particles)
            && targets.bindings.is_none()
        {
            let [depth_bits, layer_sums] = &targets.sums;
            let buffers = SplatBuffers {
                camera: &self.camera,
                look: &self.look,
                particles: buffers,
                splat: &self.splat_buffers,
            };
            let white = self.white.as_ref().map(|(buffers, _)| buffers);
            let bound = (self.splat).bind(gpu, buffers, depth_bits, layer_sums, white);
            targets.bindings = Some(bound);
        }
        let glowing = self.particles.as_ref().map(|particles| SplatBuffers {
            camera: &self.camera,
            look: &self.look,
            particles,
            splat: &self.splat_buffers,
        });
        self.glow.prepare(gpu, size, glowing);
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
    /// uploaded; the surface refracts `below`, and `in_scene` it writes
    /// its depth into `scene_depth`.
    pub fn draw(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &FluidSim,
        target: &wgpu::TextureView,
        below: &wgpu::TextureView,
        scene_depth: &wgpu::TextureView,
        in_scene: bool,
        style: Look,
    ) {
        if style == Look::Particles {
            let (count, dispatch) = (sim.count(), &self.splat_buffers[2]);
            (self.glow).draw(gpu, encoder, profiler, target, scene_depth, count, dispatch);
            return;
        }
        let Some(targets) = &self.targets else {
            return;
        };
        self.splat(gpu, encoder, profiler, targets, scene_depth, sim.count());
        for round in 0..BLUR_ROUNDS {
            for (direction, (from, to)) in [(0usize, (0usize, 1usize)), (1, (1, 0))] {
                let (eye, thickness) = (&targets.eye[from].view, &targets.thickness.view);
                let group = self.surface_group(gpu, direction, eye, below, thickness);
                let label = format!("fluid.draw.blur{round}{direction}");
                let timestamps = profiler.render_pass(&label);
                self.blur
                    .draw(encoder, &label, &targets.eye[to].view, &group, timestamps);
            }
        }
        let (eye, thickness) = (&targets.eye[0].view, &targets.thickness.view);
        let group = self.surface_group(gpu, 1, eye, below, thickness);
        let timestamps = profiler.render_pass("fluid.draw.shade");
        self.shade
            .draw(encoder, "fluid.draw.shade", target, &group, timestamps);
        if in_scene {
            let label = "fluid.draw.depth";
            let timestamps = profiler.render_pass(label);
            self.surface_depth
                .draw(encoder, label, scene_depth, &group, timestamps);
        }
    }

    /// Splats `count` particles into the targets' eye depth and thickness.
    /// The water behind what the scene's depth holds is left out (the
    /// resolve reads `scene_depth`).
    fn splat(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        targets: &FluidTargets,
        scene_depth: &wgpu::TextureView,
        count: u32,
    ) {
        let Some(([measure, size, rows, resolve], white)) = &targets.bindings else {
            return;
        };
        let kernels = &self.splat;
        let dispatch = &self.splat_buffers[2];
        let textures = [&targets.eye[0].view, &targets.thickness.view, scene_depth];
        let entries: Vec<wgpu::BindGroupEntry<'_>> = (0u32..)
            .zip(textures)
            .map(|(binding, view)| wgpu::BindGroupEntry {
                binding,
                resource: wgpu::BindingResource::TextureView(view),
            })
            .collect();
        let resolved = kernels.resolve.group_at(gpu, 1, &entries);
        let label = "fluid.draw.splat.measure";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        kernels.measure.dispatch(&mut pass, measure, count, 64);
        kernels.size.dispatch(&mut pass, size, 1, 1);
        drop(pass);
        let label = "fluid.draw.splat";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        kernels.rows.dispatch_indirect(&mut pass, rows, dispatch, 0);
        if let (Some(white), Some((_, slots))) = (white, &self.white) {
            let scene = [wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::TextureView(scene_depth),
            }];
            let hidden_by = kernels.white.group_at(gpu, 1, &scene);
            kernels
                .white
                .dispatch_with(&mut pass, white, &hidden_by, *slots, 64);
        }
        drop(pass);
        let label = "fluid.draw.splat.resolve";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        let [w, h] = targets.size;
        kernels
            .resolve
            .dispatch_with(&mut pass, resolve, &resolved, w * h, 64);
    }

    fn surface_group(
        &self,
        gpu: &Gpu,
        uniform: usize,
        depth: &wgpu::TextureView,
        below: &wgpu::TextureView,
        thickness: &wgpu::TextureView,
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

impl FluidTargets {
    fn new(gpu: &Gpu, size: [u32; 2]) -> Self {
        let eye = [0, 1].map(|i| {
            RenderTarget::new(
                &gpu.device,
                &format!("fluid.eye_depth{i}"),
                size,
                EYE_DEPTH_FORMAT,
            )
        });
        let thickness = RenderTarget::new(&gpu.device, "fluid.thickness", size, THICKNESS_FORMAT);
        let pixels = u64::from(size[0].max(1)) * u64::from(size[1].max(1));
        let none = wgpu::BufferUsages::empty();
        let depth_bits = storage_buffer(gpu, "fluid.splat.depth", pixels * 4, none);
        let empty = vec![EMPTY; pixels as usize];
        gpu.queue
            .write_buffer(&depth_bits, 0, bytemuck::cast_slice(&empty));
        let layer_sums = storage_buffer(gpu, "fluid.splat.layer", pixels * 8, none);
        Self {
            size,
            eye,
            thickness,
            sums: [depth_bits, layer_sums],
            bindings: None,
        }
    }
}

impl Drawer<FluidSim> for FluidRenderer {
    /// Compiles the pipelines.
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
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
        let kernel = |entry| Kernel::new(gpu, assets, "fluid/splat.wgsl", entry);
        let splat = SplatKernels {
            measure: kernel("measure")?,
            size: kernel("size_splat")?,
            rows: kernel("splat_rows")?,
            resolve: kernel("resolve")?,
            white: kernel("splat_white_water")?,
        };
        let none = wgpu::BufferUsages::empty();
        let splat_buffers = [
            uniform_buffer(&gpu.device, "fluid.splat", size_of::<SplatUniform>()),
            storage_buffer(gpu, "fluid.splat.footprint", 16, none),
            storage_buffer(
                gpu,
                "fluid.splat.dispatch",
                16,
                wgpu::BufferUsages::INDIRECT,
            ),
        ];
        Ok(Self {
            glow: Glow::build(gpu, assets)?,
            splat,
            splat_buffers,
            blur: fullscreen("fs_blur", EYE_DEPTH_FORMAT)?,
            shade: fullscreen("fs_shade", HDR_FORMAT)?,
            surface_depth: DepthWriter::new(
                gpu,
                "fluid.surface_depth",
                surface.text(),
                &surface_layout,
                "fs_depth",
            )?,
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
            particles: None,
            white: None,
            targets: None,
        })
    }

    /// Binds a (new) simulation's buffers.
    fn attach(&mut self, _gpu: &Gpu, sim: &FluidSim) {
        self.particles = Some([
            sim.positions.clone(),
            sim.velocities.clone(),
            sim.densities.clone(),
        ]);
        self.white = (sim.white_water.as_ref()).map(|white| {
            let buffers = [white.positions.clone(), white.velocities.clone()];
            (buffers, white.capacity())
        });
        if let Some(targets) = self.targets.as_mut() {
            targets.bindings = None;
        }
        self.glow.detach();
    }
}
