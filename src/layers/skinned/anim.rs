//! Animation: clips of keyframed channels (translation, rotation, scale;
//! LINEAR, STEP and CUBICSPLINE as glTF defines them) and their sampling.
//! Posing a model with them and playing them is `player.rs`.

use glam::{Quat, Vec4};

/// What a channel moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Property {
    /// The node's translation.
    Translation,
    /// The node's rotation (a unit quaternion, xyzw).
    Rotation,
    /// The node's scale.
    Scale,
}

/// How values between keys are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    /// Straight (rotations: slerp).
    Linear,
    /// The earlier key's value until the next key.
    Step,
    /// Hermite spline with a tangent in and out of every key.
    CubicSpline,
}

/// One node property over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// The node it moves.
    pub node: usize,
    /// What it moves.
    pub property: Property,
    /// How it interpolates.
    pub interpolation: Interpolation,
    /// Key times in seconds, increasing.
    pub times: Vec<f32>,
    /// One value per key, or three (in-tangent, value, out-tangent) for
    /// cubic splines; xyz (and w for rotations).
    pub values: Vec<[f32; 4]>,
}

/// A named animation.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// Its name.
    pub name: String,
    /// Its length in seconds.
    pub duration: f32,
    /// What it moves.
    pub channels: Vec<Channel>,
}

impl Channel {
    /// The value at time `t` (held before the first key and after the last).
    pub fn sample(&self, t: f32) -> Vec4 {
        let keys = self.times.len();
        let value = |key: usize| -> Vec4 {
            let index = if self.interpolation == Interpolation::CubicSpline {
                3 * key + 1
            } else {
                key
            };
            Vec4::from(self.values[index])
        };
        if keys == 1 || t <= self.times[0] {
            return value(0);
        }
        if t >= self.times[keys - 1] {
            return value(keys - 1);
        }
        let next = self.times.partition_point(|&k| k <= t).min(keys - 1);
        let key = next - 1;
        let (t0, t1) = (self.times[key], self.times[next]);
        let span = (t1 - t0).max(1e-9);
        let u = (t - t0) / span;
        let rotation = self.property == Property::Rotation;
        let result = match self.interpolation {
            Interpolation::Step => value(key),
            Interpolation::Linear if rotation => {
                let (a, b) = (Quat::from_vec4(value(key)), Quat::from_vec4(value(next)));
                Vec4::from(a.slerp(b, u))
            }
            Interpolation::Linear => value(key).lerp(value(next), u),
            Interpolation::CubicSpline => {
                let out_tangent = Vec4::from(self.values[3 * key + 2]) * span;
                let in_tangent = Vec4::from(self.values[3 * next]) * span;
                let (u2, u3) = (u * u, u * u * u);
                value(key) * (2.0 * u3 - 3.0 * u2 + 1.0)
                    + out_tangent * (u3 - 2.0 * u2 + u)
                    + value(next) * (-2.0 * u3 + 3.0 * u2)
                    + in_tangent * (u3 - u2)
            }
        };
        if rotation {
            result.normalize_or(Vec4::W)
        } else {
            result
        }
    }
}
