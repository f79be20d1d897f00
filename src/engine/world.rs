//! What the show's simulations share within a frame, so they can touch:
//! the bodies a layer moves (capsules with the velocity of each end, in
//! scene metres: y up, the ground at 0) that another layer's particles
//! collide with, and the rain map, where water that lands on a tank's
//! floor is counted for the ground that drinks it (the forest's). A layer
//! publishes bodies in `prepare`; a layer that prepares after it in the
//! same frame reads this frame's bodies, one before it last frame's.
//! Bounded: at most [`MAX_CAPSULES`] bodies, one rain map of
//! [`RAIN_SIDE`]² cells.

use std::cell::{OnceCell, RefCell};

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::base::clock::Clock;
use crate::engine::camera::{CameraUniform, OrbitCamera, camera_params};
use crate::engine::shadow::ShadowMap;
use crate::params::{Handle, ParamSpec, Registry};

/// The scene's parameters: one orbit camera (`scene.camera_*`) around
/// `scene.target`, which every layer with `<id>.in_scene` draws with, into
/// one depth, so what is nearer hides what is farther whatever layer
/// either belongs to, and the light every camera carries (`light.rs`).
pub fn scene_params() -> Vec<ParamSpec> {
    let mut specs = camera_params("scene", 6.0, 0.0);
    specs.extend(super::light::light_params());
    specs.extend(super::shadow::shadow_params());
    specs.extend(super::occlusion::occlusion_params());
    specs.extend(super::antialias::antialias_params());
    specs.extend(super::lens::lens_params());
    specs.push(
        ParamSpec::vec3("scene.target", [0.0, 1.0, 0.0], -10_000.0, 10_000.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("The point the scene's camera turns around and looks at"),
    );
    specs
}

/// Where layer `id` stands in the scene: `<id>.in_scene` (draw with the
/// scene's camera into its depth), `<id>.scene_offset` and
/// `<id>.scene_scale` (its own units placed and sized in scene metres).
pub fn placement_params(id: &str) -> Vec<ParamSpec> {
    vec![
        ParamSpec::bool(format!("{id}.in_scene"), false).with_description(
            "Share the scene: draw with its camera (scene.camera_*) into one depth with the other layers in it",
        ),
        ParamSpec::vec3(format!("{id}.scene_offset"), [0.0, 0.0, 0.0], -10_000.0, 10_000.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("Where the layer's origin stands in the scene"),
        ParamSpec::float(format!("{id}.scene_scale"), 1.0, 0.001, 1000.0)
            .with_smoothing(0.3)
            .with_description("Scene metres per unit of the layer (a 500 m forest at 0.02 is a 10 m grove)"),
    ]
}

/// A layer's place in the scene, its parameters named once.
pub struct Placement {
    in_scene: Handle<bool>,
    offset: Handle<[f32; 3]>,
    scale: Handle<f32>,
    camera: SceneCamera,
}

impl Placement {
    /// The handles of layer `id`'s [`placement_params`].
    pub fn new(id: &str) -> Self {
        Self {
            in_scene: Handle::new(id, "in_scene"),
            offset: Handle::new(id, "scene_offset"),
            scale: Handle::new(id, "scene_scale"),
            camera: SceneCamera::default(),
        }
    }

    /// Whether the layer draws in the shared scene.
    pub fn in_scene(&self, registry: &Registry) -> bool {
        self.in_scene.get(registry)
    }

    /// The layer's own coordinates to the scene's.
    pub fn model(&self, registry: &Registry) -> glam::Mat4 {
        glam::Mat4::from_scale_rotation_translation(
            Vec3::splat(self.scale.get(registry)),
            glam::Quat::IDENTITY,
            Vec3::from_array(self.offset.get(registry)),
        )
    }

    /// The scene's camera as the layer draws with it, when it is in the
    /// scene.
    pub fn camera(
        &self,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> Option<CameraUniform> {
        self.in_scene(registry).then(|| {
            (self.camera)
                .look(registry, clock, size)
                .placed(self.model(registry))
        })
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.in_scene, self.offset, self.scale)
    }
}

/// The scene's camera, its parameters named once (a layer keeps one).
pub struct SceneCamera {
    orbit: OrbitCamera,
    target: Handle<[f32; 3]>,
}

impl Default for SceneCamera {
    fn default() -> Self {
        Self {
            orbit: OrbitCamera::new("scene"),
            target: Handle::new("scene", "target"),
        }
    }
}

impl SceneCamera {
    /// The scene's camera for a target of `size` this frame: shifted by
    /// a fraction of a pixel, another each frame, while the scene's
    /// temporal anti-aliasing is on (`antialias.rs` gathers the frames).
    pub fn look(&self, registry: &Registry, clock: &Clock, size: [u32; 2]) -> CameraUniform {
        Self::shifted(
            self.steady(registry, clock.time, size),
            registry,
            clock,
            size,
        )
    }

    /// `steady`, the scene's camera at this frame's time, as `look` shifts
    /// it this frame.
    pub fn shifted(
        steady: CameraUniform,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> CameraUniform {
        match registry.flag("scene.antialias") {
            true => steady.jittered(super::antialias::jitter(clock.frame), size),
            false => steady,
        }
    }

    /// The scene's camera at `time`, not shifted.
    pub fn steady(&self, registry: &Registry, time: f64, size: [u32; 2]) -> CameraUniform {
        let target = Vec3::from_array(self.target.get(registry));
        (self.orbit)
            .look(registry, time, target, size)
            .with_shadow(registry)
    }
}

/// Capsules the world holds, from every layer together.
pub const MAX_CAPSULES: usize = 64;

/// Cells along each side of the rain map. Water and ground meet it in
/// their own terms (the tank's floor and the forest's map each span it
/// whole), since the two simulations live at scales far apart: a tank of
/// a metre or two, a forest of hundreds.
pub const RAIN_SIDE: u32 = 256;

/// Branches the world holds at most (`MAX_BRANCHES` in
/// `shaders/common/world.wgsl`): the colony's oldest and thickest.
pub const MAX_BRANCHES: usize = 4096;

/// Bytes of the branches block (`struct Branches`): a 16-byte head, then
/// the capsules.
pub const BRANCHES_BYTES: u64 = (16 + MAX_BRANCHES * size_of::<Capsule>()) as u64;

/// Fastest a body's end may move, m/s: a clip that jumps (a cut, a new
/// character) is a teleport, not a blow that flings the water away.
pub const MAX_BODY_SPEED: f32 = 25.0;

/// One capsule (`struct Capsule` in `shaders/common/world.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct Capsule {
    /// One end (xyz) and the radius (w).
    pub a: [f32; 4],
    /// The other end (xyz; w unused).
    pub b: [f32; 4],
    /// Velocity of end a (xyz), m/s.
    pub velocity_a: [f32; 4],
    /// Velocity of end b (xyz), m/s.
    pub velocity_b: [f32; 4],
}

impl Capsule {
    /// A capsule from `a` to `b` of `radius` whose ends were at `before`
    /// `dt` seconds ago (none: at rest).
    pub fn moving(a: Vec3, b: Vec3, radius: f32, before: Option<(Vec3, Vec3)>, dt: f32) -> Self {
        let velocity = |now: Vec3, then: Vec3| {
            let v = if dt > 0.0 {
                (now - then) / dt
            } else {
                Vec3::ZERO
            };
            v.clamp_length_max(MAX_BODY_SPEED)
        };
        let (va, vb) = before.map_or((Vec3::ZERO, Vec3::ZERO), |(then_a, then_b)| {
            (velocity(a, then_a), velocity(b, then_b))
        });
        Self {
            a: a.extend(radius).to_array(),
            b: b.extend(0.0).to_array(),
            velocity_a: va.extend(0.0).to_array(),
            velocity_b: vb.extend(0.0).to_array(),
        }
    }

    /// This capsule moved by `offset` (into another layer's frame).
    pub fn shifted(mut self, offset: Vec3) -> Self {
        for end in [&mut self.a, &mut self.b] {
            let moved = Vec3::from_slice(&end[..3]) + offset;
            end[..3].copy_from_slice(&moved.to_array());
        }
        self
    }
}

/// The bodies each layer published, by layer id.
#[derive(Debug, Default)]
pub struct World {
    bodies: RefCell<Vec<(String, Vec<Capsule>)>>,
    rain: OnceCell<wgpu::Buffer>,
    shadow: OnceCell<ShadowMap>,
    branches: OnceCell<wgpu::Buffer>,
    /// The layer whose branches the buffer holds this frame.
    branches_from: RefCell<Option<String>>,
    exact: bool,
}

impl World {
    /// Has the simulations make frames that repeat bit for bit (`sylva
    /// render`): sums in an order that is the same on every run, work
    /// that a live show does on a worker done within the frame.
    pub fn set_exact(&mut self, exact: bool) {
        self.exact = exact;
    }

    /// Whether frames must repeat bit for bit ([`World::set_exact`]).
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// Sets `layer`'s bodies for this frame, replacing its last ones.
    pub fn publish_bodies(&self, layer: &str, capsules: Vec<Capsule>) {
        let mut bodies = self.bodies.borrow_mut();
        bodies.retain(|(id, _)| id != layer);
        bodies.push((layer.to_string(), capsules));
    }

    /// Every layer's bodies, at most [`MAX_CAPSULES`], those of the layer
    /// that published first first.
    pub fn bodies(&self) -> Vec<Capsule> {
        self.bodies
            .borrow()
            .iter()
            .flat_map(|(_, capsules)| capsules.iter().copied())
            .take(MAX_CAPSULES)
            .collect()
    }

    /// The rain map (`RAIN_SIDE`² `u32` counts of landings, row by row):
    /// made at its first use and kept for the show's life, so every layer
    /// binds the same buffer once.
    pub fn rain(&self, gpu: &crate::gpu::Gpu) -> wgpu::Buffer {
        let bytes = u64::from(RAIN_SIDE * RAIN_SIDE) * 4;
        made_once(&self.rain, gpu, "world.rain", bytes)
    }

    /// The scene's shadow map, made at its first use (a layer that casts
    /// or reads it) and kept for the show's life.
    pub fn shadow(&self, gpu: &crate::gpu::Gpu) -> &ShadowMap {
        self.shadow.get_or_init(|| ShadowMap::new(&gpu.device))
    }

    /// The shadow map, if a layer has used it.
    pub fn shadow_made(&self) -> Option<&ShadowMap> {
        self.shadow.get()
    }

    /// The branches standing in the scene: a `Branches` block
    /// (`shaders/common/world.wgsl`, scene frame, at most
    /// [`MAX_BRANCHES`]) that a layer's GPU pass writes each frame (the
    /// colony's, from its grown nodes) and the water reads; made at its
    /// first use.
    pub fn branches(&self, gpu: &crate::gpu::Gpu) -> wgpu::Buffer {
        made_once(&self.branches, gpu, "world.branches", BRANCHES_BYTES)
    }

    /// Says `layer` writes the branches this frame.
    pub fn publish_branches(&self, layer: &str) {
        let mut from = self.branches_from.borrow_mut();
        if from.as_deref() != Some(layer) {
            *from = Some(layer.to_string());
        }
    }

    /// Says `layer` no longer writes the branches (switched off, or out of
    /// the scene), if it did.
    pub fn withdraw_branches(&self, layer: &str) {
        let mut branches = self.branches_from.borrow_mut();
        if branches.as_deref() == Some(layer) {
            *branches = None;
        }
    }

    /// Whether a layer on stage writes the branches.
    pub fn has_branches(&self) -> bool {
        self.branches_from.borrow().is_some()
    }

    /// Forgets the bodies and branches of layers not in `on_stage` (gone,
    /// or switched off), so nothing collides with a figure no longer there.
    pub fn keep_only(&self, on_stage: &[&str]) {
        self.bodies
            .borrow_mut()
            .retain(|(id, _)| on_stage.contains(&id.as_str()));
        let mut branches = self.branches_from.borrow_mut();
        if branches
            .as_deref()
            .is_some_and(|id| !on_stage.contains(&id))
        {
            *branches = None;
        }
    }
}

/// The storage buffer `cell` holds, made (`bytes`, zeroed) at the first ask.
fn made_once(
    cell: &OnceCell<wgpu::Buffer>,
    gpu: &crate::gpu::Gpu,
    label: &str,
    bytes: u64,
) -> wgpu::Buffer {
    cell.get_or_init(|| {
        crate::gpu::compute::storage_buffer(gpu, label, bytes, wgpu::BufferUsages::empty())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_replaced_per_layer_bounded_and_forgotten_with_it() {
        let world = World::default();
        let one = Capsule::moving(Vec3::ZERO, Vec3::Y, 0.1, None, 0.0);
        world.publish_bodies("skinned", vec![one; 10]);
        world.publish_bodies("skinned", vec![one; 3]);
        world.publish_bodies("skinned.b", vec![one; 100]);
        assert_eq!(world.bodies().len(), MAX_CAPSULES);
        world.keep_only(&["skinned"]);
        assert_eq!(world.bodies().len(), 3);
    }

    #[test]
    fn branches_stand_while_their_layer_writes_them() {
        let world = World::default();
        assert!(!world.has_branches());
        world.publish_branches("colony");
        world.keep_only(&["colony", "fluid"]);
        assert!(world.has_branches());
        world.withdraw_branches("colony.other");
        assert!(world.has_branches(), "only its own layer withdraws them");
        world.keep_only(&["fluid"]);
        assert!(!world.has_branches(), "gone with the colony");
        world.publish_branches("colony");
        world.withdraw_branches("colony");
        assert!(!world.has_branches());
    }

    #[test]
    fn a_jump_is_no_faster_than_the_limit() {
        let moved = Capsule::moving(
            Vec3::ZERO,
            Vec3::Y,
            0.1,
            Some((Vec3::new(-100.0, 0.0, 0.0), Vec3::Y)),
            1.0 / 60.0,
        );
        let speed = Vec3::from_slice(&moved.velocity_a[..3]).length();
        assert!((speed - MAX_BODY_SPEED).abs() < 1e-3, "{speed}");
        assert_eq!(moved.velocity_b, [0.0; 4]);
    }
}
