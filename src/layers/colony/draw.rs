//! Drawing a colony into its layer target: glowing filaments splatted by
//! compute (each segment's screen-space band added up per pixel, then
//! turned into the layer by a fullscreen pass), or lit tubes
//! (depth-tested), one instance per node, sized by the indirect arguments
//! the simulation writes.

use std::cell::OnceCell;

use crate::engine::simulation::Drawer;
use bytemuck::{Pod, Zeroable};

use super::sim::ColonySim;
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::engine::shadow::{ShadowMap, caster_pipeline};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::storage_buffer;
use crate::gpu::raster::{
    Attachments, Depth, DepthBuffer, begin_3d_pass, begin_scene_pass, buffers_group,
    instanced_pipeline,
};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT};

const FILE: &str = "colony/draw.wgsl";

/// The hook that places each node for drawing; another layer replaces it.
pub const TRANSFORM: &str = "colony/transform.wgsl";

/// A replacement for [`TRANSFORM`]: a WGSL file defining
/// `fn node_position(node: u32, grown: vec3<f32>) -> vec3<f32>`, and the
/// buffers it reads at their bindings of group 0 (5 and up; 0-4 are the
/// colony's).
#[derive(Clone, Default)]
pub struct NodeTransform {
    /// The file, relative to `shaders/`.
    pub file: String,
    /// Its buffers at their bindings.
    pub buffers: Vec<(u32, wgpu::Buffer)>,
}

/// `struct DrawParams` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct DrawParams {
    /// Line width in pixels.
    pub width: f32,
    /// Tube radius at the root, world units.
    pub thickness: f32,
    /// HDR brightness.
    pub brightness: f32,
    /// 1 normally, falling to 0 while a regrowing colony fades.
    pub fade: f32,
    /// Palette index.
    pub palette: u32,
    /// 0 colour by depth, 1 by age.
    pub colour_by: u32,
    /// How much wider than its tips a line is at the root (0: even).
    pub taper: f32,
    _pad: u32,
}

impl DrawParams {
    /// Drawing parameters.
    pub fn new(
        width: f32,
        thickness: f32,
        brightness: f32,
        fade: f32,
        palette: u32,
        colour_by: u32,
        taper: f32,
    ) -> Self {
        Self {
            width,
            thickness,
            brightness,
            fade,
            palette,
            colour_by,
            taper,
            _pad: 0,
        }
    }
}

/// How branches are drawn, in the order of `colony.render`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Glowing screen-space lines.
    Lines,
    /// Lit tubes.
    Tubes,
}

/// Pipelines and per-colony bind groups.
pub struct BranchRenderer {
    splat_lines: wgpu::ComputePipeline,
    resolve_lines: wgpu::ComputePipeline,
    tubes: wgpu::RenderPipeline,
    /// The tubes' depth from the key light, into the scene's shadow map:
    /// the pipeline and its group over this colony's buffers, made at the
    /// first cast (a colony that never casts compiles nothing for it).
    module: wgpu::ShaderModule,
    caster: OnceCell<(wgpu::RenderPipeline, wgpu::BindGroup)>,
    light_camera: wgpu::Buffer,
    /// For the lines' target group, made each frame for the target drawn.
    device: wgpu::Device,
    camera: wgpu::Buffer,
    params: wgpu::Buffer,
    tubes_group: Option<wgpu::BindGroup>,
    /// The colony's and the transform's buffers, for the lines' groups.
    buffers: Vec<(u32, wgpu::Buffer)>,
    lines: Option<LineSums>,
    depth: DepthBuffer,
    transform_buffers: Vec<(u32, wgpu::Buffer)>,
}

/// The lines' per-pixel sums for one target size, and the groups of the
/// splat and of the pass that reads it.
struct LineSums {
    size: [u32; 2],
    sums: wgpu::Buffer,
    groups: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
}

impl BranchRenderer {
    /// Compiles both pipelines with `transform` placing the nodes (its
    /// default, an empty file name, draws them where they grew).
    pub fn with_transform(
        gpu: &Gpu,
        assets: &Assets,
        transform: &NodeTransform,
    ) -> Result<Self, BuildError> {
        let mut composer = Composer::new(assets);
        if !transform.file.is_empty() {
            composer = composer.substitute(TRANSFORM, &transform.file);
        }
        let composed = composer.file(FILE)?.finish()?;
        composed.validate()?;
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(FILE),
                source: wgpu::ShaderSource::Wgsl(composed.text().into()),
            });
        let splat_lines = gpu
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("colony.splat_lines"),
                layout: None,
                module: &module,
                entry_point: Some("splat_lines"),
                compilation_options: Default::default(),
                cache: None,
            });
        let resolve_lines = gpu
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("colony.resolve_lines"),
                layout: None,
                module: &module,
                entry_point: Some("resolve_lines"),
                compilation_options: Default::default(),
                cache: None,
            });
        let tubes = instanced_pipeline(
            &gpu.device,
            &module,
            "colony.tubes",
            "vs_tube",
            "fs_tube",
            Attachments {
                format: HDR_FORMAT,
                blend: None,
                depth: Depth::Written,
            },
        );
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BuildError::Device {
                label: FILE.into(),
                message: error.to_string(),
            });
        }
        Ok(Self {
            splat_lines,
            resolve_lines,
            tubes,
            module,
            caster: OnceCell::new(),
            light_camera: uniform_buffer(
                &gpu.device,
                "colony.light_camera",
                size_of::<CameraUniform>(),
            ),
            device: gpu.device.clone(),
            camera: uniform_buffer(&gpu.device, "colony.camera", size_of::<CameraUniform>()),
            params: uniform_buffer(&gpu.device, "colony.draw", size_of::<DrawParams>()),
            tubes_group: None,
            buffers: Vec::new(),
            lines: None,
            depth: DepthBuffer::default(),
            transform_buffers: transform.buffers.clone(),
        })
    }

    /// The buffers the node-position hook reads, for the next `attach`
    /// (a new simulation of the layer that placed the hook).
    pub fn set_transform_buffers(&mut self, buffers: Vec<(u32, wgpu::Buffer)>) {
        self.transform_buffers = buffers;
    }

    /// This frame's uploads: the camera and the look, and a depth buffer
    /// for a target of `size`.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        size: [u32; 2],
        camera: &CameraUniform,
        params: &DrawParams,
    ) {
        gpu.queue
            .write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        let light = camera.from_light();
        gpu.queue
            .write_buffer(&self.light_camera, 0, bytemuck::bytes_of(&light));
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(params));
        self.depth.at(&gpu.device, "colony.depth", size);
        if self.lines.as_ref().is_none_or(|l| l.size != size) {
            let pixels = u64::from(size[0].max(1)) * u64::from(size[1].max(1));
            let none = wgpu::BufferUsages::empty();
            self.lines = Some(LineSums {
                size,
                sums: storage_buffer(gpu, "colony.line_sums", pixels * 16, none),
                groups: None,
            });
        }
        if let Some(lines) = self.lines.as_mut().filter(|l| l.groups.is_none())
            && !self.buffers.is_empty()
        {
            let mut splat: Vec<wgpu::BindGroupEntry<'_>> = self
                .buffers
                .iter()
                .map(|(binding, buffer)| wgpu::BindGroupEntry {
                    binding: *binding,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            splat.push(wgpu::BindGroupEntry {
                binding: 12,
                resource: lines.sums.as_entire_binding(),
            });
            let splat = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("colony.splat_lines"),
                layout: &self.splat_lines.get_bind_group_layout(0),
                entries: &splat,
            });
            let resolve = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("colony.lines"),
                layout: &self.resolve_lines.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.camera.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 13,
                        resource: lines.sums.as_entire_binding(),
                    },
                ],
            });
            lines.groups = Some((splat, resolve));
        }
    }

    /// Records the draw into `target` (cleared first), with what
    /// [`BranchRenderer::prepare`] uploaded.
    /// In the shared scene (`scene_depth`) tubes draw into its depth;
    /// glowing lines add over whatever the scene holds.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ColonySim,
        target: &wgpu::TextureView,
        scene_depth: Option<&wgpu::TextureView>,
        style: Style,
    ) {
        if style == Style::Lines {
            self.draw_lines(encoder, profiler, sim, target);
            return;
        }
        let (Some(tubes_group), Some(depth)) = (&self.tubes_group, self.depth.view()) else {
            return;
        };
        let label = "colony.draw.tubes";
        let load = wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT);
        let timestamps = profiler.render_pass(label);
        let mut pass = match scene_depth {
            Some(scene) => begin_scene_pass(encoder, label, target, load, scene, timestamps),
            None => begin_3d_pass(encoder, label, target, load, Some(depth), timestamps),
        };
        pass.set_pipeline(&self.tubes);
        pass.set_bind_group(0, tubes_group, &[]);
        pass.draw_indirect(&sim.args, TUBE_DRAW);
    }

    /// Records the tubes' depth from the key light into `map`.
    pub fn cast(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ColonySim,
        map: &ShadowMap,
    ) {
        if self.buffers.is_empty() {
            return;
        }
        let (caster, group) = self.caster.get_or_init(|| {
            let caster =
                caster_pipeline(&self.device, &self.module, "vs_tube", "colony.caster", &[]);
            // The colony's buffers, the light as the camera.
            let cast: Vec<(u32, &wgpu::Buffer)> = (self.buffers.iter())
                .map(|(binding, buffer)| match binding {
                    0 => (0, &self.light_camera),
                    _ => (*binding, buffer),
                })
                .collect();
            let group = buffers_group(&self.device, &caster, "colony.cast", &cast);
            (caster, group)
        });
        let label = "colony.cast.tubes";
        let timestamps = profiler.render_pass(label);
        let mut pass = map.cast_pass(encoder, label, timestamps);
        pass.set_pipeline(caster);
        pass.set_bind_group(0, group, &[]);
        pass.draw_indirect(&sim.args, TUBE_DRAW);
    }

    /// The lines: the sums cleared, every segment splatted, the sums
    /// turned into `target`.
    fn draw_lines(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ColonySim,
        target: &wgpu::TextureView,
    ) {
        let Some(LineSums {
            sums,
            groups: Some((splat, resolve)),
            ..
        }) = &self.lines
        else {
            return;
        };
        encoder.clear_buffer(sums, 0, None);
        let label = "colony.draw.lines";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        pass.set_pipeline(&self.splat_lines);
        pass.set_bind_group(0, splat, &[]);
        pass.dispatch_workgroups_indirect(&sim.args, 0);
        drop(pass);
        let label = "colony.draw.lines.resolve";
        let output = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.resolve_lines.get_bind_group_layout(1),
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(target),
            }],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        pass.set_pipeline(&self.resolve_lines);
        pass.set_bind_group(0, resolve, &[]);
        pass.set_bind_group(1, &output, &[]);
        let [width, height] = self.lines.as_ref().map_or([1, 1], |l| l.size);
        pass.dispatch_workgroups(width.div_ceil(8), height.div_ceil(8), 1);
    }
}

/// Byte offset of the tube draw in the simulation's `args` (`ARGS_TUBES`).
const TUBE_DRAW: u64 = 3 * 4;

impl Drawer<ColonySim> for BranchRenderer {
    /// Compiles both pipelines, drawing nodes where they grew.
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        Self::with_transform(gpu, assets, &NodeTransform::default())
    }

    /// Binds a (new) simulation's buffers.
    fn attach(&mut self, gpu: &Gpu, sim: &ColonySim) {
        let mut buffers = vec![
            (0, &self.camera),
            (1, &self.params),
            (2, &sim.nodes),
            (3, &sim.info),
            (4, &sim.state),
        ];
        buffers.extend(
            self.transform_buffers
                .iter()
                .map(|(b, buffer)| (*b, buffer)),
        );
        self.tubes_group = Some(buffers_group(
            &gpu.device,
            &self.tubes,
            "colony.draw",
            &buffers,
        ));
        self.caster = OnceCell::new();
        self.buffers = buffers
            .iter()
            .map(|(binding, buffer)| (*binding, (*buffer).clone()))
            .collect();
        if let Some(lines) = self.lines.as_mut() {
            lines.groups = None;
        }
    }
}
