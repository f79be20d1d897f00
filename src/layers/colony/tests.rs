//! The colony layer against its CPU reference, its invariants after whole
//! runs, and its picture.

use sylva::base::Assets;
use sylva::engine::camera::{OrbitCamera, camera_params};
use sylva::engine::simulation::Drawer;
use sylva::gpu::compute::read_buffer;
use sylva::gpu::{GpuProfiler, HDR_FORMAT, RenderTarget, read_rgba16f};
use sylva::layers::colony::attractors::{AttractionSource, Shape};
use sylva::layers::colony::draw::{BranchRenderer, DrawParams, NodeTransform, Style};
use sylva::layers::colony::reference::{ColonyCpu, branch_length};
use sylva::layers::colony::sim::{ColonySim, NodeInfo, StepParams};
use sylva::params::Registry;

use crate::support;
use crate::support::Checked;

/// Attractions uniform in a sphere; influence 3x their mean spacing,
/// growth and kill 1x (the bench's workload, small).
fn setup(count: u32, capacity: u32) -> (Vec<[f32; 3]>, StepParams) {
    let points = Shape {
        kind: 0,
        radius: 5.0,
    }
    .points(count, 3);
    let spacing = (4.0 / 3.0 * std::f32::consts::PI * 125.0 / count as f32).cbrt();
    let params = StepParams::new(
        3.0 * spacing,
        spacing,
        spacing,
        0.25,
        (0.5, 1.0),
        11,
        count,
        capacity,
    );
    (points, params)
}

fn gpu_run(points: &[[f32; 3]], seeds: u32, params: &StepParams, steps: usize) -> ColonySim {
    let gpu = support::gpu();
    let sim = ColonySim::new(
        &gpu,
        &Assets::new(env!("CARGO_MANIFEST_DIR")),
        points,
        seeds,
        params,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    for _ in 0..steps {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        sim.step(&mut encoder, &mut profiler);
        gpu.queue.submit([encoder.finish()]);
    }
    sim
}

#[test]
fn one_gpu_iteration_matches_the_cpu_reference() {
    let gpu = support::gpu();
    let (points, params) = setup(2000, 4096);
    let mut cpu = ColonyCpu::new(&points, 3, &params);
    // Let the roots grow a few iterations on both, then compare each step.
    for step in 1..=12 {
        cpu.step(&params);
        let sim = gpu_run(&points, 3, &params, step);
        let (nodes, info, edges) = sim.read_graph(&gpu).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(nodes.len(), cpu.nodes.len(), "step {step}: node count");
        assert_eq!(edges, cpu.edges, "step {step}: edges");
        for (i, (g, c)) in nodes.iter().zip(&cpu.nodes).enumerate() {
            for a in 0..4 {
                assert!(
                    (g[a] - c[a]).abs() < 1e-4,
                    "step {step}: node {i} differs: {g:?} vs {c:?}"
                );
            }
        }
        assert_eq!(info, cpu.info, "step {step}: node attributes");
        let active = |a: &[[f32; 4]]| a.iter().filter(|p| p[3] != 0.0).count();
        let attractors = sim.read_attractors(&gpu).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            active(&attractors),
            active(&cpu.attractors),
            "step {step}: active attractions"
        );
    }
    assert!(
        cpu.nodes.len() > 20,
        "the test grew something: {} nodes",
        cpu.nodes.len()
    );
}

#[test]
fn a_whole_run_agrees_with_the_reference_and_keeps_its_invariants() {
    let gpu = support::gpu();
    let (points, params) = setup(1000, 4096);
    let mut cpu = ColonyCpu::new(&points, 2, &params);
    let steps = 120;
    for _ in 0..steps {
        cpu.step(&params);
    }
    let sim = gpu_run(&points, 2, &params, steps);
    let (nodes, info, edges) = sim.read_graph(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let attractors = sim.read_attractors(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let count_error = (nodes.len() as f64 - cpu.nodes.len() as f64).abs() / cpu.nodes.len() as f64;
    let (gpu_length, cpu_length) = (branch_length(&nodes, &edges), cpu.branch_length());
    let length_error = (gpu_length - cpu_length).abs() / cpu_length;
    eprintln!(
        "whole run: {} vs {} nodes, length {gpu_length:.2} vs {cpu_length:.2}",
        nodes.len(),
        cpu.nodes.len()
    );
    assert!(
        count_error <= 0.02 && length_error <= 0.02,
        "count {count_error:.4}, length {length_error:.4}"
    );
    assert!(nodes.len() > 200, "grew: {}", nodes.len());

    for [a, b] in &edges {
        assert!(
            (*a as usize) < nodes.len() && (*b as usize) < nodes.len(),
            "edge joins live nodes"
        );
        assert_eq!(info[*b as usize].parent, *a as i32);
        assert_eq!(
            info[*b as usize].offset,
            info[*a as usize].offset + 1,
            "child offset = parent + 1"
        );
    }
    // Every node's tag is an attraction that pulled its parent (or, for a
    // root, the one it sits on): within reach of the node.
    let reach = params.influence + params.growth;
    for (node, info) in nodes.iter().zip(&info) {
        let tagged = points[info.tag as usize];
        let d2: f32 = (0..3).map(|k| (node[k] - tagged[k]).powi(2)).sum();
        assert!(
            d2 <= reach * reach,
            "node at {node:?} tagged with attraction {tagged:?}"
        );
    }
    let kill2 = params.kill * params.kill;
    for a in attractors.iter().filter(|a| a[3] != 0.0) {
        let near = nodes
            .iter()
            .any(|n| (0..3).map(|k| (n[k] - a[k]).powi(2)).sum::<f32>() < kill2);
        assert!(
            !near,
            "an active attraction lies within the kill distance of a node"
        );
    }
    // Run on until the attractions run out: then more iterations add nothing.
    let done = gpu_run(&points, 2, &params, 240);
    let left = done.read_attractors(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let [finished, ..] = done.read_state(&gpu).unwrap_or_else(|e| panic!("{e}"));
    let more = gpu_run(&points, 2, &params, 280);
    let [after, ..] = more.read_state(&gpu).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "stopped at {finished} nodes with {} attractions left",
        left.iter().filter(|a| a[3] != 0.0).count()
    );
    assert_eq!(after, finished, "growth stops when the attractions run out");
}

#[test]
fn the_node_pool_is_never_exceeded() {
    let gpu = support::gpu();
    let (points, params) = setup(2000, 64);
    let sim = gpu_run(&points, 4, &params, 60);
    let [nodes, edges, seeds, _] = sim.read_state(&gpu).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((nodes, edges, seeds), (64, 60, 4));
}

#[test]
fn a_small_grown_tree_matches_its_golden_image() {
    let image = crate::golden::render_project(support::fixtures(), "colony_small", [192, 108], 40);
    crate::golden::check_golden("src/layers/colony/golden/colony_small_192x108.png", &image);
}

/// The light the lines of `sim` put into a 64x64 target, drawn with
/// `transform` placing the nodes.
fn drawn_light(sim: &ColonySim, assets: &Assets, transform: &NodeTransform) -> f32 {
    let gpu = support::gpu();
    let mut show =
        BranchRenderer::with_transform(&gpu, assets, transform).unwrap_or_else(|e| panic!("{e}"));
    show.attach(&gpu, sim);
    let mut registry = Registry::new();
    for spec in camera_params("c", 16.0, 0.0) {
        registry.register(spec);
    }
    let camera = OrbitCamera::new("c").look(&registry, 0.0, glam::Vec3::ZERO, [64, 64]);
    let target = RenderTarget::new(&gpu.device, "hook.target", [64, 64], HDR_FORMAT);
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    show.prepare(
        &gpu,
        [64, 64],
        &camera,
        &DrawParams::new(2.0, 0.1, 1.0, 1.0, 0, 0, 0.0),
    );
    show.draw(
        &mut encoder,
        &mut profiler,
        sim,
        &target.view,
        None,
        Style::Lines,
    );
    gpu.queue.submit([encoder.finish()]);
    let pixels = read_rgba16f(&gpu, &target.texture).unwrap_or_else(|e| panic!("{e}"));
    pixels.iter().map(|p| p[0] + p[1] + p[2]).sum()
}

#[test]
fn another_layer_can_replace_where_nodes_are_drawn() {
    let (points, params) = setup(2000, 4096);
    let sim = gpu_run(&points, 3, &params, 20);
    let far = "// Moves every node out of sight.\n\
               fn node_position(node: u32, grown: vec3<f32>) -> vec3<f32> {\n\
                   return grown + vec3<f32>(1000.0, 0.0, 0.0);\n\
               }\n";
    let root = support::show_folder("node_hook", &[("shaders/test/far.wgsl", far)]);
    let assets = Assets::new(&root);
    let grown = drawn_light(&sim, &assets, &NodeTransform::default());
    let moved = NodeTransform {
        file: "test/far.wgsl".into(),
        buffers: Vec::new(),
    };
    let away = drawn_light(&sim, &assets, &moved);
    assert!(grown > 1.0, "the grown branches are drawn: {grown}");
    assert!(
        away < grown * 0.01,
        "the hook moved them away: {away} of {grown}"
    );
    std::fs::remove_dir_all(root).ok();
}

/// The pixels a line `width` wide from `a` to `b` (pixels, y down) covers
/// on the CPU: those whose centre lies within `width / 2` of the segment,
/// measured across its longer axis, between its ends along that axis.
fn band(a: glam::Vec2, b: glam::Vec2, width: f32, size: [u32; 2]) -> Vec<(i32, i32)> {
    let d = b - a;
    let x_major = d.x.abs() >= d.y.abs();
    let (a2, d2) = if x_major {
        (a, d)
    } else {
        (glam::Vec2::new(a.y, a.x), glam::Vec2::new(d.y, d.x))
    };
    if d2.x.abs() < 1e-6 {
        return Vec::new();
    }
    let half = 0.5 * width * d.length() / d2.x.abs();
    let (low, high) = (a2.x.min(a2.x + d2.x), a2.x.max(a2.x + d2.x));
    let mut covered = Vec::new();
    for c in (low - 0.5).ceil() as i32..=(high - 0.5).floor() as i32 {
        let t = ((c as f32 + 0.5 - a2.x) / d2.x).clamp(0.0, 1.0);
        let centre = a2.y + d2.y * t;
        for r in (centre - 0.5 - half).ceil() as i32..=(centre - 0.5 + half).floor() as i32 {
            let (x, y) = if x_major { (c, r) } else { (r, c) };
            if x >= 0 && y >= 0 && x < size[0] as i32 && y < size[1] as i32 {
                covered.push((x, y));
            }
        }
    }
    covered
}

#[test]
fn splatted_lines_cover_the_pixels_the_cpu_reference_does() {
    let gpu = support::gpu();
    let (points, params) = setup(2000, 4096);
    let sim = gpu_run(&points, 3, &params, 20);
    let size = [96u32, 64];
    let mut renderer = BranchRenderer::with_transform(
        &gpu,
        &Assets::new(env!("CARGO_MANIFEST_DIR")),
        &NodeTransform::default(),
    )
    .checked("building the renderer");
    renderer.attach(&gpu, &sim);
    let mut registry = Registry::new();
    for spec in camera_params("c", 16.0, 0.0) {
        registry.register(spec);
    }
    let camera = OrbitCamera::new("c").look(&registry, 0.0, glam::Vec3::ZERO, size);
    let target = RenderTarget::new(&gpu.device, "lines.target", size, HDR_FORMAT);
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let (width, taper) = (1.5, 2.0);
    renderer.prepare(
        &gpu,
        size,
        &camera,
        &DrawParams::new(width, 0.1, 1.0, 1.0, 0, 0, taper),
    );
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.draw(
        &mut encoder,
        &mut profiler,
        &sim,
        &target.view,
        None,
        Style::Lines,
    );
    gpu.queue.submit([encoder.finish()]);
    let pixels = read_rgba16f(&gpu, &target.texture).checked("reading the lines");

    let [count, _, _, deepest] = sim.read_state(&gpu).checked("reading the state");
    let nodes: Vec<[f32; 4]> =
        read_buffer(&gpu, &sim.nodes, count as usize).checked("reading the nodes");
    let info: Vec<NodeInfo> =
        read_buffer(&gpu, &sim.info, count as usize).checked("reading the nodes' parents");
    let floats: &[f32] = bytemuck::cast_slice(bytemuck::bytes_of(&camera));
    let view_proj = glam::Mat4::from_cols_slice(&floats[..16]);
    let screen = |p: glam::Vec3| {
        let clip = view_proj * p.extend(1.0);
        let ndc = clip.truncate() / clip.w;
        glam::Vec2::new(
            (ndc.x * 0.5 + 0.5) * size[0] as f32,
            (0.5 - ndc.y * 0.5) * size[1] as f32,
        )
    };
    let mut coverage = vec![0u32; (size[0] * size[1]) as usize];
    for (node, node_info) in nodes.iter().zip(&info) {
        let Ok(parent) = usize::try_from(node_info.parent) else {
            continue;
        };
        let a = glam::Vec3::from_slice(&nodes[parent][..3]);
        let b = a + (glam::Vec3::from_slice(&node[..3]) - a) * node[3];
        // Wider towards the root: `width` at the deepest tips, (1 + taper)
        // times it at the root, falling as the square of the depth left.
        let left = 1.0 - node_info.offset as f32 / deepest.max(1) as f32;
        let tapered = width * (1.0 + taper * left * left);
        for (x, y) in band(screen(a), screen(b), tapered, size) {
            coverage[(y as u32 * size[0] + x as u32) as usize] += 1;
        }
    }
    let covered = coverage.iter().filter(|&&c| c > 0).count();
    let differ = pixels
        .iter()
        .zip(&coverage)
        .filter(|(p, c)| (p[3] - **c as f32).abs() > 0.01)
        .count();
    assert!(covered > 200, "the lines cover {covered} pixels");
    assert!(
        differ * 100 <= covered,
        "{differ} of {covered} covered pixels counted differently"
    );
}

#[test]
fn the_first_branches_stand_in_the_scene_where_the_colony_is_placed() {
    use sylva::layers::colony::standing::StandingBranches;
    let gpu = support::gpu();
    let (points, params) = setup(2000, 4096);
    let sim = gpu_run(&points, 3, &params, 40);
    let world = sylva::engine::world::World::default();
    let assets = Assets::new(env!("CARGO_MANIFEST_DIR"));
    let standing = StandingBranches::new(&gpu, &assets, &sim, &world.branches(&gpu))
        .unwrap_or_else(|e| panic!("{e}"));
    let model = glam::Mat4::from_translation(glam::Vec3::new(1.0, 2.0, 3.0))
        * glam::Mat4::from_scale(glam::Vec3::splat(0.5));
    standing.prepare(&gpu, model, 0.2);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    standing.encode(&mut encoder.begin_compute_pass(&Default::default()));
    gpu.queue.submit([encoder.finish()]);
    let (nodes, info, _) = sim.read_graph(&gpu).unwrap_or_else(|e| panic!("{e}"));
    // The block: a 16-byte head (count first), then capsules of four vec4s.
    let words: Vec<f32> =
        sylva::gpu::compute::read_buffer(&gpu, &world.branches(&gpu), 4 + 4096 * 16)
            .unwrap_or_else(|e| panic!("{e}"));
    let count = words[0].to_bits() as usize;
    assert!(
        nodes.len() - 3 > 64,
        "more branches than the old limit: {}",
        nodes.len()
    );
    assert_eq!(
        count,
        (nodes.len() - 3).min(4096),
        "one capsule a grown node, at most 4096"
    );
    for k in 0..count {
        let node = 3 + k;
        let parent = info[node].parent as usize;
        let at = |p: [f32; 4]| model.transform_point3(glam::Vec3::new(p[0], p[1], p[2]));
        let from = nodes[parent];
        let grown = [0, 1, 2].map(|a| from[a] + (nodes[node][a] - from[a]) * nodes[node][3]);
        let capsule = &words[4 + k * 16..4 + k * 16 + 8];
        for (end, want) in [
            (&capsule[..3], at(nodes[parent])),
            (&capsule[4..7], at([grown[0], grown[1], grown[2], 1.0])),
        ] {
            assert!(
                (glam::Vec3::from_slice(end) - want).length() < 1e-4,
                "capsule {k}: {end:?} vs {want}"
            );
        }
        assert!(
            capsule[3] > 0.2 * 0.5 * 0.25 - 1e-6 && capsule[3] <= 0.2 * 0.5 + 1e-6,
            "radius {}",
            capsule[3]
        );
    }
}
