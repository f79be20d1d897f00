// One SPH substep (SEEDS.md 002): reorder the particles into grid order
// (for memory locality: a cell's particles are then contiguous), density
// and Tait pressure, forces (pressure, viscosity, gravity, walls,
// interaction points), and symplectic Euler with the container, sinks,
// emitters and NaN guards. Set A holds the particles between substeps in
// grid order; set B is the reordered copy the passes read (ping-pong, so a
// kernel never reads what it writes).

#include "fluid/fluid.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(2) var<storage, read_write> position_a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> velocity_a: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> velocity_b: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> acceleration: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(9) var<storage, read> grid_sorted: array<u32>;

fn particle(global: vec3<u32>, groups: vec3<u32>) -> u32 {
    return global.x + global.y * groups.x * 256u;
}

@compute @workgroup_size(256)
fn reorder(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let i = grid_sorted[s];
    position_b[s] = position_a[i];
    velocity_b[s] = velocity_a[i];
}

// Walls near a particle, as (axis, wall coordinate) pairs: the fluid is
// mirrored across them, so a particle at a wall has a full neighbourhood
// (mirror particles). Without this the layer along a wall has too little
// density, no pressure, and squirts out along the floor.
struct Walls {
    count: u32,
    axis: array<u32, 3>,
    at: array<f32, 3>,
}

fn walls_near(x: vec3<f32>) -> Walls {
    var walls: Walls;
    let axes = select(3u, 2u, params.dimensions == 2u);
    for (var k = 0u; k < axes; k++) {
        if x[k] < params.h {
            walls.axis[walls.count] = k;
            walls.at[walls.count] = 0.0;
            walls.count += 1u;
        } else if x[k] > params.container[k] - params.h {
            walls.axis[walls.count] = k;
            walls.at[walls.count] = params.container[k];
            walls.count += 1u;
        }
    }
    return walls;
}

fn mirrored(v: vec3<f32>, axis: u32, at: f32) -> vec3<f32> {
    var m = v;
    m[axis] = 2.0 * at - v[axis];
    return m;
}


@compute @workgroup_size(256)
fn compute_density(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    let me = position_b[s];
    if me.w == 0.0 {
        density[s] = vec2<f32>(params.rest_density, 0.0);
        return;
    }
    let h2 = params.kernel.w;
    let home = grid_coords(grid, me.xyz);
    let walls = walls_near(me.xyz);
    var sum = 0.0;
    var cells: array<u32, 2>;
    for (var dz = -REACH; dz <= REACH; dz++) {
        for (var dy = -REACH; dy <= REACH; dy++) {
            row_range(grid, &cells, home, dy, dz);
            for (var j = grid_starts[cells[0]]; j < grid_starts[cells[1]]; j++) {
                let other = position_b[j];
                if other.w == 0.0 {
                    continue;
                }
                let d = other.xyz - me.xyz;
                let r2 = dot(d, d);
                if r2 < h2 {
                    let q = h2 - r2;
                    sum += q * q * q;
                }
                for (var w = 0u; w < walls.count; w++) {
                    let g = mirrored(other.xyz, walls.axis[w], walls.at[w]) - me.xyz;
                    let g2 = dot(g, g);
                    if g2 < h2 {
                        let q = h2 - g2;
                        sum += q * q * q;
                    }
                }
            }
        }
    }
    let rho = max(params.mass * params.kernel.x * sum, 1e-6);
    density[s] = vec2<f32>(rho, tait_pressure(params, rho));
}

// Walls push back in proportion to how far a particle has gone through.
fn wall_acceleration(x: vec3<f32>) -> vec3<f32> {
    var a = vec3<f32>(0.0);
    let axes = select(3, 2, params.dimensions == 2u);
    for (var k = 0; k < axes; k++) {
        a[k] += params.wall_stiffness * max(-x[k], 0.0);
        a[k] -= params.wall_stiffness * max(x[k] - params.container[k], 0.0);
    }
    return a;
}

// An interaction point pushes away within its radius (the seed's mouse).
fn interaction(x: vec3<f32>, point: vec4<f32>, strength: f32) -> vec3<f32> {
    let d = x - point.xyz;
    let distance = length(d);
    if point.w <= 0.0 || distance >= point.w || distance < 1e-6 {
        return vec3<f32>(0.0);
    }
    return strength * (point.w - distance) * (d / distance);
}

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
                let pairing = spiky * params.mass * (own.y + theirs.y) * 0.5 / theirs.x;
                let drag = laplacian * params.mass / theirs.x;
                let u = velocity_b[j].xyz;
                if near {
                    let r = sqrt(r2);
                    let w = params.h - r;
                    pressure += pairing * w * w / r * d;
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
    if params.dimensions == 2u {
        a.z = 0.0;
    }
    acceleration[s] = vec4<f32>(a, 0.0);
}

fn random01(a: u32, b: u32) -> f32 {
    var v = a * 747796405u + 2891336453u + b * 277803737u;
    v = ((v >> ((v >> 28u) + 4u)) ^ v) * 277803737u;
    return f32(((v >> 22u) ^ v) >> 8u) / 16777216.0;
}

@compute @workgroup_size(256)
fn integrate(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s >= params.count {
        return;
    }
    var x = position_b[s];
    var v = velocity_b[s].xyz;
    if x.w != 0.0 {
        v += acceleration[s].xyz * params.dt;
        x = vec4<f32>(x.xyz + v * params.dt, 1.0);
    }
    // A sink drains what enters it.
    if params.sink.w > 0.0 && x.w != 0.0 && distance(x.xyz, params.sink.xyz) < params.sink.w {
        x.w = 0.0;
    }
    // An emitter pours: dead particles come back there, a share per substep.
    if x.w == 0.0 && params.emitter.w > 0.0 && random01(s, params.seed) < params.emitter_velocity.w {
        let jitter = vec3<f32>(random01(s, params.seed + 1u), random01(s, params.seed + 2u), random01(s, params.seed + 3u)) - 0.5;
        x = vec4<f32>(params.emitter.xyz + jitter * params.emitter.w, 1.0);
        v = params.emitter_velocity.xyz;
    }
    // Nothing leaves the container, and nothing stays NaN.
    let broken = any(x.xyz != x.xyz) || any(v != v) || any(abs(v) > vec3<f32>(1e4));
    if broken {
        let r = vec3<f32>(random01(s, params.seed + 7u), random01(s, params.seed + 8u), random01(s, params.seed + 9u));
        x = vec4<f32>(params.container * (0.25 + 0.5 * r), 1.0);
        v = vec3<f32>(0.0);
    }
    let low = vec3<f32>(0.0);
    let high = params.container;
    let inside = clamp(x.xyz, low, high);
    v = select(v, vec3<f32>(0.0), inside != x.xyz);
    x = vec4<f32>(inside, x.w);
    if params.dimensions == 2u {
        x.z = 0.0;
        v.z = 0.0;
    }
    position_a[s] = x;
    velocity_a[s] = vec4<f32>(v, 0.0);
}
