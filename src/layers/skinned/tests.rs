//! The skinned layer: glTF characters skinned on the GPU against the
//! glTF specification's linear blend skinning on the CPU, both bone paths,
//! the node hierarchy against the gltf crate's own transforms, volume
//! samples inside the mesh with their spacing, branches that stay with the
//! moving body, broken models refused, and the default character's
//! picture; the shipped dancer in `dancer_tests.rs`.

use std::path::PathBuf;

use glam::{Mat4, Vec3};
use sylva::gpu::OUTPUT_FORMAT;
use sylva::layers::skinned::asset::{skin_at, skin_on_gpu};
use sylva::layers::skinned::model::Model;
use sylva::layers::skinned::pose::{skin_vertex, world};
use sylva::layers::skinned::{attractions, creature, volume};
use sylva::params::{Source, Value};

use crate::support;
use crate::support::Checked;

#[path = "dancer_tests.rs"]
mod dancer_tests;

/// A test character from `tests/assets/gltf/`.
fn character(name: &str) -> Model {
    let path = support::asset(&format!("gltf/{name}"));
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The largest distance between the GPU's skinned positions and the
/// reference's, over the model's size; and the same for normals.
fn gpu_against_reference(
    model: &Model,
    clip: Option<usize>,
    time: f32,
    matrices: bool,
) -> (f32, f32) {
    let gpu = support::gpu();
    let skinned = skin_on_gpu(&gpu, model, clip, time, matrices).unwrap_or_else(|e| panic!("{e}"));
    let skin = skin_at(model, clip, time);
    let mut worst = (0.0f32, 0.0f32);
    for (vertex, (position, normal)) in model.vertices.iter().zip(&skinned) {
        let (want, want_normal) = skin_vertex(vertex, &skin);
        worst.0 = worst.0.max(position.distance(want));
        worst.1 = worst.1.max(normal.distance(want_normal));
    }
    (worst.0 / model.size(), worst.1)
}

#[test]
fn gpu_skinning_matches_the_gltf_definition_for_both_characters_and_both_bone_paths() {
    for (file, clips) in [("CesiumMan.glb", 1), ("Fox.glb", 3)] {
        let model = character(file);
        assert_eq!(model.clips.len(), clips, "{file}");
        for clip in 0..clips {
            let duration = model.clips[clip].duration;
            for time in [0.0, 0.37 * duration, 0.81 * duration] {
                for matrices in [false, true] {
                    let (position, normal) =
                        gpu_against_reference(&model, Some(clip), time, matrices);
                    assert!(
                        position <= 1e-4 && normal <= 1e-3,
                        "{file} clip {clip} at {time} s (matrices {matrices}): positions off by {position} of the size, normals by {normal}"
                    );
                }
            }
        }
    }
}

#[test]
fn quaternion_and_matrix_bones_skin_alike() {
    let model = creature::figure(10);
    let gpu = support::gpu();
    for time in [0.3, 1.1] {
        let quaternions = skin_on_gpu(&gpu, &model, Some(0), time, false).checked("skinning");
        let matrices = skin_on_gpu(&gpu, &model, Some(0), time, true).checked("skinning");
        let worst = quaternions
            .iter()
            .zip(&matrices)
            .map(|(a, b)| a.0.distance(b.0))
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-4 * model.size(), "paths differ by {worst}");
        let moved = quaternions
            .iter()
            .zip(&model.vertices)
            .any(|(s, v)| s.0.distance(v.position) > 0.05);
        assert!(moved, "the dance moves the figure");
    }
}

/// World transforms computed straight from the gltf crate's documents.
fn gltf_world(path: &std::path::Path) -> Vec<Mat4> {
    let (document, _, _) = gltf::import(path).unwrap_or_else(|e| panic!("{e}"));
    let mut world = vec![Mat4::IDENTITY; document.nodes().count()];
    fn walk(node: gltf::Node<'_>, parent: Mat4, world: &mut [Mat4]) {
        let here = parent * Mat4::from_cols_array_2d(&node.transform().matrix());
        world[node.index()] = here;
        for child in node.children() {
            walk(child, here, world);
        }
    }
    for scene in document.scenes() {
        for node in scene.nodes() {
            walk(node, Mat4::IDENTITY, &mut world);
        }
    }
    world
}

#[test]
fn the_node_hierarchy_matches_the_gltf_crates() {
    for file in ["CesiumMan.glb", "Fox.glb"] {
        let path = support::asset(&format!("gltf/{file}"));
        let model = character(file);
        let rest: Vec<_> = model.nodes.iter().map(|n| n.rest).collect();
        for (ours, theirs) in world(&model, &rest).iter().zip(gltf_world(&path)) {
            assert!(
                ours.abs_diff_eq(theirs, 1e-4 * model.size().max(1.0)),
                "{file}"
            );
        }
    }
}

/// Whether `p` is inside the mesh by the parity of crossings of a ray.
fn inside_by_parity(model: &Model, p: Vec3, direction: Vec3) -> bool {
    let mut crossings = 0;
    for t in model.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| model.vertices[t[k] as usize].position);
        // Möller–Trumbore.
        let (e1, e2) = (b - a, c - a);
        let h = direction.cross(e2);
        let det = e1.dot(h);
        if det.abs() < 1e-12 {
            continue;
        }
        let s = p - a;
        let u = s.dot(h) / det;
        let q = s.cross(e1);
        let v = direction.dot(q) / det;
        let t = e2.dot(q) / det;
        if (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0 && t > 0.0 {
            crossings += 1;
        }
    }
    crossings % 2 == 1
}

#[test]
fn volume_samples_lie_inside_and_keep_their_spacing() {
    let model = character("CesiumMan.glb");
    let (points, bones) = attractions(&model, 1500, 0.0, 7);
    assert!(points.len() >= 1400, "{} of 1500 samples", points.len());
    assert_eq!(points.len(), bones.len());
    let directions = [
        Vec3::new(0.31, 0.52, 0.79).normalize(),
        Vec3::new(-0.7, 0.1, 0.2).normalize(),
        Vec3::new(0.05, -0.9, 0.3).normalize(),
    ];
    let inside = points
        .iter()
        .filter(|p| {
            let p = Vec3::from(**p);
            directions
                .iter()
                .filter(|d| inside_by_parity(&model, p, **d))
                .count()
                >= 2
        })
        .count();
    assert!(
        inside as f32 >= 0.98 * points.len() as f32,
        "{inside} of {} samples inside by ray parity",
        points.len()
    );
    // Poisson: no two closer than the spacing the count asked for.
    let positions: Vec<Vec3> = model.vertices.iter().map(|v| v.position).collect();
    let solid = volume::voxelize(&positions, &model.indices, model.size() / 96.0);
    let spacing = 0.7 * (solid.filled() as f32 * solid.voxel().powi(3) / 1500.0).cbrt();
    let points: Vec<Vec3> = points.iter().map(|p| Vec3::from(*p)).collect();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            assert!(
                a.distance(*b) >= spacing * 0.999,
                "two samples {} apart",
                a.distance(*b)
            );
        }
    }
    for bone in &bones {
        let sum: f32 = bone.weights.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "weights sum to {sum}");
        assert!(
            bone.joints
                .iter()
                .all(|&j| (j as usize) < model.joints.len())
        );
    }
}

/// A show folder with the skinned layer small and fast.
fn skinned_show(name: &str, extra: &str) -> PathBuf {
    let preset = format!(
        "layers = [\"skinned\"]\n[params]\n\"skinned.attraction_count\" = 1500\n\"skinned.node_capacity\" = 6000\n\"skinned.detail\" = 8\n\"skinned.steps_per_frame\" = 4\n\"skinned.growth_speed\" = 30.0\n\"skinned.auto_rotate\" = 0.0\n{extra}"
    );
    support::show_folder(name, &[("presets/s.toml", preset.as_str())])
}

#[test]
fn grown_branches_stay_with_the_moving_body() {
    use sylva::gpu::GpuProfiler;
    use sylva::layers::colony::sim::{ColonySim, StepParams};
    use sylva::layers::colony::spacing::{UNIT_PER_SPACING, mean_nearest};
    let gpu = support::gpu();
    let model = creature::figure(8);
    let (points, bones) = attractions(&model, 1500, 0.0, 3);
    let unit = mean_nearest(&points).unwrap_or(0.05) * UNIT_PER_SPACING;
    let params = StepParams::new(
        3.0 * unit,
        unit,
        0.999 * unit,
        1.0,
        (1.0, 1.0),
        5,
        points.len() as u32,
        6000,
    );
    let assets = sylva::base::Assets::new(env!("CARGO_MANIFEST_DIR"));
    let sim = ColonySim::new(&gpu, &assets, &points, 6, &params).checked("building the growth");
    let mut profiler = GpuProfiler::new(&gpu.device, &gpu.queue, false);
    for _ in 0..80 {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        sim.step(&mut encoder, &mut profiler);
        gpu.queue.submit([encoder.finish()]);
    }
    let (nodes, info, _) = sim.read_graph(&gpu).checked("reading the growth");
    assert!(nodes.len() > 300, "grew {} nodes", nodes.len());
    // At several moments of every clip, each node carried by its tag's
    // bones stays within a bone's thickness (and a segment) of the skin
    // carried by the same pose: the branches ride the body.
    let bound = 0.16 + unit;
    for clip in 0..model.clips.len() {
        for time in [0.2, 0.9, 1.7] {
            let skin = skin_at(&model, Some(clip), time);
            let surface: Vec<Vec3> = model
                .vertices
                .iter()
                .map(|v| skin_vertex(v, &skin).0)
                .collect();
            let carried: Vec<Vec3> = nodes
                .iter()
                .zip(&info)
                .map(|(node, info)| {
                    let bound = bones[info.tag as usize];
                    let vertex = sylva::layers::skinned::model::Vertex {
                        position: Vec3::new(node[0], node[1], node[2]),
                        normal: Vec3::Y,
                        joints: bound.joints,
                        weights: bound.weights,
                        material: sylva::layers::skinned::model::Material::PLAIN,
                    };
                    skin_vertex(&vertex, &skin).0
                })
                .collect();
            let nearest = volume::nearest_surface(&surface, &model.indices, &carried);
            for (node, (first, w)) in carried.iter().zip(nearest) {
                let corner = |k: usize| surface[model.indices[first + k] as usize];
                let on_skin = corner(0) * w[0] + corner(1) * w[1] + corner(2) * w[2];
                let d = node.distance(on_skin);
                assert!(
                    d <= bound,
                    "clip {clip} at {time} s: a node {d} from the skin"
                );
            }
        }
    }
}

#[test]
fn a_broken_model_is_refused_and_the_last_good_one_stays() {
    let root = skinned_show("skinned_broken", "");
    std::fs::create_dir_all(root.join("assets")).checked("making assets/");
    std::fs::write(
        root.join("assets/broken.glb"),
        b"glTF\x02\x00\x00\x00 truncated",
    )
    .checked("writing a broken model");
    std::fs::write(root.join("assets/plain.glb"), b"not a model at all")
        .checked("writing a second one");
    let mut show = support::show(root.clone(), "s", OUTPUT_FORMAT);
    let mut output = sylva::gpu::RenderTarget::new(
        &show.ground.gpu.device,
        "broken.output",
        [32, 32],
        OUTPUT_FORMAT,
    );
    let mut frame = |show: &mut sylva::show::Show| show.frame(0.2, None, &mut output, |_, _| {});
    frame(&mut show);
    let vertices = |show: &sylva::show::Show| {
        let report = show.layers()[0].report(&show.ground.gpu);
        report
            .iter()
            .find(|(n, _)| n == "vertices")
            .map_or(0.0, |(_, v)| *v)
    };
    let figure = vertices(&show);
    assert!(figure > 0.0);
    for name in ["broken.glb", "plain.glb", "../escape.glb", "missing.glb"] {
        show.registry
            .set_now("skinned.model", Value::Text(name.into()), Source::Ui)
            .checked("naming a model");
        // The new model is prepared on a worker: wait for its verdict.
        let named = |show: &sylva::show::Show| {
            let shown = support::error_messages(show);
            shown
                .iter()
                .any(|m| m.contains(name.trim_start_matches("../")))
        };
        let started = std::time::Instant::now();
        while !named(&show) {
            assert!(
                started.elapsed().as_secs() < 60,
                "{name}: {:?}",
                show.ground.errors.snapshot()
            );
            frame(&mut show);
        }
        assert_eq!(vertices(&show), figure, "{name}: the figure runs on");
    }
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_character_from_the_assets_folder_grows_branches() {
    let root = skinned_show(
        "skinned_fox",
        "\"skinned.model\" = \"Fox.glb\"\n\"skinned.clip\" = \"Run\"\n",
    );
    let fox = support::asset("gltf/Fox.glb");
    std::fs::create_dir_all(root.join("assets")).checked("making assets/");
    std::fs::copy(&fox, root.join("assets/Fox.glb")).checked("copying the fox into the test show");
    let mut show = support::show(root.clone(), "s", OUTPUT_FORMAT);
    assert_eq!(
        show.registry.get("skinned.clip"),
        Some(&Value::Enum(2)),
        "Run is the fox's third clip"
    );
    let mut output = sylva::gpu::RenderTarget::new(
        &show.ground.gpu.device,
        "fox.output",
        [32, 32],
        OUTPUT_FORMAT,
    );
    for _ in 0..20 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    let report = show.layers()[0].report(&show.ground.gpu);
    let get = |name: &str| {
        report
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0.0, |(_, v)| *v)
    };
    assert_eq!(get("vertices"), 1728.0);
    assert!(get("nodes") > 50.0, "{report:?}");
    // Saving another model over the file reloads it while the show runs.
    let man = support::asset("gltf/CesiumMan.glb");
    std::fs::copy(&man, root.join("assets/Fox.glb")).checked("saving over the model");
    // The new model is prepared on a worker: wait for it.
    let vertices = |show: &sylva::show::Show| {
        let report = show.layers()[0].report(&show.ground.gpu);
        report
            .iter()
            .find(|(n, _)| n == "vertices")
            .map_or(0.0, |(_, v)| *v)
    };
    let started = std::time::Instant::now();
    while vertices(&show) != 3273.0 {
        assert!(
            started.elapsed().as_secs() < 60,
            "the saved model never replaced the fox"
        );
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn the_default_character_matches_its_golden_image() {
    let root = skinned_show("skinned_golden", "\"skinned.regrow\" = false\n");
    let image = crate::golden::render_project(root.clone(), "s", [192, 108], 45);
    crate::golden::check_golden(
        "src/layers/skinned/golden/skinned_small_192x108.png",
        &image,
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn lua_crossfades_to_a_clip_by_name() {
    let root = skinned_show("skinned_lua", "");
    let script = "function setup()\n  sylva.layer(\"skinned\"):play(\"Walking\", 0.5)\nend\n";
    std::fs::create_dir_all(root.join("scripts")).checked("making scripts/");
    std::fs::write(root.join("scripts/play.lua"), script).checked("writing the script");
    let preset = std::fs::read_to_string(root.join("presets/s.toml")).checked("reading the preset");
    std::fs::write(
        root.join("presets/s.toml"),
        preset.replacen("[params]", "script = \"scripts/play.lua\"\n[params]", 1),
    )
    .checked("naming the script");
    let show = support::show(root.clone(), "s", OUTPUT_FORMAT);
    let errors = show.ground.errors.snapshot();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(show.registry.target("skinned.clip"), Some(&Value::Enum(1)));
    assert_eq!(
        show.registry.target("skinned.clip_fade"),
        Some(&Value::Float(0.5))
    );
    std::fs::remove_dir_all(root).ok();
}

/// A .glb as its JSON and its binary chunk.
fn split_glb(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let word = |at: usize| {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
    };
    let json_length = word(12);
    let json: serde_json::Value =
        serde_json::from_slice(&bytes[20..20 + json_length]).unwrap_or_else(|e| panic!("{e}"));
    let bin_at = 20 + json_length;
    let bin = bytes[bin_at + 8..bin_at + 8 + word(bin_at)].to_vec();
    (json, bin)
}

#[test]
fn gltf_files_with_buffers_beside_them_load_and_buffers_elsewhere_are_refused() {
    let fox = support::asset("gltf/Fox.glb");
    let (mut json, bin) = split_glb(&std::fs::read(&fox).checked("reading the fox"));
    let root = support::show_folder("skinned_gltf", &[]);
    std::fs::create_dir_all(&root).checked("making the folder");
    std::fs::write(root.join("fox.bin"), &bin).checked("writing the buffer");
    json["buffers"][0]["uri"] = "fox.bin".into();
    std::fs::write(root.join("fox.gltf"), json.to_string()).checked("writing the gltf");
    let split = Model::load(&root.join("fox.gltf")).unwrap_or_else(|e| panic!("{e}"));
    let whole = character("Fox.glb");
    assert_eq!(split.vertices, whole.vertices);
    assert_eq!(split.clips, whole.clips);
    json["buffers"][0]["uri"] = "../fox.bin".into();
    std::fs::write(root.join("escape.gltf"), json.to_string()).checked("writing the gltf");
    let refused = Model::load(&root.join("escape.gltf"))
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.contains("../fox.bin") && e.contains("escape.gltf")),
        "{refused:?}"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn sylva_asset_writes_the_skinned_mesh_as_obj() {
    let fox = support::asset("gltf/Fox.glb");
    let out = support::out_dir().join("fox_run.obj");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args([
            "asset",
            &fox.to_string_lossy(),
            "--clip",
            "Run",
            "--time",
            "0.4",
            "--obj",
        ])
        .arg(&out)
        .env(
            "SYLVA_ADAPTER",
            std::env::var("SYLVA_ADAPTER").unwrap_or_default(),
        )
        .output()
        .checked("running sylva asset");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.contains("24 joints") && printed.contains("clip 2 \"Run\""),
        "{printed}"
    );
    let text = std::fs::read_to_string(&out).checked("reading the OBJ");
    let written: Vec<Vec3> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f32> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            Vec3::new(v[0], v[1], v[2])
        })
        .collect();
    let model = character("Fox.glb");
    let skin = skin_at(&model, Some(2), 0.4);
    assert_eq!(written.len(), model.vertices.len());
    let worst = model
        .vertices
        .iter()
        .zip(&written)
        .map(|(v, w)| skin_vertex(v, &skin).0.distance(*w))
        .fold(0.0f32, f32::max);
    assert!(worst <= 1e-4 * model.size(), "OBJ off by {worst}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("f ")).count(),
        model.indices.len() / 3
    );
}

/// A glTF of `count` nodes in one chain, stored child before parent (node
/// `i` has the single child `i - 1`), and nothing else.
fn chain_gltf(count: usize) -> String {
    let nodes: Vec<String> = (0..count)
        .map(|i| match i {
            0 => "{}".to_string(),
            _ => format!("{{\"children\":[{}]}}", i - 1),
        })
        .collect();
    format!(
        "{{\"asset\":{{\"version\":\"2.0\"}},\"scene\":0,\"scenes\":[{{\"nodes\":[{}]}}],\"nodes\":[{}]}}",
        count - 1,
        nodes.join(",")
    )
}

#[test]
fn absurd_hierarchies_are_refused_at_load_naming_the_file() {
    // The hardening probe: a 200,000-node parent chain stored child
    // before parent took the show to one frame per 7 s (the pose walked
    // it once per node, every frame).
    let folder = support::show_folder("skinned_chains", &[]);
    std::fs::create_dir_all(&folder).checked("making the folder");
    for (count, problem) in [
        (200_000, "200000 nodes; at most 65536"),
        (300, "levels deep; at most 256"),
    ] {
        let path = folder.join(format!("chain_{count}.gltf"));
        std::fs::write(&path, chain_gltf(count)).checked("writing the chain");
        let started = std::time::Instant::now();
        let message = match Model::load(&path) {
            Ok(_) => panic!("a chain of {count} nodes loaded"),
            Err(error) => error.to_string(),
        };
        assert!(
            message.contains(problem) && message.contains(&format!("chain_{count}.gltf")),
            "{count}: {message}"
        );
        assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    }
    std::fs::remove_dir_all(folder).ok();
}

#[test]
fn the_pose_follows_the_hierarchy_in_whatever_order_the_file_stores_it() {
    // A chain stored child first: each node one unit up from its parent.
    let mut model = creature::figure(8);
    let count = 50;
    model.nodes = (0..count)
        .map(|i| sylva::layers::skinned::model::Node {
            name: format!("node {i}"),
            parent: (i + 1 < count).then_some(i + 1),
            rest: sylva::layers::skinned::model::Trs {
                translation: Vec3::Y,
                ..Default::default()
            },
        })
        .collect();
    model.order = sylva::layers::skinned::model::hierarchy_order(&model.nodes)
        .checked("a chain within the bounds");
    let local: Vec<_> = model.nodes.iter().map(|n| n.rest).collect();
    let world = world(&model, &local);
    // Node 0 is the deepest: fifty units up.
    assert!(
        (world[0].w_axis.y - count as f32).abs() < 1e-4,
        "{}",
        world[0].w_axis
    );
    assert!((world[count - 1].w_axis.y - 1.0).abs() < 1e-4);
    // The built-in figure's own order puts every parent first.
    let figure = creature::figure(8);
    for (at, &node) in figure.order.iter().enumerate() {
        if let Some(parent) = figure.nodes[node].parent {
            let parent_at = figure.order.iter().position(|&n| n == parent);
            assert!(
                parent_at.is_some_and(|p| p < at),
                "{}",
                figure.nodes[node].name
            );
        }
    }
}
