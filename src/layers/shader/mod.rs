//! The `shader` layer: a performer's WGSL fragment shader drawn fullscreen,
//! the way ISF or Shadertoy shaders run. The file declares its parameters
//! in a comment header (see [`header`]); they become `<id>.<name>` in the
//! registry. The shader reads the frame block (`sylva`), its `params`, its
//! own previous frame and the composite below it. Several instances run
//! side by side as `shader.<name>`, each from `shaders/shader/<name>.wgsl`
//! unless `<id>.file` names another file.

pub mod header;
pub mod isf;
mod params_block;
mod source;

pub use params_block::ParamsBlock;

pub use header::{HeaderError, HeaderParam};

use crate::base::clock::Clock;
use crate::base::latest::Latest;
use crate::base::{AssetError, Assets, ChangedFile, Folder};
use crate::engine::Preset;
use crate::engine::bodies::{self, BODIES_BYTES};
use crate::engine::camera::CameraUniform;
use crate::engine::world::SceneCamera;
use crate::engine::{
    BenchWorkload, Layer, LayerEnv, LayerError, LayerFrame, LayerKind, LayerSwitches,
};
use crate::gpu::bindings::{Slot, bind, layout, linear_sampler, uniform_buffer};
use crate::gpu::wgsl::{Composed, Composer, ShaderError};
use crate::gpu::{BuildError, FullscreenPipeline, GpuProfiler, HDR_FORMAT, clear_view};
use crate::params::{ParamSpec, Registry};
use glam::Mat4;
use isf::program::IsfProgram;
use isf::{IsfError, IsfSource};
use source::{CheckedSource, Chosen, Compile, read_source};

/// What every user shader gets after its own code: bindings, helpers and
/// the fullscreen vertex stage (which include the rest).
const PRELUDE: &str = "shader/prelude/inputs.wgsl";

/// Why a shader layer's file could not be used; the running version stays.
#[derive(Debug, thiserror::Error)]
pub enum ShaderLayerError {
    /// The file is missing or not allowed.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// A `// @param` line is malformed.
    #[error("{file}:{reason}")]
    Header {
        /// The file as shown.
        file: String,
        /// The line and what is wrong.
        reason: HeaderError,
    },
    /// An ISF file does not read or translate.
    #[error(transparent)]
    Isf(#[from] IsfError),
    /// The WGSL does not compose or validate.
    #[error(transparent)]
    Shader(#[from] ShaderError),
    /// The file has no fragment entry point to draw with.
    #[error("shaders/{file}: no `@fragment fn fs_main` (a shader layer draws with it)")]
    NoEntry {
        /// The file.
        file: String,
    },
    /// Reading or translating the file failed inside (a panic, caught).
    #[error("shaders/{file}: compiling this file failed")]
    Failed {
        /// The file.
        file: String,
    },
    /// The device refused the pipeline.
    #[error("shaders/{file}: {reason}")]
    Pipeline {
        /// The file.
        file: String,
        /// Why.
        reason: BuildError,
    },
}

/// A shader layer's file read and composed: its header's parameters, their
/// uniform block, and the full WGSL. `sylva check` validates the same.
pub struct LayerSource {
    /// Declared parameters.
    pub params: Vec<HeaderParam>,
    /// Their uniform layout.
    pub block: ParamsBlock,
    /// The file, the generated `Params` struct and the prelude.
    pub composed: Composed,
}

impl LayerSource {
    /// Reads `file` (relative to `shaders/`) and composes it.
    pub fn read(assets: &Assets, file: &str) -> Result<Self, ShaderLayerError> {
        let asset = assets.read(Folder::Shaders, file)?;
        let params = header::parse(&asset.text).map_err(|reason| ShaderLayerError::Header {
            file: asset.display.clone(),
            reason,
        })?;
        let block = ParamsBlock::new(&params);
        let generated = block.wgsl() + &texture_bindings(&params);
        let composed = Composer::new(assets)
            .file(file)?
            .generated(&format!("struct Params of shaders/{file}"), &generated)?
            .file(PRELUDE)?
            .finish()?;
        Ok(Self {
            params,
            block,
            composed,
        })
    }

    /// Validates the composed WGSL and checks that it has the fragment
    /// entry point `fs_main` the layer draws with.
    pub fn validate(&self) -> Result<naga::Module, ShaderLayerError> {
        let module = self.composed.validate()?;
        let has_entry = module
            .entry_points
            .iter()
            .any(|e| e.name == "fs_main" && e.stage == naga::ShaderStage::Fragment);
        if !has_entry {
            let file = self.composed.files().next().unwrap_or("shader");
            return Err(ShaderLayerError::NoEntry {
                file: file.to_string(),
            });
        }
        Ok(module)
    }

    /// The registry specs of the parameters for layer `id`.
    pub fn specs(&self, id: &str) -> Vec<ParamSpec> {
        Self::specs_of(&self.params, id)
    }

    fn specs_of(params: &[HeaderParam], id: &str) -> Vec<ParamSpec> {
        let mut specs = Vec::new();
        for p in params {
            let mut spec = p.spec.clone();
            spec.name = format!("{id}.{}", p.name);
            let clip = format!("{}_", spec.name);
            specs.push(spec);
            if p.is_texture() {
                specs.extend(clip_controls(&clip));
            }
        }
        specs
    }
}

/// The controls of a clip a texture input shows, named `<prefix>speed`,
/// `<prefix>loop` and `<prefix>position` ([`header::CLIP_CONTROLS`]).
fn clip_controls(prefix: &str) -> [ParamSpec; 3] {
    [
        ParamSpec::float(format!("{prefix}speed"), 1.0, 0.0, 4.0)
            .with_smoothing(0.1)
            .with_description("Playback speed of the clip: 1 is its own rate, 0 pauses"),
        ParamSpec::bool(format!("{prefix}loop"), true)
            .with_description("Loop the clip, else hold its last frame"),
        ParamSpec::float(format!("{prefix}position"), 0.0, 0.0, 1.0)
            .with_description("Write to jump in the clip (0 start, 1 end)"),
    ]
}

/// The texture inputs' bindings (group 1, in declaration order) and a
/// `sample_NAME(uv)` for each.
fn texture_bindings(params: &[HeaderParam]) -> String {
    let mut text = String::new();
    for (binding, p) in params.iter().filter(|p| p.is_texture()).enumerate() {
        let name = &p.name;
        text.push_str(&format!(
            "@group(1) @binding({binding}) var {name}: texture_2d<f32>;\n\
             fn sample_{name}(uv: vec2<f32>) -> vec4<f32> {{\n\
             \x20   return textureSampleLevel({name}, linear_sampler, uv, 0.0);\n}}\n"
        ));
    }
    text
}

/// The `file` parameter of layer `id`, naming its WGSL file.
pub fn file_param(id: &str) -> ParamSpec {
    let name = id.split_once('.').map_or("main", |(_, name)| name);
    ParamSpec::path(format!("{id}.file"), format!("shader/{name}.wgsl"))
        .with_description("WGSL file in the shaders folder")
}

/// The last version of the file that compiled: WGSL with a header, or ISF.
enum Program {
    Wgsl(Compiled),
    Isf(Box<IsfProgram>),
}

impl Program {
    /// The layer's parameters it declares.
    fn specs(&self) -> &[ParamSpec] {
        match self {
            Program::Wgsl(compiled) => &compiled.specs,
            Program::Isf(isf) => &isf.specs,
        }
    }
}

/// A WGSL file compiled.
struct Compiled {
    specs: Vec<ParamSpec>,
    /// The full names of the params block's fields, in its order.
    fields: Vec<String>,
    /// The full names of the texture inputs, in binding order, and their
    /// bind group's layout.
    textures: Vec<String>,
    textures_layout: Option<wgpu::BindGroupLayout>,
    block: ParamsBlock,
    pipeline: FullscreenPipeline,
    params_buffer: wgpu::Buffer,
}

/// A fullscreen user shader.
pub struct ShaderLayer {
    id: String,
    switches: LayerSwitches,
    /// Its `file` parameter, named once.
    file: ParamSpec,
    tried_file: Option<String>,
    watched: Vec<String>,
    program: Option<Program>,
    /// Compiles a file (with its compiled-in inputs' values) while the
    /// running program plays.
    compiler: Latest<(String, Chosen), Compile>,
    /// The values the running ISF program's compiled-in inputs were last
    /// asked at.
    chosen: Chosen,
    /// While the newest program has not prepared a frame: the one it
    /// replaced, which comes back if that frame refuses it (pass buffers
    /// too large).
    trial: Option<Option<Program>>,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    /// The shared scene's camera and bodies, for the prelude's `scene` and
    /// `scene_bodies`.
    scene: (SceneCamera, wgpu::Buffer, wgpu::Buffer),
}

impl ShaderLayer {
    /// A layer for id `shader` or `shader.<name>`; its file is loaded on the
    /// first update.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        let device = &env.gpu.device;
        let (assets, layer) = (env.assets.clone(), id.to_string());
        Self {
            id: id.to_string(),
            switches: LayerSwitches::new(id),
            file: file_param(id),
            tried_file: None,
            watched: Vec::new(),
            program: None,
            compiler: Latest::new(
                &format!("{id} compile"),
                move |(file, chosen): &(String, Chosen)| read_source(&assets, file, &layer, chosen),
            ),
            chosen: Vec::new(),
            trial: None,
            layout: layout(
                device,
                &format!("{id}.layout"),
                &[
                    Slot::Uniform,
                    Slot::Uniform,
                    Slot::Texture(true),
                    Slot::Texture(true),
                    Slot::Sampler,
                    Slot::Uniform,
                    Slot::Uniform,
                    Slot::DepthTexture,
                    Slot::ComparisonSampler,
                ],
            ),
            sampler: linear_sampler(device, &format!("{id}.sampler")),
            scene: (
                SceneCamera::default(),
                uniform_buffer(device, &format!("{id}.scene"), size_of::<CameraUniform>()),
                uniform_buffer(device, &format!("{id}.scene_bodies"), BODIES_BYTES as usize),
            ),
        }
    }

    /// Moves to `file` on the compile thread, while the running program
    /// (if any) plays on; the program comes in with the frame that finds
    /// it compiled, or, for a preset being staged, with [`Layer::settled`].
    fn switch_to(&mut self, file: &str) {
        self.tried_file = Some(file.to_string());
        self.compiler
            .request((file.to_string(), self.chosen.clone()));
    }

    /// Installs what the compile thread finished since the last look.
    /// Returns whether the declared parameters changed.
    fn collect(&mut self, env: &LayerEnv<'_>) -> bool {
        let Some(done) = self.compiler.poll() else {
            return false;
        };
        let (file, _) = done.request;
        let (watched, source) = done.result.unwrap_or_else(|| {
            let failed = ShaderLayerError::Failed { file: file.clone() };
            (vec![file.clone()], Err(failed))
        });
        self.install(env, &file, watched, source)
    }

    /// Builds `source` (read from `file`) on the GPU; on success replaces
    /// the running version, on failure reports and keeps it. Returns
    /// whether the declared parameters changed.
    fn install(
        &mut self,
        env: &LayerEnv<'_>,
        file: &str,
        watched: Vec<String>,
        source: Result<CheckedSource, ShaderLayerError>,
    ) -> bool {
        let started = std::time::Instant::now();
        self.watched = watched;
        let before = self.program.as_ref().map(|p| p.specs().to_vec());
        match source.and_then(|source| self.build(env, file, source)) {
            Ok(program) => {
                env.errors.clear(&self.id);
                let replaced = self.program.replace(program);
                // A program still on trial was never good: the one before
                // it stays the one to come back to.
                if self.trial.is_none() {
                    self.trial = Some(replaced);
                }
                tracing::info!(
                    "{}: loaded shaders/{file}, built in {:.1} ms",
                    self.id,
                    started.elapsed().as_secs_f64() * 1e3
                );
            }
            Err(message) => env.errors.report(&self.id, message),
        }
        self.program.as_ref().map(|p| p.specs().to_vec()) != before
    }

    /// Builds a read source's pipelines and buffers.
    fn build(
        &self,
        env: &LayerEnv<'_>,
        file: &str,
        source: CheckedSource,
    ) -> Result<Program, ShaderLayerError> {
        let source = match source {
            CheckedSource::Isf(source) => {
                let program =
                    (env.gpu).scoped(&self.id, || IsfProgram::build(env, &self.id, *source))?;
                return Ok(Program::Isf(Box::new(program)));
            }
            CheckedSource::Wgsl(source) => source,
        };
        let LayerSource {
            params,
            block,
            composed,
        } = source;
        let device = &env.gpu.device;
        let full = |p: &HeaderParam| format!("{}.{}", self.id, p.name);
        let (textures, fields): (Vec<&HeaderParam>, Vec<&HeaderParam>) =
            params.iter().partition(|p| p.is_texture());
        let textures_layout = (!textures.is_empty()).then(|| {
            let slots: Vec<Slot> = textures.iter().map(|_| Slot::Texture(true)).collect();
            layout(device, &format!("{}.textures", self.id), &slots)
        });
        let layouts: Vec<&wgpu::BindGroupLayout> = std::iter::once(&self.layout)
            .chain(&textures_layout)
            .collect();
        let pipeline = FullscreenPipeline::with_groups(
            device,
            &self.id,
            composed.text(),
            &layouts,
            HDR_FORMAT,
            "fs_main",
        )
        .map_err(|reason| ShaderLayerError::Pipeline {
            file: file.to_string(),
            reason,
        })?;
        let (textures, fields) = (
            textures.into_iter().map(full).collect(),
            fields.into_iter().map(full).collect(),
        );
        let params_buffer = uniform_buffer(
            device,
            &format!("{}.params", self.id),
            block.size() as usize,
        );
        Ok(Program::Wgsl(Compiled {
            specs: LayerSource::specs_of(&params, &self.id),
            fields,
            textures,
            textures_layout,
            block,
            pipeline,
            params_buffer,
        }))
    }
}

impl ShaderLayer {
    /// Uploads this frame's uniforms of the running program (and sizes an
    /// ISF program's pass buffers, which may be refused).
    fn prepare_program(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> Result<(), IsfError> {
        let compiled = match &mut self.program {
            Some(Program::Isf(isf)) => return isf.prepare(env, registry, clock, size),
            Some(Program::Wgsl(compiled)) => compiled,
            None => return Ok(()),
        };
        // The scene as the prelude's `scene` and `scene_bodies` see it
        // (ISF programs have no such bindings).
        let (camera, camera_buffer, bodies_buffer) = &self.scene;
        // The scene's shadow map, made before the frame's casters record.
        env.world.shadow(env.gpu);
        let look = camera.look(registry, clock, size);
        (env.gpu.queue).write_buffer(camera_buffer, 0, bytemuck::bytes_of(&look));
        let seen = env.world.bodies();
        let standing = bodies::block(&seen, Mat4::IDENTITY, false, 0.0, 0.0, 0, false);
        (env.gpu.queue).write_buffer(bodies_buffer, 0, &standing);
        let names = compiled.fields.iter().map(String::as_str);
        let bytes = compiled.block.bytes(names, registry);
        (env.gpu.queue).write_buffer(&compiled.params_buffer, 0, &bytes);
        Ok(())
    }
}

impl Layer for ShaderLayer {
    fn kind(&self) -> &'static LayerKind {
        &KIND
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn switches(&self) -> &LayerSwitches {
        &self.switches
    }

    fn params(&self) -> Vec<ParamSpec> {
        let declared = self.program.iter().flat_map(|p| p.specs().iter().cloned());
        std::iter::once(self.file.clone()).chain(declared).collect()
    }

    fn declare(&mut self, _env: &LayerEnv<'_>, registry: &Registry, _clock: &Clock) -> bool {
        let file = registry
            .text(&self.file.name)
            .or(self.file.default.as_text())
            .unwrap_or_default()
            .to_string();
        if self.tried_file.as_deref() != Some(file.as_str()) {
            self.chosen.clear();
            self.switch_to(&file);
        } else {
            self.compile_in_changes(registry);
        }
        false
    }

    fn settled(&mut self, env: &LayerEnv<'_>, _registry: &Registry, _clock: &Clock) -> bool {
        self.collect(env);
        !self.compiler.pending()
    }

    fn prepare(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> bool {
        // What the compile thread finished since the last frame (a file
        // asked for below comes back on a later frame at the earliest).
        let mut changed = self.collect(env);
        changed |= self.declare(env, registry, clock);
        if env.world.exact() {
            changed |= self.wait_for_compile(env);
        }
        let Err(refused) = self.prepare_program(env, registry, clock, size) else {
            self.trial = None;
            return changed;
        };
        env.errors.report(&self.id, refused);
        let Some(previous) = self.trial.take() else {
            return changed;
        };
        // A new program its first frame refuses: the last good one plays on.
        self.program = previous;
        if let Err(again) = self.prepare_program(env, registry, clock, size) {
            env.errors.report(&self.id, again);
        }
        true
    }

    fn reload(&mut self, _env: &LayerEnv<'_>, changed: &[ChangedFile]) -> bool {
        let touched = changed
            .iter()
            .any(|c| c.folder == Folder::Shaders && self.watched.contains(&c.name));
        if let (Some(file), true) = (self.tried_file.clone(), touched) {
            self.switch_to(&file);
        }
        false
    }

    fn encode(
        &self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let compiled = match &self.program {
            Some(Program::Wgsl(compiled)) => compiled,
            Some(Program::Isf(isf)) => return isf.encode(env, frame, encoder, profiler),
            None => {
                clear_view(encoder, frame.target);
                return;
            }
        };
        let shadow = env.world.shadow(env.gpu);
        let bind_group = bind(
            env.gpu,
            &self.layout,
            &self.id,
            &[
                frame.frame_uniforms.as_entire_binding(),
                compiled.params_buffer.as_entire_binding(),
                wgpu::BindingResource::TextureView(frame.inputs.previous()),
                wgpu::BindingResource::TextureView(frame.inputs.below()),
                wgpu::BindingResource::Sampler(&self.sampler),
                self.scene.1.as_entire_binding(),
                self.scene.2.as_entire_binding(),
                wgpu::BindingResource::TextureView(shadow.view()),
                wgpu::BindingResource::Sampler(shadow.sampler()),
            ],
        );
        let textures = compiled.textures_layout.as_ref().map(|layout| {
            let views: Vec<wgpu::BindingResource<'_>> = (compiled.textures.iter())
                .map(|name| {
                    let source = frame.registry.text(name).unwrap_or_default();
                    wgpu::BindingResource::TextureView(frame.inputs.get_or_black(source))
                })
                .collect();
            bind(env.gpu, layout, &format!("{}.textures", self.id), &views)
        });
        let groups: Vec<&wgpu::BindGroup> = std::iter::once(&bind_group).chain(&textures).collect();
        let timestamps = profiler.render_pass(&self.id);
        (compiled.pipeline).draw_groups(encoder, &self.id, frame.target, &groups, timestamps);
    }

    fn reseed(&mut self, _seed: u64) {
        // A shader has no state of its own beyond its feedback texture,
        // which the compositor clears; the seed reaches it through `sylva.seed`.
    }

    fn sources(&self) -> &[String] {
        match &self.program {
            Some(Program::Isf(isf)) => &isf.sources,
            _ => &[],
        }
    }
}

/// The shader kind: a user's WGSL fragment shader, fullscreen.
pub const KIND: LayerKind = LayerKind {
    name: "shader",
    create: |id, env| Box::new(ShaderLayer::new(id, env)),
    params: declared_params,
    bench: |size| BenchWorkload {
        resolution: [(size * 16).div_ceil(9), size],
        unit: "pixels high (16:9)",
        groups: Vec::new(),
        settings: Vec::new(),
    },
    layouts: &[],
};

/// The parameters layer `id` of `preset` declares: its file and the
/// parameters that file's header declares.
fn declared_params(
    id: &str,
    assets: &Assets,
    preset: &Preset,
) -> Result<Vec<ParamSpec>, LayerError> {
    let file_param = file_param(id);
    let file = preset
        .params
        .iter()
        .find(|p| p.name == file_param.name)
        .and_then(|p| p.value.as_str().map(str::to_string))
        .unwrap_or_else(|| file_param.default.as_text().unwrap_or_default().to_string());
    let mut specs = vec![file_param];
    if isf::is_isf(&file) {
        let source = IsfSource::read(assets, &file, id, &[]).map_err(ShaderLayerError::from)?;
        specs.extend(source.specs);
    } else {
        specs.extend(LayerSource::read(assets, &file)?.specs(id));
    }
    Ok(specs)
}

impl From<ShaderLayerError> for LayerError {
    fn from(error: ShaderLayerError) -> Self {
        LayerError::Kind(Box::new(error))
    }
}
