//! MadMapper's dialect of ISF, as its surface shaders are written (Luma
//! Key, Chroma Key, Color Controls, Pixelate, Dither…, which users copy
//! and edit): the surface's picture read with `MM_SHADER_THIS_NORM_PIXEL()`
//! and `MM_SHADER_NORM_PIXEL(coord)` (its first image input),
//! `mm_SurfaceCoord` (the surface's own 0..1, here the render's), the
//! host's loose uniforms (`modulationColor`, `ignoreAlpha`, the matrices…)
//! holding what a surface nothing modulates holds, where GL would read
//! zero and draw black, and `#include "MadCommon.glsl"`, whose colour
//! functions sylva writes itself. The `.vs` beside such a file reads
//! MadMapper's mesh (`in_Vertex`, `in_TexCoord0`…): here the one surface
//! is the whole render, so the mesh is the render's corners. An `int`
//! input and `long` VALUES given as labels are read by the header
//! ([`super::header`]). Not read: `GENERATORS` (MadMapper's animated
//! values), and so the two surface shaders that move their mesh by them.

use super::glsl::TranslateError;
use super::header::{InputKind, IsfHeader};
use super::names::glsl_name;

/// The surface's own coordinates MadMapper's vertex stage passes: a
/// fragment stage's declaration of it goes, and the prelude makes it the
/// render's.
pub(super) const SURFACE_COORD: &str = "mm_SurfaceCoord";

/// MadMapper's host uniforms that scale, mix or place a surface, and
/// what each holds on a surface nothing modulates, filling the render: a
/// line surface is drawn whole and textured.
const HOST_VALUES: [(&str, &str); 17] = [
    ("modulationColor", "vec4(1.0)"),
    ("ignoreAlpha", "0.0"),
    ("opacity", "1.0"),
    ("textureColor", "vec4(1.0)"),
    ("texturedEnabled", "true"),
    ("modelViewProjectionMatrix", "mat4(1.0)"),
    ("modelViewMatrix", "mat4(1.0)"),
    ("textureMatrix", "mat4(1.0)"),
    ("normalMatrix", "mat3(1.0)"),
    ("lightMatrices", "mat4(1.0)"),
    ("mmTexturedLine", "true"),
    ("mmLineWidth", "1.0"),
    ("mmLineLength", "1.0"),
    ("mmBlur", "0.0"),
    ("mmRounded", "false"),
    ("mmStartStroke", "1.0"),
    ("mmEndStroke", "1.0"),
];

/// MadMapper's mesh attributes, each from the corner of the render's one
/// triangle (`isf_mm_corner`, 0..1 across the render as
/// `isf_FragNormCoord` is), as a macro of the attribute's type.
fn attribute(name: &str, kind: &str) -> Option<String> {
    let value = match (name, kind) {
        ("in_Vertex", "vec2") => "(isf_mm_corner * 2.0 - 1.0)",
        ("in_Vertex", "vec3") => "vec3(isf_mm_corner * 2.0 - 1.0, 0.0)",
        ("in_Vertex", "vec4") => "vec4(isf_mm_corner * 2.0 - 1.0, 0.0, 1.0)",
        ("in_TexCoord0" | "in_TexCoord1", "vec2") => "isf_mm_corner",
        ("in_Normal", "vec3") => "vec3(0.0, 0.0, 1.0)",
        _ => return None,
    };
    Some(format!("#define {name} {value}"))
}

/// The libraries an `#include` may name, and sylva's own text of each:
/// the functions MadMapper's surface shaders call.
const LIBRARIES: [(&str, &str); 1] = [("MadCommon.glsl", MAD_COMMON)];

/// Hue, saturation and value from RGB and back (hue in turns, 0..1).
const MAD_COMMON: &str = "\
vec3 rgb2hsv(vec3 c) {
    float high = max(c.r, max(c.g, c.b));
    float range = high - min(c.r, min(c.g, c.b));
    float hue = 0.0;
    if (range > 0.0) {
        if (high == c.r) {
            hue = (c.g - c.b) / range;
        } else if (high == c.g) {
            hue = 2.0 + (c.b - c.r) / range;
        } else {
            hue = 4.0 + (c.r - c.g) / range;
        }
        hue = fract(hue / 6.0);
    }
    return vec3(hue, high > 0.0 ? range / high : 0.0, high);
}
vec3 hsv2rgb(vec3 c) {
    vec3 k = clamp(abs(fract(c.x + vec3(0.0, 2.0, 1.0) / 3.0) * 6.0 - 3.0) - 1.0, 0.0, 1.0);
    return c.z * mix(vec3(1.0), k, c.y);
}
float rgb2hue(vec3 c) {
    return rgb2hsv(c).x;
}
";

/// Whether `source` is written in MadMapper's dialect.
pub(super) fn dialect(source: &str) -> bool {
    ["MM_SHADER_", SURFACE_COORD, "in_TexCoord0"]
        .iter()
        .any(|word| source.contains(word))
        || includes(source).next().is_some()
}

/// The names `source`'s `#include "NAME"` lines give, with their 1-based
/// lines.
fn includes(source: &str) -> impl Iterator<Item = (usize, &str)> {
    source
        .lines()
        .enumerate()
        .filter_map(|(i, line)| Some((i + 1, included(line)?)))
}

/// The name a line `#include "NAME"` includes.
pub(super) fn included(line: &str) -> Option<&str> {
    let rest = line
        .trim()
        .strip_prefix('#')?
        .trim_start()
        .strip_prefix("include")?;
    rest.trim().strip_prefix('"')?.strip_suffix('"')
}

/// What a MadMapper file's stages (the `.fs` and the `.vs` beside it,
/// each its text and its name for errors) get in their prelude: the
/// surface's picture macros onto its first image input, `mm_SurfaceCoord`,
/// the mesh's corners, and the libraries either includes; or why not,
/// at the line of an include sylva has not.
pub(super) fn prelude(
    header: &IsfHeader,
    stages: [(&str, &str); 2],
) -> Result<String, TranslateError> {
    if !stages.iter().any(|(text, _)| dialect(text)) {
        return Ok(String::new());
    }
    let mut text = format!(
        "#define {SURFACE_COORD} isf_FragNormCoord\n\
         #define isf_mm_corner vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2))\n"
    );
    let image = header.inputs.iter().find(|i| i.kind == InputKind::Image);
    if let Some(image) = image.map(|i| glsl_name(&i.name)) {
        text.push_str(&format!(
            "#define MM_SHADER_NORM_PIXEL(coord) IMG_NORM_PIXEL({image}, coord)\n\
             #define MM_SHADER_THIS_NORM_PIXEL() IMG_THIS_NORM_PIXEL({image})\n\
             #define MM_SHADER_PIXEL(coord) IMG_PIXEL({image}, coord)\n\
             #define MM_SHADER_THIS_PIXEL() IMG_THIS_PIXEL({image})\n"
        ));
    }
    let mut given: Vec<&str> = Vec::new();
    let included = stages
        .iter()
        .flat_map(|(text, file)| includes(text).map(move |(line, name)| (file, line, name)));
    for (file, line, name) in included {
        let Some((_, library)) = LIBRARIES.iter().find(|(known, _)| *known == name) else {
            let known: Vec<&str> = LIBRARIES.iter().map(|(n, _)| *n).collect();
            return Err(TranslateError {
                file: file.to_string(),
                line,
                message: format!(
                    "#include \"{name}\": sylva has MadMapper's {} only",
                    known.join(", ")
                ),
            });
        };
        if !given.contains(&name) {
            given.push(name);
            text.push_str(library);
        }
    }
    Ok(text)
}

/// A MadMapper file's line as the front ends take it, where it is one of
/// the dialect's: an include (its library is in the prelude), a
/// declaration of the coordinates the prelude gives (`isf_FragNormCoord`,
/// `mm_SurfaceCoord`), a mesh attribute, or one of the host's loose
/// uniforms (a global holding its neutral value).
pub(super) fn line(body: &str) -> Option<String> {
    if included(body).is_some() {
        return Some(String::new());
    }
    let code = body.split("//").next()?.trim().strip_suffix(';')?;
    let words: Vec<&str> = code.split_whitespace().collect();
    match words[..] {
        [
            "in" | "out" | "varying",
            _,
            SURFACE_COORD | "isf_FragNormCoord",
        ] => Some(String::new()),
        ["in" | "attribute", kind, name] => attribute(name, kind),
        ["uniform", kind, name] => {
            let (_, value) = HOST_VALUES.iter().find(|(host, _)| *host == name)?;
            Some(format!("{kind} {name} = {value};"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialects_lines_become_the_preludes_and_the_hosts_values() {
        assert_eq!(line("#include \"MadCommon.glsl\""), Some(String::new()));
        assert_eq!(line("  in vec2 mm_SurfaceCoord;"), Some(String::new()));
        assert_eq!(
            line("uniform vec4 modulationColor; // tint"),
            Some("vec4 modulationColor = vec4(1.0);".into())
        );
        assert_eq!(line("out vec2 isf_FragNormCoord;"), Some(String::new()));
        assert_eq!(
            line("in vec4 in_Vertex;"),
            Some("#define in_Vertex vec4(isf_mm_corner * 2.0 - 1.0, 0.0, 1.0)".into())
        );
        assert_eq!(line("uniform float mine;"), None);
        assert_eq!(line("out vec4 out_color;"), None);
    }

    #[test]
    fn an_include_sylva_has_not_is_refused_at_its_line() {
        let source = "/*{}*/\nvoid main() {}\n#include \"MadSDF.glsl\"\n";
        let header = IsfHeader::default();
        let stages = [("void main() {}", "a.fs"), (source, "a.vs")];
        let error = prelude(&header, stages).expect_err("unknown library");
        assert_eq!((error.file.as_str(), error.line), ("a.vs", 3));
        let why = error.message;
        assert!(
            why.contains("MadSDF.glsl") && why.contains("MadCommon.glsl"),
            "{why}"
        );
        let plain = [("void main() {}", "a.fs"), ("", "a.vs")];
        assert!(prelude(&header, plain).is_ok_and(|p| p.is_empty()));
    }
}
