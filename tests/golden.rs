//! Golden images: a show rendered headless must match the stored PNG
//! (the default show's in `tests/golden/`, each layer kind's in its own
//! folder's `golden/`) within that image's own tolerance, written beside
//! it (`NAME.png.toml`: a mean error, a share of outlier pixels
//! and the step that makes one, and why), as ruffle keeps them, so one
//! noisy image never loosens them all. On failure the actual image and an
//! amplified difference are written to tests/out/. Set `SYLVA_BLESS=1` to
//! rewrite the golden after an intended change.

use std::path::PathBuf;

use image::{Rgba, RgbaImage};
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};

use crate::support;
use crate::support::Checked;

/// How far an image may stray from its golden.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Tolerance {
    /// Mean absolute error per channel allowed, in 8-bit steps.
    mean: f64,
    /// Share of pixels allowed to be outliers.
    outliers: f64,
    /// Steps in any channel that make a pixel an outlier.
    outlier_step: u8,
    /// Why this image needs what it allows (shown when it fails).
    why: String,
}

/// The tolerance stored beside golden `name`; every golden has one.
fn tolerance(name: &str) -> Tolerance {
    let path = golden_path(&format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (each golden image has its tolerance beside it)",
            path.display()
        )
    });
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Golden `name`: a path in the repository (`tests/golden/X.png`, or a
/// kind's own `src/layers/<kind>/golden/X.png`).
fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
}

/// The file name of golden `name`, for the failure images.
fn file_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Renders `frames` frames of `preset` at 60 fps and returns the last.
fn render_last_frame(preset: &str, size: [u32; 2], frames: u32) -> RgbaImage {
    render_project(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        preset,
        size,
        frames,
    )
}

/// The same from another show folder.
pub fn render_project(project: PathBuf, preset: &str, size: [u32; 2], frames: u32) -> RgbaImage {
    let mut show = support::show(project, preset, OUTPUT_FORMAT);
    let mut output = RenderTarget::new(&show.ground.gpu.device, "test.output", size, OUTPUT_FORMAT);
    for _ in 0..frames {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    }
    assert!(
        show.ground.errors.snapshot().is_empty(),
        "{:?}",
        show.ground.errors.snapshot()
    );
    match read_rgba8(&show.ground.gpu, &output.texture) {
        Ok(image) => image,
        Err(error) => panic!("readback: {error}"),
    }
}

/// Compares with the golden, a pixel an outlier past `outlier_step`;
/// returns (mean error, outlier share, amplified difference).
fn compare(actual: &RgbaImage, expected: &RgbaImage, outlier_step: u8) -> (f64, f64, RgbaImage) {
    let mut total = 0u64;
    let mut outliers = 0usize;
    let mut difference = RgbaImage::new(actual.width(), actual.height());
    for ((a, e), d) in actual
        .pixels()
        .zip(expected.pixels())
        .zip(difference.pixels_mut())
    {
        let deltas: Vec<u8> = (0..3).map(|c| a[c].abs_diff(e[c])).collect();
        total += deltas.iter().map(|v| u64::from(*v)).sum::<u64>();
        if deltas.iter().any(|v| *v > outlier_step) {
            outliers += 1;
        }
        *d = Rgba([
            deltas[0].saturating_mul(8),
            deltas[1].saturating_mul(8),
            deltas[2].saturating_mul(8),
            255,
        ]);
    }
    let pixels = (actual.width() * actual.height()) as f64;
    (
        total as f64 / (pixels * 3.0),
        outliers as f64 / pixels,
        difference,
    )
}

pub fn check_golden(name: &str, actual: &RgbaImage) {
    let path = golden_path(name);
    if std::env::var("SYLVA_BLESS").is_ok_and(|v| v == "1") {
        if let Err(error) = actual.save(&path) {
            panic!("writing {}: {error}", path.display());
        }
        return;
    }
    let expected = match image::open(&path) {
        Ok(image) => image.to_rgba8(),
        Err(error) => panic!(
            "reading {}: {error} (SYLVA_BLESS=1 writes it)",
            path.display()
        ),
    };
    assert_eq!(actual.dimensions(), expected.dimensions(), "size of {name}");
    let allowed = tolerance(name);
    let (mean, outliers, difference) = compare(actual, &expected, allowed.outlier_step);
    if mean > allowed.mean || outliers > allowed.outliers {
        let out = support::out_dir();
        let file = file_name(name);
        actual
            .save(out.join(format!("actual_{file}")))
            .checked("writing the failure images");
        difference
            .save(out.join(format!("difference_{file}")))
            .checked("writing the failure images");
        panic!(
            "{name}: mean error {mean:.3} (limit {}), outliers {:.3}% (limit {:.3}%; {}); \
             actual and difference written to {}",
            allowed.mean,
            outliers * 100.0,
            allowed.outliers * 100.0,
            allowed.why,
            out.display()
        );
    }
}

#[test]
fn default_show_matches_its_golden_image() {
    let actual = render_last_frame("default", [256, 144], 30);
    check_golden("tests/golden/default_256x144.png", &actual);
}

#[test]
fn the_comparison_catches_a_changed_image() {
    let actual = render_last_frame("default", [256, 144], 30);
    let mut damaged = actual.clone();
    for pixel in damaged.pixels_mut().take(256 * 40) {
        *pixel = Rgba([255, 0, 0, 255]);
    }
    let allowed = tolerance("tests/golden/default_256x144.png");
    let (mean, outliers, _) = compare(&damaged, &actual, allowed.outlier_step);
    assert!(
        mean > allowed.mean && outliers > allowed.outliers,
        "mean {mean}, outliers {outliers}"
    );
}

#[test]
fn the_default_show_moves() {
    let early = render_last_frame("default", [128, 72], 2);
    let later = render_last_frame("default", [128, 72], 40);
    let (mean, _, _) = compare(&early, &later, 16);
    assert!(
        mean > 1.0,
        "frames 2 and 40 differ by only {mean:.3} on average"
    );
}
