//! ISF's and Shadertoy's GLSL into WGSL: through glslang, the reference
//! compiler, and naga's SPIR-V front end ([`super::glslang`], the default
//! `glslang` feature), or through naga's GLSL front end where glslang is
//! not built (or `SYLVA_GLSL=naga` asks for it). Both take Vulkan GLSL
//! 4.50 with explicit bindings and no combined samplers, so each stage is
//! given a prelude that declares what an ISF host provides — the uniforms
//! (`TIME`, `RENDERSIZE`, the inputs…), the textures as `texture2D` with
//! one sampler, the `IMG_*` functions, `isf_FragNormCoord`,
//! `isf_vertShaderInit` — and the file's own text is rewritten where
//! GLSL 1.x and GL differ ([`rewrite`]): `gl_FragColor`, `varying`, the
//! texture calls of every GLSL era onto functions that sample upright
//! (`gl_FragCoord` counted from the bottom as in GL, and writable where a
//! file writes it), `sampler2D` parameters, loose uniforms, names Vulkan
//! GLSL keeps for itself, `isnan`/`isinf` (which WGSL lacks); what an
//! output pass writes is held where a GL host's 8-bit target would hold it;
//! what the front ends read but refuse is mended in the module:
//! `normalize` of a scalar, constants folded to infinity. The
//! front ends have panicked or overflowed on real shaders, so translation
//! runs under `catch_unwind`, on a deep stack, once the stage has passed
//! [`bounds`]; what it makes is held to WGSL's own memory limits.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use super::header::{InputKind, IsfHeader};
use super::include::{self, Included};
use super::names::{given_name, glsl_name};
use super::prelude::{BIAS_FUNCTIONS, CORNER, TEXTURE_FUNCTIONS, frag_coord};
use super::rewrite::{Stage, reads_past_xy, rewrite, varying_locations, writes_frag_coord};
use super::{bounds, madmapper};
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
    /// Whether the vertex stage is sylva's own (no `.vs` beside the file),
    /// whose one varying a pass's compute form can stand in for.
    pub builtin_vertex: bool,
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
/// file with `header`; `fragment_file` and `vertex_file` name them for
/// errors; `included` are the files their `#include`s name, read.
pub fn translate(
    header: &IsfHeader,
    fragment: &str,
    vertex: Option<&str>,
    (fragment_file, vertex_file): (&str, &str),
    included: &[Included],
) -> Result<Translated, TranslateError> {
    let textures = texture_names(header);
    let locations = varying_locations(vertex.unwrap_or(""));
    let mouse = reads_past_xy(fragment, "iMouse") || reads_past_xy(vertex.unwrap_or(""), "iMouse");
    let provided = provided_names(header, &textures);
    let fragment_libraries = include::prelude((fragment, fragment_file), included, &provided)?;
    let vertex_libraries =
        include::prelude((vertex.unwrap_or(""), vertex_file), included, &provided)?;
    let dialect = madmapper::prelude(header, [fragment, vertex.unwrap_or("")]);
    let common = common_prelude(header, &textures, mouse) + &dialect;
    let coord = frag_coord("RENDERSIZE", writes_frag_coord(fragment));
    let fragment_prelude = format!(
        "{common}{BIAS_FUNCTIONS}{fragment_libraries}layout(location = 0) in vec2 isf_FragNormCoord;\n\
         layout(location = 0) out vec4 isf_FragColor;\n{}",
        coord.0
    );
    let vertex_prelude = format!(
        "{common}{vertex_libraries}layout(location = 0) out vec2 isf_FragNormCoord;\n\
         void isf_vertShaderInit() {{\n\
         \x20   vec2 corner = {CORNER};\n\
         \x20   isf_FragNormCoord = corner;\n\
         \x20   gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n\
         }}\n\
         #define vv_vertShaderInit isf_vertShaderInit\n"
    );
    let fragment_text = rewrite(fragment, &provided, &locations, Stage::Fragment)
        + madmapper::material_entry(fragment)
        + &epilogue(header, &locations, Stage::Fragment, &coord.1);
    let vertex_source = vertex.unwrap_or(DEFAULT_VERTEX);
    let vertex_text = rewrite(vertex_source, &provided, &locations, Stage::Vertex)
        + madmapper::material_entry(vertex_source)
        + &epilogue(header, &locations, Stage::Vertex, "");
    let (fragment_module, fragment_wgsl) = to_wgsl(
        &fragment_prelude,
        &fragment_text,
        naga::ShaderStage::Fragment,
        fragment_file,
    )?;
    let vertex_file = if vertex.is_some() {
        vertex_file
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
        builtin_vertex: vertex.is_none(),
    })
}

/// The textures in binding order.
fn texture_names(header: &IsfHeader) -> Vec<String> {
    let inputs = header
        .inputs
        .iter()
        .filter(|i| matches!(i.kind, InputKind::Image | InputKind::Audio { .. }))
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

/// The names an ISF stage's prelude declares: its uniforms, inputs and
/// textures.
fn provided_names(header: &IsfHeader, textures: &[String]) -> Vec<String> {
    let uniforms = [
        "TIME",
        "TIMEDELTA",
        "FRAMEINDEX",
        "PASSINDEX",
        "RENDERSIZE",
        "DATE",
    ];
    (uniforms.iter().map(|u| u.to_string()))
        .chain(header.inputs.iter().map(|i| i.name.clone()))
        .chain(header.generators.iter().map(|g| g.name.clone()))
        .chain(textures.iter().cloned())
        .collect()
}

/// What both stages get first: the version, the uniforms, the textures
/// and the ISF functions; a point input `iMouse` as a vec4 where the file
/// reads it as one (`mouse`).
fn common_prelude(header: &IsfHeader, textures: &[String], mouse: bool) -> String {
    let mut text = String::from(
        "#version 450\n\
         layout(set = 0, binding = 0, std140) uniform IsfUniforms {\n\
         \x20   float TIME;\n    float TIMEDELTA;\n    int FRAMEINDEX;\n    int PASSINDEX;\n\
         \x20   vec2 RENDERSIZE;\n    vec4 DATE;\n",
    );
    let mut flags = String::new();
    for input in &header.inputs {
        let flag = &input.name;
        let name = &glsl_name(flag);
        let member = match input.kind {
            InputKind::Float => format!("float {name};"),
            InputKind::Bool | InputKind::Event => {
                // A bool cannot live in a uniform buffer in WGSL: a float
                // there, and a global bool that `main` sets from it.
                flags.push_str(&format!("bool {name};\n"));
                format!("float isf_flag_{flag};")
            }
            InputKind::Long(_) => format!("int {name};"),
            InputKind::Colour => format!("vec4 {name};"),
            // A Shadertoy port's mouse, which it reads as Shadertoy's vec4
            // (its zw the press: none).
            InputKind::Point if flag == "iMouse" && mouse => format!("vec4 {name};"),
            InputKind::Point => format!("vec2 {name};"),
            InputKind::Image | InputKind::Audio { .. } => continue,
        };
        text.push_str(&format!("    {member}\n"));
    }
    for generator in &header.generators {
        text.push_str(&format!("    float {};\n", glsl_name(&generator.name)));
    }
    text.push_str("};\nlayout(set = 0, binding = 1) uniform sampler isf_sampler;\n");
    for (i, name) in textures.iter().enumerate() {
        text.push_str(&format!(
            "layout(set = 0, binding = {}) uniform texture2D {};\n",
            i + 2,
            glsl_name(name)
        ));
    }
    text.push_str(&flags);
    for name in textures {
        let image = glsl_name(name);
        text.push_str(&format!(
            "#define _{name}_imgSize IMG_SIZE({image})\n#define _{name}_imgRect vec4(0.0, 0.0, IMG_SIZE({image}))\n"
        ));
    }
    text.push_str(TEXTURE_FUNCTIONS);
    text.push_str(
        "#define IMG_SIZE(image) vec2(isf_textureSize(image, 0))\n\
         #define IMG_NORM_PIXEL isf_texture\n\
         #define IMG_PIXEL isf_texture2DRect\n\
         #define IMG_THIS_NORM_PIXEL(image) IMG_NORM_PIXEL(image, isf_FragNormCoord)\n\
         #define IMG_THIS_PIXEL(image) IMG_NORM_PIXEL(image, isf_FragNormCoord)\n\
         #define vv_FragNormCoord isf_FragNormCoord\n",
    );
    text
}

/// The entry point: `first` (setting a writable `isf_FragCoord`), the
/// bool inputs set from their uniforms, then the file's own `main`
/// (renamed `isf_main`), and in a pass drawing the output (no `TARGET`)
/// its colour held and decoded to linear (`isf_shown`).
fn epilogue(
    header: &IsfHeader,
    locations: &BTreeMap<String, u32>,
    stage: Stage,
    first: &str,
) -> String {
    let mut text = format!("\nvoid main() {{\n{first}");
    for input in &header.inputs {
        if matches!(input.kind, InputKind::Bool | InputKind::Event) {
            let flag = &input.name;
            let name = glsl_name(flag);
            text.push_str(&format!("    {name} = isf_flag_{flag} > 0.5;\n"));
        }
    }
    // A varying array travels as one varying an element (an entry point
    // passes no arrays): copied in before the file's `main`, out after.
    let copies = (locations.keys()).filter_map(|name| {
        let (base, count) = name.split_once('[')?;
        let count: u32 = count.trim_end_matches(']').trim().parse().ok()?;
        Some((0..count.clamp(1, 32)).map(move |i| match stage {
            Stage::Fragment => format!("    {base}[{i}] = isf_v_{base}_{i};\n"),
            Stage::Vertex => format!("    isf_v_{base}_{i} = {base}[{i}];\n"),
        }))
    });
    let copies: String = copies.flatten().collect();
    let outputs: Vec<String> = (header.passes.iter().enumerate())
        .filter(|(_, pass)| pass.target.is_none())
        .map(|(i, _)| format!("PASSINDEX == {i}"))
        .collect();
    let decode = match outputs.len() {
        0 => String::new(),
        n if n == header.passes.len() => {
            "    isf_FragColor = isf_shown(isf_FragColor);\n".to_string()
        }
        _ => format!(
            "    if ({}) {{\n        isf_FragColor = isf_shown(isf_FragColor);\n    }}\n",
            outputs.join(" || ")
        ),
    };
    match stage {
        Stage::Fragment => text.push_str(&format!("{copies}    isf_main();\n{decode}}}\n")),
        Stage::Vertex => text.push_str(&format!("    isf_main();\n{copies}}}\n")),
    }
    text
}

/// Which front end reads GLSL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Translator {
    /// glslang, then naga's SPIR-V front end.
    Glslang,
    /// naga's GLSL front end.
    Naga,
}

impl Translator {
    /// The one this show uses: glslang where it is built, unless
    /// `SYLVA_GLSL=naga` asks for naga's front end.
    pub fn chosen() -> Self {
        static CHOSEN: OnceLock<Translator> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let naga = std::env::var("SYLVA_GLSL").is_ok_and(|v| v.eq_ignore_ascii_case("naga"));
            match cfg!(feature = "glslang") && !naga {
                true => Self::Glslang,
                false => Self::Naga,
            }
        })
    }

    /// Its name, as `sylva check` says it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Glslang => "glslang",
            Self::Naga => "naga's GLSL front end",
        }
    }

    /// Reads `source`, one whole stage: the module, or the line (0: none)
    /// and why not.
    fn parse(
        self,
        source: &str,
        stage: naga::ShaderStage,
    ) -> Result<naga::Module, (usize, String)> {
        #[cfg(feature = "glslang")]
        if self == Self::Glslang {
            return super::glslang::compile(source, stage);
        }
        let mut frontend = naga::front::glsl::Frontend::default();
        frontend
            .parse(&naga::front::glsl::Options::from(stage), source)
            .map_err(|errors| {
                let first = errors.errors.first();
                let line = first
                    .and_then(|e| e.location(source))
                    .map_or(0, |l| l.line_number as usize);
                let message =
                    first.map_or_else(|| "does not parse".to_string(), |e| e.kind.to_string());
                (line, message)
            })
    }
}

/// GL lets a constant fold past the float range (`pow(2.0, 128.0) - 1.0`
/// as "the largest float") and carries the infinity; naga refuses an
/// infinite literal, so each is taken as the largest finite float of its
/// sign, which is what the file meant by it.
fn finite_literals(module: &mut naga::Module) {
    let finite = |(_, expression): (_, &mut naga::Expression)| {
        if let naga::Expression::Literal(naga::Literal::F32(value)) = expression
            && value.is_infinite()
        {
            *value = f32::MAX.copysign(*value);
        }
    };
    module.global_expressions.iter_mut().for_each(finite);
    for (_, function) in module.functions.iter_mut() {
        function.expressions.iter_mut().for_each(finite);
    }
    for entry in &mut module.entry_points {
        entry.function.expressions.iter_mut().for_each(finite);
    }
}

/// GLSL defines `normalize` of a scalar (its sign); naga takes the call
/// as written and then refuses it, so each one is made a `sign`. Types
/// are resolved in the arena's order with the calls already made signs
/// (a later expression may depend on one); a function whose types do not
/// resolve is left, from there on, for validation to name.
fn scalar_normalize_as_sign(module: &mut naga::Module) {
    let mut scalar = Vec::new();
    let functions = (module.functions.iter().map(|(h, f)| (Some(h), f)))
        .chain(module.entry_points.iter().map(|e| (None, &e.function)));
    for (at, (handle, function)) in functions.enumerate() {
        let context = naga::proc::ResolveContext::with_locals(
            module,
            &function.local_variables,
            &function.arguments,
        );
        let mut resolved: Vec<naga::proc::TypeResolution> = Vec::new();
        for (expression, value) in function.expressions.iter() {
            let mut value = value.clone();
            if let naga::Expression::Math { fun, arg, .. } = &mut value
                && *fun == naga::MathFunction::Normalize
                && resolved.get(arg.index()).is_some_and(|r| {
                    matches!(r.inner_with(&module.types), naga::TypeInner::Scalar(_))
                })
            {
                *fun = naga::MathFunction::Sign;
                scalar.push((at, handle, expression));
            }
            let past = |h: naga::Handle<naga::Expression>| {
                let missing = naga::proc::ResolveError::OutOfBoundsIndex { expr: h, index: 0 };
                resolved.get(h.index()).ok_or(missing)
            };
            match context.resolve(&value, past) {
                Ok(resolution) => resolved.push(resolution),
                Err(_) => break,
            }
        }
    }
    let entries = module.functions.len();
    for (at, handle, expression) in scalar {
        let function = match handle {
            Some(handle) => &mut module.functions[handle],
            None => &mut module.entry_points[at - entries].function,
        };
        if let naga::Expression::Math { fun, .. } = &mut function.expressions[expression] {
            *fun = naga::MathFunction::Sign;
        }
    }
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
            let mut module = Translator::chosen()
                .parse(&source, stage)
                .map_err(|(line, message)| fail(line, message))?;
            finite_literals(&mut module);
            scalar_normalize_as_sign(&mut module);
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .map_err(|error| {
                let line = (error.location(&source))
                    .filter(|_| Translator::chosen() == Translator::Naga)
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
        let line = match Translator::chosen() {
            Translator::Naga if span.is_defined() => span.location(&source).line_number as usize,
            Translator::Naga => 0,
            // Spans from SPIR-V count its words, not the GLSL's bytes: the
            // array's declaration.
            Translator::Glslang => array_declared_at(&source, &why),
        };
        fail(line, why)
    })?;
    Ok((module, wgsl))
}

/// The line of `source` declaring the array that `why` (check_memory's
/// "var NAME takes …" or "var<space> NAME takes …") names; 0 if none.
fn array_declared_at(source: &str, why: &str) -> usize {
    let Some(name) = why.split_whitespace().nth(1) else {
        return 0;
    };
    let name = name.trim_end_matches(|c: char| c == '_' || c.is_ascii_digit());
    source
        .lines()
        .position(|line| {
            line.match_indices(name).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + name.len()..].trim_start();
                !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    && after.starts_with('[')
            })
        })
        .map_or(0, |at| at + 1)
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
    // A renamed member is the input's own name.
    let fields = members
        .iter()
        .filter_map(|m| Some((given_name(m.name.as_deref()?).into(), m.offset, kind(m.ty)?)))
        .collect();
    (fields, (*span).max(16))
}
