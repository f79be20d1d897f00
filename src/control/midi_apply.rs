//! What MIDI does to the show: clock and transport, the script's
//! `on_midi`, mapped parameters and actions, and saving learned mappings.

use std::path::PathBuf;
use std::time::Instant;

use super::ControlSurface;
use super::mapping::{self, Action, Mappings};
use super::midi_map::MidiOutcome;
use super::midi_parse::MidiMessage;
use crate::command::Command;
use crate::params::{Source, Value};
use crate::script::ScriptEvent;
use crate::show::Folder;
use crate::show::Show;

impl ControlSurface {
    pub(super) fn handle_midi(
        &mut self,
        port: &str,
        message: MidiMessage,
        at: Instant,
        show: &mut Show,
    ) {
        match message {
            MidiMessage::Clock => {
                if let Some(bpm) = self.midi_clock.pulse(at) {
                    let bpm = Command::Set("master.bpm".into(), Value::Float(bpm), Source::Midi);
                    self.command(show, bpm);
                }
                return;
            }
            MidiMessage::Start => {
                self.midi_clock.start();
                self.command(show, Command::RestartBeat);
                return;
            }
            MidiMessage::Continue => {
                self.midi_clock.start();
                return;
            }
            MidiMessage::Stop => {
                self.midi_clock.stop();
                return;
            }
            _ => {}
        }
        let (number, value) = match message {
            MidiMessage::NoteOn { note, velocity, .. }
            | MidiMessage::NoteOff { note, velocity, .. } => (note, velocity),
            MidiMessage::ControlChange {
                controller, value, ..
            } => (controller, value),
            MidiMessage::ProgramChange { program, .. } => (program, 0),
            MidiMessage::PitchBend { value, .. } => (0, (value >> 7) as u8),
            _ => (0, 0),
        };
        let channel = match message {
            MidiMessage::NoteOn { channel, .. }
            | MidiMessage::NoteOff { channel, .. }
            | MidiMessage::ControlChange { channel, .. }
            | MidiMessage::ProgramChange { channel, .. }
            | MidiMessage::PitchBend { channel, .. } => channel,
            _ => 0,
        };
        show.dispatch(&ScriptEvent::Midi {
            kind: message.kind().to_string(),
            channel,
            number,
            value,
        });
        for outcome in self.mapper.handle(port, &message, &show.registry) {
            match outcome {
                MidiOutcome::Set(name, value) => {
                    self.command(show, Command::Set(name, value, Source::Midi))
                }
                MidiOutcome::Action(action) => self.act(action, at, show),
                MidiOutcome::Learned(mapping) => self.save_learned(mapping, show),
            }
        }
    }

    fn act(&mut self, action: Action, at: Instant, show: &mut Show) {
        match action {
            Action::Reseed(layer) => self.command(show, Command::Reseed(layer)),
            Action::Toggle(layer) => {
                // The mapping may name a layer this preset lacks: read, never assume.
                let name = format!("{layer}.enabled");
                let on = matches!(show.registry.get(&name), Some(Value::Bool(true)));
                self.command(show, Command::Set(name, Value::Bool(!on), Source::Midi));
            }
            Action::Tap => {
                if let Some(bpm) = self.tap.tap(at) {
                    let bpm = Command::Set("master.bpm".into(), Value::Float(bpm), Source::Midi);
                    self.command(show, bpm);
                }
            }
            Action::Blackout => {
                let dark = show
                    .registry
                    .target("master.blackout")
                    .and_then(Value::as_f32)
                    .unwrap_or(0.0)
                    >= 0.5;
                let level = Value::Float(if dark { 0.0 } else { 1.0 });
                let blackout = Command::Set("master.blackout".into(), level, Source::Midi);
                self.command(show, blackout);
            }
            Action::NextPreset | Action::PreviousPreset => {
                if let Some(name) = next_preset(show, matches!(action, Action::NextPreset)) {
                    self.command(show, Command::LoadPreset(name));
                }
            }
            Action::Preset(name) => self.command(show, Command::LoadPreset(name)),
        }
    }

    /// Adds a learned mapping to `presets/mappings/learned.toml` in the show folder.
    fn save_learned(&mut self, mapping: mapping::MidiMapping, show: &mut Show) {
        let path: PathBuf = show
            .assets
            .dir(Folder::Presets)
            .join("mappings/learned.toml");
        let mut learned = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| Mappings::parse("learned.toml", &text).ok())
            .unwrap_or_default();
        learned.midi.retain(|m| {
            !(m.cc == mapping.cc && m.note == mapping.note && m.channel == mapping.channel)
        });
        learned.midi.push(mapping.clone());
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, learned.to_toml()));
        match written {
            Ok(()) => tracing::info!(
                "MIDI learn: {} bound to {} (saved to {})",
                mapping.param.as_deref().unwrap_or("?"),
                control_name(&mapping),
                path.display()
            ),
            Err(error) => show.errors.report(
                "midi learn",
                format!("cannot save {}: {error}", path.display()),
            ),
        }
    }
}

fn control_name(mapping: &mapping::MidiMapping) -> String {
    let channel = mapping
        .channel
        .map_or(String::new(), |c| format!(" on channel {c}"));
    match (mapping.cc, mapping.note) {
        (Some(cc), _) => format!("CC {cc}{channel}"),
        (_, Some(note)) => format!("note {note}{channel}"),
        _ => "nothing".into(),
    }
}

/// The preset after (or before) the running one, in name order.
fn next_preset(show: &Show, forward: bool) -> Option<String> {
    let names: Vec<String> = show
        .assets
        .list(Folder::Presets, "toml")
        .into_iter()
        .filter(|f| !f.contains('/'))
        .map(|f| f.trim_end_matches(".toml").to_string())
        .collect();
    if names.is_empty() {
        return None;
    }
    let current = show
        .preset()
        .and_then(|p| names.iter().position(|n| n == p))
        .unwrap_or(0);
    let next = if forward {
        (current + 1) % names.len()
    } else {
        (current + names.len() - 1) % names.len()
    };
    names.get(next).cloned()
}
