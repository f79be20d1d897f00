// Once a frame, before the substeps: the world's standing branches
// brought into the tank's frame (flat in a 2D tank) and listed in the bins
// their reach overlaps (`BIN_SIDE` in fluid.wgsl), one thread a branch, so
// the integrate stage tests a particle against the few branches near it
// instead of every branch. A branch is listed in the bins of its bounding
// box that its reach comes near (a long slanting branch is not listed all
// over its box). Then `order_bins` puts each bin's branches in the order
// of their index: a particle meets them one after the other, each push
// moving it for the next, so the order the listing threads happened to run
// in would change where the water goes from run to run.

#include "common/world.wgsl"
#include "fluid/fluid.wgsl"

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(11) var<storage, read> bodies: Bodies;
@group(0) @binding(13) var<storage, read> branches: Branches;
@group(0) @binding(16) var<storage, read_write> tank_branches: array<Capsule>;
@group(0) @binding(17) var<storage, read_write> bins: array<atomic<u32>>;

// The box of bins branch `k` (in the tank's frame, `tank_branches`) may
// be listed in: (first, last) inclusive, or first past last when it lies
// outside the tank (else the border bins fill with such branches).
fn bin_span(branch: Capsule) -> array<vec3<u32>, 2> {
    let reach = branch.a.w + bodies.margin;
    let low = min(branch.a.xyz, branch.b.xyz) - reach;
    let high = max(branch.a.xyz, branch.b.xyz) + reach;
    if any(high < vec3<f32>(0.0)) || any(low > params.container) {
        return array<vec3<u32>, 2>(vec3<u32>(1u), vec3<u32>(0u));
    }
    return array<vec3<u32>, 2>(bin_coords(low, params.container), bin_coords(high, params.container));
}

// Whether `branch`'s reach comes near bin `c` (one of its span).
fn reaches_bin(branch: Capsule, c: vec3<u32>) -> bool {
    let size = params.container / f32(BIN_SIDE);
    let near = branch.a.w + bodies.margin + 0.5 * length(size);
    let centre = (vec3<f32>(c) + 0.5) * size;
    let t = along_segment(centre, branch.a.xyz, branch.b.xyz);
    let from_axis = centre - mix(branch.a.xyz, branch.b.xyz, t);
    return dot(from_axis, from_axis) <= near * near;
}

fn branch_count() -> u32 {
    return select(min(branches.count, MAX_BRANCHES), 0u, bodies.branches == 0u);
}

@compute @workgroup_size(64)
fn bin_branches(@builtin(global_invocation_id) global: vec3<u32>) {
    let k = global.x;
    if k >= branch_count() {
        return;
    }
    var branch = capsule_in(bodies.to_frame, branches.capsules[k]);
    branch.a.z = select(branch.a.z, 0.0, params.dimensions == 2u);
    branch.b.z = select(branch.b.z, 0.0, params.dimensions == 2u);
    tank_branches[k] = branch;
    let span = bin_span(branch);
    for (var z = span[0].z; z <= span[1].z; z++) {
        for (var y = span[0].y; y <= span[1].y; y++) {
            for (var x = span[0].x; x <= span[1].x; x++) {
                let c = vec3<u32>(x, y, z);
                if !reaches_bin(branch, c) {
                    continue;
                }
                let bin = bin_index(c);
                let slot = atomicAdd(&bins[bin], 1u);
                if slot < BIN_DEPTH {
                    atomicStore(&bins[BIN_CELLS + bin * BIN_DEPTH + slot], k);
                }
            }
        }
    }
}

// One thread a bin: its branches sorted by index. A bin listed past
// BIN_DEPTH kept whichever came first, so it is filled again from every
// branch, in order, with the first BIN_DEPTH that reach it (rare: the
// bins are small, and it walks all the branches).
@compute @workgroup_size(64)
fn order_bins(@builtin(global_invocation_id) global: vec3<u32>) {
    let bin = global.x;
    if bin >= BIN_CELLS {
        return;
    }
    let count = atomicLoad(&bins[bin]);
    let slots = BIN_CELLS + bin * BIN_DEPTH;
    if count > BIN_DEPTH {
        let c = vec3<u32>(bin % BIN_SIDE, (bin / BIN_SIDE) % BIN_SIDE, bin / (BIN_SIDE * BIN_SIDE));
        var kept = 0u;
        for (var k = 0u; k < branch_count() && kept < BIN_DEPTH; k++) {
            let branch = tank_branches[k];
            let span = bin_span(branch);
            if all(c >= span[0]) && all(c <= span[1]) && reaches_bin(branch, c) {
                atomicStore(&bins[slots + kept], k);
                kept += 1u;
            }
        }
        return;
    }
    for (var i = 1u; i < count; i++) {
        let k = atomicLoad(&bins[slots + i]);
        var j = i;
        while j > 0u && atomicLoad(&bins[slots + j - 1u]) > k {
            atomicStore(&bins[slots + j], atomicLoad(&bins[slots + j - 1u]));
            j -= 1u;
        }
        atomicStore(&bins[slots + j], k);
    }
}
