//! The warp pass (`shaders/outputs/warp.wgsl`): one output's picture drawn
//! from the canvas through its tessellated corner pin and mesh, with soft
//! edges, mask, brightness, black floor, or the alignment pattern.

use bytemuck::{Pod, Zeroable};

use super::geometry::WarpVertex;
use crate::base::Assets;
use crate::gpu::bindings::{Slot, bind, layout, linear_sampler};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, Gpu, GpuProfiler, begin_cleared_pass};

/// The warp's uniform block (`Warp` in the shader).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct WarpUniforms {
    /// Canvas region: x, y, width, height in 0..1.
    pub region: [f32; 4],
    /// Soft-edge widths: left, right, top, bottom.
    pub edges: [f32; 4],
    /// The output in pixels.
    pub size: [f32; 2],
    /// The projector's gamma.
    pub gamma: f32,
    /// The soft edge's exponent.
    pub curve: f32,
    /// Light multiplied.
    pub brightness: f32,
    /// The black floor.
    pub black_level: f32,
    /// 1: the alignment pattern instead of the canvas.
    pub pattern: u32,
    /// The pattern's hue.
    pub hue: f32,
    /// The output's name as glyph numbers, four to a word.
    pub name: [u32; 8],
    /// Its length in glyphs.
    pub name_length: u32,
    /// Mapping mode's handles drawn.
    pub grip_count: u32,
    /// The selected handle, or `u32::MAX`.
    pub selected: u32,
    /// 1 when soft edges, a black floor or a mask shape the signal.
    pub shaping: u32,
}

/// The glyph numbers of `name` for the pattern's font (A-Z, 0-9, `_`),
/// packed four to a word; other characters show as `_`.
pub fn glyphs(name: &str) -> ([u32; 8], u32) {
    let mut packed = [0u32; 8];
    let mut length = 0;
    for (i, c) in name.chars().take(32).enumerate() {
        let glyph = match c.to_ascii_uppercase() {
            c @ 'A'..='Z' => c as u32 - 'A' as u32,
            c @ '0'..='9' => 26 + c as u32 - '0' as u32,
            _ => 36,
        };
        packed[i / 4] |= glyph << ((i % 4) * 8);
        length = i as u32 + 1;
    }
    (packed, length)
}

/// The pass, for one target format.
pub struct WarpPass {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
}

impl WarpPass {
    /// The pass drawing into targets of `format`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        format: wgpu::TextureFormat,
    ) -> Result<Self, BuildError> {
        let file = "outputs/warp.wgsl";
        let composed = Composer::new(assets)
            .file(file)
            .and_then(Composer::finish)?;
        composed.validate()?;
        let layout = layout(
            &gpu.device,
            "outputs.warp",
            &[
                Slot::Texture(true),
                Slot::Sampler,
                Slot::Texture(true),
                Slot::Uniform,
                Slot::Uniform,
            ],
        );
        let device = &gpu.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(file),
            source: wgpu::ShaderSource::Wgsl(composed.text().into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(file),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(file),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_warp"),
                compilation_options: Default::default(),
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: size_of::<WarpVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x4, 1 => Float32x2],
                })],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_warp"),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BuildError::Device {
                label: file.to_string(),
                message: error.to_string(),
            });
        }
        Ok(Self {
            pipeline,
            layout,
            sampler: linear_sampler(device, "outputs.warp"),
        })
    }

    /// The bind group of one output: the canvas, its mask, uniforms and
    /// handles.
    pub fn bind(
        &self,
        gpu: &Gpu,
        canvas: &wgpu::TextureView,
        mask: &wgpu::TextureView,
        (uniforms, grips): (&wgpu::Buffer, &wgpu::Buffer),
    ) -> wgpu::BindGroup {
        bind(
            gpu,
            &self.layout,
            "outputs.warp",
            &[
                wgpu::BindingResource::TextureView(canvas),
                wgpu::BindingResource::Sampler(&self.sampler),
                wgpu::BindingResource::TextureView(mask),
                uniforms.as_entire_binding(),
                grips.as_entire_binding(),
            ],
        )
    }

    /// Draws `vertices` (`count` of them) into `target`, cleared to black
    /// first, timed as `label`.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        label: &str,
        (vertices, count): (&wgpu::Buffer, u32),
        group: &wgpu::BindGroup,
        target: &wgpu::TextureView,
    ) {
        let mut pass = begin_cleared_pass(encoder, label, target, profiler.render_pass(label));
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.set_vertex_buffer(0, vertices.slice(..));
        pass.draw(0..count, 0..1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_glyph_numbers() {
        let (packed, length) = glyphs("left_2");
        assert_eq!(length, 6);
        let at = |i: usize| (packed[i / 4] >> ((i % 4) * 8)) & 0xff;
        assert_eq!(
            [at(0), at(1), at(2), at(3), at(4), at(5)],
            [11, 4, 5, 19, 36, 28]
        );
    }
}
