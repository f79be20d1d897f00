// Skins every vertex of the character once a frame: its bind-pose
// position and normal through the blend of its bones' matrices. The
// result feeds the drawing and `sylva asset --obj`.

#include "skinned/bones.wgsl"

struct BindVertex {
    position: vec3<f32>,
    // Joints 0 and 1 as two 16-bit halves.
    joints_01: u32,
    normal: vec3<f32>,
    // Joints 2 and 3.
    joints_23: u32,
    weights: vec4<f32>,
}

struct SkinnedVertex {
    position: vec4<f32>,
    normal: vec4<f32>,
}

@group(0) @binding(0) var<storage, read> bind_pose: array<BindVertex>;
@group(0) @binding(1) var<storage, read_write> skinned: array<SkinnedVertex>;

@compute @workgroup_size(256)
fn skin_vertices(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = global.x + global.y * groups.x * 256u;
    if i >= skin.vertex_count {
        return;
    }
    let v = bind_pose[i];
    let joints = vec4<u32>(v.joints_01 & 0xffffu, v.joints_01 >> 16u, v.joints_23 & 0xffffu, v.joints_23 >> 16u);
    let m = skin_matrix(joints, v.weights);
    skinned[i] = SkinnedVertex(m * vec4<f32>(v.position, 1.0), vec4<f32>(skin_normal(m, v.normal), 0.0));
}
