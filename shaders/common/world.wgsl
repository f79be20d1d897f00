// What the show's simulations share (src/engine/world.rs): bodies as
// capsules with the velocity of each end (the dancing figure's, moving;
// the colony's branches, standing), how a particle is kept out of them,
// and the rain map's cells.

struct Capsule {
    // One end, and the radius in w.
    a: vec4<f32>,
    b: vec4<f32>,
    velocity_a: vec4<f32>,
    velocity_b: vec4<f32>,
}

struct Bodies {
    count: u32,
    // How much of the velocity into a body bounces back (0 sticks, 1 bounces whole).
    bounce: f32,
    // Extra distance kept from the surface (a particle's radius).
    margin: f32,
    // Cells along a side of the rain map landings are counted in; 0: none.
    rain_side: u32,
    // Whether the world's branches (scene frame) are met too, and the
    // matrix from the scene into this block's frame.
    branches: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    to_frame: mat4x4<f32>,
    capsules: array<Capsule, 64>,
}

// The branches standing in the scene (its frame): written by a layer's GPU
// pass each frame (the colony's, its oldest and thickest first), met by the
// water. MAX_BRANCHES is `world::MAX_BRANCHES` in src/engine/world.rs.
const MAX_BRANCHES: u32 = 4096u;

struct Branches {
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    capsules: array<Capsule, MAX_BRANCHES>,
}

// Capsule `c` of the scene seen in the frame `m` takes it to (a uniform
// scale: the radius shrinks with the axes).
fn capsule_in(m: mat4x4<f32>, c: Capsule) -> Capsule {
    let scale = length(m[0].xyz);
    let a = (m * vec4<f32>(c.a.xyz, 1.0)).xyz;
    let b = (m * vec4<f32>(c.b.xyz, 1.0)).xyz;
    let va = (m * vec4<f32>(c.velocity_a.xyz, 0.0)).xyz;
    let vb = (m * vec4<f32>(c.velocity_b.xyz, 0.0)).xyz;
    return Capsule(vec4<f32>(a, c.a.w * scale), vec4<f32>(b, 0.0), vec4<f32>(va, 0.0), vec4<f32>(vb, 0.0));
}

// Where along the segment from `a` to `b` (0..1) it comes nearest `p`.
fn along_segment(p: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> f32 {
    let axis = b - a;
    return clamp(dot(p - a, axis) / max(dot(axis, axis), 1e-12), 0.0, 1.0);
}

// The rain map's cell under `uv` (0..1 across the ground that spans it).
fn rain_cell(uv: vec2<f32>, side: u32) -> u32 {
    let cell = min(vec2<u32>(clamp(uv, vec2<f32>(0.0), vec2<f32>(1.0)) * f32(side)), vec2<u32>(side - 1u));
    return cell.y * side + cell.x;
}

// A particle at `x` moving at `v`, pushed out of capsule `c` if it
// entered it (`keep`: the share of its velocity into the body that bounces
// back, and the distance kept from the surface) and given the body's own
// velocity there plus what bounces back, so a moving arm sweeps water
// before it and throws it off.
fn collide_with_capsule(c: Capsule, keep: vec2<f32>, x: ptr<function, vec3<f32>>, v: ptr<function, vec3<f32>>) {
    let axis = c.b.xyz - c.a.xyz;
    let t = along_segment(*x, c.a.xyz, c.b.xyz);
    let nearest = c.a.xyz + axis * t;
    let away = *x - nearest;
    let reach = c.a.w + keep.y;
    let d2 = dot(away, away);
    if d2 >= reach * reach {
        return;
    }
    let d = sqrt(d2);
    let n = select(vec3<f32>(0.0, 1.0, 0.0), away / d, d > 1e-6);
    *x = nearest + n * reach;
    let surface = mix(c.velocity_a.xyz, c.velocity_b.xyz, t);
    let relative = *v - surface;
    let into = dot(relative, n);
    if into < 0.0 {
        *v = surface + relative - n * into * (1.0 + keep.x);
    }
}
