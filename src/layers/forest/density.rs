//! The density maps (SEEDS.md 003): grey images, 0..1, saying how dense
//! the artist wants the forest per place and height band. Read from PNG
//! files in the show's `assets/`, read again whenever a file changes (so a
//! paint program edits the forest while it grows), and painted live by a
//! brush that MIDI, OSC or Lua drive. A map that cannot be read is
//! reported and the last good one stays.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::base::{AssetError, Assets, inside_show};

/// Density maps (5 in the paper, 4 m apart).
pub const MAPS: usize = 5;

/// Why a density map could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DensityError {
    /// The name leaves the show's assets.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// The file is missing or not an image.
    #[error("{file}: {reason}")]
    Image {
        /// The file.
        file: String,
        /// What the image reader said.
        reason: image::ImageError,
    },
}

/// The maps' values, map after map, `size` x `size` each, and the files
/// they came from with the times they were read.
#[derive(Debug, Clone, PartialEq)]
pub struct DensityMaps {
    size: u32,
    values: Vec<f32>,
    files: Vec<(String, Option<SystemTime>)>,
}

impl DensityMaps {
    /// Every map at `fill` (1: grow everywhere).
    pub fn uniform(size: u32, fill: f32) -> Self {
        Self {
            size,
            values: vec![fill; MAPS * (size as usize).pow(2)],
            files: Vec::new(),
        }
    }

    /// The values, map after map.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Reads `names` (comma-separated, map 0 first; an empty entry keeps a
    /// map full) when the list or one of its files changed since the last
    /// read. Returns whether anything was read, and the problems; a map
    /// that fails keeps its values.
    pub fn refresh(&mut self, assets: &Assets, names: &str) -> (bool, Vec<DensityError>) {
        let wanted: Vec<String> = names
            .split(',')
            .map(|n| n.trim().to_string())
            .take(MAPS)
            .collect();
        let stamped: Vec<(String, Option<SystemTime>)> = wanted
            .iter()
            .map(|name| {
                let modified = path(assets, name)
                    .ok()
                    .flatten()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .and_then(|m| m.modified().ok());
                (name.clone(), modified)
            })
            .collect();
        if stamped == self.files {
            return (false, Vec::new());
        }
        let mut problems = Vec::new();
        let area = (self.size as usize).pow(2);
        for (map, (name, modified)) in stamped.iter().enumerate() {
            if self.files.get(map) == Some(&(name.clone(), *modified)) {
                continue;
            }
            let values = &mut self.values[map * area..(map + 1) * area];
            match load(assets, name, self.size) {
                Ok(Some(read)) => values.copy_from_slice(&read),
                Ok(None) => values.fill(1.0),
                Err(error) => problems.push(error),
            }
        }
        self.files = stamped;
        (true, problems)
    }

    /// Paints `value` into map `map` within `radius` pixels of `centre`
    /// (pixels); returns the rows touched, for the upload.
    pub fn paint(
        &mut self,
        map: usize,
        centre: [f32; 2],
        radius: f32,
        value: f32,
    ) -> std::ops::Range<usize> {
        let size = self.size as usize;
        let map = map.min(MAPS - 1);
        let lo = ((centre[1] - radius).floor().max(0.0) as usize).min(size);
        let hi = ((centre[1] + radius).ceil().max(0.0) as usize + 1).min(size);
        for y in lo..hi {
            for x in 0..size {
                let d = [x as f32 + 0.5 - centre[0], y as f32 + 0.5 - centre[1]];
                if d[0] * d[0] + d[1] * d[1] <= radius * radius {
                    self.values[map * size * size + y * size + x] = value.clamp(0.0, 1.0);
                }
            }
        }
        map * size + lo..map * size + hi
    }
}

/// Where density map `name` lies in the show's `assets/` (none when empty).
fn path(assets: &Assets, name: &str) -> Result<Option<PathBuf>, AssetError> {
    if name.is_empty() {
        return Ok(None);
    }
    Ok(Some(assets.root().join("assets").join(inside_show(name)?)))
}

/// A grey image scaled to `size` x `size`, its rows from the top as the
/// map's y.
fn load(assets: &Assets, name: &str, size: u32) -> Result<Option<Vec<f32>>, DensityError> {
    let Some(file) = path(assets, name)? else {
        return Ok(None);
    };
    let image = image::open(&file).map_err(|reason| DensityError::Image {
        file: format!("assets/{name}"),
        reason,
    })?;
    let grey = image::imageops::resize(
        &image.to_luma32f(),
        size,
        size,
        image::imageops::FilterType::Triangle,
    );
    Ok(Some(
        grey.pixels().map(|p| p.0[0].clamp(0.0, 1.0)).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_brush_paints_a_disc_into_one_map() {
        let mut maps = DensityMaps::uniform(16, 1.0);
        let rows = maps.paint(1, [8.0, 8.0], 3.0, 0.0);
        let area = 256;
        let zeroed = maps.values()[area..2 * area]
            .iter()
            .filter(|&&v| v == 0.0)
            .count();
        assert!((24..=32).contains(&zeroed), "a disc of radius 3: {zeroed}");
        assert!(
            maps.values()[..area].iter().all(|&v| v == 1.0),
            "map 0 untouched"
        );
        assert_eq!(rows, 16 + 5..16 + 12);
    }
}
