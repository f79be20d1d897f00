//! A render pipeline that draws one fullscreen triangle with a WGSL
//! fragment shader: the compositor's blend and master passes and every
//! `shader` layer are built on it. Creation runs inside a validation error
//! scope so a broken shader yields an error message, never a panic.

use super::BuildError;
use super::target::begin_cleared_pass;

/// A compiled fullscreen pass: vertex entry `vs_fullscreen`, fragment entry
/// `fs_main`, one bind group at index 0.
pub struct FullscreenPipeline {
    pipeline: wgpu::RenderPipeline,
}

impl FullscreenPipeline {
    /// Compiles `source` for a target of `format`. Returns wgpu's validation
    /// message (which carries naga's file:line diagnostic) on failure.
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        layout: &wgpu::BindGroupLayout,
        format: wgpu::TextureFormat,
    ) -> Result<Self, BuildError> {
        Self::with_entry(device, label, source, layout, format, "fs_main")
    }

    /// The same with fragment entry point `fragment`, for files that hold
    /// several fullscreen passes.
    pub fn with_entry(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        layout: &wgpu::BindGroupLayout,
        format: wgpu::TextureFormat,
        fragment: &str,
    ) -> Result<Self, BuildError> {
        Self::with_groups(device, label, source, &[layout], (format, fragment))
    }

    /// The same with bind groups `layouts` (index 0, 1, …), for a pass
    /// that binds a number of textures its file decides.
    pub fn with_groups(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        layouts: &[&wgpu::BindGroupLayout],
        (format, fragment): (wgpu::TextureFormat, &str),
    ) -> Result<Self, BuildError> {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let stages = ((&module, "vs_fullscreen"), (&module, fragment));
        let pipeline = Self::from_stages(device, label, layouts, stages, format).pipeline;
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(BuildError::Device {
                label: label.to_string(),
                message: error.to_string(),
            }),
            None => Ok(Self { pipeline }),
        }
    }

    /// A pass of compiled stages: a vertex and a fragment module with
    /// their entry points (ISF's translated GLSL comes as two modules).
    pub fn from_stages(
        device: &wgpu::Device,
        label: &str,
        layouts: &[&wgpu::BindGroupLayout],
        (vertex, fragment): ((&wgpu::ShaderModule, &str), (&wgpu::ShaderModule, &str)),
        format: wgpu::TextureFormat,
    ) -> Self {
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &layouts.iter().map(|l| Some(*l)).collect::<Vec<_>>(),
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: vertex.0,
                entry_point: Some(vertex.1),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: fragment.0,
                entry_point: Some(fragment.1),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        Self { pipeline }
    }

    /// Draws the pass into `target`, overwriting it.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        target: &wgpu::TextureView,
        bind_group: &wgpu::BindGroup,
        timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) {
        self.draw_groups(encoder, label, target, &[bind_group], timestamp_writes);
    }

    /// The same with bind groups `groups` (index 0, 1, …).
    pub fn draw_groups(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        target: &wgpu::TextureView,
        groups: &[&wgpu::BindGroup],
        timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) {
        let mut pass = begin_cleared_pass(encoder, label, target, timestamp_writes);
        pass.set_pipeline(&self.pipeline);
        for (index, group) in groups.iter().enumerate() {
            pass.set_bind_group(index as u32, *group, &[]);
        }
        pass.draw(0..3, 0..1);
    }
}
