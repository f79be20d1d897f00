// Paints the density maps from a picture (a camera, a clip, another
// layer's output: `forest.density_source`): each cell moves towards the
// picture's brightness there by `amount` a frame, so a live picture paints
// where the forest may grow, and a still one settles in.

#include "forest/forest.wgsl"

struct Paint {
    // The first map painted and one past the last.
    first: u32,
    end: u32,
    // How far a cell moves towards the picture each frame (1: at once).
    amount: f32,
    _pad: f32,
}

@group(0) @binding(0) var<uniform> params: ForestParams;
@group(0) @binding(4) var<storage, read_write> density: array<f32>;
@group(0) @binding(14) var<uniform> paint: Paint;
@group(1) @binding(0) var picture: texture_2d<f32>;
@group(1) @binding(1) var picture_sampler: sampler;

@compute @workgroup_size(256)
fn paint_image(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = global.x + global.y * groups.x * 256u;
    let size = params.map_size;
    let area = size * size;
    if p >= area {
        return;
    }
    let uv = (vec2<f32>(f32(p % size), f32(p / size)) + 0.5) / f32(size);
    let colour = textureSampleLevel(picture, picture_sampler, uv, 0.0);
    let bright = clamp(dot(colour.rgb, vec3<f32>(0.2126, 0.7152, 0.0722)), 0.0, 1.0);
    for (var map = paint.first; map < min(paint.end, params.density_maps); map++) {
        let at = map * area + p;
        density[at] = mix(density[at], bright, paint.amount);
    }
}
