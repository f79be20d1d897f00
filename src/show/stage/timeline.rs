//! A cue timeline playing on the show clock: started by
//! `Command::Timeline` (`--timeline NAME`), each frame after the clock
//! (and the timecode it follows) moved, the cues that fell due since the
//! frame before are carried out in order; when the clock jumps (a
//! timecode locate, a resumed show) the state at the new place is rebuilt
//! instead (the last preset cued, the sets and ramps after it), so the
//! show stands where the running order says.

use super::{CommandError, Show};
use crate::base::timecode::{FrameRate, Timecode};
use crate::base::{Folder, inside_show};
use crate::command::Command;
use crate::params::Source;
use crate::show::timeline::{CueAction, Timeline};

/// The folder of timelines in `presets/`.
const TIMELINES_FOLDER: &str = "timelines";

/// A step of the clock larger than this (or any step back) is a jump.
const JUMP: f64 = 1.0;

/// The timeline playing and where it was at the frame before.
#[derive(Debug)]
pub(super) struct TimelinePlaying {
    name: String,
    timeline: Timeline,
    last: f64,
    /// Cues after a preset cue, held until that preset is on stage (a
    /// parameter set on the stage it replaces would be lost with it).
    waiting: Vec<CueAction>,
}

impl Show {
    /// Plays timeline `name` from where the clock is, or stops the one
    /// playing.
    pub(super) fn play_timeline(&mut self, name: Option<String>) -> Result<(), CommandError> {
        let Some(name) = name else {
            self.stop_timeline();
            return Ok(());
        };
        let file = format!("{TIMELINES_FOLDER}/{}.toml", name.trim_end_matches(".toml"));
        inside_show(&file).map_err(|e| CommandError::Timeline(e.to_string()))?;
        let asset = (self.ground.assets)
            .read(Folder::Presets, &file)
            .map_err(|e| CommandError::Timeline(e.to_string()))?;
        let timeline = Timeline::parse(&asset.display, &asset.text)
            .map_err(|e| CommandError::Timeline(e.to_string()))?;
        tracing::info!("timeline {name}: {} cues", timeline.cues.len());
        // A show plays a running order or a playlist, not both.
        if self.playlist_status().is_some() {
            self.apply(Command::Playlist(crate::command::PlaylistCommand::Stop))?;
        }
        let now = self.clock.time;
        let state = timeline.state_at(now);
        self.timeline = Some(TimelinePlaying {
            name,
            timeline,
            last: now,
            waiting: Vec::new(),
        });
        self.carry_out_cues(state);
        Ok(())
    }

    /// Stops the timeline playing, if one is (a playlist starting, or
    /// asked).
    pub(in crate::show) fn stop_timeline(&mut self) {
        if let Some(playing) = self.timeline.take() {
            tracing::info!("timeline {} stopped", playing.name);
        }
    }

    /// After the clock moved: the cues due carried out, or the state
    /// rebuilt after a jump.
    pub(super) fn advance_timeline(&mut self) {
        let now = self.clock.time;
        let loading = self.loading_preset();
        let Some(playing) = self.timeline.as_mut() else {
            return;
        };
        let last = std::mem::replace(&mut playing.last, now);
        let mut cues = if loading {
            Vec::new()
        } else {
            std::mem::take(&mut playing.waiting)
        };
        cues.extend(if now < last || now - last > JUMP {
            tracing::info!(
                "timeline {}: the clock jumped to {:.2} s; the cues' state there",
                playing.name,
                now
            );
            playing.timeline.state_at(now)
        } else {
            (playing.timeline.due(last, now).iter())
                .map(|cue| cue.action.clone())
                .collect()
        });
        self.carry_out_cues(cues);
    }

    /// Whether a preset asked for has yet to come on stage.
    fn loading_preset(&self) -> bool {
        self.requests.pending.load.is_some() || self.arriving().is_some()
    }

    /// Each cue's command; one refused is an error on screen and the rest
    /// go on.
    fn carry_out_cues(&mut self, cues: Vec<CueAction>) {
        let mut cues = cues.into_iter();
        while let Some(cue) = cues.next() {
            if self.loading_preset() && !matches!(cue, CueAction::Preset(..)) {
                if let Some(playing) = self.timeline.as_mut() {
                    playing.waiting.push(cue);
                    playing.waiting.extend(cues);
                }
                return;
            }
            let command = match cue {
                CueAction::Preset(name, fade) => Some(Command::LoadPreset(name, fade)),
                CueAction::Set(param, value) => Some(Command::Set(param, value, Source::Show)),
                CueAction::Ramp(param, value, seconds, easing) => {
                    Some(Command::Ramp(param, value, seconds, easing, Source::Show))
                }
                CueAction::Fire(action) => {
                    Command::of_action(&action, &self.registry, Source::Show)
                }
            };
            if let Some(command) = command
                && let Err(error) = self.apply(command)
            {
                let name = self.timeline.as_ref().map_or("", |p| p.name.as_str());
                self.ground
                    .errors
                    .report("timeline", format!("timeline {name}: {error}"));
            }
        }
    }

    /// A line for the HUD: the timeline, the next cue and how far off.
    pub fn timeline_status(&self) -> Option<String> {
        let playing = self.timeline.as_ref()?;
        let now = self.clock.time;
        let cues = &playing.timeline.cues;
        let passed = cues.partition_point(|c| c.at <= now);
        let at = Timecode::at_seconds(now, FrameRate::Smpte30);
        Some(match cues.get(passed) {
            Some(next) => format!(
                "timeline {} at {at}: cue {} of {} in {:.1} s",
                playing.name,
                passed + 1,
                cues.len(),
                next.at - now
            ),
            None => format!("timeline {} at {at}: every cue played", playing.name),
        })
    }
}
