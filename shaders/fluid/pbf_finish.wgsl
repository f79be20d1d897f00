// The large-step solver's last stage each substep: vorticity confinement
// (the swirls the large step damps given back: f = e (N x omega_i), N the
// direction in which the vorticity's magnitude grows, from
// sum_j (m / rho_j) (|omega_j| - |omega_i|) grad_i W_ij over the
// neighbours and mirror particles), then the particle settles into set A
// as the weakly compressible step's do (integrate.wgsl: sinks, emitters,
// bodies, branches, rain and walls), its lists checked against where the
// next substep predicts it.

#include "fluid/substep.wgsl"
#include "fluid/gather.wgsl"
#include "fluid/integrate.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> vorticity: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(18) var<storage, read> listed: array<u32>;

struct Gathered {
    rising: vec3<f32>,
}

var<private> own_swirl: f32;

fn gathered_zero() -> Gathered {
    return Gathered(vec3<f32>(0.0));
}

fn gather_pair(g: ptr<function, Gathered>, j: u32, d: vec3<f32>, mirror: bool) {
    let r2 = dot(d, d);
    let inverse_r = inverseSqrt(r2);
    let w = params.h - r2 * inverse_r;
    // grad_i W_ij = -spiky' (h - r)^2 (x_j - x_i) / r.
    let share = params.mass / density[j].x * (length(vorticity[j].xyz) - own_swirl);
    (*g).rising -= share * params.kernel.y * w * w * inverse_r * d;
}

fn gathered_turned(g: Gathered, axis: u32, flip: f32) -> Gathered {
    var turned = g;
    turned.rising[axis] *= flip;
    return turned;
}

fn gathered_added(a: Gathered, b: Gathered) -> Gathered {
    return Gathered(a.rising + b.rising);
}

@compute @workgroup_size(256)
fn pbf_finish(
    @builtin(global_invocation_id) global: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let walker = lane_of(global, groups, local);
    let s = walker.particle;
    let me = select(vec4<f32>(0.0), position_b[walker.at], walker.live);
    let omega = vorticity[walker.at].xyz;
    own_swirl = length(omega);
    var g = gathered_zero();
    if walker.live & me.w != 0.0 {
        g = gathered_around(walker, me.xyz);
    }
    g.rising = lanes_added(local, vec4<f32>(g.rising, 0.0)).xyz;
    if !walker.live | walker.lane != 0u {
        return;
    }
    var v = velocity_a[s].xyz;
    let rising = length(g.rising);
    if me.w != 0.0 & rising > 1e-12 {
        v += params.dt * params.pbf.w * cross(g.rising / rising, omega);
        v.z = select(v.z, 0.0, params.dimensions == 2u);
    }
    settle_particle(s, me, v, params.dt);
}
