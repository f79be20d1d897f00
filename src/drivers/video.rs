//! `sylva render --video out.mp4`: raw RGBA frames piped into `ffmpeg`
//! (H.264, yuv420p, with the sound of `--audio` muxed in and cut to the
//! frames), so a music video comes out in one command; the same pipe
//! carries a recording's frames and a live stream's. ffmpeg is a program
//! on the PATH, not a library: nothing to build, any codec it has.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

/// Why the video could not be made.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// ffmpeg is not installed.
    #[error(
        "--video needs ffmpeg on the PATH, and none was found. Install it (Debian/Ubuntu: sudo apt install ffmpeg; macOS: brew install ffmpeg; Windows: winget install ffmpeg), or leave out --video and give --out DIR for PNG frames"
    )]
    NoFfmpeg,
    /// ffmpeg could not be started or fed.
    #[error("ffmpeg: {0}")]
    Pipe(#[from] std::io::Error),
    /// ffmpeg failed.
    #[error("ffmpeg failed ({status}) making {path}")]
    Failed {
        /// The video asked for.
        path: PathBuf,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
}

/// ffmpeg reading raw RGBA frames of `size` at `fps` from its input.
fn raw_input(size: [u32; 2], fps: f32) -> Command {
    let mut command = crate::engine::inputs::video::program("ffmpeg");
    command
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(["-f", "rawvideo", "-pix_fmt", "rgba"])
        .args(["-s", &format!("{}x{}", size[0], size[1])])
        .args(["-framerate", &fps.to_string()])
        .args(["-i", "-"]);
    command
}

/// Runs `command` below the show's scheduling priority: an encoder has
/// frames queued and may drop one (counted); the show has none to spare.
fn behind_the_show(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only async-signal-safe calls may
        // run; setpriority is one, and failing leaves the priority as it
        // was.
        unsafe {
            command.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, 10);
                Ok(())
            });
        }
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const BELOW_NORMAL_PRIORITY_CLASS: u32 = 0x0000_4000;
        command.creation_flags(BELOW_NORMAL_PRIORITY_CLASS);
    }
}

/// An ffmpeg process taking frames.
pub struct VideoWriter {
    child: Child,
    stdin: Option<ChildStdin>,
    path: PathBuf,
}

impl VideoWriter {
    /// Starts ffmpeg writing `path` from frames of `size` at `fps`, with
    /// the sound of `soundtrack` (cut to the video's length) if given.
    pub fn start(
        path: &Path,
        size: [u32; 2],
        fps: f32,
        soundtrack: Option<&Path>,
    ) -> Result<Self, VideoError> {
        let mut command = raw_input(size, fps);
        if let Some(sound) = soundtrack {
            command.arg("-i").arg(sound);
            command.args([
                "-map",
                "0:v",
                "-map",
                "1:a",
                "-c:a",
                "aac",
                "-b:a",
                "256k",
                "-shortest",
            ]);
        }
        command
            .args(["-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", "16"])
            // Even sizes for yuv420p.
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
            .arg(path);
        Self::spawn(command, path)
    }

    /// Starts ffmpeg recording a live show into `path`: a preset that
    /// keeps up in real time on a laptop (what OBS defaults to), below the
    /// show's scheduling priority so the show's frames come first.
    pub fn record(path: &Path, size: [u32; 2], fps: f32) -> Result<Self, VideoError> {
        let mut command = raw_input(size, fps);
        command
            .args(["-c:v", "libx264", "-preset", "veryfast", "-crf", "18"])
            .args(["-pix_fmt", "yuv420p"])
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
            .arg(path);
        behind_the_show(&mut command);
        Self::spawn(command, path)
    }

    /// Starts ffmpeg sending frames of `size` at `fps` live to `url`
    /// (`srt://`, `udp://`, `rtmp://`, `rtsp://`): H.264 tuned for latency,
    /// in MPEG-TS (FLV for RTMP, RTSP's own for RTSP).
    pub fn stream(url: &str, size: [u32; 2], fps: f32) -> Result<Self, VideoError> {
        let mut command = raw_input(size, fps);
        let container = match url.split_once("://").map(|(scheme, _)| scheme) {
            Some("rtmp" | "rtmps") => "flv",
            Some("rtsp") => "rtsp",
            _ => "mpegts",
        };
        let keyframes = (fps.round() as u32).max(1).to_string();
        command
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "ultrafast",
                "-tune",
                "zerolatency",
            ])
            .args(["-pix_fmt", "yuv420p", "-g", &keyframes])
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
            .args(["-f", container, url]);
        behind_the_show(&mut command);
        Self::spawn(command, Path::new(url))
    }

    fn spawn(mut command: Command, path: &Path) -> Result<Self, VideoError> {
        command.stdin(Stdio::piped());
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => VideoError::NoFfmpeg,
            _ => VideoError::Pipe(e),
        })?;
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            stdin,
            path: path.to_path_buf(),
        })
    }

    /// One frame of RGBA pixels.
    pub fn frame(&mut self, rgba: &[u8]) -> Result<(), VideoError> {
        match self.stdin.as_mut() {
            Some(stdin) => Ok(stdin.write_all(rgba)?),
            None => Err(VideoError::Pipe(std::io::Error::other(
                "ffmpeg's input closed",
            ))),
        }
    }

    /// Closes the input and waits for ffmpeg to finish the file.
    pub fn finish(mut self) -> Result<PathBuf, VideoError> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if status.success() {
            Ok(self.path)
        } else {
            Err(VideoError::Failed {
                path: self.path,
                status,
            })
        }
    }
}
