//! What a shader layer's compile thread makes of a file: everything
//! short of the GPU (reading, composing or translating, validating,
//! decoding imported pictures), which the frame then builds
//! ([`super::compiler`]).

use super::isf::{self, IsfSource};
use super::{LayerSource, ShaderLayerError};
use crate::base::Assets;

/// A file read and checked, ready for the GPU: what the compile thread
/// makes, with the files to watch for it (whatever came of it).
pub(super) type Compile = (Vec<String>, Result<CheckedSource, ShaderLayerError>);

/// A file read and checked, ready for the GPU.
pub(super) enum CheckedSource {
    /// A WGSL file composed and validated.
    Wgsl(LayerSource),
    /// An ISF or Shadertoy file translated, its pictures decoded.
    Isf(Box<IsfSource>),
}

/// Reads and checks `file` for layer `id`: everything short of the GPU,
/// so any thread may.
pub(super) fn read_source(assets: &Assets, file: &str, id: &str) -> Compile {
    let only = vec![file.to_string()];
    if isf::is_isf(file) {
        return match IsfSource::read(assets, file, id) {
            Ok(source) => (
                source.watched.clone(),
                Ok(CheckedSource::Isf(Box::new(source))),
            ),
            Err(error) => (only, Err(error.into())),
        };
    }
    match LayerSource::read(assets, file) {
        Ok(source) => {
            let watched = source.composed.files().map(str::to_string).collect();
            let valid = source.validate().map(|_| CheckedSource::Wgsl(source));
            (watched, valid)
        }
        Err(error) => (only, Err(error)),
    }
}
