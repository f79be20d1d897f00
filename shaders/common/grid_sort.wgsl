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
    let cell = point_cell(points[i]);
    cell_of[i] = vec2<u32>(cell, atomicAdd(&cell_counts[cell], 1u));
}

// The cell point `point` is sorted into. Past the last cell (the slot
// whose start is the total) for a dead point: after every cell's points,
// where no search walks.
fn point_cell(point: vec4<f32>) -> u32 {
    let dead = grid.dead_left_out != 0u & point.w == 0.0;
    return select(grid_index(grid, grid_coords(grid, point.xyz)), grid.cell_total, dead);
}

// Whether point `i` is dead and left out of the cells (1) or not (0):
// the flags whose prefix sum ranks the dead in index order. Entries past
// the last point are 0, so the sum runs over a fixed length.
@group(0) @binding(6) var<storage, read_write> dead_before: array<u32>;

@compute @workgroup_size(256)
fn grid_mark_dead(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_id(global, groups);
    if i >= arrayLength(&dead_before) {
        return;
    }
    var dead = false;
    if i < point_count[0] {
        dead = point_cell(points[i]) == grid.cell_total;
    }
    dead_before[i] = u32(dead);
}

// Each point ranked after the points of its cell with a lower index, so
// the order in a cell, and every sum a search makes in that order, is the
// same on every run (`sylva render`): the ranks grid_count's atomics hand
// out follow the order threads happen to run in. It runs after a first
// scatter by those ranks, and counts the points of the cell's span with a
// lower index (a cell holds a few dozen); a dead point is ranked by the
// dead before it (`dead_before`, summed). One thread a point, each loop
// as long as its cell: a single workgroup walking every point in order
// stopped after 65,535 iterations on lavapipe, which bounds loops so.
@compute @workgroup_size(256)
fn grid_rank_in_order(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_id(global, groups);
    if i >= point_count[0] {
        return;
    }
    let cell = cell_of[i].x;
    if cell == grid.cell_total {
        cell_of[i].y = dead_before[i];
        return;
    }
    let first = atomicLoad(&cell_counts[cell]);
    let end = atomicLoad(&cell_counts[cell + 1u]);
    var rank = 0u;
    for (var j = first; j < end; j++) {
        rank += u32(sorted[j] < i);
    }
    cell_of[i].y = rank;
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
