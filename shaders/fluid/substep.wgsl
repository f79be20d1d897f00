// What every SPH stage shares beyond fluid.wgsl: the particle a thread
// handles, the mirror walls, wall and interaction forces, and a hash for
// the emitter. Each stage file declares `params` (and the buffers it uses,
// read-only where it only reads, so the GPU may cache them).

#include "fluid/fluid.wgsl"

fn particle(global: vec3<u32>, groups: vec3<u32>) -> u32 {
    return global.x + global.y * groups.x * 256u;
}

// The particle a thread of a neighbour walk works for (`LANES` threads to
// one), its lane, whether it is a particle at all, an index safe to read
// at either way, and the thread as a walker of the neighbour lists
// (`listed_at` in fluid.wgsl).
struct LaneOf {
    particle: u32,
    lane: u32,
    live: bool,
    at: u32,
    walker: u32,
}

fn lane_of(global: vec3<u32>, groups: vec3<u32>, local: u32) -> LaneOf {
    let t = particle(global, groups);
    let s = t / LANES;
    return LaneOf(s, local % LANES, s < params.count, min(s, params.count - 1u), t);
}

// Whether a candidate `r2` away from a walk's centre is a neighbour whose
// terms count: within h, and not the particle itself (0 away from its own
// walk's centre).
fn is_neighbour(r2: f32) -> bool {
    return (r2 < params.kernel.w) & (r2 >= 1e-18);
}

var<workgroup> lane_shares: array<vec4<f32>, 256>;

// `share` added up over a particle's lanes, in lane order: its first lane
// gets the total, the others their own share back. Every thread of the
// workgroup calls it, in uniform control flow, as often as it needs.
fn lanes_added(local: u32, share: vec4<f32>) -> vec4<f32> {
    workgroupBarrier();
    lane_shares[local] = share;
    workgroupBarrier();
    var total = share;
    if local % LANES == 0u {
        for (var k = 1u; k < LANES; k++) {
            total += lane_shares[local + k];
        }
    }
    return total;
}

// Walls near a particle, as (axis, wall coordinate) pairs: the fluid is
// mirrored across them, so a particle at a wall has a full neighbourhood
// (mirror particles). Without this the layer along a wall has too little
// density, no pressure, and squirts out along the floor. The mirror
// particles near x are the particles near x's own mirror image, so each
// wall is a second walk around that image (`walks_around`), and the walk
// itself holds no mirror code: testing every neighbour against the walls
// took nearly half of each stage's time (1M particles on the H200:
// density 0.302 ms with the test, 0.165 without).
struct Walls {
    count: u32,
    axis: array<u32, 3>,
    at: array<f32, 3>,
}

// The walls within `reach` of x. Every loop runs over three axes and
// masks the third in 2D: a loop bound or a branch on a uniform alone makes
// lavapipe compile (and keep) a new variant of the kernel, every frame for
// a fluid built after the first.
fn walls_near(x: vec3<f32>, reach: f32) -> Walls {
    var walls: Walls;
    let axes = select(3u, 2u, params.dimensions == 2u);
    for (var k = 0u; k < 3u; k++) {
        let on = k < axes;
        // The nearer wall, where a thin tank has both within reach.
        let far = params.container[k] - x[k];
        if on & (x[k] < reach) & (x[k] <= far) {
            walls.axis[walls.count] = k;
            walls.at[walls.count] = 0.0;
            walls.count += 1u;
        } else if on & (far < reach) {
            walls.axis[walls.count] = k;
            walls.at[walls.count] = params.container[k];
            walls.count += 1u;
        }
    }
    return walls;
}

// Walls as a list's word 1 keeps them: two bits an axis, the wall at 0 or
// the one at the container's far side.
fn walls_mask(walls: Walls) -> u32 {
    var mask = 0u;
    for (var k = 0u; k < walls.count; k++) {
        let side = select(1u, 0u, walls.at[k] == 0.0);
        mask |= 1u << (2u * walls.axis[k] + side);
    }
    return mask;
}

fn walls_of(mask: u32) -> Walls {
    var walls: Walls;
    for (var k = 0u; k < 3u; k++) {
        let sides = (mask >> (2u * k)) & 3u;
        if sides != 0u {
            walls.axis[walls.count] = k;
            walls.at[walls.count] = select(params.container[k], 0.0, sides == 1u);
            walls.count += 1u;
        }
    }
    return walls;
}

// The square of (1 + share) h: a list's reach (share SKIN), or a walk's
// over a grid sorted up to REUSE - 1 substeps ago (SKIN / 2: no particle
// has moved farther from the cell it was sorted into).
fn reach2(share: f32) -> f32 {
    let reach = params.h * (1.0 + share);
    return reach * reach;
}

// Walk `k` around a particle at `x`: 0 around x itself, k around its mirror
// image across its k-th wall, whose terms along `axis` are turned by `flip`
// back into the mirror particles' (the reflection's linear part).
struct Around {
    centre: vec3<f32>,
    axis: u32,
    flip: f32,
}

fn walks_around(x: vec3<f32>, walls: Walls, k: u32) -> Around {
    if k == 0u {
        return Around(x, 0u, 1.0);
    }
    let axis = walls.axis[k - 1u];
    return Around(mirrored(x, axis, walls.at[k - 1u]), axis, -1.0);
}

fn mirrored(v: vec3<f32>, axis: u32, at: f32) -> vec3<f32> {
    var m = v;
    m[axis] = 2.0 * at - v[axis];
    return m;
}


// A position held inside the tank and a tenth of h off its walls (a 2D
// tank's z at 0): the large-step solver's positions are projected, not
// pushed, and one on a wall would sit on its own mirror image, whose
// density it cannot move away from.
fn kept_off_walls(x: vec3<f32>) -> vec3<f32> {
    let margin = vec3<f32>(0.1 * params.h);
    var kept = clamp(x, margin, max(params.container - margin, margin));
    kept.z = select(kept.z, 0.0, params.dimensions == 2u);
    return kept;
}

// Walls push back in proportion to how far a particle has gone through.
fn wall_acceleration(x: vec3<f32>) -> vec3<f32> {
    var a = vec3<f32>(0.0);
    let axes = select(3, 2, params.dimensions == 2u);
    for (var k = 0; k < 3; k++) {
        let on = select(0.0, 1.0, k < axes);
        a[k] += on * params.wall_stiffness * max(-x[k], 0.0);
        a[k] -= on * params.wall_stiffness * max(x[k] - params.container[k], 0.0);
    }
    return a;
}

// An interaction point pushes away within its radius (the seed's mouse).
fn interaction(x: vec3<f32>, point: vec4<f32>, strength: f32) -> vec3<f32> {
    let d = x - point.xyz;
    let distance = length(d);
    // `|`, not `||`: a short-circuit leaves a branch on the uniform alone,
    // and lavapipe compiles a variant of the kernel for every value a
    // uniform in a branch takes (a moving point: one a frame, kept).
    if point.w <= 0.0 | distance >= point.w | distance < 1e-6 {
        return vec3<f32>(0.0);
    }
    return strength * (point.w - distance) * (d / distance);
}

fn random01(a: u32, b: u32) -> f32 {
    var v = a * 747796405u + 2891336453u + b * 277803737u;
    v = ((v >> ((v >> 28u) + 4u)) ^ v) * 277803737u;
    return f32(((v >> 22u) ^ v) >> 8u) / 16777216.0;
}
