//! WGSL composition and validation. A shader file may pull shared code from
//! `shaders/common/` with `#include "common/noise.wgsl"` lines; the composer
//! blanks those lines and appends the included files (once each, in order,
//! recursively) after the file itself, so the file keeps its own line
//! numbers. naga then parses and validates the whole, and any error is
//! mapped back to the file and line it came from and printed the way a
//! compiler would: `file:line:column`, the source line, a caret.

use naga::SourceLocation;

use crate::base::{Assets, Folder};

/// Why a shader could not be composed or validated. Each message names the
/// file and line a person should open.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShaderError {
    /// A file, or a file it includes, could not be read.
    #[error("{0}")]
    Read(String),
    /// An `#include` line is malformed or reaches outside the show folder.
    #[error("{file}:{line}: {message}")]
    Include {
        /// The file holding the line.
        file: String,
        /// Its line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// naga refused the composed WGSL: `file:line:column`, the source line
    /// with a caret, and the causes.
    #[error("{0}")]
    Invalid(String),
}

/// Layers report errors as text on screen; a shader error becomes its
/// message.
impl From<ShaderError> for String {
    fn from(error: ShaderError) -> String {
        error.to_string()
    }
}

/// One file (or generated text) inside a composed shader.
#[derive(Debug, Clone)]
struct Piece {
    /// Name shown in errors, e.g. `shaders/common/noise.wgsl`.
    display: String,
    /// Name relative to `shaders/`, for reload matching; `None` if generated.
    file: Option<String>,
    /// First line of the piece in the composed text, 1-based.
    first_line: usize,
    /// Number of lines.
    lines: usize,
}

/// A shader assembled from its file, its includes and generated code.
#[derive(Debug, Clone, Default)]
pub struct Composed {
    text: String,
    pieces: Vec<Piece>,
}

/// Builds a [`Composed`] shader from files of the show's shaders folder.
pub struct Composer<'a> {
    assets: &'a Assets,
    composed: Composed,
    pending: Vec<String>,
    substitutes: Vec<(String, String)>,
}

impl<'a> Composer<'a> {
    /// An empty composition reading includes through `assets`.
    pub fn new(assets: &'a Assets) -> Self {
        Self {
            assets,
            composed: Composed::default(),
            pending: Vec::new(),
            substitutes: Vec::new(),
        }
    }

    /// Includes file `with` wherever a file includes `include`: how a layer
    /// replaces a hook another layer's shader provides (the skinned layer's
    /// node positions in the colony's drawing).
    pub fn substitute(mut self, include: &str, with: &str) -> Self {
        self.substitutes
            .push((include.to_string(), with.to_string()));
        self
    }

    /// Adds the file `name` (relative to `shaders/`) and queues its includes.
    pub fn file(mut self, name: &str) -> Result<Self, ShaderError> {
        if self.composed.files().any(|f| f == name) {
            return Ok(self);
        }
        let asset = self
            .assets
            .read(Folder::Shaders, name)
            .map_err(|e| ShaderError::Read(e.to_string()))?;
        self.push(&asset.display, Some(name), &asset.text)?;
        Ok(self)
    }

    /// Adds text that no file holds (a generated struct), under `label`.
    pub fn generated(mut self, label: &str, text: &str) -> Result<Self, ShaderError> {
        self.push(label, None, text)?;
        Ok(self)
    }

    /// Appends every queued include and returns the composition.
    pub fn finish(mut self) -> Result<Composed, ShaderError> {
        while !self.pending.is_empty() {
            let name = self.pending.remove(0);
            self = self.file(&name)?;
        }
        Ok(self.composed)
    }

    fn push(&mut self, display: &str, file: Option<&str>, text: &str) -> Result<(), ShaderError> {
        let include_error = |index: usize, message: String| ShaderError::Include {
            file: display.to_string(),
            line: index + 1,
            message,
        };
        let first_line = self.composed.text.lines().count() + 1;
        let mut lines = 0;
        for (index, line) in text.lines().enumerate() {
            lines += 1;
            match include_target(line) {
                Some(Ok(target)) => {
                    let target = self
                        .substitutes
                        .iter()
                        .find(|(include, _)| include == target)
                        .map_or(target, |(_, with)| with.as_str());
                    crate::base::inside_show(target)
                        .map_err(|e| include_error(index, e.to_string()))?;
                    self.pending.push(target.to_string());
                    self.composed.text.push('\n');
                }
                Some(Err(message)) => return Err(include_error(index, message.to_string())),
                None => {
                    self.composed.text.push_str(line);
                    self.composed.text.push('\n');
                }
            }
        }
        self.composed.pieces.push(Piece {
            display: display.to_string(),
            file: file.map(str::to_string),
            first_line,
            lines,
        });
        Ok(())
    }
}

/// `Some(Ok(name))` for an `#include "name"` line, `Some(Err)` for a
/// malformed one, `None` for any other line.
fn include_target(line: &str) -> Option<Result<&str, &'static str>> {
    let rest = line.trim().strip_prefix("#include")?;
    let name = rest
        .trim()
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|n| !n.is_empty());
    Some(name.ok_or("expected #include \"path/inside/shaders.wgsl\""))
}

impl Composed {
    /// The WGSL text naga and wgpu receive.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Every file it was built from, relative to `shaders/`.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| p.file.as_deref())
    }

    /// Parses and validates with naga; errors name the file and line.
    pub fn validate(&self) -> Result<naga::Module, ShaderError> {
        let module = naga::front::wgsl::parse_str(&self.text).map_err(|e| {
            ShaderError::Invalid(self.describe(e.location(&self.text), e.message(), &[]))
        })?;
        // 64-bit integers and their atomic maximum pass here: the forest
        // walks with them where the device has them (it asks for them
        // where the adapter offers them), and a device without them
        // refuses such a module when it is built, under its file's name.
        let capabilities = naga::valid::Capabilities::default()
            | naga::valid::Capabilities::SHADER_INT64
            | naga::valid::Capabilities::SHADER_INT64_ATOMIC_MIN_MAX;
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities);
        validator.validate(&module).map_err(|e| {
            let mut causes = Vec::new();
            let mut cause = std::error::Error::source(e.as_inner());
            while let Some(inner) = cause {
                causes.push(inner.to_string());
                cause = inner.source();
            }
            ShaderError::Invalid(self.describe(
                e.location(&self.text),
                &e.as_inner().to_string(),
                &causes,
            ))
        })?;
        check_memory(&module).map_err(|(span, message)| {
            ShaderError::Invalid(self.describe(span.location(&self.text).into(), &message, &[]))
        })?;
        Ok(module)
    }

    /// `file:line:column: message`, the source line with a caret, and the
    /// causes, for a location in the composed text.
    fn describe(
        &self,
        location: Option<SourceLocation>,
        message: &str,
        causes: &[String],
    ) -> String {
        let first = self.pieces.first().map_or("shader", |p| p.display.as_str());
        let Some(location) = location else {
            let mut text = format!("{first}: {message}");
            for cause in causes {
                text.push_str(&format!("\n  = {cause}"));
            }
            return text;
        };
        let line = location.line_number as usize;
        let column = location.line_position as usize;
        let piece = self
            .pieces
            .iter()
            .find(|p| line >= p.first_line && line < p.first_line + p.lines);
        let (name, local) = piece.map_or((first, line), |p| {
            (p.display.as_str(), line - p.first_line + 1)
        });
        let source = self.text.lines().nth(line - 1).unwrap_or("");
        let width =
            (location.length as usize).clamp(1, source.len().saturating_sub(column - 1).max(1));
        let mut text = format!(
            "{name}:{local}:{column}: {message}\n{local:>5} | {source}\n      | {}{}",
            " ".repeat(column.saturating_sub(1)),
            "^".repeat(width)
        );
        for cause in causes {
            text.push_str(&format!("\n  = {cause}"));
        }
        text
    }
}

/// Parses and validates a self-contained WGSL text, for tests and the
/// uniform layout checks.
pub fn validate(source: &str, file: &str) -> Result<naga::Module, ShaderError> {
    let composed = Composed {
        text: source.to_string(),
        pieces: vec![Piece {
            display: file.to_string(),
            file: None,
            first_line: 1,
            lines: source.lines().count(),
        }],
    };
    composed.validate()
}

/// Bytes one private or function variable may take: drivers back such
/// arrays with per-invocation scratch memory, so a typo'd array length can
/// ask for gigabytes that validation alone would let through.
pub const MAX_PRIVATE_BYTES: u32 = 64 << 10;

/// Bytes of workgroup memory one shader may declare, far above what any
/// device offers (wgpu then checks the device's own limit).
pub const MAX_WORKGROUP_BYTES: u32 = 64 << 10;

/// Refuses absurd private, function and workgroup memory, with the span
/// of the variable that asks for it (WGSL files, and GLSL once translated).
pub fn check_memory(module: &naga::Module) -> Result<(), (naga::Span, String)> {
    let mut layouter = naga::proc::Layouter::default();
    layouter
        .update(module.to_ctx())
        .map_err(|e| (naga::Span::default(), format!("type layout: {e}")))?;
    let mut workgroup = 0u64;
    for (handle, variable) in module.global_variables.iter() {
        let size = layouter[variable.ty].size;
        let span = module.global_variables.get_span(handle);
        let name = variable.name.as_deref().unwrap_or("?");
        match variable.space {
            naga::AddressSpace::Private if size > MAX_PRIVATE_BYTES => {
                return Err((span, too_big("var<private>", name, size, MAX_PRIVATE_BYTES)));
            }
            naga::AddressSpace::WorkGroup => workgroup += u64::from(size),
            _ => {}
        }
        if workgroup > u64::from(MAX_WORKGROUP_BYTES) {
            return Err((
                span,
                too_big(
                    "var<workgroup>",
                    name,
                    workgroup as u32,
                    MAX_WORKGROUP_BYTES,
                ),
            ));
        }
    }
    let functions = module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|e| &e.function));
    for function in functions {
        for (handle, local) in function.local_variables.iter() {
            let size = layouter[local.ty].size;
            if size > MAX_PRIVATE_BYTES {
                let name = local.name.as_deref().unwrap_or("?");
                let span = function.local_variables.get_span(handle);
                return Err((span, too_big("var", name, size, MAX_PRIVATE_BYTES)));
            }
        }
    }
    Ok(())
}

fn too_big(kind: &str, name: &str, size: u32, limit: u32) -> String {
    format!(
        "{kind} {name} takes {size} bytes per invocation; at most {limit} (a smaller array, or a storage buffer)"
    )
}

/// The size in bytes naga computes for struct `name` in `module`, for tests
/// that hold Rust uniform structs against their WGSL twins.
pub fn struct_size(module: &naga::Module, name: &str) -> Option<u32> {
    module
        .types
        .iter()
        .find(|(_, ty)| ty.name.as_deref() == Some(name))
        .map(|(_, ty)| ty.inner.size(module.to_ctx()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show_with(files: &[(&str, &str)]) -> (Assets, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!(
            "sylva-wgsl-{}-{}",
            std::process::id(),
            files.len() * 31 + files[0].1.len()
        ));
        for (name, text) in files {
            let path = root.join("shaders").join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).ok();
            }
            std::fs::write(path, text).ok();
        }
        (Assets::new(&root), root)
    }

    #[test]
    fn errors_in_included_files_point_at_that_file_and_line() {
        let (assets, root) = show_with(&[
            (
                "shader/main.wgsl",
                "#include \"common/helper.wgsl\"\nfn main_fn() -> f32 { return helper(); }\n",
            ),
            (
                "common/helper.wgsl",
                "// helper\n\nfn helper() -> f32 { return 1.0 + true; }\n",
            ),
        ]);
        let composed = Composer::new(&assets)
            .file("shader/main.wgsl")
            .and_then(Composer::finish);
        let Ok(composed) = composed else {
            panic!("{composed:?}");
        };
        assert_eq!(
            composed.files().collect::<Vec<_>>(),
            ["shader/main.wgsl", "common/helper.wgsl"]
        );
        let error = composed
            .validate()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.starts_with("shaders/common/helper.wgsl:3:"),
            "{error}"
        );
        assert!(error.contains("return 1.0 + true;"), "{error}");
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn errors_in_the_main_file_keep_its_line_numbers() {
        let (assets, root) = show_with(&[(
            "shader/bad.wgsl",
            "#include \"common/frame.wgsl\"\n\nfn f() -> f32 {\n    return undefined_name;\n}\n",
        )]);
        let composed = Composer::new(&assets)
            .file("shader/bad.wgsl")
            .and_then(Composer::finish);
        let error = composed
            .and_then(|c| c.validate().map(|_| ()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.starts_with("shaders/shader/bad.wgsl:4:12:"),
            "{error}"
        );
        assert!(error.contains("^^^^"), "{error}");
        std::fs::remove_dir_all(root).ok();
    }

    #[test]
    fn includes_must_stay_in_the_shaders_folder() {
        let (assets, root) = show_with(&[("shader/x.wgsl", "#include \"../../etc/passwd\"\n")]);
        let composed = Composer::new(&assets).file("shader/x.wgsl");
        assert!(
            composed
                .err()
                .is_some_and(|e| matches!(e, ShaderError::Include { line: 1, .. })
                    && e.to_string().contains("shaders/shader/x.wgsl:1"))
        );
        std::fs::remove_dir_all(root).ok();
    }
}
