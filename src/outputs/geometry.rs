//! Where an output's canvas region lands: the corner pin as a homography
//! (the unit square to the four corners), a mesh as a Catmull-Rom surface
//! through its points, and the two tessellated into triangles whose clip
//! positions carry the homography's w, so the rasterizer's
//! perspective-correct interpolation makes the pin exact per pixel.

use bytemuck::{Pod, Zeroable};

use super::plan::Mesh;

/// Triangles per mesh cell side: the curve between points is followed
/// to a sixteenth of a cell.
const CELL_STEPS: u32 = 16;

/// A 3x3 projective map of the plane, row-major.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Homography(pub [[f64; 3]; 3]);

impl Homography {
    /// The map sending the unit square's corners (0,0), (1,0), (1,1),
    /// (0,1) to `corners` in that order (Heckbert's square-to-quad).
    pub fn from_square(corners: &[[f32; 2]; 4]) -> Self {
        let [p0, p1, p2, p3] = corners.map(|c| [f64::from(c[0]), f64::from(c[1])]);
        let sx = p0[0] - p1[0] + p2[0] - p3[0];
        let sy = p0[1] - p1[1] + p2[1] - p3[1];
        let (g, h) = if sx.abs() < 1e-12 && sy.abs() < 1e-12 {
            (0.0, 0.0)
        } else {
            let [dx1, dy1] = [p1[0] - p2[0], p1[1] - p2[1]];
            let [dx2, dy2] = [p3[0] - p2[0], p3[1] - p2[1]];
            let det = dx1 * dy2 - dx2 * dy1;
            ((sx * dy2 - dx2 * sy) / det, (dx1 * sy - sx * dy1) / det)
        };
        Self([
            [p1[0] - p0[0] + g * p1[0], p3[0] - p0[0] + h * p3[0], p0[0]],
            [p1[1] - p0[1] + g * p1[1], p3[1] - p0[1] + h * p3[1], p0[1]],
            [g, h, 1.0],
        ])
    }

    /// `p` mapped, in homogeneous coordinates (x, y, w).
    pub fn apply(&self, p: [f64; 2]) -> [f64; 3] {
        let m = &self.0;
        [0, 1, 2].map(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2])
    }

    /// `p` mapped onto the plane.
    pub fn map(&self, p: [f64; 2]) -> [f64; 2] {
        let [x, y, w] = self.apply(p);
        [x / w, y / w]
    }

    /// The inverse map (the adjugate: a scale of the inverse is the same
    /// projective map).
    pub fn inverse(&self) -> Self {
        let m = &self.0;
        let c = |r0: usize, c0: usize, r1: usize, c1: usize| {
            m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]
        };
        Self([
            [c(1, 1, 2, 2), -c(0, 1, 2, 2), c(0, 1, 1, 2)],
            [-c(1, 0, 2, 2), c(0, 0, 2, 2), -c(0, 0, 1, 2)],
            [c(1, 0, 2, 1), -c(0, 0, 2, 1), c(0, 0, 1, 1)],
        ])
    }
}

/// One vertex of an output's warp: its clip position (w from the
/// homography) and where in the canvas region it samples (0..1).
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct WarpVertex {
    /// Clip-space position.
    pub clip: [f32; 4],
    /// Region coordinates, 0..1 from the top left.
    pub uv: [f32; 2],
}

/// The point of the Catmull-Rom surface through `mesh`'s points at
/// lattice coordinates `(u, v)` in 0..1; ends extended in a straight
/// line, so a flat mesh is the identity.
pub fn mesh_point(mesh: &Mesh, u: f64, v: f64) -> [f64; 2] {
    let (columns, rows) = (mesh.columns as i64, mesh.rows as i64);
    let point = |c: i64, r: i64| -> [f64; 2] {
        // Beyond the edge, mirror the next point through the edge point.
        let edge = |i: i64, n: i64| -> (i64, i64) {
            if i < 0 {
                (0, 1)
            } else if i >= n {
                (n - 1, n - 2)
            } else {
                (i, i)
            }
        };
        let (c0, c1) = edge(c, columns);
        let (r0, r1) = edge(r, rows);
        let at = |c: i64, r: i64| {
            let p = mesh.points[(r * columns + c) as usize];
            [f64::from(p[0]), f64::from(p[1])]
        };
        let (a, b) = (at(c0, r0), at(c1, r1));
        [2.0 * a[0] - b[0], 2.0 * a[1] - b[1]]
    };
    let (fu, fv) = (u * (columns - 1) as f64, v * (rows - 1) as f64);
    let (cu, cv) = (
        (fu.floor() as i64).min(columns - 2),
        (fv.floor() as i64).min(rows - 2),
    );
    let (tu, tv) = (fu - cu as f64, fv - cv as f64);
    let (wu, wv) = (catmull_rom(tu), catmull_rom(tv));
    let mut out = [0.0; 2];
    for (j, wj) in wv.iter().enumerate() {
        for (i, wi) in wu.iter().enumerate() {
            let p = point(cu + i as i64 - 1, cv + j as i64 - 1);
            out[0] += wi * wj * p[0];
            out[1] += wi * wj * p[1];
        }
    }
    out
}

/// Catmull-Rom weights of the four points around `t` in 0..1.
fn catmull_rom(t: f64) -> [f64; 4] {
    let (t2, t3) = (t * t, t * t * t);
    [
        0.5 * (-t3 + 2.0 * t2 - t),
        0.5 * (3.0 * t3 - 5.0 * t2 + 2.0),
        0.5 * (-3.0 * t3 + 4.0 * t2 + t),
        0.5 * (t3 - t2),
    ]
}

/// The triangles of an output: the region's lattice through the mesh (if
/// any), then the corner pin, as a triangle list.
pub fn tessellate(corners: &[[f32; 2]; 4], mesh: Option<&Mesh>) -> Vec<WarpVertex> {
    let pin = Homography::from_square(corners);
    let (across, down) = match mesh {
        Some(m) => ((m.columns - 1) * CELL_STEPS, (m.rows - 1) * CELL_STEPS),
        None => (1, 1),
    };
    let vertex = |i: u32, j: u32| {
        let uv = [
            f64::from(i) / f64::from(across),
            f64::from(j) / f64::from(down),
        ];
        let at = mesh.map_or(uv, |m| mesh_point(m, uv[0], uv[1]));
        let [x, y, w] = pin.apply(at);
        WarpVertex {
            clip: [(2.0 * x - w) as f32, (w - 2.0 * y) as f32, 0.0, w as f32],
            uv: [uv[0] as f32, uv[1] as f32],
        }
    };
    let mut vertices = Vec::with_capacity((across * down * 6) as usize);
    for j in 0..down {
        for i in 0..across {
            let [a, b, c, d] = [
                vertex(i, j),
                vertex(i + 1, j),
                vertex(i + 1, j + 1),
                vertex(i, j + 1),
            ];
            vertices.extend([a, b, c, a, c, d]);
        }
    }
    vertices
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYSTONE: [[f32; 2]; 4] = [[0.1, 0.05], [0.95, 0.0], [0.8, 1.0], [0.0, 0.9]];

    #[test]
    fn the_pin_sends_the_square_to_the_corners_and_back() {
        let pin = Homography::from_square(&KEYSTONE);
        let square = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        for (from, to) in square.iter().zip(KEYSTONE) {
            let got = pin.map(*from);
            assert!((got[0] - f64::from(to[0])).abs() < 1e-9, "{got:?} {to:?}");
            assert!((got[1] - f64::from(to[1])).abs() < 1e-9, "{got:?} {to:?}");
        }
        let back = pin.inverse().map(pin.map([0.3, 0.7]));
        assert!((back[0] - 0.3).abs() < 1e-9 && (back[1] - 0.7).abs() < 1e-9);
    }

    #[test]
    fn a_flat_mesh_is_the_identity_and_a_moved_point_is_passed_through() {
        let mut mesh = Mesh::flat(4, 3);
        for (u, v) in [(0.0, 0.0), (0.37, 0.81), (1.0, 1.0), (0.5, 0.25)] {
            let p = mesh_point(&mesh, u, v);
            assert!((p[0] - u).abs() < 1e-6 && (p[1] - v).abs() < 1e-6, "{p:?}");
        }
        mesh.points[5] = [0.45, 0.6];
        let through = mesh_point(&mesh, 1.0 / 3.0, 0.5);
        assert!((through[0] - 0.45).abs() < 1e-6 && (through[1] - 0.6).abs() < 1e-6);
        let near = mesh_point(&mesh, 0.3, 0.5);
        assert!(near[1] > 0.5, "the surface bends toward the moved point");
    }

    #[test]
    fn tessellation_covers_the_region_once() {
        let flat = tessellate(&crate::outputs::plan::SQUARE, None);
        assert_eq!(flat.len(), 6);
        let warped = tessellate(&KEYSTONE, Some(&Mesh::flat(3, 2)));
        assert_eq!(warped.len(), (2 * CELL_STEPS * CELL_STEPS * 6) as usize);
        assert!(warped.iter().all(|v| v.clip[3] > 0.0));
    }
}
