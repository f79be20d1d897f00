//! What a layer is to the engine: the [`Layer`] trait, what a layer is
//! given each frame ([`LayerEnv`], [`LayerFrame`]), and the description a
//! kind exports ([`LayerKind`]). The kinds themselves live in
//! the layers tier, which lists them; the engine never names one.

use super::inputs::TextureInputs;
use crate::base::clock::Clock;
use crate::base::status::ErrorLog;
use crate::base::{Assets, ChangedFile};
use crate::engine::Preset;
use crate::gpu::compute::KernelReload;
use crate::gpu::{Gpu, GpuProfiler, UniformLayout};
use crate::params::{Handle, ParamSpec, Registry};

/// Blend modes of the compositor, in the order of the `<layer>.blend` enum.
pub const BLEND_MODES: [&str; 4] = ["normal", "add", "screen", "multiply"];

/// What a bench size means for a layer kind: the output resolution, the
/// size's unit, and the settings (`param=value` without the layer id)
/// that make the workload.
pub struct BenchWorkload {
    /// Output resolution.
    pub resolution: [u32; 2],
    /// What the size counts (`particles`).
    pub unit: &'static str,
    /// `param=value` settings, before the command line's `--set`.
    pub settings: Vec<String>,
    /// Groups of compute passes timed on their own beside the whole step:
    /// a name and the label prefixes of its passes.
    pub groups: Vec<(&'static str, &'static [&'static str])>,
}

/// Everything the rest of sylva needs to know about a layer kind, exported
/// by the kind's own folder and listed once in the layers tier's `KINDS`: adding a kind is
/// a folder and a line.
pub struct LayerKind {
    /// The kind's name, the part of a preset id before the dot.
    pub name: &'static str,
    /// Builds layer `id` on the GPU.
    pub create: fn(&str, &LayerEnv<'_>) -> Box<dyn Layer>,
    /// The kind's own parameters for layer `id` of a preset, without a GPU
    /// (for `sylva check`; the shader kind reads its WGSL header).
    pub params: fn(&str, &Assets, &Preset) -> Result<Vec<ParamSpec>, LayerError>,
    /// The bench workload for a size, if the kind has one.
    pub bench: fn(u32) -> BenchWorkload,
    /// Its structs uploaded to the GPU, each against its WGSL struct.
    pub layouts: &'static [UniformLayout],
}

/// What a layer may use outside itself: the device, the show files and the
/// error panel.
pub struct LayerEnv<'a> {
    /// The GPU.
    pub gpu: &'a Gpu,
    /// Show folder and embedded files.
    pub assets: &'a Assets,
    /// Where to report problems the performer should see.
    pub errors: &'a ErrorLog,
    /// The show's seed (`--seed`): a new layer's random choices start from
    /// it, so one seed gives identical frames and another a different show.
    pub seed: u64,
    /// What the simulations share this frame (bodies the water meets).
    pub world: &'a crate::engine::world::World,
}

/// The per-frame inputs of a layer's draw.
pub struct LayerFrame<'a> {
    /// Parameter values (smoothed).
    pub registry: &'a Registry,
    /// Time and beat.
    pub clock: &'a Clock,
    /// The frame uniform block (`shaders/common/frame.wgsl`).
    pub frame_uniforms: &'a wgpu::Buffer,
    /// Where to draw: the layer's HDR target this frame.
    pub target: &'a wgpu::TextureView,
    /// The textures it may bind by name: `below` (the composite of the
    /// layers beneath), `previous` (this target last frame), `layer:ID`.
    pub inputs: TextureInputs<'a>,
    /// Target size in pixels.
    pub size: [u32; 2],
    /// The depth the layers in the shared scene (`<id>.in_scene`) draw
    /// into, in stack order; cleared at the frame's start.
    pub scene_depth: &'a wgpu::TextureView,
}

/// One simulation or effect in the show.
pub trait Layer {
    /// The id from the preset, e.g. `shader.sky`; parameters are
    /// `<id>.<name>`.
    fn id(&self) -> &str;

    /// The kind it was built from, so a layer that fails can be built
    /// again without a list of kinds.
    fn kind(&self) -> &'static LayerKind;

    /// Its `enabled`, `opacity` and `blend`, which the renderer and the
    /// compositor read.
    fn switches(&self) -> &LayerSwitches;

    /// The layer's own parameters (enabled, opacity and blend are added by
    /// the show). Called after every `update`, so a layer may change them.
    fn params(&self) -> Vec<ParamSpec>;

    /// Reads what decides the layer's parameters (a shader layer's file
    /// and its header, a skinned layer's model and its clips) while its
    /// preset is staged, before the frame that
    /// puts it on stage prepares it once, or starts reading it off the
    /// frame thread (see [`Layer::settled`]). Returns true when
    /// [`Layer::params`] changed. Most kinds declare theirs up front.
    fn declare(&mut self, _env: &LayerEnv<'_>, _registry: &Registry, _clock: &Clock) -> bool {
        false
    }

    /// While its preset is staged (`registry` the staged values): takes in
    /// what [`Layer::declare`] started off the frame thread, and says
    /// whether all of it is in (the preset comes on stage once every
    /// layer's is, the running one playing meanwhile).
    fn settled(&mut self, _env: &LayerEnv<'_>, _registry: &Registry, _clock: &Clock) -> bool {
        true
    }

    /// The CPU work of a frame, before anything is recorded: react to
    /// parameter changes, rebuild pipelines or buffers (sized for a target
    /// of `size` pixels), load files, and upload this frame's uniforms,
    /// with the frame's `clock` (time and dt). Problems go to
    /// `env.errors`; the layer keeps its last good state. Returns true
    /// when [`Layer::params`] changed.
    fn prepare(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> bool;

    /// Records this frame's passes, and only that (the CPU work and the
    /// uploads happened in [`Layer::prepare`], so this borrows the layer
    /// unchanged, as bevy's `run(&self)` after `update`). Every pass is
    /// labelled with the layer id and timed through `profiler`.
    fn encode(
        &self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    );

    /// Records what the layer casts into the scene's shadow map
    /// (`env.world.shadow`, through `ShadowMap::cast_pass`, drawn with its
    /// camera's `CameraUniform::from_light`), before any layer of the
    /// frame draws. A layer outside the scene, or that casts nothing,
    /// records nothing.
    fn cast_shadow(
        &self,
        _env: &LayerEnv<'_>,
        _registry: &Registry,
        _encoder: &mut wgpu::CommandEncoder,
        _profiler: &mut GpuProfiler,
    ) {
    }

    /// Restarts the layer's simulation from `seed`.
    fn reseed(&mut self, seed: u64);

    /// Texture sources the layer reads that none of its parameters name
    /// (a Shadertoy pass's `// @channel0 media/tex.png` line): the media
    /// shelf opens only what it is told of, and would leave these black.
    fn sources(&self) -> &[String] {
        &[]
    }

    /// Figures the bench prints after a run (node counts, bytes per step).
    /// May wait for the GPU; never called while the show runs.
    fn report(&self, _gpu: &Gpu) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Figures a whole-frame bench samples after each of as many frames
    /// as it measured, played on after them (the fluid's live particles,
    /// substeps and density error), each averaged over the frames and its
    /// largest printed. Waits for the GPU; never called while the show
    /// runs.
    fn sampled(&self, _gpu: &Gpu) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Re-reads the layer's files if one of `changed` is among them, keeping
    /// the running version when the new one fails. Returns true when
    /// [`Layer::params`] changed.
    fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool;
}

/// Why a layer could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// The kind before the dot is not one this build has.
    #[error("unknown layer kind {kind:?} (known: {known})")]
    UnknownKind {
        /// The kind asked for.
        kind: String,
        /// The kinds there are, comma-separated.
        known: String,
    },
    /// The kind refused the layer (a shader file or a model that cannot be
    /// used); the kind's own error says why.
    #[error(transparent)]
    Kind(Box<dyn std::error::Error + Send + Sync>),
}

/// The kind of preset id `id` among `kinds` (`fluid.left` is a `fluid`).
pub fn kind_in(kinds: &[&'static LayerKind], id: &str) -> Result<&'static LayerKind, LayerError> {
    let name = id.split('.').next().unwrap_or(id);
    kinds
        .iter()
        .copied()
        .find(|k| k.name == name)
        .ok_or_else(|| LayerError::UnknownKind {
            kind: name.to_string(),
            known: kinds.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        })
}

/// Shows what a live reload of a layer's simulation kernels did: errors
/// under `<id> kernels` (the old kernels keep running), cleared once a
/// reload succeeds.
pub fn report_kernel_reload(env: &LayerEnv<'_>, id: &str, report: &KernelReload) {
    let origin = format!("{id} kernels");
    if !report.errors.is_empty() {
        env.errors.report(origin, report.errors.join("\n"));
    } else if report.rebuilt > 0 {
        env.errors.clear(&origin);
        tracing::info!("{id}: {} simulation kernels rebuilt live", report.rebuilt);
    }
}

/// Whether any of `changed` is a shader under one of `folders`
/// (`"colony/"`, `"common/"`): the layers' cue to rebuild their pipelines.
pub fn shaders_changed(changed: &[ChangedFile], folders: &[&str]) -> bool {
    changed.iter().any(|c| {
        c.folder == crate::base::Folder::Shaders && folders.iter().any(|f| c.name.starts_with(f))
    })
}

/// The parameters every layer has: `enabled`, `opacity`, `blend`.
pub fn common_params(id: &str) -> Vec<ParamSpec> {
    vec![
        ParamSpec::bool(format!("{id}.enabled"), true)
            .with_description("Draw and composite this layer"),
        ParamSpec::float(format!("{id}.opacity"), 1.0, 0.0, 1.0)
            .with_smoothing(0.05)
            .with_description("How strongly the layer is blended over the ones below"),
        ParamSpec::enumeration(format!("{id}.blend"), &BLEND_MODES, 0)
            .with_description("Blend mode on linear HDR values"),
    ]
}

/// The parameters every layer has ([`common_params`]), named once.
#[derive(Debug, Clone)]
pub struct LayerSwitches {
    enabled: Handle<bool>,
    opacity: Handle<f32>,
    blend: Handle<usize>,
}

impl LayerSwitches {
    /// The switches of layer `id`.
    pub fn new(id: &str) -> Self {
        Self {
            enabled: Handle::new(id, "enabled"),
            opacity: Handle::new(id, "opacity"),
            blend: Handle::new(id, "blend"),
        }
    }

    /// Whether the layer is drawn and composited.
    pub fn enabled(&self, registry: &Registry) -> bool {
        self.enabled.get(registry)
    }

    /// Its opacity and blend mode (an index into [`BLEND_MODES`]).
    pub fn blend(&self, registry: &Registry) -> (f32, usize) {
        (self.opacity.get(registry), self.blend.get(registry))
    }

    /// What in `specs` its handles do not find.
    pub fn check(&self, specs: &[ParamSpec]) -> Vec<String> {
        crate::check_handles!(specs; self.enabled, self.opacity, self.blend)
    }
}
