//! The large-step solver (Position Based Fluids) against its f64 CPU
//! reference and the hydrostatic tank at the iterations the shows use (its
//! dam break is the weakly compressible one's test, tests.rs), a switch of
//! solver while the show runs, and the interaction points of both solvers.

use sylva::base::Assets;
use sylva::layers::fluid::lists::{LIST_DEPTH, Lists};
use sylva::layers::fluid::reference::pbf_multipliers_and_moves;
use sylva::layers::fluid::sim::Solver;
use sylva::layers::fluid::validate;

use super::{SOLVERS, listing, run, stirred, stirred_block};
use crate::support;
use crate::support::Checked;

/// The iterations a substep the shows use (`fluid.solver_iterations`).
pub(super) const SHIPPED: u32 = 5;

/// One substep of one iteration without gravity: each particle's density
/// and multiplier at its predicted position (x + v dt), and where the
/// correction moved it, as the brute-force f64 reference has them, with
/// full neighbour lists and with none (every walk over the grid), in 3D
/// and 2D.
#[test]
fn one_position_based_iteration_matches_the_f64_reference() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    for flat in [false, true] {
        let mut scene = stirred_block(flat).solved_by(Solver::Pbf);
        scene.params.gravity = [0.0; 3];
        let dt = scene.params.dt;
        let predicted: Vec<[f32; 4]> = scene
            .positions
            .iter()
            .zip(&scene.velocities)
            .map(|(x, v)| [x[0] + v[0] * dt, x[1] + v[1] * dt, x[2] + v[2] * dt, 1.0])
            .collect();
        let (want, moves) = pbf_multipliers_and_moves(&predicted, &scene.params);
        let largest_lambda = want.iter().map(|w| w[1].abs()).fold(0.0, f64::max);
        let largest_move = moves
            .iter()
            .map(|m| (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt())
            .fold(0.0, f64::max);
        let compressed = want.iter().filter(|w| w[1] < 0.0).count();
        assert!(
            compressed > 100 && largest_move > 1e-4,
            "the test exercises the constraint: {compressed} compressed, moves up to {largest_move}"
        );
        for depth in [LIST_DEPTH, 0] {
            let lists = Lists {
                depth,
                ..Lists::EVERY_SUBSTEP
            };
            let (sim, _world) = listing(&scene, &assets, lists);
            sim.set_iterations(1);
            run(&sim, 1);
            let (densities, _, order) = sim.read_forces(&gpu).checked("reading the densities");
            let (positions, _) = sim.read_particles(&gpu).checked("reading the particles");
            for (slot, &original) in order.iter().enumerate() {
                let i = original as usize;
                let (got, want) = (densities[slot], want[i]);
                let what = format!("flat {flat}, lists of {depth}, particle {i}");
                assert!(
                    (f64::from(got[0]) - want[0]).abs() / want[0] < 1e-4,
                    "{what}: density {} vs {}",
                    got[0],
                    want[0]
                );
                assert!(
                    (f64::from(got[1]) - want[1]).abs() <= 1e-3 * largest_lambda,
                    "{what}: multiplier {} vs {} (largest {largest_lambda})",
                    got[1],
                    want[1]
                );
                for k in 0..3 {
                    let moved = f64::from(positions[slot][k]) - f64::from(predicted[i][k]);
                    let error = (moved - moves[i][k]).abs();
                    assert!(
                        error <= 2e-3 * largest_move + 1e-6,
                        "{what}: moved {moved} along {k}, reference {} (largest {largest_move})",
                        moves[i][k]
                    );
                }
            }
        }
    }
}

/// A tank 1 m deep at rest stays within 1% mean and 3% largest density
/// error at the shipped iterations (the incompressibility bound; the
/// weakly compressible solver holds it by its sound speed).
#[test]
fn the_position_based_tank_at_rest_keeps_its_density() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let tank = validate::hydrostatic(&gpu, &assets, 20, 1.5, Solver::Pbf, SHIPPED)
        .checked("the hydrostatic tank");
    eprintln!(
        "position based tank at rest: density error mean {:.3}%, max {:.3}%",
        tank.density_error_mean * 100.0,
        tank.density_error_max * 100.0
    );
    assert!(tank.density_error_mean <= 0.01, "{tank:?}");
    assert!(tank.density_error_max <= 0.03, "{tank:?}");
}

/// An interaction point (the pointer's, a script's) pushes the water out
/// of its reach with either solver.
#[test]
fn an_interaction_point_pushes_the_water_away() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    for solver in SOLVERS {
        let mut scene = stirred().solved_by(solver);
        scene.velocities.iter_mut().for_each(|v| *v = [0.0; 4]);
        scene.params.gravity = [0.0; 3];
        let centre = [0.32, 0.25, 0.32];
        let radius = 0.08;
        let within = |positions: &[[f32; 4]]| {
            positions
                .iter()
                .filter(|p| {
                    p[3] != 0.0
                        && (0..3).map(|k| (p[k] - centre[k]).powi(2)).sum::<f32>()
                            < 0.25 * radius * radius
                })
                .count()
        };
        let before = within(&scene.positions);
        let (sim, _world) = listing(
            &scene,
            &assets,
            Lists::of(scene.positions.len() as u32, solver),
        );
        scene.params.point0 = [centre[0], centre[1], centre[2], radius];
        scene.params.push = [400.0, 0.0, 0.0, 0.0];
        sim.set_params(&gpu, &scene.params);
        run(&sim, (0.1 / scene.params.dt).ceil() as usize);
        let (positions, _) = sim.read_particles(&gpu).checked("reading the particles");
        let after = within(&positions);
        assert!(
            before >= 5 && after * 4 <= before,
            "{solver:?}: {before} particles near the point's centre before, {after} after"
        );
    }
}

/// `fluid.solver` switches the running tank (rebuilt once the setting has
/// rested a quarter of a second): the small tank that takes every substep
/// its frame allows (8) under the weakly compressible step (it would need
/// 73 for real time) takes the 6 real time needs under the large step,
/// and draws on with no error.
#[test]
fn the_solver_switches_while_the_show_runs() {
    use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
    use sylva::params::{Source, Value};
    use sylva::show::Show;
    let mut show = support::show(support::fixtures(), "fluid_small", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "fluid.output",
        [96, 64],
        OUTPUT_FORMAT,
    );
    let mut play = |show: &mut Show, frames: usize| {
        for _ in 0..frames {
            show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
        }
    };
    let substeps = |show: &Show| {
        show.layers()[0]
            .sampled(&show.ground.gpu)
            .into_iter()
            .find(|(figure, _)| figure == "substeps_per_frame")
            .map(|(_, value)| value)
            .checked("the fluid's substeps")
    };
    play(&mut show, 3);
    let before = substeps(&show);
    show.registry
        .set_now("fluid.solver", Value::Text("pbf".into()), Source::Ui)
        .checked("switching the solver");
    play(&mut show, 30);
    let after = substeps(&show);
    assert!(
        before >= 8.0 && (1.0..=6.0).contains(&after),
        "substeps a frame: {before} weakly compressible, {after} position based"
    );
    let errors = show.ground.errors.snapshot();
    assert!(errors.is_empty(), "{errors:?}");
}
