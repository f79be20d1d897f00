// The colony's first branches as the world's standing capsules (the
// `Branches` block of common/world.wgsl, scene frame), which the water in
// the scene meets. Nodes are made in growth order, so the first after the
// roots are the oldest and thickest: the trunks and limbs near each root.
// At most MAX_BRANCHES, one thread each.

#include "colony/colony.wgsl"
#include "common/world.wgsl"

struct Standing {
    // From the colony's units into the scene.
    model: mat4x4<f32>,
    // Tube radius at the root, colony units.
    thickness: f32,
    _pad0: f32,
    _pad1: f32,
    _pad2: f32,
}

@group(0) @binding(0) var<uniform> standing: Standing;
@group(0) @binding(1) var<storage, read> nodes: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> info: array<NodeInfo>;
@group(0) @binding(3) var<storage, read> state: array<u32>;
@group(0) @binding(4) var<storage, read_write> branches: Branches;

@compute @workgroup_size(64)
fn stand_branches(@builtin(global_invocation_id) global: vec3<u32>) {
    let k = global.x;
    let count = state[NODE_COUNT];
    let roots = min(state[SEED_COUNT], count);
    let grown = min(count - roots, MAX_BRANCHES);
    if k == 0u {
        branches.count = grown;
    }
    if k >= grown {
        return;
    }
    let node = roots + k;
    let parent = u32(max(info[node].parent, 0));
    // As thick as the tubes draw it, as far as it has grown.
    let radius = tube_radius(standing.thickness, info[node].offset, state[MAX_OFFSET]);
    let root_end = nodes[parent].xyz;
    let tip = root_end + (nodes[node].xyz - root_end) * nodes[node].w;
    let a = (standing.model * vec4<f32>(root_end, 1.0)).xyz;
    let b = (standing.model * vec4<f32>(tip, 1.0)).xyz;
    let scale = length(standing.model[0].xyz);
    branches.capsules[k] = Capsule(vec4<f32>(a, radius * scale), vec4<f32>(b, 0.0), vec4<f32>(0.0), vec4<f32>(0.0));
}
