//! One SPH substep's densities and accelerations on the CPU in f64, brute
//! force over every pair, one iteration of the large-step solver's
//! multipliers and moves, and the white water's normals and what each
//! particle throws up: the references the GPU's grid versions are held
//! to.

use super::sim::{FluidParams, coefficients};

/// Density and pressure, and acceleration, of every particle.
pub fn densities_and_accelerations(
    positions: &[[f32; 4]],
    velocities: &[[f32; 4]],
    p: &FluidParams,
) -> (Vec<[f64; 2]>, Vec<[f64; 3]>) {
    let (poly6, spiky, laplacian) = coefficients(p.dimensions, f64::from(p.h));
    let (h, m) = (f64::from(p.h), f64::from(p.mass));
    let position = |i: usize| [0, 1, 2].map(|k| f64::from(positions[i][k]));
    let velocity = |i: usize| [0, 1, 2].map(|k| f64::from(velocities[i][k]));
    let n = positions.len();
    let densities: Vec<[f64; 2]> = (0..n)
        .map(|i| {
            let x = position(i);
            let sum: f64 = (0..n)
                .map(|j| {
                    let y = position(j);
                    let r2: f64 = (0..3).map(|k| (y[k] - x[k]).powi(2)).sum();
                    if r2 < h * h {
                        (h * h - r2).powi(3)
                    } else {
                        0.0
                    }
                })
                .sum();
            let rho = (m * poly6 * sum).max(1e-6);
            let pressure =
                f64::from(p.stiffness) * ((rho / f64::from(p.rest_density)).powi(7) - 1.0).max(0.0);
            [rho, pressure]
        })
        .collect();
    let accelerations = (0..n)
        .map(|i| {
            let (x, v) = (position(i), velocity(i));
            let mut pressure = [0.0; 3];
            let mut viscous = [0.0; 3];
            for j in (0..n).filter(|j| *j != i) {
                let y = position(j);
                let d = [y[0] - x[0], y[1] - x[1], y[2] - x[2]];
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                if r >= h || r < 1e-9 {
                    continue;
                }
                let w = h - r;
                let u = velocity(j);
                for k in 0..3 {
                    pressure[k] += spiky * m * (densities[i][1] + densities[j][1]) * 0.5
                        / densities[j][0]
                        * w
                        * w
                        / r
                        * d[k];
                    viscous[k] += laplacian * m / densities[j][0] * w * (u[k] - v[k]);
                }
            }
            let mut a = [0.0; 3];
            for k in 0..3 {
                a[k] = (pressure[k] + f64::from(p.viscosity) * viscous[k]) / densities[i][0]
                    + f64::from(p.gravity[k]);
                let walls = if p.dimensions == 2 { 2 } else { 3 };
                if k < walls {
                    a[k] += f64::from(p.wall_stiffness) * (-x[k]).max(0.0);
                    a[k] -=
                        f64::from(p.wall_stiffness) * (x[k] - f64::from(p.container[k])).max(0.0);
                }
            }
            if p.dimensions == 2 {
                a[2] = 0.0;
            }
            a
        })
        .collect();
    (densities, accelerations)
}

/// One Position Based Fluids iteration over `positions` (the predicted
/// ones, no wall within h): each particle's density and multiplier
/// lambda = -max(C, 0) / (|grad C|^2 + epsilon), and the move
/// (m / rho0) sum_j (lambda_i + lambda_j + s_corr) grad W_ij it makes.
pub fn pbf_multipliers_and_moves(
    positions: &[[f32; 4]],
    p: &FluidParams,
) -> (Vec<[f64; 2]>, Vec<[f64; 3]>) {
    let (poly6, spiky, _) = coefficients(p.dimensions, f64::from(p.h));
    let (h, m, rho0) = (f64::from(p.h), f64::from(p.mass), f64::from(p.rest_density));
    let position = |i: usize| [0, 1, 2].map(|k| f64::from(positions[i][k]));
    let n = positions.len();
    // (d from i to j, r) for every neighbour j of i within h.
    let near = |i: usize| {
        let x = position(i);
        (0..n).filter(move |j| *j != i).filter_map(move |j| {
            let y = position(j);
            let d = [y[0] - x[0], y[1] - x[1], y[2] - x[2]];
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            (r < h && r > 1e-9).then_some((j, d, r))
        })
    };
    let multipliers: Vec<[f64; 2]> = (0..n)
        .map(|i| {
            let mut sum = h.powi(6);
            let mut gradient = [0.0; 3];
            let mut squares = 0.0;
            for (_, d, r) in near(i) {
                sum += (h * h - r * r).powi(3);
                let g = m / rho0 * spiky * (h - r).powi(2) / r;
                for k in 0..3 {
                    gradient[k] += g * d[k];
                }
                squares += (m / rho0 * spiky * (h - r).powi(2)).powi(2);
            }
            let rho = (m * poly6 * sum).max(1e-6);
            let stiffness = gradient.iter().map(|g| g * g).sum::<f64>() + squares;
            let lambda = -(rho / rho0 - 1.0).max(0.0) / (stiffness + f64::from(p.pbf[0]));
            [rho, lambda]
        })
        .collect();
    let moves = (0..n)
        .map(|i| {
            let mut moved = [0.0; 3];
            for (j, d, r) in near(i) {
                let ratio = (h * h - r * r) / (0.96 * h * h);
                let tensile = -f64::from(p.pbf[1]) * ratio.powi(12);
                let share = multipliers[i][1] + multipliers[j][1] + tensile;
                for k in 0..3 {
                    moved[k] -= spiky * m / rho0 * share * (h - r).powi(2) / r * d[k];
                }
            }
            if p.dimensions == 2 {
                moved[2] = 0.0;
            }
            moved
        })
        .collect();
    (multipliers, moves)
}

/// White water's colour-field gradient times h of every live particle
/// fast enough to throw any (the spiky kernel's, over the neighbours
/// within h: outward at the surface, near 0 inside) and its neighbours
/// (w), as `white_normals` finds them; zero for the others.
pub fn white_water_normals(
    positions: &[[f32; 4]],
    velocities: &[[f32; 4]],
    densities: &[[f32; 2]],
    p: &FluidParams,
    white: &super::white_water::WhiteWaterParams,
) -> Vec<[f64; 4]> {
    let (_, spiky, _) = coefficients(p.dimensions, f64::from(p.h));
    let (h, m) = (f64::from(p.h), f64::from(p.mass));
    let position = |i: usize| [0, 1, 2].map(|k| f64::from(positions[i][k]));
    (0..positions.len())
        .map(|i| {
            let mut normal = [0.0; 4];
            let v = velocities[i];
            let energy = 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if positions[i][3] == 0.0 || energy <= white.energy[0] {
                return normal;
            }
            let x = position(i);
            for j in neighbours_of(positions, i, h) {
                let y = position(j);
                let d = [y[0] - x[0], y[1] - x[1], y[2] - x[2]];
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                let share = m / f64::from(densities[j][0]) * spiky * (h - r).powi(2) / r;
                for k in 0..3 {
                    normal[k] += share * d[k] * h;
                }
                normal[3] += 1.0;
            }
            normal
        })
        .collect()
}

/// White particles each particle is expected to throw up in a frame
/// (Ihmsen et al. 2012, as `white_emit` has it): its trapped air and
/// wave crest (over `normals`, as the GPU found them), each clamped
/// between its bounds, weighted by its rate and clamped kinetic energy,
/// times the frame's step.
pub fn white_water_expected(
    positions: &[[f32; 4]],
    velocities: &[[f32; 4]],
    normals: &[[f32; 4]],
    p: &FluidParams,
    white: &super::white_water::WhiteWaterParams,
) -> Vec<f64> {
    let h = f64::from(p.h);
    let clamp = |value: f64, [low, high]: [f32; 2]| {
        ((value - f64::from(low)) / f64::from(high - low).max(1e-6)).clamp(0.0, 1.0)
    };
    let vector = |v: &[f32; 4]| [0, 1, 2].map(|k| f64::from(v[k]));
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let unit = |a: [f64; 3]| {
        let length = dot(a, a).sqrt();
        a.map(|c| c / length)
    };
    (0..positions.len())
        .map(|i| {
            let v = vector(&velocities[i]);
            let energy = clamp(0.5 * dot(v, v), white.energy);
            if positions[i][3] == 0.0 || energy == 0.0 {
                return 0.0;
            }
            let mine = vector(&normals[i]);
            let surface = dot(mine, mine).sqrt() > 0.5;
            let n = if surface { unit(mine) } else { [0.0; 3] };
            let x = vector(&positions[i]);
            let (mut trapped, mut curvature) = (0.0, 0.0);
            for j in neighbours_of(positions, i, h) {
                let y = vector(&positions[j]);
                let d = [y[0] - x[0], y[1] - x[1], y[2] - x[2]];
                let r = dot(d, d).sqrt();
                let weight = 1.0 - r / h;
                let u = vector(&velocities[j]);
                let relative = [v[0] - u[0], v[1] - u[1], v[2] - u[2]];
                let rushing = dot(relative, relative).sqrt();
                if rushing > 1e-6 {
                    let away = d.map(|c| -c / r);
                    trapped += rushing * (1.0 - dot(relative, away) / rushing) * weight;
                }
                let theirs = vector(&normals[j]);
                if surface && dot(theirs, theirs).sqrt() > 0.5 && dot(d, n) < 0.0 {
                    curvature += (1.0 - dot(n, unit(theirs))) * weight;
                }
            }
            let outward = surface && dot(unit(v), n) >= 0.6;
            let crest = if outward { curvature } else { 0.0 };
            let rate = f64::from(white.rates[0]) * clamp(trapped, white.trapped_air)
                + f64::from(white.rates[1]) * clamp(crest, white.crest);
            rate * energy * f64::from(white.dt)
        })
        .collect()
}

/// The live particles within h of particle `i`, brute force.
fn neighbours_of(positions: &[[f32; 4]], i: usize, h: f64) -> impl Iterator<Item = usize> + '_ {
    let x = positions[i];
    (0..positions.len()).filter(move |&j| {
        let y = positions[j];
        let r2: f64 = (0..3)
            .map(|k| (f64::from(y[k]) - f64::from(x[k])).powi(2))
            .sum();
        j != i && y[3] != 0.0 && r2 < h * h && r2 >= 1e-18
    })
}
