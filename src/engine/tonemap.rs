//! The master section's curve from the linear HDR composite to the
//! display: the filmic default (after Troy Sobotka's AgX), the older ACES
//! fit and Reinhard kept as options, and the exposure in stops before any
//! of them. The filmic curve's constants live here once: the master pass
//! (`shaders/compositor/master.wgsl`) reads them from its uniform, and
//! [`filmic`] is its reference on the CPU.
//!
//! The filmic curve, as AgX builds one: each colour is first pulled a
//! little towards its grey (the inset), so a saturated light bleaches to
//! white as it brightens instead of clipping to a pure primary; each
//! channel is then encoded as stops between [`MIN_STOP`] and [`MAX_STOP`]
//! around middle grey and passed through a sigmoid (ours: a tempered
//! power curve through middle grey with [`SLOPE`] there, its toe and
//! shoulder each reaching its end of the range smoothly); the outset
//! (the inset undone) then gives back the saturation of colours that were
//! not bleached, and the display value is made linear again for the
//! output's sRGB encoding.

use glam::{DMat3, DVec3, Mat3};

/// Tone map curves, in the order of `master.tonemap`.
pub const TONEMAPS: [&str; 4] = ["filmic", "aces", "reinhard", "clamp"];

/// Stops below middle grey that still show (darker is black).
pub const MIN_STOP: f64 = -10.0;

/// Stops above middle grey before white (6.5 stops: 16 times the light of
/// a diffuse white).
pub const MAX_STOP: f64 = 6.5;

/// Linear middle grey.
pub const MIDDLE_GREY: f64 = 0.18;

/// Where middle grey lands on the display (before the display's own
/// encoding): about where the ACES fit the presets were first tuned under
/// puts it, so they keep their brightness.
pub const GREY_ON_DISPLAY: f64 = 0.5;

/// The sigmoid's slope at middle grey, in display value per unit of the
/// encoded range: the picture's contrast.
pub const SLOPE: f64 = 2.3;

/// How sharply the toe bends into black (higher: straighter, then sudden).
pub const TOE_POWER: f64 = 3.0;

/// How sharply the shoulder bends into white.
pub const SHOULDER_POWER: f64 = 3.0;

/// The share of each colour pulled towards its grey before the curve.
pub const INSET: f64 = 0.15;

/// The power that makes the sigmoid's display value linear again.
pub const DISPLAY_GAMMA: f64 = 2.2;

/// The inset: each channel mixed with the others' mean by [`INSET`].
pub fn inset() -> DMat3 {
    let keep = 1.0 - INSET;
    let share = INSET / 3.0;
    DMat3::from_cols(
        DVec3::new(keep + share, share, share),
        DVec3::new(share, keep + share, share),
        DVec3::new(share, share, keep + share),
    )
}

/// Middle grey's place in the encoded range (0..1).
pub fn grey_encoded() -> f64 {
    -MIN_STOP / (MAX_STOP - MIN_STOP)
}

/// The tempered power sigmoid before it is scaled to span 0..1 exactly:
/// through (grey, [`GREY_ON_DISPLAY`]) with [`SLOPE`], approaching
/// GREY_ON_DISPLAY below and 1 - GREY_ON_DISPLAY above it.
fn raw_sigmoid(x: f64) -> f64 {
    let d = SLOPE * (x - grey_encoded());
    let (reach, power) = if d < 0.0 {
        (GREY_ON_DISPLAY, TOE_POWER)
    } else {
        (1.0 - GREY_ON_DISPLAY, SHOULDER_POWER)
    };
    GREY_ON_DISPLAY + d / (1.0 + (d.abs() / reach).powf(power)).powf(1.0 / power)
}

/// The sigmoid's value at the ends of the encoded range, so it is scaled
/// to reach black at [`MIN_STOP`] and white at [`MAX_STOP`].
pub fn sigmoid_ends() -> (f64, f64) {
    (raw_sigmoid(0.0), raw_sigmoid(1.0))
}

/// The curve on one channel's encoded value `x` (0..1): the display value.
pub fn sigmoid(x: f64) -> f64 {
    let (black, white) = sigmoid_ends();
    (raw_sigmoid(x.clamp(0.0, 1.0)) - black) / (white - black)
}

/// The filmic curve of a linear colour (already exposed): the linear
/// colour the display should show, each channel 0..1. The master pass's
/// reference.
pub fn filmic(rgb: [f64; 3]) -> [f64; 3] {
    let inset = inset();
    let pulled = inset * DVec3::from_array(rgb).max(DVec3::ZERO);
    let curved = pulled.to_array().map(|c| {
        let stops = (c.max(1e-10) / MIDDLE_GREY).log2();
        sigmoid((stops - MIN_STOP) / (MAX_STOP - MIN_STOP))
    });
    let restored = inset.inverse() * DVec3::from_array(curved);
    restored
        .to_array()
        .map(|c| c.clamp(0.0, 1.0).powf(DISPLAY_GAMMA))
}

/// The filmic curve's constants as the master pass reads them: the inset
/// and outset as columns, then (min stop, max stop, middle grey, display
/// gamma), (grey encoded, grey on display, slope, inset), (toe power,
/// shoulder power, black, white).
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub struct FilmicUniforms {
    inset: [[f32; 4]; 3],
    outset: [[f32; 4]; 3],
    range: [f32; 4],
    pivot: [f32; 4],
    shape: [f32; 4],
}

impl FilmicUniforms {
    /// The constants above, in f32.
    pub fn new() -> Self {
        let pull = inset();
        let columns = |m: Mat3| [0, 1, 2].map(|i| m.col(i).extend(0.0).to_array());
        let (black, white) = sigmoid_ends();
        let f = |v: f64| v as f32;
        Self {
            inset: columns(pull.as_mat3()),
            outset: columns(pull.inverse().as_mat3()),
            range: [f(MIN_STOP), f(MAX_STOP), f(MIDDLE_GREY), f(DISPLAY_GAMMA)],
            pivot: [f(grey_encoded()), f(GREY_ON_DISPLAY), f(SLOPE), f(INSET)],
            shape: [f(TOE_POWER), f(SHOULDER_POWER), f(black), f(white)],
        }
    }
}

impl Default for FilmicUniforms {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn middle_grey_lands_where_a_plain_gamma_puts_it_and_the_range_ends_black_and_white() {
        let grey = filmic([MIDDLE_GREY; 3])[0];
        assert!(
            (grey.powf(1.0 / DISPLAY_GAMMA) - GREY_ON_DISPLAY).abs() < 0.02,
            "grey {grey}"
        );
        assert!(filmic([0.0; 3])[0] < 1e-4);
        let white = MIDDLE_GREY * MAX_STOP.exp2();
        assert!(filmic([white; 3])[0] > 0.999);
        assert!(
            filmic([white * 0.25; 3])[0] < 0.97,
            "a shoulder, not a clip"
        );
    }

    #[test]
    fn the_curve_rises_everywhere_and_bleaches_saturated_light_to_white() {
        let mut last = -1.0;
        for i in 0..=200 {
            let linear =
                MIDDLE_GREY * (MIN_STOP + (MAX_STOP - MIN_STOP) * f64::from(i) / 200.0).exp2();
            let shown = filmic([linear; 3])[0];
            assert!(shown > last, "falls at {linear}");
            last = shown;
        }
        let dim = filmic([0.2, 0.0, 0.0]);
        let bright = filmic([200.0, 0.0, 0.0]);
        assert!(dim[1] < 0.01 * dim[0], "a dim red stays red: {dim:?}");
        assert!(
            bright[1] > 0.5,
            "a blinding red goes towards white: {bright:?}"
        );
    }

    #[test]
    fn the_outset_undoes_the_inset() {
        let product = inset() * inset().inverse();
        assert!(product.abs_diff_eq(DMat3::IDENTITY, 1e-12));
    }
}
