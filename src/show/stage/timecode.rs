//! The show's clock following timecode: the chase of the source
//! `master.timecode_source` names (`base::timecode::Chase`), fed by the
//! control surface's `Command::Timecode`s; after each tick the clock is
//! drawn to the chase's position (a jump of more than a frame is taken
//! at once), or runs on its own while the source is lost; and
//! `master.timecode` says where the show is, once a frame of timecode.

use std::time::Instant;

use super::Show;
use crate::base::timecode::{Chase, Chased, FrameRate, Timecode, TimecodeSource};
use crate::params::{Source, Value};

/// What the show follows and how it fares.
#[derive(Debug)]
pub(super) struct Following {
    source: TimecodeSource,
    chase: Chase,
    /// The frame of timecode `master.timecode` last said.
    said: Option<u64>,
}

impl Default for Following {
    fn default() -> Self {
        Self {
            source: TimecodeSource::Off,
            chase: Chase::default(),
            said: None,
        }
    }
}

impl Show {
    /// A timecode from `source`, kept when the show follows that source.
    pub(super) fn timecode_heard(
        &mut self,
        source: TimecodeSource,
        timecode: Timecode,
        at: Instant,
    ) {
        if source == self.following.source {
            self.following.chase.heard(timecode, at);
        }
    }

    /// After the clock's tick: the clock drawn to the source's position,
    /// and `master.timecode` written once a frame of timecode passes.
    pub(super) fn follow_timecode(&mut self) {
        let source = (self.registry.enum_index("master.timecode_source"))
            .and_then(TimecodeSource::at)
            .unwrap_or(TimecodeSource::Off);
        if source != self.following.source {
            tracing::info!("timecode: the clock follows {}", source.name());
            self.following = Following {
                source,
                ..Following::default()
            };
        }
        let rate = self
            .following
            .chase
            .last()
            .map_or(FrameRate::Smpte30, |t| t.rate);
        if source != TimecodeSource::Off
            && let Chased::At { seconds, .. } = self.following.chase.position(Instant::now())
            && self.clock.chase(seconds, rate.frame())
        {
            tracing::info!(
                "timecode: the clock jumps to {}",
                Timecode::at_seconds(seconds, rate)
            );
        }
        let frame = Timecode::at_seconds(self.clock.time, rate).frame_number();
        if self.following.said != Some(frame) {
            self.following.said = Some(frame);
            let seconds = Value::Float(self.clock.time as f32);
            self.registry
                .set_now("master.timecode", seconds, Source::Show)
                .ok();
        }
    }

    /// A line for the HUD: what the clock follows and how.
    pub fn timecode_status(&self) -> Option<String> {
        let following = &self.following;
        if following.source == TimecodeSource::Off {
            return None;
        }
        let name = following.source.name();
        Some(match following.chase.position(Instant::now()) {
            Chased::Lost => format!("timecode: {name} not heard; the show's own clock runs"),
            Chased::At {
                seconds,
                locked,
                running,
                freewheeling,
            } => {
                let rate = following
                    .chase
                    .last()
                    .map_or(FrameRate::Smpte30, |t| t.rate);
                let state = match (locked, running, freewheeling) {
                    (_, _, true) => "freewheeling",
                    (_, false, _) => "stopped",
                    (true, true, _) => "locked",
                    (false, true, _) => "locking",
                };
                format!(
                    "timecode: {name} {} {state}",
                    Timecode::at_seconds(seconds, rate)
                )
            }
        })
    }
}
