// Pixel mapping for lighting: each LED pixel of the outputs file's
// fixtures is the mean of its rectangle of the picture (a grid of
// bilinear taps), encoded to sRGB as the screen shows it, one texel per
// pixel in rows of ROW. A few kilobytes come back to the CPU instead of
// the frame.

#include "common/srgb.wgsl"

// Each pixel's rectangle on the picture: x0, y0, x1, y1 in 0..1.
@group(0) @binding(0) var<storage, read> spots: array<vec4<f32>>;
// The texel of the first spot: fixtures of several pictures are one
// dispatch each, one after another in the texture.
@group(0) @binding(1) var<uniform> first: vec4<u32>;

@group(1) @binding(0) var picture: texture_2d<f32>;
@group(1) @binding(1) var picture_sampler: sampler;
@group(1) @binding(2) var colours: texture_storage_2d<rgba8unorm, write>;

// Texels a row of `colours`; the Rust side makes it as wide.
const ROW: u32 = 256u;
// Taps a side of a pixel's rectangle.
const TAPS: u32 = 4u;

@compute @workgroup_size(64)
fn sample(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let index = id.x + id.y * groups.x * 64u;
    if index >= arrayLength(&spots) {
        return;
    }
    let rect = spots[index];
    var sum = vec3<f32>(0.0);
    for (var j = 0u; j < TAPS; j++) {
        for (var i = 0u; i < TAPS; i++) {
            let t = (vec2<f32>(f32(i), f32(j)) + 0.5) / f32(TAPS);
            let uv = clamp(mix(rect.xy, rect.zw, t), vec2<f32>(0.0), vec2<f32>(1.0));
            sum += textureSampleLevel(picture, picture_sampler, uv, 0.0).rgb;
        }
    }
    let mean = sum / f32(TAPS * TAPS);
    let texel = first.x + index;
    textureStore(colours, vec2<u32>(texel % ROW, texel / ROW), vec4<f32>(srgb_encode(mean), 1.0));
}
