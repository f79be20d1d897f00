// The orbit camera every 3D layer shares (src/layers/camera.rs).

// The scene's light (src/engine/light.rs), carried by every camera.
struct Light {
    // Unit direction towards the key light, in the scene (the layer's own
    // frame: placements only move and scale) and in the camera's view.
    towards: vec4<f32>,
    towards_view: vec4<f32>,
    // The key light's colour times its intensity.
    colour: vec4<f32>,
    // The light that fills what the key light does not reach: from the
    // sky above, and thrown back from the ground below.
    ambient: vec4<f32>,
    ambient_ground: vec4<f32>,
    // The scene's shadow map's clip space from this frame (common/shadow.wgsl).
    shadow: mat4x4<f32>,
    // How dark its shadows fall (0: no map for this camera), its texel in
    // metres.
    shadow_info: vec4<f32>,
    // The height fog (common/fog.wgsl): colour, density per metre at the
    // ground (0: none); how fast it thins upwards (x, metres); and the
    // matrix from this camera's frame into the scene's, where it lies.
    fog: vec4<f32>,
    fog_height: vec4<f32>,
    to_scene: mat4x4<f32>,
}

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    // Target size in pixels (xy), tan of half the vertical field of view
    // (z), the near plane's distance (w; the far plane is CLIP_RANGE times
    // farther).
    viewport: vec4<f32>,
    light: Light,
}

const CLIP_RANGE: f32 = 1000.0;

// The depth buffer's value (0 near, 1 far) of a point `eye_depth` in front
// of the camera: what a rasterizer wrote there (wgpu's clip space, 0..1).
fn depth_of(camera: Camera, eye_depth: f32) -> f32 {
    let near = camera.viewport.w;
    let far = near * CLIP_RANGE;
    return far * (eye_depth - near) / ((far - near) * max(eye_depth, 1e-9));
}

// The unit ray from `camera`'s eye through `uv` (0..1 from the top left
// of its picture).
fn camera_ray(camera: Camera, uv: vec2<f32>) -> vec3<f32> {
    let m = camera.view_proj;
    let right = normalize(vec3<f32>(m[0].x, m[1].x, m[2].x));
    let up = normalize(vec3<f32>(m[0].y, m[1].y, m[2].y));
    let forward = normalize(vec3<f32>(m[0].w, m[1].w, m[2].w));
    let aspect = camera.viewport.x / max(camera.viewport.y, 1.0);
    let ndc = vec2<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0);
    let tan_half = camera.viewport.z;
    return normalize(forward + right * ndc.x * tan_half * aspect + up * ndc.y * tan_half);
}
