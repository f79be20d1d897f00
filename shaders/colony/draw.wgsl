// Drawing the colony: each node with a parent is one branch segment, from
// the parent to a + (b - a) * t, so branches visibly extend as they grow.
// Lines are drawn by compute (`splat_lines`: a thread a segment walks the
// pixels its screen-space band covers and adds its colour with fixed-point
// atomics; `resolve_lines` turns the sums into the layer), since a rasterizer
// spends six vertices on each of a million short segments; tubes are
// six-sided cylinders with a cone cap, built from the vertex index (WGSL
// has no geometry shaders), lit and depth-tested.

#include "common/camera.wgsl"
#include "common/lighting.wgsl"
#include "colony/colony.wgsl"
#include "colony/transform.wgsl"

struct DrawParams {
    width: f32,
    thickness: f32,
    brightness: f32,
    fade: f32,
    palette: u32,
    colour_by: u32,
    // How much wider than its tips a line is drawn at the root.
    taper: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> draw: DrawParams;
@group(0) @binding(2) var<storage, read> nodes: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> info: array<NodeInfo>;
@group(0) @binding(4) var<storage, read> state: array<u32>;
// The lines' colour and coverage added up, four words a pixel: written by
// `splat_lines`, read by `resolve_lines` (two names for one buffer, one a
// pipeline).
@group(0) @binding(12) var<storage, read_write> line_sums: array<atomic<u32>>;
@group(0) @binding(13) var<storage, read> line_totals: array<u32>;

struct Branch {
    @builtin(position) position: vec4<f32>,
    @location(0) colour: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) world: vec3<f32>,
}

// Cosine palettes (a + b cos(2 pi (c x + d))), in the order of colony.palette.
fn palette(x: f32) -> vec3<f32> {
    var a = vec3<f32>(0.5, 0.5, 0.5);
    var b = vec3<f32>(0.5, 0.5, 0.5);
    var c = vec3<f32>(1.0, 1.0, 1.0);
    var d = vec3<f32>(0.30, 0.20, 0.20);
    switch draw.palette {
        case 1u: { d = vec3<f32>(0.00, 0.10, 0.20); c = vec3<f32>(1.0, 0.7, 0.4); }
        case 2u: { a = vec3<f32>(0.35, 0.5, 0.3); d = vec3<f32>(0.6, 0.35, 0.5); c = vec3<f32>(0.8, 0.8, 0.5); }
        case 3u: { d = vec3<f32>(0.55, 0.60, 0.65); c = vec3<f32>(0.6, 0.8, 1.0); }
        default: {}
    }
    return a + b * cos(6.2831853 * (c * x + d));
}

// Position along the branch (0 root, 1 tip) or age (0 oldest, 1 newest).
fn shade(node: u32) -> vec3<f32> {
    let depth = f32(info[node].offset) / f32(max(state[MAX_OFFSET], 1u));
    let age = f32(node) / f32(max(state[NODE_COUNT], 1u));
    // A select, not a branch on the uniform (see fs_body in skinned/body.wgsl).
    let x = select(depth, age, draw.colour_by == 1u);
    return palette(x) * draw.brightness * draw.fade;
}

// The segment of node i: its parent end and its growing tip.
fn segment(i: u32) -> array<vec3<f32>, 2> {
    let parent = u32(max(info[i].parent, 0));
    let a = node_position(parent, nodes[parent].xyz);
    let b = node_position(i, nodes[i].xyz);
    return array<vec3<f32>, 2>(a, a + (b - a) * nodes[i].w);
}

fn hidden() -> Branch {
    var out: Branch;
    out.position = vec4<f32>(2.0, 2.0, 2.0, 1.0);
    return out;
}

// Fixed-point steps of one unit of colour in the line sums.
const LINE_STEPS: f32 = 256.0;
// Most pixels one segment walks along, and across.
const MAX_ALONG: i32 = 4096;
const MAX_ACROSS: i32 = 32;

// Adds `colour` (coverage 1) at pixel (x, y) of the sums.
fn add_line_pixel(x: i32, y: i32, colour: vec3<f32>) {
    let size = vec2<i32>(camera.viewport.xy);
    if x < 0 || y < 0 || x >= size.x || y >= size.y {
        return;
    }
    let at = u32(y * size.x + x) * 4u;
    let steps = vec3<u32>(max(colour, vec3<f32>(0.0)) * LINE_STEPS);
    atomicAdd(&line_sums[at], steps.x);
    atomicAdd(&line_sums[at + 1u], steps.y);
    atomicAdd(&line_sums[at + 2u], steps.z);
    atomicAdd(&line_sums[at + 3u], u32(LINE_STEPS));
}

// The pixels whose centres lie in the band `width` wide around the
// segment from `a` to `b` (pixels, y down), walked along its longer axis
// as a rasterizer covers the same band drawn as a quad.
fn splat_band(a: vec2<f32>, b: vec2<f32>, width: f32, colour: vec3<f32>) {
    let d = b - a;
    let x_major = abs(d.x) >= abs(d.y);
    // Along: the major axis; across: the other.
    let a2 = select(a.yx, a, x_major);
    let d2 = select(d.yx, d, x_major);
    if abs(d2.x) < 1e-6 {
        return;
    }
    let half = 0.5 * width * length(d) / abs(d2.x);
    let low = min(a2.x, a2.x + d2.x);
    let high = max(a2.x, a2.x + d2.x);
    let first = i32(ceil(low - 0.5));
    let last = min(i32(floor(high - 0.5)), first + MAX_ALONG);
    for (var c = first; c <= last; c++) {
        let t = clamp((f32(c) + 0.5 - a2.x) / d2.x, 0.0, 1.0);
        let centre = a2.y + d2.y * t;
        let top = i32(ceil(centre - 0.5 - half));
        let bottom = min(i32(floor(centre - 0.5 + half)), top + MAX_ACROSS);
        for (var r = top; r <= bottom; r++) {
            if x_major {
                add_line_pixel(c, r, colour);
            } else {
                add_line_pixel(r, c, colour);
            }
        }
    }
}

@compute @workgroup_size(256)
fn splat_lines(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = global.x + global.y * groups.x * 256u;
    if i >= state[NODE_COUNT] || info[i].parent < 0 {
        return;
    }
    let ends = segment(i);
    let clip_a = camera.view_proj * vec4<f32>(ends[0], 1.0);
    let clip_b = camera.view_proj * vec4<f32>(ends[1], 1.0);
    // A segment reaching behind the camera is left out (a rasterizer would
    // clip it; growth seldom passes the lens).
    if clip_a.w < 1e-4 || clip_b.w < 1e-4 {
        return;
    }
    let size = camera.viewport.xy;
    let a = vec2<f32>(clip_a.x / clip_a.w * 0.5 + 0.5, 0.5 - clip_a.y / clip_a.w * 0.5) * size;
    let b = vec2<f32>(clip_b.x / clip_b.w * 0.5 + 0.5, 0.5 - clip_b.y / clip_b.w * 0.5) * size;
    let width = line_width(i);
    let margin = width;
    if (a.x < -margin && b.x < -margin) || (a.y < -margin && b.y < -margin)
        || (a.x > size.x + margin && b.x > size.x + margin) || (a.y > size.y + margin && b.y > size.y + margin) {
        return;
    }
    splat_band(a, b, width, shade(i) * (0.35 + 0.65 * nodes[i].w));
}

// The width of node i's segment in pixels: `width` at the tips, widening
// by `taper` towards the root, so the light has a trunk and limbs.
fn line_width(i: u32) -> f32 {
    return draw.width * (1.0 + draw.taper * limb(info[i].offset, state[MAX_OFFSET]));
}

@group(1) @binding(0) var lines_target: texture_storage_2d<rgba16float, write>;

// The sums into the layer: colour and coverage as the additive quads gave
// (every pixel written, so the target needs no clearing).
@compute @workgroup_size(8, 8)
fn resolve_lines(@builtin(global_invocation_id) id: vec3<u32>) {
    let size = textureDimensions(lines_target);
    if id.x >= size.x || id.y >= size.y {
        return;
    }
    let at = (id.y * u32(camera.viewport.x) + id.x) * 4u;
    let sums = vec4<f32>(f32(line_totals[at]), f32(line_totals[at + 1u]), f32(line_totals[at + 2u]), f32(line_totals[at + 3u]));
    textureStore(lines_target, id.xy, sums / LINE_STEPS);
}

// Radius at a node: thinner towards the tips.
fn radius(node: u32) -> f32 {
    return tube_radius(draw.thickness, info[node].offset, state[MAX_OFFSET]);
}

const SIDES: u32 = 6u;

@vertex
fn vs_tube(@builtin(vertex_index) vertex: u32, @builtin(instance_index) i: u32) -> Branch {
    if info[i].parent < 0 || i >= state[NODE_COUNT] {
        return hidden();
    }
    let ends = segment(i);
    let t = nodes[i].w;
    let axis_length = length(ends[1] - ends[0]);
    let axis = select(vec3<f32>(0.0, 1.0, 0.0), (ends[1] - ends[0]) / axis_length, axis_length > 1e-6);
    let helper = select(vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(1.0, 0.0, 0.0), abs(axis.y) > 0.9);
    let u = normalize(cross(axis, helper));
    let v = cross(axis, u);
    let r_start = radius(u32(info[i].parent));
    let r_end = radius(i) * t;
    var position: vec3<f32>;
    var normal: vec3<f32>;
    if vertex < SIDES * 6u {
        // The side: one quad per side, corners (side step, end).
        let quad = array<vec2<u32>, 6>(
            vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), vec2<u32>(1u, 1u),
            vec2<u32>(0u, 0u), vec2<u32>(1u, 1u), vec2<u32>(0u, 1u),
        );
        let corner = quad[vertex % 6u];
        let angle = f32(vertex / 6u + corner.x) * 6.2831853 / f32(SIDES);
        normal = cos(angle) * u + sin(angle) * v;
        let at_end = corner.y == 1u;
        position = select(ends[0] + normal * r_start, ends[1] + normal * r_end, at_end);
    } else {
        // The cap: a cone from the tip ring to a point beyond the tip.
        let k = vertex - SIDES * 6u;
        let side = k / 3u;
        let corner = k % 3u;
        let angle = f32(side + select(0u, 1u, corner == 1u)) * 6.2831853 / f32(SIDES);
        let ring = cos(angle) * u + sin(angle) * v;
        if corner == 2u {
            position = ends[1] + axis * r_end;
            normal = axis;
        } else {
            position = ends[1] + ring * r_end;
            normal = normalize(ring + axis * 0.5);
        }
    }
    var out: Branch;
    out.position = camera.view_proj * vec4<f32>(position, 1.0);
    out.colour = shade(i);
    out.normal = normal;
    out.world = position;
    return out;
}

@fragment
fn fs_tube(in: Branch) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let view = normalize(camera.eye.xyz - in.world);
    let lit = lambert(camera.light, in.colour, n) + in.colour * rim(n, view, 3.0) * 0.8;
    return vec4<f32>(lit, 1.0);
}
