//! Video clips from the show's `media/` folder, decoded by the `ffmpeg`
//! program on a worker thread ([`super::decoder`]): `ffprobe` reads the clip's size, rate and
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

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::camera::Cameras;
use super::decoder::{Decoded, Decoder};
use super::hap::{HapCodec, HapError};
use super::media::MediaError;
use super::probe::{ProbeError, StartError};
use super::source::{FrameLayout, Playing, TextureSource};
use super::still::DecodedImage;
use super::yuv::frame_bytes;

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
    /// Lockstep waited past its limit (the decoder's `LOCKSTEP_WAIT`, the seconds) for a frame.
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
