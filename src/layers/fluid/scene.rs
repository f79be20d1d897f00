//! Starting states for the fluid: a block of particles on a lattice in a
//! container (the show's tank, the dam break's water column, a hydrostatic
//! tank), with parameters derived this way: spacing dx, mass
//! calibrated to the rest density, h = 2 dx, stiffness from a sound speed
//! ten times the fastest flow, and a time step within the CFL limit.

use super::sim::{FluidParams, Solver, calibrated_mass, pbf_denominator};
use crate::base::rng::Rng;

/// Particles and parameters ready to upload.
#[derive(Debug, Clone)]
pub struct StartingState {
    /// xyz, w = 1.
    pub positions: Vec<[f32; 4]>,
    /// Zero at start.
    pub velocities: Vec<[f32; 4]>,
    /// Parameters.
    pub params: FluidParams,
    /// Particle spacing.
    pub dx: f32,
    /// The fastest flow it was made for, m/s.
    pub fastest: f32,
    /// The solver its time step is for ([`StartingState::solved_by`]).
    pub solver: Solver,
}

/// The large-step solver's relaxation, a share of its constraint's
/// gradient norm (the paper's epsilon: it softens the projection where a
/// particle has few neighbours).
const RELAXATION: f32 = 0.05;

/// Its tensile term at close range, as the multiplier of this much
/// compression: enough to keep particles from pairing up, not so much that
/// the surface bulges.
const TENSILE: f32 = 0.002;

/// Its XSPH viscosity, the share of the neighbourhood's velocity a
/// particle takes each substep (the paper's c; with the walls' mirror
/// particles moving against the water, 0.1 holds the dam break's front to
/// Koshizuka and Oka within 5%, 0.01 let it run 9% ahead).
pub const XSPH: f32 = 0.1;

/// Its vorticity confinement, times sqrt(g h), m/s.
pub const VORTICITY: f32 = 0.05;

/// Its time step, in smoothing lengths at the fastest flow: particles may
/// move a quarter of a smoothing length (half a spacing) a substep. The
/// density error at rest goes with the square of it over the iterations
/// (a tank 1 m deep at five iterations: 0.62% mean, 2.0% largest; at half
/// a smoothing length and four, 3.7% and 11%).
const LARGE_STEP: f32 = 0.25;

impl StartingState {
    /// The scene as `solver` steps it: the large-step solver's time step
    /// bounded by the flow, not by the speed of sound.
    pub fn solved_by(mut self, solver: Solver) -> Self {
        if solver == Solver::Pbf {
            self.params.dt = LARGE_STEP * self.params.h / self.fastest.max(0.1);
        }
        self.solver = solver;
        self
    }
}

/// A block `block` (size per axis) of fluid at `origin` in a container,
/// `across` particles along the block's x, for a flow as fast as `speed`.
pub fn block(
    dimensions: u32,
    container: [f32; 3],
    origin: [f32; 3],
    block: [f32; 3],
    across: u32,
    speed: f32,
    gravity: f32,
    jitter: f32,
    seed: u64,
) -> StartingState {
    let dx = block[0] / across as f32;
    // Whole spacings along each axis, but never more than fit between the
    // block's origin and the far wall: a layer closer to a wall than half
    // a spacing sits on its own mirror image and starts with a pressure
    // shock (a million particles in the default tank had one at the back).
    let counts = [0, 1, 2].map(|k| {
        if k == 2 && dimensions == 2 {
            1
        } else {
            let room = ((container[k] - origin[k]) / dx + 1e-3).floor() as u32;
            ((block[k] / dx).round() as u32).min(room).max(1)
        }
    });
    let mut rng = Rng::new(seed);
    let mut positions = Vec::with_capacity((counts[0] * counts[1] * counts[2]) as usize);
    for z in 0..counts[2] {
        for y in 0..counts[1] {
            for x in 0..counts[0] {
                let mut p = [x, y, z].map(|c| (c as f32 + 0.5) * dx);
                for (k, c) in p.iter_mut().enumerate() {
                    *c += origin[k] + jitter * dx * rng.signed();
                }
                if dimensions == 2 {
                    p[2] = 0.0;
                }
                positions.push([p[0], p[1], p[2], 1.0]);
            }
        }
    }
    let rest_density = 1000.0;
    let h = 2.0 * dx;
    let sound = 10.0 * speed.max(0.1);
    let params = FluidParams {
        gravity: [0.0, -gravity, 0.0],
        h,
        container: if dimensions == 2 {
            [container[0], container[1], 0.0]
        } else {
            container
        },
        mass: calibrated_mass(
            dimensions,
            f64::from(dx),
            f64::from(h),
            f64::from(rest_density),
        ) as f32,
        rest_density,
        stiffness: rest_density * sound * sound / 7.0,
        // Monaghan's artificial viscosity alpha = 0.02 as a dynamic viscosity.
        viscosity: 0.1 * rest_density * h * sound / 8.0,
        dt: 0.25 * h / sound,
        wall_stiffness: sound * sound / (h * 0.5),
        dimensions,
        count: positions.len() as u32,
        ..Default::default()
    };
    let denominator = pbf_denominator(
        dimensions,
        f64::from(dx),
        f64::from(h),
        f64::from(params.mass),
        f64::from(rest_density),
    ) as f32;
    let params = FluidParams {
        pbf: [
            RELAXATION * denominator,
            TENSILE / denominator,
            XSPH,
            VORTICITY * (gravity * h).sqrt(),
        ],
        ..params
    };
    let velocities = vec![[0.0; 4]; positions.len()];
    StartingState {
        positions,
        velocities,
        params,
        dx,
        fastest: speed.max(0.1),
        solver: Solver::Wcsph,
    }
}
