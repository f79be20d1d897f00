//! What MIDI asks of the show: clock and transport, the script's
//! `on_midi`, mapped parameters and actions, and learned mappings to keep.

use std::time::Instant;

use super::event::ControlInput;
use super::midi_map::MidiOutcome;
use super::midi_parse::MidiMessage;
use super::{ControlSurface, ShowView};
use crate::base::timecode::TimecodeSource;
use crate::command::Command;
use crate::command::ScriptEvent;
use crate::mapping::{Action, names};
use crate::params::{Registry, Source, Value};

/// A MIDI message from an input port.
#[derive(Debug, Clone)]
pub struct MidiReceived {
    /// The port's name.
    pub port: String,
    /// The message.
    pub message: MidiMessage,
    /// When it arrived.
    pub at: Instant,
}

impl ControlInput for MidiReceived {
    fn apply(
        self: Box<Self>,
        surface: &mut ControlSurface,
        view: &ShowView<'_>,
        _started: Instant,
    ) {
        let MidiReceived { port, message, at } = *self;
        surface.handle_midi(&port, message, at, view.registry);
    }
}

impl ControlSurface {
    pub(super) fn handle_midi(
        &mut self,
        port: &str,
        message: MidiMessage,
        at: Instant,
        registry: &Registry,
    ) {
        match message {
            MidiMessage::Clock => {
                // The clock leads only when `master.tempo_source` is midi_clock.
                let follows = registry
                    .enum_index("master.tempo_source")
                    .and_then(crate::base::tempo::TempoSource::at)
                    .is_none_or(|source| source == crate::base::tempo::TempoSource::MidiClock);
                if let Some(bpm) = self.midi_clock.pulse(at).filter(|_| follows) {
                    let bpm = Command::Set("master.bpm".into(), Value::Float(bpm), Source::Midi);
                    self.command(bpm);
                }
                return;
            }
            MidiMessage::Start => {
                self.midi_clock.start();
                self.command(Command::RestartBeat);
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
            MidiMessage::QuarterFrame { piece, value } => {
                if let Some(timecode) = self.mtc.quarter(piece, value) {
                    self.command(Command::Timecode(TimecodeSource::Mtc, timecode, at));
                }
                return;
            }
            MidiMessage::FullFrame {
                hours,
                minutes,
                seconds,
                frames,
            } => {
                if let Some(timecode) =
                    super::timecode::MtcReader::full(hours, minutes, seconds, frames)
                {
                    self.command(Command::Timecode(TimecodeSource::Mtc, timecode, at));
                }
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
        self.command(Command::Script(ScriptEvent::Midi {
            kind: message.kind().to_string(),
            channel,
            number,
            value,
        }));
        for outcome in self.mapper.handle(port, &message, registry) {
            match outcome {
                MidiOutcome::Set(name, value) => {
                    self.command(Command::Set(name, value, Source::Midi))
                }
                MidiOutcome::Action(action) => self.act(action, at, registry, Source::Midi),
                MidiOutcome::Learned(mapping) => self.command(Command::KeepLearned(mapping)),
                // A layer this preset lacks waits quietly (controller files
                // cover every preset); a misspelt name is said, once a second.
                MidiOutcome::Missing(name) if names::owner_on_stage(&name, registry) => {
                    self.warnings.warn(|| {
                        format!(
                            "MIDI from {port}: {}",
                            names::missing_param(&name, registry)
                        )
                    });
                }
                MidiOutcome::Missing(_) => {}
            }
        }
    }

    /// Fires `action`, played by `source` (a controller, a desk).
    pub(super) fn act(&mut self, action: Action, at: Instant, registry: &Registry, source: Source) {
        if action == Action::Tap {
            if let Some(bpm) = self.tap.tap(at) {
                let bpm = Command::Set("master.bpm".into(), Value::Float(bpm), source);
                self.command(bpm);
            }
            return;
        }
        if let Some(command) = Command::of_action(&action, registry, source) {
            self.command(command);
        }
    }
}
