//! A layer stack: one preset's layers, the parameters each declared, and
//! the compositor that blends them. The show holds the stack on stage and,
//! during a crossfade between presets, the one leaving it ([`Outgoing`]),
//! which keeps running on its own registry until it has faded out.
//! A layer whose code panics is caught here: built again from its kind,
//! and after repeated failures left out, while the others play on.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crate::base::ChangedFile;
use crate::base::clock::Clock;
use crate::base::supervise::panic_message;
use crate::engine::compositor::Compositor;
use crate::engine::{Layer, LayerEnv};
use crate::params::Registry;

/// Restarts a failing layer gets before it is left out.
pub const MAX_RESTARTS: u32 = 3;

/// A layer that has run this long since its last failure starts counting
/// afresh.
const FORGIVEN_AFTER: Duration = Duration::from_secs(60);

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
    /// Failures of layers that panicked, by id.
    pub health: HashMap<String, LayerHealth>,
}

/// How a layer that failed is doing.
#[derive(Debug, Clone, Default)]
pub struct LayerHealth {
    /// Failures counted (since it last ran a minute without one).
    pub failures: u32,
    /// The last one.
    pub last: Option<Instant>,
    /// Left out after too many.
    pub disabled: bool,
    /// Why it failed while recording, to restart it at the next prepare.
    pub broken: Option<String>,
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
        Self::with_layers(Vec::new(), HashMap::new(), compositor)
    }

    /// A stack of `layers` with the parameters they declared.
    pub fn with_layers(
        layers: Vec<Box<dyn Layer>>,
        layer_params: HashMap<String, Vec<String>>,
        compositor: Compositor,
    ) -> Self {
        Self {
            layers,
            layer_params,
            compositor,
            health: HashMap::new(),
        }
    }

    /// Puts a new preset's layers in place of these, keeping the
    /// compositor; failures counted so far are forgotten.
    pub fn replace_layers(
        &mut self,
        layers: Vec<Box<dyn Layer>>,
        layer_params: HashMap<String, Vec<String>>,
    ) {
        self.layers = layers;
        self.layer_params = layer_params;
        self.health.clear();
    }

    /// Whether layer `id` was left out after failing too often.
    pub fn disabled(&self, id: &str) -> bool {
        self.health.get(id).is_some_and(|h| h.disabled)
    }

    /// Every layer's CPU work for this frame, with the frame's clock. A
    /// layer that panicked (here, or while recording the last frame) is
    /// restarted or left out ([`Stack::failed`]); a restarted one is
    /// prepared at once, so it records this frame.
    pub fn prepare(&mut self, env: &LayerEnv<'_>, registry: &mut Registry, clock: &Clock) {
        let size = self.compositor.render_size();
        for index in 0..self.layers.len() {
            let id = self.layers[index].id().to_string();
            let broken = self.health.get_mut(&id).and_then(|h| h.broken.take());
            if let Some(what) = broken {
                self.failed(index, &what, env, registry);
            }
            // Each failure counts towards leaving the layer out, so this
            // ends after at most MAX_RESTARTS + 1 tries.
            while !self.disabled(&id) {
                let layer = &mut self.layers[index];
                match catch_unwind(AssertUnwindSafe(|| {
                    layer.prepare(env, registry, clock, size)
                })) {
                    Ok(changed) => {
                        if changed {
                            sync_params(layer.as_ref(), registry, &mut self.layer_params);
                        }
                        break;
                    }
                    Err(panic) => {
                        self.failed(index, &panic_message(panic.as_ref()), env, registry);
                    }
                }
            }
        }
    }

    /// Layer `index` panicked: it is built again from its kind (a fresh
    /// start from the show's seed) up to [`MAX_RESTARTS`] times a minute,
    /// then left out until a preset is loaded again. Either way it is
    /// reported under its id, and the other layers never notice.
    fn failed(&mut self, index: usize, what: &str, env: &LayerEnv<'_>, registry: &mut Registry) {
        let id = self.layers[index].id().to_string();
        let kind = self.layers[index].kind();
        let health = self.health.entry(id.clone()).or_default();
        if health.last.is_some_and(|t| t.elapsed() > FORGIVEN_AFTER) {
            health.failures = 0;
        }
        health.failures += 1;
        health.last = Some(Instant::now());
        let failures = match health.failures {
            failures if failures <= MAX_RESTARTS => failures,
            _ => {
                health.disabled = true;
                env.errors.report(
                    id,
                    format!(
                        "failed ({what}) {} times in a minute; left out until a preset is loaded again",
                        health.failures
                    ),
                );
                return;
            }
        };
        match catch_unwind(AssertUnwindSafe(|| (kind.create)(&id, env))) {
            Ok(fresh) => {
                self.layers[index] = fresh;
                self.compositor.forget(&id);
                sync_params(
                    self.layers[index].as_ref(),
                    registry,
                    &mut self.layer_params,
                );
                env.errors.report(
                    id,
                    format!("failed ({what}); restarted ({failures} of {MAX_RESTARTS})"),
                );
            }
            Err(panic) => {
                let why = panic_message(panic.as_ref());
                self.failed(index, &format!("{what}; restarting: {why}"), env, registry);
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
}

/// Registers a layer's parameters (its own and the common three) and drops
/// the ones it no longer declares.
pub fn sync_params(
    layer: &dyn Layer,
    registry: &mut Registry,
    layer_params: &mut HashMap<String, Vec<String>>,
) {
    let specs: Vec<_> = crate::engine::common_params(layer.id())
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
