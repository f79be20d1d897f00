//! The HUD's preset buttons, each with its thumbnail
//! (`presets/thumbs/NAME.png`, made by `sylva thumbs`): a picture is read
//! and decoded once, at most one a frame (a frame never waits on a folder
//! of them), within bounds on its file and its size, and kept as an egui
//! texture; a missing or broken one leaves the button its name alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use image::ImageReader;

/// Bytes of a thumbnail file at most.
const MAX_FILE: u64 = 1 << 20;

/// Pixels along a thumbnail's side at most.
const MAX_SIDE: u32 = 1024;

/// The height a thumbnail is shown at on its button, in points.
const SHOWN_HEIGHT: f32 = 54.0;

/// The thumbnails read so far (`None`: none there, or not a picture).
pub struct PresetThumbs {
    folder: PathBuf,
    textures: HashMap<String, Option<egui::TextureHandle>>,
}

impl PresetThumbs {
    /// The thumbnails of the presets in `folder` (`presets/thumbs`).
    pub fn new(folder: PathBuf) -> Self {
        Self {
            folder,
            textures: HashMap::new(),
        }
    }

    /// A button for each of `names`, with its picture where it has one,
    /// the one `playing` marked; returns the one clicked.
    pub fn buttons(
        &mut self,
        ui: &mut egui::Ui,
        names: &[String],
        playing: Option<&str>,
    ) -> Option<String> {
        let mut read_one = false;
        let mut clicked = None;
        ui.horizontal_wrapped(|ui| {
            for name in names {
                if !self.textures.contains_key(name) && !read_one {
                    read_one = true;
                    let texture = read(&self.folder, name).map(|picture| {
                        let options = egui::TextureOptions::LINEAR;
                        ui.ctx()
                            .load_texture(format!("thumb {name}"), picture, options)
                    });
                    self.textures.insert(name.clone(), texture);
                }
                let picture = self.textures.get(name).and_then(Option::as_ref);
                let button = match picture {
                    Some(texture) => {
                        let [w, h] = texture.size();
                        let size =
                            egui::vec2(SHOWN_HEIGHT * w as f32 / h.max(1) as f32, SHOWN_HEIGHT);
                        let image =
                            egui::Image::new(egui::load::SizedTexture::new(texture.id(), size));
                        egui::Button::image_and_text(image, name.as_str())
                    }
                    None => egui::Button::new(name.as_str()),
                };
                if ui
                    .add(button.selected(playing == Some(name.as_str())))
                    .clicked()
                {
                    clicked = Some(name.clone());
                }
            }
        });
        // A preset gone from the folder lets its picture go.
        self.textures.retain(|name, _| names.contains(name));
        clicked
    }
}

/// The thumbnail of preset `name` in `folder`, if it is a plain name
/// whose file is a picture within [`MAX_FILE`] and [`MAX_SIDE`].
fn read(folder: &Path, name: &str) -> Option<egui::ColorImage> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !plain {
        return None;
    }
    let file = PathBuf::from(format!("{name}.png"));
    let bytes = crate::base::opener::read(folder, &file, MAX_FILE).ok()?;
    decode(&bytes)
}

/// `bytes` as a picture egui shows, refusing one wider or taller than
/// [`MAX_SIDE`] before it is decoded.
pub fn decode(bytes: &[u8]) -> Option<egui::ColorImage> {
    let mut reader = ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    reader.limits(limits);
    let picture = reader.decode().ok()?.to_rgba8();
    let size = [picture.width() as usize, picture.height() as usize];
    Some(egui::ColorImage::from_rgba_unmultiplied(
        size,
        picture.as_raw(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture = image::RgbaImage::from_pixel(width, height, image::Rgba([1, 2, 3, 255]));
        let mut bytes = Vec::new();
        picture
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .ok();
        bytes
    }

    #[test]
    fn a_thumbnail_decodes_and_a_huge_or_broken_one_is_refused() {
        let shown = decode(&png(32, 18));
        assert_eq!(shown.map(|p| p.size), Some([32, 18]));
        assert!(decode(&png(MAX_SIDE + 1, 4)).is_none(), "too wide");
        assert!(decode(b"not a picture").is_none());
    }

    #[test]
    fn only_a_plain_name_s_picture_is_read() {
        let folder = std::env::temp_dir().join(format!("sylva-hud-thumbs-{}", std::process::id()));
        std::fs::create_dir_all(&folder).ok();
        std::fs::write(folder.join("one.png"), png(8, 8)).ok();
        assert!(read(&folder, "one").is_some());
        assert!(read(&folder, "two").is_none(), "missing");
        assert!(read(&folder, "../one").is_none(), "a path");
        std::fs::remove_dir_all(folder).ok();
    }
}
