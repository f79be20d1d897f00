//! Where the show stands, kept so it can be taken up again: the preset or
//! the playlist's place in it, the clock and every parameter's value.
//! Installation mode writes it to a state file now and then (atomically:
//! a power cut leaves the old file or the new one, never half of one) and
//! reads it at start, so after a crash the playlist resumes where it was;
//! a lost GPU device is recreated and the show resumed from the same state.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Show;
use super::playlist::{PlaylistPlace, PlaylistRun};
use super::stage::{Arrival, CommandError};
use crate::base::opener;
use crate::engine::{toml_of, toml_value};
use crate::params::Source;

/// Largest state file read back; anything bigger is not one sylva wrote.
const MAX_STATE_BYTES: u64 = 1 << 20;

/// Seconds of show time between two writes of the state file.
const WRITE_INTERVAL: f64 = 5.0;

/// The show's place, to resume from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowState {
    /// The preset on stage.
    pub preset: Option<String>,
    /// Show time, seconds.
    pub time: f64,
    /// Beats counted.
    pub beats: f64,
    /// The playlist playing and its place.
    pub playlist: Option<PlaylistPlace>,
    /// Every parameter's value (its target, where it is gliding).
    pub params: toml::Table,
    /// The outputs file in use (`--outputs`), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<String>,
}

/// Why a state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// It could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        reason: std::io::Error,
    },
    /// A link, a FIFO, a device or a file too large stands in its place.
    #[error(transparent)]
    Refused(#[from] crate::base::opener::OpenError),
    /// It is not a state file.
    #[error("{path}: not a sylva state file: {reason}")]
    Malformed {
        /// The file.
        path: String,
        /// What did not parse.
        reason: String,
    },
}

/// The longest show time a state file may hold: ten years of seconds,
/// where a frame's dt still moves the clock (past ~10^15 s it no longer
/// would, and a resumed show would stand still for good).
pub const MAX_RESUMED_SECONDS: f64 = 10.0 * 365.25 * 86_400.0;

/// The most beats a state file may hold: ten years at 1,000 bpm.
pub const MAX_RESUMED_BEATS: f64 = MAX_RESUMED_SECONDS / 60.0 * 1_000.0;

/// `value` as a person reads it: exponent notation once it is huge.
fn shown(value: f64) -> String {
    match value.abs() >= 1e12 {
        true => format!("{value:e}"),
        false => value.to_string(),
    }
}

impl ShowState {
    /// What in the clock and the playlist's place cannot be resumed, if
    /// anything: a time or beat count that is not a number, negative or
    /// beyond [`MAX_RESUMED_SECONDS`] or [`MAX_RESUMED_BEATS`]. (Where the
    /// place lies in its playlist is checked against the playlist.)
    pub fn problem(&self) -> Option<String> {
        let fits = |value: f64, most: f64| value.is_finite() && (0.0..=most).contains(&value);
        let mut wrong = Vec::new();
        if !fits(self.time, MAX_RESUMED_SECONDS) {
            wrong.push(format!("time = {}", shown(self.time)));
        }
        if !fits(self.beats, MAX_RESUMED_BEATS) {
            wrong.push(format!("beats = {}", shown(self.beats)));
        }
        if let Some(place) = &self.playlist {
            if !fits(place.into_seconds, MAX_RESUMED_SECONDS) {
                wrong.push(format!("into_seconds = {}", shown(place.into_seconds)));
            }
            if !fits(place.into_beats, MAX_RESUMED_BEATS) {
                wrong.push(format!("into_beats = {}", shown(place.into_beats)));
            }
        }
        (!wrong.is_empty()).then(|| {
            format!(
                "{} (at most {MAX_RESUMED_SECONDS:.0} s and {MAX_RESUMED_BEATS:.0} beats)",
                wrong.join(", ")
            )
        })
    }
}

impl Show {
    /// Where the show stands now.
    pub fn state(&self) -> ShowState {
        let now = (self.clock.time, self.clock.beats);
        let params = self
            .registry
            .iter()
            .filter(|(spec, _)| !spec.read_only)
            .filter_map(|(spec, _)| {
                let value = self.registry.target(&spec.name)?;
                Some((spec.name.clone(), toml_of(spec, value)))
            })
            .collect();
        ShowState {
            preset: self.preset().map(str::to_string),
            time: self.clock.time,
            beats: self.clock.beats,
            playlist: self.playing.run.as_ref().map(|run| run.place(now)),
            params,
            outputs: self.outputs_name().map(str::to_string),
        }
    }

    /// Takes the show up where `state` left it: the clock, the playlist's
    /// entry and how far into it (else the preset), cut in, then every
    /// parameter value that still fits. A clock or place that cannot be
    /// resumed ([`ShowState::problem`], or a place outside its playlist),
    /// and a playlist that is gone or broken, are errors, and the show
    /// stays as it was, at the top.
    pub fn resume(&mut self, state: &ShowState) -> Result<(), CommandError> {
        if let Some(problem) = state.problem() {
            return Err(CommandError::Unresumable(problem));
        }
        let now = (state.time, state.beats);
        if let Some(place) = &state.playlist {
            let playlist = self.read_playlist(&place.name)?;
            let run = PlaylistRun::resume(playlist, place, now)
                .map_err(CommandError::UnresumablePlace)?;
            self.clock.time = state.time;
            self.clock.beats = state.beats;
            let entry = run.entry().clone();
            self.playing.run = Some(run);
            self.playing.update = None;
            self.playing.entry_script = entry.script.clone();
            self.load_show_preset_arriving(&entry.preset, Some(0.0), Arrival::Now)?;
        } else if let Some(preset) = &state.preset {
            self.clock.time = state.time;
            self.clock.beats = state.beats;
            self.load_show_preset_arriving(preset, Some(0.0), Arrival::Now)?;
        }
        if let Some(outputs) = &state.outputs
            && self.outputs_name().is_none()
        {
            self.use_outputs(outputs);
        }
        for (name, value) in &state.params {
            if let Some(value) = toml_value(value) {
                // A value the preset no longer has, or that does not fit
                // its spec any more, is left at the preset's.
                self.registry.set_now(name, value, Source::Show).ok();
            }
        }
        Ok(())
    }
}

/// The state file of an installation: written every few seconds of show
/// time and whenever the playlist moves to another entry.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    written_at: Option<f64>,
    entry: Option<(usize, u64)>,
}

impl StateFile {
    /// A state file at `path` (its folder is made when first written).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            written_at: None,
            entry: None,
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The state kept there, if there is a file; a damaged one is an error.
    pub fn read(&self) -> Result<Option<ShowState>, StateError> {
        let display = self.path.display().to_string();
        let io = |reason| StateError::Io {
            path: display.clone(),
            reason,
        };
        // A plain file within its size: a FIFO or a device in its place is
        // an error, not a show that never starts.
        let bytes = match opener::read_typed(&self.path, MAX_STATE_BYTES) {
            Ok(bytes) => bytes,
            Err(error) if error.is_missing() => return Ok(None),
            Err(error) => return Err(StateError::Refused(error)),
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not UTF-8 text",
            ))
        })?;
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| StateError::Malformed {
                path: display.clone(),
                reason: e.message().to_string(),
            })
    }

    /// Writes the show's state when it is due: every few seconds, and at
    /// once when the playlist has moved to another entry.
    pub fn keep(&mut self, show: &Show) {
        let entry = show
            .playing
            .run
            .as_ref()
            .map(|run| (run.index().0, show.presets_loaded()));
        let due = self
            .written_at
            .is_none_or(|at| (show.clock.time - at).abs() >= WRITE_INTERVAL)
            || entry != self.entry;
        if !due {
            return;
        }
        self.written_at = Some(show.clock.time);
        self.entry = entry;
        if let Err(error) = self.write(&show.state()) {
            show.ground.errors.report("state file", error);
        }
    }

    /// Writes `state` beside the file and renames it over the file, so
    /// the file is always a whole state, the old one or the new one.
    pub fn write(&self, state: &ShowState) -> Result<(), StateError> {
        let display = self.path.display().to_string();
        let io = |reason| StateError::Io {
            path: display.clone(),
            reason,
        };
        let text = toml::to_string(state).map_err(|e| StateError::Malformed {
            path: display.clone(),
            reason: e.to_string(),
        })?;
        if let Some(folder) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(io)?;
        }
        // A temporary file made new beside it, synced and renamed over it;
        // a link in its place is refused, not written through.
        opener::write_typed(&self.path, text.as_bytes(), true)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_survives_the_file_and_damage_is_an_error() {
        let folder = std::env::temp_dir().join(format!("sylva-state-{}", std::process::id()));
        let file = StateFile::new(folder.join("state.toml"));
        assert!(matches!(file.read(), Ok(None)));
        let mut params = toml::Table::new();
        params.insert("colony.growth_speed".into(), toml::Value::Float(2.5));
        params.insert(
            "master.tint".into(),
            toml::Value::Array(vec![1.0.into(); 4]),
        );
        let state = ShowState {
            preset: Some("colony".into()),
            time: 12.5,
            beats: 25.0,
            playlist: Some(PlaylistPlace {
                name: "tour".into(),
                order: vec![2, 0, 1],
                position: 1,
                rounds: 3,
                seed: 7,
                into_seconds: 4.25,
                into_beats: 8.5,
            }),
            params,
            outputs: Some("stage".into()),
        };
        assert!(file.write(&state).is_ok());
        assert_eq!(file.read().ok().flatten(), Some(state));
        std::fs::write(file.path(), "preset = [").ok();
        assert!(matches!(file.read(), Err(StateError::Malformed { .. })));
        std::fs::remove_dir_all(folder).ok();
    }
}
