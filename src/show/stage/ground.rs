//! What every layer of the show is built on, kept as one part of [`Show`]
//! so that a [`LayerEnv`] is written in one place, [`Ground::env`]. It is
//! a field of its own, not a `&self` method of `Show`, for the split
//! borrow: `self.ground.env()` borrows that field only, so the call sites
//! may borrow the show's other parts mutably at the same time
//! (`self.rendering.stack.reload(&env, &mut self.registry, ...)`).
//!
//! [`Show`]: super::Show

use std::sync::Arc;

use crate::base::Assets;
use crate::base::status::ErrorLog;
use crate::engine::LayerEnv;
use crate::engine::world::World;
use crate::gpu::Gpu;

/// The device, the show files, the error log, the seed and the world:
/// what a layer is given to be built and to run.
pub struct Ground {
    /// The device.
    pub gpu: Arc<Gpu>,
    /// Show folder and embedded files.
    pub assets: Assets,
    /// Errors for the HUD.
    pub errors: ErrorLog,
    /// The show's seed (`--seed`).
    pub(in crate::show) seed: u64,
    /// What the simulations share within a frame.
    pub(super) world: World,
}

impl Ground {
    /// What a layer may use outside itself, borrowed from this ground.
    pub fn env(&self) -> LayerEnv<'_> {
        LayerEnv {
            gpu: &self.gpu,
            assets: &self.assets,
            errors: &self.errors,
            seed: self.seed,
            world: &self.world,
        }
    }
}
