//! Modulation without code: a `[[modulate]]` entry of a mapping file routes
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

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::analysis::BANDS;
use crate::clock::Clock;
use crate::control::mapping::Curve;
use crate::layers::random::Rng;
use crate::params::Registry;

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
                    return Err(format!(
                        "unknown source {other:?} (audio.level, audio.bass, audio.mid, audio.high, audio.onset, audio.band.1-{BANDS}, beat.phase, bar.phase, lfo.sine, lfo.saw, lfo.square, lfo.random)"
                    ));
                }
            },
        };
        let finite = |x: f32| x.is_finite();
        if !self.range.iter().all(|x| finite(*x)) {
            return Err("range must be two numbers".into());
        }
        if !(finite(self.attack)
            && self.attack >= 0.0
            && finite(self.release)
            && self.release >= 0.0)
        {
            return Err("attack and release are seconds, 0 or more".into());
        }
        if let Source::Lfo(_) = source {
            match (self.rate, self.beats) {
                (Some(hz), None) if finite(hz) && hz > 0.0 && hz <= 100.0 => {}
                (None, Some(beats)) if finite(beats) && beats > 0.0 && beats <= 4096.0 => {}
                (None, None) => return Err("an LFO needs rate (Hz) or beats".into()),
                (Some(_), Some(_)) => return Err("an LFO takes rate or beats, not both".into()),
                _ => return Err("rate is 0-100 Hz, beats 0-4096".into()),
            }
        }
        if !finite(self.phase) {
            return Err("phase must be a number".into());
        }
        Ok(source)
    }
}

/// One entry running.
#[derive(Debug, Clone)]
struct Running {
    entry: Modulation,
    source: Source,
    envelope: f32,
    seed: u64,
}

/// Every modulation in force and its envelopes.
#[derive(Debug, Default)]
pub struct Modulations {
    running: Vec<Running>,
    revision: u64,
}

impl Modulations {
    /// Takes the entries of mapping revision `revision` (already checked
    /// when the files were read); the same revision keeps the envelopes.
    pub fn update(&mut self, revision: u64, entries: &[Modulation]) {
        if revision == self.revision {
            return;
        }
        self.revision = revision;
        self.running = entries
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| {
                entry.check().ok().map(|source| Running {
                    entry: entry.clone(),
                    source,
                    envelope: 0.0,
                    seed: index as u64,
                })
            })
            .collect();
    }

    /// How many are in force.
    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// This frame's offsets by parameter (sources on one parameter add up);
    /// parameters the show lacks are left out.
    pub fn offsets(
        &mut self,
        registry: &Registry,
        clock: &Clock,
        dt: f32,
    ) -> BTreeMap<String, f32> {
        let mut offsets = BTreeMap::new();
        for running in &mut self.running {
            if !registry.contains(&running.entry.param) {
                continue;
            }
            let value = running.read(registry, clock);
            running.follow(value, dt);
            let [low, high] = running.entry.range;
            let offset = low + (high - low) * running.entry.curve.apply(running.envelope);
            *offsets.entry(running.entry.param.clone()).or_insert(0.0) += offset;
        }
        offsets
    }
}

impl Running {
    /// The source now, 0..1.
    fn read(&self, registry: &Registry, clock: &Clock) -> f32 {
        match self.source {
            Source::Audio(name) => registry.float(name),
            Source::Band(k) => match registry.get("audio.bands") {
                Some(crate::params::Value::List(bands)) => bands.get(k).copied().unwrap_or(0.0),
                _ => 0.0,
            },
            Source::BeatPhase => clock.beat_phase(),
            Source::BarPhase => (clock.beats / 4.0).fract() as f32,
            Source::Lfo(shape) => {
                let cycles = match (self.entry.rate, self.entry.beats) {
                    (Some(hz), _) => clock.time * f64::from(hz),
                    (_, Some(beats)) => clock.beats / f64::from(beats),
                    _ => 0.0,
                } + f64::from(self.entry.phase);
                let phase = cycles.rem_euclid(1.0) as f32;
                match shape {
                    Shape::Sine => 0.5 - 0.5 * (std::f32::consts::TAU * phase).cos(),
                    Shape::Saw => phase,
                    Shape::Square => {
                        if phase < 0.5 {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    Shape::Random => {
                        let cycle = cycles.floor() as i64 as u64;
                        let mut rng = Rng::new(cycle ^ (self.seed << 48));
                        0.5 + 0.5 * rng.signed()
                    }
                }
            }
        }
    }

    /// Moves the envelope toward `value` with the attack or release time.
    fn follow(&mut self, value: f32, dt: f32) {
        let value = if value.is_finite() {
            value.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let seconds = if value > self.envelope {
            self.entry.attack
        } else {
            self.entry.release
        };
        let reach = if seconds <= 0.0 {
            1.0
        } else {
            1.0 - (-dt.max(0.0) / seconds).exp()
        };
        self.envelope += (value - self.envelope) * reach;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{ParamSpec, Source as Origin, Value};

    fn entry(text: &str) -> Modulation {
        let wrapped = format!("param = \"x.y\"\n{text}");
        toml::from_str(&wrapped).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn offsets(entries: &[Modulation], registry: &Registry, clock: &Clock, dt: f32) -> f32 {
        let mut modulations = Modulations::default();
        modulations.update(1, entries);
        modulations
            .offsets(registry, clock, dt)
            .get("x.y")
            .copied()
            .unwrap_or(f32::NAN)
    }

    #[test]
    fn sources_are_checked_by_name_and_lfos_need_a_rate() {
        assert_eq!(
            entry("source = \"audio.band.16\"").check(),
            Ok(Source::Band(15))
        );
        assert!(entry("source = \"audio.band.17\"").check().is_err());
        assert!(entry("source = \"audio.volume\"").check().is_err());
        assert!(entry("source = \"lfo.sine\"").check().is_err());
        assert!(
            entry("source = \"lfo.sine\"\nrate = 1\nbeats = 4")
                .check()
                .is_err()
        );
        assert!(entry("source = \"lfo.saw\"\nbeats = 4").check().is_ok());
        assert!(
            entry("source = \"audio.bass\"\nattack = -1")
                .check()
                .is_err()
        );
    }

    #[test]
    fn lfos_and_the_beat_follow_the_clock() {
        let mut registry = Registry::new();
        registry.register(ParamSpec::float("x.y", 0.0, -10.0, 10.0));
        let clock = Clock {
            time: 0.25,
            beats: 1.5,
            ..Clock::default()
        };
        let sine = entry("source = \"lfo.sine\"\nrate = 1\nrange = [0, 2]");
        assert!(
            (offsets(&[sine], &registry, &clock, 0.0) - 1.0).abs() < 1e-5,
            "a quarter cycle"
        );
        let saw = entry("source = \"lfo.saw\"\nbeats = 4");
        assert!((offsets(&[saw], &registry, &clock, 0.0) - 0.375).abs() < 1e-5);
        let square = entry("source = \"lfo.square\"\nbeats = 4\nphase = 0.5");
        assert_eq!(offsets(&[square], &registry, &clock, 0.0), 0.0);
        let beat = entry("source = \"beat.phase\"\nrange = [1, 3]");
        assert!(
            (offsets(&[beat.clone(), beat], &registry, &clock, 0.0) - 4.0).abs() < 1e-5,
            "two add up"
        );
        let random = entry("source = \"lfo.random\"\nrate = 1");
        let a = offsets(std::slice::from_ref(&random), &registry, &clock, 0.0);
        let b = offsets(std::slice::from_ref(&random), &registry, &clock, 0.0);
        assert_eq!(a, b, "the same cycle holds its value");
        assert!((0.0..=1.0).contains(&a));
    }

    #[test]
    fn the_envelope_attacks_and_releases() {
        let mut registry = Registry::new();
        registry.register(ParamSpec::float("x.y", 0.0, -10.0, 10.0));
        registry.register(ParamSpec::float("audio.bass", 0.0, 0.0, 1.0).read_only());
        let clock = Clock::default();
        let mut modulations = Modulations::default();
        modulations.update(
            1,
            &[entry("source = \"audio.bass\"\nattack = 0.1\nrelease = 1")],
        );
        let mut step = |registry: &Registry| modulations.offsets(registry, &clock, 0.1)["x.y"];
        registry
            .set("audio.bass", Value::Float(1.0), Origin::Show)
            .ok();
        let risen = step(&registry);
        assert!(
            (risen - (1.0 - (-1.0f32).exp())).abs() < 1e-4,
            "one attack time: {risen}"
        );
        for _ in 0..20 {
            step(&registry);
        }
        registry
            .set("audio.bass", Value::Float(0.0), Origin::Show)
            .ok();
        let fallen = step(&registry);
        assert!(fallen > 0.85, "a tenth of the release: {fallen}");
    }
}
