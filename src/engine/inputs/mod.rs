//! Texture inputs: what a layer may bind, by name, each frame. The engine
//! names what it has: `below` (the composite of the layers beneath it),
//! `previous` (the layer's own last frame, for feedback) and `layer:ID`
//! (another layer's own output: this frame's for a layer beneath, the
//! last frame's for one above); the [`media::MediaShelf`] adds the files
//! and clips of the show's `media/` folder by their path (`media/clip.mp4`),
//! `keyboard` is the window's keys and `audio` the sound heard, as
//! Shadertoy shows them. A layer asks by name and never learns where a texture came from (nannou's ISF
//! pipeline, ruffle's bitmap handles).

pub mod camera;
pub mod cube;
pub mod decoder;
pub mod feed;
pub mod hap;
pub mod keyboard;
pub mod media;
pub mod ndi;
pub mod probe;
pub mod screen;
pub mod sound;
pub mod source;
pub mod spout;
pub mod still;
pub mod syphon;
pub mod video;
pub mod yuv;

use media::MediaShelf;

/// A texture input's value that names nothing a layer could be given: an
/// unknown scheme, or a malformed name of a known one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{name:?} is not a texture source: one of below, previous, layer:ID, {keyboard}, {sound}, {forms}, or \"\" for none",
    keyboard = keyboard::KEYBOARD,
    sound = sound::SOUND,
    forms = source::SOURCES.iter().map(|k| k.form).collect::<Vec<_>>().join(", ")
)]
pub struct UnknownTexture {
    /// The value as written.
    pub name: String,
}

/// Whether `name` is a texture input's value a layer can be given: the
/// engine's own names, another layer's output, or a well-formed name of
/// one of [`source::SOURCES`] (whether that file or camera is there is
/// for the show to find when it plays).
pub fn check_name(name: &str) -> Result<(), UnknownTexture> {
    let known = match name {
        "" | "below" | "previous" | keyboard::KEYBOARD | sound::SOUND => true,
        _ => match name.strip_prefix("layer:") {
            Some(id) => super::preset::is_layer_id(id),
            None => source::kind_of(name).is_some_and(|kind| (kind.well_formed)(name)),
        },
    };
    known.then_some(()).ok_or_else(|| UnknownTexture {
        name: name.to_string(),
    })
}

/// Where the other layers' outputs are found by id (the compositor's
/// targets), looked up only when a layer asks.
pub trait LayerOutputs {
    /// Layer `id`'s latest output, if it is on stage.
    fn output(&self, id: &str) -> Option<&wgpu::TextureView>;
}

/// The textures a layer may bind this frame.
pub struct TextureInputs<'a> {
    below: &'a wgpu::TextureView,
    previous: &'a wgpu::TextureView,
    /// The layer asking: its own output is `previous`, not `layer:` itself.
    own: &'a str,
    layers: &'a dyn LayerOutputs,
    media: &'a MediaShelf,
}

impl<'a> TextureInputs<'a> {
    /// The inputs of layer `own`: `below`, `previous`, every other
    /// layer's output by id, and the media on the shelf.
    pub fn new(
        below: &'a wgpu::TextureView,
        previous: &'a wgpu::TextureView,
        own: &'a str,
        layers: &'a dyn LayerOutputs,
        media: &'a MediaShelf,
    ) -> Self {
        Self {
            below,
            previous,
            own,
            layers,
            media,
        }
    }

    /// The latest sound heard as one row: the waveform, or the spectrum
    /// (an ISF file's `audio` and `audioFFT` images).
    pub fn sound_row(&self, spectrum: bool) -> &'a wgpu::TextureView {
        self.media.sound_row(spectrum)
    }

    /// The input called `name` (`below`, `previous`, `layer:ID`,
    /// `media/…`, `keyboard`, `audio`), if there is one.
    pub fn get(&self, name: &str) -> Option<&'a wgpu::TextureView> {
        match name {
            "below" => Some(self.below),
            "previous" => Some(self.previous),
            keyboard::KEYBOARD => Some(self.media.keyboard()),
            sound::SOUND => Some(self.media.sound()),
            _ if media::is_media(name) => self.media.texture(name),
            _ => {
                let id = name.strip_prefix("layer:").filter(|id| *id != self.own)?;
                self.layers.output(id)
            }
        }
    }

    /// The size of the input called `name`: a medium's own (black's
    /// 1 × 1 before it has a frame), the keyboard's 256 × 3, the sound's
    /// 512 × 2, else `render`
    /// (the layers' outputs are at the render size).
    pub fn size(&self, name: &str, render: [u32; 2]) -> [u32; 2] {
        match name {
            keyboard::KEYBOARD => keyboard::SIZE,
            sound::SOUND => sound::SIZE,
            _ if media::is_media(name) => self.media.texture_size(name).unwrap_or([1, 1]),
            _ => render,
        }
    }

    /// The input called `name`, or black where there is none (yet).
    pub fn get_or_black(&self, name: &str) -> &'a wgpu::TextureView {
        self.get(name).unwrap_or(self.media.black())
    }

    /// The composite of the layers beneath.
    pub fn below(&self) -> &'a wgpu::TextureView {
        self.below
    }

    /// The layer's own last frame.
    pub fn previous(&self) -> &'a wgpu::TextureView {
        self.previous
    }
}
