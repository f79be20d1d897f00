//! Helpers for the 3D layers' drawing: pipelines whose vertices come from
//! storage buffers and the instance index (colony branches, fluid
//! particles), pipelines over vertex and index buffers (meshes such as a
//! glTF character), an additive glow blend, depth buffers, and bind groups
//! over a pipeline's automatic layout.

use super::plain_texture;

/// Depth format of the 3D layers.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Adds colour (glow) and keeps the largest alpha, so coverage stays 0..1.
pub fn additive() -> wgpu::BlendState {
    let add = wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::One,
        dst_factor: wgpu::BlendFactor::One,
        operation: wgpu::BlendOperation::Add,
    };
    wgpu::BlendState {
        color: add,
        alpha: wgpu::BlendComponent {
            operation: wgpu::BlendOperation::Max,
            ..add
        },
    }
}

/// Where a pipeline draws.
pub struct Attachments {
    /// Colour format.
    pub format: wgpu::TextureFormat,
    /// Blending, `None` to overwrite.
    pub blend: Option<wgpu::BlendState>,
    /// How it meets the depth buffer ([`DEPTH_FORMAT`]).
    pub depth: Depth,
}

/// How a pipeline meets the depth buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// It draws without one.
    None,
    /// Tested (Less) and written: opaque surfaces.
    Written,
    /// Tested, not written: light added over a scene (glowing particles),
    /// hidden by what stands in front, hiding nothing.
    Tested,
    /// Tested and written, and no colour: a surface whose colour compute
    /// stored (the forest's ground), there only to hide and be hidden.
    Only,
}

/// A pipeline with no vertex buffers and an automatic layout: the
/// entry points `vertex` and `fragment` of `module`.
pub fn instanced_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    label: &str,
    vertex: &str,
    fragment: &str,
    output: Attachments,
) -> wgpu::RenderPipeline {
    mesh_pipeline(device, module, label, vertex, fragment, &[], output)
}

/// A pipeline reading `buffers` (vertex attributes, by slot) and an
/// automatic layout: meshes drawn with `draw_indexed`.
pub fn mesh_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    label: &str,
    vertex: &str,
    fragment: &str,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
    output: Attachments,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: None,
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vertex),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: depth_state(output.depth),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(fragment),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: output.format,
                blend: output.blend,
                write_mask: match output.depth {
                    Depth::Only => wgpu::ColorWrites::empty(),
                    _ => wgpu::ColorWrites::ALL,
                },
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// How a pipeline meets the depth buffer ([`DEPTH_FORMAT`], nearer
/// passes), or `None` for [`Depth::None`].
pub fn depth_state(depth: Depth) -> Option<wgpu::DepthStencilState> {
    (depth != Depth::None).then_some(wgpu::DepthStencilState {
        format: DEPTH_FORMAT,
        depth_write_enabled: Some(matches!(depth, Depth::Written | Depth::Only)),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    })
}

/// A depth buffer of `size` pixels.
pub fn depth_view(device: &wgpu::Device, label: &str, size: [u32; 2]) -> wgpu::TextureView {
    depth_texture(device, label, size, wgpu::TextureUsages::empty())
}

/// The scene's depth buffer: drawn into, and read by compute that joins
/// the scene (the fluid's splat).
pub fn scene_depth_view(device: &wgpu::Device, size: [u32; 2]) -> wgpu::TextureView {
    depth_texture(
        device,
        "scene.depth",
        size,
        wgpu::TextureUsages::TEXTURE_BINDING,
    )
}

fn depth_texture(
    device: &wgpu::Device,
    label: &str,
    size: [u32; 2],
    extra: wgpu::TextureUsages,
) -> wgpu::TextureView {
    let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | extra;
    plain_texture(device, label, size, (DEPTH_FORMAT, usage), &[]).create_view(&Default::default())
}

/// A depth buffer kept at the size of the target drawn into.
#[derive(Default)]
pub struct DepthBuffer {
    view: Option<(wgpu::TextureView, [u32; 2])>,
}

impl DepthBuffer {
    /// The depth view for a target of `size` pixels, made again only when
    /// the size changes.
    pub fn at(&mut self, device: &wgpu::Device, label: &str, size: [u32; 2]) -> &wgpu::TextureView {
        if self.view.as_ref().is_some_and(|(_, s)| *s != size) {
            self.view = None;
        }
        &self
            .view
            .get_or_insert_with(|| (depth_view(device, label, size), size))
            .0
    }

    /// The depth view made last by [`DepthBuffer::at`], if any.
    pub fn view(&self) -> Option<&wgpu::TextureView> {
        self.view.as_ref().map(|(view, _)| view)
    }
}

/// Starts a 3D layer's render pass on `target`: its colour loaded as
/// `load`, and with `depth`, a depth buffer cleared to the far plane.
pub fn begin_3d_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    target: &wgpu::TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
    depth: Option<&wgpu::TextureView>,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    let depth = depth.map(|view| (view, wgpu::LoadOp::Clear(1.0), wgpu::StoreOp::Discard));
    begin_pass(encoder, label, target, load, depth, timestamp_writes)
}

/// A 3D layer's render pass in the shared scene: like [`begin_3d_pass`],
/// but on the scene's depth as the layers before it left it, kept for
/// the layers after, so each hides what lies behind it in the others.
pub fn begin_scene_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    target: &wgpu::TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
    scene_depth: &wgpu::TextureView,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    let depth = Some((scene_depth, wgpu::LoadOp::Load, wgpu::StoreOp::Store));
    begin_pass(encoder, label, target, load, depth, timestamp_writes)
}

/// Clears the scene's depth to the far plane (each frame, before its
/// layers).
pub fn clear_depth(encoder: &mut wgpu::CommandEncoder, depth: &wgpu::TextureView) {
    begin_depth_pass(
        encoder,
        "scene.depth.clear",
        depth,
        wgpu::LoadOp::Clear(1.0),
        None,
    );
}

/// A pass with no colour, on `depth` as `load` says, kept for the passes
/// after it.
pub fn begin_depth_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    depth: &wgpu::TextureView,
    load: wgpu::LoadOp<f32>,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: depth,
            depth_ops: Some(wgpu::Operations {
                load,
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        }),
        timestamp_writes,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// How a pass uses its depth buffer: the view, its load and its store.
type DepthUse<'v> = (&'v wgpu::TextureView, wgpu::LoadOp<f32>, wgpu::StoreOp);

fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    target: &wgpu::TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
    depth: Option<DepthUse<'_>>,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: target,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load,
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: depth.map(|(view, load, store)| {
            wgpu::RenderPassDepthStencilAttachment {
                view,
                depth_ops: Some(wgpu::Operations { load, store }),
                stencil_ops: None,
            }
        }),
        timestamp_writes,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// A bind group of whole buffers over `pipeline`'s automatic layout 0.
pub fn buffers_group(
    device: &wgpu::Device,
    pipeline: &wgpu::RenderPipeline,
    label: &str,
    buffers: &[(u32, &wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    })
}
