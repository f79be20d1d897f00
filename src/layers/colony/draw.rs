//! Drawing a colony into its layer target: screen-space line quads
//! (additive, for glowing filaments) or lit tubes (depth-tested), one
//! instance per node, sized by the indirect arguments the simulation writes.

use crate::engine::simulation::Drawer;
use bytemuck::{Pod, Zeroable};

use super::sim::ColonySim;
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::raster::{
    DepthBuffer, Output, additive, begin_3d_pass, buffers_group, instanced_pipeline,
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
    _pad: [u32; 2],
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
    ) -> Self {
        Self {
            width,
            thickness,
            brightness,
            fade,
            palette,
            colour_by,
            _pad: [0; 2],
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
    lines: wgpu::RenderPipeline,
    tubes: wgpu::RenderPipeline,
    camera: wgpu::Buffer,
    params: wgpu::Buffer,
    groups: Option<(wgpu::BindGroup, wgpu::BindGroup)>,
    depth: DepthBuffer,
    transform_buffers: Vec<(u32, wgpu::Buffer)>,
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
        let lines = instanced_pipeline(
            &gpu.device,
            &module,
            "colony.lines",
            ("vs_line", "fs_line"),
            Output {
                format: HDR_FORMAT,
                blend: Some(additive()),
                depth: false,
            },
        );
        let tubes = instanced_pipeline(
            &gpu.device,
            &module,
            "colony.tubes",
            ("vs_tube", "fs_tube"),
            Output {
                format: HDR_FORMAT,
                blend: None,
                depth: true,
            },
        );
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BuildError::Device {
                label: FILE.into(),
                message: error.to_string(),
            });
        }
        Ok(Self {
            lines,
            tubes,
            camera: uniform_buffer(&gpu.device, "colony.camera", size_of::<CameraUniform>()),
            params: uniform_buffer(&gpu.device, "colony.draw", size_of::<DrawParams>()),
            groups: None,
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
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(params));
        self.depth.at(&gpu.device, "colony.depth", size);
    }

    /// Records the draw into `target` (cleared first), with what
    /// [`BranchRenderer::prepare`] uploaded.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ColonySim,
        target: &wgpu::TextureView,
        style: Style,
    ) {
        let (Some((lines_group, tubes_group)), Some(depth)) = (&self.groups, self.depth.view())
        else {
            return;
        };
        let tubes = style == Style::Tubes;
        let label = if tubes {
            "colony.draw.tubes"
        } else {
            "colony.draw.lines"
        };
        let mut pass = begin_3d_pass(
            encoder,
            label,
            (target, wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT)),
            tubes.then_some(depth),
            profiler.render_pass(label),
        );
        if tubes {
            pass.set_pipeline(&self.tubes);
            pass.set_bind_group(0, tubes_group, &[]);
            pass.draw_indirect(&sim.args, 7 * 4);
        } else {
            pass.set_pipeline(&self.lines);
            pass.set_bind_group(0, lines_group, &[]);
            pass.draw_indirect(&sim.args, 3 * 4);
        }
    }
}

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
        let group = |pipeline| buffers_group(&gpu.device, pipeline, "colony.draw", &buffers);
        self.groups = Some((group(&self.lines), group(&self.tubes)));
    }
}
