//! The engine's own picture: the texture the master section writes each
//! frame, in the show's output format, made again when the frame's size
//! changes. Outputs read it; nothing outside the engine writes it.
//!
//! The output format is an sRGB one, which compute cannot store to; where
//! its linear twin can be stored to (`Rgba8Unorm` everywhere, `Bgra8Unorm`
//! with the adapter's `BGRA8UNORM_STORAGE`), the texture is made in the
//! twin with the sRGB format as a view of it: readers sample and copy it
//! as before, and the master section stores its encoded pixels through
//! the twin by compute, with no fullscreen pass (on GPUs whose fragment
//! units are their narrow part such a pass cost 1.2 ms at 4K).

use crate::gpu::{Gpu, plain_texture};

const LABEL: &str = "engine.picture";

/// The finished frame.
pub struct Picture {
    texture: wgpu::Texture,
    /// In the show's output format.
    view: wgpu::TextureView,
    /// In its linear twin, where compute can store to it.
    storable: Option<wgpu::TextureView>,
    format: wgpu::TextureFormat,
    size: [u32; 2],
}

impl Picture {
    /// A picture of `size` in `format`.
    pub fn new(gpu: &Gpu, size: [u32; 2], format: wgpu::TextureFormat) -> Self {
        let device = &gpu.device;
        let twin = format.remove_srgb_suffix();
        let storage = wgpu::TextureUsages::STORAGE_BINDING;
        // A texture viewed in another format needs the backend's view
        // formats (OpenGL ES may lack them).
        let views = (gpu.adapter.get_downlevel_capabilities().flags)
            .contains(wgpu::DownlevelFlags::VIEW_FORMATS);
        let storable = twin != format && views && crate::gpu::storable(device, twin);
        let usage = wgpu::TextureUsages::RENDER_ATTACHMENT
            | wgpu::TextureUsages::TEXTURE_BINDING
            | wgpu::TextureUsages::COPY_SRC
            | wgpu::TextureUsages::COPY_DST;
        let texture = match storable {
            true => plain_texture(device, LABEL, size, (twin, usage | storage), &[format]),
            false => plain_texture(device, LABEL, size, (format, usage), &[]),
        };
        // The sRGB view may not be stored to; it serves everything else.
        let view_as = |format, usage| {
            texture.create_view(&wgpu::TextureViewDescriptor {
                format: Some(format),
                usage: Some(usage),
                ..Default::default()
            })
        };
        Self {
            view: view_as(format, usage),
            storable: storable.then(|| view_as(twin, usage | storage)),
            texture,
            format,
            size,
        }
    }

    /// This picture, made again at `size` if it has another.
    pub fn fit(self, gpu: &Gpu, size: [u32; 2]) -> Self {
        if self.size == size {
            return self;
        }
        Self::new(gpu, size, self.format)
    }

    /// Its texture, to read or copy (in the output format or its linear
    /// twin: the same bytes).
    pub fn texture(&self) -> &wgpu::Texture {
        &self.texture
    }

    /// The show's output format, which [`Picture::view`] has.
    pub fn format(&self) -> wgpu::TextureFormat {
        self.format
    }

    /// Its view, to sample or draw into with a render pass. Not to be
    /// given to a [`crate::gpu::FullscreenPipeline`] built for a format
    /// compute can store to: that runs as compute where the texture can be
    /// stored to, and this view cannot.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.view
    }

    /// Its view in the format's linear twin, which compute can store
    /// sRGB-encoded pixels to, where the GPU allows it.
    pub fn storable(&self) -> Option<&wgpu::TextureView> {
        self.storable.as_ref()
    }

    /// Its size in pixels.
    pub fn size(&self) -> [u32; 2] {
        self.size
    }
}
