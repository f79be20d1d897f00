//! `#include "NAME"` in an ISF file, as MadMapper's materials write it:
//! the file NAME in the show, beside the shader or in a folder above it
//! within `shaders/` (where a MadMapper user keeps `MadCommon.glsl`,
//! `MadNoise.glsl` and `MadSDF.glsl` for every material below), else a
//! library sylva writes itself ([`super::madmapper::BUILT_IN`]). The
//! libraries go into the including stage's prelude, each once, what one includes
//! before it, after the file's own `#define`s that come before its first
//! include (a library reads them: `SDF_ANTIALIASING_HIGH`); so the file's
//! lines stay its own for errors. At most [`MAX_INCLUDED`] files, nested
//! [`MAX_DEPTH`] deep; a missing one is a `file:line` error.

use std::collections::BTreeMap;

use super::glsl::TranslateError;
use super::madmapper::BUILT_IN;
use super::rewrite::{Stage, rewrite};
use crate::base::{AssetError, Assets, Folder};

/// The most files one shader includes, all told.
pub const MAX_INCLUDED: usize = 16;

/// How deep includes nest.
pub const MAX_DEPTH: usize = 4;

/// A file an include named, read from the show.
#[derive(Debug, Clone)]
pub struct Included {
    /// The name the include gave.
    pub name: String,
    /// Where it was found, in `shaders/` (watched for changes).
    pub file: String,
    /// Its text.
    pub text: String,
}

/// The name a line `#include "NAME"` includes.
pub(super) fn included(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim();
    rest.strip_prefix('"')?.strip_suffix('"')
}

/// The names `source`'s include lines give, with their 1-based lines.
pub(super) fn includes(source: &str) -> impl Iterator<Item = (usize, &str)> {
    (source.lines().enumerate()).filter_map(|(i, line)| Some((i + 1, included(line)?)))
}

/// Reads what `stages` (a shader in `folder` of `shaders/`) include, and
/// what those include, from the show: each name beside the shader, else
/// in each folder above it. A name the show has not is left to the
/// built-in libraries (or to the error [`prelude`] gives).
pub fn read(assets: &Assets, folder: &str, stages: &[&str]) -> Result<Vec<Included>, AssetError> {
    let mut wanted: Vec<String> = (stages.iter())
        .flat_map(|text| includes(text).map(|(_, name)| name.to_string()))
        .collect();
    let mut found: Vec<Included> = Vec::new();
    let mut next = 0;
    // Names looked for at most: a file of a million include lines costs
    // a few lookups, not a million.
    while next < wanted.len().min(4 * MAX_INCLUDED) && found.len() < MAX_INCLUDED {
        let name = wanted[next].clone();
        next += 1;
        if found.iter().any(|f| f.name == name) {
            continue;
        }
        for file in places(folder, &name) {
            match assets.read(Folder::Shaders, &file) {
                Ok(asset) => {
                    wanted.extend(includes(&asset.text).map(|(_, n)| n.to_string()));
                    found.push(Included {
                        name,
                        file,
                        text: asset.text,
                    });
                    break;
                }
                Err(AssetError::Missing { .. }) => continue,
                Err(error) => return Err(error),
            }
        }
    }
    Ok(found)
}

/// Where `name` may be for a shader in `folder`: beside it, then in each
/// folder above, up to `shaders/` itself (never empty).
pub(super) fn places(folder: &str, name: &str) -> Vec<String> {
    let mut places = Vec::new();
    let mut at = Some(folder);
    while let Some(dir) = at {
        match dir.is_empty() {
            true => places.push(name.to_string()),
            false => places.push(format!("{dir}/{name}")),
        }
        at = (!dir.is_empty()).then(|| dir.rsplit_once('/').map_or("", |(up, _)| up));
    }
    places
}

/// The libraries a stage (its text and its file's name for errors)
/// includes, for its prelude: its `#define`s before its first include,
/// then each library once, what it includes first, each rewritten as the
/// file is (`provided`: the names the prelude declares).
pub(super) fn prelude(
    (stage, file): (&str, &str),
    found: &[Included],
    provided: &[String],
) -> Result<String, TranslateError> {
    let mut order: Vec<(String, String)> = Vec::new();
    for (line, name) in includes(stage) {
        visit(name, (file, line), found, &mut order, 0)?;
    }
    if order.is_empty() {
        return Ok(String::new());
    }
    let mut text = defines_before_includes(stage);
    for (_, library) in &order {
        text.push_str(&rewrite(
            library,
            provided,
            &BTreeMap::new(),
            Stage::Fragment,
        ));
        text.push('\n');
    }
    Ok(text)
}

/// Puts `name` (included at `from`, a file and its line) and what it
/// includes into `order`, those it includes first.
fn visit(
    name: &str,
    from: (&str, usize),
    found: &[Included],
    order: &mut Vec<(String, String)>,
    depth: usize,
) -> Result<(), TranslateError> {
    if order.iter().any(|(n, _)| n == name) {
        return Ok(());
    }
    let fail = |message: String| TranslateError {
        file: from.0.to_string(),
        line: from.1,
        message,
    };
    if depth >= MAX_DEPTH || order.len() >= MAX_INCLUDED {
        return Err(fail(format!(
            "#include \"{name}\": at most {MAX_INCLUDED} files, {MAX_DEPTH} deep"
        )));
    }
    let text = match found.iter().find(|f| f.name == name) {
        Some(file) => {
            for (line, inner) in includes(&file.text) {
                let shown = format!("shaders/{}", file.file);
                visit(inner, (&shown, line), found, order, depth + 1)?;
            }
            file.text.clone()
        }
        None => match BUILT_IN.iter().find(|(known, _)| *known == name) {
            Some((_, library)) => library.to_string(),
            None => {
                return Err(fail(format!(
                    "#include \"{name}\": no such file beside the shader or in a folder \
                     above it in shaders/ (sylva has its own {} only)",
                    BUILT_IN.map(|(n, _)| n).join(", ")
                )));
            }
        },
    };
    order.push((name.to_string(), text));
    Ok(())
}

/// The `#define` lines of `source` before its first include, outside any
/// `#if`: what a library included there may read.
fn defines_before_includes(source: &str) -> String {
    let mut text = String::new();
    let mut depth = 0usize;
    for line in source.lines() {
        let directive = line.trim_start().strip_prefix('#').map(str::trim_start);
        match directive {
            _ if included(line).is_some() => break,
            Some(d) if d.starts_with("if") => depth += 1,
            Some(d) if d.starts_with("endif") => depth = depth.saturating_sub(1),
            Some(d) if d.starts_with("define") && depth == 0 => {
                text.push_str(line.trim());
                text.push('\n');
            }
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_is_looked_for_beside_the_shader_then_above_it() {
        assert_eq!(
            places("isf/Materials/Arcs", "MadSDF.glsl"),
            [
                "isf/Materials/Arcs/MadSDF.glsl",
                "isf/Materials/MadSDF.glsl",
                "isf/MadSDF.glsl",
                "MadSDF.glsl"
            ]
        );
    }

    #[test]
    fn an_include_is_read_from_the_nearest_folder_and_never_from_outside_the_show() {
        let root = std::env::temp_dir().join(format!("sylva-include-{}", std::process::id()));
        let write = |name: &str, text: &str| {
            let path = root.join("shaders").join(name);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).ok();
            std::fs::write(path, text).ok();
        };
        write("isf/Noise.glsl", "#include \"Common.glsl\"\nfloat far;\n");
        write("isf/pack/Noise.glsl", "float near;\n");
        write("Common.glsl", "float common;\n");
        let assets = Assets::new(&root);
        let read = |folder: &str, text: &str| read(&assets, folder, &[text, ""]);
        let found = read("isf/pack", "#include \"Noise.glsl\"\n").unwrap_or_default();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].file.as_str(), found[0].text.as_str()),
            ("isf/pack/Noise.glsl", "float near;\n")
        );
        let found = read("isf/other", "#include \"Noise.glsl\"\n").unwrap_or_default();
        let files: Vec<&str> = found.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(
            files,
            ["isf/Noise.glsl", "Common.glsl"],
            "nested, from the folders above"
        );
        let outside = read("isf", "#include \"../../secret.glsl\"\n");
        assert!(
            matches!(outside, Err(AssetError::OutsideShow(_))),
            "{outside:?}"
        );
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn libraries_come_once_after_the_files_defines_what_they_include_first() {
        let fragment = "#define QUALITY 2\n#ifdef X\n#define HIDDEN 1\n#endif\n\
                        #include \"b.glsl\"\n#include \"MadCommon.glsl\"\n#include \"b.glsl\"\n";
        let found = [
            Included {
                name: "b.glsl".into(),
                file: "isf/b.glsl".into(),
                text: "#include \"a.glsl\"\nfloat b() { return a(); }\n".into(),
            },
            Included {
                name: "a.glsl".into(),
                file: "isf/a.glsl".into(),
                text: "float a() { return QUALITY; }\n".into(),
            },
        ];
        let text = prelude((fragment, "f.fs"), &found, &[]).unwrap_or_else(|e| panic!("{e}"));
        let at = |what: &str| {
            text.find(what)
                .unwrap_or_else(|| panic!("{what} in {text}"))
        };
        assert!(at("#define QUALITY 2") < at("float a()"));
        assert!(at("float a()") < at("float b()") && at("float b()") < at("vec3 rgb2hsv"));
        assert!(!text.contains("HIDDEN") && text.matches("float b()").count() == 1);
        let missing = prelude(("\n#include \"nowhere.glsl\"\n", "f.fs"), &[], &[]);
        let error = missing.expect_err("a missing library");
        assert_eq!((error.file.as_str(), error.line), ("f.fs", 2));
        assert!(error.message.contains("nowhere.glsl"), "{}", error.message);
    }
}
