//! The show playing a playlist: the entry's time running out (seconds or
//! beats of the show's clock), the next preset crossfading in with the
//! entry's script, steps asked for by keys, MIDI, OSC and Lua, and a
//! playlist saved while it plays taking effect at the next entry (a
//! malformed one is reported with file:line and the current one plays
//! on).

use super::Show;
use super::playlist::{Entry, Length, Playlist, PlaylistRun};
use super::stage::CommandError;
use crate::base::{ChangedFile, Folder};
use crate::command::PlaylistCommand;

/// Where playlists live inside `presets/`.
const FOLDER: &str = "playlists/";

/// The show's playlist part: the run playing, a saved version waiting
/// for the next entry and the entry's own script, set and cleared
/// together.
#[derive(Default)]
pub(super) struct PlaylistState {
    /// The playlist playing, if any.
    pub(super) run: Option<PlaylistRun>,
    /// A saved version of it, taking effect at the next entry.
    pub(super) update: Option<Playlist>,
    /// The playing entry's own script, over the preset's.
    pub(super) entry_script: Option<String>,
}

impl Show {
    /// Carries out a playlist command.
    pub(super) fn playlist_command(
        &mut self,
        command: PlaylistCommand,
    ) -> Result<(), CommandError> {
        let now = (self.clock.time, self.clock.beats);
        let entry = match command {
            PlaylistCommand::Play(name) => {
                let playlist = self.read_playlist(&name)?;
                self.stop_timeline();
                let run = PlaylistRun::start(&name, playlist, now, self.ground.seed);
                let entry = run.entry().clone();
                self.playing.run = Some(run);
                self.playing.update = None;
                Some(entry)
            }
            PlaylistCommand::Stop => {
                self.playing.run = None;
                self.playing.entry_script = None;
                None
            }
            step => {
                let update = self.playing.update.take();
                let run = self
                    .playing
                    .run
                    .as_mut()
                    .ok_or_else(|| CommandError::NoPlaylist("no playlist is playing".into()))?;
                let entry = match step {
                    PlaylistCommand::Next => run.step(1, now, update),
                    PlaylistCommand::Previous => run.step(-1, now, update),
                    PlaylistCommand::Jump(index) => run.jump(index, now),
                    PlaylistCommand::Play(_) | PlaylistCommand::Stop => None,
                };
                Some(entry.cloned().ok_or_else(|| {
                    CommandError::NoPlaylist("the playlist has no such entry, or has ended".into())
                })?)
            }
        };
        if let Some(entry) = entry {
            self.play_entry(&entry);
        }
        Ok(())
    }

    /// Moves to the next entry once the one playing is over; a playlist
    /// that does not loop stops after its last.
    pub(super) fn advance_playlist(&mut self) {
        let now = (self.clock.time, self.clock.beats);
        let Some(run) = self.playing.run.as_mut() else {
            return;
        };
        if !run.due(now) {
            return;
        }
        let update = self.playing.update.take();
        match run.step(1, now, update).cloned() {
            Some(entry) => self.play_entry(&entry),
            None => {
                tracing::info!("playlist {} ended", run.name);
                self.playing.run = None;
            }
        }
    }

    /// Loads an entry's preset, crossfading, with its script.
    fn play_entry(&mut self, entry: &Entry) {
        self.playing.entry_script = entry.script.clone();
        if let Err(error) = self.load_show_preset_fading(&entry.preset, entry.crossfade) {
            self.ground.errors.report("playlist", error.to_string());
        }
    }

    /// Reads `presets/playlists/<name>.toml` from the show folder or the binary.
    pub(super) fn read_playlist(&self, name: &str) -> Result<Playlist, CommandError> {
        let file = format!("{FOLDER}{}.toml", name.trim_end_matches(".toml"));
        let asset = self
            .ground
            .assets
            .read(Folder::Presets, &file)
            .map_err(|e| CommandError::NoPlaylist(e.to_string()))?;
        Ok(Playlist::parse(&asset.display, &asset.text)?)
    }

    /// A saved playlist file: the one playing takes it at its next entry;
    /// a malformed one is reported and the playing one goes on.
    pub(super) fn playlist_saved(&mut self, changed: &[ChangedFile]) {
        let Some(name) = self.playing.run.as_ref().map(|run| run.name.clone()) else {
            return;
        };
        let file = format!("{FOLDER}{name}.toml");
        if !changed
            .iter()
            .any(|c| c.folder == Folder::Presets && c.name == file)
        {
            return;
        }
        match self.read_playlist(&name) {
            Ok(playlist) => {
                self.ground.errors.clear("playlist");
                tracing::info!("playlist {name} saved: it changes at the next entry");
                self.playing.update = Some(playlist);
            }
            Err(error) => self.ground.errors.report("playlist", error.to_string()),
        }
    }

    /// Says with the playlist's status why it plays (the show chose it).
    pub fn note_playlist(&mut self, note: String) {
        if let Some(run) = self.playing.run.as_mut() {
            run.note = Some(note);
        }
    }

    /// The playlist's line for the HUD and status: its name, the entry
    /// and the time left.
    pub fn playlist_status(&self) -> Option<String> {
        let run = self.playing.run.as_ref()?;
        let (index, count) = run.index();
        let left = match run.left((self.clock.time, self.clock.beats)) {
            Length::Seconds(s) => format!("{s:.0} s"),
            Length::Beats(b) => format!("{b:.0} beats"),
        };
        let note = run
            .note
            .as_ref()
            .map_or(String::new(), |n| format!(" ({n})"));
        Some(format!(
            "playlist {}: {}/{count} {}, {left} left{note}",
            run.name,
            index + 1,
            run.entry().preset
        ))
    }
}
