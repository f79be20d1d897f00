//! The skinned layer's parameters that its frames read, as typed handles
//! named once: the colony's growth and branches it shares, the camera,
//! what the character is built from, how its clips play, and its body.

use super::super::colony::knobs::{BranchKnobs, GrowthKnobs};
use super::body::{BodyParams, BodyStyle};
use super::model::Model;
use super::params::{SkinnedStructure, model_path};
use super::player::Player;
use crate::base::Assets;
use crate::engine::camera::OrbitCamera;
use crate::engine::world::Placement;
use crate::params::{Handle, ParamSpec, Registry};

/// Every parameter the skinned layer's frames read.
pub struct SkinnedKnobs {
    /// How its colony grows.
    pub growth: GrowthKnobs,
    /// How its branches are drawn and regrown.
    pub branches: BranchKnobs,
    /// Its orbit camera.
    pub camera: OrbitCamera,
    /// Its place in the shared scene.
    pub placement: Placement,
    structure: SkinnedStructureKnobs,
    playing: PlayingKnobs,
    body: BodyKnobs,
}

struct SkinnedStructureKnobs {
    model: Handle<String>,
    detail: Handle<i32>,
    attraction_count: Handle<i32>,
    attraction_spacing: Handle<f32>,
    node_capacity: Handle<i32>,
    seed_count: Handle<i32>,
}

struct PlayingKnobs {
    clip: Handle<usize>,
    clip_fade: Handle<f32>,
    time: Handle<f32>,
    speed: Handle<f32>,
    looping: Handle<bool>,
    bones: Handle<usize>,
}

struct BodyKnobs {
    style: Handle<usize>,
    colour: Handle<[f32; 4]>,
    opacity: Handle<f32>,
    solid: Handle<bool>,
}

impl SkinnedKnobs {
    /// The handles of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            growth: GrowthKnobs::new(id),
            branches: BranchKnobs::new(id),
            camera: OrbitCamera::new(id),
            placement: Placement::new(id),
            structure: SkinnedStructureKnobs {
                model: Handle::new(id, "model"),
                detail: Handle::new(id, "detail"),
                attraction_count: Handle::new(id, "attraction_count"),
                attraction_spacing: Handle::new(id, "attraction_spacing"),
                node_capacity: Handle::new(id, "node_capacity"),
                seed_count: Handle::new(id, "seed_count"),
            },
            playing: PlayingKnobs {
                clip: Handle::new(id, "clip"),
                clip_fade: Handle::new(id, "clip_fade"),
                time: Handle::new(id, "time"),
                speed: Handle::new(id, "speed"),
                looping: Handle::new(id, "loop"),
                bones: Handle::new(id, "bones"),
            },
            body: BodyKnobs {
                style: Handle::new(id, "body"),
                colour: Handle::new(id, "body_colour"),
                opacity: Handle::new(id, "body_opacity"),
                solid: Handle::new(id, "solid"),
            },
        }
    }

    /// What the character is to be built from now (the targets).
    pub(super) fn structure(&self, registry: &Registry, assets: &Assets) -> SkinnedStructure {
        let knobs = &self.structure;
        let model = knobs.model.target(registry);
        let modified = model_path(&model)
            .ok()
            .flatten()
            .and_then(|p| std::fs::symlink_metadata(assets.root().join(p)).ok())
            .and_then(|m| m.modified().ok());
        SkinnedStructure {
            model,
            detail: knobs.detail.count(registry),
            attraction_count: knobs.attraction_count.count(registry),
            spacing: knobs.attraction_spacing.target(registry),
            capacity: knobs.node_capacity.count(registry),
            seed_count: knobs.seed_count.count(registry),
            modified,
        }
    }

    /// Plays the clip, fade, speed and loop the registry asks for, seeking
    /// when `time` was written (`seen` is the last time written, negative
    /// before the first).
    pub fn play(
        &self,
        registry: &Registry,
        player: &mut Player,
        model: &Model,
        dt: f32,
        seen: &mut f32,
    ) {
        let knobs = &self.playing;
        // Declared once the model's clip names are known (next frame).
        let clip = if registry.contains(knobs.clip.name()) {
            knobs.clip.get(registry)
        } else {
            0
        };
        player.play(clip, knobs.clip_fade.get(registry));
        let time = knobs.time.target(registry);
        if time != *seen {
            if *seen >= 0.0 {
                player.seek(time);
            }
            *seen = time;
        }
        let speed = knobs.speed.get(registry);
        player.advance(model, dt, speed, knobs.looping.get(registry));
    }

    /// Whether the moving body is a body in the shared scene.
    pub fn solid(&self, registry: &Registry) -> bool {
        self.body.solid.get(registry)
    }

    /// Whether bones go to the GPU as matrices (else quaternions).
    pub fn matrices(&self, registry: &Registry) -> bool {
        self.playing.bones.get(registry) == 1
    }

    /// The body's style.
    pub fn body_style(&self, registry: &Registry) -> BodyStyle {
        BodyStyle::at(self.body.style.get(registry))
    }

    /// The body's uniforms.
    pub fn body_params(&self, registry: &Registry) -> BodyParams {
        BodyParams::new(
            self.body.colour.get(registry),
            self.body_style(registry),
            self.body.opacity.get(registry),
        )
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        let (s, p, b) = (&self.structure, &self.playing, &self.body);
        let own = crate::check_handles!(specs; s.model, s.detail, s.attraction_count,
            s.attraction_spacing, s.node_capacity, s.seed_count, p.clip, p.clip_fade, p.time,
            p.speed, p.looping, p.bones, b.style, b.colour, b.opacity, b.solid);
        [
            self.growth.check(specs),
            self.branches.check(specs),
            self.camera.check(specs),
            self.placement.check(specs),
            own,
        ]
        .concat()
    }
}
