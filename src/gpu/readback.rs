//! Copies a texture back to the CPU: for `sylva render`'s PNGs, golden-image
//! tests and the blend tests that read the HDR composite. Never used inside
//! the show loop.

use super::Gpu;

/// Why a readback failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadbackError {
    /// The format has no fixed texel size this module knows.
    #[error("cannot read back textures of format {0:?}")]
    Format(wgpu::TextureFormat),
    /// Mapping the staging buffer failed (device lost, out of memory).
    #[error("mapping the readback buffer failed: {0}")]
    Map(String),
}

/// Reads a whole 2D texture and returns its texels row by row, tightly
/// packed (`width * bytes_per_texel` bytes per row).
pub fn read_texture(gpu: &Gpu, texture: &wgpu::Texture) -> Result<Vec<u8>, ReadbackError> {
    let format = texture.format();
    let texel = format
        .block_copy_size(None)
        .ok_or(ReadbackError::Format(format))?;
    let (width, height) = (texture.width(), texture.height());
    let row = width * texel;
    let padded =
        row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback.staging"),
        size: u64::from(padded) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("readback"),
        });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &staging,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(height),
            },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
    gpu.wait_idle();
    receiver
        .recv()
        .map_err(|e| ReadbackError::Map(e.to_string()))?
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    let mapped = staging
        .slice(..)
        .get_mapped_range()
        .map_err(|e| ReadbackError::Map(e.to_string()))?;
    let mut texels = Vec::with_capacity((row * height) as usize);
    for line in mapped.chunks(padded as usize) {
        texels.extend_from_slice(&line[..row as usize]);
    }
    drop(mapped);
    staging.unmap();
    Ok(texels)
}

/// Reads an 8-bit RGBA texture into an image.
pub fn read_rgba8(gpu: &Gpu, texture: &wgpu::Texture) -> Result<image::RgbaImage, ReadbackError> {
    let texels = read_texture(gpu, texture)?;
    image::RgbaImage::from_raw(texture.width(), texture.height(), texels)
        .ok_or(ReadbackError::Format(texture.format()))
}

/// Reads an `Rgba16Float` texture as linear RGBA floats, row by row.
pub fn read_rgba16f(gpu: &Gpu, texture: &wgpu::Texture) -> Result<Vec<[f32; 4]>, ReadbackError> {
    if texture.format() != wgpu::TextureFormat::Rgba16Float {
        return Err(ReadbackError::Format(texture.format()));
    }
    let texels = read_texture(gpu, texture)?;
    Ok(texels
        .chunks_exact(8)
        .map(|t| {
            let c = |i: usize| half::f16::from_le_bytes([t[2 * i], t[2 * i + 1]]).to_f32();
            [c(0), c(1), c(2), c(3)]
        })
        .collect())
}
