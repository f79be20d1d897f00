//! Applies MIDI messages through the mappings: 7-bit and 14-bit CCs,
//! relative encoders, notes and buttons as triggers, gates or toggles, soft
//! takeover, MIDI learn, and the LED feedback a mapping's output port gets.
//! It reads the registry and returns what to do; the control surface
//! applies it, so every write goes through the registry like any other.

use super::midi_parse::MidiMessage;
use crate::mapping::position::Placing;
use crate::mapping::{Action, ButtonMode, Encoding, MidiMapping, Takeover, check_action};
use crate::params::{ParamKind, ParamSpec, Registry, Value};

/// One knob step, in knob space.
const STEP: f32 = 1.0 / 127.0;

/// What a MIDI message asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum MidiOutcome {
    /// Set a parameter's target.
    Set(String, Value),
    /// Fire an action.
    Action(Action),
    /// MIDI learn bound a control; save it.
    Learned(MidiMapping),
    /// The mapping's parameter is not in the registry (misspelt, or its
    /// layer is not on stage).
    Missing(String),
}

/// A mapping with its run-time state.
#[derive(Debug, Clone)]
struct LiveMapping {
    mapping: MidiMapping,
    action: Option<Action>,
    msb: Option<u8>,
    knob: Option<f32>,
    picked: bool,
    last_sent: Option<f32>,
    pressed: bool,
}

/// The mappings in force and the learn state.
#[derive(Debug, Default)]
pub struct MidiMapper {
    bound: Vec<LiveMapping>,
    learning: Option<String>,
}

impl MidiMapper {
    /// Mapper over `mappings`, in priority order.
    pub fn new(mappings: Vec<MidiMapping>) -> Self {
        let mut mapper = Self::default();
        for mapping in mappings {
            mapper.add(mapping);
        }
        mapper
    }

    /// Adds a mapping; a learned one replaces any on the same control.
    pub fn add(&mut self, mapping: MidiMapping) {
        self.bound.retain(|b| {
            !(b.mapping.cc == mapping.cc
                && b.mapping.note == mapping.note
                && b.mapping.channel == mapping.channel)
        });
        self.bound.push(LiveMapping {
            action: mapping.action.as_deref().and_then(|a| check_action(a).ok()),
            mapping,
            msb: None,
            knob: None,
            picked: false,
            last_sent: None,
            pressed: false,
        });
    }

    /// The mappings in force.
    pub fn mappings(&self) -> Vec<MidiMapping> {
        self.bound.iter().map(|b| b.mapping.clone()).collect()
    }

    /// Arms MIDI learn: the next CC or note binds to `param`.
    pub fn learn(&mut self, param: &str) {
        self.learning = Some(param.to_string());
    }

    /// The parameter armed for learning.
    pub fn learning(&self) -> Option<&str> {
        self.learning.as_deref()
    }

    /// What `message` from input `port` asks for.
    pub fn handle(
        &mut self,
        port: &str,
        message: &MidiMessage,
        registry: &Registry,
    ) -> Vec<MidiOutcome> {
        if let Some(learned) = self.try_learn(message, registry) {
            return vec![MidiOutcome::Learned(learned)];
        }
        let mut out = Vec::new();
        for bound in &mut self.bound {
            if !bound.matches_port(port) {
                continue;
            }
            let outcome = match *message {
                MidiMessage::ControlChange {
                    channel,
                    controller,
                    value,
                } if bound.listens(channel) => bound.control_change(controller, value, registry),
                MidiMessage::NoteOn { channel, note, .. }
                    if bound.listens(channel) && bound.mapping.note == Some(note) =>
                {
                    bound.button(true, registry)
                }
                MidiMessage::NoteOff { channel, note, .. }
                    if bound.listens(channel) && bound.mapping.note == Some(note) =>
                {
                    bound.button(false, registry)
                }
                _ => None,
            };
            out.extend(outcome);
        }
        out
    }

    /// LED feedback for a parameter change: `(output port, bytes)` for each
    /// mapping with an output port that shows `name`.
    pub fn feedback(&self, name: &str, registry: &Registry) -> Vec<(String, [u8; 3])> {
        let mut out = Vec::new();
        for bound in &self.bound {
            let Some(port) = &bound.mapping.output else {
                continue;
            };
            let shows = bound.mapping.param.as_deref() == Some(name)
                || matches!(&bound.action, Some(Action::Toggle(layer)) if format!("{layer}.enabled") == name);
            if !shows {
                continue;
            }
            let Some(spec) = registry.spec(name) else {
                continue;
            };
            let Some(knob) = registry.target(name).and_then(|v| bound.knob_of(spec, v)) else {
                continue;
            };
            let channel = bound.mapping.channel.unwrap_or(1).clamp(1, 16) - 1;
            let bytes = match (bound.mapping.cc, bound.mapping.note) {
                (Some(cc), _) => [0xB0 | channel, cc, (knob * 127.0).round() as u8],
                (None, Some(note)) => [0x90 | channel, note, if knob >= 0.5 { 127 } else { 0 }],
                (None, None) => continue,
            };
            out.push((port.clone(), bytes));
        }
        out
    }

    fn try_learn(&mut self, message: &MidiMessage, registry: &Registry) -> Option<MidiMapping> {
        let param = self.learning.clone()?;
        let (channel, cc, note) = match *message {
            MidiMessage::ControlChange {
                channel,
                controller,
                ..
            } if controller < 120 => (channel, Some(controller), None),
            MidiMessage::NoteOn { channel, note, .. } => (channel, None, Some(note)),
            _ => return None,
        };
        let toggles = matches!(
            registry.spec(&param).map(|s| &s.kind),
            Some(ParamKind::Bool)
        );
        let mapping = MidiMapping {
            device: None,
            channel: Some(channel),
            cc,
            note,
            param: Some(param),
            action: None,
            range: None,
            curve: Default::default(),
            invert: false,
            takeover: Takeover::Pickup,
            encoding: Encoding::Absolute,
            mode: if note.is_some() && toggles {
                ButtonMode::Toggle
            } else {
                ButtonMode::Trigger
            },
            step: None,
            output: None,
        };
        self.learning = None;
        self.add(mapping.clone());
        Some(mapping)
    }
}

impl LiveMapping {
    fn matches_port(&self, port: &str) -> bool {
        self.mapping
            .device
            .as_ref()
            .is_none_or(|d| port.to_lowercase().contains(&d.to_lowercase()))
    }

    fn listens(&self, channel: u8) -> bool {
        self.mapping.channel.is_none_or(|c| c == channel)
    }

    fn control_change(
        &mut self,
        controller: u8,
        value: u8,
        registry: &Registry,
    ) -> Option<MidiOutcome> {
        let cc = self.mapping.cc?;
        let fourteen = self.mapping.encoding == Encoding::FourteenBit;
        if controller != cc && !(fourteen && cc < 32 && controller == cc + 32) {
            return None;
        }
        if self.action.is_some() || self.mapping.mode != ButtonMode::Trigger {
            return self.button(value >= 64, registry);
        }
        if let Some(steps) = self.mapping.encoding.relative_steps(value) {
            return self.nudge(steps, registry);
        }
        let knob = if fourteen {
            if controller == cc {
                self.msb = Some(value);
                f32::from(value) * 128.0 / 16383.0
            } else {
                let msb = self.msb?;
                f32::from(u16::from(msb) << 7 | u16::from(value)) / 16383.0
            }
        } else {
            f32::from(value) / 127.0
        };
        self.turn(knob.min(1.0), registry)
    }

    /// An absolute control moved to `knob` (0..1), through soft takeover.
    fn turn(&mut self, knob: f32, registry: &Registry) -> Option<MidiOutcome> {
        let name = self.mapping.param.clone()?;
        let Some(spec) = registry.spec(&name) else {
            return Some(MidiOutcome::Missing(name));
        };
        let current = registry.target(&name).and_then(|v| self.knob_of(spec, v));
        if let (Some(current), Some(sent)) = (current, self.last_sent)
            && (current - sent).abs() > STEP
        {
            // Someone else moved the parameter: pick it up again.
            self.picked = false;
        }
        let previous = self.knob.replace(knob);
        let target = match (self.mapping.takeover, current) {
            (Takeover::None, _) | (_, None) => knob,
            _ if self.picked => knob,
            (Takeover::Pickup, Some(current)) => {
                let crossed = previous.is_some_and(|p| (p - current) * (knob - current) <= 0.0);
                if crossed || (knob - current).abs() <= STEP {
                    self.picked = true;
                    knob
                } else {
                    return None;
                }
            }
            (Takeover::Scale, Some(current)) => {
                if (knob - current).abs() <= STEP {
                    self.picked = true;
                    knob
                } else {
                    let previous = previous?;
                    // Move the rest of the way in proportion, so knob and
                    // parameter reach the end of the travel together.
                    let moved = knob - previous;
                    let room = if moved > 0.0 {
                        (1.0 - current) / (1.0 - previous).max(STEP)
                    } else {
                        current / previous.max(STEP)
                    };
                    (current + moved * room).clamp(0.0, 1.0)
                }
            }
        };
        self.last_sent = Some(target);
        self.value_at(spec, target)
            .map(|v| MidiOutcome::Set(name, v))
    }

    fn nudge(&mut self, steps: i32, registry: &Registry) -> Option<MidiOutcome> {
        let name = self.mapping.param.clone()?;
        let Some(spec) = registry.spec(&name) else {
            return Some(MidiOutcome::Missing(name));
        };
        let current = registry.target(&name).and_then(|v| self.knob_of(spec, v))?;
        let step = self.mapping.step.unwrap_or(1.0 / 128.0);
        let knob = (current + steps as f32 * step).clamp(0.0, 1.0);
        self.last_sent = Some(knob);
        self.value_at(spec, knob).map(|v| MidiOutcome::Set(name, v))
    }

    fn button(&mut self, down: bool, registry: &Registry) -> Option<MidiOutcome> {
        let was_down = std::mem::replace(&mut self.pressed, down);
        let pressed = down && !was_down;
        if let Some(action) = &self.action {
            return pressed.then(|| MidiOutcome::Action(action.clone()));
        }
        let name = self.mapping.param.clone()?;
        let Some(spec) = registry.spec(&name) else {
            return Some(MidiOutcome::Missing(name));
        };
        let knob = match self.mapping.mode {
            ButtonMode::Gate if down != was_down => f32::from(u8::from(down)),
            ButtonMode::Toggle if pressed => {
                let current = registry
                    .target(&name)
                    .and_then(|v| self.knob_of(spec, v))
                    .unwrap_or(0.0);
                if current >= 0.5 { 0.0 } else { 1.0 }
            }
            ButtonMode::Trigger if pressed => 1.0,
            _ => return None,
        };
        self.value_at(spec, knob).map(|v| MidiOutcome::Set(name, v))
    }

    fn placing(&self) -> Placing {
        Placing {
            range: self.mapping.range,
            curve: self.mapping.curve,
            invert: self.mapping.invert,
        }
    }

    /// Parameter value for knob position `knob`.
    fn value_at(&self, spec: &ParamSpec, knob: f32) -> Option<Value> {
        self.placing().value_at(spec, knob)
    }

    /// Knob position that gives parameter value `value`.
    fn knob_of(&self, spec: &ParamSpec, value: &Value) -> Option<f32> {
        self.placing().position_of(spec, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::midi_parse::MidiParser;
    use crate::mapping::Mappings;
    use crate::params::Source;

    fn registry() -> Registry {
        let mut r = Registry::new();
        r.register(ParamSpec::float("master.brightness", 1.0, 0.0, 4.0));
        r.register(ParamSpec::float("a.x", 0.5, 0.0, 1.0));
        r.register(ParamSpec::bool("a.enabled", true));
        r
    }

    fn mapper(toml: &str) -> MidiMapper {
        match Mappings::parse("test.toml", toml) {
            Ok(m) => MidiMapper::new(m.midi),
            Err(e) => panic!("{e}"),
        }
    }

    /// Feeds raw bytes and applies every outcome to the registry.
    fn play(mapper: &mut MidiMapper, registry: &mut Registry, bytes: &[u8]) -> Vec<MidiOutcome> {
        let mut all = Vec::new();
        for message in MidiParser::new().feed(bytes) {
            for outcome in mapper.handle("nanoKONTROL2 SLIDER/KNOB", &message, registry) {
                if let MidiOutcome::Set(name, value) = &outcome {
                    registry.set(name, value.clone(), Source::Midi).ok();
                }
                all.push(outcome);
            }
        }
        all
    }

    #[test]
    fn a_misspelt_parameter_is_named_not_dropped() {
        let mut m = mapper("[[midi]]\ncc = 0\nparam = \"master.brightnes\"\ntakeover = \"none\"\n");
        let mut r = registry();
        let outcomes = play(&mut m, &mut r, &[0xB0, 0x00, 64]);
        assert_eq!(
            outcomes,
            vec![MidiOutcome::Missing("master.brightnes".into())]
        );
        let said = crate::mapping::names::missing_param("master.brightnes", &r);
        assert!(
            said.contains("did you mean \"master.brightness\""),
            "{said}"
        );
    }

    #[test]
    fn the_shipped_nanokontrol2_layout_drives_its_parameters() {
        let file = include_str!("../../presets/mappings/nanokontrol2.toml");
        let mut mapper = match Mappings::parse("nanokontrol2.toml", file) {
            Ok(m) => MidiMapper::new(m.midi),
            Err(e) => panic!("{e}"),
        };
        let mut r = registry();
        r.register(ParamSpec::bool("shader.echo.enabled", true));
        // Fader 1 (CC 0) sweeps up through the brightness with running status.
        play(&mut mapper, &mut r, &[0xB0, 0x00, 60, 0x00, 64, 0x00, 127]);
        assert!(
            (r.float("master.brightness") - 2.0).abs() < 1e-6,
            "{}",
            r.float("master.brightness")
        );
        // S2 (CC 33) toggles the echo layer on press, not on release.
        let outcomes = play(&mut mapper, &mut r, &[0xB0, 33, 127, 33, 0]);
        assert_eq!(
            outcomes,
            vec![MidiOutcome::Action(Action::Toggle("shader.echo".into()))]
        );
        // The marker arrows step the playlist, play starts the default show.
        let outcomes = play(&mut mapper, &mut r, &[0xB0, 62, 127, 62, 0, 41, 127, 41, 0]);
        assert_eq!(
            outcomes,
            vec![
                MidiOutcome::Action(Action::Playlist(crate::command::PlaylistCommand::Next)),
                MidiOutcome::Action(Action::Playlist(crate::command::PlaylistCommand::Play(
                    "default".into()
                ))),
            ]
        );
        // Other controllers are not read by a mapping filtered to the nanoKONTROL2.
        let other = mapper.handle(
            "Launch Control XL",
            &MidiMessage::ControlChange {
                channel: 1,
                controller: 0,
                value: 0,
            },
            &r,
        );
        assert!(other.is_empty());
    }

    #[test]
    fn fourteen_bit_pairs_give_fine_values() {
        let mut m = mapper(
            "[[midi]]\ncc = 1\nencoding = \"14bit\"\nparam = \"a.x\"\ntakeover = \"none\"\n",
        );
        let mut r = registry();
        play(&mut m, &mut r, &[0xB0, 1, 0x40, 33, 0x01]);
        let expected = f32::from(0x40u16 << 7 | 1) / 16383.0;
        assert!(
            (r.float("a.x") - expected).abs() < 1e-6,
            "{} vs {expected}",
            r.float("a.x")
        );
    }

    #[test]
    fn relative_encoders_step_from_the_current_value() {
        for (encoding, up, down) in [
            ("twos_complement", 1, 127),
            ("binary_offset", 65, 63),
            ("signed_bit", 65, 1),
        ] {
            let mut m = mapper(&format!(
                "[[midi]]\ncc = 10\nencoding = \"{encoding}\"\nparam = \"a.x\"\nstep = 0.1\n"
            ));
            let mut r = registry();
            play(&mut m, &mut r, &[0xB0, 10, up, 10, up]);
            assert!(
                (r.float("a.x") - 0.7).abs() < 1e-5,
                "{encoding}: {}",
                r.float("a.x")
            );
            play(&mut m, &mut r, &[0xB0, 10, down]);
            assert!(
                (r.float("a.x") - 0.6).abs() < 1e-5,
                "{encoding}: {}",
                r.float("a.x")
            );
        }
    }

    #[test]
    fn pickup_ignores_the_knob_until_it_crosses_the_value() {
        let mut m = mapper("[[midi]]\ncc = 0\nparam = \"a.x\"\ntakeover = \"pickup\"\n");
        let mut r = registry();
        // The knob sits at 0.1 while the parameter is 0.5: no jump.
        play(&mut m, &mut r, &[0xB0, 0, 13, 0, 25]);
        assert_eq!(r.float("a.x"), 0.5);
        // It crosses 0.5: from then on it drives.
        play(&mut m, &mut r, &[0xB0, 0, 70, 0, 100]);
        assert!((r.float("a.x") - 100.0 / 127.0).abs() < 1e-6);
        // Another source moves the parameter: the knob must pick it up again.
        r.set("a.x", Value::Float(0.2), Source::Osc("peer".into()))
            .ok();
        play(&mut m, &mut r, &[0xB0, 0, 110]);
        assert_eq!(r.float("a.x"), 0.2);
    }

    #[test]
    fn none_jumps_and_scale_converges() {
        let mut jump = mapper("[[midi]]\ncc = 0\nparam = \"a.x\"\ntakeover = \"none\"\n");
        let mut r = registry();
        play(&mut jump, &mut r, &[0xB0, 0, 0]);
        assert_eq!(r.float("a.x"), 0.0);

        let mut scale = mapper("[[midi]]\ncc = 0\nparam = \"a.x\"\ntakeover = \"scale\"\n");
        let mut r = registry();
        // The knob starts low (0.2) with the parameter at 0.5 and moves up.
        play(&mut scale, &mut r, &[0xB0, 0, 25]);
        assert_eq!(
            r.float("a.x"),
            0.5,
            "the first position only tells where the knob is"
        );
        play(&mut scale, &mut r, &[0xB0, 0, 76]);
        let halfway = r.float("a.x");
        let knob_moved = (76.0 - 25.0) / 127.0;
        assert!(
            halfway > 0.5 && halfway - 0.5 < knob_moved,
            "moves in proportion, slower: {halfway}"
        );
        play(&mut scale, &mut r, &[0xB0, 0, 127]);
        assert!(
            (r.float("a.x") - 1.0).abs() < 1e-6,
            "both reach the top together"
        );
    }

    #[test]
    fn notes_trigger_gate_and_toggle() {
        let mut m = mapper(
            "[[midi]]\nnote = 36\nmode = \"toggle\"\nparam = \"a.enabled\"\n\n\
             [[midi]]\nnote = 37\nmode = \"gate\"\nparam = \"a.x\"\n\n\
             [[midi]]\nnote = 38\naction = \"reseed:colony\"\n",
        );
        let mut r = registry();
        play(&mut m, &mut r, &[0x90, 36, 100, 36, 0]);
        assert_eq!(r.get("a.enabled"), Some(&Value::Bool(false)));
        play(&mut m, &mut r, &[0x90, 37, 100]);
        assert_eq!(r.float("a.x"), 1.0);
        play(&mut m, &mut r, &[0x80, 37, 0]);
        assert_eq!(r.float("a.x"), 0.0);
        let fired = play(&mut m, &mut r, &[0x90, 38, 90]);
        assert_eq!(
            fired,
            vec![MidiOutcome::Action(Action::Reseed("colony".into()))]
        );
    }

    #[test]
    fn learn_binds_the_next_control_and_leds_follow_changes() {
        let mut m = MidiMapper::default();
        let mut r = registry();
        m.learn("a.x");
        let learned = play(&mut m, &mut r, &[0xB3, 21, 5]);
        assert!(
            matches!(&learned[..], [MidiOutcome::Learned(map)] if map.cc == Some(21) && map.channel == Some(4))
        );
        assert_eq!(m.learning(), None);
        play(&mut m, &mut r, &[0xB3, 21, 64, 21, 127]);
        assert_eq!(r.float("a.x"), 1.0);

        let mut leds = mapper("[[midi]]\ncc = 32\naction = \"toggle:a\"\noutput = \"nano\"\n");
        assert_eq!(
            leds.feedback("a.enabled", &r),
            vec![("nano".to_string(), [0xB0, 32, 127])]
        );
        r.set("a.enabled", Value::Bool(false), Source::Osc("peer".into()))
            .ok();
        assert_eq!(
            leds.feedback("a.enabled", &r),
            vec![("nano".to_string(), [0xB0, 32, 0])]
        );
        assert!(leds.handle("x", &MidiMessage::Clock, &r).is_empty());
    }
}
