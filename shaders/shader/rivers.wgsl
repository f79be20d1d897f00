// Rivers: slow bright channels winding over a dark ground, drifting and
// branching. Seen, a quiet backdrop; as `forest.density_source`, the
// paths along which a forest grows, dies back and follows them.
//
// @param speed float 0.02 min=0 max=1 smooth=0.3 "How fast the rivers wander"
// @param scale float 2.5 min=0.5 max=12 smooth=0.3 "How many bends cross the picture"
// @param width float 0.22 min=0.02 max=1 smooth=0.2 "How wide the bright channels are"
// @param brightness float 1 min=0 max=4 smooth=0.2 "Brightness of the channels"

#include "common/noise.wgsl"

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let t = sylva.time * params.speed;
    let p = in.uv * params.scale;
    // Two drifting fields whose zero lines are the rivers.
    let warp = vec2<f32>(fbm2(p + vec2<f32>(t, 0.0)), fbm2(p + vec2<f32>(4.1, t)));
    let field = fbm2(p * 0.8 + warp * 1.7 - vec2<f32>(0.0, t * 0.7)) - 0.5;
    let river = 1.0 - smoothstep(0.0, params.width * 0.5, abs(field));
    let banks = 0.25 * smoothstep(0.35, 0.0, abs(field));
    let light = (river + banks) * params.brightness;
    return vec4<f32>(vec3<f32>(0.55, 0.75, 0.9) * light, 1.0);
}
