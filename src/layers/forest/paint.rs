//! Density painted from a picture (`forest.density_source`: a camera, a
//! clip, a still in `media/`, another layer's output): a kernel that moves
//! each cell of the chosen density maps towards the picture's brightness
//! there (`shaders/forest/paint.wgsl`), dispatched before the frame's
//! steps with the picture bound for that frame.

use bytemuck::{Pod, Zeroable};

use crate::base::Assets;
use crate::gpu::bindings::{linear_sampler, uniform_buffer};
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler};

/// `struct Paint` in `shaders/forest/paint.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct Paint {
    /// The first map painted.
    pub first: u32,
    /// One past the last.
    pub end: u32,
    /// How far a cell moves towards the picture a frame.
    pub amount: f32,
    _pad: f32,
}

impl Paint {
    /// Maps `first..end` moved by `amount` a frame.
    pub fn new(first: u32, end: u32, amount: f32) -> Self {
        Self {
            first,
            end,
            amount: amount.clamp(0.0, 1.0),
            _pad: 0.0,
        }
    }
}

/// The painting kernel of one forest.
pub struct DensityPainter {
    kernel: Kernel,
    binding: Binding,
    paint: wgpu::Buffer,
    sampler: wgpu::Sampler,
}

impl DensityPainter {
    /// Paints the `density` maps of a forest whose parameters are in
    /// `params`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        params: &wgpu::Buffer,
        density: &wgpu::Buffer,
    ) -> Result<Self, BuildError> {
        let kernel = Kernel::new(gpu, assets, "forest/paint.wgsl", "paint_image")?;
        let paint = uniform_buffer(&gpu.device, "forest.paint", size_of::<Paint>());
        let binding = kernel.bind(gpu, &[(0, params), (4, density), (14, &paint)]);
        let sampler = linear_sampler(&gpu.device, "forest.paint");
        Ok(Self {
            kernel,
            binding,
            paint,
            sampler,
        })
    }

    /// This frame's settings.
    pub fn set(&self, gpu: &Gpu, paint: &Paint) {
        gpu.queue
            .write_buffer(&self.paint, 0, bytemuck::bytes_of(paint));
    }

    /// Records the painting of `cells` cells from `picture`.
    pub fn encode(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        picture: &wgpu::TextureView,
        cells: u32,
    ) {
        let group = self.kernel.group_at(
            gpu,
            1,
            &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(picture),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        );
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("forest.paint"),
            timestamp_writes: profiler.compute_pass("forest.paint"),
        });
        self.kernel
            .dispatch_with(&mut pass, &self.binding, &group, cells, 256);
    }

    /// The kernel and its binding, for a live reload.
    pub fn kernel(&mut self) -> (&mut Kernel, &mut Binding) {
        (&mut self.kernel, &mut self.binding)
    }
}
