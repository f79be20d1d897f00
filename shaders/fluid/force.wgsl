// SPH stage 3: acceleration from pressure (Spiky gradient, the symmetric
// average of the seed's code), viscosity (its Laplacian), gravity, walls
// and interaction points, LANES threads to a particle, over the particles
// its lists hold (the grid's rows where they overflowed), those within h;
// then stage 4 (the integrate step, integrate.wgsl) for it in the same
// pass, which saves a pass and the accelerations' round trip each substep.

#include "fluid/substep.wgsl"
#include "fluid/integrate.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> velocity_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
// Kept for the tests that check the forces against the CPU's.
@group(0) @binding(7) var<storage, read_write> acceleration: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read> listed: array<u32>;

struct Terms {
    pressure: vec3<f32>,
    viscous: vec3<f32>,
}

// Neighbour j's pressure and viscosity terms added to `t` (`d`: from the
// walk's centre to it, which `is_neighbour` took).
fn add_pair(t: ptr<function, Terms>, j: u32, d: vec3<f32>, own: vec2<f32>, v: vec3<f32>, mirror: bool) {
    let r2 = dot(d, d);
    let theirs = density[j];
    let inverse_density = 1.0 / theirs.x;
    let pairing = params.kernel.y * params.mass * (own.y + theirs.y) * 0.5 * inverse_density;
    let drag = params.kernel.z * params.mass * inverse_density;
    let inverse_r = inverseSqrt(r2);
    let w = params.h - r2 * inverse_r;
    (*t).pressure += pairing * w * w * inverse_r * d;
    (*t).viscous += drag * w * (select(1.0, -1.0, mirror) * velocity_b[j].xyz - v);
}

// The same for a listed particle or a grid walk's candidate `d.xyz` away
// (its w in d.w), if it is a neighbour: within h (a list also holds those
// within its skin), and not drained since the grid was sorted.
fn add_if_near(t: ptr<function, Terms>, j: u32, d: vec4<f32>, own: vec2<f32>, v: vec3<f32>, mirror: bool) {
    if is_neighbour(dot(d.xyz, d.xyz)) & (d.w != 0.0) {
        add_pair(t, j, d.xyz, own, v, mirror);
    }
}

// Pressure and viscosity terms around `centre`: particle s itself, or
// (`mirror`) its mirror image across a wall, whose neighbours stand for
// the mirror particles of s's own (|R(o) - x| = |o - R(x)|; the pressure
// term comes back mirrored, see `compute_force`). A mirror particle moves
// against its original: no-slip walls, whose friction slows a surge as a
// real floor does; s's own mirror counts. This over the walker's listed
// entries `begin` to `end` of the walk...
fn listed_terms(walker: u32, begin: u32, end: u32, centre: vec3<f32>, v: vec3<f32>, own: vec2<f32>, mirror: bool) -> Terms {
    var t = Terms(vec3<f32>(0.0), vec3<f32>(0.0));
    // Four neighbours a step, their loads overlapping (1M particles on the
    // H200: 0.222 ms two a step, 0.176 four; 10M: 2.05, 1.62), then the
    // rest one by one.
    var e = begin;
    for (; e + 3u < end; e += 4u) {
        let a = listed[listed_at(walker, LIST_HEAD + e)];
        let b = listed[listed_at(walker, LIST_HEAD + 1u + e)];
        let c = listed[listed_at(walker, LIST_HEAD + 2u + e)];
        let d = listed[listed_at(walker, LIST_HEAD + 3u + e)];
        let da = position_b[a] - vec4<f32>(centre, 0.0);
        let db = position_b[b] - vec4<f32>(centre, 0.0);
        let dc = position_b[c] - vec4<f32>(centre, 0.0);
        let dd = position_b[d] - vec4<f32>(centre, 0.0);
        add_if_near(&t, a, da, own, v, mirror);
        add_if_near(&t, b, db, own, v, mirror);
        add_if_near(&t, c, dc, own, v, mirror);
        add_if_near(&t, d, dd, own, v, mirror);
    }
    for (; e < end; e++) {
        let a = listed[listed_at(walker, LIST_HEAD + e)];
        add_if_near(&t, a, position_b[a] - vec4<f32>(centre, 0.0), own, v, mirror);
    }
    return t;
}

// ...and this over the lane's rows of the grid about cell `home`, where
// the list overflowed: at h (1 + SKIN / 2), as the grid may have been
// sorted up to REUSE - 1 substeps ago, about the cell the walk's centre
// was in then (so the lanes that walk the grid and those that walk their
// lists share out the same rows).
fn walked_terms(centre: vec3<f32>, home: vec3<i32>, v: vec3<f32>, own: vec2<f32>, lane: u32, mirror: bool) -> Terms {
    let walk2 = reach2(0.5 * SKIN);
    var t = Terms(vec3<f32>(0.0), vec3<f32>(0.0));
    var cells: array<u32, 2>;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, centre, home, r, walk2);
        // Two neighbours a step, their loads overlapping (force 0.408 ->
        // 0.372 ms at 1M particles on the H200, 5.65 -> 4.80 at 10M).
        let end = grid_starts[cells[1]];
        for (var j = grid_starts[cells[0]]; j < end; j += 2u) {
            let k = min(j + 1u, end - 1u);
            let da = position_b[j] - vec4<f32>(centre, 0.0);
            let db = position_b[k] - vec4<f32>(centre, 0.0);
            add_if_near(&t, j, da, own, v, mirror);
            if k != j {
                add_if_near(&t, k, db, own, v, mirror);
            }
        }
    }
    return t;
}

@compute @workgroup_size(256)
fn compute_force(
    @builtin(global_invocation_id) global: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let walker = lane_of(global, groups, local);
    let s = walker.particle;
    let me = select(vec4<f32>(0.0), position_b[walker.at], walker.live);
    let v = velocity_b[walker.at].xyz;
    let own = density[walker.at];
    var t = Terms(vec3<f32>(0.0), vec3<f32>(0.0));
    if walker.live & me.w != 0.0 {
        // The neighbours, then the mirror particles wall by wall, each a
        // walk of its own (see `walks_around`), for the walls the lists
        // were built for.
        let ends = listed[listed_at(walker.walker, 0u)];
        let walls = walls_of(listed[listed_at(walker.walker, 1u)]);
        var begin = 0u;
        for (var k = 0u; k <= walls.count; k++) {
            let around = walks_around(me.xyz, walls, k);
            let end = (ends >> (8u * k)) & 0xffu;
            var terms: Terms;
            if ends == NOT_LISTED {
                let home = grid_coords(grid, walks_around(anchor[s].xyz, walls, k).centre);
                terms = walked_terms(around.centre, home, v, own, walker.lane, k > 0u);
            } else {
                terms = listed_terms(walker.walker, begin, end, around.centre, v, own, k > 0u);
            }
            begin = end;
            terms.pressure[around.axis] *= around.flip;
            t.pressure += terms.pressure;
            t.viscous += terms.viscous;
        }
    }
    t.pressure = lanes_added(local, vec4<f32>(t.pressure, 0.0)).xyz;
    t.viscous = lanes_added(local, vec4<f32>(t.viscous, 0.0)).xyz;
    if !walker.live | walker.lane != 0u {
        return;
    }
    var a = vec3<f32>(0.0);
    if me.w != 0.0 {
        a = (t.pressure + params.viscosity * t.viscous) / own.x + params.gravity + wall_acceleration(me.xyz);
        a += interaction(me.xyz, params.point0, params.push.x) + interaction(me.xyz, params.point1, params.push.y);
        a.z = select(a.z, 0.0, params.dimensions == 2u);
    }
    acceleration[s] = vec4<f32>(a, 0.0);
    integrate_particle(s, me, v, a);
}
