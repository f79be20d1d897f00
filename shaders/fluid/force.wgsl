// SPH stage 3: acceleration from pressure (Spiky gradient, the symmetric
// average of the seed's code), viscosity (its Laplacian), gravity, walls
// and interaction points, LANES threads to a particle, over its
// neighbours (fluid/gather.wgsl); then stage 4 (the integrate step,
// integrate.wgsl) for it in the same pass, which saves a pass and the
// accelerations' round trip each substep.

#include "fluid/substep.wgsl"
#include "fluid/gather.wgsl"
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

struct Gathered {
    pressure: vec3<f32>,
    viscous: vec3<f32>,
}

// The particle whose neighbours are gathered: its density and pressure,
// and its velocity.
var<private> own: vec2<f32>;
var<private> own_velocity: vec3<f32>;

fn gathered_zero() -> Gathered {
    return Gathered(vec3<f32>(0.0), vec3<f32>(0.0));
}

// Neighbour j's pressure and viscosity terms. A mirror particle moves
// against its original: no-slip walls, whose friction slows a surge as a
// real floor does.
fn gather_pair(g: ptr<function, Gathered>, j: u32, d: vec3<f32>, mirror: bool) {
    let r2 = dot(d, d);
    let theirs = density[j];
    let inverse_density = 1.0 / theirs.x;
    let pairing = params.kernel.y * params.mass * (own.y + theirs.y) * 0.5 * inverse_density;
    let drag = params.kernel.z * params.mass * inverse_density;
    let inverse_r = inverseSqrt(r2);
    let w = params.h - r2 * inverse_r;
    (*g).pressure += pairing * w * w * inverse_r * d;
    (*g).viscous += drag * w * (select(1.0, -1.0, mirror) * velocity_b[j].xyz - own_velocity);
}

// The pressure term comes back mirrored; the viscous one is already the
// mirror particles' (their velocities turned in `gather_pair`).
fn gathered_turned(g: Gathered, axis: u32, flip: f32) -> Gathered {
    var turned = g;
    turned.pressure[axis] *= flip;
    return turned;
}

fn gathered_added(a: Gathered, b: Gathered) -> Gathered {
    return Gathered(a.pressure + b.pressure, a.viscous + b.viscous);
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
    own = density[walker.at];
    own_velocity = v;
    var t = gathered_zero();
    if walker.live & me.w != 0.0 {
        t = gathered_around(walker, me.xyz);
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
