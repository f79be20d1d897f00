//! The attractions of a skinned character (a volume sampler):
//! the bind-pose mesh voxelized with its inside filled, Poisson-disk
//! samples inside it, and for each sample the nearest point of the skin,
//! whose bones it then rides, like the skin around it.
//!
//! Inside is decided by the winding number along each axis's column (the
//! signed count of surfaces crossed), in the majority of the three axes:
//! robust for overlapping shells (a figure of capsules) and for the small
//! holes real models have.

use glam::{IVec3, Vec3};

use crate::base::rng::Rng;

/// Most voxels a volume holds; larger volumes use larger voxels.
const MAX_VOXELS: usize = 1 << 24;

/// A solid voxel grid.
pub struct Volume {
    origin: Vec3,
    voxel: f32,
    dims: [usize; 3],
    inside: Vec<bool>,
}

impl Volume {
    /// The voxel edge length.
    pub fn voxel(&self) -> f32 {
        self.voxel
    }

    /// How many voxels are inside.
    pub fn filled(&self) -> usize {
        self.inside.iter().filter(|&&i| i).count()
    }

    /// Whether `p` lies in an inside voxel.
    pub fn contains(&self, p: Vec3) -> bool {
        let c = ((p - self.origin) / self.voxel).floor();
        if c.cmplt(Vec3::ZERO).any() {
            return false;
        }
        let [x, y, z] = [c.x as usize, c.y as usize, c.z as usize];
        if x >= self.dims[0] || y >= self.dims[1] || z >= self.dims[2] {
            return false;
        }
        self.inside[x + self.dims[0] * (y + self.dims[1] * z)]
    }

    /// Whether every face neighbour of voxel `index` is inside too.
    fn interior(&self, index: usize) -> bool {
        let [nx, ny, nz] = self.dims;
        let (x, y, z) = (index % nx, (index / nx) % ny, index / (nx * ny));
        if x == 0 || y == 0 || z == 0 || x + 1 >= nx || y + 1 >= ny || z + 1 >= nz {
            return false;
        }
        [1, nx, nx * ny]
            .iter()
            .all(|&step| self.inside[index - step] && self.inside[index + step])
    }

    fn centre(&self, index: usize) -> Vec3 {
        let x = index % self.dims[0];
        let y = (index / self.dims[0]) % self.dims[1];
        let z = index / (self.dims[0] * self.dims[1]);
        self.origin + (Vec3::new(x as f32, y as f32, z as f32) + 0.5) * self.voxel
    }
}

/// Voxelizes the closed mesh (`positions`, triangles `indices`) at about
/// `voxel` per voxel.
pub fn voxelize(positions: &[Vec3], indices: &[u32], voxel: f32) -> Volume {
    let (lo, hi) = positions.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(*p), hi.max(*p)),
    );
    let extent = (hi - lo).max(Vec3::splat(1e-6));
    let mut voxel = voxel.max(extent.max_element() / 1024.0);
    let dims_for = |voxel: f32| (extent / voxel).ceil().as_uvec3() + 2;
    while {
        let d = dims_for(voxel);
        (d.x as usize) * (d.y as usize) * (d.z as usize) > MAX_VOXELS
    } {
        voxel *= 1.25;
    }
    let d = dims_for(voxel);
    let dims = [d.x as usize, d.y as usize, d.z as usize];
    let origin = lo - Vec3::splat(voxel);
    let mut votes = vec![0u8; dims[0] * dims[1] * dims[2]];
    for axis in 0..3 {
        vote_along(positions, indices, origin, voxel, dims, axis, &mut votes);
    }
    Volume {
        origin,
        voxel,
        dims,
        inside: votes.into_iter().map(|v| v >= 2).collect(),
    }
}

/// Adds a vote to every voxel the columns along `axis` find inside (a grid
/// from `origin`, `voxel` wide, of `dims` voxels).
fn vote_along(
    positions: &[Vec3],
    indices: &[u32],
    origin: Vec3,
    voxel: f32,
    dims: [usize; 3],
    axis: usize,
    votes: &mut [u8],
) {
    // The column runs along `axis`; (u, v) are the other two.
    let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
    let (nu, nv, nw) = (dims[u], dims[v], dims[axis]);
    // Triangles binned by the columns their projection covers.
    let mut bins: Vec<Vec<u32>> = vec![Vec::new(); nu * nv];
    for (t, tri) in indices.chunks_exact(3).enumerate() {
        let p = [0, 1, 2].map(|k| positions[tri[k] as usize]);
        let cell = |x: f32, o: f32| ((x - o) / voxel - 0.5).floor();
        let (u0, u1) = (
            cell(p.iter().map(|q| q[u]).fold(f32::MAX, f32::min), origin[u]),
            cell(p.iter().map(|q| q[u]).fold(f32::MIN, f32::max), origin[u]) + 1.0,
        );
        let (v0, v1) = (
            cell(p.iter().map(|q| q[v]).fold(f32::MAX, f32::min), origin[v]),
            cell(p.iter().map(|q| q[v]).fold(f32::MIN, f32::max), origin[v]) + 1.0,
        );
        for a in (u0.max(0.0) as usize)..=(u1.max(0.0) as usize).min(nu - 1) {
            for b in (v0.max(0.0) as usize)..=(v1.max(0.0) as usize).min(nv - 1) {
                bins[a + nu * b].push(t as u32);
            }
        }
    }
    let mut crossings: Vec<(f32, i32)> = Vec::new();
    for b in 0..nv {
        for a in 0..nu {
            // A column through voxel centres, nudged off exact vertices.
            let cu = origin[u] + (a as f32 + 0.5 + 1.3e-4) * voxel;
            let cv = origin[v] + (b as f32 + 0.5 + 2.7e-4) * voxel;
            crossings.clear();
            for &t in &bins[a + nu * b] {
                let tri = &indices[3 * t as usize..3 * t as usize + 3];
                let p = [0, 1, 2].map(|k| positions[tri[k] as usize]);
                if let Some(hit) = cross(p, u, v, axis, cu, cv) {
                    crossings.push(hit);
                }
            }
            if crossings.is_empty() {
                continue;
            }
            crossings.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut winding = 0;
            let mut next = 0;
            for w in 0..nw {
                let at = origin[axis] + (w as f32 + 0.5) * voxel;
                while next < crossings.len() && crossings[next].0 <= at {
                    winding += crossings[next].1;
                    next += 1;
                }
                if winding != 0 {
                    let mut c = [0usize; 3];
                    c[u] = a;
                    c[v] = b;
                    c[axis] = w;
                    votes[c[0] + dims[0] * (c[1] + dims[1] * c[2])] += 1;
                }
            }
        }
    }
}

/// Where the column at (cu, cv) along axis `w` (`u` and `v` the other
/// two) crosses triangle `p`, and the winding change there (+1 entering
/// an outward-facing surface, -1 leaving).
fn cross(p: [Vec3; 3], u: usize, v: usize, w: usize, cu: f32, cv: f32) -> Option<(f32, i32)> {
    let e = |i: usize, j: usize| (p[j][u] - p[i][u], p[j][v] - p[i][v]);
    let edge = |i: usize, j: usize| {
        let (du, dv) = e(i, j);
        du * (cv - p[i][v]) - dv * (cu - p[i][u])
    };
    let (a, b, c) = (edge(1, 2), edge(2, 0), edge(0, 1));
    let area = a + b + c;
    if area == 0.0 || !((a >= 0.0 && b >= 0.0 && c >= 0.0) || (a <= 0.0 && b <= 0.0 && c <= 0.0)) {
        return None;
    }
    let depth = (a * p[0][w] + b * p[1][w] + c * p[2][w]) / area;
    // The projected area's sign is the normal's component along the column.
    Some((depth, if area > 0.0 { -1 } else { 1 }))
}

/// Up to `count` points inside `volume`, no two closer than `spacing`
/// (0: chosen from the count and the volume), by dart throwing over the
/// inside voxels from `seed`.
pub fn poisson(volume: &Volume, count: usize, spacing: f32, seed: u64) -> Vec<Vec3> {
    let cells: Vec<usize> = (0..volume.inside.len())
        .filter(|&i| volume.inside[i])
        .collect();
    if cells.is_empty() || count == 0 {
        return Vec::new();
    }
    let space = cells.len() as f32 * volume.voxel.powi(3);
    let spacing = if spacing > 0.0 {
        spacing
    } else {
        0.7 * (space / count as f32).cbrt()
    };
    let cell = spacing / 3f32.sqrt();
    let mut grid: std::collections::HashMap<IVec3, u32> = std::collections::HashMap::new();
    let key = |p: Vec3| ((p - volume.origin) / cell).floor().as_ivec3();
    let mut points: Vec<Vec3> = Vec::with_capacity(count);
    let mut rng = Rng::new(seed);
    let attempts = count.saturating_mul(40);
    for _ in 0..attempts {
        if points.len() >= count {
            break;
        }
        let c = cells[rng.next_u32() as usize % cells.len()];
        // A voxel on the surface is sampled at its centre (which the
        // columns found inside); only interior voxels are sampled anywhere.
        let jitter = Vec3::new(rng.signed(), rng.signed(), rng.signed()) * 0.5;
        let jitter = if volume.interior(c) {
            jitter
        } else {
            jitter * 0.0
        };
        let p = volume.centre(c) + jitter * volume.voxel;
        let k = key(p);
        let near = (-2..=2).any(|dz| {
            (-2..=2).any(|dy| {
                (-2..=2).any(|dx| {
                    grid.get(&(k + IVec3::new(dx, dy, dz))).is_some_and(|&i| {
                        points[i as usize].distance_squared(p) < spacing * spacing
                    })
                })
            })
        });
        if !near {
            grid.insert(k, points.len() as u32);
            points.push(p);
        }
    }
    points
}

/// The point of triangle `(a, b, c)` nearest `p`, as barycentric weights
/// of its corners (Ericson, Real-Time Collision Detection 5.1.5).
pub fn closest_on_triangle(p: Vec3, [a, b, c]: [Vec3; 3]) -> [f32; 3] {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return [1.0, 0.0, 0.0];
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return [0.0, 1.0, 0.0];
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return [1.0 - v, v, 0.0];
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return [0.0, 0.0, 1.0];
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return [1.0 - w, 0.0, w];
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return [0.0, 1.0 - w, w];
    }
    let denominator = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denominator, vc * denominator);
    [1.0 - v - w, v, w]
}

/// A triangle in the R-tree the nearest-surface search runs on.
struct Triangle {
    corners: [Vec3; 3],
    first: usize,
}

impl rstar::RTreeObject for Triangle {
    type Envelope = rstar::AABB<[f32; 3]>;

    fn envelope(&self) -> Self::Envelope {
        let [a, b, c] = self.corners;
        rstar::AABB::from_corners(a.min(b).min(c).to_array(), a.max(b).max(c).to_array())
    }
}

impl rstar::PointDistance for Triangle {
    fn distance_2(&self, point: &[f32; 3]) -> f32 {
        let p = Vec3::from(*point);
        let w = closest_on_triangle(p, self.corners);
        let [a, b, c] = self.corners;
        (a * w[0] + b * w[1] + c * w[2]).distance_squared(p)
    }
}

/// For each of `points`, the nearest point of the mesh's surface: its
/// triangle (index of its first corner in `indices`) and barycentric
/// weights. An R-tree over the triangles keeps it fast for meshes of
/// millions of triangles and points deep inside them.
pub fn nearest_surface(
    positions: &[Vec3],
    indices: &[u32],
    points: &[Vec3],
) -> Vec<(usize, [f32; 3])> {
    let triangles: Vec<Triangle> = indices
        .chunks_exact(3)
        .enumerate()
        .map(|(t, corners)| Triangle {
            corners: [0, 1, 2].map(|k| positions[corners[k] as usize]),
            first: 3 * t,
        })
        .collect();
    let tree = rstar::RTree::bulk_load(triangles);
    points
        .iter()
        .map(|p| match tree.nearest_neighbor(p.to_array()) {
            Some(t) => (t.first, closest_on_triangle(*p, t.corners)),
            None => (0, [1.0, 0.0, 0.0]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_surface_point_is_found_on_faces_edges_and_corners() {
        let t = [Vec3::ZERO, Vec3::X, Vec3::Y];
        let on = |p: Vec3| {
            let w = closest_on_triangle(p, t);
            t[0] * w[0] + t[1] * w[1] + t[2] * w[2]
        };
        assert!(on(Vec3::new(0.2, 0.3, 5.0)).abs_diff_eq(Vec3::new(0.2, 0.3, 0.0), 1e-6));
        assert!(on(Vec3::new(-1.0, -1.0, 0.0)).abs_diff_eq(Vec3::ZERO, 1e-6));
        assert!(on(Vec3::new(1.0, 1.0, 0.0)).abs_diff_eq(Vec3::new(0.5, 0.5, 0.0), 1e-6));
        assert!(on(Vec3::new(0.5, -2.0, 1.0)).abs_diff_eq(Vec3::new(0.5, 0.0, 0.0), 1e-6));
        // Among many triangles, the nearest is the one the point hovers over.
        let positions = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::new(5.0, 0.0, 0.0),
            Vec3::new(6.0, 0.0, 0.0),
            Vec3::new(5.0, 1.0, 0.0),
        ];
        let found = nearest_surface(&positions, &[0, 1, 2, 3, 4, 5], &[Vec3::new(5.2, 0.2, 0.3)]);
        assert_eq!(found[0].0, 3);
        let w = found[0].1;
        assert!(
            (w[0] - 0.6).abs() < 1e-5 && (w[1] - 0.2).abs() < 1e-5 && (w[2] - 0.2).abs() < 1e-5
        );
    }
}
