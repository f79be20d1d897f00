//! The orbit camera the 3D layers share: distance, yaw, pitch, field of
//! view and a slow auto-rotation, as parameters `<layer>.camera_*`, turned into the
//! `Camera` block of `shaders/common/camera.wgsl`.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use glam::camera::rh::proj;

use super::light::LightUniform;
use super::shadow::SHADOW_SIZE;
use crate::params::{Handle, ParamSpec, Registry};

/// How much farther the far plane is than the near one (`CLIP_RANGE` in
/// `shaders/common/camera.wgsl`).
pub const CLIP_RANGE: f32 = 1000.0;

/// `struct Camera` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CameraUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    viewport: [f32; 4],
    light: LightUniform,
}

impl CameraUniform {
    /// tan of half the vertical field of view.
    pub fn tan_half_fov(&self) -> f32 {
        self.viewport[2]
    }

    /// The near plane's distance (the far one is [`CLIP_RANGE`] times it).
    pub fn near(&self) -> f32 {
        self.viewport[3]
    }

    /// World to clip space.
    pub fn view_proj(&self) -> glam::Mat4 {
        glam::Mat4::from_cols_array_2d(&self.view_proj)
    }

    /// The same camera with its picture shifted by `offset` pixels (right
    /// and down) on a target of `size`: a sub-pixel step of the temporal
    /// anti-aliasing.
    pub fn jittered(mut self, offset: [f32; 2], size: [u32; 2]) -> Self {
        let [w, h] = size.map(|n| n.max(1) as f32);
        let shift =
            glam::Mat4::from_translation(Vec3::new(2.0 * offset[0] / w, -2.0 * offset[1] / h, 0.0));
        self.view_proj = (shift * self.view_proj()).to_cols_array_2d();
        self
    }

    /// This camera seen from a layer whose own coordinates `model` places
    /// in the scene: it draws in its own units, and its depth is the
    /// scene's.
    pub fn placed(&self, model: glam::Mat4) -> Self {
        let view_proj = glam::Mat4::from_cols_array_2d(&self.view_proj) * model;
        let eye = model
            .inverse()
            .transform_point3(Vec3::from_slice(&self.eye[..3]));
        Self {
            view_proj: view_proj.to_cols_array_2d(),
            eye: [eye.x, eye.y, eye.z, 1.0],
            viewport: self.viewport,
            light: self.light.placed(model),
        }
    }

    /// The same with the scene's shadow map in its light (the scene's
    /// own camera).
    pub fn with_shadow(mut self, registry: &Registry) -> Self {
        self.light = self.light.with_shadow(registry);
        self
    }

    /// The key light as a camera: what a layer casting into the shadow
    /// map draws with (its depth from the light), in the same frame.
    pub fn from_light(&self) -> Self {
        Self {
            view_proj: self.light.shadow().to_cols_array_2d(),
            viewport: [SHADOW_SIZE as f32, SHADOW_SIZE as f32, 0.0, 0.0],
            ..*self
        }
    }
}

/// The camera parameters of layer `id`, looking from `distance` by default.
pub fn camera_params(id: &str, distance: f32, auto_rotate: f32) -> Vec<ParamSpec> {
    vec![
        ParamSpec::float(format!("{id}.camera_distance"), distance, 0.1, 10_000.0)
            .with_smoothing(0.3)
            .with_description("Distance of the orbit camera from the subject"),
        ParamSpec::float(format!("{id}.camera_yaw"), 0.0, -360.0, 360.0)
            .with_smoothing(0.3)
            .with_unit("deg")
            .with_description("Turn around the vertical axis"),
        ParamSpec::float(format!("{id}.camera_pitch"), 12.0, -89.0, 89.0)
            .with_smoothing(0.3)
            .with_unit("deg")
            .with_description("Height angle of the camera"),
        ParamSpec::float(format!("{id}.camera_fov"), 45.0, 10.0, 120.0)
            .with_smoothing(0.3)
            .with_unit("deg")
            .with_description("Vertical field of view: low zooms in, high goes wide"),
        ParamSpec::float(format!("{id}.auto_rotate"), auto_rotate, -180.0, 180.0)
            .with_smoothing(0.5)
            .with_unit("deg/s")
            .with_description("Slow turn of the camera over time"),
    ]
}

/// The camera parameters of one layer, named once ([`Handle`]).
#[derive(Debug, Clone)]
pub struct OrbitCamera {
    distance: Handle<f32>,
    yaw: Handle<f32>,
    pitch: Handle<f32>,
    fov: Handle<f32>,
    auto_rotate: Handle<f32>,
}

impl OrbitCamera {
    /// The camera of layer `id` ([`camera_params`]).
    pub fn new(id: &str) -> Self {
        Self {
            distance: Handle::new(id, "camera_distance"),
            yaw: Handle::new(id, "camera_yaw"),
            pitch: Handle::new(id, "camera_pitch"),
            fov: Handle::new(id, "camera_fov"),
            auto_rotate: Handle::new(id, "auto_rotate"),
        }
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.distance, self.yaw, self.pitch, self.fov, self.auto_rotate)
    }

    /// The camera at `time`, looking at `target`, for a target of `size`
    /// pixels.
    pub fn look(
        &self,
        registry: &Registry,
        time: f64,
        target: Vec3,
        size: [u32; 2],
    ) -> CameraUniform {
        self.look_scaled(registry, time, target, 1.0, size)
    }

    /// The same with `camera_distance` counted in units of `scale` (the
    /// skinned layer's model size, so any character fills the frame alike).
    pub fn look_scaled(
        &self,
        registry: &Registry,
        time: f64,
        target: Vec3,
        scale: f32,
        size: [u32; 2],
    ) -> CameraUniform {
        let p = |handle: &Handle<f32>| handle.get(registry);
        let yaw =
            (p(&self.yaw) as f64 + p(&self.auto_rotate) as f64 * time).rem_euclid(360.0) as f32;
        let (yaw, pitch) = (yaw.to_radians(), p(&self.pitch).to_radians());
        let distance = (p(&self.distance) * scale).max(1e-3);
        let eye = target
            + distance
                * Vec3::new(
                    pitch.cos() * yaw.sin(),
                    pitch.sin(),
                    pitch.cos() * yaw.cos(),
                );
        let aspect = size[0] as f32 / size[1].max(1) as f32;
        let fov = p(&self.fov).clamp(1.0, 179.0).to_radians();
        // wgpu's clip space is DirectX's: depth 0..1, y up.
        let near = distance * 0.01;
        let projection = proj::directx::perspective(fov, aspect, near, near * CLIP_RANGE);
        let view = glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
        CameraUniform {
            view_proj: (projection * view).to_cols_array_2d(),
            eye: [eye.x, eye.y, eye.z, 1.0],
            viewport: [size[0] as f32, size[1] as f32, (fov * 0.5).tan(), near],
            light: LightUniform::new(registry, view),
        }
    }
}

/// The point under `pointer` (0..1 of the picture, y down) on the plane
/// through `through` that faces the camera: where a drag on the picture
/// lands in the scene.
pub fn point_under(camera: &CameraUniform, pointer: [f32; 2], through: Vec3) -> Vec3 {
    let inverse = glam::Mat4::from_cols_array_2d(&camera.view_proj).inverse();
    let ndc = glam::Vec2::new(pointer[0] * 2.0 - 1.0, 1.0 - pointer[1] * 2.0);
    let near = inverse.project_point3(ndc.extend(0.0));
    let far = inverse.project_point3(ndc.extend(1.0));
    let eye = Vec3::new(camera.eye[0], camera.eye[1], camera.eye[2]);
    let normal = (eye - through).normalize_or_zero();
    let direction = far - near;
    let facing = direction.dot(normal);
    if facing.abs() < 1e-9 {
        return through;
    }
    near + direction * ((through - near).dot(normal) / facing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{Source, Value};

    #[test]
    fn the_field_of_view_shapes_the_projection_and_the_shaders_see_it() {
        let mut registry = Registry::new();
        for spec in camera_params("c", 2.0, 0.0) {
            registry.register(spec);
        }
        for fov in [30.0f32, 45.0, 90.0] {
            registry
                .set_now("c.camera_fov", Value::Float(fov), Source::Show)
                .ok();
            registry
                .set_now("c.camera_pitch", Value::Float(0.0), Source::Show)
                .ok();
            let camera = OrbitCamera::new("c").look(&registry, 0.0, Vec3::ZERO, [100, 100]);
            let half = (fov.to_radians() * 0.5).tan();
            assert!((camera.tan_half_fov() - half).abs() < 1e-6);
            // A point at the target's depth on the frustum's top edge lands
            // on the top of the picture.
            let edge = glam::Vec4::new(0.0, half * 2.0, 0.0, 1.0);
            let clip = glam::Mat4::from_cols_array_2d(&camera.view_proj) * edge;
            assert!(
                (clip.y / clip.w - 1.0).abs() < 1e-4,
                "fov {fov}: {}",
                clip.y / clip.w
            );
        }
    }

    #[test]
    fn the_point_under_the_pointer_projects_back_onto_it() {
        let mut registry = Registry::new();
        for spec in camera_params("c", 3.0, 0.0) {
            registry.register(spec);
        }
        let target = Vec3::new(0.8, 0.4, 0.4);
        let camera = OrbitCamera::new("c").look(&registry, 0.0, target, [160, 90]);
        let centre = point_under(&camera, [0.5, 0.5], target);
        assert!((centre - target).length() < 1e-4, "{centre}");
        let view_proj = glam::Mat4::from_cols_array_2d(&camera.view_proj);
        for pointer in [[0.1, 0.2], [0.9, 0.75], [0.3, 0.95]] {
            let point = point_under(&camera, pointer, target);
            let ndc = view_proj.project_point3(point);
            let back = [(ndc.x + 1.0) * 0.5, (1.0 - ndc.y) * 0.5];
            assert!(
                (back[0] - pointer[0]).abs() < 1e-4 && (back[1] - pointer[1]).abs() < 1e-4,
                "{pointer:?} -> {point} -> {back:?}"
            );
            let eye = Vec3::from_slice(&camera.eye[..3]);
            assert!(
                (point - target).dot(eye - target).abs() < 1e-3,
                "on the plane facing the camera"
            );
        }
    }
}
