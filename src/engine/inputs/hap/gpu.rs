//! A HAP clip's frames on the GPU: each texture's blocks written as they
//! are into a BC texture (a 4K HAP Q frame is 8 MB where RGBA is 33), then
//! `shaders/media/hap.wgsl` turns them into the source's colour texture,
//! once per new frame. Needs `TEXTURE_COMPRESSION_BC`, which the device
//! asks for wherever the adapter has it; without it the clip is decoded
//! on the CPU ([`super::blocks`]).

use bytemuck::{Pod, Zeroable};

use super::frame::BlockFormat;
use super::mov::HapCodec;
use crate::base::Assets;
use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::image::image_texture;
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, RenderTarget};

/// The colour texture's format: 8-bit sRGB, decoded to linear when sampled.
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// `struct Hap` in `shaders/media/hap.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct HapUniform {
    flavour: u32,
    width: u32,
    height: u32,
    _pad: u32,
}

/// Whether the device takes BC blocks as textures.
pub fn takes_blocks(device: &wgpu::Device) -> bool {
    device
        .features()
        .contains(wgpu::Features::TEXTURE_COMPRESSION_BC)
}

/// The conversion pass, made once for the shelf.
pub struct HapConverter {
    pipeline: FullscreenPipeline,
    layout: wgpu::BindGroupLayout,
}

impl HapConverter {
    /// Compiles `shaders/media/hap.wgsl`.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file("media/hap.wgsl")?.finish()?;
        let slots = [Slot::Texture(false), Slot::Texture(false), Slot::Uniform];
        let layout = layout(&gpu.device, "media.hap", &slots);
        let pipeline =
            FullscreenPipeline::new(&gpu.device, "media.hap", composed.text(), &layout, FORMAT)?;
        Ok(Self { pipeline, layout })
    }
}

/// A clip's BC textures and the colour texture they are turned into.
pub struct HapFrame {
    codec: HapCodec,
    /// One per texture of the codec; HAP Q Alpha's second is its alpha.
    textures: Vec<(wgpu::Texture, wgpu::TextureView)>,
    group: wgpu::BindGroup,
    /// The colour texture layers sample.
    pub colour: RenderTarget,
}

impl HapFrame {
    /// Textures for `codec` frames of `size`.
    pub fn new(
        gpu: &Gpu,
        converter: &HapConverter,
        label: &str,
        size: [u32; 2],
        codec: HapCodec,
    ) -> Self {
        // Blocks cover whole 4×4 squares: the textures are padded to them.
        let padded = size.map(|side| side.div_ceil(4) * 4);
        let textures: Vec<_> = (codec.textures().iter())
            .map(|texture| {
                let format = match texture.format {
                    BlockFormat::Bc1 => wgpu::TextureFormat::Bc1RgbaUnorm,
                    BlockFormat::Bc3 => wgpu::TextureFormat::Bc3RgbaUnorm,
                    BlockFormat::Bc4 => wgpu::TextureFormat::Bc4RUnorm,
                };
                image_texture(gpu, &format!("{label} blocks"), padded, format)
            })
            .collect();
        let flavour = match codec {
            HapCodec::Hap => 0,
            HapCodec::HapAlpha => 1,
            HapCodec::HapQ => 2,
            HapCodec::HapQAlpha => 3,
            HapCodec::HapAlphaOnly => 4,
        };
        let uniform = uniform_buffer(
            &gpu.device,
            &format!("{label} hap"),
            size_of::<HapUniform>(),
        );
        let settings = HapUniform {
            flavour,
            width: size[0],
            height: size[1],
            _pad: 0,
        };
        gpu.queue
            .write_buffer(&uniform, 0, bytemuck::bytes_of(&settings));
        let first = &textures[0].1;
        let second = textures.get(1).map_or(first, |(_, view)| view);
        let group = bind(
            gpu,
            &converter.layout,
            "media.hap",
            &[
                wgpu::BindingResource::TextureView(first),
                wgpu::BindingResource::TextureView(second),
                uniform.as_entire_binding(),
            ],
        );
        Self {
            codec,
            textures,
            group,
            colour: RenderTarget::new(&gpu.device, label, size, FORMAT),
        }
    }

    /// Whether it holds `codec` frames of `size`.
    pub fn fits(&self, codec: HapCodec, size: [u32; 2]) -> bool {
        self.codec == codec && self.colour.size == size
    }

    /// Uploads `blocks` (one unpacked frame) and converts it into the
    /// colour texture, in a submission of its own before the frame's.
    pub fn convert(&self, gpu: &Gpu, converter: &HapConverter, blocks: &[u8]) {
        let mut at = 0;
        for (texture, (gpu_texture, _)) in self.codec.textures().iter().zip(&self.textures) {
            let length = texture.format.texture_bytes(self.colour.size);
            let Some(data) = blocks.get(at..at + length) else {
                return;
            };
            let (width, height) = (gpu_texture.width(), gpu_texture.height());
            gpu.queue.write_texture(
                gpu_texture.as_image_copy(),
                data,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    // Rows of blocks.
                    bytes_per_row: Some(width / 4 * texture.format.block_bytes() as u32),
                    rows_per_image: Some(height / 4),
                },
                wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
            );
            at += length;
        }
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("media.hap"),
            });
        converter.pipeline.draw(
            &mut encoder,
            "media.hap",
            &self.colour.view,
            &self.group,
            None,
        );
        gpu.queue.submit([encoder.finish()]);
    }
}
