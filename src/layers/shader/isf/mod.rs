//! ISF 2.0 shaders (the Interactive Shader Format of VDMX, Synesthesia,
//! MadMapper and the ISF library): a shader layer whose file ends in
//! `.fs` reads its JSON header ([`header`]) for inputs, passes and
//! imported images, translates the GLSL of the `.fs` and of the `.vs`
//! beside it, if any ([`glsl`]), and runs its passes ([`program`]). An
//! input becomes the parameter `<layer id>.<NAME>`; an image input is a
//! texture input (`inputImage` shows the layers below by default).

pub mod bounds;
mod compute;
mod display_space;
pub mod generators;
pub mod glsl;
#[cfg(feature = "glslang")]
mod glslang;
pub mod header;
pub mod include;
pub mod library;
mod macros;
mod madmapper;
mod names;
mod prelude;
pub mod program;
mod rewrite;
pub mod shadertoy;
pub mod size;

use std::path::Path;

use crate::base::{AssetError, Assets, Folder, inside_show};
use crate::engine::inputs::still::{self, DecodedImage, StillError};
use crate::params::{ParamSpec, Value};
use glsl::{TranslateError, Translated};
use header::{IsfHeader, IsfHeaderError};

/// Bytes one shader's imported images may take decoded, all together
/// (each is held to `still`'s own limit as it decodes).
pub const MAX_IMPORTED_BYTES: usize = 512 << 20;

/// Why an ISF file could not be used; the running version stays.
#[derive(Debug, thiserror::Error)]
pub enum IsfError {
    /// The file (or its `.vs`) could not be read.
    #[error(transparent)]
    Asset(#[from] AssetError),
    /// The JSON header is malformed.
    #[error("{file}:{reason}")]
    Header {
        /// The file as shown.
        file: String,
        /// The line and what is wrong.
        reason: IsfHeaderError,
    },
    /// The GLSL does not translate.
    #[error(transparent)]
    Translate(#[from] TranslateError),
    /// An imported image could not be read.
    #[error("{file}: imported image {name:?}: {reason}")]
    Imported {
        /// The `.fs` file.
        file: String,
        /// The image's name.
        name: String,
        /// Why.
        reason: ImportError,
    },
    /// The device refused the translated shader.
    #[error("{0}: {1}")]
    Device(String, String),
    /// Its buffers could not be made.
    #[error(transparent)]
    Gpu(#[from] crate::gpu::BuildError),
    /// Its pass buffers would take more than [`program::MAX_PASS_BYTES`].
    #[error(
        "{file}: its pass buffers would take {mib} MiB at this size; at most {} MiB \
         (smaller WIDTH and HEIGHT, or fewer FLOAT passes)",
        program::MAX_PASS_BYTES >> 20
    )]
    PassBuffers {
        /// The file as shown.
        file: String,
        /// What they would take.
        mib: u64,
    },
}

/// Why an image an ISF file imports was not loaded.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Its path leaves the show folder.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// It could not be read as an image.
    #[error(transparent)]
    Still(#[from] StillError),
    /// The file's imported images together are over
    /// [`MAX_IMPORTED_BYTES`].
    #[error("the imported images take more than {} MiB", MAX_IMPORTED_BYTES >> 20)]
    TooLarge,
}

/// An ISF file read, translated and its images loaded.
pub struct IsfSource {
    /// The `.fs` file as shown (`shaders/isf/Bad TV.fs`).
    pub file: String,
    /// The files read, for reloading (names in `shaders/`).
    pub watched: Vec<String>,
    /// What its header declares.
    pub header: IsfHeader,
    /// The translated stages.
    pub translated: Translated,
    /// The imported images, decoded.
    pub imported: Vec<(String, DecodedImage)>,
    /// Its parameters for the layer.
    pub specs: Vec<ParamSpec>,
}

/// Whether `file` runs as an ISF shader: ISF itself (`.fs`) or
/// Shadertoy's (`.glsl`).
pub fn is_isf(file: &str) -> bool {
    file.ends_with(".fs") || shadertoy::is_shadertoy(file)
}

impl IsfSource {
    /// Reads `file` (in `shaders/`) for layer `id`, its inputs compiled
    /// in (MadMapper's `generate_as_define`) at the values `chosen`.
    pub fn read(
        assets: &Assets,
        file: &str,
        id: &str,
        chosen: &[(String, Value)],
    ) -> Result<Self, IsfError> {
        let fragment = assets.read(Folder::Shaders, file)?;
        if shadertoy::is_shadertoy(file) {
            let files = shadertoy::passes(assets, file)?;
            let header = shadertoy::header(&files.passes)?;
            return Ok(Self {
                translated: shadertoy::translate(&files.passes, files.common.as_ref())?,
                specs: specs_of(&header, id),
                file: fragment.display,
                watched: files.watched,
                header,
                imported: Vec::new(),
            });
        }
        let vertex_file = format!("{}.vs", file.trim_end_matches(".fs"));
        let vertex = assets.read(Folder::Shaders, &vertex_file).ok();
        let mut header = header::parse(&fragment.text).map_err(|reason| IsfError::Header {
            file: fragment.display.clone(),
            reason,
        })?;
        header.choose(chosen);
        header.adopt_images(rewrite::undeclared_textures(
            &fragment.text,
            &header.names(),
        ));
        let vertex_display = vertex.as_ref().map_or(String::new(), |v| v.display.clone());
        let folder = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        let vertex_text = vertex.as_ref().map(|v| v.text.as_str());
        let stages = [fragment.text.as_str(), vertex_text.unwrap_or("")];
        let included = include::read(assets, folder, &stages)?;
        let translated = glsl::translate(
            &header,
            &fragment.text,
            vertex_text,
            (&fragment.display, &vertex_display),
            &included,
        )?;
        let (mut imported, mut bytes) = (Vec::new(), 0);
        for (name, path) in &header.imported {
            let fail = |reason: ImportError| IsfError::Imported {
                file: fragment.display.clone(),
                name: name.clone(),
                reason,
            };
            // Beside the file (`../textures/x.png` from it, inside the
            // show), else in a folder above it (MadMapper's materials
            // import the noise table kept with its libraries); through the
            // show folder's opener: a plain file, no link.
            let places = match path.split('/').any(|part| part == "..") {
                true => vec![climbed(folder, path).map_err(|e| fail(e.into()))?],
                false => {
                    inside_show(path).map_err(|e| fail(e.into()))?;
                    include::places(folder, path)
                }
            };
            let placed = places
                .iter()
                .map(|p| assets.place(Folder::Shaders, Path::new(p)));
            let mut placed: Vec<_> = placed.collect();
            let at = placed
                .iter()
                .position(|(dir, file)| dir.join(file).is_file());
            let (dir, imported_file) = placed.swap_remove(at.unwrap_or(0));
            let picture = still::decode_in(&dir, &imported_file).map_err(|e| fail(e.into()))?;
            bytes += picture.rgba.len();
            if bytes > MAX_IMPORTED_BYTES {
                return Err(fail(ImportError::TooLarge));
            }
            imported.push((name.clone(), picture));
        }
        let specs = specs_of(&header, id);
        let mut watched = vec![file.to_string()];
        if vertex.is_some() {
            watched.push(vertex_file);
        }
        watched.extend(included.into_iter().map(|i| i.file));
        Ok(Self {
            file: fragment.display,
            watched,
            header,
            translated,
            imported,
            specs,
        })
    }
}

/// `path`, which climbs (`../textures/x.png`), from `folder` (of
/// `shaders/`): never out of `shaders/`.
fn climbed(folder: &str, path: &str) -> Result<String, AssetError> {
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts
                    .pop()
                    .ok_or_else(|| AssetError::OutsideShow(path.to_string()))?;
            }
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    inside_show(&joined)?;
    Ok(joined)
}

/// The parameters of layer `id` for the inputs of `header`.
fn specs_of(header: &IsfHeader, id: &str) -> Vec<ParamSpec> {
    (header.inputs.iter())
        .map(|input| {
            let mut spec = input.spec.clone();
            spec.name = format!("{id}.{}", input.name);
            spec
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_imported_path_climbs_from_its_folder_but_never_out_of_shaders() {
        let climbed = |path| super::climbed("isf/Demos/SDF/Cells", path).ok();
        assert_eq!(
            climbed("../textures/noise.png").as_deref(),
            Some("isf/Demos/SDF/textures/noise.png")
        );
        assert_eq!(climbed("../../../../x.png").as_deref(), Some("x.png"));
        assert_eq!(climbed("../../../../../x.png"), None);
    }
}
