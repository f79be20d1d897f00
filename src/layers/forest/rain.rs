//! The forest drinking the rain (`shaders/forest/soak.wgsl`): the landings
//! the world's rain map counted this frame (water falling onto a fluid's
//! floor) raise the density maps under them, the maps dry a little each
//! frame while rain is on, and the rain map is cleared for the next frame.

use bytemuck::{Pod, Zeroable};

use crate::base::Assets;
use crate::engine::world::RAIN_SIDE;
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler};

/// `struct Soak` in `shaders/forest/soak.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct Soak {
    /// Density a landing adds under it.
    pub wetness: f32,
    /// Share of the density lost this frame.
    pub dry: f32,
    /// Cells along a side of the rain map.
    pub side: u32,
    _pad: u32,
}

impl Soak {
    /// Landings worth `wetness` each, and `drought` of the density lost a
    /// second, over a frame of `dt` seconds.
    pub fn new(wetness: f32, drought: f32, dt: f32) -> Self {
        Self {
            wetness: wetness.max(0.0),
            dry: (drought * dt).clamp(0.0, 1.0),
            side: RAIN_SIDE,
            _pad: 0,
        }
    }
}

/// The soaking kernels of one forest, bound to the world's rain map.
pub struct RainSoak {
    soak: (Kernel, Binding),
    dry_up: (Kernel, Binding),
    uniform: wgpu::Buffer,
}

impl RainSoak {
    /// Soaks the `density` maps of a forest whose parameters are in
    /// `params` from `rain`.
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        params: &wgpu::Buffer,
        density: &wgpu::Buffer,
        rain: &wgpu::Buffer,
    ) -> Result<Self, BuildError> {
        let uniform = uniform_buffer(&gpu.device, "forest.soak", size_of::<Soak>());
        let soak = Kernel::new(gpu, assets, "forest/soak.wgsl", "soak_rain")?;
        let soak_binding = soak.bind(
            gpu,
            &[(0, params), (4, density), (14, &uniform), (15, rain)],
        );
        let dry_up = Kernel::new(gpu, assets, "forest/soak.wgsl", "dry_up")?;
        let dry_binding = dry_up.bind(gpu, &[(14, &uniform), (15, rain)]);
        Ok(Self {
            soak: (soak, soak_binding),
            dry_up: (dry_up, dry_binding),
            uniform,
        })
    }

    /// This frame's settings.
    pub fn set(&self, gpu: &Gpu, soak: &Soak) {
        gpu.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(soak));
    }

    /// Records the soaking of `cells` map pixels, then clears the rain.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        cells: u32,
    ) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("forest.soak"),
            timestamp_writes: profiler.compute_pass("forest.soak"),
        });
        let (kernel, binding) = &self.soak;
        kernel.dispatch(&mut pass, binding, cells, 256);
        let (kernel, binding) = &self.dry_up;
        kernel.dispatch(&mut pass, binding, RAIN_SIDE * RAIN_SIDE, 256);
    }
}
