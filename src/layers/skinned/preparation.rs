//! The CPU half of a skinned build, off the frame thread: the model read
//! or made, voxelized, and its attractions sampled with their bones.

use super::model::Model;
use super::params::{Structure, model_path};
use super::{AttractionBones, SkinnedError, attractions, creature};
use crate::base::Assets;

/// The CPU half of a build: the model read or made, and its attractions.
pub(super) struct Prepared {
    pub(super) model: Model,
    pub(super) points: Vec<[f32; 3]>,
    pub(super) bones: Vec<AttractionBones>,
    pub(super) structure: Structure,
}

/// Reads or makes the model of `structure` and samples its attractions.
pub(super) fn prepare(
    assets: &Assets,
    structure: Structure,
    seed: u64,
) -> Result<Prepared, SkinnedError> {
    let model = match model_path(&structure.model)? {
        Some(path) => Model::load_in(assets.root(), &path)?.skinned()?,
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
        structure,
    })
}

/// A preparation running on a worker thread (a large model or a million
/// attractions take seconds; the show must not wait for them).
pub(super) struct Preparation {
    pub(super) result: std::sync::mpsc::Receiver<Result<Prepared, SkinnedError>>,
}

impl Preparation {
    pub(super) fn spawn(assets: Assets, structure: Structure, seed: u64) -> Self {
        let (sender, result) = std::sync::mpsc::channel();
        let work = move || {
            let prepared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                prepare(&assets, structure, seed)
            }))
            .unwrap_or(Err(SkinnedError::Panicked));
            // The layer may be gone or have asked again: nobody to tell.
            let _ = sender.send(prepared);
        };
        if let Err(error) = std::thread::Builder::new()
            .name("sylva-skinned-prepare".into())
            .spawn(work)
        {
            tracing::warn!("cannot start the skinned layer's worker: {error}");
        }
        Self { result }
    }

    /// The result once the worker is done (a worker that died is a failure).
    pub(super) fn finished(&self) -> Option<Result<Prepared, SkinnedError>> {
        match self.result.try_recv() {
            Ok(result) => Some(result),
            Err(std::sync::mpsc::TryRecvError::Empty) => None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => Some(Err(SkinnedError::Panicked)),
        }
    }
}
