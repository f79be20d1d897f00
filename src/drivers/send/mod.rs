//! The picture sent out of the show while it plays: to NDI receivers,
//! Spout receivers on Windows, Syphon clients on macOS, network streams
//! through ffmpeg (SRT, UDP, RTMP, RTSP), a PipeWire video source and a
//! v4l2loopback virtual camera on Linux, and a recording of the
//! performance with the live input as its soundtrack. Each kind of target
//! is a file of its own, listed once in [`SENDERS`]. Each target reads back
//! the canvas or one output off the main thread ([`tap`]); one that fails
//! is an error on screen and tries again, and the show never waits for any
//! of them.

mod from_show;
mod kinds;
pub mod ndi;
pub mod pipewire;
pub mod record;
pub mod spout;
mod stream;
pub mod syphon;
pub mod take;
pub mod tap;
pub mod v4l2;

pub use kinds::{NameError, SENDERS, SenderKind, Target, TargetError};

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};

use crate::audio::input::SoundBlock;
use crate::base::status::ErrorLog;
use crate::params::ParamSpec;
use crate::params::Registry;
pub use from_show::{SendSetup, SentFrame, keep};
use tap::{Counts, MakeSink, Sink, SinkError, Tap};

/// The parameter that starts and stops recording (OSC `/sylva/record/on`,
/// MIDI, Lua).
pub const RECORD: &str = "record.on";

/// What `--record` asked for.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    /// The file of the first take (later takes are numbered beside it);
    /// none: `<show>/recordings/sylva-<date>.mp4` when recording starts.
    pub path: Option<PathBuf>,
    /// Record this output instead of the canvas.
    pub output: Option<String>,
    /// Start at once.
    pub now: bool,
}

/// What a live show sends: `--send` targets and `--record`.
#[derive(Debug, Clone, Default)]
pub struct SendOptions {
    /// Each `TARGET` (the canvas) or `OUTPUT=TARGET`.
    pub sends: Vec<String>,
    /// Recording.
    pub record: RecordOptions,
}

/// One target being fed.
struct Sending {
    label: String,
    /// The output it sends, or the canvas.
    output: Option<String>,
    /// What makes its sink: shared by each tap it has, one per frame size
    /// (a resized window finishes the old tap and starts a new one).
    make: Arc<Mutex<MakeSink>>,
    /// No thread could be started for it: not tried again every frame.
    stalled: bool,
    /// Its failure is on screen (under its label): cleared once it sends.
    failing: bool,
    tap: Option<Tap>,
}

impl Sending {
    fn new(label: String, output: Option<String>, make: MakeSink) -> Self {
        Self {
            label,
            output,
            make: Arc::new(Mutex::new(make)),
            stalled: false,
            failing: false,
            tap: None,
        }
    }

    /// Puts its failure on screen under its own label (two targets failing
    /// at once each keep their line), or clears it once it sends again.
    fn say(&mut self, errors: &crate::base::status::ErrorLog) {
        match self.tap.as_ref().and_then(|t| t.counts.failure()) {
            Some(why) => {
                errors.report(&self.label, unlabelled(&self.label, &why));
                self.failing = true;
            }
            None if self.failing => {
                errors.clear(&self.label);
                self.failing = false;
            }
            None => {}
        }
    }

    /// A maker for one tap, calling the target's own.
    fn maker(&self) -> MakeSink {
        let shared = self.make.clone();
        Box::new(move |size| (shared.lock().unwrap_or_else(PoisonError::into_inner))(size))
    }
}

/// Every target of a live show.
pub struct Senders {
    list: Vec<Sending>,
    record: RecordOptions,
    recording: Option<Sending>,
    takes: u32,
    fps: f32,
    finished: Vec<String>,
    errors: ErrorLog,
    /// Where takes go when `--record` names no file.
    recordings: PathBuf,
}

impl Senders {
    /// The targets of `--send` (`sends`, each `TARGET` or
    /// `OUTPUT=TARGET`) and of each output's `send` (`setup`), at `fps`;
    /// recording as `record` says. A target that cannot be read is an
    /// error on screen.
    pub fn new(setup: SendSetup<'_>, options: &SendOptions, fps: f32) -> Self {
        let (sends, record) = (&options.sends, options.record.clone());
        let SendSetup {
            registry,
            errors,
            recordings,
            output_sends,
        } = setup;
        registry.register(
            ParamSpec::bool(RECORD, false)
                .with_description("Record the performance (the file is written when it stops)"),
        );
        let mut wanted: Vec<(Option<String>, String)> = sends
            .iter()
            .map(|s| match s.split_once('=') {
                Some((output, target)) if !output.contains(':') => {
                    (Some(output.to_string()), target.to_string())
                }
                _ => (None, s.clone()),
            })
            .collect();
        wanted.extend(
            output_sends
                .into_iter()
                .map(|(output, target)| (Some(output), target)),
        );
        let mut list = Vec::new();
        for (output, text) in wanted {
            match Target::parse(&text) {
                Ok(target) => list.push(Sending::new(
                    target.label().to_string(),
                    output,
                    target.maker(fps),
                )),
                Err(error) => errors.report("send", error),
            }
        }
        if record.now {
            registry
                .set(
                    RECORD,
                    crate::params::Value::Bool(true),
                    crate::params::Source::Show,
                )
                .ok();
        }
        Self {
            list,
            record,
            recording: None,
            takes: 0,
            fps,
            finished: Vec::new(),
            errors,
            recordings,
        }
    }

    /// Records reading back this frame's pictures (inside the frame's
    /// commands, after the outputs are drawn).
    pub fn capture(&mut self, frame: &SentFrame<'_>, encoder: &mut wgpu::CommandEncoder) {
        for sending in self.list.iter_mut().chain(self.recording.as_mut()) {
            let texture = frame.picture(sending.output.as_deref());
            let Some(texture) = texture else {
                continue;
            };
            let size = [texture.width(), texture.height()];
            if sending.tap.as_ref().is_some_and(|t| t.size() != size) {
                // A new size (the window resized): a new tap, the old one
                // finished (a recording's take written out, and checked).
                if let Some(old) = sending.tap.take()
                    && let Some(why) = old.finish().failure()
                {
                    self.errors
                        .report(&sending.label, unlabelled(&sending.label, &why));
                }
            }
            if sending.tap.is_none() && !sending.stalled {
                match Tap::start(
                    frame.device,
                    "sylva-send",
                    size,
                    sending.maker(),
                    self.errors.clone(),
                ) {
                    Ok(tap) => sending.tap = Some(tap),
                    Err(error) => {
                        sending.stalled = true;
                        self.errors
                            .report(&sending.label, format!("no thread: {error}"));
                    }
                }
            }
            if let Some(tap) = sending.tap.as_mut() {
                tap.capture(encoder, texture, frame.time);
            }
        }
    }

    /// After the frame's submit: maps what was read back.
    pub fn submitted(&mut self) {
        for sending in self.list.iter_mut().chain(self.recording.as_mut()) {
            if let Some(tap) = sending.tap.as_mut() {
                tap.submitted();
            }
        }
    }

    /// Whether `record.on` asks for a take that has not started: the
    /// caller then hands [`Senders::keep`] the sound to record with it.
    pub fn starting_a_take(&self, registry: &Registry) -> bool {
        registry.flag(RECORD) && self.recording.is_none()
    }

    /// Starts or stops recording as `record.on` in `registry` says (a new
    /// take with the live input's `sound`, if any), and puts a failing
    /// target's error on screen.
    pub fn keep(&mut self, registry: &mut Registry, sound: Option<Receiver<SoundBlock>>) {
        let wanted = registry.flag(RECORD);
        if wanted && self.recording.is_none() {
            match self.start_recording(sound) {
                Ok(sending) => self.recording = Some(sending),
                Err(error) => {
                    self.errors.report("record", error);
                    registry
                        .set(
                            RECORD,
                            crate::params::Value::Bool(false),
                            crate::params::Source::Show,
                        )
                        .ok();
                }
            }
        } else if !wanted && let Some(sending) = self.recording.take() {
            self.finished.extend(finish(sending, &self.errors));
        }
        for sending in self.list.iter_mut().chain(self.recording.as_mut()) {
            sending.say(&self.errors);
        }
    }

    fn start_recording(
        &mut self,
        sound: Option<Receiver<SoundBlock>>,
    ) -> Result<Sending, record::RecordError> {
        let base = match &self.record.path {
            Some(path) => path.clone(),
            None => {
                let folder = self.recordings.clone();
                std::fs::create_dir_all(&folder).map_err(|error| record::RecordError::Folder {
                    path: folder.clone(),
                    error,
                })?;
                let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
                folder.join(format!("sylva-{stamp}.mp4"))
            }
        };
        self.takes += 1;
        let path = free_name(&base, self.takes);
        let fps = self.fps;
        let mut sound = Some(sound);
        let file = path.clone();
        let make: MakeSink = Box::new(move |size| {
            // A retry after a failure starts a new file beside the first.
            let path = free_name(&file, 1);
            record::Recording::start(&path, size, fps, sound.take().flatten())
                .map(|r| Box::new(r) as Box<dyn Sink>)
                .map_err(SinkError::from)
        });
        tracing::info!("recording to {}", path.display());
        Ok(Sending::new(
            format!("recording {}", path.display()),
            self.record.output.clone(),
            make,
        ))
    }

    /// One line per target for the HUD: what it sends, how many frames,
    /// how many dropped, and its error while it is down.
    pub fn status(&self) -> Vec<String> {
        self.list
            .iter()
            .chain(self.recording.as_ref())
            .map(|s| {
                let what = s.output.as_deref().unwrap_or("canvas");
                match &s.tap {
                    Some(tap) => {
                        let counts = &tap.counts;
                        format!(
                            "{} ({what}): {} sent, {} dropped{}",
                            s.label,
                            counts.sent.load(Ordering::Relaxed),
                            counts.dropped.load(Ordering::Relaxed),
                            counts
                                .failure()
                                .map(|f| format!(" — {f}"))
                                .unwrap_or_default()
                        )
                    }
                    None => format!("{} ({what}): starting", s.label),
                }
            })
            .collect()
    }

    /// Stops every target (a recording written out); what each did.
    pub fn finish(mut self) -> Vec<String> {
        let mut lines = std::mem::take(&mut self.finished);
        for sending in self.list.drain(..).chain(self.recording.take()) {
            lines.extend(finish(sending, &self.errors));
        }
        lines
    }
}

/// Stops one target; a line saying what it did.
fn finish(sending: Sending, errors: &ErrorLog) -> Option<String> {
    let counts: Arc<Counts> = sending.tap?.finish();
    let made = counts
        .made
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let failure = counts
        .failure()
        .map(|why| unlabelled(&sending.label, &why).to_string());
    if let Some(why) = &failure {
        errors.report(&sending.label, why);
    }
    Some(format!(
        "{}: {} frames sent, {} dropped{}{}{}",
        sending.label,
        counts.sent.load(Ordering::Relaxed),
        counts.dropped.load(Ordering::Relaxed),
        latency(&counts),
        made.map(|m| format!(", wrote {m}")).unwrap_or_default(),
        failure
            .map(|f| format!("; FAILED: {f}"))
            .unwrap_or_default()
    ))
}

/// `why` without the `label: ` it starts with (a sink names its target;
/// the error is shown under the target's label already).
fn unlabelled<'a>(label: &str, why: &'a str) -> &'a str {
    why.strip_prefix(label)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(why)
}

/// The readback latency of `counts`, as the HUD and the log say it.
fn latency(counts: &Counts) -> String {
    counts
        .latency()
        .map(|[median, worst]| format!(", readback {median:.1} ms (worst {worst:.1})"))
        .unwrap_or_default()
}

/// `base`, or for take `n` > 1 `base-n`, or the next number free beside it.
fn free_name(base: &Path, n: u32) -> PathBuf {
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let extension = base
        .extension()
        .map(|e| e.to_string_lossy().to_string())
        .unwrap_or_else(|| "mp4".into());
    let name = |k: u32| {
        let file = if k <= 1 {
            format!("{stem}.{extension}")
        } else {
            format!("{stem}-{k}.{extension}")
        };
        base.with_file_name(file)
    };
    // Free means nothing there at all: a link (even one to nowhere) is
    // not a free name to write a take through. Its parts are free too: a
    // failed take's part left behind must not fail every retry after it.
    let free = |p: &PathBuf| {
        [
            p.clone(),
            record::part(p, "video.mp4"),
            record::part(p, "sound.wav"),
        ]
        .iter()
        .all(|q| std::fs::symlink_metadata(q).is_err())
    };
    (n..n + 10_000)
        .map(name)
        .find(free)
        .unwrap_or_else(|| name(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_never_overwrite() {
        let dir = std::env::temp_dir().join(format!("sylva-takes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let base = dir.join("set.mp4");
        assert_eq!(free_name(&base, 1), base);
        std::fs::write(&base, b"").expect("a file");
        assert_eq!(free_name(&base, 1), dir.join("set-2.mp4"));
        // A failed take's part left behind: the retry goes beside it.
        std::fs::write(dir.join("set-2.part.video.mp4"), b"").expect("a part");
        assert_eq!(free_name(&base, 1), dir.join("set-3.mp4"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
