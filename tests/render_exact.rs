//! `sylva render` is exact: the same show, seed, sound and size give the
//! same bytes in every frame, run after run, so a music video renders the
//! same every time.

use std::path::Path;
use std::process::Command;

use crate::support;
use crate::support::Checked;

const FRAMES: usize = 30;

/// 16-bit mono PCM WAV of a 120 BPM kick: a falling sine, one a half
/// second, each dying away before the next.
fn write_kicks(path: &Path, seconds: f32) {
    const RATE: u32 = 48_000;
    let samples = (seconds * RATE as f32) as usize;
    let data: Vec<u8> = (0..samples)
        .map(|n| {
            let t = (n % (RATE as usize / 2)) as f32 / RATE as f32;
            let phase = std::f32::consts::TAU * (50.0 * t + 3.0 * (1.0 - (-t * 30.0).exp()));
            (phase.sin() * (-t * 12.0).exp() * 0.8 * 32767.0) as i16
        })
        .flat_map(i16::to_le_bytes)
        .collect();
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    // PCM, one channel.
    wav.extend_from_slice(&[1, 0, 1, 0]);
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes());
    // Two bytes a frame, 16 bits a sample.
    wav.extend_from_slice(&[2, 0, 16, 0]);
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(data.len() as u32).to_le_bytes());
    wav.extend_from_slice(&data);
    std::fs::write(path, wav).checked("writing the kicks");
}

/// The default show's first scene to `kicks`, as `out/frame_*.png`,
/// decoded.
fn render(kicks: &Path, out: &Path) -> Vec<image::RgbaImage> {
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["render", "--playlist", "default", "--frames"])
        .arg(FRAMES.to_string())
        .args(["--fps", "30", "--size", "160x90", "--audio"])
        .arg(kicks)
        .arg("--out")
        .arg(out)
        .env(sylva::gpu::ADAPTER_ENV, support::adapter_name())
        .output()
        .checked("running sylva render");
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
    let first = render(&kicks, &root.join("a"));
    let second = render(&kicks, &root.join("b"));
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
