//! Clip frames as the decoder makes them, 4:2:0 planes, turned into the
//! source's colour texture on the GPU (`shaders/media/yuv.wgsl`): ffmpeg
//! skips its own colour conversion, and the pipe and the upload carry 1.5
//! bytes a pixel instead of 4. On two cores, where the show renders on
//! the same CPU, that is what lets a 1080p60 clip play in a 60 fps show.

use bytemuck::{Pod, Zeroable};

use crate::base::Assets;
use crate::gpu::bindings::{Slot, bind, layout, linear_sampler, uniform_buffer};
use crate::gpu::image::{image_texture, write_image_rows};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, RenderTarget};

/// The colour texture's format: 8-bit sRGB, decoded to linear when sampled.
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// How a clip's planes encode colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct YuvColour {
    /// BT.709 (else BT.601).
    pub bt709: bool,
    /// Full range (else 16..235).
    pub full: bool,
}

/// `struct Yuv` in `shaders/media/yuv.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct YuvUniform {
    matrix: u32,
    full: u32,
    _pad: [u32; 2],
}

/// The bytes of one 4:2:0 frame of `size`: luma, then the two half-size
/// chroma planes (rounded up for odd sizes).
pub fn frame_bytes([width, height]: [u32; 2]) -> usize {
    let (w, h) = (width as usize, height as usize);
    w * h + 2 * w.div_ceil(2) * h.div_ceil(2)
}

/// The conversion pass, made once for the shelf.
pub struct YuvConverter {
    pipeline: FullscreenPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
}

impl YuvConverter {
    /// Compiles `shaders/media/yuv.wgsl`.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file("media/yuv.wgsl")?.finish()?;
        let slots = [
            Slot::Texture(true),
            Slot::Texture(true),
            Slot::Texture(true),
            Slot::Sampler,
            Slot::Uniform,
        ];
        let layout = layout(&gpu.device, "media.yuv", &slots);
        let pipeline =
            FullscreenPipeline::new(&gpu.device, "media.yuv", composed.text(), &layout, FORMAT)?;
        let sampler = linear_sampler(&gpu.device, "media.yuv");
        Ok(Self {
            pipeline,
            layout,
            sampler,
        })
    }
}

/// A clip's planes and the colour texture they are turned into.
pub struct YuvFrame {
    planes: [(wgpu::Texture, wgpu::TextureView); 3],
    uniform: wgpu::Buffer,
    /// The colour texture layers sample.
    pub colour: RenderTarget,
}

impl YuvFrame {
    /// Textures for frames of `size` in `colour`.
    pub fn new(gpu: &Gpu, label: &str, size: [u32; 2], colour: YuvColour) -> Self {
        let half = size.map(|s| s.div_ceil(2));
        let plane = |name: &str, size| {
            image_texture(
                gpu,
                &format!("{label} {name}"),
                size,
                wgpu::TextureFormat::R8Unorm,
            )
        };
        let uniform = uniform_buffer(
            &gpu.device,
            &format!("{label} yuv"),
            size_of::<YuvUniform>(),
        );
        let settings = YuvUniform {
            matrix: u32::from(colour.bt709),
            full: u32::from(colour.full),
            _pad: [0; 2],
        };
        gpu.queue
            .write_buffer(&uniform, 0, bytemuck::bytes_of(&settings));
        Self {
            planes: [plane("luma", size), plane("blue", half), plane("red", half)],
            uniform,
            colour: RenderTarget::new(&gpu.device, label, size, FORMAT),
        }
    }

    /// Whether it holds frames of `size`.
    pub fn fits(&self, size: [u32; 2]) -> bool {
        self.colour.size == size
    }

    /// Uploads `bytes` (one frame, [`frame_bytes`] long) and converts it
    /// into the colour texture, in a submission of its own before the
    /// frame's.
    pub fn convert(&self, gpu: &Gpu, converter: &YuvConverter, bytes: &[u8]) {
        let mut at = 0;
        for (texture, _) in &self.planes {
            let length = texture.width() as usize * texture.height() as usize;
            let Some(plane) = bytes.get(at..at + length) else {
                return;
            };
            write_image_rows(gpu, texture, plane, texture.width());
            at += length;
        }
        let [luma, blue, red] =
            [0, 1, 2].map(|i| wgpu::BindingResource::TextureView(&self.planes[i].1));
        let group = bind(
            gpu,
            &converter.layout,
            "media.yuv",
            &[
                luma,
                blue,
                red,
                wgpu::BindingResource::Sampler(&converter.sampler),
                self.uniform.as_entire_binding(),
            ],
        );
        let mut encoder = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("media.yuv"),
            });
        converter
            .pipeline
            .draw(&mut encoder, "media.yuv", &self.colour.view, &group, None);
        gpu.queue.submit([encoder.finish()]);
    }
}
