// Blends one layer over the composite of the layers below it, in linear HDR.
// Layers are premultiplied; every mode reduces to `below` at opacity 0.

#include "common/fullscreen.wgsl"

struct Blend {
    mode: u32,
    opacity: f32,
    _pad0: f32,
    _pad1: f32,
}

@group(0) @binding(0) var<uniform> blend: Blend;
@group(0) @binding(1) var below: texture_2d<f32>;
@group(0) @binding(2) var layer: texture_2d<f32>;

const NORMAL: u32 = 0u;
const ADD: u32 = 1u;
const SCREEN: u32 = 2u;
const MULTIPLY: u32 = 3u;

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let pixel = vec2<i32>(in.position.xy);
    let b = textureLoad(below, pixel, 0).rgb;
    let l = textureLoad(layer, pixel, 0);
    let o = blend.opacity;
    var rgb: vec3<f32>;
    switch blend.mode {
        case ADD: {
            rgb = b + l.rgb * o;
        }
        case SCREEN: {
            // 1 - (1 - b)(1 - l), written so it stays defined above 1.
            rgb = b + (l.rgb - b * l.rgb) * o;
        }
        case MULTIPLY: {
            // Transparent parts of the layer multiply by one.
            rgb = b * mix(vec3<f32>(1.0), l.rgb + vec3<f32>(1.0 - l.a), o);
        }
        default: {
            rgb = b * (1.0 - l.a * o) + l.rgb * o;
        }
    }
    return vec4<f32>(rgb, 1.0);
}

// Transparent black: the composite cleared before the first layer, by
// compute where it can be stored to (a 4K clear through the rasterizer
// took 1.2 ms on a GPU with few graphics units).
@fragment
fn fs_clear(in: FullscreenVertex) -> @location(0) vec4<f32> {
    return vec4<f32>(0.0);
}
