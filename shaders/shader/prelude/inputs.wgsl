// What every `shader` layer gets, appended after the user's file (so its
// line numbers stay the user's). `struct Params` is generated from the
// file's `// @param` header.

#include "common/frame.wgsl"
#include "common/fullscreen.wgsl"

@group(0) @binding(0) var<uniform> sylva: Frame;
@group(0) @binding(1) var<uniform> params: Params;
@group(0) @binding(2) var previous_frame: texture_2d<f32>;
@group(0) @binding(3) var below_layers: texture_2d<f32>;
@group(0) @binding(4) var linear_sampler: sampler;

// This layer's own output last frame, for feedback and trails.
fn sample_previous(uv: vec2<f32>) -> vec4<f32> {
    return textureSampleLevel(previous_frame, linear_sampler, uv, 0.0);
}

// The composite of the layers below this one.
fn sample_below(uv: vec2<f32>) -> vec4<f32> {
    return textureSampleLevel(below_layers, linear_sampler, uv, 0.0);
}
