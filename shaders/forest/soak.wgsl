// Rain that fell on a tank's floor (the world's rain map, which the map of
// this forest spans whole) waters the ground: each pixel of every density
// map gains from the landings counted in the rain cells over it, and,
// with rain on, dries a little every frame, so the forest grows where the
// water fell and thins where it stopped. `dry_up` then clears the map for
// the next frame's landings.

#include "forest/forest.wgsl"

struct Soak {
    // Density a landing adds to the pixels under it.
    wetness: f32,
    // Share of the density lost this frame.
    dry: f32,
    // Cells along a side of the rain map.
    side: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: ForestParams;
@group(0) @binding(4) var<storage, read_write> density: array<f32>;
@group(0) @binding(14) var<uniform> soak: Soak;
@group(0) @binding(15) var<storage, read_write> rain: array<atomic<u32>>;

@compute @workgroup_size(256)
fn soak_rain(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = global.x + global.y * groups.x * 256u;
    let size = params.map_size;
    let area = size * size;
    if p >= area {
        return;
    }
    // The rain cells over this pixel: at least one, more where the map is
    // coarser than the rain.
    let pixel = vec2<u32>(p % size, p / size);
    let first = pixel * soak.side / size;
    let last = max((pixel + 1u) * soak.side / size, first + 1u);
    var drops = 0u;
    for (var y = first.y; y < last.y; y++) {
        for (var x = first.x; x < last.x; x++) {
            drops += atomicLoad(&rain[y * soak.side + x]);
        }
    }
    let wet = f32(drops) * soak.wetness;
    for (var map = 0u; map < params.density_maps; map++) {
        let at = map * area + p;
        density[at] = clamp(density[at] * (1.0 - soak.dry) + wet, 0.0, 1.0);
    }
}

@compute @workgroup_size(256)
fn dry_up(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let cell = global.x + global.y * groups.x * 256u;
    if cell < soak.side * soak.side {
        atomicStore(&rain[cell], 0u);
    }
}
