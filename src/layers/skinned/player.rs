//! Posing a model with a clip: the local transforms of every node at a
//! time, and the player that runs a clip at a speed, loops it, and
//! crossfades from the clip before (rotations slerped).

use glam::{Quat, Vec3};

use super::anim::{Clip, Property};
use super::model::{Model, Trs};

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
    use crate::layers::skinned::anim::{Channel, Interpolation};

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
