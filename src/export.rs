//! `sylva export colony`: grows a preset's colony headless and writes the
//! branches as OBJ (nodes as vertices, edges as `l` lines) for Blender or
//! Houdini, optionally grown into the artist's own point cloud.

use std::path::PathBuf;

use anyhow::Context;

use crate::gpu::OUTPUT_FORMAT;
use crate::headless::{ShowOptions, start};
use crate::layers::colony;
use crate::params::Registry;

/// Options of `sylva export colony`.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The show; without a colony layer in its preset, a colony with
    /// default parameters grows.
    pub show: ShowOptions,
    /// Growth iterations.
    pub steps: u32,
    /// The OBJ file to write.
    pub out: PathBuf,
    /// A PLY or OBJ point cloud to grow into instead of the preset's shape.
    pub attractors: Option<PathBuf>,
}

/// Grows and writes the OBJ; returns the node and branch counts.
pub fn export_colony(options: &ExportOptions) -> anyhow::Result<(usize, usize)> {
    let show = start(&options.show, OUTPUT_FORMAT)?;
    let found = show
        .layers()
        .iter()
        .map(|l| l.id().to_string())
        .find(|id| id.split('.').next() == Some("colony"));
    // A preset without a colony (the default show) grows one with the
    // colony's default parameters.
    let (registry, id) = match found {
        Some(id) => (show.registry.clone(), id),
        None => {
            tracing::info!(
                "preset {} has no colony layer: growing one with default parameters",
                options.show.preset
            );
            let mut registry = Registry::new();
            for spec in colony::colony_params("colony") {
                registry.register(spec);
            }
            (registry, "colony".to_string())
        }
    };
    let (nodes, _, edges) = colony::grow_for_export(
        &show.gpu,
        &show.assets,
        &registry,
        &id,
        options.steps,
        options.attractors.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    std::fs::write(&options.out, colony::to_obj(&nodes, &edges))
        .with_context(|| format!("writing {}", options.out.display()))?;
    Ok((nodes.len(), edges.len()))
}
