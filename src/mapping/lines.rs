//! Where each entry of a mapping file writes each key, so that a refused
//! number or an unknown parameter is reported at its own line rather than
//! at the `[[midi]]` it belongs to. Read beside the typed parse (which
//! keeps no positions, so learned mappings can be written back plainly).

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The tables of a mapping file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// `[[midi]]`.
    Midi,
    /// `[[osc]]`.
    Osc,
    /// `[[modulate]]`.
    Modulate,
    /// `[[dmx]]`.
    Dmx,
}

impl Table {
    /// The table's name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Table::Midi => "midi",
            Table::Osc => "osc",
            Table::Modulate => "modulate",
            Table::Dmx => "dmx",
        }
    }
}

/// One entry's keys and the byte offset each starts at.
type EntryKeys = BTreeMap<Spanned<String>, serde::de::IgnoredAny>;

#[derive(Deserialize, Default)]
struct Spans {
    #[serde(default)]
    midi: Vec<EntryKeys>,
    #[serde(default)]
    osc: Vec<EntryKeys>,
    #[serde(default)]
    modulate: Vec<EntryKeys>,
    #[serde(default)]
    dmx: Vec<EntryKeys>,
}

/// The line of every key of every entry of one mapping file.
#[derive(Debug, Clone, Default)]
pub struct EntryLines {
    lines: BTreeMap<(&'static str, usize, String), usize>,
    headers: BTreeMap<(&'static str, usize), usize>,
}

impl EntryLines {
    /// Reads the positions in `text`; a file that does not parse has none
    /// (its parse error carries its own line).
    pub fn read(text: &str) -> Self {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let spans: Spans = toml::from_str(text).unwrap_or_default();
        let mut lines = Self::default();
        for (table, entries) in [
            (Table::Midi, &spans.midi),
            (Table::Osc, &spans.osc),
            (Table::Modulate, &spans.modulate),
            (Table::Dmx, &spans.dmx),
        ] {
            for (index, entry) in entries.iter().enumerate() {
                for key in entry.keys() {
                    let at = (table.name(), index, key.get_ref().clone());
                    lines.lines.insert(at, line_of(key.span().start));
                }
            }
            let header = format!("[[{}]]", table.name());
            for (index, (at, _)) in text.match_indices(&header).enumerate() {
                lines.headers.insert((table.name(), index), line_of(at));
            }
        }
        lines
    }

    /// The line of `key` in entry `index` of `table`; the entry's own
    /// line where the key is not written (a missing `cc`), else line 1.
    pub fn line(&self, table: Table, index: usize, key: &str) -> usize {
        self.lines
            .get(&(table.name(), index, key.to_string()))
            .or_else(|| self.headers.get(&(table.name(), index)))
            .copied()
            .unwrap_or(1)
    }

    /// The line entry `index` of `table` starts on.
    pub fn entry(&self, table: Table, index: usize) -> usize {
        self.headers
            .get(&(table.name(), index))
            .copied()
            .unwrap_or(1)
    }
}
