//! What a mapping entry must hold to ever fire, checked when the file is
//! read (by the show and by `sylva check` alike): one control and one
//! target, and numbers MIDI can send. A field is a `u8`, so serde lets
//! `cc = 200` through; no controller sends it, and the knob would do
//! nothing without a word.

use super::{Encoding, MidiMapping, OscAlias, check_action};

/// The highest data byte of a MIDI message: controller and note numbers.
pub const DATA_MAX: u8 = 127;

/// MIDI's channels as a mapping file writes them (the wire's 0-15).
pub const CHANNELS: std::ops::RangeInclusive<u8> = 1..=16;

/// A 14-bit CC pairs controller n (MSB) with n + 32 (LSB), n below 32.
const LSB_OFFSET: u8 = 32;

/// The key at fault and why.
pub type MappingProblem = (&'static str, String);

impl MidiMapping {
    /// Whether the entry can fire: one control, one target, MIDI's numbers.
    pub fn check(&self) -> Result<(), MappingProblem> {
        match (self.cc, self.note) {
            (None, None) => return Err(("cc", "needs cc or note".into())),
            (Some(_), Some(_)) => return Err(("note", "has both cc and note".into())),
            _ => {}
        }
        match (&self.param, &self.action) {
            (None, None) => return Err(("param", "needs param or action".into())),
            (Some(_), Some(_)) => return Err(("action", "has both param and action".into())),
            _ => {}
        }
        if let Some(cc) = self.cc.filter(|cc| *cc > DATA_MAX) {
            return Err((
                "cc",
                format!("cc {cc} is no MIDI controller (0-{DATA_MAX})"),
            ));
        }
        if let Some(note) = self.note.filter(|note| *note > DATA_MAX) {
            return Err((
                "note",
                format!("note {note} is no MIDI note (0-{DATA_MAX})"),
            ));
        }
        if let Some(channel) = self.channel.filter(|c| !CHANNELS.contains(c)) {
            return Err((
                "channel",
                format!("channel {channel}: channels are 1-16 here (the wire's 0-15 plus one)"),
            ));
        }
        if self.note.is_some() && self.encoding != Encoding::Absolute {
            return Err((
                "encoding",
                "encoding reads a cc's value; a note is only pressed or released".into(),
            ));
        }
        if self.encoding == Encoding::FourteenBit
            && let Some(cc) = self.cc.filter(|cc| *cc >= LSB_OFFSET)
        {
            return Err((
                "cc",
                format!(
                    "14bit pairs cc N (MSB) with cc N+{LSB_OFFSET} (LSB), so N is 0-{}; not {cc}",
                    LSB_OFFSET - 1
                ),
            ));
        }
        if self.range.is_some_and(|r| !r.iter().all(|x| x.is_finite())) {
            return Err(("range", "range must be two numbers".into()));
        }
        if self
            .step
            .is_some_and(|s| !(s.is_finite() && s > 0.0 && s <= 1.0))
        {
            return Err((
                "step",
                "step is the share of the range one click moves: above 0, at most 1".into(),
            ));
        }
        if let Some(action) = &self.action {
            check_action(action).map_err(|why| ("action", why.to_string()))?;
        }
        Ok(())
    }

    /// Whether this mapping and `other` can hear the same message: a
    /// channel or a port filter left out matches any.
    fn shares_input(&self, other: &MidiMapping) -> bool {
        let same = |a: &Option<String>, b: &Option<String>| {
            a.is_none()
                || b.is_none()
                || a.as_deref().map(str::to_lowercase) == b.as_deref().map(str::to_lowercase)
        };
        let channel =
            self.channel.is_none() || other.channel.is_none() || self.channel == other.channel;
        channel && same(&self.device, &other.device)
    }
}

/// The first entry bound to the LSB of another's 14-bit pair, with why:
/// both would move on every turn of the fine half.
pub fn lsb_taken(midi: &[MidiMapping]) -> Option<(usize, String)> {
    for (msb_at, msb) in midi.iter().enumerate() {
        let Some(cc) = msb.cc.filter(|_| msb.encoding == Encoding::FourteenBit) else {
            continue;
        };
        let lsb = cc.saturating_add(LSB_OFFSET);
        let taken = midi
            .iter()
            .enumerate()
            .find(|(at, other)| *at != msb_at && other.cc == Some(lsb) && other.shares_input(msb));
        if let Some((at, _)) = taken {
            return Some((
                at,
                format!(
                    "cc {lsb} is the fine half (LSB) of entry {}'s 14bit cc {cc}; both would move",
                    msb_at + 1
                ),
            ));
        }
    }
    None
}

impl OscAlias {
    /// Whether the alias can fire: an OSC address, a range to map from.
    pub fn check(&self) -> Result<(), MappingProblem> {
        if !self.address.starts_with('/') {
            return Err((
                "address",
                format!("{:?} is no OSC address (they start with /)", self.address),
            ));
        }
        if self.param.is_empty() {
            return Err(("param", "needs a parameter".into()));
        }
        if let Some([lo, hi]) = self.range
            && !(lo.is_finite() && hi.is_finite() && lo != hi)
        {
            return Err(("range", "range must be two different numbers".into()));
        }
        Ok(())
    }
}
