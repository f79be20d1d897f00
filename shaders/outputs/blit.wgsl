// Delivers the engine's finished picture to an output (a window's
// surface), sampled, so an output of another size still shows all of it.

#include "common/fullscreen.wgsl"

@group(0) @binding(0) var picture: texture_2d<f32>;
@group(0) @binding(1) var picture_sampler: sampler;

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    return textureSample(picture, picture_sampler, in.uv);
}
