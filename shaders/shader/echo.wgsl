// Echo: video feedback. Each frame keeps a turned, scaled and colour-shifted
// copy of its last frame and feeds in the layers below, so bright shapes
// leave spiralling trails.
//
// @param zoom float 0.992 min=0.9 max=1.1 smooth=0.2 "Scale per frame (below 1 pulls inward)"
// @param turn float 0.0025 min=-0.05 max=0.05 smooth=0.2 "Rotation per frame, radians"
// @param decay float 0.9 min=0 max=0.999 smooth=0.2 "Share of the echo that survives a frame"
// @param feed float 0.08 min=0 max=2 smooth=0.2 "How much of the layers below enters the echo"
// @param hue float 0.015 min=-0.2 max=0.2 smooth=0.2 "Hue turn per frame, in turns"


// Rotates a linear colour around the grey axis by `angle` radians.
fn turn_hue(c: vec3<f32>, angle: f32) -> vec3<f32> {
    let k = vec3<f32>(0.57735);
    let cosine = cos(angle);
    return c * cosine + cross(k, c) * sin(angle) + k * dot(k, c) * (1.0 - cosine);
}

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let aspect = sylva.resolution.x / max(sylva.resolution.y, 1.0);
    var centred = (in.uv - 0.5) * vec2<f32>(aspect, 1.0);
    let s = sin(params.turn);
    let c = cos(params.turn);
    centred = mat2x2<f32>(c, s, -s, c) * centred * params.zoom;
    let from_uv = centred / vec2<f32>(aspect, 1.0) + 0.5;
    let inside = all(from_uv >= vec2<f32>(0.0)) && all(from_uv <= vec2<f32>(1.0));
    let echo = select(vec3<f32>(0.0), sample_previous(from_uv).rgb, inside);
    let fresh = sample_below(in.uv).rgb * params.feed;
    let rgb = max(turn_hue(echo, params.hue * 6.2831853) * params.decay, vec3<f32>(0.0)) + fresh;
    return vec4<f32>(rgb, 1.0);
}
