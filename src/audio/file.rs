//! Sound from a file (WAV, FLAC, MP3, Ogg Vorbis through `symphonia`),
//! analysed in lockstep with the show's clock: frame n of `sylva render
//! --audio` hears the file up to n / fps seconds, whatever the speed of
//! the machine, so a music video renders the same every time.

use std::path::{Path, PathBuf};

use symphonia::core::codecs::audio::AudioDecoderOptions;
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, TrackType};
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;

use super::analysis::{AnalysisSettings, Analyzer};
use super::{Heard, HeardSoFar};

/// Longest sound file read (it is decoded whole: an hour of mono at 48
/// kHz is 0.7 GB of f32).
const MAX_SECONDS: f64 = 3600.0;

/// Sample rates a sound file may declare: what audio interfaces and
/// files use. A rate outside it is a damaged or hostile header, and an
/// absurd one would size every buffer after it.
pub const RATES: std::ops::RangeInclusive<u32> = 8_000..=384_000;

/// Zeros fed after the file's end, without allocating each frame.
static SILENCE: [f32; 4096] = [0.0; 4096];

/// Why a sound file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SoundFileError {
    /// Opening it.
    #[error("{path}: {reason}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: std::io::Error,
    },
    /// Its format or codec.
    #[error("{path}: {reason}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        reason: String,
    },
    /// A sample rate outside [`RATES`] (0 included).
    #[error("{path}: a sample rate of {rate} Hz (sound files are 8,000-384,000 Hz)")]
    Rate {
        /// The file.
        path: PathBuf,
        /// The rate it declares.
        rate: u32,
    },
    /// Longer than [`MAX_SECONDS`].
    #[error("{path}: longer than an hour")]
    TooLong {
        /// The file.
        path: PathBuf,
    },
}

/// Decoded sound, mixed down to mono.
#[derive(Debug, Clone, PartialEq)]
pub struct Sound {
    /// Samples a second.
    pub rate: u32,
    /// Mono samples.
    pub samples: Vec<f32>,
    /// Channels in the file.
    pub channels: usize,
}

impl Sound {
    /// Seconds of sound.
    pub fn seconds(&self) -> f64 {
        self.samples.len() as f64 / f64::from(self.rate.max(1))
    }
}

/// The largest sound file opened: an hour of 384 kHz 32-bit stereo and
/// more (it is decoded as a stream, never read whole).
pub const MAX_SOUND_FILE_BYTES: u64 = 16 << 30;

/// Reads and decodes a sound file whole.
pub fn read(path: &Path) -> Result<Sound, SoundFileError> {
    let decode = |reason: String| SoundFileError::Decode {
        path: path.to_path_buf(),
        reason,
    };
    // A plain file only: a FIFO or a device named as the sound would hold
    // the start for ever.
    let file = crate::base::opener::open_typed(path, MAX_SOUND_FILE_BYTES)
        .map_err(|error| SoundFileError::Open {
            path: path.to_path_buf(),
            reason: std::io::Error::other(error.to_string()),
        })?
        .file;
    let stream = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(extension) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(extension);
    }
    let mut format = symphonia::default::get_probe()
        .probe(
            &hint,
            stream,
            FormatOptions::default(),
            MetadataOptions::default(),
        )
        .map_err(|e| decode(e.to_string()))?;
    let track = format
        .default_track(TrackType::Audio)
        .ok_or_else(|| decode("no audio track".into()))?;
    let track_id = track.id;
    let parameters = track
        .codec_params
        .as_ref()
        .and_then(|p| p.audio())
        .ok_or_else(|| decode("no audio codec parameters".into()))?;
    let refuse_rate = |rate: u32| SoundFileError::Rate {
        path: path.to_path_buf(),
        rate,
    };
    if let Some(rate) = parameters.sample_rate.filter(|r| !RATES.contains(r)) {
        return Err(refuse_rate(rate));
    }
    let mut decoder = symphonia::default::get_codecs()
        .make_audio_decoder(parameters, &AudioDecoderOptions::default())
        .map_err(|e| decode(e.to_string()))?;
    let mut sound = Sound {
        rate: 0,
        samples: Vec::new(),
        channels: 1,
    };
    let mut interleaved: Vec<f32> = Vec::new();
    while let Some(packet) = format.next_packet().map_err(|e| decode(e.to_string()))? {
        if packet.track_id != track_id {
            continue;
        }
        let buffer = match decoder.decode(&packet) {
            Ok(buffer) => buffer,
            // A damaged packet is skipped, as players do.
            Err(symphonia::core::errors::Error::DecodeError(_)) => continue,
            Err(e) => return Err(decode(e.to_string())),
        };
        let spec = buffer.spec();
        if !RATES.contains(&spec.rate()) {
            return Err(refuse_rate(spec.rate()));
        }
        sound.rate = spec.rate();
        sound.channels = spec.channels().count().max(1);
        interleaved.resize(buffer.samples_interleaved(), 0.0);
        buffer.copy_to_slice_interleaved(&mut interleaved);
        sound.samples.extend(
            interleaved
                .chunks(sound.channels)
                .map(|frame| frame.iter().sum::<f32>() / frame.len() as f32),
        );
        if sound.seconds() > MAX_SECONDS {
            return Err(SoundFileError::TooLong {
                path: path.to_path_buf(),
            });
        }
    }
    if sound.rate == 0 {
        return Err(decode("no sound in it".into()));
    }
    Ok(sound)
}

/// A sound file heard in step with the show's clock.
pub struct FileFeed {
    sound: Sound,
    analyzer: Analyzer,
    heard: HeardSoFar,
}

impl FileFeed {
    /// Analyses `sound` with `settings`.
    pub fn new(sound: Sound, settings: AnalysisSettings) -> Self {
        Self {
            analyzer: Analyzer::new(sound.rate, settings),
            sound,
            heard: HeardSoFar::default(),
        }
    }

    /// The sound (for the video's soundtrack).
    pub fn sound(&self) -> &Sound {
        &self.sound
    }

    /// What was heard up to `time` seconds into the file (silence after
    /// its end).
    pub fn hear_until(&mut self, time: f64, gain: super::GainSettings) -> Heard {
        self.analyzer.gain = gain;
        let end = (time * f64::from(self.sound.rate)).floor().max(0.0) as usize;
        let start = self.analyzer.samples_seen() as usize;
        if end > start {
            let available = self.sound.samples.len();
            let from_file = &self.sound.samples[start.min(available)..end.min(available)];
            let heard = &mut self.heard;
            self.analyzer.push(from_file, |frame| heard.add(frame));
            // Past its end the file is silent.
            let mut silence = end - start - from_file.len();
            while silence > 0 {
                let chunk = silence.min(SILENCE.len());
                self.analyzer
                    .push(&SILENCE[..chunk], |frame| heard.add(frame));
                silence -= chunk;
            }
        }
        self.heard.take()
    }
}
