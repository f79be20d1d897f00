//! What a clip file is before it plays, and how ffmpeg may open it. The
//! file is opened through the show folder's
//! opener ([`crate::base::opener`]: no link on the way, a plain file: a
//! FIFO or a device never reaches ffmpeg) and handed to ffprobe and
//! ffmpeg as their standard input, which they read as a file
//! (`file:/dev/stdin`, seekable), so what plays is the file that was
//! checked. Only the `file` protocol and demuxers of self-contained
//! containers are allowed ([`DEMUXERS`]): a playlist or a list that names
//! other files (HLS, DASH, concat, image sequences) saved as `x.mp4` is
//! refused instead of playing something outside the show folder. ffprobe
//! runs within [`PROBE_LIMIT`] and is killed past it, or as soon as the
//! clip is no longer wanted.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::source::FrameLayout;
use super::video::{ClipInfo, MAX_VIDEO_FPS, MAX_VIDEO_SIDE};
use super::yuv::YuvColour;
use crate::base::child::{RunError, run_within};
use crate::base::opener::{self, OpenError, Opened};

/// How long ffprobe may take to say what a clip is.
pub const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// The demuxers a clip may be read by: containers and streams that hold
/// their own pictures and name no other file.
pub const DEMUXERS: [&str; 18] = [
    "mov",
    "matroska",
    "avi",
    "mpegts",
    "ogg",
    "flv",
    "gif",
    "mpeg",
    "asf",
    "mxf",
    "nut",
    "ivf",
    "yuv4mpegpipe",
    "h264",
    "hevc",
    "m4v",
    "apng",
    "mjpeg",
];

/// The largest clip file: far beyond an hour of ProRes at 4K; only a
/// sparse or endless file is larger.
pub const MAX_CLIP_BYTES: u64 = 1 << 40;

/// Why a clip was not opened or probed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The opener refused the file (a link, not a plain file, too large…).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The open file could not be handed on.
    #[error("{}: {error}", .path.display())]
    Handle {
        /// The clip.
        path: PathBuf,
        /// Why.
        #[source]
        error: std::io::Error,
    },
    /// ffprobe would not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// ffprobe ran past its time or was called off.
    #[error("ffprobe {0}")]
    Run(#[source] RunError),
    /// Read by a demuxer that is not allowed.
    #[error(transparent)]
    NotPlayed(#[from] NotPlayed),
    /// ffprobe could not read it: the last line it said.
    #[error("not a video ffmpeg can read ({0})")]
    Unreadable(String),
    /// What ffprobe said of it is no clip sylva plays.
    #[error(transparent)]
    Info(#[from] ClipInfoError),
}

/// Why ffmpeg or ffprobe did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The program is not on the PATH.
    #[error(
        "video needs {0} on the PATH, and none was found (Debian/Ubuntu: sudo apt install ffmpeg; macOS: brew install ffmpeg; Windows: winget install ffmpeg)"
    )]
    Missing(&'static str),
    /// It is there but would not start.
    #[error("{program} would not start: {error}")]
    WouldNotStart {
        /// `ffmpeg` or `ffprobe`.
        program: &'static str,
        /// Why.
        #[source]
        error: std::io::Error,
    },
}

/// A file read by a demuxer not in [`DEMUXERS`] (its name, as ffmpeg
/// gives it): it may name other files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a {0:?} file is not played (it may name other files, such as a playlist); clips are containers such as MP4, MOV, MKV, WebM, AVI, MPEG-TS"
)]
pub struct NotPlayed(pub String);

/// What ffprobe said of a clip that sylva does not play.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipInfoError {
    /// No width and height: no video stream.
    #[error("no video stream in it")]
    NoVideo,
    /// A side empty or over [`MAX_VIDEO_SIDE`].
    #[error("{width}x{height}: clips may be at most {MAX_VIDEO_SIDE} pixels a side")]
    TooLarge {
        /// Width in pixels.
        width: f64,
        /// Height in pixels.
        height: f64,
    },
    /// No rate, or one over [`MAX_VIDEO_FPS`].
    #[error("{0:.1} fps: clips may run at most {MAX_VIDEO_FPS} fps")]
    Rate(f64),
}

/// A clip opened from the show folder, checked to be a plain file there.
#[derive(Debug)]
pub struct ClipFile {
    opened: Opened,
}

impl ClipFile {
    /// Opens `relative` under the show folder `root`.
    pub fn open(root: &Path, relative: &Path) -> Result<Self, ProbeError> {
        let opened = opener::open(root, relative, MAX_CLIP_BYTES)?;
        Ok(Self { opened })
    }

    /// Adds the input to `command` (read by `demuxer` when known, else by
    /// any allowed one): ffmpeg's input options, then `-i`. The command's
    /// standard input must be [`ClipFile::stdin`].
    pub fn input(&self, command: &mut Command, demuxer: Option<&str>) {
        command
            .args(["-protocol_whitelist", "file"])
            .args(["-format_whitelist", &DEMUXERS.join(",")]);
        if let Some(demuxer) = demuxer {
            command.args(["-f", demuxer]);
        }
        // The very file checked, as the program's standard input, read as
        // a file: /dev/stdin opens what the descriptor holds.
        #[cfg(unix)]
        command.args(["-i", "file:/dev/stdin"]);
        #[cfg(not(unix))]
        {
            let mut input = std::ffi::OsString::from("file:");
            input.push(self.opened.path.as_os_str());
            command.arg("-i").arg(input);
        }
    }

    /// The open file, for sylva's own readers (a HAP clip's).
    pub fn file(&self) -> &std::fs::File {
        &self.opened.file
    }

    /// What the program reading the clip takes as its standard input.
    pub fn stdin(&self) -> Result<Stdio, ProbeError> {
        if cfg!(unix) {
            let file = self
                .opened
                .file
                .try_clone()
                .map_err(|error| ProbeError::Handle {
                    path: self.opened.path.clone(),
                    error,
                })?;
            Ok(Stdio::from(file))
        } else {
            Ok(Stdio::null())
        }
    }
}

/// The clip's first video stream's size, rate and length, and the
/// demuxer that reads it; ffprobe is killed past [`PROBE_LIMIT`] or once
/// `called_off` is set.
pub fn probe(
    clip: &ClipFile,
    called_off: &AtomicBool,
) -> Result<(ClipInfo, &'static str), ProbeError> {
    let mut command = program("ffprobe");
    command
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .args([
            "stream=width,height,avg_frame_rate,r_frame_rate,pix_fmt,color_space,color_range:format=duration,format_name",
        ])
        .args(["-of", "default=noprint_wrappers=1"]);
    clip.input(&mut command, None);
    // A few short lines; a hostile container cannot make them long.
    let running = run_within(
        &mut command,
        clip.stdin()?,
        (PROBE_LIMIT, 4096),
        Some(called_off),
    );
    let output = match running {
        Ok(output) => output,
        Err(RunError::Start(error)) => return Err(missing_ffmpeg("ffprobe", error).into()),
        Err(error) => return Err(ProbeError::Run(error)),
    };
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        if let Some(format) = refused_format(&said) {
            return Err(NotPlayed(format.to_string()).into());
        }
        let last = said
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(ProbeError::Unreadable(last.trim().to_string()));
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    Ok((parse_probe(&text)?, demuxer_of(&text)?))
}

/// The allowed demuxer ffprobe's `format_name` line names.
pub fn demuxer_of(text: &str) -> Result<&'static str, NotPlayed> {
    let names = text
        .lines()
        .find_map(|l| l.strip_prefix("format_name="))
        .unwrap_or_default()
        .trim();
    names
        .split(',')
        .find_map(|name| DEMUXERS.iter().find(|d| **d == name).copied())
        .ok_or_else(|| NotPlayed(names.to_string()))
}

/// The demuxer ffmpeg refused as not on the allowed list, from what it
/// said (`[hls @ 0x…] Format not on whitelist …`).
fn refused_format(said: &str) -> Option<&str> {
    let line = said.lines().find(|l| l.contains("not on whitelist"))?;
    line.strip_prefix('[')?.split(" @").next()
}

/// Reads ffprobe's `key=value` lines.
pub fn parse_probe(text: &str) -> Result<ClipInfo, ClipInfoError> {
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(str::trim)
    };
    let number = |key: &str| field(key).and_then(|v| v.parse::<f64>().ok());
    let rate = |key: &str| {
        let (n, d) = field(key)?.split_once('/')?;
        let (n, d) = (n.parse::<f64>().ok()?, d.parse::<f64>().ok()?);
        (d > 0.0 && n > 0.0).then(|| n / d)
    };
    let (Some(width), Some(height)) = (number("width"), number("height")) else {
        return Err(ClipInfoError::NoVideo);
    };
    let fps = rate("avg_frame_rate")
        .or_else(|| rate("r_frame_rate"))
        .unwrap_or(0.0);
    if !(width >= 1.0 && height >= 1.0)
        || width > f64::from(MAX_VIDEO_SIDE)
        || height > f64::from(MAX_VIDEO_SIDE)
    {
        return Err(ClipInfoError::TooLarge { width, height });
    }
    if !(fps > 0.0 && fps <= MAX_VIDEO_FPS) {
        return Err(ClipInfoError::Rate(fps));
    }
    let duration = number("duration")
        .filter(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(0.0);
    // 4:2:0 sources (nearly every clip) come as planes; others as RGBA.
    let pixels = field("pix_fmt").unwrap_or_default();
    let planar = ["yuv420p", "yuvj420p", "nv12", "nv21"]
        .iter()
        .any(|p| pixels.starts_with(p))
        .then(|| YuvColour {
            bt709: field("color_space") == Some("bt709"),
            full: pixels.starts_with("yuvj") || field("color_range") == Some("pc"),
        });
    Ok(ClipInfo {
        size: [width as u32, height as u32],
        fps,
        duration,
        layout: planar.map_or(FrameLayout::Rgba, FrameLayout::Planes),
        hap: None,
    })
}

/// The program `name` (`ffmpeg`, `ffprobe`): found on the PATH, or where
/// `SYLVA_FFMPEG` / `SYLVA_FFPROBE` say (an ffmpeg outside the PATH, as on
/// Windows often).
pub fn program(name: &str) -> Command {
    let variable = format!("SYLVA_{}", name.to_uppercase());
    Command::new(std::env::var_os(variable).unwrap_or_else(|| name.into()))
}

/// The error for a program that would not start.
pub fn missing_ffmpeg(program: &'static str, error: std::io::Error) -> StartError {
    if error.kind() == std::io::ErrorKind::NotFound {
        StartError::Missing(program)
    } else {
        StartError::WouldNotStart { program, error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_are_read_and_absurd_clips_refused() {
        let good =
            "width=1920\nheight=1080\nr_frame_rate=60/1\navg_frame_rate=60000/1001\nduration=4.5\n";
        let Ok(info) = parse_probe(good) else {
            panic!("a plain clip is read");
        };
        assert_eq!(info.size, [1920, 1080]);
        assert!((info.fps - 59.94).abs() < 0.01);
        assert_eq!(info.duration, 4.5);
        let huge = "width=30000\nheight=30000\navg_frame_rate=30/1\n";
        assert!(parse_probe(huge).is_err_and(|e| e.to_string().contains("4096")));
        let fast = "width=64\nheight=64\navg_frame_rate=100000/1\n";
        assert!(parse_probe(fast).is_err_and(|e| e.to_string().contains("240")));
        assert!(parse_probe("").is_err());
        let no_rate = "width=64\nheight=64\navg_frame_rate=0/0\nr_frame_rate=25/1\nduration=N/A\n";
        assert!(parse_probe(no_rate).is_ok_and(|i| i.fps == 25.0 && i.duration == 0.0));
    }

    #[test]
    fn only_containers_that_name_no_other_file_are_played() {
        let ok = |names: &str| demuxer_of(&format!("format_name={names}\n"));
        assert_eq!(ok("mov,mp4,m4a,3gp,3g2,mj2"), Ok("mov"));
        assert_eq!(ok("matroska,webm"), Ok("matroska"));
        for refused in [
            "hls",
            "concat",
            "dash",
            "image2",
            "tee",
            "webm_dash_manifest",
            "",
        ] {
            assert!(ok(refused).is_err(), "{refused}");
        }
        let said =
            "[hls @ 0x5598] Format not on whitelist 'mov'\nfile:/dev/stdin: Invalid argument\n";
        assert_eq!(refused_format(said), Some("hls"));
    }
}
