//! The fluid layer against its f64 CPU reference, its invariants under
//! extreme parameters, and the dam break.

use sylva::base::{Assets, ChangedFile, Folder};
use sylva::engine::simulation::Simulation;
use sylva::gpu::GpuProfiler;
use sylva::layers::fluid::lists::Lists;
use sylva::layers::fluid::scene::{StartingState, block};
use sylva::layers::fluid::sim::{FluidSim, Solver};

use crate::support;
use crate::support::Checked;

#[path = "coupling_tests.rs"]
mod coupling_tests;
#[path = "glow_tests.rs"]
mod glow_tests;
#[path = "list_tests.rs"]
mod list_tests;
#[path = "pbf_tests.rs"]
mod pbf_tests;
#[path = "white_water_tests.rs"]
mod white_water_tests;

fn upload(scene: &StartingState) -> FluidSim {
    upload_from(scene, &Assets::new(env!("CARGO_MANIFEST_DIR")))
}

/// The fluid of `scene` with its kernels read from `assets`.
fn upload_from(scene: &StartingState, assets: &Assets) -> FluidSim {
    raining(scene, assets).0
}

/// The same, and the rain map its landings are counted in.
fn raining(scene: &StartingState, assets: &Assets) -> (FluidSim, wgpu::Buffer) {
    let (sim, world) = in_world(scene, assets);
    (sim, world.rain(&support::gpu()))
}

/// The fluid of `scene` and the world whose rain map and branches it binds.
fn in_world(scene: &StartingState, assets: &Assets) -> (FluidSim, sylva::engine::world::World) {
    let lists = Lists::of(scene.positions.len() as u32, scene.solver);
    listing(scene, assets, lists)
}

/// The same with neighbour lists kept as `lists` says.
fn listing(
    scene: &StartingState,
    assets: &Assets,
    lists: Lists,
) -> (FluidSim, sylva::engine::world::World) {
    let gpu = support::gpu();
    let world = sylva::engine::world::World::default();
    let sim = FluidSim::with_lists(
        &gpu,
        assets,
        &scene.positions,
        &scene.velocities,
        &scene.params,
        scene.solver,
        &world.rain(&gpu),
        &world.branches(&gpu),
        lists,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (sim, world)
}

fn run(sim: &FluidSim, steps: usize) {
    let gpu = support::gpu();
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    for chunk in 0..steps.div_ceil(50) {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        sim.steps(
            &mut encoder,
            &mut profiler,
            (steps - chunk * 50).min(50) as u32,
        );
        gpu.queue.submit([encoder.finish()]);
    }
}

/// A block of about 2000 particles (3D, or `flat`: 2D), away from the
/// walls, its lattice jittered by `jitter` spacings.
fn small_block(flat: bool, jitter: f32) -> StartingState {
    let (dimensions, depth, across) = if flat { (2, 0.0, 40) } else { (3, 1.0, 12) };
    let [low, side] = if flat { [0.0, 0.3] } else { [0.2, 0.24] };
    block(
        dimensions,
        [1.0, 1.0, depth],
        [0.2, 0.1, low],
        [side, 0.3, side * depth],
        across,
        2.0,
        9.81,
        jitter,
        5,
    )
}

/// That block compressed and stirred: pressures and viscous forces are
/// all non-zero.
fn stirred_block(flat: bool) -> StartingState {
    let mut scene = small_block(flat, 0.3);
    for (i, v) in scene.velocities.iter_mut().enumerate() {
        let s = i as f32 * 0.37;
        let z = if flat { 0.0 } else { (s * 1.7).sin() };
        *v = [s.sin(), s.cos(), z, 0.0];
    }
    scene.params.mass *= 1.05;
    scene
}

/// The 3D one.
fn stirred() -> StartingState {
    stirred_block(false)
}

/// The solvers the couplings are tested with.
const SOLVERS: [Solver; 2] = [Solver::Wcsph, Solver::Pbf];

#[test]
fn the_grid_order_is_a_permutation_and_mass_is_conserved() {
    let gpu = support::gpu();
    let scene = stirred();
    let sim = upload(&scene);
    run(&sim, 20);
    let (_, _, order) = sim.read_forces(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let mut seen = vec![false; order.len()];
    for &i in &order {
        assert!(!seen[i as usize], "particle {i} twice");
        seen[i as usize] = true;
    }
    let (positions, _) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        positions.iter().filter(|p| p[3] != 0.0).count(),
        scene.positions.len(),
        "no particle lost"
    );
}

#[test]
fn extreme_parameters_never_let_a_particle_escape_or_go_nan() {
    let gpu = support::gpu();
    let mut scene = block(
        2,
        [1.0, 1.0, 0.0],
        [0.1, 0.1, 0.0],
        [0.5, 0.5, 0.0],
        30,
        3.0,
        9.81,
        0.1,
        9,
    );
    let sim = upload(&scene);
    for (stiffness, dt, gravity) in [(1e9, 0.01, -1000.0), (0.0, 1e-5, 0.0), (1e4, 0.05, 500.0)] {
        scene.params.stiffness = stiffness;
        scene.params.dt = dt;
        scene.params.gravity = [gravity * 0.3, gravity, 0.0];
        scene.params.viscosity = 1e6;
        sim.set_params(&gpu, &scene.params);
        run(&sim, 350);
    }
    let (positions, velocities) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
    for (p, v) in positions.iter().zip(&velocities) {
        assert!(
            p.iter().chain(v.iter()).all(|c| c.is_finite()),
            "NaN: {p:?} {v:?}"
        );
        assert!(
            (0.0..=1.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1]),
            "escaped: {p:?}"
        );
    }
}

/// The coarse dam break (20 particles across) follows Koshizuka and Oka
/// within 20% and reaches the far wall, with either solver (the large
/// step at the iterations the shows use).
#[test]
fn the_coarse_dam_break_follows_koshizuka_and_oka() {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    for (solver, iterations) in [(Solver::Wcsph, 1), (Solver::Pbf, pbf_tests::SHIPPED)] {
        let result =
            sylva::layers::fluid::validate::dam_break(&gpu, &assets, 20, solver, iterations)
                .unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "{:?}: coarse dam break: mean deviation {:.1}%",
            solver,
            result.mean_deviation * 100.0
        );
        assert!(
            result.mean_deviation <= 0.20,
            "{:?}: {:?}",
            solver,
            result.curve
        );
        let last = result.curve.last().map_or(0.0, |(_, z, _)| *z);
        assert!(
            last > 3.0,
            "{:?}: the surge reaches the far side: {:?}",
            solver,
            result.curve
        );
    }
}

#[test]
fn the_dam_break_reference_is_the_published_curve() {
    let path = support::asset("reference/dam_break_koshizuka_oka.json");
    let text = std::fs::read_to_string(&path).checked("reading the reference");
    let json: serde_json::Value = serde_json::from_str(&text).checked("parsing the reference");
    let published: Vec<(f64, f64)> = json["data"]
        .as_array()
        .checked("the reference's data")
        .iter()
        .map(|point| {
            (
                point[0].as_f64().checked("T"),
                point[1].as_f64().checked("Z"),
            )
        })
        .collect();
    assert_eq!(
        published,
        sylva::layers::fluid::validate::KOSHIZUKA_OKA.to_vec()
    );
}

/// The fluid layer's own target after `frames` frames of the small 2D
/// tank (`tests/fixtures`) with `settings`; the show reported no error.
fn fluid_layer(settings: &[(&str, sylva::params::Value)], frames: usize) -> Vec<[f32; 4]> {
    use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
    let mut show = support::show(support::fixtures(), "fluid_small", OUTPUT_FORMAT);
    for (name, value) in settings {
        let set = show
            .registry
            .set_now(name, value.clone(), sylva::params::Source::Ui);
        set.checked("setting a test value");
    }
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "fluid.output",
        [96, 64],
        OUTPUT_FORMAT,
    );
    for _ in 0..frames {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    }
    let errors = show.ground.errors.snapshot();
    assert!(errors.is_empty(), "{settings:?}: {errors:?}");
    let target = show
        .compositor()
        .layer_target("fluid")
        .map(|t| read_rgba16f(&show.ground.gpu, t));
    let Some(Ok(texels)) = target else {
        panic!("{settings:?}: no layer target");
    };
    texels
}

#[test]
fn both_looks_draw_the_liquid() {
    use sylva::params::Value;
    for look in ["surface", "particles"] {
        let texels = fluid_layer(&[("fluid.render", Value::Text(look.into()))], 3);
        let covered = texels.iter().filter(|t| t[3] > 0.0).count();
        assert!(
            covered > texels.len() / 50 && covered < texels.len(),
            "{look}: {covered} of {} pixels",
            texels.len()
        );
    }
}

#[test]
fn streaks_draw_moving_particles_along_their_motion() {
    use sylva::params::Value;
    // The same falling block (a small tank, in slow motion), its glows drawn
    // as discs and as streaks of 0.4 s of motion: the streaks cover more.
    let covered = |streak: f32| {
        let settings = [
            ("fluid.render", Value::Text("particles".into())),
            ("fluid.streak", Value::Float(streak)),
        ];
        let texels = fluid_layer(&settings, 40);
        texels.iter().filter(|t| t[3] > 0.01).count()
    };
    let (discs, streaks) = (covered(0.0), covered(0.4));
    assert!(
        streaks as f64 > discs as f64 * 1.15,
        "{streaks} pixels with streaks, {discs} with discs"
    );
}

/// Mean vertical velocity of the particles.
fn mean_vy(sim: &FluidSim) -> f32 {
    let (_, velocities) = sim
        .read_particles(&support::gpu())
        .unwrap_or_else(|e| panic!("{e}"));
    velocities.iter().map(|v| v[1]).sum::<f32>() / velocities.len().max(1) as f32
}

#[test]
fn a_saved_kernel_changes_the_running_fluid_and_a_broken_one_keeps_it() {
    let original = include_str!("../../../shaders/fluid/force.wgsl");
    let gravity = "+ params.gravity +";
    assert!(
        original.contains(gravity),
        "force.wgsl no longer adds gravity"
    );
    let root = support::show_folder("live_kernel", &[("shaders/fluid/force.wgsl", original)]);
    let assets = Assets::new(&root);
    let gpu = support::gpu();
    let scene = block(
        3,
        [1.0, 1.0, 1.0],
        [0.3, 0.5, 0.3],
        [0.2, 0.2, 0.2],
        8,
        0.0,
        9.81,
        0.1,
        3,
    );
    let mut sim = upload_from(&scene, &assets);
    run(&sim, 40);
    let falling = mean_vy(&sim);
    assert!(falling < -0.05, "the block falls first: {falling}");

    let flipped = original.replace(gravity, "- params.gravity +");
    let path = root.join("shaders/fluid/force.wgsl");
    std::fs::write(&path, flipped).unwrap_or_else(|e| panic!("{e}"));
    let changed = [ChangedFile {
        folder: Folder::Shaders,
        name: "fluid/force.wgsl".into(),
    }];
    let (before, _) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let report = sim.reload(&gpu, &assets, &changed);
    assert_eq!(
        (report.rebuilt, report.errors.len()),
        (1, 0),
        "{:?}",
        report.errors
    );
    let (after, _) = sim.read_particles(&gpu).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(before, after, "the particles stay as they were");
    run(&sim, 40);
    let rising = mean_vy(&sim);
    assert!(
        rising > falling + 0.1,
        "gravity reversed: {falling} -> {rising}"
    );

    std::fs::write(&path, "fn broken( {").unwrap_or_else(|e| panic!("{e}"));
    let report = sim.reload(&gpu, &assets, &changed);
    assert_eq!(report.rebuilt, 0);
    let error = report.errors.join("\n");
    assert!(error.contains("shaders/fluid/force.wgsl:1:"), "{error}");
    run(&sim, 40);
    let still_rising = mean_vy(&sim);
    assert!(
        still_rising > 0.05,
        "the last good (reversed) kernel runs on: {rising} -> {still_rising}"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn the_random_stream_moves_on_every_substep() {
    let sim = upload(&stirred());
    // Ten substeps recorded in one frame share the frame's parameters; the
    // GPU's own substep count is what moves the emitter's random stream.
    run(&sim, 10);
    let counted = sim
        .substeps_run(&support::gpu())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counted, 10);
}

#[test]
fn a_small_fluid_matches_its_golden_image() {
    // Half a second: the grid sort's order within a cell is the GPU's, so
    // float sums may round differently from run to run; over this many
    // substeps that stays far below the tolerance.
    let image = crate::golden::render_project(support::fixtures(), "fluid_small", [192, 108], 30);
    crate::golden::check_golden("src/layers/fluid/golden/fluid_small_192x108.png", &image);
}

#[test]
fn a_small_position_based_fluid_matches_its_golden_image() {
    // The same tank under the large-step solver: its dam half a second
    // into breaking.
    let image =
        crate::golden::render_project(support::fixtures(), "fluid_small_pbf", [192, 108], 30);
    crate::golden::check_golden(
        "src/layers/fluid/golden/fluid_small_pbf_192x108.png",
        &image,
    );
}
