// The impostors' walk in one pass where the GPU has 64-bit atomics (its
// maximum of them, `SHADER_INT64_ATOMIC_MIN_MAX`): each pixel's two words
// (forest/impostor_splat.wgsl, `owner_word` and `key_word`) read as one,
// the nearest hit's key above the tree that made it, so one atomic
// maximum keeps the nearest leafy hit and its tree together, and the
// second walk that marks the tree is not needed. Where two trees tie,
// the higher slot keeps it, as in the two walks.

#include "forest/impostor_splat.wgsl"

// `per_pixel` seen as one word a pixel.
@group(0) @binding(18) var<storage, read_write> pixel_pairs: array<atomic<u64>>;

@compute @workgroup_size(64)
fn splat_impostor_pairs(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let walk = start_walk(splat_part(group, groups));
    if !walk.shown {
        return;
    }
    let owner = u64(walk.slot + 1u);
    let level = walk_level(walk);
    for (var i = walk.start + local; i < walk.pixels; i += walk.stride) {
        let met = walked_pixel(walk, i);
        if met.inside && leafy(walk, met, level) {
            atomicMax(&pixel_pairs[met.at], (u64(met.key) << 32u) | owner);
        }
    }
}
