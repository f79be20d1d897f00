// The master section: the bloom's light added (bloom.wgsl), brightness and
// blackout on the linear composite, then a tonemap into the output's range, sampled at the output's size so
// `master.render_scale` can render the layers smaller or larger.

#include "common/fullscreen.wgsl"
#include "common/srgb.wgsl"

struct Master {
    brightness: f32,
    blackout: f32,
    tonemap: u32,
    encode_srgb: u32,
    // How much of the bloom's light is added (0: none).
    bloom: f32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
}

@group(0) @binding(0) var<uniform> master: Master;
@group(0) @binding(1) var composite: texture_2d<f32>;
@group(0) @binding(2) var linear_sampler: sampler;
@group(0) @binding(3) var bloom_light: texture_2d<f32>;

const ACES: u32 = 0u;
const REINHARD: u32 = 1u;

// Narkowicz's fit of the ACES filmic curve.
fn aces(x: vec3<f32>) -> vec3<f32> {
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
}


@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let glow = textureSampleLevel(bloom_light, linear_sampler, in.uv, 0.0).rgb;
    let hdr = textureSampleLevel(composite, linear_sampler, in.uv, 0.0).rgb + glow * master.bloom;
    let exposed = max(hdr, vec3<f32>(0.0)) * master.brightness * (1.0 - master.blackout);
    var ldr: vec3<f32>;
    switch master.tonemap {
        case ACES: {
            ldr = aces(exposed);
        }
        case REINHARD: {
            ldr = exposed / (1.0 + exposed);
        }
        default: {
            ldr = clamp(exposed, vec3<f32>(0.0), vec3<f32>(1.0));
        }
    }
    if master.encode_srgb != 0u {
        ldr = srgb_encode(ldr);
    }
    return vec4<f32>(ldr, 1.0);
}
