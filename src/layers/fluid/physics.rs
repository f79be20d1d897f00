//! The fluid's physics as numbers: the parameter block both solvers read
//! (`struct FluidParams` in `shaders/fluid/fluid.wgsl`), which solver steps
//! it, and the constants derived on the CPU from a particle spacing: the
//! kernels' coefficients, the mass that gives the rest density, the
//! large-step solver's gradient norm at rest.

use bytemuck::{Pod, Zeroable};

/// `struct FluidParams` in `shaders/fluid/fluid.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct FluidParams {
    /// Gravity, m/s^2.
    pub gravity: [f32; 3],
    /// Smoothing length.
    pub h: f32,
    /// Container size (from the origin).
    pub container: [f32; 3],
    /// Particle mass.
    pub mass: f32,
    /// Rest density.
    pub rest_density: f32,
    /// Tait stiffness B.
    pub stiffness: f32,
    /// Viscosity mu.
    pub viscosity: f32,
    /// Substep length, s.
    pub dt: f32,
    /// Penalty wall stiffness, 1/s^2.
    pub wall_stiffness: f32,
    /// 2 or 3.
    pub dimensions: u32,
    /// Particles.
    pub count: u32,
    /// Changes every substep (emitter randomness).
    pub seed: u32,
    /// Interaction point 0: xyz, radius.
    pub point0: [f32; 4],
    /// Interaction point 1: xyz, radius.
    pub point1: [f32; 4],
    /// Strengths of the points in x and y.
    pub push: [f32; 4],
    /// Emitter: xyz, radius (0 = off).
    pub emitter: [f32; 4],
    /// Emitter velocity xyz, share of dead particles revived per substep in
    /// w (from `fluid.emitter_rate`, a share a second).
    pub emitter_velocity: [f32; 4],
    /// Sink: xyz, radius (0 = off).
    pub sink: [f32; 4],
    /// Kernel constants for h: poly6, spiky gradient, viscosity Laplacian,
    /// h^2; filled in by [`FluidSim`](super::sim::FluidSim) from `h` and `dimensions`.
    pub kernel: [f32; 4],
    /// The large-step solver's: its relaxation (the paper's epsilon, a
    /// share of [`pbf_denominator`]), the tensile term's scale, XSPH
    /// viscosity, vorticity confinement (m/s).
    pub pbf: [f32; 4],
}

/// Which solver a fluid steps with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Solver {
    /// Weakly compressible SPH: Tait's pressure, a substep
    /// bounded by the speed of sound (ten times the fastest flow).
    #[default]
    Wcsph,
    /// Position Based Fluids (Macklin and Mueller 2013): the density
    /// constraint projected by Jacobi iterations, a substep bounded by the
    /// flow alone.
    Pbf,
}

impl Solver {
    /// `fluid.solver`'s names, in order.
    pub const NAMES: [&'static str; 2] = ["wcsph", "pbf"];

    /// The solver called `name`.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "wcsph" => Some(Self::Wcsph),
            "pbf" => Some(Self::Pbf),
            _ => None,
        }
    }

    /// `SOLVER` in `shaders/fluid/fluid.wgsl`.
    pub(super) fn constant(self) -> f64 {
        match self {
            Self::Wcsph => 0.0,
            Self::Pbf => 1.0,
        }
    }
}

impl FluidParams {
    /// These parameters with `kernel` computed for their h.
    pub fn with_kernel(mut self) -> Self {
        let (poly6, spiky, laplacian) = coefficients(self.dimensions, f64::from(self.h));
        self.kernel = [
            poly6 as f32,
            spiky as f32,
            laplacian as f32,
            self.h * self.h,
        ];
        self
    }
}

/// The SPH kernels' constants for `dimensions` and `h`, as in the WGSL.
pub fn coefficients(dimensions: u32, h: f64) -> (f64, f64, f64) {
    let pi = std::f64::consts::PI;
    if dimensions == 2 {
        (
            4.0 / (pi * h.powi(8)),
            -30.0 / (pi * h.powi(5)),
            20.0 / (3.0 * pi * h.powi(5)),
        )
    } else {
        (
            315.0 / (64.0 * pi * h.powi(9)),
            -45.0 / (pi * h.powi(6)),
            45.0 / (pi * h.powi(6)),
        )
    }
}

/// `term(r)` added up over the lattice points of spacing `dx` within `h`
/// of one of them (r: the distance to it, 0 for itself), in the plane
/// or in space.
fn lattice_sum(dimensions: u32, dx: f64, h: f64, term: impl Fn(f64) -> f64) -> f64 {
    let reach = (h / dx).ceil() as i64;
    let z_range = if dimensions == 2 {
        0..=0
    } else {
        -reach..=reach
    };
    let mut sum = 0.0;
    for z in z_range {
        for y in -reach..=reach {
            for x in -reach..=reach {
                let r = ((x * x + y * y + z * z) as f64).sqrt() * dx;
                if r < h {
                    sum += term(r);
                }
            }
        }
    }
    sum
}

/// The particle mass that gives `rest_density` inside a lattice of spacing
/// `dx` with smoothing length `h` (the kernel sum over the lattice).
pub fn calibrated_mass(dimensions: u32, dx: f64, h: f64, rest_density: f64) -> f64 {
    let (poly6, ..) = coefficients(dimensions, h);
    let sum = lattice_sum(dimensions, dx, h, |r| (h * h - r * r).powi(3));
    rest_density / (poly6 * sum)
}

/// The large-step solver's constraint gradient norm for a particle with a
/// full neighbourhood at rest, (m / rho0)^2 times the sum of |grad W|^2
/// (Spiky) over a lattice of spacing `dx` with smoothing length `h` (the
/// scale its relaxation and tensile term are set against, so they hold at
/// any spacing).
pub fn pbf_denominator(dimensions: u32, dx: f64, h: f64, mass: f64, rest_density: f64) -> f64 {
    let (_, spiky, _) = coefficients(dimensions, h);
    let sum = lattice_sum(dimensions, dx, h, |r| {
        if r > 0.0 {
            (spiky * (h - r).powi(2)).powi(2)
        } else {
            0.0
        }
    });
    (mass / rest_density).powi(2) * sum
}

/// The large-step solver's iterations a substep at most.
pub const MAX_ITERATIONS: u32 = 16;
