//! The built-in figure's skin made one body: its capsules joined by a
//! smooth union (a polynomial smooth minimum of their distances), so the
//! torso is one form, the shoulders, hips and neck flow into the limbs
//! instead of meeting as tubes, and the skin is shaded by the union's
//! gradient rather than by its facets. Each capsule's vertices near a
//! joint move out onto the union's surface, and take a share of the
//! neighbour's bone by how much that capsule shaped them there; vertices
//! buried deep inside another capsule stay where they are, hidden.

use glam::Vec3;

/// A capsule of the figure: its axis from `head` to `tail`, its radius
/// and its joint.
#[derive(Debug, Clone, Copy)]
pub struct Limb {
    /// One end of the axis.
    pub head: Vec3,
    /// The other.
    pub tail: Vec3,
    /// Radius.
    pub radius: f32,
    /// The joint that moves it.
    pub joint: u32,
}

impl Limb {
    /// Signed distance from `p` to the capsule's surface.
    fn distance(&self, p: Vec3) -> f32 {
        let axis = self.tail - self.head;
        let t = ((p - self.head).dot(axis) / axis.length_squared().max(1e-12)).clamp(0.0, 1.0);
        (p - (self.head + axis * t)).length() - self.radius
    }
}

/// How far (metres) the union rounds where two capsules meet.
const BLEND: f32 = 0.045;
/// Limbs farther than this from a vertex do not shape it.
const REACH: f32 = BLEND * 3.0;
/// A vertex this far inside another capsule is buried: left in place.
const BURIED: f32 = 0.012;

/// The smooth minimum's sharpness: the union rounds over about `BLEND`.
const SHARPNESS: f32 = 4.0 / BLEND;

/// The union's distance at `p`: an exponential smooth minimum of the
/// limbs' distances.
fn union(limbs: &[Limb], p: Vec3) -> f32 {
    let nearest = limbs
        .iter()
        .map(|l| l.distance(p))
        .fold(f32::INFINITY, f32::min);
    let total: f32 = limbs
        .iter()
        .map(|l| (-(l.distance(p) - nearest) * SHARPNESS).exp())
        .sum();
    nearest - total.ln() / SHARPNESS
}

/// Limb `i`'s share of the union at `p` (the smooth minimum's softmax
/// weights, summing to 1 over the limbs).
fn share(limbs: &[Limb], p: Vec3, i: usize) -> f32 {
    let nearest = limbs
        .iter()
        .map(|l| l.distance(p))
        .fold(f32::INFINITY, f32::min);
    let weight = |l: &Limb| (-(l.distance(p) - nearest) * SHARPNESS).exp();
    weight(&limbs[i]) / limbs.iter().map(weight).sum::<f32>()
}

/// The union's outward unit normal at `p`.
fn gradient(limbs: &[Limb], p: Vec3) -> Vec3 {
    let e = 1e-4;
    let d = |q: Vec3| union(limbs, q);
    Vec3::new(
        d(p + Vec3::X * e) - d(p - Vec3::X * e),
        d(p + Vec3::Y * e) - d(p - Vec3::Y * e),
        d(p + Vec3::Z * e) - d(p - Vec3::Z * e),
    )
    .normalize_or(Vec3::Y)
}

/// Moves the vertices `positions` of the figure's capsules (each of limb
/// `owners[i]`) onto the union of `limbs`, blends their `weights` (joints
/// and weights, four each) with the limbs that shaped them, and returns
/// every vertex's normal.
pub fn join(
    limbs: &[Limb],
    owners: &[usize],
    positions: &mut [Vec3],
    weights: &mut [([u32; 4], [f32; 4])],
) -> Vec<Vec3> {
    let mut normals = Vec::with_capacity(positions.len());
    let mut near = Vec::with_capacity(limbs.len());
    for ((p, weight), &owner) in positions.iter_mut().zip(weights.iter_mut()).zip(owners) {
        // Only the limbs within reach shape the union here (the rest weigh
        // less than e^-12): the vertex's own first.
        near.clear();
        near.push(limbs[owner]);
        near.extend(
            limbs
                .iter()
                .enumerate()
                .filter(|(i, l)| *i != owner && l.distance(*p) < REACH)
                .map(|(_, l)| *l),
        );
        let buried = near[1..].iter().any(|l| l.distance(*p) < -BURIED);
        if !buried {
            // Two Newton steps onto the surface (it lies outward: the
            // union is never smaller than the capsule it grows from).
            for _ in 0..2 {
                *p -= gradient(&near, *p) * union(&near, *p);
            }
            *weight = blended(*weight, &near, *p, 0);
        }
        normals.push(gradient(&near, *p));
    }
    normals
}

/// `weight` (a vertex of limb `owner` at `p`) mixed with the joints of
/// the other limbs by their shares of the union there, keeping the four
/// strongest.
fn blended(
    (joints, own): ([u32; 4], [f32; 4]),
    limbs: &[Limb],
    p: Vec3,
    owner: usize,
) -> ([u32; 4], [f32; 4]) {
    let keep = share(limbs, p, owner);
    let mut mix: Vec<(u32, f32)> = joints
        .iter()
        .zip(own)
        .map(|(&j, w)| (j, w * keep))
        .collect();
    for (i, limb) in limbs.iter().enumerate().filter(|(i, _)| *i != owner) {
        let part = share(limbs, p, i);
        if part < 1e-4 {
            continue;
        }
        match mix.iter_mut().find(|(j, _)| *j == limb.joint) {
            Some(entry) => entry.1 += part,
            None => mix.push((limb.joint, part)),
        }
    }
    mix.sort_by(|a, b| b.1.total_cmp(&a.1));
    mix.truncate(4);
    let total: f32 = mix.iter().map(|(_, w)| w).sum::<f32>().max(1e-6);
    let mut out = ([0u32; 4], [0.0f32; 4]);
    for (k, (j, w)) in mix.into_iter().enumerate() {
        out.0[k] = j;
        out.1[k] = w / total;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limbs() -> [Limb; 2] {
        [
            Limb {
                head: Vec3::ZERO,
                tail: Vec3::new(0.0, 0.5, 0.0),
                radius: 0.1,
                joint: 1,
            },
            Limb {
                head: Vec3::new(0.0, 0.5, 0.0),
                tail: Vec3::new(0.5, 0.5, 0.0),
                radius: 0.05,
                joint: 2,
            },
        ]
    }

    #[test]
    fn vertices_by_a_joint_move_out_onto_one_smooth_surface_and_share_its_bones() {
        let limbs = limbs();
        // Under the elbow's bend, where the tubes meet at a crease, and far
        // down the first tube.
        let crease = Vec3::new(0.1, 0.45, 0.0);
        let far = Vec3::new(-0.1, 0.1, 0.0);
        let mut positions = [crease, far];
        let mut weights = [([1, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]); 2];
        let normals = join(&limbs, &[0, 0], &mut positions, &mut weights);
        assert!(union(&limbs, positions[0]).abs() < 1e-3, "on the union");
        assert!(
            positions[0].distance(crease) > 0.005,
            "the crease is filled"
        );
        assert!(
            positions[1].distance(far) < 1e-3,
            "far from the joint, unmoved"
        );
        let share = |(joints, w): ([u32; 4], [f32; 4]), joint: u32| -> f32 {
            joints
                .iter()
                .zip(w)
                .filter(|(j, _)| **j == joint)
                .map(|(_, w)| w)
                .sum()
        };
        assert!(
            share(weights[0], 2) > 0.05,
            "the elbow's bone: {:?}",
            weights[0]
        );
        assert_eq!(weights[1].1[0], 1.0);
        for (w, n) in weights.iter().zip(&normals) {
            assert!((w.1.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!((n.length() - 1.0).abs() < 1e-4);
        }
        assert!(
            normals[1].x < -0.99,
            "the tube's side faces out: {:?}",
            normals[1]
        );
        // Buried inside the other tube: left alone.
        let mut inside = [Vec3::new(0.25, 0.5, 0.0)];
        let mut weight = [([1, 0, 0, 0], [1.0, 0.0, 0.0, 0.0])];
        join(&limbs, &[0], &mut inside, &mut weight);
        assert_eq!(inside[0], Vec3::new(0.25, 0.5, 0.0));
    }
}
