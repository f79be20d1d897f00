//! Senders and recordings that fail, as a live show meets them: a take
//! whose ffmpeg said "No space left on device" and exited 0, one whose file
//! lost its end, one written onto `/dev/full`: each a failed take on
//! screen and in the log, never "recorded"; two NDI senders without the
//! runtime: each error on screen under its own target and the log hearing
//! of each once in a while, not 20 lines a second; outputs over the pixel
//! budget refused at load with their file and line.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sylva::drivers::from_show::keep_recording;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
use sylva::outputs::send::{self, Recorder, SendOptions, SendSetup};
use sylva::outputs::{Both, Output as _};
use sylva::show::{Show, ShowOptions};

use crate::support;
use crate::support::Checked;

/// `sylva run --headless` for `frames` unpaced frames with `args` and
/// `env`; what it printed.
fn headless(frames: &str, args: &[&str], env: &[(&str, &Path)]) -> (Output, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sylva"));
    command
        .args(["run", "--headless", "--unpaced", "--size", "64x36"])
        .args(["--frames", frames])
        .args(args)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("RUST_LOG", "info,wgpu_core=warn,wgpu_hal=warn,naga=warn");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().checked("running sylva");
    let text = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, text)
}

/// A stand-in ffmpeg in `tests/out`: a shell script of `body`.
#[cfg(unix)]
fn stand_in(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = support::out_dir().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).checked("writing the stand-in");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .checked("making it runnable");
    path
}

/// Records 30 frames into `tests/out/<name>.mp4` through `ffmpeg`; what
/// sylva said, asserting the take was not called recorded and was called
/// failed.
fn record_failing(name: &str, ffmpeg: Option<&Path>) -> String {
    let take = support::out_dir().join(format!("{name}.mp4"));
    std::fs::remove_file(&take).ok();
    let take_arg = take.display().to_string();
    let env: Vec<(&str, &Path)> = ffmpeg.map(|f| ("SYLVA_FFMPEG", f)).into_iter().collect();
    let (output, text) = headless("30", &["--record", &take_arg], &env);
    assert!(output.status.success(), "the show goes on: {text}");
    assert!(
        !text.contains("recorded "),
        "a failed take called recorded: {text}"
    );
    assert!(text.contains("FAILED"), "{text}");
    text
}

#[cfg(unix)]
#[test]
fn a_take_whose_ffmpeg_said_no_space_and_exited_0_has_failed() {
    let ffmpeg = stand_in(
        "ffmpeg_disk_full.sh",
        "cat >/dev/null\necho 'av_interleaved_write_frame(): No space left on device' >&2\necho 'Error writing trailer of take.mp4: No space left on device' >&2\nexit 0",
    );
    let text = record_failing("takes_no_space", Some(&ffmpeg));
    assert!(
        text.contains("the take failed") && text.contains("No space left on device"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn a_take_whose_file_lost_its_end_has_failed() {
    // ffmpeg quiet and 0, and the file's index (at its end) gone.
    let ffmpeg = stand_in(
        "ffmpeg_cut.sh",
        "for last; do :; done\nffmpeg \"$@\" || exit $?\nsize=$(wc -c < \"$last\")\nhead -c $((size / 2)) \"$last\" > \"$last.cut\" && mv \"$last.cut\" \"$last\"\nexit 0",
    );
    let text = record_failing("takes_cut", Some(&ffmpeg));
    assert!(text.contains("does not play"), "{text}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_take_written_onto_a_full_device_says_why() {
    // The real ffmpeg, its file written into /dev/full, the standard full
    // disk: the stand-in passes every argument but the file on.
    let ffmpeg = stand_in(
        "ffmpeg_dev_full.sh",
        "n=$#\ni=0\nfor a; do i=$((i + 1)); [ \"$i\" -lt \"$n\" ] && set -- \"$@\" \"$a\"; done\nshift \"$n\"\nexec ffmpeg \"$@\" -f mp4 /dev/full",
    );
    let text = record_failing("takes_full", Some(&ffmpeg));
    assert!(text.contains("No space left on device"), "{text}");
}

#[test]
fn two_ndi_senders_without_the_runtime_are_held_back_in_the_log() {
    let missing = Path::new("/nonexistent/libndi.so.6");
    let started = std::time::Instant::now();
    let (output, text) = headless(
        "60",
        &["--send", "ndi:left", "--send", "ndi:right"],
        &[("SYLVA_NDI_LIBRARY", missing)],
    );
    assert!(output.status.success(), "{text}");
    let lines = text
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("no NDI runtime found"))
        .count();
    // Each once, then after 1, 2, 4 … seconds, with its count (it was 20
    // lines a second for as long as the show ran): at most two lines and
    // one a doubling of the run's length, whatever the machine's speed.
    let seconds = started.elapsed().as_secs_f64();
    let most = 2 * (2 + (seconds + 1.0).log2().floor() as usize);
    assert!(
        (2..=most).contains(&lines),
        "{lines} error lines about the runtime in {seconds:.0} s:\n{text}"
    );
}

/// A show folder with a plain preset and `files`.
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let preset =
        "layers = [\"shader.ramp\"]\n[params]\n\"shader.ramp.file\" = \"shader/ramp.wgsl\"\n";
    let shader = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    return vec4<f32>(in.uv.x, 0.5, 0.25, 1.0);\n}\n";
    let mut all = vec![
        ("presets/ramp.toml", preset),
        ("shaders/shader/ramp.wgsl", shader),
    ];
    all.extend_from_slice(files);
    support::show_folder(name, &all)
}

#[test]
fn two_failing_targets_each_keep_their_own_line_on_screen() {
    let mut show = support::show(folder("takes_two_ndi", &[]), "ramp", OUTPUT_FORMAT);
    let options = SendOptions {
        sends: vec!["ndi:left".into(), "ndi:right".into()],
        ..SendOptions::default()
    };
    let (mut senders, mut recorder) = send::open(SendSetup::of(&mut show), &options, 30.0);
    let mut canvas = RenderTarget::new(
        &show.ground.gpu.device,
        "takes.canvas",
        [32, 16],
        OUTPUT_FORMAT,
    );
    let mut shown: Vec<Vec<(String, String)>> = Vec::new();
    for _ in 0..40 {
        frame(&mut show, &mut senders, &mut recorder, &mut canvas);
        std::thread::sleep(std::time::Duration::from_millis(10));
        let mut errors: Vec<(String, String)> = show
            .ground
            .errors
            .snapshot()
            .iter()
            .map(|e| (e.origin.clone(), e.message.clone()))
            .collect();
        errors.sort();
        shown.push(errors);
    }
    let last = shown.last().cloned().unwrap_or_default();
    for side in ["ndi:left", "ndi:right"] {
        assert!(
            last.iter()
                .any(|(origin, message)| origin == side && message.contains("no NDI runtime")),
            "{last:?}"
        );
    }
    // Once both are up, the panel holds still.
    let settled: Vec<_> = shown.iter().skip(20).collect();
    assert!(settled.windows(2).all(|w| w[0] == w[1]), "{settled:?}");
    senders.finish();
    recorder.finish();
}

/// One live frame into `canvas` and the senders, as `Live::step` plays it.
fn frame(
    show: &mut Show,
    senders: &mut Vec<Box<dyn sylva::outputs::Output>>,
    recorder: &mut Recorder,
    canvas: &mut RenderTarget,
) {
    let mut sent = Both(senders, recorder);
    let mut outputs = Both(canvas, &mut sent);
    show.frame(1.0 / 30.0, None, &mut outputs, |_, _| {});
    outputs.submitted();
    keep_recording(recorder, show);
}

#[test]
fn outputs_over_the_pixel_budget_are_refused_at_load_with_their_line() {
    // Four outputs of 8192² held a software adapter at 0.1 fps; one pixel
    // over the budget is enough to be refused, and nothing is allocated.
    let outputs = "[[output]]\nname = \"dome\"\nsize = [8192, 4096]\n\n[[output]]\nname = \"dot\"\nsize = [1, 1]\n";
    let root = folder("takes_outputs_budget", &[("outputs/o.toml", outputs)]);
    let mut show = support::start(
        ShowOptions {
            outputs: Some("o".into()),
            ..ShowOptions::new(root, "ramp")
        },
        OUTPUT_FORMAT,
    );
    let mut canvas = RenderTarget::new(
        &show.ground.gpu.device,
        "takes.canvas",
        [32, 16],
        OUTPUT_FORMAT,
    );
    show.frame(1.0 / 60.0, None, &mut canvas, |_, _| {});
    let errors = support::error_messages(&show);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("outputs/o.toml:5") && e.contains("pixels")),
        "{errors:?}"
    );
    assert!(show.outputs().is_none());
}
