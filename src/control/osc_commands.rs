//! The addresses every show answers besides its parameters (`/sylva/preset`,
//! `/sylva/reseed`, `/sylva/status` …), in one table: the `--verbose`
//! listing prints it and the OSCQuery namespace serves a node for each
//! entry, so what the terminal lists and what a client can browse never
//! drift apart. `osc_apply` acts on them.

use super::osc::address_of;
use crate::params::{ParamKind, ParamSpec};

/// One address the show answers besides its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OscCommand {
    /// The OSC address.
    pub address: &'static str,
    /// The type tags it needs; empty for none (OSCQuery's `N`, a button).
    pub tags: &'static str,
    /// Type tags it may take after those (the preset's crossfade seconds).
    pub optional: &'static str,
    /// What it does.
    pub description: &'static str,
}

impl OscCommand {
    const fn new(address: &'static str, tags: &'static str, description: &'static str) -> Self {
        Self {
            address,
            tags,
            optional: "",
            description,
        }
    }

    const fn or_with(self, optional: &'static str) -> Self {
        Self { optional, ..self }
    }

    /// The tags as the terminal lists them, the optional ones in brackets
    /// (`s [f]`).
    pub fn usage(&self) -> String {
        match (self.tags, self.optional) {
            (tags, "") => tags.to_string(),
            ("", optional) => format!("[{optional}]"),
            (tags, optional) => format!("{tags} [{optional}]"),
        }
    }
}

/// The commands every show answers, with their OSC type tags.
pub const COMMANDS: [OscCommand; 15] = [
    OscCommand::new(
        "/sylva/preset",
        "s",
        "load a preset, crossfading over f seconds",
    )
    .or_with("f"),
    OscCommand::new(
        "/sylva/preset/save",
        "s",
        "save the running show as a preset",
    ),
    OscCommand::new(
        "/sylva/playlist/play",
        "s",
        "play presets/playlists/<s>.toml",
    ),
    OscCommand::new("/sylva/playlist/next", "", "the playlist's next entry"),
    OscCommand::new("/sylva/playlist/previous", "", "the entry before"),
    OscCommand::new("/sylva/playlist/jump", "i", "entry i (0-based)"),
    OscCommand::new(
        "/sylva/playlist/stop",
        "",
        "stop the playlist; the preset stays",
    ),
    OscCommand::new(
        "/sylva/timeline/play",
        "s",
        "play presets/timelines/<s>.toml on the show clock from where it is",
    ),
    OscCommand::new("/sylva/timeline/stop", "", "stop the cue timeline"),
    OscCommand::new("/sylva/reseed", "", "restart every layer"),
    OscCommand::new(
        "/sylva/release",
        "",
        "hand the parameter s (or every one) a performer holds back to the script",
    )
    .or_with("s"),
    OscCommand::new(
        "/sylva/outputs/save",
        "",
        "write the outputs' mapping back into the outputs file",
    ),
    OscCommand::new(
        "/sylva/ui/favourites",
        "s",
        "keep the phone page's favourites (a JSON list of addresses)",
    ),
    OscCommand::new("/sylva/learn", "s", "MIDI-learn the named parameter"),
    OscCommand::new(
        "/sylva/status",
        "",
        "reply: preset, error count, last error, datagrams, malformed",
    ),
];

/// The OSC type tags a parameter of `kind` takes.
fn type_tags(kind: &ParamKind) -> &'static str {
    match kind {
        ParamKind::Float { .. } => "f",
        ParamKind::Int { .. } => "i",
        ParamKind::Bool => "T|F|i",
        ParamKind::Enum { .. } => "s|i",
        ParamKind::Vec3 { .. } => "fff",
        ParamKind::Colour => "fff[f]",
        ParamKind::Text | ParamKind::Path | ParamKind::Texture => "s",
        ParamKind::List { .. } => "f… (read-only)",
    }
}

/// Every address the show answers now, as a table for the terminal
/// (`--verbose`): the commands, then each parameter with its type tags,
/// range or options, and description.
pub fn address_table<'a>(params: impl Iterator<Item = &'a ParamSpec>) -> String {
    let mut rows: Vec<[String; 4]> = COMMANDS
        .iter()
        .map(|command| {
            [
                command.address.to_string(),
                command.usage(),
                String::new(),
                command.description.to_string(),
            ]
        })
        .collect();
    for spec in params {
        let range = match &spec.kind {
            ParamKind::Float { min, max } | ParamKind::Vec3 { min, max } => format!("{min}..{max}"),
            ParamKind::Int { min, max } => format!("{min}..{max}"),
            ParamKind::Enum { options } => options.join("|"),
            _ => String::new(),
        };
        rows.push([
            address_of(&spec.name),
            type_tags(&spec.kind).to_string(),
            range,
            spec.description.clone(),
        ]);
    }
    let width = |column: usize| {
        rows.iter()
            .map(|r| r[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2)];
    rows.iter()
        .map(|[address, tags, range, what]| {
            format!(
                "{address:<a$}  {tags:<t$}  {range:<r$}  {what}\n",
                a = widths[0],
                t = widths[1],
                r = widths[2]
            )
            .trim_end()
            .to_string()
                + "\n"
        })
        .collect()
}

/// The addresses an [`address_table`] lists, one a row, in its order.
pub fn table_addresses(table: &str) -> impl Iterator<Item = &str> {
    table
        .lines()
        .filter_map(|row| row.split_whitespace().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_table_lists_commands_and_parameters_with_their_tags() {
        let specs = [
            ParamSpec::float("colony.growth_speed", 1.0, 0.0, 8.0).with_description("How fast"),
            ParamSpec::enumeration("fluid.look", &["water", "glow"], 0),
        ];
        let table = address_table(specs.iter());
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("/sylva/preset ") && l.contains("s [f]"))
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("/sylva/release ") && l.contains(" [s] ")),
            "{table}"
        );
        let growth = table
            .lines()
            .find(|l| l.starts_with("/sylva/colony/growth_speed"));
        assert!(
            growth.is_some_and(|l| l.contains(" f ")
                && l.contains("0..8")
                && l.ends_with("How fast")),
            "{table}"
        );
        assert!(table.contains("water|glow"), "{table}");
        let addresses: Vec<&str> = table_addresses(&table).collect();
        assert_eq!(addresses.len(), COMMANDS.len() + specs.len());
        assert_eq!(addresses.last(), Some(&"/sylva/fluid/look"));
    }
}
