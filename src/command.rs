//! The one way into the show: every change Lua, MIDI, OSC, keys and the
//! HUD make is a [`Command`] that the show carries out
//! (`Show::apply`). Parameter writes apply at once through the
//! registry (checked, clamped, smoothed); heavy changes (presets, saves,
//! reseeds) wait for the start of the next frame, at most one of each.

pub use crate::mapping::PlaylistCommand;
use crate::mapping::{Action, MidiMapping};
use crate::params::{Easing, Registry, Source, Value};

/// A change to the show.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Set a parameter's target, checked and clamped against its spec.
    Set(String, Value, Source),
    /// Glide a continuous parameter to a value over seconds.
    Ramp(String, Value, f32, Easing, Source),
    /// Load a preset from the show's `presets/` (next frame; the last
    /// asked for wins), crossfading over the seconds given, else over
    /// `master.crossfade`.
    LoadPreset(String, Option<f32>),
    /// Save the running show as a preset in the show's `presets/` (next
    /// frame, one a second, plain names, only what loads back).
    SavePreset(String),
    /// Restart one layer's simulation (next frame).
    Reseed(String),
    /// Restart every layer (next frame).
    ReseedAll,
    /// Arm MIDI learn for a parameter.
    Learn(String),
    /// Start the beat count again from 0 (a MIDI Start message).
    RestartBeat,
    /// Plays `presets/timelines/NAME.toml` on the show clock from where
    /// the clock is (`None`: stops the one playing).
    Timeline(Option<String>),
    /// A timecode heard from a source at an instant, for the show's
    /// chase to follow when `master.timecode_source` names that source.
    Timecode(
        crate::base::timecode::TimecodeSource,
        crate::base::timecode::Timecode,
        std::time::Instant,
    ),
    /// Load the next (true) or previous (false) of the show's presets in
    /// name order (next frame).
    StepPreset(bool),
    /// Keep a mapping MIDI learn made in the show's
    /// `presets/mappings/learned.toml`.
    KeepLearned(MidiMapping),
    /// Hand an event to the script's handlers (`on_osc`, `on_midi`).
    Script(ScriptEvent),
    /// Start, step or stop a playlist.
    Playlist(PlaylistCommand),
    /// Write the outputs' mapping as it is now back into the outputs file
    /// in use (next frame).
    SaveOutputs,
    /// Keep the phone page's favourites (a JSON list of addresses) in the
    /// show folder.
    KeepFavourites(String),
    /// Hand a parameter a performer holds back to the script (every held
    /// one when `None`).
    Release(Option<String>),
}

/// An event passed to a script callback.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptEvent {
    /// A new beat started; its number.
    Beat(u64),
    /// A MIDI message: kind (`cc`, `note_on`, `note_off`...), channel
    /// (1-16), number (controller or note) and value.
    Midi {
        /// Message kind.
        kind: String,
        /// Channel 1..=16.
        channel: u8,
        /// Controller or note number.
        number: u8,
        /// Value or velocity.
        value: u8,
    },
    /// An OSC message for the script: address and arguments.
    Osc(String, Vec<OscArg>),
    /// A preset was loaded.
    Preset(String),
    /// An onset (a hit) was heard.
    Onset,
}

/// An OSC argument as scripts receive it.
#[derive(Debug, Clone, PartialEq)]
pub enum OscArg {
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// A boolean.
    Bool(bool),
}

impl Command {
    /// What an action a button, a desk or a cue fires asks of the show,
    /// played by `source`; `None` for tap tempo, which only a control
    /// surface can keep time for.
    pub fn of_action(action: &Action, registry: &Registry, source: Source) -> Option<Command> {
        Some(match action {
            Action::Reseed(layer) => Command::Reseed(layer.clone()),
            Action::Toggle(layer) => {
                // The action may name a layer this preset lacks: read, never assume.
                let name = format!("{layer}.enabled");
                let on = matches!(registry.get(&name), Some(Value::Bool(true)));
                Command::Set(name, Value::Bool(!on), source)
            }
            Action::Blackout => {
                let dark = (registry.target("master.blackout"))
                    .and_then(Value::as_f32)
                    .unwrap_or(0.0)
                    >= 0.5;
                let level = Value::Float(if dark { 0.0 } else { 1.0 });
                Command::Set("master.blackout".into(), level, source)
            }
            Action::NextPreset => Command::StepPreset(true),
            Action::PreviousPreset => Command::StepPreset(false),
            Action::Preset(name) => Command::LoadPreset(name.clone(), None),
            Action::Playlist(step) => Command::Playlist(step.clone()),
            Action::Tap => return None,
        })
    }
}
