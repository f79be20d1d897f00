//! Media through texture inputs: a shader layer's `texture` parameter
//! shows a PNG and a clip from the show's `media/` folder, texel for
//! texel; a clip in lockstep shows frame n at n / fps exactly; hostile
//! and missing files and paths out of the show are errors on screen with
//! the show going on; a looping clip keeps memory flat.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sylva::engine::inputs::camera::{CameraFeed, Cameras, RETRY};
use sylva::engine::inputs::still::DecodedImage;

use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};
use sylva::show::Show;

use crate::support;
use crate::support::Checked;

/// Frame and texture size of the tests.
const SIDE: u32 = 8;

/// A show whose one layer passes its texture input through, starting
/// with `source`.
pub(crate) fn media_show(name: &str, source: &str) -> (PathBuf, Show) {
    let preset = format!(
        "layers = [\"shader.through\"]\n[params]\n\"shader.through.file\" = \"shader/through.wgsl\"\n\"shader.through.picture\" = \"{source}\"\n"
    );
    let shader = "// @param picture texture below \"What is shown\"\n\
                  @fragment\n\
                  fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
                  \x20   return sample_picture(in.uv);\n}\n";
    let root = support::show_folder(
        name,
        &[
            ("presets/media.toml", preset.as_str()),
            ("shaders/shader/through.wgsl", shader),
        ],
    );
    std::fs::create_dir_all(root.join("media")).checked("making media/");
    (root.clone(), support::show(root, "media", OUTPUT_FORMAT))
}

/// The pattern of frame `k` of a clip (or of the still, k = 0): RGB per
/// texel, each frame distinct.
pub(crate) fn pattern(k: u32) -> Vec<u8> {
    (0..SIDE * SIDE)
        .flat_map(|i| {
            let (x, y) = (i % SIDE, i / SIDE);
            [(x * 32) as u8, (y * 32) as u8, (k * 24 + 16) as u8]
        })
        .collect()
}

/// The layer's output, linear RGBA, rows top first.
fn layer_texels(show: &Show) -> Vec<[f32; 4]> {
    let target = show.compositor().layer_target("shader.through");
    match target.map(|t| read_rgba16f(&show.ground.gpu, t)) {
        Some(Ok(texels)) => texels,
        other => panic!("readback: {other:?}"),
    }
}

/// How far the layer's output is from `rgb`, at most over all texels.
fn distance_from(show: &Show, rgb: &[u8]) -> f32 {
    layer_texels(show)
        .iter()
        .zip(rgb.chunks(3))
        .flat_map(|(t, want)| (0..3).map(move |c| (t[c] - support::srgb_to_linear(want[c])).abs()))
        .fold(0.0, f32::max)
}

/// How many 8-bit sRGB levels the layer's output is from `rgb`, at most.
fn levels_from(show: &Show, rgb: &[u8]) -> f32 {
    let encode = |l: f32| {
        let c = if l <= 0.003_130_8 {
            l * 12.92
        } else {
            1.055 * l.powf(1.0 / 2.4) - 0.055
        };
        c * 255.0
    };
    layer_texels(show)
        .iter()
        .zip(rgb.chunks(3))
        .flat_map(|(t, want)| (0..3).map(move |c| (encode(t[c]) - f32::from(want[c])).abs()))
        .fold(0.0, f32::max)
}

pub(crate) fn frame(show: &mut Show, output: &mut RenderTarget, dt: f32) {
    show.frame(dt, None, output, |_, _| {});
}

/// A picture of `rgb` at `path`, in the format its ending says.
fn write_picture(path: &Path, side: [u32; 2], rgb: Vec<u8>) {
    let Some(image) = image::RgbImage::from_raw(side[0], side[1], rgb) else {
        panic!("pattern size");
    };
    image.save(path).checked("writing the picture");
}

/// A clip of `frames` (RGB, [`SIDE`]²) at `fps`, encoded by ffmpeg with
/// `codec`'s arguments.
pub(crate) fn write_clip(path: &Path, frames: &[Vec<u8>], fps: u32, codec: &[&str]) {
    let mut child = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24"])
        .args([
            "-s",
            &format!("{SIDE}x{SIDE}"),
            "-r",
            &fps.to_string(),
            "-i",
            "-",
        ])
        .args(codec)
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .checked("running ffmpeg (make test installs it)");
    let Some(stdin) = child.stdin.as_mut() else {
        panic!("ffmpeg's stdin");
    };
    for frame in frames {
        stdin.write_all(frame).checked("writing frames");
    }
    drop(child.stdin.take());
    let status = child.wait().checked("ffmpeg");
    assert!(status.success(), "ffmpeg made the clip");
}

/// A lossless clip of the first `frames` patterns at `fps`.
fn write_patterns(path: &Path, frames: u32, fps: u32) {
    let patterns: Vec<Vec<u8>> = (0..frames).map(pattern).collect();
    write_clip(path, &patterns, fps, &["-c:v", "png"]);
}

/// The show's picture, read back at the layer's size.
pub(crate) fn side_output(show: &Show) -> RenderTarget {
    RenderTarget::new(
        &show.ground.gpu.device,
        "media.output",
        [SIDE; 2],
        OUTPUT_FORMAT,
    )
}

/// The through layer shows `file`.
fn name_picture(show: &mut Show, file: &str) {
    show.registry
        .set(
            "shader.through.picture",
            Value::Text(file.into()),
            Source::Ui,
        )
        .checked("naming the picture");
}

/// Frames until the layer shows `pattern(k)`, at most three seconds of
/// them: whether it did.
fn shown_within(show: &mut Show, output: &mut RenderTarget, k: u32) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        frame(show, output, 1.0 / 60.0);
        if distance_from(show, &pattern(k)) < 4e-3 {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_png_or_tiff_in_media_is_shown_texel_for_texel() {
    for file in ["media/dots.png", "media/dots.tif"] {
        let (root, mut show) = media_show("media_png", "below");
        write_picture(&root.join(file), [SIDE, SIDE], pattern(0));
        show.media_in_lockstep();
        let mut output = side_output(&show);
        name_picture(&mut show, file);
        frame(&mut show, &mut output, 1.0 / 60.0);
        let off = distance_from(&show, &pattern(0));
        assert!(off < 4e-3, "{file} comes through: {off}");
        assert!(!show.ground.errors.has(file), "no error for {file}");
    }
}

#[test]
fn a_picture_saved_again_while_the_show_runs_is_shown() {
    let file = "media/saved.png";
    let (root, mut show) = media_show("media_saved", "below");
    write_picture(&root.join(file), [SIDE, SIDE], pattern(0));
    // The show's one file watcher, on media/ as on shaders/.
    show.watch(Box::new(|| {}));
    show.media_in_lockstep();
    let mut output = side_output(&show);
    name_picture(&mut show, file);
    frame(&mut show, &mut output, 1.0 / 60.0);
    assert!(
        distance_from(&show, &pattern(0)) < 4e-3,
        "the first version"
    );
    write_picture(&root.join(file), [SIDE, SIDE], pattern(1));
    assert!(
        shown_within(&mut show, &mut output, 1),
        "the saved version is not shown: {}",
        distance_from(&show, &pattern(1))
    );
}

#[test]
fn a_media_folder_made_while_the_show_runs_is_watched_from_then_on() {
    let file = "media/late.png";
    let (root, mut show) = media_show("media_late_folder", "below");
    std::fs::remove_dir_all(root.join("media")).checked("no media/ at the start");
    show.watch(Box::new(|| {}));
    show.media_in_lockstep();
    let mut output = side_output(&show);
    std::fs::create_dir_all(root.join("media")).checked("media/ made");
    write_picture(&root.join(file), [SIDE, SIDE], pattern(0));
    name_picture(&mut show, file);
    assert!(shown_within(&mut show, &mut output, 0), "the first version");
    // Saved again in the folder made after the show started.
    std::thread::sleep(Duration::from_millis(300));
    write_picture(&root.join(file), [SIDE, SIDE], pattern(1));
    assert!(shown_within(&mut show, &mut output, 1), "the saved version");
}

#[test]
fn a_clip_in_lockstep_shows_frame_n_at_n_over_fps() {
    let (root, mut show) = media_show("media_clip", "media/clip.mkv");
    write_patterns(&root.join("media/clip.mkv"), 8, 10);
    show.media_in_lockstep();
    show.registry
        .set(
            "shader.through.picture_loop",
            Value::Bool(false),
            Source::Ui,
        )
        .checked("no loop");
    let mut output = side_output(&show);
    // 25 show frames a second over a 10 fps clip: show frame n at n / 25 s
    // shows clip frame floor(n * 10 / 25).
    for n in 0..12u32 {
        frame(
            &mut show,
            &mut output,
            if n == 0 { 0.0 } else { 1.0 / 25.0 },
        );
        let k = (n * 10 / 25).min(7);
        let off = distance_from(&show, &pattern(k));
        assert!(off < 4e-3, "show frame {n} shows clip frame {k}: {off}");
    }
    // Past the end without loop: the last frame stays.
    for _ in 0..10 {
        frame(&mut show, &mut output, 1.0 / 25.0);
    }
    assert!(distance_from(&show, &pattern(7)) < 4e-3, "held at the end");
    assert!(!show.ground.errors.has("media/clip.mkv"), "no error");
}

#[test]
fn a_live_clip_at_the_shows_rate_shows_every_frame_from_its_first_whatever_the_jitter() {
    use sylva::engine::inputs::video::{Decoding, Transport, Video};
    let root = support::show_folder("media_live", &[]);
    std::fs::create_dir_all(root.join("media")).checked("making media/");
    let clip = root.join("media/clip.mkv");
    write_patterns(&clip, 10, 30);
    let source = (root.clone(), PathBuf::from("media/clip.mkv"));
    let mut video = Video::open(source, Transport::default(), Decoding::default());
    // The show's frames at the clip's rate, as a paced show's wall clock
    // measures them: each a few ms early or late, now and then one 7 ms
    // late and the next early to catch up. ffmpeg takes a moment to start:
    // its first frame is the clip's first, not one caught up to.
    let period = 1.0 / 30.0;
    let jitter = [0.004, -0.004, 0.0, 0.007, -0.007, 0.003, -0.003, 0.0];
    let mut shown = Vec::new();
    for n in 0..200 {
        let dt = if shown.is_empty() {
            period
        } else {
            period + jitter[n % jitter.len()]
        };
        // The clip's clock runs on `dt`; the wall clock only gives ffmpeg
        // time to decode (generously: the test machine is busy with others).
        std::thread::sleep(Duration::from_secs_f64(dt) + Duration::from_millis(30));
        if let Some(rgba) = video
            .advance(dt, Transport::default(), false)
            .checked("playing")
        {
            let rgb: Vec<u8> = rgba
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            let k = (0..10).find(|k| pattern(*k) == rgb);
            shown.push(k);
            video.give_back(rgba);
        }
        if shown.len() == 25 {
            break;
        }
    }
    let expected: Vec<Option<u32>> = (0..25).map(|n| Some(n % 10)).collect();
    assert_eq!(shown, expected, "every frame once, in order, looping");
    assert_eq!(video.counts, (25, 0), "none passed over");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn hostile_missing_and_outside_sources_are_errors_and_the_show_goes_on() {
    let (root, mut show) = media_show("media_hostile", "below");
    show.media_in_lockstep();
    let mut output = side_output(&show);
    // Random bytes named as a clip, and as a picture.
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(root.join("media/noise.mp4"), &noise).checked("writing noise");
    std::fs::write(root.join("media/noise.png"), &noise).checked("writing noise");
    // A PNG whose header claims 30000 x 30000 (the pixels never come).
    let bomb = support::png_header_only(30_000, 30_000);
    std::fs::write(root.join("media/bomb.png"), &bomb).checked("writing the bomb");
    let cases = [
        ("media/noise.mp4", "ffmpeg"),
        ("media/noise.png", "image"),
        ("media/bomb.png", "8192"),
        ("media/missing.png", "cannot read"),
        ("media/../presets/media.toml", "show folder"),
    ];
    for (source, says) in cases {
        show.registry
            .set(
                "shader.through.picture",
                Value::Text(source.into()),
                Source::Ui,
            )
            .checked("naming the source");
        for _ in 0..3 {
            frame(&mut show, &mut output, 1.0 / 60.0);
        }
        let shown: Vec<String> = (show.ground.errors.snapshot().iter())
            .map(|e| format!("{}: {}", e.origin, e.message))
            .collect();
        let shown = shown.join("\n");
        assert!(
            shown.contains(source) && shown.to_lowercase().contains(says),
            "{source}: an error saying {says:?} on screen, got:\n{shown}"
        );
        assert!(
            distance_from(&show, &vec![0; (SIDE * SIDE * 3) as usize]) < 1e-3,
            "black stands in"
        );
    }
}

#[test]
fn a_looping_clip_keeps_memory_flat() {
    let (root, _) = media_show("media_soak", "media/loop.mkv");
    write_patterns(&root.join("media/loop.mkv"), 8, 10);
    // A process of its own, so the other tests' memory is not counted:
    // 1,200 frames at 0.1 s of a 0.8 s clip, 150 loops, its resident
    // memory sampled as it runs.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["render", "--project"])
        .arg(&root)
        .args([
            "--preset", "media", "--frames", "1200", "--fps", "10", "--every", "600",
        ])
        .arg("--out")
        .arg(root.join("frames"))
        .args(["--size", "8x8"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .checked("starting sylva render");
    let status = format!("/proc/{}/status", child.id());
    let mut samples: Vec<u64> = Vec::new();
    while child.try_wait().checked("waiting for sylva").is_none() {
        let kib = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        });
        samples.extend(kib);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output().checked("sylva render");
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the render runs: {said}");
    assert!(samples.len() >= 9, "sampled {} times", samples.len());
    // After a third of the run (start-up done), against the last third.
    let third = samples.len() / 3;
    let median = |part: &[u64]| {
        let mut part = part.to_vec();
        part.sort_unstable();
        part[part.len() / 2]
    };
    let (early, late) = (
        median(&samples[third..2 * third]),
        median(&samples[2 * third..]),
    );
    let grown = late.saturating_sub(early);
    assert!(
        grown < 8 << 10,
        "memory grew {grown} KiB over the loops ({early} -> {late} KiB)"
    );
}

/// A camera a test plugs in and pulls out.
struct TestCameras {
    plugged: Arc<AtomicBool>,
}

struct TestFeed {
    plugged: Arc<AtomicBool>,
}

impl Cameras for TestCameras {
    fn names(&self) -> Vec<String> {
        if self.plugged.load(Ordering::SeqCst) {
            vec!["video0: Test Cam".into()]
        } else {
            Vec::new()
        }
    }

    fn open(&self, _: &str) -> Result<Box<dyn CameraFeed>, String> {
        Ok(Box::new(TestFeed {
            plugged: self.plugged.clone(),
        }))
    }
}

impl CameraFeed for TestFeed {
    fn newest(&mut self) -> Result<Option<DecodedImage>, String> {
        if !self.plugged.load(Ordering::SeqCst) {
            return Err("unplugged".into());
        }
        let rgba = pattern(3)
            .chunks(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect();
        Ok(Some(DecodedImage {
            size: [SIDE, SIDE],
            rgba,
        }))
    }
}

#[test]
fn a_camera_plugged_unplugged_and_back_shows_black_and_says_so_meanwhile() {
    let (_, mut show) = media_show("media_camera", "camera:test");
    let plugged = Arc::new(AtomicBool::new(true));
    show.see_from(Arc::new(TestCameras {
        plugged: plugged.clone(),
    }));
    let mut output = side_output(&show);
    frame(&mut show, &mut output, 1.0 / 60.0);
    assert!(
        distance_from(&show, &pattern(3)) < 4e-3,
        "the camera's picture"
    );
    assert!(!show.ground.errors.has("camera:test"));
    plugged.store(false, Ordering::SeqCst);
    frame(&mut show, &mut output, 1.0 / 60.0);
    let black = vec![0; (SIDE * SIDE * 3) as usize];
    assert!(
        distance_from(&show, &black) < 1e-3,
        "black while it is gone"
    );
    assert!(show.ground.errors.has("camera:test"), "and it says so");
    plugged.store(true, Ordering::SeqCst);
    std::thread::sleep(RETRY + std::time::Duration::from_millis(100));
    frame(&mut show, &mut output, 1.0 / 60.0);
    assert!(distance_from(&show, &pattern(3)) < 4e-3, "back when it is");
    assert!(!show.ground.errors.has("camera:test"), "the error goes");
    show.registry
        .set(
            "shader.through.picture",
            Value::Text("camera:nothing".into()),
            Source::Ui,
        )
        .checked("asking for another camera");
    frame(&mut show, &mut output, 1.0 / 60.0);
    let said = support::error_messages(&show);
    assert!(
        said.iter()
            .any(|m| m.contains("no camera whose name contains \"nothing\"")),
        "{said:?}"
    );
}

/// What ffmpeg itself decodes frame `k` of `clip` to, RGB.
fn ffmpeg_frame(clip: &Path, k: u32) -> Vec<u8> {
    let output = Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(clip)
        .args(["-vf", &format!("select=eq(n\\,{k})"), "-frames:v", "1"])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .checked("decoding with ffmpeg");
    assert_eq!(output.stdout.len(), (SIDE * SIDE * 3) as usize, "one frame");
    output.stdout
}

#[test]
fn a_yuv_clip_is_converted_on_the_gpu_as_ffmpeg_converts_it() {
    let (root, mut show) = media_show("media_yuv", "media/yuv.mkv");
    let clip = root.join("media/yuv.mkv");
    let solid: Vec<Vec<u8>> = (0..4u8)
        .map(|k| [40 + 50 * k, 200 - 40 * k, 90 + 30 * k].repeat((SIDE * SIDE) as usize))
        .collect();
    write_clip(&clip, &solid, 10, &["-c:v", "ffv1", "-pix_fmt", "yuv420p"]);
    show.media_in_lockstep();
    // The software adapter would get RGBA from ffmpeg: ask for the planes.
    show.media_planes(true);
    plays_as_ffmpeg_decodes(&mut show, &clip, 4, "media/yuv.mkv");
    let said = show.media_report().join("\n");
    assert!(said.contains("media/yuv.mkv: 4 uploads"), "{said}");
    assert!(
        said.contains("as 4:2:0 planes"),
        "converted on the GPU: {said}"
    );
}

/// Plays the first `frames` of `clip` (at 10 fps) in lockstep and checks
/// each is what ffmpeg itself decodes it to, within 3 levels of 8-bit
/// sRGB (ffmpeg's converters round in integers); `what` names the case.
pub(crate) fn plays_as_ffmpeg_decodes(show: &mut Show, clip: &Path, frames: u32, what: &str) {
    let mut output = side_output(show);
    for k in 0..frames {
        frame(show, &mut output, if k == 0 { 0.0 } else { 0.1 });
        let levels = levels_from(show, &ffmpeg_frame(clip, k));
        assert!(
            levels <= 3.0,
            "{what}, frame {k}: {levels} levels from ffmpeg's"
        );
    }
}

/// Advances `source` each 10 ms until `done` says what it gave is enough,
/// or `seconds` pass; what it gave last.
fn advanced_until(
    source: &mut dyn sylva::engine::inputs::source::TextureSource,
    seconds: f64,
    done: impl Fn(&Result<Option<DecodedImage>, String>) -> bool,
) -> Result<Option<DecodedImage>, String> {
    use sylva::engine::inputs::source::Playing;
    let playing = Playing {
        dt: 0.01,
        transport: Default::default(),
        lockstep: false,
    };
    let cameras = TestCameras {
        plugged: Arc::new(AtomicBool::new(false)),
    };
    let start = std::time::Instant::now();
    loop {
        let given = source.advance(playing, &cameras).map_err(|e| e.to_string());
        if done(&given) || start.elapsed().as_secs_f64() > seconds {
            return given;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_ndi_source_shows_the_pictures_sent_goes_black_when_it_vanishes_and_comes_back() {
    use sylva::engine::inputs::ndi::{LOST_AFTER, NdiSource};
    let log = support::out_dir().join("ndi_in_stub.log");
    let library = support::ndi_stub("in", &log);
    let control = support::control_file(&log);
    std::fs::remove_file(&control).ok();
    // A part of the source's name finds it: "STUB (Test Pattern)".
    let mut source = NdiSource::open("test pattern", vec![library]);
    let picture = advanced_until(&mut source, 10.0, |given| matches!(given, Ok(Some(_))));
    let picture = picture
        .checked("a picture from the stub")
        .checked("a picture within 10 s");
    assert_eq!(picture.size, [64, 36]);
    // Pixel (x, y) is (4x, 7y, the frame's number, 255), read past the
    // stub's padded rows.
    for (x, y) in [(0, 0), (10, 5), (63, 35)] {
        let at = (y * 64 + x) * 4;
        assert_eq!(
            picture.rgba[at..at + 2],
            [4 * x as u8, 7 * y as u8],
            "({x}, {y})"
        );
        assert_eq!(picture.rgba[at + 3], 255);
    }
    let number = picture.rgba[2];
    let later = advanced_until(
        &mut source,
        5.0,
        |given| matches!(given, Ok(Some(p)) if p.rgba[2] != number),
    );
    assert!(
        matches!(later, Ok(Some(_))),
        "the pictures move on: {later:?}"
    );
    // Gone: the last picture stays a while (no error yet), then the
    // source is lost, black, with the reason on screen.
    std::fs::write(&control, "gone").checked("sending the source away");
    std::thread::sleep(Duration::from_millis(300));
    let quiet = advanced_until(&mut source, 0.1, |_| false);
    assert!(matches!(quiet, Ok(None)), "{quiet:?}");
    assert!(sylva::engine::inputs::source::TextureSource::black_when_lost(&source));
    let lost = advanced_until(&mut source, LOST_AFTER.as_secs_f64() + 5.0, Result::is_err);
    let why = lost.err().checked("an error once the source is silent");
    assert!(why.contains("ndi:test pattern"), "{why}");
    // Back: pictures again, by itself.
    std::fs::remove_file(&control).checked("bringing the source back");
    let back = advanced_until(&mut source, 10.0, |given| matches!(given, Ok(Some(_))));
    assert!(
        matches!(back, Ok(Some(_))),
        "the source came back: {back:?}"
    );
}

#[test]
fn ndi_sources_are_texture_names_check_accepts() {
    use sylva::engine::inputs::check_name;
    assert!(check_name("ndi:STUDIO (OBS)").is_ok());
    assert!(check_name("ndi:").is_err());
    assert!(check_name("ndi:   ").is_err());
}

#[test]
fn the_ndi_finder_lists_the_sources_on_the_network_as_texture_names() {
    use sylva::engine::inputs::ndi::NdiFinder;
    let log = support::out_dir().join("ndi_find_stub.log");
    let library = support::ndi_stub("find", &log);
    std::fs::remove_file(support::control_file(&log)).ok();
    let finder = NdiFinder::start(vec![library]);
    let start = std::time::Instant::now();
    while finder.sources().is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(finder.sources(), ["ndi:STUB (Test Pattern)"]);
    let without = NdiFinder::start(vec![PathBuf::from("/nonexistent/libndi.so.6")]);
    std::thread::sleep(Duration::from_millis(200));
    assert!(without.sources().is_empty(), "no runtime, no sources");
}

/// An X server of its own for a test: Xvfb on a display numbered after
/// `offset` and this process, stopped when dropped.
#[cfg(target_os = "linux")]
struct OwnX {
    display: String,
    server: std::process::Child,
}

#[cfg(target_os = "linux")]
impl OwnX {
    fn start(offset: u32, size: &str) -> Self {
        let number = 200 + offset + std::process::id() % 500;
        let display = format!(":{number}");
        let server = Command::new("Xvfb")
            .args([display.as_str(), "-screen", "0", size, "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .checked("starting Xvfb (make deps installs it)");
        // Until the server answers on its socket: a socket left by an
        // earlier server of the same number is there before this one
        // listens.
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        let start = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&socket).is_err()
            && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { display, server }
    }
}

#[cfg(target_os = "linux")]
impl Drop for OwnX {
    fn drop(&mut self) {
        self.server.kill().ok();
        self.server.wait().ok();
    }
}

#[cfg(target_os = "linux")]
#[test]
fn the_screen_and_a_window_are_captured_as_they_are_drawn() {
    use sylva::engine::inputs::screen::{self, Captured};
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        AtomEnum, ChangeWindowAttributesAux, ConnectionExt, CreateWindowAux, PropMode, WindowClass,
    };
    use x11rb::wrapper::ConnectionExt as _;
    let x = OwnX::start(0, "320x240x24");
    // The root orange, a window on its left half teal, titled.
    let (connection, screen) = x11rb::connect(Some(&x.display)).checked("the test's X server");
    let root = connection.setup().roots[screen].root;
    let orange = 0x00ff_8040;
    let teal = 0x0020_a0c0;
    let background = ChangeWindowAttributesAux::new().background_pixel(orange);
    connection
        .change_window_attributes(root, &background)
        .checked("the root's colour");
    connection
        .clear_area(false, root, 0, 0, 0, 0)
        .checked("the root cleared");
    let window = connection.generate_id().checked("a window id");
    let aux = CreateWindowAux::new().background_pixel(teal);
    let class = WindowClass::INPUT_OUTPUT;
    (connection.create_window(24, window, root, 0, 0, 160, 240, 0, class, 0, &aux))
        .checked("a window");
    let (name, kind) = (AtomEnum::WM_NAME, AtomEnum::STRING);
    (connection.change_property8(PropMode::REPLACE, window, name, kind, b"Slides - Pattern"))
        .checked("its title");
    connection.map_window(window).checked("shown");
    connection.flush().checked("sent");
    std::thread::sleep(Duration::from_millis(300));
    let rgba_of = |pixel: u32| [(pixel >> 16) as u8, (pixel >> 8) as u8, pixel as u8, 255];

    let mut screen_source = screen::open(Some(x.display.clone()), Captured::Screen);
    let picture = advanced_until(&mut screen_source, 10.0, |given| {
        matches!(given, Ok(Some(_)))
    });
    let picture = picture
        .checked("the screen")
        .checked("a picture within 10 s");
    assert_eq!(picture.size, [320, 240]);
    let at = |p: &DecodedImage, x: usize, y: usize| {
        let i = (y * p.size[0] as usize + x) * 4;
        [p.rgba[i], p.rgba[i + 1], p.rgba[i + 2], p.rgba[i + 3]]
    };
    assert_eq!(at(&picture, 40, 120), rgba_of(teal), "the window's half");
    assert_eq!(at(&picture, 280, 120), rgba_of(orange), "the root's half");

    let mut window_source =
        screen::open(Some(x.display.clone()), Captured::named("window:pattern"));
    let picture = advanced_until(&mut window_source, 10.0, |given| {
        matches!(given, Ok(Some(_)))
    });
    let picture = picture
        .checked("the window")
        .checked("a picture within 10 s");
    assert_eq!(picture.size, [160, 240]);
    let teal_pixels = picture
        .rgba
        .chunks_exact(4)
        .filter(|p| *p == rgba_of(teal))
        .count();
    assert_eq!(teal_pixels, 160 * 240, "the window alone, all of it");

    // A window that is not there is an error (black), said by its name.
    let mut missing = screen::open(
        Some(x.display.clone()),
        Captured::named("window:nothing here"),
    );
    let lost = advanced_until(&mut missing, 10.0, Result::is_err);
    let why = lost.err().checked("an error for a missing window");
    assert!(why.contains("nothing here"), "{why}");
}

#[test]
fn screen_and_window_names_are_texture_names_check_accepts() {
    use sylva::engine::inputs::check_name;
    assert!(check_name("screen").is_ok());
    assert!(check_name("window:Keynote").is_ok());
    assert!(check_name("window:").is_err());
    assert!(check_name("screens").is_err());
}

#[test]
fn spout_and_syphon_names_are_texture_names_and_elsewhere_an_error_on_screen() {
    use sylva::engine::inputs::check_name;
    for scheme in ["spout", "syphon"] {
        assert!(check_name(&format!("{scheme}:Resolume Arena")).is_ok());
        assert!(
            check_name(&format!("{scheme}:")).is_ok(),
            "the first or active one"
        );
        assert!(check_name(&format!("{scheme}:{}", "n".repeat(300))).is_err());
        assert!(check_name(&format!("{scheme}s")).is_err());
    }
    for (name, elsewhere, here, native) in [
        (
            "spout:TouchDesigner",
            "Spout is Windows'",
            "no Spout sender",
            cfg!(windows),
        ),
        (
            "syphon:VDMX",
            "Syphon is macOS'",
            "Syphon",
            cfg!(target_os = "macos"),
        ),
    ] {
        let (root, mut show) = media_show("media_spout_syphon", name);
        let mut output = side_output(&show);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let said = loop {
            frame(&mut show, &mut output, 1.0 / 60.0);
            let said = support::error_messages(&show).join("\n");
            if said.contains(name) || std::time::Instant::now() > deadline {
                break said;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let why = if native { here } else { elsewhere };
        assert!(said.contains(why), "{said}");
        std::fs::remove_dir_all(&root).ok();
    }
}
