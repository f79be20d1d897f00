// The orbit camera every 3D layer shares (src/layers/camera.rs).

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    // Target size in pixels (xy), tan of half the vertical field of view
    // (z), the near plane's distance (w; the far plane is CLIP_RANGE times
    // farther).
    viewport: vec4<f32>,
}

const CLIP_RANGE: f32 = 1000.0;

// The depth buffer's value (0 near, 1 far) of a point `eye_depth` in front
// of the camera: what a rasterizer wrote there (wgpu's clip space, 0..1).
fn depth_of(camera: Camera, eye_depth: f32) -> f32 {
    let near = camera.viewport.w;
    let far = near * CLIP_RANGE;
    return far * (eye_depth - near) / ((far - near) * max(eye_depth, 1e-9));
}
