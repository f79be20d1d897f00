//! `sylva check` on mapping files: each parses (MIDI's numbers checked
//! there, `mapping::check`), and each target names something the show can
//! have: a parameter some preset puts on stage or a show-wide one, of a
//! kind the mapping can move; a layer, preset or playlist that exists.
//!
//! A parameter whose layer some preset has, or whose section is show-wide
//! (`master.`), but which that layer lacks is misspelt: an error, with the
//! nearest name. A target whose layer no preset has is a warning: it does
//! nothing in this show, yet a controller's file is written for every
//! show it travels to (the shipped ones name layers of several presets),
//! and failing the show over it would teach a VJ to ignore `check`.

use std::collections::{BTreeMap, BTreeSet};

use super::CheckError;
use crate::base::{Assets, Folder};
use crate::engine::Preset;
use crate::mapping::names::{nearest, owner as owner_of};
use crate::mapping::{Action, EntryLines, MappingError, Mappings, Table, check_action};
use crate::params::{ParamKind, ParamSpec, Registry};

/// A show-wide parameter registered a tier above the show (by the senders,
/// when recording or sending is possible), named here so a mapping to it
/// passes: mappings may well drive it from a button.
const RECORD: &str = "record.on";

/// Everything a mapping of this show may name.
pub(super) struct ShowParams {
    /// Every parameter some preset, or the show itself, can have.
    specs: BTreeMap<String, ParamSpec>,
    /// Every layer id some preset puts on stage.
    layers: BTreeSet<String>,
    /// Preset names (`default`), playlist names.
    presets: BTreeSet<String>,
    playlists: BTreeSet<String>,
    /// Mapping files presets name.
    preset_mappings: Vec<String>,
}

impl ShowParams {
    /// The show-wide parameters and the show's presets and playlists by
    /// name; each preset's layers join as it is checked.
    pub(super) fn new(assets: &Assets) -> Self {
        let names = |prefix: &str| -> BTreeSet<String> {
            (assets.list(Folder::Presets, "toml").into_iter())
                .filter_map(|f| {
                    f.strip_prefix(prefix)?
                        .strip_suffix(".toml")
                        .map(String::from)
                })
                .filter(|name| !name.contains('/'))
                .collect()
        };
        let mut stage = Self {
            specs: BTreeMap::new(),
            layers: BTreeSet::new(),
            presets: names(""),
            playlists: names("playlists/"),
            preset_mappings: Vec::new(),
        };
        stage.add_specs([ParamSpec::bool(RECORD, false)]);
        stage
    }

    /// Adds parameters the show can have.
    pub(super) fn add_specs(&mut self, specs: impl IntoIterator<Item = ParamSpec>) {
        for spec in specs {
            self.specs.insert(spec.name.clone(), spec);
        }
    }

    /// Adds `preset`'s layers and the parameters `registry` holds for it.
    pub(super) fn add_preset(&mut self, preset: &Preset, registry: &Registry) {
        self.layers
            .extend(preset.layers.iter().map(|(id, _)| id.clone()));
        self.add_specs(registry.iter().map(|(spec, _)| spec.clone()));
        for file in &preset.mappings {
            if !self.preset_mappings.contains(file) {
                self.preset_mappings.push(file.clone());
            }
        }
    }

    /// The mapping files presets name.
    pub(super) fn preset_mappings(&self) -> Vec<String> {
        self.preset_mappings.clone()
    }

    /// Whether some parameter belongs to `owner` (a layer on stage in some
    /// preset, or a show-wide section).
    fn owns(&self, owner: &str) -> bool {
        !owner.is_empty()
            && (self.layers.contains(owner)
                || self.specs.keys().any(|name| owner_of(name) == owner))
    }

    /// What `name` is in this show.
    fn find(&self, name: &str) -> Found<'_> {
        if let Some(spec) = self.specs.get(name) {
            return Found::Param(spec);
        }
        if self.owns(owner_of(name)) {
            let meant = nearest(name, self.specs.keys().map(String::as_str));
            return Found::Misspelt(meant.map(String::from));
        }
        Found::NoLayer(self.no_layer(owner_of(name)))
    }

    /// Why `name` is no parameter of a layer the show has (a slip, with
    /// the nearest name); `None` where it is one, or its layer is in no
    /// preset.
    pub(super) fn misspelt(&self, name: &str) -> Option<String> {
        match self.find(name) {
            Found::Misspelt(meant) => Some(format!(
                "unknown parameter {name:?}{}",
                suggestion(meant.as_deref())
            )),
            Found::Param(_) | Found::NoLayer(_) => None,
        }
    }

    /// Why there is no preset `name`, with the nearest.
    pub(super) fn no_preset(&self, name: &str) -> Option<String> {
        (!self.presets.iter().any(|p| p == name)).then(|| {
            let meant = nearest(name, self.presets.iter().map(String::as_str));
            format!("no preset {name:?}{}", suggestion(meant))
        })
    }

    /// The warning for layer `id`, which no preset has.
    fn no_layer(&self, id: &str) -> String {
        let meant = nearest(id, self.layers.iter().map(String::as_str));
        format!(
            "no preset has a layer {id:?}{}; the mapping does nothing until one does",
            suggestion(meant)
        )
    }
}

/// What a name turns out to be.
enum Found<'a> {
    /// A parameter the show can have.
    Param(&'a ParamSpec),
    /// Not one, though its layer or section is: a slip, with the nearest.
    Misspelt(Option<String>),
    /// Its layer is in no preset: the warning.
    NoLayer(String),
}

/// ` (did you mean "x"?)`, or nothing.
fn suggestion(meant: Option<&str>) -> String {
    meant.map_or(String::new(), |m| format!(" (did you mean {m:?}?)"))
}

/// What mappings move: a MIDI control or an OSC alias sets numbers,
/// switches and choices; a modulation adds to numbers.
#[derive(Clone, Copy)]
enum Mover {
    Control,
    Modulation,
}

impl Mover {
    /// Why `spec` cannot be moved this way, if it cannot.
    fn refuses(self, spec: &ParamSpec) -> Option<String> {
        if spec.read_only {
            return Some(format!(
                "{:?} is read-only: only the show writes it",
                spec.name
            ));
        }
        let fits = match self {
            Mover::Control => matches!(
                spec.kind,
                ParamKind::Float { .. }
                    | ParamKind::Int { .. }
                    | ParamKind::Bool
                    | ParamKind::Enum { .. }
            ),
            Mover::Modulation => {
                matches!(spec.kind, ParamKind::Float { .. } | ParamKind::Int { .. })
            }
        };
        let moves = match self {
            Mover::Control => "numbers, switches and choices",
            Mover::Modulation => "numbers",
        };
        (!fits).then(|| {
            format!(
                "{:?} ({}) cannot be moved by this mapping, which moves {moves}",
                spec.name,
                spec.kind.name()
            )
        })
    }
}

/// The problems and warnings of mapping file `file` (in `presets/`).
pub(super) fn check(
    assets: &Assets,
    file: &str,
    stage: &ShowParams,
) -> (Vec<CheckError>, Vec<String>) {
    let asset = match assets.read(Folder::Presets, file) {
        Ok(asset) => asset,
        Err(error) => return (vec![error.into()], Vec::new()),
    };
    let (mappings, refused) = match Mappings::read(&asset.display, &asset.text) {
        Ok(read) => read,
        Err(error) => return (vec![error.into()], Vec::new()),
    };
    let mut found = Findings {
        file: asset.display,
        lines: EntryLines::read(&asset.text),
        problems: refused.into_iter().map(|e| (e.line, e.into())).collect(),
        warnings: Vec::new(),
    };
    for (index, midi) in mappings.midi.iter().enumerate() {
        let target = (midi.param.as_deref(), midi.range, midi.action.as_deref());
        found.control(stage, (Table::Midi, index), target);
    }
    for (index, alias) in mappings.osc.iter().enumerate() {
        found.param(stage, (Table::Osc, index), &alias.param, Mover::Control);
    }
    for (index, desk) in mappings.dmx.iter().enumerate() {
        let target = (desk.param.as_deref(), desk.range, desk.action.as_deref());
        found.control(stage, (Table::Dmx, index), target);
    }
    for (index, modulation) in mappings.modulate.iter().enumerate() {
        let at = (Table::Modulate, index);
        found.param(stage, at, &modulation.param, Mover::Modulation);
    }
    found.problems.sort_by_key(|(line, _)| *line);
    found.warnings.sort_by_key(|(line, _)| *line);
    let (problems, warnings) = (found.problems, found.warnings);
    (
        problems.into_iter().map(|(_, p)| p).collect(),
        warnings.into_iter().map(|(_, w)| w).collect(),
    )
}

/// Why a control's `range` reaches past `spec`'s, whose values there
/// would be clamped (a stretch of the fader doing nothing).
fn outside(spec: &ParamSpec, [lo, hi]: [f32; 2]) -> Option<String> {
    let (min, max) = match spec.kind {
        ParamKind::Float { min, max } => (min, max),
        ParamKind::Int { min, max } => (min as f32, max as f32),
        _ => return None,
    };
    let inside = |x: f32| (min..=max).contains(&x);
    (!(inside(lo) && inside(hi))).then(|| {
        format!(
            "range [{lo}, {hi}] reaches past {:?}'s {min} to {max}",
            spec.name
        )
    })
}

/// What one file's entries amount to.
struct Findings {
    file: String,
    lines: EntryLines,
    /// Each with its line, to be listed in the file's order.
    problems: Vec<(usize, CheckError)>,
    warnings: Vec<(usize, String)>,
}

impl Findings {
    /// A control's parameter (with its range) or action.
    fn control(
        &mut self,
        stage: &ShowParams,
        at: (Table, usize),
        (param, range, action): (Option<&str>, Option<[f32; 2]>, Option<&str>),
    ) {
        if let Some(param) = param {
            self.param(stage, at, param, Mover::Control);
            if let (Some(range), Found::Param(spec)) = (range, stage.find(param))
                && let Some(why) = outside(spec, range)
            {
                self.problem(at, "range", why);
            }
        }
        if let Some(action) = action {
            self.action(stage, at, action);
        }
    }

    fn problem(&mut self, (table, index): (Table, usize), key: &str, message: String) {
        let line = self.lines.line(table, index, key);
        let error = MappingError {
            file: self.file.clone(),
            line,
            message: format!("[[{}]] entry {}: {message}", table.name(), index + 1),
        };
        self.problems.push((line, error.into()));
    }

    fn warning(&mut self, (table, index): (Table, usize), key: &str, message: String) {
        let line = self.lines.line(table, index, key);
        let warning = format!(
            "{}:{line}: [[{}]] entry {}: {message}",
            self.file,
            table.name(),
            index + 1
        );
        self.warnings.push((line, warning));
    }

    /// Parameter `name` of the entry at `at`, moved by `mover`.
    fn param(&mut self, stage: &ShowParams, at: (Table, usize), name: &str, mover: Mover) {
        match stage.find(name) {
            Found::Param(spec) => {
                if let Some(why) = mover.refuses(spec) {
                    self.problem(at, "param", why);
                }
            }
            Found::Misspelt(meant) => {
                let why = format!("unknown parameter {name:?}{}", suggestion(meant.as_deref()));
                self.problem(at, "param", why);
            }
            Found::NoLayer(why) => self.warning(at, "param", why),
        }
    }

    /// Action `text` (it parsed): the layer, preset or playlist it names.
    fn action(&mut self, stage: &ShowParams, at: (Table, usize), text: &str) {
        match check_action(text) {
            Ok(Action::Reseed(layer) | Action::Toggle(layer)) if !stage.layers.contains(&layer) => {
                self.warning(at, "action", stage.no_layer(&layer));
            }
            Ok(Action::Preset(name)) if !stage.presets.contains(&name) => {
                let why = stage.no_preset(&name).unwrap_or_default();
                self.problem(at, "action", why);
            }
            Ok(Action::Playlist(crate::mapping::PlaylistCommand::Play(name)))
                if !stage.playlists.contains(&name) =>
            {
                let meant = nearest(&name, stage.playlists.iter().map(String::as_str));
                let why = format!("no playlist {name:?}{}", suggestion(meant));
                self.problem(at, "action", why);
            }
            _ => {}
        }
    }
}
