// SPH stage 3: acceleration from pressure (Spiky gradient, the symmetric
// average of the seed's code), viscosity (its Laplacian), gravity, walls
// and interaction points, LANES threads to a particle; then stage 4 (the
// integrate step, integrate.wgsl) for it in the same pass, which saves a
// pass and the accelerations' round trip each substep.

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

struct Terms {
    pressure: vec3<f32>,
    viscous: vec3<f32>,
}

// Pressure and viscosity terms over this lane's rows around particle `s`.
fn pair_terms(s: u32, me: vec3<f32>, v: vec3<f32>, own: vec2<f32>, lane: u32) -> Terms {
    let home = grid_coords(grid, me);
    let spiky = params.kernel.y;
    let laplacian = params.kernel.z;
    let h2 = params.kernel.w;
    let walls = walls_near(me);
    var t = Terms(vec3<f32>(0.0), vec3<f32>(0.0));
    var cells: array<u32, 2>;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, me, home, r, h2);
        for (var j = grid_starts[cells[0]]; j < grid_starts[cells[1]]; j++) {
            let other = position_b[j];
            let d = other.xyz - me;
            let r2 = dot(d, d);
            let near = j != s && r2 < h2 && r2 >= 1e-18;
            if other.w == 0.0 || (!near && walls.count == 0u) {
                continue;
            }
            let theirs = density[j];
            let inverse_density = 1.0 / theirs.x;
            let pairing = spiky * params.mass * (own.y + theirs.y) * 0.5 * inverse_density;
            let drag = laplacian * params.mass * inverse_density;
            let u = velocity_b[j].xyz;
            if near {
                let inverse_r = inverseSqrt(r2);
                let w = params.h - r2 * inverse_r;
                t.pressure += pairing * w * w * inverse_r * d;
                t.viscous += drag * w * (u - v);
            }
            // Mirror particles across the walls, moving against their
            // originals: no-slip walls, whose friction slows a surge
            // as a real floor does.
            for (var k = 0u; k < walls.count; k++) {
                let g = mirrored(other.xyz, walls.axis[k], walls.at[k]) - me;
                let g2 = dot(g, g);
                if g2 < h2 && g2 >= 1e-18 {
                    let gr = sqrt(g2);
                    let w = params.h - gr;
                    t.pressure += pairing * w * w / gr * g;
                    t.viscous += drag * w * (-u - v);
                }
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
        t = pair_terms(s, me.xyz, v, own, walker.lane);
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
