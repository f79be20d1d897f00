// One growth iteration of space colonization on the GPU:
// search (and remove), attract, allocate by prefix sum, connect, finalize,
// grow. Node counts never leave the GPU: finalize writes the dispatch and
// draw arguments the next passes use.

#include "colony/colony.wgsl"
#include "common/grid.wgsl"

@group(0) @binding(0) var<uniform> params: ColonyParams;
@group(0) @binding(1) var<uniform> grid: Grid;
@group(0) @binding(2) var<storage, read_write> attractors: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> nodes: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> info: array<NodeInfo>;
@group(0) @binding(5) var<storage, read_write> accum: array<atomic<i32>>;
@group(0) @binding(6) var<storage, read_write> candidates: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> grow_scan: array<u32>;
@group(0) @binding(8) var<storage, read_write> edges: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(10) var<storage, read_write> args: array<u32>;
@group(0) @binding(11) var<storage, read> grid_starts: array<u32>;
@group(0) @binding(12) var<storage, read> grid_sorted: array<u32>;
@group(0) @binding(13) var<storage, read_write> last_pull: array<vec4<i32>>;
// Per node, the lowest index of the attractions pulling it this iteration,
// stored inverted (~index) so zero means none and atomicMax keeps the
// lowest whatever the thread order.
@group(0) @binding(14) var<storage, read_write> pulled_by: array<atomic<u32>>;
// Attractions are kept along a space-filling curve (src/layers/colony/order.rs):
// for each slot, the index it was given under, which ties and tags use.
@group(0) @binding(15) var<storage, read> attraction_index: array<u32>;
// Node positions in grid order, their index in w (as u32: float bits of a
// small integer are a denormal some compilers flush).
@group(0) @binding(16) var<storage, read_write> sorted_nodes: array<vec4<u32>>;

fn thread_index(global: vec3<u32>, groups: vec3<u32>) -> u32 {
    return global.x + global.y * groups.x * 256u;
}

// The nodes copied into grid order beside their indices (xyz as float
// bits, the index in w), so the search reads each cell's nodes from one
// run of memory.
@compute @workgroup_size(256)
fn gather_nodes(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = thread_index(global, groups);
    if s >= atomicLoad(&state[NODE_COUNT]) {
        return;
    }
    let j = grid_sorted[s];
    sorted_nodes[s] = vec4<u32>(bitcast<vec3<u32>>(nodes[j].xyz), j);
}

// Row and slab offsets nearest first, so the nearest node found early cuts
// the rows after it short.
const NEAR_FIRST = array<i32, 5>(0, -1, 1, -2, 2);

// For each active attraction: the nearest node within the influence
// distance (ties go to the lower index), searched in cells half the
// influence wide: the five slabs of 5 x 5 cells around it (one pair of
// starts tells the five hold no node at all, another pair a slab: far from
// the growth, as all are at first, an attraction reads two to ten words,
// not fifty), each slab's rows cut to the sphere of the nearest node so
// far. Within the kill
// distance the attraction is removed; otherwise its unit direction is
// added to that node's sum.
@compute @workgroup_size(256)
fn search(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(global, groups);
    if i >= params.attraction_count || attractors[i].w == 0.0 {
        return;
    }
    let a = attractors[i].xyz;
    let home = grid_coords(grid, a);
    var best = -1;
    var best_d2 = params.influence * params.influence;
    var cells: array<u32, 2>;
    let top = vec3<i32>(grid.dims) - 1;
    // Nothing at all between the block's first and last cell (whole slabs
    // of the grid apart): no slab to look into.
    let nearest = grid_index(grid, max(home - REACH, vec3<i32>(0)));
    let farthest = grid_index(grid, min(home + REACH, top));
    if grid_starts[nearest] == grid_starts[farthest + 1u] {
        return;
    }
    for (var kz = 0u; kz < 5u; kz++) {
        let z = home.z + NEAR_FIRST[kz];
        let low = grid.origin.z + f32(z) * grid.cell_size;
        let off = max(max(low - a.z, a.z - (low + grid.cell_size)), 0.0);
        if z < 0 || z > top.z || off * off >= best_d2 * 1.0001 {
            continue;
        }
        let first = grid_index(grid, vec3<i32>(max(home.xy - REACH, vec2<i32>(0)), z));
        let last = grid_index(grid, vec3<i32>(min(home.xy + REACH, top.xy), z));
        if grid_starts[first] == grid_starts[last + 1u] {
            continue;
        }
        for (var ky = 0u; ky < 5u; ky++) {
            let r = u32(NEAR_FIRST[ky] + REACH) + 5u * u32(NEAR_FIRST[kz] + REACH);
            row_span(grid, &cells, a, home, r, best_d2);
            for (var s = grid_starts[cells[0]]; s < grid_starts[cells[1]]; s++) {
                let node = sorted_nodes[s];
                let j = i32(node.w);
                let d = bitcast<vec3<f32>>(node.xyz) - a;
                let d2 = dot(d, d);
                if d2 < best_d2 || (d2 == best_d2 && best >= 0 && j < best) {
                    best = j;
                    best_d2 = d2;
                }
            }
        }
    }
    if best < 0 {
        return;
    }
    if best_d2 < params.kill * params.kill {
        attractors[i].w = 0.0;
        return;
    }
    let v = a - nodes[best].xyz;
    let direction = v / sqrt(dot(v, v));
    let fixed = vec3<i32>(round(direction * FIXED));
    atomicAdd(&accum[4 * best], fixed.x);
    atomicAdd(&accum[4 * best + 1], fixed.y);
    atomicAdd(&accum[4 * best + 2], fixed.z);
    atomicAdd(&accum[4 * best + 3], 1);
    atomicMax(&pulled_by[best], ~attraction_index[i]);
}

// For each grown node (t = 1) that attractions chose: a candidate one
// growth distance along the mean direction. Sums are cleared for the next
// iteration; grow_scan gets a 1 to be prefix-summed into slots. A node
// pulled by exactly the same attractions as when it last grew is stuck (its
// child took none of them: they pull it sideways) and does not grow the
// same child again; without this the classic algorithm grows duplicates
// forever.
@compute @workgroup_size(256)
fn attract(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(global, groups);
    if i >= atomicLoad(&state[NODE_COUNT]) {
        return;
    }
    let pull = vec4<i32>(
        atomicExchange(&accum[4u * i], 0),
        atomicExchange(&accum[4u * i + 1u], 0),
        atomicExchange(&accum[4u * i + 2u], 0),
        atomicExchange(&accum[4u * i + 3u], 0),
    );
    let sum = vec3<f32>(pull.xyz) / FIXED;
    let length2 = dot(sum, sum);
    candidates[i] = vec4<f32>(0.0);
    if pull.w > 0 && nodes[i].w >= 1.0 && length2 > 1e-12 && any(pull != last_pull[i]) {
        last_pull[i] = pull;
        candidates[i] = vec4<f32>(nodes[i].xyz + sum / sqrt(length2) * params.growth, 1.0);
        grow_scan[i] = 1u;
    }
}

// Each candidate takes the slot its prefix sum gives it (so the result does
// not depend on thread order), while the pool lasts; its edge is appended.
@compute @workgroup_size(256)
fn connect(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(global, groups);
    let count = atomicLoad(&state[NODE_COUNT]);
    if i >= count || candidates[i].w == 0.0 {
        return;
    }
    let slot = count + grow_scan[i];
    let edge = atomicLoad(&state[EDGE_COUNT]) + grow_scan[i];
    if slot >= params.capacity || edge >= params.edge_capacity {
        return;
    }
    let t = random01(params.seed, slot);
    nodes[slot] = vec4<f32>(candidates[i].xyz, 0.0);
    let tag = ~atomicLoad(&pulled_by[i]);
    info[slot] = NodeInfo(info[i].offset + 1u, params.mass_min + (params.mass_max - params.mass_min) * t, i32(i), tag);
    edges[edge] = vec2<u32>(i, slot);
    atomicMax(&state[MAX_OFFSET], info[i].offset + 1u);
}

// One thread: the new counts, and the dispatch and draw sizes from them.
@compute @workgroup_size(1)
fn finalize() {
    let count = atomicLoad(&state[NODE_COUNT]);
    let last = params.capacity - 1u;
    var grown = grow_scan[last];
    if candidates[last].w != 0.0 && last < count {
        grown += 1u;
    }
    let added = min(grown, params.capacity - count);
    let edges_added = min(added, params.edge_capacity - atomicLoad(&state[EDGE_COUNT]));
    let next = count + edges_added;
    atomicStore(&state[NODE_COUNT], next);
    atomicAdd(&state[EDGE_COUNT], edges_added);
    args[ARGS_NODES] = (next + 255u) / 256u;
    args[ARGS_TUBES + 1u] = next;
}

// Every node grows toward t = 1 at its own mass; who pulled it is
// forgotten for the next iteration.
@compute @workgroup_size(256)
fn grow(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = thread_index(global, groups);
    if i >= atomicLoad(&state[NODE_COUNT]) {
        return;
    }
    atomicStore(&pulled_by[i], 0u);
    nodes[i].w = min(1.0, nodes[i].w + params.grow_step * info[i].mass);
}
