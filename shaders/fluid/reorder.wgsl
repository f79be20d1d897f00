// SPH stage 1: the grid sort's scatter for the fluid (common/grid_sort.wgsl
// counts and ranks the particles in their cells), which moves each
// particle from set A into its slot of set B as it places it: each cell's
// particles are then contiguous for the neighbour walks, in one pass
// instead of the sort's scatter and a copy in the order it wrote. A
// substep that reuses the lists (`ListPlan`) sorts nothing: each particle
// keeps its slot, as the lists name it.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(2) var<storage, read> position_a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocity_a: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> velocity_b: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> grid_starts: array<u32>;
// Each slot's particle in set A (the tests map forces back through it).
@group(0) @binding(9) var<storage, read_write> grid_sorted: array<u32>;
// Substeps so far: counted here, read by the integrate stage's random draws.
@group(0) @binding(10) var<storage, read_write> substeps: array<u32>;
// Each particle's cell and rank there (`cell_of` of the grid sort).
@group(0) @binding(19) var<storage, read> grid_cell_of: array<vec2<u32>>;
// Where each particle is as the lists are built, for the integrate step's
// test of how far it has moved since.
@group(0) @binding(20) var<storage, read_write> anchor: array<vec4<f32>>;
@group(0) @binding(21) var<storage, read> plan: ListPlan;

@compute @workgroup_size(256)
fn reorder(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = particle(global, groups);
    if i == 0u {
        substeps[0] += 1u;
    }
    if i >= params.count {
        return;
    }
    let position = position_a[i];
    var slot = i;
    if plan.rebuild != 0u {
        let placed = grid_cell_of[i];
        slot = grid_starts[placed.x] + placed.y;
        anchor[slot] = position;
    }
    grid_sorted[slot] = i;
    position_b[slot] = position;
    velocity_b[slot] = velocity_a[i];
}
