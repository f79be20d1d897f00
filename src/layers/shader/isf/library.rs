//! `sylva shaders`: the ISF and Shadertoy files of a show folder (its own
//! and the built-in ones) as a VJ browses them: each file with its kind,
//! its inputs and whether it compiles, and if not, the `file:line` why.
//! A multipass Shadertoy folder is one entry, its `image.glsl`. The same
//! names, uncompiled, are what the HUD and the phone page offer for a
//! shader layer's `file` ([`offered`]).

use super::IsfSource;
use super::header::InputKind;
use super::shadertoy::{BUFFERS, is_shadertoy};
use crate::base::{Assets, Folder};

/// One shader file of the library.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryEntry {
    /// Its name in `shaders/`, as `shader.NAME.file` takes it.
    pub file: String,
    /// "ISF" or "Shadertoy".
    pub kind: &'static str,
    /// Its inputs: name and type, as the header (or Shadertoy) gives them.
    pub inputs: Vec<(String, &'static str)>,
    /// Why it does not compile, if it does not.
    pub problem: Option<String>,
}

/// The ISF and Shadertoy files in `assets` (a multipass folder by its
/// image pass), sorted. A `.glsl` file in `isf/` is a library ISF files
/// include (MadMapper's `MadNoise.glsl`), not a Shadertoy file.
fn isf_files(assets: &Assets) -> Vec<String> {
    let mut files = assets.list(Folder::Shaders, "fs");
    let toys = assets.list(Folder::Shaders, "glsl").into_iter();
    files.extend(toys.filter(|file| !is_pass_of_image(file) && !file.starts_with("isf/")));
    files.sort();
    files
}

/// What a shader layer's `file` may name, by name: the WGSL shaders in
/// `shaders/shader/` and every ISF and Shadertoy file. Listed, not
/// compiled: `sylva shaders` says which compile.
pub fn offered(assets: &Assets) -> Vec<String> {
    let mut files: Vec<String> = (assets.list(Folder::Shaders, "wgsl").into_iter())
        .filter(|file| file.starts_with("shader/"))
        .collect();
    files.extend(isf_files(assets));
    files
}

/// Whether parameter `name` is a shader layer's file (`shader.NAME.file`),
/// which [`offered`] lists the choices of.
pub fn is_shader_file(name: &str) -> bool {
    name.strip_prefix("shader.")
        .and_then(|rest| rest.strip_suffix(".file"))
        .is_some_and(|id| !id.is_empty() && !id.contains('.'))
}

/// Every ISF and Shadertoy file in `assets`, by name, each compiled.
pub fn entries(assets: &Assets) -> Vec<LibraryEntry> {
    isf_files(assets)
        .into_iter()
        .map(|file| {
            let kind = if is_shadertoy(&file) {
                "Shadertoy"
            } else {
                "ISF"
            };
            match IsfSource::read(assets, &file, "shader.library", &[]) {
                Ok(source) => LibraryEntry {
                    inputs: (source.header.inputs.iter())
                        .map(|input| (input.name.clone(), type_name(&input.kind)))
                        .collect(),
                    file,
                    kind,
                    problem: None,
                },
                Err(problem) => LibraryEntry {
                    file,
                    kind,
                    inputs: Vec::new(),
                    problem: Some(problem.to_string()),
                },
            }
        })
        .collect()
}

/// Whether `file` is a buffer or the common code of a multipass folder
/// (which runs from its `image.glsl`).
fn is_pass_of_image(file: &str) -> bool {
    let stem = file
        .rsplit('/')
        .next()
        .unwrap_or(file)
        .trim_end_matches(".glsl");
    BUFFERS.contains(&stem) || stem == "common"
}

/// The ISF type name of an input.
fn type_name(kind: &InputKind) -> &'static str {
    match kind {
        InputKind::Float => "float",
        InputKind::Bool => "bool",
        InputKind::Event => "event",
        InputKind::Long(_) => "long",
        InputKind::Colour => "color",
        InputKind::Point => "point2D",
        InputKind::Image => "image",
        InputKind::Audio { fft: false } => "audio",
        InputKind::Audio { fft: true } => "audioFFT",
    }
}

/// One line of `sylva shaders` for `entry`.
pub fn describe(entry: &LibraryEntry) -> String {
    let inputs: Vec<String> = (entry.inputs.iter())
        .map(|(name, kind)| format!("{name} ({kind})"))
        .collect();
    let inputs = match inputs.is_empty() {
        true => "no inputs".to_string(),
        false => inputs.join(", "),
    };
    match &entry.problem {
        None => format!("{}  {}  {inputs}  compiles", entry.file, entry.kind),
        Some(problem) => format!(
            "{}  {}  does not compile: {problem}",
            entry.file, entry.kind
        ),
    }
}
