//! Cube maps from six faces: a folder under `media/` holding one picture
//! per face, named `px nx py ny pz nz` (three.js), `posx negx …` or
//! `right left top bottom front back` (skybox packs), each PNG or JPEG,
//! is read as one equirectangular picture, which is how a shader's
//! `samplerCube` channel is looked up (by direction, in
//! `shaders`' `isf_equirect`). The faces follow GL's cube-map layout: a
//! face is seen from inside the cube, rows top first.

use std::path::Path;

use super::still::{DecodedImage, MAX_IMAGE_SIDE, StillError, decode_in};

/// The faces in GL's order (+X −X +Y −Y +Z −Z), each with the names it
/// may go by.
const FACES: [&[&str]; 6] = [
    &["px", "posx", "right"],
    &["nx", "negx", "left"],
    &["py", "posy", "top", "up"],
    &["ny", "negy", "bottom", "down"],
    &["pz", "posz", "front"],
    &["nz", "negz", "back"],
];

/// The widest equirectangular picture made: 4096 × 2048, so a face of
/// 1024 keeps its detail at the horizon and the picture stays within a
/// texture any adapter holds.
const MAX_WIDTH: u32 = 4096;

/// Why a cube map's folder was not read.
#[derive(Debug, thiserror::Error)]
pub enum CubeError {
    /// The folder could not be listed.
    #[error("cannot read the folder: {0}")]
    Folder(#[source] std::io::Error),
    /// No picture for a face: its names (the first is the one suggested).
    #[error(
        "a cube map folder holds six faces: no {}.png (or {}) in it",
        .0[0],
        .0[1..].join(", ")
    )]
    MissingFace(&'static [&'static str]),
    /// A face did not decode.
    #[error("{file}: {error}")]
    Face {
        /// The face's file name.
        file: String,
        /// Why.
        #[source]
        error: StillError,
    },
    /// The faces are not squares of one size.
    #[error("a cube map's six faces are squares of one size")]
    Unequal,
}

/// Whether `relative` under `root` is a folder (not a link to one).
pub fn is_folder(root: &Path, relative: &Path) -> bool {
    std::fs::symlink_metadata(root.join(relative)).is_ok_and(|m| m.is_dir())
}

/// Reads the six faces in the folder `relative` under `root` and
/// unwraps them into an equirectangular picture.
pub fn decode_cube_in(root: &Path, relative: &Path) -> Result<DecodedImage, CubeError> {
    let names: Vec<String> = std::fs::read_dir(root.join(relative))
        .map_err(CubeError::Folder)?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    let mut faces = Vec::with_capacity(6);
    for aliases in FACES {
        let file = names
            .iter()
            .find(|name| {
                let (stem, ending) = name.rsplit_once('.').unwrap_or((name, ""));
                aliases.contains(&stem.to_ascii_lowercase().as_str())
                    && super::media::STILLS.contains(&ending.to_ascii_lowercase().as_str())
            })
            .ok_or(CubeError::MissingFace(aliases))?;
        let face = decode_in(root, &relative.join(file)).map_err(|error| CubeError::Face {
            file: file.clone(),
            error,
        })?;
        faces.push(face);
    }
    let side = faces[0].size;
    if side[0] != side[1] || faces.iter().any(|f| f.size != side) {
        return Err(CubeError::Unequal);
    }
    Ok(unwrap(
        &faces,
        (4 * side[0]).clamp(4, MAX_WIDTH.min(2 * MAX_IMAGE_SIDE)),
    ))
}

/// The equirectangular picture `width` × `width / 2` of the cube `faces`
/// (GL's order), each pixel the bilinear blend of the face its direction
/// meets.
fn unwrap(faces: &[DecodedImage], width: u32) -> DecodedImage {
    let height = width / 2;
    let mut rgba = Vec::with_capacity((width * height * 4) as usize);
    for row in 0..height {
        // Row 0 looks straight up, as `isf_equirect` reads it.
        let polar = (row as f32 + 0.5) / height as f32 * std::f32::consts::PI;
        for column in 0..width {
            let azimuth = ((column as f32 + 0.5) / width as f32 - 0.5) * std::f32::consts::TAU;
            let direction = [
                polar.sin() * azimuth.cos(),
                polar.cos(),
                polar.sin() * azimuth.sin(),
            ];
            let (face, [s, t]) = face_at(direction);
            rgba.extend_from_slice(&bilinear(&faces[face], [s, t]));
        }
    }
    DecodedImage {
        size: [width, height],
        rgba,
    }
}

/// The face `direction` meets and where on it (0-1, `t` down the rows),
/// by GL's cube-map table.
fn face_at([x, y, z]: [f32; 3]) -> (usize, [f32; 2]) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, major) = if ax >= ay && ax >= az {
        if x > 0.0 {
            (0, -z, -y, ax)
        } else {
            (1, z, -y, ax)
        }
    } else if ay >= az {
        if y > 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if z > 0.0 {
        (4, x, -y, az)
    } else {
        (5, -x, -y, az)
    };
    let major = major.max(f32::MIN_POSITIVE);
    (face, [0.5 * (sc / major + 1.0), 0.5 * (tc / major + 1.0)])
}

/// `picture` at `[s, t]` (0-1), blending the four nearest pixels.
fn bilinear(picture: &DecodedImage, [s, t]: [f32; 2]) -> [u8; 4] {
    let [w, h] = picture.size;
    let at = |x: f32, side: u32| (x * side as f32 - 0.5).clamp(0.0, (side - 1) as f32);
    let (x, y) = (at(s, w), at(t, h));
    let (x0, y0) = (x.floor() as u32, y.floor() as u32);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = (x.fract(), y.fract());
    let texel =
        |px: u32, py: u32, c: usize| f32::from(picture.rgba[((py * w + px) * 4) as usize + c]);
    std::array::from_fn(|c| {
        let top = texel(x0, y0, c) * (1.0 - fx) + texel(x1, y0, c) * fx;
        let bottom = texel(x0, y1, c) * (1.0 - fx) + texel(x1, y1, c) * fx;
        (top * (1.0 - fy) + bottom * fy).round() as u8
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six faces of one flat colour each.
    fn coloured_faces(side: u32) -> Vec<DecodedImage> {
        (0..6u8)
            .map(|i| DecodedImage {
                size: [side, side],
                rgba: [40 * i, 255 - 40 * i, 7 * i, 255].repeat((side * side) as usize),
            })
            .collect()
    }

    #[test]
    fn each_axis_meets_its_own_face() {
        let axes = [
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ];
        for (i, axis) in axes.into_iter().enumerate() {
            let (face, st) = face_at(axis);
            assert_eq!(face, i);
            assert_eq!(st, [0.5, 0.5], "an axis meets its face's middle");
        }
        // Looking along +X a little up meets the upper half of its face.
        assert!(face_at([1.0, 0.3, 0.0]).1[1] < 0.5);
        // and a little towards −Z its right half (GL's +X face runs to −Z).
        assert!(face_at([1.0, 0.0, -0.3]).1[0] > 0.5);
    }

    #[test]
    fn the_unwrapped_picture_shows_each_face_where_its_axis_looks() {
        let faces = coloured_faces(4);
        let picture = unwrap(&faces, 64);
        assert_eq!(picture.size, [64, 32]);
        let pixel = |x: u32, y: u32| {
            let at = ((y * 64 + x) * 4) as usize;
            picture.rgba[at..at + 4].to_vec()
        };
        // The top row looks up (+Y), the bottom row down (−Y); the middle
        // row at azimuth 0 (column 32) looks along +X, a quarter on +Z.
        assert_eq!(pixel(10, 0), faces[2].rgba[..4]);
        assert_eq!(pixel(10, 31), faces[3].rgba[..4]);
        assert_eq!(pixel(32, 16), faces[0].rgba[..4]);
        assert_eq!(pixel(48, 16), faces[4].rgba[..4]);
        assert_eq!(pixel(16, 16), faces[5].rgba[..4]);
        assert_eq!(pixel(1, 16), faces[1].rgba[..4]);
    }

    #[test]
    fn a_folder_without_six_faces_is_refused_by_name() {
        let root = std::env::temp_dir().join(format!("sylva-cube-{}", std::process::id()));
        let folder = root.join("media/sky");
        std::fs::create_dir_all(&folder).expect("the folder");
        for (name, picture) in ["px", "nx", "py", "ny", "pz"].iter().zip(coloured_faces(2)) {
            image::RgbaImage::from_raw(2, 2, picture.rgba)
                .expect("a picture")
                .save(folder.join(format!("{name}.png")))
                .expect("a face");
        }
        let refused = decode_cube_in(&root, Path::new("media/sky"));
        assert!(refused.is_err_and(|e| e.to_string().contains("no nz.png")));
        image::RgbaImage::from_raw(2, 2, [9u8; 16].to_vec())
            .expect("a picture")
            .save(folder.join("Back.PNG"))
            .expect("a face");
        let read = decode_cube_in(&root, Path::new("media/sky")).expect("six faces");
        assert_eq!(read.size, [8, 4]);
        assert!(is_folder(&root, Path::new("media/sky")));
        std::fs::remove_dir_all(&root).ok();
    }
}
