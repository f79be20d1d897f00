//! Beat tracking from the onset envelope. The tempo is the period whose
//! multiples (one to eight beats) line up best with the autocorrelation of
//! the last 12 s of spectral flux, weighted toward 120 BPM so a beat is not
//! taken for half or double itself; the phase locks to onsets that fall
//! near the predicted beat and carries on by the period between them.

use std::collections::VecDeque;
use std::sync::Arc;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};

/// Seconds of flux the tempo is estimated from.
const ENVELOPE_SECONDS: f64 = 12.0;
/// No estimate from less than this.
const MIN_ENVELOPE_SECONDS: f64 = 3.0;
/// Hops between two tempo estimates.
const ESTIMATE_EVERY: usize = 8;
/// Tempi considered, and the step between candidates.
const SLOWEST: f64 = 60.0;
const FASTEST: f64 = 180.0;
const BPM_STEP: f64 = 0.05;
/// Beats of the autocorrelation each candidate sums.
const MULTIPLES: usize = 8;
/// Centre and width (octaves) of the preference for common tempi.
const PREFERRED_BPM: f64 = 120.0;
const PREFERENCE_OCTAVES: f64 = 1.0;
/// An onset this share of a period from the predicted beat moves it.
const LOCK_WINDOW: f64 = 0.2;

/// Follows the tempo and the beats of one stream.
pub struct BeatTracker {
    hop_seconds: f64,
    envelope: VecDeque<f32>,
    length: usize,
    forward: Arc<dyn RealToComplex<f32>>,
    inverse: Arc<dyn ComplexToReal<f32>>,
    padded: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    correlation: Vec<f32>,
    hops: usize,
    period: Option<f64>,
    next_beat: Option<f64>,
    last_beat: Option<f64>,
}

impl BeatTracker {
    /// A tracker fed every `hop_seconds`.
    pub fn new(hop_seconds: f64) -> Self {
        let length = (ENVELOPE_SECONDS / hop_seconds).ceil() as usize;
        let size = (2 * length).next_power_of_two();
        let mut planner = RealFftPlanner::<f32>::new();
        let forward = planner.plan_fft_forward(size);
        let inverse = planner.plan_fft_inverse(size);
        Self {
            hop_seconds,
            envelope: VecDeque::with_capacity(length),
            length,
            padded: forward.make_input_vec(),
            spectrum: forward.make_output_vec(),
            correlation: inverse.make_output_vec(),
            forward,
            inverse,
            hops: 0,
            period: None,
            next_beat: None,
            last_beat: None,
        }
    }

    /// One hop ending at `time` with its flux and onset; returns the beat
    /// that fell in it, if one did, and the tempo (0 until known).
    pub fn hop(&mut self, time: f64, flux: f32, onset: Option<f64>) -> (Option<f64>, f32) {
        if self.envelope.len() == self.length {
            self.envelope.pop_front();
        }
        self.envelope.push_back(flux);
        self.hops += 1;
        if self.hops.is_multiple_of(ESTIMATE_EVERY)
            && self.envelope.len() as f64 * self.hop_seconds >= MIN_ENVELOPE_SECONDS
            && let Some(period) = self.estimate()
        {
            self.period = Some(period);
        }
        let bpm = self.period.map_or(0.0, |p| (60.0 / p) as f32);
        (self.follow(time, onset), bpm)
    }

    /// Emits predicted beats and locks the prediction to onsets.
    fn follow(&mut self, time: f64, onset: Option<f64>) -> Option<f64> {
        let period = self.period?;
        let window = LOCK_WINDOW * period;
        let mut beat = None;
        if let Some(at) = onset {
            match (self.next_beat, self.last_beat) {
                // Early: the onset is the beat.
                (Some(next), _) if (next - at).abs() <= window => {
                    beat = Some(at);
                    self.last_beat = Some(at);
                    self.next_beat = Some(at + period);
                }
                // Late: the beat was given already; the next one moves.
                (_, Some(last)) if (at - last).abs() <= window => {
                    self.next_beat = Some(at + period);
                }
                // Nothing predicted near (a start, or lost): start here.
                (None, _) => {
                    beat = Some(at);
                    self.last_beat = Some(at);
                    self.next_beat = Some(at + period);
                }
                _ => {}
            }
        }
        if let Some(next) = self.next_beat
            && beat.is_none()
            && time >= next
        {
            beat = Some(next);
            self.last_beat = Some(next);
            // After a long silence the prediction catches up with the clock.
            let behind = ((time - next) / period).floor().max(0.0);
            self.next_beat = Some(next + (behind + 1.0) * period);
        }
        beat
    }

    /// The period (s) that best explains the envelope, or `None` in silence.
    fn estimate(&mut self) -> Option<f64> {
        let n = self.envelope.len();
        let mean = self.envelope.iter().sum::<f32>() / n as f32;
        if mean <= f32::EPSILON {
            return None;
        }
        self.padded.fill(0.0);
        for (p, e) in self.padded.iter_mut().zip(&self.envelope) {
            *p = e - mean;
        }
        // Autocorrelation through the power spectrum (zero-padded, so not
        // circular); the lengths are the planners' own.
        let _ = self.forward.process(&mut self.padded, &mut self.spectrum);
        for c in self.spectrum.iter_mut() {
            *c = Complex::new(c.norm_sqr(), 0.0);
        }
        let _ = self
            .inverse
            .process(&mut self.spectrum, &mut self.correlation);
        // Biased (divided by n, not by the pairs that overlap): long lags,
        // where few pairs overlap, weigh less instead of turning noisy.
        let at = |lag: f64| -> f64 {
            let below = lag.floor() as usize;
            if below + 1 >= n {
                return 0.0;
            }
            let t = lag - below as f64;
            let value = |l: usize| f64::from(self.correlation[l]);
            (value(below) * (1.0 - t) + value(below + 1) * t) / n as f64
        };
        let mut best: Option<(f64, f64)> = None;
        let steps = ((FASTEST - SLOWEST) / BPM_STEP).round() as usize;
        for step in 0..=steps {
            let bpm = SLOWEST + step as f64 * BPM_STEP;
            let period = 60.0 / bpm / self.hop_seconds;
            let comb: f64 = (1..=MULTIPLES).map(|m| at(m as f64 * period)).sum();
            let octaves = (bpm / PREFERRED_BPM).log2() / PREFERENCE_OCTAVES;
            let score = comb * (-0.5 * octaves * octaves).exp();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((bpm, score));
            }
        }
        best.filter(|(_, score)| *score > 0.0)
            .map(|(bpm, _)| 60.0 / bpm)
    }
}
