//! The scene's light, one for every 3D layer and the stage: a key light
//! (its bearing and height in the sky, colour and intensity, as
//! `scene.light_*` parameters a script, a MIDI knob or OSC moves like the
//! camera) and the ambient light that fills what it does not reach. Each
//! camera block carries it (`Light` in `shaders/common/camera.wgsl`), so
//! every layer that draws with a camera shades with the same light;
//! `shaders/common/lighting.wgsl` shades with it.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::shadow::SHADOW_SIZE;
use crate::params::{ParamSpec, Registry, Value};

/// The key light's bearing by default, degrees clockwise from +z seen
/// from above (towards +x).
pub const AZIMUTH: f32 = 53.0;

/// Its height above the horizon by default, in degrees.
pub const ELEVATION: f32 = 61.0;

/// Its intensity by default: with [`AMBIENT`] a surface facing it shows
/// its full colour.
pub const INTENSITY: f32 = 0.82;

/// The ambient light by default (grey).
pub const AMBIENT: f32 = 0.18;

/// The light's parameters, in the scene's section.
pub fn light_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::float("scene.light_azimuth", AZIMUTH, -360.0, 360.0)
            .with_smoothing(0.3)
            .with_unit("deg")
            .with_description("Where the key light stands around the scene, clockwise from behind the default camera"),
        ParamSpec::float("scene.light_elevation", ELEVATION, -10.0, 90.0)
            .with_smoothing(0.3)
            .with_unit("deg")
            .with_description("How high the key light stands above the horizon (low: long shadows, a dusk)"),
        ParamSpec::colour("scene.light_colour", [1.0, 1.0, 1.0, 1.0])
            .with_smoothing(0.3)
            .with_description("The key light's colour"),
        ParamSpec::float("scene.light_intensity", INTENSITY, 0.0, 16.0)
            .with_smoothing(0.2)
            .with_description("The key light's strength (0.82: with the ambient's 0.18, a surface facing it shows its full colour)"),
        ParamSpec::colour("scene.ambient", [AMBIENT, AMBIENT, AMBIENT, 1.0])
            .with_smoothing(0.3)
            .with_description("The sky's light from above, filling what the key light does not reach (tint it with the sky: a warm dusk, a cold night)"),
        ParamSpec::colour("scene.ambient_ground", [AMBIENT, AMBIENT, AMBIENT, 1.0])
            .with_smoothing(0.3)
            .with_description("The light thrown back from the ground onto what faces down (the floor's colour, dimmer)"),
        ParamSpec::colour("scene.fog", [0.2, 0.12, 0.16, 1.0])
            .with_smoothing(0.3)
            .with_description("The height fog's colour (give it the sky's at the horizon)"),
        ParamSpec::float("scene.fog_density", 0.0, 0.0, 10.0)
            .with_smoothing(0.3)
            .with_unit("1/m")
            .with_description("The height fog the stage, the forest and the layers in the scene share, per metre at the ground (0: off, each keeps its own)"),
        ParamSpec::float("scene.fog_height", 3.0, 0.05, 1000.0)
            .with_smoothing(0.3)
            .with_unit("m")
            .with_description("How fast the fog thins upwards: its density falls by e every this many metres"),
    ]
}

/// `struct Light` in WGSL: the direction towards the key light in the
/// scene and in the camera's view (for layers that shade in view space),
/// its colour times its intensity, the ambient light from the sky above
/// and from the ground below, the height fog (colour and density, how
/// fast it thins) with the matrix from the layer's frame into the scene's,
/// and the shadow
/// map's clip space (from the layer's own frame) with how dark its
/// shadows fall (0 where the camera is not the scene's: no map) and the
/// map's texel in metres.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LightUniform {
    towards: [f32; 4],
    towards_view: [f32; 4],
    colour: [f32; 4],
    ambient: [f32; 4],
    ambient_ground: [f32; 4],
    shadow: [[f32; 4]; 4],
    shadow_info: [f32; 4],
    fog: [f32; 4],
    fog_height: [f32; 4],
    to_scene: [[f32; 4]; 4],
}

impl LightUniform {
    /// The light the registry sets, seen by a camera with `view`. A
    /// registry without the scene's parameters (a layer's own tests) has
    /// the default light.
    pub fn new(registry: &Registry, view: Mat4) -> Self {
        let float = |name: &str, default: f32| {
            registry
                .get(name)
                .and_then(Value::as_f32)
                .unwrap_or(default)
        };
        let colour = |name: &str, default: f32| match registry.get(name) {
            Some(Value::Colour(c)) => Vec3::new(c[0], c[1], c[2]),
            _ => Vec3::splat(default),
        };
        let towards = towards(
            float("scene.light_azimuth", AZIMUTH),
            float("scene.light_elevation", ELEVATION),
        );
        let in_view = view.transform_vector3(towards).normalize_or_zero();
        let key = colour("scene.light_colour", 1.0) * float("scene.light_intensity", INTENSITY);
        Self {
            towards: towards.extend(0.0).to_array(),
            towards_view: in_view.extend(0.0).to_array(),
            colour: key.extend(1.0).to_array(),
            ambient: colour("scene.ambient", AMBIENT).extend(1.0).to_array(),
            ambient_ground: colour("scene.ambient_ground", AMBIENT)
                .extend(1.0)
                .to_array(),
            shadow: Mat4::IDENTITY.to_cols_array_2d(),
            shadow_info: [0.0; 4],
            fog: colour("scene.fog", 0.0)
                .extend(float("scene.fog_density", 0.0))
                .to_array(),
            fog_height: [float("scene.fog_height", 3.0), 0.0, 0.0, 0.0],
            to_scene: Mat4::IDENTITY.to_cols_array_2d(),
        }
    }

    /// The same with the scene's shadow map, fitted as the registry says
    /// (`shadow.rs`): the light of the scene's own camera.
    pub fn with_shadow(mut self, registry: &Registry) -> Self {
        let (clip, strength, extent) = super::shadow::fitted(registry, self.towards());
        self.shadow = clip.to_cols_array_2d();
        self.shadow_info = [strength, extent / SHADOW_SIZE as f32, 0.0, 0.0];
        self
    }

    /// The same seen from a layer whose own coordinates `model` places in
    /// the scene (it moves and scales, never turns: directions stay).
    pub fn placed(mut self, model: Mat4) -> Self {
        self.shadow = (self.shadow() * model).to_cols_array_2d();
        self.to_scene = (Mat4::from_cols_array_2d(&self.to_scene) * model).to_cols_array_2d();
        self
    }

    /// The shadow map's clip space, from the layer's frame.
    pub fn shadow(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&self.shadow)
    }

    /// The unit direction towards the key light, in the scene.
    pub fn towards(&self) -> Vec3 {
        Vec3::from_slice(&self.towards[..3])
    }
}

/// The unit direction towards a light at `azimuth` and `elevation`
/// (degrees).
pub fn towards(azimuth: f32, elevation: f32) -> Vec3 {
    let (azimuth, elevation) = (azimuth.to_radians(), elevation.to_radians());
    Vec3::new(
        elevation.cos() * azimuth.sin(),
        elevation.sin(),
        elevation.cos() * azimuth.cos(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Source;

    #[test]
    fn the_default_light_stands_where_the_old_constant_did() {
        let old = Vec3::new(0.4, 0.9, 0.3).normalize();
        let light = LightUniform::new(&Registry::new(), Mat4::IDENTITY);
        assert!(light.towards().angle_between(old) < 0.5f32.to_radians());
        assert_eq!(light.colour[..3], [INTENSITY; 3]);
    }

    #[test]
    fn the_parameters_move_and_tint_it_and_the_view_turns_it() {
        let mut registry = Registry::new();
        for spec in light_params() {
            registry.register(spec);
        }
        let set = |registry: &mut Registry, name: &str, value: Value| {
            registry.set_now(name, value, Source::Ui).ok();
        };
        set(&mut registry, "scene.light_elevation", Value::Float(0.0));
        set(&mut registry, "scene.light_azimuth", Value::Float(90.0));
        set(&mut registry, "scene.light_intensity", Value::Float(2.0));
        set(
            &mut registry,
            "scene.light_colour",
            Value::Colour([1.0, 0.5, 0.25, 1.0]),
        );
        let turn = Mat4::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let light = LightUniform::new(&registry, turn);
        assert!(
            light.towards().abs_diff_eq(Vec3::X, 1e-6),
            "{:?}",
            light.towards()
        );
        assert_eq!(light.colour[..3], [2.0, 1.0, 0.5]);
        let seen = Vec3::from_slice(&light.towards_view[..3]);
        assert!(seen.abs_diff_eq(-Vec3::Z, 1e-6), "{seen:?}");
    }
}
