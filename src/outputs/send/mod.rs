//! The picture sent out of the show while it plays: to NDI receivers,
//! Spout receivers on Windows, Syphon clients on macOS, network streams
//! through ffmpeg (SRT, UDP, RTMP, RTSP), a PipeWire video source and a
//! v4l2loopback virtual camera on Linux, and a recording of the
//! performance with the live input as its soundtrack. Each kind of target
//! is a file of its own, listed once in [`SENDERS`]. Each target is an
//! [`Output`] ([`Sender`], the takes a [`Recorder`]) that reads back the
//! canvas or one output off the main thread ([`tap`]); one that fails is
//! an error on screen and tries again, and the show never waits for any
//! of them.

mod kinds;
pub mod ndi;
pub mod pipewire;
pub mod record;
mod recorder;
mod sender;
pub mod spout;
mod stream;
pub mod syphon;
pub mod take;
pub mod tap;
pub mod v4l2;

pub use kinds::{NameError, SENDERS, SenderKind, Target, TargetError};

use std::path::PathBuf;

use crate::base::status::ErrorLog;
use crate::outputs::Output;
use crate::params::{ParamSpec, Registry, Source, Value};
pub use recorder::Recorder;
pub use sender::Sender;

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

/// What the senders start with: the driver takes it from the show, so
/// that they never reach into it.
pub struct SendSetup<'a> {
    /// Where `record.on` is registered and read.
    pub registry: &'a mut Registry,
    /// Where a target's failure is said.
    pub errors: ErrorLog,
    /// Where takes go when `--record` names no file.
    pub recordings: PathBuf,
    /// Each output's name and a target its `send` names.
    pub output_sends: Vec<(String, String)>,
}

/// The outputs a live show sends to: a [`Sender`] for each target of
/// `--send` (each `TARGET`, the canvas, or `OUTPUT=TARGET`) and of each
/// output's `send` in `setup`, at `fps`, and the [`Recorder`] as `record`
/// says. A target that cannot be read is an error on screen.
pub fn open(
    setup: SendSetup<'_>,
    options: &SendOptions,
    fps: f32,
) -> (Vec<Box<dyn Output>>, Recorder) {
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
    let mut wanted: Vec<(Option<String>, String)> = options
        .sends
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
    let mut senders: Vec<Box<dyn Output>> = Vec::new();
    for (output, text) in wanted {
        match Target::parse(&text) {
            Ok(target) => senders.push(Box::new(Sender::new(
                target.label().to_string(),
                output,
                target.maker(fps),
                errors.clone(),
            ))),
            Err(error) => errors.report("send", error),
        }
    }
    if options.record.now {
        registry.set(RECORD, Value::Bool(true), Source::Show).ok();
    }
    let recorder = Recorder::new(options.record.clone(), fps, errors, recordings);
    (senders, recorder)
}
