// What the show's simulations share (src/engine/world.rs): bodies as
// capsules with the velocity of each end, how a particle is kept out of
// them, and the rain map's cells.

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
    capsules: array<Capsule, 64>,
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
    let t = clamp(dot(*x - c.a.xyz, axis) / max(dot(axis, axis), 1e-12), 0.0, 1.0);
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
