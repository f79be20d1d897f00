//! The running show: its state (registry, clock, layers, compositor,
//! script) and one frame of the frame flow, `Show::frame`, shared by the
//! window, `sylva render`, `sylva run --headless`, `sylva bench` and the
//! tests. Only the output target differs between
//! them. Presets are loaded here: built and checked aside, then swapped in
//! whole, so a bad preset never replaces a good one.

mod catalogue;
mod commands;
mod ensemble;
mod errors;
mod ground;
mod outputs;
mod preset_state;
mod presets;
mod rendering;
mod requests;
mod scripting;
mod senses;
mod timecode;
mod timeline;

pub use catalogue::THUMBS_FOLDER;
pub use ensemble::Led;
pub use errors::{CommandError, SaveError, ShowStartError};
pub use ground::Ground;
pub use outputs::{OUTPUTS_FOLDER, OutputsFileError, read_outputs};
pub(crate) use presets::Arrival;

use std::sync::Arc;
use std::time::Duration;

use crate::audio::{Feed, Hearing, audio_params};
use crate::base::clock::Clock;
use crate::base::status::ErrorLog;
use crate::base::{Assets, Folder, ShowWatcher};
use crate::command::ScriptEvent;
use crate::control::{ControlSurface, ShowView};
use crate::engine::Layer;
use crate::engine::PresetError;
use crate::engine::compositor::{Compositor, master_params};
use crate::engine::frame::FrameUniforms;
use crate::engine::picture::Picture;
use crate::engine::renderer::{self, OnStage};
use crate::engine::stack::{Outgoing, Stack, sync_params};
use crate::engine::world::World;
use crate::gpu::{Gpu, GpuProfiler};
use crate::mapping::LoadedMappings;
use crate::outputs::Output;
use crate::params::Registry;
use crate::script::ScriptHost;
use crate::show::playing::PlaylistState;
use preset_state::PresetState;
use rendering::Rendering;
use requests::Requests;
use scripting::Scripting;
use senses::Senses;

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

/// The canvas's size when no output asks for one and no frame has run.
const DEFAULT_SIZE: [u32; 2] = [1920, 1080];

/// Everything one show needs to render frames, in parts that the frame's
/// steps borrow side by side.
pub struct Show {
    /// The device, files, error log, seed and world every layer is
    /// built on.
    pub ground: Ground,
    /// Every parameter.
    pub registry: Registry,
    /// Time and beat.
    pub clock: Clock,
    /// Per-pass GPU timing.
    pub profiler: GpuProfiler,
    /// The stacks on stage, the picture, the outputs, the frames in flight.
    rendering: Rendering,
    /// The preset running, the one on its way, the mappings in force.
    presets: PresetState,
    /// The playlist playing, if any, with what goes with it.
    pub(super) playing: PlaylistState,
    /// The script host and the script the command line gave.
    script: Scripting,
    /// What was asked between frames, the watcher, the catalogue.
    requests: Requests,
    /// What the show hears and sees.
    senses: Senses,
    /// The timecode the clock follows.
    following: timecode::Following,
    /// The cue timeline playing, if any.
    timeline: Option<timeline::TimelinePlaying>,
    /// A leader's performer changes since its last frame went out.
    performed: Option<Vec<crate::command::Command>>,
    /// A follower's next frame as its leader made it.
    led: Option<Led>,
    /// This show follows a leader.
    led_by_another: bool,
}

impl Show {
    /// A show with no layers, writing `output_format`.
    pub fn new(
        gpu: Arc<Gpu>,
        assets: Assets,
        output_format: wgpu::TextureFormat,
        seed: u64,
    ) -> Result<Self, ShowStartError> {
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
    ) -> Result<Self, ShowStartError> {
        let ground = Ground {
            gpu,
            assets,
            errors,
            seed,
            world: World::default(),
        };
        let rendering = Rendering::new(&ground, output_format)?;
        let mut registry = Registry::new();
        for spec in master_params()
            .into_iter()
            .chain(audio_params())
            .chain(crate::engine::world::scene_params())
        {
            registry.register(spec);
        }
        let gpu = &ground.gpu;
        let profiler = GpuProfiler::new(&gpu.device, &gpu.queue, gpu.timestamps);
        let senses = Senses::new(gpu);
        let script = Scripting::new(&ground)?;
        Ok(Self {
            ground,
            registry,
            clock: Clock::default(),
            following: timecode::Following::default(),
            timeline: None,
            performed: None,
            led: None,
            led_by_another: false,
            profiler,
            rendering,
            presets: PresetState::default(),
            playing: PlaylistState::default(),
            script,
            requests: Requests::default(),
            senses,
        })
    }

    /// The same show on another device, after the one under it was lost:
    /// the script (and its `persist` table), the watcher and the error log
    /// move over; layers and compositor are built again on `gpu`; the
    /// preset or playlist, the clock and every parameter resume from
    /// where the show stood. Simulations start again from their seed.
    pub fn rebuild_on(&mut self, gpu: Arc<Gpu>) -> Result<(), ShowStartError> {
        let state = self.state();
        let mut show = Show::with_log(
            gpu,
            self.ground.assets.clone(),
            self.rendering.output_format,
            self.ground.seed,
            self.ground.errors.clone(),
        )?;
        if self.ground.world.exact() {
            show.render_exactly();
        }
        std::mem::swap(&mut show.script, &mut self.script);
        show.performed = self.performed.take();
        show.led_by_another = self.led_by_another;
        show.requests.watcher = self.requests.watcher.take();
        if let Some(name) = self.outputs_name() {
            show.use_outputs(name);
        }
        std::mem::swap(&mut show.senses.hearing, &mut self.senses.hearing);
        if let Err(error) = show.resume(&state) {
            show.ground.errors.report("device lost", error);
        }
        tracing::info!(
            "the show resumed on a new device: {}",
            show.ground.gpu.adapter_line()
        );
        *self = show;
        Ok(())
    }

    /// When the device under the show was lost, the show on a new one
    /// (`surface`: the window's, which the new device must draw to); while
    /// none can be had, the show as it is, after a pause, to try again.
    pub fn recover_device(
        &mut self,
        surface: Option<&wgpu::Surface<'_>>,
    ) -> Result<(), ShowStartError> {
        if !self.ground.gpu.is_lost() {
            return Ok(());
        }
        match self.ground.gpu.reopen(surface) {
            Ok(gpu) => self.rebuild_on(Arc::new(gpu)),
            Err(error) => {
                self.ground
                    .errors
                    .report("gpu", format!("no new device yet, trying again: {error}"));
                std::thread::sleep(Duration::from_secs(1));
                Ok(())
            }
        }
    }

    /// Listens to `feed` from now on (the window and `sylva play`: the
    /// audio input; `render --audio`: a file in step with the clock).
    pub fn hear_from(&mut self, feed: Feed) {
        self.senses.hearing = Hearing::new(feed);
    }

    /// Plays clips in lockstep with show time (`sylva render`): each frame
    /// waits for the clip frame its time asks for, so renders repeat.
    pub fn media_in_lockstep(&mut self) {
        self.senses.media.set_lockstep(true);
    }

    /// Makes the frames repeat bit for bit, run after run (`sylva render`,
    /// through `ShowOptions::exact`, before any preset or script loads):
    /// clips and pictures in lockstep with show time, the simulations'
    /// sums in an order that is the same on every run and their workers
    /// waited for within the frame ([`World::set_exact`]), and the
    /// script's `os.clock` and `os.time` reading show time instead of the
    /// computer's clock.
    pub fn render_exactly(&mut self) {
        self.media_in_lockstep();
        self.ground.world.set_exact(true);
        self.script.host.keep_show_time();
    }

    /// Has clips come as 4:2:0 planes converted on the GPU, or as RGBA
    /// from ffmpeg, whatever the adapter (tests of either path).
    pub fn media_planes(&mut self, planes: bool) {
        self.senses.media.set_planes(planes);
    }

    /// Has HAP clips uploaded as BC blocks (where the device has BC
    /// compression) or decoded on the CPU (tests of either path).
    pub fn media_blocks(&mut self, blocks: bool) {
        self.senses.media.set_blocks(blocks);
    }

    /// What the media shelf has done: a line per source.
    pub fn media_report(&self) -> Vec<String> {
        self.senses.media.report()
    }

    /// Key `code` (the browser's `keyCode`, as Shadertoy's keyboard
    /// texture counts keys) went down or up in the window.
    pub fn key(&mut self, code: u8, down: bool) {
        self.senses.media.key(code, down);
    }

    /// Takes camera pictures from `cameras` (a test's own) from now on.
    pub fn see_from(
        &mut self,
        cameras: std::sync::Arc<dyn crate::engine::inputs::camera::Cameras>,
    ) {
        self.senses.media.set_cameras(cameras);
    }

    /// The show's ear: what it hears, its device, Link.
    pub fn hearing(&self) -> &Hearing {
        &self.senses.hearing
    }

    /// The same, to change.
    pub fn hearing_mut(&mut self) -> &mut Hearing {
        &mut self.senses.hearing
    }

    /// Runs `file` (in `scripts/`) instead of the script presets name.
    pub fn override_script(&mut self, file: &str) {
        self.script.given = Some(file.to_string());
        self.start_script(None);
    }

    /// Watches the show folder and reloads shaders, scripts and the preset
    /// when they are saved. `wake` is called when changes arrive.
    pub fn watch(&mut self, wake: Box<dyn Fn() + Send>) {
        match ShowWatcher::start(&self.ground.assets, wake, self.ground.errors.clone()) {
            Ok(watcher) => self.requests.watcher = watcher,
            Err(error) => self
                .ground
                .errors
                .report("watcher", format!("cannot watch the show folder: {error}")),
        }
    }

    /// The script host (tests feed it events).
    pub fn script(&mut self) -> &mut ScriptHost {
        &mut self.script.host
    }

    /// Starts the script the command line gave (`--script`), else the
    /// playlist entry's, else the preset's ([`Scripting::chosen`]), unless
    /// it already runs.
    fn start_script(&mut self, preset_script: Option<&str>) {
        let entry = self.playing.entry_script.as_deref();
        let Some(file) = self.script.chosen(entry, preset_script) else {
            self.script.host.stop();
            return;
        };
        let host = &mut self.script.host;
        if host.file() == file && host.is_running() {
            return;
        }
        // A failure is on screen and in the log; the old script runs on.
        let _ = host.load(&file, &self.registry, &self.clock);
        self.apply_script_commands();
    }

    /// Reloads whatever the saved files touch: shader layers, the script,
    /// the running preset.
    fn apply_file_changes(&mut self) {
        let Some(changed) = self.requests.saved_files() else {
            return;
        };
        if changed.is_empty() {
            return;
        }
        let env = self.ground.env();
        let rendering = &mut self.rendering;
        rendering.stack.reload(&env, &mut self.registry, &changed);
        if let Some(out) = rendering.outgoing.as_mut() {
            out.stack.reload(&env, &mut out.registry, &changed);
        }
        self.script
            .host
            .reload_if_changed(&changed, &self.registry, &self.clock);
        self.apply_script_commands();
        self.playlist_saved(&changed);
        self.outputs_saved(&changed);
        self.senses.media.saved(&changed);
        let mappings_saved = changed
            .iter()
            .any(|c| c.folder == Folder::Presets && c.name.starts_with("mappings/"));
        if mappings_saved {
            self.presets.load_mappings(&self.ground);
        }
        let preset_file = self.presets.file();
        let preset_saved = changed
            .iter()
            .any(|c| c.folder == Folder::Presets && Some(&c.name) == preset_file.as_ref());
        if let (true, Some(name)) = (preset_saved, self.presets.running.clone()) {
            match self.load_show_preset(&name) {
                Ok(()) => {
                    self.ground.errors.clear("preset");
                    tracing::info!("preset {name} saved: reloading it");
                }
                Err(error) => self.ground.errors.report("preset", error.to_string()),
            }
        }
    }

    /// The mappings in force: every `presets/mappings/*.toml` of the show
    /// and the running preset's own.
    pub fn mappings(&self) -> &LoadedMappings {
        &self.presets.mappings
    }

    /// Adds layer `id` of `kind`, a kind this build does not list (a host
    /// program's own), on top of the stack on stage; it is restarted
    /// from `kind` when it fails, like any other.
    pub fn add_layer(&mut self, kind: &'static crate::engine::LayerKind, id: &str) {
        let env = self.ground.env();
        let layer = (kind.create)(id, &env);
        sync_params(
            layer.as_ref(),
            &mut self.registry,
            &mut self.rendering.stack.layer_params,
        );
        self.rendering.stack.layers.push(layer);
    }

    /// Whether layer `id` on stage was left out after failing repeatedly.
    pub fn layer_disabled(&self, id: &str) -> bool {
        self.rendering.stack.disabled(id)
    }

    /// The layers on stage, in compositing order.
    pub fn layers(&self) -> &[Box<dyn Layer>] {
        &self.rendering.stack.layers
    }

    /// The compositor of the stack on stage (for tests that read its
    /// targets, and the HUD).
    pub fn compositor(&self) -> &Compositor {
        &self.rendering.stack.compositor
    }

    /// The stack leaving the stage in a crossfade, if one runs.
    pub fn outgoing(&self) -> Option<&Outgoing> {
        self.rendering.outgoing.as_ref()
    }

    /// One whole frame, the same for the window, `run --headless`,
    /// `render`, `bench` and the tests, in three steps: the session ticks
    /// (control applied when the show listens, requests, reloads, the
    /// playlist, the ear, the script, ramps and the clock), the engine
    /// renders its picture at `output`'s size, and `output` takes it; the
    /// caller's `overlay` passes (the HUD) follow, then one submit.
    /// Returns the GPU timings of frames that finished, oldest first.
    pub fn frame(
        &mut self,
        dt: f32,
        control: Option<&mut ControlSurface>,
        output: &mut dyn Output,
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) -> Vec<crate::gpu::FrameTimes> {
        if let Some(control) = control {
            self.take_control(control);
        }
        self.tick(dt);
        let size = (self
            .outputs()
            .and_then(crate::outputs::MappedOutputs::canvas))
        .or_else(|| output.size())
        .or_else(|| self.rendering.picture.as_ref().map(Picture::size))
        .unwrap_or(DEFAULT_SIZE);
        let mut encoder = self.render(dt, size);
        self.draw_outputs(&mut encoder);
        self.deliver(encoder, output, overlay)
    }

    /// The frame's last steps on `encoder`: the picture into `output`, the
    /// caller's `overlay` over it, the timings resolved, one submit.
    fn deliver(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        output: &mut dyn Output,
        overlay: impl FnOnce(&mut Show, &mut wgpu::CommandEncoder),
    ) -> Vec<crate::gpu::FrameTimes> {
        if let Some(pictures) = self.rendering.pictures(self.clock.time) {
            output.record(
                &self.ground.gpu,
                &mut encoder,
                &mut self.profiler,
                &pictures,
            );
        }
        overlay(self, &mut encoder);
        self.profiler.resolve(&mut encoder);
        self.submit(encoder)
    }

    /// Step 1 alone, for a show that renders nothing now (an
    /// installation off air): its controls and status still answer.
    pub fn listen(&mut self, control: &mut ControlSurface) {
        self.take_control(control);
    }

    /// Step 1: the control surface reads the show and answers with
    /// commands, carried out in order; refusals are logged, rate-limited.
    fn take_control(&mut self, control: &mut ControlSurface) {
        if self.presets.mappings.revision == 0 {
            self.presets.load_mappings(&self.ground);
        }
        self.refresh_catalogue();
        let view = ShowView {
            changes: self.registry.drain_changes(),
            registry: &self.registry,
            preset: self.presets.running.as_deref(),
            mappings: &self.presets.mappings,
            learn: self.requests.pending.learn.take(),
            catalogue: &self.requests.catalogue.catalogue,
            follows: self.led_by_another,
        };
        for command in control.poll(view) {
            if let Err(error) = self.perform(command) {
                control.refused(&error.to_string());
            }
        }
    }

    /// The session's part of a frame: requests carried out, saved files
    /// reloaded, the playlist stepped, the ear heard, the script's
    /// `update`, ramps and smoothing advanced by `dt`, the clock ticked
    /// (beats to the script), the modulations added.
    fn tick(&mut self, dt: f32) {
        self.carry_out_requests();
        self.advance_staging();
        self.apply_file_changes();
        self.build_read_outputs();
        self.advance_playlist();
        let led = self.led.take();
        let heard = match &led {
            Some(led) => (self.senses).take_in(&mut self.registry, led.heard.unwrap_or_default()),
            None => (self.senses).hear(&mut self.registry, self.clock.time + f64::from(dt)),
        };
        if heard.onset.is_some() {
            self.dispatch(&ScriptEvent::Onset);
        }
        if let Some(timecode) = heard.ltc {
            let source = crate::base::timecode::TimecodeSource::Ltc;
            self.timecode_heard(source, timecode, std::time::Instant::now());
        }
        self.script.host.update(dt, &self.registry, &self.clock);
        self.apply_script_commands();
        let lead = self
            .senses
            .hearing
            .lead_tempo(&mut self.registry, &heard, &self.ground.errors);
        self.registry.advance(dt);
        let before = self.clock.beats;
        let mut beat = self.clock.tick(dt, self.registry.float("master.bpm"));
        self.clock.follow(lead);
        self.follow_timecode();
        if let Some(led) = led {
            beat = self.clock.stand_at(led.clock, before);
        }
        self.advance_timeline();
        if let Some(beat) = beat {
            self.dispatch(&ScriptEvent::Beat(beat));
        }
        self.senses
            .hearing
            .modulate(&mut self.registry, &self.clock, dt, &self.presets.mappings);
    }

    /// The engine's part (`engine::renderer`, which alone drives the
    /// compositor): layers prepare (rebuilds, loads, uploads) for the
    /// render size, the frame uniforms are written, and every pass is
    /// recorded into a new encoder ending in the picture at `output_size`
    /// (the stack leaving in a crossfade runs on, on its own registry,
    /// advanced by `dt`).
    fn render(&mut self, dt: f32, output_size: [u32; 2]) -> wgpu::CommandEncoder {
        let env = self.ground.env();
        let rendering = &mut self.rendering;
        let mut scene = OnStage {
            stack: &mut rendering.stack,
            registry: &mut self.registry,
            outgoing: rendering.outgoing.as_mut(),
            media: &mut self.senses.media,
        };
        renderer::prepare(&env, &mut scene, &self.clock, output_size, dt);
        let size = scene.stack.compositor.render_size();
        let uniforms = FrameUniforms::new(&self.clock, scene.registry, size, env.seed);
        env.gpu
            .queue
            .write_buffer(&rendering.frame_uniforms, 0, bytemuck::bytes_of(&uniforms));
        let mut encoder = env
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("frame"),
            });
        self.profiler.open_frame(&mut encoder);
        let picture = match rendering.picture.take() {
            Some(picture) => picture.fit(env.gpu, output_size),
            None => Picture::new(env.gpu, output_size, rendering.output_format),
        };
        renderer::record(
            &env,
            &mut scene,
            (&self.clock, &rendering.frame_uniforms),
            &picture,
            &mut encoder,
            &mut self.profiler,
        );
        rendering.picture = Some(picture);
        if rendering.outgoing.as_ref().is_some_and(Outgoing::done) {
            tracing::info!("crossfade done");
            rendering.end_crossfade();
        }
        encoder
    }

    /// Step 5: one submit; timings of finished frames are collected and
    /// returned, oldest first. Waits for the frame [`FRAMES_IN_FLIGHT`]
    /// submissions back, so the CPU never runs further ahead of the GPU.
    fn submit(&mut self, encoder: wgpu::CommandEncoder) -> Vec<crate::gpu::FrameTimes> {
        let index = self.ground.gpu.queue.submit([encoder.finish()]);
        self.profiler.after_submit();
        self.lighting_submitted();
        let poll = self.rendering.submitted(index);
        if let Err(error) = self.ground.gpu.device.poll(poll) {
            self.ground
                .errors
                .report("gpu", format!("waiting for an earlier frame: {error}"));
        }
        self.profiler.collect()
    }
}
