//! Cue timelines (`presets/timelines/*.toml`): what happens when, on the
//! show clock, which follows timecode when `master.timecode_source` names
//! one. A cue loads a preset (with a fade), sets or ramps a parameter, or
//! fires an action, at a time in seconds or a timecode. The playlist
//! stays for installations; a timeline is for a show with a running order.
//!
//! ```toml
//! [[cue]]
//! at = "00:00:10:00"            # a timecode (HH:MM:SS:FF, at 30 fps unless `rate`) or seconds
//! preset = "world"
//! fade = 4.0                    # seconds; omitted: master.crossfade
//!
//! [[cue]]
//! at = 42.5
//! param = "master.brightness"
//! to = 0.3                      # set at once, or over `seconds` with `easing`
//! seconds = 8.0
//! easing = "smooth"
//!
//! [[cue]]
//! at = "00:01:00:00"
//! action = "reseed:colony"
//! ```

use serde::Deserialize;
use toml::Spanned;

use crate::base::timecode::{FRAME_RATES, FrameRate, Timecode};
use crate::mapping::{Action, check_action};
use crate::params::{Easing, Value};

/// Cues a timeline may hold.
pub const MAX_CUES: usize = 10_000;
/// The longest ramp, seconds.
pub const MAX_RAMP: f64 = 3_600.0;
/// The last time a cue may name: a day, as timecode counts.
pub const LAST_SECOND: f64 = 86_400.0;

/// Why a timeline was refused, at its line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TimelineError {
    /// The file, as messages name it.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// What a cue does.
#[derive(Debug, Clone, PartialEq)]
pub enum CueAction {
    /// Loads a preset, fading over the seconds given (none:
    /// `master.crossfade`).
    Preset(String, Option<f32>),
    /// Sets a parameter at once.
    Set(String, Value),
    /// Moves a parameter to a value over seconds.
    Ramp(String, Value, f32, Easing),
    /// Fires an action, as a mapped button does.
    Fire(Action),
}

/// One cue.
#[derive(Debug, Clone, PartialEq)]
pub struct Cue {
    /// When, seconds on the show clock.
    pub at: f64,
    /// What.
    pub action: CueAction,
    /// Its line in the file.
    pub line: usize,
}

/// A timeline, its cues in time order (cues at the same time in file
/// order).
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The file, as messages name it.
    pub file: String,
    /// The cues.
    pub cues: Vec<Cue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    /// The rate of the file's timecodes.
    #[serde(default)]
    rate: Option<String>,
    #[serde(default)]
    cue: Vec<Spanned<RawCue>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCue {
    at: toml::Value,
    #[serde(default)]
    preset: Option<String>,
    #[serde(default)]
    fade: Option<f32>,
    #[serde(default)]
    param: Option<String>,
    #[serde(default)]
    to: Option<toml::Value>,
    #[serde(default)]
    seconds: Option<f32>,
    #[serde(default)]
    easing: Option<String>,
    #[serde(default)]
    action: Option<String>,
}

impl Timeline {
    /// Parses a timeline's text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, TimelineError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let error = |line: usize, message: String| TimelineError {
            file: file.to_string(),
            line,
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            error(
                e.span().map_or(1, |s| line_of(s.start)),
                e.message().to_string(),
            )
        })?;
        let rate = match raw.rate.as_deref() {
            None => FrameRate::Smpte30,
            Some(name) => FRAME_RATES
                .iter()
                .position(|r| *r == name)
                .and_then(|i| FrameRate::from_code(i as u8))
                .ok_or_else(|| {
                    error(
                        1,
                        format!("rate {name:?}: one of {}", FRAME_RATES.join(", ")),
                    )
                })?,
        };
        if raw.cue.is_empty() {
            return Err(error(1, "no [[cue]] in the file".into()));
        }
        if let Some(extra) = raw.cue.get(MAX_CUES) {
            return Err(error(
                line_of(extra.span().start),
                format!("at most {MAX_CUES} cues"),
            ));
        }
        let mut cues = Vec::with_capacity(raw.cue.len());
        for spanned in raw.cue {
            let line = line_of(spanned.span().start);
            let cue = checked(spanned.into_inner(), rate).map_err(|m| error(line, m))?;
            cues.push(Cue { line, ..cue });
        }
        cues.sort_by(|a, b| a.at.total_cmp(&b.at));
        Ok(Self {
            file: file.to_string(),
            cues,
        })
    }

    /// The cues due after `from` up to and including `to`, seconds.
    pub fn due(&self, from: f64, to: f64) -> &[Cue] {
        let start = self.cues.partition_point(|c| c.at <= from);
        let end = self.cues.partition_point(|c| c.at <= to);
        &self.cues[start..end.max(start)]
    }

    /// What the show should be at `time` after a jump: the last preset
    /// cued by then (loaded at once), and every set and ramp since it in
    /// order, ramps still under way given what is left of them; actions,
    /// being moments, are not fired again.
    pub fn state_at(&self, time: f64) -> Vec<CueAction> {
        let passed = &self.cues[..self.cues.partition_point(|c| c.at <= time)];
        let from = (passed.iter())
            .rposition(|c| matches!(c.action, CueAction::Preset(..)))
            .unwrap_or(0);
        (passed[from..].iter())
            .filter_map(|cue| match &cue.action {
                CueAction::Preset(name, _) => Some(CueAction::Preset(name.clone(), Some(0.0))),
                CueAction::Set(..) => Some(cue.action.clone()),
                CueAction::Ramp(name, value, seconds, easing) => {
                    let left = f64::from(*seconds) - (time - cue.at);
                    Some(if left > 0.0 {
                        CueAction::Ramp(name.clone(), value.clone(), left as f32, *easing)
                    } else {
                        CueAction::Set(name.clone(), value.clone())
                    })
                }
                CueAction::Fire(_) => None,
            })
            .collect()
    }
}

/// A cue as written, checked: one of preset, param or action, a time in
/// the day.
fn checked(raw: RawCue, rate: FrameRate) -> Result<Cue, String> {
    let at = match &raw.at {
        toml::Value::Float(s) => *s,
        toml::Value::Integer(s) => *s as f64,
        toml::Value::String(text) => parse_timecode(text, rate).ok_or_else(|| {
            format!(
                "at {text:?}: a timecode HH:MM:SS:FF at {} fps",
                FRAME_RATES[rate.code() as usize]
            )
        })?,
        _ => return Err("at: seconds, or a timecode \"HH:MM:SS:FF\"".into()),
    };
    if !(0.0..LAST_SECOND).contains(&at) {
        return Err(format!("at {at}: 0 to {LAST_SECOND} seconds (a day)"));
    }
    let kinds = [
        raw.preset.is_some(),
        raw.param.is_some(),
        raw.action.is_some(),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err("a cue has one of preset, param or action".into());
    }
    let action = if let Some(preset) = raw.preset {
        if raw.fade.is_some_and(|f| !(0.0..=60.0).contains(&f)) {
            return Err("fade: 0 to 60 seconds".into());
        }
        CueAction::Preset(preset, raw.fade)
    } else if let Some(param) = raw.param {
        let value = (raw.to.as_ref())
            .and_then(crate::engine::toml_value)
            .ok_or("a param cue needs to = a value (a number, true or false, a name, [x, y, z])")?;
        match raw.seconds {
            None => CueAction::Set(param, value),
            Some(seconds) if (0.0..=MAX_RAMP as f32).contains(&seconds) => {
                let easing = match raw.easing.as_deref() {
                    None => Easing::default(),
                    Some(name) => name.parse().map_err(|_| {
                        format!("easing {name:?}: linear, in, out, in_out or smooth")
                    })?,
                };
                CueAction::Ramp(param, value, seconds, easing)
            }
            Some(seconds) => return Err(format!("seconds {seconds}: 0 to {MAX_RAMP}")),
        }
    } else {
        let name = raw.action.unwrap_or_default();
        CueAction::Fire(check_action(&name).map_err(|e| format!("action {name:?}: {e}"))?)
    };
    Ok(Cue {
        at,
        action,
        line: 0,
    })
}

/// `HH:MM:SS:FF` (or `;FF`) at `rate`, as seconds.
fn parse_timecode(text: &str, rate: FrameRate) -> Option<f64> {
    let fields: Vec<u8> = text
        .split([':', ';'])
        .map(|f| f.trim().parse::<u8>().ok())
        .collect::<Option<_>>()?;
    let [hours, minutes, seconds, frames] = fields.as_slice() else {
        return None;
    };
    let timecode = Timecode {
        hours: *hours,
        minutes: *minutes,
        seconds: *seconds,
        frames: *frames,
        rate,
    };
    timecode.valid().then(|| timecode.seconds())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUES: &str = "rate = \"25\"\n\n[[cue]]\nat = 30.0\nparam = \"master.brightness\"\nto = 0.5\nseconds = 10.0\n\n\
        [[cue]]\nat = \"00:00:10:00\"\npreset = \"world\"\nfade = 4.0\n\n\
        [[cue]]\nat = 20\naction = \"reseed:colony\"\n\n\
        [[cue]]\nat = \"00:00:05:12\"\npreset = \"colony\"\n";

    #[test]
    fn cues_sort_by_time_and_fall_due_between_two_frames() {
        let timeline = Timeline::parse("t.toml", CUES).expect("parses");
        let times: Vec<f64> = timeline.cues.iter().map(|c| c.at).collect();
        assert_eq!(times, vec![5.48, 10.0, 20.0, 30.0]);
        assert_eq!(timeline.cues[1].line, 9);
        assert_eq!(timeline.due(9.99, 10.0).len(), 1);
        assert!(timeline.due(10.0, 19.99).is_empty());
        assert_eq!(timeline.due(0.0, 100.0).len(), 4);
    }

    #[test]
    fn a_jump_rebuilds_the_state_from_the_last_preset_on() {
        let timeline = Timeline::parse("t.toml", CUES).expect("parses");
        let state = timeline.state_at(35.0);
        assert_eq!(state[0], CueAction::Preset("world".into(), Some(0.0)));
        assert_eq!(
            state[1],
            CueAction::Ramp(
                "master.brightness".into(),
                Value::Float(0.5),
                5.0,
                Easing::Linear
            )
        );
        assert_eq!(state.len(), 2, "the action is not fired again: {state:?}");
        assert_eq!(
            timeline.state_at(45.0)[1],
            CueAction::Set("master.brightness".into(), Value::Float(0.5))
        );
        assert!(timeline.state_at(1.0).is_empty());
    }

    #[test]
    fn faults_are_found_at_their_cue() {
        let cases = [
            ("[[cue]]\nat = -1.0\npreset = \"a\"\n", 1, "0 to"),
            (
                "\n[[cue]]\nat = \"00:00:00:30\"\npreset = \"a\"\n",
                2,
                "timecode",
            ),
            (
                "[[cue]]\nat = 1.0\npreset = \"a\"\naction = \"tap\"\n",
                1,
                "one of",
            ),
            ("[[cue]]\nat = 1.0\nparam = \"p\"\n", 1, "needs to"),
            (
                "[[cue]]\nat = 1.0\naction = \"explode\"\n",
                1,
                "unknown action",
            ),
            (
                "[[cue]]\nat = 1.0\nparam = \"p\"\nto = 1.0\nseconds = 1.0\neasing = \"wobbly\"\n",
                1,
                "easing",
            ),
            ("[[cue]]\nat = 1.0\nprest = \"a\"\n", 3, "unknown field"),
        ];
        for (text, line, words) in cases {
            let error = Timeline::parse("t.toml", text).expect_err(text);
            assert_eq!(error.line, line, "{text}: {error}");
            assert!(error.message.contains(words), "{text}: {error}");
        }
    }
}
