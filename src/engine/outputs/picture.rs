//! The engine's own picture: the texture the master section writes each
//! frame, in the show's output format, made again when the frame's size
//! changes. Outputs read it; nothing outside the engine writes it.

use crate::gpu::RenderTarget;

/// The finished frame.
pub struct Picture {
    target: RenderTarget,
}

impl Picture {
    /// A picture of `size` in `format`.
    pub fn new(device: &wgpu::Device, size: [u32; 2], format: wgpu::TextureFormat) -> Self {
        Self {
            target: RenderTarget::new(device, "engine.picture", size, format),
        }
    }

    /// This picture, made again at `size` if it has another.
    pub fn fit(self, device: &wgpu::Device, size: [u32; 2]) -> Self {
        if self.target.size == size {
            return self;
        }
        Self::new(device, size, self.target.texture.format())
    }

    /// Its texture, to read or copy.
    pub fn texture(&self) -> &wgpu::Texture {
        &self.target.texture
    }

    /// Its view, to sample or draw into.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.target.view
    }

    /// Its size in pixels.
    pub fn size(&self) -> [u32; 2] {
        self.target.size
    }
}
