//! The `[[modulate]]` schema (modulation without code): a `[[modulate]]` entry of a mapping file routes
//! a source (the audio analysis, the beat, an LFO) through an envelope and
//! a curve to an offset added to a parameter's value. MIDI, OSC and Lua go
//! on setting the base value, so a knob and the music play together.
//!
//! ```toml
//! [[modulate]]
//! source = "audio.bass"          # audio.level|bass|mid|high|onset, audio.band.1-16,
//!                                # beat.phase, bar.phase, lfo.sine|saw|square|random
//! param = "colony.growth_speed"
//! range = [0.0, 4.0]             # what the source's 0..1 adds
//! curve = "linear"               # exponential, logarithmic
//! attack = 0.01                  # seconds to follow a rise
//! release = 0.3                  # seconds to fall back
//! beats = 4                      # LFOs: one cycle every 4 beats, or
//! rate = 0.25                    #       a rate in Hz
//! phase = 0.0                    # LFOs: where in the cycle they start
//! ```

use serde::{Deserialize, Serialize};

use super::Curve;

/// The audio analysis's frequency bands (`audio.band.1-16`), which a
/// modulation may name and the analysis fills.
pub const BANDS: usize = 16;

/// One `[[modulate]]` entry as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Modulation {
    /// What moves the parameter.
    pub source: String,
    /// The parameter moved.
    pub param: String,
    /// The offset at the source's 0 and at its 1.
    #[serde(default = "unit_range")]
    pub range: [f32; 2],
    /// Shape of the source before the range.
    #[serde(default)]
    pub curve: Curve,
    /// Seconds to follow a rise (0: at once).
    #[serde(default)]
    pub attack: f32,
    /// Seconds to fall back (0: at once).
    #[serde(default)]
    pub release: f32,
    /// LFO rate in Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f32>,
    /// LFO period in beats (instead of `rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beats: Option<f32>,
    /// LFO start within its cycle, 0..1.
    #[serde(default)]
    pub phase: f32,
}

fn unit_range() -> [f32; 2] {
    [0.0, 1.0]
}

/// A source, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A read-only `audio.*` parameter (level, bass, mid, high, onset).
    Audio(&'static str),
    /// One of the 16 bands, 0-based.
    Band(usize),
    /// Position in the beat.
    BeatPhase,
    /// Position in the bar of four beats.
    BarPhase,
    /// A low-frequency oscillator.
    Lfo(Shape),
}

/// LFO wave shapes, all 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Starts at 0, peaks half-way.
    Sine,
    /// Rises over the cycle.
    Saw,
    /// 1 for the first half.
    Square,
    /// A new random value each cycle.
    Random,
}

impl Modulation {
    /// The source, or why the entry cannot be used.
    pub fn check(&self) -> Result<Source, String> {
        self.check_keyed().map_err(|(_, message)| message)
    }

    /// The source, or the key at fault and why.
    pub fn check_keyed(&self) -> Result<Source, (&'static str, String)> {
        let source = match self.source.as_str() {
            "audio.level" => Source::Audio("audio.level"),
            "audio.bass" => Source::Audio("audio.bass"),
            "audio.mid" => Source::Audio("audio.mid"),
            "audio.high" => Source::Audio("audio.high"),
            "audio.onset" => Source::Audio("audio.onset"),
            "beat.phase" => Source::BeatPhase,
            "bar.phase" => Source::BarPhase,
            "lfo.sine" => Source::Lfo(Shape::Sine),
            "lfo.saw" => Source::Lfo(Shape::Saw),
            "lfo.square" => Source::Lfo(Shape::Square),
            "lfo.random" => Source::Lfo(Shape::Random),
            other => match other
                .strip_prefix("audio.band.")
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) if (1..=BANDS).contains(&n) => Source::Band(n - 1),
                _ => {
                    return Err((
                        "source",
                        format!(
                            "unknown source {other:?} (audio.level, audio.bass, audio.mid, audio.high, audio.onset, audio.band.1-{BANDS}, beat.phase, bar.phase, lfo.sine, lfo.saw, lfo.square, lfo.random)"
                        ),
                    ));
                }
            },
        };
        let finite = |x: f32| x.is_finite();
        if !self.range.iter().all(|x| finite(*x)) {
            return Err(("range", "range must be two numbers".into()));
        }
        if !(finite(self.attack) && self.attack >= 0.0) {
            return Err(("attack", "attack and release are seconds, 0 or more".into()));
        }
        if !(finite(self.release) && self.release >= 0.0) {
            return Err((
                "release",
                "attack and release are seconds, 0 or more".into(),
            ));
        }
        if let Source::Lfo(_) = source {
            match (self.rate, self.beats) {
                (Some(hz), None) if finite(hz) && hz > 0.0 && hz <= 100.0 => {}
                (None, Some(beats)) if finite(beats) && beats > 0.0 && beats <= 4096.0 => {}
                (None, None) => return Err(("source", "an LFO needs rate (Hz) or beats".into())),
                (Some(_), Some(_)) => {
                    return Err(("beats", "an LFO takes rate or beats, not both".into()));
                }
                (Some(_), None) => return Err(("rate", "rate is 0-100 Hz, beats 0-4096".into())),
                (None, Some(_)) => return Err(("beats", "rate is 0-100 Hz, beats 0-4096".into())),
            }
        }
        if !finite(self.phase) {
            return Err(("phase", "phase must be a number".into()));
        }
        Ok(source)
    }
}
