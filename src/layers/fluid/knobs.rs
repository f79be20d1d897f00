//! The fluid's parameters that its frames read, as typed handles named
//! once: what the tank is built from, the knobs that scale each substep's
//! physics, the interaction points, emitter and sink, how many substeps a
//! frame runs, and how the liquid is drawn.

use super::draw::{Look, ParticleDraw};
use super::sim::{FluidParams, Solver};
use crate::engine::camera::OrbitCamera;
use crate::engine::world::{Placement, SceneCamera};
use crate::params::{Handle, ParamSpec, Registry};

/// What a tank is built from, read from the targets (a change rebuilds).
pub struct TankKnobs {
    solver: Handle<usize>,
    dimensions: Handle<usize>,
    count: Handle<i32>,
    container: Handle<[f32; 3]>,
    fill: Handle<usize>,
    depth: Handle<f32>,
    white_water: Handle<i32>,
}

impl TankKnobs {
    /// The solver it steps with.
    pub fn solver(&self, registry: &Registry) -> Solver {
        Solver::NAMES
            .get(self.solver.target(registry))
            .and_then(|name| Solver::named(name))
            .unwrap_or_default()
    }

    /// 2 or 3.
    pub fn dimensions(&self, registry: &Registry) -> u32 {
        if self.dimensions.target(registry) == 1 {
            2
        } else {
            3
        }
    }

    /// Particles, at least one.
    pub fn count(&self, registry: &Registry) -> u32 {
        self.count.count(registry)
    }

    /// The tank's size.
    pub fn container(&self, registry: &Registry) -> [f32; 3] {
        self.container.target(registry)
    }

    /// Whether the water starts as a pool over the whole floor (else as a
    /// dam, a block at the tank's left end).
    pub fn pool(&self, registry: &Registry) -> bool {
        self.fill.target(registry) == 1
    }

    /// How deep the water starts, a share of the tank's height.
    pub fn depth(&self, registry: &Registry) -> f32 {
        self.depth.target(registry).clamp(0.02, 0.95)
    }

    /// White particles the water keeps (0: none).
    pub fn white_water(&self, registry: &Registry) -> u32 {
        self.white_water.target(registry).max(0) as u32
    }
}

/// An interaction point, the emitter or the sink: where, and how far it
/// reaches.
struct Place {
    at: Handle<[f32; 3]>,
    radius: Handle<f32>,
}

impl Place {
    fn new(id: &str, at: &str, radius: &str) -> Self {
        Self {
            at: Handle::new(id, at),
            radius: Handle::new(id, radius),
        }
    }

    fn get(&self, registry: &Registry) -> [f32; 4] {
        let [x, y, z] = self.at.get(registry);
        [x, y, z, self.radius.get(registry)]
    }
}

/// Every parameter the fluid layer's frames read.
pub struct FluidKnobs {
    /// What its tank is built from.
    pub tank: TankKnobs,
    /// Its orbit camera.
    pub camera: OrbitCamera,
    smoothing_length: Handle<f32>,
    rest_density: Handle<f32>,
    mass: Handle<f32>,
    stiffness: Handle<f32>,
    viscosity: Handle<f32>,
    vorticity: Handle<f32>,
    solver_iterations: Handle<f32>,
    wall_stiffness: Handle<f32>,
    time_step: Handle<f32>,
    cfl: Handle<bool>,
    gravity: Handle<[f32; 3]>,
    points: [Place; 2],
    strengths: [Handle<f32>; 2],
    emitter: Place,
    emitter_velocity: Handle<[f32; 3]>,
    emitter_rate: Handle<f32>,
    sink: Place,
    pointer_radius: Handle<f32>,
    speed: Handle<f32>,
    iterations: Handle<f32>,
    render: Handle<usize>,
    colour: Handle<[f32; 4]>,
    colour_by: Handle<usize>,
    particle_size: Handle<f32>,
    streak: Handle<f32>,
    brightness: Handle<f32>,
    absorption: Handle<f32>,
    foam: Handle<f32>,
    spray: Handle<f32>,
    foam_life: Handle<f32>,
    bodies: Handle<bool>,
    branches: Handle<bool>,
    body_bounce: Handle<f32>,
    rain: Handle<bool>,
    /// Its place in the shared scene (the tank's floor centre at the
    /// layer's origin) and the scene's camera.
    pub placement: Placement,
    /// The scene's camera.
    pub scene: SceneCamera,
}

impl FluidKnobs {
    /// The handles of layer `id`.
    pub fn new(id: &str) -> Self {
        let point = |k: u32| Place::new(id, &format!("point{k}"), &format!("point{k}_radius"));
        let strength = |k: u32| Handle::new(id, &format!("point{k}_strength"));
        Self {
            tank: TankKnobs {
                solver: Handle::new(id, "solver"),
                dimensions: Handle::new(id, "dimensions"),
                count: Handle::new(id, "count"),
                container: Handle::new(id, "container"),
                fill: Handle::new(id, "fill"),
                depth: Handle::new(id, "depth"),
                white_water: Handle::new(id, "white_water"),
            },
            camera: OrbitCamera::new(id),
            smoothing_length: Handle::new(id, "smoothing_length"),
            rest_density: Handle::new(id, "rest_density"),
            mass: Handle::new(id, "mass"),
            stiffness: Handle::new(id, "stiffness"),
            viscosity: Handle::new(id, "viscosity"),
            vorticity: Handle::new(id, "vorticity"),
            solver_iterations: Handle::new(id, "solver_iterations"),
            wall_stiffness: Handle::new(id, "wall_stiffness"),
            time_step: Handle::new(id, "time_step"),
            cfl: Handle::new(id, "cfl"),
            gravity: Handle::new(id, "gravity"),
            points: [point(1), point(2)],
            strengths: [strength(1), strength(2)],
            emitter: Place::new(id, "emitter", "emitter_radius"),
            emitter_velocity: Handle::new(id, "emitter_velocity"),
            emitter_rate: Handle::new(id, "emitter_rate"),
            sink: Place::new(id, "sink", "sink_radius"),
            pointer_radius: Handle::new(id, "pointer_radius"),
            speed: Handle::new(id, "speed"),
            iterations: Handle::new(id, "iterations"),
            render: Handle::new(id, "render"),
            colour: Handle::new(id, "colour"),
            colour_by: Handle::new(id, "colour_by"),
            particle_size: Handle::new(id, "particle_size"),
            streak: Handle::new(id, "streak"),
            brightness: Handle::new(id, "brightness"),
            absorption: Handle::new(id, "absorption"),
            foam: Handle::new(id, "foam"),
            spray: Handle::new(id, "spray"),
            foam_life: Handle::new(id, "foam_life"),
            bodies: Handle::new(id, "bodies"),
            branches: Handle::new(id, "branches"),
            body_bounce: Handle::new(id, "body_bounce"),
            rain: Handle::new(id, "rain"),
            placement: Placement::new(id),
            scene: SceneCamera::default(),
        }
    }

    /// The substep parameters: the derived `base` scaled by the knobs,
    /// the time step held within the CFL limit when asked (the speed of
    /// sound's for the weakly compressible solver; the large-step one's
    /// `base` step is already the flow's).
    pub fn substep(
        &self,
        registry: &Registry,
        base: &FluidParams,
        solver: Solver,
        seed: u64,
    ) -> FluidParams {
        let p = |handle: &Handle<f32>| handle.get(registry);
        let mut params = *base;
        params.h = base.h * p(&self.smoothing_length);
        params.rest_density = p(&self.rest_density);
        let density_ratio = params.rest_density / base.rest_density;
        params.mass = base.mass * p(&self.mass) * density_ratio;
        params.stiffness = base.stiffness * p(&self.stiffness) * density_ratio;
        params.viscosity = base.viscosity * p(&self.viscosity) * density_ratio;
        params.wall_stiffness = base.wall_stiffness * p(&self.wall_stiffness);
        params.gravity = self.gravity.get(registry);
        let sound = (7.0 * params.stiffness / params.rest_density)
            .sqrt()
            .max(1e-3);
        params.dt = base.dt * p(&self.time_step);
        match solver {
            Solver::Wcsph if self.cfl.get(registry) => {
                params.dt = params.dt.min(0.25 * params.h / sound);
            }
            Solver::Pbf if self.cfl.get(registry) => params.dt = params.dt.min(base.dt),
            _ => {}
        }
        params.pbf[2] = base.pbf[2] * p(&self.viscosity);
        params.pbf[3] = base.pbf[3] * p(&self.vorticity);
        params.point0 = self.points[0].get(registry);
        params.point1 = self.points[1].get(registry);
        params.push = [p(&self.strengths[0]), p(&self.strengths[1]), 0.0, 0.0];
        params.emitter = self.emitter.get(registry);
        let [vx, vy, vz] = self.emitter_velocity.get(registry);
        // The rate is a share of the waiting water a second of show time, so
        // a shower pours the same whatever the solver's substeps.
        let poured = 1.0 - (-p(&self.emitter_rate) * params.dt).exp();
        params.emitter_velocity = [vx, vy, vz, poured];
        params.sink = self.sink.get(registry);
        // The integrate stage mixes in the GPU's own substep count.
        params.seed = seed as u32;
        params
    }

    /// The large-step solver's iterations a substep.
    pub fn solver_iterations(&self, registry: &Registry) -> u32 {
        self.solver_iterations.get(registry).max(1.0) as u32
    }

    /// How much white water breaking water throws up, and how long it
    /// lives (seconds).
    pub fn white_water(&self, registry: &Registry) -> (f32, f32) {
        (self.spray.get(registry), self.foam_life.get(registry))
    }

    /// Whether the water meets the world's bodies.
    pub fn bodies(&self, registry: &Registry) -> bool {
        self.bodies.get(registry)
    }

    /// Whether the water meets the world's branches.
    pub fn branches(&self, registry: &Registry) -> bool {
        self.branches.get(registry)
    }

    /// How much of the water's speed into a body bounces back.
    pub fn body_bounce(&self, registry: &Registry) -> f32 {
        self.body_bounce.get(registry)
    }

    /// Whether water landing on the floor is counted as rain.
    pub fn rain(&self, registry: &Registry) -> bool {
        self.rain.get(registry)
    }

    /// The reach of the mouse's interaction point.
    pub fn pointer_radius(&self, registry: &Registry) -> f32 {
        self.pointer_radius.get(registry)
    }

    /// As many substeps of `step` seconds as keep the liquid in real time
    /// over a frame of `dt` (the seed's "neither explodes nor runs in slow
    /// motion"), at most `iterations`.
    pub fn substeps(&self, registry: &Registry, dt: f32, step: f32) -> u32 {
        let wanted = f64::from(dt) * f64::from(self.speed.get(registry));
        let most = self.iterations.get(registry).max(1.0) as u32;
        ((wanted / f64::from(step)).round() as u32).min(most)
    }

    /// The drawing's uniforms for particles `dx` apart.
    pub fn look(&self, registry: &Registry, dx: f32, rest_density: f32) -> ParticleDraw {
        ParticleDraw {
            colour: self.colour.get(registry),
            radius: dx * 0.6 * self.particle_size.get(registry),
            colour_by: self.colour_by.get(registry) as u32,
            brightness: self.brightness.get(registry),
            rest_density,
            absorption: self.absorption.get(registry),
            foam: self.foam.get(registry),
            streak: self.streak.get(registry),
            _pad: 0.0,
        }
    }

    /// Surface or particles.
    pub fn style(&self, registry: &Registry) -> Look {
        if self.render.get(registry) == 1 {
            Look::Particles
        } else {
            Look::Surface
        }
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        let places = [&self.points[0], &self.points[1], &self.emitter, &self.sink];
        let mut wrong = crate::check_handles!(specs; self.tank.solver, self.tank.dimensions, self.tank.count,
            self.tank.container, self.smoothing_length, self.rest_density, self.mass,
            self.stiffness, self.viscosity, self.vorticity, self.solver_iterations, self.wall_stiffness, self.time_step, self.cfl,
            self.gravity, self.strengths[0], self.strengths[1], self.emitter_velocity,
            self.emitter_rate, self.pointer_radius, self.speed, self.iterations, self.render,
            self.colour, self.colour_by, self.particle_size, self.streak, self.brightness, self.absorption,
            self.foam, self.spray, self.foam_life, self.tank.white_water, self.bodies, self.branches, self.body_bounce, self.rain);
        for place in places {
            wrong.extend(crate::check_handles!(specs; place.at, place.radius));
        }
        wrong.extend(self.camera.check(specs));
        wrong.extend(self.placement.check(specs));
        wrong
    }
}
