//! The impostors drawn by compute (`shaders/forest/impostor_splat.wgsl`).
//! Rasterized, each impostor was a square cut out of the atlas by a
//! fragment that discarded where its crown had no leaves, which turns the
//! early depth test off: every layer of a forest's overlapping squares was
//! shaded, and on the GPU's few raster units the trees became the dearest
//! pass of the frame. Here, each frame, a few workgroups walk each impostor's
//! pixels keeping the nearest leafy hit of each (an atomic a pixel), a
//! second walk marks which tree made it (or, where the device has 64-bit
//! atomics, one walk keeps the hit and its tree at once), a compute pass
//! shades every
//! marked pixel once straight into the layer's target (this GPU's
//! fragment units are its narrow part: the light's arithmetic cost them
//! milliseconds at 4K, and so did a fullscreen pass that copied the
//! colour), and one fullscreen pass writes their depth alone into the
//! scene's. The key
//! light's view of them, cast into the shadow map, is walked the same way
//! (the first walk alone) and written by one fullscreen pass of depth.

use std::sync::{Mutex, PoisonError};

use super::impostors::ImpostorAtlas;
use crate::base::Assets;
use crate::engine::shadow::{SHADOW_SIZE, ShadowMap, cut_out_caster_pipeline};
use crate::gpu::compute::{Binding, Kernel, read_buffer, storage_buffer};
use crate::gpu::raster::{Attachments, Depth, buffers_group, instanced_pipeline};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, Gpu, GpuProfiler, HDR_FORMAT, ReadbackError, WIDE_ATOMICS};

const FILE: &str = "forest/impostor_splat.wgsl";
const PAIRS_FILE: &str = "forest/impostor_pairs.wgsl";

/// What the kernels and the shading bind of the forest's, by binding: the
/// camera (the scene's or the key light's), the look, species, trees, the
/// near and far lists, the cull's counts and the crowns' reaches.
pub type ForestBuffers = [(u32, wgpu::Buffer); 8];

/// Who looks at the impostors: the scene's camera (their colour and depth)
/// or the key light (their depth in the shadow map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// The scene's camera.
    ByCamera,
    /// The key light.
    ByLight,
}

/// The splat's kernels and its two fullscreen passes, and what they bind.
pub struct ImpostorSplat {
    size: Kernel,
    splat: Kernel,
    claim: Kernel,
    /// The one walk that keeps each pixel's hit and tree together, where
    /// the device has 64-bit atomics.
    pairs: Option<Kernel>,
    /// The camera's marked pixels shaded.
    shade: Kernel,
    /// Their depth into the scene's, and the light's texels' depth into
    /// the shadow map.
    resolve: wgpu::RenderPipeline,
    cast: wgpu::RenderPipeline,
    bound: Option<Bound>,
}

/// A (new) forest's buffers and atlas as the splat binds them, and each
/// view's walks.
struct Bound {
    /// The (empty) group 1 and the atlas's leaves at group 2 of the walks
    /// that read the leaves (automatic layouts are each their pipeline's
    /// own): the first walk's and the paired walk's.
    walking: [Option<[wgpu::BindGroup; 2]>; 2],
    /// The atlas as the shading binds it (its group 2).
    shaded: wgpu::BindGroup,
    camera: Walks,
    light: Walks,
}

/// One view's walks: its forest buffers, and its per-pixel buffer
/// (nearest hits, then their trees) for a target of `size`.
struct Walks {
    forest: ForestBuffers,
    /// The dispatch, a few workgroups an impostor (`splat_args` in WGSL).
    args: wgpu::Buffer,
    target: Option<PerPixel>,
}

struct PerPixel {
    size: [u32; 2],
    per_pixel: wgpu::Buffer,
    sizing: Binding,
    splat: Binding,
    /// The second walk's, seen by the camera (the light needs no trees).
    claim: Option<Binding>,
    /// The paired walk's, where the device has it.
    pairs: Option<Binding>,
    /// The fullscreen pass's group 0.
    resolve: wgpu::BindGroup,
    /// Seen by the camera, the shading's buffers.
    shading: Option<Binding>,
    /// The shading's group 3 for each target it stored into: the layer's
    /// two, which it flips between (made at their first frame, not each).
    stored: Mutex<Vec<(wgpu::TextureView, wgpu::BindGroup)>>,
}

/// Targets whose group the shading keeps: the layer's two.
const STORED_TARGETS: usize = 2;

impl ImpostorSplat {
    /// Compiles the kernels and the fullscreen passes.
    pub fn new(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file(FILE)?.finish()?;
        composed.validate()?;
        let (resolve, cast) = gpu.scoped(FILE, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(FILE),
                    source: wgpu::ShaderSource::Wgsl(composed.text().into()),
                });
            let output = Attachments {
                format: HDR_FORMAT,
                blend: None,
                depth: Depth::Only,
            };
            let (vertex, label) = ("vs_fullscreen", "forest.impostors");
            let fragment = "fs_impostor_resolve";
            let resolve = instanced_pipeline(&gpu.device, &module, label, vertex, fragment, output);
            let (fragment, label) = ("fs_impostor_cast", "forest.impostor_caster");
            let cast = cut_out_caster_pipeline(&gpu.device, &module, vertex, fragment, label);
            Ok::<_, BuildError>((resolve, cast))
        })?;
        let wide = gpu.device.features().contains(WIDE_ATOMICS);
        Ok(Self {
            size: Kernel::new(gpu, assets, FILE, "size_impostor_splat")?,
            splat: Kernel::new(gpu, assets, FILE, "splat_impostors")?,
            claim: Kernel::new(gpu, assets, FILE, "claim_impostor_pixels")?,
            pairs: wide
                .then(|| Kernel::new(gpu, assets, PAIRS_FILE, "splat_impostor_pairs"))
                .transpose()?,
            shade: Kernel::new(gpu, assets, FILE, "shade_impostor_pixels")?,
            resolve,
            cast,
            bound: None,
        })
    }

    /// Where the shading binds the scene's shadow map (its group 1).
    pub fn shadow_layout(&self) -> wgpu::BindGroupLayout {
        self.shade.layout_at(1)
    }

    /// Binds a (new) forest's buffers, as the camera and the light see it,
    /// and its atlas.
    pub fn attach(
        &mut self,
        gpu: &Gpu,
        [camera, light]: [ForestBuffers; 2],
        atlas: &ImpostorAtlas,
    ) {
        let walking = [Some(&self.splat), self.pairs.as_ref()].map(|kernel| {
            kernel.map(|kernel| {
                let nothing = kernel.group_at(gpu, 1, &[]);
                [nothing, atlas.leaves_group(gpu, &kernel.layout_at(2))]
            })
        });
        let walks = |forest, label| Walks {
            forest,
            args: storage_buffer(gpu, label, 16, wgpu::BufferUsages::INDIRECT),
            target: None,
        };
        self.bound = Some(Bound {
            walking,
            shaded: atlas.group(gpu, &self.shade.layout_at(2)),
            camera: walks(camera, "forest.splat_args"),
            light: walks(light, "forest.cast_splat_args"),
        });
        self.prepare(gpu, Seen::ByLight, [SHADOW_SIZE; 2]);
    }

    /// Sizes a view's per-pixel buffer for a target of `size`.
    pub fn prepare(&mut self, gpu: &Gpu, seen: Seen, size: [u32; 2]) {
        let Some(bound) = self.bound.as_mut() else {
            return;
        };
        let (walks, pipeline) = match seen {
            Seen::ByCamera => (&mut bound.camera, &self.resolve),
            Seen::ByLight => (&mut bound.light, &self.cast),
        };
        if walks.target.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        // Each pixel's tree and nearest hit.
        let words = u64::from(size[0]) * u64::from(size[1]) * 2;
        let per_pixel = storage_buffer(
            gpu,
            "forest.impostor_pixels",
            words * 4,
            wgpu::BufferUsages::empty(),
        );
        let forest = &walks.forest;
        // Every walk binds the same: it walks as any other does.
        let used = [0, 1, 3, 4, 7, 8, 9, 16];
        let walked = chosen(forest, &used, &[(17, &per_pixel)]);
        let paired = chosen(forest, &used, &[(18, &per_pixel)]);
        let read = chosen(forest, &[0], &[(17, &per_pixel)]);
        let resolve = buffers_group(&gpu.device, pipeline, "forest.impostors", &read);
        let shading = (seen == Seen::ByCamera).then(|| {
            let shaded = chosen(forest, &[0, 1, 3, 4, 16], &[(17, &per_pixel)]);
            self.shade.bind(gpu, &shaded)
        });
        let sizing = self
            .size
            .bind(gpu, &chosen(forest, &[9], &[(19, &walks.args)]));
        walks.target = Some(PerPixel {
            size,
            sizing,
            splat: self.splat.bind(gpu, &walked),
            claim: (seen == Seen::ByCamera).then(|| self.claim.bind(gpu, &walked)),
            pairs: self.pairs.as_ref().map(|kernel| kernel.bind(gpu, &paired)),
            resolve,
            shading,
            per_pixel,
            stored: Mutex::new(Vec::new()),
        });
    }

    /// Records the walks over this frame's impostors as `seen` (after its
    /// cull): the nearest hits, and seen by the camera, their trees.
    pub fn splat(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        seen: Seen,
    ) {
        let Some((bound, walks, target)) = self.ready(seen) else {
            return;
        };
        encoder.clear_buffer(&target.per_pixel, 0, None);
        let label = match seen {
            Seen::ByCamera => "forest.draw.impostors",
            Seen::ByLight => "forest.cast.impostors",
        };
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        self.size.dispatch(&mut pass, &target.sizing, 1, 1);
        // The paired walk, or the first and (seen by the camera) the claim,
        // which reads no leaves.
        let [splat, pairs] = &bound.walking;
        let walked = match (&self.pairs, &target.pairs) {
            (Some(kernel), Some(binding)) => vec![(kernel, binding, groups_of(pairs))],
            _ => [
                (&self.splat, Some(&target.splat), groups_of(splat)),
                (&self.claim, target.claim.as_ref(), Vec::new()),
            ]
            .into_iter()
            .filter_map(|(kernel, binding, groups)| Some((kernel, binding?, groups)))
            .collect(),
        };
        for (kernel, binding, groups) in walked {
            kernel.dispatch_indirect_with(&mut pass, binding, &groups, &walks.args, 0);
        }
    }

    /// Records the shading of the pixels the camera's walks gave a tree,
    /// in the light `shadowed` (the shadow map at [`Self::shadow_layout`])
    /// brings, stored into `target` (a [`crate::gpu::RenderTarget`]'s view, which
    /// compute can store to) over what the pixels held.
    pub fn shade(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        shadowed: &wgpu::BindGroup,
        target: &wgpu::TextureView,
    ) {
        let Some((bound, _, pixels)) = self.ready(Seen::ByCamera) else {
            return;
        };
        let Some(shading) = &pixels.shading else {
            return;
        };
        let mut kept = pixels.stored.lock().unwrap_or_else(PoisonError::into_inner);
        let at = match kept.iter().position(|(view, _)| view == target) {
            Some(at) => at,
            None => {
                let entry = [wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(target),
                }];
                if kept.len() == STORED_TARGETS {
                    kept.remove(0);
                }
                kept.push((target.clone(), self.shade.group_at(gpu, 3, &entry)));
                kept.len() - 1
            }
        };
        let stored = &kept[at].1;
        let label = "forest.draw.impostors.shade";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        let groups = [shadowed, &bound.shaded, stored];
        let count = pixels.size[0] * pixels.size[1];
        (self.shade).dispatch_groups(&mut pass, shading, &groups, count, 64);
    }

    /// Writes the shaded pixels' depth into `pass` (the scene's depth;
    /// their colour is already in its target).
    pub fn resolve(&self, pass: &mut wgpu::RenderPass<'_>) {
        let Some((_, _, target)) = self.ready(Seen::ByCamera) else {
            return;
        };
        pass.set_pipeline(&self.resolve);
        pass.set_bind_group(0, &target.resolve, &[]);
        pass.draw(0..3, 0..1);
    }

    /// Writes the leaves' depth the light's walk found into `map`.
    pub fn cast(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        map: &ShadowMap,
    ) {
        let Some((_, _, target)) = self.ready(Seen::ByLight) else {
            return;
        };
        let label = "forest.cast.trees";
        let timestamps = profiler.render_pass(label);
        let mut pass = map.cast_pass(encoder, label, timestamps);
        pass.set_pipeline(&self.cast);
        pass.set_bind_group(0, &target.resolve, &[]);
        pass.draw(0..3, 0..1);
    }

    /// The camera's pixels the last frame kept an impostor's leaves at,
    /// and how many of those no tree claimed, which a right walk leaves
    /// none of (waits for the device: reports and tests only).
    pub fn read_pixels(&self, gpu: &Gpu) -> Result<[u32; 2], ReadbackError> {
        let Some((_, _, target)) = self.ready(Seen::ByCamera) else {
            return Ok([0, 0]);
        };
        let count = (target.size[0] * target.size[1]) as usize;
        let words: Vec<u32> = read_buffer(gpu, &target.per_pixel, count * 2)?;
        // Two words a pixel: its owner, then its nearest hit's key.
        let pixels = words.chunks_exact(2);
        let kept = pixels.clone().filter(|pair| pair[1] != 0);
        let unclaimed = pixels.filter(|pair| pair[1] != 0 && pair[0] == 0);
        Ok([kept.count() as u32, unclaimed.count() as u32])
    }

    fn ready(&self, seen: Seen) -> Option<(&Bound, &Walks, &PerPixel)> {
        let bound = self.bound.as_ref()?;
        let walks = match seen {
            Seen::ByCamera => &bound.camera,
            Seen::ByLight => &bound.light,
        };
        Some((bound, walks, walks.target.as_ref()?))
    }
}

/// A walk's groups after its first: none, or its (empty) group 1 and its
/// leaves.
fn groups_of(walking: &Option<[wgpu::BindGroup; 2]>) -> Vec<&wgpu::BindGroup> {
    walking.iter().flatten().collect()
}

/// The buffers of `forest` at the bindings `used`, then `more`.
fn chosen<'a>(
    forest: &'a ForestBuffers,
    used: &[u32],
    more: &[(u32, &'a wgpu::Buffer)],
) -> Vec<(u32, &'a wgpu::Buffer)> {
    let picked = forest.iter().filter(|(b, _)| used.contains(b));
    picked
        .map(|(b, buffer)| (*b, buffer))
        .chain(more.iter().copied())
        .collect()
}
