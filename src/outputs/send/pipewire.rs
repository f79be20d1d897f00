//! A PipeWire video source on Linux (`--send pipewire:NAME`): the picture
//! as a node of media class `Video/Source` that OBS, GStreamer, browsers
//! (through the camera portal) and any PipeWire client can take, on the
//! desktop's own PipeWire daemon, no kernel module needed (unlike
//! v4l2loopback). GStreamer's `pipewiresink` makes the node, run as a
//! supervised program fed raw frames on its input, as ffmpeg is for
//! streams: PipeWire's C API describes formats with inline functions of
//! its headers that a library loaded at run time cannot offer, and a
//! program keeps sylva building on systems without PipeWire.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::kinds::{NameError, SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};
use crate::base::child::OwnedChild;

/// `pipewire:NAME`: a PipeWire video source node of this name (Linux).
pub const SENDER: SenderKind = SenderKind {
    form: "pipewire:NAME (Linux)",
    schemes: &["pipewire:"],
    check: check_name,
    missing: if cfg!(target_os = "linux") {
        None
    } else {
        Some("PipeWire is Linux's")
    },
    open: open_sink,
};

fn open_sink(target: &Target, size: [u32; 2], fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Ok(Box::new(PipeWireSource::open(
        target.rest(),
        size,
        fps,
        None,
    )?))
}

/// The longest node name.
pub const MAX_NAME: usize = 64;

/// Checks a node name asked for (`pipewire:NAME`): it goes into a
/// GStreamer structure, so letters, digits, `-`, `_` and `.` only.
pub fn check_name(name: &str) -> Result<(), NameError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(allowed) {
        return Err(NameError::PipeWire(name.to_string()));
    }
    Ok(())
}

/// Why a PipeWire node could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipeWireError {
    /// A name the pipeline cannot take.
    #[error(transparent)]
    Name(#[from] NameError),
    /// No gst-launch-1.0 on the PATH.
    #[error(
        "pipewire:{0}: needs GStreamer's gst-launch-1.0 with PipeWire's plugin (Debian/Ubuntu: sudo apt install gstreamer1.0-tools gstreamer1.0-pipewire)"
    )]
    NoGstreamer(String),
    /// gst-launch-1.0 would not start.
    #[error("pipewire:{name}: {error}")]
    Start {
        /// The node's name.
        name: String,
        /// Why.
        error: std::io::Error,
    },
    /// gst-launch-1.0 stopped taking frames.
    #[error("pipewire:{name}: gst-launch-1.0 {status}: {last}")]
    Stopped {
        /// The node's name.
        name: String,
        /// How it ended.
        status: String,
        /// The last line it printed.
        last: String,
    },
}

/// The command that makes node `name` for RGBA frames of `size` at `fps`.
fn command(name: &str, size: [u32; 2], fps: f32) -> Command {
    let program = std::env::var_os("SYLVA_GST_LAUNCH").unwrap_or_else(|| "gst-launch-1.0".into());
    let mut command = Command::new(program);
    let rate = (f64::from(fps.clamp(1.0, 240.0)) * 1000.0).round() as u64;
    command
        .arg("-q")
        .args(["fdsrc", "fd=0"])
        .arg(format!("blocksize={}", size[0] as usize * size[1] as usize * 4))
        .args(["!", "rawvideoparse"])
        .args([
            format!("width={}", size[0]),
            format!("height={}", size[1]),
            "format=rgba".into(),
            format!("framerate={rate}/1000"),
        ])
        // videoconvert hands the client whatever format it asks for (a
        // browser's camera wants YUV) and, when it asks for RGBA, passes
        // frames through in buffers pipewiresink copies whole (fed the
        // parser's own, PipeWire 0.3.65's sink crashes).
        .args(["!", "videoconvert", "!", "pipewiresink", "mode=provide"])
        .arg(format!(
            "stream-properties=props,media.class=Video/Source,node.name={name},node.description=sylva-{name}"
        ));
    command
}

/// A PipeWire node taking the show's frames.
pub struct PipeWireSource {
    // Dropped in this order: the input closes, then the program is
    // killed and reaped.
    stdin: Option<ChildStdin>,
    child: OwnedChild,
    name: String,
}

impl PipeWireSource {
    /// Starts node `name` for frames of `size` at `fps` on the daemon
    /// PipeWire's clients find (`PIPEWIRE_REMOTE`, else the default), or
    /// on the one listening at `remote` (a socket path).
    pub fn open(
        name: &str,
        size: [u32; 2],
        fps: f32,
        remote: Option<&Path>,
    ) -> Result<Self, PipeWireError> {
        check_name(name)?;
        let mut command = command(name, size, fps);
        if let Some(remote) = remote {
            command.env("PIPEWIRE_REMOTE", remote);
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = OwnedChild::spawn(&mut command).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => PipeWireError::NoGstreamer(name.to_string()),
            _ => PipeWireError::Start {
                name: name.to_string(),
                error,
            },
        })?;
        let stdin = child.take_stdin();
        tracing::info!("pipewire: node {name:?}, {}x{}", size[0], size[1]);
        Ok(Self {
            child,
            stdin,
            name: name.to_string(),
        })
    }

    /// Why the program stopped taking frames: its exit and the end of
    /// what it printed (GStreamer names a missing plugin or daemon).
    fn why_it_stopped(&mut self) -> PipeWireError {
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    self.child.kill();
                    break "stopped taking frames".to_string();
                }
            }
        };
        let mut printed = String::new();
        if let Some(stderr) = self.child.take_stderr() {
            stderr.take(4096).read_to_string(&mut printed).ok();
        }
        let last = printed
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        PipeWireError::Stopped {
            name: self.name.clone(),
            status,
            last: last.to_string(),
        }
    }
}

impl Sink for PipeWireSource {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        let written = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(&frame.rgba),
            None => Err(std::io::Error::other("closed")),
        };
        if written.is_err() {
            drop(self.stdin.take());
            return Err(self.why_it_stopped().into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_that_would_break_the_pipeline_are_refused() {
        assert!(check_name("sylva-main_2.out").is_ok());
        for bad in ["", "a,b", "a b", "a=b", "a\"b", &"n".repeat(MAX_NAME + 1)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let args: Vec<String> = command("sylva", [64, 36], 59.94)
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args.contains(&"framerate=59940/1000".to_string()),
            "{args:?}"
        );
        assert!(
            args.iter().any(|a| a.contains("node.name=sylva,")),
            "{args:?}"
        );
    }
}
