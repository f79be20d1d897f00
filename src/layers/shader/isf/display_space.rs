//! ISF and Shadertoy files are written for hosts that hand them 8-bit
//! textures as stored, display-encoded (sRGB), and show what they write
//! the same way; sylva keeps linear light. So a file thresholding its
//! input, or painting a flat 0.5, saw darker inputs and showed a brighter
//! grey than in VDMX or on shadertoy.com. The file therefore works in
//! display space: each picture it samples (a layer, `below`, a medium, a
//! camera) is encoded into a texture of its own size first
//! (`shaders/media/display_space.wgsl`), and what its output pass writes is
//! decoded back to linear (`isf_linear` in the translated stage). Pass
//! buffers, imported images (uploaded as stored), the sound and the
//! keyboard are data and reach the file as they are.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::base::Assets;
use crate::gpu::bindings::{Slot, bind, layout};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};

/// The encoding pass and the encoded copy of each picture a program reads.
pub struct DisplaySpace {
    pipeline: FullscreenPipeline,
    layout: wgpu::BindGroupLayout,
    /// By source name; kept between frames, remade when the size changes,
    /// dropped when the program stops reading the source.
    encoded: RefCell<HashMap<String, RenderTarget>>,
}

impl DisplaySpace {
    /// Compiles `shaders/media/display_space.wgsl`.
    pub fn new(gpu: &Gpu, assets: &Assets, id: &str) -> Result<Self, BuildError> {
        let composed = Composer::new(assets)
            .file("media/display_space.wgsl")?
            .finish()?;
        let label = format!("{id}.display_space");
        let layout = layout(&gpu.device, &label, &[Slot::Texture(true)]);
        let pipeline =
            FullscreenPipeline::new(&gpu.device, &label, composed.text(), &layout, HDR_FORMAT)?;
        Ok(Self {
            pipeline,
            layout,
            encoded: RefCell::new(HashMap::new()),
        })
    }

    /// Records the encoding of each of `pictures` (source name, its view
    /// and size) into its copy, and returns the copies' views by name.
    pub fn encode(
        &self,
        gpu: &Gpu,
        pictures: &[(&str, &wgpu::TextureView, [u32; 2])],
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) -> HashMap<String, wgpu::TextureView> {
        let mut encoded = self.encoded.borrow_mut();
        encoded.retain(|name, _| pictures.iter().any(|(p, _, _)| p == name));
        let mut views = HashMap::new();
        for (name, view, size) in pictures {
            let label = format!("display space of {name}");
            let fits = encoded.get(*name).is_some_and(|t| t.size == *size);
            if !fits {
                let target = RenderTarget::new(&gpu.device, &label, *size, HDR_FORMAT);
                encoded.insert(name.to_string(), target);
            }
            let Some(target) = encoded.get(*name) else {
                continue;
            };
            let group = bind(
                gpu,
                &self.layout,
                &label,
                &[wgpu::BindingResource::TextureView(view)],
            );
            let timestamps = profiler.render_pass(&label);
            (self.pipeline).draw(encoder, &label, &target.view, &group, timestamps);
            views.insert(name.to_string(), target.view.clone());
        }
        views
    }
}
