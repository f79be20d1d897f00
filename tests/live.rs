//! Live coding: shaders and scripts saved while the show runs. Each test
//! makes its own show folder in a temporary directory, runs frames and
//! waits (up to a generous ceiling, logging the measured delay) for the
//! watcher to deliver the change. No timing is asserted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sylva::command::{Command, OscArg, ScriptEvent};
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};
use sylva::show::Show;
use sylva::show::ShowOptions;

use crate::support;
use crate::support::Checked;

/// How long a test waits for the watcher before failing.
const CEILING: Duration = Duration::from_secs(10);

const LIVE_SHADER: &str = "// @param level float 0.5 min=0 max=1\n\
// @param tint colour 1,0,0,1\n\
\n\
@fragment\n\
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
    return vec4<f32>(params.tint.rgb * params.level, 1.0);\n\
}\n";

/// A show folder with one shader layer and optionally a script.
fn show_folder(name: &str, script: Option<&str>) -> PathBuf {
    let root = support::out_dir().join(format!("live_{name}"));
    std::fs::remove_dir_all(&root).ok();
    for dir in ["shaders/shader", "presets", "scripts"] {
        std::fs::create_dir_all(root.join(dir)).checked("writing the test show");
    }
    write(&root.join("shaders/shader/live.wgsl"), LIVE_SHADER);
    let script_line = script.map_or(String::new(), |_| {
        "script = \"scripts/live.lua\"\n".to_string()
    });
    write(
        &root.join("presets/live.toml"),
        &format!("layers = [\"shader.live\"]\n{script_line}"),
    );
    if let Some(script) = script {
        write(&root.join("scripts/live.lua"), script);
    }
    root
}

fn write(path: &Path, text: &str) {
    if let Err(error) = std::fs::write(path, text) {
        panic!("writing {}: {error}", path.display());
    }
}

/// Saves the way many editors do: write a temporary file, rename it over.
fn save_atomically(path: &Path, text: &str) {
    let temporary = path.with_extension("tmp~");
    write(&temporary, text);
    if let Err(error) = std::fs::rename(&temporary, path) {
        panic!("renaming onto {}: {error}", path.display());
    }
}

fn start(root: PathBuf, watch: bool) -> (Show, RenderTarget) {
    let show = support::start(
        ShowOptions {
            watch,
            ..ShowOptions::new(root, "live")
        },
        OUTPUT_FORMAT,
    );
    let output = RenderTarget::new(
        &show.ground.gpu.device,
        "live.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    (show, output)
}

fn frame(show: &mut Show, output: &mut RenderTarget) {
    show.frame(1.0 / 60.0, None, output, |_, _| {});
}

/// The red channel the live layer drew last frame.
fn red(show: &Show) -> f32 {
    let texture = show.compositor().layer_target("shader.live");
    match texture.map(|t| read_rgba16f(&show.ground.gpu, t)) {
        Some(Ok(texels)) => texels[0][0],
        other => panic!("reading the live layer: {other:?}"),
    }
}

/// Runs frames until `done` holds; returns how long it took.
fn frames_until(
    show: &mut Show,
    output: &mut RenderTarget,
    what: &str,
    done: impl Fn(&Show) -> bool,
) -> Duration {
    let started = Instant::now();
    loop {
        frame(show, output);
        if done(show) {
            let delay = started.elapsed();
            eprintln!("{what}: after {delay:?}");
            return delay;
        }
        assert!(
            started.elapsed() < CEILING,
            "{what}: not within {CEILING:?}; errors: {:?}",
            show.ground.errors.snapshot()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn shader_edits_go_live_and_broken_saves_keep_the_last_good_version() {
    let root = show_folder("shader", None);
    let (mut show, mut output) = start(root.clone(), true);
    frame(&mut show, &mut output);
    assert!((red(&show) - 0.5).abs() < 1e-3, "starts at level 0.5");
    show.registry
        .set_now("shader.live.level", Value::Float(0.75), Source::Ui)
        .checked("setting a test value");
    frame(&mut show, &mut output);

    let file = root.join("shaders/shader/live.wgsl");
    save_atomically(
        &file,
        &LIVE_SHADER.replace(
            "params.tint.rgb * params.level",
            "params.tint.rgb * params.level * 0.5",
        ),
    );
    frames_until(&mut show, &mut output, "valid edit live", |r| {
        (red(r) - 0.375).abs() < 1e-3
    });
    assert_eq!(
        show.registry.float("shader.live.level"),
        0.75,
        "the performer's value survives the reload"
    );

    write(
        &file,
        &LIVE_SHADER.replace(
            "vec4<f32>(params.tint.rgb * params.level, 1.0)",
            "vec4<f32>(params.tint.rgb, oops)",
        ),
    );
    frames_until(&mut show, &mut output, "broken save reported", |r| {
        r.ground.errors.has("shader.live")
    });
    let errors = show.ground.errors.snapshot();
    let message = &errors
        .iter()
        .find(|e| e.origin == "shader.live")
        .map(|e| e.message.clone())
        .unwrap_or_default();
    assert!(
        message.starts_with("shaders/shader/live.wgsl:6:"),
        "{message}"
    );
    frame(&mut show, &mut output);
    assert!(
        (red(&show) - 0.375).abs() < 1e-3,
        "the last good version keeps drawing"
    );

    write(&file, LIVE_SHADER);
    frames_until(&mut show, &mut output, "fix recovers", |r| {
        !r.ground.errors.has("shader.live") && (red(r) - 0.75).abs() < 1e-3
    });

    // Deleted (the layer keeps drawing and says so), then recreated.
    std::fs::remove_file(&file).ok();
    frames_until(&mut show, &mut output, "deletion reported", |r| {
        r.ground.errors.has("shader.live")
    });
    frame(&mut show, &mut output);
    assert!(
        (red(&show) - 0.75).abs() < 1e-3,
        "still drawing after the file vanished"
    );
    write(
        &file,
        &LIVE_SHADER.replace("params.tint.rgb * params.level", "params.tint.rgb * 0.25"),
    );
    frames_until(&mut show, &mut output, "recreated file live", |r| {
        !r.ground.errors.has("shader.live") && (red(r) - 0.25).abs() < 1e-3
    });
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn scripts_set_and_ramp_parameters() {
    let script = "function setup()\n  sylva.set('shader.live.level', 0.25)\n  sylva.ramp('shader.live.tint', {0, 1, 0, 1}, 0.5, 'linear')\n  sylva.layer('shader.live').opacity = 0.5\nend\n";
    let (mut show, mut output) = start(show_folder("ramp", Some(script)), false);
    assert_eq!(show.registry.float("shader.live.level"), 0.25);
    assert_eq!(
        show.registry.target("shader.live.opacity"),
        Some(&Value::Float(0.5)),
        "opacity glides to 0.5"
    );
    for _ in 0..40 {
        frame(&mut show, &mut output);
    }
    assert_eq!(
        show.registry.get("shader.live.tint"),
        Some(&Value::Colour([0.0, 1.0, 0.0, 1.0]))
    );
}

#[test]
fn a_performer_holds_against_the_script_and_a_preset_s_script_stops_with_it() {
    // The script writes the level every frame, as scripts/fluid.lua writes
    // the gravity: an OSC write must stick all the same.
    let script = "function update(dt)\n  sylva.set('shader.live.level', 0.25)\nend\n";
    let root = show_folder("hold", Some(script));
    write(
        &root.join("presets/plain.toml"),
        "layers = [\"shader.live\"]\n",
    );
    let (mut show, mut output) = start(root, false);
    frame(&mut show, &mut output);
    assert_eq!(show.registry.float("shader.live.level"), 0.25);
    let from_touchdesigner = Source::Osc("192.168.1.20:7000".into());
    show.apply(Command::Set(
        "shader.live.level".into(),
        Value::Float(0.75),
        from_touchdesigner,
    ))
    .checked("the OSC write");
    for _ in 0..10 {
        frame(&mut show, &mut output);
    }
    assert_eq!(
        show.registry.float("shader.live.level"),
        0.75,
        "the performer's value holds"
    );
    show.apply(Command::Release(Some("shader.live.level".into())))
        .checked("/sylva/release");
    frame(&mut show, &mut output);
    assert_eq!(
        show.registry.float("shader.live.level"),
        0.25,
        "released to the script"
    );
    // A preset without a script: the old one writes no more.
    show.apply(Command::LoadPreset("plain".into(), Some(0.0)))
        .checked("loading the plain preset");
    frame(&mut show, &mut output);
    show.apply(Command::Set(
        "shader.live.level".into(),
        Value::Float(0.5),
        Source::Show,
    ))
    .checked("a write by the show");
    for _ in 0..10 {
        frame(&mut show, &mut output);
    }
    assert_eq!(
        show.script().file(),
        "",
        "the script stopped with its preset"
    );
    assert!(!show.script().is_running());
    assert_eq!(show.registry.float("shader.live.level"), 0.5);
}

#[test]
fn a_script_that_fails_to_load_keeps_the_old_one_and_persist_survives() {
    let first = "function setup() persist.loads = (persist.loads or 0) + 1 end\nfunction update(dt) sylva.set('shader.live.level', 0.25) end\n";
    let root = show_folder("reload", Some(first));
    let (mut show, mut output) = start(root.clone(), true);
    frame(&mut show, &mut output);
    assert_eq!(show.script().persisted("loads").as_deref(), Some("1"));

    let file = root.join("scripts/live.lua");
    save_atomically(
        &file,
        "function update(dt)\n  sylva.set('shader.live.level', 0.9\nend\n",
    );
    frames_until(&mut show, &mut output, "syntax error reported", |r| {
        r.ground.errors.has("scripts/live.lua")
    });
    let message = show
        .ground
        .errors
        .snapshot()
        .iter()
        .map(|e| e.message.clone())
        .collect::<String>();
    assert!(message.contains("scripts/live.lua:3:"), "{message}");
    // Set by the show, not a performer, whose write would hold it.
    show.registry
        .set_now("shader.live.level", Value::Float(0.6), Source::Show)
        .checked("setting a test value");
    frame(&mut show, &mut output);
    assert_eq!(
        show.registry.float("shader.live.level"),
        0.25,
        "the old update() still runs"
    );

    save_atomically(&file, &first.replace("0.25", "0.5"));
    frames_until(&mut show, &mut output, "fixed script live", |r| {
        r.registry.float("shader.live.level") == 0.5
    });
    assert_eq!(
        show.script().persisted("loads").as_deref(),
        Some("2"),
        "persist kept its count"
    );
    assert!(!show.ground.errors.has("scripts/live.lua"));
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn an_endless_loop_is_interrupted_and_the_frames_go_on() {
    let script =
        "function update(dt)\n  while true do end\nend\nfunction on_beat(n) persist.beat = n end\n";
    let (mut show, mut output) = start(show_folder("loop", Some(script)), false);
    let started = Instant::now();
    for _ in 0..3 {
        frame(&mut show, &mut output);
    }
    eprintln!(
        "three frames with an endless update(): {:?}",
        started.elapsed()
    );
    let message = show
        .ground
        .errors
        .snapshot()
        .iter()
        .map(|e| e.message.clone())
        .collect::<String>();
    assert!(
        message.contains("scripts/live.lua:2: instruction budget"),
        "{message}"
    );
    assert!(message.contains("update() is disabled"), "{message}");
    show.dispatch(&ScriptEvent::Beat(7));
    assert_eq!(
        show.script().persisted("beat").as_deref(),
        Some("7"),
        "other callbacks still run"
    );
}

#[test]
fn a_memory_bomb_is_stopped() {
    let script = "function update(dt)\n  local t = {}\n  while true do t[#t + 1] = string.rep('x', 1000000) .. #t end\nend\n";
    let (mut show, mut output) = start(show_folder("memory", Some(script)), false);
    frame(&mut show, &mut output);
    frame(&mut show, &mut output);
    let message = show
        .ground
        .errors
        .snapshot()
        .iter()
        .map(|e| e.message.clone())
        .collect::<String>();
    assert!(
        message.contains("memory") || message.contains("budget"),
        "{message}"
    );
}

#[test]
fn the_sandbox_has_no_io_and_require_stays_in_scripts() {
    let script = "local helper = require('lib.helper')\n\
        function setup()\n\
          persist.io = tostring(io)\n\
          persist.execute = tostring(os.execute)\n\
          persist.clock = type(os.clock)\n\
          persist.load = tostring(load)\n\
          persist.helper = helper.answer\n\
          persist.escape = tostring(pcall(require, '..secret'))\n\
        end\n";
    let root = show_folder("sandbox", Some(script));
    std::fs::create_dir_all(root.join("scripts/lib")).checked("writing the test show");
    write(
        &root.join("scripts/lib/helper.lua"),
        "return { answer = 42 }\n",
    );
    let (mut show, _output) = start(root.clone(), false);
    let host = show.script();
    assert_eq!(host.persisted("io").as_deref(), Some("nil"));
    assert_eq!(host.persisted("execute").as_deref(), Some("nil"));
    assert_eq!(host.persisted("clock").as_deref(), Some("function"));
    assert_eq!(host.persisted("load").as_deref(), Some("nil"));
    assert_eq!(host.persisted("helper").as_deref(), Some("42"));
    assert_eq!(host.persisted("escape").as_deref(), Some("false"));
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn events_reach_their_callbacks() {
    let script = "function on_beat(n) persist.beat = n end\n\
        function on_midi(m) persist.midi = m.type .. ':' .. m.channel .. ':' .. m.number .. ':' .. m.value end\n\
        function on_osc(address, args) persist.osc = address .. ':' .. args[1] .. ':' .. args[2] end\n\
        function on_preset(name) persist.preset = name end\n";
    let (mut show, mut output) = start(show_folder("events", Some(script)), false);
    assert_eq!(show.script().persisted("preset").as_deref(), Some("live"));
    for _ in 0..40 {
        frame(&mut show, &mut output);
    }
    assert_eq!(
        show.script().persisted("beat").as_deref(),
        Some("1"),
        "120 bpm: beat 1 starts at 0.5 s"
    );
    show.dispatch(&ScriptEvent::Midi {
        kind: "cc".into(),
        channel: 1,
        number: 16,
        value: 127,
    });
    assert_eq!(
        show.script().persisted("midi").as_deref(),
        Some("cc:1:16:127")
    );
    show.dispatch(&ScriptEvent::Osc(
        "/fader".into(),
        vec![OscArg::Number(0.5), OscArg::Text("x".into())],
    ));
    assert_eq!(
        show.script().persisted("osc").as_deref(),
        Some("/fader:0.5:x")
    );
}

#[test]
fn saving_the_running_preset_reloads_it_and_a_broken_one_is_refused() {
    let root = show_folder("preset", None);
    let (mut show, mut output) = start(root.clone(), true);
    let file = root.join("presets/live.toml");
    save_atomically(
        &file,
        "layers = [\"shader.live\"]\n\n[params]\n\"shader.live.level\" = 0.3\n",
    );
    frames_until(&mut show, &mut output, "preset saved", |r| {
        r.registry.float("shader.live.level") == 0.3
    });
    write(
        &file,
        "layers = [\"shader.live\"]\n\n[params]\n\"shader.live.levle\" = 0.9\n",
    );
    frames_until(&mut show, &mut output, "broken preset reported", |r| {
        r.ground.errors.has("preset")
    });
    let message = show
        .ground
        .errors
        .snapshot()
        .iter()
        .map(|e| e.message.clone())
        .collect::<String>();
    assert!(message.contains("presets/live.toml:4"), "{message}");
    assert_eq!(
        show.registry.float("shader.live.level"),
        0.3,
        "the running preset stays"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_saved_simulation_kernel_reloads_in_the_running_show() {
    let original = include_str!("../shaders/fluid/force.wgsl");
    let root = support::show_folder(
        "live_fluid_kernel",
        &[
            (
                "presets/live.toml",
                include_str!("fixtures/presets/fluid_small.toml"),
            ),
            ("shaders/fluid/force.wgsl", original),
        ],
    );
    let (mut show, mut output) = start(root.clone(), true);
    frame(&mut show, &mut output);
    let file = root.join("shaders/fluid/force.wgsl");
    save_atomically(
        &file,
        &original.replace("fn compute_force(", "fn compute_force( {"),
    );
    frames_until(
        &mut show,
        &mut output,
        "the broken kernel is reported",
        |r| {
            r.ground.errors.snapshot().iter().any(|e| {
                e.origin == "fluid kernels" && e.message.contains("shaders/fluid/force.wgsl:")
            })
        },
    );
    frame(&mut show, &mut output);
    save_atomically(&file, original);
    frames_until(&mut show, &mut output, "the fixed kernel goes live", |r| {
        !r.ground.errors.has("fluid kernels")
    });
    std::fs::remove_dir_all(root).ok();
}
