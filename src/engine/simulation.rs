//! The skeleton every simulation layer shares, written once: the running
//! simulation and its drawer, the seed, a structural rebuild only after the
//! structure has rested (or when asked), a build that replaces the running
//! simulation only when it succeeds, and live reloads of both the drawing
//! pipelines and the simulation kernels. The colony and the fluid (and the
//! layers to come) hold one and add only what is theirs.

use super::layer::{LayerEnv, LayerSwitches, report_kernel_reload, shaders_changed};
use crate::base::rebuild::Rebuild;
use crate::base::{Assets, ChangedFile};
use crate::gpu::compute::KernelReload;
use crate::gpu::{BuildError, Gpu};
use crate::params::Registry;

/// A simulation's GPU state, whose kernels saved WGSL files can rebuild.
pub trait Simulation {
    /// Rebuilds the kernels `changed` touches, keeping the buffers.
    fn reload(&mut self, gpu: &Gpu, assets: &Assets, changed: &[ChangedFile]) -> KernelReload;
}

/// What draws a simulation of type `S`.
pub trait Drawer<S>: Sized {
    /// Compiles the drawing pipelines.
    fn build(gpu: &Gpu, assets: &Assets) -> Result<Self, BuildError>;
    /// Binds a (new) simulation's buffers.
    fn attach(&mut self, gpu: &Gpu, sim: &S);
}

/// A running simulation with whatever its layer keeps beside it.
pub trait Running {
    /// The simulation.
    type Sim: Simulation;
    /// The simulation, to draw it.
    fn sim(&self) -> &Self::Sim;
    /// The simulation, to reload it.
    fn sim_mut(&mut self) -> &mut Self::Sim;
}

/// The shared state of one simulation layer: `R` runs, `D` draws it, `T` is
/// the structure whose change rebuilds it.
pub struct SimulationCore<R, D, T> {
    /// The layer's id (`colony`, `fluid.left`).
    pub id: String,
    /// Its `enabled`, `opacity` and `blend`.
    pub switches: LayerSwitches,
    folders: &'static [&'static str],
    /// The running simulation, if one was built.
    pub running: Option<R>,
    /// Its drawer, if the pipelines compiled.
    pub drawer: Option<D>,
    /// The seed the next build starts from.
    pub seed: u64,
    restart: bool,
    rebuild: Rebuild<T>,
}

impl<R, D, T> SimulationCore<R, D, T>
where
    R: Running,
    D: Drawer<R::Sim>,
    T: PartialEq + Clone,
{
    /// The core of layer `id`, drawn with the shaders in `folders` of
    /// `shaders/`; it builds on the first frame.
    pub fn new(id: &str, folders: &'static [&'static str], env: &LayerEnv<'_>) -> Self {
        let drawer = D::build(env.gpu, env.assets)
            .inspect_err(|e| env.errors.report(id, e))
            .ok();
        Self {
            id: id.to_string(),
            switches: LayerSwitches::new(id),
            folders,
            running: None,
            drawer,
            seed: env.seed,
            restart: true,
            rebuild: Rebuild::default(),
        }
    }

    /// Whether the layer is switched on: a switched-off simulation neither
    /// builds nor runs (so a preset's disabled layer costs nothing until
    /// it is switched on).
    pub fn enabled(&self, registry: &Registry) -> bool {
        self.switches.enabled(registry)
    }

    /// Whether to build now: asked for, the first frame, or `structure`
    /// has rested at a new value.
    pub fn due(&mut self, structure: &T, time: f64) -> bool {
        if self.rebuild.due(structure, time) {
            self.restart = true;
        }
        std::mem::take(&mut self.restart)
    }

    /// Asks for a new build next frame, the seed moved on by `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.seed = self.seed.wrapping_add(seed).wrapping_add(1);
        self.restart = true;
    }

    /// Puts a build in place: a new simulation replaces the running one and
    /// the drawer binds it; an error is shown and the running one stays.
    pub fn start<E: std::fmt::Display>(&mut self, env: &LayerEnv<'_>, built: Result<R, E>) {
        match built {
            Ok(running) => {
                if let Some(drawer) = self.drawer.as_mut() {
                    drawer.attach(env.gpu, running.sim());
                }
                env.errors.clear(&self.id);
                self.running = Some(running);
            }
            Err(error) => env.errors.report(&self.id, error),
        }
    }

    /// Rebuilds the drawer when a shader of the layer's folder or
    /// `common/` is saved, and the simulation kernels the saved files
    /// touch; the running simulation stays.
    pub fn reload(&mut self, env: &LayerEnv<'_>, changed: &[ChangedFile]) {
        if shaders_changed(changed, self.folders) || shaders_changed(changed, &["common/"]) {
            match D::build(env.gpu, env.assets) {
                Ok(mut drawer) => {
                    if let Some(running) = &self.running {
                        drawer.attach(env.gpu, running.sim());
                    }
                    self.drawer = Some(drawer);
                    env.errors.clear(&self.id);
                }
                Err(error) => env.errors.report(&self.id, error),
            }
        }
        if let Some(running) = self.running.as_mut() {
            let report = running.sim_mut().reload(env.gpu, env.assets, changed);
            report_kernel_reload(env, &self.id, &report);
        }
    }
}
