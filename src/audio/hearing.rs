//! The show's ear, stepped once a frame by the show: hears the feed (live
//! input, a file in lockstep, or nothing), publishes the `audio.*`
//! parameters, leads the tempo when `master.tempo_source` is `audio` or
//! `link`, and adds the modulations of the mapping files.

use super::file::FileFeed;
use super::input::LiveInput;
use super::modulate::Modulations;
use super::{GainSettings, Heard};
use crate::base::clock::Clock;
use crate::base::status::ErrorLog;
use crate::base::tempo::{TempoLead, TempoSource};
use crate::mapping::files::LoadedMappings;
use crate::params::{Registry, Source, Value};

/// A tempo change smaller than this is no change (bpm).
const TEMPO_EPSILON: f32 = 0.01;

/// What the show listens to.
pub enum Feed {
    /// Nothing (`--no-audio`, tests): the analysis stays at zero.
    Silent,
    /// The audio input.
    Live(Box<LiveInput>),
    /// A sound file, in step with the show's clock.
    File(Box<FileFeed>),
}

/// The feed, the modulations in force and the Link session.
pub struct Hearing {
    feed: Feed,
    modulations: Modulations,
    last: Heard,
    link_network: bool,
    #[cfg(feature = "link")]
    link: Option<super::link::LinkSession>,
    link_bpm: Option<f32>,
}

impl Default for Hearing {
    fn default() -> Self {
        Self::new(Feed::Silent)
    }
}

impl Hearing {
    /// Listening to `feed`.
    pub fn new(feed: Feed) -> Self {
        Self {
            feed,
            modulations: Modulations::default(),
            last: Heard::default(),
            link_network: false,
            #[cfg(feature = "link")]
            link: None,
            link_bpm: None,
        }
    }

    /// A Link session, when `master.tempo_source` asks for one, joins the
    /// network (the window and `sylva play`; never the tests).
    pub fn join_link_network(&mut self) {
        self.link_network = true;
    }

    /// What the HUD says of the input.
    pub fn device(&self) -> String {
        match &self.feed {
            Feed::Silent => "audio off".into(),
            Feed::Live(input) => input.device(),
            Feed::File(file) => format!(
                "sound file ({} Hz, {:.1} s)",
                file.sound().rate,
                file.sound().seconds()
            ),
        }
    }

    /// The live input's samples from now on (a recording's soundtrack);
    /// none when the feed is not the live input.
    pub fn tap(&self) -> Option<std::sync::mpsc::Receiver<crate::audio::input::SoundBlock>> {
        match &self.feed {
            Feed::Live(input) => Some(input.tap()),
            _ => None,
        }
    }

    /// Seconds of the sound file heard, if the feed is one.
    pub fn sound_seconds(&self) -> Option<f64> {
        match &self.feed {
            Feed::File(file) => Some(file.sound().seconds()),
            _ => None,
        }
    }

    /// Whether it hears anything (the feed is not silence).
    pub fn hears(&self) -> bool {
        !matches!(self.feed, Feed::Silent)
    }

    /// The last frame heard.
    pub fn last(&self) -> &Heard {
        &self.last
    }

    /// Modulations in force.
    pub fn modulations(&self) -> usize {
        self.modulations.len()
    }

    /// Hears up to `until` seconds of show time (files; the live input
    /// gives what arrived) and publishes it as the `audio.*` parameters.
    pub fn hear(&mut self, registry: &mut Registry, until: f64) -> Heard {
        let gain = GainSettings {
            automatic: registry.flag("audio.auto_gain"),
            frozen: registry.flag("audio.freeze"),
            manual: registry.float("audio.gain"),
        };
        let heard = match &mut self.feed {
            Feed::Silent => Heard::default(),
            Feed::Live(input) => input.hear(gain),
            Feed::File(file) => file.hear_until(until, gain),
        };
        self.take_in(registry, heard)
    }

    /// Takes `heard` in as this frame's hearing: the `audio.*`
    /// parameters and what [`Hearing::last`] gives.
    pub fn take_in(&mut self, registry: &mut Registry, heard: Heard) -> Heard {
        let values = [
            ("audio.level", Value::Float(heard.level)),
            ("audio.bass", Value::Float(heard.bass)),
            ("audio.mid", Value::Float(heard.mid)),
            ("audio.high", Value::Float(heard.high)),
            (
                "audio.onset",
                Value::Float(if heard.onset.is_some() { 1.0 } else { 0.0 }),
            ),
            ("audio.bpm", Value::Float(heard.bpm)),
            ("audio.bands", Value::List(heard.bands.to_vec())),
        ];
        for (name, value) in values {
            // Only changes are recorded, so silence sends nothing over OSC.
            if registry.get(name) != Some(&value) {
                registry.set(name, value, Source::Show).ok();
            }
        }
        self.last = heard;
        heard
    }

    /// Sets `master.bpm` from the tempo source and says how the clock
    /// follows it.
    pub fn lead_tempo(
        &mut self,
        registry: &mut Registry,
        heard: &Heard,
        errors: &ErrorLog,
    ) -> TempoLead {
        let source = registry
            .enum_index("master.tempo_source")
            .and_then(TempoSource::at)
            .unwrap_or(TempoSource::Internal);
        if source != TempoSource::Link {
            self.leave_link();
        }
        match source {
            TempoSource::Audio => {
                let target = registry.target("master.bpm").and_then(Value::as_f32);
                if heard.bpm > 0.0 && target.is_none_or(|t| (t - heard.bpm).abs() > TEMPO_EPSILON) {
                    registry
                        .set("master.bpm", Value::Float(heard.bpm), Source::Show)
                        .ok();
                }
                if heard.beat.is_some() {
                    TempoLead::Nudge
                } else {
                    TempoLead::Own
                }
            }
            TempoSource::Link => self.follow_link(registry, errors),
            TempoSource::Internal | TempoSource::MidiClock => TempoLead::Own,
        }
    }

    #[cfg(feature = "link")]
    fn follow_link(&mut self, registry: &mut Registry, _errors: &ErrorLog) -> TempoLead {
        let wanted = registry
            .target("master.bpm")
            .and_then(Value::as_f32)
            .unwrap_or(120.0);
        let network = self.link_network;
        let session = self.link.get_or_insert_with(|| {
            tracing::info!(
                "Ableton Link: {}",
                if network {
                    "joining the session on the network"
                } else {
                    "local timeline only"
                }
            );
            super::link::LinkSession::new(wanted, network)
        });
        // A tempo set here since the last frame (tap, MIDI, OSC, Lua) is
        // proposed to the session; the session's tempo then rules.
        if self
            .link_bpm
            .is_some_and(|last| (wanted - last).abs() > TEMPO_EPSILON)
        {
            session.propose(wanted);
        }
        let (bpm, beats) = session.now();
        if (wanted - bpm).abs() > TEMPO_EPSILON {
            registry
                .set("master.bpm", Value::Float(bpm), Source::Show)
                .ok();
        }
        self.link_bpm = registry.target("master.bpm").and_then(Value::as_f32);
        TempoLead::Beats(beats)
    }

    #[cfg(not(feature = "link"))]
    fn follow_link(&mut self, _registry: &mut Registry, errors: &ErrorLog) -> TempoLead {
        errors.report(
            "master.tempo_source",
            "this build has no Ableton Link (built without the `link` feature); the tempo stays internal",
        );
        TempoLead::Own
    }

    fn leave_link(&mut self) {
        #[cfg(feature = "link")]
        if self.link.take().is_some() {
            tracing::info!("Ableton Link: left the session");
        }
        self.link_bpm = None;
    }

    /// Peers in the Link session, when one is joined.
    pub fn link_peers(&self) -> Option<u64> {
        #[cfg(feature = "link")]
        return self.link.as_ref().map(super::link::LinkSession::peers);
        #[cfg(not(feature = "link"))]
        None
    }

    /// Adds this frame's modulations (from `mappings`) to the parameters.
    pub fn modulate(
        &mut self,
        registry: &mut Registry,
        clock: &Clock,
        dt: f32,
        mappings: &LoadedMappings,
    ) {
        self.modulations
            .update(mappings.revision, &mappings.mappings.modulate);
        let offsets = self.modulations.offsets(registry, clock, dt);
        registry.modulate(&offsets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::tempo::TEMPO_SOURCES;

    #[test]
    fn every_tempo_source_name_reads_as_its_own_source() {
        let mut registry = Registry::new();
        for spec in crate::engine::compositor::master_params() {
            registry.register(spec);
        }
        let expected = [
            TempoSource::Internal,
            TempoSource::MidiClock,
            TempoSource::Audio,
            TempoSource::Link,
        ];
        for (name, source) in TEMPO_SOURCES.iter().zip(expected) {
            registry
                .set(
                    "master.tempo_source",
                    Value::Text((*name).into()),
                    Source::Ui,
                )
                .ok();
            assert_eq!(
                registry
                    .enum_index("master.tempo_source")
                    .and_then(TempoSource::at),
                Some(source),
                "{name}"
            );
        }
        assert_eq!(
            Registry::new()
                .enum_index("master.tempo_source")
                .and_then(TempoSource::at),
            None
        );
    }
}
