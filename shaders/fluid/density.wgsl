// SPH stage 2: density (Poly6, the particle itself and its mirrors
// included) and Tait pressure, LANES threads to a particle, each listing
// the neighbours it met for the force stage (`LISTED` in fluid.wgsl).

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read_write> listed: array<u32>;

// One neighbour's Poly6 term, branchless, so the walk takes two a step.
fn poly6_of(d: vec3<f32>, h2: f32) -> f32 {
    let q = max(h2 - dot(d, d), 0.0);
    return q * q * q;
}

// Neighbour j, `d` from the walk's centre, put on `walker`'s list if it
// is one; `count` counts them past the list's end too.
fn list_if_near(walker: u32, j: u32, d: vec3<f32>, count: ptr<function, u32>) {
    if is_neighbour(dot(d, d)) {
        if *count < LISTED {
            listed[listed_at(walker, 1u + *count)] = j;
        }
        *count += 1u;
    }
}

// The Poly6 sum over this lane's rows of the neighbourhood of `me` (a
// particle, or its mirror image: see `walks_around`), the neighbours
// listed on the way.
fn poly6_sum(me: vec3<f32>, lane: u32, walker: u32, count: ptr<function, u32>) -> f32 {
    let h2 = params.kernel.w;
    let home = grid_coords(grid, me);
    var sum = 0.0;
    var cells: array<u32, 2>;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, me, home, r, h2);
        // (No drained particle is in a cell: the grid sorts them after
        // the last, so none is walked.) Two neighbours a step: their loads
        // overlap (density 0.242 -> 0.220 ms at 1M particles on the H200).
        let end = grid_starts[cells[1]];
        var j = grid_starts[cells[0]];
        for (; j + 1u < end; j += 2u) {
            let da = position_b[j].xyz - me;
            let db = position_b[j + 1u].xyz - me;
            sum += poly6_of(da, h2) + poly6_of(db, h2);
            list_if_near(walker, j, da, count);
            list_if_near(walker, j + 1u, db, count);
        }
        if j < end {
            let d = position_b[j].xyz - me;
            sum += poly6_of(d, h2);
            list_if_near(walker, j, d, count);
        }
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
    var sum = 0.0;
    // Where each walk's entries end, a byte a walk.
    var ends = 0u;
    var count = 0u;
    if walker.live & me.w != 0.0 {
        let walls = walls_near(me.xyz);
        for (var k = 0u; k <= walls.count; k++) {
            sum += poly6_sum(walks_around(me.xyz, walls, k).centre, walker.lane, walker.walker, &count);
            ends |= min(count, 255u) << (8u * k);
        }
    }
    if walker.live {
        listed[listed_at(walker.walker, 0u)] = select(ends, NOT_LISTED, count > LISTED);
    }
    sum = lanes_added(local, vec4<f32>(sum, 0.0, 0.0, 0.0)).x;
    if !walker.live | walker.lane != 0u {
        return;
    }
    if me.w == 0.0 {
        density[walker.particle] = vec2<f32>(params.rest_density, 0.0);
        return;
    }
    let rho = max(params.mass * params.kernel.x * sum, 1e-6);
    density[walker.particle] = vec2<f32>(rho, tait_pressure(params, rho));
}
