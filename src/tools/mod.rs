//! The command-line tools layer kinds bring (`sylva export colony`,
//! `sylva export forest`, `sylva validate fluid`). A tool runs a whole
//! show headless, so it sits above the show and the drivers; the kinds
//! below never import it, and [`TOOLS`] is the one list (wezterm's
//! pattern: what extends the program registers at the top).

mod colony_export;
mod fluid_validate;
mod forest_export;

pub use colony_export::{ColonyExportArgs, export_colony};
pub use forest_export::{ForestExportArgs, export_forest};

/// Every kind's tools.
pub const TOOLS: [&KindTool; 3] = [
    &colony_export::EXPORT,
    &forest_export::EXPORT,
    &fluid_validate::VALIDATE,
];

/// The commands under which layer kinds add tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolVerb {
    /// `sylva export <kind>`: write what a simulation made to a file.
    Export,
    /// `sylva validate <kind>`: check a simulation against published data.
    Validate,
}

impl ToolVerb {
    /// Both verbs, in help order.
    pub const ALL: [ToolVerb; 2] = [ToolVerb::Export, ToolVerb::Validate];

    /// The subcommand's name.
    pub fn name(self) -> &'static str {
        match self {
            ToolVerb::Export => "export",
            ToolVerb::Validate => "validate",
        }
    }

    /// The subcommand's help line.
    pub fn about(self) -> &'static str {
        match self {
            ToolVerb::Export => {
                "Write what a simulation made to a file (`sylva export colony ...`)"
            }
            ToolVerb::Validate => {
                "Check a simulation against published data (`sylva validate fluid dam-break`)"
            }
        }
    }
}

/// A command-line tool a layer kind brings: `sylva <verb> <kind> ARGS`.
pub struct KindTool {
    /// The layer kind it belongs to (`colony`), its subcommand's name.
    pub kind: &'static str,
    /// Which command it sits under.
    pub verb: ToolVerb,
    /// Its help line.
    pub about: &'static str,
    /// Adds its arguments (a clap `Args` type's `augment_args`).
    pub args: fn(clap::Command) -> clap::Command,
    /// Runs it with the arguments parsed.
    pub run: fn(&clap::ArgMatches) -> anyhow::Result<()>,
}

/// `sylva <verb>`, with a subcommand for every kind that has a tool there.
pub fn tools_command(verb: ToolVerb) -> clap::Command {
    let kinds = TOOLS
        .iter()
        .filter(|tool| tool.verb == verb)
        .map(|tool| (tool.args)(clap::Command::new(tool.kind)).about(tool.about));
    clap::Command::new(verb.name())
        .about(verb.about())
        .subcommand_required(true)
        .subcommands(kinds)
}

/// Runs the tool `matches` names under `verb`, if it is one.
pub fn run_tool(verb: ToolVerb, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let Some((kind, args)) = matches.subcommand() else {
        anyhow::bail!("sylva {} needs a layer kind", verb.name());
    };
    let tool = TOOLS
        .iter()
        .find(|tool| tool.kind == kind && tool.verb == verb);
    match tool {
        Some(tool) => (tool.run)(args),
        None => anyhow::bail!("no layer kind {kind:?} has a `{}` tool", verb.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_tool_is_a_valid_subcommand_and_reachable() {
        for verb in ToolVerb::ALL {
            let command = tools_command(verb);
            command.clone().debug_assert();
            let kinds: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
            assert!(!kinds.is_empty(), "no kind brings a `{}` tool", verb.name());
        }
        let parsed = tools_command(ToolVerb::Export)
            .try_get_matches_from(["export", "colony", "--out", "x.obj", "--steps", "3"]);
        let parsed = parsed.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.subcommand_name(), Some("colony"));
        let refused = tools_command(ToolVerb::Validate).try_get_matches_from(["validate", "sky"]);
        assert!(
            refused.is_err(),
            "a kind without a validate tool is refused"
        );
    }
}
