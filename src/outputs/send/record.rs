//! Recording the performance: frames held to a steady rate by show time
//! (a frame repeated where the show ran slow, passed over where it ran
//! fast) into ffmpeg, the live input's samples beside it into a WAV file,
//! and both muxed into the one file asked for when the recording stops
//! (the picture's length; sound that started late or stopped early is
//! silence).
//! Nothing is kept in memory beyond one frame and a second of sound.
//! A take is checked once written ([`super::take`]): ffmpeg that said an
//! error, or a file that does not play or lacks frames, is a failed take,
//! said on screen and in the log; only a take that plays is "recorded".

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use super::take::TakeError;
use super::tap::{Frame, Sink, SinkError};
use crate::outputs::stderr_tail::StderrTail;
use crate::outputs::video::{FfmpegTools, VideoError, VideoWriter};

/// Samples as the live input gave them, for a recording's soundtrack: the
/// rate and a block of mono samples.
pub type SoundBlock = (u32, Vec<f32>);

/// Why a recording could not start, or its take failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The recordings folder could not be made.
    #[error("{}: {error}", .path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The take's file could not be made new.
    #[error("recording {}: {error}", .path.display())]
    Made {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// ffmpeg would not start.
    #[error("recording: {0}")]
    Start(VideoError),
    /// A frame after the take ended.
    #[error("recording already finished")]
    Finished,
    /// ffmpeg stopped taking frames.
    #[error("recording {}: {error}", .path.display())]
    Frame {
        /// The take.
        path: PathBuf,
        /// Why.
        error: VideoError,
    },
    /// The take was made but does not play.
    #[error("recording {}: the take failed: {why}", .path.display())]
    Failed {
        /// The take.
        path: PathBuf,
        /// Why.
        why: TakeFailure,
    },
    /// The thread writing the sound panicked.
    #[error("the sound writer panicked")]
    SoundPanicked,
    /// The sound could not be written.
    #[error("recording's sound {}: {error}", .path.display())]
    Sound {
        /// The sound's file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// Why a take written out is not a take that plays.
#[derive(Debug, thiserror::Error)]
pub enum TakeFailure {
    /// ffmpeg failed on the picture.
    #[error(transparent)]
    Encoded(#[from] VideoError),
    /// The sound could not be muxed in.
    #[error(transparent)]
    Mux(#[from] MuxError),
    /// The picture could not be put in the take's place.
    #[error(transparent)]
    Rename(#[from] std::io::Error),
    /// The take does not check.
    #[error(transparent)]
    Check(#[from] TakeError),
}

/// Why ffmpeg did not mux the sound in.
#[derive(Debug, thiserror::Error)]
pub enum MuxError {
    /// ffmpeg would not run.
    #[error("muxing the sound in: {0}")]
    Run(#[from] std::io::Error),
    /// ffmpeg failed or said an error.
    #[error(
        "ffmpeg could not mux the sound in ({status}: {said}); the picture is in {}",
        .video.display()
    )]
    Failed {
        /// How it ended.
        status: std::process::ExitStatus,
        /// What it said.
        said: String,
        /// The picture, kept.
        video: PathBuf,
    },
}

/// A recording being made.
pub struct Recording {
    path: PathBuf,
    video_part: PathBuf,
    video: Option<VideoWriter>,
    sound: Option<std::thread::JoinHandle<Result<Option<PathBuf>, RecordError>>>,
    /// Tells the sound writer the recording ends.
    stop: Arc<AtomicBool>,
    fps: f64,
    /// Show time of the first frame, and frames due since.
    start: Option<f64>,
    written: u64,
    /// Frames handed to ffmpeg (a show paused for long is not repeated).
    frames: u64,
    tools: FfmpegTools,
}

impl Recording {
    /// Starts recording `size` frames at `fps` into `path`, with `sound`
    /// (the live input's samples) as its soundtrack.
    pub fn start(
        path: &Path,
        size: [u32; 2],
        fps: f32,
        sound: Option<Receiver<SoundBlock>>,
    ) -> Result<Self, RecordError> {
        Self::start_with(FfmpegTools::default(), path, size, fps, sound)
    }

    /// [`Recording::start`] through the ffmpeg and ffprobe of `tools`.
    pub fn start_with(
        tools: FfmpegTools,
        path: &Path,
        size: [u32; 2],
        fps: f32,
        sound: Option<Receiver<SoundBlock>>,
    ) -> Result<Self, RecordError> {
        let video_part = part(path, "video.mp4");
        made_new(&video_part)?;
        let video = VideoWriter::start_with(&tools, &video_part, size, fps, None)
            .map_err(RecordError::Start)?;
        let stop = Arc::new(AtomicBool::new(false));
        let sound = sound.map(|blocks| {
            let wav = part(path, "sound.wav");
            let stop = stop.clone();
            std::thread::spawn(move || {
                write_wav(&wav, &blocks, &stop).map(|rate| rate.map(|_| wav))
            })
        });
        Ok(Self {
            path: path.to_path_buf(),
            video_part,
            video: Some(video),
            sound,
            stop,
            fps: f64::from(fps),
            start: None,
            written: 0,
            frames: 0,
            tools,
        })
    }
}

impl Sink for Recording {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        let start = *self.start.get_or_insert(frame.time);
        let due = ((frame.time - start) * self.fps).floor() as u64 + 1;
        let Some(video) = self.video.as_mut() else {
            return Err(RecordError::Finished.into());
        };
        let missing = due.saturating_sub(self.written);
        if missing == 0 {
            return Ok(());
        }
        // At most a second of repeats: a show paused for longer resumes
        // the recording where it is rather than filling it with one frame.
        for _ in 0..missing.min(self.fps as u64 + 1) {
            video
                .frame(&frame.rgba)
                .map_err(|error| RecordError::Frame {
                    path: self.path.clone(),
                    error,
                })?;
            self.frames += 1;
        }
        self.written = due;
        Ok(())
    }

    fn finish(&mut self) -> Result<Option<String>, SinkError> {
        Ok(self.finish_take()?)
    }
}

impl Recording {
    /// Writes the take out, muxed and checked; its path.
    fn finish_take(&mut self) -> Result<Option<String>, RecordError> {
        let video = self.video.take().ok_or(RecordError::Finished)?;
        // The sound stops with the picture, whether the picture was made.
        self.stop.store(true, Ordering::Relaxed);
        let encoded = video.finish();
        let failed = |why: TakeFailure| RecordError::Failed {
            path: self.path.clone(),
            why,
        };
        if let Err(why) = encoded {
            if let Some(thread) = self.sound.take() {
                thread.join().ok();
            }
            std::fs::remove_file(part(&self.path, "sound.wav")).ok();
            return Err(failed(why.into()));
        }
        let sound = match self.sound.take() {
            Some(thread) => thread.join().map_err(|_| RecordError::SoundPanicked)??,
            None => None,
        };
        match sound {
            Some(wav) => {
                let muxed = mux(&self.tools.ffmpeg, &self.video_part, &wav, &self.path);
                std::fs::remove_file(&wav).ok();
                muxed.map_err(|e| failed(e.into()))?;
                std::fs::remove_file(&self.video_part).ok();
            }
            None => std::fs::rename(&self.video_part, &self.path).map_err(|e| failed(e.into()))?,
        }
        super::take::check(&self.tools.ffprobe, &self.path, self.frames)
            .map_err(|e| failed(e.into()))?;
        tracing::info!(
            "recorded {} ({} frames at {} fps)",
            self.path.display(),
            self.frames,
            self.fps
        );
        Ok(Some(self.path.display().to_string()))
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // A take dropped unfinished (ffmpeg gone mid-take): its sound
        // writer stops too rather than wait on the input for ever.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Makes `path` a new empty file for ffmpeg to write, refusing anything
/// already there (a link planted under a take's name included): ffmpeg
/// opens a name, and would write through a link out of the show folder.
fn made_new(path: &Path) -> Result<(), RecordError> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map(drop)
        .map_err(|error| RecordError::Made {
            path: path.to_path_buf(),
            error,
        })
}

/// `path` with `tail` in place of its extension, beside it.
pub(super) fn part(path: &Path, tail: &str) -> PathBuf {
    path.with_extension(format!("part.{tail}"))
}

/// Writes the blocks into a mono 32-bit float WAV at `path` until `stop`
/// (or the input is gone); the rate of the first block, or none if none
/// came.
fn write_wav(
    path: &Path,
    blocks: &Receiver<SoundBlock>,
    stop: &AtomicBool,
) -> Result<Option<u32>, RecordError> {
    let why = |error: std::io::Error| RecordError::Sound {
        path: path.to_path_buf(),
        error,
    };
    let next = || loop {
        match blocks.recv_timeout(Duration::from_millis(50)) {
            Ok(block) => return Some(block),
            Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {}
            Err(_) => return None,
        }
    };
    let Some((rate, first)) = next() else {
        return Ok(None);
    };
    // Made new: a link planted under the part's name is refused, never
    // written through.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path);
    let mut file = BufWriter::new(file.map_err(why)?);
    file.write_all(&wav_header(rate, 0)).map_err(why)?;
    let mut samples: u64 = 0;
    let mut block = Some(first);
    while let Some(samples_in) = block {
        for s in &samples_in {
            file.write_all(&s.to_le_bytes()).map_err(why)?;
        }
        samples += samples_in.len() as u64;
        block = next().map(|(_, b)| b);
    }
    let bytes = u32::try_from(samples * 4).unwrap_or(u32::MAX - 64);
    file.seek(SeekFrom::Start(0)).map_err(why)?;
    file.write_all(&wav_header(rate, bytes)).map_err(why)?;
    file.flush().map_err(why)?;
    Ok(Some(rate))
}

/// A WAV header for `bytes` of mono 32-bit float samples at `rate`.
fn wav_header(rate: u32, bytes: u32) -> [u8; 44] {
    let mut header = [0u8; 44];
    let mut at = 0;
    let mut put = |b: &[u8]| {
        header[at..at + b.len()].copy_from_slice(b);
        at += b.len();
    };
    put(b"RIFF");
    put(&(36u32.saturating_add(bytes)).to_le_bytes());
    put(b"WAVEfmt ");
    put(&16u32.to_le_bytes());
    put(&3u16.to_le_bytes()); // IEEE float
    put(&1u16.to_le_bytes()); // mono
    put(&rate.to_le_bytes());
    put(&(rate * 4).to_le_bytes());
    put(&4u16.to_le_bytes());
    put(&32u16.to_le_bytes());
    put(b"data");
    put(&bytes.to_le_bytes());
    header
}

/// The video and the sound into `path` by `ffmpeg`, the video copied as
/// it is; a failure if ffmpeg fails or says an error.
fn mux(ffmpeg: &std::ffi::OsStr, video: &Path, sound: &Path, path: &Path) -> Result<(), MuxError> {
    // Owned: killed and reaped if this thread goes before it ends.
    let mut child = crate::base::child::OwnedChild::spawn(
        std::process::Command::new(ffmpeg)
            .args(["-hide_banner", "-loglevel", "error", "-y", "-i"])
            .arg(video)
            .arg("-i")
            .arg(sound)
            .args([
                "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac", "-b:a", "256k",
            ])
            .arg(path)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped()),
    )?;
    let said = StderrTail::read(child.take_stderr());
    let status = child.wait()?;
    let said = said.said(Duration::from_secs(2));
    if status.success() && said.is_empty() {
        Ok(())
    } else {
        Err(MuxError::Failed {
            status,
            said,
            video: video.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wav_header_says_mono_float_at_its_rate() {
        let header = wav_header(48_000, 400);
        assert_eq!(&header[0..4], b"RIFF");
        assert_eq!(
            u32::from_le_bytes([header[4], header[5], header[6], header[7]]),
            436
        );
        assert_eq!(u16::from_le_bytes([header[20], header[21]]), 3);
        assert_eq!(
            u32::from_le_bytes([header[24], header[25], header[26], header[27]]),
            48_000
        );
        assert_eq!(
            u32::from_le_bytes([header[40], header[41], header[42], header[43]]),
            400
        );
    }
}
