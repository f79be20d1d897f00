// One step of the forest on the GPU, with no readback:
// cones drawn into the space maps (the tallest owns a pixel), V and Vmax
// summed in fixed point, R = V / Vmax deciding growth and death, seeds
// scattered into dead slots or appended, counts and dispatch sizes
// written for the next step. Seeds and deaths are placed by prefix sums,
// so a step does not depend on thread order.

#include "forest/forest.wgsl"

@group(0) @binding(0) var<uniform> params: ForestParams;
@group(0) @binding(1) var<uniform> species: array<Species, 8>;
@group(0) @binding(2) var<storage, read_write> trees: array<Tree>;
@group(0) @binding(3) var<storage, read_write> maps: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> density: array<f32>;
@group(0) @binding(5) var<storage, read_write> owned: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> covered: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> seed_scan: array<u32>;
@group(0) @binding(8) var<storage, read_write> dead_scan: array<u32>;
@group(0) @binding(9) var<storage, read_write> dead_list: array<u32>;
@group(0) @binding(10) var<storage, read_write> state: array<u32>;
@group(0) @binding(11) var<storage, read_write> args: array<u32>;
@group(0) @binding(12) var<storage, read_write> live_scan: array<u32>;
@group(0) @binding(13) var<storage, read_write> draw_list: array<u32>;

fn tree_index(global: vec3<u32>, groups: vec3<u32>) -> u32 {
    return global.x + global.y * groups.x * 256u;
}

// The density wanted at pixel `pixel` of slice `k`.
fn density_at(k: u32, pixel: u32) -> f32 {
    let map = min(k / max(params.slices_per_map, 1u), params.density_maps - 1u);
    return density[map * params.map_size * params.map_size + pixel];
}

// One thread per tree and slice (z = slice): the cone's cross-section,
// no anti-aliasing, into the slice; the pixels it covers make Vmax.
@compute @workgroup_size(256)
fn draw(@builtin(global_invocation_id) global: vec3<u32>) {
    let i = global.x;
    let k = global.z;
    if i >= state[COUNT] || k >= params.slices {
        return;
    }
    let tree = trees[i];
    if tree.alive == 0u {
        return;
    }
    let r = slice_radius(params, tree, species[tree.species].tan_spread, k);
    if r <= 0.0 {
        return;
    }
    let size = i32(params.map_size);
    let centre = tree.position / params.metres_per_pixel;
    let lo = max(vec2<i32>(floor(centre - r)), vec2<i32>(0));
    let hi = min(vec2<i32>(floor(centre + r)), vec2<i32>(size - 1));
    let owner = packed_owner(params, tree, i);
    let base = k * params.map_size * params.map_size;
    var pixels = 0u;
    for (var y = lo.y; y <= hi.y; y++) {
        for (var x = lo.x; x <= hi.x; x++) {
            let d = vec2<f32>(f32(x) + 0.5, f32(y) + 0.5) - centre;
            if d.x * d.x + d.y * d.y <= r * r {
                atomicMax(&maps[base + u32(y * size + x)], owner);
                pixels += 1u;
            }
        }
    }
    atomicAdd(&covered[i], pixels);
}

// One thread per pixel of every slice: its owner gains the density wanted
// there.
@compute @workgroup_size(256)
fn measure(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let p = global.x + global.y * groups.x * 256u;
    let area = params.map_size * params.map_size;
    if p >= area * params.slices {
        return;
    }
    let owner = atomicLoad(&maps[p]) & ID_MASK;
    if owner == 0u {
        return;
    }
    let w = density_at(p / area, p % area);
    atomicAdd(&owned[owner - 1u], u32(round(clamp(w, 0.0, 1.0) * DENSITY_ONE)));
}

// Per tree: R = V / Vmax (a seedling below the first slice takes the
// ground's density, or nothing in another's shade), death below r1, growth from r2, seeds once tall
// enough; sums cleared for the next step; seed and dead-slot flags for
// the prefix sums.
@compute @workgroup_size(256)
fn update(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = tree_index(global, groups);
    if i >= state[COUNT] {
        return;
    }
    var tree = trees[i];
    let v = f32(atomicExchange(&owned[i], 0u)) / DENSITY_ONE;
    let vmax = f32(atomicExchange(&covered[i], 0u));
    seed_scan[i] = 0u;
    dead_scan[i] = 0u;
    tree.seeds = 0u;
    if tree.alive == 0u {
        dead_scan[i] = 1u;
        trees[i] = tree;
        return;
    }
    let kind = species[tree.species];
    let size = params.map_size;
    let pixel = vec2<u32>(clamp(tree.position / params.metres_per_pixel, vec2<f32>(0.0), vec2<f32>(f32(size - 1u))));
    // A seedling below the first slice gets the ground's density, unless
    // another tree's cone shades its pixel there.
    let ground = pixel.y * size + pixel.x;
    var r = select(density[ground], 0.0, (atomicLoad(&maps[ground]) & ID_MASK) != 0u);
    if vmax > 0.0 {
        r = v / vmax;
    }
    tree.vitality = r;
    tree.age += params.dt;
    if r < params.r1 {
        tree.alive = 0u;
        dead_scan[i] = 1u;
        trees[i] = tree;
        return;
    }
    if r >= params.r2 {
        tree.height = min(kind.max_height, tree.height + kind.growth * r * params.dt);
    }
    if tree.height >= kind.seed_height {
        let expected = kind.seed_rate * params.dt;
        tree.seeds = min(u32(floor(expected + random01(params.seed ^ (state[STEP] * 2654435761u), i))), 8u);
        seed_scan[i] = tree.seeds;
    }
    trees[i] = tree;
}

// One thread: totals from the scans (exclusive: the last element's own
// value is added), the new count.
@compute @workgroup_size(1)
fn tally() {
    let last = params.capacity - 1u;
    let count = state[COUNT];
    var seeds = seed_scan[last];
    var dead = dead_scan[last];
    if last < count {
        seeds += trees[last].seeds;
        dead += select(0u, 1u, trees[last].alive == 0u);
    }
    let appended = min(max(seeds, dead) - dead, params.capacity - count);
    state[COUNT_BEFORE] = count;
    state[BIRTHS] = seeds;
    state[DEAD] = dead;
    state[COUNT] = count + appended;
}

// Dead slots listed in index order.
@compute @workgroup_size(256)
fn list_dead(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = tree_index(global, groups);
    if i >= state[COUNT_BEFORE] || trees[i].alive != 0u {
        return;
    }
    dead_list[dead_scan[i]] = i;
}

// Each seed takes the dead slot its prefix sum names, or a new one past
// the old count: a seedling of its parent's species, thrown a distance
// proportional to the parent's height.
@compute @workgroup_size(256)
fn sow(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = tree_index(global, groups);
    if i >= state[COUNT_BEFORE] {
        return;
    }
    let parent = trees[i];
    if parent.seeds == 0u {
        return;
    }
    let extent = f32(params.map_size) * params.metres_per_pixel;
    for (var s = 0u; s < parent.seeds; s++) {
        let b = seed_scan[i] + s;
        var slot = 0u;
        if b < state[DEAD] {
            slot = dead_list[b];
        } else {
            slot = state[COUNT_BEFORE] + (b - state[DEAD]);
        }
        if slot >= state[COUNT] {
            continue;
        }
        let key = params.seed ^ (state[STEP] * 2246822519u) ^ (b * 3266489917u);
        let angle = 6.2831853 * random01(key, 1u);
        let distance = species[parent.species].dispersal * parent.height * (0.25 + random01(key, 2u));
        let position = clamp(parent.position + vec2<f32>(cos(angle), sin(angle)) * distance, vec2<f32>(0.0), vec2<f32>(extent - 0.001));
        trees[slot] = Tree(position, 0.1, parent.species, 0.0, 1.0, 1u, 0u);
    }
}

// One thread: live trees counted, dispatch sizes for the next step.
@compute @workgroup_size(1)
fn finish() {
    let count = state[COUNT];
    let sown = min(state[BIRTHS], count - min(count, state[COUNT_BEFORE]) + state[DEAD]);
    state[ALIVE] = state[COUNT_BEFORE] - state[DEAD] + sown;
    state[STEP] += 1u;
    // The draw pass: x trees, z slices; per tree: x groups of 256.
    args[0] = (count + 255u) / 256u;
    args[1] = 1u;
    args[2] = params.slices;
    args[3] = (count + 255u) / 256u;
    args[4] = 1u;
    args[5] = 1u;
}

// Live slots flagged for the prefix sum that lists them for drawing.
@compute @workgroup_size(256)
fn mark_live(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = tree_index(global, groups);
    if i >= state[COUNT] {
        return;
    }
    live_scan[i] = trees[i].alive;
}

// The live trees' slots, in slot order: what the drawing instances.
@compute @workgroup_size(256)
fn list_live(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = tree_index(global, groups);
    if i >= state[COUNT] || trees[i].alive == 0u {
        return;
    }
    draw_list[live_scan[i]] = i;
}
