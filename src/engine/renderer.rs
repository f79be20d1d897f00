//! The engine's frame, driven from this one place (vello's
//! `render_to_texture`): the stack on stage and the one leaving in a
//! crossfade prepared for the render size, then every enabled layer
//! recorded into its HDR target and blended, the leaving stack laid over,
//! and the master section written into the engine's picture. The show
//! calls [`prepare`] and [`record`] once a frame and nothing else touches
//! the compositor.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::inputs::media::MediaShelf;
use super::picture::Picture;
use super::stack::LayerHealth;
use super::{Layer, LayerEnv, LayerFrame, Outgoing, Stack};
use crate::base::clock::Clock;
use crate::base::supervise::panic_message;
use crate::gpu::GpuProfiler;
use crate::params::Registry;

/// What the engine renders: the stack on stage with its registry, and the
/// stack leaving it, if a crossfade runs.
pub struct OnStage<'a> {
    /// The layers on stage and their compositor.
    pub stack: &'a mut Stack,
    /// Their parameters.
    pub registry: &'a mut Registry,
    /// The stack fading out, on its own registry.
    pub outgoing: Option<&'a mut Outgoing>,
    /// The media files and clips the layers' texture inputs name.
    pub media: &'a mut MediaShelf,
}

/// The CPU half of a frame: the render size fitted to `output_size`
/// (`master.render_scale`), then every layer prepared for it; the leaving
/// stack runs on, `dt` further into its fade and its ramps.
pub fn prepare(
    env: &LayerEnv<'_>,
    scene: &mut OnStage<'_>,
    clock: &Clock,
    output_size: [u32; 2],
    dt: f32,
) {
    scene
        .stack
        .compositor
        .fit(env.gpu, scene.registry, clock, output_size);
    let mut registries = vec![&*scene.registry];
    registries.extend(scene.outgoing.as_deref().map(|out| &out.registry));
    let mut layers: Vec<_> = scene.stack.layers.iter().collect();
    layers.extend(scene.outgoing.iter().flat_map(|out| &out.stack.layers));
    let named: Vec<&str> = (layers.iter())
        .flat_map(|layer| layer.sources())
        .map(String::as_str)
        .collect();
    scene
        .media
        .fit_clips_to(scene.stack.compositor.render_size());
    let (gpu, assets, errors) = (env.gpu, env.assets, env.errors);
    (scene.media).prepare(gpu, assets, errors, &registries, &named, dt);
    scene.stack.prepare(env, scene.registry, clock);
    if let Some(out) = scene.outgoing.as_deref_mut() {
        out.elapsed += dt;
        out.registry.advance(dt);
        out.stack
            .compositor
            .fit(env.gpu, scene.registry, clock, output_size);
        out.stack.prepare(env, &mut out.registry, clock);
    }
    let mut on_stage: Vec<&str> = enabled_ids(scene.stack, scene.registry);
    if let Some(out) = scene.outgoing.as_deref() {
        on_stage.extend(enabled_ids(&out.stack, &out.registry));
    }
    env.world.keep_only(&on_stage);
}

/// The ids of `stack`'s layers switched on.
fn enabled_ids<'s>(stack: &'s Stack, registry: &Registry) -> Vec<&'s str> {
    stack
        .layers
        .iter()
        .filter(|layer| layer.switches().enabled(registry))
        .map(|layer| layer.id())
        .collect()
}

/// Records the frame into `encoder`, ending in `picture`: the stack's
/// layers and blends, the leaving stack's composite laid over it by its
/// eased weight, the master section.
pub fn record(
    env: &LayerEnv<'_>,
    scene: &mut OnStage<'_>,
    (clock, frame_uniforms): (&Clock, &wgpu::Buffer),
    picture: &Picture,
    encoder: &mut wgpu::CommandEncoder,
    profiler: &mut GpuProfiler,
) {
    let media = &*scene.media;
    record_stack(
        env,
        scene.stack,
        scene.registry,
        media,
        clock,
        frame_uniforms,
        encoder,
        profiler,
    );
    if let Some(out) = scene.outgoing.as_deref_mut() {
        record_stack(
            env,
            &mut out.stack,
            &out.registry,
            media,
            clock,
            frame_uniforms,
            encoder,
            profiler,
        );
        let leaving = out
            .stack
            .compositor
            .composite()
            .create_view(&wgpu::TextureViewDescriptor::default());
        scene
            .stack
            .compositor
            .crossfade(env, &leaving, out.weight(), encoder, profiler);
    }
    scene
        .stack
        .compositor
        .finish(env, scene.registry, encoder, profiler, picture);
}

/// The scene's shadow map cleared and cast into by every enabled layer of
/// `stack` that casts, before any draws. A layer that panics while casting
/// is marked broken like one that panics while recording.
fn cast_shadows(
    env: &LayerEnv<'_>,
    stack: &mut Stack,
    registry: &Registry,
    encoder: &mut wgpu::CommandEncoder,
    profiler: &mut GpuProfiler,
) {
    let Some(map) = env.world.shadow_made() else {
        return;
    };
    profiler.time_commands(encoder, "scene.shadow.clear", |encoder| map.clear(encoder));
    for layer in &stack.layers {
        let id = layer.id();
        if !draws(layer.as_ref(), &stack.health, registry) {
            continue;
        }
        let cast = catch_unwind(AssertUnwindSafe(|| {
            layer.cast_shadow(env, registry, encoder, profiler)
        }));
        if let Err(panic) = cast {
            let what = format!(
                "while casting its shadow: {}",
                panic_message(panic.as_ref())
            );
            stack.health.entry(id.to_string()).or_default().broken = Some(what);
        }
    }
}

/// Every enabled layer of `stack` recorded into its target and blended
/// over the composite below it, each in a debug group of its id (on GPUs:
/// lavapipe, Mesa 22.3, CI's, crashes on debug labels). A layer that
/// panics while recording is marked broken, to be restarted at the next
/// prepare, and the others record on.
fn record_stack(
    env: &LayerEnv<'_>,
    stack: &mut Stack,
    registry: &Registry,
    media: &MediaShelf,
    clock: &Clock,
    frame_uniforms: &wgpu::Buffer,
    encoder: &mut wgpu::CommandEncoder,
    profiler: &mut GpuProfiler,
) {
    let grouped = env.gpu.info.device_type != wgpu::DeviceType::Cpu;
    let ids = stack.layers.iter().map(|l| l.id());
    profiler.time_commands(encoder, "compositor.clear", |encoder| {
        stack.compositor.begin(ids, encoder);
    });
    profiler.time_commands(encoder, "scene.depth.clear", |encoder| {
        stack.compositor.clear_scene_depth(encoder);
    });
    cast_shadows(env, stack, registry, encoder, profiler);
    // The scene's own passes (occlusion, anti-aliasing, lens) take what
    // the layers in it drew, and none of what is laid over them.
    let last_in_scene = (stack.layers.iter())
        .filter(|layer| draws(layer.as_ref(), &stack.health, registry))
        .rfind(|layer| {
            let name = format!("{}.in_scene", layer.id());
            registry.contains(&name) && registry.flag(&name)
        })
        .map(|layer| layer.id().to_string());
    for layer in &stack.layers {
        let id = layer.id();
        if !draws(layer.as_ref(), &stack.health, registry) {
            continue;
        }
        let targets = stack.compositor.layer_targets(env.gpu, id, media);
        let frame = LayerFrame {
            registry,
            clock,
            frame_uniforms,
            target: targets.target,
            inputs: targets.inputs,
            size: targets.size,
            scene_depth: targets.scene_depth,
        };
        if grouped {
            encoder.push_debug_group(id);
        }
        let recorded = catch_unwind(AssertUnwindSafe(|| {
            layer.encode(env, &frame, encoder, profiler)
        }));
        match recorded {
            Ok(()) => {
                let (opacity, mode) = layer.switches().blend(registry);
                (stack.compositor).blend(env, opacity, mode, id, encoder, profiler);
                if last_in_scene.as_deref() == Some(id) {
                    (stack.compositor).finish_scene(env, registry, clock, encoder, profiler);
                }
            }
            Err(panic) => {
                let what = format!("while recording: {}", panic_message(panic.as_ref()));
                stack.health.entry(id.to_string()).or_default().broken = Some(what);
            }
        }
        if grouped {
            encoder.pop_debug_group();
        }
    }
}

/// Whether `layer` draws this frame: switched on, and not left out after
/// panicking too often.
fn draws(layer: &dyn Layer, health: &HashMap<String, LayerHealth>, registry: &Registry) -> bool {
    let left_out = health.get(layer.id()).is_some_and(|h| h.disabled);
    layer.switches().enabled(registry) && !left_out
}
