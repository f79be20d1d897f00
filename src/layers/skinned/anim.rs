//! Animation: clips of keyframed channels (translation, rotation, scale;
//! LINEAR, STEP and CUBICSPLINE as glTF defines them), sampled into a pose
//! of local transforms, and the player that runs a clip at a speed, loops
//! it, and crossfades from the clip before (rotations slerped).

use glam::{Quat, Vec3, Vec4};

use super::model::{Model, Trs};

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

/// The local transforms of every node at time `t` of `clip` (the rest
/// transform where no channel moves a node).
pub fn pose(model: &Model, clip: Option<&Clip>, t: f32) -> Vec<Trs> {
    let mut local: Vec<Trs> = model.nodes.iter().map(|n| n.rest).collect();
    for channel in clip.map_or(&[][..], |c| &c.channels[..]) {
        let Some(trs) = local.get_mut(channel.node) else {
            continue;
        };
        let v = channel.sample(t);
        match channel.property {
            Property::Translation => trs.translation = v.truncate(),
            Property::Rotation => trs.rotation = Quat::from_vec4(v),
            Property::Scale => trs.scale = Vec3::new(v.x, v.y, v.z),
        }
    }
    local
}

/// Runs one clip at a time, looping or held at its end, and crossfades
/// from the previous one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Player {
    /// The clip playing.
    pub clip: usize,
    /// Seconds into it.
    pub time: f32,
    /// The clip faded out: its index and time, the fade's length and how
    /// far it has run.
    fading: Option<(usize, f32, f32, f32)>,
}

impl Player {
    /// Starts `clip` at its beginning, crossfading over `seconds` from the
    /// one playing (0 cuts).
    pub fn play(&mut self, clip: usize, seconds: f32) {
        if clip == self.clip {
            return;
        }
        self.fading = (seconds > 0.0).then_some((self.clip, self.time, seconds, 0.0));
        self.clip = clip;
        self.time = 0.0;
    }

    /// Advances by `dt` at `speed`, looping clips of `model` when `looping`.
    pub fn advance(&mut self, model: &Model, dt: f32, speed: f32, looping: bool) {
        let wrap = |clip: usize, time: f32| {
            let duration = model.clips.get(clip).map_or(0.0, |c| c.duration);
            if duration <= 0.0 {
                0.0
            } else if looping {
                time.rem_euclid(duration)
            } else {
                time.clamp(0.0, duration)
            }
        };
        self.time = wrap(self.clip, self.time + dt * speed);
        if let Some((clip, time, seconds, elapsed)) = self.fading {
            let elapsed = elapsed + dt;
            self.fading = (elapsed < seconds)
                .then(|| (clip, wrap(clip, time + dt * speed), seconds, elapsed));
        }
    }

    /// Sets the time in the playing clip (the `time` parameter scrubbing).
    pub fn seek(&mut self, time: f32) {
        self.time = time.max(0.0);
    }

    /// The local transforms now, blended with the clip fading out.
    pub fn pose(&self, model: &Model) -> Vec<Trs> {
        let now = pose(model, model.clips.get(self.clip), self.time);
        match self.fading {
            Some((clip, time, seconds, elapsed)) => {
                let before = pose(model, model.clips.get(clip), time);
                let amount = (elapsed / seconds).clamp(0.0, 1.0);
                before
                    .iter()
                    .zip(&now)
                    .map(|(a, b)| a.blend(b, amount))
                    .collect()
            }
            None => now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(interpolation: Interpolation, values: Vec<[f32; 4]>) -> Channel {
        Channel {
            node: 0,
            property: Property::Translation,
            interpolation,
            times: vec![0.0, 1.0],
            values,
        }
    }

    #[test]
    fn channels_interpolate_as_gltf_defines() {
        let linear = channel(Interpolation::Linear, vec![[0.0; 4], [2.0, 0.0, 0.0, 0.0]]);
        assert_eq!(linear.sample(0.25).x, 0.5);
        assert_eq!(linear.sample(-1.0).x, 0.0, "held before the first key");
        assert_eq!(linear.sample(9.0).x, 2.0, "held after the last");
        let step = channel(Interpolation::Step, vec![[0.0; 4], [2.0, 0.0, 0.0, 0.0]]);
        assert_eq!(step.sample(0.99).x, 0.0);
        // A cubic spline with zero tangents eases in and out: 0.5 at the middle,
        // below the straight line before it.
        let zero = [0.0; 4];
        let cubic = channel(
            Interpolation::CubicSpline,
            vec![zero, zero, zero, zero, [2.0, 0.0, 0.0, 0.0], zero],
        );
        assert!((cubic.sample(0.5).x - 1.0).abs() < 1e-6);
        assert!(cubic.sample(0.25).x < 0.5);
        let rotation = Channel {
            property: Property::Rotation,
            values: vec![
                Quat::IDENTITY.to_array(),
                Quat::from_rotation_y(std::f32::consts::FRAC_PI_2).to_array(),
            ],
            ..channel(Interpolation::Linear, Vec::new())
        };
        let half = Quat::from_vec4(rotation.sample(0.5));
        let want = Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
        assert!(half.angle_between(want) < 1e-5, "slerped");
    }

    #[test]
    fn the_player_loops_holds_seeks_and_crossfades() {
        let model = crate::layers::skinned::creature::figure(6);
        let dance = model.clips[0].duration;
        let mut player = Player::default();
        player.advance(&model, dance + 0.25, 1.0, true);
        assert!(
            (player.time - 0.25).abs() < 1e-4,
            "looped to {}",
            player.time
        );
        player.advance(&model, 2.0 * dance, 1.0, false);
        assert_eq!(player.time, dance, "held at the end");
        player.seek(0.5);
        assert_eq!(player.time, 0.5);
        // Halfway through a crossfade the pose lies between the two clips'.
        let before = pose(&model, model.clips.first(), 0.5);
        player.play(1, 1.0);
        player.advance(&model, 0.5, 0.0, true);
        let after = pose(&model, model.clips.get(1), 0.0);
        let mixed = player.pose(&model);
        let hips = 1;
        let want = before[hips].rotation.slerp(after[hips].rotation, 0.5);
        assert!(mixed[hips].rotation.angle_between(want) < 1e-4);
        player.advance(&model, 0.6, 0.0, true);
        assert_eq!(player.pose(&model), after, "the fade is over");
    }
}
