//! The `colony` layer: space colonization growth on the GPU,
//! branches growing into a cloud of attraction points, drawn as glowing
//! lines or lit tubes under an orbit camera.
//!
//! Built to be reused: where the points come from is an
//! [`attractors::AttractionSource`], every node carries a `tag`, the
//! attraction that pulled it into being (where the skinned layer reads its
//! bones), and the drawing reads
//! node positions through `shaders/colony/transform.wgsl`, which another
//! layer replaces to draw nodes at transformed positions.

pub mod attractors;
pub mod draw;
pub mod knobs;
mod order;
pub mod picture;
pub mod reference;
pub mod sim;
pub mod spacing;
pub mod standing;

use std::path::Path;

use attractors::{AttractionSource, CloudError, PointCloud, SHAPES, Shape};
use draw::BranchRenderer;
use knobs::{BranchKnobs, ColonyStructureKnobs, GrowthKnobs};
use sim::ColonySim;

use crate::base::clock::Clock;
use crate::base::latest::Latest;
use crate::base::{Assets, ChangedFile, inside_show};
use crate::engine::camera::{OrbitCamera, camera_params};
use crate::engine::simulation::{Running, SimulationCore};
use crate::engine::world::Placement;
use crate::engine::{BenchWorkload, Layer, LayerEnv, LayerFrame, LayerKind, LayerSwitches};
use crate::gpu::UniformLayout;
use crate::gpu::{BuildError, Gpu, GpuProfiler};
use crate::params::{Handle, ParamSpec, Registry};

/// Palettes, in the order of `colony.palette`.
pub const PALETTES: [&str; 4] = ["aurora", "ember", "moss", "ice"];

/// The layer's parameters.
pub fn colony_params(id: &str) -> Vec<ParamSpec> {
    let p = |name: &str| format!("{id}.{name}");
    let mut specs = vec![
        ParamSpec::float(p("unit_distance"), 0.0, 0.0, 100.0)
            .with_smoothing(0.2)
            .with_description(
                "World length of one distance unit (scales influence, growth and kill); 0 follows the attractions' spacing",
            ),
        ParamSpec::float(p("influence_distance"), 3.0, 0.1, 50.0)
            .with_description("How far an attraction reaches for the nearest node, in units"),
        ParamSpec::float(p("growth_distance"), 1.0, 0.05, 20.0)
            .with_description("Length of a new branch segment, in units"),
        ParamSpec::float(p("kill_distance"), 1.0, 0.05, 20.0)
            .with_description("A node this close to an attraction consumes it, in units"),
        ParamSpec::float(p("growth_speed"), 2.0, 0.0, 50.0)
            .with_smoothing(0.2)
            .with_description("How fast new segments extend (t per second at mass 1)"),
        ParamSpec::float(p("mass_min"), 0.5, 0.01, 4.0)
            .with_description("Slowest segment growth factor"),
        ParamSpec::float(p("mass_max"), 1.0, 0.01, 4.0)
            .with_description("Fastest segment growth factor"),
        ParamSpec::int(p("seed_count"), 3, 1, 4096)
            .with_description("Roots the growth starts from (rebuilds)"),
        ParamSpec::int(p("attraction_count"), 20_000, 16, 16_000_000).structural()
            .with_description("Attraction points (rebuilds)"),
        ParamSpec::int(p("node_capacity"), 200_000, 64, 16_000_000).structural()
            .with_description("Node pool size (rebuilds)"),
        ParamSpec::enumeration(p("shape"), &SHAPES, 0)
            .with_description("Volume the attractions fill (rebuilds)"),
        ParamSpec::float(p("radius"), 7.0, 0.01, 10_000.0)
            .with_description("Size of that volume (rebuilds)"),
        ParamSpec::path(p("attractors"), "").with_description(
            "Point cloud (.ply or .obj) in the show's assets/ folder, or a picture media/NAME.png|jpg whose bright parts the branches grow into, instead of a shape (rebuilds)",
        ),
        ParamSpec::int(p("steps_per_frame"), 1, 0, 64).costly()
            .with_description("Growth iterations per frame"),
        ParamSpec::enumeration(p("render"), &["lines", "tubes"], 0)
            .with_description("Glowing lines or lit tubes"),
        ParamSpec::float(p("width"), 1.5, 0.25, 32.0)
            .with_smoothing(0.1)
            .with_unit("px")
            .with_description("Line width at the tips"),
        ParamSpec::float(p("taper"), 3.0, 0.0, 16.0)
            .with_smoothing(0.1)
            .with_description("Lines: how much wider than the tips the root is drawn (0: even lines)"),
        ParamSpec::float(p("thickness"), 0.12, 0.001, 100.0)
            .with_smoothing(0.1)
            .with_description("Tube radius at the root, world units"),
        ParamSpec::enumeration(p("palette"), &PALETTES, 1)
            .with_description("Colours along the branches"),
        ParamSpec::enumeration(p("colour_by"), &["depth", "age"], 0)
            .with_description("Colour by distance from the root or by age"),
        ParamSpec::float(p("brightness"), 0.9, 0.0, 50.0)
            .with_smoothing(0.1)
            .with_description("HDR brightness of the branches"),
        ParamSpec::bool(p("regrow"), false)
            .with_description("Shows: let the growth fade and a new one start, again and again"),
        ParamSpec::float(p("regrow_seconds"), 40.0, 2.0, 3600.0)
            .with_unit("s")
            .with_description("Time a growth lives before it fades"),
        ParamSpec::bool(p("solid"), true).with_description(
            "In the shared scene, its first branches from each root stand as capsules the water meets",
        ),
    ];
    specs.extend(camera_params(id, 22.0, 6.0));
    specs.extend(crate::engine::world::placement_params(id));
    specs
}

/// What the simulation was built from; a change rebuilds it.
#[derive(Debug, Clone, PartialEq)]
struct ColonyStructure {
    attraction_count: u32,
    capacity: u32,
    seed_count: u32,
    shape: usize,
    radius: f32,
    attractors: String,
}

impl ColonyStructure {
    fn from(registry: &Registry, knobs: &ColonyStructureKnobs) -> Self {
        Self {
            attraction_count: knobs.attraction_count.count(registry),
            capacity: knobs.node_capacity.count(registry),
            seed_count: knobs.seed_count.count(registry),
            shape: knobs.shape.target(registry),
            radius: knobs.radius.target(registry),
            attractors: knobs.attractors.target(registry),
        }
    }

    /// The attraction points: the point cloud if one is named, else the shape.
    fn points(&self, assets: &Assets, seed: u64) -> Result<Vec<[f32; 3]>, CloudError> {
        if self.attractors.is_empty() {
            let shape = Shape {
                kind: self.shape,
                radius: self.radius,
            };
            return Ok(shape.points(self.attraction_count, seed));
        }
        let relative = inside_show(&self.attractors)?;
        if self.attractors.starts_with("media/") {
            let picture =
                picture::PictureAttractions::load_in(assets.root(), relative, self.radius)?;
            return Ok(picture.points(self.attraction_count, seed));
        }
        let relative = Path::new("assets").join(relative);
        Ok(PointCloud::load_in(assets.root(), &relative)?.points(self.attraction_count, seed))
    }
}

/// Attraction points and their mean spacing, or why there are none.
type Attractions = Result<(Vec<[f32; 3]>, Option<f32>), CloudError>;

/// The points `structure` grows into (its seed `seed`), with their mean
/// nearest spacing: both slow for a large cloud, so any thread may.
fn attractions(structure: &ColonyStructure, assets: &Assets, seed: u64) -> Attractions {
    let points = structure.points(assets, seed)?;
    let spacing = spacing::mean_nearest(&points);
    Ok((points, spacing))
}

/// Grows the colony layer `id` of the running preset for `steps`
/// iterations, each new segment reaching full length in one iteration (the
/// fastest growth the algorithm allows), into the points of `attractors` if given
/// (a path a person typed: it may be anywhere), and returns its nodes and
/// edges. For `sylva export colony`.
pub fn grow_for_export(
    gpu: &Gpu,
    assets: &Assets,
    registry: &Registry,
    id: &str,
    steps: u32,
    attractors: Option<&std::path::Path>,
) -> Result<sim::Graph, ColonyError> {
    let structure = ColonyStructure::from(registry, &ColonyStructureKnobs::new(id));
    let growth = GrowthKnobs::new(id);
    let seed = 1;
    let points = match attractors {
        Some(path) => PointCloud::load(path)?.points(structure.attraction_count, seed),
        None => structure.points(assets, seed)?,
    };
    let unit = growth.unit(registry, spacing::mean_nearest(&points));
    let params = growth.step_params(
        registry,
        growth.full_step(registry),
        seed,
        points.len() as u32,
        structure.capacity,
        unit,
    );
    let sim = ColonySim::new(gpu, assets, &points, structure.seed_count, &params)?;
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    for _ in 0..steps {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        sim.step(&mut encoder, &mut profiler);
        gpu.queue.submit([encoder.finish()]);
    }
    Ok(sim.read_graph(gpu)?)
}

/// The grown branches as Wavefront OBJ: nodes as vertices, edges as lines.
pub fn to_obj(nodes: &[[f32; 4]], edges: &[[u32; 2]]) -> String {
    let mut text = format!(
        "# sylva colony: {} nodes, {} branches\n",
        nodes.len(),
        edges.len()
    );
    for n in nodes {
        text.push_str(&format!("v {} {} {}\n", n[0], n[1], n[2]));
    }
    for [a, b] in edges {
        text.push_str(&format!("l {} {}\n", a + 1, b + 1));
    }
    text
}

/// Why a colony could not grow; the running one stays.
#[derive(Debug, thiserror::Error)]
pub enum ColonyError {
    /// Its kernels or buffers could not be made or read.
    #[error(transparent)]
    Gpu(#[from] BuildError),
    /// Reading its results failed.
    #[error(transparent)]
    Readback(#[from] crate::gpu::ReadbackError),
    /// Its point cloud could not be read.
    #[error(transparent)]
    Cloud(#[from] CloudError),
}

/// A running colony.
struct GrownColony {
    sim: ColonySim,
    /// Its first branches written into the world's, for the water.
    standing: standing::StandingBranches,
    structure: ColonyStructure,
    spacing: Option<f32>,
    centre: glam::Vec3,
    born: f64,
}

impl Running for GrownColony {
    type Sim = ColonySim;
    fn sim(&self) -> &ColonySim {
        &self.sim
    }
    fn sim_mut(&mut self) -> &mut ColonySim {
        &mut self.sim
    }
}

/// The colony layer.
pub struct ColonyLayer {
    core: SimulationCore<GrownColony, BranchRenderer, ColonyStructure>,
    /// Attraction points read from a file off the frame thread (a 64 MiB
    /// cloud takes seconds to parse), for the structure and seed asked.
    reading: Latest<(ColonyStructure, u64), Attractions>,
    /// How far a regrowing colony has faded (1 = not at all).
    fade: f32,
    /// Its parameters, named once.
    knobs: ColonyKnobs,
}

/// Every parameter the colony layer's frames read.
pub struct ColonyKnobs {
    growth: GrowthKnobs,
    branches: BranchKnobs,
    structure: ColonyStructureKnobs,
    camera: OrbitCamera,
    placement: Placement,
    solid: Handle<bool>,
}

impl ColonyKnobs {
    /// The handles of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            growth: GrowthKnobs::new(id),
            branches: BranchKnobs::new(id),
            structure: ColonyStructureKnobs::new(id),
            camera: OrbitCamera::new(id),
            placement: Placement::new(id),
            solid: Handle::new(id, "solid"),
        }
    }

    /// Whether its branches stand in the scene for the water this frame.
    fn standing(&self, registry: &Registry) -> bool {
        self.solid.get(registry) && self.placement.in_scene(registry)
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        [
            self.growth.check(specs),
            self.branches.check(specs),
            self.structure.check(specs),
            self.camera.check(specs),
            self.placement.check(specs),
            crate::check_handles!(specs; self.solid),
        ]
        .concat()
    }
}

impl ColonyLayer {
    /// Whether the branches cast into the scene's shadow map: drawn in
    /// the scene as solid tubes (glowing lines are light, and cast none).
    fn casts(&self, registry: &Registry) -> bool {
        self.knobs.placement.in_scene(registry)
            && self.knobs.branches.style(registry) == draw::Style::Tubes
    }

    /// A colony for id `colony` or `colony.<name>`; it grows on the first frame.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        let assets = env.assets.clone();
        Self {
            core: SimulationCore::new(id, &["colony/"], env),
            reading: Latest::new(&format!("{id} points"), move |(structure, seed)| {
                attractions(structure, &assets, *seed)
            }),
            fade: 1.0,
            knobs: ColonyKnobs::new(id),
        }
    }

    /// Builds a colony of `structure` into the attraction points made for
    /// it at `time`.
    fn build(
        &self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        structure: ColonyStructure,
        attractions: Attractions,
        time: f64,
    ) -> Result<GrownColony, ColonyError> {
        let (points, spacing) = attractions?;
        let id = &self.core.id;
        let seed = self.core.seed;
        let fits = |what: &str, count: u32| {
            let what = format!("{id}.{what} {count}");
            env.gpu.check_storage(&what, u64::from(count) * 16)
        };
        fits("node_capacity", structure.capacity)?;
        fits("attraction_count", structure.attraction_count)?;
        let growth = &self.knobs.growth;
        let params = growth.step_params(
            registry,
            0.0,
            seed,
            points.len() as u32,
            structure.capacity,
            growth.unit(registry, spacing),
        );
        let sim = env.gpu.scoped(id, || {
            ColonySim::new(env.gpu, env.assets, &points, structure.seed_count, &params)
        })?;
        let (min, max) = sim::bounds(&points);
        let branches = env.world.branches(env.gpu);
        let standing = env.gpu.scoped(&self.core.id, || {
            standing::StandingBranches::new(env.gpu, env.assets, &sim, &branches)
        })?;
        Ok(GrownColony {
            sim,
            standing,
            structure,
            spacing,
            centre: (glam::Vec3::from(min) + glam::Vec3::from(max)) * 0.5,
            born: time,
        })
    }

    /// Rebuild when asked, when structural parameters have rested at new
    /// values, or when a regrowing colony has faded out. Returns the fade.
    fn maintain(&mut self, env: &LayerEnv<'_>, registry: &Registry, time: f64) -> f32 {
        let branches = &self.knobs.branches;
        let fading = (self.core.running.as_ref())
            .and_then(|grown| branches.fading(registry, grown.born, time))
            .unwrap_or(0.0);
        if fading >= 1.0 {
            self.core.reseed(0);
        }
        let structure = ColonyStructure::from(registry, &self.knobs.structure);
        if self.core.due(&structure, time) {
            // A shape's points are made at once; a file's are read off the
            // frame thread, the running colony growing on meanwhile (but
            // in an exact render, which waits for nothing to be late).
            if structure.attractors.is_empty() || env.world.exact() {
                let points = attractions(&structure, env.assets, self.core.seed);
                let built = self.build(env, registry, structure, points, time);
                self.core.start(env, built);
            } else {
                self.reading.request((structure, self.core.seed));
            }
        }
        if let Some(read) = self.reading.poll() {
            let (structure, _) = read.request;
            let points = read.result.unwrap_or_else(|| {
                Err(CloudError::Format {
                    path: structure.attractors.clone(),
                    problem: "reading it failed",
                })
            });
            let built = self.build(env, registry, structure, points, time);
            self.core.start(env, built);
        }
        1.0 - fading as f32
    }
}

impl Layer for ColonyLayer {
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
        colony_params(&self.core.id)
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
        self.fade = self.maintain(env, registry, clock.time);
        let Some(grown) = &self.core.running else {
            return false;
        };
        let (structure, knobs) = (&grown.structure, &self.knobs);
        let params = knobs.growth.step_params(
            registry,
            clock.dt,
            self.core.seed,
            structure.attraction_count,
            structure.capacity,
            knobs.growth.unit(registry, grown.spacing),
        );
        grown.sim.set_params(env.gpu, &params);
        let camera = knobs
            .placement
            .camera(registry, clock, size)
            .unwrap_or_else(|| knobs.camera.look(registry, clock.time, grown.centre, size));
        let draw = knobs.branches.draw_params(registry, 1.0, self.fade);
        if knobs.standing(registry) {
            let model = knobs.placement.model(registry);
            grown.standing.prepare(env.gpu, model, draw.thickness);
            env.world.publish_branches(&self.core.id);
        } else {
            env.world.withdraw_branches(&self.core.id);
        }
        if let Some(renderer) = self.core.drawer.as_mut() {
            renderer.prepare(env.gpu, size, &camera, &draw);
        }
        if self.casts(registry) {
            // The tubes cast their shadows: the scene's map is made.
            env.world.shadow(env.gpu);
        }
        false
    }

    fn cast_shadow(
        &self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        if let (Some(grown), Some(renderer)) = (&self.core.running, &self.core.drawer)
            && self.casts(registry)
        {
            let map = env.world.shadow(env.gpu);
            renderer.cast(encoder, profiler, &grown.sim, map);
        }
    }

    fn encode(
        &self,
        _env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let registry = frame.registry;
        let Some(grown) = &self.core.running else {
            crate::gpu::clear_view(encoder, frame.target);
            return;
        };
        let branches = &self.knobs.branches;
        for _ in 0..branches.steps(registry) {
            grown.sim.step(encoder, profiler);
        }
        if self.knobs.standing(registry) {
            let label = "colony.standing";
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: profiler.compute_pass(label),
            });
            grown.standing.encode(&mut pass);
        }
        let Some(renderer) = &self.core.drawer else {
            crate::gpu::clear_view(encoder, frame.target);
            return;
        };
        let style = branches.style(registry);
        let in_scene = self.knobs.placement.in_scene(registry);
        let scene_depth = in_scene.then_some(frame.scene_depth);
        renderer.draw(
            encoder,
            profiler,
            &grown.sim,
            frame.target,
            scene_depth,
            style,
        );
    }

    fn report(&self, gpu: &Gpu) -> Vec<(String, f64)> {
        let Some(grown) = &self.core.running else {
            return Vec::new();
        };
        let Ok([nodes, edges, seeds, depth]) = grown.sim.read_state(gpu) else {
            return Vec::new();
        };
        let attractions = f64::from(grown.structure.attraction_count);
        vec![
            ("nodes".into(), f64::from(nodes)),
            ("edges".into(), f64::from(edges)),
            ("seeds".into(), f64::from(seeds)),
            ("deepest_offset".into(), f64::from(depth)),
            (
                "bytes_per_step_at_end".into(),
                grown.sim.bytes_per_step(nodes) as f64,
            ),
            ("attractions".into(), attractions),
        ]
    }

    fn reseed(&mut self, seed: u64) {
        self.core.reseed(seed);
    }

    fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool {
        self.core.reload(env, changed);
        false
    }
}

/// The colony kind: space colonization growth.
pub const KIND: LayerKind = LayerKind {
    name: "colony",
    create: |id, env| Box::new(ColonyLayer::new(id, env)),
    params: |id, _, _| Ok(colony_params(id)),
    bench: bench_workload,
    layouts: &[
        UniformLayout::of::<sim::StepParams>("StepParams", "colony/step.wgsl", "ColonyParams"),
        UniformLayout::of::<sim::NodeInfo>("NodeInfo", "colony/step.wgsl", "NodeInfo"),
        UniformLayout::of::<draw::DrawParams>("DrawParams", "colony/draw.wgsl", "DrawParams"),
    ],
};

/// The bench's workload: attractions uniform in a sphere of radius 10,
/// influence 3x their mean spacing, growth and kill 1x; nodes grow to t = 1
/// in one iteration so the run is all growth.
fn bench_workload(size: u32) -> BenchWorkload {
    let spacing = (4.0 / 3.0 * std::f64::consts::PI * 1000.0 / f64::from(size)).cbrt();
    BenchWorkload {
        resolution: [1920, 1080],
        unit: "attractions",
        groups: Vec::new(),
        settings: vec![
            format!("attraction_count={size}"),
            format!("node_capacity={}", size.saturating_mul(2)),
            "shape=\"sphere\"".to_string(),
            "radius=10.0".to_string(),
            format!("unit_distance={spacing}"),
            "influence_distance=3.0".to_string(),
            "growth_distance=1.0".to_string(),
            "kill_distance=1.0".to_string(),
            "growth_speed=200.0".to_string(),
            "seed_count=8".to_string(),
            "steps_per_frame=1".to_string(),
            "auto_rotate=0.0".to_string(),
        ],
    }
}
