//! The density maps: grey images, 0..1, saying how dense
//! the artist wants the forest per place and height band. Read from PNG
//! files in the show's `assets/`, read again whenever a file changes (so a
//! paint program edits the forest while it grows), and painted live by a
//! brush that MIDI, OSC or Lua drive. A map that cannot be read is
//! reported and the last good one stays. A file's size is read from its
//! header before anything is decoded (the file opened through the show
//! folder's opener: no link, FIFO or device), and a map saved while the
//! forest grows is decoded on a thread of its own, so no file stalls a
//! frame.

use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::time::SystemTime;

use crate::base::opener::{self, OpenError};
use crate::base::{AssetError, Assets, inside_show};
use crate::engine::inputs::still::MAX_PICTURE_FILE_BYTES;

/// Density maps (5 in the paper, 4 m apart).
pub const MAPS: usize = 5;

/// The largest side a map file may have: the largest map (`map_size`)
/// uses no more, and a bigger image would only be decoded to be shrunk.
pub const MAX_SIDE: u32 = 4096;

/// Bytes the decoder may allocate for one map file.
const MAX_DECODE_BYTES: u64 = 256 << 20;

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
    /// A link, a FIFO, a device or a file too large stands in its place.
    #[error(transparent)]
    Refused(#[from] OpenError),
    /// The image is larger than a map can use.
    #[error("{file}: {width} x {height} pixels; a density map is at most {MAX_SIDE} x {MAX_SIDE}")]
    TooLarge {
        /// The file.
        file: String,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
}

/// Maps read on their own thread: which files, and their values to come.
#[derive(Debug)]
struct DensityReading {
    files: Vec<(String, Option<SystemTime>)>,
    results: Receiver<Vec<(usize, MapRead)>>,
}

/// One map read: its values (none: the map is full), or why not.
type MapRead = Result<Option<Vec<f32>>, DensityError>;

/// The maps' values, map after map, `size` x `size` each, and the files
/// they came from with the times they were read.
#[derive(Debug)]
pub struct DensityMaps {
    size: u32,
    values: Vec<f32>,
    files: Vec<(String, Option<SystemTime>)>,
    reading: Option<DensityReading>,
}

impl DensityMaps {
    /// Every map at `fill` (1: grow everywhere).
    pub fn uniform(size: u32, fill: f32) -> Self {
        Self {
            size,
            values: vec![fill; MAPS * (size as usize).pow(2)],
            files: Vec::new(),
            reading: None,
        }
    }

    /// The values, map after map.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Reads `names` (comma-separated, map 0 first; an empty entry keeps a
    /// map full) when the list or one of its files changed since the last
    /// read. Returns whether anything was read, and the problems; a map
    /// that fails keeps its values. The first read after the forest is
    /// sown happens here, and with `at_once` (a render, which must be the
    /// same every time) every read; the others are decoded on their own
    /// thread and arrive a few frames after.
    pub fn refresh(
        &mut self,
        assets: &Assets,
        names: &str,
        at_once: bool,
    ) -> (bool, Vec<DensityError>) {
        if let Some(reading) = &self.reading {
            return match reading.results.try_recv() {
                Ok(read) => {
                    self.files = self.reading.take().map(|r| r.files).unwrap_or_default();
                    (true, self.apply(read))
                }
                Err(TryRecvError::Empty) => (false, Vec::new()),
                Err(TryRecvError::Disconnected) => {
                    self.reading = None;
                    (false, Vec::new())
                }
            };
        }
        let stamped: Vec<(String, Option<SystemTime>)> = names
            .split(',')
            .map(|n| n.trim().to_string())
            .take(MAPS)
            .map(|name| {
                let modified = path(assets.root(), &name)
                    .ok()
                    .flatten()
                    .and_then(|p| std::fs::symlink_metadata(p).ok())
                    .and_then(|m| m.modified().ok());
                (name, modified)
            })
            .collect();
        if stamped == self.files {
            return (false, Vec::new());
        }
        let jobs: Vec<(usize, String)> = stamped
            .iter()
            .enumerate()
            .filter(|(map, stamp)| self.files.get(*map) != Some(*stamp))
            .map(|(map, (name, _))| (map, name.clone()))
            .collect();
        let (root, size) = (assets.root().to_path_buf(), self.size);
        let read_all = move || -> Vec<(usize, MapRead)> {
            jobs.into_iter()
                .map(|(map, name)| (map, load(&root, &name, size)))
                .collect()
        };
        if self.files.is_empty() || at_once {
            self.files = stamped;
            let read = read_all();
            return (true, self.apply(read));
        }
        let (sender, results) = channel();
        let spawned = std::thread::Builder::new()
            .name("sylva-density".into())
            .spawn(move || sender.send(read_all()).ok());
        match spawned {
            Ok(_) => {
                self.reading = Some(DensityReading {
                    files: stamped,
                    results,
                });
                (false, Vec::new())
            }
            Err(error) => {
                tracing::warn!("density maps: no thread to read them on ({error})");
                (false, Vec::new())
            }
        }
    }

    /// Puts maps read into place; returns the problems.
    fn apply(&mut self, read: Vec<(usize, MapRead)>) -> Vec<DensityError> {
        let area = (self.size as usize).pow(2);
        let mut problems = Vec::new();
        for (map, result) in read {
            let values = &mut self.values[map * area..(map + 1) * area];
            match result {
                Ok(Some(read)) => values.copy_from_slice(&read),
                Ok(None) => values.fill(1.0),
                Err(error) => problems.push(error),
            }
        }
        problems
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

/// Where density map `name` lies in the show's `assets/` under `root`
/// (none when empty).
fn path(root: &Path, name: &str) -> Result<Option<PathBuf>, AssetError> {
    if name.is_empty() {
        return Ok(None);
    }
    Ok(Some(root.join("assets").join(inside_show(name)?)))
}

/// A grey image scaled to `size` x `size`, its rows from the top as the
/// map's y; its size is read from the header first.
fn load(root: &Path, name: &str, size: u32) -> MapRead {
    if path(root, name)?.is_none() {
        return Ok(None);
    }
    let shown = format!("assets/{name}");
    let image_error = |reason: image::ImageError| DensityError::Image {
        file: shown.clone(),
        reason,
    };
    // Through the opener: a plain file inside the show folder, no link,
    // FIFO or device, within a picture file's size.
    let relative = Path::new("assets").join(inside_show(name)?);
    let opened = opener::open(root, &relative, MAX_PICTURE_FILE_BYTES)?;
    let mut file = BufReader::new(opened.file);
    let (width, height) = image::ImageReader::new(&mut file)
        .with_guessed_format()
        .map_err(|e| image_error(e.into()))?
        .into_dimensions()
        .map_err(image_error)?;
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err(DensityError::TooLarge {
            file: shown,
            width,
            height,
        });
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    file.seek(SeekFrom::Start(0))
        .map_err(|e| image_error(e.into()))?;
    let mut reader = image::ImageReader::new(file)
        .with_guessed_format()
        .map_err(|e| image_error(e.into()))?;
    reader.limits(limits);
    let image = reader.decode().map_err(image_error)?;
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
