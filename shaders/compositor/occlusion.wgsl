// Ambient occlusion in screen space over the scene's depth (the layers in
// the shared scene drew into it): how much of the sky a point's
// neighbourhood hides, estimated from the depth alone after the
// alchemy/scalable estimator of McGuire et al. (2011, 2012). Each pixel
// sums, over samples spread on a disc of `radius` metres about it, how far
// each sample stands above its tangent plane, falling off to nothing at
// the radius; a 4x4 pattern turns the samples' spiral from pixel to pixel,
// and the blur's 4x4 window, which leaves out neighbours at other depths,
// averages the sixteen turns away. The compositor multiplies the scene by
// the result (engine/occlusion.rs).

#include "common/screen.wgsl"

struct Occlusion {
    // Pixels (xy) and their inverse (zw).
    size: vec4<f32>,
    // tan of half the vertical field of view (x), width over height (y),
    // the near plane (z).
    lens: vec4<f32>,
    // Radius in metres (x), intensity (y), the bias against a flat
    // surface darkening itself, in metres at one metre away (z).
    shape: vec4<f32>,
}

@group(0) @binding(0) var<uniform> occlusion: Occlusion;

// Samples a pixel: enough that the blur's window hides the pattern, few
// enough for 4K.
const SAMPLES: u32 = 12u;
// Turns of the spiral the samples lie on.
const TURNS: f32 = 5.0;

// The eye depth at depth-buffer value `d`; 0 where nothing drew (the
// cleared far plane).
fn eye_depth(d: f32) -> f32 {
    return select(eye_depth_of(d, occlusion.lens.z), 0.0, d >= 1.0);
}

// The point in the camera's view (x right, y up, z towards the viewer) at
// `pixel` (its centre) and eye depth `z`.
fn view_point(pixel: vec2<f32>, z: f32) -> vec3<f32> {
    let ndc = vec2<f32>(pixel.x * occlusion.size.z * 2.0 - 1.0, 1.0 - pixel.y * occlusion.size.w * 2.0);
    let tan_half = occlusion.lens.x;
    return vec3<f32>(ndc.x * tan_half * occlusion.lens.y * z, ndc.y * tan_half * z, -z);
}

@group(1) @binding(0) var scene_depth: texture_depth_2d;
@group(1) @binding(1) var raw: texture_storage_2d<rgba16float, write>;

// The point seen at `pixel`; none (0) past the picture's edge or where
// nothing drew.
fn point_at(pixel: vec2<i32>) -> vec3<f32> {
    let inside = clamp(pixel, vec2<i32>(0), vec2<i32>(occlusion.size.xy) - 1);
    let z = eye_depth(textureLoad(scene_depth, inside, 0));
    let none = (z == 0.0) | any(inside != pixel);
    return select(view_point(vec2<f32>(inside) + 0.5, z), vec3<f32>(0.0), none);
}

// The surface's step along one axis at `pixel` (seen at `centre`), from
// the side whose two neighbours continue in a line to the centre: at a
// crease or a silhouette the other side belongs to another surface, and a
// normal from it would lean (a crease would hardly occlude itself).
fn tangent(pixel: vec2<i32>, centre: vec3<f32>, axis: vec2<i32>) -> vec3<f32> {
    let before = point_at(pixel - axis);
    let after = point_at(pixel + axis);
    let missed_before = abs(2.0 * before.z - point_at(pixel - 2 * axis).z - centre.z);
    let missed_after = abs(2.0 * after.z - point_at(pixel + 2 * axis).z - centre.z);
    let use_after = (before.z == 0.0) | ((after.z != 0.0) & (missed_after < missed_before));
    return select(centre - before, after - centre, use_after);
}

@compute @workgroup_size(64)
fn occlusion_trace(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pixel = thread_pixel(global, groups, vec2<u32>(occlusion.size.xy));
    if pixel.x < 0 {
        return;
    }
    let me = point_at(pixel);
    if me.z == 0.0 {
        textureStore(raw, pixel, vec4<f32>(1.0, 0.0, 0.0, 0.0));
        return;
    }
    let dx = tangent(pixel, me, vec2<i32>(1, 0));
    let dy = tangent(pixel, me, vec2<i32>(0, 1));
    var normal = normalize(cross(dx, dy));
    normal = select(normal, -normal, dot(normal, me) > 0.0);
    let z = -me.z;
    let radius = occlusion.shape.x;
    // The radius on screen, pixels; held within the picture's fifth so a
    // surface at the lens does not sample the whole picture.
    let reach = min(radius * 0.5 * occlusion.size.y / (z * occlusion.lens.x), 0.2 * occlusion.size.y);
    if reach < 1.0 {
        textureStore(raw, pixel, vec4<f32>(1.0, z, 0.0, 0.0));
        return;
    }
    // The spiral's turn from a 4x4 pattern (each of the blur's windows holds
    // every turn once).
    let cell = vec2<u32>(pixel) % 4u;
    let bayer = array<u32, 16>(0u, 8u, 2u, 10u, 12u, 4u, 14u, 6u, 3u, 11u, 1u, 9u, 15u, 7u, 13u, 5u);
    let spin = f32(bayer[cell.y * 4u + cell.x]) * (6.2831853 / 16.0);
    let r2 = radius * radius;
    let bias = occlusion.shape.z * z;
    var sum = 0.0;
    for (var k = 0u; k < SAMPLES; k++) {
        let t = (f32(k) + 0.5) / f32(SAMPLES);
        let angle = t * TURNS * 6.2831853 + spin;
        let offset = vec2<f32>(cos(angle), sin(angle)) * t * reach;
        let other = point_at(pixel + vec2<i32>(round(offset)));
        if other.z == 0.0 {
            continue;
        }
        let v = other - me;
        let vv = dot(v, v);
        let fade = max(1.0 - vv / r2, 0.0);
        sum += fade * fade * fade * max(dot(v, normal) - bias, 0.0) / sqrt(vv + 1e-4 * r2);
    }
    // Scaled so that at intensity 1 a point where a floor meets a wall is
    // about half hidden (its cosine-weighted sky), as it is: there the
    // samples' falloff and spread leave their mean near a twelfth.
    let hidden = occlusion.shape.y * 6.0 * sum / f32(SAMPLES);
    textureStore(raw, pixel, vec4<f32>(max(1.0 - hidden, 0.0), z, 0.0, 0.0));
}

@group(1) @binding(2) var traced: texture_2d<f32>;
@group(1) @binding(3) var blurred: texture_storage_2d<rgba16float, write>;

// The occlusion averaged over the 4x4 window about each pixel, each
// neighbour weighed by how near its depth is to the pixel's (none where
// nothing drew): an edge-keeping blur, as what is behind a silhouette is
// not occluded by it.
@compute @workgroup_size(64)
fn occlusion_blur(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pixel = thread_pixel(global, groups, vec2<u32>(occlusion.size.xy));
    if pixel.x < 0 {
        return;
    }
    let own = textureLoad(traced, pixel, 0);
    var ao = 1.0;
    if own.y > 0.0 {
        let high = vec2<i32>(occlusion.size.xy) - 1;
        var sum = 0.0;
        var weight = 0.0;
        for (var y = -2; y < 2; y++) {
            for (var x = -2; x < 2; x++) {
                let other = textureLoad(traced, clamp(pixel + vec2<i32>(x, y), vec2<i32>(0), high), 0);
                let near = abs(other.y - own.y) < 0.05 * own.y;
                let w = select(0.0, 1.0, near & (other.y > 0.0));
                sum += other.x * w;
                weight += w;
            }
        }
        ao = sum / max(weight, 1.0);
    }
    textureStore(blurred, pixel, vec4<f32>(ao, ao, ao, 1.0));
}
