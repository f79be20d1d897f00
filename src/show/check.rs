//! `sylva check`: validates every shader, script, preset and mapping file of the show
//! (the show folder's files and the built-in ones) without a window or a
//! GPU, and lists each problem with its file and line.

use std::collections::HashMap;

use crate::base::{AssetError, Assets, Folder};
use crate::engine::compositor::master_params;
use crate::engine::{Preset, PresetError};
use crate::gpu::wgsl::{Composer, ShaderError};
use crate::layers::{self, shader};
use crate::mapping::{MappingError, Mappings};
use crate::params::Registry;
use crate::show::stage::{OUTPUTS_FOLDER, read_outputs};

/// What was checked and what is wrong.
#[derive(Debug, Default)]
pub struct CheckReport {
    /// Files checked, per folder.
    pub checked: HashMap<&'static str, usize>,
    /// One per problem; each message starts with `file:line`.
    pub problems: Vec<CheckError>,
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
    let isf = assets.list(Folder::Shaders, "fs");
    for file in isf.into_iter().chain(assets.list(Folder::Shaders, "glsl")) {
        report.count(Folder::Shaders);
        if let Err(problem) = shader::isf::IsfSource::read(assets, &file, "shader.check") {
            report
                .problems
                .push(shader::ShaderLayerError::from(problem).into());
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
        } else if file.starts_with("playlists/") {
            check_playlist(assets, &file)
        } else if file.contains('/') {
            Ok(())
        } else {
            check_preset(assets, &file)
        };
        if let Err(problem) = checked {
            report.problems.push(problem);
        }
    }
    for (file, path) in outputs_files(assets) {
        *report.checked.entry("outputs").or_default() += 1;
        if let Err(problem) = check_outputs(assets, &file, &path) {
            report.problems.push(problem);
        }
    }
    report
}

/// The show folder's outputs files, `outputs/*.toml`, by name and path.
fn outputs_files(assets: &Assets) -> Vec<(String, std::path::PathBuf)> {
    let folder = assets.root().join(OUTPUTS_FOLDER);
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .filter_map(|path| {
            let name = path.file_name()?.to_string_lossy().to_string();
            Some((format!("{OUTPUTS_FOLDER}/{name}"), path))
        })
        .collect();
    files.sort();
    files
}

/// An outputs file parses, and the masks it names are there.
fn check_outputs(assets: &Assets, file: &str, path: &std::path::Path) -> Result<(), CheckError> {
    let plan = read_outputs(path, file).map_err(CheckError::Outputs)?;
    for output in &plan.outputs {
        if let Some(mask) = &output.mask
            && !assets.root().join(mask).is_file()
        {
            return Err(CheckError::Outputs(format!(
                "{file}:{}: output {}: mask {mask} is not in the show folder",
                output.line, output.name
            )));
        }
    }
    Ok(())
}

impl CheckReport {
    fn count(&mut self, folder: Folder) {
        *self.checked.entry(folder.name()).or_default() += 1;
    }

    /// One line saying what was checked.
    pub fn summary(&self) -> String {
        let count = |name| self.checked.get(name).copied().unwrap_or(0);
        format!(
            "checked {} shaders, {} scripts, {} presets, {} outputs files: {}",
            count("shaders"),
            count("scripts"),
            count("presets"),
            count("outputs"),
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
fn check_shader(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let text = assets.read(Folder::Shaders, file)?.text;
    let entry = ["@compute", "@vertex", "@fragment"]
        .iter()
        .any(|e| text.contains(e));
    if file.starts_with("shader/prelude/") || (!entry && !file.starts_with("shader/")) {
        return Ok(());
    }
    if file.starts_with("shader/") {
        shader::LayerSource::read(assets, file)?.validate()?;
        return Ok(());
    }
    Composer::new(assets).file(file)?.finish()?.validate()?;
    Ok(())
}

fn check_script(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Scripts, file)?;
    let lua = mlua::Lua::new_with(mlua::StdLib::NONE, mlua::LuaOptions::default())?;
    lua.load(&asset.text)
        .set_name(format!("@{}", asset.display))
        .into_function()?;
    Ok(())
}

fn check_mappings(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Presets, file)?;
    Mappings::parse(&asset.display, &asset.text)?;
    Ok(())
}

/// A playlist parses and every preset it names exists.
fn check_playlist(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Presets, file)?;
    let playlist = crate::show::playlist::Playlist::parse(&asset.display, &asset.text)?;
    for entry in &playlist.entries {
        assets.read(Folder::Presets, &format!("{}.toml", entry.preset))?;
    }
    Ok(())
}

fn check_preset(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Presets, file)?;
    let preset = Preset::parse(&asset.display, &asset.text)?;
    preset_holds(assets, &preset)
}

/// Whether `preset` would load, found without a GPU: its layers exist, its
/// script compiles, and every parameter it sets exists with a fitting
/// value, as the layers would declare them. `sylva check` and preset saves
/// that came from the network use it.
pub fn preset_holds(assets: &Assets, preset: &Preset) -> Result<(), CheckError> {
    let mut registry = Registry::new();
    for spec in master_params()
        .into_iter()
        .chain(crate::audio::audio_params())
        .chain(crate::engine::world::scene_params())
    {
        registry.register(spec);
    }
    for (id, line) in &preset.layers {
        let specs =
            layers::declared_params(id, assets, preset).map_err(|reason| CheckError::Layer {
                file: preset.file.clone(),
                line: *line,
                reason,
            })?;
        for spec in specs {
            registry.register(spec);
        }
    }
    if let Some(script) = &preset.script {
        let script = script.strip_prefix("scripts/").unwrap_or(script);
        check_script(assets, script)?;
    }
    preset.apply(&mut registry)?;
    Ok(())
}

/// Why a show file does not pass `sylva check`.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The file is missing, too large or outside the show.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// A WGSL file does not compose or validate.
    #[error(transparent)]
    Shader(#[from] ShaderError),
    /// A shader layer's file cannot be used.
    #[error(transparent)]
    ShaderLayer(#[from] shader::ShaderLayerError),
    /// A Lua script does not compile.
    #[error(transparent)]
    Lua(#[from] mlua::Error),
    /// A mapping file is malformed.
    #[error(transparent)]
    Mapping(#[from] MappingError),
    /// A preset is malformed or sets what its layers lack.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// An outputs file is malformed (`file:line: why`).
    #[error("{0}")]
    Outputs(String),
    /// A preset names a layer that cannot be declared.
    #[error("{file}:{line}: {reason}")]
    Layer {
        /// The preset.
        file: String,
        /// Its line naming the layer.
        line: usize,
        /// Why.
        reason: crate::engine::LayerError,
    },
}
