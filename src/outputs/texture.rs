//! An offscreen texture as an output: the picture copied into it, to read
//! back for PNG frames, `--video` and the tests' golden images.

use super::{Output, Pictures};
use crate::gpu::{Gpu, GpuProfiler, RenderTarget};

impl Output for RenderTarget {
    fn size(&self) -> Option<[u32; 2]> {
        Some(self.size)
    }

    fn record(
        &mut self,
        _gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        pictures: &Pictures<'_>,
    ) {
        let picture = pictures.canvas;
        // A copy is exact; it needs the same format (up to sRGB: the
        // picture may be stored in its linear twin) and size, which the
        // show keeps (its output format, this output's size).
        if picture.format() != self.texture.format() || picture.size() != self.size {
            // Every frame until the sizes agree: held back by message.
            crate::base::status::warn_held(
                "output",
                format_args!(
                    "{:?} {:?} cannot take a {:?} {:?} picture",
                    self.texture.format(),
                    self.size,
                    picture.format(),
                    picture.size()
                ),
            );
            return;
        }
        profiler.time_commands(encoder, "outputs.copy", |encoder| {
            encoder.copy_texture_to_texture(
                picture.texture().as_image_copy(),
                self.texture.as_image_copy(),
                wgpu::Extent3d {
                    width: self.size[0].max(1),
                    height: self.size[1].max(1),
                    depth_or_array_layers: 1,
                },
            );
        });
    }
}
