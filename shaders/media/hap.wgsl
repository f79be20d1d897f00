// A HAP frame's textures to colour, on the GPU: the BC blocks were
// uploaded as they are (the GPU's texture units undo BC1/BC3/BC4), and
// this pass reads each texel once, turns HAP Q's scaled YCoCg into RGB
// (after van Waveren and Castaño: chroma offset by a half and divided by
// the block's scale, stored as (scale - 1) * 8), takes HAP Q Alpha's
// alpha from its second texture, and writes the colour texture layers
// sample. The values are gamma-encoded, as the encoder took them.

#include "common/fullscreen.wgsl"
#include "common/srgb.wgsl"

struct Hap {
    // 0: RGB (HAP), 1: RGBA (HAP Alpha), 2: scaled YCoCg (HAP Q),
    // 3: scaled YCoCg and alpha (HAP Q Alpha), 4: alpha alone, as grey.
    flavour: u32,
    width: u32,
    height: u32,
    _pad: u32,
}

@group(0) @binding(0) var first: texture_2d<f32>;
@group(0) @binding(1) var second: texture_2d<f32>;
@group(0) @binding(2) var<uniform> hap: Hap;

fn from_scaled_ycocg(t: vec4<f32>) -> vec3<f32> {
    let scale = t.z * (255.0 / 8.0) + 1.0;
    let co = (t.x - 128.0 / 255.0) / scale;
    let cg = (t.y - 128.0 / 255.0) / scale;
    let y = t.w;
    return vec3<f32>(y + co - cg, y + cg, y - co - cg);
}

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let size = vec2<u32>(hap.width, hap.height);
    let texel = min(vec2<u32>(in.uv * vec2<f32>(size)), size - 1u);
    let t = textureLoad(first, texel, 0);
    var colour = vec4<f32>(t.rgb, 1.0);
    switch hap.flavour {
        case 1u: {
            colour = t;
        }
        case 2u: {
            colour = vec4<f32>(from_scaled_ycocg(t), 1.0);
        }
        case 3u: {
            colour = vec4<f32>(from_scaled_ycocg(t), textureLoad(second, texel, 0).r);
        }
        case 4u: {
            colour = vec4<f32>(vec3<f32>(t.r), 1.0);
        }
        default: {}
    }
    return vec4<f32>(srgb_decode(clamp(colour.rgb, vec3<f32>(0.0), vec3<f32>(1.0))), colour.a);
}
