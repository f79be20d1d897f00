//! The colony's parameters that its frames read, as typed handles named
//! once ([`Handle`]): how it grows ([`GrowthKnobs`]), how its branches are
//! drawn and regrown ([`BranchKnobs`]), and what it is built from
//! ([`ColonyStructureKnobs`]). The skinned layer grows and draws a colony too
//! and reads its own parameters of these names through the first two.

use super::draw::{DrawParams, Style};
use super::sim::StepParams;
use super::spacing;
use crate::params::{Handle, ParamSpec, Registry};

/// How a colony grows: distances, speed and masses.
#[derive(Debug, Clone)]
pub struct GrowthKnobs {
    unit_distance: Handle<f32>,
    influence: Handle<f32>,
    growth: Handle<f32>,
    kill: Handle<f32>,
    speed: Handle<f32>,
    mass_min: Handle<f32>,
    mass_max: Handle<f32>,
}

impl GrowthKnobs {
    /// The growth parameters of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            unit_distance: Handle::new(id, "unit_distance"),
            influence: Handle::new(id, "influence_distance"),
            growth: Handle::new(id, "growth_distance"),
            kill: Handle::new(id, "kill_distance"),
            speed: Handle::new(id, "growth_speed"),
            mass_min: Handle::new(id, "mass_min"),
            mass_max: Handle::new(id, "mass_max"),
        }
    }

    /// One distance unit for attractions whose mean nearest-neighbour
    /// distance is `spacing`: `unit_distance` when set, else that spacing
    /// times [`spacing::UNIT_PER_SPACING`].
    pub fn unit(&self, registry: &Registry, spacing: Option<f32>) -> f32 {
        let set = self.unit_distance.get(registry);
        if set > 0.0 {
            return set;
        }
        spacing.map_or(0.35, |s| s * spacing::UNIT_PER_SPACING)
    }

    /// The step parameters now, for `dt` seconds per iteration, for
    /// `attraction_count` points and `capacity` nodes, with one distance
    /// unit of `unit` world lengths.
    pub fn step_params(
        &self,
        registry: &Registry,
        dt: f32,
        seed: u64,
        attraction_count: u32,
        capacity: u32,
        unit: f32,
    ) -> StepParams {
        let p = |handle: &Handle<f32>| handle.get(registry);
        let (mass_min, mass_max) = (p(&self.mass_min), p(&self.mass_max));
        let influence = p(&self.influence) * unit;
        StepParams::new(
            influence,
            p(&self.growth) * unit,
            (p(&self.kill) * unit).min(influence * 0.999),
            dt * p(&self.speed),
            (mass_min.min(mass_max), mass_max.max(mass_min)),
            seed as u32,
            attraction_count,
            capacity,
        )
    }

    /// The time step that brings even the slowest segment to full length
    /// in one iteration.
    pub fn full_step(&self, registry: &Registry) -> f32 {
        let slowest = self.mass_min.get(registry).min(self.mass_max.get(registry));
        1.0 / (self.speed.get(registry) * slowest).max(1e-3)
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.unit_distance, self.influence, self.growth,
            self.kill, self.speed, self.mass_min, self.mass_max)
    }
}

/// How a colony's branches are drawn, stepped and regrown.
#[derive(Debug, Clone)]
pub struct BranchKnobs {
    steps_per_frame: Handle<f32>,
    render: Handle<usize>,
    width: Handle<f32>,
    thickness: Handle<f32>,
    brightness: Handle<f32>,
    palette: Handle<usize>,
    colour_by: Handle<usize>,
    taper: Handle<f32>,
    regrow: Handle<bool>,
    regrow_seconds: Handle<f32>,
}

impl BranchKnobs {
    /// The branch parameters of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            steps_per_frame: Handle::new(id, "steps_per_frame"),
            render: Handle::new(id, "render"),
            width: Handle::new(id, "width"),
            thickness: Handle::new(id, "thickness"),
            brightness: Handle::new(id, "brightness"),
            palette: Handle::new(id, "palette"),
            colour_by: Handle::new(id, "colour_by"),
            taper: Handle::new(id, "taper"),
            regrow: Handle::new(id, "regrow"),
            regrow_seconds: Handle::new(id, "regrow_seconds"),
        }
    }

    /// Growth iterations this frame.
    pub fn steps(&self, registry: &Registry) -> u32 {
        self.steps_per_frame.get(registry) as u32
    }

    /// Lines or tubes.
    pub fn style(&self, registry: &Registry) -> Style {
        if self.render.get(registry) == 1 {
            Style::Tubes
        } else {
            Style::Lines
        }
    }

    /// The drawing's uniforms, the tube radius counted in units of
    /// `scale` (the skinned layer's model size), faded to `fade`.
    pub fn draw_params(&self, registry: &Registry, scale: f32, fade: f32) -> DrawParams {
        DrawParams::new(
            self.width.get(registry),
            self.thickness.get(registry) * scale,
            self.brightness.get(registry),
            fade,
            self.palette.get(registry) as u32,
            self.colour_by.get(registry) as u32,
            self.taper.get(registry),
        )
    }

    /// How far a growth born at `born` has faded out at `time` (0: not
    /// yet, 1: gone), when regrowing is on.
    pub fn fading(&self, registry: &Registry, born: f64, time: f64) -> Option<f64> {
        if !self.regrow.get(registry) {
            return None;
        }
        let life = f64::from(self.regrow_seconds.get(registry));
        Some(((time - born - life) / 3.0).clamp(0.0, 1.0))
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.steps_per_frame, self.render, self.width,
            self.thickness, self.brightness, self.palette, self.colour_by, self.taper, self.regrow,
            self.regrow_seconds)
    }
}

/// What a colony is built from, read from the targets (a change rebuilds).
#[derive(Debug, Clone)]
pub struct ColonyStructureKnobs {
    pub(super) attraction_count: Handle<i32>,
    pub(super) node_capacity: Handle<i32>,
    pub(super) seed_count: Handle<i32>,
    pub(super) shape: Handle<usize>,
    pub(super) radius: Handle<f32>,
    pub(super) attractors: Handle<String>,
}

impl ColonyStructureKnobs {
    /// The structural parameters of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            attraction_count: Handle::new(id, "attraction_count"),
            node_capacity: Handle::new(id, "node_capacity"),
            seed_count: Handle::new(id, "seed_count"),
            shape: Handle::new(id, "shape"),
            radius: Handle::new(id, "radius"),
            attractors: Handle::new(id, "attractors"),
        }
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.attraction_count, self.node_capacity,
            self.seed_count, self.shape, self.radius, self.attractors)
    }
}
