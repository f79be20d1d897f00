// Drawing the colony: each node with a parent is one branch segment, from
// the parent to a + (b - a) * t, so branches visibly extend as they grow.
// Lines are screen-space quads (hardware lines are one pixel wide); tubes
// are six-sided cylinders with a cone cap, built from the vertex index
// (WGSL has no geometry shaders), lit and depth-tested.

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
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> draw: DrawParams;
@group(0) @binding(2) var<storage, read> nodes: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> info: array<NodeInfo>;
@group(0) @binding(4) var<storage, read> state: array<u32>;

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

@vertex
fn vs_line(@builtin(vertex_index) vertex: u32, @builtin(instance_index) i: u32) -> Branch {
    if info[i].parent < 0 || i >= state[NODE_COUNT] {
        return hidden();
    }
    let ends = segment(i);
    let clip_a = camera.view_proj * vec4<f32>(ends[0], 1.0);
    let clip_b = camera.view_proj * vec4<f32>(ends[1], 1.0);
    let screen = (clip_b.xy / clip_b.w - clip_a.xy / clip_a.w) * camera.viewport.xy;
    let along = select(vec2<f32>(1.0, 0.0), normalize(screen), dot(screen, screen) > 1e-12);
    let across = vec2<f32>(-along.y, along.x);
    // Two triangles: corners (end, side).
    let corners = array<vec2<f32>, 6>(
        vec2<f32>(0.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(0.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(0.0, 1.0),
    );
    let corner = corners[vertex % 6u];
    let clip = select(clip_a, clip_b, corner.x > 0.5);
    var out: Branch;
    out.position = clip + vec4<f32>(across * corner.y * draw.width / camera.viewport.xy * clip.w, 0.0, 0.0);
    out.colour = shade(i) * (0.35 + 0.65 * nodes[i].w);
    return out;
}

@fragment
fn fs_line(in: Branch) -> @location(0) vec4<f32> {
    return vec4<f32>(in.colour, 1.0);
}

// Radius at a node: thinner towards the tips.
fn radius(node: u32) -> f32 {
    let depth = f32(info[node].offset) / f32(max(state[MAX_OFFSET], 1u));
    return draw.thickness * (0.25 + 0.75 * (1.0 - depth) * (1.0 - depth));
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
    let lit = lambert(in.colour, n) + in.colour * rim(n, view, 3.0) * 0.8;
    return vec4<f32>(lit, 1.0);
}
