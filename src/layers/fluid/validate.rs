//! `sylva validate fluid`: the 2D dam break against Koshizuka and Oka
//! (1996), and a hydrostatic tank against rho0 g (H - y). Both run the
//! same GPU simulation as the layer and read back only between stages.

use serde::Serialize;

use super::scene::{StartingState, block};
use super::sim::{FluidSim, Solver};
use crate::base::Assets;
use crate::gpu::{BuildError, Gpu, GpuProfiler};

/// Koshizuka and Oka 1996 (MPS), the digitised curve distributed with the
/// PySPH examples (`tests/assets/reference/dam_break_koshizuka_oka.json`):
/// T = t sqrt(2 g / L) against Z = front / L.
pub const KOSHIZUKA_OKA: [(f64, f64); 9] = [
    (0.0, 1.000),
    (0.381, 1.111),
    (0.769, 1.252),
    (1.153, 1.505),
    (1.537, 1.892),
    (1.935, 2.241),
    (2.323, 2.615),
    (2.719, 3.003),
    (3.096, 3.624),
];

const GRAVITY: f64 = 9.81;

/// The dam break's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct DamBreak {
    /// Particles across the column's width L.
    pub across: u32,
    /// Particles in all.
    pub particles: usize,
    /// (T, simulated Z, reference Z where the reference has a point).
    pub curve: Vec<(f64, f64, Option<f64>)>,
    /// Mean of |Z - Z_ref| / Z_ref over the reference points with T in 0.5..=3.
    pub mean_deviation: f64,
}

/// Runs the 2D dam break: a column L wide and 2L high against the left wall
/// of a tank 4L long, g = 9.81, `across` particles over L, up to T = 3.5,
/// stepped by `solver` (the large-step one with `iterations` a substep).
pub fn dam_break(
    gpu: &Gpu,
    assets: &Assets,
    across: u32,
    solver: Solver,
    iterations: u32,
) -> Result<DamBreak, BuildError> {
    let length = 1.0f32;
    let fastest = (2.0 * GRAVITY * 2.0 * f64::from(length)).sqrt() as f32;
    let scene = block(
        2,
        [4.0 * length, 3.0 * length, 0.0],
        [0.0; 3],
        [length, 2.0 * length, 0.0],
        across,
        fastest,
        GRAVITY as f32,
        0.0,
        1,
    )
    .solved_by(solver);
    let sim = upload(gpu, assets, &scene, solver, iterations)?;
    let time_scale = (2.0 * GRAVITY / f64::from(length)).sqrt();
    let mut times: Vec<f64> = KOSHIZUKA_OKA
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| *t > 0.0)
        .collect();
    times.extend((1..=14).map(|k| f64::from(k) * 0.25));
    times.sort_by(f64::total_cmp);
    times.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut clock = SubstepClock::default();
    let mut curve = Vec::new();
    for t in times {
        clock.advance_to(gpu, &sim, &scene, t / time_scale);
        let (positions, _) = sim.read_particles(gpu)?;
        let front = front(&positions, scene.params.h) / f64::from(length);
        let reference = KOSHIZUKA_OKA
            .iter()
            .find(|(rt, _)| (rt - t).abs() < 1e-9)
            .map(|(_, z)| *z);
        curve.push((t, front, reference));
    }
    let compared: Vec<f64> = curve
        .iter()
        .filter(|(t, _, r)| r.is_some() && (0.5..=3.0).contains(t))
        .filter_map(|(_, z, r)| r.map(|r| (z - r).abs() / r))
        .collect();
    Ok(DamBreak {
        across,
        particles: scene.positions.len(),
        curve,
        mean_deviation: compared.iter().sum::<f64>() / compared.len().max(1) as f64,
    })
}

/// The hydrostatic tank's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Hydrostatic {
    /// Particles.
    pub particles: usize,
    /// Seconds simulated before measuring.
    pub settled_seconds: f64,
    /// Mean over depth layers of |mean p - rho0 g (H - y)|, relative to
    /// rho0 g H, for particles deeper than 2h (the weakly compressible
    /// solver's: the large-step one has multipliers, not pressures).
    pub pressure_error: Option<f64>,
    /// Mean |rho / rho0 - 1| over the same particles and samples.
    pub density_error_mean: f64,
    /// Largest |rho / rho0 - 1| over them.
    pub density_error_max: f64,
}

/// A tank of still water 1 m deep and wide, `across` particles wide,
/// settled for `seconds`; then pressure against depth, averaged over 20
/// samples in the next half second and over layers 2 dx thick (weakly
/// compressible pressure carries acoustic noise), and the density error.
pub fn hydrostatic(
    gpu: &Gpu,
    assets: &Assets,
    across: u32,
    seconds: f64,
    solver: Solver,
    iterations: u32,
) -> Result<Hydrostatic, BuildError> {
    let depth = 1.0f32;
    let fastest = (2.0 * GRAVITY * f64::from(depth)).sqrt() as f32;
    let scene = block(
        2,
        [1.0, 1.5 * depth, 0.0],
        [0.0; 3],
        [1.0, depth, 0.0],
        across,
        fastest,
        GRAVITY as f32,
        0.0,
        1,
    )
    .solved_by(solver);
    let sim = upload(gpu, assets, &scene, solver, iterations)?;
    let mut clock = SubstepClock::default();
    clock.advance_to(gpu, &sim, &scene, seconds);
    let (rho0, h) = (
        f64::from(scene.params.rest_density),
        f64::from(scene.params.h),
    );
    let layer = 2.0 * f64::from(scene.dx);
    let mut bins: std::collections::BTreeMap<i64, (f64, f64, usize)> =
        std::collections::BTreeMap::new();
    let (mut density_sum, mut density_max, mut samples) = (0.0f64, 0.0f64, 0usize);
    let mut surface_sum = 0.0;
    for k in 1..=20 {
        clock.advance_to(gpu, &sim, &scene, seconds + 0.025 * f64::from(k));
        let (positions, _) = sim.read_particles(gpu)?;
        let (densities, _, _) = sim.read_forces(gpu)?;
        let surface = positions
            .iter()
            .map(|p| f64::from(p[1]))
            .fold(0.0, f64::max)
            + f64::from(scene.dx) * 0.5;
        surface_sum += surface;
        for (p, d) in positions.iter().zip(&densities) {
            let below = surface - f64::from(p[1]);
            if below <= 2.0 * h {
                continue;
            }
            let bin = bins.entry((below / layer) as i64).or_insert((0.0, 0.0, 0));
            *bin = (bin.0 + below, bin.1 + f64::from(d[1]), bin.2 + 1);
            let error = (f64::from(d[0]) / rho0 - 1.0).abs();
            density_sum += error;
            density_max = density_max.max(error);
            samples += 1;
        }
    }
    let scale = rho0 * GRAVITY * surface_sum / 20.0;
    let pressure_error = bins
        .values()
        .map(|(below, pressure, n)| {
            (pressure / *n as f64 - rho0 * GRAVITY * below / *n as f64).abs()
        })
        .sum::<f64>()
        / bins.len().max(1) as f64
        / scale;
    Ok(Hydrostatic {
        particles: scene.positions.len(),
        settled_seconds: seconds,
        pressure_error: (solver == Solver::Wcsph).then_some(pressure_error),
        density_error_mean: density_sum / samples.max(1) as f64,
        density_error_max: density_max,
    })
}

fn upload(
    gpu: &Gpu,
    assets: &Assets,
    scene: &StartingState,
    solver: Solver,
    iterations: u32,
) -> Result<FluidSim, BuildError> {
    // Validation measures the water alone: its rain goes nowhere, no
    // branches stand in it.
    let world = crate::engine::world::World::default();
    let sim = FluidSim::new(
        gpu,
        assets,
        &scene.positions,
        &scene.velocities,
        &scene.params,
        solver,
        &world.rain(gpu),
        &world.branches(gpu),
    )?;
    sim.set_iterations(iterations);
    Ok(sim)
}

/// Simulated time, advanced in batches of substeps.
#[derive(Default)]
struct SubstepClock {
    time: f64,
}

impl SubstepClock {
    fn advance_to(&mut self, gpu: &Gpu, sim: &FluidSim, scene: &StartingState, until: f64) {
        let dt = f64::from(scene.params.dt);
        let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
        while self.time + dt * 0.5 < until {
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            let left = ((until - self.time) / dt + 0.5).floor().max(1.0);
            let substeps = left.min(64.0) as u32;
            sim.steps(&mut encoder, &mut profiler, substeps);
            self.time += dt * f64::from(substeps);
            gpu.queue.submit([encoder.finish()]);
        }
        gpu.wait_idle();
    }
}

/// The surge front: the largest x among particles with at least three
/// neighbours within h, so lone spray does not count.
pub fn front(positions: &[[f32; 4]], h: f32) -> f64 {
    let cell = f64::from(h);
    let mut cells: std::collections::HashMap<(i64, i64), Vec<usize>> =
        std::collections::HashMap::new();
    let key = |p: &[f32; 4]| {
        (
            (f64::from(p[0]) / cell).floor() as i64,
            (f64::from(p[1]) / cell).floor() as i64,
        )
    };
    for (i, p) in positions.iter().enumerate().filter(|(_, p)| p[3] != 0.0) {
        cells.entry(key(p)).or_default().push(i);
    }
    let mut front = 0.0f64;
    for p in positions.iter().filter(|p| p[3] != 0.0) {
        let (cx, cy) = key(p);
        let mut neighbours = 0;
        for dx in -1..=1 {
            for dy in -1..=1 {
                for &j in cells
                    .get(&(cx + dx, cy + dy))
                    .map_or(&[][..], Vec::as_slice)
                {
                    let q = positions[j];
                    let r2 = (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2);
                    neighbours += usize::from(r2 > 0.0 && r2 < h * h);
                }
            }
        }
        if neighbours >= 3 {
            front = front.max(f64::from(p[0]));
        }
    }
    front
}
