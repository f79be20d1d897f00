//! The skinned layer's parameters (the colony's growth ones it shares,
//! its model, clip and body), what its build depends on, and the model
//! file they name.

use super::super::colony::colony_params;
use super::body::BODY_STYLES;
use super::model::{Model, ModelError};
use super::{SkinnedError, creature};
use crate::base::{AssetError, Assets, inside_show};
use crate::engine::LayerError;
use crate::engine::Preset;
use crate::engine::camera::camera_params;
use crate::params::{ParamSpec, Value};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Growth parameters the skinned layer does not take from the colony's
/// (its attractions fill the character, not a shape, and it has its own
/// camera).
pub(super) const NOT_GROWTH: [&str; 11] = [
    "shape",
    "radius",
    "attractors",
    "camera_distance",
    "camera_yaw",
    "camera_pitch",
    "camera_fov",
    "auto_rotate",
    "in_scene",
    "scene_offset",
    "scene_scale",
];

/// The layer's parameters; `clips` names the model's clips (`None`
/// before the model is read: `clip` is declared once its names are known,
/// as a shader layer's parameters are once its file is read).
pub fn skinned_params(id: &str, clips: Option<&[String]>) -> Vec<ParamSpec> {
    let p = |name: &str| format!("{id}.{name}");
    let mut specs: Vec<ParamSpec> = colony_params(id)
        .into_iter()
        .filter(|s| !NOT_GROWTH.iter().any(|n| s.name == p(n)))
        .map(|s| match s.name.strip_prefix(&format!("{id}.")) {
            Some("attraction_count") => ParamSpec::int(p("attraction_count"), 8_000, 16, 4_000_000)
                .structural()
                .with_description("Attraction points filling the character (rebuilds)"),
            Some("node_capacity") => ParamSpec::int(p("node_capacity"), 120_000, 64, 16_000_000)
                .structural()
                .with_description("Node pool size (rebuilds)"),
            Some("seed_count") => ParamSpec::int(p("seed_count"), 12, 1, 4096)
                .with_description("Roots the growth starts from (rebuilds)"),
            Some("render") => ParamSpec::enumeration(p("render"), &["lines", "tubes"], 0)
                .with_description("Glowing lines or lit tubes"),
            Some("thickness") => ParamSpec::float(p("thickness"), 0.003, 0.0001, 0.1)
                .with_smoothing(0.1)
                .with_description("Tube radius at the root, as a part of the character's size"),
            Some("regrow") => ParamSpec::bool(p("regrow"), true)
                .with_description("Let the growth fade and a new one start, again and again"),
            Some("steps_per_frame") => ParamSpec::int(p("steps_per_frame"), 2, 0, 64)
                .costly()
                .with_description("Growth iterations per frame"),
            Some("growth_speed") => ParamSpec::float(p("growth_speed"), 3.0, 0.0, 50.0)
                .with_smoothing(0.2)
                .with_description("How fast new segments extend (t per second at mass 1)"),
            Some("width") => ParamSpec::float(p("width"), 1.5, 0.25, 32.0)
                .with_smoothing(0.1)
                .with_unit("px")
                .with_description("Line width at the tips"),
            // Thinner limbs than a lone colony's: they grow inside a body.
            Some("taper") => ParamSpec {
                default: Value::Float(1.0),
                ..s
            },
            Some("brightness") => ParamSpec::float(p("brightness"), 0.55, 0.0, 50.0)
                .with_smoothing(0.1)
                .with_description("HDR brightness of the branches"),
            Some("regrow_seconds") => ParamSpec::float(p("regrow_seconds"), 30.0, 2.0, 3600.0)
                .with_unit("s")
                .with_description("Time a growth lives before it fades"),
            _ => s,
        })
        .collect();
    specs.extend([
        ParamSpec::path(p("model"), "").with_description(
            "A .glb or .gltf in the show's assets/ folder; empty: the built-in figure (reloads when saved)",
        ),
        ParamSpec::int(p("detail"), 16, 6, 1024).structural()
            .with_description("Sides of the built-in figure's capsules (rebuilds)"),
        ParamSpec::float(p("attraction_spacing"), 0.0, 0.0, 1000.0).with_description(
            "Least distance between attractions in the model's units; 0 follows the count (rebuilds)",
        ),
        ParamSpec::float(p("speed"), 1.0, -4.0, 4.0)
            .with_smoothing(0.2)
            .with_description("Playback speed (negative plays backwards)"),
        ParamSpec::float(p("time"), 0.0, 0.0, 3600.0)
            .with_unit("s")
            .with_description("Write to jump to a time in the clip"),
        ParamSpec::bool(p("loop"), true).with_description("Loop the clip, else hold its end"),
        ParamSpec::float(p("clip_fade"), 0.6, 0.0, 10.0)
            .with_unit("s")
            .with_description("Crossfade time when the clip changes"),
        ParamSpec::enumeration(p("bones"), &["quaternions", "matrices"], 0)
            .with_description("Skin with bone quaternions (matrices only where scale is not uniform) or matrices"),
        ParamSpec::enumeration(p("body"), &BODY_STYLES, 0)
            .with_description("The character drawn as glass, lit, or hidden"),
        ParamSpec::colour(p("body_colour"), [0.35, 0.55, 0.9, 1.0])
            .with_description("Colour of the character's skin"),
        ParamSpec::float(p("body_opacity"), 0.6, 0.0, 1.0)
            .with_smoothing(0.1)
            .with_description("How much of the glass skin shows"),
        ParamSpec::bool(p("solid"), true).with_description(
            "In the shared scene, the moving body is a body the water meets",
        ),
    ]);
    specs.extend(crate::engine::world::placement_params(id));
    if let Some(clips) = clips {
        let names: Vec<&str> = if clips.is_empty() {
            vec!["none"]
        } else {
            clips.iter().map(String::as_str).collect()
        };
        specs.push(
            ParamSpec::enumeration(p("clip"), &names, 0).with_description("The clip playing"),
        );
    }
    // The camera distance counts the character's sizes, whatever its units.
    specs.extend(camera_params(id, 1.8, 8.0));
    specs
}

/// What the layer was built from; a change rebuilds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SkinnedStructure {
    pub(super) model: String,
    pub(super) detail: u32,
    pub(super) attraction_count: u32,
    pub(super) spacing: f32,
    pub(super) capacity: u32,
    pub(super) seed_count: u32,
    /// The model file's modification time, so saving it reloads.
    pub(super) modified: Option<SystemTime>,
}

/// The figures the shipped presets name (`assets/ATTRIBUTION.md`), built
/// in so they run from any show folder; a file of the same name in the
/// show's `assets/` takes its place.
pub const BUILT_IN: [(&str, &[u8]); 2] = [
    ("Dancer.glb", include_bytes!("../../../assets/Dancer.glb")),
    (
        "RobotExpressive.glb",
        include_bytes!("../../../assets/RobotExpressive.glb"),
    ),
];

/// Model `name` from the show's `assets/`, or the built-in figure of that
/// name where the show has no such file (none: the built-in figure of
/// capsules).
pub(super) fn load_model(root: &Path, name: &str) -> Result<Option<Model>, SkinnedError> {
    let Some(path) = model_path(name)? else {
        return Ok(None);
    };
    let built_in = BUILT_IN.iter().find(|(file, _)| *file == name);
    let model = match (Model::load_in(root, &path), built_in) {
        (Err(ModelError::Refused(error)), Some((file, glb))) if error.is_missing() => {
            Model::from_glb(&format!("{file} (built in)"), glb)
        }
        (loaded, _) => loaded,
    };
    Ok(Some(model?.skinned()?))
}

/// Where model `name` lies in the show's `assets/`, relative to the show
/// folder (none: the figure); read through the opener from there.
pub(super) fn model_path(name: &str) -> Result<Option<PathBuf>, AssetError> {
    if name.is_empty() {
        return Ok(None);
    }
    let relative = inside_show(name)?;
    Ok(Some(Path::new("assets").join(relative)))
}

/// The parameters layer `id` of `preset` declares, found without a GPU:
/// the clip names come from the model it names (read, not drawn).
pub(super) fn declared_params(
    id: &str,
    assets: &Assets,
    preset: &Preset,
) -> Result<Vec<ParamSpec>, LayerError> {
    let name = format!("{id}.model");
    let model = preset
        .params
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| p.value.as_str().map(str::to_string))
        .unwrap_or_default();
    let clips = match load_model(assets.root(), &model)? {
        Some(model) => model.clips.iter().map(|c| c.name.clone()).collect(),
        None => creature::clip_names(),
    };
    Ok(skinned_params(id, Some(&clips)))
}
