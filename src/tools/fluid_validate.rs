//! `sylva validate fluid dam-break|hydrostatic`: runs a validation case
//! of [`crate::layers::fluid::validate`] on the GPU and prints it against the published
//! data. The fluid kind lists it among its tools ([`crate::layers::fluid::KIND`]).

use clap::{Args, FromArgMatches};

use crate::base::Assets;
use crate::base::status::ErrorLog;
use crate::gpu::{AdapterChoice, Gpu};
use crate::layers::fluid::sim::Solver;
use crate::layers::fluid::validate;
use crate::tools::{KindTool, ToolVerb};

/// The fluid's `sylva validate fluid`.
pub const VALIDATE: KindTool = KindTool {
    kind: "fluid",
    verb: ToolVerb::Validate,
    about: "The SPH fluid against a dam break (Koshizuka and Oka 1996) or a hydrostatic tank",
    args: ValidateArgs::augment_args,
    run: |matches| run(&ValidateArgs::from_arg_matches(matches)?),
};

/// Options of `sylva validate fluid`.
#[derive(Args, Debug, Clone)]
pub struct ValidateArgs {
    /// dam-break (against Koshizuka and Oka 1996) or hydrostatic (pressure against depth).
    #[arg(value_parser = ["dam-break", "hydrostatic"])]
    pub case: String,
    /// Particles across the water column's width (at least 40 for the published comparison).
    #[arg(long, default_value_t = 40)]
    pub across: u32,
    /// Hydrostatic: seconds to settle before measuring.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// The solver: pbf (Position Based Fluids, the shows') or wcsph (weakly compressible).
    #[arg(long, value_parser = Solver::NAMES, default_value = "pbf")]
    pub solver: String,
    /// Position Based Fluids: density constraint iterations a substep (the shows' default).
    #[arg(long, default_value_t = 5)]
    pub iterations: u32,
    /// Pick the GPU adapter whose name contains this text.
    #[arg(long, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn run(args: &ValidateArgs) -> anyhow::Result<()> {
    let gpu = Gpu::new(
        Gpu::instance(),
        &AdapterChoice::from_cli(args.adapter.clone()),
        None,
        ErrorLog::default(),
    )?;
    eprintln!("adapter: {}", gpu.adapter_line());
    let assets = Assets::new(".");
    let solver = Solver::named(&args.solver).unwrap_or_default();
    let (across, iterations) = (args.across, args.iterations);
    eprintln!(
        "solver: {} ({} iterations a substep)",
        args.solver, args.iterations
    );
    if args.case == "hydrostatic" {
        let result = validate::hydrostatic(&gpu, &assets, across, args.seconds, solver, iterations)
            .map_err(anyhow::Error::msg)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&result)?);
        } else {
            println!(
                "hydrostatic tank, {} particles after {} s: {}density error mean {:.3}%, max {:.3}%",
                result.particles,
                result.settled_seconds,
                result.pressure_error.map_or(String::new(), |e| format!(
                    "pressure error {:.2}% of rho0 g H; ",
                    e * 100.0
                )),
                result.density_error_mean * 100.0,
                result.density_error_max * 100.0
            );
        }
        return Ok(());
    }
    let result = validate::dam_break(&gpu, &assets, across, solver, iterations)
        .map_err(anyhow::Error::msg)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        println!(
            "dam break, {} particles ({} across L)\n     T   Z sim   Z Koshizuka-Oka",
            result.particles, result.across
        );
        for (t, z, reference) in &result.curve {
            let reference = reference.map_or(String::new(), |r| format!("{r:.3}"));
            println!("{t:6.3} {z:7.3}   {reference}");
        }
        println!(
            "mean deviation over T 0.5..3: {:.1}%",
            result.mean_deviation * 100.0
        );
    }
    Ok(())
}
