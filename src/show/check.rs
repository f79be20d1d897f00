//! `sylva check`: validates every shader, script, preset and mapping file of the show
//! (the show folder's files and the built-in ones) without a window or a
//! GPU, and lists each problem with its file and line. Presets are read
//! before mapping files, so every mapping's target is checked against the
//! parameters some preset puts on stage ([`mappings`]). A problem is
//! reported once, however many files lead to it: a broken script is the
//! script's problem, not also every preset's that uses it.

mod mappings;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;

use crate::base::opener;
use crate::base::{AssetError, Assets, Folder};
use crate::engine::compositor::master_params;
use crate::engine::{Preset, PresetError};
use crate::gpu::wgsl::{Composer, ShaderError};
use crate::layers::{self, shader};
use crate::mapping::MappingError;
use crate::params::Registry;
use crate::show::stage::{OUTPUTS_FOLDER, OutputsFileError, read_outputs};
use mappings::ShowParams;

/// What was checked and what is wrong.
#[derive(Debug, Default)]
pub struct CheckReport {
    /// Files checked, per folder.
    pub checked: HashMap<&'static str, usize>,
    /// One per problem; each message starts with `file:line`.
    pub problems: Vec<CheckError>,
    /// What works but likely not as meant (`file:line: why`): a mapping
    /// for a layer no preset has does nothing in this show.
    pub warnings: Vec<String>,
}

/// Checks everything in `assets`.
pub fn run(assets: &Assets) -> CheckReport {
    let mut report = CheckReport::default();
    for file in assets.list(Folder::Shaders, "wgsl") {
        report.count(Folder::Shaders);
        if let Err(problem) = check_shader(assets, &file) {
            report.push(problem);
        }
    }
    let isf = assets.list(Folder::Shaders, "fs");
    for file in isf.into_iter().chain(assets.list(Folder::Shaders, "glsl")) {
        report.count(Folder::Shaders);
        if let Err(problem) = shader::isf::IsfSource::read(assets, &file, "shader.check", &[]) {
            report.push(shader::ShaderLayerError::from(problem).into());
        }
    }
    for file in assets.list(Folder::Scripts, "lua") {
        report.count(Folder::Scripts);
        if let Err(problem) = check_script(assets, &file) {
            report.push(problem);
        }
    }
    let mut stage = ShowParams::new(assets);
    let (mut mapping_files, mut playlists, mut timelines) = (Vec::new(), Vec::new(), Vec::new());
    for file in assets.list(Folder::Presets, "toml") {
        report.count(Folder::Presets);
        if file.starts_with("mappings/") {
            mapping_files.push(file);
        } else if file.starts_with("playlists/") {
            playlists.push(file);
        } else if file.starts_with("timelines/") {
            timelines.push(file);
        } else if !file.contains('/')
            && let Err(problem) = check_preset(assets, &file, &mut stage)
        {
            report.push(problem);
        }
    }
    for file in outputs_files(assets) {
        *report.checked.entry("outputs").or_default() += 1;
        if let Err(problem) = check_outputs(assets, &file, &mut stage) {
            report.push(problem);
        }
    }
    for file in playlists {
        if let Err(problem) = check_playlist(assets, &file) {
            report.push(problem);
        }
    }
    for file in timelines {
        if let Err(problem) = check_timeline(assets, &file, &stage) {
            report.push(problem);
        }
    }
    // A preset's own mapping files are read with the shared ones.
    for file in stage.preset_mappings() {
        if !mapping_files.contains(&file) {
            mapping_files.push(file);
        }
    }
    for file in mapping_files {
        let (problems, warnings) = mappings::check(assets, &file, &stage);
        for problem in problems {
            report.push(problem);
        }
        report.warnings.extend(warnings);
    }
    report
}

/// The show folder's outputs files, `outputs/*.toml`, by name.
fn outputs_files(assets: &Assets) -> Vec<String> {
    let folder = assets.root().join(OUTPUTS_FOLDER);
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .filter_map(|path| {
            let name = path.file_name()?.to_string_lossy().to_string();
            Some(format!("{OUTPUTS_FOLDER}/{name}"))
        })
        .collect();
    files.sort();
    files
}

/// An outputs file parses, and the masks it names are there; its
/// outputs' parameters join the ones mappings may drive.
fn check_outputs(assets: &Assets, file: &str, stage: &mut ShowParams) -> Result<(), CheckError> {
    let plan = read_outputs(assets.root(), Path::new(file), file)?;
    stage.add_specs(crate::outputs::output_params(&plan));
    for output in &plan.outputs {
        let Some(mask) = &output.mask else {
            continue;
        };
        // As the show opens it: a plain file inside the show folder.
        let limit = crate::engine::inputs::still::MAX_PICTURE_FILE_BYTES;
        if let Err(error) = opener::open(assets.root(), Path::new(mask), limit) {
            return Err(CheckError::Mask(Box::new(MaskError {
                file: file.to_string(),
                line: output.line,
                output: output.name.clone(),
                mask: mask.clone(),
                error,
            })));
        }
    }
    Ok(())
}

impl CheckReport {
    fn count(&mut self, folder: Folder) {
        *self.checked.entry(folder.name()).or_default() += 1;
    }

    /// Adds `problem` unless it was reported already, through another
    /// file (a preset's layer whose shader is broken is the shader's
    /// problem, listed with the shaders).
    fn push(&mut self, problem: CheckError) {
        let cause = problem.cause();
        if !self.problems.iter().any(|p| p.cause() == cause) {
            self.problems.push(problem);
        }
    }

    /// One line saying what was checked.
    pub fn summary(&self) -> String {
        let count = |name| self.checked.get(name).copied().unwrap_or(0);
        let warnings = match self.warnings.len() {
            0 => String::new(),
            n => format!(", {}", plural(n, "warning")),
        };
        format!(
            "checked {} shaders, {} scripts, {} presets, {} outputs files: {}{warnings}",
            count("shaders"),
            count("scripts"),
            count("presets"),
            count("outputs"),
            match self.problems.len() {
                0 => "no problems".to_string(),
                n => plural(n, "problem"),
            }
        )
    }
}

/// `1 problem`, `2 problems`.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
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

/// A playlist parses and every preset it names exists.
fn check_playlist(assets: &Assets, file: &str) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Presets, file)?;
    let playlist = crate::show::playlist::Playlist::parse(&asset.display, &asset.text)?;
    for entry in &playlist.entries {
        assets.read(Folder::Presets, &format!("{}.toml", entry.preset))?;
    }
    Ok(())
}

/// A timeline parses, and every preset and parameter its cues name is
/// one the show has.
fn check_timeline(assets: &Assets, file: &str, stage: &ShowParams) -> Result<(), CheckError> {
    use crate::show::timeline::{CueAction, Timeline, TimelineError};
    let asset = assets.read(Folder::Presets, file)?;
    let timeline = Timeline::parse(&asset.display, &asset.text)?;
    for cue in &timeline.cues {
        let why = match &cue.action {
            CueAction::Preset(name, _) => stage.no_preset(name),
            CueAction::Set(param, _) | CueAction::Ramp(param, ..) => stage.misspelt(param),
            CueAction::Fire(_) => None,
        };
        if let Some(message) = why {
            return Err(TimelineError {
                file: asset.display.clone(),
                line: cue.line,
                message,
            }
            .into());
        }
    }
    Ok(())
}

/// A preset parses and would load, its script and mapping files are
/// there (the script is compiled with the scripts), and its parameters
/// join the ones mappings may drive.
fn check_preset(assets: &Assets, file: &str, stage: &mut ShowParams) -> Result<(), CheckError> {
    let asset = assets.read(Folder::Presets, file)?;
    let preset = Preset::parse(&asset.display, &asset.text)?;
    let mut registry = Registry::new();
    let declared = staged(assets, &preset, &mut registry);
    stage.add_preset(&preset, &registry);
    declared?;
    if let Some(script) = &preset.script {
        assets.read(Folder::Scripts, script_name(script))?;
    }
    for mappings in &preset.mappings {
        assets.read(Folder::Presets, mappings)?;
    }
    preset.apply(&mut registry)?;
    Ok(())
}

/// A preset's script as named in `scripts/`.
fn script_name(script: &str) -> &str {
    script.strip_prefix("scripts/").unwrap_or(script)
}

/// Registers every parameter `preset` would have on stage, found without
/// a GPU: the show-wide ones and each layer's; the first layer that cannot
/// be declared is the error, the others are declared all the same.
fn staged(assets: &Assets, preset: &Preset, registry: &mut Registry) -> Result<(), CheckError> {
    for spec in master_params()
        .into_iter()
        .chain(crate::audio::audio_params())
        .chain(crate::engine::world::scene_params())
    {
        registry.register(spec);
    }
    let mut first = Ok(());
    for (id, line) in &preset.layers {
        match layers::declared_params(id, assets, preset) {
            Ok(specs) => specs.into_iter().for_each(|spec| registry.register(spec)),
            Err(reason) if first.is_ok() => {
                first = Err(CheckError::Layer {
                    file: preset.file.clone(),
                    line: *line,
                    reason,
                });
            }
            Err(_) => {}
        }
    }
    first
}

/// Whether `preset` would load, found without a GPU: its layers exist, its
/// script compiles, and every parameter it sets exists with a fitting
/// value, as the layers would declare them. Preset saves that came from
/// the network use it.
pub fn preset_holds(assets: &Assets, preset: &Preset) -> Result<(), CheckError> {
    let mut registry = Registry::new();
    staged(assets, preset, &mut registry)?;
    if let Some(script) = &preset.script {
        check_script(assets, script_name(script))?;
    }
    preset.apply(&mut registry)?;
    Ok(())
}

/// An output's mask that is not a picture in the show folder.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: output {output}: mask {mask} is not a picture in the show folder: {error}")]
pub struct MaskError {
    /// The outputs file.
    pub file: String,
    /// Its line naming the output.
    pub line: usize,
    /// The output.
    pub output: String,
    /// The mask as the file names it.
    pub mask: String,
    /// Why it cannot be opened.
    pub error: crate::base::opener::OpenError,
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
    /// A cue timeline is malformed or names what the show lacks.
    #[error(transparent)]
    Timeline(#[from] crate::show::timeline::TimelineError),
    /// A preset is malformed or sets what its layers lack.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// An outputs file is malformed (`file:line: why`) or unreadable.
    #[error(transparent)]
    Outputs(#[from] OutputsFileError),
    /// An output's mask is not a picture in the show folder.
    #[error(transparent)]
    Mask(Box<MaskError>),
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

impl CheckError {
    /// The problem itself, whichever file led to it: a layer's own error
    /// rather than the preset line naming the layer.
    fn cause(&self) -> String {
        match self {
            CheckError::Layer { reason, .. } => reason.to_string(),
            other => other.to_string(),
        }
    }
}
