// Bloom for the master section: the light above `threshold` taken from the
// composite at half size (a soft knee, so it fades in rather than cuts),
// blurred by a Gaussian across and down, and added back before the
// tonemap by `master.bloom`, so bright water, glowing branches and lit
// crowns bleed light into the air around them.

#include "common/fullscreen.wgsl"

struct Bloom {
    threshold: f32,
    // Blur radius in half-size pixels.
    radius: f32,
    // 0: across, 1: down.
    direction: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> bloom: Bloom;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var linear_sampler: sampler;

@fragment
fn fs_bright(in: FullscreenVertex) -> @location(0) vec4<f32> {
    // Bilinear between four full-size pixels: their mean.
    let c = max(textureSampleLevel(source, linear_sampler, in.uv, 0.0).rgb, vec3<f32>(0.0));
    let peak = max(c.r, max(c.g, c.b));
    let knee = 0.5 * bloom.threshold;
    let soft = clamp(peak - bloom.threshold + knee, 0.0, 2.0 * knee);
    let over = max(soft * soft / (4.0 * knee + 1e-5), peak - bloom.threshold);
    return vec4<f32>(c * over / max(peak, 1e-5), 1.0);
}

@fragment
fn fs_blur(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let size = vec2<i32>(textureDimensions(source));
    let pixel = vec2<i32>(in.position.xy);
    let step = select(vec2<i32>(1, 0), vec2<i32>(0, 1), bloom.direction == 1u);
    let reach = i32(clamp(bloom.radius, 1.0, 32.0));
    let sigma = max(bloom.radius * 0.5, 0.5);
    var sum = vec3<f32>(0.0);
    var weight = 0.0;
    for (var k = -reach; k <= reach; k++) {
        let at = clamp(pixel + step * k, vec2<i32>(0), size - 1);
        let w = exp(-f32(k * k) / (2.0 * sigma * sigma));
        sum += textureLoad(source, at, 0).rgb * w;
        weight += w;
    }
    return vec4<f32>(sum / weight, 1.0);
}
