//! What a shader layer's compile thread makes of a file: everything
//! short of the GPU (reading, composing or translating, validating,
//! decoding imported pictures), which the frame then builds
//! ([`super::compiler`]); and when the layer asks it again: an ISF file's
//! compiled-in input moved, and a render waiting for what it asked.

use std::time::{Duration, Instant};

use super::isf::{self, IsfSource};
use super::{LayerSource, Program, ShaderLayer, ShaderLayerError};
use crate::base::Assets;
use crate::engine::LayerEnv;
use crate::params::{Registry, Value};

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

/// The values of an ISF file's compiled-in inputs (MadMapper's
/// `generate_as_define`) to compile it at, by input name.
pub(super) type Chosen = Vec<(String, Value)>;

/// Reads and checks `file` for layer `id` (an ISF file's compiled-in
/// inputs at `chosen`): everything short of the GPU, so any thread may.
pub(super) fn read_source(assets: &Assets, file: &str, id: &str, chosen: &Chosen) -> Compile {
    let only = vec![file.to_string()];
    if isf::is_isf(file) {
        return match IsfSource::read(assets, file, id, chosen) {
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

/// The longest a render waits for a file to compile.
const RENDER_WAIT: Duration = Duration::from_secs(60);

impl ShaderLayer {
    /// The running ISF program's compiled-in inputs as `registry` has
    /// them: when one moved, the file compiles again with it.
    pub(super) fn compile_in_changes(&mut self, registry: &Registry) {
        let Some(Program::Isf(isf)) = &self.program else {
            return;
        };
        let chosen = isf.chosen(registry);
        if chosen != self.chosen
            && let Some(file) = self.tried_file.clone()
        {
            self.chosen = chosen;
            self.switch_to(&file);
        }
    }

    /// In a render, whose frames must repeat, waits for the compile
    /// thread (up to [`RENDER_WAIT`]) and installs what it made. Returns
    /// whether the declared parameters changed.
    pub(super) fn wait_for_compile(&mut self, env: &LayerEnv<'_>) -> bool {
        let deadline = Instant::now() + RENDER_WAIT;
        let mut changed = false;
        while self.compiler.pending() && Instant::now() < deadline {
            changed |= self.collect(env);
            std::thread::sleep(Duration::from_millis(1));
        }
        changed
    }
}
