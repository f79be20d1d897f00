// The skinned layer's node-position hook, put in place of
// `colony/transform.wgsl`: a node grew in bind pose; it is drawn where the
// bones of the attraction that pulled it (its tag) carry it now.

#include "skinned/bones.wgsl"

@group(0) @binding(11) var<storage, read> attraction_bones: array<AttractionBones>;

fn node_position(node: u32, grown: vec3<f32>) -> vec3<f32> {
    let bound = attraction_bones[info[node].tag];
    return (skin_matrix(bound.joints, bound.weights) * vec4<f32>(grown, 1.0)).xyz;
}
