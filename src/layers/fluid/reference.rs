//! One SPH substep's densities and accelerations on the CPU in f64, brute
//! force over every pair, and one iteration of the large-step solver's
//! multipliers and moves: the references the GPU's grid versions are held
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
