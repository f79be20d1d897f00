// The scene's lens (engine/lens.rs): depth of field and the camera's
// motion blur, after the scene's anti-aliasing, each a pass by compute
// over the composite and the scene's depth.
//
// Depth of field gathers, for each pixel, the samples on a disc as wide
// as the largest blur whose own blur circle reaches it (a point's circle
// grows with how far it stands from the focus), so a blurred foreground
// spreads over what is behind it and a blurred background does not creep
// over a sharp figure in front of it. Motion blur averages each pixel
// along the way the point seen there crossed the picture while the
// shutter was open (from the scene's depth and the camera's move since
// the last frame, as the anti-aliasing finds its history).

#include "common/screen.wgsl"

struct Lens {
    // Pixels (xy) and their inverse (zw).
    size: vec4<f32>,
    // The near plane, the focus distance (metres), the largest blur
    // circle's radius (pixels; 0: no depth of field).
    optics: vec4<f32>,
    // The share of a frame the shutter is open (x).
    shutter: vec4<f32>,
    // This frame's clip space to the scene's (its shift included).
    unproject: mat4x4<f32>,
    // The scene to this frame's and the last frame's clip space, unshifted.
    steady: mat4x4<f32>,
    before: mat4x4<f32>,
}

@group(0) @binding(0) var<uniform> lens: Lens;
@group(1) @binding(0) var now: texture_2d<f32>;
@group(1) @binding(1) var scene_depth: texture_depth_2d;
@group(1) @binding(2) var out: texture_storage_2d<rgba16float, write>;

// Samples on the depth of field's disc.
const DISC_TAPS: u32 = 32u;
// Samples along the motion.
const MOTION_TAPS: u32 = 10u;
// The longest smear, pixels.
const MOST_MOTION_PX: f32 = 64.0;
const GOLDEN_ANGLE: f32 = 2.3999632;

fn inside(pixel: vec2<i32>) -> vec2<i32> {
    return clamp(pixel, vec2<i32>(0), vec2<i32>(lens.size.xy) - 1);
}

// The eye depth seen at `pixel` (the far plane where nothing drew).
fn eye_depth_at(pixel: vec2<i32>) -> f32 {
    return eye_depth_of(textureLoad(scene_depth, inside(pixel), 0), lens.optics.x);
}

// The radius in pixels a point `depth` metres off blurs to.
fn blur_radius(depth: f32) -> f32 {
    return min(lens.optics.z * abs(1.0 - lens.optics.y / depth), lens.optics.z);
}

@compute @workgroup_size(64)
fn depth_of_field(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pixel = thread_pixel(global, groups, vec2<u32>(lens.size.xy));
    if pixel.x < 0 {
        return;
    }
    let own_depth = eye_depth_at(pixel);
    let own_blur = blur_radius(own_depth);
    var sum = textureLoad(now, pixel, 0).rgb;
    var weight = 1.0;
    for (var k = 0u; k < DISC_TAPS; k++) {
        let r = sqrt((f32(k) + 0.5) / f32(DISC_TAPS)) * lens.optics.z;
        let angle = f32(k) * GOLDEN_ANGLE;
        let at = inside(pixel + vec2<i32>(round(vec2<f32>(cos(angle), sin(angle)) * r)));
        let depth = eye_depth_at(at);
        // What stands behind this pixel blurs over it no more than the
        // pixel itself is blurred.
        let reach = select(blur_radius(depth), min(blur_radius(depth), own_blur), depth > own_depth);
        let w = clamp(reach - r + 1.0, 0.0, 1.0);
        sum += textureLoad(now, at, 0).rgb * w;
        weight += w;
    }
    textureStore(out, pixel, vec4<f32>(sum / weight, 1.0));
}

@compute @workgroup_size(64)
fn motion_blur(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pixel = thread_pixel(global, groups, vec2<u32>(lens.size.xy));
    if pixel.x < 0 {
        return;
    }
    // How far the point seen here crossed the picture in a frame.
    let uv = (vec2<f32>(pixel) + 0.5) * lens.size.zw;
    let d = textureLoad(scene_depth, pixel, 0);
    let ndc_moved = moved_since(uv, d, lens.unproject, lens.steady, lens.before).xy;
    var moved = vec2<f32>(ndc_moved.x, -ndc_moved.y) * 0.5 * lens.size.xy * lens.shutter.x;
    let length_px = length(moved);
    moved *= min(1.0, MOST_MOTION_PX / max(length_px, 1e-6));
    var sum = vec3<f32>(0.0);
    for (var k = 0u; k < MOTION_TAPS; k++) {
        let t = (f32(k) + 0.5) / f32(MOTION_TAPS) - 0.5;
        sum += textureLoad(now, inside(pixel + vec2<i32>(round(moved * t))), 0).rgb;
    }
    textureStore(out, pixel, vec4<f32>(sum / f32(MOTION_TAPS), 1.0));
}
