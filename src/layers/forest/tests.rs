//! The forest simulation on the software adapter at small
//! sizes: one step's competition against the CPU reference, the tree
//! count rising then settling, layered heights, a road painted early and
//! a layer zeroed late, a picture painting the density maps.

use sylva::base::Assets;
use sylva::base::rng::Rng;
use sylva::gpu::GpuProfiler;
use sylva::gpu::compute::read_buffer;
use sylva::gpu::image::{image_texture, write_image};
use sylva::layers::forest::paint::Paint;
use sylva::layers::forest::reference::competition;
use sylva::layers::forest::sim::{ForestParams, ForestSim, Tree};
use sylva::layers::forest::species::{Species, defaults};

use crate::support;
use crate::support::Checked;

/// A forest of `size` metres (1 m a pixel), `slices` 1 m apart, each
/// density map weighting 4 slices.
fn params(size: u32, slices: u32, capacity: u32, species: &[Species]) -> ForestParams {
    ForestParams::new(
        size,
        1.0,
        slices,
        1.0,
        slices.div_ceil(4),
        4,
        capacity,
        0.12,
        0.3,
        1.0,
        7,
        species,
    )
}

/// `count` trees of random species, place and height.
fn scattered(count: usize, size: f32, species: &[Species], seed: u64) -> Vec<Tree> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let kind = rng.next_u32() % species.len() as u32;
            let position = [
                (rng.signed() * 0.5 + 0.5) * size,
                (rng.signed() * 0.5 + 0.5) * size,
            ];
            let height = (rng.signed() * 0.5 + 0.5) * species[kind as usize].max_height;
            Tree::new(position, height, kind)
        })
        .collect()
}

fn run(sim: &ForestSim, steps: usize) {
    let gpu = support::gpu();
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    for _ in 0..steps {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        sim.step(&mut encoder, &mut profiler);
        gpu.queue.submit([encoder.finish()]);
    }
}

fn forest(
    params: &ForestParams,
    species: &[Species],
    trees: &[Tree],
    density: &[f32],
) -> ForestSim {
    let gpu = support::gpu();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    ForestSim::new(&gpu, &assets, params, species, trees, density).checked("building the forest")
}

#[test]
fn one_step_of_competition_matches_the_cpu_reference() {
    let species = defaults();
    let params = params(64, 12, 256, &species);
    let trees = scattered(200, 64.0, &species, 3);
    let mut rng = Rng::new(9);
    let density: Vec<f32> = (0..3 * 64 * 64).map(|_| rng.signed() * 0.5 + 0.5).collect();
    let sim = forest(&params, &species, &trees, &density);
    run(&sim, 1);
    let gpu = support::gpu();
    let maps = sim.read_maps(&gpu).checked("reading the maps");
    let after = sim.read_trees(&gpu).checked("reading the trees");
    let (want, vitality) = competition(&params, &species, &trees, &density);
    let differ = maps.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert!(
        differ * 1000 <= want.len(),
        "{differ} of {} pixels owned differently",
        want.len()
    );
    let owned = want.iter().filter(|&&p| p != 0).count();
    assert!(owned > want.len() / 10, "the cones cover the maps: {owned}");
    let mut compared = 0;
    for (id, (tree, r)) in after.iter().zip(&vitality).enumerate() {
        if tree.position != trees[id].position {
            // It died and a seed took its slot: the reference must agree
            // it had too little light.
            assert!(*r < params.r1, "tree {id} died with R {r} on the CPU");
            continue;
        }
        compared += 1;
        assert!(
            (tree.vitality - r).abs() <= 0.02,
            "tree {id}: R {} on the GPU, {r} on the CPU",
            tree.vitality
        );
    }
    assert!(compared >= 100, "{compared} trees compared");
}

/// Live trees every `every` steps for `steps` steps.
fn census(sim: &ForestSim, steps: usize, every: usize) -> Vec<u32> {
    let gpu = support::gpu();
    (0..steps / every)
        .map(|_| {
            run(sim, every);
            sim.read_state(&gpu).checked("reading the counts")[1]
        })
        .collect()
}

#[test]
fn the_tree_count_rises_then_settles_into_layers() {
    let species = defaults();
    let params = params(96, 20, 20_000, &species);
    let mut trees = scattered(60, 96.0, &species, 5);
    for tree in &mut trees {
        tree.height = 0.5;
    }
    let density = vec![1.0; 5 * 96 * 96];
    let sim = forest(&params, &species, &trees, &density);
    let counts = census(&sim, 400, 20);
    eprintln!("live trees every 20 steps: {counts:?}");
    let peak = counts.iter().copied().max().unwrap_or(0);
    assert!(peak > 60 * 4, "the forest spreads: peak {peak}");
    let tail = &counts[counts.len() - 6..];
    let mean = tail.iter().map(|&c| f64::from(c)).sum::<f64>() / tail.len() as f64;
    for &c in tail {
        assert!(
            (f64::from(c) - mean).abs() <= 0.2 * mean,
            "settles: {tail:?}"
        );
    }
    // Each layer's trees crowd near their species' height: the layered
    // structure.
    let gpu = support::gpu();
    let slots = sim.read_trees(&gpu).checked("reading the trees");
    let live_slots: Vec<u32> = (0..slots.len() as u32)
        .filter(|&i| slots[i as usize].alive == 1)
        .collect();
    assert_eq!(
        sim.read_draw_list(&gpu).checked("reading the draw list"),
        live_slots,
        "the drawing instances exactly the live trees"
    );
    let alive: Vec<Tree> = slots.into_iter().filter(|t| t.alive == 1).collect();
    let mut layered = 0;
    for (index, kind) in species.iter().enumerate() {
        let own: Vec<&Tree> = alive.iter().filter(|t| t.species == index as u32).collect();
        let near_top = own
            .iter()
            .filter(|t| t.height >= 0.8 * kind.max_height)
            .count();
        eprintln!(
            "{}: {} trees, {near_top} near {} m",
            kind.name,
            own.len(),
            kind.max_height
        );
        if own.len() >= 10 && near_top * 3 >= own.len() {
            layered += 1;
        }
    }
    assert!(layered >= 2, "at least two layers stand at their heights");
}

#[test]
fn a_road_painted_early_stays_empty_and_a_layer_zeroed_late_spares_the_tall() {
    let species = defaults();
    let size = 64;
    let params = params(size, 20, 10_000, &species);
    let mut trees = scattered(300, 64.0, &species, 11);
    for tree in &mut trees {
        tree.height = 0.5;
    }
    let area = (size * size) as usize;
    let in_band = |t: &Tree| (28.0..36.0).contains(&t.position[1]);
    // A band zeroed in the lowest map from the start: a road.
    let mut density = vec![1.0; 5 * area];
    for y in 28..36 {
        for x in 0..size as usize {
            density[y * size as usize + x] = 0.0;
        }
    }
    let sim = forest(&params, &species, &trees, &density);
    run(&sim, 120);
    let gpu = support::gpu();
    let standing: Vec<Tree> = sim
        .read_trees(&gpu)
        .checked("reading the trees")
        .into_iter()
        .filter(|t| t.alive == 1 && t.age > 0.0)
        .collect();
    let on_road = standing.iter().filter(|t| in_band(t)).count();
    eprintln!("{} trees standing, {on_road} on the road", standing.len());
    assert!(
        standing.len() > 50,
        "a forest around the road: {}",
        standing.len()
    );
    assert_eq!(on_road, 0, "no tree grows on the road");
    // The same band zeroed only once trees have grown: those above the
    // lowest map's 4 m stay, the low ones go.
    let full = vec![1.0; 5 * area];
    let late = forest(&params, &species, &trees, &full);
    run(&late, 120);
    let before: Vec<Tree> = late.read_trees(&gpu).checked("reading the trees");
    let tall_before = before
        .iter()
        .filter(|t| t.alive == 1 && in_band(t) && t.height > 8.0)
        .count();
    late.set_density(&gpu, &density);
    run(&late, 5);
    let after: Vec<Tree> = late.read_trees(&gpu).checked("reading the trees");
    let tall_after = after
        .iter()
        .filter(|t| t.alive == 1 && in_band(t) && t.height > 8.0)
        .count();
    let low_after = after
        .iter()
        .filter(|t| {
            // Low trees whose cones lie wholly inside the band (margins of
            // their widest cross-section below 3 m).
            let inside = (30.5..33.5).contains(&t.position[1]);
            t.alive == 1 && inside && t.height < 3.0 && t.age > 0.0
        })
        .count();
    eprintln!("tall in the band: {tall_before} -> {tall_after}, low after: {low_after}");
    assert!(
        tall_before > 3,
        "tall trees stood in the band: {tall_before}"
    );
    assert!(
        tall_after * 10 >= tall_before * 8,
        "the tall are spared: {tall_before} -> {tall_after}"
    );
    assert_eq!(low_after, 0, "the low ones are gone");
}

/// A small forest show folder with `extra` preset lines and `files`.
pub fn forest_show(name: &str, extra: &str, files: &[(&str, &[u8])]) -> std::path::PathBuf {
    let preset = format!(
        "layers = [\"forest\"]\n[params]\n\"forest.map_size\" = 64\n\"forest.initial_trees\" = 300\n\"forest.capacity\" = 4000\n\"forest.years_per_step\" = 2.0\n\"forest.auto_rotate\" = 0.0\n{extra}"
    );
    let root = support::show_folder(name, &[("presets/f.toml", preset.as_str())]);
    for (path, bytes) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(&root)).checked("making a folder");
        std::fs::write(&path, bytes).checked("writing a test file");
    }
    root
}

/// A target of `size` for `show`'s frames.
pub fn output(show: &sylva::show::Show, size: [u32; 2]) -> sylva::gpu::RenderTarget {
    sylva::gpu::RenderTarget::new(
        &show.ground.gpu.device,
        "forest.output",
        size,
        sylva::gpu::OUTPUT_FORMAT,
    )
}

/// A grey PNG of `size` pixels, 0 in rows `band`, 255 elsewhere.
fn road_png(size: u32, band: std::ops::Range<u32>) -> Vec<u8> {
    let image = image::GrayImage::from_fn(size, size, |_, y| {
        image::Luma([if band.contains(&y) { 0 } else { 255 }])
    });
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .checked("encoding a PNG");
    bytes
}

fn live_trees(show: &sylva::show::Show) -> f64 {
    let report = show.layers()[0].report(&show.ground.gpu);
    report
        .iter()
        .find(|(n, _)| n == "trees")
        .map_or(0.0, |(_, v)| *v)
}

#[test]
fn the_default_forest_matches_its_golden_image() {
    let root = forest_show("forest_golden", "", &[]);
    let image = crate::golden::render_project(root.clone(), "f", [192, 108], 30);
    crate::golden::check_golden("src/layers/forest/golden/forest_small_192x108.png", &image);
    let maps = forest_show("forest_golden_maps", "\"forest.view\" = \"maps\"\n", &[]);
    let image = crate::golden::render_project(maps.clone(), "f", [192, 108], 30);
    crate::golden::check_golden("src/layers/forest/golden/forest_maps_192x108.png", &image);
    std::fs::remove_dir_all(root).ok();
    std::fs::remove_dir_all(maps).ok();
}

#[test]
fn a_density_map_saved_while_it_grows_carves_a_road_and_a_bad_one_is_reported() {
    let root = forest_show(
        "forest_painted",
        "\"forest.density_maps\" = \"ground.png\"\n",
        &[("assets/ground.png", &road_png(64, 0..64))],
    );
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [32, 32]);
    let mut frame =
        |show: &mut sylva::show::Show| show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    for _ in 0..10 {
        frame(&mut show);
    }
    assert_eq!(
        live_trees(&show),
        0.0,
        "an all-black ground map lets nothing grow"
    );
    // Painted over in the paint program: white but for a band, a road.
    std::fs::write(root.join("assets/ground.png"), road_png(64, 28..36)).checked("saving the map");
    // Nothing was left to reseed the ground: sow again; the saved map is
    // read before the next step and the seedlings grow off the road.
    show.apply(sylva::command::Command::Reseed("forest".into()))
        .checked("reseeding");
    for _ in 0..6 {
        frame(&mut show);
    }
    assert!(
        live_trees(&show) > 50.0,
        "the saved map was read: {} trees",
        live_trees(&show)
    );
    // Saved while it grows, a map is decoded on its own thread: it is
    // reported a few frames later, and no frame waits for it.
    std::fs::write(root.join("assets/ground.png"), b"not a png").checked("breaking the map");
    let reported = |show: &sylva::show::Show| {
        show.ground
            .errors
            .snapshot()
            .iter()
            .any(|e| e.message.contains("assets/ground.png"))
    };
    for _ in 0..200 {
        if reported(&show) {
            break;
        }
        frame(&mut show);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(reported(&show), "{:?}", show.ground.errors.snapshot());
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_density_map_too_large_to_use_is_refused_from_its_header() {
    // The hardening probe: an 89 KB 1-bit 22000 x 22000 PNG named five
    // times gave 2.5 GB and no frame for 34 s, and no error.
    let bomb = support::png_header_only(22_000, 22_000);
    let root = forest_show(
        "forest_bomb",
        "\"forest.density_maps\" = \"bomb.png,bomb.png,bomb.png,bomb.png,bomb.png\"\n",
        &[("assets/bomb.png", &bomb)],
    );
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [32, 32]);
    for _ in 0..3 {
        let started = std::time::Instant::now();
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
        assert!(
            // A stall guard (the bomb held a frame 34 s), not a speed: a
            // loaded machine's software adapter may take several seconds.
            started.elapsed().as_secs() < 20,
            "a frame took {:?}",
            started.elapsed()
        );
    }
    let shown = support::error_messages(&show);
    assert!(
        shown
            .iter()
            .any(|m| m.contains("assets/bomb.png: 22000 x 22000 pixels")),
        "{shown:?}"
    );
    assert!(live_trees(&show) > 0.0, "the forest grows on full maps");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn the_brush_clears_what_it_paints_and_export_writes_csv() {
    let root = forest_show(
        "forest_brush",
        "\"forest.brush\" = true\n\"forest.brush_radius\" = 1000.0\n\"forest.brush_value\" = 0.0\n",
        &[],
    );
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [32, 32]);
    for _ in 0..12 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    assert_eq!(
        live_trees(&show),
        0.0,
        "a brush over the whole ground clears it"
    );
    let out = support::out_dir().join("forest.csv");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["export", "forest", "--steps", "20", "--out"])
        .arg(&out)
        .args(["--project"])
        .arg(&root)
        .args(["--preset", "f"])
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .checked("running sylva export forest");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&out).checked("reading the CSV");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("x,y,species,height,age"));
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() > 100, "{} trees", rows.len());
    assert!(rows.iter().all(|r| r.split(',').count() == 5));
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_picture_paints_the_density_maps_it_is_asked_to_towards_its_brightness() {
    let gpu = support::gpu();
    let species = defaults();
    let params = params(16, 12, 64, &species);
    let sim = forest(&params, &species, &[], &vec![0.5; 3 * 16 * 16]);
    // A picture 8 x 4: its left half white, its right half black.
    let (texture, view) = image_texture(
        &gpu,
        "paint.picture",
        [8, 4],
        wgpu::TextureFormat::Rgba8Unorm,
    );
    let rgba: Vec<u8> = (0..32)
        .flat_map(|i| if i % 8 < 4 { [255; 4] } else { [0, 0, 0, 255] })
        .collect();
    write_image(&gpu, &texture, &rgba);
    // The second map only, half way there.
    sim.painter.set(&gpu, &Paint::new(1, 2, 0.5));
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    sim.painter
        .encode(&gpu, &mut encoder, &mut profiler, &view, 16 * 16);
    gpu.queue.submit([encoder.finish()]);
    let density: Vec<f32> =
        read_buffer(&gpu, &sim.density, 3 * 16 * 16).checked("reading the maps");
    for (i, value) in density.iter().enumerate() {
        let (map, x) = (i / 256, i % 16);
        if map == 1 && (7..=8).contains(&x) {
            // The linear sampler blends the two halves here.
            continue;
        }
        let want = match (map, x < 8) {
            (1, true) => 0.75,
            (1, false) => 0.25,
            _ => 0.5,
        };
        assert!(
            (value - want).abs() < 1e-3,
            "map {map} cell {i}: {value}, expected {want}"
        );
    }
}

/// The forest's report after three frames seen from `distance`, as a
/// lookup of its counts by name.
fn counted_from(
    show: &mut sylva::show::Show,
    output: &mut sylva::gpu::RenderTarget,
    distance: f32,
) -> impl Fn(&str) -> u32 {
    use sylva::params::{Source, Value};
    show.registry
        .set_now("forest.camera_distance", Value::Float(distance), Source::Ui)
        .checked("moving the camera");
    for _ in 0..3 {
        show.frame(1.0 / 30.0, None, output, |_, _| {});
    }
    let gpu = show.ground.gpu.clone();
    let report: std::collections::HashMap<String, f64> =
        show.layers()[0].report(&gpu).into_iter().collect();
    move |name: &str| report.get(name).copied().checked(name) as u32
}

#[test]
fn culling_draws_near_trees_whole_far_ones_as_silhouettes_and_tiny_ones_not_at_all() {
    let root = forest_show("forest_culled", "", &[]);
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [192, 108]);
    let mut drawn_at = |show: &mut sylva::show::Show, distance: f32| {
        let count = counted_from(show, &mut output, distance);
        (
            count("trees"),
            count("trees_drawn_whole"),
            count("trees_drawn_as_silhouettes"),
        )
    };
    let (alive, near, far) = drawn_at(&mut show, 1.0);
    assert!(alive > 100, "{alive} trees");
    assert!(near + far <= alive, "{near} + {far} drawn of {alive}");
    assert!(near + far > alive / 4, "{near} + {far} drawn of {alive}");
    let (alive, near_close, _) = drawn_at(&mut show, 0.15);
    assert!(
        near_close > near && near_close <= alive,
        "closer, more trees are drawn whole: {near} then {near_close} of {alive}"
    );
    let (alive, near_far, far_far) = drawn_at(&mut show, 10_000.0);
    assert_eq!(
        (near_far, far_far),
        (0, 0),
        "from far away every tree is under a pixel ({alive} alive)"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn impostors_drawn_by_compute_give_every_pixel_they_keep_to_a_tree() {
    let root = forest_show("forest_impostor_pixels", "", &[]);
    // One walk with 64-bit atomics (the software adapter has them), two
    // walks on a device without them: the same pixels kept, each claimed.
    let devices = [
        ("one walk", support::gpu()),
        ("two walks", support::gpu_without_wide_atomics()),
    ];
    let mut kept_by = Vec::new();
    for (walks, gpu) in devices {
        let options = sylva::show::ShowOptions::new(root.clone(), "f");
        let mut show = support::start_on_device(gpu, options, sylva::gpu::OUTPUT_FORMAT);
        let mut output = output(&show, [192, 108]);
        let mut pixels_at = |show: &mut sylva::show::Show, distance: f32| {
            let count = counted_from(show, &mut output, distance);
            (count("impostor_pixels"), count("impostor_pixels_unclaimed"))
        };
        let (kept, unclaimed) = pixels_at(&mut show, 1.0);
        assert!(
            kept > 192 * 108 / 10,
            "{walks}: the impostors' leaves cover {kept} of {} pixels",
            192 * 108
        );
        assert_eq!(
            unclaimed, 0,
            "{walks}: pixels of leaves no tree claimed, of {kept}"
        );
        let (kept_close, unclaimed) = pixels_at(&mut show, 0.3);
        assert_eq!(unclaimed, 0, "{walks}, closer: unclaimed of {kept_close}");
        assert_eq!(
            pixels_at(&mut show, 10_000.0),
            (0, 0),
            "{walks}: from far away every tree is under a pixel"
        );
        kept_by.push((kept, kept_close));
    }
    assert_eq!(
        kept_by[0], kept_by[1],
        "one walk and two keep the same pixels"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn rain_raises_the_density_where_it_fell_and_the_ground_dries_elsewhere() {
    use sylva::engine::world::{RAIN_SIDE, World};
    use sylva::layers::forest::rain::{RainSoak, Soak};
    let gpu = support::gpu();
    let species = defaults();
    let params = params(64, 8, 256, &species);
    let maps = params.density_maps as usize;
    let density = vec![0.3f32; maps * 64 * 64];
    let sim = forest(&params, &species, &[], &density);
    let world = World::default();
    let rain = world.rain(&gpu);
    // Forty landings on every rain cell of the map's left half, rows 0..64.
    let side = RAIN_SIDE as usize;
    let mut counts = vec![0u32; side * side];
    for y in 0..64 {
        for x in 0..side / 2 {
            counts[y * side + x] = 40;
        }
    }
    gpu.queue
        .write_buffer(&rain, 0, bytemuck::cast_slice(&counts));
    let soak = RainSoak::new(
        &gpu,
        &Assets::new(env!("CARGO_MANIFEST_DIR")),
        &sim.params_buffer,
        &sim.density,
        &rain,
    )
    .checked("building the soak");
    soak.set(&gpu, &Soak::new(0.0001, 0.5, 0.1));
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    soak.encode(&mut encoder, &mut profiler, 64 * 64);
    gpu.queue.submit([encoder.finish()]);
    let after: Vec<f32> =
        read_buffer(&gpu, &sim.density, density.len()).checked("reading the density");
    // The 64-pixel map spans the 256-cell rain map: a pixel covers 4x4
    // cells; rows 0..64 of the rain are the map's top 16 rows.
    let at = |map: usize, x: usize, y: usize| after[map * 64 * 64 + y * 64 + x];
    let wet = 0.3 * (1.0 - 0.05) + 16.0 * 40.0 * 0.0001;
    let dry = 0.3 * (1.0 - 0.05);
    for map in 0..maps {
        assert!((at(map, 5, 5) - wet).abs() < 1e-4, "wet: {}", at(map, 5, 5));
        assert!(
            (at(map, 50, 5) - dry).abs() < 1e-4,
            "dry: {}",
            at(map, 50, 5)
        );
        assert!(
            (at(map, 5, 40) - dry).abs() < 1e-4,
            "dry: {}",
            at(map, 5, 40)
        );
    }
    let left: Vec<u32> = read_buffer(&gpu, &rain, side * side).checked("reading the rain map");
    assert!(
        left.iter().all(|&c| c == 0),
        "the rain map is cleared once drunk"
    );
}
