//! `sylva export forest [--preset P] --steps N --out trees.csv`: grows a
//! preset's forest headless (without one, the default forest) and writes
//! every live tree as `x,y,species,height,age` for instancing in a game
//! engine or Houdini. The forest kind lists it among its tools.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, FromArgMatches};

use crate::drivers::cli::ShowArgs;
use crate::gpu::OUTPUT_FORMAT;
use crate::layers::forest::sim::Tree;
use crate::layers::forest::species::Species;
use crate::params::Registry;
use crate::show::start;
use crate::tools::{KindTool, ToolVerb};

/// The forest's `sylva export forest`.
pub const EXPORT: KindTool = KindTool {
    kind: "forest",
    verb: ToolVerb::Export,
    about: "Grow a preset's forest and write its trees as CSV (x, y, species, height, age)",
    args: ForestExportArgs::augment_args,
    run: |matches| {
        let args = ForestExportArgs::from_arg_matches(matches)?;
        let trees = export_forest(&args)?;
        println!("wrote {}: {trees} trees", args.out.display());
        Ok(())
    },
};

/// Options of `sylva export forest`.
#[derive(Args, Debug, Clone)]
pub struct ForestExportArgs {
    /// The show; without a forest layer in its preset, a forest with
    /// default parameters grows.
    #[command(flatten)]
    pub show: ShowArgs,
    /// Simulation steps.
    #[arg(long, default_value_t = 200)]
    pub steps: u32,
    /// CSV file to write.
    #[arg(long, value_name = "FILE.csv")]
    pub out: PathBuf,
}

/// Grows and writes the CSV; returns the trees written.
pub fn export_forest(options: &ForestExportArgs) -> anyhow::Result<usize> {
    let show = start(&options.show.options(false), OUTPUT_FORMAT)?;
    let id = show
        .layers()
        .iter()
        .map(|l| l.id().to_string())
        .find(|id| id.split('.').next() == Some("forest"));
    // A preset without a forest grows one with default parameters.
    let (registry, id) = match id {
        Some(id) => (show.registry.clone(), id),
        None => {
            let mut registry = Registry::new();
            for spec in crate::layers::forest::forest_params("forest") {
                registry.register(spec);
            }
            (registry, "forest".to_string())
        }
    };
    // The show's seed is `options.show.seed`; `sow` reads no world.
    let grown = crate::layers::forest::sow(&show.ground.env(), &registry, &id, options.show.seed)?;
    let mut profiler =
        crate::gpu::GpuProfiler::new(&show.ground.gpu.device, &show.ground.gpu.queue, false);
    for _ in 0..options.steps {
        let mut encoder = show
            .ground
            .gpu
            .device
            .create_command_encoder(&Default::default());
        grown.sim.step(&mut encoder, &mut profiler);
        show.ground.gpu.queue.submit([encoder.finish()]);
    }
    let trees: Vec<Tree> = grown
        .sim
        .read_trees(&show.ground.gpu)?
        .into_iter()
        .filter(|t| t.alive == 1)
        .collect();
    std::fs::write(&options.out, csv(&trees, &grown.species))
        .with_context(|| format!("writing {}", options.out.display()))?;
    Ok(trees.len())
}

/// Trees as CSV with a header; species by name.
pub fn csv(trees: &[Tree], species: &[Species]) -> String {
    let mut text = String::from("x,y,species,height,age\n");
    for tree in trees {
        let name = species
            .get(tree.species as usize)
            .map_or("?", |s| s.name.as_str());
        let _ = writeln!(
            text,
            "{},{},{name},{},{}",
            tree.position[0], tree.position[1], tree.height, tree.age
        );
    }
    text
}
