//! The impostors drawn by compute (`shaders/forest/impostor_splat.wgsl`).
//! Rasterized, each impostor was a square cut out of the atlas by a
//! fragment that discarded where its crown had no leaves, which turns the
//! early depth test off: every layer of a forest's overlapping squares was
//! shaded, and on the GPU's few raster units the trees became the dearest
//! pass of the frame. Here, each frame, a workgroup walks each impostor's
//! pixels keeping the nearest leafy hit of each (an atomic a pixel), a
//! second walk marks which tree made it, and one fullscreen pass shades
//! every marked pixel once, writing its depth into the scene's.

use super::impostors::ImpostorAtlas;
use crate::base::Assets;
use crate::gpu::compute::{Binding, Kernel, storage_buffer};
use crate::gpu::raster::{Depth, Output, instanced_pipeline};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT};

const FILE: &str = "forest/impostor_splat.wgsl";

/// What the kernels and the shading bind of the forest's, by binding: the
/// camera, the look, species, trees, the near and far lists, the cull's
/// counts and the crowns' reaches.
pub type ForestBuffers = [(u32, wgpu::Buffer); 8];

/// The splat's kernels and shading pipeline, and what they bind.
pub struct ImpostorSplat {
    size: Kernel,
    splat: Kernel,
    claim: Kernel,
    resolve: wgpu::RenderPipeline,
    /// The splat's dispatch (`splat_args` in WGSL).
    args: wgpu::Buffer,
    bound: Option<Bound>,
}

/// A (new) forest's buffers and atlas as the splat binds them, and the
/// per-pixel buffers for the target's size.
struct Bound {
    forest: ForestBuffers,
    /// Each walk's (empty) group 1 and the atlas's leaves at its group 2
    /// (automatic layouts are each their pipeline's own).
    walking: [[wgpu::BindGroup; 2]; 2],
    /// The atlas as the shading binds it.
    shaded: wgpu::BindGroup,
    target: Option<PerPixel>,
}

/// The nearest hit and its tree at each pixel of a target of `size`.
struct PerPixel {
    size: [u32; 2],
    nearest: wgpu::Buffer,
    owner: wgpu::Buffer,
    sizing: Binding,
    splat: Binding,
    claim: Binding,
    resolve: wgpu::BindGroup,
}

impl ImpostorSplat {
    /// Compiles the kernels and the shading.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file(FILE)?.finish()?;
        composed.validate()?;
        let resolve = gpu.scoped(FILE, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(FILE),
                    source: wgpu::ShaderSource::Wgsl(composed.text().into()),
                });
            let output = Output {
                format: HDR_FORMAT,
                blend: None,
                depth: Depth::Written,
            };
            let entries = ("vs_fullscreen", "fs_impostor_resolve");
            Ok::<_, BuildError>(instanced_pipeline(
                &gpu.device,
                &module,
                "forest.impostors",
                entries,
                output,
            ))
        })?;
        Ok(Self {
            size: Kernel::new(gpu, assets, FILE, "size_impostor_splat")?,
            splat: Kernel::new(gpu, assets, FILE, "splat_impostors")?,
            claim: Kernel::new(gpu, assets, FILE, "claim_impostor_pixels")?,
            resolve,
            args: storage_buffer(gpu, "forest.splat_args", 16, wgpu::BufferUsages::INDIRECT),
            bound: None,
        })
    }

    /// The shading's pipeline, which binds the scene's shadow map at group 1.
    pub fn shading(&self) -> &wgpu::RenderPipeline {
        &self.resolve
    }

    /// Binds a (new) forest's buffers and atlas.
    pub fn attach(&mut self, gpu: &Gpu, forest: ForestBuffers, atlas: &ImpostorAtlas) {
        let walking = [&self.splat, &self.claim].map(|kernel| {
            let nothing = kernel.group_at(gpu, 1, &[]);
            [nothing, atlas.leaves_group(gpu, &kernel.layout_at(2))]
        });
        self.bound = Some(Bound {
            forest,
            walking,
            shaded: atlas.group(gpu, &self.resolve.get_bind_group_layout(2)),
            target: None,
        });
    }

    /// Sizes the per-pixel buffers for a target of `size`.
    pub fn prepare(&mut self, gpu: &Gpu, size: [u32; 2]) {
        let Some(bound) = self.bound.as_mut() else {
            return;
        };
        if bound.target.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        let bytes = u64::from(size[0]) * u64::from(size[1]) * 4;
        let none = wgpu::BufferUsages::empty();
        let nearest = storage_buffer(gpu, "forest.impostor_nearest", bytes, none);
        let owner = storage_buffer(gpu, "forest.impostor_owner", bytes, none);
        let with = |used: &[u32], more: &[(u32, &wgpu::Buffer)]| -> Vec<(u32, wgpu::Buffer)> {
            let forest = bound
                .forest
                .iter()
                .filter(|(b, _)| used.contains(b))
                .cloned();
            forest
                .chain(more.iter().map(|(b, buffer)| (*b, (*buffer).clone())))
                .collect()
        };
        // Both walks bind the same: one function walks for either.
        let walked = [0, 1, 3, 4, 7, 8, 9, 16];
        let per_pixel = [(17, &nearest), (18, &owner)];
        let bind = |kernel: &Kernel, buffers: Vec<(u32, wgpu::Buffer)>| {
            let refs: Vec<(u32, &wgpu::Buffer)> = buffers.iter().map(|(b, x)| (*b, x)).collect();
            kernel.bind(gpu, &refs)
        };
        let shading = with(&[0, 1, 3, 4, 16], &[(18, &owner)]);
        let entries: Vec<wgpu::BindGroupEntry<'_>> = shading
            .iter()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: *binding,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        let resolve = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("forest.impostors"),
            layout: &self.resolve.get_bind_group_layout(0),
            entries: &entries,
        });
        bound.target = Some(PerPixel {
            size,
            sizing: bind(&self.size, with(&[9], &[(19, &self.args)])),
            splat: bind(&self.splat, with(&walked, &per_pixel)),
            claim: bind(&self.claim, with(&walked, &per_pixel)),
            resolve,
            nearest,
            owner,
        });
    }

    /// Records the walks over this frame's impostors (after the cull).
    pub fn splat(&self, encoder: &mut wgpu::CommandEncoder, profiler: &mut GpuProfiler) {
        let Some((bound, target)) = self.ready() else {
            return;
        };
        encoder.clear_buffer(&target.nearest, 0, None);
        encoder.clear_buffer(&target.owner, 0, None);
        let label = "forest.draw.impostors";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        self.size.dispatch(&mut pass, &target.sizing, 1, 1);
        let [splat, claim] = &bound.walking;
        let walks = [
            (&self.splat, &target.splat, splat),
            (&self.claim, &target.claim, claim),
        ];
        for (kernel, binding, [nothing, leaves]) in walks {
            kernel.dispatch_indirect_with(&mut pass, (binding, &[nothing, leaves]), &self.args, 0);
        }
    }

    /// Shades the pixels the impostors own into `pass` (the scene's
    /// colour and depth), in the light `shadowed` (group 1) brings.
    pub fn shade(&self, pass: &mut wgpu::RenderPass<'_>, shadowed: &wgpu::BindGroup) {
        let Some((bound, target)) = self.ready() else {
            return;
        };
        pass.set_pipeline(&self.resolve);
        pass.set_bind_group(0, &target.resolve, &[]);
        pass.set_bind_group(1, shadowed, &[]);
        pass.set_bind_group(2, &bound.shaded, &[]);
        pass.draw(0..3, 0..1);
    }

    fn ready(&self) -> Option<(&Bound, &PerPixel)> {
        let bound = self.bound.as_ref()?;
        Some((bound, bound.target.as_ref()?))
    }
}
