//! The `fluid` layer: weakly compressible SPH in 2D and 3D
//! on the GPU — a block of liquid released in a tank, interaction points
//! that push it around (the seed's mouse, movable from Lua, OSC and MIDI),
//! an emitter that pours and a sink that drains, drawn as glowing particles
//! or as a refracting liquid surface.
//!
//! Physical parameters default to values derived from the particle spacing (mass
//! calibrated to the rest density, h = 2 dx, stiffness from a sound speed
//! ten times the fastest flow, a CFL-limited step); the knobs scale them,
//! so any setting in range still forms a liquid.

pub mod draw;
mod glow;
pub mod knobs;
pub mod lists;
pub mod physics;
pub mod reference;
pub mod scene;
pub mod sim;
pub mod validate;
pub mod white_water;

use draw::FluidRenderer;
use knobs::{FluidKnobs, TankKnobs};
use scene::StartingState;
use sim::{FluidSim, Solver};

use crate::base::ChangedFile;
use crate::base::clock::Clock;
use crate::engine::bodies;
use crate::engine::camera::camera_params;
use crate::engine::simulation::{self as sim_core, SimulationCore};
use crate::engine::world::RAIN_SIDE;
use crate::engine::{BenchWorkload, Layer, LayerEnv, LayerFrame, LayerKind, LayerSwitches};
use crate::gpu::UniformLayout;
use crate::gpu::{BuildError, Gpu, GpuProfiler};
use crate::params::{ParamSpec, Registry, Value};

/// The layer's parameters.
pub fn fluid_params(id: &str) -> Vec<ParamSpec> {
    let p = |name: &str| format!("{id}.{name}");
    let scale = |name: &str, description: &str| {
        ParamSpec::float(p(name), 1.0, 0.05, 20.0)
            .with_smoothing(0.2)
            .with_description(description.to_string())
    };
    let mut specs = vec![
        ParamSpec::enumeration(p("solver"), &Solver::NAMES, 0)
            .structural()
            .with_description(
                "Weakly compressible SPH (steps bounded by the speed of sound) or Position Based Fluids (steps bounded by the flow: hundreds of thousands of particles in real time) (rebuilds)",
            ),
        ParamSpec::int(p("solver_iterations"), 5, 1, sim::MAX_ITERATIONS as i32)
            .costly()
            .with_description("Position Based Fluids: density constraint iterations a substep (more: stiffer, less compressed water)"),
        ParamSpec::float(p("vorticity"), 1.0, 0.0, 20.0)
            .with_smoothing(0.2)
            .with_description("Position Based Fluids: vorticity confinement, giving back the swirls a large step damps"),
        ParamSpec::enumeration(p("dimensions"), &["3d", "2d"], 0)
            .with_description("3D tank or 2D slice (rebuilds)"),
        ParamSpec::int(p("count"), 40_000, 100, 16_000_000).structural()
            .with_description("Particles (rebuilds); with auto_count, where the fit starts and what renders, benches and tests run"),
        ParamSpec::bool(p("auto_count"), false)
            .with_description("Fit the count to the GPU while the show plays live: the largest that holds 60 fps with everything else the preset draws, measured after each rebuild"),
        ParamSpec::vec3(p("container"), [1.6, 1.0, 0.8], 0.05, 1000.0)
            .with_unit("m")
            .with_description("Tank size (rebuilds)"),
        ParamSpec::enumeration(p("fill"), &["dam", "pool"], 0)
            .structural()
            .with_description("How the water starts: a dam, a block at the tank's left end that breaks, or a pool over the whole floor (rebuilds)"),
        ParamSpec::float(p("depth"), 0.6, 0.02, 0.95)
            .structural()
            .with_description("How deep the water starts, a share of the tank's height; the flow it is made for, and so the time step, follows from it (rebuilds)"),
        scale(
            "smoothing_length",
            "Smoothing length h, relative to 2 particle spacings",
        )
        .costly(),
        scale(
            "stiffness",
            "Pressure stiffness B, relative to the value from ten times the fastest flow",
        ),
        ParamSpec::float(p("rest_density"), 1000.0, 10.0, 10_000.0)
            .with_unit("kg/m^3")
            .with_description("Rest density rho0"),
        scale(
            "mass",
            "Particle mass, relative to the one that gives rho0 at rest",
        ),
        scale(
            "viscosity",
            "Viscosity, relative to artificial viscosity alpha = 0.1 (Position Based Fluids: XSPH c = 0.1)",
        ),
        scale(
            "time_step",
            "Time step, relative to the CFL limit 0.25 h / c0",
        ),
        ParamSpec::bool(p("cfl"), true)
            .with_description("Keep the time step within the CFL limit whatever time_step says"),
        scale(
            "wall_stiffness",
            "Penalty wall stiffness, relative to c0^2 / (h/2)",
        ),
        ParamSpec::float(p("speed"), 1.0, 0.0, 4.0)
            .with_smoothing(0.3)
            .with_description("Time scale: 1 is real time, 0 freezes"),
        ParamSpec::int(p("iterations"), 64, 1, 512).costly().with_description(
            "Most substeps per frame (real time needs frame time / step; past this it slows down)",
        ),
        ParamSpec::vec3(p("gravity"), [0.0, -9.81, 0.0], -200.0, 200.0)
            .with_smoothing(0.3)
            .with_unit("m/s^2")
            .with_description("Gravity vector: tilt it to slosh the tank"),
    ];
    for k in 1..=2 {
        specs.push(
            ParamSpec::vec3(p(&format!("point{k}")), [0.8, 0.2, 0.4], -1000.0, 1000.0)
                .with_smoothing(0.05)
                .with_description("Interaction point: pushes the liquid away"),
        );
        specs.push(
            ParamSpec::float(p(&format!("point{k}_radius")), 0.0, 0.0, 100.0)
                .with_description("Its reach; 0 is off"),
        );
        specs.push(
            ParamSpec::float(p(&format!("point{k}_strength")), 400.0, 0.0, 100_000.0)
                .with_description("Its push"),
        );
    }
    specs.push(
        ParamSpec::float(p("pointer_radius"), 0.2, 0.0, 100.0)
            .with_unit("m")
            .with_description(
                "While the pointer presses (master.pointer: the mouse in pointer mode, key m), interaction point 2 follows it with this reach; 0 ignores the pointer",
            ),
    );
    specs.extend([
        ParamSpec::vec3(p("emitter"), [0.2, 0.9, 0.4], -1000.0, 1000.0)
            .with_description("Where the emitter pours"),
        ParamSpec::float(p("emitter_radius"), 0.0, 0.0, 100.0)
            .with_description("How wide the emitter's square is (it pours from one height, a smoothing length deep); 0 is off"),
        ParamSpec::vec3(p("emitter_velocity"), [1.0, -1.0, 0.0], -100.0, 100.0)
            .with_description("Velocity of poured liquid"),
        ParamSpec::float(p("emitter_rate"), 50.0, 0.0, 10_000.0)
            .with_unit("1/s")
            .with_description("How fast drained particles pour back: the share of those waiting poured a second (50: each waits 20 ms on average)"),
        // Both as far and as large as a sphere far below the floor whose
        // cap drains a whole floor of tens of metres (the rain preset's).
        ParamSpec::vec3(p("sink"), [1.5, 0.05, 0.4], -10_000.0, 10_000.0)
            .with_description("Where the sink drains"),
        ParamSpec::float(p("sink_radius"), 0.0, 0.0, 10_000.0).with_description("Sink size; 0 is off"),
        ParamSpec::bool(p("bodies"), true).with_description(
            "In the shared scene, the water meets the bodies other layers there move (the skinned figure's limbs)",
        ),
        ParamSpec::bool(p("branches"), true).with_description(
            "In the shared scene, the water meets the branches a colony there grew (its oldest 4,096, standing)",
        ),
        ParamSpec::float(p("body_bounce"), 0.2, 0.0, 1.0)
            .with_description("How much of the water's speed into a body bounces back"),
        ParamSpec::bool(p("rain"), true).with_description(
            "Water falling onto the tank's floor is counted as rain for a forest (its floor spans the forest's map)",
        ),
        ParamSpec::enumeration(p("render"), &["surface", "particles"], 0)
            .with_description("Liquid surface or glowing particles"),
        ParamSpec::enumeration(p("colour_by"), &["speed", "density"], 0)
            .with_description("Particle colour"),
        ParamSpec::colour(p("colour"), [0.25, 0.55, 0.9, 1.0])
            .with_description("Liquid colour (alpha: surface opacity)"),
        ParamSpec::float(p("brightness"), 1.0, 0.0, 50.0).with_description("Particle glow"),
        ParamSpec::float(p("absorption"), 5.0, 0.0, 100.0)
            .with_unit("1/m")
            .with_smoothing(0.1)
            .with_description("How fast the colours the liquid lacks fade with its depth"),
        ParamSpec::float(p("foam"), 1.0, 0.0, 4.0)
            .with_smoothing(0.1)
            .with_description("Brightness of white water where the liquid breaks and splashes"),
        ParamSpec::int(p("white_water"), 0, 0, 4_000_000)
            .structural()
            .with_description("Spray, foam and bubbles: how many white particles the water keeps, thrown up where it breaks or traps air and drawn by the surface look (0: none; rebuilds)"),
        ParamSpec::float(p("spray"), 1.0, 0.0, 10.0)
            .with_smoothing(0.2)
            .with_description("How much white water breaking water throws up"),
        ParamSpec::float(p("foam_life"), 4.0, 0.2, 30.0)
            .with_unit("s")
            .with_description("How long white water lives, on average"),
        ParamSpec::float(p("particle_size"), 1.6, 0.1, 10.0)
            .with_description("Drawn size, in particle spacings"),
        ParamSpec::float(p("streak"), 0.0, 0.0, 0.5)
            .with_unit("s")
            .with_smoothing(0.2)
            .with_description("Particles look: each glow drawn along this much of its motion, so falling water reads as rain"),
    ]);
    specs.extend(camera_params(id, 2.6, 0.0));
    specs.extend(crate::engine::world::placement_params(id));
    specs
}

/// What the simulation was built from.
#[derive(Debug, Clone, PartialEq)]
struct FluidStructure {
    solver: Solver,
    dimensions: u32,
    count: u32,
    container: [f32; 3],
    pool: bool,
    depth: f32,
    white_water: u32,
}

impl FluidStructure {
    fn from(registry: &Registry, tank: &TankKnobs) -> Self {
        Self {
            solver: tank.solver(registry),
            dimensions: tank.dimensions(registry),
            count: tank.count(registry),
            container: tank.container(registry),
            pool: tank.pool(registry),
            depth: tank.depth(registry),
            white_water: tank.white_water(registry),
        }
    }

    /// A block filling the tank's left 40% (a dam) or its whole floor (a
    /// pool) up to `depth` of its height. The fastest flow it is made for
    /// is the speed water gains falling from the tank's top for the weakly
    /// compressible solver, whose sound speed must outrun anything; the
    /// large-step solver's, whose step follows the flow, is the dam's
    /// (sqrt(2 g depth)), so a shallow pool steps as far as its waves
    /// allow, and faster drops (a pour from above) take several
    /// spacings a substep until they meet the water.
    fn scene(&self, seed: u64) -> StartingState {
        let c = self.container;
        let d = self.dimensions;
        let length = if self.pool { c[0] } else { c[0] * 0.4 };
        let block = [length, c[1] * self.depth, if d == 2 { 0.0 } else { c[2] }];
        let volume: f32 = block.iter().take(d as usize).product();
        let dx = (volume / self.count as f32).powf(1.0 / d as f32);
        let across = ((block[0] / dx).round() as u32).max(1);
        let height = match self.solver {
            Solver::Wcsph => c[1],
            Solver::Pbf => block[1],
        };
        let fastest = (2.0 * 9.81 * height).sqrt();
        scene::block(d, c, [0.0; 3], block, across, fastest, 9.81, 0.05, seed)
            .solved_by(self.solver)
    }
}

/// A running fluid.
struct Flowing {
    sim: FluidSim,
    structure: FluidStructure,
    /// The derived parameters the knobs scale.
    base: sim::FluidParams,
    dx: f32,
}

impl sim_core::Running for Flowing {
    type Sim = FluidSim;
    fn sim(&self) -> &FluidSim {
        &self.sim
    }
    fn sim_mut(&mut self) -> &mut FluidSim {
        &mut self.sim
    }
}

/// The fluid layer.
pub struct FluidLayer {
    core: SimulationCore<Flowing, FluidRenderer, FluidStructure>,
    /// Substeps this frame, found in `prepare`.
    substeps: u32,
    /// Its parameters, named once.
    knobs: FluidKnobs,
}

impl FluidLayer {
    /// A fluid for id `fluid` or `fluid.<name>`; it fills on the first frame.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        Self {
            core: SimulationCore::new(id, &["fluid/"], env),
            substeps: 0,
            knobs: FluidKnobs::new(id),
        }
    }

    /// Fills a tank from the registry's structure.
    fn build(&self, env: &LayerEnv<'_>, registry: &Registry) -> Result<Flowing, BuildError> {
        let id = &self.core.id;
        let structure = FluidStructure::from(registry, &self.knobs.tank);
        let what = format!("{id}.count {}: particles", structure.count);
        env.gpu
            .check_storage(&what, u64::from(structure.count) * 16)?;
        let scene = structure.scene(self.core.seed);
        let sim = env.gpu.scoped(id, || {
            let mut sim = FluidSim::new(
                env.gpu,
                env.assets,
                &scene.positions,
                &scene.velocities,
                &scene.params,
                structure.solver,
                &env.world.rain(env.gpu),
                &env.world.branches(env.gpu),
            )?;
            if env.world.exact() {
                sim.keep_order(env.gpu, env.assets)?;
            }
            sim.throw_white_water(env.gpu, env.assets, structure.white_water)?;
            Ok::<_, BuildError>(sim)
        })?;
        Ok(Flowing {
            sim,
            structure,
            base: scene.params,
            dx: scene.dx,
        })
    }

    fn maintain(&mut self, env: &LayerEnv<'_>, registry: &Registry, time: f64) {
        if self
            .core
            .due(&FluidStructure::from(registry, &self.knobs.tank), time)
        {
            let built = self.build(env, registry);
            self.core.start(env, built);
        }
    }
}

impl Layer for FluidLayer {
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
        fluid_params(&self.core.id)
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
        self.maintain(env, registry, clock.time);
        let (Some(running), knobs) = (&self.core.running, &self.knobs) else {
            return false;
        };
        let solver = running.structure.solver;
        let mut params = knobs.substep(registry, &running.base, solver, self.core.seed);
        running
            .sim
            .set_iterations(knobs.solver_iterations(registry));
        let c = running.structure.container;
        let centre = glam::Vec3::new(c[0] * 0.5, c[1] * 0.4, c[2] * 0.5);
        // In the scene the tank's floor centre stands at the layer's origin.
        let floor_centre =
            glam::Mat4::from_translation(glam::Vec3::new(-c[0] * 0.5, 0.0, -c[2] * 0.5));
        let to_scene = knobs.placement.model(registry) * floor_centre;
        let camera = match knobs.placement.in_scene(registry) {
            true => knobs.scene.look(registry, clock, size).placed(to_scene),
            false => knobs.camera.look(registry, clock.time, centre, size),
        };
        let reach = knobs.pointer_radius(registry);
        if let Some(point) = pointer_point(registry, &camera, centre, c, reach) {
            params.point1 = point;
        }
        running.sim.set_params(env.gpu, &params);
        // Bodies share the water's space only in the scene: a tank and a
        // figure each on their own camera do not stand anywhere together.
        let capsules = if knobs.bodies(registry) && knobs.placement.in_scene(registry) {
            env.world.bodies()
        } else {
            Vec::new()
        };
        let flat = params.dimensions == 2;
        let (bounce, margin) = (knobs.body_bounce(registry), running.dx * 0.5);
        let rain = if knobs.rain(registry) { RAIN_SIDE } else { 0 };
        let in_scene = knobs.placement.in_scene(registry);
        let branches = knobs.branches(registry) && in_scene && env.world.has_branches();
        let block = bodies::block(&capsules, to_scene, flat, bounce, margin, rain, branches);
        running.sim.set_bodies(env.gpu, &block);
        self.substeps = knobs.substeps(registry, clock.dt, params.dt);
        if let Some(white_water) = &running.sim.white_water {
            let simulated = self.substeps as f32 * params.dt;
            let (spray, life) = knobs.white_water(registry);
            white_water.set_step(env.gpu, simulated, spray, life);
        }
        let look = knobs.look(registry, running.dx, params.rest_density);
        if let Some(renderer) = self.core.drawer.as_mut() {
            let (count, in_scene) = (running.sim.count(), knobs.placement.in_scene(registry));
            renderer.prepare(env.gpu, size, &camera, &look, count, in_scene);
        }
        false
    }

    fn encode(
        &self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let (Some(running), Some(renderer)) = (&self.core.running, &self.core.drawer) else {
            crate::gpu::clear_view(encoder, frame.target);
            return;
        };
        running.sim.steps(encoder, profiler, self.substeps);
        if let Some(white_water) = running.sim.white_water.as_ref()
            && self.substeps > 0
        {
            white_water.record(encoder, profiler);
        }
        let style = self.knobs.style(frame.registry);
        renderer.draw(
            env.gpu,
            encoder,
            profiler,
            &running.sim,
            frame.target,
            frame.inputs.below(),
            frame.scene_depth,
            self.knobs.placement.in_scene(frame.registry),
            style,
        );
    }

    fn report(&self, gpu: &Gpu) -> Vec<(String, f64)> {
        let Some(running) = &self.core.running else {
            return Vec::new();
        };
        let neighbours = mean_neighbours(gpu, &running.sim, running.base.h).unwrap_or(0.0);
        let sim = &running.sim;
        let count = |read: Result<u32, _>| f64::from(read.unwrap_or(0));
        vec![
            ("particles".into(), f64::from(sim.count())),
            ("mean_neighbours".into(), neighbours),
            ("substeps".into(), count(sim.substeps_run(gpu))),
            ("list_rebuilds".into(), count(sim.list_rebuilds(gpu))),
            (
                "bytes_per_step".into(),
                sim.bytes_per_step(neighbours) as f64,
            ),
        ]
    }

    fn sampled(&self, gpu: &Gpu) -> Vec<(String, f64)> {
        let Some(running) = &self.core.running else {
            return Vec::new();
        };
        let Ok(water) = running.sim.compression(gpu) else {
            return Vec::new();
        };
        let (walked, walkers) = running.sim.walked_unlisted(gpu).unwrap_or((0, 1));
        let white = (running.sim.white_water.as_ref()).and_then(|white| white.live(gpu).ok());
        let mut sampled = vec![
            ("live_particles".into(), water.live as f64),
            (
                "walked_unlisted_pct".into(),
                walked as f64 / walkers.max(1) as f64 * 100.0,
            ),
            ("substeps_per_frame".into(), f64::from(self.substeps)),
            ("density_error_mean_pct".into(), water.mean * 100.0),
            ("density_error_max_pct".into(), water.max * 100.0),
        ];
        if let Some(live) = white {
            sampled.push(("white_particles".into(), live as f64));
        }
        sampled
    }

    fn reseed(&mut self, seed: u64) {
        self.core.reseed(seed);
    }

    fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool {
        self.core.reload(env, changed);
        false
    }
}

/// Mean neighbours within h over a sample of particles (bench only: reads
/// back and sorts on the CPU).
fn mean_neighbours(gpu: &Gpu, sim: &FluidSim, h: f32) -> Result<f64, BuildError> {
    let (positions, _) = sim.read_particles(gpu)?;
    let cell = |p: &[f32; 4]| [0, 1, 2].map(|a| (p[a] / h).floor() as i32);
    let mut keyed: Vec<([i32; 3], usize)> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (cell(p), i))
        .collect();
    keyed.sort_unstable();
    let step = (positions.len() / 2000).max(1);
    let mut total = 0usize;
    let mut sampled = 0usize;
    for p in positions.iter().step_by(step).filter(|p| p[3] != 0.0) {
        let home = cell(p);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let key = [home[0] + dx, home[1] + dy, home[2] + dz];
                    let start = keyed.partition_point(|(k, _)| *k < key);
                    total += keyed[start..]
                        .iter()
                        .take_while(|(k, _)| *k == key)
                        .filter(|(_, j)| {
                            let q = positions[*j];
                            let d2: f32 = (0..3).map(|a| (q[a] - p[a]).powi(2)).sum();
                            d2 > 0.0 && d2 < h * h
                        })
                        .count();
                }
            }
        }
        sampled += 1;
    }
    Ok(total as f64 / sampled.max(1) as f64)
}

/// The fluid kind: SPH.
pub const KIND: LayerKind = LayerKind {
    name: "fluid",
    create: |id, env| Box::new(FluidLayer::new(id, env)),
    params: |id, _, _| Ok(fluid_params(id)),
    // A 3D liquid at rest density, h = 2 dx, one substep per frame.
    bench: |size| BenchWorkload {
        resolution: [1920, 1080],
        unit: "particles",
        groups: Vec::new(),
        settings: vec![
            format!("count={size}"),
            "dimensions=\"3d\"".to_string(),
            "iterations=1".to_string(),
            "auto_rotate=0.0".to_string(),
        ],
    },
    layouts: &[
        UniformLayout::of::<sim::FluidParams>("FluidParams", "fluid/force.wgsl", "FluidParams"),
        UniformLayout::of::<draw::ParticleDraw>(
            "ParticleDraw",
            "fluid/particle_look.wgsl",
            "ParticleDraw",
        ),
        UniformLayout::of::<draw::SplatUniform>("SplatUniform", "fluid/splat.wgsl", "Splat"),
        UniformLayout::of::<white_water::WhiteWaterParams>(
            "WhiteWaterParams",
            "fluid/white_water.wgsl",
            "WhiteWater",
        ),
        UniformLayout::of::<draw::SurfaceUniform>(
            "SurfaceUniform",
            "fluid/surface.wgsl",
            "Surface",
        ),
    ],
};

/// Where interaction point 2 goes while the pointer presses: under it, on
/// the plane through the tank's centre facing the camera, kept inside the
/// tank, reaching `reach` (as the book's demo drags its interaction point
/// with the mouse).
fn pointer_point(
    registry: &Registry,
    camera: &crate::engine::camera::CameraUniform,
    centre: glam::Vec3,
    container: [f32; 3],
    reach: f32,
) -> Option<[f32; 4]> {
    let Some(Value::Vec3([x, y, pressed])) = registry.get("master.pointer") else {
        return None;
    };
    if *pressed < 0.5 || reach <= 0.0 {
        return None;
    }
    let point = crate::engine::camera::point_under(camera, [*x, *y], centre)
        .clamp(glam::Vec3::ZERO, glam::Vec3::from(container));
    Some([point.x, point.y, point.z, reach])
}
