//! Cameras as texture sources: `camera` (the first one) or `camera:NAME`
//! (the first whose name contains NAME). The system's cameras come
//! through `ffmpeg` (v4l2 on Linux, AVFoundation on macOS, DirectShow on
//! Windows), scaled to [`CAMERA_SIZE`], on the same worker and bounded
//! queue as clips; a test brings its own [`Cameras`]. A camera that is not
//! there, or goes away, is an error on screen and a black texture, and is
//! looked for again every [`RETRY`], like the audio input.

use std::time::{Duration, Instant};

use super::decoder::{Decoded, Decoder, raw_output};
use super::media::MediaError;
use super::source::{FrameLayout, Playing, SourceKind, TextureSource};
use super::still::DecodedImage;
use super::video::{ClipInfo, program};

/// The size cameras are delivered at.
pub const CAMERA_SIZE: [u32; 2] = [1280, 720];
/// How often a camera that is not there is looked for.
pub const RETRY: Duration = Duration::from_secs(2);

/// Where camera pictures come from.
pub trait Cameras: Send + Sync {
    /// The cameras there now, by name.
    fn names(&self) -> Vec<String>;
    /// Starts camera `name`.
    fn open(&self, name: &str) -> Result<Box<dyn CameraFeed>, String>;
}

/// A camera that runs.
pub trait CameraFeed: Send {
    /// The newest picture since the last call, if there is one; an error
    /// when the camera went away.
    fn newest(&mut self) -> Result<Option<DecodedImage>, String>;
}

/// Whether `name` names a camera source.
pub fn is_camera(name: &str) -> bool {
    name == "camera" || name.starts_with("camera:")
}

/// `camera` or `camera:NAME`: a camera of the system (or a test's).
pub const SOURCE: SourceKind = SourceKind {
    form: "camera[:NAME]",
    names: is_camera,
    well_formed: |name| name == "camera" || name.len() > "camera:".len(),
    file: false,
    open: |opening| Box::new(CameraSource::new(opening.name)),
};

impl TextureSource for CameraSource {
    fn advance(
        &mut self,
        _playing: Playing,
        cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError> {
        CameraSource::advance(self, cameras).map_err(MediaError::Camera)
    }

    fn black_when_lost(&self) -> bool {
        true
    }
}

/// A camera source on the shelf: the one it asks for, when it runs.
pub struct CameraSource {
    wanted: Option<String>,
    feed: Option<(String, Box<dyn CameraFeed>)>,
    next_try: Instant,
}

impl CameraSource {
    /// The source `camera` or `camera:NAME`.
    pub fn new(name: &str) -> Self {
        Self {
            wanted: name.strip_prefix("camera:").map(str::to_lowercase),
            feed: None,
            next_try: Instant::now(),
        }
    }

    /// The newest picture, opening the camera when it is due; `Err` says
    /// why there is none (and the texture goes black).
    pub fn advance(&mut self, cameras: &dyn Cameras) -> Result<Option<DecodedImage>, String> {
        if self.feed.is_none() {
            if Instant::now() < self.next_try {
                return Ok(None);
            }
            self.next_try = Instant::now() + RETRY;
            let found = cameras.names().into_iter().find(|n| {
                self.wanted
                    .as_ref()
                    .is_none_or(|w| n.to_lowercase().contains(w))
            });
            let Some(name) = found else {
                return Err(match &self.wanted {
                    Some(w) => format!(
                        "no camera whose name contains {w:?}; looking again every {} s",
                        RETRY.as_secs()
                    ),
                    None => format!("no camera; looking again every {} s", RETRY.as_secs()),
                });
            };
            let feed = cameras
                .open(&name)
                .map_err(|e| format!("camera {name}: {e}"))?;
            tracing::info!("camera {name} opened");
            self.feed = Some((name, feed));
        }
        let Some((name, feed)) = self.feed.as_mut() else {
            return Ok(None);
        };
        match feed.newest() {
            Ok(picture) => Ok(picture),
            Err(why) => {
                let message = format!(
                    "camera {name} went away ({why}); looking again every {} s",
                    RETRY.as_secs()
                );
                self.feed = None;
                self.next_try = Instant::now() + RETRY;
                Err(message)
            }
        }
    }
}

/// The system's cameras, through ffmpeg.
pub struct SystemCameras;

impl Cameras for SystemCameras {
    fn names(&self) -> Vec<String> {
        system::names()
    }

    fn open(&self, name: &str) -> Result<Box<dyn CameraFeed>, String> {
        let input = system::input(name)?;
        let decoder = Decoder::run(move |_| {
            let mut command = program("ffmpeg");
            command.args(["-v", "error", "-nostdin"]).args(&input);
            let [w, h] = CAMERA_SIZE;
            command.args(["-vf", &format!("scale={w}:{h}")]);
            raw_output(&mut command, "rgba");
            let info = ClipInfo {
                size: CAMERA_SIZE,
                fps: 30.0,
                duration: 0.0,
                layout: FrameLayout::Rgba,
                hap: None,
            };
            Ok((command, info))
        });
        Ok(Box::new(FfmpegCamera { decoder }))
    }
}

/// A camera read by ffmpeg.
struct FfmpegCamera {
    decoder: Decoder,
}

impl CameraFeed for FfmpegCamera {
    fn newest(&mut self) -> Result<Option<DecodedImage>, String> {
        let mut newest = None;
        loop {
            // The feed's errors are text (a test's feed has its own).
            match self.decoder.next(false).map_err(|e| e.to_string())? {
                Some(Decoded::Frame(_, rgba)) => {
                    if let Some(older) = newest.replace(rgba) {
                        self.decoder.give_back(older);
                    }
                }
                Some(Decoded::Info(_)) => {}
                Some(Decoded::Ended) => return Err("it stopped sending".into()),
                Some(Decoded::Failed(why)) => return Err(why.to_string()),
                None => break,
            }
        }
        Ok(newest.map(|rgba| DecodedImage {
            size: CAMERA_SIZE,
            rgba,
        }))
    }
}

#[cfg(target_os = "linux")]
mod system {
    //! Video4Linux: `/sys/class/video4linux/videoN/name`, read by ffmpeg
    //! as `-f v4l2 -i /dev/videoN`.

    /// The capture devices' names, `videoN: NAME`.
    pub fn names() -> Vec<String> {
        let Ok(entries) = std::fs::read_dir("/sys/class/video4linux") else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .take(64)
            .filter_map(|e| {
                let node = e.file_name().to_string_lossy().into_owned();
                let name = std::fs::read_to_string(e.path().join("name")).ok()?;
                Some(format!("{node}: {}", name.trim()))
            })
            .collect();
        names.sort();
        names
    }

    /// ffmpeg's input arguments for camera `name`.
    pub fn input(name: &str) -> Result<Vec<String>, String> {
        let node = name.split(':').next().unwrap_or_default();
        if !node.starts_with("video") || !node[5..].chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("{name:?} is not a video4linux device"));
        }
        Ok(vec![
            "-f".into(),
            "v4l2".into(),
            "-i".into(),
            format!("/dev/{node}"),
        ])
    }
}

#[cfg(target_os = "macos")]
mod system {
    //! AVFoundation, listed by `ffmpeg -f avfoundation -list_devices true`.

    /// The video devices' names, `N: NAME`: the lines after "video
    /// devices" up to "audio devices", `[…] [N] NAME`.
    pub fn names() -> Vec<String> {
        let args = ["-f", "avfoundation", "-list_devices", "true", "-i", ""];
        let text = super::listing(&args);
        let mut inside = false;
        let mut names = Vec::new();
        for line in text.lines() {
            if line.contains("video devices") {
                inside = true;
            } else if line.contains("audio devices") {
                inside = false;
            } else if inside && let Some((_, rest)) = line.rsplit_once("] [") {
                names.push(rest.replacen("] ", ": ", 1));
            }
        }
        names
    }

    /// ffmpeg's input arguments for camera `name`.
    pub fn input(name: &str) -> Result<Vec<String>, String> {
        let index = name
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        Ok(vec![
            "-f".into(),
            "avfoundation".into(),
            "-framerate".into(),
            "30".into(),
            "-i".into(),
            index,
        ])
    }
}

#[cfg(target_os = "windows")]
mod system {
    //! DirectShow, listed by `ffmpeg -list_devices true -f dshow`.

    /// The video devices' names: the quoted names on the lines that end
    /// in `(video)`.
    pub fn names() -> Vec<String> {
        let args = ["-list_devices", "true", "-f", "dshow", "-i", "dummy"];
        super::listing(&args)
            .lines()
            .filter(|l| l.contains("(video)"))
            .filter_map(|l| l.split('"').nth(1).map(str::to_string))
            .collect()
    }

    /// ffmpeg's input arguments for camera `name`.
    pub fn input(name: &str) -> Result<Vec<String>, String> {
        Ok(vec![
            "-f".into(),
            "dshow".into(),
            "-i".into(),
            format!("video={name}"),
        ])
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos", target_os = "windows")))]
mod system {
    //! No camera support on this system.

    pub fn names() -> Vec<String> {
        Vec::new()
    }

    pub fn input(_: &str) -> Result<Vec<String>, String> {
        Err("cameras are not supported on this system".into())
    }
}

/// What ffmpeg prints on its standard error when asked to list devices
/// with `args` (at most 64 KiB; ffmpeg killed after 10 s).
#[cfg(any(target_os = "macos", target_os = "windows"))]
fn listing(args: &[&str]) -> String {
    let mut command = program("ffmpeg");
    command.args(args);
    let limit = (Duration::from_secs(10), 64 << 10);
    let stdin = std::process::Stdio::null();
    match crate::base::child::run_within(&mut command, stdin, limit, None) {
        Ok(output) => String::from_utf8_lossy(&output.stderr).into_owned(),
        Err(_) => String::new(),
    }
}
