//! The forest's parameters that its frames read, as typed handles named
//! once: what it is sown from, its dynamics, the density files and brush,
//! the steps a frame runs, and its look.

use super::density::MAPS;
use super::draw::View;
use super::paint::Paint;
use super::rain::Soak;
use crate::engine::camera::OrbitCamera;
use crate::engine::world::Placement;
use crate::params::{Handle, ParamSpec, Registry};

/// Every parameter the forest layer's frames read.
pub struct ForestKnobs {
    pub(super) map_size: Handle<i32>,
    pub(super) metres_per_pixel: Handle<f32>,
    pub(super) slices: Handle<i32>,
    pub(super) slice_spacing: Handle<f32>,
    pub(super) capacity: Handle<i32>,
    pub(super) initial_trees: Handle<i32>,
    pub(super) species: Handle<String>,
    pub(super) r1: Handle<f32>,
    pub(super) r2: Handle<f32>,
    pub(super) years_per_step: Handle<f32>,
    pub(super) density_maps: Handle<String>,
    pub(super) brush: Handle<bool>,
    pub(super) brush_at: Handle<[f32; 3]>,
    pub(super) brush_map: Handle<f32>,
    pub(super) brush_radius: Handle<f32>,
    pub(super) brush_value: Handle<f32>,
    pub(super) density_source: Handle<String>,
    density_source_maps: Handle<usize>,
    density_source_amount: Handle<f32>,
    rain: Handle<f32>,
    drought: Handle<f32>,
    steps_per_frame: Handle<f32>,
    view: Handle<usize>,
    pub(super) fog: Handle<[f32; 4]>,
    pub(super) fog_density: Handle<f32>,
    pub(super) brightness: Handle<f32>,
    pub(super) view_slice: Handle<f32>,
    pub(super) backdrop: Handle<bool>,
    pub(super) wind: Handle<f32>,
    crowns: Handle<usize>,
    grown_pixels: Handle<f32>,
    grown_trees: Handle<i32>,
    /// Its orbit camera.
    pub camera: OrbitCamera,
    /// Its place in the shared scene.
    pub placement: Placement,
}

impl ForestKnobs {
    /// The handles of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            map_size: Handle::new(id, "map_size"),
            metres_per_pixel: Handle::new(id, "metres_per_pixel"),
            slices: Handle::new(id, "slices"),
            slice_spacing: Handle::new(id, "slice_spacing"),
            capacity: Handle::new(id, "capacity"),
            initial_trees: Handle::new(id, "initial_trees"),
            species: Handle::new(id, "species"),
            r1: Handle::new(id, "r1"),
            r2: Handle::new(id, "r2"),
            years_per_step: Handle::new(id, "years_per_step"),
            density_maps: Handle::new(id, "density_maps"),
            brush: Handle::new(id, "brush"),
            brush_at: Handle::new(id, "brush_at"),
            brush_map: Handle::new(id, "brush_map"),
            brush_radius: Handle::new(id, "brush_radius"),
            brush_value: Handle::new(id, "brush_value"),
            density_source: Handle::new(id, "density_source"),
            density_source_maps: Handle::new(id, "density_source_maps"),
            density_source_amount: Handle::new(id, "density_source_amount"),
            rain: Handle::new(id, "rain"),
            drought: Handle::new(id, "drought"),
            steps_per_frame: Handle::new(id, "steps_per_frame"),
            view: Handle::new(id, "view"),
            fog: Handle::new(id, "fog"),
            fog_density: Handle::new(id, "fog_density"),
            brightness: Handle::new(id, "brightness"),
            view_slice: Handle::new(id, "view_slice"),
            backdrop: Handle::new(id, "backdrop"),
            wind: Handle::new(id, "wind"),
            crowns: Handle::new(id, "crowns"),
            grown_pixels: Handle::new(id, "grown_pixels"),
            grown_trees: Handle::new(id, "grown_trees"),
            camera: OrbitCamera::new(id),
            placement: Placement::new(id),
        }
    }

    /// Growth steps this frame.
    pub fn steps(&self, registry: &Registry) -> u32 {
        self.steps_per_frame.get(registry) as u32
    }

    /// The forest or its space maps.
    pub fn view(&self, registry: &Registry) -> View {
        if self.view.get(registry) == 1 {
            View::Maps
        } else {
            View::Forest
        }
    }

    /// Crown width on screen from which trees draw grown crowns, and how
    /// many may (0 when crowns are cones).
    pub fn grown(&self, registry: &Registry) -> (f32, u32) {
        let cap = match self.impostors(registry) {
            true => self.grown_trees.get(registry).max(0) as u32,
            false => 0,
        };
        (self.grown_pixels.get(registry), cap)
    }

    /// Whether the crowns are the ones the colony grew (the biggest on
    /// screen whole, the rest as their impostors), not the cones.
    pub fn impostors(&self, registry: &Registry) -> bool {
        self.crowns.get(registry) == 1
    }

    /// How the density source paints this frame.
    pub fn paint(&self, registry: &Registry) -> Paint {
        let (first, end) = match self.density_source_maps.get(registry) {
            0 => (0, MAPS as u32),
            n => (n as u32 - 1, n as u32),
        };
        Paint::new(first, end, self.density_source_amount.get(registry))
    }

    /// How the rain soaks the ground this frame of `dt` seconds (a
    /// landing's worth: a hundredth of `rain`).
    pub fn soak(&self, registry: &Registry, dt: f32) -> Soak {
        Soak::new(
            self.rain.get(registry) * 0.01,
            self.drought.get(registry),
            dt,
        )
    }

    /// Whether the ground drinks rain.
    pub fn raining(&self, registry: &Registry) -> bool {
        self.rain.get(registry) > 0.0
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        let mut wrong = crate::check_handles!(specs; self.map_size, self.metres_per_pixel,
            self.slices, self.slice_spacing, self.capacity, self.initial_trees, self.species,
            self.r1, self.r2, self.years_per_step, self.density_maps, self.brush,
            self.brush_at, self.brush_map, self.brush_radius, self.brush_value,
            self.density_source, self.density_source_maps, self.density_source_amount,
            self.rain, self.drought, self.steps_per_frame, self.view, self.fog, self.fog_density, self.brightness, self.backdrop, self.wind,
            self.view_slice, self.crowns, self.grown_pixels, self.grown_trees);
        wrong.extend(self.camera.check(specs));
        wrong.extend(self.placement.check(specs));
        wrong
    }
}
