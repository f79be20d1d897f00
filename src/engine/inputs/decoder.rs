//! The worker a clip is decoded on, and what it hands the frame thread
//! through a queue of [`QUEUED_FRAMES`]: ffmpeg's raw frames read from its
//! pipe, or a HAP clip's frames read and unpacked by sylva
//! ([`super::hap`]). A full queue holds the worker back, so memory stays
//! flat however long a clip loops; dropping the [`Decoder`] stops the
//! worker and kills its ffmpeg.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::hap::{self, HapError};
use super::probe::{ClipFile, ProbeError, missing_ffmpeg, probe};
use super::source::FrameLayout;
use super::video::{ClipInfo, Decoding, PlayError, QUEUED_FRAMES, program};
use crate::base::child::OwnedChild;

/// How long lockstep waits for a frame before it gives up on the clip.
const LOCKSTEP_WAIT: Duration = Duration::from_secs(20);

/// What the worker hands the frame thread.
pub(super) enum Decoded {
    Info(ClipInfo),
    /// Frame `n` since the decoder started, RGBA.
    Frame(u64, Vec<u8>),
    /// The clip ended (not looping).
    Ended,
    Failed(PlayError),
}

/// The worker and its ffmpeg process; dropping it stops both.
pub(super) struct Decoder {
    decoded: Receiver<Decoded>,
    /// Frames uploaded, given back for the worker to fill again (a 4K
    /// frame is 33 MB: allocating and faulting it in each time cost a
    /// millisecond a frame).
    spare: SyncSender<Vec<u8>>,
    held: Arc<Held>,
}

/// The worker's child process and whether its decoder is gone. A child
/// is kept only under the lock and only while the decoder lives, so a
/// decoder dropped while ffprobe runs never leaves the ffmpeg started
/// next to nobody: it is killed and reaped at once.
#[derive(Debug, Default)]
pub(super) struct Held {
    stopped: AtomicBool,
    /// Frames the worker made itself (a HAP clip's, unpacked) and the
    /// nanoseconds that took.
    made: [AtomicU64; 2],
    child: Mutex<Option<OwnedChild>>,
}

impl Held {
    /// Keeps `child` for the decoder to stop; `false` (and the child
    /// killed) when the decoder is gone already.
    fn keep(&self, child: OwnedChild) -> bool {
        let mut slot = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        if self.stopped.load(Ordering::SeqCst) {
            return false;
        }
        *slot = Some(child);
        true
    }

    /// Kills and reaps the child kept, if any.
    fn reap(&self) {
        let child = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(child);
    }

    /// Set once the decoder is dropped: a probe running is called off.
    pub(super) fn stopped(&self) -> &AtomicBool {
        &self.stopped
    }

    /// The worker made a frame itself in `took`.
    pub(super) fn made(&self, took: Duration) {
        self.made[0].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.made[1].fetch_add(nanos, Ordering::Relaxed);
    }
}

impl Decoder {
    /// Decodes the clip `source` (show folder, name) from `at` seconds,
    /// over and over when `looping`, as `decoding` says.
    pub(super) fn start(
        source: &(PathBuf, PathBuf),
        at: f64,
        looping: bool,
        decoding: Decoding,
    ) -> Self {
        let (root, relative) = source.clone();
        Self::work(move |held, send, spares| {
            let clip = ClipFile::open(&root, &relative)?;
            if let Some(track) = hap::hap_track(clip.file()).map_err(HapError::from)? {
                let way = (decoding.blocks, held);
                return hap::play(clip.file(), track, (at, looping), way, send, spares);
            }
            let (mut info, demuxer) = probe(&clip, held.stopped())?;
            if !decoding.planes {
                info.layout = FrameLayout::Rgba;
            }
            let scaled = decoding.size_of(info.size);
            let scale = (scaled != info.size).then_some(scaled);
            info.size = scaled;
            let command = clip_command(&clip, demuxer, at, looping, scale, &info)?;
            pipe(command, info, held, send, spares)
        })
    }

    /// Runs the ffmpeg command `prepare` makes (on the worker: it may
    /// probe first, called off through the [`Held`] it is given) and
    /// reads frames of the size it says.
    pub(super) fn run(
        prepare: impl FnOnce(&Held) -> Result<(Command, ClipInfo), PlayError> + Send + 'static,
    ) -> Self {
        Self::work(move |held, send, spares| {
            let (command, info) = prepare(held)?;
            pipe(command, info, held, send, spares)
        })
    }

    /// Runs `body` on a worker thread: it sends what it decodes, taking
    /// buffers back from the spares, until it ends or nobody listens.
    fn work(
        body: impl FnOnce(&Held, &SyncSender<Decoded>, &Receiver<Vec<u8>>) -> Result<(), PlayError>
        + Send
        + 'static,
    ) -> Self {
        let (send, decoded) = sync_channel(QUEUED_FRAMES);
        let (spare, spares) = sync_channel(QUEUED_FRAMES + 2);
        let held = Arc::new(Held::default());
        let worker = held.clone();
        let spawned = std::thread::Builder::new()
            .name("sylva video".into())
            .spawn(move || {
                let result = (std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    body(&worker, &send, &spares)
                })))
                .unwrap_or(Err(PlayError::DecoderFailed));
                worker.reap();
                if let Err(why) = result {
                    send.send(Decoded::Failed(why)).ok();
                }
            });
        match spawned {
            Ok(_) => Self {
                decoded,
                spare,
                held,
            },
            Err(error) => Self::failed(PlayError::NoThread(error)),
        }
    }

    /// A decoder that has only `why` to say.
    pub(super) fn failed(why: PlayError) -> Self {
        let (send, decoded) = sync_channel(1);
        send.send(Decoded::Failed(why)).ok();
        let (spare, _) = sync_channel(1);
        Self {
            decoded,
            spare,
            held: Arc::new(Held::default()),
        }
    }

    /// The mean milliseconds the worker took to make a frame itself, if
    /// it made any.
    pub(super) fn made_ms(&self) -> Option<f64> {
        let frames = self.held.made[0].load(Ordering::Relaxed);
        let nanos = self.held.made[1].load(Ordering::Relaxed);
        (frames > 0).then(|| nanos as f64 / frames as f64 / 1e6)
    }

    /// Gives a frame's bytes back to be filled again.
    pub(super) fn give_back(&self, frame: Vec<u8>) {
        self.spare.try_send(frame).ok();
    }

    /// What the worker sent, waiting for it when `wait`.
    pub(super) fn next(&self, wait: bool) -> Result<Option<Decoded>, PlayError> {
        if wait {
            return match self.decoded.recv_timeout(LOCKSTEP_WAIT) {
                Ok(decoded) => Ok(Some(decoded)),
                Err(RecvTimeoutError::Timeout) => Err(PlayError::NoFrame(LOCKSTEP_WAIT.as_secs())),
                Err(RecvTimeoutError::Disconnected) => Ok(None),
            };
        }
        match self.decoded.try_recv() {
            Ok(decoded) => Ok(Some(decoded)),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => Ok(None),
        }
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        self.held.stopped.store(true, Ordering::SeqCst);
        self.held.reap();
    }
}

/// ffmpeg decoding `clip` (read by `demuxer`) from `at` seconds into raw
/// frames (4:2:0 planes, or RGBA), scaled down to `scale` when given
/// (area averaging: no aliasing however far down).
fn clip_command(
    clip: &ClipFile,
    demuxer: &str,
    at: f64,
    looping: bool,
    scale: Option<[u32; 2]>,
    info: &ClipInfo,
) -> Result<Command, ProbeError> {
    let mut command = program("ffmpeg");
    command.args(["-v", "error", "-nostdin"]);
    if looping {
        command.args(["-stream_loop", "-1"]);
    }
    // Half the cores decode, so the show's own threads keep the rest (on
    // two cores a clip on both stole frames from a 60 fps show).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    command.args(["-threads", &(cores / 2).clamp(1, 8).to_string()]);
    command.args(["-ss", &format!("{at:.6}")]);
    clip.input(&mut command, Some(demuxer));
    command.args(["-an", "-fps_mode", "passthrough"]);
    if let Some([w, h]) = scale {
        command.args(["-vf", &format!("scale={w}:{h}:flags=bilinear")]);
    }
    let pixels = if matches!(info.layout, FrameLayout::Planes(_)) {
        "yuv420p"
    } else {
        "rgba"
    };
    raw_output(&mut command, pixels);
    command.stdin(clip.stdin()?);
    Ok(command)
}

/// Has `command` write raw frames of `pixels` (an ffmpeg pixel format) to
/// its standard output.
pub(super) fn raw_output(command: &mut Command, pixels: &str) {
    command
        .args(["-f", "rawvideo", "-pix_fmt", pixels, "-"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
}

/// The worker: runs `command` and reads its frames of `info`'s size until
/// they end or nobody listens.
fn pipe(
    mut command: Command,
    info: ClipInfo,
    held: &Held,
    send: &SyncSender<Decoded>,
    spares: &Receiver<Vec<u8>>,
) -> Result<(), PlayError> {
    let mut child = OwnedChild::spawn(&mut command).map_err(|e| missing_ffmpeg("ffmpeg", e))?;
    let Some(mut stdout) = child.take_stdout() else {
        return Err(PlayError::NoPipe);
    };
    if !held.keep(child) {
        return Ok(());
    }
    if send.send(Decoded::Info(info)).is_err() {
        return Ok(());
    }
    let bytes = info.frame_bytes();
    for index in 0u64.. {
        let mut frame = spares
            .try_recv()
            .ok()
            .filter(|f| f.len() == bytes)
            .unwrap_or_else(|| vec![0u8; bytes]);
        if stdout.read_exact(&mut frame).is_err() {
            send.send(Decoded::Ended).ok();
            return Ok(());
        }
        if send.send(Decoded::Frame(index, frame)).is_err() {
            return Ok(());
        }
    }
    Ok(())
}
