//! The fluid's neighbour lists against the f64 CPU reference: built every
//! substep, reused with a skin, overflowed into grid walks, and rebuilt
//! when they are old or a particle leaves its skin.

use sylva::base::Assets;
use sylva::layers::fluid::lists::{LIST_DEPTH, LIST_SKIN, Lists};
use sylva::layers::fluid::reference::densities_and_accelerations;
use sylva::layers::fluid::scene::StartingState;
use sylva::layers::fluid::sim::FluidSim;

use super::{listing, run, small_block, stirred, stirred_block};
use crate::support;

/// The stages walk the listed neighbours of every particle (full lists),
/// of some (lists of two: the others walk the grid), or of none (no
/// lists): the same forces each way, in the substep that builds the lists
/// and in the next, which reuses them (and the grid as it was sorted), or
/// builds them again (lists without a skin, as small fluids keep them).
#[test]
fn one_gpu_substep_matches_the_f64_reference() {
    let mut scene = stirred();
    // Short substeps: the stirred block's closest pairs push hard, and no
    // particle must leave its skin before the second substep.
    scene.params.dt *= 0.25;
    assert!(
        (1800..2300).contains(&scene.positions.len()),
        "{}",
        scene.positions.len()
    );
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let lists_of = |depth| Lists {
        depth,
        ..Lists::REUSED
    };
    for lists in [
        lists_of(LIST_DEPTH),
        lists_of(2),
        lists_of(0),
        Lists::EVERY_SUBSTEP,
    ] {
        let depth = lists.depth;
        let (sim, _world) = listing(&scene, &assets, lists);
        run(&sim, 1);
        let (walked, walkers) = sim.walked_unlisted(&gpu).unwrap_or_else(|e| panic!("{e}"));
        let expected = match depth {
            LIST_DEPTH => 0..1,
            2 => walkers / 10..walkers * 9 / 10,
            _ => walkers / 2..walkers + 1,
        };
        assert!(
            expected.contains(&walked),
            "lists of {depth}: {walked} of {walkers} walked the grid"
        );
        assert_matches_the_reference(&sim, &scene);
        // Without lists there is nothing to reuse: every substep sorts.
        let want = if depth == 0 || lists.reuse == 1 { 2 } else { 1 };
        assert_eq!(
            the_next_substep_matches(&sim, &scene),
            want,
            "{lists:?}: rebuilds in two substeps"
        );
    }
}

/// The same in 2D, where the lists' walls and cells have two axes.
#[test]
fn a_flat_fluid_s_reused_lists_match_the_f64_reference() {
    let mut scene = stirred_block(true);
    scene.params.dt *= 0.25;
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    for depth in [LIST_DEPTH, 2] {
        let lists = Lists {
            depth,
            ..Lists::REUSED
        };
        let (sim, _world) = listing(&scene, &assets, lists);
        run(&sim, 1);
        assert_matches_the_reference(&sim, &scene);
        assert_eq!(
            the_next_substep_matches(&sim, &scene),
            1,
            "{lists:?}: rebuilds in two substeps"
        );
    }
}

/// Runs one more substep of `sim` (which ran `scene` for some) and holds
/// it to the reference from where the last left the particles; the
/// rebuilds in all.
fn the_next_substep_matches(sim: &FluidSim, scene: &StartingState) -> u32 {
    let gpu = support::gpu();
    let (positions, velocities) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let moved = StartingState {
        positions,
        velocities,
        ..scene.clone()
    };
    run(sim, 1);
    assert_matches_the_reference(sim, &moved);
    sim.list_rebuilds(&gpu).unwrap_or_else(|e| panic!("{e}"))
}

/// The lists are rebuilt every `LIST_REUSE` substeps, and at once when a
/// particle moves half the skin: water at rest keeps them that long,
/// water stirred that fast rebuilds them every substep, and its forces
/// stay right.
#[test]
fn the_lists_are_rebuilt_when_they_are_old_or_a_particle_leaves_its_skin() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let resting = small_block(false, 0.0);
    let (sim, _world) = listing(&resting, &assets, Lists::REUSED);
    let substeps = 3 * Lists::REUSED.reuse;
    run(&sim, substeps as usize);
    let rebuilds = sim.list_rebuilds(&gpu).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rebuilds, 3, "{substeps} substeps at rest");
    let scene = stirred();
    // Half the skin in a substep, and more.
    let fast = scene.params.h * LIST_SKIN / scene.params.dt;
    let mut racing = scene.clone();
    for v in racing.velocities.iter_mut() {
        *v = [v[0] * fast, v[1] * fast, v[2] * fast, 0.0];
    }
    let (sim, _world) = listing(&racing, &assets, Lists::REUSED);
    run(&sim, 3);
    let rebuilds = the_next_substep_matches(&sim, &racing);
    assert_eq!(rebuilds, 4, "four fast substeps");
}

fn assert_matches_the_reference(sim: &FluidSim, scene: &StartingState) {
    let gpu = support::gpu();
    let (densities, accelerations, order) = sim.read_forces(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let (want_density, want_acceleration) =
        densities_and_accelerations(&scene.positions, &scene.velocities, &scene.params);
    let largest = want_acceleration
        .iter()
        .map(|a| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt())
        .fold(0.0, f64::max);
    let mut pressured = 0;
    for (slot, &original) in order.iter().enumerate() {
        let (got, want) = (densities[slot], want_density[original as usize]);
        let relative = (f64::from(got[0]) - want[0]).abs() / want[0];
        assert!(
            relative < 1e-4,
            "particle {original}: density {} vs {}",
            got[0],
            want[0]
        );
        pressured += usize::from(want[1] > 0.0);
        for k in 0..3 {
            let error =
                (f64::from(accelerations[slot][k]) - want_acceleration[original as usize][k]).abs();
            assert!(
                error <= 1e-4 * largest,
                "particle {original}: acceleration {k} off by {error} (largest {largest})"
            );
        }
    }
    assert!(
        pressured > 100,
        "the test exercises pressure: {pressured} particles under pressure"
    );
}

/// A new smoothing length rebuilds the lists at the next substep (those
/// built for a smaller h would miss neighbours), the same one keeps them.
#[test]
fn a_new_smoothing_length_rebuilds_the_lists() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let mut scene = small_block(false, 0.0);
    let (sim, _world) = listing(&scene, &assets, Lists::REUSED);
    run(&sim, 1);
    sim.set_params(&gpu, &scene.params);
    run(&sim, 1);
    scene.params.h *= 1.02;
    sim.set_params(&gpu, &scene.params);
    let rebuilds = the_next_substep_matches(&sim, &scene);
    assert_eq!(rebuilds, 2, "one substep with the old h, one with a new h");
}
