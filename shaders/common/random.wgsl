// A PCG hash and uniform numbers from it: the same inputs give the same
// number on every adapter, so a simulation seeded alike grows alike.
// `src/layers/colony/sim.rs` mirrors both for its CPU reference.

fn pcg(v: u32) -> u32 {
    let state = v * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// A number in [0, 1) from two keys.
fn random01(a: u32, b: u32) -> f32 {
    return f32(pcg(a ^ pcg(b)) >> 8u) / 16777216.0;
}
