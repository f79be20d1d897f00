// SPH stage 1: copy the particles into grid order (set A to set B), so
// each cell's particles are contiguous for the neighbour walks.

#include "fluid/substep.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(2) var<storage, read> position_a: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocity_a: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> position_b: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> velocity_b: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> grid_sorted: array<u32>;
// Substeps so far: counted here, read by the integrate stage's random draws.
@group(0) @binding(10) var<storage, read_write> substeps: array<u32>;

@compute @workgroup_size(256)
fn reorder(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let s = particle(global, groups);
    if s == 0u {
        substeps[0] += 1u;
    }
    if s >= params.count {
        return;
    }
    let i = grid_sorted[s];
    position_b[s] = position_a[i];
    velocity_b[s] = velocity_a[i];
}

