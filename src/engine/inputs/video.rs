//! Video clips from the show's `media/` folder, decoded by the `ffmpeg`
//! program on a worker thread: `ffprobe` reads the clip's size, rate and
//! length (refusing absurd ones), then `ffmpeg` writes raw RGBA frames
//! into a pipe that the worker cuts into frames and hands over through a
//! queue of [`QUEUED_FRAMES`]; a full queue holds the decoder back, so
//! memory stays flat however long a clip loops. The frame thread never
//! waits in a live show: it takes the frame nearest the clip's clock. In
//! lockstep (`sylva render`) it waits for exactly the frame show time
//! asks for, so a music video is the same every time.
//!
//! A HAP clip in a MOV is played without ffmpeg ([`super::hap`]): the
//! same worker, queue and clock, its frames read and unpacked by sylva.
//!
//! ffmpeg is a program rather than a linked library for the reasons
//! `render --video` gives: every codec the user's ffmpeg has (H.264,
//! HEVC, ProRes, HAP, VP9, AV1) without building against one version of
//! libav, on every platform, and a decoder that crashes on a hostile file
//! takes only its own process down.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::camera::Cameras;
use super::hap::{self, HapCodec, HapError};
use super::media::MediaError;
use super::probe::{ClipFile, ProbeError, StartError, missing_ffmpeg, probe};
use super::source::{FrameLayout, Playing, TextureSource};
use super::still::DecodedImage;
use super::yuv::frame_bytes;
use crate::base::child::OwnedChild;

pub use super::probe::{parse_probe, program};

/// Frames decoded ahead of the one shown.
pub const QUEUED_FRAMES: usize = 3;
/// The longest side of a clip: 4096 pixels (DCI 4K).
pub const MAX_VIDEO_SIDE: u32 = 4096;
/// The highest frame rate a clip may declare.
pub const MAX_VIDEO_FPS: f64 = 240.0;
/// How much of each frame's time the live clip clock takes in: a late
/// frame moves it a tenth as far as it was late.
const FRAME_TIME_SMOOTHING: f64 = 0.1;
/// How long lockstep waits for a frame before it gives up on the clip.
const LOCKSTEP_WAIT: Duration = Duration::from_secs(20);
/// How long a clip may take to give its first frame (probe included)
/// before it is said to be broken and its ffmpeg stopped: a truncated
/// clip can keep ffmpeg busy for ever without a frame or an error.
pub const FIRST_FRAME_LIMIT: Duration = Duration::from_secs(15);

/// Why a clip (or a camera read by ffmpeg) does not play.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// It could not be opened or probed.
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// ffmpeg would not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// ffmpeg started without a pipe to read.
    #[error("ffmpeg gave no output pipe")]
    NoPipe,
    /// The worker panicked.
    #[error("the decoder thread failed")]
    DecoderFailed,
    /// No worker thread could be started.
    #[error("no thread to decode it: {0}")]
    NoThread(#[source] std::io::Error),
    /// No first frame within the time given (the seconds); the clip is
    /// stopped.
    #[error(
        "no frame from ffmpeg in {0} s (a truncated or damaged clip?); it is stopped until saved again"
    )]
    NoFirstFrame(f32),
    /// Lockstep waited past [`LOCKSTEP_WAIT`] (the seconds) for a frame.
    #[error("no frame from ffmpeg in {0} s")]
    NoFrame(u64),
    /// A HAP clip read by sylva is damaged.
    #[error(transparent)]
    Hap(#[from] HapError),
}

/// What `ffprobe` says of a clip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClipInfo {
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// Frames per second.
    pub fps: f64,
    /// Length in seconds (0 when the container does not say).
    pub duration: f64,
    /// How its frames come.
    pub layout: FrameLayout,
    /// A HAP clip read by sylva: which flavour.
    pub hap: Option<HapCodec>,
}

impl ClipInfo {
    /// The bytes of one decoded frame.
    pub fn frame_bytes(&self) -> usize {
        match self.layout {
            FrameLayout::Planes(_) => frame_bytes(self.size),
            FrameLayout::Blocks(codec) => codec.frame_bytes(self.size),
            FrameLayout::Rgba => self.size[0] as usize * self.size[1] as usize * 4,
        }
    }
}

/// What the worker hands the frame thread.
pub(super) enum Decoded {
    Info(ClipInfo),
    /// Frame `n` since the decoder started, RGBA.
    Frame(u64, Vec<u8>),
    /// The clip ended (not looping).
    Ended,
    Failed(PlayError),
}

/// How a clip is decoded: as 4:2:0 planes (converted on the GPU) where
/// `planes` allows and the clip is 4:2:0, else RGBA; and no larger than
/// `fit` (the canvas when it opened), so a 1080p clip under a 640x360
/// show is scaled down by ffmpeg instead of uploaded whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoding {
    /// Planes allowed.
    pub planes: bool,
    /// HAP's BC blocks taken as they are (the GPU has BC compression).
    pub blocks: bool,
    /// The largest size worth decoding to; `None` keeps the clip's own.
    pub fit: Option<[u32; 2]>,
    /// How long the first frame may take ([`FIRST_FRAME_LIMIT`]).
    pub first_frame: Duration,
}

impl Default for Decoding {
    fn default() -> Self {
        Self {
            planes: false,
            blocks: false,
            fit: None,
            first_frame: FIRST_FRAME_LIMIT,
        }
    }
}

impl Decoding {
    /// The size a clip of `size` is decoded to: scaled down, aspect kept,
    /// to fit within `fit`, even on both sides (4:2:0 halves them).
    pub fn size_of(&self, size: [u32; 2]) -> [u32; 2] {
        let Some([w, h]) = self.fit else {
            return size;
        };
        let scale = (f64::from(w) / f64::from(size[0].max(1)))
            .min(f64::from(h) / f64::from(size[1].max(1)));
        if scale >= 1.0 {
            return size;
        }
        size.map(|side| ((f64::from(side) * scale / 2.0).round() as u32 * 2).max(2))
    }
}

/// How a clip plays: the input's `…_speed`, `…_loop` and `…_position`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transport {
    /// 1 is the clip's own rate, 0 pauses.
    pub speed: f32,
    /// Loop at the end, else hold the last frame.
    pub looping: bool,
    /// Where to jump to, 0..1 of the clip, when it was written.
    pub position: f32,
}

impl Default for Transport {
    fn default() -> Self {
        Self {
            speed: 1.0,
            looping: true,
            position: 0.0,
        }
    }
}

impl TextureSource for Video {
    fn advance(
        &mut self,
        playing: Playing,
        _cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError> {
        let Some(rgba) = Video::advance(self, playing.dt, playing.transport, playing.lockstep)?
        else {
            return Ok(None);
        };
        let size = self.info().map_or([1, 1], |i| i.size);
        Ok(Some(DecodedImage { size, rgba }))
    }

    fn layout(&self) -> FrameLayout {
        self.info().map_or(FrameLayout::Rgba, |info| info.layout)
    }

    fn give_back(&mut self, rgba: Vec<u8>) {
        Video::give_back(self, rgba);
    }

    fn report(&self) -> String {
        let (shown, passed) = self.counts;
        let path = match (self.layout(), self.info().and_then(|i| i.hap)) {
            (FrameLayout::Planes(_), _) => ", as 4:2:0 planes".to_string(),
            (FrameLayout::Blocks(_), Some(codec)) => {
                format!(", {} as BC blocks converted on the GPU", codec.name())
            }
            (_, Some(codec)) => format!(", {} decoded on the CPU", codec.name()),
            _ => String::new(),
        };
        let made = (self.decoder.made_ms())
            .map(|ms| format!(", read and unpacked in {ms:.2} ms each"))
            .unwrap_or_default();
        format!(", {shown} clip frames shown, {passed} passed over{path}{made}")
    }
}

/// A clip playing.
pub struct Video {
    /// The show folder and the clip's name in it.
    source: (PathBuf, PathBuf),
    info: Option<ClipInfo>,
    decoder: Decoder,
    /// Seconds played since the decoder started (past the end when looping).
    played: f64,
    /// Where in the clip the decoder started.
    offset: f64,
    /// A frame decoded ahead of time, not due yet.
    ahead: Option<(u64, Vec<u8>)>,
    shown: Option<u64>,
    ended: bool,
    /// The show's frame time, smoothed (live only).
    frame_time: Option<f64>,
    decoding: Decoding,
    /// Frames shown, and frames of the clip passed over unshown (the
    /// decoder fell behind, or the show runs slower than the clip).
    pub counts: (u64, u64),
    transport: Transport,
    /// When the decoder started, to tell a clip that never gives a frame.
    started: Instant,
    /// Stopped for good (until it is saved again) after waiting this
    /// many seconds for a first frame.
    failed: Option<f32>,
}

impl Video {
    /// Starts decoding `relative` under the show folder `root` from its
    /// start, as `decoding` says.
    pub fn open(source: (PathBuf, PathBuf), transport: Transport, decoding: Decoding) -> Self {
        let decoder = Decoder::start(&source, 0.0, transport.looping, decoding);
        Self {
            source,
            info: None,
            decoder,
            played: 0.0,
            offset: 0.0,
            ahead: None,
            shown: None,
            ended: false,
            frame_time: None,
            decoding,
            counts: (0, 0),
            transport,
            started: Instant::now(),
            failed: None,
        }
    }

    /// The clip's size, rate and length, once probed.
    pub fn info(&self) -> Option<ClipInfo> {
        self.info
    }

    /// Moves the clip `dt` seconds on under `transport`; returns the frame
    /// to show now if it is a new one. In `lockstep` it waits for that
    /// frame. An error means the clip cannot play (the last frame stays).
    pub fn advance(
        &mut self,
        dt: f64,
        transport: Transport,
        lockstep: bool,
    ) -> Result<Option<Vec<u8>>, PlayError> {
        if transport.position != self.transport.position
            || transport.looping != self.transport.looping
        {
            let duration = self.info.map_or(0.0, |i| i.duration);
            let at = f64::from(transport.position.clamp(0.0, 1.0)) * duration;
            self.restart(at, transport.looping);
        }
        self.transport = transport;
        if let Some(seconds) = self.failed {
            return Err(PlayError::NoFirstFrame(seconds));
        }
        let no_frame_yet = self.shown.is_none() && self.ahead.is_none() && !self.ended;
        if no_frame_yet && self.started.elapsed() > self.decoding.first_frame {
            // Its ffmpeg stops with the decoder: a broken clip costs nothing
            // once said.
            let seconds = self.decoding.first_frame.as_secs_f32();
            self.decoder = Decoder::failed(PlayError::NoFirstFrame(seconds));
            self.failed = Some(seconds);
            return Err(PlayError::NoFirstFrame(seconds));
        }
        if self.info.is_none() {
            match self.decoder.next(lockstep)? {
                Some(Decoded::Info(info)) => self.info = Some(info),
                Some(Decoded::Failed(why)) => return Err(why),
                _ => return Ok(None),
            }
        }
        let Some(info) = self.info else {
            return Ok(None);
        };
        // Live, the clip's clock starts with its first frame (ffmpeg takes
        // a moment to start, and its first frames would be passed over
        // catching up) and runs on the show's frame time smoothed: a
        // frame that starts late is followed by one that starts early,
        // and each shows the picture of its own moment.
        let step = if lockstep {
            dt
        } else {
            // From no more than a tenth of a second: a first frame after a
            // stall would run the clip ahead for seconds.
            let smooth = self.frame_time.map_or(dt.min(0.1), |smooth| {
                smooth + (dt - smooth) * FRAME_TIME_SMOOTHING
            });
            self.frame_time = Some(smooth);
            smooth
        };
        let started = lockstep || self.shown.is_some() || self.ahead.is_some();
        if !self.ended && started {
            self.played += step * f64::from(transport.speed.clamp(0.0, 16.0));
        }
        // In lockstep frame n is due at n / fps exactly (a hair past, for
        // the sum's rounding). Live, the nearest frame is due: the show's
        // frames land close to the clip's own when the rates match, and a
        // frame time that jitters across a frame's edge would show one
        // frame twice and pass over the next.
        let phase = if lockstep { 1e-6 } else { 0.5 };
        let due = ((self.played * info.fps) + phase).floor() as u64;
        let mut newest = None;
        loop {
            if let Some((index, _)) = &self.ahead {
                if *index > due {
                    break;
                }
                if let Some((_, passed)) = std::mem::replace(&mut newest, self.ahead.take()) {
                    self.decoder.give_back(passed);
                }
                continue;
            }
            let wait = lockstep && newest.as_ref().is_none_or(|(i, _)| *i < due) && !self.ended;
            match self.decoder.next(wait)? {
                Some(Decoded::Frame(index, rgba)) => self.ahead = Some((index, rgba)),
                Some(Decoded::Ended) => {
                    self.ended = true;
                    break;
                }
                Some(Decoded::Failed(why)) => return Err(why),
                Some(Decoded::Info(_)) | None => break,
            }
        }
        match newest {
            Some((index, rgba)) if Some(index) != self.shown => {
                let passed = self.shown.map_or(0, |s| index.saturating_sub(s + 1));
                self.counts = (self.counts.0 + 1, self.counts.1 + passed);
                self.shown = Some(index);
                Ok(Some(rgba))
            }
            _ => Ok(None),
        }
    }

    /// Starts the decoder again `at` seconds into the clip.
    fn restart(&mut self, at: f64, looping: bool) {
        self.decoder = Decoder::start(&self.source, at, looping, self.decoding);
        self.started = Instant::now();
        self.failed = None;
        self.info = None;
        self.offset = at;
        self.played = 0.0;
        self.ahead = None;
        self.shown = None;
        self.ended = false;
    }

    /// Gives a shown frame's bytes back to the decoder.
    pub fn give_back(&self, frame: Vec<u8>) {
        self.decoder.give_back(frame);
    }

    /// Where the clip is now, 0..1.
    pub fn position(&self) -> f64 {
        let Some(info) = self.info.filter(|i| i.duration > 0.0) else {
            return 0.0;
        };
        ((self.offset + self.played) / info.duration).fract()
    }
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
    fn start(source: &(PathBuf, PathBuf), at: f64, looping: bool, decoding: Decoding) -> Self {
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
    fn failed(why: PlayError) -> Self {
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
    fn made_ms(&self) -> Option<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clip_larger_than_the_canvas_is_decoded_to_fit_it_and_a_smaller_one_as_it_is() {
        let fit = Decoding {
            fit: Some([640, 360]),
            ..Decoding::default()
        };
        assert_eq!(fit.size_of([1920, 1080]), [640, 360]);
        assert_eq!(fit.size_of([3840, 2160]), [640, 360]);
        assert_eq!(fit.size_of([1080, 1920]), [202, 360]);
        assert_eq!(fit.size_of([320, 240]), [320, 240]);
        assert_eq!(Decoding::default().size_of([3840, 2160]), [3840, 2160]);
    }
}
