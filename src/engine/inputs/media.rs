//! The media shelf: every file and clip a texture input names, opened
//! when a parameter first names it, uploaded once per new frame, closed
//! when nothing names it any more. Each frame [`MediaShelf::prepare`]
//! reads the texture parameters of the registries on stage and the
//! sources layers name themselves, so a layer only ever asks for a
//! texture by its source's name.
//!
//! A source that fails (missing, not an image, over the limits) is an
//! error on screen under its name; its last good frame stays, and a black
//! texture stands in before it has one. A file the show's watcher says was
//! saved again is read again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::camera::{Cameras, SystemCameras, is_camera};
use super::cube;
use super::hap::gpu::{HapConverter, HapFrame, takes_blocks};
use super::keyboard::Keyboard;
use super::sound::SoundTexture;
use super::source::{FrameLayout, Opening, Playing, SOURCES, SourceKind, TextureSource, kind_of};
use super::still::{DecodedImage, Still, StillError};
use super::video::{Decoding, PlayError, Transport, Video};
use super::yuv::{YuvConverter, YuvFrame};
use crate::base::status::ErrorLog;
use crate::base::{AssetError, Assets, ChangedFile, Folder, inside_show};
use crate::gpu::image::{image_texture, write_image};
use crate::gpu::{BuildError, Gpu};
use crate::params::{ParamKind, Registry, Value};

/// The folder of the show that media come from.
pub const MEDIA_FOLDER: &str = "media";

/// Media textures: 8-bit sRGB, decoded to linear when sampled.
const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// File endings read as still images; every other file is a clip.
pub const STILLS: [&str; 5] = ["png", "jpg", "jpeg", "tif", "tiff"];

/// Whether `name` is a source the shelf serves: one of [`SOURCES`].
pub fn is_media(name: &str) -> bool {
    kind_of(name).is_some()
}

/// `media/NAME`: a file of the show's `media/` folder, a picture
/// (`png`, `jpg`, `tif`) or a folder of a cube map's six faces read as a
/// still, anything else played as a clip.
pub const FILES: SourceKind = SourceKind {
    form: "media/NAME",
    names: |name| name.starts_with("media/"),
    well_formed: |name| crate::base::inside_show(name).is_ok(),
    file: true,
    open: |opening| {
        let (root, relative) = opening.place;
        let ending = (relative.extension())
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if STILLS.contains(&ending.as_str()) || cube::is_folder(root, relative) {
            Box::new(Still::start(root.to_path_buf(), relative.to_path_buf()))
        } else {
            let place = (root.to_path_buf(), relative.to_path_buf());
            Box::new(Video::open(place, opening.transport, opening.decoding))
        }
    },
};

/// Why a source on the shelf shows no (new) picture: said on screen
/// under its name.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The name leaves the show folder.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// The file could not be looked at.
    #[error("cannot read {name}: {error}")]
    Metadata {
        /// The source's name.
        name: String,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// A camera is not there or went away. Free text: it is assembled in
    /// `camera` from what each feed (the system's, or a test's) says.
    #[error("{0}")]
    Camera(String),
    /// The screen or a window cannot be captured.
    #[error("{0}")]
    Screen(String),
    /// A Spout sender is not there, or went (or this is not Windows).
    #[error("{0}")]
    Spout(String),
    /// A Syphon server is not there, or went (or this is not macOS).
    #[error("{0}")]
    Syphon(String),
    /// An NDI source is not there, or fell silent.
    #[error(transparent)]
    Ndi(crate::base::ndi::NdiError),
    /// A still image or a cube map was not read.
    #[error(transparent)]
    Still(#[from] StillError),
    /// A clip does not play.
    #[error(transparent)]
    Play(#[from] PlayError),
    /// No source serves the name.
    #[error("{name:?} is not a source: name {forms}")]
    Unknown {
        /// The name.
        name: String,
        /// How each source's names are written.
        forms: String,
    },
}

/// One source on the shelf.
struct Shelved {
    kind: &'static SourceKind,
    source: Box<dyn TextureSource>,
    /// A clip's planes or blocks, which a pass turns into `texture`.
    on_gpu: Option<OnGpu>,
    /// Pictures uploaded and the seconds their uploads took.
    uploads: (u64, f64),
    texture: Option<(wgpu::Texture, wgpu::TextureView)>,
    modified: Option<SystemTime>,
    /// The watcher said its file, or a file in its folder, was saved.
    saved: Saved,
    /// The show folder and the file's name in it.
    place: (PathBuf, PathBuf),
}

/// What a clip's frames are uploaded into before they become its texture.
enum OnGpu {
    /// 4:2:0 planes (boxed: three textures and their views).
    Planes(Box<YuvFrame>),
    /// HAP's BC textures (boxed, as the planes are).
    Blocks(Box<HapFrame>),
}

/// The passes that turn uploaded frames into textures, each made for the
/// first clip that needs it.
#[derive(Default)]
struct Converters {
    yuv: Option<YuvConverter>,
    hap: Option<HapConverter>,
}

impl Converters {
    /// Makes the pass frames of `layout` need, if not made yet.
    fn ready(&mut self, gpu: &Gpu, assets: &Assets, layout: FrameLayout) -> Result<(), BuildError> {
        match layout {
            FrameLayout::Planes(_) if self.yuv.is_none() => {
                self.yuv = Some(YuvConverter::new(gpu, assets)?);
            }
            FrameLayout::Blocks(_) if self.hap.is_none() => {
                self.hap = Some(HapConverter::new(gpu, assets)?);
            }
            _ => {}
        }
        Ok(())
    }
}

/// What the watcher said of a source's file since its last frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Saved {
    /// Nothing.
    No,
    /// The file itself was saved.
    File,
    /// A file inside it (a folder) was.
    Inside,
}

/// Every media source named on stage, with its texture.
pub struct MediaShelf {
    shelved: HashMap<String, Shelved>,
    lockstep: bool,
    black: wgpu::TextureView,
    cameras: Arc<dyn Cameras>,
    keyboard: Keyboard,
    sound: SoundTexture,
    converters: Converters,
    /// Whether clips come as planes to convert here (on a GPU, yes; on a
    /// software adapter ffmpeg's converter is far cheaper than a shader
    /// run on the CPU: 38 ms a 1080p frame on lavapipe), whether HAP's
    /// blocks are uploaded as they are (where the device has BC
    /// compression), and the canvas clips are scaled down to fit.
    decoding: Decoding,
    /// Whether the device has BC compression.
    bc: bool,
}

impl MediaShelf {
    /// An empty shelf on `gpu`.
    pub fn new(gpu: &Gpu) -> Self {
        let (_, black) = image_texture(gpu, "media.black", [1, 1], FORMAT);
        // A new texture is zeroed: transparent black.
        Self {
            shelved: HashMap::new(),
            lockstep: false,
            black,
            cameras: Arc::new(SystemCameras),
            keyboard: Keyboard::new(gpu),
            sound: SoundTexture::new(gpu),
            converters: Converters::default(),
            decoding: Decoding {
                planes: gpu.info.device_type != wgpu::DeviceType::Cpu,
                blocks: takes_blocks(&gpu.device),
                ..Decoding::default()
            },
            bc: takes_blocks(&gpu.device),
        }
    }

    /// Has HAP clips opened from now on uploaded as BC blocks (`true`,
    /// where the device has BC compression) or decoded on the CPU.
    pub fn set_blocks(&mut self, blocks: bool) {
        self.decoding.blocks = blocks && self.bc;
    }

    /// Has clips opened from now on come as planes converted on the GPU
    /// (`true`) or as RGBA from ffmpeg, whatever the adapter.
    pub fn set_planes(&mut self, planes: bool) {
        self.decoding.planes = planes;
    }

    /// Clips opened from now on are decoded no larger than `canvas` (the
    /// renderer sets it each frame to the render size).
    pub fn fit_clips_to(&mut self, canvas: [u32; 2]) {
        self.decoding.fit = Some(canvas);
    }

    /// Takes camera pictures from `cameras` (a test's own) from now on.
    pub fn set_cameras(&mut self, cameras: Arc<dyn Cameras>) {
        self.cameras = cameras;
        self.shelved.retain(|name, _| !is_camera(name));
    }

    /// A line per source on the shelf: pictures uploaded, the mean upload
    /// time, and for a clip the frames shown and passed over.
    pub fn report(&self) -> Vec<String> {
        let mut lines: Vec<String> = (self.shelved.iter())
            .map(|(name, shelved)| {
                let (uploads, seconds) = shelved.uploads;
                let mean = seconds * 1e3 / uploads.max(1) as f64;
                let clip = shelved.source.report();
                format!("{name}: {uploads} uploads, {mean:.2} ms each{clip}")
            })
            .collect();
        lines.sort();
        lines
    }

    /// Key `code` (the browser's `keyCode`) went down or up in the window.
    pub fn key(&mut self, code: u8, down: bool) {
        self.keyboard.key(code, down);
    }

    /// The keyboard's texture.
    pub fn keyboard(&self) -> &wgpu::TextureView {
        self.keyboard.view()
    }

    /// The latest hop the show heard: its `spectrum` and `wave`, 512
    /// bytes each.
    pub fn hear(&mut self, spectrum: &[u8], wave: &[u8]) {
        self.sound.hear(spectrum, wave);
    }

    /// The sound's texture.
    pub fn sound(&self) -> &wgpu::TextureView {
        self.sound.view()
    }

    /// One row of the sound's texture ([`SoundTexture::row`]).
    pub fn sound_row(&self, spectrum: bool) -> &wgpu::TextureView {
        self.sound.row(spectrum)
    }

    /// What stands in for a source that is not there (yet).
    pub fn black(&self) -> &wgpu::TextureView {
        &self.black
    }

    /// In lockstep (`sylva render`) clips wait for the frame show time
    /// asks for, so every render is the same.
    pub fn set_lockstep(&mut self, lockstep: bool) {
        self.lockstep = lockstep;
    }

    /// The texture of source `name`, once it has a frame.
    pub fn texture(&self, name: &str) -> Option<&wgpu::TextureView> {
        self.shelved
            .get(name)?
            .texture
            .as_ref()
            .map(|(_, view)| view)
    }

    /// The size of source `name`'s texture, once it has a frame.
    pub fn texture_size(&self, name: &str) -> Option<[u32; 2]> {
        let (texture, _) = self.shelved.get(name)?.texture.as_ref()?;
        Some([texture.width(), texture.height()])
    }

    /// Marks the sources whose files the watcher's `changed` says were
    /// saved: each is read again at its next frame, if it changed.
    pub fn saved(&mut self, changed: &[ChangedFile]) {
        for file in changed.iter().filter(|c| c.folder == Folder::Media) {
            let path = format!("{MEDIA_FOLDER}/{}", file.name);
            for (name, shelved) in &mut self.shelved {
                if *name == path {
                    shelved.saved = Saved::File;
                } else if path.starts_with(&format!("{name}/")) {
                    shelved.saved = Saved::Inside;
                }
            }
        }
    }

    /// Opens what `registries`' texture inputs and the layers' own
    /// `named` sources name, closes what they no longer name, and uploads
    /// each source's new frame; `dt` seconds on.
    pub fn prepare(
        &mut self,
        gpu: &Gpu,
        assets: &Assets,
        errors: &ErrorLog,
        registries: &[&Registry],
        named: &[&str],
        dt: f32,
    ) {
        self.keyboard.upload(gpu);
        self.sound.upload(gpu);
        let mut wanted = wanted(registries);
        for source in named.iter().filter(|source| is_media(source)) {
            // A source no parameter names has no transport of its own: a
            // clip plays at its rate and loops.
            wanted.entry(source.to_string()).or_default();
        }
        self.shelved.retain(|name, _| wanted.contains_key(name));
        for (name, transport) in &wanted {
            if !self.shelved.contains_key(name) {
                match open(assets, name, *transport, self.decoding) {
                    Ok(shelved) => {
                        self.shelved.insert(name.clone(), shelved);
                    }
                    Err(why) => {
                        errors.report(name, why);
                        continue;
                    }
                }
            }
            let Some(shelved) = self.shelved.get_mut(name) else {
                continue;
            };
            shelved.reopen_if_saved(name, *transport, self.decoding);
            let playing = Playing {
                dt: f64::from(dt),
                transport: *transport,
                lockstep: self.lockstep,
            };
            match shelved.source.advance(playing, &*self.cameras) {
                Ok(Some(picture)) => {
                    let layout = shelved.source.layout();
                    if let Err(why) = self.converters.ready(gpu, assets, layout) {
                        errors.report(name, why);
                    }
                    shelved.upload(gpu, name, &self.converters, &picture);
                    shelved.source.give_back(picture.rgba);
                    errors.clear(name);
                }
                Ok(None) => {}
                Err(why) => {
                    // A camera that is gone shows black, a file its last
                    // good frame.
                    if shelved.source.black_when_lost() {
                        shelved.texture = None;
                    }
                    errors.report(name, why);
                }
            }
        }
    }
}

/// The media sources the texture inputs of `registries` name, each with
/// the transport of the first input naming it.
fn wanted(registries: &[&Registry]) -> HashMap<String, Transport> {
    let mut wanted = HashMap::new();
    for registry in registries {
        for (spec, _) in registry.iter() {
            if spec.kind != ParamKind::Texture {
                continue;
            }
            let Some(Value::Text(source)) = registry.target(&spec.name) else {
                continue;
            };
            if !is_media(source) || wanted.contains_key(source) {
                continue;
            }
            let number = |suffix: &str, fallback: f32| {
                registry
                    .get(&format!("{}_{suffix}", spec.name))
                    .and_then(Value::as_f32)
                    .unwrap_or(fallback)
            };
            let transport = Transport {
                speed: number("speed", 1.0),
                looping: number("loop", 1.0) != 0.0,
                position: registry
                    .target(&format!("{}_position", spec.name))
                    .and_then(Value::as_f32)
                    .unwrap_or(0.0),
            };
            wanted.insert(source.clone(), transport);
        }
    }
    wanted
}

/// Puts `name` on the shelf: a still image or a clip, by its ending.
fn open(
    assets: &Assets,
    name: &str,
    transport: Transport,
    decoding: Decoding,
) -> Result<Shelved, MediaError> {
    let kind = kind_of(name).ok_or_else(|| MediaError::Unknown {
        name: name.to_string(),
        forms: SOURCES
            .iter()
            .map(|k| k.form)
            .collect::<Vec<_>>()
            .join(" or "),
    })?;
    let (place, modified) = if kind.file {
        let relative = inside_show(name)?;
        // Looked at here without opening; the worker opens it through the
        // opener, which refuses a link, a FIFO or a device.
        let modified = std::fs::symlink_metadata(assets.root().join(relative))
            .map_err(|error| MediaError::Metadata {
                name: name.to_string(),
                error,
            })?
            .modified()
            .ok();
        let place = (assets.root().to_path_buf(), relative.to_path_buf());
        (place, modified)
    } else {
        ((PathBuf::new(), PathBuf::new()), None)
    };
    let source = (kind.open)(&Opening {
        name,
        place: (&place.0, &place.1),
        transport,
        decoding,
    });
    Ok(Shelved {
        kind,
        source,
        on_gpu: None,
        uploads: (0, 0.0),
        texture: None,
        modified,
        saved: Saved::No,
        place,
    })
}

impl Shelved {
    /// Reads the file again when the watcher said it was saved and it
    /// changed since (an event that left it as it was does not restart a
    /// clip), or a file in its folder was (a cube map's faces).
    fn reopen_if_saved(&mut self, name: &str, transport: Transport, decoding: Decoding) {
        let saved = std::mem::replace(&mut self.saved, Saved::No);
        if saved == Saved::No || !self.kind.file {
            return;
        }
        let modified = std::fs::symlink_metadata(self.place.0.join(&self.place.1))
            .ok()
            .and_then(|m| m.modified().ok());
        if saved == Saved::Inside || modified.is_some() && modified != self.modified {
            self.modified = modified;
            self.source = (self.kind.open)(&Opening {
                name,
                place: (&self.place.0, &self.place.1),
                transport,
                decoding,
            });
        }
    }

    /// Writes `picture` into the source's texture, made (again) at its
    /// size; a clip's planes or blocks are converted into it on the GPU.
    fn upload(&mut self, gpu: &Gpu, name: &str, converters: &Converters, picture: &DecodedImage) {
        let started = Instant::now();
        let size = picture.size;
        match (self.source.layout(), &converters.yuv, &converters.hap) {
            (FrameLayout::Planes(colour), Some(converter), _) => {
                if !matches!(&self.on_gpu, Some(OnGpu::Planes(p)) if p.fits(size)) {
                    let planes = YuvFrame::new(gpu, name, size, colour);
                    self.texture =
                        Some((planes.colour.texture.clone(), planes.colour.view.clone()));
                    self.on_gpu = Some(OnGpu::Planes(Box::new(planes)));
                }
                if let Some(OnGpu::Planes(planes)) = &self.on_gpu {
                    planes.convert(gpu, converter, &picture.rgba);
                }
            }
            (FrameLayout::Blocks(codec), _, Some(converter)) => {
                if !matches!(&self.on_gpu, Some(OnGpu::Blocks(f)) if f.fits(codec, size)) {
                    let frame = HapFrame::new(gpu, converter, name, size, codec);
                    self.texture = Some((frame.colour.texture.clone(), frame.colour.view.clone()));
                    self.on_gpu = Some(OnGpu::Blocks(Box::new(frame)));
                }
                if let Some(OnGpu::Blocks(frame)) = &self.on_gpu {
                    frame.convert(gpu, converter, &picture.rgba);
                }
            }
            (FrameLayout::Rgba, _, _) => self.write(gpu, name, picture),
            // Its pass failed to build: said already.
            _ => {}
        }
        self.uploads = (
            self.uploads.0 + 1,
            self.uploads.1 + started.elapsed().as_secs_f64(),
        );
    }

    fn write(&mut self, gpu: &Gpu, name: &str, picture: &DecodedImage) {
        let fits =
            (self.texture.as_ref()).is_some_and(|(t, _)| [t.width(), t.height()] == picture.size);
        if !fits {
            self.texture = Some(image_texture(gpu, name, picture.size, FORMAT));
        }
        if let Some((texture, _)) = &self.texture {
            write_image(gpu, texture, &picture.rgba);
        }
    }
}
