//! `sylva render` is exact: the same show, seed, sound and size give the
//! same bytes in every frame, run after run, so a music video renders the
//! same every time.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::support;
use crate::support::Checked;

/// Frames compared: the world's pond parted two renders from its second
/// frame when its sort followed thread order.
const FRAMES: usize = 12;

/// The pond's particles in these renders. The world ships 700,000, about
/// five seconds a frame on lavapipe, which made this the longest test; the
/// race that parted renders needs only more than the 65,280 particles that
/// lavapipe's loop bound let the old in-order sort reach.
const POND: usize = 120_000;

/// The shipped presets, copied under `root` with the world's pond cut to
/// [`POND`] particles: the folder the renders read presets from.
fn presets_with_a_smaller_pond(root: &Path) -> std::path::PathBuf {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let copy = root.join("presets");
    for folder in ["", "playlists"] {
        std::fs::create_dir_all(copy.join(folder)).checked("making the presets' copy");
        for entry in std::fs::read_dir(shipped.join(folder)).checked("listing the presets") {
            let path = entry.checked("listing the presets").path();
            if path
                .extension()
                .is_some_and(|extension| extension == "toml")
            {
                let name = path.file_name().checked("a preset's name");
                std::fs::copy(&path, copy.join(folder).join(name)).checked("copying a preset");
            }
        }
    }
    let world = copy.join("world.toml");
    let text = std::fs::read_to_string(&world).checked("reading the world preset");
    let count = text
        .lines()
        .find(|line| line.starts_with("\"fluid.count\""))
        .checked("the world preset's fluid.count");
    let smaller = text.replace(count, &format!("\"fluid.count\" = {POND}"));
    std::fs::write(&world, smaller).checked("writing the world preset");
    copy
}

/// A 120 BPM kick as a 48 kHz WAV: a falling sine, one a half second,
/// each dying away before the next.
fn write_kicks(path: &Path, seconds: f32) {
    const RATE: usize = 48_000;
    let samples: Vec<f32> = (0..(seconds * RATE as f32) as usize)
        .map(|n| {
            let t = (n % (RATE / 2)) as f32 / RATE as f32;
            let phase = std::f32::consts::TAU * (50.0 * t + 3.0 * (1.0 - (-t * 30.0).exp()));
            phase.sin() * (-t * 12.0).exp() * 0.8
        })
        .collect();
    crate::audio::write_wav(path, &samples);
}

/// Starts rendering the default show's first scene, its presets read from
/// `presets`, to `kicks` as `out/frame_*.png`. Lavapipe runs with more
/// threads than the machine has cores, so its workgroups interleave as a
/// GPU's do: a render whose
/// sums follow the order threads happen to run in then differs within
/// these frames nearly every time (with lavapipe's default count, in
/// about two runs of three).
fn start_render(presets: &Path, kicks: &Path, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["render", "--playlist", "default", "--presets"])
        .arg(presets)
        .arg("--frames")
        .arg(FRAMES.to_string())
        .args(["--fps", "30", "--size", "160x90", "--audio"])
        .arg(kicks)
        .arg("--out")
        .arg(out)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .env("LP_NUM_THREADS", "8")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .checked("starting sylva render")
}

/// The frames of a render started by [`start_render`], decoded, once it
/// has ended.
fn frames(output: &Output, out: &Path) -> Vec<image::RgbaImage> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (0..FRAMES)
        .map(|index| {
            let path = out.join(format!("frame_{index:05}.png"));
            image::open(&path)
                .map(|frame| frame.to_rgba8())
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        })
        .collect()
}

/// The default show's first scene (the fluid's shower, the colony, the
/// forest and the figure in one world), rendered twice to a kick drum on
/// the software adapter, whose threads race as a GPU's do, gives the same
/// pixels in every frame.
#[test]
fn render_repeats_the_default_show_byte_for_byte() {
    let root = support::out_dir().join("render_exact");
    std::fs::remove_dir_all(&root).ok();
    std::fs::create_dir_all(&root).checked("making the render folder");
    let kicks = root.join("kicks.wav");
    write_kicks(&kicks, 1.5);
    let presets = presets_with_a_smaller_pond(&root);
    // Both at once, so the threads of the two interleave all the more.
    let (a, b) = (root.join("a"), root.join("b"));
    let [first, second] = [
        start_render(&presets, &kicks, &a),
        start_render(&presets, &kicks, &b),
    ]
    .map(|render| {
        render
            .wait_with_output()
            .checked("waiting for sylva render")
    });
    let (first, second) = (frames(&first, &a), frames(&second, &b));
    let differing: Vec<String> = first
        .iter()
        .zip(&second)
        .enumerate()
        .filter(|(_, (a, b))| a.as_raw() != b.as_raw())
        .map(|(index, (a, b))| {
            let pixels = a.pixels().zip(b.pixels()).filter(|(p, q)| p != q).count();
            format!("frame {index}: {pixels} pixels")
        })
        .collect();
    assert!(
        differing.is_empty(),
        "two renders differ (frames in {}): {differing:?}",
        root.display()
    );
}
