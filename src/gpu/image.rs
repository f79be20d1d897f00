//! Textures that hold pictures from the CPU (media files and clips,
//! imported images): made once at a size, written whenever a new picture
//! comes, sampled by the passes that read them.

use super::Gpu;

/// A sampled texture of `size` and `format` that pictures are written into.
pub fn image_texture(
    gpu: &Gpu,
    label: &str,
    [width, height]: [u32; 2],
    format: wgpu::TextureFormat,
) -> (wgpu::Texture, wgpu::TextureView) {
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    (texture, view)
}

/// Writes `rgba` (4 bytes a texel, rows top first) into all of `texture`.
pub fn write_image(gpu: &Gpu, texture: &wgpu::Texture, rgba: &[u8]) {
    write_image_rows(gpu, texture, rgba, texture.width() * 4);
}

/// Writes `data`, rows of `row_bytes` top first, into all of `texture`.
pub fn write_image_rows(gpu: &Gpu, texture: &wgpu::Texture, data: &[u8], row_bytes: u32) {
    let (width, height) = (texture.width(), texture.height());
    gpu.queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        data,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(row_bytes),
            rows_per_image: Some(height),
        },
        wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
    );
}
