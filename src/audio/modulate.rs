//! Modulations running: each `[[modulate]]` entry of the mapping files
//! (`crate::mapping::modulate`, the schema) follows its source through
//! its envelope each frame and adds its offset to the parameter.

use std::collections::BTreeMap;

use crate::base::clock::Clock;
use crate::base::rng::Rng;
use crate::mapping::modulate::{LfoShape, Modulation, ModulationSource};
use crate::params::Registry;

/// One entry running.
#[derive(Debug, Clone)]
struct InForce {
    entry: Modulation,
    source: ModulationSource,
    envelope: f32,
    seed: u64,
}

/// Every modulation in force and its envelopes.
#[derive(Debug, Default)]
pub struct Modulations {
    running: Vec<InForce>,
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
                entry.check().ok().map(|source| InForce {
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

impl InForce {
    /// The source now, 0..1.
    fn read(&self, registry: &Registry, clock: &Clock) -> f32 {
        match self.source {
            ModulationSource::Audio(name) => registry.float(name),
            ModulationSource::Band(k) => match registry.get("audio.bands") {
                Some(crate::params::Value::List(bands)) => bands.get(k).copied().unwrap_or(0.0),
                _ => 0.0,
            },
            ModulationSource::BeatPhase => clock.beat_phase(),
            ModulationSource::BarPhase => (clock.beats / 4.0).fract() as f32,
            ModulationSource::Lfo(shape) => {
                let cycles = match (self.entry.rate, self.entry.beats) {
                    (Some(hz), _) => clock.time * f64::from(hz),
                    (_, Some(beats)) => clock.beats / f64::from(beats),
                    _ => 0.0,
                } + f64::from(self.entry.phase);
                let phase = cycles.rem_euclid(1.0) as f32;
                match shape {
                    LfoShape::Sine => 0.5 - 0.5 * (std::f32::consts::TAU * phase).cos(),
                    LfoShape::Saw => phase,
                    LfoShape::Square => {
                        if phase < 0.5 {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    LfoShape::Random => {
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
    use crate::params::{ParamSpec, Source, Value};

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
            Ok(ModulationSource::Band(15))
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
            .set("audio.bass", Value::Float(1.0), Source::Show)
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
            .set("audio.bass", Value::Float(0.0), Source::Show)
            .ok();
        let fallen = step(&registry);
        assert!(fallen > 0.85, "a tenth of the release: {fallen}");
    }
}
