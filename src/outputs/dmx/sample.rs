//! The pixel-mapping pass: every fixture pixel's rectangle of its picture
//! averaged into one texel of a small texture (`shaders/outputs/dmx.wgsl`),
//! in the fixtures' order, which the readback tap then brings back.
//! Fixtures of one picture are sampled in one dispatch.

use wgpu::util::DeviceExt;

use super::fixtures::FixturePlan;
use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu, GpuProfiler};

/// Texels a row of the colours texture, as the shader's `ROW`.
const ROW: u32 = 256;
/// Threads a workgroup, as the shader's `@workgroup_size`.
const GROUP: u32 = 64;

/// One run of fixtures that read the same picture.
struct Run {
    /// An output's name, or the canvas.
    source: Option<String>,
    /// The run's rectangles, and the texel its first lands in.
    binding: Binding,
    count: u32,
}

/// The pass and what it writes.
pub(super) struct Sampler {
    kernel: Kernel,
    runs: Vec<Run>,
    colours: wgpu::Texture,
    /// Its view, which the pass stores to: made once.
    colours_view: wgpu::TextureView,
    sampler: wgpu::Sampler,
}

impl Sampler {
    /// The pass for `fixtures`: their rectangles uploaded once.
    pub(super) fn new(
        gpu: &Gpu,
        assets: &Assets,
        fixtures: &[FixturePlan],
    ) -> Result<Self, BuildError> {
        let kernel = Kernel::new(gpu, assets, "outputs/dmx.wgsl", "sample")?;
        let pixels: usize = fixtures.iter().map(|f| f.layout.pixels()).sum();
        let rows = (pixels as u32).div_ceil(ROW).max(1);
        let colours = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("dmx.colours"),
            size: wgpu::Extent3d {
                width: ROW,
                height: rows,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::STORAGE_BINDING | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        // Consecutive fixtures of one picture share a run; a run starts
        // where the one before it ended, so the texture holds every pixel
        // in the fixtures' order.
        let mut grouped: Vec<(Option<String>, Vec<[f32; 4]>, u32)> = Vec::new();
        let mut first = 0u32;
        for fixture in fixtures {
            let spots = fixture.layout.spots();
            match grouped.last_mut() {
                Some((source, run, _)) if *source == fixture.source => run.extend(spots),
                _ => grouped.push((fixture.source.clone(), spots, first)),
            }
            first += fixture.layout.pixels() as u32;
        }
        let runs = grouped
            .into_iter()
            .map(|(source, spots, first)| {
                let count = spots.len() as u32;
                let buffer = gpu
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("dmx.spots"),
                        contents: bytemuck::cast_slice(&spots),
                        usage: wgpu::BufferUsages::STORAGE,
                    });
                let offset = [first, 0u32, 0, 0];
                let start = gpu
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("dmx.first"),
                        contents: bytemuck::cast_slice(&offset),
                        usage: wgpu::BufferUsages::UNIFORM,
                    });
                Run {
                    source,
                    binding: kernel.bind(gpu, &[(0, &buffer), (1, &start)]),
                    count,
                }
            })
            .collect();
        let sampler = gpu.device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("dmx.picture"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        Ok(Self {
            kernel,
            runs,
            colours_view: colours.create_view(&Default::default()),
            colours,
            sampler,
        })
    }

    /// The colours texture's size.
    pub(super) fn size(&self) -> [u32; 2] {
        [self.colours.width(), self.colours.height()]
    }

    /// The colours texture, to copy back.
    pub(super) fn texture(&self) -> &wgpu::Texture {
        &self.colours
    }

    /// Records the pass over each run's picture; a run whose output is
    /// not drawn this frame (or whose layer is not on stage) keeps its
    /// last colours.
    pub(super) fn record(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        picture: &dyn Fn(Option<&str>) -> Option<wgpu::TextureView>,
    ) {
        let groups: Vec<(wgpu::BindGroup, &Run)> = self
            .runs
            .iter()
            .filter_map(|run| {
                let view = picture(run.source.as_deref())?;
                let group = self.kernel.group_at(
                    gpu,
                    1,
                    &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::TextureView(&view),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::Sampler(&self.sampler),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::TextureView(&self.colours_view),
                        },
                    ],
                );
                Some((group, run))
            })
            .collect();
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("dmx.sample"),
            timestamp_writes: profiler.compute_pass("dmx.sample"),
        });
        for (group, run) in &groups {
            self.kernel
                .dispatch_with(&mut pass, &run.binding, group, run.count, GROUP);
        }
    }
}
