//! The handles of mapping mode: an output's four corners and its mesh
//! points where they land on the output, and the parameter writes that
//! drag one of them to a point of the output.

use super::geometry::Homography;
use super::plan::OutputPlan;

/// Handles drawn at most per output (four corners and a 16x16 mesh).
pub const MAX_GRIPS: usize = 4 + 256;

/// What a handle moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grip {
    /// Corner `i` of the pin: 0 top-left, 1 top-right, 2 bottom-right,
    /// 3 bottom-left.
    Corner(usize),
    /// Mesh point `k`, row by row.
    Point(usize),
}

/// Every handle of `output` and where it is on the output (0..1).
pub fn grips(output: &OutputPlan) -> Vec<(Grip, [f32; 2])> {
    let mut list: Vec<(Grip, [f32; 2])> = output
        .corners
        .iter()
        .enumerate()
        .map(|(i, c)| (Grip::Corner(i), *c))
        .collect();
    if let Some(mesh) = &output.mesh {
        let pin = Homography::from_square(&output.corners);
        for (k, p) in mesh.points.iter().enumerate() {
            let [x, y] = pin.map([f64::from(p[0]), f64::from(p[1])]);
            list.push((Grip::Point(k), [x as f32, y as f32]));
        }
    }
    list
}

/// The handle of `output` nearest `at` within `reach` (0..1 of the
/// output's width).
pub fn nearest(output: &OutputPlan, at: [f32; 2], reach: f32) -> Option<Grip> {
    let aspect = output.size[1] as f32 / output.size[0].max(1) as f32;
    grips(output)
        .into_iter()
        .map(|(grip, p)| {
            let (dx, dy) = (p[0] - at[0], (p[1] - at[1]) * aspect);
            (grip, dx * dx + dy * dy)
        })
        .filter(|(_, d)| *d <= reach * reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(grip, _)| grip)
}

/// The parameter writes that put `grip` of `output` at `to` (0..1 of the
/// output): a corner directly, a mesh point through the inverse pin.
pub fn drag(output: &OutputPlan, grip: Grip, to: [f32; 2]) -> Vec<(String, f32)> {
    let name = |tail: String| format!("output.{}.{tail}", output.name);
    match grip {
        Grip::Corner(i) => vec![
            (name(format!("corner.{i}.x")), to[0]),
            (name(format!("corner.{i}.y")), to[1]),
        ],
        Grip::Point(k) => {
            let back = Homography::from_square(&output.corners).inverse();
            let [x, y] = back.map([f64::from(to[0]), f64::from(to[1])]);
            vec![
                (name(format!("point.{k}.x")), x as f32),
                (name(format!("point.{k}.y")), y as f32),
            ]
        }
    }
}

/// Where `grip` of `output` is now, if it has it.
pub fn position(output: &OutputPlan, grip: Grip) -> Option<[f32; 2]> {
    grips(output)
        .into_iter()
        .find(|(g, _)| *g == grip)
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outputs::plan::{Mesh, OutputsPlan};

    fn output() -> OutputPlan {
        let text = "[[output]]\nname = \"wall\"\nsize = [200, 100]\ncorners = [[0.1, 0.0], [0.9, 0.1], [1.0, 1.0], [0.0, 0.9]]\n";
        let mut plan = OutputsPlan::parse("o.toml", text).expect("parses");
        let mut output = plan.outputs.remove(0);
        output.mesh = Some(Mesh::flat(3, 3));
        output
    }

    #[test]
    fn a_dragged_mesh_point_lands_under_the_pointer() {
        let mut output = output();
        let grip = nearest(&output, [0.52, 0.5], 0.05).expect("the middle point");
        assert_eq!(grip, Grip::Point(4));
        for (name, value) in drag(&output, grip, [0.6, 0.4]) {
            let mesh = output.mesh.as_mut().expect("mesh");
            let axis = usize::from(name.ends_with(".y"));
            mesh.points[4][axis] = value;
        }
        let moved = position(&output, grip).expect("still there");
        assert!(
            (moved[0] - 0.6).abs() < 1e-5 && (moved[1] - 0.4).abs() < 1e-5,
            "{moved:?}"
        );
    }

    #[test]
    fn corners_are_grabbed_within_reach_only() {
        let output = output();
        assert_eq!(nearest(&output, [0.11, 0.01], 0.03), Some(Grip::Corner(0)));
        assert_eq!(nearest(&output, [0.3, 0.3], 0.03), None);
        assert_eq!(
            drag(&output, Grip::Corner(2), [0.95, 0.97]),
            vec![
                ("output.wall.corner.2.x".to_string(), 0.95),
                ("output.wall.corner.2.y".to_string(), 0.97)
            ]
        );
    }
}
