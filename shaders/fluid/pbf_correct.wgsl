// The large-step solver's correction, once an iteration after the density
// stage found each particle's multiplier lambda: each particle moves by
// (m / rho0) sum_j (lambda_i + lambda_j + s_corr) grad W_ij (Spiky) over
// its neighbours and the walls' mirror particles (fluid/gather.wgsl),
// reading the copy of set B the density stage left in set A and writing
// set B (Jacobi: every particle moves from the same positions), kept
// inside the tank; the move, over the substep, is
// added to its velocity, so that after the last iteration the velocity
// is the one that took it from where it was to where it ends.
// s_corr = -k (W(r) / W(0.2 h))^4 is the paper's artificial pressure: it
// keeps particles from clumping at close range.

#include "fluid/substep.wgsl"
#include "fluid/gather.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
// Set B, where the corrected positions go.
@group(0) @binding(2) var<storage, read_write> corrected_positions: array<vec4<f32>>;
// Set A, the positions walked (gather.wgsl reads `position_b`).
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> velocity_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read> listed: array<u32>;
@group(0) @binding(20) var<storage, read> anchor: array<vec4<f32>>;

struct Gathered {
    // sum_j (lambda_i + lambda_j + s_corr) (h - r)^2 d / r, d towards j.
    push: vec3<f32>,
}

// The particle's own multiplier.
var<private> own_lambda: f32;

fn gathered_zero() -> Gathered {
    return Gathered(vec3<f32>(0.0));
}

fn gather_pair(g: ptr<function, Gathered>, j: u32, d: vec3<f32>, mirror: bool) {
    let r2 = dot(d, d);
    let h2 = params.kernel.w;
    // W(r) / W(0.2 h) for Poly6: ((h^2 - r^2) / (0.96 h^2))^3.
    let ratio = (h2 - r2) / (0.96 * h2);
    let ratio3 = ratio * ratio * ratio;
    let tensile = -params.pbf.y * ratio3 * ratio3 * ratio3 * ratio3;
    let inverse_r = inverseSqrt(r2);
    let w = params.h - r2 * inverse_r;
    (*g).push += (own_lambda + density[j].y + tensile) * w * w * inverse_r * d;
}

fn gathered_turned(g: Gathered, axis: u32, flip: f32) -> Gathered {
    var turned = g;
    turned.push[axis] *= flip;
    return turned;
}

fn gathered_added(a: Gathered, b: Gathered) -> Gathered {
    return Gathered(a.push + b.push);
}

@compute @workgroup_size(256)
fn pbf_correct(
    @builtin(global_invocation_id) global: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let walker = lane_of(global, groups, local);
    let s = walker.particle;
    let me = select(vec4<f32>(0.0), position_b[walker.at], walker.live);
    own_lambda = density[walker.at].y;
    var g = gathered_zero();
    if walker.live & me.w != 0.0 {
        g = gathered_around(walker, me.xyz);
    }
    g.push = lanes_added(local, vec4<f32>(g.push, 0.0)).xyz;
    if !walker.live | walker.lane != 0u {
        return;
    }
    if me.w == 0.0 {
        corrected_positions[s] = me;
        return;
    }
    // grad_i W_ij = spiky' (h - r)^2 (x_i - x_j) / r, and d = x_j - x_i.
    var moved = -params.kernel.y * params.mass / params.rest_density * g.push;
    moved.z = select(moved.z, 0.0, params.dimensions == 2u);
    let corrected = kept_off_walls(me.xyz + moved);
    corrected_positions[s] = vec4<f32>(corrected, 1.0);
    velocity_b[s] += vec4<f32>((corrected - me.xyz) / params.dt, 0.0);
}
