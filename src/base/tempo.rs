//! Who leads the clock's tempo: `master.tempo_source` read, and what the
//! ear or Ableton Link tells the clock each frame.

/// Where the beat comes from, in the order of `master.tempo_source`:
/// `internal` (tap, OSC, Lua), `midi_clock` (a sequencer's clock when one
/// plays, else as internal), `audio` (the tempo and beats heard), `link`
/// (an Ableton Link session).
pub const TEMPO_SOURCES: [&str; 4] = ["internal", "midi_clock", "audio", "link"];

/// `master.tempo_source`, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TempoSource {
    /// Tap, OSC, Lua.
    Internal,
    /// A sequencer's clock when one plays.
    MidiClock,
    /// The tempo and beats heard.
    Audio,
    /// An Ableton Link session.
    Link,
}

impl TempoSource {
    /// The source at `index` of [`TEMPO_SOURCES`] (the enum's value).
    pub fn at(index: usize) -> Option<Self> {
        const IN_ORDER: [TempoSource; 4] = [
            TempoSource::Internal,
            TempoSource::MidiClock,
            TempoSource::Audio,
            TempoSource::Link,
        ];
        IN_ORDER.get(index).copied()
    }
}

/// How the clock should follow the tempo source this frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TempoLead {
    /// The clock integrates `master.bpm` as always.
    Own,
    /// The clock stands at this beat (Link's).
    Beats(f64),
    /// A beat was heard: pull the clock toward the nearest whole beat.
    Nudge,
}
