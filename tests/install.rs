//! What an installation left running for weeks relies on: a saved preset
//! loads back the same, a crash resumes the playlist where it was from
//! the state file, a lost GPU device is replaced while the show goes on,
//! and a layer that keeps failing is restarted, then left out.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use sylva::base::ChangedFile;
use sylva::base::clock::Clock;
use sylva::base::status::ErrorLog;
use sylva::engine::{BenchWorkload, Layer, LayerEnv, LayerFrame, LayerKind, LayerSwitches};
use sylva::gpu::{AdapterChoice, Gpu, GpuProfiler, OUTPUT_FORMAT, RenderTarget, read_rgba8};
use sylva::params::{ParamSpec, Registry, Source, Value};
use sylva::show::{Show, StateFile};
use sylva::show::{ShowOptions, start_on};

use crate::support;
use crate::support::Checked;

const SIZE: [u32; 2] = [32, 18];

const COLONY: &str = "layers = [\"shader.aurora\", \"colony\"]\n\n[params]\n\"colony.attraction_count\" = 800\n\"colony.node_capacity\" = 2000\n\"colony.steps_per_frame\" = 2\n";

const FLUID: &str = "layers = [\"fluid\"]\n\n[params]\n\"fluid.dimensions\" = \"2d\"\n\"fluid.count\" = 400\n\"fluid.iterations\" = 4\n";

const PLAYLIST: &str = "loop = true\n\n[[entry]]\npreset = \"grow\"\nseconds = 2\ncrossfade = 0.5\n\n[[entry]]\npreset = \"pour\"\nseconds = 3\ncrossfade = 0.5\n\n[[entry]]\npreset = \"grow\"\nbeats = 8\n";

fn folder(name: &str) -> std::path::PathBuf {
    support::show_folder(
        name,
        &[
            ("presets/grow.toml", COLONY),
            ("presets/pour.toml", FLUID),
            ("presets/playlists/night.toml", PLAYLIST),
        ],
    )
}

fn frames(show: &mut Show, output: &mut RenderTarget, count: usize) {
    for _ in 0..count {
        show.frame(0.25, None, output, |_, _| {});
    }
}

#[test]
fn a_saved_preset_loads_back_with_the_same_values() {
    let root = folder("install_round_trip");
    let mut show = support::show(root.clone(), "grow", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(&show.ground.gpu.device, "round_trip", SIZE, OUTPUT_FORMAT);
    for (name, value) in [
        ("colony.growth_speed", Value::Float(3.25)),
        ("colony.render", Value::Enum(0)),
        ("shader.aurora.opacity", Value::Float(0.4)),
        ("shader.aurora.blend", Value::Enum(2)),
        ("colony.enabled", Value::Bool(false)),
    ] {
        show.registry
            .set(name, value, Source::Ui)
            .checked("setting a value");
    }
    frames(&mut show, &mut output, 2);
    show.save_preset("kept").checked("saving");
    let before: Vec<(String, Value)> = show
        .registry
        .iter()
        .filter(|(spec, _)| !spec.name.starts_with("master."))
        .filter_map(|(spec, _)| {
            Some((spec.name.clone(), show.registry.target(&spec.name)?.clone()))
        })
        .collect();
    show.load_preset("pour").checked("loading another");
    show.load_preset("kept").checked("loading the saved one");
    let layers: Vec<&str> = show.layers().iter().map(|l| l.id()).collect();
    assert_eq!(layers, ["shader.aurora", "colony"]);
    for (name, value) in &before {
        assert_eq!(
            show.registry.target(name),
            Some(value),
            "{name} came back different"
        );
    }
    assert!(before.len() > 20, "{} values compared", before.len());
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn after_a_crash_the_playlist_resumes_where_the_state_file_left_it() {
    let root = folder("install_resume");
    let options = ShowOptions {
        playlist: Some("night".into()),
        ..ShowOptions::new(root.clone(), "grow")
    };
    let state_file = StateFile::new(root.join("state/sylva-state.toml"));
    let (entry, left, speed) = {
        let mut show = support::start(options.clone(), OUTPUT_FORMAT);
        let mut output = RenderTarget::new(&show.ground.gpu.device, "resume", SIZE, OUTPUT_FORMAT);
        let mut keeper = StateFile::new(state_file.path());
        for _ in 0..14 {
            frames(&mut show, &mut output, 1);
            keeper.keep(&show);
        }
        // 3.5 s in: the second entry, 1.5 s into its 3. A knob turned.
        assert_eq!(show.preset(), Some("pour"));
        show.registry
            .set_now("fluid.speed", Value::Float(1.75), Source::Midi)
            .checked("turning a knob");
        keeper.write(&show.state()).checked("writing the state");
        (
            show.playlist_status(),
            show.clock.time,
            show.registry.float("fluid.speed"),
        )
        // The show is dropped here without a word: the crash.
    };
    assert!(
        !root.join("state/sylva-state.toml.partial").exists(),
        "no partial file is left"
    );
    let state = state_file
        .read()
        .checked("reading the state")
        .unwrap_or_else(|| panic!("the state file was written"));
    let mut show = support::start(ShowOptions::new(root.clone(), "grow"), OUTPUT_FORMAT);
    show.resume(&state).checked("resuming");
    assert_eq!(show.preset(), Some("pour"));
    assert_eq!(
        show.playlist_status(),
        entry,
        "the same entry, the same time left"
    );
    assert_eq!(show.clock.time, left);
    assert_eq!(show.registry.float("fluid.speed"), speed);
    let mut output = RenderTarget::new(&show.ground.gpu.device, "resumed", SIZE, OUTPUT_FORMAT);
    // The entry has 1.5 s left: frames start at 3.5, 3.75, … 4.75 s still
    // play it, the one starting at 5 s plays the third.
    frames(&mut show, &mut output, 6);
    assert_eq!(show.preset(), Some("pour"), "not before its time");
    frames(&mut show, &mut output, 1);
    // Its layers read their files while the second plays on.
    assert_eq!(
        show.arriving().or(show.preset()),
        Some("grow"),
        "the third entry on time"
    );
    for _ in 0..600 {
        if show.arriving().is_none() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        frames(&mut show, &mut output, 1);
    }
    assert_eq!(show.preset(), Some("grow"), "the third entry came on");
    // A damaged state file is an error, never a panic; the show starts over.
    std::fs::write(state_file.path(), "time = \"soon\"").checked("damaging the file");
    assert!(state_file.read().is_err());
    // The hardening probe: a clock of 1e300 resumed and never moved
    // again (frozen, and written back so at every restart), and a place of
    // 10^9 restarted entry 0 while logging "resumed".
    let mut frozen = state.clone();
    frozen.time = 1e300;
    let mut far = state.clone();
    if let Some(place) = far.playlist.as_mut() {
        place.position = 1_000_000_000;
    }
    for (what, bad) in [("time = 1e300", frozen), ("position 1000000000", far)] {
        let mut show = support::start(ShowOptions::new(root.clone(), "grow"), OUTPUT_FORMAT);
        let refused = show.resume(&bad).map(|()| String::new());
        let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains(what) && message.contains("starting from the top"),
            "{what}: {message}"
        );
        assert_eq!(
            show.clock.time, 0.0,
            "{what}: the clock starts from the top"
        );
        let mut output = RenderTarget::new(&show.ground.gpu.device, "refused", SIZE, OUTPUT_FORMAT);
        frames(&mut show, &mut output, 2);
        assert!(show.clock.time > 0.0, "{what}: the clock moves");
    }
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_lost_device_is_replaced_and_the_show_goes_on() {
    // A device of its own: the shared one must outlive this test.
    let choice = AdapterChoice {
        name: Some(support::adapter_name()),
        ..AdapterChoice::default()
    };
    let gpu = Gpu::new(Gpu::instance(), &choice, None, ErrorLog::default()).checked("a device");
    let root = folder("install_device_loss");
    let options = ShowOptions {
        playlist: Some("night".into()),
        ..ShowOptions::new(root.clone(), "grow")
    };
    let mut show = start_on(Arc::new(gpu), &options, OUTPUT_FORMAT).checked("starting");
    let mut output = RenderTarget::new(&show.ground.gpu.device, "lost", SIZE, OUTPUT_FORMAT);
    frames(&mut show, &mut output, 3);
    show.registry
        .set_now("colony.growth_speed", Value::Float(5.5), Source::Ui)
        .checked("a value to keep");
    let (preset, time) = (show.preset().map(str::to_string), show.clock.time);
    show.ground.gpu.device.destroy();
    // Frames on the lost device record into nothing and never panic.
    frames(&mut show, &mut output, 2);
    show.ground.gpu.wait_idle();
    assert!(show.ground.gpu.is_lost(), "the loss is noticed");
    assert!(show.ground.errors.has("gpu"), "and reported");
    show.recover_device(None).checked("recovering");
    assert!(!show.ground.gpu.is_lost(), "a new device");
    assert_eq!(show.preset().map(str::to_string), preset);
    assert_eq!(show.registry.float("colony.growth_speed"), 5.5);
    assert!(show.clock.time >= time, "the clock goes on");
    let mut output = RenderTarget::new(&show.ground.gpu.device, "recovered", SIZE, OUTPUT_FORMAT);
    frames(&mut show, &mut output, 3);
    let image = read_rgba8(&show.ground.gpu, &output.texture).checked("reading the frame");
    let lit = image
        .pixels()
        .filter(|p| p.0[..3].iter().any(|c| *c > 8))
        .count();
    assert!(lit > 0, "the new device draws the show");
    assert!(show.playlist_status().is_some(), "the playlist plays on");
    std::fs::remove_dir_all(root).ok();
}

/// Panics this many more times in `prepare` (a layer kind of the test's own).
static FRAGILE_PANICS: AtomicU32 = AtomicU32::new(0);
/// Fragile layers built so far.
static FRAGILE_BUILT: AtomicU32 = AtomicU32::new(0);

struct Fragile(String, LayerSwitches);

impl Layer for Fragile {
    fn id(&self) -> &str {
        &self.0
    }

    fn kind(&self) -> &'static LayerKind {
        &FRAGILE
    }

    fn switches(&self) -> &LayerSwitches {
        &self.1
    }

    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }

    fn prepare(&mut self, _: &LayerEnv<'_>, _: &Registry, _: &Clock, _: [u32; 2]) -> bool {
        let left = FRAGILE_PANICS.load(Ordering::SeqCst);
        if left > 0 {
            FRAGILE_PANICS.store(left - 1, Ordering::SeqCst);
            panic!("fragile layer broke");
        }
        false
    }

    fn encode(
        &self,
        _: &LayerEnv<'_>,
        _: &LayerFrame<'_>,
        _: &mut wgpu::CommandEncoder,
        _: &mut GpuProfiler,
    ) {
    }

    fn reseed(&mut self, _: u64) {}

    fn reload(&mut self, _: &LayerEnv<'_>, _: &[ChangedFile]) -> bool {
        false
    }
}

static FRAGILE: LayerKind = LayerKind {
    name: "fragile",
    create: |id, _| {
        FRAGILE_BUILT.fetch_add(1, Ordering::SeqCst);
        Box::new(Fragile(id.to_string(), LayerSwitches::new(id)))
    },
    params: |_, _, _| Ok(Vec::new()),
    bench: |_| BenchWorkload {
        resolution: [1, 1],
        unit: "nothing",
        settings: Vec::new(),
        groups: Vec::new(),
    },
    layouts: &[],
};

#[test]
fn a_layer_that_keeps_failing_is_restarted_then_left_out_and_the_others_play_on() {
    let root = folder("install_fragile");
    let mut show = support::show(root.clone(), "grow", OUTPUT_FORMAT);
    show.add_layer(&FRAGILE, "fragile");
    let mut output = RenderTarget::new(&show.ground.gpu.device, "fragile", SIZE, OUTPUT_FORMAT);
    let nodes = |show: &Show| {
        let report = show.layers()[1].report(&show.ground.gpu);
        report
            .iter()
            .find(|(name, _)| name == "nodes")
            .map_or(0.0, |(_, v)| *v)
    };
    frames(&mut show, &mut output, 2);
    assert_eq!(FRAGILE_BUILT.load(Ordering::SeqCst), 1);
    // Two failures: restarted twice, playing again.
    FRAGILE_PANICS.store(2, Ordering::SeqCst);
    frames(&mut show, &mut output, 1);
    assert_eq!(FRAGILE_BUILT.load(Ordering::SeqCst), 3, "built again twice");
    assert!(!show.layer_disabled("fragile"));
    let shown = show.ground.errors.snapshot();
    assert!(
        shown
            .iter()
            .any(|e| e.origin == "fragile" && e.message.contains("restarted (2 of 3)")),
        "{shown:?}"
    );
    let grown = nodes(&show);
    // It keeps failing: one more restart, then it is left out.
    FRAGILE_PANICS.store(1_000, Ordering::SeqCst);
    frames(&mut show, &mut output, 3);
    assert!(show.layer_disabled("fragile"));
    assert_eq!(FRAGILE_BUILT.load(Ordering::SeqCst), 4, "one restart left");
    assert!(
        show.ground
            .errors
            .snapshot()
            .iter()
            .any(|e| e.origin == "fragile" && e.message.contains("left out")),
        "{:?}",
        show.ground.errors.snapshot()
    );
    assert!(
        nodes(&show) > grown && grown > 0.0,
        "the colony grew on ({grown} → {})",
        nodes(&show)
    );
    FRAGILE_PANICS.store(0, Ordering::SeqCst);
    std::fs::remove_dir_all(root).ok();
}
