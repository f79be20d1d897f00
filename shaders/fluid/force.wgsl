// SPH stage 3: acceleration from pressure (Spiky gradient, the symmetric
// average of the seed's code), viscosity (its Laplacian), gravity, walls
// and interaction points.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(4) var<storage, read> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> velocity_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> density: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> acceleration: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;

@compute @workgroup_size(256)
fn compute_force(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let me = position_b[s];
    if me.w == 0.0 {
        acceleration[s] = vec4<f32>(0.0);
        return;
    }
    let v = velocity_b[s].xyz;
    let own = density[s];
    let home = grid_coords(grid, me.xyz);
    let spiky = params.kernel.y;
    let laplacian = params.kernel.z;
    let h2 = params.kernel.w;
    let walls = walls_near(me.xyz);
    var pressure = vec3<f32>(0.0);
    var viscous = vec3<f32>(0.0);
    var cells: array<u32, 2>;
    for (var dz = -REACH; dz <= REACH; dz++) {
        for (var dy = -REACH; dy <= REACH; dy++) {
            row_range(grid, &cells, home, dy, dz);
            for (var j = grid_starts[cells[0]]; j < grid_starts[cells[1]]; j++) {
                let other = position_b[j];
                let d = other.xyz - me.xyz;
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
                    pressure += pairing * w * w * inverse_r * d;
                    viscous += drag * w * (u - v);
                }
                // Mirror particles across the walls, moving against their
                // originals: no-slip walls, whose friction slows a surge
                // as a real floor does.
                for (var k = 0u; k < walls.count; k++) {
                    let g = mirrored(other.xyz, walls.axis[k], walls.at[k]) - me.xyz;
                    let g2 = dot(g, g);
                    if g2 < h2 && g2 >= 1e-18 {
                        let gr = sqrt(g2);
                        let w = params.h - gr;
                        pressure += pairing * w * w / gr * g;
                        viscous += drag * w * (-u - v);
                    }
                }
            }
        }
    }
    var a = (pressure + params.viscosity * viscous) / own.x + params.gravity + wall_acceleration(me.xyz);
    a += interaction(me.xyz, params.point0, params.push.x) + interaction(me.xyz, params.point1, params.push.y);
    a.z = select(a.z, 0.0, params.dimensions == 2u);
    acceleration[s] = vec4<f32>(a, 0.0);
}

