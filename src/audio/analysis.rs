//! Sound to numbers, one hop at a time: a Hann-windowed FFT (`realfft`)
//! over the last `window` samples every `hop` samples gives the level, bass,
//! mid and high, 16 log-spaced bands and the spectral flux; the flux over an
//! adaptive threshold is an onset, and the beat tracker follows the onsets.
//! Automatic gain scales everything so a quiet room and a loud club both
//! reach 1. The same code runs on the live input's thread and on a file in
//! lockstep with `sylva render`, so both hear alike.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};

use super::beat::BeatTracker;
use super::picture::{SoundPicture, TEXELS};

/// Number of log-spaced bands: as many as a modulation can name.
pub use crate::mapping::modulate::BANDS;

/// Lowest and highest band edges, Hz.
const BANDS_FROM: f32 = 30.0;
const BANDS_TO: f32 = 16_000.0;
/// Edges of bass, mid and high, Hz.
const BASS: (f32, f32) = (20.0, 250.0);
const MID: (f32, f32) = (250.0, 4_000.0);
const HIGH: (f32, f32) = (4_000.0, 16_000.0);

/// Compression of magnitudes before the flux: onsets of quiet partials
/// count, a loud steady tone does not swamp them.
const FLUX_COMPRESSION: f32 = 20.0;
/// Seconds of flux the adaptive threshold averages.
const THRESHOLD_SECONDS: f64 = 0.5;
/// The threshold: this many times the recent mean flux...
const THRESHOLD_RATIO: f32 = 1.5;
/// ...plus this much, so silence and hiss never cross it.
const THRESHOLD_FLOOR: f32 = 1.0;
/// Least time between two onsets, s.
const MIN_ONSET_GAP: f64 = 0.08;

/// Automatic gain: the reference falls back this slowly after a loud
/// passage (time constant, s), and never below this level, so silence is
/// not raised to full scale.
const GAIN_RELEASE: f32 = 8.0;
const GAIN_FLOOR: f32 = 0.003;

/// Why analysis settings were refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// The FFT window.
    #[error("the FFT window must be a power of two from 256 to 16384, not {0}")]
    Window(usize),
    /// The hop.
    #[error("the hop must be from 32 samples to the window ({window}), not {hop}")]
    Hop {
        /// The hop asked for.
        hop: usize,
        /// The window.
        window: usize,
    },
}

/// FFT window and hop, in samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalysisSettings {
    /// Samples per FFT.
    pub window: usize,
    /// Samples between two analyses.
    pub hop: usize,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        Self {
            window: 2048,
            hop: 512,
        }
    }
}

impl AnalysisSettings {
    /// The settings when they make sense.
    pub fn checked(self) -> Result<Self, SettingsError> {
        if !self.window.is_power_of_two() || !(256..=16_384).contains(&self.window) {
            return Err(SettingsError::Window(self.window));
        }
        if !(32..=self.window).contains(&self.hop) {
            return Err(SettingsError::Hop {
                hop: self.hop,
                window: self.window,
            });
        }
        Ok(self)
    }
}

/// What one hop heard. Levels are 0..1 after gain.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AudioFrame {
    /// Seconds of sound analysed, at the end of this hop.
    pub time: f64,
    /// RMS level of the hop.
    pub level: f32,
    /// 20-250 Hz.
    pub bass: f32,
    /// 250-4000 Hz.
    pub mid: f32,
    /// 4-16 kHz.
    pub high: f32,
    /// 30 Hz to 16 kHz in 16 log-spaced bands.
    pub bands: [f32; BANDS],
    /// Spectral flux (sum of rises of the compressed spectrum).
    pub flux: f32,
    /// When an onset began in this hop, its time.
    pub onset: Option<f64>,
    /// When a beat fell in this hop, its time.
    pub beat: Option<f64>,
    /// Tempo estimate; 0 until there is one.
    pub bpm: f32,
    /// The spectrum and waveform as Shadertoy's sound texture has them.
    pub picture: SoundPicture,
    /// The last linear timecode read off the sound since the hop before.
    pub ltc: Option<crate::base::timecode::Timecode>,
}

/// How the analysis scales its values, set from the show's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainSettings {
    /// Follow the loudness (else a full-scale sine reads 1).
    pub automatic: bool,
    /// Hold the automatic gain where it is.
    pub frozen: bool,
    /// Multiplies every level after the automatic gain.
    pub manual: f32,
}

impl Default for GainSettings {
    fn default() -> Self {
        Self {
            automatic: true,
            frozen: false,
            manual: 1.0,
        }
    }
}

/// A loudness reference that jumps up with the sound and falls back slowly.
#[derive(Debug, Clone, Copy)]
struct AutoGain {
    reference: f32,
}

impl AutoGain {
    fn new() -> Self {
        Self {
            reference: GAIN_FLOOR,
        }
    }

    /// The gain that takes `loudness` (this hop's) to 1 at the reference.
    fn follow(&mut self, loudness: f32, seconds: f32, settings: GainSettings) -> f32 {
        if !settings.frozen {
            let fallen = self.reference * (-seconds / GAIN_RELEASE).exp();
            self.reference = loudness.max(fallen).max(GAIN_FLOOR);
        }
        let automatic = if settings.automatic {
            1.0 / self.reference
        } else {
            1.0
        };
        automatic * settings.manual.max(0.0)
    }
}

/// FFT bins of each band.
#[derive(Debug, Clone)]
struct BinRanges {
    bass: Range<usize>,
    mid: Range<usize>,
    high: Range<usize>,
    bands: [Range<usize>; BANDS],
    /// Bins the flux sums: up to the highest band edge.
    flux: Range<usize>,
}

impl BinRanges {
    fn new(rate: f32, window: usize) -> Self {
        let bins = window / 2 + 1;
        let bin = |hz: f32| ((hz * window as f32 / rate).round() as usize).clamp(1, bins - 1);
        // A band narrower than a bin still gets one, so low bands never read 0.
        let range = |(from, to): (f32, f32)| {
            let start = bin(from);
            start..bin(to).max(start + 1).min(bins)
        };
        let ratio = BANDS_TO / BANDS_FROM;
        let edge = |k: usize| BANDS_FROM * ratio.powf(k as f32 / BANDS as f32);
        Self {
            bass: range(BASS),
            mid: range(MID),
            high: range(HIGH),
            bands: std::array::from_fn(|k| range((edge(k), edge(k + 1)))),
            flux: 1..bin(BANDS_TO).max(2),
        }
    }
}

/// The running analysis of one stream of mono samples.
pub struct Analyzer {
    rate: f32,
    settings: AnalysisSettings,
    fft: Arc<dyn RealToComplex<f32>>,
    window: Vec<f32>,
    /// The last `window` samples.
    recent: VecDeque<f32>,
    since_hop: usize,
    samples_seen: u64,
    input: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    /// Scales |X| so a sine of amplitude A peaks at A.
    magnitude_scale: f32,
    /// Sum of the window's squares, for the RMS.
    window_power: f32,
    magnitudes: Vec<f32>,
    compressed: Vec<f32>,
    bins: BinRanges,
    flux_recent: VecDeque<f32>,
    flux_before: f32,
    last_onset: Option<f64>,
    level_gain: AutoGain,
    spectrum_gain: AutoGain,
    /// Gain settings, read at every hop.
    pub gain: GainSettings,
    beat: BeatTracker,
    /// Linear timecode, read off the same samples.
    ltc: super::ltc::LtcDecoder,
    /// A timecode read, for the next hop's frame.
    timecode: Option<crate::base::timecode::Timecode>,
}

impl Analyzer {
    /// An analysis of sound at `rate` samples a second.
    pub fn new(rate: u32, settings: AnalysisSettings) -> Self {
        let rate = rate.max(1) as f32;
        let n = settings.window;
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(n);
        let window: Vec<f32> = (0..n)
            .map(|i| 0.5 - 0.5 * (std::f32::consts::TAU * i as f32 / n as f32).cos())
            .collect();
        let magnitude_scale = 2.0 / window.iter().sum::<f32>();
        let window_power = window.iter().map(|w| w * w).sum::<f32>();
        let hop_seconds = settings.hop as f64 / f64::from(rate);
        Self {
            rate,
            settings,
            input: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            fft,
            window,
            recent: std::iter::repeat_n(0.0, n).collect(),
            since_hop: 0,
            samples_seen: 0,
            magnitude_scale,
            window_power,
            magnitudes: vec![0.0; n / 2 + 1],
            compressed: vec![0.0; n / 2 + 1],
            bins: BinRanges::new(rate, n),
            ltc: super::ltc::LtcDecoder::new(rate as u32),
            timecode: None,
            flux_recent: VecDeque::new(),
            flux_before: 0.0,
            last_onset: None,
            level_gain: AutoGain::new(),
            spectrum_gain: AutoGain::new(),
            gain: GainSettings::default(),
            beat: BeatTracker::new(hop_seconds),
        }
    }

    /// Samples per second.
    pub fn rate(&self) -> u32 {
        self.rate as u32
    }

    /// The window and hop.
    pub fn settings(&self) -> AnalysisSettings {
        self.settings
    }

    /// Seconds of sound analysed so far.
    pub fn time(&self) -> f64 {
        self.samples_seen as f64 / f64::from(self.rate)
    }

    /// Samples analysed so far.
    pub fn samples_seen(&self) -> u64 {
        self.samples_seen
    }

    /// Feeds samples; `heard` gets the frame of every hop they complete.
    pub fn push(&mut self, samples: &[f32], mut heard: impl FnMut(&AudioFrame)) {
        let mut timecode = self.timecode.take();
        self.ltc.push(samples, |tc, _| timecode = Some(tc));
        self.timecode = timecode;
        for &sample in samples {
            self.recent.pop_front();
            // A NaN or infinity from a broken driver or file reads as silence.
            self.recent
                .push_back(if sample.is_finite() { sample } else { 0.0 });
            self.samples_seen += 1;
            self.since_hop += 1;
            if self.since_hop == self.settings.hop {
                self.since_hop = 0;
                let frame = self.analyse();
                heard(&frame);
            }
        }
    }

    fn analyse(&mut self) -> AudioFrame {
        let time = self.time();
        let hop_seconds = self.settings.hop as f32 / self.rate;
        let (older, newer) = self.recent.as_slices();
        for ((x, s), w) in self
            .input
            .iter_mut()
            .zip(older.iter().chain(newer))
            .zip(&self.window)
        {
            *x = s * w;
        }
        // RMS over the Hann window (not the hop alone): steady for bass
        // notes longer than a hop.
        let window_rms = (self.input.iter().map(|x| x * x).sum::<f32>() / self.window_power).sqrt();
        // The lengths are the planner's own, so this cannot fail.
        let _ =
            self.fft
                .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch);
        for (m, c) in self.magnitudes.iter_mut().zip(&self.spectrum) {
            *m = c.norm() * self.magnitude_scale;
        }
        let band = |range: &Range<usize>| -> f32 {
            self.magnitudes[range.clone()]
                .iter()
                .map(|m| m * m)
                .sum::<f32>()
                .sqrt()
        };
        let (bass, mid, high) = (
            band(&self.bins.bass),
            band(&self.bins.mid),
            band(&self.bins.high),
        );
        let bands: [f32; BANDS] = std::array::from_fn(|k| band(&self.bins.bands[k]));
        // A full-scale sine has an RMS of 1/sqrt(2): level reads it as 1.
        let level = window_rms * std::f32::consts::SQRT_2;
        let level_gain = self.level_gain.follow(level, hop_seconds, self.gain);
        let gain = self
            .spectrum_gain
            .follow(bass.max(mid).max(high), hop_seconds, self.gain);
        let scaled = |v: f32| (v * gain).clamp(0.0, 1.0);
        let flux = self.flux(gain);
        let onset = self.onset(time, flux);
        let (beat, bpm) = self.beat.hop(time, flux, onset);
        let from = self.recent.len().saturating_sub(TEXELS);
        let last: Vec<f32> = self.recent.range(from..).copied().collect();
        let bin_hz = self.rate / self.settings.window as f32;
        AudioFrame {
            picture: SoundPicture::of(&self.magnitudes, bin_hz, gain, &last),
            time,
            level: (level * level_gain).clamp(0.0, 1.0),
            bass: scaled(bass),
            mid: scaled(mid),
            high: scaled(high),
            bands: bands.map(scaled),
            flux,
            onset,
            beat,
            bpm,
            ltc: self.timecode.take(),
        }
    }

    /// Sum of the rises of the compressed, gain-scaled spectrum.
    fn flux(&mut self, gain: f32) -> f32 {
        let mut flux = 0.0;
        for k in self.bins.flux.clone() {
            let now = (FLUX_COMPRESSION * self.magnitudes[k] * gain).ln_1p();
            flux += (now - self.compressed[k]).max(0.0);
            self.compressed[k] = now;
        }
        flux
    }

    /// An onset when the flux rises over its recent mean (times a ratio,
    /// plus a floor) and the last onset is long enough ago; its time is
    /// the middle of the hop that brought it.
    fn onset(&mut self, time: f64, flux: f32) -> Option<f64> {
        let mean = if self.flux_recent.is_empty() {
            0.0
        } else {
            self.flux_recent.iter().sum::<f32>() / self.flux_recent.len() as f32
        };
        let threshold = THRESHOLD_RATIO * mean + THRESHOLD_FLOOR;
        let rising = flux > self.flux_before;
        let rested = self
            .last_onset
            .is_none_or(|last| time - last >= MIN_ONSET_GAP);
        self.flux_before = flux;
        let kept = (THRESHOLD_SECONDS * f64::from(self.rate) / self.settings.hop as f64).ceil();
        self.flux_recent.push_back(flux);
        while self.flux_recent.len() > kept as usize {
            self.flux_recent.pop_front();
        }
        let at = time - 0.5 * self.settings.hop as f64 / f64::from(self.rate);
        (flux > threshold && rising && rested).then(|| {
            self.last_onset = Some(time);
            at
        })
    }
}
