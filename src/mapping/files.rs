//! The show's mapping files: every `presets/mappings/*.toml`, the ones the
//! running preset names, and MIDI learn's `mappings/learned.toml`. The
//! show reads and writes them; the control surface only receives the
//! parsed result ([`LoadedMappings`]), so control never touches files.

use std::path::Path;

use crate::base::opener::{self, OpenError};
use crate::base::status::ErrorLog;
use crate::base::{Assets, Folder, MAX_FILE_BYTES};
use crate::mapping::{Mappings, MidiMapping};

/// Where MIDI learn keeps what it learned, inside the show's presets.
const LEARNED: &str = "mappings/learned.toml";

/// Every mapping in force, with a revision that changes whenever the set
/// is read again (the control surface rebuilds its mapper then).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedMappings {
    /// Counts loads; 0 before the first.
    pub revision: u64,
    /// All mappings, in file order.
    pub mappings: Mappings,
}

impl LoadedMappings {
    /// Reads every `mappings/*.toml` of the show and then the preset's own
    /// files; a broken file is reported under its name and left out.
    pub fn load(&mut self, assets: &Assets, preset_files: &[String], errors: &ErrorLog) {
        let mut files: Vec<String> = assets
            .list(Folder::Presets, "toml")
            .into_iter()
            .filter(|f| f.starts_with("mappings/"))
            .collect();
        for file in preset_files {
            if !files.contains(file) {
                files.push(file.clone());
            }
        }
        let mut all = Mappings::default();
        for file in files {
            let parsed = assets
                .read(Folder::Presets, &file)
                .map_err(|e| e.to_string())
                .and_then(|asset| {
                    Mappings::parse(&asset.display, &asset.text).map_err(|e| e.to_string())
                });
            match parsed {
                Ok(mappings) => {
                    errors.clear(&format!("presets/{file}"));
                    all.midi.extend(mappings.midi);
                    all.osc.extend(mappings.osc);
                    all.modulate.extend(mappings.modulate);
                    all.dmx.extend(mappings.dmx);
                }
                Err(error) => errors.report(format!("presets/{file}"), error),
            }
        }
        self.mappings = all;
        self.revision += 1;
    }
}

/// Adds `mapping` to the show's learned mappings, replacing one bound to
/// the same control; returns the file written.
pub fn save_learned(assets: &Assets, mapping: &MidiMapping) -> Result<String, OpenError> {
    let (dir, relative) = assets.place(Folder::Presets, Path::new(LEARNED));
    let mut learned = opener::read_text(&dir, &relative, MAX_FILE_BYTES)
        .ok()
        .and_then(|text| Mappings::parse(LEARNED, &text).ok())
        .unwrap_or_default();
    learned.midi.retain(|m| {
        !(m.cc == mapping.cc && m.note == mapping.note && m.channel == mapping.channel)
    });
    learned.midi.push(mapping.clone());
    // Through the opener: a link planted as the file is refused.
    let path = opener::write(&dir, &relative, learned.to_toml().as_bytes(), false)?;
    Ok(path.display().to_string())
}

/// The name of the control a mapping listens to, for the log.
pub fn control_name(mapping: &MidiMapping) -> String {
    let channel = mapping
        .channel
        .map_or(String::new(), |c| format!(" on channel {c}"));
    match (mapping.cc, mapping.note) {
        (Some(cc), _) => format!("CC {cc}{channel}"),
        (_, Some(note)) => format!("note {note}{channel}"),
        _ => "nothing".into(),
    }
}

/// The preset after (or before) `current` among the show's presets, in
/// name order; the first when `current` is none of them.
pub fn step_preset(assets: &Assets, current: Option<&str>, forward: bool) -> Option<String> {
    let names: Vec<String> = assets
        .list(Folder::Presets, "toml")
        .into_iter()
        .filter(|f| !f.contains('/'))
        .map(|f| f.trim_end_matches(".toml").to_string())
        .collect();
    if names.is_empty() {
        return None;
    }
    let at = current
        .and_then(|p| names.iter().position(|n| n == p))
        .unwrap_or(0);
    let next = if forward {
        (at + 1) % names.len()
    } else {
        (at + names.len() - 1) % names.len()
    };
    names.get(next).cloned()
}
