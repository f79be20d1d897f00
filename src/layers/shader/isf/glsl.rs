//! ISF's GLSL into WGSL through naga's GLSL front end (a dependency
//! already, pure Rust, so it builds wherever sylva does; glslang through
//! shaderc would take more of the library but ties every platform to a
//! C++ toolchain or the Vulkan SDK). naga takes Vulkan GLSL 4.50 with
//! explicit bindings and no combined samplers, so each stage is given a
//! prelude that declares what an ISF host provides — the uniforms
//! (`TIME`, `RENDERSIZE`, the inputs…), the textures as `texture2D` with
//! one sampler, the `IMG_*` functions, `isf_FragNormCoord`,
//! `isf_vertShaderInit` — and the file's own text is rewritten where
//! GLSL 1.x differs: `gl_FragColor`, `texture2D(…)`, `varying`, and
//! `gl_FragCoord` counted from the bottom as in GL. The front end has
//! panicked on real shaders, so translation runs under `catch_unwind`,
//! on a deep stack, once the stage has passed [`bounds`]; what it makes is
//! held to WGSL's own memory limits.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::bounds;
use super::header::{InputKind, IsfHeader};
use crate::gpu::wgsl::check_memory;

/// The fragment stage a `.fs` without a `.vs` gets.
const DEFAULT_VERTEX: &str = "void main() {\n    isf_vertShaderInit();\n}\n";

/// The translated stages and what their uniform block and bindings hold.
#[derive(Debug, Clone)]
pub struct Translated {
    /// The vertex stage, WGSL, entry `main`.
    pub vertex: String,
    /// The fragment stage of each pass, WGSL, entry `main` (ISF: one for
    /// all passes, which tell themselves apart by `PASSINDEX`).
    pub fragments: Vec<String>,
    /// The uniform block's members: name, byte offset, kind.
    pub uniforms: Vec<(String, u32, Member)>,
    /// Its size in bytes.
    pub uniform_size: u32,
    /// The textures, bound from binding 2 in this order: image and audio
    /// inputs, imported images, pass buffers.
    pub textures: Vec<String>,
}

/// What a uniform member holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Member {
    /// A 32-bit float.
    Float,
    /// A 32-bit int.
    Int,
    /// Two floats.
    Vec2,
    /// Four floats.
    Vec4,
}

/// A stage that does not translate: the file, its line and naga's words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TranslateError {
    /// The `.fs` or `.vs` file.
    pub file: String,
    /// Its line (0 when the problem is in what sylva adds).
    pub line: usize,
    /// What naga says.
    pub message: String,
}

/// Translates `fragment` (and `vertex`, the `.vs` beside it) of an ISF
/// file with `header`; `files` names them for errors.
pub fn translate(
    header: &IsfHeader,
    (fragment, vertex): (&str, Option<&str>),
    files: (&str, &str),
) -> Result<Translated, TranslateError> {
    let textures = texture_names(header);
    let locations = varying_locations(vertex.unwrap_or(""), fragment);
    let common = common_prelude(header, &textures);
    let fragment_prelude = format!(
        "{common}layout(location = 0) in vec2 isf_FragNormCoord;\n\
         layout(location = 0) out vec4 isf_FragColor;\n\
         #define isf_FragCoord vec4(gl_FragCoord.x, RENDERSIZE.y - gl_FragCoord.y, gl_FragCoord.zw)\n"
    );
    let vertex_prelude = format!(
        "{common}layout(location = 0) out vec2 isf_FragNormCoord;\n\
         void isf_vertShaderInit() {{\n\
         \x20   vec2 corner = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));\n\
         \x20   isf_FragNormCoord = corner;\n\
         \x20   gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n\
         }}\n\
         #define vv_vertShaderInit isf_vertShaderInit\n"
    );
    let epilogue = epilogue(header);
    let fragment_text = rewrite(fragment, &textures, &locations, Stage::Fragment) + &epilogue;
    let vertex_text = rewrite(
        vertex.unwrap_or(DEFAULT_VERTEX),
        &textures,
        &locations,
        Stage::Vertex,
    ) + &epilogue;
    let (fragment_module, fragment_wgsl) = to_wgsl(
        &fragment_prelude,
        &fragment_text,
        naga::ShaderStage::Fragment,
        files.0,
    )?;
    let vertex_file = if vertex.is_some() {
        files.1
    } else {
        "(the built-in vertex stage)"
    };
    let (_, vertex_wgsl) = to_wgsl(
        &vertex_prelude,
        &vertex_text,
        naga::ShaderStage::Vertex,
        vertex_file,
    )?;
    let (uniforms, uniform_size) = uniform_members(&fragment_module);
    Ok(Translated {
        vertex: vertex_wgsl,
        fragments: vec![fragment_wgsl],
        uniforms,
        uniform_size,
        textures,
    })
}

/// The textures in binding order.
fn texture_names(header: &IsfHeader) -> Vec<String> {
    let inputs = header
        .inputs
        .iter()
        .filter(|i| matches!(i.kind, InputKind::Image | InputKind::Audio))
        .map(|i| i.name.clone());
    let imported = header.imported.iter().map(|(name, _)| name.clone());
    let mut names: Vec<String> = inputs.chain(imported).collect();
    for pass in &header.passes {
        if let Some(target) = &pass.target
            && !names.contains(target)
        {
            names.push(target.clone());
        }
    }
    names
}

/// What both stages get first: the version, the uniforms, the textures
/// and the ISF functions.
fn common_prelude(header: &IsfHeader, textures: &[String]) -> String {
    let mut text = String::from(
        "#version 450\n\
         layout(set = 0, binding = 0, std140) uniform IsfUniforms {\n\
         \x20   float TIME;\n    float TIMEDELTA;\n    int FRAMEINDEX;\n    int PASSINDEX;\n\
         \x20   vec2 RENDERSIZE;\n    vec4 DATE;\n",
    );
    let mut flags = String::new();
    for input in &header.inputs {
        let name = &input.name;
        let member = match input.kind {
            InputKind::Float => format!("float {name};"),
            InputKind::Bool | InputKind::Event => {
                // A bool cannot live in a uniform buffer in WGSL: a float
                // there, and a global bool that `main` sets from it.
                flags.push_str(&format!("bool {name};\n"));
                format!("float isf_flag_{name};")
            }
            InputKind::Long(_) => format!("int {name};"),
            InputKind::Colour => format!("vec4 {name};"),
            InputKind::Point => format!("vec2 {name};"),
            InputKind::Image | InputKind::Audio => continue,
        };
        text.push_str(&format!("    {member}\n"));
    }
    text.push_str("};\nlayout(set = 0, binding = 1) uniform sampler isf_sampler;\n");
    for (i, name) in textures.iter().enumerate() {
        text.push_str(&format!(
            "layout(set = 0, binding = {}) uniform texture2D {name};\n",
            i + 2
        ));
    }
    text.push_str(&flags);
    for name in textures {
        text.push_str(&format!(
            "#define _{name}_imgSize IMG_SIZE({name})\n#define _{name}_imgRect vec4(0.0, 0.0, IMG_SIZE({name}))\n"
        ));
    }
    text.push_str(
        "vec2 isf_flip(vec2 c) { return vec2(c.x, 1.0 - c.y); }\n\
         #define IMG_SIZE(image) vec2(textureSize(sampler2D(image, isf_sampler), 0))\n\
         #define IMG_NORM_PIXEL(image, c) texture(sampler2D(image, isf_sampler), isf_flip(c))\n\
         #define IMG_PIXEL(image, c) texture(sampler2D(image, isf_sampler), isf_flip((c) / IMG_SIZE(image)))\n\
         #define IMG_THIS_NORM_PIXEL(image) IMG_NORM_PIXEL(image, isf_FragNormCoord)\n\
         #define IMG_THIS_PIXEL(image) IMG_NORM_PIXEL(image, isf_FragNormCoord)\n\
         #define isf_texture2D(image, c) texture(sampler2D(image, isf_sampler), isf_flip(c))\n\
         #define isf_texture2DRect(image, c) IMG_PIXEL(image, c)\n\
         #define vv_FragNormCoord isf_FragNormCoord\n",
    );
    text
}

/// The entry point: the bool inputs set from their uniforms, then the
/// file's own `main` (renamed `isf_main`).
fn epilogue(header: &IsfHeader) -> String {
    let mut text = String::from("\nvoid main() {\n");
    for input in &header.inputs {
        if matches!(input.kind, InputKind::Bool | InputKind::Event) {
            let name = &input.name;
            text.push_str(&format!("    {name} = isf_flag_{name} > 0.5;\n"));
        }
    }
    text.push_str("    isf_main();\n}\n");
    text
}

/// Which stage a file's text is rewritten for.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// Varyings are outputs.
    Vertex,
    /// Varyings are inputs.
    Fragment,
}

/// Locations for the varyings both files declare, from 1 (0 carries
/// `isf_FragNormCoord`).
fn varying_locations(vertex: &str, fragment: &str) -> BTreeMap<String, u32> {
    let mut locations = BTreeMap::new();
    let mut next = 1;
    for line in vertex.lines().chain(fragment.lines()) {
        if let Some((_, _, name)) = varying(line)
            && !locations.contains_key(&name)
        {
            // An array takes a location an element.
            let count = name
                .split_once('[')
                .and_then(|(_, n)| n.trim_end_matches(']').trim().parse::<u32>().ok())
                .unwrap_or(1);
            locations.insert(name, next);
            next += count.clamp(1, 32);
        }
    }
    locations
}

/// A line `varying|in|out [precision] TYPE NAME;`: its qualifier, type
/// and name.
fn varying(line: &str) -> Option<(&str, &str, String)> {
    let code = line.split("//").next()?.trim().strip_suffix(';')?;
    let words: Vec<&str> = code.split_whitespace().collect();
    let qualifier = *words.first()?;
    if !["varying", "in", "out"].contains(&qualifier) {
        return None;
    }
    let rest: Vec<&str> = words[1..]
        .iter()
        .copied()
        .filter(|w| {
            ![
                "highp",
                "mediump",
                "lowp",
                "smooth",
                "flat",
                "noperspective",
            ]
            .contains(w)
        })
        .collect();
    match rest[..] {
        [kind, name] if super::header::is_identifier(name.split('[').next()?) => {
            Some((qualifier, kind, name.to_string()))
        }
        _ => None,
    }
}

/// The file's text as naga takes it, line for line.
pub(super) fn rewrite(
    source: &str,
    textures: &[String],
    locations: &BTreeMap<String, u32>,
    stage: Stage,
) -> String {
    let mut out = String::with_capacity(source.len() + 256);
    for line in source.split_inclusive('\n') {
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim_start().starts_with("#version") {
            out.push_str(ending);
            continue;
        }
        if let Some((_, kind, name)) = varying(body)
            && let Some(location) = locations.get(&name)
        {
            let direction = if stage == Stage::Vertex { "out" } else { "in" };
            out.push_str(&format!(
                "layout(location = {location}) {direction} {kind} {name};{ending}"
            ));
            continue;
        }
        let mut text = body.to_string();
        for (from, to) in [
            ("gl_FragColor", "isf_FragColor"),
            ("gl_FragData[0]", "isf_FragColor"),
            ("gl_FragCoord", "isf_FragCoord"),
            ("texture2D", "isf_texture2D"),
            ("texture2DRect", "isf_texture2DRect"),
            ("main", "isf_main"),
        ] {
            text = replace_word(&text, from, to);
        }
        // `texture(image, uv)` on a declared image is the same call.
        for name in textures {
            text = text.replace(
                &format!("texture({name},"),
                &format!("isf_texture2D({name},"),
            );
            text = text.replace(
                &format!("texture({name} ,"),
                &format!("isf_texture2D({name},"),
            );
        }
        out.push_str(&text);
        out.push_str(ending);
    }
    out
}

/// `text` with every whole-word `from` replaced by `to`.
fn replace_word(text: &str, from: &str, to: &str) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + from.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// Parses and validates one stage, and writes it as WGSL.
pub(super) fn to_wgsl(
    prelude: &str,
    text: &str,
    stage: naga::ShaderStage,
    file: &str,
) -> Result<(naga::Module, String), TranslateError> {
    let source = format!("{prelude}{text}");
    let offset = prelude.matches('\n').count();
    let fail = |line: usize, message: String| TranslateError {
        file: file.to_string(),
        line: line.saturating_sub(offset),
        message,
    };
    // The bounds first, on the deep stack too: the preprocessor they run
    // recurses into nested macro calls.
    let translated = bounds::on_large_stack(|| {
        if let Err((line, why)) = bounds::check(&source) {
            return Some(Err(fail(line, why)));
        }
        catch_unwind(AssertUnwindSafe(|| {
            let mut frontend = naga::front::glsl::Frontend::default();
            let module = frontend
                .parse(&naga::front::glsl::Options::from(stage), &source)
                .map_err(|errors| {
                    let first = errors.errors.first();
                    let line = first
                        .and_then(|e| e.location(&source))
                        .map_or(0, |l| l.line_number as usize);
                    let message =
                        first.map_or_else(|| "does not parse".to_string(), |e| e.kind.to_string());
                    fail(line, message)
                })?;
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .map_err(|error| {
                let line = error
                    .location(&source)
                    .map_or(0, |l| l.line_number as usize);
                fail(line, with_causes(&error.into_inner()))
            })?;
            let wgsl = naga::back::wgsl::write_string(
                &module,
                &info,
                naga::back::wgsl::WriterFlags::empty(),
            )
            .map_err(|e| fail(0, e.to_string()))?;
            Ok((module, wgsl))
        }))
        .ok()
    });
    let (module, wgsl) = match translated {
        Some(Some(translated)) => translated?,
        _ => return Err(fail(0, "the GLSL translator failed on this file".into())),
    };
    // What WGSL files are held to, which translation would pass by: a
    // driver backs each invocation's arrays with scratch memory.
    check_memory(&module).map_err(|(span, why)| {
        let line = span.location(&source).line_number as usize;
        fail(if span.is_defined() { line } else { 0 }, why)
    })?;
    Ok((module, wgsl))
}

/// An error and what caused it, as one line.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// The members of the `IsfUniforms` block as naga laid them out.
pub(super) fn uniform_members(module: &naga::Module) -> (Vec<(String, u32, Member)>, u32) {
    let block = module.global_variables.iter().find(|(_, v)| {
        v.space == naga::AddressSpace::Uniform
            && v.binding
                .as_ref()
                .is_some_and(|b| b.group == 0 && b.binding == 0)
    });
    let Some((_, block)) = block else {
        return (Vec::new(), 16);
    };
    let naga::TypeInner::Struct { members, span } = &module.types[block.ty].inner else {
        return (Vec::new(), 16);
    };
    let kind = |ty: naga::Handle<naga::Type>| match module.types[ty].inner {
        naga::TypeInner::Scalar(s) if s.kind == naga::ScalarKind::Float => Some(Member::Float),
        naga::TypeInner::Scalar(_) => Some(Member::Int),
        naga::TypeInner::Vector {
            size: naga::VectorSize::Bi,
            ..
        } => Some(Member::Vec2),
        naga::TypeInner::Vector {
            size: naga::VectorSize::Quad,
            ..
        } => Some(Member::Vec4),
        _ => None,
    };
    let fields = members
        .iter()
        .filter_map(|m| Some((m.name.clone()?, m.offset, kind(m.ty)?)))
        .collect();
    (fields, (*span).max(16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_varyings_are_rewritten_line_for_line() {
        assert_eq!(
            replace_word(
                "gl_FragColor = texture2D(a, b); my_texture2D(x)",
                "texture2D",
                "isf_texture2D"
            ),
            "gl_FragColor = isf_texture2D(a, b); my_texture2D(x)"
        );
        let locations = varying_locations(
            "varying vec2 left;\nout highp vec2 right;\n",
            "in vec2 left;\n",
        );
        assert_eq!(locations.get("left"), Some(&1));
        assert_eq!(locations.get("right"), Some(&2));
        let text = rewrite(
            "#version 120\nvarying vec2 left;\ngl_FragColor = vec4(1.0);\n",
            &[],
            &locations,
            Stage::Fragment,
        );
        assert_eq!(
            text,
            "\nlayout(location = 1) in vec2 left;\nisf_FragColor = vec4(1.0);\n"
        );
    }
}
