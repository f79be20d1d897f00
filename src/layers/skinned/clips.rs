//! Reading a glTF animation into a clip of channels (`anim.rs`), apart
//! from the model so clips and the hierarchy they move import each other
//! nowhere.

use super::anim::{Channel, Clip, Interpolation, Property};

/// One animation as a clip of channels.
pub fn read_clip<'a, 's>(
    animation: &gltf::Animation<'a>,
    read: impl Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
) -> Result<Clip, String> {
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
            return Err("an animation sampler without input times".into());
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
            _ => return Err("an animation sampler without outputs".into()),
        };
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if times.is_empty() || values.len() != times.len() * per_key {
            return Err(format!(
                "animation {:?}: {} times for {} values",
                animation.name().unwrap_or(""),
                times.len(),
                values.len()
            ));
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
