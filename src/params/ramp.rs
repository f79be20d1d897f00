//! Ramps: a timed move of a parameter's target from one value to another,
//! shaped by an easing curve. Lua's `sylva.ramp` and preset crossfades use
//! them; the registry advances them once per frame.

use std::str::FromStr;

/// The shape of a ramp over its normalised time `0..=1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Easing {
    /// Constant speed.
    #[default]
    Linear,
    /// Starts slow (quadratic).
    In,
    /// Ends slow (quadratic).
    Out,
    /// Slow at both ends (cubic).
    InOut,
    /// Smoothstep: slow at both ends, gentler than `InOut`.
    Smooth,
}

impl Easing {
    /// Maps normalised time `t` in `0..=1` to progress in `0..=1`.
    pub fn apply(self, t: f32) -> f32 {
        let t = t.clamp(0.0, 1.0);
        match self {
            Easing::Linear => t,
            Easing::In => t * t,
            Easing::Out => 1.0 - (1.0 - t) * (1.0 - t),
            Easing::InOut => {
                if t < 0.5 {
                    4.0 * t * t * t
                } else {
                    1.0 - (-2.0 * t + 2.0).powi(3) / 2.0
                }
            }
            Easing::Smooth => t * t * (3.0 - 2.0 * t),
        }
    }
}

impl FromStr for Easing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "linear" => Ok(Easing::Linear),
            "in" | "ease_in" => Ok(Easing::In),
            "out" | "ease_out" => Ok(Easing::Out),
            "inout" | "in_out" | "ease_in_out" => Ok(Easing::InOut),
            "smooth" | "smoothstep" => Ok(Easing::Smooth),
            other => Err(format!(
                "unknown easing {other:?} (linear, in, out, in_out, smooth)"
            )),
        }
    }
}

/// A ramp in progress on one parameter's numeric components.
#[derive(Debug, Clone, PartialEq)]
pub struct Ramp {
    /// Components at the start.
    pub from: Vec<f32>,
    /// Components at the end.
    pub to: Vec<f32>,
    /// Length in seconds.
    pub duration: f32,
    /// Seconds elapsed.
    pub elapsed: f32,
    /// Curve.
    pub easing: Easing,
}

impl Ramp {
    /// Advances by `dt` seconds and returns the components now, and whether
    /// the ramp has finished.
    pub fn advance(&mut self, dt: f32) -> (Vec<f32>, bool) {
        self.elapsed += dt;
        let t = if self.duration > 0.0 {
            self.elapsed / self.duration
        } else {
            1.0
        };
        let k = self.easing.apply(t);
        let now = self
            .from
            .iter()
            .zip(&self.to)
            .map(|(a, b)| a + (b - a) * k)
            .collect();
        (now, t >= 1.0)
    }
}
