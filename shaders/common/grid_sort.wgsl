// Counting sort of points into a uniform grid: count per cell, each point
// keeping its rank among its cell's (the count's atomic add returns it),
// exclusive prefix sum (prefix_sum.wgsl, over cell_total + 1 entries so
// the last one is the total), then scatter each point's index to its
// cell's start plus its rank (no second atomic, and only the counts to
// clear, so the whole sort is dispatches in one pass, no copy between
// them). After it, cell c holds sorted[starts[c] .. starts[c + 1]] (dead
// points, where the grid leaves them out, follow the last cell). The
// number of points lives on the GPU (point_count[0]); dispatches come
// from it.

#include "common/grid.wgsl"

@group(0) @binding(0) var<uniform> grid: Grid;
@group(0) @binding(1) var<storage, read> points: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> point_count: array<u32>;
// Each point's cell and its rank there.
@group(0) @binding(3) var<storage, read_write> cell_of: array<vec2<u32>>;
// Counts per cell, then (the prefix sum run over them) each cell's start.
@group(0) @binding(4) var<storage, read_write> cell_counts: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> sorted: array<u32>;

fn flat_id(global: vec3<u32>, groups: vec3<u32>) -> u32 {
    return global.x + global.y * groups.x * 256u;
}

@compute @workgroup_size(256)
fn grid_clear(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let cell = flat_id(global, groups);
    if cell <= grid.cell_total {
        atomicStore(&cell_counts[cell], 0u);
    }
}

@compute @workgroup_size(256)
fn grid_count(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_id(global, groups);
    if i >= point_count[0] {
        return;
    }
    let point = points[i];
    // Past the last cell (the slot whose start is the total): after every
    // cell's points, where no search walks.
    let dead = grid.dead_left_out != 0u & point.w == 0.0;
    let cell = select(grid_index(grid, grid_coords(grid, point.xyz)), grid.cell_total, dead);
    cell_of[i] = vec2<u32>(cell, atomicAdd(&cell_counts[cell], 1u));
}

@compute @workgroup_size(256)
fn grid_scatter(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_id(global, groups);
    if i >= point_count[0] {
        return;
    }
    let placed = cell_of[i];
    sorted[atomicLoad(&cell_counts[placed.x]) + placed.y] = i;
}
