//! How the fluid keeps each particle's neighbour lists (`LISTED` in
//! `shaders/fluid/fluid.wgsl`): how many a list holds, whether they are
//! built every substep or with a skin and reused (Verlet lists, decided
//! on the GPU by `shaders/fluid/plan.wgsl`), and their layout's sizes.

use super::sim::Solver;

/// Particles a walker's lists hold (`LISTED` in fluid.wgsl): the ~37
/// within the lists' reach of a particle in the bulk (~28 neighbours
/// within h), with room for the mirror particles at a wall and for
/// compression; a walker with more walks the grid in its stages.
pub const LIST_DEPTH: u32 = 64;

/// The lists' skin where they are reused, a share of h (`SKIN` in
/// fluid.wgsl): a list holds the particles within (1 + skin) h, so it
/// stays whole until a particle has moved half of it. At the CFL step of
/// the layer's scenes (dt = h / 4 over ten times the fastest flow) the
/// fastest water moves 0.025 h a substep, so a list built for one substep
/// serves the next two (0.05 h of motion, half the skin) wherever the flow
/// is no faster than the scene expects.
pub const LIST_SKIN: f32 = 0.1;

/// The most substeps one list serves where lists are reused (`REUSE` in
/// fluid.wgsl).
pub const LIST_REUSE: u32 = 3;

/// Particles from which the lists are reused: below it a substep is one
/// walk's latency more than its work, and a list with a skin costs more
/// to build than its reuse saves (the rain preset's 6,000 particles on the
/// H200: 2.01 ms of substeps a frame with lists built every substep, 2.36
/// with a skin and reuse), so small fluids build them every substep
/// without a skin; the lanes change at the same count.
const REUSED_FROM: u32 = 1 << 16;

/// Words before a walker's entries (`LIST_HEAD` in fluid.wgsl).
pub(super) const LIST_HEAD: u64 = 2;

/// How a fluid keeps its neighbour lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lists {
    /// Particles a list holds at most.
    pub depth: u32,
    /// Substeps a list serves at most (1: built every substep).
    pub reuse: u32,
    /// The lists' skin, a share of h (0 where they are not reused).
    pub skin: f32,
}

impl Lists {
    /// Built every substep, holding the neighbours within h.
    pub const EVERY_SUBSTEP: Self = Self {
        depth: LIST_DEPTH,
        reuse: 1,
        skin: 0.0,
    };

    /// Built with a skin and reused (Verlet lists).
    pub const REUSED: Self = Self {
        depth: LIST_DEPTH,
        reuse: LIST_REUSE,
        skin: LIST_SKIN,
    };

    /// The lists for a fluid of `count` particles stepped by `solver`:
    /// the large-step solver's particles move a quarter of h a substep,
    /// past any skin, so its lists are built every substep, at the
    /// predicted positions, holding only what is within h.
    pub fn of(count: u32, solver: Solver) -> Self {
        match solver {
            Solver::Pbf => Self::EVERY_SUBSTEP,
            Solver::Wcsph => Self::for_count(count),
        }
    }

    /// The weakly compressible solver's lists for a fluid of `count`
    /// particles.
    pub fn for_count(count: u32) -> Self {
        if count < REUSED_FROM {
            Self::EVERY_SUBSTEP
        } else {
            Self::REUSED
        }
    }
}

/// The list depth for `walkers` that fits a storage buffer of `limit`
/// bytes, at most `cap`: none (every force walks the grid) where fewer
/// than eight would fit.
pub(super) fn list_depth(walkers: u32, limit: u64, cap: u32) -> u32 {
    let fits = (limit / (u64::from(walkers) * 4)).saturating_sub(LIST_HEAD);
    if fits < 8 {
        0
    } else {
        fits.min(u64::from(cap)) as u32
    }
}

/// Walkers whose lists lie side by side (`LIST_BLOCK` in fluid.wgsl).
pub(super) const LIST_BLOCK: usize = 32;
