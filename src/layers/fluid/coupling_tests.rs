//! The couplings of the fluid with the rest of the scene, with either
//! solver: sinks and emitters, a body swept through the water, rain counted
//! where the water lands, and branches standing in it.

use sylva::base::Assets;
use sylva::layers::fluid::scene::block;
use sylva::layers::fluid::sim::{FluidSim, Solver};

use super::{SOLVERS, in_world, raining, run, upload};
use crate::support;
use crate::support::Checked;

#[test]
fn a_sink_drains_and_an_emitter_pours() {
    for solver in SOLVERS {
        sink_and_emitter(solver);
    }
}

fn sink_and_emitter(solver: Solver) {
    let gpu = support::gpu();
    let mut scene = block(
        2,
        [1.0, 1.0, 0.0],
        [0.0, 0.0, 0.0],
        [0.4, 0.4, 0.0],
        20,
        3.0,
        9.81,
        0.0,
        3,
    )
    .solved_by(solver);
    let sim = upload(&scene);
    let alive = |sim: &FluidSim| -> usize {
        let (positions, _) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
        positions.iter().filter(|p| p[3] != 0.0).count()
    };
    scene.params.sink = [0.1, 0.1, 0.0, 0.15];
    sim.set_params(&gpu, &scene.params);
    run(&sim, 20);
    let drained = alive(&sim);
    assert!(
        drained < scene.positions.len(),
        "{solver:?}: the sink drained: {drained} of {}",
        scene.positions.len()
    );
    scene.params.sink = [0.0; 4];
    scene.params.emitter = [0.7, 0.7, 0.0, 0.05];
    scene.params.emitter_velocity = [0.0, -1.0, 0.0, 0.5];
    for seed in 0..20 {
        scene.params.seed = seed;
        sim.set_params(&gpu, &scene.params);
        run(&sim, 1);
    }
    assert!(
        alive(&sim) > drained,
        "{solver:?}: the emitter poured the drained particles back"
    );
}

/// The particles of a 2D tank after a capsule `radius` wide swept through
/// it from x = 0.25 to 0.75 over `frames` frames (when `solid`), with the
/// capsule where it ended and the water's mean x velocity while the
/// capsule crossed the first half of its way.
fn swept(
    solver: Solver,
    solid: bool,
    frames: usize,
    radius: f32,
) -> (Vec<[f32; 4]>, [glam::Vec3; 2], f32) {
    use sylva::engine::bodies;
    use sylva::engine::world::Capsule;
    let gpu = support::gpu();
    let scene = block(
        2,
        [1.0, 1.0, 0.0],
        [0.0, 0.0, 0.0],
        [1.0, 0.4, 0.0],
        40,
        3.0,
        9.81,
        0.0,
        7,
    )
    .solved_by(solver);
    let sim = upload(&scene);
    let substeps = 4;
    let frame_dt = scene.params.dt * substeps as f32;
    let ends = |frame: usize| {
        let x = 0.25 + 0.5 * frame as f32 / frames as f32;
        [glam::Vec3::new(x, 0.12, 0.0), glam::Vec3::new(x, 0.55, 0.0)]
    };
    // The scene's frame is the tank's own.
    let tank = glam::Mat4::IDENTITY;
    let mut momentum = 0.0;
    for frame in 1..=frames {
        let [a, b] = ends(frame);
        let [then_a, then_b] = ends(frame - 1);
        let capsule = Capsule::moving(a, b, radius, Some((then_a, then_b)), frame_dt);
        let capsules = if solid { vec![capsule] } else { Vec::new() };
        sim.set_bodies(
            &gpu,
            &bodies::block(&capsules, tank, true, 0.2, scene.dx * 0.5, 0, false),
        );
        run(&sim, substeps);
        // The water's momentum across the tank while the body crosses its
        // first half, before the far wall throws the water back: a sum over
        // all of it and over frames, steadier than any splash (the SPH's
        // grid order, and with it each splash, varies from run to run).
        if frame <= frames / 2 {
            let (positions, velocities) = sim.read_particles(&gpu).checked("reading the water");
            let live = positions.iter().filter(|p| p[3] != 0.0).count().max(1);
            let across: f32 = positions
                .iter()
                .zip(&velocities)
                .filter(|(p, _)| p[3] != 0.0)
                .map(|(_, v)| v[0])
                .sum();
            momentum += across / live as f32 / (frames / 2) as f32;
        }
    }
    let (positions, _) = sim.read_particles(&gpu).checked("reading the water");
    (positions, ends(frames), momentum)
}

/// Distance from particle `p` to the segment from `a` to `b`.
fn to_axis(p: &[f32; 4], a: glam::Vec3, b: glam::Vec3) -> f32 {
    let p = glam::Vec3::new(p[0], p[1], p[2]);
    let axis = b - a;
    let t = ((p - a).dot(axis) / axis.length_squared()).clamp(0.0, 1.0);
    (p - (a + axis * t)).length()
}

#[test]
fn water_never_stays_inside_a_moving_body_and_is_swept_along() {
    for solver in SOLVERS {
        swept_along(solver);
    }
}

fn swept_along(solver: Solver) {
    let radius = 0.06;
    let (positions, [a, b], pushed) = swept(solver, true, 40, radius);
    let inside: Vec<(f32, [f32; 4])> = positions
        .iter()
        .filter(|p| p[3] != 0.0 && to_axis(p, a, b) < radius - 1e-3)
        .map(|p| (to_axis(p, a, b), *p))
        .collect();
    assert!(
        inside.is_empty(),
        "{solver:?}: particles inside the body (radius {radius}, axis {a}..{b}) after its sweep: {inside:?}"
    );
    let (unswept, _, still) = swept(solver, false, 40, radius);
    let would_be = unswept
        .iter()
        .filter(|p| p[3] != 0.0 && to_axis(p, a, b) < radius - 1e-3)
        .count();
    assert!(
        would_be > 5,
        "{solver:?}: without the body, water fills its place: {would_be}"
    );
    // The body sweeps to the right: the water goes its way.
    assert!(
        pushed > still + 0.1,
        "{solver:?}: the body sweeps the water along: {pushed} m/s across against {still} without it"
    );
}

#[test]
fn water_falling_on_the_floor_is_counted_as_rain_where_it_lands() {
    for solver in SOLVERS {
        counted_as_rain(solver);
    }
}

fn counted_as_rain(solver: Solver) {
    use sylva::engine::bodies;
    use sylva::engine::world::RAIN_SIDE;
    use sylva::gpu::compute::read_buffer;
    let gpu = support::gpu();
    // A column of water above the left quarter of the floor, falling.
    let scene = block(
        2,
        [1.0, 1.0, 0.0],
        [0.1, 0.5, 0.0],
        [0.15, 0.3, 0.0],
        10,
        3.0,
        9.81,
        0.0,
        5,
    )
    .solved_by(solver);
    let (sim, rain) = raining(&scene, &Assets::new(env!("CARGO_MANIFEST_DIR")));
    // The scene's frame is the tank's own.
    let tank = glam::Mat4::IDENTITY;
    sim.set_bodies(
        &gpu,
        &bodies::block(&[], tank, true, 0.2, 0.0, RAIN_SIDE, false),
    );
    // Long enough to fall half a metre and land.
    run(&sim, (0.5 / scene.params.dt).ceil() as usize);
    let counts: Vec<u32> =
        read_buffer(&gpu, &rain, (RAIN_SIDE * RAIN_SIDE) as usize).checked("reading the rain");
    let row = (RAIN_SIDE / 2 * RAIN_SIDE) as usize;
    let landed: u32 = counts.iter().sum();
    let under: u32 = counts[row..row + (RAIN_SIDE as usize) / 2].iter().sum();
    assert!(landed > 20, "{solver:?}: {landed} landings counted");
    assert!(
        counts[..row]
            .iter()
            .chain(&counts[row + RAIN_SIDE as usize..])
            .all(|&c| c == 0),
        "a flat tank's floor is the rain map's middle row"
    );
    // The splash off the floor spreads some landings right: over starts
    // a thousandth of a cell apart, 77 to 93% land under the column's half.
    assert!(
        under * 4 >= landed * 3,
        "{solver:?}: {under} of {landed} landings under the falling water's half of the floor"
    );
}

#[test]
fn water_never_stays_inside_a_branch_standing_in_the_scene() {
    for solver in SOLVERS {
        kept_out_of_branches(solver);
    }
}

fn kept_out_of_branches(solver: Solver) {
    use sylva::engine::bodies;
    use sylva::engine::world::Capsule;
    let gpu = support::gpu();
    let scene = block(
        2,
        [1.0, 1.0, 0.0],
        [0.0; 3],
        [1.0, 0.4, 0.0],
        40,
        3.0,
        9.81,
        0.0,
        7,
    )
    .solved_by(solver);
    // A branch across the water, given in the scene, where the tank
    // stands 10 m aside: the block brings it into the tank's frame.
    let offset = glam::Vec3::new(10.0, 0.0, 5.0);
    let (a, b) = (
        glam::Vec3::new(0.3, 0.2, 0.0),
        glam::Vec3::new(0.7, 0.2, 0.0),
    );
    let radius = 0.06;
    let inside_after = |standing: bool| {
        let (sim, world) = in_world(&scene, &Assets::new(env!("CARGO_MANIFEST_DIR")));
        // Behind 149 branches elsewhere in the scene (the old limit met 64).
        let elsewhere = glam::Vec3::new(-5.0, 0.0, 0.0);
        let mut standing_ones: Vec<Capsule> = (0..149)
            .map(|k| {
                let along = glam::Vec3::new(0.0, k as f32 * 0.01, 0.0);
                Capsule::moving(elsewhere + along, elsewhere + along + a, radius, None, 0.0)
            })
            .collect();
        standing_ones.push(Capsule::moving(a + offset, b + offset, radius, None, 0.0));
        let written = bodies::branches_block(&standing_ones);
        gpu.queue.write_buffer(&world.branches(&gpu), 0, &written);
        let tank = glam::Mat4::from_translation(offset);
        let margin = scene.dx * 0.5;
        let block = bodies::block(&[], tank, true, 0.2, margin, 0, standing);
        sim.set_bodies(&gpu, &block);
        run(&sim, 200);
        let (positions, _) = sim.read_particles(&gpu).checked("reading the water");
        let inside = |p: &&[f32; 4]| p[3] != 0.0 && to_axis(p, a, b) < radius - 1e-3;
        positions.iter().filter(inside).count()
    };
    let (with, without) = (inside_after(true), inside_after(false));
    assert_eq!(with, 0, "{solver:?}: particles inside the standing branch");
    assert!(
        without > 10,
        "{solver:?}: without it the water fills its place: {without}"
    );
}
