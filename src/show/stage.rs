//! The running show: its state (registry, clock, layers, compositor,
//! script) and one frame of the frame flow, `Show::frame`, shared by the
//! window, `sylva render`, `sylva run --headless`, `sylva bench` and the
//! tests. Only the output target differs between
//! them. Presets are loaded here: built and checked aside, then swapped in
//! whole, so a bad preset never replaces a good one.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::audio::{Feed, Hearing, audio_params};
use crate::base::clock::Clock;
use crate::base::status::ErrorLog;
use crate::base::{AssetError, Assets, Folder, ShowWatcher};
use crate::command::Command;
use crate::command::ScriptEvent;
use crate::control::{ControlSurface, ShowView};
use crate::engine::compositor::{Compositor, CompositorError, master_params};
use crate::engine::frame::FrameUniforms;
use crate::engine::stack::{Outgoing, Stack, sync_params};
use crate::engine::{Layer, LayerEnv};
use crate::engine::{Preset, PresetError};
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::{Gpu, GpuProfiler};
use crate::layers;
use crate::mapping::{self, LoadedMappings};
use crate::params::{ParamError, Registry, Source};
use crate::script::ScriptHost;
use crate::show::check::CheckError;
use crate::show::playlist::{Playlist, PlaylistRun};
use crate::show::save_name::{self, SaveNameError};

/// Why a show could not start.
#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    /// A built-in compositor shader failed.
    #[error(transparent)]
    Compositor(#[from] CompositorError),
    /// The Lua state could not be created.
    #[error("cannot start Lua: {0}")]
    Script(String),
}

/// Why the show refused a command.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// A parameter write that does not fit (unknown name, wrong type).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// No layer of that id to reseed.
    #[error("no layer {0:?} to reseed")]
    NoLayer(String),
    /// No playlist of that name, or a malformed one.
    #[error(transparent)]
    Playlist(#[from] PresetError),
    /// A playlist step with none playing, or an entry it lacks.
    #[error("{0}")]
    NoPlaylist(String),
    /// No parameter of that name to learn.
    #[error("no parameter {0:?} to learn")]
    NoParam(String),
    /// Nothing to step through.
    #[error("the show folder has no presets to step through")]
    NoPresets,
    /// The learned mapping could not be written.
    #[error("cannot keep the learned mapping: {0}")]
    KeepLearned(std::io::Error),
}

/// Why a preset was not saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// A name from the network, a controller or a script that is not plain.
    #[error(transparent)]
    Name(#[from] SaveNameError),
    /// A name the performer typed that leaves the show folder.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// The show folder holds as many presets as it may.
    #[error(
        "{name}: the show already has {saved} presets (at most {MAX_SAVED_PRESETS}); overwrite one or remove some"
    )]
    Full {
        /// The name asked for.
        name: String,
        /// Presets there now.
        saved: usize,
    },
    /// The text would not load back.
    #[error("not saved, it would not load: {0}")]
    WouldNotLoad(#[from] CheckError),
    /// The text would not parse back.
    #[error("not saved, it would not load: {0}")]
    WouldNotParse(#[from] PresetError),
    /// The running show could not be written as TOML.
    #[error("cannot write the show as TOML: {0}")]
    Toml(#[from] toml::ser::Error),
    /// The file could not be written.
    #[error("writing {path}: {reason}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        reason: std::io::Error,
    },
}

/// Frames the CPU may record and submit ahead of the GPU. Without a bound
/// an unpaced loop queues work (and the driver's memory for it) faster
/// than the GPU retires it.
pub const FRAMES_IN_FLIGHT: usize = 2;

/// Script requests applied after one call at most; a script that asks for
/// more is cut short with an error.
pub const MAX_SCRIPT_COMMANDS: usize = 10_000;

/// Least time between two preset saves asked for over the network, MIDI
/// or a script.
const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// Presets in the show folder beyond which saving a new name is refused.
const MAX_SAVED_PRESETS: usize = 256;

/// Requests waiting for the next frame.
#[derive(Debug, Default)]
struct PendingRequests {
    load: Option<(String, Option<f32>)>,
    save: Option<String>,
    reseed: BTreeSet<String>,
    reseed_all: bool,
}

/// Everything one show needs to render frames.
pub struct Show {
    /// The device.
    pub gpu: Arc<Gpu>,
    /// Every parameter.
    pub registry: Registry,
    /// Show folder and embedded files.
    pub assets: Assets,
    /// Errors for the HUD.
    pub errors: ErrorLog,
    /// Time and beat.
    pub clock: Clock,
    /// Per-pass GPU timing.
    pub profiler: GpuProfiler,
    stack: Stack,
    outgoing: Option<Outgoing>,
    spare_compositor: Option<Compositor>,
    output_format: wgpu::TextureFormat,
    frame_uniforms: wgpu::Buffer,
    preset: Option<String>,
    preset_mappings: Vec<String>,
    mappings: LoadedMappings,
    pub(super) seed: u64,
    script: ScriptHost,
    script_override: Option<String>,
    /// The playlist playing, if any.
    pub(super) playlist: Option<PlaylistRun>,
    /// A saved version of it, taking effect at the next entry.
    pub(super) playlist_update: Option<Playlist>,
    /// The playing entry's own script, over the preset's.
    pub(super) entry_script: Option<String>,
    watcher: Option<ShowWatcher>,
    learn_request: Option<String>,
    pending: PendingRequests,
    presets_loaded: u64,
    last_save: Option<Instant>,
    in_flight: VecDeque<wgpu::SubmissionIndex>,
    hearing: Hearing,
}

impl Show {
    /// A show with no layers, writing `output_format`.
    pub fn new(
        gpu: Arc<Gpu>,
        assets: Assets,
        output_format: wgpu::TextureFormat,
        seed: u64,
    ) -> Result<Self, ShowError> {
        let errors = ErrorLog::child_of(&gpu.errors);
        Self::with_log(gpu, assets, output_format, seed, errors)
    }

    /// The same, reporting into `errors`.
    fn with_log(
        gpu: Arc<Gpu>,
        assets: Assets,
        output_format: wgpu::TextureFormat,
        seed: u64,
        errors: ErrorLog,
    ) -> Result<Self, ShowError> {
        let compositor = {
            let env = LayerEnv {
                gpu: &gpu,
                assets: &assets,
                errors: &errors,
                seed,
            };
            Compositor::new(&env, output_format)?
        };
        let mut registry = Registry::new();
        for spec in master_params().into_iter().chain(audio_params()) {
            registry.register(spec);
        }
        let frame_uniforms =
            uniform_buffer(&gpu.device, "frame.uniforms", size_of::<FrameUniforms>());
        let profiler = GpuProfiler::new(&gpu.device, &gpu.queue, gpu.timestamps);
        let script = ScriptHost::new(assets.clone(), errors.clone(), seed)
            .map_err(|e| ShowError::Script(e.to_string()))?;
        Ok(Self {
            gpu,
            registry,
            assets,
            errors,
            clock: Clock::default(),
            profiler,
            stack: Stack::new(compositor),
            outgoing: None,
            spare_compositor: None,
            output_format,
            frame_uniforms,
            preset: None,
            preset_mappings: Vec::new(),
            mappings: LoadedMappings::default(),
            seed,
            script,
            script_override: None,
            playlist: None,
            playlist_update: None,
            entry_script: None,
            watcher: None,
            learn_request: None,
            pending: PendingRequests::default(),
            presets_loaded: 0,
            last_save: None,
            in_flight: VecDeque::new(),
            hearing: Hearing::default(),
        })
    }

    /// The same show on another device, after the one under it was lost:
    /// the script (and its `persist` table), the watcher and the error log
    /// move over; layers and compositor are built again on `gpu`; the
    /// preset or playlist, the clock and every parameter resume from
    /// where the show stood. Simulations start again from their seed.
    pub fn rebuild_on(&mut self, gpu: Arc<Gpu>) -> Result<(), ShowError> {
        let state = self.state();
        let mut show = Show::with_log(
            gpu,
            self.assets.clone(),
            self.output_format,
            self.seed,
            self.errors.clone(),
        )?;
        std::mem::swap(&mut show.script, &mut self.script);
        show.script_override = self.script_override.take();
        show.watcher = self.watcher.take();
        std::mem::swap(&mut show.hearing, &mut self.hearing);
        if let Err(error) = show.resume(&state) {
            show.errors.report("device lost", error);
        }
        tracing::info!(
            "the show resumed on a new device: {}",
            show.gpu.adapter_line()
        );
        *self = show;
        Ok(())
    }

    /// When the device under the show was lost, the show on a new one
    /// (`surface`: the window's, which the new device must draw to); while
    /// none can be had, the show as it is, after a pause, to try again.
    pub fn recover_device(&mut self, surface: Option<&wgpu::Surface<'_>>) -> Result<(), ShowError> {
        if !self.gpu.is_lost() {
            return Ok(());
        }
        match self.gpu.reopen(surface) {
            Ok(gpu) => self.rebuild_on(Arc::new(gpu)),
            Err(error) => {
                self.errors
                    .report("gpu", format!("no new device yet, trying again: {error}"));
                std::thread::sleep(Duration::from_secs(1));
                Ok(())
            }
        }
    }

    /// Listens to `feed` from now on (the window and `sylva play`: the
    /// audio input; `render --audio`: a file in step with the clock).
    pub fn hear_from(&mut self, feed: Feed) {
        self.hearing = Hearing::new(feed);
    }

    /// The show's ear: what it hears, its device, Link.
    pub fn hearing(&self) -> &Hearing {
        &self.hearing
    }

    /// The same, to change.
    pub fn hearing_mut(&mut self) -> &mut Hearing {
        &mut self.hearing
    }

    /// Runs `file` (in `scripts/`) instead of the script presets name.
    pub fn override_script(&mut self, file: &str) {
        self.script_override = Some(file.to_string());
        self.start_script(None);
    }

    /// Watches the show folder and reloads shaders, scripts and the preset
    /// when they are saved. `wake` is called when changes arrive.
    pub fn watch(&mut self, wake: Box<dyn Fn() + Send>) {
        match ShowWatcher::start(&self.assets, wake, self.errors.clone()) {
            Ok(watcher) => self.watcher = watcher,
            Err(error) => self
                .errors
                .report("watcher", format!("cannot watch the show folder: {error}")),
        }
    }

    /// The script host (tests feed it events).
    pub fn script(&mut self) -> &mut ScriptHost {
        &mut self.script
    }

    /// Passes an event to the script and applies what it asks.
    pub fn dispatch(&mut self, event: &ScriptEvent) {
        self.script.dispatch(event, &self.registry, &self.clock);
        self.apply_script_commands();
    }

    /// Carries out `command`, the one way Lua, MIDI, OSC, keys and the HUD
    /// change the show. Parameter writes apply now; presets, saves and
    /// reseeds are queued for the start of the next frame.
    pub fn apply(&mut self, command: Command) -> Result<(), CommandError> {
        match command {
            Command::Set(name, value, source) => {
                self.registry.set(&name, value, source)?;
                Ok(())
            }
            Command::Ramp(name, value, seconds, easing, source) => {
                self.registry.ramp(&name, value, seconds, easing, source)?;
                Ok(())
            }
            Command::LoadPreset(name, fade) => {
                self.pending.load = Some((name, fade));
                Ok(())
            }
            Command::SavePreset(name) => {
                self.pending.save = Some(name);
                Ok(())
            }
            Command::Reseed(layer) => {
                if self.stack.layers.iter().any(|l| l.id() == layer) {
                    self.pending.reseed.insert(layer);
                    Ok(())
                } else {
                    Err(CommandError::NoLayer(layer))
                }
            }
            Command::ReseedAll => {
                self.pending.reseed_all = true;
                Ok(())
            }
            Command::Learn(param) => {
                if !self.registry.contains(&param) {
                    return Err(CommandError::NoParam(param));
                }
                self.learn_request = Some(param);
                Ok(())
            }
            Command::RestartBeat => {
                self.clock.beats = 0.0;
                Ok(())
            }
            Command::StepPreset(forward) => {
                let next = mapping::files::step_preset(&self.assets, self.preset(), forward)
                    .ok_or(CommandError::NoPresets)?;
                self.pending.load = Some((next, None));
                Ok(())
            }
            Command::KeepLearned(mapping) => {
                let file = mapping::files::save_learned(&self.assets, &mapping)
                    .map_err(CommandError::KeepLearned)?;
                tracing::info!(
                    "MIDI learn: {} bound to {} (kept in {file})",
                    mapping.param.as_deref().unwrap_or("?"),
                    mapping::files::control_name(&mapping),
                );
                Ok(())
            }
            Command::Script(event) => {
                self.dispatch(&event);
                Ok(())
            }
            Command::Playlist(command) => self.playlist_command(command),
        }
    }

    /// Carries out the queued requests: the save first (it keeps what was
    /// on stage when it was asked for), then the load, then reseeds.
    fn carry_out_requests(&mut self) {
        if let Some(name) = self.pending.save.take() {
            let too_soon = self.last_save.is_some_and(|t| t.elapsed() < SAVE_INTERVAL);
            if too_soon {
                tracing::warn!("preset save {name:?} skipped: one save a second at most");
            } else {
                self.last_save = Some(Instant::now());
                if let Err(error) = self.save_show_preset(&name) {
                    self.errors.report("preset save", error);
                }
            }
        }
        if let Some((name, fade)) = self.pending.load.take()
            && let Err(error) = self.load_show_preset_fading(&name, fade)
        {
            self.errors.report("preset", error.to_string());
        }
        if std::mem::take(&mut self.pending.reseed_all) {
            self.reseed(self.seed);
        }
        for layer in std::mem::take(&mut self.pending.reseed) {
            if self.stack.layers.iter().any(|l| l.id() == layer) {
                self.reseed_layer(&layer);
            }
        }
    }

    /// Loads preset `name` (`presets/<name>.toml`) from the show folder or
    /// the binary, or a `.toml` file at any path a person typed.
    pub fn load_preset(&mut self, name: &str) -> Result<(), PresetError> {
        let (file, text) = read_preset(&self.assets, name, true)?;
        let preset = Preset::parse(&file, &text)?;
        self.apply_preset(name, &preset)
    }

    /// Loads a preset named by a script or the network: only names inside
    /// the show folder's presets.
    pub fn load_show_preset(&mut self, name: &str) -> Result<(), PresetError> {
        self.load_show_preset_fading(name, None)
    }

    /// The same, crossfading over `fade` seconds (else `master.crossfade`).
    pub fn load_show_preset_fading(
        &mut self,
        name: &str,
        fade: Option<f32>,
    ) -> Result<(), PresetError> {
        let (file, text) = read_preset(&self.assets, name, false)?;
        let preset = Preset::parse(&file, &text)?;
        self.apply_preset_fading(name, &preset, fade)
    }

    /// Builds the preset's layers and parameter values aside and swaps them
    /// in only if all of it holds; on any error the running show is
    /// untouched. With `master.crossfade` above 0 the stack on stage keeps
    /// running and fades out over that many seconds while the new one
    /// takes the stage (and every control); else the new one cuts in.
    pub fn apply_preset(&mut self, name: &str, preset: &Preset) -> Result<(), PresetError> {
        self.apply_preset_fading(name, preset, None)
    }

    /// The same, crossfading over `fade` seconds (else `master.crossfade`).
    /// During a fade every continuous parameter the two presets share
    /// glides from its value on stage to the new preset's, in step with
    /// the pictures.
    pub fn apply_preset_fading(
        &mut self,
        name: &str,
        preset: &Preset,
        fade: Option<f32>,
    ) -> Result<(), PresetError> {
        let (layers, mut registry, layer_params) = self.stage_preset(preset)?;
        let seconds = fade
            .unwrap_or_else(|| self.registry.float("master.crossfade"))
            .clamp(0.0, 600.0);
        let fading = seconds > 0.0 && !self.stack.layers.is_empty();
        let compositor = if fading {
            self.fresh_compositor()
        } else {
            None
        };
        if let Some(cut) = self.outgoing.take() {
            self.spare_compositor = Some(cut.stack.compositor);
        }
        let fading = match compositor {
            Some(compositor) => {
                glide_shared(&self.registry, &mut registry, seconds);
                let staged = Stack::with_layers(layers, layer_params, compositor);
                self.outgoing = Some(Outgoing {
                    stack: std::mem::replace(&mut self.stack, staged),
                    registry: std::mem::replace(&mut self.registry, registry),
                    seconds,
                    elapsed: 0.0,
                });
                true
            }
            None => {
                self.stack.replace_layers(layers, layer_params);
                self.registry = registry;
                false
            }
        };
        self.preset = Some(name.to_string());
        self.presets_loaded += 1;
        self.preset_mappings = preset.mappings.clone();
        self.mappings
            .load(&self.assets, &self.preset_mappings, &self.errors);
        tracing::info!(
            "preset {name} loaded: {} layers{}",
            self.stack.layers.len(),
            if fading {
                format!(", crossfading over {seconds} s")
            } else {
                String::new()
            }
        );
        self.start_script(preset.script.as_deref());
        self.dispatch(&ScriptEvent::Preset(name.to_string()));
        Ok(())
    }

    /// A compositor for a stack coming on stage during a crossfade: the one
    /// the last crossfade left, else a new one (on failure, reported, and
    /// the preset cuts in).
    fn fresh_compositor(&mut self) -> Option<Compositor> {
        if let Some(spare) = self.spare_compositor.take() {
            return Some(spare);
        }
        let env = LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
        };
        Compositor::new(&env, self.output_format)
            .inspect_err(|e| self.errors.report("crossfade", e))
            .ok()
    }

    /// Starts the overriding script, else the preset's, unless it already runs.
    fn start_script(&mut self, preset_script: Option<&str>) {
        let Some(file) = self
            .entry_script
            .clone()
            .or(self.script_override.clone())
            .or(preset_script.map(str::to_string))
        else {
            return;
        };
        let file = file.strip_prefix("scripts/").unwrap_or(&file).to_string();
        if self.script.file() == file && self.script.is_running() {
            return;
        }
        // A failure is on screen and in the log; the old script runs on.
        let _ = self.script.load(&file, &self.registry, &self.clock);
        self.apply_script_commands();
    }

    fn apply_script_commands(&mut self) {
        let mut commands = self.script.take_commands();
        if commands.len() > MAX_SCRIPT_COMMANDS {
            self.errors.report(
                format!("scripts/{}", self.script.file()),
                format!(
                    "{} requests in one call; only the first {MAX_SCRIPT_COMMANDS} were applied",
                    commands.len()
                ),
            );
            commands.truncate(MAX_SCRIPT_COMMANDS);
        }
        for command in commands {
            if let Err(error) = self.apply(command) {
                self.errors
                    .report(format!("scripts/{}", self.script.file()), error);
            }
        }
    }

    /// Reloads whatever the saved files touch: shader layers, the script,
    /// the running preset.
    fn apply_file_changes(&mut self) {
        let Some(changed) = self.watcher.as_ref().map(ShowWatcher::drain) else {
            return;
        };
        if changed.is_empty() {
            return;
        }
        let env = LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
        };
        self.stack.reload(&env, &mut self.registry, &changed);
        if let Some(out) = self.outgoing.as_mut() {
            out.stack.reload(&env, &mut out.registry, &changed);
        }
        self.script
            .reload_if_changed(&changed, &self.registry, &self.clock);
        self.apply_script_commands();
        self.playlist_saved(&changed);
        let mappings_saved = changed
            .iter()
            .any(|c| c.folder == Folder::Presets && c.name.starts_with("mappings/"));
        if mappings_saved {
            self.mappings
                .load(&self.assets, &self.preset_mappings, &self.errors);
        }
        let preset_file = self
            .preset
            .as_ref()
            .map(|p| format!("{}.toml", p.trim_end_matches(".toml")));
        let preset_saved = changed
            .iter()
            .any(|c| c.folder == Folder::Presets && Some(&c.name) == preset_file.as_ref());
        if let (true, Some(name)) = (preset_saved, self.preset.clone()) {
            let started = std::time::Instant::now();
            match self.load_show_preset(&name) {
                Ok(()) => {
                    self.errors.clear("preset");
                    tracing::info!(
                        "preset {name} reloaded in {:.1} ms",
                        started.elapsed().as_secs_f64() * 1e3
                    );
                }
                Err(error) => self.errors.report("preset", error.to_string()),
            }
        }
    }

    #[allow(clippy::type_complexity, reason = "the three parts of a staged show")]
    fn stage_preset(
        &self,
        preset: &Preset,
    ) -> Result<(Vec<Box<dyn Layer>>, Registry, HashMap<String, Vec<String>>), PresetError> {
        let env = LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
        };
        // The master section belongs to the performer, not the preset: it
        // keeps its values unless the preset sets them; the audio section
        // belongs to the sound.
        let mut registry = Registry::new();
        for (spec, value) in self.registry.iter().filter(|(s, _)| show_wide(&s.name)) {
            registry.register(spec.clone());
            registry
                .set_now(&spec.name, value.clone(), Source::Show)
                .ok();
        }
        let mut layers = Vec::new();
        for (id, line) in &preset.layers {
            let layer = layers::create(id, &env).map_err(|e| PresetError {
                file: preset.file.clone(),
                line: *line,
                message: e.to_string(),
            })?;
            layers.push(layer);
        }
        let mut layer_params = HashMap::new();
        // Values first reach parameters that exist before the layers load
        // their files (`shader.x.file`), then the ones those files declare.
        for layer in &layers {
            sync_params(layer.as_ref(), &mut registry, &mut layer_params);
        }
        apply_known(preset, &mut registry)?;
        for layer in layers.iter_mut() {
            layer.prepare(&env, &registry, &self.clock);
            sync_params(layer.as_ref(), &mut registry, &mut layer_params);
        }
        preset.apply(&mut registry)?;
        Ok((layers, registry, layer_params))
    }

    /// How many presets have been loaded since the show started.
    pub fn presets_loaded(&self) -> u64 {
        self.presets_loaded
    }

    /// The preset now running.
    pub fn preset(&self) -> Option<&str> {
        self.preset.as_deref()
    }

    /// The mappings in force: every `presets/mappings/*.toml` of the show
    /// and the running preset's own.
    pub fn mappings(&self) -> &LoadedMappings {
        &self.mappings
    }

    /// Saves the running show under a name that came from the network, a
    /// controller or a script: a plain name (no folders, so never a mapping
    /// file), a bounded number of presets in the folder, and only text
    /// that loads back into this show (so a save can never leave a preset,
    /// `default` included, that fails at the next start).
    fn save_show_preset(&mut self, name: &str) -> Result<(), SaveError> {
        save_name::check(name)?;
        let exists = self
            .assets
            .dir(Folder::Presets)
            .join(format!("{name}.toml"))
            .is_file();
        let saved = self
            .assets
            .list(Folder::Presets, "toml")
            .iter()
            .filter(|f| !f.contains('/'))
            .count();
        if !exists && saved >= MAX_SAVED_PRESETS {
            return Err(SaveError::Full {
                name: name.to_string(),
                saved,
            });
        }
        let text = self.preset_text()?;
        let preset = Preset::parse(&format!("presets/{name}.toml"), &text)?;
        crate::show::check::preset_holds(&self.assets, &preset)?;
        self.write_preset(name, &text)
    }

    /// Writes the running layers and every parameter's value (but the
    /// master section's) as `presets/<name>.toml` in the show folder; the
    /// name is the performer's own (the HUD, tests), checked to stay inside.
    pub fn save_preset(&mut self, name: &str) -> Result<(), SaveError> {
        let file = format!("{name}.toml");
        crate::base::inside_show(&file)?;
        let text = self.preset_text()?;
        self.write_preset(name, &text)
    }

    /// The running show as preset text.
    fn preset_text(&self) -> Result<String, SaveError> {
        let mut table = toml::Table::new();
        let layers = self
            .stack
            .layers
            .iter()
            .map(|l| toml::Value::String(l.id().to_string()))
            .collect();
        table.insert("layers".into(), toml::Value::Array(layers));
        if let Some(script) = self.script.file().strip_suffix(".lua") {
            table.insert(
                "script".into(),
                toml::Value::String(format!("scripts/{script}.lua")),
            );
        }
        let mut params = toml::Table::new();
        for (spec, _) in self.registry.iter().filter(|(s, _)| !show_wide(&s.name)) {
            if let Some(value) = self.registry.target(&spec.name) {
                params.insert(spec.name.clone(), crate::engine::toml_of(spec, value));
            }
        }
        table.insert("params".into(), toml::Value::Table(params));
        Ok(toml::to_string_pretty(&table)?)
    }

    fn write_preset(&self, name: &str, text: &str) -> Result<(), SaveError> {
        let path = self
            .assets
            .dir(Folder::Presets)
            .join(format!("{name}.toml"));
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|reason| SaveError::Write {
                path: path.display().to_string(),
                reason,
            })?;
        tracing::info!("preset saved to {}", path.display());
        Ok(())
    }

    /// Adds layer `id` of `kind`, a kind this build does not list (a host
    /// program's own), on top of the stack on stage; it is restarted
    /// from `kind` when it fails, like any other.
    pub fn add_layer(&mut self, kind: &'static crate::engine::LayerKind, id: &str) {
        let env = LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
        };
        let layer = (kind.create)(id, &env);
        sync_params(
            layer.as_ref(),
            &mut self.registry,
            &mut self.stack.layer_params,
        );
        self.stack.layers.push(layer);
    }

    /// Whether layer `id` on stage was left out after failing repeatedly.
    pub fn layer_disabled(&self, id: &str) -> bool {
        self.stack.disabled(id)
    }

    /// The layers on stage, in compositing order.
    pub fn layers(&self) -> &[Box<dyn Layer>] {
        &self.stack.layers
    }

    /// The compositor of the stack on stage (for tests that read its
    /// targets, and the HUD).
    pub fn compositor(&self) -> &Compositor {
        &self.stack.compositor
    }

    /// The stack leaving the stage in a crossfade, if one runs.
    pub fn outgoing(&self) -> Option<&Outgoing> {
        self.outgoing.as_ref()
    }

    /// Restarts every layer from `seed` and clears feedback.
    pub fn reseed(&mut self, seed: u64) {
        self.seed = seed;
        let ids: Vec<String> = self
            .stack
            .layers
            .iter()
            .map(|l| l.id().to_string())
            .collect();
        for id in ids {
            self.reseed_layer(&id);
        }
    }

    /// Restarts one layer and clears its feedback.
    pub fn reseed_layer(&mut self, id: &str) {
        match self.stack.layers.iter_mut().find(|l| l.id() == id) {
            Some(layer) => {
                layer.reseed(self.seed);
                self.stack.compositor.forget(id);
            }
            None => self
                .errors
                .report("reseed", format!("no layer {id:?} to reseed")),
        }
    }

    /// One whole frame, the same for the window, `run --headless`,
    /// `render`, `bench` and the tests: control applied (when the show
    /// listens), requests, reloads, the script, layers and compositor
    /// recorded into `output` of `size` pixels, the caller's `overlay`
    /// passes (the HUD) after them, one submit. Returns the GPU timings of
    /// frames that finished, oldest first.
    pub fn frame(
        &mut self,
        dt: f32,
        control: Option<&mut ControlSurface>,
        (output, size): (&wgpu::TextureView, [u32; 2]),
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) -> Vec<Vec<crate::gpu::PassTime>> {
        if let Some(control) = control {
            self.take_control(control);
        }
        let mut encoder = self.record(dt, output, size);
        overlay(self, &mut encoder);
        self.submit(encoder)
    }

    /// Steps 1 and 2 alone, for a show that renders nothing now (an
    /// installation off air): its controls and status still answer.
    pub fn listen(&mut self, control: &mut ControlSurface) {
        self.take_control(control);
    }

    /// Steps 1 and 2: the control surface reads the show and answers with
    /// commands, carried out in order; refusals are logged, rate-limited.
    fn take_control(&mut self, control: &mut ControlSurface) {
        if self.mappings.revision == 0 {
            self.mappings
                .load(&self.assets, &self.preset_mappings, &self.errors);
        }
        let view = ShowView {
            changes: self.registry.drain_changes(),
            registry: &self.registry,
            preset: self.preset.as_deref(),
            mappings: &self.mappings,
            learn: self.learn_request.take(),
        };
        for command in control.poll(view) {
            if let Err(error) = self.apply(command) {
                control.refused(&error.to_string());
            }
        }
    }

    /// Steps 4-6 of a frame: ramps and smoothing advance by `dt`, the clock
    /// ticks, layers prepare (rebuilds, loads, uploads), the frame uniforms
    /// are written, and every pass is recorded into a new encoder ending in
    /// `output`.
    fn record(
        &mut self,
        dt: f32,
        output: &wgpu::TextureView,
        output_size: [u32; 2],
    ) -> wgpu::CommandEncoder {
        self.carry_out_requests();
        self.apply_file_changes();
        self.advance_playlist();
        let heard = self
            .hearing
            .hear(&mut self.registry, self.clock.time + f64::from(dt));
        if heard.onset.is_some() {
            self.dispatch(&ScriptEvent::Onset);
        }
        self.script.update(dt, &self.registry, &self.clock);
        self.apply_script_commands();
        let lead = self
            .hearing
            .lead_tempo(&mut self.registry, &heard, &self.errors);
        self.registry.advance(dt);
        let beat = self.clock.tick(dt, self.registry.float("master.bpm"));
        self.clock.follow(lead);
        if let Some(beat) = beat {
            self.dispatch(&ScriptEvent::Beat(beat));
        }
        self.hearing
            .modulate(&mut self.registry, &self.clock, dt, &self.mappings);
        let env = LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
        };
        self.stack.prepare(&env, &mut self.registry, &self.clock);
        self.stack
            .compositor
            .fit(&self.gpu, &self.registry, &self.clock, output_size);
        let size = self.stack.compositor.render_size();
        let uniforms = FrameUniforms::new(&self.clock, &self.registry, size, self.seed);
        self.gpu
            .queue
            .write_buffer(&self.frame_uniforms, 0, bytemuck::bytes_of(&uniforms));
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        let frame = (&self.registry, &self.clock, &self.frame_uniforms);
        self.stack
            .encode(&env, frame, &mut encoder, &mut self.profiler);
        if let Some(out) = self.outgoing.as_mut() {
            // The stack leaving runs on, on its own registry, at the same
            // size, and is laid over the one coming in as it fades.
            out.elapsed += dt;
            out.registry.advance(dt);
            out.stack.prepare(&env, &mut out.registry, &self.clock);
            out.stack
                .compositor
                .fit(&self.gpu, &self.registry, &self.clock, output_size);
            let frame = (&out.registry, &self.clock, &self.frame_uniforms);
            out.stack
                .encode(&env, frame, &mut encoder, &mut self.profiler);
            let leaving = out
                .stack
                .compositor
                .composite()
                .create_view(&wgpu::TextureViewDescriptor::default());
            self.stack.compositor.crossfade(
                &env,
                &leaving,
                out.weight(),
                &mut encoder,
                &mut self.profiler,
            );
        }
        self.stack.compositor.finish(
            &env,
            &self.registry,
            &mut encoder,
            &mut self.profiler,
            output,
        );
        self.profiler.resolve(&mut encoder);
        if self.outgoing.as_ref().is_some_and(Outgoing::done)
            && let Some(done) = self.outgoing.take()
        {
            tracing::info!("crossfade done");
            self.spare_compositor = Some(done.stack.compositor);
        }
        encoder
    }

    /// Step 7: one submit; timings of finished frames are collected and
    /// returned, oldest first. Waits for the frame [`FRAMES_IN_FLIGHT`]
    /// submissions back, so the CPU never runs further ahead of the GPU.
    fn submit(&mut self, encoder: wgpu::CommandEncoder) -> Vec<Vec<crate::gpu::PassTime>> {
        let index = self.gpu.queue.submit([encoder.finish()]);
        self.profiler.after_submit();
        self.in_flight.push_back(index);
        let poll = if self.in_flight.len() > FRAMES_IN_FLIGHT {
            wgpu::PollType::Wait {
                submission_index: self.in_flight.pop_front(),
                timeout: Some(Duration::from_secs(5)),
            }
        } else {
            wgpu::PollType::Poll
        };
        if let Err(error) = self.gpu.device.poll(poll) {
            self.errors
                .report("gpu", format!("waiting for an earlier frame: {error}"));
        }
        self.profiler.collect()
    }
}

/// Starts every continuous parameter `incoming` shares with `outgoing` (but
/// the master section, which carries over) at the outgoing value and
/// glides it to its own over `seconds`.
fn glide_shared(outgoing: &Registry, incoming: &mut Registry, seconds: f32) {
    let shared: Vec<(String, crate::params::Value, crate::params::Value)> = incoming
        .iter()
        .filter(|(spec, _)| spec.kind.is_continuous() && !show_wide(&spec.name))
        .filter_map(|(spec, _)| {
            let from = outgoing.get(&spec.name)?.clone();
            let to = incoming.target(&spec.name)?.clone();
            (from != to).then(|| (spec.name.clone(), from, to))
        })
        .collect();
    for (name, from, to) in shared {
        // A value the new spec refuses (another range) just cuts.
        let glides = incoming.set_now(&name, from, Source::Show).is_ok()
            && incoming
                .ramp(
                    &name,
                    to.clone(),
                    seconds,
                    crate::params::Easing::Smooth,
                    Source::Show,
                )
                .is_ok();
        if !glides {
            tracing::debug!("{name} cuts to {to} instead of gliding");
        }
    }
}

/// Whether a parameter belongs to the show rather than its preset: the
/// master and audio sections carry over from preset to preset and are not
/// saved in one.
fn show_wide(name: &str) -> bool {
    name.starts_with("master.") || name.starts_with("audio.")
}

/// Applies the preset values whose parameters exist already; the others
/// are checked once the layers have declared theirs.
fn apply_known(preset: &Preset, registry: &mut Registry) -> Result<(), PresetError> {
    let known = Preset {
        params: preset
            .params
            .iter()
            .filter(|p| registry.contains(&p.name))
            .cloned()
            .collect(),
        ..preset.clone()
    };
    known.apply(registry)
}

/// Reads a preset by name from the show, or, when `typed_by_person`, by
/// path when it ends in `.toml` and exists on disk.
fn read_preset(
    assets: &Assets,
    name: &str,
    typed_by_person: bool,
) -> Result<(String, String), PresetError> {
    let fail = |message: String| PresetError {
        file: name.to_string(),
        line: 1,
        message,
    };
    let path = std::path::Path::new(name);
    if typed_by_person && name.ends_with(".toml") && path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        return Ok((name.to_string(), text));
    }
    let file = if name.ends_with(".toml") {
        name.to_string()
    } else {
        format!("{name}.toml")
    };
    let asset = assets
        .read(Folder::Presets, &file)
        .map_err(|e| fail(e.to_string()))?;
    Ok((asset.display, asset.text))
}
