//! Attractions from a picture (`colony.attractors = "media/NAME.png"`):
//! the bright pixels of a PNG or JPEG in the show's `media/` become
//! attraction points on a plane facing the camera, more where the picture
//! is brighter, pushed forward by their brightness so the branches grow
//! into a relief of it. The picture is read within the media limits.

use std::path::Path;

use super::attractors::{AttractionSource, CloudError};
use crate::base::rng::Rng;
use crate::engine::inputs::still;

/// Pixels darker than this draw no attraction.
const DARK: f32 = 0.04;

/// A picture's brightness, to draw attractions from.
#[derive(Debug, Clone, PartialEq)]
pub struct PictureAttractions {
    size: [u32; 2],
    /// Each pixel's weight summed so far, row after row.
    cumulative: Vec<f32>,
    brightness: Vec<f32>,
    radius: f32,
}

impl PictureAttractions {
    /// Reads the picture `relative` under the show folder `root` (through
    /// the opener: a plain file, no link), to span `radius` either side.
    pub fn load_in(root: &Path, relative: &Path, radius: f32) -> Result<Self, CloudError> {
        let picture = still::decode_in(root, relative).map_err(|problem| CloudError::Picture {
            path: relative.display().to_string(),
            problem: problem.to_string(),
        })?;
        Self::of(picture, &root.join(relative), radius)
    }

    /// Reads the picture at a path a person typed, to span `radius`
    /// either side.
    pub fn load(path: &Path, radius: f32) -> Result<Self, CloudError> {
        let picture = still::decode(path).map_err(|problem| CloudError::Picture {
            path: path.display().to_string(),
            problem: problem.to_string(),
        })?;
        Self::of(picture, path, radius)
    }

    /// The attractions of a decoded picture.
    fn of(picture: still::DecodedImage, path: &Path, radius: f32) -> Result<Self, CloudError> {
        let brightness: Vec<f32> = picture
            .rgba
            .chunks_exact(4)
            .map(|p| {
                let [r, g, b] = [p[0], p[1], p[2]].map(|c| f32::from(c) / 255.0);
                (0.2126 * r + 0.7152 * g + 0.0722 * b) * f32::from(p[3]) / 255.0
            })
            .collect();
        let mut total = 0.0;
        let cumulative = brightness
            .iter()
            .map(|b| {
                // Squared, so the bright parts draw most of the growth.
                total += if *b > DARK { b * b } else { 0.0 };
                total
            })
            .collect();
        if total <= 0.0 {
            return Err(CloudError::Picture {
                path: path.display().to_string(),
                problem: "no pixel is bright enough to grow into".into(),
            });
        }
        Ok(Self {
            size: picture.size,
            cumulative,
            brightness,
            radius,
        })
    }
}

impl AttractionSource for PictureAttractions {
    fn points(&self, count: u32, seed: u64) -> Vec<[f32; 3]> {
        let mut rng = Rng::new(seed);
        let [w, h] = self.size.map(|s| s as f32);
        let scale = 2.0 * self.radius / w.max(h);
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        (0..count)
            .map(|_| {
                let pick = rng.unit() * total;
                let i = self
                    .cumulative
                    .partition_point(|c| *c < pick)
                    .min(self.cumulative.len() - 1);
                let (px, py) = (
                    (i as u32 % self.size[0]) as f32,
                    (i as u32 / self.size[0]) as f32,
                );
                let (jx, jy, jz) = (rng.unit(), rng.unit(), rng.unit() - 0.5);
                let relief = (self.brightness[i] - 0.5) * self.radius * 0.25;
                [
                    (px + jx - w * 0.5) * scale,
                    (h * 0.5 - py - jy) * scale,
                    relief + jz * scale * 4.0,
                ]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attractions_gather_where_the_picture_is_bright() {
        let dir =
            std::env::temp_dir().join(format!("sylva_picture_attractions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        let path = dir.join("half.png");
        // Left half black, right half white.
        let image = image::RgbImage::from_fn(16, 8, |x, _| {
            image::Rgb(if x < 8 { [0; 3] } else { [255; 3] })
        });
        image.save(&path).unwrap_or_else(|e| panic!("{e}"));
        let Ok(picture) = PictureAttractions::load(&path, 4.0) else {
            panic!("the picture loads");
        };
        let points = picture.points(2000, 7);
        assert_eq!(points.len(), 2000);
        assert!(
            points.iter().all(|p| p[0] >= 0.0 && p[0] <= 4.0),
            "only the white half"
        );
        assert!(
            points.iter().all(|p| p[1].abs() <= 2.0),
            "the plane keeps the aspect"
        );
        let dark = dir.join("dark.png");
        image::RgbImage::new(4, 4)
            .save(&dark)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            PictureAttractions::load(&dark, 1.0).is_err(),
            "a black picture grows nothing"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
