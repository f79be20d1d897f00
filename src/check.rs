//! `sylva check`: validates every shader, script, preset and mapping file of the show
//! (the show folder's files and the built-in ones) without a window or a
//! GPU, and lists each problem with its file and line.

use std::collections::HashMap;

use crate::compositor::master_params;
use crate::control::mapping::Mappings;
use crate::gpu::wgsl::Composer;
use crate::layers::{self, shader};
use crate::params::Registry;
use crate::show::{Assets, Folder, Preset, PresetError};

/// What was checked and what is wrong.
#[derive(Debug, Default)]
pub struct CheckReport {
    /// Files checked, per folder.
    pub checked: HashMap<&'static str, usize>,
    /// One message per problem, starting with `file:line`.
    pub problems: Vec<String>,
}

/// Checks everything in `assets`.
pub fn run(assets: &Assets) -> CheckReport {
    let mut report = CheckReport::default();
    for file in assets.list(Folder::Shaders, "wgsl") {
        report.count(Folder::Shaders);
        if let Err(problem) = check_shader(assets, &file) {
            report.problems.push(problem);
        }
    }
    for file in assets.list(Folder::Scripts, "lua") {
        report.count(Folder::Scripts);
        if let Err(problem) = check_script(assets, &file) {
            report.problems.push(problem);
        }
    }
    for file in assets.list(Folder::Presets, "toml") {
        report.count(Folder::Presets);
        let checked = if file.starts_with("mappings/") {
            check_mappings(assets, &file)
        } else if file.contains('/') {
            Ok(())
        } else {
            check_preset(assets, &file)
        };
        if let Err(problem) = checked {
            report.problems.push(problem);
        }
    }
    report
}

impl CheckReport {
    fn count(&mut self, folder: Folder) {
        *self.checked.entry(folder.name()).or_default() += 1;
    }

    /// One line saying what was checked.
    pub fn summary(&self) -> String {
        let count = |name| self.checked.get(name).copied().unwrap_or(0);
        format!(
            "checked {} shaders, {} scripts, {} presets: {}",
            count("shaders"),
            count("scripts"),
            count("presets"),
            match self.problems.len() {
                0 => "no problems".to_string(),
                1 => "1 problem".to_string(),
                n => format!("{n} problems"),
            }
        )
    }
}

/// Layer shaders (`shader/*.wgsl`) are checked as the layer composes them;
/// files without an entry point are includes, checked through the files
/// that include them; every other file on its own.
fn check_shader(assets: &Assets, file: &str) -> Result<(), String> {
    let text = assets
        .read(Folder::Shaders, file)
        .map_err(|e| e.to_string())?
        .text;
    let entry = ["@compute", "@vertex", "@fragment"]
        .iter()
        .any(|e| text.contains(e));
    if file.starts_with("shader/prelude/") || (!entry && !file.starts_with("shader/")) {
        return Ok(());
    }
    if file.starts_with("shader/") {
        return shader::LayerSource::read(assets, file)?
            .validate()
            .map(drop);
    }
    Composer::new(assets).file(file)?.finish()?.validate()?;
    Ok(())
}

fn check_script(assets: &Assets, file: &str) -> Result<(), String> {
    let asset = assets
        .read(Folder::Scripts, file)
        .map_err(|e| e.to_string())?;
    let lua = mlua::Lua::new_with(mlua::StdLib::NONE, mlua::LuaOptions::default())
        .map_err(|e| e.to_string())?;
    lua.load(&asset.text)
        .set_name(format!("@{}", asset.display))
        .into_function()
        .map(drop)
        .map_err(|e| e.to_string())
}

fn check_mappings(assets: &Assets, file: &str) -> Result<(), String> {
    let asset = assets
        .read(Folder::Presets, file)
        .map_err(|e| e.to_string())?;
    Mappings::parse(&asset.display, &asset.text)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn check_preset(assets: &Assets, file: &str) -> Result<(), String> {
    let asset = assets
        .read(Folder::Presets, file)
        .map_err(|e| e.to_string())?;
    let preset = Preset::parse(&asset.display, &asset.text).map_err(|e| e.to_string())?;
    preset_holds(assets, &preset)
}

/// Whether `preset` would load, found without a GPU: its layers exist, its
/// script compiles, and every parameter it sets exists with a fitting
/// value, as the layers would declare them. `sylva check` and preset saves
/// that came from the network use it.
pub fn preset_holds(assets: &Assets, preset: &Preset) -> Result<(), String> {
    let mut registry = Registry::new();
    for spec in master_params() {
        registry.register(spec);
    }
    for (id, line) in &preset.layers {
        let specs = layers::declared_params(id, assets, preset)
            .map_err(|e| format!("{}:{line}: {e}", preset.file))?;
        for spec in specs {
            registry.register(spec);
        }
    }
    if let Some(script) = &preset.script {
        let script = script.strip_prefix("scripts/").unwrap_or(script);
        check_script(assets, script)?;
    }
    preset
        .apply(&mut registry)
        .map_err(|e: PresetError| e.to_string())
}
