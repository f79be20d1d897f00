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
pub enum ModulationSource {
    /// A read-only `audio.*` parameter (level, bass, mid, high, onset).
    Audio(&'static str),
    /// One of the 16 bands, 0-based.
    Band(usize),
    /// Position in the beat.
    BeatPhase,
    /// Position in the bar of four beats.
    BarPhase,
    /// A low-frequency oscillator.
    Lfo(LfoShape),
}

/// LFO wave shapes, all 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LfoShape {
    /// Starts at 0, peaks half-way.
    Sine,
    /// Rises over the cycle.
    Saw,
    /// 1 for the first half.
    Square,
    /// A new random value each cycle.
    Random,
}

/// Why a `[[modulate]]` entry cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModulationError {
    /// A source of no known name.
    #[error(
        "unknown source {0:?} (audio.level, audio.bass, audio.mid, audio.high, audio.onset, audio.band.1-{BANDS}, beat.phase, bar.phase, lfo.sine, lfo.saw, lfo.square, lfo.random)"
    )]
    UnknownSource(String),
    /// A range that is not two numbers.
    #[error("range must be two numbers")]
    Range,
    /// An attack below 0 or not a number.
    #[error("attack and release are seconds, 0 or more")]
    Attack,
    /// A release below 0 or not a number.
    #[error("attack and release are seconds, 0 or more")]
    Release,
    /// An LFO with neither rate nor beats.
    #[error("an LFO needs rate (Hz) or beats")]
    NoRate,
    /// An LFO with both.
    #[error("an LFO takes rate or beats, not both")]
    RateAndBeats,
    /// A rate out of range.
    #[error("rate is 0-100 Hz, beats 0-4096")]
    Rate,
    /// Beats out of range.
    #[error("rate is 0-100 Hz, beats 0-4096")]
    Beats,
    /// A phase that is not a number.
    #[error("phase must be a number")]
    Phase,
}

impl ModulationError {
    /// The entry's key at fault.
    pub fn key(&self) -> &'static str {
        match self {
            Self::UnknownSource(_) | Self::NoRate => "source",
            Self::Range => "range",
            Self::Attack => "attack",
            Self::Release => "release",
            Self::RateAndBeats | Self::Beats => "beats",
            Self::Rate => "rate",
            Self::Phase => "phase",
        }
    }
}

impl Modulation {
    /// The source, or why the entry cannot be used.
    pub fn check(&self) -> Result<ModulationSource, ModulationError> {
        self.check_keyed()
    }

    /// The source, or why the entry cannot be used (its
    /// [`key`](ModulationError::key) at fault).
    pub fn check_keyed(&self) -> Result<ModulationSource, ModulationError> {
        let source = match self.source.as_str() {
            "audio.level" => ModulationSource::Audio("audio.level"),
            "audio.bass" => ModulationSource::Audio("audio.bass"),
            "audio.mid" => ModulationSource::Audio("audio.mid"),
            "audio.high" => ModulationSource::Audio("audio.high"),
            "audio.onset" => ModulationSource::Audio("audio.onset"),
            "beat.phase" => ModulationSource::BeatPhase,
            "bar.phase" => ModulationSource::BarPhase,
            "lfo.sine" => ModulationSource::Lfo(LfoShape::Sine),
            "lfo.saw" => ModulationSource::Lfo(LfoShape::Saw),
            "lfo.square" => ModulationSource::Lfo(LfoShape::Square),
            "lfo.random" => ModulationSource::Lfo(LfoShape::Random),
            other => match other
                .strip_prefix("audio.band.")
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(n) if (1..=BANDS).contains(&n) => ModulationSource::Band(n - 1),
                _ => return Err(ModulationError::UnknownSource(other.to_string())),
            },
        };
        let finite = |x: f32| x.is_finite();
        if !self.range.iter().all(|x| finite(*x)) {
            return Err(ModulationError::Range);
        }
        if !(finite(self.attack) && self.attack >= 0.0) {
            return Err(ModulationError::Attack);
        }
        if !(finite(self.release) && self.release >= 0.0) {
            return Err(ModulationError::Release);
        }
        if let ModulationSource::Lfo(_) = source {
            match (self.rate, self.beats) {
                (Some(hz), None) if finite(hz) && hz > 0.0 && hz <= 100.0 => {}
                (None, Some(beats)) if finite(beats) && beats > 0.0 && beats <= 4096.0 => {}
                (None, None) => return Err(ModulationError::NoRate),
                (Some(_), Some(_)) => return Err(ModulationError::RateAndBeats),
                (Some(_), None) => return Err(ModulationError::Rate),
                (None, Some(_)) => return Err(ModulationError::Beats),
            }
        }
        if !finite(self.phase) {
            return Err(ModulationError::Phase);
        }
        Ok(source)
    }
}
