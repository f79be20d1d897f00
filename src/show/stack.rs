//! A layer stack: one preset's layers, the parameters each declared, and
//! the compositor that blends them. The show holds the stack on stage and,
//! during a crossfade between presets, the one leaving it ([`Outgoing`]),
//! which keeps running on its own registry until it has faded out.

use std::collections::HashMap;

use crate::clock::Clock;
use crate::compositor::Compositor;
use crate::gpu::GpuProfiler;
use crate::layers::{self, Layer, LayerEnv, LayerFrame};
use crate::params::Registry;
use crate::show::ChangedFile;

/// Layers, their declared parameter names and their compositor.
pub struct Stack {
    /// The layers, in compositing order.
    pub layers: Vec<Box<dyn Layer>>,
    /// The parameter names each layer declared (to drop the ones it stops
    /// declaring).
    pub layer_params: HashMap<String, Vec<String>>,
    /// Blends the layers (and, for the stack on stage, the stack leaving
    /// it) and runs the master section.
    pub compositor: Compositor,
}

/// The stack leaving the stage in a crossfade: it keeps its own registry
/// (its ramps go on, nothing else writes it) and fades over `seconds`.
pub struct Outgoing {
    /// The layers fading out.
    pub stack: Stack,
    /// Their parameters as they were when the crossfade began.
    pub registry: Registry,
    /// Length of the crossfade.
    pub seconds: f32,
    /// Time since it began.
    pub elapsed: f32,
}

impl Outgoing {
    /// How much of the outgoing stack still shows (1 at the start, 0 at
    /// the end), eased so the sum of the two stays even to the eye.
    pub fn weight(&self) -> f32 {
        let t = (self.elapsed / self.seconds.max(1e-3)).clamp(0.0, 1.0);
        1.0 - t * t * (3.0 - 2.0 * t)
    }

    /// Whether it has faded out.
    pub fn done(&self) -> bool {
        self.elapsed >= self.seconds
    }
}

impl Stack {
    /// A stack with no layers yet, compositing with `compositor`.
    pub fn new(compositor: Compositor) -> Self {
        Self {
            layers: Vec::new(),
            layer_params: HashMap::new(),
            compositor,
        }
    }

    /// Every layer's CPU work for this frame, with the frame's clock.
    pub fn prepare(&mut self, env: &LayerEnv<'_>, registry: &mut Registry, clock: &Clock) {
        for layer in self.layers.iter_mut() {
            if layer.prepare(env, registry, clock) {
                sync_params(layer.as_ref(), registry, &mut self.layer_params);
            }
        }
    }

    /// Hands saved files to every layer; a layer whose parameters changed
    /// has them registered again.
    pub fn reload(&mut self, env: &LayerEnv<'_>, registry: &mut Registry, changed: &[ChangedFile]) {
        for layer in self.layers.iter_mut() {
            if layer.reload(env, changed) {
                sync_params(layer.as_ref(), registry, &mut self.layer_params);
            }
        }
    }

    /// Records every enabled layer into its target and blends it over the
    /// composite below.
    pub fn encode(
        &mut self,
        env: &LayerEnv<'_>,
        (registry, clock, frame_uniforms): (&Registry, &Clock, &wgpu::Buffer),
        encoder: &mut wgpu::CommandEncoder,
        profiler: &mut GpuProfiler,
    ) {
        self.compositor
            .begin(self.layers.iter().map(|l| l.id()), encoder);
        for layer in self.layers.iter_mut() {
            let id = layer.id().to_string();
            if !registry.flag(&format!("{id}.enabled")) {
                continue;
            }
            let targets = self.compositor.layer_targets(env.gpu, &id);
            let frame = LayerFrame {
                registry,
                clock,
                frame_uniforms,
                target: targets.target,
                previous: targets.previous,
                below: targets.below,
                size: targets.size,
            };
            layer.encode(env, &frame, encoder, profiler);
            self.compositor.blend(env, registry, &id, encoder, profiler);
        }
    }
}

/// Registers a layer's parameters (its own and the common three) and drops
/// the ones it no longer declares.
pub fn sync_params(
    layer: &dyn Layer,
    registry: &mut Registry,
    layer_params: &mut HashMap<String, Vec<String>>,
) {
    let specs: Vec<_> = layers::common_params(layer.id())
        .into_iter()
        .chain(layer.params())
        .collect();
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    if let Some(previous) = layer_params.get(layer.id()) {
        let gone: Vec<&String> = previous.iter().filter(|n| !names.contains(n)).collect();
        registry.retain(|name| !gone.iter().any(|g| *g == name));
    }
    for spec in specs {
        registry.register(spec);
    }
    layer_params.insert(layer.id().to_string(), names);
}
