//! The sound as a texture, as Shadertoy gives it: 512 × 2 texels, row 0
//! the spectrum and row 1 the waveform (a byte a texel in red), the
//! latest hop the show heard. A shader reads it with
//! `texture(iChannel0, vec2(x, 0.25)).x` (spectrum) and `vec2(x, 0.75)`
//! (waveform). The show hands it each frame what it heard; a show that
//! hears nothing shows silence.
//!
//! GL's rows count from the bottom and the texture is kept top row first,
//! so row 0 is stored last (the shaders' texture calls turn it upright).
//!
//! Each row is also kept as a 512 x 1 picture of its own, the byte in red,
//! green and blue: an ISF file's `audio` (the waveform) and `audioFFT`
//! (the spectrum) images.

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
    /// The waveform and the spectrum, one row each.
    rows: [(wgpu::Texture, wgpu::TextureView); 2],
}

impl SoundTexture {
    /// Silence, on `gpu`.
    pub fn new(gpu: &Gpu) -> Self {
        let (texture, view) = image_texture(gpu, "audio", SIZE, wgpu::TextureFormat::Rgba8Unorm);
        let rows = ["audio.wave", "audio.spectrum"].map(|label| {
            image_texture(
                gpu,
                label,
                [TEXELS as u32, 1],
                wgpu::TextureFormat::Rgba8Unorm,
            )
        });
        let mut sound = Self {
            texels: Vec::new(),
            stale: true,
            texture,
            view,
            rows,
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
            // Kept top row first: the waveform, then the spectrum.
            for (texels, (row, _)) in self.texels.chunks_exact(TEXELS * 4).zip(&self.rows) {
                let grey: Vec<u8> = (texels.chunks_exact(4))
                    .flat_map(|texel| [texel[0], texel[0], texel[0], 255])
                    .collect();
                write_image(gpu, row, &grey);
            }
            self.stale = false;
        }
    }

    /// The texture.
    pub fn view(&self) -> &wgpu::TextureView {
        &self.view
    }

    /// One row as its own picture: the waveform, or the spectrum.
    pub fn row(&self, spectrum: bool) -> &wgpu::TextureView {
        &self.rows[usize::from(spectrum)].1
    }
}
