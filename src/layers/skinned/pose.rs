//! From local transforms to what the GPU skins with: every node's world
//! transform, every joint's skin transform (world x inverse bind), and
//! that transform as a bone: a quaternion, a translation
//! and a uniform scale, or, where the scale is not uniform, a matrix.
//! Also the CPU reference of linear blend skinning, as the glTF
//! specification defines it, that the GPU path is tested against.

use bytemuck::{Pod, Zeroable};
use glam::{Mat3, Mat4, Quat, Vec3};

use super::model::{Model, Trs, Vertex};

/// One bone on the GPU (`struct Bone` in `shaders/skinned/bones.wgsl`):
/// rotation, translation and uniform scale; a scale of 0 means the
/// transform is not a similarity and the matrix at the same index is used.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct Bone {
    /// Unit quaternion, xyzw.
    pub rotation: [f32; 4],
    /// Translation.
    pub translation: [f32; 3],
    /// Uniform scale; 0: use the matrix.
    pub scale: f32,
}

/// How far from uniform a scale may be and still be a bone's one number,
/// relative to the scale.
const UNIFORM_TOLERANCE: f32 = 1e-4;

/// World transforms of every node for the local transforms `local`: one
/// pass in the model's hierarchy order (parents first), found at load.
pub fn world(model: &Model, local: &[Trs]) -> Vec<Mat4> {
    let mut world = vec![Mat4::IDENTITY; model.nodes.len()];
    for &node in &model.order {
        let parent = model.nodes[node]
            .parent
            .map_or(Mat4::IDENTITY, |p| world[p]);
        world[node] = parent * local.get(node).map_or(Mat4::IDENTITY, Trs::matrix);
    }
    world
}

/// Each joint's skin transform: its node's world transform times its
/// inverse bind matrix.
pub fn skin_matrices(model: &Model, local: &[Trs]) -> Vec<Mat4> {
    let world = world(model, local);
    model
        .joints
        .iter()
        .map(|j| world[j.node] * j.inverse_bind)
        .collect()
}

/// The bone for a skin transform: quaternion, translation and uniform
/// scale when the matrix is a similarity, else a zero scale (the matrix is
/// used).
pub fn bone(matrix: &Mat4) -> Bone {
    let linear = Mat3::from_mat4(*matrix);
    let translation = matrix.w_axis.truncate().to_array();
    let columns = [linear.x_axis, linear.y_axis, linear.z_axis];
    let lengths = columns.map(Vec3::length);
    let scale = (lengths[0] + lengths[1] + lengths[2]) / 3.0;
    let tolerance = UNIFORM_TOLERANCE * scale.max(1e-12);
    let uniform = lengths.iter().all(|l| (l - scale).abs() <= tolerance)
        && columns[0].dot(columns[1]).abs() <= tolerance * scale
        && columns[1].dot(columns[2]).abs() <= tolerance * scale
        && columns[0].dot(columns[2]).abs() <= tolerance * scale
        && linear.determinant() > 0.0;
    if !uniform || scale <= 0.0 {
        return Bone {
            rotation: [0.0, 0.0, 0.0, 1.0],
            translation,
            scale: 0.0,
        };
    }
    let rotation = Quat::from_mat3(&(linear * (1.0 / scale))).normalize();
    Bone {
        rotation: rotation.to_array(),
        translation,
        scale,
    }
}

/// Linear blend skinning on the CPU: `sum of w_i * S_i * v` for position
/// and normal, with the skin transforms `skin`.
pub fn skin_vertex(vertex: &Vertex, skin: &[Mat4]) -> (Vec3, Vec3) {
    let mut blended = Mat4::ZERO;
    for k in 0..4 {
        if vertex.weights[k] != 0.0 {
            blended += skin[vertex.joints[k] as usize] * vertex.weights[k];
        }
    }
    let position = blended.transform_point3(vertex.position);
    let normal = Mat3::from_mat4(blended)
        .inverse()
        .transpose()
        .mul_vec3(vertex.normal)
        .normalize_or(Vec3::Y);
    (position, normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarities_become_quaternions_and_others_matrices() {
        let m = Mat4::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_z(0.7),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let b = bone(&m);
        assert!((b.scale - 2.0).abs() < 1e-5);
        let back = Mat4::from_scale_rotation_translation(
            Vec3::splat(b.scale),
            Quat::from_array(b.rotation),
            Vec3::from(b.translation),
        );
        assert!(back.abs_diff_eq(m, 1e-5));
        let stretched = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0));
        assert_eq!(
            bone(&stretched).scale,
            0.0,
            "non-uniform scale needs the matrix"
        );
        let mirrored = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0));
        assert_eq!(bone(&mirrored).scale, 0.0, "a mirror is not a rotation");
    }
}
