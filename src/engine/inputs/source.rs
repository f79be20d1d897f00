//! The sources the media shelf serves, in one list ([`SOURCES`], as
//! `layers::KINDS` is for layers): which names each takes, whether it is a
//! file of the show folder (watched, read again when saved) and how it
//! opens; and what each open source does every frame ([`TextureSource`]). A new
//! source (a network receiver, another decoder) is its own file with its
//! [`SourceKind`] and its `TextureSource`, plus one line here.

use std::path::Path;

use super::camera::{self, Cameras};
use super::hap::HapCodec;
use super::media::{self, MediaError};
use super::still::DecodedImage;
use super::video::{Decoding, Transport};
use super::yuv::YuvColour;
use super::{ndi, screen, spout, syphon};

/// How a source's frames come, and what the shelf does to upload them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FrameLayout {
    /// RGBA, 4 bytes a pixel: written as they are.
    #[default]
    Rgba,
    /// 4:2:0 planes in this colour, converted on the GPU.
    Planes(YuvColour),
    /// A HAP frame's BC blocks, uploaded as compressed textures and
    /// converted on the GPU.
    Blocks(HapCodec),
}

/// How a source plays this frame.
#[derive(Debug, Clone, Copy)]
pub struct Playing {
    /// Seconds since the last frame.
    pub dt: f64,
    /// Where a clip stands and how it moves.
    pub transport: Transport,
    /// Wait for each picture (a render) rather than show the newest due.
    pub lockstep: bool,
}

/// A source named on stage, open.
pub trait TextureSource {
    /// The next picture to show, if there is a new one.
    fn advance(
        &mut self,
        playing: Playing,
        cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError>;

    /// How its frames come.
    fn layout(&self) -> FrameLayout {
        FrameLayout::Rgba
    }

    /// A picture's pixels, uploaded, back for a later frame to fill.
    fn give_back(&mut self, _rgba: Vec<u8>) {}

    /// What the show's media report adds for it after its uploads.
    fn report(&self) -> String {
        String::new()
    }

    /// Whether losing it shows black (a camera) rather than its last good
    /// picture (a file).
    fn black_when_lost(&self) -> bool {
        false
    }
}

/// What a source is opened from.
pub struct Opening<'a> {
    /// Its name, as texture inputs write it (`media/clip.mp4`, `camera`).
    pub name: &'a str,
    /// The show folder, and the name inside it (for a file).
    pub place: (&'a Path, &'a Path),
    /// Where a clip starts and how it moves.
    pub transport: Transport,
    /// How a clip is decoded.
    pub decoding: Decoding,
}

/// One kind of source.
pub struct SourceKind {
    /// How its names are written, for messages.
    pub form: &'static str,
    /// Whether it serves this name (its scheme).
    pub names: fn(&str) -> bool,
    /// Whether a name it serves is well formed, so `sylva check` refuses
    /// one that could never open.
    pub well_formed: fn(&str) -> bool,
    /// Whether it is a file of the show folder: looked at before it opens,
    /// read again when the watcher says it was saved.
    pub file: bool,
    /// Opens it; what fails after is said by its frames.
    pub open: fn(&Opening<'_>) -> Box<dyn TextureSource>,
}

/// Every source, tried in order.
pub const SOURCES: &[&SourceKind] = &[
    &camera::SOURCE,
    &ndi::SOURCE,
    &screen::SOURCE,
    &spout::SOURCE,
    &syphon::SOURCE,
    &media::FILES,
];

/// The kind that serves `name`, if any.
pub fn kind_of(name: &str) -> Option<&'static SourceKind> {
    SOURCES.iter().copied().find(|kind| (kind.names)(name))
}
