// Bones as sylva keeps them: a quaternion, a translation and a
// uniform scale per joint (half a matrix's memory), with a matrix beside
// each for transforms that are not similarities (scale 0 marks them).
// Each of a vertex's (up to four) bones becomes a matrix and the matrices
// are blended by weight: blending the quaternions themselves would mean
// something else. The buffers hold two frames' bones; `skin.joint_offset`
// picks the half written for this frame.

struct Bone {
    rotation: vec4<f32>,
    translation: vec3<f32>,
    scale: f32,
}

// The bones an attraction (and every node it pulls) rides.
struct AttractionBones {
    joints: vec4<u32>,
    weights: vec4<f32>,
}

struct SkinParams {
    joint_offset: u32,
    joint_count: u32,
    // 1: use the matrices even for similarities (the test of both paths).
    force_matrices: u32,
    vertex_count: u32,
}

@group(0) @binding(8) var<uniform> skin: SkinParams;
@group(0) @binding(9) var<storage, read> bones: array<Bone>;
@group(0) @binding(10) var<storage, read> bone_matrices: array<mat4x4<f32>>;

// The matrix of rotation q, scale s and translation t.
fn quat_matrix(q: vec4<f32>, s: f32, t: vec3<f32>) -> mat4x4<f32> {
    let x2 = q.x + q.x;
    let y2 = q.y + q.y;
    let z2 = q.z + q.z;
    let xx = q.x * x2;
    let yy = q.y * y2;
    let zz = q.z * z2;
    let xy = q.x * y2;
    let xz = q.x * z2;
    let yz = q.y * z2;
    let wx = q.w * x2;
    let wy = q.w * y2;
    let wz = q.w * z2;
    return mat4x4<f32>(
        vec4<f32>(1.0 - (yy + zz), xy + wz, xz - wy, 0.0) * s,
        vec4<f32>(xy - wz, 1.0 - (xx + zz), yz + wx, 0.0) * s,
        vec4<f32>(xz + wy, yz - wx, 1.0 - (xx + yy), 0.0) * s,
        vec4<f32>(t, 1.0),
    );
}

fn bone_matrix(joint: u32) -> mat4x4<f32> {
    let index = skin.joint_offset + min(joint, skin.joint_count - 1u);
    let bone = bones[index];
    if bone.scale == 0.0 || skin.force_matrices != 0u {
        return bone_matrices[index];
    }
    return quat_matrix(bone.rotation, bone.scale, bone.translation);
}

// The weighted sum of up to four bones' matrices.
fn skin_matrix(joints: vec4<u32>, weights: vec4<f32>) -> mat4x4<f32> {
    var m = bone_matrix(joints.x) * weights.x;
    if weights.y != 0.0 {
        m += bone_matrix(joints.y) * weights.y;
    }
    if weights.z != 0.0 {
        m += bone_matrix(joints.z) * weights.z;
    }
    if weights.w != 0.0 {
        m += bone_matrix(joints.w) * weights.w;
    }
    return m;
}

// A normal through the blended matrix: the inverse transpose of its 3x3
// part, as the adjugate (its scale does not matter once normalized).
fn skin_normal(m: mat4x4<f32>, n: vec3<f32>) -> vec3<f32> {
    let a = m[0].xyz;
    let b = m[1].xyz;
    let c = m[2].xyz;
    let adjugate = mat3x3<f32>(cross(b, c), cross(c, a), cross(a, b));
    let normal = adjugate * n;
    let length2 = dot(normal, normal);
    if length2 < 1e-20 {
        return n;
    }
    return normal * inverseSqrt(length2);
}
