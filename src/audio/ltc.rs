//! Linear timecode (SMPTE 12M LTC) heard on the audio input: the signal's
//! zero crossings read as biphase mark code (a bit is one cell; a 1 has a
//! crossing in the middle of its cell as well), the cell's length learnt
//! from the signal itself, the bits shifted in until the sync word
//! `0011 1111 1111 1101` closes an 80-bit frame, whose BCD fields give
//! the timecode. The frame rate is read from the cell length (24, 25 or
//! 30; 29.97 where the drop-frame flag is set). Either polarity reads the
//! same; levels down to a few hundredths of full scale are heard.
//! [`encode`] makes the signal a timecode generator sends, for tests.

use crate::base::timecode::{FrameRate, Timecode};

/// Bits in an LTC frame.
const BITS: u32 = 80;
/// The sync word, bits 64-79 as they arrive (bit 64 lowest).
const SYNC: u128 = 0xBFFC;
/// Below this the signal is silence, not crossings.
const FLOOR: f32 = 0.02;

/// Reads LTC from a stream of samples.
#[derive(Debug, Clone)]
pub struct LtcDecoder {
    rate: f32,
    /// Samples a bit cell takes, learnt.
    cell: f32,
    /// The signal's sign after the last crossing.
    high: bool,
    /// Samples since the last crossing.
    since: f32,
    /// Half a cell heard: the next half makes a 1.
    half: bool,
    /// The last 80 bits, the newest at bit 79.
    bits: u128,
}

impl LtcDecoder {
    /// A decoder for samples at `rate` Hz.
    pub fn new(rate: u32) -> Self {
        let rate = rate as f32;
        Self {
            rate,
            // Between 24 fps (1920 bits a second) and 30 (2400).
            cell: rate / 2160.0,
            high: false,
            since: 0.0,
            half: false,
            bits: 0,
        }
    }

    /// Reads `samples`; `heard` gets each timecode completed, with the
    /// number of samples of `samples` after its end.
    pub fn push(&mut self, samples: &[f32], mut heard: impl FnMut(Timecode, usize)) {
        for (index, &sample) in samples.iter().enumerate() {
            self.since += 1.0;
            let crossed = if self.high {
                sample < -FLOOR
            } else {
                sample > FLOOR
            };
            if !crossed {
                continue;
            }
            self.high = !self.high;
            let interval = std::mem::replace(&mut self.since, 0.0);
            if let Some(timecode) = self.crossing(interval) {
                heard(timecode, samples.len() - index - 1);
            }
        }
    }

    /// A crossing `interval` samples after the one before.
    fn crossing(&mut self, interval: f32) -> Option<Timecode> {
        let (shortest, longest) = (self.rate / 2400.0 * 0.4, self.rate / 1920.0 * 1.6);
        if !(shortest..longest).contains(&interval) {
            // Silence, a click or a dropout: start reading again.
            self.half = false;
            return None;
        }
        if interval > 0.75 * self.cell {
            self.cell += 0.1 * (interval - self.cell);
            self.half = false;
            return self.bit(false);
        }
        self.cell += 0.1 * (2.0 * interval - self.cell);
        self.half = !self.half;
        if self.half { None } else { self.bit(true) }
    }

    /// One bit; the frame once the sync word closes it.
    fn bit(&mut self, one: bool) -> Option<Timecode> {
        self.bits = (self.bits >> 1) | (u128::from(one) << (BITS - 1));
        if (self.bits >> 64) & 0xFFFF != SYNC {
            return None;
        }
        let fps = self.rate / (self.cell * BITS as f32);
        let field = |at: u32, width: u32| ((self.bits >> at) & ((1 << width) - 1)) as u8;
        let drop = field(10, 1) == 1;
        let rate = match fps {
            _ if drop => FrameRate::Drop2997,
            f if f < 24.5 => FrameRate::Film24,
            f if f < 27.5 => FrameRate::Ebu25,
            _ => FrameRate::Smpte30,
        };
        let timecode = Timecode {
            frames: field(0, 4) + 10 * field(8, 2),
            seconds: field(16, 4) + 10 * field(24, 3),
            minutes: field(32, 4) + 10 * field(40, 3),
            hours: field(48, 4) + 10 * field(56, 2),
            rate,
        };
        // A frame's timecode names the frame it began; it is read at its
        // end, when the next begins.
        timecode.valid().then(|| timecode.plus_frames(1))
    }
}

/// `frames` frames of LTC from `first` at `sample_rate`, at full scale,
/// as a timecode generator sends them.
pub fn encode(first: Timecode, frames: u32, sample_rate: u32) -> Vec<f32> {
    let cell = f64::from(sample_rate) / (first.rate.fps() * f64::from(BITS));
    let mut out = Vec::new();
    let mut level = 1.0f32;
    let mut t = 0.0f64;
    for n in 0..u64::from(frames) {
        let bits = frame_bits(first.plus_frames(n));
        for k in 0..BITS {
            let one = (bits >> k) & 1 == 1;
            // Every cell starts with a transition; a 1 has one in its middle.
            level = -level;
            let halves: &[f64] = if one { &[0.5, 0.5] } else { &[1.0] };
            for (i, half) in halves.iter().enumerate() {
                if i == 1 {
                    level = -level;
                }
                let end = t + half * cell;
                while (out.len() as f64) < end.floor() {
                    out.push(level);
                }
                t = end;
            }
        }
    }
    out
}

/// The 80 bits of `timecode`'s frame, bit 0 first.
fn frame_bits(timecode: Timecode) -> u128 {
    let put = |value: u8, at: u32| u128::from(value) << at;
    let mut bits = put(timecode.frames % 10, 0)
        | put(timecode.frames / 10, 8)
        | put(timecode.seconds % 10, 16)
        | put(timecode.seconds / 10, 24)
        | put(timecode.minutes % 10, 32)
        | put(timecode.minutes / 10, 40)
        | put(timecode.hours % 10, 48)
        | put(timecode.hours / 10, 56)
        | SYNC << 64;
    if timecode.rate == FrameRate::Drop2997 {
        bits |= 1 << 10;
    }
    // The polarity bit (27, or 59 at 25 fps) keeps each frame's
    // transitions even, so every frame starts on the same edge.
    if (bits.count_ones() + BITS) % 2 == 1 {
        let polarity = if timecode.rate == FrameRate::Ebu25 {
            59
        } else {
            27
        };
        bits |= 1 << polarity;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hear(signal: &[f32], rate: u32) -> Vec<Timecode> {
        let mut decoder = LtcDecoder::new(rate);
        let mut heard = Vec::new();
        // In the chunks an input thread drains.
        for chunk in signal.chunks(97) {
            decoder.push(chunk, |tc, _| heard.push(tc));
        }
        heard
    }

    #[test]
    fn every_rate_reads_back_at_either_polarity_quiet_and_noisy() {
        for (rate, sample_rate) in [
            (FrameRate::Film24, 44_100),
            (FrameRate::Ebu25, 48_000),
            (FrameRate::Drop2997, 48_000),
            (FrameRate::Smpte30, 96_000),
        ] {
            let first = Timecode::from_frame_number(3_600 * 25 + 17, rate);
            let signal = encode(first, 30, sample_rate);
            let mut noise = crate::base::rng::Rng::new(7);
            let variants: [Vec<f32>; 3] = [
                signal.clone(),
                signal.iter().map(|s| -s).collect(),
                signal
                    .iter()
                    .map(|s| 0.1 * s + 0.02 * (noise.unit() - 0.5))
                    .collect(),
            ];
            for (v, samples) in variants.iter().enumerate() {
                let heard = hear(samples, sample_rate);
                assert!(
                    heard.len() >= 28,
                    "{rate:?} variant {v}: {} of 30 frames",
                    heard.len()
                );
                for pair in heard.windows(2) {
                    assert_eq!(pair[1], pair[0].plus_frames(1), "{rate:?} variant {v}");
                }
                // The last frame's last bit ends at an edge that never comes.
                let last = heard[heard.len() - 1];
                assert_eq!(last, first.plus_frames(29), "{rate:?} variant {v}");
            }
        }
    }

    #[test]
    fn silence_and_clicks_make_no_timecode() {
        let mut noise = crate::base::rng::Rng::new(3);
        let clicks: Vec<f32> = (0..48_000)
            .map(|_| if noise.unit() < 0.01 { 1.0 } else { 0.0 })
            .collect();
        assert!(hear(&clicks, 48_000).is_empty());
        assert!(hear(&[0.0; 48_000], 48_000).is_empty());
    }
}
