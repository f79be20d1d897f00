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

var<workgroup> block_cells: array<u32, 256>;
var<workgroup> block_total: u32;

// grid_count with each point ranked after the points of its cell with a
// lower index, so the order in a cell, and every sum a search makes in
// that order, is the same on every run (`sylva render`). The ranks
// grid_count's atomics hand out follow the order threads happen to run
// in. Workgroup 0 walks the points 256 at a time, in order; a point's
// rank is its cell's count so far plus the points of its cell earlier in
// the block. The dispatch is grid_count's (indirect where the plan may
// skip the sort), so the other workgroups only return.
@compute @workgroup_size(256)
fn grid_count_in_order(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    if any(group != vec3<u32>(0u)) {
        return;
    }
    if lane == 0u {
        block_total = point_count[0];
    }
    let total = workgroupUniformLoad(&block_total);
    for (var first = 0u; first < total; first += 256u) {
        let i = first + lane;
        var cell = NO_CELL;
        if i < total {
            cell = point_cell(points[i]);
        }
        block_cells[lane] = cell;
        workgroupBarrier();
        var earlier = 0u;
        var last = true;
        for (var k = 0u; k < 256u; k++) {
            let same = block_cells[k] == cell;
            earlier += u32(same & k < lane);
            last = last & !(same & k > lane);
        }
        var before = 0u;
        if i < total {
            before = atomicLoad(&cell_counts[cell]);
        }
        // Every lane has read its cell's count before the last lane of
        // each cell moves it on, and the block's cells are read before
        // the next block writes them.
        storageBarrier();
        workgroupBarrier();
        if i < total {
            cell_of[i] = vec2<u32>(cell, before + earlier);
            if last {
                atomicStore(&cell_counts[cell], before + earlier + 1u);
            }
        }
        storageBarrier();
    }
}

// No cell: the lanes past the last point.
const NO_CELL: u32 = 0xffffffffu;

@compute @workgroup_size(256)
fn grid_scatter(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = flat_id(global, groups);
    if i >= point_count[0] {
        return;
    }
    let placed = cell_of[i];
    sorted[atomicLoad(&cell_counts[placed.x]) + placed.y] = i;
}
