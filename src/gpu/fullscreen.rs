//! A fullscreen pass of a WGSL fragment shader: the compositor's blend and
//! master passes, the layers' own passes and every `shader` layer are built
//! on it. It draws one triangle, or, where the shader can run as compute
//! and the target can be stored to, runs the same function as a compute
//! shader over the pixels (compute_variant.rs): GPUs whose rasterizer is
//! their narrow part (the H200 blends half-float pixels at 28 GB/s) then
//! fill a target at memory speed. Creation runs inside a validation error
//! scope so a broken shader yields an error message, never a panic.

use super::BuildError;
use super::compute_variant::{self, OUTPUT_ENTRY};
use super::target::begin_cleared_pass;

/// A compiled fullscreen pass: vertex entry `vs_fullscreen`, a fragment
/// entry (`fs_main` by default), bind groups from index 0, and the same
/// as compute when the shader allows it.
pub struct FullscreenPipeline {
    pipeline: wgpu::RenderPipeline,
    compute: Option<ComputeVariant>,
}

/// The fragment function run per pixel by a compute shader that stores to
/// the target, bound at group `group`.
struct ComputeVariant {
    device: wgpu::Device,
    pipeline: wgpu::ComputePipeline,
    output: wgpu::BindGroupLayout,
    group: u32,
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
        Self::with_groups(device, label, source, &[layout], format, fragment)
    }

    /// The same with bind groups `layouts` (index 0, 1, …), for a pass
    /// that binds a number of textures its file decides.
    pub fn with_groups(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        layouts: &[&wgpu::BindGroupLayout],
        format: wgpu::TextureFormat,
        fragment: &str,
    ) -> Result<Self, BuildError> {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let vertex = "vs_fullscreen";
        let pipeline = Self::from_stages(
            device, label, layouts, &module, vertex, &module, fragment, format,
        )
        .pipeline;
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(BuildError::Device {
                label: label.to_string(),
                message: error.to_string(),
            });
        }
        Ok(Self {
            pipeline,
            compute: ComputeVariant::new(device, label, source, layouts, format, fragment),
        })
    }

    /// A pass of compiled stages: a `vertex` and a `fragment` module with
    /// their entry points (ISF's translated GLSL comes as two modules).
    pub fn from_stages(
        device: &wgpu::Device,
        label: &str,
        layouts: &[&wgpu::BindGroupLayout],
        vertex: &wgpu::ShaderModule,
        vertex_entry: &str,
        fragment: &wgpu::ShaderModule,
        fragment_entry: &str,
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
                module: vertex,
                entry_point: Some(vertex_entry),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: fragment,
                entry_point: Some(fragment_entry),
                compilation_options: Default::default(),
                targets: &[Some(format.into())],
            }),
            multiview_mask: None,
            cache: None,
        });
        Self {
            pipeline,
            compute: None,
        }
    }

    /// The same, run as compute by `text` where it builds (its entry
    /// [`OUTPUT_ENTRY`] storing at bind group `layouts.len()`), for passes
    /// whose compute form their maker writes (translated ISF and
    /// Shadertoy stages).
    pub fn computed_by(
        mut self,
        device: &wgpu::Device,
        label: &str,
        layouts: &[&wgpu::BindGroupLayout],
        format: wgpu::TextureFormat,
        text: Option<String>,
    ) -> Self {
        self.compute =
            text.and_then(|text| ComputeVariant::from_text(device, label, text, layouts, format));
        self
    }

    /// Whether it runs as compute into targets that can be stored to.
    pub fn computes(&self) -> bool {
        self.compute.is_some()
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
        let storable = target
            .texture()
            .usage()
            .contains(wgpu::TextureUsages::STORAGE_BINDING);
        if let Some(compute) = self.compute.as_ref().filter(|_| storable) {
            return compute.run(encoder, label, target, groups, timestamp_writes);
        }
        let mut pass = begin_cleared_pass(encoder, label, target, timestamp_writes);
        pass.set_pipeline(&self.pipeline);
        for (index, group) in groups.iter().enumerate() {
            pass.set_bind_group(index as u32, *group, &[]);
        }
        pass.draw(0..3, 0..1);
    }
}

/// Set to `1`, every fullscreen pass is drawn by the rasterizer, none as
/// compute: for a driver whose compute forms misbehave, and to compare the
/// two (`tests/cli.rs`).
pub const RASTERIZE_ENV: &str = "SYLVA_RASTERIZE";

/// Whether [`RASTERIZE_ENV`] asks for the rasterizer alone (read once).
fn rasterize_all() -> bool {
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| std::env::var(RASTERIZE_ENV).is_ok_and(|v| v == "1"))
}

impl ComputeVariant {
    /// The compute form of `fragment` in `source` for targets of `format`,
    /// or none where the format cannot be stored to or the shader needs the
    /// rasterizer (derivatives, implicit-level sampling, discard, its own
    /// entry signature): those draw as before.
    fn new(
        device: &wgpu::Device,
        label: &str,
        source: &str,
        layouts: &[&wgpu::BindGroupLayout],
        format: wgpu::TextureFormat,
        fragment: &str,
    ) -> Option<Self> {
        let text = compute_variant::source(source, fragment, format, layouts.len() as u32)?;
        Self::from_text(device, label, text, layouts, format)
    }

    /// The compute pipeline of `text`, whose entry [`OUTPUT_ENTRY`] stores
    /// to a `format` target at bind group `layouts.len()`; none where
    /// `format` cannot be stored to or `text` does not build.
    fn from_text(
        device: &wgpu::Device,
        label: &str,
        text: String,
        layouts: &[&wgpu::BindGroupLayout],
        format: wgpu::TextureFormat,
    ) -> Option<Self> {
        if !super::storable(device, format) || rasterize_all() {
            return None;
        }
        let group = layouts.len() as u32;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let output = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::StorageTexture {
                    access: wgpu::StorageTextureAccess::WriteOnly,
                    format,
                    view_dimension: wgpu::TextureViewDimension::D2,
                },
                count: None,
            }],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(text.into()),
        });
        let all: Vec<Option<&wgpu::BindGroupLayout>> = layouts
            .iter()
            .copied()
            .chain(std::iter::once(&output))
            .map(Some)
            .collect();
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &all,
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&layout),
            module: &module,
            entry_point: Some(OUTPUT_ENTRY),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            tracing::debug!("{label}: drawn by the rasterizer ({error})");
            return None;
        }
        Some(Self {
            device: device.clone(),
            pipeline,
            output,
            group,
        })
    }

    /// Fills `target` with the shader run once per pixel.
    fn run(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        target: &wgpu::TextureView,
        groups: &[&wgpu::BindGroup],
        timestamps: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) {
        let output = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout: &self.output,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(target),
            }],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: timestamps.map(|t| wgpu::ComputePassTimestampWrites {
                query_set: t.query_set,
                beginning_of_pass_write_index: t.beginning_of_pass_write_index,
                end_of_pass_write_index: t.end_of_pass_write_index,
            }),
        });
        pass.set_pipeline(&self.pipeline);
        for (index, group) in groups.iter().enumerate() {
            pass.set_bind_group(index as u32, *group, &[]);
        }
        pass.set_bind_group(self.group, &output, &[]);
        let size = target.texture().size();
        let [x, y] = compute_variant::WORKGROUP;
        pass.dispatch_workgroups(size.width.div_ceil(x), size.height.div_ceil(y), 1);
    }
}

/// A fullscreen pass that writes only depth: its fragment entry returns
/// `@builtin(frag_depth)` (or discards), tested Less against and written
/// into a [`DEPTH_FORMAT`](crate::gpu::raster::DEPTH_FORMAT) buffer. A
/// layer drawn in screen space (the fluid's surface) puts what it drew
/// into the scene's depth with it, so the layers after it are hidden
/// behind it as those before it hide it.
pub struct DepthWriter {
    pipeline: wgpu::RenderPipeline,
}

impl DepthWriter {
    /// The pass of `source`'s entry `fragment` over bind group `layout`.
    pub fn new(
        gpu: &crate::gpu::Gpu,
        label: &str,
        source: &str,
        layout: &wgpu::BindGroupLayout,
        fragment: &str,
    ) -> Result<Self, BuildError> {
        let device = &gpu.device;
        gpu.scoped(label, || {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: &[Some(layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some("vs_fullscreen"),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: crate::gpu::raster::DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fragment),
                    compilation_options: Default::default(),
                    targets: &[],
                }),
                multiview_mask: None,
                cache: None,
            });
            Ok(Self { pipeline })
        })
    }

    /// Writes the pass's depth into `depth`, keeping what it holds where
    /// that is nearer.
    pub fn draw(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        depth: &wgpu::TextureView,
        group: &wgpu::BindGroup,
        timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
    ) {
        let load = wgpu::LoadOp::Load;
        let mut pass =
            crate::gpu::raster::begin_depth_pass(encoder, label, depth, load, timestamp_writes);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.draw(0..3, 0..1);
    }
}
