// Hash, value noise and fractal noise in 2D. Part of every `shader` layer's
// prelude, and shared by any layer that needs cheap organic variation.

fn hash21(p: vec2<f32>) -> f32 {
    var q = fract(p * vec2<f32>(123.34, 456.21));
    q += dot(q, q + 45.32);
    return fract(q.x * q.y);
}

// A lattice cell folded into [-64, 64): `hash21` scales its input by
// hundreds before `fract`, so far cells (the clouds near the horizon, where
// the sky's plane runs to thousands) would keep only a few bits and hash
// into straight seams and facets. Cells near the origin stay as they are.
fn noise_cell(cell: vec2<f32>) -> vec2<f32> {
    return cell - 128.0 * floor((cell + 64.0) / 128.0);
}

fn value_noise2(p: vec2<f32>) -> f32 {
    let cell = floor(p);
    let f = fract(p);
    let u = f * f * (3.0 - 2.0 * f);
    let a = hash21(noise_cell(cell));
    let b = hash21(noise_cell(cell + vec2<f32>(1.0, 0.0)));
    let c = hash21(noise_cell(cell + vec2<f32>(0.0, 1.0)));
    let d = hash21(noise_cell(cell + vec2<f32>(1.0, 1.0)));
    return mix(mix(a, b, u.x), mix(c, d, u.x), u.y);
}

// Five octaves of value noise, each rotated so the grid does not show.
fn fbm2(p: vec2<f32>) -> f32 {
    let turn = mat2x2<f32>(0.8, 0.6, -0.6, 0.8);
    var q = p;
    var amplitude = 0.5;
    var sum = 0.0;
    for (var octave = 0; octave < 5; octave++) {
        sum += amplitude * value_noise2(q);
        q = turn * q * 2.03 + vec2<f32>(17.1, 3.7);
        amplitude *= 0.5;
    }
    return sum;
}
