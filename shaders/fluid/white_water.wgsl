// White water: spray, foam and bubbles as particles of their own, thrown
// up where the liquid breaks and living on after it calms (Ihmsen,
// Akinci, Becker and Teschner 2012, "Unified spray, foam and bubbles for
// particle-based fluids"). Once a frame, after the substeps (the fluid's
// set A, in the order of its last grid sort), the white particles there
// are move (`white_advance`, below), then new ones are thrown:
//   white_normals  each fast fluid particle's colour-field gradient (its
//                  surface normal, outward) and neighbour count;
//   white_emit     how many white particles each fluid particle throws
//                  up this frame: its trapped air (neighbours rushing at
//                  it), its wave crest (a convex surface moving outward)
//                  and its kinetic energy, each clamped to 0..1 between
//                  two bounds; these counts are scanned (exact, so a
//                  render repeats) and
//   white_place    writes them into a ring of slots after the last frame's;
//   white_head     moves the ring's head past them;
//   white_advance  moves every white particle by what its neighbourhood
//                  makes it: few fluid neighbours, spray flying under
//                  gravity; some, foam carried on the surface by the
//                  water's velocity; many, a bubble rising by buoyancy and
//                  dragged along. Each lives its life out.
// The paper's curvature counts only neighbours behind a particle's
// surface (a convex crest); interior particles, whose gradient is too
// small to give a normal, add nothing to it, nor do slow ones (whose
// normals are not found: a crest's neighbours move with it).

#include "fluid/substep.wgsl"

struct WhiteWater {
    // The frame's time step: the seconds its substeps simulated.
    dt: f32,
    // Slots in the ring.
    capacity: u32,
    // Frames stepped since the fluid was built: the random draws' key.
    frame: u32,
    // Most white particles thrown up in a frame.
    budget: u32,
    // Bounds of the trapped-air (m/s), wave-crest and kinetic-energy
    // (J/kg) potentials: below the first 0, above the second 1.
    trapped_air: vec2<f32>,
    crest: vec2<f32>,
    energy: vec2<f32>,
    // White particles a second a fluid particle throws up at full
    // trapped air and at a full crest.
    rates: vec2<f32>,
    // Mean seconds a white particle lives.
    life: f32,
    // Bubbles' buoyancy (times gravity, upward) and drag toward the
    // water's velocity (1/s).
    buoyancy: f32,
    drag: f32,
    // Fewer fluid neighbours than this share of a full neighbourhood is
    // spray; more than the second, a bubble; between, foam.
    spray_below: f32,
    bubble_above: f32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(2) var<storage, read> positions: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocities: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(24) var<uniform> white: WhiteWater;
// Each fluid particle's colour-field gradient times h (xyz) and its
// neighbours (w).
@group(0) @binding(25) var<storage, read_write> normals: array<vec4<f32>>;
// White particles each fluid particle throws up, then (scanned) where
// its first goes; the last entry the frame's total.
@group(0) @binding(26) var<storage, read_write> thrown: array<u32>;
// White particles: position and life left (w, seconds; 0 or less: none),
// velocity and what it is (w: 0 spray, 1 foam, 2 bubble).
@group(0) @binding(27) var<storage, read_write> white_position: array<vec4<f32>>;
@group(0) @binding(28) var<storage, read_write> white_velocity: array<vec4<f32>>;
// The ring's head: the slot the next frame's first white particle takes.
@group(0) @binding(29) var<storage, read_write> head: array<u32>;

const SPRAY: f32 = 0.0;
const FOAM: f32 = 1.0;
const BUBBLE: f32 = 2.0;

// The paper's clamp: 0 below `bounds.x`, 1 above `bounds.y`, linear between.
fn potential(value: f32, bounds: vec2<f32>) -> f32 {
    return clamp((value - bounds.x) / max(bounds.y - bounds.x, 1e-6), 0.0, 1.0);
}

// Fluid particle `s`'s kinetic-energy potential: 0 for one too slow to
// throw anything.
fn energy_of(s: u32) -> f32 {
    let v = velocities[s].xyz;
    return potential(0.5 * dot(v, v), white.energy);
}

// Neighbours a particle inside the liquid has within h (h = 2 dx: about
// 33 in 3D, 12 in 2D).
fn full_neighbourhood() -> f32 {
    return select(33.0, 12.0, params.dimensions == 2u);
}

// The fluid particles in row `r` of the grid's 25 about `x` (in cell
// `home`) that can lie within h of it: a range of set A's slots. The
// water has moved since the grid was sorted (the last substep's
// correction, or the substeps its lists served), so the row is cut to a
// quarter of h more.
fn row_near(x: vec3<f32>, home: vec3<i32>, r: u32) -> vec2<u32> {
    var cells: array<u32, 2>;
    let reach = 1.25 * params.h;
    row_span(grid, &cells, x, home, r, reach * reach);
    return vec2<u32>(grid_starts[cells[0]], grid_starts[cells[1]]);
}

// Fluid particle `j` seen from `x`: its offset and distance (w), w 0 when
// it is drained or not within h.
fn seen_from(x: vec3<f32>, j: u32) -> vec4<f32> {
    let other = positions[j];
    let d = other.xyz - x;
    let r2 = dot(d, d);
    let near = (other.w != 0.0) & is_neighbour(r2);
    return select(vec4<f32>(0.0), vec4<f32>(d, sqrt(r2)), near);
}

@compute @workgroup_size(256)
fn white_normals(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let me = positions[s];
    // Only a particle fast enough to throw anything needs its normal (its
    // own crest test, and its fast neighbours'): a calm body is not
    // walked at all.
    if me.w == 0.0 || energy_of(s) == 0.0 {
        normals[s] = vec4<f32>(0.0);
        return;
    }
    var gradient = vec3<f32>(0.0);
    var neighbours = 0.0;
    let home = grid_coords(grid, me.xyz);
    for (var r = 0u; r < ROWS; r++) {
        let row = row_near(me.xyz, home, r);
        for (var j = row.x; j < row.y; j++) {
            let seen = seen_from(me.xyz, j);
            if seen.w == 0.0 {
                continue;
            }
            let d = seen.xyz;
            let distance = seen.w;
            let w = params.h - distance;
            // The spiky kernel's gradient (negative: away from j).
            gradient += params.mass / density[j].x * params.kernel.y * w * w / distance * d;
            neighbours += 1.0;
        }
    }
    normals[s] = vec4<f32>(gradient * params.h, neighbours);
}

// Whether a normal times h is long enough to be one: at the surface it is
// about 1, inside the liquid near 0.
const SURFACE: f32 = 0.5;

@compute @workgroup_size(256)
fn white_emit(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s == 0u {
        // The scan's last entry, which becomes the frame's total.
        thrown[params.count] = 0u;
    }
    if s >= params.count {
        return;
    }
    let me = positions[s];
    let v = velocities[s].xyz;
    let energy = energy_of(s);
    // A still particle throws nothing: no walk for most of a calm body.
    if me.w == 0.0 || energy == 0.0 {
        thrown[s] = 0u;
        return;
    }
    let mine = normals[s];
    let surface = length(mine.xyz) > SURFACE;
    let n = select(vec3<f32>(0.0), normalize(mine.xyz), surface);
    var trapped = 0.0;
    var curvature = 0.0;
    let home = grid_coords(grid, me.xyz);
    for (var r = 0u; r < ROWS; r++) {
        let row = row_near(me.xyz, home, r);
        for (var j = row.x; j < row.y; j++) {
            let seen = seen_from(me.xyz, j);
            if seen.w == 0.0 {
                continue;
            }
            let d = seen.xyz;
            let distance = seen.w;
            let weight = 1.0 - distance / params.h;
            // Trapped air: neighbours rushing at each other, not along.
            let relative = v - velocities[j].xyz;
            let rushing = length(relative);
            if rushing > 1e-6 {
                trapped += rushing * (1.0 - dot(relative / rushing, -d / distance)) * weight;
            }
            // Curvature: normals turning away from i's, over the
            // neighbours behind its surface.
            let theirs = normals[j].xyz;
            if surface && length(theirs) > SURFACE && dot(d, n) < 0.0 {
                curvature += (1.0 - dot(n, normalize(theirs))) * weight;
            }
        }
    }
    // A crest only where the surface moves outward.
    let outward = select(0.0, 1.0, surface && dot(normalize(v), n) >= 0.6);
    let rate = white.rates.x * potential(trapped, white.trapped_air)
        + white.rates.y * potential(curvature * outward, white.crest);
    let expected = rate * energy * white.dt;
    // The fraction is drawn, so a rate below one a frame still throws.
    let draw = random01(s ^ (white.frame * 0x9e3779b9u), 0x51f15e3u);
    thrown[s] = min(u32(floor(expected + draw)), 16u);
}

// Thrown particle `k` of fluid particle `s`: in a cylinder about the
// particle's path this frame, half h wide, moving with it and spread out
// from its axis.
fn thrown_particle(s: u32, k: u32) -> array<vec4<f32>, 2> {
    let x = positions[s].xyz;
    let v = velocities[s].xyz;
    let speed = length(v);
    let along = select(vec3<f32>(0.0, 1.0, 0.0), v / speed, speed > 1e-6);
    let helper = select(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 0.0, 1.0), abs(along.x) > 0.9);
    let across = normalize(cross(along, helper));
    let third = cross(along, across);
    // A 2D tank's slice has no third axis: the spread stays in its plane.
    let in_plane = vec3<f32>(-along.y, along.x, 0.0);
    let key = s * 16u + k;
    let turn = random01(key, white.frame ^ 0x2545f491u) * 2.0 * PI;
    let reach = 0.5 * params.h * sqrt(random01(key, white.frame ^ 0x68e31da4u));
    let ahead = random01(key, white.frame ^ 0xb5297a4du) * speed * white.dt;
    let out = select(cos(turn) * across + sin(turn) * third, cos(turn) * in_plane, params.dimensions == 2u);
    let life = white.life * (0.5 + random01(key, white.frame ^ 0x1b873593u));
    let position = clamp(x + out * reach + along * ahead, vec3<f32>(0.0), params.container);
    let velocity = v + out * 0.15 * speed;
    return array<vec4<f32>, 2>(vec4<f32>(position, life), vec4<f32>(velocity, SPRAY));
}

@compute @workgroup_size(256)
fn white_place(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let first = thrown[s];
    let count = min(thrown[s + 1u], white.budget) - min(first, white.budget);
    for (var k = 0u; k < count; k++) {
        let slot = (head[0] + first + k) % white.capacity;
        let made = thrown_particle(s, k);
        white_position[slot] = made[0];
        white_velocity[slot] = made[1];
    }
}

@compute @workgroup_size(1)
fn white_head() {
    head[0] = (head[0] + min(thrown[params.count], white.budget)) % white.capacity;
}

@compute @workgroup_size(256)
fn white_advance(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = particle(global, groups);
    if i >= white.capacity {
        return;
    }
    let me = white_position[i];
    if me.w <= 0.0 {
        return;
    }
    var flow = vec3<f32>(0.0);
    var weights = 0.0;
    var neighbours = 0.0;
    let home = grid_coords(grid, me.xyz);
    for (var r = 0u; r < ROWS; r++) {
        let row = row_near(me.xyz, home, r);
        for (var j = row.x; j < row.y; j++) {
            let seen = seen_from(me.xyz, j);
            if seen.w == 0.0 {
                continue;
            }
            let weight = 1.0 - seen.w / params.h;
            flow += velocities[j].xyz * weight;
            weights += weight;
            neighbours += 1.0;
        }
    }
    let dt = white.dt;
    let water = flow / max(weights, 1e-6);
    let full = full_neighbourhood();
    var v = white_velocity[i].xyz;
    var kind = FOAM;
    if neighbours < white.spray_below * full {
        kind = SPRAY;
        v += params.gravity * dt;
    } else if neighbours > white.bubble_above * full {
        kind = BUBBLE;
        v += -white.buoyancy * params.gravity * dt + (water - v) * (1.0 - exp(-white.drag * dt));
    } else {
        v = water;
    }
    var x = me.xyz + v * dt;
    // The tank holds it; spray that lands on the floor lies there.
    let inside = clamp(x, vec3<f32>(0.0), params.container);
    if inside.y > x.y {
        v = vec3<f32>(v.x, 0.0, v.z) * 0.5;
    }
    x = inside;
    x.z = select(x.z, 0.0, params.dimensions == 2u);
    // (`&`, not `&&`: see `interaction` in substep.wgsl.)
    let drained = (params.sink.w > 0.0) & (distance(x, params.sink.xyz) < params.sink.w);
    let life = select(me.w - dt, 0.0, drained);
    white_position[i] = vec4<f32>(x, life);
    white_velocity[i] = vec4<f32>(v, kind);
}
