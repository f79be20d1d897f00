//! Reading a glTF animation into a clip of channels (`anim.rs`), apart
//! from the model so clips and the hierarchy they move import each other
//! nowhere.

use super::anim::{Channel, Clip, Interpolation, Property};

/// Why an animation could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClipError {
    /// A sampler without key times.
    #[error("an animation sampler without input times")]
    NoTimes,
    /// A sampler without values sylva moves nodes by.
    #[error("an animation sampler without outputs")]
    NoOutputs,
    /// Key times and values that do not match.
    #[error("animation {name:?}: {times} times for {values} values")]
    Mismatch {
        /// The animation's name.
        name: String,
        /// Key times.
        times: usize,
        /// Values.
        values: usize,
    },
}

/// One animation as a clip of channels.
pub fn read_clip<'a, 's>(
    animation: &gltf::Animation<'a>,
    read: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Clip, ClipError> {
    let mut channels = Vec::new();
    for channel in animation.channels() {
        let reader = channel.reader(read.clone());
        let property = match channel.target().property() {
            gltf::animation::Property::Translation => Property::Translation,
            gltf::animation::Property::Rotation => Property::Rotation,
            gltf::animation::Property::Scale => Property::Scale,
            gltf::animation::Property::MorphTargetWeights => continue,
        };
        let interpolation = match channel.sampler().interpolation() {
            gltf::animation::Interpolation::Linear => Interpolation::Linear,
            gltf::animation::Interpolation::Step => Interpolation::Step,
            gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let Some(times) = reader.read_inputs() else {
            return Err(ClipError::NoTimes);
        };
        let times: Vec<f32> = times.collect();
        let values: Vec<[f32; 4]> = match reader.read_outputs() {
            Some(gltf::animation::util::ReadOutputs::Translations(v)) => {
                v.map(|[x, y, z]| [x, y, z, 0.0]).collect()
            }
            Some(gltf::animation::util::ReadOutputs::Scales(v)) => {
                v.map(|[x, y, z]| [x, y, z, 0.0]).collect()
            }
            Some(gltf::animation::util::ReadOutputs::Rotations(v)) => v.into_f32().collect(),
            _ => return Err(ClipError::NoOutputs),
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if times.is_empty() || values.len() != times.len() * per_key {
            return Err(ClipError::Mismatch {
                name: animation.name().unwrap_or("").to_string(),
                times: times.len(),
                values: values.len(),
            });
        }
        channels.push(Channel {
            node: channel.target().node().index(),
            property,
            interpolation,
            times,
            values,
        });
    }
    let duration = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0f32, f32::max);
    Ok(Clip {
        name: animation
            .name()
            .map_or_else(|| format!("clip {}", animation.index()), str::to_string),
        duration,
        channels,
    })
}
