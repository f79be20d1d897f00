//! `sylva render --video out.mp4`: raw RGBA frames piped into `ffmpeg`
//! (H.264, yuv420p, with the sound of `--audio` muxed in and cut to the
//! frames), so a music video comes out in one command; the same pipe
//! carries a recording's frames and a live stream's. ffmpeg is a program
//! on the PATH, not a library: nothing to build, any codec it has. What it
//! says on its error output is kept ([`StderrTail`]): a file it made while
//! saying an error (a full disk, with exit status 0) is a failure.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::time::Duration;

use super::stderr_tail::StderrTail;
use crate::base::child::OwnedChild;

/// How long an encoder dropped before `finish` (a sink that failed, a
/// render that stopped) may write out its file before it is killed.
const UNFINISHED_GRACE: Duration = Duration::from_secs(2);

/// How long ffmpeg's last words are waited for once its input is closed
/// or broken (it has exited; the reader drains the pipe).
const LAST_WORDS: Duration = Duration::from_secs(2);

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
    #[error("ffmpeg failed ({status}) making {path}{}", said_of(said))]
    Failed {
        /// The video asked for.
        path: PathBuf,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last of what it said.
        said: String,
    },
    /// ffmpeg said an error, whatever its exit status: the file may not
    /// play.
    #[error("ffmpeg reported an error making {path}: {said}")]
    Said {
        /// The video asked for.
        path: PathBuf,
        /// The last of what it said.
        said: String,
    },
    /// ffmpeg stopped taking frames (it exited).
    #[error("ffmpeg stopped taking frames for {path}{}", said_of(said))]
    Ended {
        /// The video asked for.
        path: PathBuf,
        /// The last of what it said.
        said: String,
    },
}

/// `": what it said"`, or nothing when it said nothing.
fn said_of(said: &str) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    }
}

/// The programs the writer runs: ffmpeg, and ffprobe to check what it
/// made (`SYLVA_FFMPEG` / `SYLVA_FFPROBE`, else the PATH's).
#[derive(Debug, Clone)]
pub struct FfmpegTools {
    /// The encoder.
    pub ffmpeg: OsString,
    /// The prober.
    pub ffprobe: OsString,
}

impl Default for FfmpegTools {
    fn default() -> Self {
        let named = |name| {
            crate::engine::inputs::video::program(name)
                .get_program()
                .to_os_string()
        };
        Self {
            ffmpeg: named("ffmpeg"),
            ffprobe: named("ffprobe"),
        }
    }
}

/// `ffmpeg` reading raw RGBA frames of `size` at `fps` from its input.
fn raw_input(ffmpeg: &OsString, size: [u32; 2], fps: f32) -> Command {
    let mut command = Command::new(ffmpeg);
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
    // The input first: dropped, it closes, and the child then has its
    // grace to write out the file before it is killed and reaped.
    stdin: Option<ChildStdin>,
    child: OwnedChild,
    stderr: StderrTail,
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
        Self::start_with(&FfmpegTools::default(), path, size, fps, soundtrack)
    }

    /// [`VideoWriter::start`] with the ffmpeg of `tools`.
    pub fn start_with(
        tools: &FfmpegTools,
        path: &Path,
        size: [u32; 2],
        fps: f32,
        soundtrack: Option<&Path>,
    ) -> Result<Self, VideoError> {
        let mut command = raw_input(&tools.ffmpeg, size, fps);
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
        let mut command = raw_input(&FfmpegTools::default().ffmpeg, size, fps);
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
        let mut command = raw_input(&FfmpegTools::default().ffmpeg, size, fps);
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
        command.stdin(Stdio::piped()).stderr(Stdio::piped());
        let mut child = OwnedChild::spawn(&mut command)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => VideoError::NoFfmpeg,
                _ => VideoError::Pipe(e),
            })?
            .with_grace(UNFINISHED_GRACE);
        let stdin = child.take_stdin();
        let stderr = StderrTail::read(child.take_stderr());
        Ok(Self {
            child,
            stdin,
            stderr,
            path: path.to_path_buf(),
        })
    }

    /// One frame of RGBA pixels.
    pub fn frame(&mut self, rgba: &[u8]) -> Result<(), VideoError> {
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(rgba),
            None => Err(std::io::Error::other("ffmpeg's input closed")),
        };
        // A broken pipe means ffmpeg has gone: its last words say why (a
        // full disk, a refused URL).
        written.map_err(|_| VideoError::Ended {
            path: self.path.clone(),
            said: self.stderr.said(LAST_WORDS),
        })
    }

    /// Closes the input and waits for ffmpeg to finish the file: a
    /// failure if it exits with an error or said one.
    pub fn finish(mut self) -> Result<PathBuf, VideoError> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        let said = self.stderr.said(LAST_WORDS);
        if !status.success() {
            Err(VideoError::Failed {
                path: self.path,
                status,
                said,
            })
        } else if !said.is_empty() {
            Err(VideoError::Said {
                path: self.path,
                said,
            })
        } else {
            Ok(self.path)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in ffmpeg: a shell reading the frames, then running `then`.
    #[cfg(unix)]
    fn stand_in(then: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", &format!("cat >/dev/null; {then}")]);
        command
    }

    #[cfg(unix)]
    #[test]
    fn an_ffmpeg_that_says_an_error_and_exits_0_has_failed() {
        // ffmpeg on a full disk: the error said, the exit status 0.
        let path = Path::new("take.mp4");
        let mut writer = VideoWriter::spawn(
            stand_in("echo 'av_interleaved_write_frame(): No space left on device' >&2; exit 0"),
            path,
        )
        .expect("sh runs");
        writer.frame(&[0; 64]).expect("a frame");
        let error = writer.finish().expect_err("a failure").to_string();
        assert!(error.contains("No space left on device"), "{error}");
        // Exit 1: its words come with the status.
        let writer = VideoWriter::spawn(stand_in("echo 'Invalid argument' >&2; exit 1"), path)
            .expect("sh runs");
        let error = writer.finish().expect_err("a failure").to_string();
        assert!(error.contains("Invalid argument"), "{error}");
        // Quiet and 0: made.
        let writer = VideoWriter::spawn(stand_in("exit 0"), path).expect("sh runs");
        assert_eq!(writer.finish().ok(), Some(path.to_path_buf()));
    }

    #[cfg(unix)]
    #[test]
    fn an_ffmpeg_gone_mid_take_says_why_on_the_next_frame() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo 'No space left on device' >&2; exit 0"]);
        let mut writer = VideoWriter::spawn(command, Path::new("take.mp4")).expect("sh runs");
        // The pipe breaks once the shell has gone; a frame larger than the
        // pipe's buffer finds it so.
        let frame = vec![0u8; 1 << 20];
        let error = (0..50)
            .find_map(|_| writer.frame(&frame).err())
            .expect("the pipe breaks")
            .to_string();
        assert!(error.contains("No space left on device"), "{error}");
    }
}
