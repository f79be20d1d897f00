//! Offscreen render targets: the HDR textures every layer draws into and the
//! compositor blends, and the 8-bit output that headless rendering reads back.

/// The format every layer renders into: linear, half-float, premultiplied.
pub const HDR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;

/// The headless output format; the window uses its surface's format.
pub const OUTPUT_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// A texture with its default view, sized in pixels.
pub struct RenderTarget {
    /// The texture, usable as attachment, sampled input and copy source.
    pub texture: wgpu::Texture,
    /// Its full view.
    pub view: wgpu::TextureView,
    /// Width and height in pixels.
    pub size: [u32; 2],
}

/// Whether compute can store to a texture of `format` on `device` (so a
/// [`RenderTarget`] of it can be stored to).
pub fn storable(device: &wgpu::Device, format: wgpu::TextureFormat) -> bool {
    format
        .guaranteed_format_features(device.features())
        .allowed_usages
        .contains(wgpu::TextureUsages::STORAGE_BINDING)
}

impl RenderTarget {
    /// A new target of `format`, labelled for validation messages. Compute
    /// shaders can store to it too where the format allows (`Rgba16Float`,
    /// `R32Float`; not the sRGB output), as fullscreen passes run as compute.
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        size: [u32; 2],
        format: wgpu::TextureFormat,
    ) -> Self {
        let extra = if storable(device, format) {
            wgpu::TextureUsages::STORAGE_BINDING
        } else {
            wgpu::TextureUsages::empty()
        };
        let usage = wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST
            | extra;
        let texture = plain_texture(device, label, size, (format, usage), &[]);
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Self {
            texture,
            view,
            size,
        }
    }
}

/// A 2D texture of `size` pixels (at least one each way), one mip level,
/// one sample, in `format` with `usage`, also viewed as `view_formats`.
pub fn plain_texture(
    device: &wgpu::Device,
    label: &str,
    size: [u32; 2],
    (format, usage): (wgpu::TextureFormat, wgpu::TextureUsages),
    view_formats: &[wgpu::TextureFormat],
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size[0].max(1),
            height: size[1].max(1),
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats,
    })
}

/// Clears `view` to transparent black with an empty render pass, which
/// every backend supports (unlike `clear_texture`).
pub fn clear_view(encoder: &mut wgpu::CommandEncoder, view: &wgpu::TextureView) {
    begin_cleared_pass(encoder, "clear", view, None);
}

/// Starts a render pass on `view` that first clears it to transparent black.
pub fn begin_cleared_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    view: &wgpu::TextureView,
    timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'_>>,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}
