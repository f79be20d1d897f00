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
    pub fn new(device: &wgpu::Device, size: [u32; 2], format: wgpu::TextureFormat) -> Self {
        let twin = format.remove_srgb_suffix();
        let storage = wgpu::TextureUsages::STORAGE_BINDING;
        let storable = twin != format
            && twin
                .guaranteed_format_features(device.features())
                .allowed_usages
                .contains(storage);
        let as_srgb = [format];
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("engine.picture"),
            size: wgpu::Extent3d {
                width: size[0].max(1),
                height: size[1].max(1),
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: if storable { twin } else { format },
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST
                | if storable {
                    storage
                } else {
                    wgpu::TextureUsages::empty()
                },
            view_formats: if storable { &as_srgb } else { &[] },
        });
        // The sRGB view may not be stored to; it serves everything else.
        let view_as = |format, usage| {
            texture.create_view(&wgpu::TextureViewDescriptor {
                format: Some(format),
                usage: Some(usage),
                ..Default::default()
            })
        };
        let usage = texture.usage();
        Self {
            view: view_as(format, usage - storage),
            storable: storable.then(|| view_as(twin, usage)),
            texture,
            format,
            size,
        }
    }

    /// This picture, made again at `size` if it has another.
    pub fn fit(self, device: &wgpu::Device, size: [u32; 2]) -> Self {
        if self.size == size {
            return self;
        }
        Self::new(device, size, self.format)
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

    /// Its view, to sample or draw into.
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
