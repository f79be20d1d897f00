//! The `Bodies` block (`shaders/common/world.wgsl`): the world's capsules
//! (scene metres, the ground at 0) moved into a layer's own frame — the
//! fluid's tank, whose floor's centre stands at `fluid.scene_offset` in the
//! scene, for its integrate stage; the scene itself for a shader layer's
//! backdrop, which darkens the ground under them — with, for the water,
//! whether what lands on the floor is counted in the world's rain map.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3};

use super::world::{Capsule, MAX_BRANCHES, MAX_CAPSULES};

/// The head of `struct Bodies` in WGSL; the capsules follow it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct BodiesHeader {
    /// Capsules in use.
    pub count: u32,
    /// Share of the velocity into a body that bounces back.
    pub bounce: f32,
    /// Distance kept from a body's surface.
    pub margin: f32,
    /// Cells along a side of the rain map landings are counted in; 0: none.
    pub rain_side: u32,
    /// Whether the branches the world holds (`World::branches`, scene
    /// frame) are met too.
    pub branches: u32,
    /// Padding to 16 bytes.
    pub _pad: [u32; 3],
    /// From the scene into this block's frame (column-major), for the
    /// branches, which a GPU pass writes in the scene's.
    pub to_frame: [[f32; 4]; 4],
}

/// Bytes of the block: the head and room for every capsule.
pub const BODIES_BYTES: u64 =
    (size_of::<BodiesHeader>() + MAX_CAPSULES * size_of::<Capsule>()) as u64;

/// The block's bytes for `capsules` (scene frame) seen from a tank that
/// `to_scene` places in the scene (its floor centre at the layer's
/// origin, scaled by its `scene_scale`); a flat (2D) tank meets them in
/// its plane, z = 0. `bounce`, `margin` and `rain_side` are the header's
/// (see [`BodiesHeader`]); with `branches` the world's branches are met too.
pub fn block(
    capsules: &[Capsule],
    to_scene: Mat4,
    flat: bool,
    bounce: f32,
    margin: f32,
    rain_side: u32,
    branches: bool,
) -> Vec<u8> {
    let to_tank = to_scene.inverse();
    let shrink = to_tank.x_axis.truncate().length();
    let placed: Vec<Capsule> = capsules
        .iter()
        .take(MAX_CAPSULES)
        .map(|c| {
            let point = |p: &[f32; 4]| to_tank.transform_point3(Vec3::from_slice(&p[..3]));
            let speed = |v: &[f32; 4]| to_tank.transform_vector3(Vec3::from_slice(&v[..3]));
            let mut placed = Capsule {
                a: point(&c.a).extend(c.a[3] * shrink).to_array(),
                b: point(&c.b).extend(0.0).to_array(),
                velocity_a: speed(&c.velocity_a).extend(0.0).to_array(),
                velocity_b: speed(&c.velocity_b).extend(0.0).to_array(),
            };
            if flat {
                placed.a[2] = 0.0;
                placed.b[2] = 0.0;
                placed.velocity_a[2] = 0.0;
                placed.velocity_b[2] = 0.0;
            }
            placed
        })
        .collect();
    let header = BodiesHeader {
        count: placed.len() as u32,
        bounce,
        margin,
        rain_side,
        branches: u32::from(branches),
        _pad: [0; 3],
        to_frame: to_tank.to_cols_array_2d(),
    };
    let mut bytes = bytemuck::bytes_of(&header).to_vec();
    bytes.extend_from_slice(bytemuck::cast_slice(&placed));
    bytes
}

/// The bytes of a `Branches` block holding `capsules` (scene frame; at
/// most [`MAX_BRANCHES`]), as a layer's GPU pass writes it.
pub fn branches_block(capsules: &[Capsule]) -> Vec<u8> {
    let kept = &capsules[..capsules.len().min(MAX_BRANCHES)];
    let head = [kept.len() as u32, 0, 0, 0];
    let mut bytes = bytemuck::cast_slice::<u32, u8>(&head).to_vec();
    bytes.extend_from_slice(bytemuck::cast_slice(kept));
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capsule_at_the_scene_origin_stands_in_the_middle_of_the_tank_floor() {
        let capsule = Capsule::moving(Vec3::ZERO, Vec3::Y, 0.1, None, 0.0);
        let floor_centre = Mat4::from_translation(Vec3::new(-1.0, 0.0, -0.5));
        let bytes = block(&[capsule], floor_centre, false, 0.2, 0.01, 0, true);
        let head = size_of::<BodiesHeader>();
        let header: BodiesHeader = bytemuck::pod_read_unaligned(&bytes[..head]);
        let placed: Capsule = bytemuck::pod_read_unaligned(&bytes[head..head + 64]);
        assert_eq!(header.branches, 1);
        assert_eq!(header.to_frame[3][..3], [1.0, 0.0, 0.5]);
        assert_eq!(header.count, 1);
        assert_eq!(&placed.a[..3], &[1.0, 0.0, 0.5]);
        assert_eq!(&placed.b[..3], &[1.0, 1.0, 0.5]);
        assert_eq!(placed.a[3], 0.1);
    }
}
