// SPH stage 2: density (Poly6, the particle itself and its mirrors
// included) and Tait pressure, or the large-step solver's multiplier
// (`pressure_or_lambda`), LANES threads to a particle. A substep that
// rebuilds the lists walks the grid and lists on the way every particle
// within the lists' reach (`LISTED` in fluid.wgsl); one that reuses them
// sums over those.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
// The large-step solver's corrections read positions from set A and write
// them into set B (fluid/pbf_correct.wgsl): its density stage copies each
// particle's position across on the way (the weakly compressible one
// leaves it alone).
@group(0) @binding(2) var<storage, read_write> position_copy: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read_write> listed: array<u32>;
@group(0) @binding(20) var<storage, read> anchor: array<vec4<f32>>;
@group(0) @binding(21) var<storage, read> plan: ListPlan;

// Not a particle: what a mirror image's walk leaves in.
const NOBODY: u32 = 0xffffffffu;

// One neighbour's Poly6 term, branchless, so the walks take two a step.
fn poly6_of(d: vec3<f32>, h2: f32) -> f32 {
    let q = max(h2 - dot(d, d), 0.0);
    return q * q * q;
}

// What a walk sums: Poly6 for the density and, for the large-step
// solver, the density constraint's gradient with respect to the particle
// itself (the Spiky gradients' sum, without its constant) and the sum of
// their squares (its gradient with respect to each neighbour), so that its
// multiplier is over its own neighbourhood's stiffness (Macklin and
// Mueller 2013, eq. 9): a particle at the surface or pressed against
// another then moves as far as its constraint asks, no farther.
struct Summed {
    poly6: f32,
    grad2: f32,
    grad: vec3<f32>,
}

fn summed_zero() -> Summed {
    return Summed(0.0, 0.0, vec3<f32>(0.0));
}

// Neighbour at `d` of weight `w` (0: drained) added, within h.
fn summed_with(s: ptr<function, Summed>, d: vec3<f32>, w: f32, h2: f32) {
    (*s).poly6 += w * poly6_of(d, h2);
    if SOLVER == PBF {
        let r2 = dot(d, d);
        let near = (r2 < h2) & (r2 >= 1e-18) & (w != 0.0);
        let r = sqrt(r2);
        let q = select(0.0, params.h - r, near);
        (*s).grad += (q * q / max(r, 1e-9)) * d;
        (*s).grad2 += q * q * q * q;
    }
}

// A wall walk's sums turned back into the mirror particles' (see
// `walks_around`), then added.
fn summed_added(a: Summed, b: Summed, around: Around) -> Summed {
    var grad = b.grad;
    grad[around.axis] *= around.flip;
    return Summed(a.poly6 + b.poly6, a.grad2 + b.grad2, a.grad + grad);
}

// What one walker lists as it walks: the particles within sqrt(reach2)
// but `skip` (the particle itself, in its own walk), none where reach2 is
// 0, counted past its list's end too.
struct Listing {
    walker: u32,
    skip: u32,
    reach2: f32,
    count: u32,
}

fn list_candidate(l: ptr<function, Listing>, j: u32, d: vec3<f32>) {
    if (dot(d, d) < (*l).reach2) & (j != (*l).skip) {
        if (*l).count < LISTED {
            listed[listed_at((*l).walker, LIST_HEAD + (*l).count)] = j;
        }
        (*l).count += 1u;
    }
}

// The Poly6 sum over this lane's rows about cell `home` of the grid within
// sqrt(walk2) of `me` (a particle, or its mirror image: see
// `walks_around`), leaving out `l.skip` (the particle adds its own term
// once, in its first lane, whichever lane's rows it lies in and whether
// its lanes walk the grid or their lists), listing on the way.
fn poly6_walked(me: vec3<f32>, home: vec3<i32>, lane: u32, walk2: f32, l: ptr<function, Listing>) -> Summed {
    let h2 = params.kernel.w;
    let skip = (*l).skip;
    var sum = summed_zero();
    var cells: array<u32, 2>;
    var met_itself = false;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, me, home, r, walk2);
        // Two neighbours a step: their loads overlap (density 0.242 ->
        // 0.220 ms at 1M particles on the H200). Each term weighed by w:
        // no drained particle is in a cell when the grid is sorted (it
        // sorts them after the last), but one drained since still is.
        let end = grid_starts[cells[1]];
        var j = grid_starts[cells[0]];
        met_itself |= (j <= skip) & (skip < end);
        for (; j + 1u < end; j += 2u) {
            let a = position_b[j];
            let b = position_b[j + 1u];
            let da = a.xyz - me;
            let db = b.xyz - me;
            summed_with(&sum, da, a.w, h2);
            summed_with(&sum, db, b.w, h2);
            list_candidate(l, j, da);
            list_candidate(l, j + 1u, db);
        }
        if j < end {
            let a = position_b[j];
            let d = a.xyz - me;
            summed_with(&sum, d, a.w, h2);
            list_candidate(l, j, d);
        }
    }
    // (Its own term taken back out, rather than a test each candidate:
    // at 0 away it adds nothing to the gradients.)
    sum.poly6 -= select(0.0, poly6_of(vec3<f32>(0.0), h2), met_itself);
    return sum;
}

// The same over the walker's listed entries `begin` to `end` (a particle
// drained since they were built weighs nothing).
fn poly6_listed(walker: u32, begin: u32, end: u32, me: vec3<f32>) -> Summed {
    let h2 = params.kernel.w;
    var sum = summed_zero();
    // Four neighbours a step, their loads overlapping (as gather.wgsl's
    // walks: the large-step solver sums over the lists several times a
    // substep), then the rest one by one.
    var e = begin;
    for (; e + 3u < end; e += 4u) {
        let a = position_b[listed[listed_at(walker, LIST_HEAD + e)]];
        let b = position_b[listed[listed_at(walker, LIST_HEAD + e + 1u)]];
        let c = position_b[listed[listed_at(walker, LIST_HEAD + e + 2u)]];
        let d = position_b[listed[listed_at(walker, LIST_HEAD + e + 3u)]];
        summed_with(&sum, a.xyz - me, a.w, h2);
        summed_with(&sum, b.xyz - me, b.w, h2);
        summed_with(&sum, c.xyz - me, c.w, h2);
        summed_with(&sum, d.xyz - me, d.w, h2);
    }
    for (; e < end; e++) {
        let a = position_b[listed[listed_at(walker, LIST_HEAD + e)]];
        summed_with(&sum, a.xyz - me, a.w, h2);
    }
    return sum;
}

// The particle's own term, added by its first lane (the walks and the
// lists leave it out).
fn poly6_itself(walker: LaneOf) -> Summed {
    var sum = summed_zero();
    sum.poly6 = select(0.0, poly6_of(vec3<f32>(0.0), params.kernel.w), walker.lane == 0u);
    return sum;
}

// A walker's list words 0 and 1 (`listed_at` in fluid.wgsl).
fn finish_list(walker: u32, ends: u32, count: u32, walls: u32) {
    listed[listed_at(walker, 0u)] = select(ends, NOT_LISTED, count > LISTED);
    listed[listed_at(walker, 1u)] = walls;
}

// This lane's Poly6 sum for a particle at `me` whose lists are built now:
// the grid walked at the lists' reach (Poly6 still only within h), its
// own neighbourhood and the mirror images of the walls it may near before
// the next rebuild.
fn poly6_listing(me: vec3<f32>, walker: LaneOf) -> Summed {
    let reach2 = reach2(SKIN);
    let walls = walls_near(me, params.h * (1.0 + 0.5 * SKIN));
    var l = Listing(walker.walker, walker.particle, reach2, 0u);
    var sum = poly6_itself(walker);
    var ends = 0u;
    for (var k = 0u; k <= walls.count; k++) {
        let around = walks_around(me, walls, k);
        let centre = around.centre;
        sum = summed_added(sum, poly6_walked(centre, grid_coords(grid, centre), walker.lane, reach2, &l), around);
        ends |= min(l.count, 255u) << (8u * k);
        l.skip = NOBODY;
    }
    finish_list(walker.walker, ends, l.count, walls_mask(walls));
    return sum;
}

// ...and for one whose lists were built in an earlier substep: over them,
// or (where they overflowed) over the grid as it was sorted then, about
// the cells it was in then, as its other lanes' lists were. (A particle
// poured since has empty lists: it meets the water at the next rebuild.)
fn poly6_reusing(me: vec3<f32>, walker: LaneOf) -> Summed {
    let ends = listed[listed_at(walker.walker, 0u)];
    let walls = walls_of(listed[listed_at(walker.walker, 1u)]);
    var sum = poly6_itself(walker);
    if ends == NOT_LISTED {
        let then = anchor[walker.particle].xyz;
        var l = Listing(walker.walker, walker.particle, 0.0, 0u);
        for (var k = 0u; k <= walls.count; k++) {
            let around = walks_around(me, walls, k);
            let home = grid_coords(grid, walks_around(then, walls, k).centre);
            sum = summed_added(sum, poly6_walked(around.centre, home, walker.lane, reach2(0.5 * SKIN), &l), around);
            l.skip = NOBODY;
        }
        return sum;
    }
    var begin = 0u;
    for (var k = 0u; k <= walls.count; k++) {
        let end = (ends >> (8u * k)) & 0xffu;
        let around = walks_around(me, walls, k);
        sum = summed_added(sum, poly6_listed(walker.walker, begin, end, around.centre), around);
        begin = end;
    }
    return sum;
}

@compute @workgroup_size(256)
fn compute_density(
    @builtin(global_invocation_id) global: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let walker = lane_of(global, groups, local);
    let me = select(vec4<f32>(0.0), position_b[walker.at], walker.live);
    let rebuild = plan.rebuild != 0u;
    var sum = summed_zero();
    if walker.live & me.w != 0.0 {
        if rebuild {
            sum = poly6_listing(me.xyz, walker);
        } else {
            sum = poly6_reusing(me.xyz, walker);
        }
    } else if walker.live & rebuild {
        finish_list(walker.walker, 0u, 0u, 0u);
    }
    let sums = lanes_added(local, vec4<f32>(sum.grad, sum.poly6));
    var grad2 = 0.0;
    if SOLVER == PBF {
        grad2 = lanes_added(local, vec4<f32>(sum.grad2)).x;
    }
    if !walker.live | walker.lane != 0u {
        return;
    }
    if SOLVER == PBF {
        position_copy[walker.particle] = me;
    }
    if me.w == 0.0 {
        density[walker.particle] = vec2<f32>(params.rest_density, 0.0);
        return;
    }
    let rho = max(params.mass * params.kernel.x * sums.w, 1e-6);
    // |grad C|^2 over the particle and its neighbours, (m / rho0)^2
    // spiky'^2 (|sum grad|^2 + sum |grad|^2).
    let scale = params.mass / params.rest_density * params.kernel.y;
    let stiffness = scale * scale * (dot(sums.xyz, sums.xyz) + grad2);
    density[walker.particle] = vec2<f32>(rho, pressure_or_lambda(params, rho, stiffness));
}
