// SPH stage 4, run by the force stage for each particle once its
// acceleration is known (and by the large-step solver's last stage once
// its position is): symplectic Euler back into set A, with sinks,
// emitters, the bodies other layers move (pushed out, given their
// velocity), the container and NaN guards: nothing leaves the tank or
// stays broken.

#include "common/world.wgsl"

@group(0) @binding(2) var<storage, read_write> position_a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> velocity_a: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> substeps: array<u32>;
@group(0) @binding(11) var<storage, read> bodies: Bodies;
// Landings on the floor, counted for the ground that drinks them.
@group(0) @binding(12) var<storage, read_write> rain: array<atomic<u32>>;
// The branches standing in the scene, in the tank's frame and binned
// (fluid/branches.wgsl), met when `bodies.branches` says so.
@group(0) @binding(16) var<storage, read> tank_branches: array<Capsule>;
@group(0) @binding(17) var<storage, read> bins: array<u32>;
// Where each particle was when the lists were built (reorder.wgsl), and
// the plan whose `displaced` a particle sets that left its skin.
@group(0) @binding(20) var<storage, read> anchor: array<vec4<f32>>;
@group(0) @binding(21) var<storage, read_write> plan: ListPlan;

// Slower than this onto the floor is water at rest, not rain.
const RAIN_SPEED: f32 = 0.3;

// Particle `s`, at `before` moving at `velocity` before this substep, under `a`.
fn integrate_particle(s: u32, before: vec4<f32>, velocity: vec3<f32>, a: vec3<f32>) {
    var x = before;
    var v = velocity;
    if x.w != 0.0 {
        v += a * params.dt;
        x = vec4<f32>(x.xyz + v * params.dt, 1.0);
    }
    settle_particle(s, x, v, 0.0);
}

// Particle `s`, moved to `moved` at velocity `velocity` by the substep,
// met by the rain map, sinks, emitters, bodies and walls, stored in set
// A; its lists are rebuilt if it will be `ahead` seconds of its velocity
// farther than their skin from where they were built (the large-step
// solver's lists are built around where the next substep predicts it).
fn settle_particle(s: u32, moved: vec4<f32>, velocity: vec3<f32>, ahead: f32) {
    // A fresh random stream every substep (the frame's seed alone would
    // make each substep of a frame pick the same particles).
    let stream = params.seed ^ (substeps[0] * 2654435761u);
    var x = moved;
    var v = velocity;
    // Water falling within half a smoothing length of the floor (where the
    // wall's push slows it) lands there as rain, once each substep it is
    // still falling; the floor spans the rain map (a flat tank: a line
    // across it), before a sink there can drain it.
    if bodies.rain_side > 0u & x.w != 0.0 & x.y < params.h * 0.5 & v.y < -RAIN_SPEED {
        var uv = x.xz / max(params.container.xz, vec2<f32>(1e-6));
        uv.y = select(uv.y, 0.5, params.dimensions == 2u);
        atomicAdd(&rain[rain_cell(uv, bodies.rain_side)], 1u);
    }
    // A sink drains what enters it. (`&`, not `&&`: see `interaction` in
    // substep.wgsl; the sink and emitter sizes are choreographed.)
    if params.sink.w > 0.0 & x.w != 0.0 & distance(x.xyz, params.sink.xyz) < params.sink.w {
        x.w = 0.0;
    }
    // An emitter pours: dead particles come back there, a share per substep
    // (its rate a second of show time, turned into this share on the CPU),
    // from a square `emitter.w` wide and a smoothing length deep, so a
    // wide cloud rains from one height and its drops land spread out.
    if x.w == 0.0 & params.emitter.w > 0.0 & random01(s, stream) < params.emitter_velocity.w {
        let jitter = vec3<f32>(random01(s, stream + 1u), random01(s, stream + 2u), random01(s, stream + 3u)) - 0.5;
        let extent = vec3<f32>(params.emitter.w, params.h, params.emitter.w);
        x = vec4<f32>(params.emitter.xyz + jitter * extent, 1.0);
        v = params.emitter_velocity.xyz;
    }
    // Nothing leaves the container, and nothing stays NaN.
    let broken = any(x.xyz != x.xyz) || any(v != v) || any(abs(v) > vec3<f32>(1e4));
    if broken {
        let r = vec3<f32>(random01(s, stream + 7u), random01(s, stream + 8u), random01(s, stream + 9u));
        x = vec4<f32>(params.container * (0.25 + 0.5 * r), 1.0);
        v = vec3<f32>(0.0);
    }
    // Bodies push out whatever entered them, a particle just put back
    // whole too: the moving bodies (at most 64, the world's limit), then
    // the branches listed in the particle's bin.
    if x.w != 0.0 {
        var at = x.xyz;
        let keep = vec2<f32>(bodies.bounce, bodies.margin);
        for (var k = 0u; k < min(bodies.count, 64u); k++) {
            collide_with_capsule(bodies.capsules[k], keep, &at, &v);
        }
        // (A branch on storage, not a uniform: lavapipe keeps one variant.)
        if bodies.branches != 0u {
            let bin = bin_index(bin_coords(at, params.container));
            for (var k = 0u; k < min(bins[bin], BIN_DEPTH); k++) {
                collide_with_capsule(tank_branches[bins[BIN_CELLS + bin * BIN_DEPTH + k]], keep, &at, &v);
            }
        }
        x = vec4<f32>(at, x.w);
    }
    let low = vec3<f32>(0.0);
    let high = params.container;
    let inside = clamp(x.xyz, low, high);
    v = select(v, vec3<f32>(0.0), inside != x.xyz);
    x = vec4<f32>(inside, x.w);
    let flat = params.dimensions == 2u;
    x.z = select(x.z, 0.0, flat);
    v.z = select(v.z, 0.0, flat);
    position_a[s] = x;
    velocity_a[s] = vec4<f32>(v, 0.0);
    // Only a particle alive when the lists were built can leave its skin:
    // one drained since weighs nothing in the walks, and one dead at the
    // build and poured since has empty lists and is on no other's until the
    // next rebuild.
    let built = anchor[s];
    let away = x.xyz + ahead * v - built.xyz;
    let half_skin = 0.5 * SKIN * params.h;
    if (dot(away, away) > half_skin * half_skin) & (built.w != 0.0) & (x.w != 0.0) {
        plan.displaced = 1u;
    }
}
