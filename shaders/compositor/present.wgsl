// The master section's result, toned by compute into a half-float picture
// of the output's size (master.wgsl run over its pixels), copied into an
// output that compute cannot store to (an sRGB texture, a window's
// surface): a pixel a texel, so the rasterizer does no arithmetic.

#include "common/fullscreen.wgsl"

@group(0) @binding(0) var toned: texture_2d<f32>;

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureLoad(toned, vec2<i32>(in.position.xy), 0);
}
