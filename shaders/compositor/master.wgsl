// The master section: the bloom's light added (bloom.wgsl), brightness,
// exposure and blackout on the linear composite, then a tone map into the
// output's range (src/engine/tonemap.rs: the filmic curve's constants and
// its reference), sampled at the output's size so `master.render_scale`
// can render the layers smaller or larger.

#include "common/fullscreen.wgsl"
#include "common/srgb.wgsl"

// The filmic curve's constants (`FilmicUniforms`).
struct Filmic {
    // Pulls each colour towards its grey, and its inverse.
    inset: mat3x3<f32>,
    outset: mat3x3<f32>,
    // Min and max stops around middle grey, middle grey, display gamma.
    range: vec4<f32>,
    // Middle grey encoded, where it lands on the display, the slope
    // there, the inset share.
    pivot: vec4<f32>,
    // Toe and shoulder powers, the raw sigmoid at black and at white.
    shape: vec4<f32>,
}

struct Master {
    brightness: f32,
    blackout: f32,
    tonemap: u32,
    encode_srgb: u32,
    // How much of the bloom's light is added (0: none).
    bloom: f32,
    // 2^master.exposure.
    exposure: f32,
    _pad0: f32,
    _pad1: f32,
    filmic: Filmic,
}

@group(0) @binding(0) var<uniform> master: Master;
@group(0) @binding(1) var composite: texture_2d<f32>;
@group(0) @binding(2) var linear_sampler: sampler;
@group(0) @binding(3) var bloom_light: texture_2d<f32>;

const FILMIC: u32 = 0u;
const ACES: u32 = 1u;
const REINHARD: u32 = 2u;

// Narkowicz's fit of the ACES filmic curve.
fn aces(x: vec3<f32>) -> vec3<f32> {
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3<f32>(0.0), vec3<f32>(1.0));
}

// The tempered power sigmoid on encoded values `x` (0..1), scaled to span
// black to white: through middle grey with its slope, bending into black
// and white with the toe's and shoulder's powers.
fn filmic_sigmoid(f: Filmic, x: vec3<f32>) -> vec3<f32> {
    let grey = f.pivot.y;
    let d = f.pivot.z * (x - f.pivot.x);
    let below = d < vec3<f32>(0.0);
    let reach = select(vec3<f32>(1.0 - grey), vec3<f32>(grey), below);
    let power = select(vec3<f32>(f.shape.y), vec3<f32>(f.shape.x), below);
    let raw = grey + d / pow(1.0 + pow(abs(d) / reach, power), 1.0 / power);
    return (raw - f.shape.z) / (f.shape.w - f.shape.z);
}

// Linear light to the linear colour the display shows (tonemap.rs).
fn filmic(f: Filmic, linear: vec3<f32>) -> vec3<f32> {
    let pulled = f.inset * max(linear, vec3<f32>(0.0));
    let stops = log2(max(pulled, vec3<f32>(1e-10)) / f.range.z);
    let encoded = clamp((stops - f.range.x) / (f.range.y - f.range.x), vec3<f32>(0.0), vec3<f32>(1.0));
    let restored = f.outset * filmic_sigmoid(f, encoded);
    return pow(clamp(restored, vec3<f32>(0.0), vec3<f32>(1.0)), vec3<f32>(f.range.w));
}

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let glow = textureSampleLevel(bloom_light, linear_sampler, in.uv, 0.0).rgb;
    let hdr = textureSampleLevel(composite, linear_sampler, in.uv, 0.0).rgb + glow * master.bloom;
    let exposed = max(hdr, vec3<f32>(0.0)) * master.brightness * master.exposure * (1.0 - master.blackout);
    var ldr: vec3<f32>;
    switch master.tonemap {
        case FILMIC: {
            ldr = filmic(master.filmic, exposed);
        }
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
