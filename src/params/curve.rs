//! The curve a control's normalised position goes through on its way to
//! a parameter (MIDI mappings, OSC aliases, modulations): one type, read
//! by every tier that maps a control, kept with the parameters.

use serde::{Deserialize, Serialize};

/// Shape of the value curve applied to a control's normalised position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Curve {
    /// Straight.
    #[default]
    Linear,
    /// Fine control at the bottom (2^(8x) - 1) / 255.
    Exponential,
    /// Fine control at the top, the inverse curve.
    Logarithmic,
}

impl Curve {
    /// Maps 0..1 onto 0..1.
    pub fn apply(self, x: f32) -> f32 {
        let x = x.clamp(0.0, 1.0);
        match self {
            Curve::Linear => x,
            Curve::Exponential => ((8.0 * x).exp2() - 1.0) / 255.0,
            Curve::Logarithmic => (1.0 + 255.0 * x).log2() / 8.0,
        }
    }

    /// The inverse of [`Curve::apply`], for soft takeover and LED feedback.
    pub fn invert(self, y: f32) -> f32 {
        let y = y.clamp(0.0, 1.0);
        match self {
            Curve::Linear => y,
            Curve::Exponential => (1.0 + 255.0 * y).log2() / 8.0,
            Curve::Logarithmic => ((8.0 * y).exp2() - 1.0) / 255.0,
        }
    }
}
