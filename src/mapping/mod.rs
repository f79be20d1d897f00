//! Mapping files (`presets/mappings/*.toml`): MIDI controls and a lighting
//! desk's DMX channels to parameters or actions, and OSC aliases for foreign addresses (TouchDesigner's OSC
//! Out CHOP names each message after its channel).
//!
//! ```toml
//! [[midi]]
//! cc = 0                       # or note = 36
//! channel = 1                  # 1-16; omitted: any channel
//! param = "master.brightness"  # or action = "reseed:colony"
//! range = [0.0, 2.0]           # part of the parameter's range; omitted: all of it
//! curve = "linear"             # exponential, logarithmic
//! invert = false
//! takeover = "pickup"          # none, scale
//! encoding = "absolute"        # 14bit, twos_complement, binary_offset, signed_bit
//! mode = "trigger"             # notes and buttons: trigger, gate, toggle
//! output = "nanoKONTROL2"      # output port for LED feedback
//!
//! [[osc]]
//! address = "/chan1"
//! param = "shader.aurora.glow"
//! range = [0.0, 1.0]           # the incoming value's range
//!
//! [[modulate]]                 # see modulate
//! source = "audio.bass"
//! param = "colony.growth_speed"
//! range = [0.0, 4.0]
//!
//! [[dmx]]                      # a lighting desk's channel, see dmx
//! universe = 1
//! channel = 10
//! param = "master.brightness"
//! ```

use serde::{Deserialize, Serialize};

pub mod check;
pub mod dmx;
pub mod files;
pub mod lines;
pub mod modulate;
pub mod names;
pub mod position;

use check::lsb_taken;
pub use files::LoadedMappings;
pub use lines::{EntryLines, Table};
use modulate::Modulation;

pub use crate::params::Curve;

/// Why a mapping file was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct MappingError {
    /// File name shown.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// What a knob that does not match the parameter does when moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Takeover {
    /// The parameter jumps to the knob.
    None,
    /// The knob is ignored until it crosses the parameter's value.
    #[default]
    Pickup,
    /// The parameter moves in proportion until both meet.
    Scale,
}

/// How a CC's value is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// 0-127 is the position.
    #[default]
    Absolute,
    /// CC n carries the MSB, CC n+32 the LSB: 0-16383.
    #[serde(rename = "14bit")]
    FourteenBit,
    /// Relative: 1-64 up, 127-65 down.
    TwosComplement,
    /// Relative: 65-127 up, 63-0 down.
    BinaryOffset,
    /// Relative: 65-127 up, 1-63 down (bit 6 set means up).
    SignedBit,
}

impl Encoding {
    /// The step count of a relative encoder value; `None` for absolute ones.
    pub fn relative_steps(self, value: u8) -> Option<i32> {
        let v = i32::from(value & 0x7F);
        match self {
            Encoding::Absolute | Encoding::FourteenBit => None,
            Encoding::TwosComplement => Some(if v < 64 { v } else { v - 128 }),
            Encoding::BinaryOffset => Some(v - 64),
            Encoding::SignedBit => Some(if v & 0x40 != 0 { v & 0x3F } else { -v }),
        }
    }
}

/// How a note or button drives its target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ButtonMode {
    /// Press fires the action, or sets the parameter to its top.
    #[default]
    Trigger,
    /// Held: top of the range; released: bottom.
    Gate,
    /// Each press flips between bottom and top.
    Toggle,
}

/// One MIDI control bound to a parameter or an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MidiMapping {
    /// Input port name filter (substring), if only one controller should match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Channel 1-16; `None` matches any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u8>,
    /// Controller number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<u8>,
    /// Note number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<u8>,
    /// Parameter driven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Action fired instead: `reseed:<layer>`, `toggle:<layer>`,
    /// `preset:next`, `preset:prev`, `preset:<name>`, `tap`, `blackout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Part of the parameter's range the control spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f32; 2]>,
    /// Value curve.
    #[serde(default)]
    pub curve: Curve,
    /// Reverse the direction.
    #[serde(default)]
    pub invert: bool,
    /// Soft takeover.
    #[serde(default)]
    pub takeover: Takeover,
    /// CC encoding.
    #[serde(default)]
    pub encoding: Encoding,
    /// Note and button behaviour.
    #[serde(default)]
    pub mode: ButtonMode,
    /// Share of the range one relative-encoder step moves (default 1/128).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f32>,
    /// Output port for LED feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

/// A foreign OSC address bound to a parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OscAlias {
    /// Address as the sender names it, e.g. `/chan1` or `/tx`.
    pub address: String,
    /// Parameter it drives.
    pub param: String,
    /// Range of the incoming value mapped onto the parameter's range;
    /// omitted: values are taken as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f32; 2]>,
}

/// A whole mapping file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mappings {
    /// MIDI bindings.
    #[serde(default)]
    pub midi: Vec<MidiMapping>,
    /// OSC aliases.
    #[serde(default)]
    pub osc: Vec<OscAlias>,
    /// Modulations: a source moving a parameter ([`modulate`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modulate: Vec<Modulation>,
    /// A lighting desk's channels ([`dmx`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dmx: Vec<dmx::DmxMapping>,
}

impl Mappings {
    /// Parses a mapping file; `file` names it in errors, at the line of the
    /// key at fault. An entry that cannot fire refuses the whole file.
    pub fn parse(file: &str, text: &str) -> Result<Self, MappingError> {
        let (mappings, refused) = Self::read(file, text)?;
        match refused.into_iter().next() {
            Some(first) => Err(first),
            None => Ok(mappings),
        }
    }

    /// Reads a mapping file whose TOML is sound, with every entry that
    /// cannot fire, in line order (`sylva check` lists them all).
    pub fn read(file: &str, text: &str) -> Result<(Self, Vec<MappingError>), MappingError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let mappings: Mappings = toml::from_str(text).map_err(|e| MappingError {
            file: file.to_string(),
            line: e.span().map_or(1, |s| line_of(s.start)),
            message: e.message().to_string(),
        })?;
        let lines = EntryLines::read(text);
        // Entry `index` of `table` refused, at the line of `key`.
        let refused = |table: Table, index: usize, (key, message): (&str, String)| MappingError {
            file: file.to_string(),
            line: lines.line(table, index, key),
            message: format!("[[{}]] entry {}: {message}", table.name(), index + 1),
        };
        let mut problems = Vec::new();
        for (index, mapping) in mappings.midi.iter().enumerate() {
            let problem = mapping.check().err();
            problems.extend(problem.map(|p| refused(Table::Midi, index, p)));
        }
        if let Some((index, problem)) = lsb_taken(&mappings.midi) {
            problems.push(refused(Table::Midi, index, ("cc", problem)));
        }
        for (index, alias) in mappings.osc.iter().enumerate() {
            let problem = alias.check().err();
            problems.extend(problem.map(|p| refused(Table::Osc, index, p)));
        }
        for (index, entry) in mappings.dmx.iter().enumerate() {
            let problem = entry.check().err();
            problems.extend(problem.map(|p| refused(Table::Dmx, index, p)));
        }
        for (index, modulation) in mappings.modulate.iter().enumerate() {
            let problem = modulation.check_keyed().err();
            problems
                .extend(problem.map(|p| refused(Table::Modulate, index, (p.key(), p.to_string()))));
        }
        problems.sort_by_key(|p| p.line);
        Ok((mappings, problems))
    }

    /// The file's text, for saving learned mappings.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

/// An action a button can fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Restart a layer's simulation.
    Reseed(String),
    /// Switch a layer on or off.
    Toggle(String),
    /// Next preset of the show.
    NextPreset,
    /// Previous preset of the show.
    PreviousPreset,
    /// A preset by name.
    Preset(String),
    /// Start a playlist by name, or step the one playing.
    Playlist(PlaylistCommand),
    /// Tap tempo.
    Tap,
    /// Blackout on or off.
    Blackout,
}

/// Reads an action name.
pub fn check_action(text: &str) -> Result<Action, &'static str> {
    match text.split_once(':') {
        Some(("reseed", layer)) if !layer.is_empty() => Ok(Action::Reseed(layer.to_string())),
        Some(("toggle", layer)) if !layer.is_empty() => Ok(Action::Toggle(layer.to_string())),
        Some(("preset", "next")) => Ok(Action::NextPreset),
        Some(("preset", "prev")) => Ok(Action::PreviousPreset),
        Some(("preset", name)) if !name.is_empty() => Ok(Action::Preset(name.to_string())),
        Some(("playlist", "next")) => Ok(Action::Playlist(PlaylistCommand::Next)),
        Some(("playlist", "prev")) => Ok(Action::Playlist(PlaylistCommand::Previous)),
        Some(("playlist", "stop")) => Ok(Action::Playlist(PlaylistCommand::Stop)),
        Some(("playlist", name)) if !name.is_empty() => {
            Ok(Action::Playlist(PlaylistCommand::Play(name.to_string())))
        }
        None if text == "tap" => Ok(Action::Tap),
        None if text == "blackout" => Ok(Action::Blackout),
        _ => Err(
            "unknown action (reseed:LAYER, toggle:LAYER, preset:next, preset:prev, preset:NAME, playlist:next, playlist:prev, playlist:stop, playlist:NAME, tap, blackout)",
        ),
    }
}

/// What a playlist is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaylistCommand {
    /// Play `presets/playlists/<name>.toml` from its first entry.
    Play(String),
    /// The next entry now.
    Next,
    /// The entry before.
    Previous,
    /// Entry number (0-based) of the playlist.
    Jump(usize),
    /// Stop: the preset playing stays.
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_are_inverses_and_fix_the_ends() {
        for curve in [Curve::Linear, Curve::Exponential, Curve::Logarithmic] {
            assert_eq!(curve.apply(0.0), 0.0);
            assert!((curve.apply(1.0) - 1.0).abs() < 1e-6);
            for x in [0.1, 0.5, 0.9] {
                assert!(
                    (curve.invert(curve.apply(x)) - x).abs() < 1e-4,
                    "{curve:?} at {x}"
                );
            }
        }
        assert!(Curve::Exponential.apply(0.5) < 0.5 && Curve::Logarithmic.apply(0.5) > 0.5);
    }

    #[test]
    fn relative_encodings_decode_both_directions() {
        assert_eq!(Encoding::TwosComplement.relative_steps(1), Some(1));
        assert_eq!(Encoding::TwosComplement.relative_steps(127), Some(-1));
        assert_eq!(Encoding::TwosComplement.relative_steps(65), Some(-63));
        assert_eq!(Encoding::BinaryOffset.relative_steps(65), Some(1));
        assert_eq!(Encoding::BinaryOffset.relative_steps(63), Some(-1));
        assert_eq!(Encoding::SignedBit.relative_steps(67), Some(3));
        assert_eq!(Encoding::SignedBit.relative_steps(3), Some(-3));
        assert_eq!(Encoding::Absolute.relative_steps(3), None);
    }

    #[test]
    fn mapping_files_are_checked_with_lines() {
        let good = "[[midi]]\ncc = 0\nparam = \"master.brightness\"\ntakeover = \"scale\"\n\n[[osc]]\naddress = \"/chan1\"\nparam = \"master.bpm\"\nrange = [0.0, 1.0]\n";
        let parsed = Mappings::parse("m.toml", good);
        assert!(
            parsed
                .as_ref()
                .is_ok_and(|m| m.midi.len() == 1 && m.osc.len() == 1),
            "{parsed:?}"
        );
        let unknown = Mappings::parse("m.toml", "[[midi]]\ncc = 0\nparam = \"x\"\nspeed = 2\n");
        assert!(
            matches!(unknown, Err(MappingError { line: 4, .. })),
            "{unknown:?}"
        );
        let incomplete = Mappings::parse(
            "m.toml",
            "[[midi]]\ncc = 0\nparam = \"x\"\n\n[[midi]]\ncc = 1\n",
        );
        assert!(
            matches!(incomplete, Err(MappingError { line: 5, .. })),
            "{incomplete:?}"
        );
        let action = Mappings::parse("m.toml", "[[midi]]\nnote = 1\naction = \"explode\"\n");
        assert!(action.is_err());
    }

    #[test]
    fn numbers_midi_cannot_send_are_refused_at_their_own_line() {
        let entry = |body: &str| {
            format!("# a controller\n[[midi]]\nparam = \"master.brightness\"\n{body}\n")
        };
        let cases = [
            ("cc = 200", "cc 200"),
            ("note = 128", "note 128"),
            ("cc = 1\nchannel = 0", "channel 0"),
            ("cc = 1\nchannel = 17", "channel 17"),
            ("encoding = \"14bit\"\ncc = 40", "0-31"),
            ("note = 1\nencoding = \"twos_complement\"", "a note"),
            ("cc = 1\nrange = [0.0, nan]", "range"),
            ("cc = 1\nstep = 0.0", "step"),
        ];
        for (body, said) in cases {
            let text = entry(body);
            let last = text.lines().count();
            match Mappings::parse("m.toml", &text) {
                Err(error) => {
                    assert_eq!(error.line, last, "{body}: {error}");
                    assert!(error.message.contains(said), "{body}: {error}");
                }
                Ok(_) => panic!("{body} passed"),
            }
        }
        for body in [
            "cc = 127",
            "note = 0\nchannel = 16",
            "cc = 31\nencoding = \"14bit\"",
        ] {
            let parsed = Mappings::parse("m.toml", &entry(body));
            assert!(parsed.is_ok(), "{body}: {parsed:?}");
        }
        let pair = "[[midi]]\ncc = 1\nencoding = \"14bit\"\nparam = \"a.b\"\n\n[[midi]]\ncc = 33\nparam = \"a.c\"\n";
        let taken = Mappings::parse("m.toml", pair);
        assert!(
            matches!(&taken, Err(MappingError { line: 7, message, .. }) if message.contains("LSB")),
            "{taken:?}"
        );
        let alias = Mappings::parse(
            "m.toml",
            "[[osc]]\naddress = \"/a\"\nparam = \"a.b\"\nrange = [1.0, 1.0]\n",
        );
        assert!(
            matches!(alias, Err(MappingError { line: 4, .. })),
            "{alias:?}"
        );
        let both = Mappings::read("m.toml", &(entry("cc = 200") + &entry("note = 300")));
        assert!(
            both.is_err(),
            "note 300 is no u8: the TOML itself is refused"
        );
        let (_, refused) = Mappings::read("m.toml", &(entry("cc = 200") + &entry("note = 130")))
            .unwrap_or_default();
        assert_eq!(refused.len(), 2, "every entry at fault: {refused:?}");
    }
}
