// A picture as ISF and Shadertoy files expect to sample it: its values
// display-encoded (sRGB), as every other host hands them its 8-bit
// textures, where sylva keeps linear light. Light above 1 is encoded by
// the same curve, so a file that passes its input through gives the HDR
// back once its output is decoded. The target is the picture's own size.

#include "common/fullscreen.wgsl"
#include "common/srgb.wgsl"

@group(0) @binding(0) var picture: texture_2d<f32>;

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let size = textureDimensions(picture);
    let at = min(vec2<u32>(in.uv * vec2<f32>(size)), size - vec2<u32>(1u));
    let linear = textureLoad(picture, at, 0);
    return vec4<f32>(srgb_encode(linear.rgb), linear.a);
}
