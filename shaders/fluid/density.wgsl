// SPH stage 2: density (Poly6, the particle itself and its mirrors
// included) and Tait pressure, LANES threads to a particle.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;

// The Poly6 sum over this lane's rows of the neighbourhood of `me`.
fn poly6_sum(me: vec3<f32>, lane: u32) -> f32 {
    let h2 = params.kernel.w;
    let home = grid_coords(grid, me);
    let walls = walls_near(me);
    var sum = 0.0;
    var cells: array<u32, 2>;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, me, home, r, h2);
        for (var j = grid_starts[cells[0]]; j < grid_starts[cells[1]]; j++) {
            let other = position_b[j];
            if other.w == 0.0 {
                continue;
            }
            let d = other.xyz - me;
            let r2 = dot(d, d);
            if r2 < h2 {
                let q = h2 - r2;
                sum += q * q * q;
            }
            for (var w = 0u; w < walls.count; w++) {
                let g = mirrored(other.xyz, walls.axis[w], walls.at[w]) - me;
                let g2 = dot(g, g);
                if g2 < h2 {
                    let q = h2 - g2;
                    sum += q * q * q;
                }
            }
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
    if walker.live & me.w != 0.0 {
        sum = poly6_sum(me.xyz, walker.lane);
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
