// The orbit camera every 3D layer shares (src/layers/camera.rs).

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    // Target size in pixels (xy), tan of half the vertical field of view (z).
    viewport: vec4<f32>,
}
