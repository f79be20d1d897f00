//! The `sylva` binary as a person runs it: help for every subcommand,
//! `render` writing the frames asked for, clear failures, the headless loop,
//! and the no-display exit.

use std::process::{Command, Output};

use crate::support;
use crate::support::Checked;

fn sylva(args: &[&str]) -> Output {
    sylva_with(args, &[])
}

/// `sylva` with the variables `env` set besides the adapter's.
fn sylva_with(args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(args)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .envs(env.iter().copied())
        .output();
    match output {
        Ok(output) => output,
        Err(error) => panic!("running sylva {args:?}: {error}"),
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_subcommand_has_help() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        // Debug builds assert clap's rules as a command parses: `play`
        // once broke them (two arguments named "playlist").
        vec!["play", "--help"],
        vec!["shaders", "--help"],
        vec!["render", "--help"],
        vec!["bench", "--help"],
        vec!["check", "--help"],
        vec!["thumbs", "--help"],
        vec!["asset", "--help"],
        vec!["export", "colony", "--help"],
        vec!["validate", "fluid", "--help"],
    ] {
        let output = sylva(&args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("Usage:"), "{args:?}: {text}");
    }
}

#[test]
fn render_writes_the_frames_asked_for_at_their_size() {
    let out = support::out_dir().join("cli_render");
    std::fs::remove_dir_all(&out).ok();
    let out_arg = out.to_string_lossy().into_owned();
    let output = sylva(&[
        "render", "--frames", "3", "--size", "48x20", "--out", &out_arg,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("adapter: "),
        "the adapter is printed"
    );
    for index in 0..3 {
        let path = out.join(format!("frame_{index:05}.png"));
        let dimensions = image::image_dimensions(&path);
        assert!(
            matches!(dimensions, Ok((48, 20))),
            "{}: {dimensions:?}",
            path.display()
        );
    }
    assert!(!out.join("frame_00003.png").exists());
}

/// Frames of `preset` rendered at 64x36 into `out` (`env` set for sylva),
/// read back as RGBA bytes.
fn rendered(preset: &str, out: &str, env: &[(&str, &str)]) -> Vec<Vec<u8>> {
    let dir = support::out_dir().join(out);
    std::fs::remove_dir_all(&dir).ok();
    let dir_arg = dir.to_string_lossy().into_owned();
    let args = [
        "render", "--preset", preset, "--frames", "3", "--size", "64x36", "--out", &dir_arg,
    ];
    let output = sylva_with(&args, env);
    assert!(output.status.success(), "{}", stderr(&output));
    (0..3)
        .map(
            |i| match image::open(dir.join(format!("frame_{i:05}.png"))) {
                Ok(picture) => picture.to_rgba8().into_raw(),
                Err(error) => panic!("{out} frame {i}: {error}"),
            },
        )
        .collect()
}

#[test]
fn fullscreen_passes_draw_the_same_as_compute_and_through_the_rasterizer() {
    // A WGSL layer, a two-pass ISF file with a persistent buffer and the
    // compositor: compute where the targets can be stored to (lavapipe's
    // can), every one of them by the rasterizer with SYLVA_RASTERIZE=1.
    let preset = "tests/fixtures/presets/compute_or_raster.toml";
    let computed = rendered(preset, "cli_computed", &[]);
    let rasterized = rendered(
        preset,
        "cli_rasterized",
        &[(sylva::gpu::RASTERIZE_ENV, "1")],
    );
    for (frame, (a, b)) in computed.iter().zip(&rasterized).enumerate() {
        assert_eq!(a.len(), b.len());
        let largest = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max();
        assert!(
            largest.is_some_and(|d| d <= 2),
            "frame {frame}: channels differ by up to {largest:?} of 255"
        );
        let lit = a
            .chunks(4)
            .filter(|p| p[..3].iter().any(|&c| c > 16))
            .count();
        assert!(
            lit * 4 > a.len() / 4 / 2,
            "frame {frame}: the aurora shows ({lit} pixels lit)"
        );
    }
}

#[test]
fn render_fails_clearly_on_a_missing_preset_or_a_bad_size() {
    let out = support::out_dir().join("cli_fail");
    let out_arg = out.to_string_lossy().into_owned();
    let missing = sylva(&[
        "render",
        "--preset",
        "no_such_show",
        "--frames",
        "1",
        "--out",
        &out_arg,
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no_such_show"),
        "{}",
        stderr(&missing)
    );
    let bad_size = sylva(&["render", "--size", "wide", "--out", &out_arg]);
    assert!(!bad_size.status.success());
    assert!(
        stderr(&bad_size).contains("WIDTHxHEIGHT"),
        "{}",
        stderr(&bad_size)
    );
}

#[test]
fn thumbs_pictures_every_preset_of_a_show_at_its_size_and_names_a_broken_one() {
    let root = support::show_folder(
        "cli_thumbs",
        &[
            ("presets/one.toml", "layers = [\"shader.aurora\"]\n"),
            (
                "presets/two.toml",
                "layers = [\"shader.aurora\", \"shader.echo\"]\n",
            ),
        ],
    );
    let project = root.to_string_lossy().to_string();
    let args = [
        "thumbs",
        "--project",
        &project,
        "--at",
        "0.2",
        "--fps",
        "10",
        "--size",
        "48x27",
    ];
    let output = sylva(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    for name in ["one", "two"] {
        let file = root.join(format!("presets/thumbs/{name}.png"));
        let picture = image::open(&file).checked("a thumbnail");
        assert_eq!((picture.width(), picture.height()), (48, 27), "{name}");
    }
    // A preset that cannot play fails the command, named, and the others
    // are still pictured.
    std::fs::write(
        root.join("presets/three.toml"),
        "layers = [\"nothing.here\"]\n",
    )
    .checked("a broken preset");
    std::fs::remove_file(root.join("presets/thumbs/one.png")).checked("an old thumbnail");
    let output = sylva(&args);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("three"), "{}", stderr(&output));
    assert!(root.join("presets/thumbs/one.png").exists());
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn render_fails_on_a_broken_shader() {
    let out = support::out_dir().join("cli_broken");
    let out_arg = out.to_string_lossy().into_owned();
    let project = support::fixtures();
    let project_arg = project.to_string_lossy().into_owned();
    let output = sylva(&[
        "render",
        "--project",
        &project_arg,
        "--preset",
        "broken",
        "--frames",
        "1",
        "--size",
        "16x16",
        "--out",
        &out_arg,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("shaders/shader/broken.wgsl:5:"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn headless_run_stops_after_its_frames() {
    let output = sylva(&[
        "run",
        "--headless",
        "--frames",
        "5",
        "--unpaced",
        "--size",
        "64x36",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("stopped after 5 frames"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn the_default_show_on_the_software_adapter_plays_the_light_show() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--headless",
            "--frames",
            "3",
            "--unpaced",
            "--size",
            "64x36",
            "--no-osc",
            "--no-midi",
            "--no-audio",
        ];
        args.extend_from_slice(extra);
        let output = sylva(&args);
        assert!(output.status.success(), "{}", stderr(&output));
        stderr(&output)
    };
    let chosen = "the light show (playlist light) plays";
    let log = run(&[]);
    assert_eq!(log.matches(chosen).count(), 1, "{log}");
    assert!(log.contains("a software adapter"), "{log}");
    assert!(!log.contains("switched off"), "{log}");
    // Asked for by name, the full show plays on any adapter.
    let log = run(&["--playlist", "default"]);
    assert!(!log.contains(chosen), "{log}");
    assert!(log.contains("preset world loaded"), "{log}");
    // A render (a music video) plays the default show it was asked for.
    let out = support::out_dir().join("cli_render_default_show");
    std::fs::remove_dir_all(&out).ok();
    let sound = out.join("quiet.wav");
    crate::audio::write_wav(&sound, &vec![0.0; 4800]);
    let output = sylva(&[
        "render",
        "--frames",
        "1",
        "--size",
        "32x18",
        "--audio",
        &sound.to_string_lossy(),
        "--out",
        &out.join("frames").to_string_lossy(),
    ]);
    let log = stderr(&output);
    assert!(output.status.success(), "{log}");
    assert!(
        !log.contains(chosen) && log.contains("preset world loaded"),
        "{log}"
    );
}

#[test]
fn without_a_display_the_window_exits_2_and_names_the_alternatives() {
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output();
    let Ok(output) = output else {
        panic!("running sylva");
    };
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("no display"), "{text}");
    assert!(
        text.contains("sylva render") && text.contains("sylva run --headless"),
        "{text}"
    );
}

#[test]
fn check_passes_on_the_repository() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = sylva(&["check", "--project", root]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("no problems"), "{text}");
}

#[test]
fn check_fails_on_a_corrupted_copy_of_each_kind_of_file() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = [
        (
            "shaders/shader/aurora.wgsl",
            "let height = p.y - edge;",
            "let height = p.y - edge",
            "shaders/shader/aurora.wgsl:",
        ),
        (
            "scripts/default.lua",
            "function update(dt)",
            "function update(dt",
            "scripts/default.lua:",
        ),
        (
            "presets/default.toml",
            "\"shader.echo.opacity\" = 0.6",
            "\"shader.echo.opacityy\" = 0.6",
            "presets/default.toml:7",
        ),
        // A texture input naming an unknown scheme, or a source's name
        // that could never open.
        (
            "presets/forest_rivers.toml",
            "\"layer:shader.rivers\"",
            "\"bogus:thing\"",
            "presets/forest_rivers.toml:7: \"bogus:thing\" is not a texture source",
        ),
        (
            "presets/forest_rivers.toml",
            "\"layer:shader.rivers\"",
            "\"media/../outside.mp4\"",
            "presets/forest_rivers.toml:7: \"media/../outside.mp4\" is not a texture source",
        ),
    ];
    for (file, good, bad, expected) in cases {
        let project = support::out_dir().join(format!("check_{}", file.replace('/', "_")));
        std::fs::remove_dir_all(&project).ok();
        let copy = project.join(file);
        if let Some(parent) = copy.parent() {
            std::fs::create_dir_all(parent).checked("writing the test show");
        }
        let original = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
        assert!(
            original.contains(good),
            "{file} no longer contains {good:?}"
        );
        std::fs::write(&copy, original.replace(good, bad)).checked("writing the test show");
        let project_arg = project.to_string_lossy().into_owned();
        let output = sylva(&["check", "--project", &project_arg]);
        assert_eq!(output.status.code(), Some(1), "{file}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(expected),
            "{file}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn check_refuses_impossible_headers_missing_entry_points_and_huge_arrays() {
    let body = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    return vec4<f32>(1.0);\n}\n";
    let cases = [
        (
            format!("// @param x float 0.5 min=2 max=1\n{body}"),
            "bad.wgsl:1",
        ),
        (
            format!("\n// @param x int 5 min=10 max=1\n{body}"),
            "bad.wgsl:2",
        ),
        (
            format!("// @param x float 0.5 min=nan\n{body}"),
            "bad.wgsl:1",
        ),
        (
            format!("// @param v vec3 0,0,0 min=3 max=-3\n{body}"),
            "bad.wgsl:1",
        ),
        (body.replace("fs_main", "main"), "no `@fragment fn fs_main`"),
        (
            format!("var<private> big: array<vec4<f32>, 16777216>;\n{body}"),
            "var<private> big",
        ),
    ];
    for (shader, expected) in cases {
        let project =
            support::show_folder("check_hostile", &[("shaders/shader/bad.wgsl", &shader)]);
        let project_arg = project.to_string_lossy().into_owned();
        let output = sylva(&["check", "--project", &project_arg]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{shader}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{shader}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn export_colony_writes_obj_vertices_and_lines() {
    let out = support::out_dir().join("tree.obj");
    std::fs::remove_file(&out).ok();
    let out_arg = out.to_string_lossy().into_owned();
    let project = support::fixtures().to_string_lossy().into_owned();
    let output = sylva(&[
        "export",
        "colony",
        "--project",
        &project,
        "--preset",
        "colony_small",
        "--steps",
        "30",
        "--out",
        &out_arg,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let obj = std::fs::read_to_string(&out).unwrap_or_default();
    let vertices = obj.lines().filter(|l| l.starts_with("v ")).count();
    let lines = obj.lines().filter(|l| l.starts_with("l ")).count();
    assert!(
        vertices > 10 && lines == vertices - 2,
        "{vertices} vertices, {lines} lines (two roots)"
    );
}

/// The vertices `sylva export colony` writes for a sphere of 3,000 points
/// scaled by `scale`, grown with default parameters.
fn grown_from_cloud(scale: f32) -> usize {
    use sylva::layers::colony::attractors::{AttractionSource, Shape};
    let points = Shape {
        kind: 0,
        radius: 1.0,
    }
    .points(3_000, 9);
    let mut ply = format!(
        "ply\nformat ascii 1.0\nelement vertex {}\nproperty float x\nproperty float y\nproperty float z\nend_header\n",
        points.len()
    );
    for p in &points {
        ply.push_str(&format!(
            "{} {} {}\n",
            p[0] * scale,
            p[1] * scale,
            p[2] * scale
        ));
    }
    let cloud = support::out_dir().join(format!("cloud_{scale}.ply"));
    std::fs::write(&cloud, ply).unwrap_or_else(|e| panic!("writing the cloud: {e}"));
    let out = support::out_dir().join(format!("cloud_{scale}.obj"));
    let (cloud_arg, out_arg) = (
        cloud.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
    );
    let output = sylva(&[
        "export",
        "colony",
        "--attractors",
        &cloud_arg,
        "--steps",
        "60",
        "--out",
        &out_arg,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let obj = std::fs::read_to_string(&out).unwrap_or_default();
    obj.lines().filter(|l| l.starts_with("v ")).count()
}

#[test]
fn a_point_cloud_grows_the_same_tree_at_any_scale() {
    let small = grown_from_cloud(0.01);
    let large = grown_from_cloud(100.0);
    assert!(
        small > 600,
        "{small} nodes from 3,000 points a few centimetres across"
    );
    let ratio = small as f64 / large as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "{small} nodes at 1 cm, {large} at 100 m"
    );
}

#[test]
fn render_video_without_ffmpeg_says_how_to_get_it() {
    let out = support::out_dir().join("cli_video.mp4");
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["render", "--frames", "2", "--size", "32x18", "--video"])
        .arg(&out)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        // No folder to find ffmpeg in.
        .env("PATH", "")
        .output()
        .checked("running sylva");
    assert!(!output.status.success(), "no video without ffmpeg");
    let text = stderr(&output);
    assert!(
        text.contains("needs ffmpeg on the PATH") && text.contains("apt install ffmpeg"),
        "{text}"
    );
}

#[test]
fn bench_whole_frame_lists_every_pass_of_a_preset_and_the_frame() {
    let fixtures = support::fixtures();
    let output = sylva(&[
        "bench",
        "--whole-frame",
        "--project",
        &fixtures.to_string_lossy(),
        "--preset",
        "fluid_small",
        "--resolution",
        "96x54",
        "--steps",
        "4",
        "--warm-up",
        "3",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).checked("the bench's JSON");
    let passes: Vec<&str> = report["passes"]
        .as_array()
        .checked("a list of passes")
        .iter()
        .filter_map(|p| p["pass"].as_str())
        .collect();
    for expected in [
        "fluid.substeps",
        "fluid.draw.splat",
        "fluid.draw.shade",
        "compositor.master",
    ] {
        assert!(passes.contains(&expected), "{expected} in {passes:?}");
    }
    // Each frame's passes add up to at least its master pass and take no
    // longer than the frame waited for, so the medians are so ordered.
    let frame = report["frame"]["median_ms"]
        .as_f64()
        .checked("the frame's time");
    let wall = report["wall"]["median_ms"]
        .as_f64()
        .checked("the frame's wall time");
    let master = report["passes"]
        .as_array()
        .checked("passes")
        .iter()
        .find(|p| p["pass"] == "compositor.master")
        .and_then(|p| p["median_ms"].as_f64())
        .checked("the master pass's time");
    assert!(
        master > 0.0 && master <= frame && frame <= wall * 1.01,
        "master {master} ms, frame {frame} ms, wall {wall} ms"
    );
    assert_eq!(report["resolution"], serde_json::json!([96, 54]));
    assert!(report["unpaced_fps"].as_f64().checked("fps") > 0.0);
}
