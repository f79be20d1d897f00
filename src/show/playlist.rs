//! Playlists (`presets/playlists/*.toml`): presets played in turn, each
//! for seconds or beats of `master.bpm`, crossfading into the next, with
//! an optional script, looping or shuffled.
//!
//! ```toml
//! loop = true
//! shuffle = false
//!
//! [[entry]]
//! preset = "colony"
//! seconds = 60        # or beats = 128
//! crossfade = 4.0     # seconds; omitted: master.crossfade
//! script = "scripts/grow.lua"   # omitted: the preset's own
//! ```

use serde::Deserialize;

use crate::base::rng::Rng;
use crate::engine::PresetError;

/// The shortest entry in seconds: a preset loads in a frame or two, so a
/// shorter entry would load presets every frame (an entry of 0.001 s
/// played the show at 8 fps).
pub const MIN_ENTRY_SECONDS: f64 = 0.5;

/// The shortest entry in beats (a quarter beat: half a second at 30 bpm).
pub const MIN_ENTRY_BEATS: f64 = 0.25;

/// Entries one playlist may hold.
pub const MAX_ENTRIES: usize = 1_024;

/// How long an entry plays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// Seconds of show time.
    Seconds(f64),
    /// Beats of `master.bpm`.
    Beats(f64),
}

/// One preset of a playlist.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The preset's name in `presets/`.
    pub preset: String,
    /// How long it plays.
    pub length: Length,
    /// Crossfade into it, seconds (none: `master.crossfade`).
    pub crossfade: Option<f32>,
    /// A script to run instead of the preset's.
    pub script: Option<String>,
}

/// A parsed playlist.
#[derive(Debug, Clone, PartialEq)]
pub struct Playlist {
    /// The file name shown in messages.
    pub file: String,
    /// Its entries, in order.
    pub entries: Vec<Entry>,
    /// Start again after the last.
    pub looping: bool,
    /// Play the entries in a shuffled order (a new one each round).
    pub shuffle: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    preset: String,
    seconds: Option<f64>,
    beats: Option<f64>,
    crossfade: Option<f32>,
    script: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaylistFile {
    #[serde(default = "yes", rename = "loop")]
    looping: bool,
    #[serde(default)]
    shuffle: bool,
    #[serde(default)]
    entry: Vec<EntryFile>,
}

fn yes() -> bool {
    true
}

impl Playlist {
    /// Parses a playlist; `file` names it in errors (file:line).
    pub fn parse(file: &str, text: &str) -> Result<Self, PresetError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let error = |line: usize, message: String| PresetError {
            file: file.to_string(),
            line,
            message,
        };
        let raw: PlaylistFile = toml::from_str(text).map_err(|e| {
            error(
                e.span().map_or(1, |s| line_of(s.start)),
                e.message().to_string(),
            )
        })?;
        if raw.entry.is_empty() {
            return Err(error(1, "a playlist needs at least one [[entry]]".into()));
        }
        if raw.entry.len() > MAX_ENTRIES {
            return Err(error(1, format!("at most {MAX_ENTRIES} entries")));
        }
        let mut entries = Vec::new();
        for (index, entry) in raw.entry.iter().enumerate() {
            // Tables of an array carry no span: the n-th header's line.
            let line = text
                .match_indices("[[entry]]")
                .nth(index)
                .map_or(1, |(at, _)| line_of(at));
            let length = match (entry.seconds, entry.beats) {
                (Some(s), None) if s.is_finite() && s >= MIN_ENTRY_SECONDS => Length::Seconds(s),
                (None, Some(b)) if b.is_finite() && b >= MIN_ENTRY_BEATS => Length::Beats(b),
                _ => {
                    return Err(error(
                        line,
                        format!(
                            "an entry needs seconds (at least {MIN_ENTRY_SECONDS}) or beats (at least {MIN_ENTRY_BEATS}), one of them"
                        ),
                    ));
                }
            };
            if let Some(fade) = entry.crossfade.filter(|f| !(f.is_finite() && *f >= 0.0)) {
                return Err(error(
                    line,
                    format!("crossfade {fade} must be 0 or more seconds"),
                ));
            }
            crate::base::inside_show(&format!("{}.toml", entry.preset))
                .map_err(|e| error(line, e.to_string()))?;
            if let Some(script) = &entry.script {
                crate::base::inside_show(script).map_err(|e| error(line, e.to_string()))?;
            }
            entries.push(Entry {
                preset: entry.preset.clone(),
                length,
                crossfade: entry.crossfade,
                script: entry.script.clone(),
            });
        }
        Ok(Self {
            file: file.to_string(),
            entries,
            looping: raw.looping,
            shuffle: raw.shuffle,
        })
    }
}

/// Where a playlist run stands, as the state file keeps it: the round's
/// order, the place in it, and how far into the entry it was.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct PlaylistPlace {
    /// The playlist's name.
    pub name: String,
    /// The entries' order this round.
    pub order: Vec<usize>,
    /// The place in `order`.
    pub position: usize,
    /// Rounds played (the next shuffle depends on it).
    pub rounds: u64,
    /// The seed of the shuffles.
    pub seed: u64,
    /// Seconds played of the entry.
    pub into_seconds: f64,
    /// Beats played of the entry.
    pub into_beats: f64,
}

/// A playlist playing: the order of this round, where it is, and when
/// the entry began (show seconds and beats).
#[derive(Debug, Clone, PartialEq)]
pub struct PlaylistRun {
    /// The playlist's name (`presets/playlists/<name>.toml`).
    pub name: String,
    /// Its text as parsed.
    pub playlist: Playlist,
    order: Vec<usize>,
    position: usize,
    began: (f64, f64),
    rounds: u64,
    seed: u64,
    /// Why this playlist plays, when the show chose it (the software
    /// adapter's light show): shown with its status.
    pub note: Option<String>,
}

impl PlaylistRun {
    /// Starts `playlist` at its first entry, now (`time` seconds, `beats`).
    pub fn start(name: &str, playlist: Playlist, (time, beats): (f64, f64), seed: u64) -> Self {
        let mut run = Self {
            name: name.to_string(),
            order: Vec::new(),
            playlist,
            position: 0,
            began: (time, beats),
            rounds: 0,
            seed,
            note: None,
        };
        run.shuffle();
        run
    }

    fn shuffle(&mut self) {
        self.order = (0..self.playlist.entries.len()).collect();
        if self.playlist.shuffle {
            let mut rng = Rng::new(self.seed ^ self.rounds.wrapping_mul(0x9e37_79b9));
            for i in (1..self.order.len()).rev() {
                let j = rng.next_u32() as usize % (i + 1);
                self.order.swap(i, j);
            }
        }
    }

    /// The entry playing.
    pub fn entry(&self) -> &Entry {
        &self.playlist.entries[self.order[self.position.min(self.order.len() - 1)]]
    }

    /// Its place in the playlist's order (0-based) and the count.
    pub fn index(&self) -> (usize, usize) {
        (
            self.order[self.position.min(self.order.len() - 1)],
            self.order.len(),
        )
    }

    /// How much of the entry is left: seconds, or beats.
    pub fn left(&self, (time, beats): (f64, f64)) -> Length {
        match self.entry().length {
            Length::Seconds(s) => Length::Seconds((s - (time - self.began.0)).max(0.0)),
            Length::Beats(b) => Length::Beats((b - (beats - self.began.1)).max(0.0)),
        }
    }

    /// Whether the entry playing is over at `now`.
    pub fn due(&self, now: (f64, f64)) -> bool {
        match self.left(now) {
            Length::Seconds(s) | Length::Beats(s) => s <= 0.0,
        }
    }

    /// Moves `by` entries (1 next, -1 previous), wrapping (a new shuffle
    /// each round); `None` when a playlist that does not loop has ended.
    /// `replacement` (the file saved since) takes effect here.
    pub fn step(
        &mut self,
        by: i64,
        now: (f64, f64),
        replacement: Option<Playlist>,
    ) -> Option<&Entry> {
        let count = self.order.len() as i64;
        let next = self.position as i64 + by;
        if !(0..count).contains(&next) && !self.playlist.looping {
            return None;
        }
        if let Some(playlist) = replacement {
            self.playlist = playlist;
            self.shuffle();
        }
        let count = self.order.len() as i64;
        if next >= count || next < 0 {
            self.rounds += 1;
            self.shuffle();
        }
        self.position = next.rem_euclid(count) as usize;
        self.began = now;
        Some(self.entry())
    }

    /// Where the run stands at `now`, for the state file.
    pub fn place(&self, (time, beats): (f64, f64)) -> PlaylistPlace {
        PlaylistPlace {
            name: self.name.clone(),
            order: self.order.clone(),
            position: self.position,
            rounds: self.rounds,
            seed: self.seed,
            into_seconds: (time - self.began.0).max(0.0),
            into_beats: (beats - self.began.1).max(0.0),
        }
    }

    /// Takes `playlist` up again where `place` left it, at `now`; a place
    /// that does not fit the playlist (it was edited since, or the file is
    /// damaged) is refused, saying what does not fit.
    pub fn resume(
        playlist: Playlist,
        place: &PlaylistPlace,
        (time, beats): (f64, f64),
    ) -> Result<Self, PlaceError> {
        let mut run = Self::start(&place.name, playlist, (time, beats), place.seed);
        let entries = run.order.len();
        let mut sorted = place.order.clone();
        sorted.sort_unstable();
        if !sorted.iter().copied().eq(0..entries) {
            return Err(PlaceError::Order {
                order: place.order.clone(),
                name: place.name.clone(),
                entries,
            });
        }
        if place.position >= entries {
            return Err(PlaceError::Position {
                position: place.position,
                name: place.name.clone(),
                entries,
            });
        }
        if !(place.into_seconds.is_finite() && place.into_beats.is_finite()) {
            return Err(PlaceError::Time(place.position));
        }
        run.order = place.order.clone();
        run.position = place.position;
        run.rounds = place.rounds;
        run.began = (
            time - place.into_seconds.max(0.0),
            beats - place.into_beats.max(0.0),
        );
        Ok(run)
    }

    /// Jumps to entry `index` of the playlist's own order.
    pub fn jump(&mut self, index: usize, now: (f64, f64)) -> Option<&Entry> {
        let position = self.order.iter().position(|&e| e == index)?;
        self.position = position;
        self.began = now;
        Some(self.entry())
    }
}

/// A playlist place that does not fit its playlist: what does not fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlaceError {
    /// An order that is not the playlist's entries.
    #[error("the order {order:?} of playlist {name}, which has {entries} entries")]
    Order {
        /// The order kept.
        order: Vec<usize>,
        /// The playlist.
        name: String,
        /// Its entries now.
        entries: usize,
    },
    /// A position past its end.
    #[error("position {position} of playlist {name}, which has {entries} entries")]
    Position {
        /// The position kept.
        position: usize,
        /// The playlist.
        name: String,
        /// Its entries now.
        entries: usize,
    },
    /// A time into the entry that is not a number.
    #[error("the time into entry {0}")]
    Time(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "loop = true\n\n[[entry]]\npreset = \"a\"\nseconds = 10\n\n[[entry]]\npreset = \"b\"\nbeats = 8\ncrossfade = 2.0\n";

    #[test]
    fn entries_last_their_seconds_or_beats_and_loop() {
        let playlist = Playlist::parse("p.toml", TEXT).unwrap_or_else(|e| panic!("{e}"));
        let mut run = PlaylistRun::start("p", playlist, (0.0, 0.0), 1);
        assert_eq!(run.entry().preset, "a");
        assert!(!run.due((9.9, 100.0)), "seconds count, not beats");
        assert!(run.due((10.0, 0.0)));
        assert_eq!(
            run.step(1, (10.0, 20.0), None).map(|e| e.preset.clone()),
            Some("b".into())
        );
        assert!(!run.due((100.0, 27.9)), "beats count, not seconds");
        assert!(run.due((100.0, 28.0)));
        assert_eq!(
            run.step(1, (100.0, 28.0), None).map(|e| e.preset.clone()),
            Some("a".into()),
            "loops"
        );
        assert_eq!(
            run.step(-1, (100.0, 28.0), None).map(|e| e.preset.clone()),
            Some("b".into()),
            "and back"
        );
        assert_eq!(
            run.jump(0, (0.0, 0.0)).map(|e| e.preset.clone()),
            Some("a".into())
        );
    }

    #[test]
    fn malformed_playlists_name_the_line() {
        let bad = "[[entry]]\npreset = \"a\"\nseconds = 1\n[[entry]]\npreset = \"b\"\nseconds = 1\nbeats = 2\n";
        let error = Playlist::parse("p.toml", bad).err().map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "p.toml:4: an entry needs seconds (at least 0.5) or beats (at least 0.25), one of them"
            )
        );
        // The hardening probe: 0.001 s entries loaded a preset every frame.
        let blink = "[[entry]]\npreset = \"a\"\nseconds = 0.001\n";
        let error = Playlist::parse("p.toml", blink)
            .err()
            .map(|e| e.to_string());
        assert!(
            error.is_some_and(|e| e.starts_with("p.toml:1: an entry needs seconds (at least 0.5)"))
        );
        let tick = "[[entry]]\npreset = \"a\"\nbeats = 0.01\n";
        assert!(Playlist::parse("p.toml", tick).is_err());
        let shortest = "[[entry]]\npreset = \"a\"\nseconds = 0.5\n";
        assert!(Playlist::parse("p.toml", shortest).is_ok());
        let escape = "[[entry]]\npreset = \"../../x\"\nseconds = 1\n";
        assert!(Playlist::parse("p.toml", escape).is_err());
        assert!(
            Playlist::parse("p.toml", "loop = true\n").is_err(),
            "no entries"
        );
    }
}
