//! `sylva shaders`: the ISF and Shadertoy files of a show folder (its own
//! and the built-in ones) as a VJ browses them: each file with its kind,
//! its inputs and whether it compiles, and if not, the `file:line` why.
//! A multipass Shadertoy folder is one entry, its `image.glsl`.

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

/// Every ISF and Shadertoy file in `assets`, by name, each compiled.
pub fn entries(assets: &Assets) -> Vec<LibraryEntry> {
    let mut files = assets.list(Folder::Shaders, "fs");
    files.extend(
        (assets.list(Folder::Shaders, "glsl").into_iter()).filter(|file| !is_pass_of_image(file)),
    );
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let kind = if is_shadertoy(&file) {
                "Shadertoy"
            } else {
                "ISF"
            };
            match IsfSource::read(assets, &file, "shader.library") {
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
        InputKind::Audio => "audio",
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
