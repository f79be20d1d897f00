//! The fluid's white water (spray, foam and bubbles): what each particle
//! throws up against the f64 reference, a dam break's white water held in
//! its tank and dying out once no more is thrown, and each kind moving as
//! its neighbourhood makes it.

use sylva::base::Assets;
use sylva::gpu::GpuProfiler;
use sylva::layers::fluid::lists::Lists;
use sylva::layers::fluid::reference::{white_water_expected, white_water_normals};
use sylva::layers::fluid::scene::{StartingState, block};
use sylva::layers::fluid::sim::{FluidSim, Solver};
use sylva::layers::fluid::white_water::{WhiteState, WhiteWater, WhiteWaterParams};

use super::{listing, small_block};
use crate::support;
use crate::support::Checked;

/// Spray rate the tests step with unless they say.
const SPRAY: f32 = 1.0;
/// Mean life (seconds) the tests step with unless they say.
const LIFE: f32 = 4.0;

/// The fluid of `scene` on the large step with `capacity` white slots.
fn throwing(scene: &StartingState, capacity: u32) -> (FluidSim, sylva::engine::world::World) {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let (mut sim, world) = listing(scene, &assets, Lists::EVERY_SUBSTEP);
    sim.throw_white_water(&gpu, &assets, capacity)
        .checked("building the white water");
    sim.set_iterations(4);
    (sim, world)
}

fn white(sim: &FluidSim) -> &WhiteWater {
    match &sim.white_water {
        Some(white) => white,
        None => panic!("the fluid was built without white water"),
    }
}

/// One frame of `substeps` substeps, then the white water's step over
/// `seconds` (the time they simulated, as the layer runs it) at `spray`
/// with lives of `life`.
fn frame(sim: &FluidSim, substeps: u32, seconds: f32, spray: f32, life: f32) {
    let gpu = support::gpu();
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    white(sim).set_step(&gpu, seconds, spray, life);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    sim.steps(&mut encoder, &mut profiler, substeps);
    white(sim).record(&mut encoder, &mut profiler);
    gpu.queue.submit([encoder.finish()]);
}

fn state(sim: &FluidSim) -> WhiteState {
    white(sim)
        .read(&support::gpu())
        .checked("reading the white water")
}

/// The small block without gravity, its lattice at rest density, moving
/// as `velocity` says of each particle's offset from the block's centre,
/// its substep so short that the particles stay where the grid sorted
/// them (a white particle's walk over a grid the water has since moved
/// through may miss a neighbour; the reference walks no grid).
fn moving_block(velocity: impl Fn(usize, [f32; 3]) -> [f32; 3]) -> StartingState {
    let mut scene = small_block(false, 0.0).solved_by(Solver::Pbf);
    scene.params.gravity = [0.0; 3];
    scene.params.dt = 1e-5;
    let n = scene.positions.len() as f32;
    let centre: [f32; 3] = [0, 1, 2].map(|k| scene.positions.iter().map(|p| p[k]).sum::<f32>() / n);
    for (i, (p, v)) in scene
        .positions
        .iter()
        .zip(&mut scene.velocities)
        .enumerate()
    {
        let [x, y, z] = velocity(i, [0, 1, 2].map(|k| p[k] - centre[k]));
        *v = [x, y, z, 0.0];
    }
    scene
}

#[test]
fn what_each_particle_throws_up_matches_the_f64_reference() {
    let gpu = support::gpu();
    // Stirred, every neighbour rushing at its own speed: trapped air;
    // blown apart from its centre, the surface moving outward: crests.
    let stirred = moving_block(|i, _| {
        let s = i as f32 * 0.37;
        [3.0 * s.sin(), 3.0 * s.cos(), 3.0 * (s * 1.7).sin()]
    });
    let blown = moving_block(|_, offset| offset.map(|c| 30.0 * c));
    for (name, scene) in [("stirred", stirred), ("blown apart", blown)] {
        let (sim, _world) = throwing(&scene, 200_000);
        frame(&sim, 1, 1.0 / 60.0, SPRAY, LIFE);
        let (positions, velocities) = sim.read_particles(&gpu).checked("reading the particles");
        let (densities, _, _) = sim.read_forces(&gpu).checked("reading the densities");
        let white_state = state(&sim);
        let params = scene.params.with_kernel();
        let step = WhiteWaterParams::new(200_000, 1.0 / 60.0, 0, SPRAY, LIFE);
        let normals = white_water_normals(&positions, &velocities, &densities, &params, &step);
        let mut miscounted = 0;
        for (i, (want, got)) in normals.iter().zip(&white_state.normals).enumerate() {
            for k in 0..3 {
                let error = (f64::from(got[k]) - want[k]).abs();
                assert!(
                    error <= 1e-3 * want[k].abs().max(1.0),
                    "{name}: particle {i}'s normal {k}: GPU {}, reference {}",
                    got[k],
                    want[k]
                );
            }
            miscounted += usize::from(f64::from(got[3]) != want[3]);
        }
        // A neighbour at h itself may fall either side in f32.
        assert!(
            miscounted * 200 <= positions.len(),
            "{name}: {miscounted} neighbour counts differ"
        );
        let expected = white_water_expected(
            &positions,
            &velocities,
            &white_state.normals,
            &params,
            &step,
        );
        let total: f64 = expected.iter().sum();
        assert!(
            total > 50.0,
            "{name}: the test throws white water ({total:.1} expected)"
        );
        let mut wrong = Vec::new();
        for (i, (want, got)) in expected.iter().zip(&white_state.thrown).enumerate() {
            // The fraction is drawn: the floor or the ceiling, at most 16.
            let slack = 1e-3 * (1.0 + want);
            let low = (want - slack).floor().clamp(0.0, 16.0);
            let high = (want + slack).ceil().clamp(0.0, 16.0);
            if !(low..=high).contains(&f64::from(*got)) {
                wrong.push((i, *want, *got));
            }
        }
        assert!(
            wrong.len() * 200 <= positions.len(),
            "{name}: {} particles threw other than the reference expects, e.g. {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(5)]
        );
        let thrown: u32 = white_state.thrown.iter().sum();
        let live = white_state.live().count();
        assert_eq!(
            live, thrown as usize,
            "{name}: every white particle thrown is placed"
        );
        let drawn = thrown as f64;
        assert!(
            (drawn - total).abs() <= 4.0 * total.sqrt() + 2.0,
            "{name}: {drawn} thrown where {total:.1} are expected"
        );
    }
}

/// A dam of about 4,000 particles in a tank 0.8 x 0.6 x 0.3 m.
fn dam() -> StartingState {
    let height = 0.36;
    let fastest = (2.0f32 * 9.81 * height).sqrt();
    let tank = [0.8, 0.6, 0.3];
    block(
        3,
        tank,
        [0.0; 3],
        [0.32, height, 0.3],
        16,
        fastest,
        9.81,
        0.05,
        3,
    )
    .solved_by(Solver::Pbf)
}

#[test]
fn a_dam_break_throws_white_water_that_stays_in_its_tank_and_dies_out() {
    let scene = dam();
    let (sim, _world) = throwing(&scene, 40_000);
    let dt = scene.params.dt;
    let substeps = ((1.0 / 60.0) / dt).round().max(1.0) as u32;
    let tank = scene.params.container;
    let mut most = 0;
    let mut kinds = [0usize; 3];
    let check = |white_state: &WhiteState, life: f32, when: &str| {
        for (p, v) in white_state.live() {
            for k in 0..3 {
                assert!(
                    (-1e-5..=tank[k] + 1e-5).contains(&p[k]),
                    "{when}: a white particle left the tank: {p:?}"
                );
            }
            assert!(
                p[3] <= life * 1.5 + 1e-4,
                "{when}: lives longer than it may: {p:?}"
            );
            assert!((0.0..=2.0).contains(&v[3]), "{when}: of no kind: {v:?}");
        }
    };
    let seconds = substeps as f32 * dt;
    // Lives of 0.6 s on average, 0.9 s at most.
    let short_life = 0.6;
    for n in 0..90 {
        frame(&sim, substeps, seconds, SPRAY, short_life);
        if n % 10 == 9 {
            let white_state = state(&sim);
            check(&white_state, short_life, &format!("frame {n}"));
            most = most.max(white_state.live().count());
            for (_, v) in white_state.live() {
                kinds[v[3].round() as usize] += 1;
            }
        }
    }
    assert!(
        most >= 50,
        "the breaking dam throws white water: at most {most} at once"
    );
    assert!(
        kinds.iter().all(|&k| k > 0),
        "spray, foam and bubbles all seen: {kinds:?}"
    );
    // Nothing more thrown: all of it dies out within its longest life.
    for _ in 0..(0.9 / seconds).ceil() as usize + 1 {
        frame(&sim, substeps, seconds, 0.0, short_life);
    }
    let white_state = state(&sim);
    check(&white_state, short_life, "after");
    assert_eq!(
        white_state.live().count(),
        0,
        "white water lives its life out"
    );
}

#[test]
fn white_particles_fly_rise_and_ride_as_their_neighbourhood_makes_them() {
    let gpu = support::gpu();
    // A pool 0.2 m deep, at rest: it throws nothing.
    let tank = [0.4, 0.5, 0.4];
    let scene =
        block(3, tank, [0.0; 3], [0.4, 0.2, 0.4], 10, 2.0, 9.81, 0.0, 4).solved_by(Solver::Pbf);
    let (sim, _world) = throwing(&scene, 1024);
    let (positions, _) = sim.read_particles(&gpu).checked("reading the pool");
    let top = positions.iter().map(|p| p[1]).fold(0.0, f32::max);
    let life = 10.0;
    // Spray high above the water, a bubble near the floor, foam on top
    // (half a spacing over the top layer: a third of a full neighbourhood).
    let foam_at = top + 0.02;
    let starts = [
        [0.2, 0.45, 0.2, life],
        [0.2, 0.05, 0.2, life],
        [0.2, foam_at, 0.2, life],
    ];
    white(&sim).write(&gpu, &starts, &[[0.0; 4]; 3]);
    let dt = scene.params.dt;
    let frames = 10;
    for _ in 0..frames {
        frame(&sim, 1, dt, SPRAY, LIFE);
    }
    let white_state = state(&sim);
    assert!(
        white_state.thrown.iter().all(|&n| n == 0),
        "still water throws nothing"
    );
    assert_eq!(white_state.live().count(), 3);
    let [spray, bubble, foam] =
        [0, 1, 2].map(|i| (white_state.positions[i], white_state.velocities[i]));
    // Spray falls freely: symplectic Euler's drop over n steps of dt.
    let n = frames as f32;
    let drop = 9.81 * dt * dt * n * (n + 1.0) / 2.0;
    assert!(
        (spray.0[1] - (0.45 - drop)).abs() < 1e-4,
        "spray at {} falling from 0.45, {drop} expected",
        spray.0[1]
    );
    assert_eq!(spray.1[3], 0.0, "spray");
    assert!(
        bubble.0[1] > 0.05 + 0.005 && bubble.1[3] == 2.0,
        "a bubble rises: {bubble:?}"
    );
    let drift =
        ((foam.0[0] - 0.2).powi(2) + (foam.0[1] - foam_at).powi(2) + (foam.0[2] - 0.2).powi(2))
            .sqrt();
    assert!(
        foam.1[3] == 1.0 && drift < 0.01,
        "foam rides still water: {foam:?}"
    );
    for (p, _) in [spray, bubble, foam] {
        assert!(
            (p[3] - (life - n * dt)).abs() < 1e-4,
            "each lives dt a frame less: {p:?}"
        );
    }
}
