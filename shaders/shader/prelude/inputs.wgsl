// What every `shader` layer gets, appended after the user's file (so its
// line numbers stay the user's). `struct Params` is generated from the
// file's `// @param` header.

#include "common/frame.wgsl"
#include "common/fullscreen.wgsl"
#include "common/camera.wgsl"
#include "common/world.wgsl"
#include "common/shadow.wgsl"
#include "common/fog.wgsl"

@group(0) @binding(0) var<uniform> sylva: Frame;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var previous_frame: texture_2d<f32>;
@group(0) @binding(3) var below_layers: texture_2d<f32>;
@group(0) @binding(4) var linear_sampler: sampler;
// The shared scene's camera (the `scene.*` parameters) and the bodies that
// stand in it (the dancing figure's capsules, scene metres, ground at
// y = 0): a backdrop drawn here sees the sky and ground from where the 3D
// layers are seen, and can darken the ground under the figure.
@group(0) @binding(5) var<uniform> scene: Camera;
@group(0) @binding(6) var<uniform> scene_bodies: Bodies;
// The scene's shadow map, which the layers in the scene cast into: see
// `scene_light_reaching`.
@group(0) @binding(7) var scene_shadow: texture_depth_2d;
@group(0) @binding(8) var scene_shadow_sampler: sampler_comparison;

// How much of the scene's key light reaches scene point `p` past what the
// layers in the scene cast (1 lit; common/shadow.wgsl).
fn scene_light_reaching(p: vec3<f32>) -> f32 {
    return key_light_reaching(scene.light, scene_shadow, scene_shadow_sampler, p);
}

// The ray from the scene's eye through `uv` (0..1 from the top left).
fn scene_ray(uv: vec2<f32>) -> vec3<f32> {
    return camera_ray(scene, uv);
}

// This layer's own output last frame, for feedback and trails.
fn sample_previous(uv: vec2<f32>) -> vec4<f32> {
    return textureSampleLevel(previous_frame, linear_sampler, uv, 0.0);
}

// The composite of the layers below this one.
fn sample_below(uv: vec2<f32>) -> vec4<f32> {
    return textureSampleLevel(below_layers, linear_sampler, uv, 0.0);
}
