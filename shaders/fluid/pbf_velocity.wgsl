// The large-step solver after its last iteration (positions and
// velocities in B): XSPH viscosity, v_i + c sum_j (m / rho_j) (v_j - v_i)
// W_ij (Poly6), into set A's velocity, and the vorticity
// omega_i = sum_j (m / rho_j) (v_j - v_i) x grad_j W_ij (Spiky) the finish
// stage confines, over the neighbours and the walls' mirror particles (in
// XSPH a mirror particle moves against its original, so the walls hold
// the water as no-slip walls; in the vorticity it is its original's
// velocity reflected); set B's positions stay, for the finish stage to
// walk while it writes set A.

#include "fluid/substep.wgsl"
#include "fluid/gather.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
// The last correction's positions, walked.
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> velocity_a: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> velocity_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
// Each particle's vorticity, for the finish stage.
@group(0) @binding(7) var<storage, read_write> vorticity: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read> listed: array<u32>;
@group(0) @binding(20) var<storage, read> anchor: array<vec4<f32>>;

struct Gathered {
    // sum (m / rho_j) W_ij v_j, and sum (m / rho_j) W_ij.
    smoothed: vec3<f32>,
    weight: f32,
    // sum (m / rho_j) v_j x grad_j W_ij, and sum (m / rho_j) grad_j W_ij.
    curl: vec3<f32>,
    gradient: vec3<f32>,
}

fn gathered_zero() -> Gathered {
    return Gathered(vec3<f32>(0.0), 0.0, vec3<f32>(0.0), vec3<f32>(0.0));
}

fn gather_pair(g: ptr<function, Gathered>, j: u32, d: vec3<f32>, mirror: bool) {
    let r2 = dot(d, d);
    let share = params.mass / density[j].x;
    let q = params.kernel.w - r2;
    let inverse_r = inverseSqrt(r2);
    let w = params.h - r2 * inverse_r;
    // grad_j W_ij = spiky' (h - r)^2 (x_j - x_i) / r.
    let gradient = share * params.kernel.y * w * w * inverse_r * d;
    let v = velocity_b[j].xyz;
    // The walls hold the water (no-slip, as the weakly compressible
    // solver's viscosity): a mirror particle moves against its original.
    (*g).smoothed += share * params.kernel.x * q * q * q * select(1.0, -1.0, mirror) * v;
    (*g).weight += share * params.kernel.x * q * q * q;
    (*g).curl += cross(v, gradient);
    (*g).gradient += gradient;
}

// A mirror walk's sums as the mirror particles' (a reflection R): R v and
// R grad for the vectors, and R v x R grad = -R (v x grad) for the curl.
fn gathered_turned(g: Gathered, axis: u32, flip: f32) -> Gathered {
    var turned = g;
    turned.gradient[axis] *= flip;
    turned.curl[axis] *= flip;
    turned.curl *= flip;
    return turned;
}

fn gathered_added(a: Gathered, b: Gathered) -> Gathered {
    return Gathered(a.smoothed + b.smoothed, a.weight + b.weight, a.curl + b.curl, a.gradient + b.gradient);
}

@compute @workgroup_size(256)
fn pbf_velocity(
    @builtin(global_invocation_id) global: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let walker = lane_of(global, groups, local);
    let s = walker.particle;
    let me = select(vec4<f32>(0.0), position_b[walker.at], walker.live);
    var g = gathered_zero();
    if walker.live & me.w != 0.0 {
        g = gathered_around(walker, me.xyz);
    }
    let smoothed = lanes_added(local, vec4<f32>(g.smoothed, g.weight));
    g.curl = lanes_added(local, vec4<f32>(g.curl, 0.0)).xyz;
    g.gradient = lanes_added(local, vec4<f32>(g.gradient, 0.0)).xyz;
    if !walker.live | walker.lane != 0u {
        return;
    }
    let v = velocity_b[s].xyz;
    if me.w == 0.0 {
        velocity_a[s] = vec4<f32>(v, 0.0);
        vorticity[s] = vec4<f32>(0.0);
        return;
    }
    velocity_a[s] = vec4<f32>(v + params.pbf.z * (smoothed.xyz - smoothed.w * v), 0.0);
    vorticity[s] = vec4<f32>(g.curl - cross(v, g.gradient), 0.0);
}
