//! The preset part of [`Show`]: which preset runs, which is on its way,
//! and the mappings they bring.
//!
//! [`Show`]: super::Show

use super::Ground;
use super::presets::Staging;
use crate::mapping::LoadedMappings;

/// The preset running and the one staged to follow it, the mapping files
/// the running one names and the mappings in force, and how many presets
/// came on stage.
#[derive(Default)]
pub(super) struct PresetState {
    /// The preset now running, by name.
    pub(super) running: Option<String>,
    /// The mapping files the running preset names.
    pub(super) own_mappings: Vec<String>,
    /// The mappings in force: the show's and the running preset's own.
    pub(super) mappings: LoadedMappings,
    /// The preset on its way to the stage, if any.
    pub(super) staging: Option<Staging>,
    /// Presets loaded since the show started.
    pub(super) loaded: u64,
}

impl PresetState {
    /// Reads the mappings in force again: every `presets/mappings/*.toml`
    /// of the show and the running preset's own.
    pub(super) fn load_mappings(&mut self, ground: &Ground) {
        self.mappings
            .load(&ground.assets, &self.own_mappings, &ground.errors);
    }

    /// The running preset's file in `presets/`, if one runs.
    pub(super) fn file(&self) -> Option<String> {
        (self.running.as_ref()).map(|p| format!("{}.toml", p.trim_end_matches(".toml")))
    }
}
