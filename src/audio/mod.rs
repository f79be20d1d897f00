//! Sound as a control source: the live input or a sound file analysed
//! (`analysis`, `beat`), published each frame as read-only `audio.*`
//! parameters (so the HUD, OSCQuery, `--osc-out`, Lua and WGSL all see
//! them), modulations from mapping files (`modulate`), and the tempo from
//! the sound or an Ableton Link session (`link`) when `master.tempo_source`
//! says so, and the sound as Shadertoy's sound texture (`picture`).

pub mod analysis;
pub mod beat;
pub mod bench;
pub mod file;
mod hearing;
pub mod input;
#[cfg(feature = "link")]
pub mod link;
pub mod ltc;
pub mod modulate;
pub mod picture;

pub use analysis::{AnalysisSettings, AudioFrame, BANDS, GainSettings};
pub use hearing::{Feed, Hearing};

use crate::params::ParamSpec;

/// What the show hears in one frame: the latest hop's values, with the
/// onset and beat of any hop since the previous frame.
pub type Heard = AudioFrame;

/// Frames added up between two reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeardSoFar {
    latest: AudioFrame,
}

impl HeardSoFar {
    /// One more hop.
    pub fn add(&mut self, frame: &AudioFrame) {
        let onset = frame.onset.or(self.latest.onset);
        let beat = frame.beat.or(self.latest.beat);
        let ltc = frame.ltc.or(self.latest.ltc);
        self.latest = AudioFrame {
            onset,
            beat,
            ltc,
            ..*frame
        };
    }

    /// What was heard since the last take; levels hold until the next hop.
    pub fn take(&mut self) -> Heard {
        let heard = self.latest;
        self.latest.onset = None;
        self.latest.beat = None;
        self.latest.ltc = None;
        heard
    }
}

/// The analysis as parameters: read-only values, and the gain controls.
pub fn audio_params() -> Vec<ParamSpec> {
    let value = |name: &str, description: &str| {
        ParamSpec::float(name, 0.0, 0.0, 1.0)
            .read_only()
            .with_description(description)
    };
    vec![
        value("audio.level", "Loudness (RMS after gain), 0..1"),
        value("audio.bass", "20-250 Hz, 0..1"),
        value("audio.mid", "250-4000 Hz, 0..1"),
        value("audio.high", "4-16 kHz, 0..1"),
        value(
            "audio.onset",
            "1 in the frame an onset (a hit) is heard, else 0",
        ),
        ParamSpec::list("audio.bands", BANDS, 0.0, 1.0)
            .read_only()
            .with_description("16 log-spaced bands from 30 Hz to 16 kHz, 0..1"),
        ParamSpec::float("audio.bpm", 0.0, 0.0, 300.0)
            .read_only()
            .with_unit("bpm")
            .with_description("Tempo heard in the sound (0 until there is one)"),
        ParamSpec::float("audio.gain", 1.0, 0.0, 16.0)
            .with_description("Multiplies every audio value after the automatic gain"),
        ParamSpec::bool("audio.auto_gain", true)
            .with_description("Follow the loudness, so a quiet room and a loud club both reach 1"),
        ParamSpec::bool("audio.freeze", false)
            .with_description("Hold the automatic gain where it is"),
    ]
}
