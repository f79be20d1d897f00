// Once a frame, before the substeps: the world's standing branches
// brought into the tank's frame (flat in a 2D tank) and listed in the bins
// their reach overlaps (`BIN_SIDE` in fluid.wgsl), one thread a branch, so
// the integrate stage tests a particle against the few branches near it
// instead of every branch. A branch is listed in the bins of its bounding
// box that its reach comes near (a long slanting branch is not listed all
// over its box); a bin's slots past BIN_DEPTH are dropped.

#include "common/world.wgsl"
#include "fluid/fluid.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(11) var<storage, read> bodies: Bodies;
@group(0) @binding(13) var<storage, read> branches: Branches;
@group(0) @binding(16) var<storage, read_write> tank_branches: array<Capsule>;
@group(0) @binding(17) var<storage, read_write> bins: array<atomic<u32>>;

@compute @workgroup_size(64)
fn bin_branches(@builtin(global_invocation_id) global: vec3<u32>) {
    let k = global.x;
    if bodies.branches == 0u || k >= min(branches.count, MAX_BRANCHES) {
        return;
    }
    var branch = capsule_in(bodies.to_frame, branches.capsules[k]);
    branch.a.z = select(branch.a.z, 0.0, params.dimensions == 2u);
    branch.b.z = select(branch.b.z, 0.0, params.dimensions == 2u);
    tank_branches[k] = branch;
    let reach = branch.a.w + bodies.margin;
    let low = min(branch.a.xyz, branch.b.xyz) - reach;
    let high = max(branch.a.xyz, branch.b.xyz) + reach;
    // Outside the tank: in no bin (else the border bins fill with them).
    if any(high < vec3<f32>(0.0)) || any(low > params.container) {
        return;
    }
    let first = bin_coords(low, params.container);
    let last = bin_coords(high, params.container);
    let size = params.container / f32(BIN_SIDE);
    let near = reach + 0.5 * length(size);
    for (var z = first.z; z <= last.z; z++) {
        for (var y = first.y; y <= last.y; y++) {
            for (var x = first.x; x <= last.x; x++) {
                let centre = (vec3<f32>(f32(x), f32(y), f32(z)) + 0.5) * size;
                let t = along_segment(centre, branch.a.xyz, branch.b.xyz);
                let from_axis = centre - mix(branch.a.xyz, branch.b.xyz, t);
                if dot(from_axis, from_axis) > near * near {
                    continue;
                }
                let bin = bin_index(vec3<u32>(x, y, z));
                let slot = atomicAdd(&bins[bin], 1u);
                if slot < BIN_DEPTH {
                    atomicStore(&bins[BIN_CELLS + bin * BIN_DEPTH + slot], k);
                }
            }
        }
    }
}
