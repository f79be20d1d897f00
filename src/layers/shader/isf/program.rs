//! An ISF shader on the GPU: one pipeline per pass (the pass's buffer
//! format), a uniform buffer per pass (`PASSINDEX` and `RENDERSIZE`
//! differ), pass buffers made at the sizes their expressions give, two
//! each so a pass may read the buffer it writes (persistent feedback),
//! imported images, and the sound analysis as an image. `prepare` sizes
//! the buffers, plans which copy each pass reads and writes, and uploads
//! the uniforms; `encode` encodes the pictures the passes read into
//! display space ([`super::display_space`]), binds and draws, writing
//! only what is known once the textures are bound: a Shadertoy pass's
//! `iChannelResolution`.

use std::collections::HashMap;

use super::display_space::DisplaySpace;
use super::generators::GeneratorState;
use super::glsl::Member;
use super::header::{InputKind, IsfHeader, IsfPass};
use super::size;
use super::{IsfError, IsfSource};
use crate::base::clock::Clock;
use crate::engine::inputs::{keyboard::KEYBOARD, sound::SOUND};
use crate::engine::{LayerEnv, LayerFrame};
use crate::gpu::bindings::{Slot, layout_for, linear_sampler};
use crate::gpu::image::{image_texture, write_image};
use crate::gpu::{FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};
use crate::params::{ParamSpec, Registry, Value};

/// Bytes all of one shader's pass buffers may take, both copies of each:
/// three float buffers at 4K fit; three at 8192² (3.2 GB, 0.1 fps on a
/// software adapter) do not.
pub const MAX_PASS_BYTES: u64 = 512 << 20;

/// A pass buffer: two copies, the one last written is `current`.
struct PassBuffer {
    copies: [RenderTarget; 2],
    current: usize,
}

/// What one pass reads and writes this frame.
#[derive(Default, Clone)]
struct PassPlan {
    /// The copy of each pass buffer it reads, by name.
    reads: HashMap<String, usize>,
    /// The copy of its own buffer it writes (none: the layer's output).
    writes: Option<usize>,
}

/// A compiled ISF shader.
pub struct IsfProgram {
    id: String,
    /// The `.fs` or `.glsl` file as shown, for errors.
    file: String,
    header: IsfHeader,
    /// The layer's parameters, full names.
    pub specs: Vec<ParamSpec>,
    /// Each input's parameter name (`shader.fx.amount`), named once.
    params: HashMap<String, String>,
    /// What the passes' channel lines name beyond the pass buffers
    /// (`media/…`, `camera`): no parameter names these for the media shelf.
    pub sources: Vec<String>,
    uniforms: Vec<(String, u32, Member)>,
    uniform_size: u32,
    textures: Vec<String>,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    pipelines: Vec<FullscreenPipeline>,
    pass_uniforms: Vec<wgpu::Buffer>,
    imported: HashMap<String, wgpu::TextureView>,
    display: DisplaySpace,
    buffers: HashMap<String, PassBuffer>,
    plans: Vec<PassPlan>,
    events: HashMap<String, bool>,
    frames: u32,
    /// What each of MadMapper's generators keeps, in the header's order.
    generated: Vec<GeneratorState>,
}

impl IsfProgram {
    /// Its inputs compiled in as macros (MadMapper's `generate_as_define`)
    /// whose values in `registry` are off their defaults, by input name:
    /// what to compile it at, again where they moved.
    pub fn chosen(&self, registry: &Registry) -> Vec<(String, Value)> {
        let compiled =
            (self.header.inputs.iter()).filter(|i| self.header.compiled_in.contains(&i.name));
        compiled
            .filter_map(|input| {
                let value = registry.get(self.params.get(&input.name)?)?;
                (*value != input.spec.default).then(|| (input.name.clone(), value.clone()))
            })
            .collect()
    }

    /// Builds `source` on the GPU for layer `id`.
    pub fn build(env: &LayerEnv<'_>, id: &str, source: IsfSource) -> Result<Self, IsfError> {
        let gpu = env.gpu;
        let device = &gpu.device;
        let translated = source.translated;
        let mut slots = vec![Slot::Uniform, Slot::Sampler];
        slots.extend(translated.textures.iter().map(|_| Slot::Texture(true)));
        // Compute too: a pass runs as compute where it can (`compute.rs`).
        let stages = wgpu::ShaderStages::VERTEX_FRAGMENT | wgpu::ShaderStages::COMPUTE;
        let layout = layout_for(device, &format!("{id}.isf"), stages, &slots);
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = |stage: &str, text: &str| {
            device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&format!("{id} {stage}")),
                source: wgpu::ShaderSource::Wgsl(text.into()),
            })
        };
        let vertex = module("vertex", &translated.vertex);
        let fragments: Vec<wgpu::ShaderModule> = (translated.fragments.iter())
            .enumerate()
            .map(|(i, text)| module(&format!("pass {i}"), text))
            .collect();
        let header = source.header;
        let pipelines: Vec<FullscreenPipeline> = (header.passes.iter())
            .enumerate()
            .filter_map(|(i, pass)| {
                let fragment = fragments.get(i).or(fragments.first())?;
                let text = (translated.fragments.get(i)).or(translated.fragments.first())?;
                let format = match (&pass.target, pass.float) {
                    (None, _) => HDR_FORMAT,
                    (Some(_), true) => wgpu::TextureFormat::Rgba16Float,
                    (Some(_), false) => wgpu::TextureFormat::Rgba8Unorm,
                };
                let computed = (translated.builtin_vertex)
                    .then(|| super::compute::compute_form(text, format, 1))
                    .flatten();
                let layouts = [&layout];
                let pipeline = FullscreenPipeline::from_stages(
                    device, id, &layouts, &vertex, "main", fragment, "main", format,
                );
                let pipeline = pipeline.computed_by(device, id, &layouts, format, computed);
                let how = if pipeline.computes() {
                    "compute"
                } else {
                    "a fragment pass"
                };
                tracing::debug!("{id}: pass {i} runs as {how}");
                Some(pipeline)
            })
            .collect();
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(IsfError::Device(source.file, error.to_string()));
        }
        let pass_uniforms = (0..header.passes.len())
            .map(|i| {
                crate::gpu::bindings::uniform_buffer(
                    device,
                    &format!("{id}.isf.pass{i}"),
                    translated.uniform_size as usize,
                )
            })
            .collect();
        // Imported images reach the file as stored: display-encoded.
        let imported = (source.imported.into_iter())
            .map(|(name, picture)| {
                let stored = wgpu::TextureFormat::Rgba8Unorm;
                let (texture, view) =
                    image_texture(gpu, &format!("{id}.{name}"), picture.size, stored);
                write_image(gpu, &texture, &picture.rgba);
                (name, view)
            })
            .collect();
        let params = (header.inputs.iter())
            .map(|input| (input.name.clone(), format!("{id}.{}", input.name)))
            .collect();
        let display = DisplaySpace::new(gpu, env.assets, id)
            .map_err(|e| IsfError::Device(source.file.clone(), e.to_string()))?;
        Ok(Self {
            id: id.to_string(),
            file: source.file,
            params,
            sources: channel_sources(&header),
            specs: source.specs,
            uniforms: translated.uniforms,
            uniform_size: translated.uniform_size,
            textures: translated.textures,
            layout,
            sampler: linear_sampler(device, &format!("{id}.isf.sampler")),
            pipelines,
            pass_uniforms,
            imported,
            display,
            buffers: HashMap::new(),
            plans: Vec::new(),
            events: HashMap::new(),
            generated: vec![GeneratorState::default(); header.generators.len()],
            header,
            frames: 0,
        })
    }

    /// Sizes the pass buffers for a render of `size`, plans the passes and
    /// uploads their uniforms. Buffers that would pass [`MAX_PASS_BYTES`]
    /// or that the device refuses are not made: the passes run at the sizes
    /// their buffers have, and the error comes back.
    pub fn prepare(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        size: [u32; 2],
    ) -> Result<(), IsfError> {
        let mut sizes = self.pass_sizes(env, registry, size);
        let made = self.ensure_buffers(env.gpu, &sizes);
        // A pass draws at its buffer's size, whatever its expression says
        // (another pass drawing into it first, or a size refused).
        for (pass, pass_size) in self.header.passes.iter().zip(sizes.iter_mut()) {
            if let Some(buffer) = pass.target.as_ref().and_then(|t| self.buffers.get(t)) {
                let t = &buffer.copies[0].texture;
                *pass_size = [t.width(), t.height()];
            }
        }
        self.plan();
        self.write_uniforms(env.gpu, registry, clock, &sizes);
        self.frames = self.frames.wrapping_add(1);
        made
    }

    /// Makes each pass buffer at the size of the first pass drawing into
    /// it, all of them within [`MAX_PASS_BYTES`] (counted before any is
    /// made) and inside an error scope.
    fn ensure_buffers(&mut self, gpu: &Gpu, sizes: &[[u32; 2]]) -> Result<(), IsfError> {
        let most = gpu.device.limits().max_texture_dimension_2d;
        let mut wanted: Vec<(&str, [u32; 2], bool)> = Vec::new();
        for (pass, size) in self.header.passes.iter().zip(sizes) {
            if let Some(target) = &pass.target
                && !wanted.iter().any(|(name, ..)| name == target)
            {
                wanted.push((target, size.map(|s| s.clamp(1, most)), pass.float));
            }
        }
        let bytes: u64 = (wanted.iter())
            .map(|(_, [w, h], float)| {
                2 * u64::from(*w) * u64::from(*h) * if *float { 8 } else { 4 }
            })
            .sum();
        if bytes > MAX_PASS_BYTES {
            return Err(IsfError::PassBuffers {
                file: self.file.clone(),
                mib: bytes.div_ceil(1 << 20),
            });
        }
        let mut made = Vec::new();
        for (name, size, float) in wanted {
            let fits = self.buffers.get(name).is_some_and(|b| {
                let t = &b.copies[0].texture;
                [t.width(), t.height()] == size
            });
            if !fits {
                made.push((name.to_string(), self.make_buffer(gpu, name, size, float)?));
            }
        }
        self.buffers.extend(made);
        Ok(())
    }

    /// Each pass's size for a render of `size` (the render's where its
    /// expression fails, which is reported).
    fn pass_sizes(&self, env: &LayerEnv<'_>, registry: &Registry, size: [u32; 2]) -> Vec<[u32; 2]> {
        let value = |name: &str| registry.get(self.params.get(name)?);
        let lookup = |name: &str| match name {
            "WIDTH" => Some(f64::from(size[0])),
            "HEIGHT" => Some(f64::from(size[1])),
            _ => value(name).and_then(Value::as_f32).map(f64::from),
        };
        let mut sizes = Vec::with_capacity(self.header.passes.len());
        for pass in &self.header.passes {
            let side = |e: &Option<String>, render| size::side(e.as_deref(), render, &lookup);
            let pass_size = match (side(&pass.width, size[0]), side(&pass.height, size[1])) {
                (Ok(w), Ok(h)) => [w, h],
                (Err(why), _) | (_, Err(why)) => {
                    env.errors.report(&self.id, why);
                    size
                }
            };
            sizes.push(pass_size);
        }
        sizes
    }

    /// Buffer `name` at `size`, made inside an error scope, so one the
    /// device cannot hold is an error and no buffer.
    fn make_buffer(
        &self,
        gpu: &Gpu,
        name: &str,
        size: [u32; 2],
        float: bool,
    ) -> Result<PassBuffer, IsfError> {
        let format = if float {
            wgpu::TextureFormat::Rgba16Float
        } else {
            wgpu::TextureFormat::Rgba8Unorm
        };
        let label = format!("{}.{name}", self.id);
        let copy = |i: usize| RenderTarget::new(&gpu.device, &format!("{label}{i}"), size, format);
        gpu.scoped(&label, || {
            Ok(PassBuffer {
                copies: [copy(0), copy(1)],
                current: 0,
            })
        })
    }

    /// Which copy each pass reads and writes: a pass writes the copy its
    /// buffer did not last write, and later passes read what it wrote.
    fn plan(&mut self) {
        self.plans.clear();
        for pass in &self.header.passes {
            let reads = (self.buffers.iter())
                .map(|(name, b)| (name.clone(), b.current))
                .collect();
            let writes = pass.target.as_ref().and_then(|t| {
                let buffer = self.buffers.get_mut(t)?;
                buffer.current = 1 - buffer.current;
                Some(buffer.current)
            });
            self.plans.push(PassPlan { reads, writes });
        }
    }

    /// Each pass's uniform block: the ISF built-ins and the inputs.
    fn write_uniforms(
        &mut self,
        gpu: &Gpu,
        registry: &Registry,
        clock: &Clock,
        sizes: &[[u32; 2]],
    ) {
        let now = chrono::Local::now();
        let render = sizes.last().copied().unwrap_or([1, 1]).map(|s| s as f32);
        let mouse = match registry.get("master.pointer") {
            Some(Value::Vec3([x, y, pressed])) => {
                let at = [x * render[0], (1.0 - y) * render[1]];
                let sign = if *pressed > 0.5 { 1.0 } else { -1.0 };
                [at[0], at[1], sign * at[0], sign * at[1]]
            }
            _ => [0.0; 4],
        };
        let floats = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        let date = {
            use chrono::{Datelike, Timelike};
            let seconds =
                f64::from(now.num_seconds_from_midnight()) + f64::from(now.nanosecond()) * 1e-9;
            [
                now.year() as f32,
                now.month() as f32,
                now.day() as f32,
                seconds as f32,
            ]
        };
        let mut fired = HashMap::new();
        let mut inputs: HashMap<&str, Vec<f32>> = HashMap::new();
        // Each input's value as one number, by its name, and each
        // generator's after it: what the generators read.
        let mut numbers: HashMap<&str, f32> = HashMap::new();
        for input in &self.header.inputs {
            let value = (self.params.get(&input.name)).and_then(|name| registry.get(name));
            let number = match (&input.kind, value) {
                (InputKind::Long(values), Some(Value::Enum(i))) => {
                    values.get(*i).copied().unwrap_or(0) as f32
                }
                _ => value.and_then(Value::as_f32).unwrap_or(0.0),
            };
            numbers.insert(&input.name, number);
            let words = match (&input.kind, value) {
                (InputKind::Event, _) => {
                    let on = number != 0.0;
                    let was = self.events.get(&input.name).copied().unwrap_or(false);
                    fired.insert(input.name.clone(), on);
                    vec![if on && !was { 1.0 } else { 0.0 }]
                }
                (InputKind::Long(_), _) => vec![f32::from_bits(number as i32 as u32)],
                (InputKind::Colour, Some(Value::Colour(c))) => c.to_vec(),
                (InputKind::Point, Some(Value::Vec3(v))) => v[..2].to_vec(),
                _ => vec![number],
            };
            let member = match input.kind {
                InputKind::Bool | InputKind::Event => format!("isf_flag_{}", input.name),
                _ => input.name.clone(),
            };
            inputs.insert(
                self.uniforms
                    .iter()
                    .find(|(n, _, _)| *n == member)
                    .map_or("", |(n, _, _)| n.as_str()),
                words,
            );
        }
        self.events = fired;
        for (generator, state) in self.header.generators.iter().zip(&mut self.generated) {
            let value = generator.advance(state, clock, |name| {
                numbers.get(name).copied().unwrap_or(0.0)
            });
            numbers.insert(&generator.name, value);
            inputs.insert(&generator.name, vec![value]);
        }
        for (index, (buffer, pass_size)) in self.pass_uniforms.iter().zip(sizes).enumerate() {
            let mut bytes = vec![0u8; self.uniform_size as usize];
            for (name, offset, member) in &self.uniforms {
                let words: Vec<u32> = match name.as_str() {
                    "TIME" => vec![(clock.time as f32).to_bits()],
                    "TIMEDELTA" => vec![clock.dt.to_bits()],
                    "FRAMEINDEX" => vec![self.frames],
                    "PASSINDEX" => vec![index as u32],
                    "RENDERSIZE" => vec![
                        (pass_size[0] as f32).to_bits(),
                        (pass_size[1] as f32).to_bits(),
                    ],
                    "DATE" | "iDate" => floats(&date),
                    "iTime" => vec![(clock.time as f32).to_bits()],
                    "iTimeDelta" => vec![clock.dt.to_bits()],
                    "iFrameRate" => vec![(1.0 / clock.dt.max(1e-6)).to_bits()],
                    "iFrame" => vec![self.frames],
                    // Shadertoy's mouse, unless an ISF port's own input.
                    "iMouse" if !inputs.contains_key("iMouse") => floats(&mouse),
                    "sylva_resolution" => {
                        floats(&[pass_size[0] as f32, pass_size[1] as f32, 1.0, 0.0])
                    }
                    other => match (inputs.get(other), member) {
                        (Some(words), Member::Int) => {
                            vec![words.first().map_or(0, |w| w.to_bits())]
                        }
                        (Some(words), _) => words.iter().map(|w| w.to_bits()).collect(),
                        (None, _) => Vec::new(),
                    },
                };
                for (i, word) in words.iter().enumerate() {
                    let at = *offset as usize + 4 * i;
                    if let Some(slot) = bytes.get_mut(at..at + 4) {
                        slot.copy_from_slice(&word.to_le_bytes());
                    }
                }
            }
            gpu.queue.write_buffer(buffer, 0, &bytes);
        }
    }

    /// Records every pass, the last into the layer's target.
    pub fn encode(
        &self,
        env: &LayerEnv<'_>,
        frame: &LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let pictures = self.pictures(frame);
        let encoded = (self.display).encode(env.gpu, &pictures, encoder, profiler);
        for (index, pass) in self.header.passes.iter().enumerate() {
            let (Some(plan), Some(pipeline), Some(uniforms)) = (
                self.plans.get(index),
                self.pipelines.get(index),
                self.pass_uniforms.get(index),
            ) else {
                return;
            };
            let mut entries = vec![
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniforms.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ];
            for (i, name) in self.textures.iter().enumerate() {
                entries.push(wgpu::BindGroupEntry {
                    binding: i as u32 + 2,
                    resource: wgpu::BindingResource::TextureView(
                        self.view(name, pass, plan, frame, &encoded),
                    ),
                });
            }
            self.write_channel_sizes(env.gpu, uniforms, pass, frame);
            let label = format!("{}.pass{index}", self.id);
            let group = env
                .gpu
                .device
                .create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(&label),
                    layout: &self.layout,
                    entries: &entries,
                });
            let target = match (&pass.target, plan.writes) {
                (Some(name), Some(copy)) => self.buffers.get(name).map(|b| &b.copies[copy].view),
                _ => Some(frame.target),
            };
            let Some(target) = target else {
                continue;
            };
            let timestamps = profiler.render_pass(&label);
            pipeline.draw(encoder, &label, target, &group, timestamps);
        }
    }

    /// What the texture called `name` shows in `pass`: what the pass's
    /// channel line names (a Shadertoy pass), what an image input's
    /// parameter names, else `name` itself (a pass buffer, an imported
    /// image, the sound).
    fn source<'a>(&'a self, name: &'a str, pass: &'a IsfPass, registry: &'a Registry) -> &'a str {
        let channel = name
            .strip_prefix("iChannel")
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| pass.channels.get(n)?.as_deref());
        if let Some(source) = channel {
            return source;
        }
        match self.header.inputs.iter().find(|i| i.name == name) {
            Some(input) if input.kind == InputKind::Image => registry
                .text(self.params.get(name).map_or("", String::as_str))
                .unwrap_or_default(),
            _ => name,
        }
    }

    /// Whether `source` is a picture the file sees display-encoded: not a
    /// pass buffer, an imported image or sound and keys, which are data.
    fn is_picture(&self, source: &str) -> bool {
        let audio = (self.header.inputs.iter())
            .any(|i| i.name == source && matches!(i.kind, InputKind::Audio { .. }));
        !(audio
            || self.buffers.contains_key(source)
            || self.imported.contains_key(source)
            || [KEYBOARD, SOUND].contains(&source))
    }

    /// Each picture some pass reads this frame, once: its source name,
    /// view and size.
    fn pictures<'a>(
        &'a self,
        frame: &LayerFrame<'a>,
    ) -> Vec<(&'a str, &'a wgpu::TextureView, [u32; 2])> {
        let mut pictures: Vec<(&str, &wgpu::TextureView, [u32; 2])> = Vec::new();
        for pass in &self.header.passes {
            for name in &self.textures {
                let source = self.source(name, pass, frame.registry);
                if self.is_picture(source) && !pictures.iter().any(|(p, _, _)| *p == source) {
                    let view = frame.inputs.get_or_black(source);
                    pictures.push((source, view, frame.inputs.size(source, frame.size)));
                }
            }
        }
        pictures
    }

    /// The texture called `name` for `pass`, planned as `plan`: a pass
    /// buffer, an imported image, the sound, or a texture input (its copy
    /// in display space, `encoded`).
    fn view<'a>(
        &'a self,
        name: &str,
        pass: &IsfPass,
        plan: &PassPlan,
        frame: &LayerFrame<'a>,
        encoded: &'a HashMap<String, wgpu::TextureView>,
    ) -> &'a wgpu::TextureView {
        let source = self.source(name, pass, frame.registry);
        if let Some(view) = encoded.get(source) {
            return view;
        }
        if let (Some(buffer), Some(copy)) = (self.buffers.get(source), plan.reads.get(source)) {
            return &buffer.copies[*copy].view;
        }
        if let Some(view) = self.imported.get(source) {
            return view;
        }
        let input = self.header.inputs.iter().find(|i| i.name == source);
        if let Some(InputKind::Audio { fft }) = input.map(|i| &i.kind) {
            return frame.inputs.sound_row(*fft);
        }
        frame.inputs.get_or_black(source)
    }

    /// Shadertoy's `iChannelResolution` in `pass`'s uniforms: each
    /// channel's size, known only here where the channels are bound.
    fn write_channel_sizes(
        &self,
        gpu: &Gpu,
        uniforms: &wgpu::Buffer,
        pass: &IsfPass,
        frame: &LayerFrame<'_>,
    ) {
        for (name, offset, _) in &self.uniforms {
            let Some(n) = name.strip_prefix("sylva_channel") else {
                continue;
            };
            let channel = format!("iChannel{n}");
            let source = self.source(&channel, pass, frame.registry);
            let [width, height] = match self.buffers.get(source) {
                Some(buffer) => {
                    let texture = &buffer.copies[0].texture;
                    [texture.width(), texture.height()]
                }
                None => frame.inputs.size(source, frame.size),
            };
            let size = [width as f32, height as f32, 1.0, 0.0];
            gpu.queue
                .write_buffer(uniforms, u64::from(*offset), bytemuck::cast_slice(&size));
        }
    }
}

/// What `header`'s pass channels name other than its pass buffers, once each.
fn channel_sources(header: &IsfHeader) -> Vec<String> {
    let buffers: Vec<&String> = header
        .passes
        .iter()
        .filter_map(|p| p.target.as_ref())
        .collect();
    let mut sources: Vec<String> = (header.passes.iter())
        .flat_map(|pass| pass.channels.iter().flatten())
        .filter(|source| !buffers.contains(source))
        .cloned()
        .collect();
    sources.sort();
    sources.dedup();
    sources
}
