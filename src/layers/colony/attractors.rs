//! Where branches grow: attraction points filling a shape (sphere, box,
//! shell, cone, crown) or read from a point cloud (PLY or OBJ vertices).
//! An [`AttractionSource`] is the pluggable piece: the skinned layer will
//! fill a character's bind-pose volume, the forest one crown per species.

use std::path::Path;

use crate::base::opener::{self, OpenError};
use crate::base::rng::Rng;

/// The largest point cloud file read: a few million ASCII vertices, far
/// more than a colony's attractions, and a bound a device or a sparse
/// file named over OSC cannot pass.
pub const MAX_CLOUD_BYTES: u64 = 64 << 20;

/// Something that yields attraction points.
pub trait AttractionSource {
    /// `count` points, reproducible for `seed`.
    fn points(&self, count: u32, seed: u64) -> Vec<[f32; 3]>;
}

/// The built-in shapes, in the order of `colony.shape`.
pub const SHAPES: [&str; 5] = ["sphere", "box", "shell", "cone", "crown"];

/// A shape of a given radius around the origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Index into [`SHAPES`].
    pub kind: usize,
    /// Half-size of the shape.
    pub radius: f32,
}

impl AttractionSource for Shape {
    fn points(&self, count: u32, seed: u64) -> Vec<[f32; 3]> {
        let mut rng = Rng::new(seed);
        let r = self.radius;
        let mut out = Vec::with_capacity(count as usize);
        while out.len() < count as usize {
            let p = [rng.signed(), rng.signed(), rng.signed()];
            let len = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
            let keep = match self.kind {
                1 => true,
                2 => (0.8..=1.0).contains(&len),
                3 => {
                    // Apex at the top, base at the bottom: a spruce.
                    let height = (p[1] + 1.0) * 0.5;
                    (p[0] * p[0] + p[2] * p[2]).sqrt() <= 1.0 - height
                }
                4 => {
                    // A flattened dome above a clear trunk line: a broadleaf crown.
                    let q = [p[0], (p[1] - 0.35) / 0.65, p[2]];
                    q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= 1.0 && p[1] > -0.3
                }
                _ => len <= 1.0,
            };
            if keep {
                out.push([p[0] * r, p[1] * r, p[2] * r]);
            }
        }
        out
    }
}

/// Why a point cloud could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The file could not be read: missing, a link, a FIFO, a device, too
    /// large (over [`MAX_CLOUD_BYTES`]).
    #[error(transparent)]
    Read(#[from] OpenError),
    /// The file is not a point cloud this module reads.
    #[error("{path}: {problem}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A picture to grow into could not be used.
    #[error("{path}: {problem}")]
    Picture {
        /// The file.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The name leaves the show's `assets/`.
    #[error(transparent)]
    Outside(#[from] crate::base::AssetError),
}

/// Points read from a file, resampled to the count asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct PointCloud {
    points: Vec<[f32; 3]>,
}

impl PointCloud {
    /// Reads the vertices of an ASCII PLY or an OBJ file at `relative`
    /// under the show folder `root`, through the opener: a link, a FIFO or
    /// a device is refused, and the file is read only up to
    /// [`MAX_CLOUD_BYTES`].
    pub fn load_in(root: &Path, relative: &Path) -> Result<Self, CloudError> {
        let text = opener::read_text(root, relative, MAX_CLOUD_BYTES)?;
        Self::parse(&root.join(relative), &text)
    }

    /// Reads a point cloud at a path a person typed (links followed; a
    /// plain file within [`MAX_CLOUD_BYTES`] still).
    pub fn load(path: &Path) -> Result<Self, CloudError> {
        let bytes = opener::read_typed(path, MAX_CLOUD_BYTES)?;
        let text = String::from_utf8_lossy(&bytes);
        Self::parse(path, &text)
    }

    /// The vertices of `text`, read as `path`'s ending says.
    fn parse(path: &Path, text: &str) -> Result<Self, CloudError> {
        let name = path.display().to_string();
        let points = match path.extension().and_then(|e| e.to_str()) {
            Some("ply") => parse_ply(text),
            Some("obj") => Ok(parse_obj(text)),
            _ => Err("a point cloud must be .ply (ASCII) or .obj"),
        }
        .map(finite)
        .and_then(|points| {
            if points.is_empty() {
                Err("no vertices with finite coordinates")
            } else {
                Ok(points)
            }
        })
        .map_err(|problem| CloudError::Format {
            path: name,
            problem,
        })?;
        Ok(Self { points })
    }

    /// A cloud from points already in memory.
    pub fn from_points(points: Vec<[f32; 3]>) -> Self {
        Self { points }
    }
}

impl AttractionSource for PointCloud {
    fn points(&self, count: u32, seed: u64) -> Vec<[f32; 3]> {
        if count as usize >= self.points.len() {
            return self.points.clone();
        }
        let mut rng = Rng::new(seed);
        (0..count)
            .map(|_| self.points[(rng.next_u32() as usize) % self.points.len()])
            .collect()
    }
}

/// The points whose coordinates are all numbers: `nan` and `inf` parse as
/// floats, and would reach the GPU and an exported OBJ.
fn finite(mut points: Vec<[f32; 3]>) -> Vec<[f32; 3]> {
    points.retain(|p| p.iter().all(|c| c.is_finite()));
    points
}

fn parse_obj(text: &str) -> Vec<[f32; 3]> {
    text.lines()
        .filter_map(|line| line.strip_prefix("v "))
        .filter_map(|rest| {
            let v: Vec<f32> = rest
                .split_whitespace()
                .take(3)
                .filter_map(|x| x.parse().ok())
                .collect();
            (v.len() == 3).then(|| [v[0], v[1], v[2]])
        })
        .collect()
}

fn parse_ply(text: &str) -> Result<Vec<[f32; 3]>, &'static str> {
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("ply") {
        return Err("not a PLY file");
    }
    let mut vertices = 0usize;
    let mut properties: Vec<String> = Vec::new();
    let mut in_vertex = false;
    for line in lines.by_ref() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["format", format, ..] if *format != "ascii" => {
                return Err("only ASCII PLY is read");
            }
            ["element", "vertex", n] => {
                vertices = n.parse().map_err(|_| "bad vertex count")?;
                in_vertex = true;
            }
            ["element", ..] => in_vertex = false,
            ["property", .., name] if in_vertex => properties.push(name.to_string()),
            ["end_header"] => break,
            _ => {}
        }
    }
    let axis = |name: &str| properties.iter().position(|p| p == name);
    let (Some(x), Some(y), Some(z)) = (axis("x"), axis("y"), axis("z")) else {
        return Err("the vertices need x, y and z properties");
    };
    Ok(lines
        .take(vertices)
        .filter_map(|line| {
            // A word that is not a number drops the vertex rather than
            // shifting the properties after it.
            let v: Vec<f32> = line
                .split_whitespace()
                .map(|w| w.parse().ok())
                .collect::<Option<_>>()?;
            Some([*v.get(x)?, *v.get(y)?, *v.get(z)?])
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_fill_their_volume_reproducibly() {
        for (kind, name) in SHAPES.iter().enumerate() {
            let shape = Shape { kind, radius: 2.0 };
            let a = shape.points(500, 7);
            assert_eq!(a.len(), 500);
            assert_eq!(a, shape.points(500, 7), "{name} is reproducible");
            assert!(a.iter().all(|p| p.iter().all(|c| c.abs() <= 2.0)));
        }
    }

    #[test]
    fn point_clouds_read_ply_and_obj() {
        let ply = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nend_header\n1 2 3 255\n4 5 6 0\n";
        assert_eq!(parse_ply(ply), Ok(vec![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]));
        assert!(parse_ply("ply\nformat binary_little_endian 1.0\nend_header\n").is_err());
        let obj = "# cube\nv 1 0 0\nvt 0 0\nv 0 1 0.5\nf 1 2 3\n";
        assert_eq!(parse_obj(obj), vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.5]]);
        // The hardening probe: NaN and inf points reached the exported OBJ.
        let hostile = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\nend_header\nnan 0 0\n1 inf 0\n1 two 3\n1 2 3\n";
        let parsed = parse_ply(hostile).map(finite);
        assert_eq!(parsed, Ok(vec![[1.0, 2.0, 3.0]]));
    }
}
