//! The orbit camera the 3D layers share: distance, yaw, pitch and a slow
//! auto-rotation, as parameters `<layer>.camera_*`, turned into the
//! `Camera` block of `shaders/common/camera.wgsl`.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use glam::camera::rh::proj;

use crate::params::{ParamSpec, Registry};

/// Vertical field of view.
const FOV_DEGREES: f32 = 45.0;

/// `struct Camera` in WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct CameraUniform {
    view_proj: [[f32; 4]; 4],
    eye: [f32; 4],
    viewport: [f32; 4],
}

impl CameraUniform {
    /// tan of half the vertical field of view.
    pub fn tan_half_fov(&self) -> f32 {
        self.viewport[2]
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
        ParamSpec::float(format!("{id}.auto_rotate"), auto_rotate, -180.0, 180.0)
            .with_smoothing(0.5)
            .with_unit("deg/s")
            .with_description("Slow turn of the camera over time"),
    ]
}

/// The camera of layer `id` at `time`, looking at `target`, for a target of
/// `size` pixels.
pub fn orbit(
    registry: &Registry,
    id: &str,
    time: f64,
    target: Vec3,
    size: [u32; 2],
) -> CameraUniform {
    let p = |name: &str| registry.float(&format!("{id}.{name}"));
    let yaw = (p("camera_yaw") as f64 + p("auto_rotate") as f64 * time).rem_euclid(360.0) as f32;
    let (yaw, pitch) = (yaw.to_radians(), p("camera_pitch").to_radians());
    let distance = p("camera_distance").max(0.1);
    let eye = target
        + distance
            * Vec3::new(
                pitch.cos() * yaw.sin(),
                pitch.sin(),
                pitch.cos() * yaw.cos(),
            );
    let aspect = size[0] as f32 / size[1].max(1) as f32;
    // wgpu's clip space is DirectX's: depth 0..1, y up.
    let projection =
        proj::directx::perspective(45f32.to_radians(), aspect, distance * 0.01, distance * 10.0);
    let view = glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
    CameraUniform {
        view_proj: (projection * view).to_cols_array_2d(),
        eye: [eye.x, eye.y, eye.z, 1.0],
        viewport: [
            size[0] as f32,
            size[1] as f32,
            (FOV_DEGREES.to_radians() * 0.5).tan(),
            0.0,
        ],
    }
}
