// The forest's floor and sky (`backdrop` in forest/draw.wgsl) stored to
// every pixel of its target by compute, before its trees draw over them
// (src/layers/forest/draw.rs).

#include "forest/draw.wgsl"
#include "common/screen.wgsl"

@group(2) @binding(0) var backdrop_target: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(64)
fn backdrop_pixels(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let size = textureDimensions(backdrop_target);
    let pixel = thread_pixel(global, groups, size);
    if pixel.x < 0 {
        return;
    }
    let uv = (vec2<f32>(pixel) + 0.5) / vec2<f32>(size);
    textureStore(backdrop_target, pixel, backdrop(uv));
}
