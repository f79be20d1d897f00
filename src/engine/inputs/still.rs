//! Still images from the show's `media/` folder (PNG, JPEG, TIFF), decoded on a
//! worker thread so a large file never holds up a frame, within limits a
//! hostile file cannot talk its way past: only a plain file is opened
//! (no link, FIFO or device), the header's dimensions are checked before
//! anything is decoded, and the decoder's allocations are capped.

use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError, sync_channel};

use super::camera::Cameras;
use super::cube::CubeError;
use super::media::MediaError;
use super::source::{Playing, TextureSource};
use crate::base::opener::{self, OpenError};

/// The longest side of an image: 8192 pixels.
pub const MAX_IMAGE_SIDE: u32 = 8192;

/// The most a decoder may allocate for one image: 256 MiB (an 8192²
/// RGBA image).
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;

/// An image decoded to RGBA8 in sRGB, rows top first: a still's pixels,
/// or a clip's or a camera's frame on the media shelf.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedImage {
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// `size[0] * size[1] * 4` bytes.
    pub rgba: Vec<u8>,
}

/// The largest picture file read: an 8192² picture stored without
/// compression, and more than any PNG or JPEG of one needs.
pub const MAX_PICTURE_FILE_BYTES: u64 = 256 << 20;

/// Why a still image was not read.
#[derive(Debug, thiserror::Error)]
pub enum StillError {
    /// The opener refused the file (a link, not a plain file, too large…).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Reading the file failed.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// The header is not one of an image format sylva reads.
    #[error("not an image sylva reads (PNG, JPEG, TIFF): {0}")]
    NotAnImage(#[source] image::ImageError),
    /// The header's size is empty or over [`MAX_IMAGE_SIDE`].
    #[error("{width}x{height}: images may be at most {MAX_IMAGE_SIDE} pixels a side")]
    TooLarge {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
    /// The pixels did not decode.
    #[error("{0}")]
    Decode(#[source] image::ImageError),
    /// The decoder panicked.
    #[error("the decoder failed on this file")]
    DecoderFailed,
    /// No worker thread could be started.
    #[error("no thread to read it: {0}")]
    NoThread(#[source] std::io::Error),
    /// The worker went away without an answer.
    #[error("the reader stopped")]
    Stopped,
    /// A cube map's folder could not be read.
    #[error(transparent)]
    Cube(Box<CubeError>),
}

impl From<CubeError> for StillError {
    fn from(error: CubeError) -> Self {
        Self::Cube(Box::new(error))
    }
}

/// Reads `relative` under the show folder `root` as an image, through
/// [the opener](crate::base::opener) (no link on the way, a plain file,
/// never blocking), refusing what is over the limits before it is decoded.
pub fn decode_in(root: &Path, relative: &Path) -> Result<DecodedImage, StillError> {
    let opened = opener::open(root, relative, MAX_PICTURE_FILE_BYTES)?;
    decode_file(opened.file)
}

/// Reads a path a person typed as an image: links are followed, but only
/// a plain file is read, within the same limits.
pub fn decode(path: &Path) -> Result<DecodedImage, StillError> {
    let opened = opener::open_typed(path, MAX_PICTURE_FILE_BYTES)?;
    decode_file(opened.file)
}

/// Decodes an open file: its header's size first, then the pixels under
/// capped allocations.
fn decode_file(file: std::fs::File) -> Result<DecodedImage, StillError> {
    let mut buffered = BufReader::new(file);
    let reader = image::ImageReader::new(&mut buffered)
        .with_guessed_format()
        .map_err(StillError::Read)?;
    let (width, height) = reader.into_dimensions().map_err(StillError::NotAnImage)?;
    if width.max(height) > MAX_IMAGE_SIDE || width == 0 || height == 0 {
        return Err(StillError::TooLarge { width, height });
    }
    buffered
        .seek(SeekFrom::Start(0))
        .map_err(StillError::Read)?;
    let mut reader = image::ImageReader::new(buffered)
        .with_guessed_format()
        .map_err(StillError::Read)?;
    reader.limits(limits());
    let image = reader.decode().map_err(StillError::Decode)?;
    let rgba = image.into_rgba8();
    Ok(DecodedImage {
        size: [rgba.width(), rgba.height()],
        rgba: rgba.into_raw(),
    })
}

/// What the decoder may be asked to do.
fn limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_IMAGE_BYTES);
    limits
}

/// A still on the shelf (a picture, or a folder of a cube map's faces):
/// its read, until its picture is taken.
pub struct Still(Option<StillLoad>);

impl Still {
    /// Starts reading `relative` under the show folder `root`.
    pub fn start(root: PathBuf, relative: PathBuf) -> Self {
        Self(Some(StillLoad::start(root, relative)))
    }
}

impl TextureSource for Still {
    fn advance(
        &mut self,
        playing: Playing,
        _cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError> {
        let Some(read) = self.0.as_ref() else {
            return Ok(None);
        };
        // In lockstep a still is waited for too, so a render's first
        // frame already shows it.
        let finished = if playing.lockstep {
            read.wait()
        } else {
            read.finished()
        };
        let Some(result) = finished else {
            return Ok(None);
        };
        self.0 = None;
        Ok(Some(result?))
    }
}

/// An image being read on a worker.
pub struct StillLoad {
    result: Receiver<Result<DecodedImage, StillError>>,
}

impl StillLoad {
    /// Starts reading `relative` under the show folder `root`: a picture,
    /// or a folder of a cube map's six faces.
    pub fn start(root: PathBuf, relative: PathBuf) -> Self {
        let (send, result) = sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("sylva media".into())
            .spawn(move || {
                let read = std::panic::catch_unwind(|| {
                    if super::cube::is_folder(&root, &relative) {
                        Ok(super::cube::decode_cube_in(&root, &relative)?)
                    } else {
                        decode_in(&root, &relative)
                    }
                })
                .unwrap_or(Err(StillError::DecoderFailed));
                send.send(read).ok();
            });
        if let Err(error) = spawned {
            let (send, result) = sync_channel(1);
            send.send(Err(StillError::NoThread(error))).ok();
            return Self { result };
        }
        Self { result }
    }

    /// The picture or the error, waiting for the worker (at most 30 s).
    pub fn wait(&self) -> Option<Result<DecodedImage, StillError>> {
        match self.result.recv_timeout(std::time::Duration::from_secs(30)) {
            Ok(read) => Some(read),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(StillError::Stopped)),
        }
    }

    /// The picture or the error, once the worker is done.
    pub fn finished(&self) -> Option<Result<DecodedImage, StillError>> {
        match self.result.try_recv() {
            Ok(read) => Some(read),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(Err(StillError::Stopped)),
        }
    }
}
