//! `sylva export colony`: grows a preset's colony headless and writes the
//! branches as OBJ (nodes as vertices, edges as `l` lines) for Blender or
//! Houdini, optionally grown into the artist's own point cloud. The colony
//! kind lists it among its tools ([`crate::layers::colony::KIND`]).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, FromArgMatches};

use crate::drivers::cli::ShowArgs;
use crate::gpu::OUTPUT_FORMAT;
use crate::layers::colony::{colony_params, grow_for_export, to_obj};
use crate::params::Registry;
use crate::show::start;
use crate::tools::{KindTool, ToolVerb};

/// The colony's `sylva export colony`.
pub const EXPORT: KindTool = KindTool {
    kind: "colony",
    verb: ToolVerb::Export,
    about: "Grow a preset's colony and write its branches as OBJ (nodes as vertices, edges as lines)",
    args: ColonyExportArgs::augment_args,
    run: |matches| {
        let args = ColonyExportArgs::from_arg_matches(matches)?;
        let (nodes, branches) = export_colony(&args)?;
        println!(
            "wrote {}: {nodes} nodes, {branches} branches",
            args.out.display()
        );
        Ok(())
    },
};

/// Options of `sylva export colony`.
#[derive(Args, Debug, Clone)]
pub struct ColonyExportArgs {
    /// The show; without a colony layer in its preset, a colony with
    /// default parameters grows.
    #[command(flatten)]
    pub show: ShowArgs,
    /// Growth iterations.
    #[arg(long, default_value_t = 400)]
    pub steps: u32,
    /// OBJ file to write.
    #[arg(long, value_name = "FILE.obj")]
    pub out: PathBuf,
    /// Grow into this point cloud (.ply ASCII or .obj vertices) instead of the preset's shape.
    #[arg(long, value_name = "FILE")]
    pub attractors: Option<PathBuf>,
}

/// Grows and writes the OBJ; returns the node and branch counts.
pub fn export_colony(options: &ColonyExportArgs) -> anyhow::Result<(usize, usize)> {
    let show = start(&options.show.options(false), OUTPUT_FORMAT)?;
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
                options
                    .show
                    .preset
                    .as_deref()
                    .unwrap_or(crate::drivers::cli::DEFAULT_PRESET)
            );
            let mut registry = Registry::new();
            for spec in colony_params("colony") {
                registry.register(spec);
            }
            (registry, "colony".to_string())
        }
    };
    let (nodes, _, edges) = grow_for_export(
        &show.ground.gpu,
        &show.ground.assets,
        &registry,
        &id,
        options.steps,
        options.attractors.as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    std::fs::write(&options.out, to_obj(&nodes, &edges))
        .with_context(|| format!("writing {}", options.out.display()))?;
    Ok((nodes.len(), edges.len()))
}
