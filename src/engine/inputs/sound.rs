//! The sound as a texture, as Shadertoy gives it: 512 × 2 texels, row 0
//! the spectrum and row 1 the waveform (a byte a texel in red), the
//! latest hop the show heard. A shader reads it with
//! `texture(iChannel0, vec2(x, 0.25)).x` (spectrum) and `vec2(x, 0.75)`
//! (waveform). The show hands it each frame what it heard; a show that
//! hears nothing shows silence.
//!
//! GL's rows count from the bottom and the texture is kept top row first,
//! so row 0 is stored last (the shaders' texture calls turn it upright).

use crate::gpu::Gpu;
use crate::gpu::image::{image_texture, write_image};

/// The texture source's name: `iChannel0 = "audio"`.
pub const SOUND: &str = "audio";

/// Texels in a row.
const TEXELS: usize = 512;
/// The texture's size.
pub const SIZE: [u32; 2] = [TEXELS as u32, 2];

/// The latest sound heard and its texture.
pub struct SoundTexture {
    texels: Vec<u8>,
    /// Whether the texture is behind `texels`.
    stale: bool,
    texture: wgpu::Texture,
    view: wgpu::TextureView,
}

impl SoundTexture {
    /// Silence, on `gpu`.
    pub fn new(gpu: &Gpu) -> Self {
        let (texture, view) = image_texture(gpu, "audio", SIZE, wgpu::TextureFormat::Rgba8Unorm);
        let mut sound = Self {
            texels: Vec::new(),
            stale: true,
            texture,
            view,
        };
        sound.hear(&[0; TEXELS], &[128; TEXELS]);
        sound.upload(gpu);
        sound
    }

    /// The latest `spectrum` and `wave` heard (512 bytes each; a shorter
    /// row is silence at its end).
    pub fn hear(&mut self, spectrum: &[u8], wave: &[u8]) {
        let mut texels = Vec::with_capacity(TEXELS * 8);
        for (bytes, silence) in [(wave, 128), (spectrum, 0)] {
            for i in 0..TEXELS {
                texels.extend([bytes.get(i).copied().unwrap_or(silence), 0, 0, 255]);
            }
        }
        if texels != self.texels {
            self.texels = texels;
            self.stale = true;
        }
    }

    /// Writes what was heard into the texture, if it is new.
    pub fn upload(&mut self, gpu: &Gpu) {
        if self.stale {
            write_image(gpu, &self.texture, &self.texels);
            self.stale = false;
        }
    }

    /// The texture.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.view
    }

    /// One row as an ISF file's `audio` (the waveform) or `audioFFT`
    /// (`spectrum`) image has it: 512 RGBA texels, the byte in red, green
    /// and blue.
    pub fn row(&self, spectrum: bool) -> Vec<u8> {
        // Kept top row first: the waveform, then the spectrum.
        let start = if spectrum { TEXELS * 4 } else { 0 };
        let row = self
            .texels
            .get(start..start + TEXELS * 4)
            .unwrap_or_default();
        row.chunks_exact(4)
            .flat_map(|texel| [texel[0], texel[0], texel[0], 255])
            .collect()
    }
}
