//! MadMapper's `GENERATORS`: values the host advances each frame and a
//! material reads as floats of their names, each from inputs and the
//! generators before it. A `time_base`, the clock nearly every material
//! moves by, rises by its speed each second (or each beat, where its
//! `bpm_sync` input is on), its speed an input's value or a number shaped
//! by `speed_curve` (the speed raised to that power, sign kept, so a
//! slider is fine near zero), and runs back where its `reverse` input is
//! on. An `animator` is such a clock's cycle drawn in a shape
//! ([`SHAPES`]), a `multiplier` the product of its values, an
//! `incrementer` a count its buttons move, `pass_thru` its input. The
//! filters (`damper`, `adsr`, `linear_filter`, `ease_filter`, `shaper`)
//! are refused by name.

use serde_json::Value as Json;

use super::header::{IsfHeaderProblem, is_identifier};
use crate::base::clock::Clock;

/// A number from an input of the file, or one written in the header.
#[derive(Debug, Clone, PartialEq)]
enum Amount {
    /// The input of this name.
    Input(String),
    /// A constant.
    Fixed(f32),
}

impl Amount {
    /// `value` as an input's name, a number or a bool (1 or 0); none when
    /// it is none of these.
    fn read(value: Option<&Json>) -> Option<Self> {
        match value? {
            Json::String(name) => Some(Self::Input(name.clone())),
            Json::Number(n) => Some(Self::Fixed(n.as_f64()? as f32)),
            Json::Bool(on) => Some(Self::Fixed(f32::from(u8::from(*on)))),
            _ => None,
        }
    }

    /// Its value now, an input's read by `input`.
    fn now(&self, input: &impl Fn(&str) -> f32) -> f32 {
        match self {
            Self::Input(name) => input(name),
            Self::Fixed(value) => *value,
        }
    }
}

/// The shapes an animator draws its cycle in, by index (a `long`
/// input's choice) or by name.
const SHAPES: [&str; 6] = ["Smooth", "In", "Out", "Linear", "Cut", "Noise"];

/// What a generator computes.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// A clock: rises by its speed.
    TimeBase,
    /// A clock's cycle (its fraction) drawn in a shape, 0..1, running
    /// while `active` is on.
    Animator {
        /// A name of [`SHAPES`], or a `long` input choosing one.
        shape: Amount,
        /// Runs while non-zero (on where not given).
        active: Option<Amount>,
    },
    /// The product of its values.
    Multiplier(Vec<Amount>),
    /// A count, one up for each press of `up`, one down for each of `down`.
    Incrementer {
        /// The input that counts up.
        up: Option<Amount>,
        /// The input that counts down.
        down: Option<Amount>,
    },
    /// Its input value as it is.
    PassThrough(Amount),
}

/// One of MadMapper's generators.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    /// The float the file reads.
    pub name: String,
    /// What it computes.
    kind: Kind,
    /// Units a second (or a beat), for a clock.
    speed: Amount,
    /// The power the speed is raised to.
    curve: f32,
    /// Runs backwards while non-zero.
    reverse: Option<Amount>,
    /// Counts beats instead of seconds while non-zero.
    beats: Option<Amount>,
}

/// What a generator keeps from frame to frame.
#[derive(Debug, Clone, Copy, Default)]
pub struct GeneratorState {
    /// Its clock (a time base's value, an animator's cycles).
    clock: f64,
    /// An incrementer's count.
    count: f64,
    /// Whether its count-up and count-down inputs were on last frame.
    pressed: [bool; 2],
}

impl Generator {
    /// Reads one entry of `GENERATORS`.
    pub fn parse(entry: &Json) -> Result<Self, IsfHeaderProblem> {
        let text = |key: &str| entry.get(key).and_then(Json::as_str).unwrap_or_default();
        let (name, kind) = (text("NAME"), text("TYPE"));
        let params = entry.get("PARAMS");
        let param = |key: &str| Amount::read(params.and_then(|p| p.get(key)));
        let refused = || IsfHeaderProblem::UnknownGenerator {
            name: name.chars().take(64).collect(),
            kind: kind.chars().take(64).collect(),
        };
        let kind = match kind {
            "time_base" => Kind::TimeBase,
            "animator" => Kind::Animator {
                shape: param("shape").unwrap_or(Amount::Fixed(0.0)),
                active: param("active"),
            },
            "multiplier" => {
                Kind::Multiplier((1..=8).map_while(|i| param(&format!("value{i}"))).collect())
            }
            "incrementer" => Kind::Incrementer {
                up: param("increment"),
                down: param("decrement"),
            },
            "pass_thru" => Kind::PassThrough(param("input_value").ok_or_else(refused)?),
            _ => return Err(refused()),
        };
        if !is_identifier(name) {
            return Err(refused());
        }
        let curve = (params.and_then(|p| p.get("speed_curve")))
            .and_then(Json::as_f64)
            .map_or(1.0, |c| c.clamp(0.25, 8.0) as f32);
        Ok(Self {
            name: name.to_string(),
            kind,
            speed: param("speed").unwrap_or(Amount::Fixed(1.0)),
            curve,
            reverse: param("reverse"),
            beats: param("bpm_sync"),
        })
    }

    /// Its value after one more frame of `clock`, its state kept in
    /// `state` and the inputs (and the generators before it) read by
    /// `input`.
    pub fn advance(
        &self,
        state: &mut GeneratorState,
        clock: &Clock,
        input: impl Fn(&str) -> f32,
    ) -> f32 {
        let on = |amount: &Option<Amount>| amount.as_ref().is_some_and(|a| a.now(&input) != 0.0);
        match &self.kind {
            Kind::TimeBase => {
                self.tick(state, clock, &input);
                state.clock as f32
            }
            Kind::Animator { shape, active } => {
                if active.as_ref().is_none_or(|a| a.now(&input) != 0.0) {
                    self.tick(state, clock, &input);
                }
                shaped(shape, state.clock, &input)
            }
            Kind::Multiplier(values) => values.iter().map(|v| v.now(&input)).product(),
            Kind::Incrementer { up, down } => {
                let now = [on(up), on(down)];
                state.count += f64::from(u8::from(now[0] && !state.pressed[0]));
                state.count -= f64::from(u8::from(now[1] && !state.pressed[1]));
                state.pressed = now;
                state.count as f32
            }
            Kind::PassThrough(value) => value.now(&input),
        }
    }

    /// Advances a clock by its speed for one frame.
    fn tick(&self, state: &mut GeneratorState, clock: &Clock, input: &impl Fn(&str) -> f32) {
        let on = |amount: &Option<Amount>| amount.as_ref().is_some_and(|a| a.now(input) != 0.0);
        let speed = self.speed.now(input);
        let mut rate = f64::from(speed.abs().powf(self.curve).copysign(speed));
        if on(&self.reverse) {
            rate = -rate;
        }
        let units = match on(&self.beats) {
            true => f64::from(clock.dt) * f64::from(clock.bpm) / 60.0,
            false => f64::from(clock.dt),
        };
        if rate.is_finite() {
            state.clock += rate * units;
        }
    }
}

/// An animator's value at `cycles` (its clock), in `shape`: Smooth rises
/// and falls as a cosine, In rises, Out falls, Linear rises and falls in
/// lines, Cut is off then on, Noise holds a random level each cycle.
fn shaped(shape: &Amount, cycles: f64, input: &impl Fn(&str) -> f32) -> f32 {
    let chosen = match shape {
        Amount::Input(name) if SHAPES.contains(&name.as_str()) => name.as_str(),
        other => SHAPES[(other.now(input).max(0.0) as usize).min(SHAPES.len() - 1)],
    };
    let phase = cycles.rem_euclid(1.0) as f32;
    match chosen {
        "Smooth" => 0.5 - 0.5 * (phase * std::f32::consts::TAU).cos(),
        "In" => phase,
        "Out" => 1.0 - phase,
        "Linear" => 1.0 - (2.0 * phase - 1.0).abs(),
        "Cut" => f32::from(u8::from(phase >= 0.5)),
        _ => {
            let cycle = cycles.floor() as i64 as u64;
            let bits = cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            bits as f32 / (1u64 << 24) as f32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_base_rises_by_its_shaped_speed_and_runs_back_reversed() {
        let entry = serde_json::json!({ "NAME": "t", "TYPE": "time_base",
            "PARAMS": { "speed": "rate", "speed_curve": 2, "reverse": "back", "bpm_sync": "sync" } });
        let generator = Generator::parse(&entry).unwrap_or_else(|e| panic!("{e}"));
        let clock = Clock {
            dt: 0.5,
            bpm: 120.0,
            ..Clock::default()
        };
        let mut state = GeneratorState::default();
        let inputs = |rate: f32, back: f32, sync: f32| {
            move |name: &str| match name {
                "rate" => rate,
                "back" => back,
                "sync" => sync,
                _ => 0.0,
            }
        };
        let t = generator.advance(&mut state, &clock, inputs(0.5, 0.0, 0.0));
        assert!(
            (t - 0.125).abs() < 1e-6,
            "0.5 squared for half a second: {t}"
        );
        let t = generator.advance(&mut state, &clock, inputs(0.5, 1.0, 1.0));
        assert!(
            (t + 0.125).abs() < 1e-6,
            "back a quarter a beat, half a second of 120 bpm: {t}"
        );
        let filter = serde_json::json!({ "NAME": "d", "TYPE": "damper" });
        assert!(Generator::parse(&filter).is_err_and(|e| e.to_string().contains("damper")));
    }

    #[test]
    fn an_animator_draws_its_cycle_and_the_others_count_and_multiply() {
        let clock = Clock {
            dt: 0.25,
            ..Clock::default()
        };
        let parse = |entry| Generator::parse(&entry).unwrap_or_else(|e| panic!("{e}"));
        let animator = parse(serde_json::json!({ "NAME": "a", "TYPE": "animator",
            "PARAMS": { "speed": 1, "shape": "shape" } }));
        let mut state = GeneratorState::default();
        let linear = |name: &str| if name == "shape" { 3.0 } else { 0.0 };
        let levels: Vec<f32> = (0..4)
            .map(|_| animator.advance(&mut state, &clock, linear))
            .collect();
        assert_eq!(
            levels,
            [0.5, 1.0, 0.5, 0.0],
            "Linear up and down over a second"
        );
        let multiplier = parse(serde_json::json!({ "NAME": "m", "TYPE": "multiplier",
            "PARAMS": { "value1": "a", "value2": 0.5, "value3": 3 } }));
        let m = multiplier.advance(&mut state, &clock, |n| if n == "a" { 0.5 } else { 0.0 });
        assert_eq!(m, 0.75);
        let counter = parse(serde_json::json!({ "NAME": "c", "TYPE": "incrementer",
            "PARAMS": { "increment": "up", "decrement": "down" } }));
        let mut state = GeneratorState::default();
        let presses = [(1.0, 0.0), (1.0, 0.0), (0.0, 0.0), (1.0, 0.0), (0.0, 1.0)];
        let counts: Vec<f32> = (presses.iter())
            .map(|&(up, down)| {
                counter.advance(
                    &mut state,
                    &clock,
                    move |n| if n == "up" { up } else { down },
                )
            })
            .collect();
        assert_eq!(
            counts,
            [1.0, 1.0, 1.0, 2.0, 1.0],
            "one step a press, held or not"
        );
    }
}
