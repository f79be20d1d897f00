//! The particles' glow drawn by compute (`shaders/fluid/glow.wgsl`): a
//! measure of the tallest streak on screen, a dispatch sized for it
//! (`size_splat`, shared with the surface's splat), a thread a row of
//! each particle's streak adding its pixels in fixed point, and a resolve
//! into a texture copied to the layer's target. Passes
//! `fluid.draw.glow.measure`, `fluid.draw.glow` and
//! `fluid.draw.glow.resolve`.

use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel, storage_buffer};
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};

const FILE: &str = "fluid/glow.wgsl";

/// The buffers a splat reads, the glow's and the surface's alike: the
/// camera, the look, the particles and the splat's own (the surface's, as
/// only one look draws a frame).
#[derive(Clone, Copy)]
pub struct SplatBuffers<'b> {
    /// The camera block.
    pub camera: &'b wgpu::Buffer,
    /// The look ([`super::draw::ParticleDraw`]).
    pub look: &'b wgpu::Buffer,
    /// The particles' positions, velocities and densities.
    pub particles: &'b [wgpu::Buffer; 3],
    /// The splat's uniform, footprint and dispatch.
    pub splat: &'b [wgpu::Buffer; 3],
}

/// The glow's four kernels and its per-size sums and output.
pub struct Glow {
    measure: Kernel,
    size: Kernel,
    rows: Kernel,
    resolve: Kernel,
    targets: Option<GlowTargets>,
}

/// What the glow needs at one target size.
struct GlowTargets {
    size: [u32; 2],
    /// Two fixed-point words a pixel, left cleared by the resolve.
    sums: wgpu::Buffer,
    /// Where the device cannot store to a half-float picture: the resolved
    /// colour, then copied to the layer's target (elsewhere the resolve
    /// stores into the target itself, with no copy).
    out: Option<RenderTarget>,
    /// The kernels bound to the sums and the particles (made once both
    /// are known; dropped when the particles change).
    bindings: Option<[Binding; 4]>,
}

impl Glow {
    /// Compiles the kernels.
    pub fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let kernel = |entry| Kernel::new(gpu, assets, FILE, entry);
        Ok(Self {
            measure: kernel("glow_measure")?,
            size: kernel("size_splat")?,
            rows: kernel("glow_rows")?,
            resolve: kernel("glow_resolve")?,
            targets: None,
        })
    }

    /// Fits the sums and output to `size` and binds `buffers` where they
    /// are not yet bound.
    pub fn prepare(&mut self, gpu: &Gpu, size: [u32; 2], buffers: Option<SplatBuffers<'_>>) {
        if self.targets.as_ref().is_none_or(|t| t.size != size) {
            self.targets = Some(GlowTargets::new(gpu, size));
        }
        let Some(targets) = self.targets.as_mut() else {
            return;
        };
        if let Some(SplatBuffers {
            camera,
            look,
            particles: [positions, velocities, densities],
            splat: [splat, footprint, dispatch],
        }) = buffers
            && targets.bindings.is_none()
        {
            let sums = &targets.sums;
            targets.bindings = Some([
                self.measure.bind(
                    gpu,
                    &[
                        (0, camera),
                        (1, look),
                        (2, positions),
                        (3, velocities),
                        (5, splat),
                        (6, footprint),
                    ],
                ),
                self.size
                    .bind(gpu, &[(5, splat), (6, footprint), (9, dispatch)]),
                self.rows.bind(
                    gpu,
                    &[
                        (0, camera),
                        (1, look),
                        (2, positions),
                        (3, velocities),
                        (4, densities),
                        (5, splat),
                        (6, footprint),
                        (10, sums),
                    ],
                ),
                self.resolve.bind(gpu, &[(1, look), (5, splat), (10, sums)]),
            ]);
        }
    }

    /// Forgets the bound particles (a new simulation's are bound at the
    /// next `prepare`).
    pub fn detach(&mut self) {
        if let Some(targets) = self.targets.as_mut() {
            targets.bindings = None;
        }
    }

    /// Records the glow of `count` particles into `target` (of the size
    /// `prepare` was given), hidden behind `scene_depth` when the splat's
    /// uniform says the fluid is in the scene; `dispatch` holds the rows'
    /// dispatch `size_splat` writes.
    pub fn draw(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        target: &wgpu::TextureView,
        scene_depth: &wgpu::TextureView,
        count: u32,
        dispatch: &wgpu::Buffer,
    ) {
        let Some(targets) = &self.targets else {
            return;
        };
        let Some([measure, size, rows, resolve]) = &targets.bindings else {
            return;
        };
        let entries = [
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(
                    targets.out.as_ref().map_or(target, |out| &out.view),
                ),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::TextureView(scene_depth),
            },
        ];
        let rows_group = self.rows.group_at(gpu, 1, &entries[1..]);
        let resolve_group = self.resolve.group_at(gpu, 1, &entries[..1]);
        {
            let mut measuring = timed_pass(encoder, profiler, "fluid.draw.glow.measure");
            self.measure.dispatch(&mut measuring, measure, count, 64);
            self.size.dispatch(&mut measuring, size, 1, 1);
        }
        {
            let mut drawing = timed_pass(encoder, profiler, "fluid.draw.glow");
            (self.rows).dispatch_indirect_with(&mut drawing, rows, &[&rows_group], dispatch, 0);
        }
        {
            let [w, h] = targets.size;
            let mut resolving = timed_pass(encoder, profiler, "fluid.draw.glow.resolve");
            self.resolve
                .dispatch_with(&mut resolving, resolve, &resolve_group, w * h, 64);
        }
        if let Some(out) = &targets.out {
            encoder.copy_texture_to_texture(
                out.texture.as_image_copy(),
                target.texture().as_image_copy(),
                out.texture.size(),
            );
        }
    }
}

/// A compute pass timed by the profiler under `label`.
fn timed_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    profiler: &mut GpuProfiler,
    label: &str,
) -> wgpu::ComputePass<'e> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
        label: Some(label),
        timestamp_writes: profiler.compute_pass(label),
    })
}

impl GlowTargets {
    fn new(gpu: &Gpu, size: [u32; 2]) -> Self {
        let pixels = u64::from(size[0].max(1)) * u64::from(size[1].max(1));
        Self {
            size,
            sums: storage_buffer(
                gpu,
                "fluid.glow.sums",
                pixels * 8,
                wgpu::BufferUsages::empty(),
            ),
            out: (!crate::gpu::storable(&gpu.device, HDR_FORMAT))
                .then(|| RenderTarget::new(&gpu.device, "fluid.glow", size, HDR_FORMAT)),
            bindings: None,
        }
    }
}
