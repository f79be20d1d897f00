//! Drawing the forest (`shaders/forest/draw.wgsl`): instanced trees on a
//! ground plane in fog under the orbit camera, culled on the GPU each
//! frame. With grown crowns (the default) the biggest on screen, up to a
//! cap, draw the branches and leaves the colony grew for them
//! (`crowns.rs`), every other tree the impostor of its crown
//! (`impostors.rs`); with cones, the simulation's own crowns, whole where
//! they are big enough on screen to show their shape and as one triangle
//! where they are a few pixels wide. Or the space maps from above coloured
//! by species.

use crate::engine::simulation::Drawer;
use bytemuck::{Pod, Zeroable};

use super::impostor_splat::{ImpostorSplat, Seen};
use super::impostors::{CapturePipelines, ImpostorAtlas};
use super::sim::{ForestSim, TREE_DISPATCH};
use super::species::MAX_SPECIES;
use crate::base::Assets;
use crate::engine::camera::CameraUniform;
use crate::engine::shadow::{ShadowMap, caster_pipeline};
use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::compute::{Binding, Kernel, read_buffer, storage_buffer};
use crate::gpu::raster::{
    Attachments, Depth, DepthBuffer, begin_3d_pass, begin_scene_pass, buffers_group, clear_depth,
    instanced_pipeline,
};
use crate::gpu::wgsl::Composer;
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, ReadbackError};

const FILE: &str = "forest/draw.wgsl";
const CAPTURE_FILE: &str = "forest/impostor.wgsl";

/// `struct DrawParams` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct ForestDraw {
    /// Per species, linear RGB.
    pub colours: [[f32; 4]; MAX_SPECIES],
    /// Fog colour (linear).
    pub fog_colour: [f32; 4],
    /// Metres of the map's side.
    pub extent: f32,
    /// Fog per metre.
    pub fog_density: f32,
    /// HDR brightness.
    pub brightness: f32,
    /// Slice the maps view shows (past the last: the highest owner).
    pub view_slice: u32,
    /// Show time, seconds, within the hour (the sway turns whole times in it).
    pub time: f32,
    /// How far the crowns sway.
    pub wind: f32,
    /// Crown width on screen (pixels) from which a tree draws its grown
    /// crown.
    pub grown_pixels: f32,
    /// Trees that may draw their grown crowns (0: grown crowns off).
    pub grown_cap: u32,
    /// Rows of the impostor atlas (set by [`ForestRenderer::prepare`]).
    pub atlas_rows: u32,
    /// Keeps the block a whole number of 16 bytes.
    pub _pad: [u32; 3],
}

/// What is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Trees on the ground, in 3D.
    Forest,
    /// The space maps from above.
    Maps,
}

/// The forest's pipelines.
pub struct ForestRenderer {
    trees: wgpu::RenderPipeline,
    far: wgpu::RenderPipeline,
    grown: wgpu::RenderPipeline,
    /// The near and far trees as impostors of their crowns, drawn by
    /// compute (`impostor_splat.rs`).
    impostors: ImpostorSplat,
    /// Draw the atlas the impostors read (`impostors.rs`).
    capture: CapturePipelines,
    /// A (new) forest's atlas.
    atlas: Option<ImpostorAtlas>,
    /// The ground's depth (its colour is the backdrop's).
    ground: wgpu::RenderPipeline,
    /// The floor and the sky over every pixel before the trees
    /// (`fs_backdrop`, a fullscreen pass run as compute), and its layouts:
    /// the camera and the look, the shadow map.
    backdrop: FullscreenPipeline,
    backdrop_layouts: [wgpu::BindGroupLayout; 2],
    maps: wgpu::RenderPipeline,
    cull_start: Kernel,
    cull_measure: Kernel,
    cull_threshold: Kernel,
    cull: Kernel,
    cull_finish: Kernel,
    /// Whether `cull` is `cull_in_order` ([`ForestRenderer::keep_order`]).
    in_order: bool,
    /// Grown-crown candidates by size, then the smallest drawn grown.
    grown_bins: wgpu::Buffer,
    camera: wgpu::Buffer,
    params: wgpu::Buffer,
    /// The near, far and grown trees' draws (`cull_args` in WGSL).
    cull_args: wgpu::Buffer,
    /// Trees, far trees, grown trees, ground and maps.
    groups: Option<[wgpu::BindGroup; 5]>,
    /// The backdrop's camera and look.
    backdrop_bound: Option<wgpu::BindGroup>,
    /// Casting into the scene's shadow map: the cones' depth from the
    /// key light, the trees its view meets (`cull_casters`), the light as
    /// a camera and the casters' draw.
    caster: wgpu::RenderPipeline,
    cull_casters: Kernel,
    light_camera: wgpu::Buffer,
    cast_args: wgpu::Buffer,
    /// Whether this frame's trees draw, and so cast, as impostors of their
    /// crowns (asked for, and an atlas captured), not as cones.
    as_impostors: bool,
    /// Its passes over a (new) forest's buffers.
    casting: Option<Casting>,
    /// The scene's shadow map as the trees, far trees, grown trees,
    /// impostors and backdrop read it (their group 1).
    receiving: Option<[wgpu::BindGroup; 5]>,
    /// The culling's five passes over a (new) forest's buffers.
    culling: Option<[Binding; 5]>,
    depth: DepthBuffer,
}

/// The key light's cull and draw of a forest's trees.
struct Casting {
    /// The count reset and the cull.
    start: Binding,
    cull: Binding,
    /// The casters drawn as cones (as impostors, `ImpostorSplat` binds them).
    cones: wgpu::BindGroup,
}

/// Byte offset of the far trees' draw in `cull_args`.
const FAR_DRAW: u64 = 4 * 4;
/// Byte offset of the grown trees' draw.
const GROWN_DRAW: u64 = 8 * 4;

impl ForestRenderer {
    /// This frame's uploads: the camera and the look, and a depth buffer
    /// for a target of `size`; the trees not drawn grown draw as impostors
    /// of their crowns where `impostors` asks, else as cones.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        size: [u32; 2],
        camera: &CameraUniform,
        params: &ForestDraw,
        impostors: bool,
    ) {
        gpu.queue
            .write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        let light = camera.from_light();
        gpu.queue
            .write_buffer(&self.light_camera, 0, bytemuck::bytes_of(&light));
        self.as_impostors = impostors && self.atlas.is_some();
        let params = ForestDraw {
            atlas_rows: self.atlas.as_ref().map_or(1, |atlas| atlas.rows),
            ..*params
        };
        gpu.queue
            .write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        self.depth.at(&gpu.device, "forest.depth", size);
        self.impostors.prepare(gpu, Seen::ByCamera, size);
    }

    /// Binds the scene's shadow map for the trees and the ground to read,
    /// once (the show keeps one map).
    pub fn receive(&mut self, gpu: &Gpu, map: &ShadowMap) {
        if self.receiving.is_none() {
            let group = |pipeline| map.receiving_group(&gpu.device, pipeline, "forest.shadow");
            self.receiving = Some([
                group(&self.trees),
                group(&self.far),
                group(&self.grown),
                map.group_for(
                    &gpu.device,
                    &self.impostors.shadow_layout(),
                    "forest.shadow",
                ),
                map.group_for(&gpu.device, &self.backdrop_layouts[1], "forest.shadow"),
            ]);
        }
    }

    /// Records the trees the key light sees into `map`: as impostors of
    /// their crowns where the trees draw so (the leaves' dappled shadow),
    /// else as cones.
    pub fn cast(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ForestSim,
        map: &ShadowMap,
    ) {
        let Some(casting) = &self.casting else {
            return;
        };
        let label = "forest.cast.cull";
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: profiler.compute_pass(label),
        });
        self.cull_start.dispatch(&mut pass, &casting.start, 1, 1);
        self.cull_casters
            .dispatch_indirect(&mut pass, &casting.cull, &sim.args, TREE_DISPATCH);
        drop(pass);
        if self.as_impostors {
            self.impostors.splat(encoder, profiler, Seen::ByLight);
            self.impostors.cast(encoder, profiler, map);
            return;
        }
        let label = "forest.cast.trees";
        let timestamps = profiler.render_pass(label);
        let mut pass = map.cast_pass(encoder, label, timestamps);
        pass.set_pipeline(&self.caster);
        pass.set_bind_group(0, &casting.cones, &[]);
        pass.draw_indirect(&self.cast_args, 0);
    }

    /// Records the draw into `target` (its floor and sky stored first, or
    /// with `backdrop` off left clear with no ground, for a stage below)
    /// with what [`ForestRenderer::prepare`] uploaded; `params` gives the sky.
    /// In the shared scene (`scene_depth`) the trees and ground draw into
    /// its depth, hiding and hidden by the other layers in it.
    pub fn draw(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        sim: &ForestSim,
        target: &wgpu::TextureView,
        scene_depth: Option<&wgpu::TextureView>,
        params: &ForestDraw,
        view: View,
        backdrop: bool,
    ) {
        let (
            Some([trees, far, grown, ground, maps]),
            Some(depth),
            Some([start, measure, threshold, cull, finish]),
            Some(shadowed),
        ) = (
            &self.groups,
            self.depth.view(),
            &self.culling,
            &self.receiving,
        )
        else {
            return;
        };
        let forest = view == View::Forest;
        if forest {
            let label = "forest.draw.cull";
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
            self.cull_start.dispatch(&mut pass, start, 1, 1);
            if params.grown_cap > 0 {
                self.cull_measure
                    .dispatch_indirect(&mut pass, measure, &sim.args, TREE_DISPATCH);
                self.cull_threshold.dispatch(&mut pass, threshold, 1, 1);
            }
            self.cull
                .dispatch_indirect(&mut pass, cull, &sim.args, TREE_DISPATCH);
            self.cull_finish.dispatch(&mut pass, finish, 1, 1);
        }
        let impostors = forest && self.as_impostors;
        if impostors {
            self.impostors.splat(encoder, profiler, Seen::ByCamera);
        }
        if !forest {
            let label = "forest.draw.maps";
            let timestamps = profiler.render_pass(label);
            let fog = params.fog_colour;
            let sky = wgpu::Color {
                r: f64::from(fog[0] * params.brightness),
                g: f64::from(fog[1] * params.brightness),
                b: f64::from(fog[2] * params.brightness),
                a: 1.0,
            };
            let load = wgpu::LoadOp::Clear(sky);
            let mut pass = begin_3d_pass(encoder, label, target, load, None, timestamps);
            pass.set_pipeline(&self.maps);
            pass.set_bind_group(0, maps, &[]);
            pass.draw(0..3, 0..1);
            return;
        }
        // The backdrop first, over every pixel; without it the target
        // starts clear, for a stage below to show through.
        let mut load = wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT);
        if let (true, Some(looks)) = (backdrop, &self.backdrop_bound) {
            let label = "forest.draw.sky";
            let timestamps = profiler.render_pass(label);
            let groups = [looks, &shadowed[4]];
            (self.backdrop).draw_groups(encoder, label, target, &groups, timestamps);
            load = wgpu::LoadOp::Load;
        }
        // The impostors' colour is stored over the backdrop (or the
        // cleared target) before their depth is drawn.
        if impostors {
            if load != wgpu::LoadOp::Load {
                crate::gpu::clear_view(encoder, target);
                load = wgpu::LoadOp::Load;
            }
            self.impostors
                .shade(gpu, encoder, profiler, &shadowed[3], target);
        }
        // Three passes on one depth, each timed by its own name, so the
        // HUD and the bench tell the trees as impostors (or cones), the
        // crowns drawn whole and the ground apart. Outside a scene the
        // forest's own depth is cleared first and kept between them.
        let depth = match scene_depth {
            Some(scene) => scene,
            None => {
                clear_depth(encoder, depth);
                depth
            }
        };
        let mut begin = |encoder: &mut wgpu::CommandEncoder, label: &'static str| {
            let this_load = std::mem::replace(&mut load, wgpu::LoadOp::Load);
            let timestamps = profiler.render_pass(label);
            // Each pass ends before the next begins; the encoder outlives them.
            begin_scene_pass(encoder, label, target, this_load, depth, timestamps).forget_lifetime()
        };
        {
            let mut pass = begin(encoder, "forest.draw.trees");
            if impostors {
                self.impostors.resolve(&mut pass);
            } else {
                pass.set_pipeline(&self.trees);
                pass.set_bind_group(0, trees, &[]);
                pass.set_bind_group(1, &shadowed[0], &[]);
                pass.draw_indirect(&self.cull_args, 0);
                pass.set_pipeline(&self.far);
                pass.set_bind_group(0, far, &[]);
                pass.set_bind_group(1, &shadowed[1], &[]);
                pass.draw_indirect(&self.cull_args, FAR_DRAW);
            }
        }
        if params.grown_cap > 0 {
            let mut pass = begin(encoder, "forest.draw.crowns");
            pass.set_pipeline(&self.grown);
            pass.set_bind_group(0, grown, &[]);
            pass.set_bind_group(1, &shadowed[2], &[]);
            pass.draw_indirect(&self.cull_args, GROWN_DRAW);
        }
        // The ground's depth last, only where no tree stands before it, so
        // the scene's other layers stand on it.
        if backdrop {
            let mut pass = begin(encoder, "forest.draw.ground");
            pass.set_pipeline(&self.ground);
            pass.set_bind_group(0, ground, &[]);
            pass.draw(0..6, 0..1);
        }
    }
}

impl ForestRenderer {
    /// Culls into lists in the order of the draw list, the same on every
    /// run (`cull_in_order`, for renders that must repeat): where two trees
    /// meet a pixel at one depth, the one drawn first shows. One workgroup
    /// then walks the trees, so the live show keeps the parallel cull,
    /// whose lists follow the order its workgroups happen to run in.
    pub fn keep_order(&mut self, gpu: &Gpu, assets: &Assets) -> Result<(), BuildError> {
        if self.in_order {
            return Ok(());
        }
        let kernel = Kernel::new(gpu, assets, FILE, "cull_in_order")?;
        if let Some(culling) = self.culling.as_mut() {
            culling[3] = kernel.bind_like(gpu, &culling[3]);
        }
        self.cull = kernel;
        self.in_order = true;
        Ok(())
    }

    /// The pixels the last frame's impostors kept, and those no tree
    /// claimed ([`ImpostorSplat::read_pixels`]).
    pub fn read_impostor_pixels(&self, gpu: &Gpu) -> Result<[u32; 2], ReadbackError> {
        self.impostors.read_pixels(gpu)
    }

    /// Trees the last frame drew whole, as silhouettes and with grown
    /// crowns (waits for the device: reports and tests only).
    pub fn read_drawn(&self, gpu: &Gpu) -> Result<[u32; 3], ReadbackError> {
        let args: Vec<u32> = read_buffer(gpu, &self.cull_args, 12)?;
        Ok([args[1], args[5], args[9]])
    }
}

impl Drawer<ForestSim> for ForestRenderer {
    /// Compiles the pipelines.
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let composed = Composer::new(assets).file(FILE)?.finish()?;
        composed.validate()?;
        let capturing = Composer::new(assets).file(CAPTURE_FILE)?.finish()?;
        capturing.validate()?;
        // The floor and sky at every pixel: arithmetic (the floor's shadow
        // lookups, the sky's clouds) a fullscreen pass runs as compute where
        // the target can be stored to, not on narrow fragment units.
        let backdrop_layouts = [
            layout(
                &gpu.device,
                "forest.backdrop",
                &[Slot::Uniform, Slot::Uniform],
            ),
            layout(
                &gpu.device,
                "forest.backdrop_shadow",
                &[Slot::DepthTexture, Slot::ComparisonSampler],
            ),
        ];
        let backdrop = FullscreenPipeline::with_groups(
            &gpu.device,
            "forest.backdrop",
            composed.text(),
            &[&backdrop_layouts[0], &backdrop_layouts[1]],
            HDR_FORMAT,
            "fs_backdrop",
        )?;
        gpu.scoped(FILE, || {
            let module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(FILE),
                    source: wgpu::ShaderSource::Wgsl(composed.text().into()),
                });
            let pipeline = |label, vertex, fragment, depth| {
                instanced_pipeline(
                    &gpu.device,
                    &module,
                    label,
                    vertex,
                    fragment,
                    Attachments {
                        format: HDR_FORMAT,
                        blend: None,
                        depth,
                    },
                )
            };
            let capture_module = gpu
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(CAPTURE_FILE),
                    source: wgpu::ShaderSource::Wgsl(capturing.text().into()),
                });
            let (written, none) = (Depth::Written, Depth::None);
            let caster = caster_pipeline(&gpu.device, &module, "vs_tree", "forest.caster", &[]);
            Ok::<_, BuildError>(Self {
                caster,
                as_impostors: false,
                cull_casters: Kernel::new(gpu, assets, FILE, "cull_casters")?,
                light_camera: uniform_buffer(
                    &gpu.device,
                    "forest.light_camera",
                    size_of::<CameraUniform>(),
                ),
                cast_args: storage_buffer(
                    gpu,
                    "forest.cast_args",
                    12 * 4,
                    wgpu::BufferUsages::INDIRECT,
                ),
                casting: None,
                receiving: None,
                trees: pipeline("forest.trees", "vs_tree", "fs_tree", written),
                far: pipeline("forest.far_trees", "vs_far", "fs_tree", written),
                grown: pipeline("forest.grown_trees", "vs_crown", "fs_tree", written),
                impostors: ImpostorSplat::new(gpu, assets)?,
                capture: CapturePipelines::new(gpu, &capture_module),
                atlas: None,
                ground: pipeline("forest.ground", "vs_ground", "fs_ground", Depth::Only),
                backdrop,
                backdrop_layouts,
                backdrop_bound: None,
                maps: pipeline("forest.maps", "vs_fullscreen", "fs_maps", none),
                camera: uniform_buffer(&gpu.device, "forest.camera", size_of::<CameraUniform>()),
                params: uniform_buffer(&gpu.device, "forest.draw", size_of::<ForestDraw>()),
                cull_start: Kernel::new(gpu, assets, FILE, "cull_start")?,
                cull_measure: Kernel::new(gpu, assets, FILE, "cull_measure")?,
                cull_threshold: Kernel::new(gpu, assets, FILE, "cull_threshold")?,
                cull: Kernel::new(gpu, assets, FILE, "cull")?,
                cull_finish: Kernel::new(gpu, assets, FILE, "cull_finish")?,
                in_order: false,
                cull_args: storage_buffer(
                    gpu,
                    "forest.cull_args",
                    12 * 4,
                    wgpu::BufferUsages::INDIRECT,
                ),
                grown_bins: storage_buffer(
                    gpu,
                    "forest.grown_bins",
                    33 * 4,
                    wgpu::BufferUsages::empty(),
                ),
                groups: None,
                culling: None,
                depth: DepthBuffer::default(),
            })
        })
    }

    /// Binds a (new) forest's buffers.
    fn attach(&mut self, gpu: &Gpu, sim: &ForestSim) {
        let buffers = [
            (0, &self.camera),
            (1, &self.params),
            (2, &sim.params_buffer),
            (3, &sim.species),
            (4, &sim.trees),
            (5, &sim.maps),
            (6, &sim.draw_list),
        ];
        let group = |pipeline, used: &[u32]| {
            let chosen: Vec<(u32, &wgpu::Buffer)> = buffers
                .iter()
                .filter(|(b, _)| used.contains(b))
                .copied()
                .collect();
            buffers_group(&gpu.device, pipeline, "forest.draw", &chosen)
        };
        let none = wgpu::BufferUsages::empty();
        let near = storage_buffer(gpu, "forest.near_trees", sim.draw_list.size(), none);
        let far = storage_buffer(gpu, "forest.far_trees", sim.draw_list.size(), none);
        let grown = storage_buffer(gpu, "forest.grown_trees", sim.draw_list.size(), none);
        // A drawing pass over the trees of `list`, with `more` bindings.
        let drawn = |pipeline, list, more: &[(u32, &wgpu::Buffer)]| {
            let [camera, params, _, species, trees, _, _] = buffers;
            let bound: Vec<(u32, &wgpu::Buffer)> = [camera, params, species, trees, (6, list)]
                .into_iter()
                .chain(more.iter().copied())
                .collect();
            buffers_group(&gpu.device, pipeline, "forest.draw", &bound)
        };
        let [crown_segments, crown_leaves, crown_table, crown_reaches] = &sim.crowns;
        let crowns = [(12, crown_segments), (13, crown_leaves), (14, crown_table)];
        self.groups = Some([
            drawn(&self.trees, &near, &[]),
            drawn(&self.far, &far, &[]),
            drawn(&self.grown, &grown, &crowns),
            group(&self.ground, &[0, 1]),
            group(&self.maps, &[0, 1, 2, 4, 5]),
        ]);
        let looks = [
            self.camera.as_entire_binding(),
            self.params.as_entire_binding(),
        ];
        let layout = &self.backdrop_layouts[0];
        self.backdrop_bound = Some(bind(gpu, layout, "forest.backdrop", &looks));
        // What sizing the trees reads; the cull also writes the lists.
        let measured = [
            (0, &self.camera),
            (1, &self.params),
            (3, &sim.species),
            (4, &sim.trees),
            (6, &sim.draw_list),
            (10, &sim.state),
            (15, &self.grown_bins),
        ];
        let culled: Vec<(u32, &wgpu::Buffer)> = measured
            .into_iter()
            .chain([(7, &near), (8, &far), (9, &self.cull_args), (11, &grown)])
            .collect();
        let casters = storage_buffer(gpu, "forest.casters", sim.draw_list.size(), none);
        let cast_cull = [
            (0, &self.light_camera),
            (1, &self.params),
            (3, &sim.species),
            (4, &sim.trees),
            (6, &sim.draw_list),
            (7, &casters),
            (9, &self.cast_args),
            (10, &sim.state),
        ];
        let cast_draw = [
            (0, &self.light_camera),
            (1, &self.params),
            (3, &sim.species),
            (4, &sim.trees),
            (6, &casters),
        ];
        self.casting = Some(Casting {
            start: self.cull_start.bind(gpu, &[(9, &self.cast_args)]),
            cull: self.cull_casters.bind(gpu, &cast_cull),
            cones: buffers_group(&gpu.device, &self.caster, "forest.cast", &cast_draw),
        });
        // The impostors as the camera and as the light see them (the
        // light's casters are one list; its far list is never read).
        let seen_by = |camera, (near, far), args| {
            [
                (0, camera),
                (1, &self.params),
                (3, &sim.species),
                (4, &sim.trees),
                (7, near),
                (8, far),
                (9, args),
                (16, crown_reaches),
            ]
            .map(|(binding, buffer): (u32, &wgpu::Buffer)| (binding, buffer.clone()))
        };
        let views = [
            seen_by(&self.camera, (&near, &far), &self.cull_args),
            seen_by(&self.light_camera, (&casters, &casters), &self.cast_args),
        ];
        let atlas = ImpostorAtlas::capture(gpu, &self.capture, sim);
        self.impostors.attach(gpu, views, &atlas);
        self.atlas = Some(atlas);
        self.culling = Some([
            self.cull_start.bind(gpu, &[(9, &self.cull_args)]),
            self.cull_measure.bind(gpu, &measured),
            self.cull_threshold
                .bind(gpu, &[(1, &self.params), (15, &self.grown_bins)]),
            self.cull.bind(gpu, &culled),
            self.cull_finish
                .bind(gpu, &[(1, &self.params), (9, &self.cull_args)]),
        ]);
    }
}
