//! Installation mode (`sylva play PLAYLIST --install`): what a show left
//! running for weeks needs around its frames. The playlist resumes from a
//! state file after a crash or a power cut and keeps that file current;
//! an optional daily schedule puts the show on air between two times of
//! day and shows black between them (the clock stops, so the playlist
//! goes on next morning where it stopped); a lost GPU device is recreated
//! by the loop that runs the frames ([`Show::recover_device`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use chrono::Timelike;

use crate::show::{Show, StateFile};

/// How often the schedule looks at the wall clock.
const SCHEDULE_CHECK: Duration = Duration::from_secs(1);

/// A daily schedule: on air from `on` to `off` (minutes after local
/// midnight); `off` before `on` runs over midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Minute of the day the show starts.
    pub on: u32,
    /// Minute of the day it stops.
    pub off: u32,
}

/// Why a schedule did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a schedule like 09:30-22:00 (24-hour local times, start-stop)")]
pub struct ScheduleError(String);

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = || ScheduleError(text.to_string());
        let minute = |part: &str| {
            let (hours, minutes) = part.trim().split_once(':')?;
            let (hours, minutes) = (hours.parse::<u32>().ok()?, minutes.parse::<u32>().ok()?);
            (hours < 24 && minutes < 60).then_some(hours * 60 + minutes)
        };
        let (on, off) = text.split_once('-').ok_or_else(fail)?;
        let schedule = Self {
            on: minute(on).ok_or_else(fail)?,
            off: minute(off).ok_or_else(fail)?,
        };
        if schedule.on == schedule.off {
            return Err(fail());
        }
        Ok(schedule)
    }
}

impl Schedule {
    /// Whether the show is on air at `minute` after local midnight.
    pub fn on_air_at(&self, minute: u32) -> bool {
        if self.on < self.off {
            (self.on..self.off).contains(&minute)
        } else {
            minute >= self.on || minute < self.off
        }
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let time = |m: u32| format!("{:02}:{:02}", m / 60, m % 60);
        write!(f, "{}-{}", time(self.on), time(self.off))
    }
}

/// What installation mode adds to a show's loop.
#[derive(Debug, Clone, Default)]
pub struct InstallOptions {
    /// Nobody at the machine: no HUD (errors go to the log and
    /// `/sylva/status`, never onto the wall), no cursor, fullscreen.
    pub unattended: bool,
    /// Keep and resume from this state file.
    pub state_file: Option<PathBuf>,
    /// On air only between these times of day.
    pub schedule: Option<Schedule>,
}

/// The running installation around a show: its state file and schedule.
#[derive(Debug)]
pub struct Installation {
    state: Option<StateFile>,
    schedule: Option<Schedule>,
    on_air: bool,
    checked: Option<Instant>,
}

impl Installation {
    /// The installation these options describe.
    pub fn new(options: &InstallOptions) -> Self {
        Self {
            state: options.state_file.as_deref().map(StateFile::new),
            schedule: options.schedule,
            on_air: true,
            checked: None,
        }
    }

    /// The state file, if one is kept.
    pub fn state_file(&self) -> Option<&Path> {
        self.state.as_ref().map(StateFile::path)
    }

    /// Takes the show up from the state file when it holds the playlist
    /// `playlist` (a state of another playlist, or a damaged file, is
    /// reported and the playlist starts from its beginning).
    pub fn resume(&self, show: &mut Show, playlist: Option<&str>) {
        let Some(file) = &self.state else {
            return;
        };
        let state = match file.read() {
            Ok(Some(state)) => state,
            Ok(None) => return,
            Err(error) => {
                show.ground
                    .errors
                    .report("state file", format!("{error}; starting from the top"));
                return;
            }
        };
        let kept = state.playlist.as_ref().map(|p| p.name.as_str());
        if kept != playlist {
            tracing::info!(
                "{} holds playlist {kept:?}, not {playlist:?}; starting from the top",
                file.path().display()
            );
            return;
        }
        match show.resume(&state) {
            Ok(()) => tracing::info!(
                "resumed from {}: {}",
                file.path().display(),
                show.playlist_status().unwrap_or_default()
            ),
            Err(error) => show.ground.errors.report("state file", error),
        }
    }

    /// Whether the show is on air now (the schedule says so, or there is
    /// none). Looks at the wall clock once a second and logs each change.
    pub fn on_air(&mut self) -> bool {
        let Some(schedule) = self.schedule else {
            return true;
        };
        if self.checked.is_some_and(|t| t.elapsed() < SCHEDULE_CHECK) {
            return self.on_air;
        }
        let first = self.checked.is_none();
        self.checked = Some(Instant::now());
        let now = chrono::Local::now();
        let on_air = schedule.on_air_at(now.hour() * 60 + now.minute());
        if on_air != self.on_air || first {
            tracing::info!(
                "schedule {schedule}: {} at {}",
                if on_air { "on air" } else { "off air, black" },
                now.format("%H:%M")
            );
        }
        self.on_air = on_air;
        on_air
    }

    /// When the show stops: the state file is written now.
    pub fn stop(&mut self, show: &Show) {
        if let Some(file) = self.state.as_ref()
            && let Err(error) = file.write(&show.state())
        {
            show.ground.errors.report("state file", error);
        }
    }

    /// After a frame: the state file is written when due.
    pub fn keep(&mut self, show: &Show) {
        if let Some(file) = self.state.as_mut() {
            file.keep(show);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_and_run_over_midnight() {
        let day: Schedule = "09:30-22:00".parse().unwrap_or(Schedule { on: 0, off: 1 });
        assert_eq!(day, Schedule { on: 570, off: 1320 });
        assert!(!day.on_air_at(9 * 60 + 29));
        assert!(day.on_air_at(9 * 60 + 30));
        assert!(day.on_air_at(21 * 60 + 59));
        assert!(!day.on_air_at(22 * 60));
        let night: Schedule = "20:00-02:00".parse().unwrap_or(day);
        assert!(night.on_air_at(23 * 60) && night.on_air_at(60));
        assert!(!night.on_air_at(12 * 60));
        assert_eq!(night.to_string(), "20:00-02:00");
        for bad in [
            "",
            "9-5",
            "25:00-01:00",
            "10:00-10:00",
            "10:60-11:00",
            "10:00",
        ] {
            assert!(bad.parse::<Schedule>().is_err(), "{bad}");
        }
    }
}
