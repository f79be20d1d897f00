//! Projector outputs from an outputs file: each output pixel of a corner
//! pin shows the canvas point the homography sends it to; a mesh passes
//! through its moved point; two soft-edged outputs add up to the canvas in
//! linear light; a mask hides; a malformed file is a `file:line` error with
//! the show and its outputs going on; `save` writes the mapping back and
//! nothing else; `render --outputs` writes each output's frames.

use std::path::PathBuf;

use image::RgbaImage;
use sylva::command::Command;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};
use sylva::outputs::geometry::Homography;
use sylva::params::{Source, Value};
use sylva::show::{Show, ShowOptions};

use crate::support;
use crate::support::Checked;

/// The canvas of the tests.
const CANVAS: [u32; 2] = [100, 60];

/// A smooth gradient, so a canvas point's colour is known between pixels.
const GRADIENT: &str = "@fragment\n\
    fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
    \x20   return vec4<f32>(in.uv.x * 0.8, in.uv.y * 0.8, 0.3, 1.0);\n}\n";

/// A show folder `name` with the gradient preset and `outputs/o.toml`.
fn folder(name: &str, outputs: &str) -> PathBuf {
    let preset = "layers = [\"shader.ramp\"]\n[params]\n\"shader.ramp.file\" = \"shader/ramp.wgsl\"\n\"master.tonemap\" = \"clamp\"\n";
    support::show_folder(
        name,
        &[
            ("presets/ramp.toml", preset),
            ("shaders/shader/ramp.wgsl", GRADIENT),
            ("outputs/o.toml", outputs),
        ],
    )
}

fn start(root: PathBuf) -> Show {
    support::start(
        ShowOptions {
            outputs: Some("o".into()),
            // A saved outputs file is read again when the watcher says so.
            watch: true,
            ..ShowOptions::new(root, "ramp")
        },
        OUTPUT_FORMAT,
    )
}

/// One frame; the canvas and every output read back.
fn frame(show: &mut Show) -> (RgbaImage, Vec<RgbaImage>) {
    let mut canvas = RenderTarget::new(
        &show.ground.gpu.device,
        "outputs.canvas",
        CANVAS,
        OUTPUT_FORMAT,
    );
    show.frame(1.0 / 60.0, None, &mut canvas, |_, _| {});
    let outputs = show
        .outputs()
        .map(|o| o.outputs())
        .unwrap_or_default()
        .iter()
        .map(|o| read_rgba8(&show.ground.gpu, &o.target.texture).checked("reading an output"))
        .collect();
    (
        read_rgba8(&show.ground.gpu, &canvas.texture).checked("reading the canvas"),
        outputs,
    )
}

/// The canvas at `p` (0..1), bilinear between pixel centres.
fn canvas_at(canvas: &RgbaImage, p: [f64; 2]) -> [f64; 3] {
    let x = (p[0] * f64::from(canvas.width()) - 0.5).clamp(0.0, f64::from(canvas.width() - 1));
    let y = (p[1] * f64::from(canvas.height()) - 0.5).clamp(0.0, f64::from(canvas.height() - 1));
    let (x0, y0) = (x.floor() as u32, y.floor() as u32);
    let (x1, y1) = (
        (x0 + 1).min(canvas.width() - 1),
        (y0 + 1).min(canvas.height() - 1),
    );
    let (fx, fy) = (x - f64::from(x0), y - f64::from(y0));
    let at = |x, y| canvas.get_pixel(x, y).0.map(f64::from);
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let top = at(x0, y0)[c] * (1.0 - fx) + at(x1, y0)[c] * fx;
        let bottom = at(x0, y1)[c] * (1.0 - fx) + at(x1, y1)[c] * fx;
        *o = top * (1.0 - fy) + bottom * fy;
    }
    out
}

/// Fails with `message`, the actual output written to `tests/out`.
#[track_caller]
fn fail_with(actual: &RgbaImage, name: &str, message: String) -> ! {
    let path = support::out_dir().join(format!("outputs_{name}_actual.png"));
    actual.save(&path).ok();
    panic!("{message} (actual output: {})", path.display());
}

#[test]
fn each_pixel_of_a_corner_pin_shows_the_point_the_homography_sends_it_to() {
    let corners = [[0.1, 0.05], [0.95, 0.0], [0.8, 1.0], [0.0, 0.9]];
    let root = folder(
        "outputs_pin",
        "[[output]]\nname = \"pin\"\nsize = [80, 60]\nregion = [0.2, 0.1, 0.6, 0.8]\ncorners = [[0.1, 0.05], [0.95, 0.0], [0.8, 1.0], [0.0, 0.9]]\n",
    );
    let mut show = start(root);
    let (canvas, outputs) = frame(&mut show);
    let output = &outputs[0];
    let back = Homography::from_square(&corners).inverse();
    let (mut inside, mut outside) = (0, 0);
    for (x, y, pixel) in output.enumerate_pixels() {
        let at = [
            (f64::from(x) + 0.5) / f64::from(output.width()),
            (f64::from(y) + 0.5) / f64::from(output.height()),
        ];
        let uv = back.map(at);
        let margin = 0.03;
        if uv.iter().all(|c| (margin..=1.0 - margin).contains(c)) {
            inside += 1;
            let point = [0.2 + uv[0] * 0.6, 0.1 + uv[1] * 0.8];
            let expected = canvas_at(&canvas, point);
            let worst = (0..3)
                .map(|c| (f64::from(pixel.0[c]) - expected[c]).abs())
                .fold(0.0, f64::max);
            if worst > 3.0 {
                fail_with(
                    output,
                    "pin",
                    format!(
                        "pixel ({x}, {y}) is {:?}, the canvas at {point:?} is {expected:?}",
                        pixel.0
                    ),
                );
            }
        } else if uv.iter().any(|c| !(-margin..=1.0 + margin).contains(c)) {
            outside += 1;
            if pixel.0[..3] != [0, 0, 0] {
                fail_with(
                    output,
                    "pin",
                    format!("pixel ({x}, {y}) outside the pin is {:?}", pixel.0),
                );
            }
        }
    }
    assert!(
        inside > 2000 && outside > 300,
        "{inside} inside, {outside} outside"
    );
}

/// A file's `canvas` sets the canvas's size whatever the driver's: one
/// machine of a wall two outputs wide renders the whole wall and shows
/// its right half, 1:1.
#[test]
fn a_files_canvas_is_rendered_whole_and_an_output_shows_its_part() {
    let root = folder(
        "outputs_canvas",
        "canvas = [200, 60]\n[[output]]\nname = \"right\"\nsize = [100, 60]\nregion = [0.5, 0.0, 0.5, 1.0]\n",
    );
    let mut show = start(root);
    let (_, outputs) = frame(&mut show);
    let picture = show.picture().checked("the canvas");
    assert_eq!(picture.size(), [200, 60], "the canvas the file asks for");
    let canvas = read_rgba8(&show.ground.gpu, picture.texture()).checked("reading the canvas");
    let right = &outputs[0];
    // The output's columns are the whole canvas's right half.
    for x in [2, 50, 97] {
        let point = [0.5 + (f64::from(x) + 0.5) / 200.0, 0.5];
        let expected = canvas_at(&canvas, point);
        let pixel = right.get_pixel(x, 30).0;
        let worst = (0..3)
            .map(|c| (f64::from(pixel[c]) - expected[c]).abs())
            .fold(0.0, f64::max);
        assert!(
            worst <= 4.0,
            "column {x}: {pixel:?}, the canvas at {point:?}: {expected:?}"
        );
    }
    let refused = sylva::outputs::OutputsPlan::parse(
        "o.toml",
        "canvas = [0, 60]\n[[output]]\nname = \"a\"\nsize = [8, 8]\n",
    );
    assert!(
        refused.is_err_and(|e| e.line == 1),
        "a canvas side of 0 is refused at its line"
    );
}

#[test]
fn a_mesh_passes_through_its_moved_point() {
    let root = folder(
        "outputs_mesh",
        "[[output]]\nname = \"curved\"\nsize = [90, 60]\nmesh = { columns = 3, rows = 3, points = [[0,0],[0.5,0],[1,0],[0,0.5],[0.65,0.35],[1,0.5],[0,1],[0.5,1],[1,1]] }\n",
    );
    let mut show = start(root);
    let (canvas, outputs) = frame(&mut show);
    let output = &outputs[0];
    let centre = canvas_at(&canvas, [0.5, 0.5]);
    let (x, y) = ((0.65 * 90.0) as u32, (0.35 * 60.0) as u32);
    let got = output.get_pixel(x, y).0;
    let worst = (0..3)
        .map(|c| (f64::from(got[c]) - centre[c]).abs())
        .fold(0.0, f64::max);
    if worst > 4.0 {
        fail_with(
            output,
            "mesh",
            format!("the moved point shows {got:?}, the canvas centre is {centre:?}"),
        );
    }
    // The corners stay put: the top-left pixel shows the canvas's.
    let corner = canvas_at(&canvas, [0.5 / 90.0, 0.5 / 60.0]);
    let first = output.get_pixel(0, 0).0;
    assert!(
        (f64::from(first[0]) - corner[0]).abs() < 4.0,
        "{first:?} {corner:?}"
    );
}

#[test]
fn two_soft_edged_outputs_add_up_to_the_canvas_in_linear_light() {
    let root = folder(
        "outputs_blend",
        "[[output]]\nname = \"left\"\nsize = [60, 60]\nregion = [0.0, 0.0, 0.6, 1.0]\n[output.blend]\nright = 0.33333333\ngamma = 2.2\ncurve = 2.0\n\n\
         [[output]]\nname = \"right\"\nsize = [60, 60]\nregion = [0.4, 0.0, 0.6, 1.0]\n[output.blend]\nleft = 0.33333333\ngamma = 2.2\ncurve = 2.0\n",
    );
    let mut show = start(root);
    let (canvas, outputs) = frame(&mut show);
    let light = |v: u8| (f64::from(v) / 255.0).powf(2.2);
    let mut worst: f64 = 0.0;
    for y in [5, 30, 55] {
        for k in 0..20 {
            let (l, r) = (
                outputs[0].get_pixel(40 + k, y).0,
                outputs[1].get_pixel(k, y).0,
            );
            let c = canvas.get_pixel(40 + k, y).0;
            for ch in 0..3 {
                let sum = light(l[ch]) + light(r[ch]);
                worst = worst.max((sum - light(c[ch])).abs());
            }
        }
        // Outside the overlap each output is the canvas itself.
        let (l, c) = (outputs[0].get_pixel(10, y).0, canvas.get_pixel(10, y).0);
        assert!(
            (i32::from(l[0]) - i32::from(c[0])).abs() <= 2,
            "{l:?} {c:?}"
        );
    }
    if worst > 0.012 {
        fail_with(
            &outputs[0],
            "blend",
            format!("the overlap's light is off the canvas's by {worst:.4}"),
        );
    }
    // The ramp is a ramp: the left output fades across the overlap.
    let fading: Vec<u8> = (40..60).map(|x| outputs[0].get_pixel(x, 30).0[2]).collect();
    assert!(
        fading.windows(2).all(|w| w[1] <= w[0]) && fading[19] < fading[0] / 4,
        "{fading:?}"
    );
}

#[test]
fn a_mask_hides_where_it_is_black() {
    let root = folder(
        "outputs_mask",
        "[[output]]\nname = \"masked\"\nsize = [40, 20]\nmask = \"masks/half.png\"\n",
    );
    std::fs::create_dir_all(root.join("masks")).checked("making masks/");
    let mut mask = RgbaImage::new(2, 1);
    mask.put_pixel(0, 0, image::Rgba([255, 255, 255, 255]));
    mask.put_pixel(1, 0, image::Rgba([0, 0, 0, 255]));
    mask.save(root.join("masks/half.png"))
        .checked("writing the mask");
    let mut show = start(root);
    let (_, outputs) = frame(&mut show);
    let output = &outputs[0];
    assert!(
        output.get_pixel(3, 10).0[2] > 40,
        "{:?}",
        output.get_pixel(3, 10)
    );
    assert_eq!(&output.get_pixel(36, 10).0[..3], &[0, 0, 0]);
}

#[test]
fn a_mask_saved_while_the_show_runs_is_read_again() {
    let root = folder(
        "outputs_mask_saved",
        "[[output]]\nname = \"masked\"\nsize = [40, 20]\nmask = \"media/mask.png\"\n",
    );
    std::fs::create_dir_all(root.join("media")).checked("making media/");
    let mask = |right: u8| {
        let mut mask = RgbaImage::new(2, 1);
        mask.put_pixel(0, 0, image::Rgba([255, 255, 255, 255]));
        mask.put_pixel(1, 0, image::Rgba([right, right, right, 255]));
        mask.save(root.join("media/mask.png"))
            .checked("writing the mask");
    };
    mask(255);
    let mut show = start(root.clone());
    let (_, outputs) = frame(&mut show);
    assert!(outputs[0].get_pixel(36, 10).0[2] > 40, "unmasked at first");
    // Saved black on the right: the watcher says so, the file is read
    // again and the right goes dark.
    mask(0);
    let outputs = frames_until(&mut show, |_, outputs| {
        outputs
            .first()
            .is_some_and(|o| o.get_pixel(36, 10).0[..3] == [0, 0, 0])
    });
    assert_eq!(
        &outputs[0].get_pixel(36, 10).0[..3],
        &[0, 0, 0],
        "{:?}",
        support::error_messages(&show)
    );
    assert!(outputs[0].get_pixel(3, 10).0[2] > 40, "the left stays lit");
}

/// Frames until `done` says so (at most two seconds of them); the
/// outputs of the last.
fn frames_until(show: &mut Show, done: impl Fn(&Show, &[RgbaImage]) -> bool) -> Vec<RgbaImage> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let (_, outputs) = frame(show);
        if done(show, &outputs) || std::time::Instant::now() > deadline {
            return outputs;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn a_malformed_outputs_file_is_an_error_with_its_line_and_the_outputs_stay() {
    let good = "[[output]]\nname = \"a\"\nsize = [16, 8]\n";
    let root = folder(
        "outputs_malformed",
        "[[output]]\nname = \"a\"\nsize = [16, 8]\ncorners = [[0,0],[1,1],[1,0],[0,1]]\n",
    );
    let mut show = start(root.clone());
    frame(&mut show);
    let errors = support::error_messages(&show);
    assert!(
        errors
            .iter()
            .any(|e| e.contains("outputs/o.toml:4") && e.contains("convex")),
        "{errors:?}"
    );
    assert!(show.outputs().is_none());
    // Fixed and saved: read again once the watcher says so.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(root.join("outputs/o.toml"), good).checked("fixing the file");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // Read on a thread of its own: built a frame or two later.
    let outputs = frames_until(&mut show, |_, outputs| outputs.len() == 1);
    assert_eq!(outputs.len(), 1, "{:?}", support::error_messages(&show));
    // Broken again: the error is shown and the output it had stays.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(
        root.join("outputs/o.toml"),
        "[[output]]\nname = \"a\"\nsize = [16, \n",
    )
    .checked("breaking the file");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let outputs = frames_until(&mut show, |show, _| {
        (support::error_messages(show).iter()).any(|e| e.contains("outputs/o.toml:"))
    });
    assert_eq!(outputs.len(), 1);
    let errors = support::error_messages(&show);
    assert!(
        errors.iter().any(|e| e.contains("outputs/o.toml:")),
        "{errors:?}"
    );
}

#[test]
fn save_writes_the_mapping_back_into_the_outputs_file_and_nothing_else() {
    let text = "# the wall\n[[output]]\nname = \"wall\"\nsize = [16, 8]\nsend = \"ndi:wall\"\n";
    let root = folder("outputs_save", text);
    let mut show = start(root.clone());
    frame(&mut show);
    show.apply(Command::Set(
        "output.wall.corner.2.x".into(),
        Value::Float(0.875),
        Source::Osc("test".into()),
    ))
    .checked("moving a corner");
    show.apply(Command::SaveOutputs).checked("saving");
    frame(&mut show);
    let written = std::fs::read_to_string(root.join("outputs/o.toml")).checked("reading back");
    assert!(written.starts_with("# the wall\n"), "{written}");
    assert!(written.contains("send = \"ndi:wall\""), "{written}");
    assert!(written.contains("[0.875, 1.0]"), "{written}");
    let presets: Vec<_> = std::fs::read_dir(root.join("presets"))
        .checked("presets")
        .collect();
    assert_eq!(presets.len(), 1, "save touched the presets");
    // The file read again gives the same mapping.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    frame(&mut show);
    assert_eq!(show.registry.float("output.wall.corner.2.x"), 0.875);
}

#[test]
fn render_writes_each_outputs_frames_in_its_own_folder() {
    let root = folder(
        "outputs_render",
        "[[output]]\nname = \"left\"\nsize = [32, 16]\nregion = [0, 0, 0.5, 1]\n\n[[output]]\nname = \"right\"\nsize = [24, 16]\nregion = [0.5, 0, 0.5, 1]\n",
    );
    let out = root.join("frames");
    let mut show_options = ShowOptions::new(root, "ramp");
    show_options.outputs = Some("o".into());
    sylva::drivers::headless::render(&sylva::drivers::headless::RenderOptions {
        show: show_options,
        frames: Some(2),
        size: [64, 16],
        out: Some(out.clone()),
        fps: 30.0,
        every: 1,
        video: None,
    })
    .checked("rendering");
    for (name, width) in [("left", 32), ("right", 24)] {
        let frame = image::open(out.join(name).join("frame_00001.png")).checked("an output frame");
        assert_eq!((frame.width(), frame.height()), (width, 16));
    }
    assert!(out.join("frame_00001.png").is_file());
}

#[test]
fn an_installation_resumes_with_its_outputs_and_their_mapping() {
    let root = folder(
        "outputs_resume",
        "[[output]]\nname = \"wall\"\nsize = [16, 8]\n",
    );
    let mut show = start(root.clone());
    frame(&mut show);
    show.apply(Command::Set(
        "output.wall.corner.0.y".into(),
        Value::Float(0.125),
        Source::Ui,
    ))
    .checked("moving a corner");
    let state = show.state();
    assert_eq!(state.outputs.as_deref(), Some("o"));
    // A restart without --outputs: the state brings the file and the
    // unsaved mapping back.
    let mut again = support::show(root, "ramp", OUTPUT_FORMAT);
    assert!(again.outputs().is_none());
    again.resume(&state).checked("resuming");
    frame(&mut again);
    assert_eq!(again.outputs_name(), Some("o"));
    assert_eq!(again.registry.float("output.wall.corner.0.y"), 0.125);
}
