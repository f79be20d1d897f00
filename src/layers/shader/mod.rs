//! The `shader` layer: a performer's WGSL fragment shader drawn fullscreen,
//! the way ISF or Shadertoy shaders run. The file declares its parameters
//! in a comment header (see [`header`]); they become `<id>.<name>` in the
//! registry. The shader reads the frame block (`sylva`), its `params`, its
//! own previous frame and the composite below it. Several instances run
//! side by side as `shader.<name>`, each from `shaders/shader/<name>.wgsl`
//! unless `<id>.file` names another file.

pub mod header;
mod params_block;

use header::HeaderParam;
use params_block::ParamsBlock;

use super::{Layer, LayerEnv, LayerFrame};
use crate::gpu::bindings::{Slot, bind, layout, uniform_buffer};
use crate::gpu::{FullscreenPipeline, GpuProfiler, HDR_FORMAT, clear_view, wgsl};
use crate::params::{ParamSpec, Registry};
use crate::show::Folder;

/// Shared WGSL appended to every user shader, in order.
const PRELUDE: [&str; 4] = [
    "common/noise.wgsl",
    "common/frame.wgsl",
    "shader/prelude/inputs.wgsl",
    "common/fullscreen.wgsl",
];

/// The last version of the file that compiled.
struct Compiled {
    params: Vec<HeaderParam>,
    block: ParamsBlock,
    pipeline: FullscreenPipeline,
    params_buffer: wgpu::Buffer,
}

/// A fullscreen user shader.
pub struct ShaderLayer {
    id: String,
    default_file: String,
    tried_file: Option<String>,
    compiled: Option<Compiled>,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
}

impl ShaderLayer {
    /// A layer for id `shader` or `shader.<name>`; its file is loaded on the
    /// first update.
    pub fn new(id: &str, env: &LayerEnv<'_>) -> Self {
        let name = id.split_once('.').map_or("main", |(_, name)| name);
        let device = &env.gpu.device;
        Self {
            id: id.to_string(),
            default_file: format!("shader/{name}.wgsl"),
            tried_file: None,
            compiled: None,
            layout: layout(
                device,
                &format!("{id}.layout"),
                &[
                    Slot::Uniform,
                    Slot::Uniform,
                    Slot::Texture(true),
                    Slot::Texture(true),
                    Slot::Sampler,
                ],
            ),
            sampler: device.create_sampler(&wgpu::SamplerDescriptor {
                label: Some(&format!("{id}.sampler")),
                mag_filter: wgpu::FilterMode::Linear,
                min_filter: wgpu::FilterMode::Linear,
                ..Default::default()
            }),
        }
    }

    fn file_param(&self) -> String {
        format!("{}.file", self.id)
    }

    /// Reads, validates and compiles `file`; on success replaces the running
    /// version, on failure reports and keeps it.
    fn load(&mut self, env: &LayerEnv<'_>, file: &str) {
        match self.compile(env, file) {
            Ok(compiled) => {
                env.errors.clear(&self.id);
                self.compiled = Some(compiled);
            }
            Err(message) => env.errors.report(&self.id, message),
        }
    }

    fn compile(&self, env: &LayerEnv<'_>, file: &str) -> Result<Compiled, String> {
        let asset = env
            .assets
            .read(Folder::Shaders, file)
            .map_err(|e| e.to_string())?;
        let params = header::parse(&asset.text).map_err(|e| format!("{}:{e}", asset.display))?;
        let block = ParamsBlock::new(&params);
        let mut source = asset.text.clone();
        source.push('\n');
        source.push_str(&block.wgsl());
        for part in PRELUDE {
            let prelude = env
                .assets
                .read(Folder::Shaders, part)
                .map_err(|e| e.to_string())?;
            source.push_str(&prelude.text);
        }
        wgsl::validate(&source, &asset.display)?;
        let device = &env.gpu.device;
        let pipeline = FullscreenPipeline::new(device, &self.id, &source, &self.layout, HDR_FORMAT)
            .map_err(|e| format!("{}: {e}", asset.display))?;
        let params_buffer = uniform_buffer(
            device,
            &format!("{}.params", self.id),
            block.size() as usize,
        );
        Ok(Compiled {
            params,
            block,
            pipeline,
            params_buffer,
        })
    }
}

impl Layer for ShaderLayer {
    fn id(&self) -> &str {
        &self.id
    }

    fn params(&self) -> Vec<ParamSpec> {
        let file = ParamSpec::path(self.file_param(), self.default_file.clone())
            .with_description("WGSL file in the shaders folder");
        let declared = self.compiled.iter().flat_map(|c| &c.params).map(|p| {
            let mut spec = p.spec.clone();
            spec.name = format!("{}.{}", self.id, p.name);
            spec
        });
        std::iter::once(file).chain(declared).collect()
    }

    fn update(&mut self, env: &LayerEnv<'_>, registry: &Registry) -> bool {
        let file = registry
            .text(&self.file_param())
            .unwrap_or(&self.default_file)
            .to_string();
        if self.tried_file.as_deref() == Some(file.as_str()) {
            return false;
        }
        self.tried_file = Some(file.clone());
        let before = self.compiled.as_ref().map(|c| c.params.clone());
        self.load(env, &file);
        self.compiled.as_ref().map(|c| &c.params) != before.as_ref()
    }

    fn encode(
        &mut self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let Some(compiled) = &self.compiled else {
            clear_view(encoder, frame.target);
            return;
        };
        let bytes = compiled.block.bytes(&self.id, frame.registry);
        env.gpu
            .queue
            .write_buffer(&compiled.params_buffer, 0, &bytes);
        let bind_group = bind(
            env.gpu,
            &self.layout,
            &self.id,
            &[
                frame.frame_uniforms.as_entire_binding(),
                compiled.params_buffer.as_entire_binding(),
                wgpu::BindingResource::TextureView(frame.previous),
                wgpu::BindingResource::TextureView(frame.below),
                wgpu::BindingResource::Sampler(&self.sampler),
            ],
        );
        let timestamps = profiler.render_pass(&self.id);
        compiled
            .pipeline
            .draw(encoder, &self.id, frame.target, &bind_group, timestamps);
    }

    fn reseed(&mut self, _seed: u64) {
        // A shader has no state of its own beyond its feedback texture,
        // which the compositor clears; the seed reaches it through `sylva.seed`.
    }
}
