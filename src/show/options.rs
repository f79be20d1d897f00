//! How a show starts: [`ShowOptions`] (adapter, show folder, preset or
//! playlist, seed, what it hears), [`start`] for a show that may fail
//! (render, bench, tools) and [`start_live_on`] for one that must go on
//! (a failing preset falls back to the built-in default), with control
//! and the ear opened.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};

use crate::audio::file::FileFeed;
use crate::audio::input::LiveInput;
use crate::audio::{AnalysisSettings, Feed};
use crate::base::status::ErrorLog;
use crate::base::{Assets, Folder};
use crate::gpu::{AdapterChoice, Gpu};
use crate::show::{Show, names};

/// The playlist that is the default show: what `sylva` and `sylva run`
/// play given neither a preset nor a playlist.
pub const DEFAULT_SHOW: &str = "default";

/// What every show needs to start: adapter, show folder, preset, seed.
#[derive(Debug, Clone)]
pub struct ShowOptions {
    /// Adapter choice.
    pub adapter: AdapterChoice,
    /// The show folder whose files override the embedded ones.
    pub project: PathBuf,
    /// Preset name or `.toml` path.
    pub preset: String,
    /// Seed of every random choice.
    pub seed: u64,
    /// Script to run instead of the preset's: a name in `scripts/` or a
    /// path to a `.lua` file (whose folder then serves `require`).
    pub script: Option<String>,
    /// Folders that replace `<project>/shaders`, `scripts` or `presets`.
    pub folders: Vec<(Folder, PathBuf)>,
    /// Reload shaders, scripts and presets when they are saved.
    pub watch: bool,
    /// A playlist in `presets/playlists/` to play from the start.
    pub playlist: Option<String>,
    /// Print the OSC address table once the show has started.
    pub verbose: bool,
    /// What the show hears.
    pub audio: AudioChoice,
    /// FFT window and hop of the analysis.
    pub analysis: AnalysisSettings,
    /// Join an Ableton Link session (`master.tempo_source = link`).
    pub link: bool,
    /// An outputs file in `outputs/` (projectors, senders), by name.
    pub outputs: Option<String>,
    /// A cue timeline in `presets/timelines/` to play on the show clock.
    pub timeline: Option<String>,
    /// The playlist is the default show, chosen because the command line
    /// named neither a preset nor a playlist: a live show on a software
    /// adapter then plays [`LIGHT_PLAYLIST`] instead.
    pub default_show: bool,
    /// Frames repeat bit for bit, run after run (`sylva render`): see
    /// [`Show::render_exactly`].
    pub exact: bool,
}

/// The playlist the default show plays on a software adapter (Mesa's
/// llvmpipe, Microsoft's WARP): scenes a CPU draws at a show's pace.
pub const LIGHT_PLAYLIST: &str = "light";

/// What a show listens to.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum AudioChoice {
    /// Nothing: the analysis stays at zero.
    #[default]
    Off,
    /// The audio input whose name contains this (the default one if `None`).
    Input(Option<String>),
    /// A sound file, heard in step with the show's clock.
    File(PathBuf),
}

impl ShowOptions {
    /// A show of `preset` in `project` with everything else default.
    pub fn new(project: impl Into<PathBuf>, preset: &str) -> Self {
        Self {
            adapter: AdapterChoice::default(),
            project: project.into(),
            preset: preset.to_string(),
            seed: 1,
            script: None,
            folders: Vec::new(),
            watch: false,
            playlist: None,
            verbose: false,
            audio: AudioChoice::Off,
            analysis: AnalysisSettings::default(),
            link: false,
            outputs: None,
            timeline: None,
            default_show: false,
            exact: false,
        }
    }

    /// The show files these options name, and the script file inside them.
    pub fn assets(&self) -> (Assets, Option<String>) {
        let mut assets = Assets::new(&self.project);
        for (folder, dir) in &self.folders {
            assets = assets.with_folder(*folder, dir);
        }
        let script = self.script.as_ref().map(|script| {
            let path = Path::new(script);
            match (path.is_file(), path.parent(), path.file_name()) {
                (true, Some(parent), Some(name)) => {
                    assets = assets.clone().with_folder(Folder::Scripts, parent);
                    name.to_string_lossy().into_owned()
                }
                _ => script.clone(),
            }
        });
        (assets, script)
    }
}

/// Opens the device the options name.
pub fn open_device(options: &ShowOptions) -> anyhow::Result<Arc<Gpu>> {
    let gpu = Gpu::new(Gpu::instance(), &options.adapter, None, ErrorLog::default())?;
    Ok(Arc::new(gpu))
}

/// Opens the device (printing the adapter line) and loads the preset.
pub fn start(options: &ShowOptions, output_format: wgpu::TextureFormat) -> anyhow::Result<Show> {
    start_on(open_device(options)?, options, output_format)
}

/// Loads the preset on an existing device.
pub fn start_on(
    gpu: Arc<Gpu>,
    options: &ShowOptions,
    output_format: wgpu::TextureFormat,
) -> anyhow::Result<Show> {
    let mut show = open_show(gpu, options, output_format)?;
    if let Some(name) = &options.playlist {
        names::check_playlist(&show.ground.assets, name)?;
        show.apply(crate::command::Command::Playlist(
            crate::command::PlaylistCommand::Play(name.clone()),
        ))
        .with_context(|| format!("playing playlist {name}"))?;
        return Ok(show);
    }
    names::check_preset(&show.ground.assets, &options.preset)?;
    show.load_preset(&options.preset)
        .with_context(|| format!("loading preset {}", options.preset))?;
    if let Some(name) = &options.timeline {
        show.apply(crate::command::Command::Timeline(Some(name.clone())))
            .with_context(|| format!("playing timeline {name}"))?;
    }
    Ok(show)
}

/// A show for the show with its script and watcher, before any preset.
fn open_show(
    gpu: Arc<Gpu>,
    options: &ShowOptions,
    output_format: wgpu::TextureFormat,
) -> anyhow::Result<Show> {
    tracing::info!("adapter: {}", gpu.adapter_line());
    let (assets, script) = options.assets();
    let mut show = Show::new(gpu, assets, output_format, options.seed)?;
    // Before any script or preset loads, so none starts on the computer's
    // clock or builds a simulation that sums in thread order.
    if options.exact {
        show.render_exactly();
    }
    if let Some(script) = script {
        show.override_script(&script);
    }
    if options.watch {
        show.watch(Box::new(|| {}));
    }
    if let Some(outputs) = &options.outputs {
        show.use_outputs(outputs);
    }
    listen(&mut show, options)?;
    Ok(show)
}

/// Opens what the show hears, and joins Link when asked.
fn listen(show: &mut Show, options: &ShowOptions) -> anyhow::Result<()> {
    let settings = options.analysis.checked()?;
    match &options.audio {
        AudioChoice::Off => {}
        AudioChoice::Input(name) => show.hear_from(Feed::Live(Box::new(LiveInput::start(
            name.clone(),
            settings,
            show.ground.errors.clone(),
        )))),
        AudioChoice::File(path) => {
            let sound = crate::audio::file::read(path)?;
            tracing::info!(
                "hearing {} ({} Hz, {} channels, {:.1} s)",
                path.display(),
                sound.rate,
                sound.channels,
                sound.seconds()
            );
            show.hear_from(Feed::File(Box::new(FileFeed::new(sound, settings))));
        }
    }
    // A live show joins a Link session on the network when the tempo
    // source asks for one; renders and tests keep to the local timeline.
    if options.watch {
        show.hearing_mut().join_link_network();
    }
    if options.link {
        if !cfg!(feature = "link") {
            bail!("--link: this build has no Ableton Link (built without the `link` feature)");
        }
        let link = crate::params::Value::Text("link".into());
        show.registry
            .set("master.tempo_source", link, crate::params::Source::Ui)?;
    }
    Ok(())
}

/// Loads the preset for a show that must go on (the window and `run
/// --headless`): when the preset fails, the error is shown and the show
/// starts on the built-in default instead of exiting.
pub fn start_live_on(
    gpu: Arc<Gpu>,
    options: &ShowOptions,
    output_format: wgpu::TextureFormat,
) -> anyhow::Result<Show> {
    let device_type = gpu.info.device_type;
    let mut show = open_show(gpu, options, output_format)?;
    let (playlist, note) = live_playlist(options, device_type);
    if let Some(name) = &playlist {
        // The playlist's first entry is the preset; a playlist that
        // cannot start is reported and the preset plays.
        let started = names::check_playlist(&show.ground.assets, name)
            .map_err(anyhow::Error::from)
            .and_then(|()| {
                show.apply(crate::command::Command::Playlist(
                    crate::command::PlaylistCommand::Play(name.clone()),
                ))
                .map_err(anyhow::Error::from)
            });
        match started {
            Ok(()) => {
                match note {
                    Some(note) => {
                        tracing::info!(
                            "{} is a software adapter: the light show (playlist \
                             {LIGHT_PLAYLIST}) plays; --playlist default plays the full show",
                            show.ground.gpu.info.name
                        );
                        show.note_playlist(note);
                    }
                    None => tracing::info!("playing the playlist {name}{}", default_show(name)),
                }
                print_addresses(&show, options);
                return Ok(show);
            }
            Err(error) => show.ground.errors.report(
                "playlist",
                format!("{error:#}; the preset {} plays instead", options.preset),
            ),
        }
    }
    let loaded = names::check_preset(&show.ground.assets, &options.preset)
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(show.load_preset(&options.preset)?));
    if let Err(error) = loaded {
        // The copy of `presets/default.toml` built into the binary: a
        // preset, not the default show (a playlist), which may be what
        // failed.
        let message = format!("{error:#}; the built-in default preset runs instead");
        show.ground.errors.report("preset", message);
        let fallback = Assets::read_embedded(Folder::Presets, "default.toml")
            .map_err(|e| anyhow::anyhow!(e.to_string()))
            .and_then(|asset| {
                let preset = crate::engine::Preset::parse(&asset.display, &asset.text)?;
                show.apply_preset("default", &preset)?;
                Ok(())
            });
        fallback.context("the built-in default preset failed too")?;
    }
    // A timeline that cannot play is said on screen; the preset plays on.
    if let Some(name) = &options.timeline
        && let Err(error) = show.apply(crate::command::Command::Timeline(Some(name.clone())))
    {
        (show.ground.errors).report("timeline", format!("timeline {name}: {error}"));
    }
    print_addresses(&show, options);
    Ok(show)
}

/// The playlist a live show starts with, and why when the show chose it:
/// the one asked for, but the default show on a software adapter plays
/// [`LIGHT_PLAYLIST`]. The choice is the adapter's type, never a timing,
/// so it is the same at every start; renders never make it.
pub fn live_playlist(
    options: &ShowOptions,
    device_type: wgpu::DeviceType,
) -> (Option<String>, Option<String>) {
    if options.default_show && device_type == wgpu::DeviceType::Cpu {
        let note = "chosen for a software adapter";
        return (Some(LIGHT_PLAYLIST.to_string()), Some(note.to_string()));
    }
    (options.playlist.clone(), None)
}

/// What a log line adds after a playlist's name: whether it is the
/// default show.
fn default_show(playlist: &str) -> &'static str {
    if playlist == DEFAULT_SHOW {
        " (the default show)"
    } else {
        ""
    }
}

/// With `--verbose`, the OSC address table of the show on stage.
fn print_addresses(show: &Show, options: &ShowOptions) {
    if options.verbose {
        let specs = show.registry.iter().map(|(spec, _)| spec);
        println!(
            "OSC addresses of {} (UDP; OSCQuery serves the same over HTTP):\n{}",
            show.preset().unwrap_or("the show"),
            crate::control::osc_commands::address_table(specs)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_default_show_on_a_software_adapter_turns_light() {
        let asked = |playlist: Option<&str>, default_show: bool| ShowOptions {
            playlist: playlist.map(str::to_string),
            default_show,
            ..ShowOptions::new(".", "default")
        };
        let default_show = asked(Some("default"), true);
        let (playlist, note) = live_playlist(&default_show, wgpu::DeviceType::Cpu);
        assert_eq!(playlist.as_deref(), Some(LIGHT_PLAYLIST));
        assert!(note.is_some_and(|n| n.contains("software adapter")));
        for device in [
            wgpu::DeviceType::DiscreteGpu,
            wgpu::DeviceType::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu,
            wgpu::DeviceType::Other,
        ] {
            assert_eq!(
                live_playlist(&default_show, device),
                (Some("default".into()), None)
            );
        }
        let named = asked(Some("default"), false);
        assert_eq!(
            live_playlist(&named, wgpu::DeviceType::Cpu),
            (Some("default".into()), None)
        );
        let preset = asked(None, false);
        assert_eq!(live_playlist(&preset, wgpu::DeviceType::Cpu), (None, None));
    }
}
