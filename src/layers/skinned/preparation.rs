//! The CPU half of a skinned build, which runs off the frame thread (a
//! large model or a million attractions take seconds): the model read or
//! made, voxelized, and its attractions sampled with their bones.

use super::model::Model;
use super::params::{SkinnedStructure, load_model};
use super::{AttractionBones, SkinnedError, attractions, creature};
use crate::base::Assets;

/// The CPU half of a build: the model read or made, and its attractions.
pub(super) struct Prepared {
    pub(super) model: Model,
    pub(super) points: Vec<[f32; 3]>,
    pub(super) bones: Vec<AttractionBones>,
    pub(super) structure: SkinnedStructure,
}

/// Reads or makes the model of `structure` and samples its attractions.
pub(super) fn prepare(
    assets: &Assets,
    structure: &SkinnedStructure,
    seed: u64,
) -> Result<Prepared, SkinnedError> {
    let model = match load_model(assets.root(), &structure.model)? {
        Some(model) => model,
        None => creature::figure(structure.detail),
    };
    let (points, bones) = attractions(&model, structure.attraction_count, structure.spacing, seed);
    if points.is_empty() {
        return Err(SkinnedError::Empty(model.source.clone()));
    }
    Ok(Prepared {
        model,
        points,
        bones,
        structure: structure.clone(),
    })
}
