// Capturing the impostor atlas (forest/atlas.wgsl), once when a forest's
// crowns are grown: every crown drawn whole from one view into that view's
// layer, each in its cell, orthographically; what a cell keeps is how
// leafy each texel is and how bright its leaves, and its normal in the
// crown's frame, so a tree drawn as its impostor takes its own colour and
// the scene's light like the crowns drawn whole.

#include "common/random.wgsl"
#include "common/fullscreen.wgsl"
#include "forest/crown.wgsl"
#include "forest/atlas.wgsl"

struct Capture {
    // The view (the layer) captured.
    view: u32,
    // The atlas's rows of crowns.
    rows: u32,
    // Texels across a cell.
    cell: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> capture: Capture;
@group(0) @binding(12) var<storage, read> crown_segments: array<CrownSegment>;
@group(0) @binding(13) var<storage, read> crown_leaves: array<vec4<f32>>;
@group(0) @binding(14) var<storage, read> crown_table: array<vec4<u32>>;
@group(0) @binding(16) var<storage, read> crown_reaches: array<f32>;

struct Captured {
    @builtin(position) position: vec4<f32>,
    @location(0) normal: vec3<f32>,
    // Leaf (1) or bark (0), and the leaf's brightness.
    @location(1) leaf: vec2<f32>,
}

// Vertex `vertex` of crown `instance` as its view sees it, in its cell.
@vertex
fn vs_capture(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> Captured {
    let toward = view_direction(capture.view);
    let forward = -toward;
    let v = crown_vertex(vertex, crown_table[instance], vec2<f32>(1.0, 0.0), forward, instance);
    if v.hidden {
        return Captured(vec4<f32>(0.0, 0.0, 2.0, 1.0), vec3<f32>(0.0), vec2<f32>(0.0));
    }
    // The cell spans the crown's bounding sphere; branches at least half a
    // texel thick, so the far twigs stay.
    let radius = crown_reaches[instance];
    let width = select(max(v.width, radius / capture.cell), v.width, v.leaf);
    let from_centre = v.at + v.spread * width - CAPTURE_CENTRE;
    let basis = upright_basis(forward);
    let at = vec2<f32>(dot(from_centre, basis[0]), dot(from_centre, basis[1])) / radius;
    let uv = atlas_uv(instance, clamp(at, vec2<f32>(-1.0), vec2<f32>(1.0)), capture.rows);
    let depth = 0.5 + 0.5 * dot(from_centre, forward) / radius;
    let shade = select(0.0, v.shade / 1.25, v.leaf);
    return Captured(vec4<f32>(uv.x * 2.0 - 1.0, 1.0 - uv.y * 2.0, depth, 1.0), v.normal, vec2<f32>(f32(v.leaf), shade));
}

struct CapturedTexel {
    // Leafy, leaf brightness / 1.25, unused, covered.
    @location(0) albedo: vec4<f32>,
    // The normal, 0.5 + 0.5 n.
    @location(1) normal: vec4<f32>,
}

@fragment
fn fs_capture(in: Captured) -> CapturedTexel {
    let n = normalize(in.normal);
    return CapturedTexel(vec4<f32>(in.leaf.x, in.leaf.y, 0.0, 1.0), vec4<f32>(n * 0.5 + 0.5, 1.0));
}

// The next mip level of one layer: each texel the mean of the four it
// covers in the level above (`finer`). What a texel keeps is weighed by
// its coverage already (0 where nothing was drawn), so the mean is the
// coverage-weighted one; a cell's texels stay within it down to 8 across.
@group(0) @binding(0) var finer_leaves: texture_2d<f32>;
@group(0) @binding(1) var finer_normals: texture_2d<f32>;

@fragment
fn fs_downsample(at: FullscreenVertex) -> CapturedTexel {
    let texel = vec2<u32>(at.position.xy) * 2u;
    var leaves = vec4<f32>(0.0);
    var normals = vec4<f32>(0.0);
    for (var k = 0u; k < 4u; k++) {
        let finer_at = texel + vec2<u32>(k & 1u, k >> 1u);
        leaves += textureLoad(finer_leaves, finer_at, 0);
        normals += textureLoad(finer_normals, finer_at, 0);
    }
    return CapturedTexel(leaves * 0.25, normals * 0.25);
}

