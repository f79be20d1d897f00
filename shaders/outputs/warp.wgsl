// One output's picture: its region of the canvas sampled where the corner
// pin and mesh put it (the vertices carry the pin's w, so interpolation is
// projective and the pin exact), soft edges applied to the projector's
// light, the mask, brightness and the black floor; or, while mapping, the
// alignment pattern: a grid, circles and the output's name.

#include "common/srgb.wgsl"

struct Warp {
    // The canvas region shown: x, y, width, height in 0..1.
    region: vec4<f32>,
    // Soft-edge widths: left, right, top, bottom, as fractions of the output.
    edges: vec4<f32>,
    // The output in pixels.
    size: vec2<f32>,
    gamma: f32,
    curve: f32,
    brightness: f32,
    black_level: f32,
    // 1: draw the alignment pattern instead of the canvas.
    pattern: u32,
    // The pattern's tint, a hue in 0..1.
    hue: f32,
    // The name as glyph numbers, four to a u32 (see `GLYPHS`).
    name: array<vec4<u32>, 2>,
    name_length: u32,
    // Mapping mode's handles in `grips`, and the one selected (or none:
    // 0xffffffff).
    grip_count: u32,
    selected: u32,
    // 1 when soft edges, a black floor or a mask shape the signal; 0 lets
    // the picture through as it is.
    shaping: u32,
}

@group(0) @binding(0) var canvas: texture_2d<f32>;
@group(0) @binding(1) var canvas_sampler: sampler;
@group(0) @binding(2) var mask: texture_2d<f32>;
@group(0) @binding(3) var<uniform> warp: Warp;
// Each handle: where it is on the output (0..1), and 0 for a corner, 1
// for a mesh point.
@group(0) @binding(4) var<uniform> grips: array<vec4<f32>, 260>;

struct WarpVertex {
    @builtin(position) position: vec4<f32>,
    @location(0) uv: vec2<f32>,
}

@vertex
fn vs_warp(@location(0) clip: vec4<f32>, @location(1) uv: vec2<f32>) -> WarpVertex {
    var out: WarpVertex;
    out.position = clip;
    out.uv = uv;
    return out;
}

// Paul Bourke's blend ramp: f(t) + f(1 - t) = 1, so two overlapping
// projectors add up to one; `curve` flattens the middle.
fn ramp(t: f32) -> f32 {
    let x = clamp(t, 0.0, 1.0);
    if x < 0.5 {
        return 0.5 * pow(2.0 * x, warp.curve);
    }
    return 1.0 - 0.5 * pow(2.0 * (1.0 - x), warp.curve);
}

// The share of light this output gives at `at` (0..1 of the output).
fn edge_weight(at: vec2<f32>) -> f32 {
    var w = 1.0;
    let from_edge = vec4<f32>(at.x, 1.0 - at.x, at.y, 1.0 - at.y);
    for (var i = 0; i < 4; i++) {
        if warp.edges[i] > 0.0 {
            w *= ramp(from_edge[i] / warp.edges[i]);
        }
    }
    return w;
}

// A 5x7 font: A-Z, 0-9 and _, each glyph's rows 0-3 in x and 4-6 in y,
// five bits a row with the leftmost pixel highest.
const GLYPHS = array<vec2<u32>, 37>(
    vec2<u32>(0xfc62eu, 0x4631u), vec2<u32>(0xf463eu, 0x7a31u), vec2<u32>(0x8422eu, 0x3a30u), vec2<u32>(0x8c63eu, 0x7a31u),
    vec2<u32>(0xf421fu, 0x7e10u), vec2<u32>(0xf421fu, 0x4210u), vec2<u32>(0xbc22eu, 0x3e31u), vec2<u32>(0xfc631u, 0x4631u),
    vec2<u32>(0x2108eu, 0x3884u), vec2<u32>(0x10847u, 0x3242u), vec2<u32>(0xc5251u, 0x4654u), vec2<u32>(0x84210u, 0x7e10u),
    vec2<u32>(0xad771u, 0x4631u), vec2<u32>(0xae631u, 0x4633u), vec2<u32>(0x8c62eu, 0x3a31u), vec2<u32>(0xf463eu, 0x4210u),
    vec2<u32>(0x8c62eu, 0x3655u), vec2<u32>(0xf463eu, 0x4654u), vec2<u32>(0x7420fu, 0x7821u), vec2<u32>(0x2109fu, 0x1084u),
    vec2<u32>(0x8c631u, 0x3a31u), vec2<u32>(0x8c631u, 0x1151u), vec2<u32>(0xac631u, 0x2ab5u), vec2<u32>(0x22a31u, 0x462au),
    vec2<u32>(0x22a31u, 0x1084u), vec2<u32>(0x2083fu, 0x7e08u), vec2<u32>(0xace2eu, 0x3a39u), vec2<u32>(0x21184u, 0x3884u),
    vec2<u32>(0x1062eu, 0x7d04u), vec2<u32>(0x1105fu, 0x3a21u), vec2<u32>(0x928c2u, 0x085fu), vec2<u32>(0x0fa1fu, 0x3a21u),
    vec2<u32>(0xf4106u, 0x3a31u), vec2<u32>(0x2083fu, 0x2108u), vec2<u32>(0x7462eu, 0x3a31u), vec2<u32>(0x7c62eu, 0x3041u),
    vec2<u32>(0x00000u, 0x7c00u),
);

// 1 where the output's name, centred and large, covers pixel `p`.
fn name_cover(p: vec2<f32>) -> f32 {
    let cell = max(floor(warp.size.y / 48.0), 1.0);
    let width = f32(warp.name_length) * 6.0 - 1.0;
    let origin = floor(warp.size * 0.5 - vec2<f32>(width, 7.0) * cell * 0.5);
    let at = floor((p - origin) / cell);
    if at.x < 0.0 || at.y < 0.0 || at.y >= 7.0 || at.x >= width {
        return 0.0;
    }
    let index = u32(at.x) / 6u;
    let column = u32(at.x) % 6u;
    if column >= 5u {
        return 0.0;
    }
    let packed = warp.name[index / 16u][(index / 4u) % 4u];
    // Indexed from a local copy: only mapping mode's pixels pay for it.
    var glyphs = GLYPHS;
    let glyph = glyphs[min((packed >> ((index % 4u) * 8u)) & 0xffu, 36u)];
    let row = u32(at.y);
    let bits = select(glyph.y >> ((row - 4u) * 5u), glyph.x >> (row * 5u), row < 4u);
    return f32((bits >> (4u - column)) & 1u);
}

fn hue_colour(h: f32) -> vec3<f32> {
    let k = vec3<f32>(0.0, 2.0 / 3.0, 1.0 / 3.0);
    return clamp(abs(fract(h + k) * 6.0 - 3.0) - 1.0, vec3<f32>(0.0), vec3<f32>(1.0));
}

// The alignment pattern in the region's canvas pixels (so circles stay
// round on the wall), tinted per output, with its name.
fn pattern(uv: vec2<f32>, p: vec2<f32>) -> vec3<f32> {
    let canvas_size = vec2<f32>(textureDimensions(canvas));
    let px = uv * warp.region.zw * canvas_size;
    let region_px = warp.region.zw * canvas_size;
    let step = min(region_px.x, region_px.y) / 8.0;
    let grid = abs(fract(px / step + 0.5) - 0.5) * step / max(fwidth(px), vec2<f32>(1e-4));
    let line = 1.0 - clamp(min(grid.x, grid.y) - 0.5, 0.0, 1.0);
    let centre = region_px * 0.5;
    let radius = length(px - centre);
    let ring_width = max(fwidth(radius), 1e-4);
    var circles = 0.0;
    for (var i = 1; i <= 3; i++) {
        let r = f32(i) * min(region_px.x, region_px.y) * 0.16;
        circles = max(circles, 1.0 - clamp(abs(radius - r) / ring_width - 1.0, 0.0, 1.0));
    }
    let edge = min(min(uv.x, 1.0 - uv.x), min(uv.y, 1.0 - uv.y)) * min(region_px.x, region_px.y);
    let border = 1.0 - clamp(edge / max(fwidth(edge), 1e-4) - 3.0, 0.0, 1.0);
    let tint = hue_colour(warp.hue);
    var colour = tint * 0.08;
    colour = mix(colour, tint * 0.7, line);
    colour = mix(colour, vec3<f32>(1.0), max(circles, border));
    return mix(colour, vec3<f32>(1.0), name_cover(p));
}

// Mapping mode's handles over the pattern: rings at the corners and mesh
// points, the selected one filled.
fn handles(colour: vec3<f32>, p: vec2<f32>) -> vec3<f32> {
    var out = colour;
    for (var i = 0u; i < min(warp.grip_count, 260u); i++) {
        let grip = grips[i];
        let radius = select(11.0, 6.0, grip.z > 0.5);
        let d = length(p - grip.xy * warp.size);
        let ring = 1.0 - clamp(abs(d - radius) - 1.0, 0.0, 1.0);
        let fill = select(0.0, 1.0 - clamp(d - radius, 0.0, 1.0), i == warp.selected);
        let tone = select(vec3<f32>(1.0, 0.85, 0.1), vec3<f32>(1.0), grip.z > 0.5);
        out = mix(out, tone, max(ring, fill));
    }
    return out;
}

@fragment
fn fs_warp(in: WarpVertex) -> @location(0) vec4<f32> {
    let at = in.position.xy / warp.size;
    var light: vec3<f32>;
    if warp.pattern != 0u {
        light = handles(pattern(in.uv, in.position.xy), in.position.xy);
    } else {
        let source = warp.region.xy + clamp(in.uv, vec2<f32>(0.0), vec2<f32>(1.0)) * warp.region.zw;
        light = textureSampleLevel(canvas, canvas_sampler, source, 0.0).rgb;
    }
    if warp.shaping == 0u {
        return vec4<f32>(light * warp.brightness, 1.0);
    }
    // The projector's signal is the encoded value: a share w of light is
    // the signal times w^(1/gamma).
    var signal = srgb_encode(light * warp.brightness);
    signal *= pow(edge_weight(at), 1.0 / warp.gamma);
    signal = warp.black_level + (1.0 - warp.black_level) * signal;
    signal *= textureSampleLevel(mask, canvas_sampler, at, 0.0).r;
    // The target encodes what is written.
    return vec4<f32>(srgb_decode(clamp(signal, vec3<f32>(0.0), vec3<f32>(1.0))), 1.0);
}
