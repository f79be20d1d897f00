//! The compositor: step 3 of the frame (docs/dev/frame.md). It owns the targets, not the
//! layers: each enabled layer draws into its own HDR target (two per layer,
//! swapped each frame, so a layer can read its previous frame) that
//! [`Compositor::layer_targets`] hands out; [`Compositor::blend`] lays each
//! target over the composite of the layers below with the layer's opacity
//! and blend mode; [`Compositor::finish`] applies brightness and blackout,
//! tonemaps and writes the output (the window's surface or a texture for
//! readback). The show walks its layers between these calls.

use std::collections::HashMap;

use bytemuck::{Pod, Zeroable};

use super::blit::Blit;
use super::bloom::Bloom;
use super::inputs::media::MediaShelf;
use super::inputs::{LayerOutputs, TextureInputs};
use super::picture::Picture;
use super::scene_look::{SceneLook, ScenePass};
use super::tonemap::FilmicUniforms;
use crate::base::clock::Clock;
use crate::base::rebuild::Rebuild;
use crate::engine::LayerEnv;
use crate::gpu::bindings::{Slot, bind, layout, linear_sampler, uniform_buffer};
use crate::gpu::raster::{clear_depth, scene_depth_view};
use crate::gpu::wgsl::{Composer, ShaderError};
use crate::gpu::{BuildError, FullscreenPipeline, Gpu, GpuProfiler, HDR_FORMAT, RenderTarget};
use crate::params::{ParamSpec, Registry};

pub use super::tonemap::TONEMAPS;

/// The master section's parameters.
pub fn master_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::float("master.brightness", 1.0, 0.0, 4.0)
            .with_smoothing(0.05)
            .with_description("Gain applied to the composite before tonemapping (a fader's worth; `exposure` in stops)"),
        ParamSpec::float("master.exposure", 0.0, -8.0, 8.0)
            .with_smoothing(0.05)
            .with_unit("stops")
            .with_description("Exposure before the tone map: each stop doubles the light"),
        ParamSpec::float("master.blackout", 0.0, 0.0, 1.0)
            .with_smoothing(0.15)
            .with_description("Fade to black: 1 is fully dark"),
        ParamSpec::float("master.render_scale", 1.0, 0.25, 2.0).with_description(
            "Layer resolution relative to the output (rebuilds after 250 ms at rest)",
        ),
        ParamSpec::enumeration("master.tonemap", &TONEMAPS, 0)
            .with_description("Curve from linear HDR to the display: filmic (after AgX: saturated light bleaches to white), the older ACES fit, Reinhard, or a clamp"),
        ParamSpec::float("master.bloom", 0.0, 0.0, 4.0)
            .with_smoothing(0.1)
            .with_description("Light bleeding from the brightest parts of the picture (0: off)"),
        ParamSpec::float("master.bloom_threshold", 1.0, 0.0, 16.0)
            .with_smoothing(0.1)
            .with_description("How bright (linear) a part must be to bloom"),
        ParamSpec::float("master.bloom_radius", 8.0, 1.0, 32.0)
            .with_smoothing(0.1)
            .with_unit("px")
            .with_description("How far the bloom spreads, in half-size pixels"),
        ParamSpec::float("master.bpm", 120.0, 20.0, 300.0)
            .with_unit("bpm")
            .with_description("Tempo of the beat clock"),
        ParamSpec::enumeration("master.tempo_source", &crate::base::tempo::TEMPO_SOURCES, 1)
            .with_description(
                "Where the beat comes from: internal (tap, OSC, Lua), midi_clock (a sequencer's clock when one plays), audio (the beats heard), link (Ableton Link)",
            ),
        ParamSpec::enumeration("master.timecode_source", &crate::base::timecode::TIMECODE_SOURCES, 0)
            .with_description(
                "What the show's clock follows: off (its own), mtc (MIDI timecode from any input), artnet (Art-Net timecode on port 6454), ltc (linear timecode on the audio input)",
            ),
        ParamSpec::float("master.timecode", 0.0, 0.0, 86_400.0)
            .with_unit("s")
            .with_description(
                "The show's position in seconds, as the timecode followed puts it (the show's own clock when none): read by scripts, cues and OSC feedback",
            ),
        ParamSpec::enumeration("master.timecode_rate", &crate::base::timecode::FRAME_RATES, 3)
            .with_description("The frame rate of the timecode the show sends"),
        ParamSpec::enumeration("master.timecode_out", &crate::base::timecode::TIMECODE_OUTS, 0).with_description(
            "Send the show's position as timecode: artnet (ArtTimeCode to --timecode-to, Art-Net broadcast by default), once a frame",
        ),
        ParamSpec::float("master.crossfade", 0.0, 0.0, 60.0)
            .with_unit("s")
            .with_description(
                "Seconds a newly loaded preset takes to fade in over the one it replaces (0: cut)",
            ),
        ParamSpec::vec3("master.pointer", [0.5, 0.5, 0.0], 0.0, 1.0).with_description(
            "The pointer on the picture: x, y from the top left (0..1), z 1 while it presses. The window's mouse in pointer mode (key m), or an XY pad over OSC; the fluid pushes away from it",
        ),
    ]
}

/// `BLEND_MODES`' multiply, `MULTIPLY` in blend.wgsl.
pub(crate) const MULTIPLY: u32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct BlendUniforms {
    mode: u32,
    opacity: f32,
    _pad: [f32; 2],
}

impl BlendUniforms {
    /// Blend `mode` (an index into `BLEND_MODES`) at `opacity`.
    pub(crate) fn new(mode: u32, opacity: f32) -> Self {
        Self {
            mode,
            opacity,
            _pad: [0.0; 2],
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct MasterUniforms {
    brightness: f32,
    blackout: f32,
    tonemap: u32,
    encode_srgb: u32,
    bloom: f32,
    exposure: f32,
    _pad: [f32; 2],
    filmic: FilmicUniforms,
}

/// Why the compositor could not be built.
#[derive(Debug, thiserror::Error)]
#[error("compositor shader {file}: {reason}")]
pub struct CompositorError {
    pub(crate) file: &'static str,
    pub(crate) reason: BuildError,
}

/// Where a layer draws this frame.
pub struct LayerTargets<'a> {
    /// Its HDR target.
    pub target: &'a wgpu::TextureView,
    /// What it may bind: the composite below, its last frame, the other
    /// layers' outputs.
    pub inputs: TextureInputs<'a>,
    /// Their size in pixels.
    pub size: [u32; 2],
    /// The depth the layers in the scene share this frame.
    pub scene_depth: &'a wgpu::TextureView,
}

/// A layer's two HDR targets and its blend uniforms.
struct LayerSlot {
    targets: [RenderTarget; 2],
    current: usize,
    blend: wgpu::Buffer,
}

impl LayerOutputs for HashMap<String, LayerSlot> {
    fn output(&self, id: &str) -> Option<&wgpu::TextureView> {
        self.get(id).map(|s| &s.targets[s.current].view)
    }
}

/// Blends layers and runs the master section.
pub struct Compositor {
    blend_pipeline: FullscreenPipeline,
    blend_layout: wgpu::BindGroupLayout,
    /// Clears the composite (`fs_clear`, by compute where it can), with
    /// its empty bind group.
    clear: (FullscreenPipeline, wgpu::BindGroup),
    /// The master section, run by compute where the GPU allows: stored
    /// straight into the picture where it can be (`stored_master`, the
    /// output format's linear twin), else into `toned`, which `present`
    /// copies into the picture.
    master_pipeline: FullscreenPipeline,
    stored_master: Option<FullscreenPipeline>,
    master_layout: wgpu::BindGroupLayout,
    present: Blit,
    /// The master section's result at the output's size, made the first
    /// time the picture cannot be stored to.
    toned: Option<RenderTarget>,
    master_uniforms: wgpu::Buffer,
    /// The filmic curve's constants, derived once (`tonemap.rs`).
    filmic: FilmicUniforms,
    bloom: Bloom,
    crossfade_uniforms: wgpu::Buffer,
    sampler: wgpu::Sampler,
    output_format: wgpu::TextureFormat,
    slots: HashMap<String, LayerSlot>,
    composite: [RenderTarget; 2],
    composite_current: usize,
    render_size: [u32; 2],
    /// The depth the layers in the shared scene draw into, cleared each
    /// frame.
    scene_depth: wgpu::TextureView,
    /// The scene's occlusion, anti-aliasing and lens.
    scene_look: SceneLook,
    scale: f32,
    scale_rest: Rebuild<f32>,
}

impl Compositor {
    /// Builds the blend and master pipelines for output `output_format`.
    pub fn new(
        env: &LayerEnv<'_>,
        output_format: wgpu::TextureFormat,
    ) -> Result<Self, CompositorError> {
        let device = &env.gpu.device;
        let blend_layout = layout(
            device,
            "compositor.blend",
            &[Slot::Uniform, Slot::Texture(false), Slot::Texture(false)],
        );
        let master_layout = layout(
            device,
            "compositor.master",
            &[
                Slot::Uniform,
                Slot::Texture(true),
                Slot::Sampler,
                Slot::Texture(true),
            ],
        );
        // A compositor file composed and validated, and what its build
        // failing is reported as.
        let compose = |file: &'static str| {
            let fail = move |reason: BuildError| CompositorError { file, reason };
            let shader = |error: ShaderError| fail(error.into());
            let composed = Composer::new(env.assets)
                .file(file)
                .and_then(Composer::finish)
                .map_err(shader)?;
            composed.validate().map_err(shader)?;
            Ok::<_, CompositorError>((composed, fail))
        };
        let compile = |file: &'static str, layout: &wgpu::BindGroupLayout, format| {
            let (composed, fail) = compose(file)?;
            FullscreenPipeline::new(device, file, composed.text(), layout, format).map_err(fail)
        };
        // The blends and the clear of the composite (`fs_clear`, bound to
        // nothing) from one file.
        let (blend_text, blend_fail) = compose("compositor/blend.wgsl")?;
        let blend_pipeline = FullscreenPipeline::new(
            device,
            "compositor/blend.wgsl",
            blend_text.text(),
            &blend_layout,
            HDR_FORMAT,
        )
        .map_err(blend_fail)?;
        let clear = {
            let empty = layout(device, "compositor.clear", &[]);
            let pipeline = FullscreenPipeline::with_entry(
                device,
                "compositor.clear",
                blend_text.text(),
                &empty,
                HDR_FORMAT,
                "fs_clear",
            )
            .map_err(blend_fail)?;
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("compositor.clear"),
                layout: &empty,
                entries: &[],
            });
            (pipeline, group)
        };
        // The master section's arithmetic (the filmic curve's powers and
        // logarithm) at the output's size runs as compute, since a GPU
        // whose fragment units are its narrow part spent milliseconds on
        // it at 4K: stored into the picture through its linear twin
        // (`Picture::storable`), or where the GPU cannot, into a
        // half-float picture copied into the output a texel a pixel.
        let master_pipeline = compile("compositor/master.wgsl", &master_layout, HDR_FORMAT)?;
        let twin = output_format.remove_srgb_suffix();
        let stored_master = match twin != output_format {
            true => Some(compile("compositor/master.wgsl", &master_layout, twin)?)
                .filter(FullscreenPipeline::computes),
            false => None,
        };
        let present =
            Blit::new(env.gpu, env.assets, output_format).map_err(|reason| CompositorError {
                file: "outputs/blit.wgsl",
                reason,
            })?;
        let (composed, fail) = compose("compositor/bloom.wgsl")?;
        let bloom = Bloom::new(device, composed.text()).map_err(fail)?;
        let scene_look = SceneLook::new(env)?;
        Ok(Self {
            blend_pipeline,
            blend_layout,
            clear,
            master_pipeline,
            stored_master,
            master_layout,
            present,
            toned: None,
            bloom,
            master_uniforms: uniform_buffer(
                device,
                "compositor.master",
                size_of::<MasterUniforms>(),
            ),
            crossfade_uniforms: uniform_buffer(
                device,
                "compositor.crossfade",
                size_of::<BlendUniforms>(),
            ),
            filmic: FilmicUniforms::new(),
            sampler: linear_sampler(device, "compositor.sampler"),
            output_format,
            slots: HashMap::new(),
            composite: [0, 1].map(|i| {
                RenderTarget::new(
                    device,
                    &format!("compositor.composite{i}"),
                    [1, 1],
                    HDR_FORMAT,
                )
            }),
            composite_current: 0,
            render_size: [0, 0],
            scene_depth: scene_depth_view(device, [1, 1]),
            scene_look,
            scale: 1.0,
            scale_rest: Rebuild::default(),
        })
    }

    /// The size layers render at: the output size times the render scale.
    pub fn render_size(&self) -> [u32; 2] {
        self.render_size
    }

    /// The HDR composite of the last frame, before the master section.
    pub fn composite(&self) -> &wgpu::Texture {
        &self.composite[self.composite_current].texture
    }

    /// The HDR target layer `id` drew into last frame.
    pub fn layer_target(&self, id: &str) -> Option<&wgpu::Texture> {
        self.slots.get(id).map(|s| &s.targets[s.current].texture)
    }

    /// Clears a layer's feedback history (on reseed).
    pub fn forget(&mut self, id: &str) {
        self.slots.remove(id);
    }

    /// Starts a frame's composite: the targets of layers no longer in
    /// `ids` are dropped and the composite is cleared (the scene's depth
    /// by [`Compositor::clear_scene_depth`]).
    pub fn begin<'a>(
        &mut self,
        ids: impl Iterator<Item = &'a str>,
        encoder: &mut wgpu::CommandEncoder,
    ) {
        let ids: Vec<&str> = ids.collect();
        self.slots.retain(|id, _| ids.contains(&id.as_str()));
        let (pipeline, group) = &self.clear;
        let composite = &self.composite[self.composite_current].view;
        pipeline.draw(encoder, "compositor.clear", composite, group, None);
    }

    /// Clears the scene's depth, which the layers in the scene draw over.
    pub fn clear_scene_depth(&self, encoder: &mut wgpu::CommandEncoder) {
        clear_depth(encoder, &self.scene_depth);
    }

    /// The targets layer `id` draws into this frame, flipped from last
    /// frame's: its target, its previous frame (feedback) and the
    /// composite of the layers below.
    pub fn layer_targets<'a>(
        &'a mut self,
        gpu: &Gpu,
        id: &'a str,
        media: &'a MediaShelf,
    ) -> LayerTargets<'a> {
        let slot = slot(&mut self.slots, gpu, id, self.render_size);
        slot.current = 1 - slot.current;
        let slots = &self.slots;
        let Some(own) = slots.get(id) else {
            unreachable!("slot() made the slot of {id}");
        };
        LayerTargets {
            target: &own.targets[own.current].view,
            inputs: TextureInputs::new(
                &self.composite[self.composite_current].view,
                &own.targets[1 - own.current].view,
                id,
                slots,
                media,
            ),
            size: self.render_size,
            scene_depth: &self.scene_depth,
        }
    }

    /// Blends layer `id`'s target over the composite with its `opacity`
    /// and blend `mode` (an index into `BLEND_MODES`).
    pub fn blend(
        &mut self,
        env: &LayerEnv<'_>,
        opacity: f32,
        mode: usize,
        id: &str,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let Some(slot) = self.slots.get(id) else {
            return;
        };
        let blend = BlendUniforms::new(mode as u32, opacity);
        let (uniforms, layer) = (slot.blend.clone(), slot.targets[slot.current].view.clone());
        let label = format!("compositor.blend.{id}");
        self.lay_over(env, &uniforms, &blend, &layer, &label, encoder, profiler);
    }

    /// The scene's own passes (`scene_look.rs`: occlusion, anti-aliasing,
    /// lens), each laid over the composite in turn: called once the last
    /// layer in the scene has been blended, so the layers over it are
    /// drawn as they are.
    pub fn finish_scene(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        clock: &Clock,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let seen = self.scene_look.seen(registry, clock, self.render_size);
        for pass in ScenePass::ALL {
            let now = self.composite[self.composite_current].view.clone();
            let (depth, size) = (&self.scene_depth, self.render_size);
            let laid = (self.scene_look).record(
                pass, env, registry, &seen, &now, depth, size, encoder, profiler,
            );
            if let Some((picture, uniforms, blend, label)) = laid {
                self.lay_over(env, &uniforms, &blend, &picture, label, encoder, profiler);
            }
        }
    }

    /// Lays `other` (another stack's composite, at the same size) over this
    /// composite at `amount` (0 keeps this one, 1 shows the other): two
    /// layer stacks blended, as a crossfade between presets needs.
    pub fn crossfade(
        &mut self,
        env: &LayerEnv<'_>,
        other: &wgpu::TextureView,
        amount: f32,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        let blend = BlendUniforms::new(0, amount.clamp(0.0, 1.0));
        let uniforms = self.crossfade_uniforms.clone();
        let label = "compositor.crossfade";
        self.lay_over(env, &uniforms, &blend, other, label, encoder, profiler);
    }

    /// One blend pass: `layer` over the composite with `blend` (written
    /// into `uniforms`), into the other composite, which becomes current.
    fn lay_over(
        &mut self,
        env: &LayerEnv<'_>,
        uniforms: &wgpu::Buffer,
        blend: &BlendUniforms,
        layer: &wgpu::TextureView,
        label: &str,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        env.gpu
            .queue
            .write_buffer(uniforms, 0, bytemuck::bytes_of(blend));
        let below = &self.composite[self.composite_current];
        let out = &self.composite[1 - self.composite_current];
        let bind_group = bind(
            env.gpu,
            &self.blend_layout,
            label,
            &[
                uniforms.as_entire_binding(),
                wgpu::BindingResource::TextureView(&below.view),
                wgpu::BindingResource::TextureView(layer),
            ],
        );
        let timestamps = profiler.render_pass(label);
        self.blend_pipeline
            .draw(encoder, label, &out.view, &bind_group, timestamps);
        self.composite_current = 1 - self.composite_current;
    }

    /// The master section (brightness, blackout, tonemap) from the
    /// composite into `output`.
    pub fn finish(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        output: &Picture,
    ) {
        self.encode_master(env, registry, encoder, profiler, output);
    }

    fn encode_master(
        &mut self,
        env: &LayerEnv<'_>,
        registry: &Registry,
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
        output: &Picture,
    ) {
        // Stored through the linear twin, the pixels are encoded by the
        // shader, as for an output with no sRGB format.
        let stored = self.stored_master.as_ref().zip(output.storable());
        let master = MasterUniforms {
            brightness: registry.float("master.brightness"),
            blackout: registry.float("master.blackout"),
            tonemap: registry.index("master.tonemap") as u32,
            encode_srgb: u32::from(stored.is_some() || !self.output_format.is_srgb()),
            bloom: registry.float("master.bloom"),
            exposure: registry.float("master.exposure").exp2(),
            _pad: [0.0; 2],
            filmic: self.filmic,
        };
        let composite = &self.composite[self.composite_current].view;
        if master.bloom > 0.0 {
            let threshold = registry.float("master.bloom_threshold");
            let radius = registry.float("master.bloom_radius");
            let sampler = &self.sampler;
            (self.bloom).encode(
                env.gpu, encoder, profiler, composite, sampler, threshold, radius,
            );
        }
        env.gpu
            .queue
            .write_buffer(&self.master_uniforms, 0, bytemuck::bytes_of(&master));
        let bind_group = bind(
            env.gpu,
            &self.master_layout,
            "compositor.master",
            &[
                self.master_uniforms.as_entire_binding(),
                wgpu::BindingResource::TextureView(composite),
                wgpu::BindingResource::Sampler(&self.sampler),
                wgpu::BindingResource::TextureView(self.bloom.light()),
            ],
        );
        let timestamps = profiler.render_pass("compositor.master");
        if let Some((pipeline, view)) = stored {
            pipeline.draw(encoder, "compositor.master", view, &bind_group, timestamps);
            return;
        }
        let size = output.size();
        let toned = match self.toned.take() {
            Some(toned) if toned.size == size => toned,
            _ => RenderTarget::new(&env.gpu.device, "compositor.toned", size, HDR_FORMAT),
        };
        let label = "compositor.master";
        (self.master_pipeline).draw(encoder, label, &toned.view, &bind_group, timestamps);
        (self.present).draw(env.gpu, encoder, profiler, &toned.view, output.view());
        self.toned = Some(toned);
    }

    /// Sizes the targets for `output_size` and the rested render scale.
    /// Called before the frame uniforms are written, which carry the size.
    pub fn fit(&mut self, gpu: &Gpu, registry: &Registry, clock: &Clock, output_size: [u32; 2]) {
        let wanted = registry.float("master.render_scale").clamp(0.25, 2.0);
        if self.scale_rest.due(&wanted, clock.time) {
            self.scale = wanted;
        }
        let max = gpu.device.limits().max_texture_dimension_2d;
        let size = output_size.map(|s| ((s as f32 * self.scale).round() as u32).clamp(1, max));
        if size != self.render_size {
            self.render_size = size;
            self.slots.clear();
            self.scene_depth = scene_depth_view(&gpu.device, size);
            self.bloom.fit(&gpu.device, size);
            self.composite = [0, 1].map(|i| {
                RenderTarget::new(
                    &gpu.device,
                    &format!("compositor.composite{i}"),
                    size,
                    HDR_FORMAT,
                )
            });
        }
    }
}

/// The targets of layer `id`, made at `size` when first needed.
fn slot<'a>(
    slots: &'a mut HashMap<String, LayerSlot>,
    gpu: &Gpu,
    id: &str,
    size: [u32; 2],
) -> &'a mut LayerSlot {
    slots.entry(id.to_string()).or_insert_with(|| LayerSlot {
        targets: [0, 1]
            .map(|i| RenderTarget::new(&gpu.device, &format!("{id}.target{i}"), size, HDR_FORMAT)),
        current: 0,
        blend: uniform_buffer(
            &gpu.device,
            &format!("compositor.blend.{id}"),
            size_of::<BlendUniforms>(),
        ),
    })
}
