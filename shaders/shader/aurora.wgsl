// Aurora: curtains of light folding over a starry night sky, flaring on
// the beat. The default show's sky.
//
// @param speed float 0.12 min=0 max=2 smooth=0.3 "How fast the curtains drift"
// @param folds float 1.6 min=0.3 max=6 smooth=0.3 "How many folds cross the sky"
// @param warp float 1.2 min=0 max=4 smooth=0.3 "How much the curtains twist"
// @param glow float 1.3 min=0 max=8 smooth=0.2 "Brightness of the curtains (HDR)"
// @param pulse float 0.4 min=0 max=1 smooth=0.1 "How much each beat flares"
// @param base colour 0.05,0.9,0.45,1 "Colour at the curtains' lower edge"
// @param crown colour 0.55,0.12,0.85,1 "Colour high in the curtains"
// @param stars float 1 min=0 max=3 "Brightness of the stars"

#include "common/noise.wgsl"

fn curtain(p: vec2<f32>, t: f32, offset: f32) -> vec3<f32> {
    let drift = fbm2(vec2<f32>(p.x * params.folds + offset, t)) - 0.5;
    let edge = 0.3 + offset * 0.07 + drift * 0.5 * params.warp;
    let height = p.y - edge;
    // How tall the curtain stands here: some folds reach high into the
    // sky, others stay low, and each drifts.
    let reach = 0.25 + 0.6 * fbm2(vec2<f32>(p.x * 0.9 + offset * 3.0, t * 0.6 + 5.0));
    // Sharp lower edge, a long soft fade up to its reach: the shape of
    // real aurorae.
    let body = select(exp(height * 40.0), exp(-height * 2.2 / reach) * smoothstep(reach * 1.6, 0.0, height), height > 0.0);
    // Rays, bunched and spread unevenly along the curtain (a warped
    // domain), brighter in some stretches than others: not a barcode.
    let along = p.x * 26.0 + drift * 12.0 + 6.0 * fbm2(vec2<f32>(p.x * 2.3 + offset, t * 0.7));
    let streak = fbm2(vec2<f32>(along, t * 2.5 + offset * 9.0 + height * 1.5));
    let stretch = 0.35 + 1.3 * smoothstep(0.3, 0.75, fbm2(vec2<f32>(p.x * 1.7 - t * 0.5, offset * 4.0)));
    let rays = (0.2 + 2.2 * streak * streak * streak) * stretch;
    let colour = mix(params.base.rgb, params.crown.rgb, smoothstep(0.0, 0.35 * reach + 0.1, height));
    return colour * body * rays;
}

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let aspect = sylva.resolution.x / max(sylva.resolution.y, 1.0);
    let p = vec2<f32>(in.uv.x * aspect, 1.0 - in.uv.y);
    let t = sylva.time * params.speed;
    let flare = 1.0 + params.pulse * exp(-sylva.beat_phase * 6.0);

    var light = vec3<f32>(0.0);
    light += curtain(p, t, 0.0);
    light += curtain(p + vec2<f32>(3.1, 0.0), t * 1.3, 1.0) * 0.6;
    light += curtain(p + vec2<f32>(7.7, 0.0), t * 0.8, 2.0) * 0.35;

    let sky = mix(vec3<f32>(0.004, 0.006, 0.02), vec3<f32>(0.0, 0.02, 0.05), p.y);
    let cell = floor(in.uv * sylva.resolution / 2.0);
    let twinkle = 0.6 + 0.4 * sin(sylva.time * 3.0 + hash21(cell + 7.0) * 40.0);
    let star = step(0.997, hash21(cell)) * twinkle * params.stars;

    let rgb = sky + vec3<f32>(star) + light * params.glow * flare;
    return vec4<f32>(rgb, 1.0);
}
