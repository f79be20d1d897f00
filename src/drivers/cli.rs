//! Command-line pieces the library owns: the arguments every show takes
//! (shared by `sylva run`, `render`, `bench` and the layer kinds' tools),
//! and the tools a layer kind adds under `sylva export` and `sylva
//! validate` through its [`crate::engine::LayerKind`] description.

use std::path::PathBuf;

use clap::Args;

use crate::audio::AnalysisSettings;
use crate::base::Folder;
use crate::gpu::AdapterChoice;
use crate::show::{AudioChoice, ShowOptions};

/// The preset a show without one loads (`sylva render`, `bench`, tools).
pub const DEFAULT_PRESET: &str = "default";

/// The playlist `sylva` and `sylva run` play when given neither a preset
/// nor a playlist: the default show.
pub const DEFAULT_PLAYLIST: &str = crate::show::DEFAULT_SHOW;

/// What every show needs.
#[derive(Args, Clone, Debug)]
pub struct ShowArgs {
    /// Preset name in presets/ (or a path to a .toml file); `sylva run`
    /// without one plays the default show (the playlist `default`).
    #[arg(long)]
    pub preset: Option<String>,
    /// Pick the GPU adapter whose name contains this text (else $SYLVA_ADAPTER, else the best GPU).
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Show folder whose shaders/, scripts/ and presets/ override the built-in ones.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,
    /// Seed for every random choice.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Lua script to run instead of the preset's (a name in scripts/ or a path).
    #[arg(long, value_name = "FILE")]
    pub script: Option<String>,
    /// Play presets/playlists/NAME.toml instead of one preset.
    #[arg(long, value_name = "NAME")]
    pub playlist: Option<String>,
    /// Print the OSC address table of the show once it has started.
    #[arg(long)]
    pub verbose: bool,
    /// Play the cue timeline presets/timelines/NAME.toml on the show clock (see docs/guide/timecode.md).
    #[arg(long, value_name = "NAME", conflicts_with = "playlist")]
    pub timeline: Option<String>,
    /// Projectors and senders from outputs/NAME.toml (see docs/guide/outputs.md).
    #[arg(long, value_name = "NAME")]
    pub outputs: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs, reason = "clap documents the flattened arguments")]
    pub folders: FolderArgs,
    /// The playlist was filled in by [`ShowArgs::or_default_show`].
    #[arg(skip)]
    pub default_show: bool,
}

/// Folders that replace the show folder's own.
#[derive(Args, Clone, Debug)]
pub struct FolderArgs {
    /// Read (and watch) shaders from DIR instead of the show folder's shaders/.
    #[arg(long, value_name = "DIR")]
    pub shaders: Option<PathBuf>,
    /// Read (and watch) scripts from DIR instead of the show folder's scripts/.
    #[arg(long, value_name = "DIR")]
    pub scripts: Option<PathBuf>,
    /// Read (and watch) presets from DIR instead of the show folder's presets/.
    #[arg(long, value_name = "DIR")]
    pub presets: Option<PathBuf>,
}

impl FolderArgs {
    /// The folders given, each with the show folder it replaces.
    pub fn list(&self) -> Vec<(Folder, PathBuf)> {
        [
            (Folder::Shaders, &self.shaders),
            (Folder::Scripts, &self.scripts),
            (Folder::Presets, &self.presets),
        ]
        .into_iter()
        .filter_map(|(folder, dir)| dir.clone().map(|d| (folder, d)))
        .collect()
    }
}

impl ShowArgs {
    /// These arguments, playing the default show when they name neither a
    /// preset nor a playlist.
    pub fn or_default_show(mut self) -> Self {
        if self.preset.is_none() && self.playlist.is_none() && self.timeline.is_none() {
            self.playlist = Some(DEFAULT_PLAYLIST.into());
            self.default_show = true;
        }
        self
    }

    /// The show these arguments describe; `watch` reloads saved files.
    pub fn options(&self, watch: bool) -> ShowOptions {
        ShowOptions {
            adapter: AdapterChoice::from_cli(self.adapter.clone()),
            project: self.project.clone(),
            preset: self.preset.clone().unwrap_or_else(|| DEFAULT_PRESET.into()),
            seed: self.seed,
            script: self.script.clone(),
            folders: self.folders.list(),
            watch,
            playlist: self.playlist.clone(),
            verbose: self.verbose,
            audio: AudioChoice::Off,
            analysis: AnalysisSettings::default(),
            link: false,
            outputs: self.outputs.clone(),
            timeline: self.timeline.clone(),
            default_show: self.default_show,
            exact: false,
        }
    }
}

/// What a live show (window, `run --headless`, `play`) hears.
#[derive(Args, Clone, Debug)]
pub struct ListenArgs {
    /// Listen to the audio input whose name contains NAME (default: the system's default input).
    #[arg(long, value_name = "NAME")]
    pub audio: Option<String>,
    /// Open no audio input (the audio values stay at zero).
    #[arg(long, conflicts_with = "audio")]
    pub no_audio: bool,
    /// Join the Ableton Link session on the network: beat and phase follow it (master.tempo_source = link).
    #[arg(long)]
    pub link: bool,
    #[command(flatten)]
    #[allow(missing_docs, reason = "clap documents the flattened arguments")]
    pub analysis: AnalysisArgs,
}

impl ListenArgs {
    /// `options` listening as these arguments say.
    pub fn apply(&self, options: &mut ShowOptions) {
        options.audio = if self.no_audio {
            AudioChoice::Off
        } else {
            AudioChoice::Input(self.audio.clone())
        };
        options.analysis = self.analysis.settings();
        options.link = self.link;
    }
}

/// The audio analysis's FFT.
#[derive(Args, Clone, Debug)]
pub struct AnalysisArgs {
    /// FFT window of the audio analysis in samples (a power of two, 256-16384).
    #[arg(long, value_name = "SAMPLES", default_value_t = 2048)]
    pub fft: usize,
    /// Samples between two analyses (sound-to-value latency is one hop plus at most one frame).
    #[arg(long, value_name = "SAMPLES", default_value_t = 512)]
    pub hop: usize,
}

impl AnalysisArgs {
    /// The settings, checked when the show opens its ear.
    pub fn settings(&self) -> AnalysisSettings {
        AnalysisSettings {
            window: self.fft,
            hop: self.hop,
        }
    }
}
