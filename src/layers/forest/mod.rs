//! The `forest` layer (Mizoguchi and Miyata's layered
//! extension of Deussen et al.): trees as cones competing for light in
//! horizontal slices, guided by painted density maps, drawn as a living
//! forest or as the space maps seen from above.

pub mod crowns;
pub mod density;
pub mod draw;
mod impostor_splat;
mod impostors;
pub mod knobs;
pub mod paint;
pub mod rain;
pub mod reference;
pub mod sim;
pub mod species;

use std::path::Path;

use glam::Vec3;

use crate::base::clock::Clock;
use crate::base::opener::{self, OpenError};
use crate::base::rng::Rng;
use crate::base::{AssetError, Assets, ChangedFile, MAX_FILE_BYTES, inside_show};
use crate::engine::camera::{CameraUniform, camera_params};
use crate::engine::simulation::{Running, SimulationCore};
use crate::engine::world::placement_params;
use crate::engine::{BenchWorkload, Layer, LayerEnv, LayerFrame, LayerKind, LayerSwitches};
use crate::gpu::UniformLayout;
use crate::gpu::{BuildError, Gpu, GpuProfiler};
use crate::params::{ParamSpec, Registry, Value};
use density::DensityMaps;
use draw::{ForestDraw, ForestRenderer, View};
use knobs::ForestKnobs;
use rain::RainSoak;
use sim::{ForestParams, ForestSim, Tree};
use species::{MAX_SPECIES, Species};

/// The maps `forest.density_source` paints, in the order of its enum.
pub const DENSITY_SOURCE_MAPS: [&str; 6] = ["all", "1", "2", "3", "4", "5"];

/// The layer's parameters.
pub fn forest_params(id: &str) -> Vec<ParamSpec> {
    let p = |name: &str| format!("{id}.{name}");
    let mut specs = vec![
        ParamSpec::int(p("map_size"), 512, 16, 4096).structural()
            .with_description("Pixels per side of the space and density maps (rebuilds)"),
        ParamSpec::float(p("metres_per_pixel"), 1.0, 0.05, 100.0)
            .with_unit("m")
            .with_description("Ground a map pixel covers (rebuilds)"),
        ParamSpec::int(p("slices"), 20, 1, 64).structural()
            .with_description("Horizontal space-map slices (rebuilds)"),
        ParamSpec::float(p("slice_spacing"), 1.0, 0.05, 100.0)
            .with_unit("m")
            .with_description("Height between slices; slice k lies at (k + 1) x spacing (rebuilds)"),
        ParamSpec::int(p("capacity"), 200_000, 64, sim::MAX_TREES as i32).structural()
            .with_description("Most trees at once (rebuilds)"),
        ParamSpec::int(p("initial_trees"), 4_000, 1, sim::MAX_TREES as i32).structural()
            .with_description("Seedlings sown at the start, species in turn (rebuilds)"),
        ParamSpec::path(p("species"), "").with_description(
            "A TOML file of [[species]] in the show's assets/; empty: canopy, sub-canopy, shrub, herb (rebuilds)",
        ),
        ParamSpec::text(p("density_maps"), "").with_description(
            "Grey PNGs in assets/, comma-separated, lowest first (5, each weighting 4 slices); reread when saved",
        ),
        ParamSpec::texture(p("density_source"), "").with_description(
            "A picture that paints the density maps live: camera, media/clip.mp4, layer:ID; its brightness is where trees may grow",
        ),
        ParamSpec::enumeration(p("density_source_maps"), &DENSITY_SOURCE_MAPS, 0)
            .with_description("Which density maps the picture paints"),
        ParamSpec::float(p("density_source_amount"), 0.1, 0.0, 1.0)
            .with_smoothing(0.1)
            .with_description("How far the maps move towards the picture each frame (1: at once)"),
        ParamSpec::float(p("rain"), 0.0, 0.0, 1.0).with_description(
            "How much each drop of a fluid's water landing on its floor (the floor spans this map) raises the density under it; 0: off",
        ),
        ParamSpec::float(p("drought"), 0.02, 0.0, 1.0)
            .with_unit("/s")
            .with_description("With rain on, the share of the density the ground loses each second"),
        ParamSpec::float(p("r1"), 0.12, 0.0, 1.0)
            .with_description("A tree whose R = V / Vmax falls below this dies"),
        ParamSpec::float(p("r2"), 0.3, 0.0, 1.0)
            .with_description("Below this R a tree does not grow"),
        ParamSpec::float(p("years_per_step"), 0.5, 0.01, 10.0)
            .with_unit("years")
            .with_description("Time one step stands for"),
        ParamSpec::int(p("steps_per_frame"), 1, 0, 64).costly()
            .with_description("Simulation steps per frame"),
        ParamSpec::bool(p("brush"), false).with_description("Paint into a density map"),
        ParamSpec::vec3(p("brush_at"), [0.5, 0.5, 0.0], 0.0, 1.0)
            .with_smoothing(0.1)
            .with_description("Brush position on the map (x, y from 0 to 1)"),
        ParamSpec::float(p("brush_radius"), 12.0, 0.1, 1000.0)
            .with_unit("m")
            .with_description("Brush radius"),
        ParamSpec::float(p("brush_value"), 0.0, 0.0, 1.0)
            .with_description("Density the brush paints"),
        ParamSpec::int(p("brush_map"), 0, 0, density::MAPS as i32 - 1)
            .with_description("Density map the brush paints (0 lowest)"),
        ParamSpec::enumeration(p("view"), &["forest", "maps"], 0)
            .with_description("Trees on the ground, or the space maps from above"),
        ParamSpec::int(p("view_slice"), 64, 0, 64)
            .with_description("Maps view: the slice shown; past the last: the highest crown"),
        ParamSpec::colour(p("fog"), [0.3, 0.38, 0.48, 1.0])
            .with_description("Fog colour, and the sky's at the horizon (it deepens overhead)"),
        ParamSpec::float(p("fog_density"), 0.003, 0.0, 1.0)
            .with_smoothing(0.3)
            .with_description("Fog per metre"),
        ParamSpec::float(p("brightness"), 1.0, 0.0, 20.0)
            .with_smoothing(0.1)
            .with_description("HDR brightness"),
        ParamSpec::bool(p("backdrop"), true).with_description(
            "Its own sky and ground behind the trees (off: the layers below, a stage, show through)",
        ),
        ParamSpec::float(p("wind"), 0.4, 0.0, 3.0)
            .with_smoothing(0.5)
            .with_description("How far the crowns sway in the wind"),
        ParamSpec::enumeration(p("crowns"), &["cone", "grown"], 1).with_description(
            "Crowns as the branches and leaves the colony grew in them (the biggest on screen whole, the rest as impostors of them), or as the simulation's cones",
        ),
        ParamSpec::float(p("grown_pixels"), 96.0, 16.0, 2000.0)
            .with_description("Grown crowns: crown width on screen (pixels) from which a tree shows its branches"),
        ParamSpec::int(p("grown_trees"), 512, 0, 65_536).costly()
            .with_description("Grown crowns: trees that may show their branches whole at once (the rest draw as impostors of them)"),
    ];
    // The camera distance counts the map's sides.
    let mut camera = camera_params(id, 0.6, 3.0);
    for spec in &mut camera {
        if spec.name.ends_with(".camera_pitch") {
            spec.default = Value::Float(24.0);
        }
    }
    specs.extend(camera);
    specs.extend(placement_params(id));
    specs
}

/// What the forest was built from; a change rebuilds it.
#[derive(Debug, Clone, PartialEq)]
struct ForestStructure {
    map_size: u32,
    metres_per_pixel: f32,
    slices: u32,
    slice_spacing: f32,
    capacity: u32,
    initial_trees: u32,
    species: String,
}

impl ForestStructure {
    fn from(registry: &Registry, knobs: &ForestKnobs) -> Self {
        Self {
            map_size: knobs.map_size.count(registry),
            metres_per_pixel: knobs.metres_per_pixel.target(registry),
            slices: knobs.slices.count(registry),
            slice_spacing: knobs.slice_spacing.target(registry),
            capacity: knobs.capacity.count(registry),
            initial_trees: knobs.initial_trees.count(registry),
            species: knobs.species.target(registry),
        }
    }

    /// The map's side in metres.
    fn extent(&self) -> f32 {
        self.map_size as f32 * self.metres_per_pixel
    }
}

/// Why a forest could not be built; the running one stays.
#[derive(Debug, thiserror::Error)]
pub enum ForestError {
    /// The species file leaves the show's assets.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// The species file could not be read: missing, a link, a FIFO, a
    /// device, or over the size of a show file.
    #[error(transparent)]
    Read(#[from] OpenError),
    /// The species file is not what the forest needs.
    #[error("assets/{file}: {problem}")]
    Species {
        /// The file.
        file: String,
        /// What is wrong.
        problem: String,
    },
    /// Its buffers or kernels could not be made.
    #[error(transparent)]
    Gpu(#[from] BuildError),
}

/// The species of `file` in the show's assets, or the defaults.
pub fn load_species(assets: &Assets, file: &str) -> Result<Vec<Species>, ForestError> {
    if file.is_empty() {
        return Ok(species::defaults());
    }
    // Through the opener, within a show file's size: a species file is a
    // few lines of TOML, and a link or a device in its place is refused.
    let relative = Path::new("assets").join(inside_show(file)?);
    let text = opener::read_text(assets.root(), &relative, MAX_FILE_BYTES)?;
    #[derive(serde::Deserialize)]
    struct File {
        species: Vec<Species>,
    }
    let problem = |problem: String| ForestError::Species {
        file: file.to_string(),
        problem,
    };
    let parsed: File = toml::from_str(&text).map_err(|e| problem(e.message().to_string()))?;
    if parsed.species.is_empty() || parsed.species.len() > MAX_SPECIES {
        return Err(problem(format!("1 to {MAX_SPECIES} [[species]] please")));
    }
    if let Some(wide) = parsed
        .species
        .iter()
        .find(|s| !(1.0..=80.0).contains(&s.spread))
    {
        return Err(problem(format!(
            "{}: a spread of 1 to 80 degrees please, not {}",
            wide.name, wide.spread
        )));
    }
    Ok(parsed.species)
}

/// `count` seedlings, species in turn, spread over a square of `extent`
/// metres from `seed`.
pub fn seedlings(count: u32, extent: f32, species: usize, seed: u64) -> Vec<Tree> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let position = [
                (rng.signed() * 0.5 + 0.5) * extent,
                (rng.signed() * 0.5 + 0.5) * extent,
            ];
            Tree::new(
                position,
                0.3 + (rng.signed() * 0.5 + 0.5) * 0.5,
                i % species.max(1) as u32,
            )
        })
        .collect()
}

/// The simulation's parameters for `structure` and the registry's
/// dynamics.
fn sim_params(
    registry: &Registry,
    knobs: &ForestKnobs,
    structure: &ForestStructure,
    species: &[Species],
    seed: u64,
) -> ForestParams {
    let r1 = knobs.r1.get(registry);
    ForestParams::new(
        structure.map_size,
        structure.metres_per_pixel,
        structure.slices,
        structure.slice_spacing,
        density::MAPS as u32,
        4,
        structure.capacity,
        r1,
        knobs.r2.get(registry).max(r1),
        knobs.years_per_step.get(registry),
        seed as u32,
        species,
    )
}

/// A running forest.
pub struct GrownForest {
    /// The simulation on the GPU.
    pub sim: ForestSim,
    structure: ForestStructure,
    /// The species it was sown with.
    pub species: Vec<Species>,
    density: DensityMaps,
    /// Drinks the world's rain, made when `rain` is first turned up.
    rain: Option<RainSoak>,
}

impl Running for GrownForest {
    type Sim = ForestSim;
    fn sim(&self) -> &ForestSim {
        &self.sim
    }
    fn sim_mut(&mut self) -> &mut ForestSim {
        &mut self.sim
    }
}

/// Sows the forest of layer `id` as the registry describes it, from
/// `seed`: species, seedlings and full density maps on the GPU.
pub fn sow(
    env: &LayerEnv<'_>,
    registry: &Registry,
    id: &str,
    seed: u64,
) -> Result<GrownForest, ForestError> {
    let knobs = ForestKnobs::new(id);
    let structure = ForestStructure::from(registry, &knobs);
    let species = load_species(env.assets, &structure.species)?;
    let params = sim_params(registry, &knobs, &structure, &species, seed);
    let trees = seedlings(
        structure.initial_trees.min(params.capacity),
        structure.extent(),
        species.len(),
        seed,
    );
    let density = DensityMaps::uniform(structure.map_size, 1.0);
    let sim = env.gpu.scoped(id, || {
        ForestSim::new(
            env.gpu,
            env.assets,
            &params,
            &species,
            &trees,
            density.values(),
        )
    })?;
    Ok(GrownForest {
        sim,
        structure,
        species,
        density,
        rain: None,
    })
}

/// The forest layer.
pub struct ForestLayer {
    core: SimulationCore<GrownForest, ForestRenderer, ForestStructure>,
    /// This frame's camera and look, found in `prepare`.
    look: Option<(CameraUniform, ForestDraw)>,
    /// Its parameters, named once.
    knobs: ForestKnobs,
}

impl ForestLayer {
    /// A forest for id `forest` or `forest.<name>`; it is sown on the first frame.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        Self {
            core: SimulationCore::new(id, &["forest/"], env),
            look: None,
            knobs: ForestKnobs::new(id),
        }
    }

    /// Whether the trees cast into the scene's shadow map: drawn in the
    /// scene, as trees (not the maps).
    fn casts(&self, registry: &Registry) -> bool {
        self.knobs.placement.in_scene(registry) && self.knobs.view(registry) == View::Forest
    }

    /// Reads density files when they change and paints with the brush.
    fn tend(&mut self, env: &LayerEnv<'_>, registry: &Registry) {
        let Some(grown) = self.core.running.as_mut() else {
            return;
        };
        let knobs = &self.knobs;
        let files = knobs.density_maps.target(registry);
        let (read, problems) = grown.density.refresh(env.assets, &files, env.world.exact());
        let origin = format!("{} density", self.core.id);
        for problem in &problems {
            env.errors.report(&origin, problem);
        }
        if read {
            if problems.is_empty() {
                env.errors.clear(&origin);
            }
            grown.sim.set_density(env.gpu, grown.density.values());
        }
        if knobs.brush.get(registry) {
            let at = knobs.brush_at.get(registry);
            let size = grown.structure.map_size as f32;
            let rows = grown.density.paint(
                knobs.brush_map.get(registry) as usize,
                [at[0] * size, at[1] * size],
                knobs.brush_radius.get(registry) / grown.structure.metres_per_pixel,
                knobs.brush_value.get(registry),
            );
            grown
                .sim
                .set_density_rows(env.gpu, grown.density.values(), rows);
        }
        let params = sim_params(
            registry,
            knobs,
            &grown.structure,
            &grown.species,
            self.core.seed,
        );
        grown.sim.set_params(env.gpu, &params);
    }
}

impl Layer for ForestLayer {
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
        forest_params(&self.core.id)
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
        let structure = ForestStructure::from(registry, &self.knobs);
        if self.core.due(&structure, clock.time) {
            let built = sow(env, registry, &self.core.id, self.core.seed);
            self.core.start(env, built);
        }
        self.tend(env, registry);
        if let Some(grown) = self.core.running.as_mut() {
            let paint = self.knobs.paint(registry);
            grown.sim.painter.set(env.gpu, &paint);
            let soak = self.knobs.soak(registry, clock.dt);
            if soak.wetness > 0.0 && grown.rain.is_none() {
                let sim = &grown.sim;
                let rain = env.world.rain(env.gpu);
                let (params, density) = (&sim.params_buffer, &sim.density);
                grown.rain = RainSoak::new(env.gpu, env.assets, params, density, &rain)
                    .inspect_err(|e| env.errors.report(&self.core.id, e))
                    .ok();
            }
            if let Some(rain) = &grown.rain {
                rain.set(env.gpu, &soak);
            }
        }
        let (Some(grown), Some(renderer)) = (&self.core.running, self.core.drawer.as_mut()) else {
            return false;
        };
        if env.world.exact()
            && let Err(error) = renderer.keep_order(env.gpu, env.assets)
        {
            env.errors.report(&self.core.id, error);
        }
        let (camera, draw) = forest_look(registry, &self.knobs, grown, clock, size);
        let impostors = self.knobs.impostors(registry);
        renderer.prepare(env.gpu, size, &camera, &draw, impostors);
        renderer.receive(env.gpu, env.world.shadow(env.gpu));
        self.look = Some((camera, draw));
        false
    }

    fn cast_shadow(
        &self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let (Some(grown), Some(renderer)) = (&self.core.running, &self.core.drawer) else {
            return;
        };
        if self.casts(registry) {
            let map = env.world.shadow(env.gpu);
            renderer.cast(encoder, profiler, &grown.sim, map);
        }
    }

    fn encode(
        &self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let registry = frame.registry;
        let (Some(grown), Some(renderer), Some((_, draw))) =
            (&self.core.running, &self.core.drawer, &self.look)
        else {
            crate::gpu::clear_view(encoder, frame.target);
            return;
        };
        let source = self.knobs.density_source.get(registry);
        if let Some(picture) = frame.inputs.get(&source).filter(|_| !source.is_empty()) {
            let cells = grown.structure.map_size * grown.structure.map_size;
            let painter = &grown.sim.painter;
            painter.encode(env.gpu, encoder, profiler, picture, cells);
        }
        if let Some(rain) = grown.rain.as_ref().filter(|_| self.knobs.raining(registry)) {
            let cells = grown.structure.map_size * grown.structure.map_size;
            rain.encode(encoder, profiler, cells);
        }
        for _ in 0..self.knobs.steps(registry) {
            grown.sim.step(encoder, profiler);
        }
        let view = self.knobs.view(registry);
        let scene = self
            .knobs
            .placement
            .in_scene(registry)
            .then_some(frame.scene_depth);
        let backdrop = self.knobs.backdrop.get(registry);
        renderer.draw(
            env.gpu,
            encoder,
            profiler,
            &grown.sim,
            frame.target,
            scene,
            draw,
            view,
            backdrop,
        );
    }

    fn reseed(&mut self, seed: u64) {
        self.core.reseed(seed);
    }

    fn report(&self, gpu: &Gpu) -> Vec<(String, f64)> {
        let Some(grown) = &self.core.running else {
            return Vec::new();
        };
        let Ok([slots, alive, dead, seeds]) = grown.sim.read_state(gpu) else {
            return Vec::new();
        };
        let drawer = self.core.drawer.as_ref();
        let [near, far, grown_crowns] = drawer
            .and_then(|drawer| drawer.read_drawn(gpu).ok())
            .unwrap_or_default();
        let [impostor_pixels, unclaimed] = drawer
            .and_then(|drawer| drawer.read_impostor_pixels(gpu).ok())
            .unwrap_or_default();
        vec![
            ("trees".into(), f64::from(alive)),
            ("trees_drawn_whole".into(), f64::from(near)),
            ("trees_drawn_as_silhouettes".into(), f64::from(far)),
            ("trees_drawn_grown".into(), f64::from(grown_crowns)),
            ("impostor_pixels".into(), f64::from(impostor_pixels)),
            ("impostor_pixels_unclaimed".into(), f64::from(unclaimed)),
            ("slots".into(), f64::from(slots)),
            ("free_slots".into(), f64::from(dead)),
            ("seeds_last_step".into(), f64::from(seeds)),
            (
                "bytes_per_step".into(),
                grown.sim.bytes_per_step(alive) as f64,
            ),
        ]
    }

    fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool {
        self.core.reload(env, changed);
        false
    }
}

/// The forest kind.
pub const KIND: LayerKind = LayerKind {
    name: "forest",
    create: |id, env| Box::new(ForestLayer::new(id, env)),
    params: |id, _, _| Ok(forest_params(id)),
    bench: bench_workload,
    layouts: &[
        UniformLayout::of::<sim::ForestParams>("ForestParams", "forest/step.wgsl", "ForestParams"),
        UniformLayout::of::<species::SpeciesGpu>("SpeciesGpu", "forest/step.wgsl", "Species"),
        UniformLayout::of::<sim::Tree>("Tree", "forest/step.wgsl", "Tree"),
        UniformLayout::of::<paint::Paint>("Paint", "forest/paint.wgsl", "Paint"),
        UniformLayout::of::<rain::Soak>("Soak", "forest/soak.wgsl", "Soak"),
    ],
};

/// The bench's workload: `size` trees sown over a 1024-pixel map, a
/// square holding one per 50 m² (about the density the default species
/// settle at, so the live count stays near the size), one step a frame.
fn bench_workload(size: u32) -> BenchWorkload {
    let metres = (f64::from(size) * 50.0).sqrt().max(64.0);
    BenchWorkload {
        resolution: [1920, 1080],
        unit: "trees",
        groups: Vec::new(),
        settings: vec![
            "map_size=1024".into(),
            format!("metres_per_pixel={}", metres / 1024.0),
            format!("initial_trees={size}"),
            format!("capacity={}", (size * 2).min(sim::MAX_TREES)),
        ],
    }
}

/// This frame's camera and look of a forest for a target of `size`.
fn forest_look(
    registry: &Registry,
    knobs: &ForestKnobs,
    grown: &GrownForest,
    clock: &Clock,
    size: [u32; 2],
) -> (CameraUniform, ForestDraw) {
    let time = clock.time;
    let extent = grown.structure.extent();
    let tallest = grown
        .species
        .iter()
        .map(|s| s.max_height)
        .fold(1.0, f32::max);
    let camera = knobs
        .placement
        .camera(registry, clock, size)
        .unwrap_or_else(|| {
            knobs.camera.look_scaled(
                registry,
                time,
                Vec3::new(0.0, tallest * 0.3, 0.0),
                extent,
                size,
            )
        });
    let mut colours = [[0.0; 4]; MAX_SPECIES];
    for (slot, s) in colours.iter_mut().zip(&grown.species) {
        *slot = [s.colour[0], s.colour[1], s.colour[2], 1.0];
    }
    let (grown_pixels, grown_cap) = knobs.grown(registry);
    let draw = ForestDraw {
        colours,
        fog_colour: knobs.fog.get(registry),
        extent,
        fog_density: knobs.fog_density.get(registry),
        brightness: knobs.brightness.get(registry),
        view_slice: knobs.view_slice.get(registry) as u32,
        time: (time % 3600.0) as f32,
        wind: knobs.wind.get(registry),
        grown_pixels,
        grown_cap,
        atlas_rows: 1,
        _pad: [0; 3],
    };
    (camera, draw)
}
