// Temporal anti-aliasing of the scene (engine/antialias.rs): the scene's
// camera is shifted by a different fraction of a pixel each frame, and
// each pixel here blends this frame's colour with what the pixel showed
// before, found where the camera then saw the same point (the scene's
// depth unprojected by this frame's camera, and the point's move across
// the picture between the last frame's unshifted camera and this one's:
// a still camera resamples its history exactly, not a shift off), so a still edge averages over the shifts into its coverage
// and a slow camera move does not shimmer. History that no longer
// belongs (a figure moved away, something uncovered, a cut) is rejected
// by clamping it within the colours around the pixel now (Karis 2014);
// colours are blended compressed by their brightness, so a bright spark
// does not ghost.

#include "common/screen.wgsl"

struct Antialias {
    // Pixels (xy) and their inverse (zw).
    size: vec4<f32>,
    // This frame's clip space to the scene's (its shift included).
    unproject: mat4x4<f32>,
    // The scene to this frame's and the last frame's clip space, unshifted.
    steady: mat4x4<f32>,
    before: mat4x4<f32>,
    // The share of history kept (x); 1 where there is history (y).
    keep: vec4<f32>,
}

@group(0) @binding(0) var<uniform> antialias: Antialias;
@group(1) @binding(0) var now: texture_2d<f32>;
@group(1) @binding(1) var scene_depth: texture_depth_2d;
@group(1) @binding(2) var history: texture_2d<f32>;
@group(1) @binding(3) var history_sampler: sampler;
@group(1) @binding(4) var resolved: texture_storage_2d<rgba16float, write>;

fn luma(c: vec3<f32>) -> f32 {
    return dot(c, vec3<f32>(0.2126, 0.7152, 0.0722));
}

// A colour compressed by its brightness (and back): a firefly weighs as
// much as its neighbours in the blend.
fn compressed(c: vec3<f32>) -> vec3<f32> {
    return c / (1.0 + luma(c));
}

fn expanded(c: vec3<f32>) -> vec3<f32> {
    return c / max(1.0 - luma(c), 1e-4);
}

@compute @workgroup_size(64)
fn antialias_resolve(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let size = vec2<u32>(antialias.size.xy);
    let pixel = thread_pixel(global, groups, size);
    if pixel.x < 0 {
        return;
    }
    let high = vec2<i32>(size) - 1;
    let current = compressed(textureLoad(now, pixel, 0).rgb);
    // The colours around the pixel now bound what its history may be.
    var low_colour = current;
    var high_colour = current;
    for (var y = -1; y <= 1; y++) {
        for (var x = -1; x <= 1; x++) {
            let c = compressed(textureLoad(now, clamp(pixel + vec2<i32>(x, y), vec2<i32>(0), high), 0).rgb);
            low_colour = min(low_colour, c);
            high_colour = max(high_colour, c);
        }
    }
    // Where the point seen here was on the last frame's picture.
    let uv = (vec2<f32>(pixel) + 0.5) * antialias.size.zw;
    let d = textureLoad(scene_depth, pixel, 0);
    let moved = moved_since(uv, d, antialias.unproject, antialias.steady, antialias.before);
    let then_uv = uv - vec2<f32>(moved.x * 0.5, -moved.y * 0.5);
    let seen = all(then_uv >= vec2<f32>(0.0)) & all(then_uv <= vec2<f32>(1.0)) & (moved.z > 0.0);
    var blended = current;
    if antialias.keep.y > 0.0 & seen {
        let kept = compressed(textureSampleLevel(history, history_sampler, then_uv, 0.0).rgb);
        blended = mix(current, clamp(kept, low_colour, high_colour), antialias.keep.x);
    }
    textureStore(resolved, pixel, vec4<f32>(expanded(blended), 1.0));
}
