//! The `skinned` layer (space colonization inside a skinned character):
//! an animated character whose body fills with glowing branches that move
//! with it. Attractions fill the bind-pose mesh's volume ([`volume`]), each
//! bound to the bones of the skin around it; the colony layer's GPU growth
//! runs on them in bind pose; every node takes its bones from the
//! attraction that pulled it (the colony's node tag) and is drawn where
//! they carry it now, through the colony's node-position hook. The
//! character comes from glTF ([`model`]) or is the built-in figure
//! ([`creature`]); its clips play, loop and crossfade ([`anim`]).

pub mod anim;
pub mod asset;
pub mod body;
pub mod capsules;
pub mod clips;
pub mod creature;
pub mod fillets;
mod knobs;
mod material;
pub mod model;
mod params;
pub mod player;
pub mod pose;
mod preparation;
pub mod skin_gpu;
pub mod volume;

use std::cell::Cell;

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use super::colony::draw::{BranchRenderer, NodeTransform};
use super::colony::sim::ColonySim;
use super::colony::spacing;
use crate::base::clock::Clock;
use crate::base::latest::Latest;
use crate::base::{AssetError, Assets, ChangedFile};
use crate::engine::simulation::{Drawer, Running, Simulation, SimulationCore};
use crate::engine::world::Capsule;
use crate::engine::{
    BenchWorkload, Layer, LayerEnv, LayerError, LayerFrame, LayerKind, LayerSwitches,
};
use crate::gpu::UniformLayout;
use crate::gpu::compute::{KernelReload, storage_buffer};
use crate::gpu::{BuildError, Gpu, GpuProfiler};
use crate::params::{ParamSpec, Registry};
use body::{BodyRenderer, BodyStyle};
use capsules::{BodyCapsule, body_capsules};
pub use knobs::SkinnedKnobs;
use model::{Model, ModelError};
pub use params::skinned_params;
use params::{SkinnedStructure, declared_params};
use player::Player;
use preparation::{Prepared, prepare};
use skin_gpu::SkinGpu;

/// The hook that places nodes by their bones.
const NODE_POSITION: &str = "skinned/node_position.wgsl";

/// `struct AttractionBones` in `shaders/skinned/node_position.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct AttractionBones {
    /// Joints.
    pub joints: [u32; 4],
    /// Their weights.
    pub weights: [f32; 4],
}

/// The character's attractions, in bind pose, each with the joints and
/// weights of the nearest point of the skin: its triangle's corners'
/// bones blended by where on the triangle it lies, the four strongest kept.
pub fn attractions(
    model: &Model,
    count: u32,
    spacing: f32,
    seed: u64,
) -> (Vec<[f32; 3]>, Vec<AttractionBones>) {
    let positions: Vec<Vec3> = model.vertices.iter().map(|v| v.position).collect();
    let voxel = if spacing > 0.0 {
        spacing * 0.5
    } else {
        model.size() / 96.0
    };
    let solid = volume::voxelize(&positions, &model.indices, voxel);
    let points = volume::poisson(&solid, count as usize, spacing, seed);
    let nearest = volume::nearest_surface(&positions, &model.indices, &points);
    let bones = nearest
        .iter()
        .map(|&(first, corners)| {
            let mut blend: Vec<(u32, f32)> = Vec::with_capacity(12);
            for (k, share) in corners.iter().enumerate() {
                let vertex = &model.vertices[model.indices[first + k] as usize];
                for (joint, weight) in vertex.joints.iter().zip(vertex.weights) {
                    match blend.iter_mut().find(|(j, _)| j == joint) {
                        Some((_, w)) => *w += share * weight,
                        None => blend.push((*joint, share * weight)),
                    }
                }
            }
            blend.sort_by(|a, b| b.1.total_cmp(&a.1));
            blend.truncate(4);
            let total: f32 = blend.iter().map(|(_, w)| w).sum::<f32>().max(1e-12);
            let mut bound = AttractionBones::default();
            for (slot, (joint, weight)) in blend.into_iter().enumerate() {
                bound.joints[slot] = joint;
                bound.weights[slot] = weight / total;
            }
            bound
        })
        .collect();
    (points.iter().map(|p| p.to_array()).collect(), bones)
}

/// Why the layer could not build; the running character stays.
#[derive(Debug, thiserror::Error)]
pub enum SkinnedError {
    /// The model could not be read.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model name leaves the show's assets.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// Its GPU buffers or kernels could not be made.
    #[error(transparent)]
    Gpu(#[from] BuildError),
    /// Its volume holds no attraction.
    #[error("{0}: no attraction fits inside the mesh (is it closed?)")]
    Empty(String),
    /// The worker preparing it failed unexpectedly.
    #[error("preparing the character failed unexpectedly; the running one stays")]
    Panicked,
}

/// The GPU side of a running character: its skin and its growth.
pub struct SkinnedSim {
    /// The growth (the colony's).
    pub colony: ColonySim,
    /// The skin.
    pub skin: SkinGpu,
    /// Per attraction, its joints and weights.
    pub attraction_bones: wgpu::Buffer,
}

impl SkinnedSim {
    /// The buffers the node-position hook reads.
    fn transform_buffers(&self) -> Vec<(u32, wgpu::Buffer)> {
        vec![
            (8, self.skin.params.clone()),
            (9, self.skin.bones.clone()),
            (10, self.skin.matrices.clone()),
            (11, self.attraction_bones.clone()),
        ]
    }
}

impl Simulation for SkinnedSim {
    fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload {
        let mut report = self.colony.reload(gpu, assets, changed);
        let skin = self.skin.reload(gpu, assets, changed);
        report.rebuilt += skin.rebuilt;
        report.errors.extend(skin.errors);
        report
    }
}

/// A running character.
struct Character {
    sim: SkinnedSim,
    model: Model,
    player: Player,
    structure: SkinnedStructure,
    spacing: Option<f32>,
    centre: Vec3,
    born: f64,
    seen_time: f32,
    /// Its body for the world, in bind pose, and where their ends were
    /// last frame (for their velocity).
    capsules: Vec<BodyCapsule>,
    last_ends: Option<Vec<(Vec3, Vec3)>>,
}

impl Running for Character {
    type Sim = SkinnedSim;
    fn sim(&self) -> &SkinnedSim {
        &self.sim
    }
    fn sim_mut(&mut self) -> &mut SkinnedSim {
        &mut self.sim
    }
}

/// Draws the branches at their skinned positions and the skin over them.
pub struct SkinnedDrawer {
    branches: BranchRenderer,
    body: BodyRenderer,
}

impl Drawer<SkinnedSim> for SkinnedDrawer {
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError> {
        let transform = NodeTransform {
            file: NODE_POSITION.into(),
            buffers: Vec::new(),
        };
        Ok(Self {
            branches: BranchRenderer::with_transform(gpu, assets, &transform)?,
            body: BodyRenderer::new(gpu, assets)?,
        })
    }

    fn attach(&mut self, gpu: &Gpu, sim: &SkinnedSim) {
        self.branches.set_transform_buffers(sim.transform_buffers());
        self.branches.attach(gpu, &sim.colony);
    }
}

/// The skinned layer.
pub struct SkinnedLayer {
    core: SimulationCore<Character, SkinnedDrawer, SkinnedStructure>,
    clips: Option<Vec<String>>,
    fade: f32,
    preparing: Latest<(SkinnedStructure, u64), Result<Prepared, SkinnedError>>,
    /// Its parameters, named once.
    knobs: SkinnedKnobs,
    /// Whether this frame's skin was computed already, before the
    /// shadow's cast (which needs it first).
    skinned_early: Cell<bool>,
}

impl SkinnedLayer {
    /// A character for id `skinned` or `skinned.<name>`; built on the first frame.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        Self {
            core: SimulationCore::new(id, &["skinned/", "colony/"], env),
            clips: None,
            fade: 1.0,
            knobs: SkinnedKnobs::new(id),
            skinned_early: Cell::new(false),
            preparing: {
                let assets = env.assets.clone();
                Latest::new(&format!("{id} prepare"), move |(structure, seed)| {
                    prepare(&assets, structure, *seed)
                })
            },
        }
    }

    /// Puts a prepared character on the GPU.
    fn build(
        &self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        prepared: Prepared,
        time: f64,
    ) -> Result<Character, SkinnedError> {
        let id = &self.core.id;
        let Prepared {
            model,
            points,
            bones,
            structure,
        } = prepared;
        let fits = |what: &str, count: u32| {
            env.gpu
                .check_storage(&format!("{id}.{what} {count}"), u64::from(count) * 32)
        };
        fits("node_capacity", structure.capacity)?;
        fits("attraction_count", points.len() as u32)?;
        let spacing = spacing::mean_nearest(&points);
        let growth = &self.knobs.growth;
        let params = growth.step_params(
            registry,
            0.0,
            self.core.seed,
            points.len() as u32,
            structure.capacity,
            growth.unit(registry, spacing),
        );
        let sim = env.gpu.scoped(id, || {
            let colony =
                ColonySim::new(env.gpu, env.assets, &points, structure.seed_count, &params)?;
            let skin = SkinGpu::new(env.gpu, env.assets, &model)?;
            let attraction_bones = storage_buffer(
                env.gpu,
                "skinned.attraction_bones",
                (bones.len() * size_of::<AttractionBones>()) as u64,
                wgpu::BufferUsages::empty(),
            );
            env.gpu
                .queue
                .write_buffer(&attraction_bones, 0, bytemuck::cast_slice(&bones));
            Ok::<_, BuildError>(SkinnedSim {
                colony,
                skin,
                attraction_bones,
            })
        })?;
        let (lo, hi) = model.bounds();
        tracing::info!(
            "{id}: {} with {} vertices, {} joints, {} clips; {} attractions",
            model.source,
            model.vertices.len(),
            model.joints.len(),
            model.clips.len(),
            points.len()
        );
        Ok(Character {
            sim,
            player: Player::default(),
            structure,
            spacing,
            centre: (lo + hi) * 0.5,
            born: time,
            seen_time: -1.0,
            capsules: body_capsules(&model),
            last_ends: None,
            model,
        })
    }

    /// Builds from a preparation and puts it in place; a regrowth keeps
    /// the dance where it was.
    fn start(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        prepared: Result<Prepared, SkinnedError>,
        time: f64,
    ) {
        let built = prepared.and_then(|p| self.build(env, registry, p, time));
        let player = self
            .core
            .running
            .as_ref()
            .map(|c| (c.player.clone(), c.structure.model.clone()));
        self.core.start(
            env,
            built.map(|mut c| {
                if let Some((player, _)) = player.filter(|(_, model)| *model == c.structure.model) {
                    c.player = player;
                }
                c
            }),
        );
    }

    /// Rebuilds when due, fades a regrowing growth. Returns whether the
    /// clip names (and so the parameters) changed.
    fn maintain(&mut self, env: &LayerEnv<'_>, registry: &Registry, time: f64) -> bool {
        let branches = &self.knobs.branches;
        let fading = (self.core.running.as_ref())
            .and_then(|character| branches.fading(registry, character.born, time))
            .unwrap_or(0.0);
        // Faded out: a new growth is prepared (once, however long the
        // worker takes).
        if fading >= 1.0 && !self.preparing.pending() {
            self.core.reseed(0);
        }
        self.fade = 1.0 - fading as f32;
        let structure = self.knobs.structure(registry, env.assets);
        if self.core.due(&structure, time) {
            let seed = self.core.seed;
            // In a render every character is made at once, so it lands
            // on the same frame each time; else on a worker while the
            // running one plays on (the first while its preset is staged:
            // see `settled`).
            if env.world.exact() {
                let prepared = prepare(env.assets, &structure, seed);
                self.start(env, registry, prepared, time);
            } else {
                self.preparing.request((structure, seed));
            }
        }
        if let Some(prepared) = self.preparing.poll() {
            let result = prepared.result.unwrap_or(Err(SkinnedError::Panicked));
            self.start(env, registry, result, time);
        }
        let clips: Option<Vec<String>> = self
            .core
            .running
            .as_ref()
            .map(|c| c.model.clips.iter().map(|c| c.name.clone()).collect());
        if clips.is_some() && clips != self.clips {
            self.clips = clips;
            return true;
        }
        false
    }

    /// Plays the clip, speed and time the registry asks for and writes
    /// this frame's bones.
    fn animate(&mut self, env: &LayerEnv<'_>, registry: &Registry, dt: f32) {
        let Some(character) = self.core.running.as_mut() else {
            return;
        };
        let (player, model) = (&mut character.player, &character.model);
        (self.knobs).play(registry, player, model, dt, &mut character.seen_time);
        let local = character.player.pose(&character.model);
        let skin = pose::skin_matrices(&character.model, &local);
        let matrices = self.knobs.matrices(registry);
        character.sim.skin.write_bones(env.gpu, &skin, matrices);
        if !(self.knobs.solid(registry) && self.knobs.placement.in_scene(registry)) {
            character.last_ends = None;
            env.world.publish_bodies(&self.core.id, Vec::new());
            return;
        }
        let model = self.knobs.placement.model(registry);
        let posed = capsules::posed(&character.capsules, &skin, model);
        let before = character.last_ends.take();
        let bodies = posed
            .iter()
            .enumerate()
            .map(|(k, &(a, b, radius))| {
                let then = before.as_ref().and_then(|ends| ends.get(k).copied());
                Capsule::moving(a, b, radius, then, dt)
            })
            .collect();
        env.world.publish_bodies(&self.core.id, bodies);
        character.last_ends = Some(posed.iter().map(|&(a, b, _)| (a, b)).collect());
    }
}

impl Layer for SkinnedLayer {
    fn kind(&self) -> &'static LayerKind {
        &KIND
    }

    fn id(&self) -> &str {
        &self.core.id
    }

    fn switches(&self) -> &LayerSwitches {
        &self.core.switches
    }

    fn params(&self) -> Vec<ParamSpec> {
        skinned_params(&self.core.id, self.clips.as_deref())
    }

    fn declare(&mut self, env: &LayerEnv<'_>, registry: &Registry, clock: &Clock) -> bool {
        // The first character is made while the preset is staged, so a
        // preset that names one of its clips finds the clip's parameter.
        self.core.running.is_none()
            && self.core.enabled(registry)
            && self.maintain(env, registry, clock.time)
    }

    fn settled(&mut self, env: &LayerEnv<'_>, registry: &Registry, clock: &Clock) -> bool {
        self.declare(env, registry, clock);
        !self.preparing.pending()
    }

    fn prepare(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> bool {
        if !self.core.enabled(registry) {
            return false;
        }
        let changed = self.maintain(env, registry, clock.time);
        self.animate(env, registry, clock.dt);
        let (Some(character), Some(drawer)) = (&self.core.running, self.core.drawer.as_mut())
        else {
            return changed;
        };
        let (structure, knobs) = (&character.structure, &self.knobs);
        let params = knobs.growth.step_params(
            registry,
            clock.dt,
            self.core.seed,
            structure.attraction_count,
            structure.capacity,
            knobs.growth.unit(registry, character.spacing),
        );
        character.sim.colony.set_params(env.gpu, &params);
        let scale = character.model.size();
        let camera = knobs
            .placement
            .camera(registry, clock, size)
            .unwrap_or_else(|| {
                let centre = character.centre;
                (knobs.camera).look_scaled(registry, clock.time, centre, scale, size)
            });
        let draw = knobs.branches.draw_params(registry, scale, self.fade);
        drawer.branches.prepare(env.gpu, size, &camera, &draw);
        let body = knobs.body_params(registry);
        drawer.body.prepare(env.gpu, size, &camera, &body);
        drawer.body.receive(env.gpu, env.world.shadow(env.gpu));
        changed
    }

    fn cast_shadow(
        &self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let (Some(character), Some(drawer)) = (&self.core.running, &self.core.drawer) else {
            return;
        };
        let knobs = &self.knobs;
        if !knobs.placement.in_scene(registry) || knobs.body_style(registry) == BodyStyle::Hidden {
            return;
        }
        // The skin of this frame, computed once, before its shadow.
        character.sim.skin.encode(encoder, profiler);
        self.skinned_early.set(true);
        let map = env.world.shadow(env.gpu);
        drawer
            .body
            .cast(encoder, profiler, &character.sim.skin, map);
    }

    fn encode(
        &self,
        _env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let registry = frame.registry;
        let (Some(character), Some(drawer)) = (&self.core.running, &self.core.drawer) else {
            crate::gpu::clear_view(encoder, frame.target);
            return;
        };
        let sim = &character.sim;
        let branches = &self.knobs.branches;
        for _ in 0..branches.steps(registry) {
            sim.colony.step(encoder, profiler);
        }
        if !self.skinned_early.replace(false) {
            sim.skin.encode(encoder, profiler);
        }
        let style = branches.style(registry);
        let in_scene = self.knobs.placement.in_scene(registry);
        let (target, scene_depth) = (frame.target, in_scene.then_some(frame.scene_depth));
        (drawer.branches).draw(encoder, profiler, &sim.colony, target, scene_depth, style);
        let style = self.knobs.body_style(registry);
        (drawer.body).draw(encoder, profiler, &sim.skin, target, scene_depth, style);
    }

    fn reseed(&mut self, seed: u64) {
        self.core.reseed(seed);
    }

    fn report(&self, gpu: &Gpu) -> Vec<(String, f64)> {
        let Some(character) = &self.core.running else {
            return Vec::new();
        };
        let Ok([nodes, edges, ..]) = character.sim.colony.read_state(gpu) else {
            return Vec::new();
        };
        vec![
            (
                "vertices".into(),
                f64::from(character.sim.skin.vertex_count()),
            ),
            ("joints".into(), character.model.joints.len() as f64),
            ("nodes".into(), f64::from(nodes)),
            ("edges".into(), f64::from(edges)),
            (
                "attractions".into(),
                f64::from(character.structure.attraction_count),
            ),
            (
                "skin_bytes_per_pass".into(),
                character.sim.skin.bytes_per_pass() as f64,
            ),
            (
                "growth_bytes_per_step_at_end".into(),
                character.sim.colony.bytes_per_step(nodes) as f64,
            ),
        ]
    }

    fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool {
        self.core.reload(env, changed);
        false
    }
}

/// The skinned kind.
pub const KIND: LayerKind = LayerKind {
    name: "skinned",
    create: |id, env| Box::new(SkinnedLayer::new(id, env)),
    params: declared_params,
    bench: bench_workload,
    layouts: &[
        UniformLayout::of::<pose::Bone>("Bone", "skinned/skin.wgsl", "Bone"),
        UniformLayout::of::<skin_gpu::SkinParams>("SkinParams", "skinned/skin.wgsl", "SkinParams"),
        UniformLayout::of::<skin_gpu::BindVertex>("BindVertex", "skinned/skin.wgsl", "BindVertex"),
        UniformLayout::of::<AttractionBones>(
            "AttractionBones",
            "skinned/skin.wgsl",
            "AttractionBones",
        ),
        UniformLayout::of::<body::BodyParams>("BodyParams", "skinned/body.wgsl", "BodyParams"),
    ],
};

/// The bench's workload: the built-in figure with about `size` vertices
/// to skin, and a fifth as many attractions to grow into (1M vertices,
/// 200k attractions), every segment growing in one iteration.
fn bench_workload(size: u32) -> BenchWorkload {
    // The figure has about 20 vertices per side squared.
    let detail = ((f64::from(size) / 20.0).sqrt().round() as u32).clamp(6, 1024);
    BenchWorkload {
        resolution: [1920, 1080],
        unit: "vertices",
        groups: vec![
            ("skinning", &["skinned.skin"]),
            ("growth step", &["colony."]),
        ],
        settings: vec![
            format!("detail={detail}"),
            format!("attraction_count={}", size / 5),
            format!("node_capacity={}", (size / 5).max(64)),
            "seed_count=64".into(),
            "steps_per_frame=1".into(),
            "growth_speed=50".into(),
            "mass_min=1".into(),
            "mass_max=1".into(),
            "regrow=false".into(),
        ],
    }
}

impl From<SkinnedError> for LayerError {
    fn from(error: SkinnedError) -> Self {
        LayerError::Kind(Box::new(error))
    }
}
