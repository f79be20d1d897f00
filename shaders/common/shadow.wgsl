// The scene's shadow map (src/engine/shadow.rs), read by what shades the
// scene: how much of the key light reaches a point past what the layers
// in the scene cast.

#include "common/camera.wgsl"

// Clip depth a lookup is pulled towards the light by, so a surface that
// casts does not shadow itself.
const SHADOW_BIAS: f32 = 0.0005;

// How much of the key light reaches point `p` (in the frame of the
// camera that carries `light`): 1 lit, down to 1 - the shadows' strength
// in full shadow; 1 where the map does not reach or the camera has none.
// Four filtered lookups around the point (each weighing four texels)
// soften the edge.
fn key_light_reaching(light: Light, map: texture_depth_2d, compare: sampler_comparison, p: vec3<f32>) -> f32 {
    let strength = light.shadow_info.x;
    let clip = light.shadow * vec4<f32>(p, 1.0);
    let ndc = clip.xyz / clip.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    let outside = any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || ndc.z > 1.0;
    let step = 0.75 / f32(textureDimensions(map).x);
    var reaching = 0.0;
    for (var i = 0u; i < 4u; i++) {
        let offset = vec2<f32>(select(-step, step, (i & 1u) == 1u), select(-step, step, i >= 2u));
        reaching += textureSampleCompareLevel(map, compare, uv + offset, ndc.z - SHADOW_BIAS);
    }
    let shadowed = 1.0 - strength * (1.0 - reaching * 0.25);
    return select(shadowed, 1.0, outside || strength <= 0.0);
}
