//! Every `#[repr(C)]` struct the CPU uploads, held against the WGSL struct
//! that reads it as naga lays it out, so a field added on one side only
//! fails a test rather than showing as garbage on screen. Each tier lists
//! its own structs ([`GPU_LAYOUTS`], the engine's, and every layer kind's
//! `LayerKind::layouts`); the test walks them all.

use std::mem::size_of;

use super::grid_sort::GridUniform;
use super::wgsl::{Composer, struct_size};
use crate::base::Assets;

/// A Rust struct uploaded to the GPU and the WGSL struct it must match.
#[derive(Debug, Clone, Copy)]
pub struct UniformLayout {
    /// The Rust type's name.
    pub rust: &'static str,
    /// Its size in bytes.
    pub size: usize,
    /// The shader file that declares or includes the WGSL struct.
    pub file: &'static str,
    /// The WGSL struct's name.
    pub wgsl: &'static str,
}

impl UniformLayout {
    /// `T`, named `rust`, against struct `wgsl` of `file`.
    pub const fn of<T>(rust: &'static str, file: &'static str, wgsl: &'static str) -> Self {
        Self {
            rust,
            size: size_of::<T>(),
            file,
            wgsl,
        }
    }
}

/// The structs of the shared compute passes.
pub const GPU_LAYOUTS: &[UniformLayout] = &[UniformLayout::of::<GridUniform>(
    "GridUniform",
    "common/grid_sort.wgsl",
    "Grid",
)];

/// Each of `layouts` whose size differs from naga's layout of its WGSL
/// struct, described; a file that does not compile is one too.
pub fn mismatches(assets: &Assets, layouts: &[UniformLayout]) -> Vec<String> {
    layouts
        .iter()
        .filter_map(|layout| {
            let module = Composer::new(assets)
                .file(layout.file)
                .and_then(|c| c.finish())
                .and_then(|c| c.validate());
            let expected = match module {
                Ok(module) => struct_size(&module, layout.wgsl),
                Err(e) => return Some(format!("{}: {e}", layout.file)),
            };
            (expected != Some(layout.size as u32)).then(|| {
                format!(
                    "{}: {} bytes; {} struct {}: {expected:?}",
                    layout.rust, layout.size, layout.file, layout.wgsl
                )
            })
        })
        .collect()
}
