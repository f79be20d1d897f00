//! The character's body as capsules for the world (`engine::world`), so
//! the water meets the moving figure: one capsule a joint that has skin,
//! from the joint to the middle of the joints below it (at a tip, to its
//! skin's centre, the round end covering the rest), as thick as most of that skin lies from the
//! axis. Found once from the bind pose; each frame the skin matrices pose
//! it, as they pose the vertices.

use glam::{Mat4, Vec3};

use super::model::Model;
use crate::engine::world::MAX_CAPSULES;

/// Share of a joint's skin inside its capsule: most of it, so the water
/// touches the body rather than a bone inside it, but not a stray vertex.
const SKIN_INSIDE: f32 = 0.75;

/// One capsule in bind pose, moved by joint `joint`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyCapsule {
    /// The joint (an index into [`Model::joints`]) whose matrix poses it.
    pub joint: usize,
    /// One end, bind space.
    pub a: Vec3,
    /// The other end, bind space.
    pub b: Vec3,
    /// Radius, model units.
    pub radius: f32,
}

/// The capsules of `model`'s skin, at most [`MAX_CAPSULES`] (the
/// joints with the most skin first).
pub fn body_capsules(model: &Model) -> Vec<BodyCapsule> {
    let bind: Vec<Vec3> = model
        .joints
        .iter()
        .map(|j| j.inverse_bind.inverse().w_axis.truncate())
        .collect();
    let mut skin: Vec<Vec<Vec3>> = vec![Vec::new(); model.joints.len()];
    for vertex in &model.vertices {
        let strongest = (0..4).max_by(|&a, &b| vertex.weights[a].total_cmp(&vertex.weights[b]));
        if let Some(joint) = strongest.and_then(|k| skin.get_mut(vertex.joints[k] as usize)) {
            joint.push(vertex.position);
        }
    }
    let mut capsules: Vec<(usize, BodyCapsule)> = Vec::new();
    for (joint, points) in skin.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let node = model.joints[joint].node;
        let below: Vec<Vec3> = model
            .joints
            .iter()
            .enumerate()
            .filter(|(_, j)| model.nodes.get(j.node).and_then(|n| n.parent) == Some(node))
            .map(|(k, _)| bind[k])
            .collect();
        let a = bind[joint];
        let b = if below.is_empty() {
            points.iter().copied().sum::<Vec3>() / points.len() as f32
        } else {
            below.iter().copied().sum::<Vec3>() / below.len() as f32
        };
        let mut distances: Vec<f32> = points.iter().map(|&p| to_segment(p, a, b)).collect();
        distances.sort_by(f32::total_cmp);
        let at = ((distances.len() - 1) as f32 * SKIN_INSIDE) as usize;
        let radius = distances[at];
        if radius > 0.0 && radius.is_finite() {
            capsules.push((
                points.len(),
                BodyCapsule {
                    joint,
                    a,
                    b,
                    radius,
                },
            ));
        }
    }
    capsules.sort_by_key(|c| std::cmp::Reverse(c.0));
    capsules
        .into_iter()
        .take(MAX_CAPSULES)
        .map(|(_, c)| c)
        .collect()
}

/// Each capsule's ends posed by this frame's skin matrices and placed in
/// the scene by `model` (its scale sizes the radius too).
pub fn posed(capsules: &[BodyCapsule], skin: &[Mat4], model: Mat4) -> Vec<(Vec3, Vec3, f32)> {
    let scale = model.x_axis.truncate().length();
    capsules
        .iter()
        .filter_map(|c| {
            let m = model * *skin.get(c.joint)?;
            Some((
                m.transform_point3(c.a),
                m.transform_point3(c.b),
                c.radius * scale,
            ))
        })
        .collect()
}

/// Distance from `p` to the segment from `a` to `b`.
fn to_segment(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    let axis = b - a;
    let t = ((p - a).dot(axis) / axis.length_squared().max(1e-12)).clamp(0.0, 1.0);
    (p - (a + axis * t)).length()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::skinned::creature::figure;

    #[test]
    fn the_figure_s_capsules_hold_most_of_its_skin_and_follow_its_bones() {
        let model = figure(12);
        let capsules = body_capsules(&model);
        assert!(
            (10..=MAX_CAPSULES).contains(&capsules.len()),
            "{} capsules",
            capsules.len()
        );
        let inside = model
            .vertices
            .iter()
            .filter(|v| {
                capsules
                    .iter()
                    .any(|c| to_segment(v.position, c.a, c.b) <= c.radius * 1.05)
            })
            .count();
        assert!(
            inside * 10 >= model.vertices.len() * 7,
            "{inside} of {} vertices inside a capsule",
            model.vertices.len()
        );
        let tallest = capsules
            .iter()
            .map(|c| c.a.y.max(c.b.y) + c.radius)
            .fold(0.0, f32::max);
        assert!(
            (1.6..2.1).contains(&tallest),
            "the figure's top at {tallest}"
        );
    }
}
