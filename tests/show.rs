//! The show as a show: presets that fail leave the running one alone,
//! unknown parameters are reported at file:line, shader parameters reach
//! the registry, the render scale waits for its knob to rest, the seed
//! reaches every simulation, and the bench measures passes.

use sylva::drivers::bench::{self, BenchOptions};
use sylva::gpu::{AdapterChoice, OUTPUT_FORMAT, RenderTarget};
use sylva::params::{Source, Value};
use sylva::show::Show;
use sylva::show::ShowOptions;

use crate::support;
use crate::support::Checked;

#[test]
fn a_bad_preset_is_reported_at_its_line_and_keeps_the_show() {
    let mut show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let before: Vec<String> = show.layers().iter().map(|l| l.id().to_string()).collect();
    let error = show.load_preset("header_typo");
    let Err(error) = error else {
        panic!("a preset naming an undeclared parameter must fail");
    };
    assert_eq!(error.line, 5, "{error}");
    assert!(
        error.to_string().contains("presets/header_typo.toml:5"),
        "{error}"
    );
    assert!(error.to_string().contains("shader.bottom.color"), "{error}");
    let after: Vec<String> = show.layers().iter().map(|l| l.id().to_string()).collect();
    assert_eq!(before, after);
    assert_eq!(show.preset(), Some("default"));
    let unknown_kind = show.load_preset("unknown_kind");
    assert!(
        matches!(&unknown_kind, Err(e) if e.line == 2),
        "{unknown_kind:?}"
    );
}

#[test]
fn shader_header_parameters_and_layer_parameters_are_registered() {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    for name in [
        "shader.aurora.speed",
        "shader.aurora.base",
        "shader.aurora.enabled",
        "shader.aurora.opacity",
        "shader.aurora.blend",
        "shader.echo.decay",
        "master.brightness",
        "master.blackout",
        "master.render_scale",
    ] {
        assert!(show.registry.contains(name), "{name} is missing");
    }
    assert_eq!(
        show.registry.get("shader.echo.blend"),
        Some(&Value::Enum(1)),
        "the preset set add"
    );
}

#[test]
fn render_scale_applies_once_the_knob_rests() {
    let mut show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "scale.output",
        [64, 32],
        OUTPUT_FORMAT,
    );
    let mut frame = |show: &mut sylva::show::Show| {
        show.frame(0.1, None, &mut output, |_, _| {});
        show.compositor().render_size()
    };
    assert_eq!(frame(&mut show), [64, 32]);
    show.registry
        .set("master.render_scale", Value::Float(0.5), Source::Midi)
        .checked("setting a test value");
    assert_eq!(
        frame(&mut show),
        [64, 32],
        "not rebuilt while the knob moves"
    );
    frame(&mut show);
    frame(&mut show);
    assert_eq!(frame(&mut show), [32, 16], "rebuilt after 0.25 s at rest");
}

#[test]
fn bench_reports_every_pass_of_a_layer() {
    let report = bench::run(&BenchOptions {
        show: ShowOptions {
            adapter: AdapterChoice {
                name: Some(support::adapter_name()),
                ..AdapterChoice::default()
            },
            ..ShowOptions::new(support::fixtures(), "")
        },
        layer: "shader.aurora".into(),
        sizes: vec![36, 72],
        steps: 5,
        set: vec!["shader.aurora.speed=0.5".into()],
        resolution: None,
        timeline: true,
    });
    let report = match report {
        Ok(r) => r,
        Err(e) => panic!("{e:#}"),
    };
    assert_eq!(report.results.len(), 2);
    assert_eq!(report.results[1].resolution, [128, 72]);
    let passes: Vec<&str> = report.results[0]
        .passes
        .iter()
        .map(|p| p.pass.as_str())
        .collect();
    assert_eq!(
        passes,
        [
            "compositor.clear",
            "scene.depth.clear",
            "scene.shadow.clear",
            "shader.aurora",
            "compositor.blend.shader.aurora",
            "compositor.master",
            "outputs.copy"
        ],
        "the clears and the output's copy are timed too, outside passes"
    );
    assert!(
        report.results[0]
            .passes
            .iter()
            .all(|p| p.median_ms > 0.0 && p.p95_ms >= p.median_ms)
    );
    let timeline = &report.results[0].timeline;
    assert_eq!(timeline.len(), 5, "one entry a measured frame");
    assert!(
        timeline
            .iter()
            .all(|f| f.len() == 7 && f[3].0 == "shader.aurora" && f[3].1 > 0.0),
        "{timeline:?}"
    );
}

/// The simulation layer `layer` of `preset` after a few frames at `seed`.
fn simulated(preset: &str, layer: &str, seed: u64) -> Vec<[f32; 4]> {
    let mut show = support::start(
        ShowOptions {
            seed,
            ..ShowOptions::new(support::fixtures(), preset)
        },
        OUTPUT_FORMAT,
    );
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "seed.output",
        [48, 32],
        OUTPUT_FORMAT,
    );
    for _ in 0..6 {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    }
    let texture = show
        .compositor()
        .layer_target(layer)
        .unwrap_or_else(|| panic!("{preset} has no {layer} target"));
    sylva::gpu::read_rgba16f(&show.ground.gpu, texture).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_seed_reaches_every_simulation() {
    for (preset, layer) in [("colony_small", "colony"), ("fluid_small", "fluid")] {
        let first = simulated(preset, layer, 7);
        assert!(first.iter().any(|p| p[3] > 0.0), "{preset} draws something");
        assert_eq!(
            first,
            simulated(preset, layer, 7),
            "{preset}: one seed, one picture"
        );
        assert_ne!(
            first,
            simulated(preset, layer, 8),
            "{preset}: another seed, another picture"
        );
    }
}

#[test]
fn a_simulation_fading_out_keeps_running_until_it_is_gone() {
    let mut show = support::show(support::fixtures(), "colony_small", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "fade.output",
        [48, 32],
        OUTPUT_FORMAT,
    );
    let mut frame = |show: &mut Show| show.frame(0.25, None, &mut output, |_, _| {});
    frame(&mut show);
    show.registry
        .set_now("master.crossfade", Value::Float(1.0), Source::Ui)
        .checked("setting the crossfade time");
    show.load_preset("fluid_small")
        .checked("crossfading to the fluid");
    let nodes = |show: &Show| {
        let leaving = show
            .outgoing()
            .map(|o| o.stack.layers[0].report(&show.ground.gpu));
        let figure = leaving.and_then(|r| r.into_iter().find(|(name, _)| name == "nodes"));
        figure.map_or(0.0, |(_, n)| n)
    };
    frame(&mut show);
    let early = nodes(&show);
    frame(&mut show);
    let later = nodes(&show);
    assert!(
        later > early && early > 0.0,
        "the colony grew from {early} to {later} nodes while fading"
    );
    assert_eq!(show.layers()[0].id(), "fluid", "the fluid is on stage");
    frame(&mut show);
    frame(&mut show);
    assert!(show.outgoing().is_none(), "gone after its second");
}

/// The preset on stage, or the one on its way there (a preset a playlist
/// asks for comes on once its layers have read their files).
fn playing(show: &Show) -> Option<&str> {
    show.arriving().or(show.preset())
}

#[test]
fn a_playlist_plays_its_entries_for_their_seconds_and_beats_and_takes_edits_at_the_next() {
    let playlist = "[[entry]]\npreset = \"a\"\nseconds = 2\n\n[[entry]]\npreset = \"b\"\nbeats = 4\ncrossfade = 0.0\n";
    let root = support::show_folder(
        "show_playlist",
        &[
            ("presets/a.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/c.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/playlists/p.toml", playlist),
        ],
    );
    let mut show = support::start(
        ShowOptions {
            playlist: Some("p".into()),
            watch: true,
            ..ShowOptions::new(root.clone(), "a")
        },
        OUTPUT_FORMAT,
    );
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "playlist.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    let mut run = |show: &mut Show, seconds: f32| {
        for _ in 0..(seconds / 0.25).round() as usize {
            show.frame(0.25, None, &mut output, |_, _| {});
        }
    };
    assert_eq!(playing(&show), Some("a"));
    run(&mut show, 1.75);
    assert_eq!(playing(&show), Some("a"), "2 seconds are not over");
    run(&mut show, 0.5);
    assert_eq!(playing(&show), Some("b"));
    let status = show.playlist_status().unwrap_or_default();
    assert!(
        status.contains("2/2 b") && status.contains("beats left"),
        "{status}"
    );
    // Four beats at 120 bpm are two seconds; at 60 bpm, four.
    show.registry
        .set_now("master.bpm", Value::Float(60.0), Source::Ui)
        .checked("slowing the tempo");
    run(&mut show, 3.0);
    assert_eq!(playing(&show), Some("b"), "4 beats at 60 bpm last 4 s");
    run(&mut show, 1.5);
    assert_eq!(playing(&show), Some("a"), "loops");
    // Asked to step: the next entry now.
    show.apply(sylva::command::Command::Playlist(
        sylva::command::PlaylistCommand::Next,
    ))
    .checked("stepping the playlist");
    assert_eq!(playing(&show), Some("b"));
    // A malformed save is refused with file:line, the playlist plays on; a
    // good one takes effect at the next entry. (Frames are paced a little,
    // as a show's are, so the watcher's thread gets the software GPU's
    // busy cores now and then.)
    std::fs::write(
        root.join("presets/playlists/p.toml"),
        "[[entry]]\npreset = \"c\"\n",
    )
    .checked("saving a broken playlist");
    let started = std::time::Instant::now();
    while !show.ground.errors.has("playlist") {
        assert!(
            started.elapsed().as_secs() < 20,
            "the broken save is reported: {:?} {:?}",
            show.ground.errors.snapshot(),
            show.playlist_status()
        );
        run(&mut show, 0.25);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let shown = support::error_messages(&show);
    assert!(
        shown.iter().any(|m| m.contains("playlists/p.toml:1")),
        "{shown:?}"
    );
    std::fs::write(
        root.join("presets/playlists/p.toml"),
        "[[entry]]\npreset = \"c\"\nseconds = 100\n",
    )
    .checked("saving the playlist");
    let started = std::time::Instant::now();
    while playing(&show) != Some("c") {
        assert!(
            started.elapsed().as_secs() < 30,
            "the saved playlist never took over"
        );
        run(&mut show, 0.25);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_script_from_the_command_line_plays_through_a_playlist_whose_entries_name_their_own() {
    // Found by the hardening probe: `--script` without a preset played the default playlist,
    // and each entry's own script replaced the one given.
    let root = support::show_folder(
        "show_script_through_playlist",
        &[
            ("presets/a.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            (
                "presets/playlists/two.toml",
                "[[entry]]\npreset = \"a\"\nseconds = 0.5\nscript = \"scripts/entry.lua\"\n\
                 [[entry]]\npreset = \"b\"\nseconds = 0.5\nscript = \"scripts/entry.lua\"\n",
            ),
            (
                "scripts/entry.lua",
                "function update(dt) persist.who = 'entry' end\n",
            ),
            (
                "scripts/given.lua",
                "function update(dt) persist.who = 'given' end\n",
            ),
        ],
    );
    let options = sylva::show::ShowOptions {
        playlist: Some("two".into()),
        script: Some("given.lua".into()),
        ..sylva::show::ShowOptions::new(root.clone(), "a")
    };
    let mut show = support::start(options, OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "script.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    for entry in ["a", "b"] {
        // The playlist moves on after half a second of show time; the
        // entry's preset then arrives once its shader is read, in wall
        // time, so the frames wait for it without moving the show on (an
        // entry must not end before it has arrived).
        for _ in 0..2000 {
            let dt = if show.arriving().is_some() { 0.0 } else { 0.1 };
            show.frame(dt, None, &mut output, |_, _| {});
            if show.preset() == Some(entry) {
                break;
            }
            if show.arriving().is_some() {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        assert_eq!(show.preset(), Some(entry));
        assert_eq!(show.script().file(), "given.lua", "entry {entry}");
        assert_eq!(show.script().persisted("who").as_deref(), Some("given"));
    }
    std::fs::remove_dir_all(root).ok();
}

/// The moves that rock the tank and rain on it (scripts/moves/fluid.lua
/// and rain.lua, danced by the fluid, rain, downpour and world presets
/// and the default show) play past their first paddle stroke and pour
/// (beats 8 and 16) without a script error, in a small tank.
#[test]
fn the_tank_s_moves_play_two_phrases_without_a_script_error() {
    for script in ["scripts/fluid.lua", "scripts/rain.lua"] {
        let mut options = ShowOptions::new(support::fixtures(), "fluid_small_pbf");
        options.script = Some(script.to_string());
        let mut show = support::start(options, OUTPUT_FORMAT);
        let mut output = RenderTarget::new(
            &show.ground.gpu.device,
            "moves.output",
            [32, 32],
            OUTPUT_FORMAT,
        );
        // 10 s of show time at 120 bpm: twenty beats.
        for _ in 0..40 {
            show.frame(0.25, None, &mut output, |_, _| {});
        }
        assert!(show.clock.beats >= 16.0, "{script}: two phrases played");
        let errors = show.ground.errors.snapshot();
        assert!(errors.is_empty(), "{script}: {errors:?}");
    }
}
