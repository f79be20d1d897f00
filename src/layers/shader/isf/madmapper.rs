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
//! ([`super::header`]).
//!
//! MadMapper's materials are the same dialect: a material's
//! `materialColorForPixel(texCoord)` is its picture and its `.vs`'s
//! `materialVsFunc(uv)` runs after the corner is set; its `GENERATORS`
//! are values sylva advances each frame ([`super::generators`]); an input
//! flagged `generate_as_define` is also the macro `NAME_IS_VALUE` (the
//! file compiled again when it moves); and an `#include` is the file of
//! that name in the show ([`super::include`]: where a MadMapper user puts
//! MadMapper's `MadCommon.glsl`, `MadNoise.glsl` and `MadSDF.glsl`), else
//! sylva's own `MadCommon.glsl`. Not read: `mm_LastFrame`, and the
//! `curve` and `cube` inputs.

use serde_json::Value as Json;

use super::header::{InputKind, IsfHeader, IsfInput};
use super::include::includes;
use super::names::glsl_name;
use super::prelude::CORNER;
use super::rewrite::calls;
use crate::params::{ParamKind, Value};

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

/// The libraries an `#include` may name that sylva has its own of, where
/// the show has no file of the name: the constants and functions
/// MadMapper's surface shaders call.
pub(super) const BUILT_IN: [(&str, &str); 1] = [("MadCommon.glsl", MAD_COMMON)];

/// Pi, `saturate` and `lerp` as HLSL has them, hue, saturation and value
/// from RGB and back (hue in turns, 0..1).
const MAD_COMMON: &str = "\
#define PI 3.1415926535897932384626433832795
#define saturate(x) clamp(x, 0.0, 1.0)
#define lerp(x, y, t) mix(x, y, t)
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
    [
        "MM_SHADER_",
        SURFACE_COORD,
        "in_TexCoord0",
        "materialColorForPixel",
    ]
    .iter()
    .any(|word| source.contains(word))
        || includes(source).next().is_some()
}

/// What a MadMapper file's stages (the `.fs` and the `.vs` beside it) get
/// in their prelude: the surface's picture macros onto its first image
/// input, `mm_SurfaceCoord`, the mesh's corners and the header's
/// `NAME_IS_VALUE` macros (the libraries it includes are
/// [`super::include`]'s).
pub(super) fn prelude(header: &IsfHeader, stages: [&str; 2]) -> String {
    let mut text: String = (header.defines.iter())
        .map(|define| format!("#define {define}\n"))
        .collect();
    if !stages.iter().any(|stage| dialect(stage)) {
        return text;
    }
    text.push_str(&format!(
        "#define {SURFACE_COORD} isf_FragNormCoord\n#define isf_mm_corner {CORNER}\n"
    ));
    let image = header.inputs.iter().find(|i| i.kind == InputKind::Image);
    if let Some(image) = image.map(|i| glsl_name(&i.name)) {
        text.push_str(&format!(
            "#define MM_SHADER_NORM_PIXEL(coord) IMG_NORM_PIXEL({image}, coord)\n\
             #define MM_SHADER_THIS_NORM_PIXEL() IMG_THIS_NORM_PIXEL({image})\n\
             #define MM_SHADER_PIXEL(coord) IMG_PIXEL({image}, coord)\n\
             #define MM_SHADER_THIS_PIXEL() IMG_THIS_PIXEL({image})\n"
        ));
    }
    text
}

/// A material's entry, after a stage's text where it has no `main` of
/// its own: the fragment stage's `materialColorForPixel` is the picture,
/// and the vertex stage's `materialVsFunc` runs after the corner is set.
pub(super) fn material_entry(text: &str) -> &'static str {
    if calls(text, "main") {
        ""
    } else if text.contains("materialColorForPixel") {
        "\nvoid isf_main() {\n    isf_FragColor = materialColorForPixel(isf_FragNormCoord);\n}\n"
    } else if text.contains("materialVsFunc") {
        "\nvoid isf_main() {\n    isf_vertShaderInit();\n    materialVsFunc(isf_FragNormCoord);\n}\n"
    } else {
        ""
    }
}

/// The names of `entries` (the header's INPUTS) its `FLAGS` say
/// `generate_as_define`: MadMapper's inputs compiled in as macros.
pub(super) fn compiled_in<'a>(entries: impl Iterator<Item = &'a Json>) -> Vec<String> {
    let flagged = entries.filter(|entry| {
        let flags = entry
            .get("FLAGS")
            .and_then(Json::as_str)
            .unwrap_or_default();
        flags.contains("generate_as_define")
    });
    let names = flagged.filter_map(|entry| entry.get("NAME").and_then(Json::as_str));
    names.map(str::to_string).collect()
}

/// MadMapper's `NAME_IS_VALUE` macro for `input` at `value`:
/// `mode_IS_Steady_With_Audio`, `audio_IS_true`.
pub(super) fn define(input: &IsfInput, value: &Value) -> Option<String> {
    let value = match (value, &input.spec.kind) {
        (Value::Bool(on), _) => on.to_string(),
        (Value::Enum(i), ParamKind::Enum { options }) => options.get(*i)?.clone(),
        (Value::Int(n), _) => n.to_string(),
        _ => return None,
    };
    let value: String = (value.chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    Some(format!("{}_IS_{value}", input.name))
}

/// A MadMapper file's line as the front ends take it, where it is one of
/// the dialect's: an include (its library is in the prelude), a
/// declaration of the coordinates the prelude gives (`isf_FragNormCoord`,
/// `mm_SurfaceCoord`), a mesh attribute, or one of the host's loose
/// uniforms (a global holding its neutral value).
pub(super) fn line(body: &str) -> Option<String> {
    if super::include::included(body).is_some() {
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
    fn a_material_is_its_colour_for_each_pixel_and_flagged_inputs_are_macros() {
        let material = "vec4 materialColorForPixel(vec2 c) { return vec4(c, 0.0, 1.0); }\n";
        assert!(material_entry(material).contains("materialColorForPixel(isf_FragNormCoord)"));
        assert_eq!(material_entry(&format!("{material}void main() {{}}\n")), "");
        let header = super::super::header::parse(
            "/*{ \"INPUTS\": [ { \"NAME\": \"move\", \"TYPE\": \"long\", \"VALUES\": [\"Steady\", \"With Audio\"],\n\
             \"DEFAULT\": \"With Audio\", \"FLAGS\": \"generate_as_define\" },\n\
             { \"NAME\": \"glow\", \"TYPE\": \"bool\", \"DEFAULT\": true, \"FLAGS\": \"button,generate_as_define\" },\n\
             { \"NAME\": \"plain\", \"TYPE\": \"bool\" } ] }*/",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(header.defines, ["move_IS_With_Audio", "glow_IS_true"]);
        let mut header = header;
        header.choose(&[("move".to_string(), Value::Enum(0))]);
        assert_eq!(header.defines, ["move_IS_Steady", "glow_IS_true"]);
        header.choose(&[]);
        assert!(
            prelude(&header, ["", ""])
                .starts_with("#define move_IS_With_Audio\n#define glow_IS_true\n")
        );
    }
}
