//! An ISF or Shadertoy file's own GLSL, rewritten line for line into the
//! Vulkan GLSL both front ends take (glsl.rs gives it its prelude): the
//! varyings at explicit locations (an array as one varying an element, a
//! matrix as one a column),
//! GLSL 1.x's `gl_FragColor`, the texture calls of every era onto the
//! prelude's functions, `sampler2D` parameters as `texture2D`, loose
//! uniforms as globals, the words Vulkan GLSL reserves and the built-in
//! functions a file defines itself renamed, `smoothstep` with equal edges
//! a step, and a final `return` for a
//! function that can run off its end (GL drivers let all of these by).

use std::collections::BTreeMap;

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
pub(super) fn varying_locations(vertex: &str, fragment: &str) -> BTreeMap<String, u32> {
    let mut locations = BTreeMap::new();
    let mut next = 1;
    for line in vertex.lines().chain(fragment.lines()) {
        if let Some((_, kind, name)) = varying(line) {
            let key = varying_key(kind, name);
            if locations.contains_key(&key) {
                continue;
            }
            // An array takes a location an element.
            let count = key
                .split_once('[')
                .and_then(|(_, n)| n.trim_end_matches(']').trim().parse::<u32>().ok())
                .unwrap_or(1);
            locations.insert(key, next);
            next += count.clamp(1, 32);
        }
    }
    locations
}

/// The name a varying is located by: its own, or for a matrix (which no
/// entry point passes) `NAME[COLUMNS]`, as an array of its columns is,
/// so the epilogue copies it column by column alike.
fn varying_key(kind: &str, name: String) -> String {
    match matrix_columns(kind) {
        Some((columns, _)) if !name.contains('[') => format!("{name}[{columns}]"),
        _ => name,
    }
}

/// A matrix type's columns and their type: `mat3` is three `vec3`s,
/// `mat2x4` two `vec4`s.
fn matrix_columns(kind: &str) -> Option<(u32, String)> {
    let shape = kind.strip_prefix("mat")?;
    let (columns, rows) = shape.split_once('x').unwrap_or((shape, shape));
    let (columns, rows): (u32, u32) = (columns.parse().ok()?, rows.parse().ok()?);
    ((2..=4).contains(&columns) && (2..=4).contains(&rows)).then(|| (columns, format!("vec{rows}")))
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

/// The texture calls of each GLSL era, and the function of
/// [`TEXTURE_FUNCTIONS`] each becomes.
const TEXTURE_CALLS: [(&str, &str); 13] = [
    ("texture", "isf_texture"),
    ("texture2D", "isf_texture"),
    ("textureCube", "isf_texture"),
    ("texture2DRect", "isf_texture2DRect"),
    ("textureLod", "isf_textureLod"),
    ("texture2DLod", "isf_textureLod"),
    ("texture2DLodEXT", "isf_textureLod"),
    ("textureCubeLod", "isf_textureLod"),
    ("textureCubeLodEXT", "isf_textureLod"),
    ("textureGrad", "isf_textureGrad"),
    ("texture2DGradEXT", "isf_textureGrad"),
    ("texelFetch", "isf_texelFetch"),
    ("textureSize", "isf_textureSize"),
];

/// The sampler types a file may name, as a function's parameter: each is
/// a `texture2D` here (a cube map too, sampled as an equirectangular
/// picture), which the texture functions take.
const SAMPLER_TYPES: [&str; 3] = ["sampler2D", "samplerCube", "sampler2DRect"];

/// Words Vulkan GLSL reserves that GL drivers let older shaders (and ISF
/// headers) use as names: such a name is renamed by [`glsl_name`].
pub(super) const RESERVED: [&str; 41] = [
    "half",
    "input",
    "output",
    "filter",
    "sample",
    "common",
    "partition",
    "active",
    "superp",
    "fixed",
    "unsigned",
    "cast",
    "namespace",
    "using",
    "public",
    "static",
    "extern",
    "external",
    "interface",
    "long",
    "short",
    "template",
    "this",
    "goto",
    "inline",
    "noinline",
    "volatile",
    "sizeof",
    "union",
    "resource",
    // Types and qualifiers of later GLSL: a GLSL 1.x file's names.
    "sampler",
    "buffer",
    "shared",
    "precise",
    "patch",
    "subroutine",
    "coherent",
    "smooth",
    "flat",
    "noperspective",
    "centroid",
];

/// Prefixes the renamed reserved words.
pub(super) const RENAMED: &str = "isf_w_";

/// `name` as the stages spell it: a reserved word renamed.
pub(super) fn glsl_name(name: &str) -> String {
    match RESERVED.contains(&name) {
        true => format!("{RENAMED}{name}"),
        false => name.to_string(),
    }
}

/// GLSL's built-in functions an older shader may define itself (GLSL 1.20
/// let a file's own function hide the built-in of its name; Vulkan GLSL
/// refuses it): such a file's own is renamed, calls and all.
const BUILT_IN_FUNCTIONS: [&str; 55] = [
    "abs",
    "acos",
    "asin",
    "atan",
    "ceil",
    "clamp",
    "cos",
    "cosh",
    "cross",
    "degrees",
    "distance",
    "dot",
    "exp",
    "exp2",
    "faceforward",
    "floor",
    "fract",
    "inversesqrt",
    "length",
    "log",
    "log2",
    "max",
    "min",
    "mix",
    "mod",
    "normalize",
    "pow",
    "radians",
    "reflect",
    "refract",
    "round",
    "sign",
    "sin",
    "sinh",
    "smoothstep",
    "sqrt",
    "step",
    "tan",
    "tanh",
    "trunc",
    "transpose",
    "inverse",
    "determinant",
    "lessThan",
    "greaterThan",
    "lessThanEqual",
    "greaterThanEqual",
    "matrixCompMult",
    "outerProduct",
    "fma",
    "noise1",
    "noise2",
    // glslang declares AMD's three-way minimum, middle and maximum too.
    "min3",
    "mid3",
    "max3",
];

/// The types a function a file defines may return.
const RETURN_TYPES: [&str; 17] = [
    "void", "float", "int", "bool", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "bvec2",
    "bvec3", "bvec4", "mat2", "mat3", "mat4", "uint",
];

/// The built-in functions `source` defines (or declares) itself.
fn redefined_built_ins(source: &str) -> Vec<&'static str> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    BUILT_IN_FUNCTIONS
        .into_iter()
        .filter(|name| {
            source.match_indices(name).any(|(at, _)| {
                let before = source[..at].trim_end_matches([' ', '\t']);
                let after = source[at + name.len()..].trim_start_matches([' ', '\t']);
                let kind = before.rsplit(|c: char| !is_word(c)).next().unwrap_or("");
                before.len() < at
                    && RETURN_TYPES.contains(&kind)
                    && !source[at + name.len()..].starts_with(is_word)
                    && after.starts_with('(')
                    && !overloads(name, after)
            })
        })
        .collect()
}

/// Built-ins of [`BUILT_IN_FUNCTIONS`] that take a first parameter other
/// than a float (`float`, `vec2` … `vec4`): ints, bools, matrices, or
/// only a `vec3`. Every other one takes only floats first.
const NOT_FLOAT_ONLY: [&str; 19] = [
    "abs",
    "clamp",
    "cross",
    "max",
    "min",
    "mix",
    "sign",
    "transpose",
    "inverse",
    "determinant",
    "lessThan",
    "greaterThan",
    "lessThanEqual",
    "greaterThanEqual",
    "matrixCompMult",
    "outerProduct",
    "min3",
    "mid3",
    "max3",
];

/// Whether a file's function `name` whose parameters are `parameters`
/// (from the bracket on) only overloads the built-in, which Vulkan GLSL
/// allows, so the built-in stays callable beside it: its first parameter
/// is of a type the built-in never takes, as a 2D `cross` (Inigo Quilez's
/// shapes) beside the built-in's `vec3` one, an `int mod(int, int)`, or a
/// `distance` from a struct of the file's.
fn overloads(name: &str, parameters: &str) -> bool {
    let first = parameters[1..]
        .split([',', ')'])
        .next()
        .unwrap_or("")
        .split_whitespace()
        .find(|word| !matches!(*word, "in" | "const" | "highp" | "mediump" | "lowp"));
    let floats = ["float", "vec2", "vec3", "vec4"];
    match name {
        "cross" => first.is_some_and(|kind| kind != "vec3"),
        _ if NOT_FLOAT_ONLY.contains(&name) => false,
        _ => first.is_some_and(|kind| !floats.contains(&kind)),
    }
}

/// The file's text as the front ends take it, line for line. `provided`
/// are the names the prelude declares (uniforms, textures): a file's own
/// `uniform` line for one of them goes, and any other loose uniform (which
/// Vulkan GLSL has not) becomes a global the file may set.
pub(super) fn rewrite(
    source: &str,
    provided: &[String],
    locations: &BTreeMap<String, u32>,
    stage: Stage,
) -> String {
    let source = &with_final_returns(source);
    let mut out = String::with_capacity(source.len() + 256);
    let redefined = redefined_built_ins(source);
    for line in source.split_inclusive('\n') {
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim_start().starts_with("#version") {
            out.push_str(ending);
            continue;
        }
        if let Some((_, kind, name)) = varying(body)
            && let Some(location) = locations.get(&varying_key(kind, name.clone()))
        {
            let direction = if stage == Stage::Vertex { "out" } else { "in" };
            let matrix = matrix_columns(kind).filter(|_| !name.contains('['));
            let declaration = match (matrix, name.split_once('[')) {
                // A matrix: a plain one the file uses, and one varying a
                // column (the epilogue copies them).
                (Some((columns, column)), _) => {
                    let elements: String = (0..columns)
                        .map(|i| {
                            format!(
                                " layout(location = {}) {direction} {column} isf_v_{name}_{i};",
                                location + i
                            )
                        })
                        .collect();
                    format!("{kind} {name};{elements}")
                }
                // An array: a plain one the file uses, and one varying an
                // element on the same line (the epilogue copies them).
                (None, Some((base, count))) => {
                    let count: u32 = count.trim_end_matches(']').trim().parse().unwrap_or(1);
                    let elements: String = (0..count.clamp(1, 32))
                        .map(|i| {
                            format!(
                                " layout(location = {}) {direction} {kind} isf_v_{base}_{i};",
                                location + i
                            )
                        })
                        .collect();
                    format!("{kind} {name};{elements}")
                }
                (None, None) => {
                    format!("layout(location = {location}) {direction} {kind} {name};")
                }
            };
            out.push_str(&declaration);
            out.push_str(ending);
            continue;
        }
        let mut text = match loose_uniform(body) {
            Some((_, names)) if names.iter().all(|n| provided.contains(n)) => String::new(),
            Some((kind, _)) if !SAMPLER_TYPES.contains(&kind) => replace_word(body, "uniform", ""),
            _ => body.to_string(),
        };
        for (from, to) in [
            ("gl_FragColor", "isf_FragColor"),
            ("gl_FragData[0]", "isf_FragColor"),
            ("gl_FragCoord", "isf_FragCoord"),
            ("main", "isf_main"),
        ] {
            text = replace_word(&text, from, to);
        }
        for (from, to) in TEXTURE_CALLS {
            text = replace_call(&text, from, to);
        }
        for name in &redefined {
            text = replace_call(&text, name, &format!("isf_u_{name}"));
        }
        // `smoothstep` with equal edges as the step desktop drivers make
        // it (GLSL leaves it undefined; llvmpipe gives 0). Not in a
        // constant's initializer, which only the built-in may be in.
        if !redefined.contains(&"smoothstep") && !mentions(&text, "const") {
            text = replace_call(&text, "smoothstep", "isf_smoothstep");
        }
        for from in SAMPLER_TYPES {
            text = replace_word(&text, from, "texture2D");
        }
        for word in RESERVED {
            text = replace_word(&text, word, &glsl_name(word));
        }
        out.push_str(&text);
        out.push_str(ending);
    }
    out
}

/// `source` with `return TYPE(0);` before the closing brace of each
/// function returning TYPE whose last statement is not a `return` (GL
/// drivers let such a function run off its end; SPIR-V and WGSL do not).
/// Comments are skipped; the lines stay where they were.
fn with_final_returns(source: &str) -> String {
    let code = code_mask(source);
    let bytes = source.as_bytes();
    let mut inserts = Vec::new();
    let (mut depth, mut function) = (0usize, None);
    for (at, &byte) in bytes.iter().enumerate() {
        if !code[at] {
            continue;
        }
        match byte {
            b'{' => {
                if depth == 0 {
                    function = returned_type(&source[..at]);
                }
                depth += 1;
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0
                    && let Some(kind) = function.take()
                    && !ends_with_return(&source[..at])
                {
                    inserts.push((at, format!(" return {kind}(0); ")));
                }
            }
            _ => {}
        }
    }
    let mut out = source.to_string();
    for (at, text) in inserts.into_iter().rev() {
        out.insert_str(at, &text);
    }
    out
}

/// Which bytes of `source` are code, not comments.
fn code_mask(source: &str) -> Vec<bool> {
    let bytes = source.as_bytes();
    let mut mask = vec![true; bytes.len()];
    let mut at = 0;
    while at < bytes.len() {
        let end = match &bytes[at..] {
            [b'/', b'/', ..] => source[at..].find('\n').map_or(bytes.len(), |n| at + n),
            [b'/', b'*', ..] => source[at + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| at + n + 4),
            _ => {
                at += 1;
                continue;
            }
        };
        mask[at..end].iter_mut().for_each(|m| *m = false);
        at = end;
    }
    mask
}

/// The non-void type a function returns whose body opens after `head`
/// (`TYPE NAME(…)` then spaces), if it is one.
fn returned_type(head: &str) -> Option<&'static str> {
    let head = head.trim_end().strip_suffix(')')?;
    let mut open = 0usize;
    let mut depth = 1usize;
    for (at, c) in head.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            open = at;
            break;
        }
    }
    let before = head[..open].trim_end();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let name_start = before.trim_end_matches(is_word).len();
    let kind = before[..name_start].trim_end();
    let kind = &kind[kind.trim_end_matches(is_word).len()..];
    (depth == 0 && name_start < before.len())
        .then(|| {
            RETURN_TYPES
                .into_iter()
                .find(|t| *t == kind && *t != "void")
        })
        .flatten()
}

/// Whether the last statement before a function's closing brace (its
/// body up to `body`'s end) is a `return`.
fn ends_with_return(body: &str) -> bool {
    let body = body.trim_end();
    let body = body.strip_suffix(';').unwrap_or(body);
    let last = body
        .rfind([';', '{', '}'])
        .map_or(body, |at| &body[at + 1..]);
    let last = last.trim_start();
    last.starts_with("return")
        && !last[6..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}

/// The textures a file samples without declaring them, as GL hosts that
/// bind textures by name let it: a loose `uniform sampler2D NAME;`, and
/// Shadertoy's `iChannel0` … `iChannel3` in an ISF port that kept them;
/// none of `declared` (the header's names), at most 8.
pub(super) fn undeclared_textures(source: &str, declared: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in source.lines() {
        if let Some((kind, declared)) = loose_uniform(line)
            && SAMPLER_TYPES.contains(&kind)
        {
            names.extend(declared);
        }
        let code = line.split("//").next().unwrap_or_default();
        let channels = (0..4).map(|n| format!("iChannel{n}"));
        names.extend(channels.filter(|channel| mentions(code, channel)));
    }
    let mut unique: Vec<String> = Vec::new();
    for name in names {
        if !declared.contains(&name) && !unique.contains(&name) {
            unique.push(name);
        }
    }
    unique.truncate(8);
    unique
}

/// A line `uniform [precision] TYPE NAME[N], …;` outside a block: its
/// type and names (without the arrays' sizes).
fn loose_uniform(line: &str) -> Option<(&str, Vec<String>)> {
    let code = line.split("//").next()?.trim().strip_suffix(';')?;
    let mut words = code
        .split_whitespace()
        .filter(|w| !["highp", "mediump", "lowp"].contains(w));
    if words.next()? != "uniform" {
        return None;
    }
    let kind = words.next()?;
    let rest: String = words.collect::<Vec<_>>().join(" ");
    let names: Option<Vec<String>> = (rest.split(','))
        .map(|name| {
            let name = name.trim().split('[').next()?.trim();
            super::header::is_identifier(name).then(|| name.to_string())
        })
        .collect();
    names.filter(|n| !n.is_empty()).map(|names| (kind, names))
}

/// `text` with every call of `from` (the whole word, then `(`) calling
/// `to` instead.
fn replace_call(text: &str, from: &str, to: &str) -> String {
    replace_where(text, from, to, |after| after.trim_start().starts_with('('))
}

/// Whether `text` holds `word` as a whole word.
fn mentions(text: &str, word: &str) -> bool {
    replace_word(text, word, "") != text
}

/// `text` with every whole-word `from` replaced by `to`.
fn replace_word(text: &str, from: &str, to: &str) -> String {
    replace_where(text, from, to, |_| true)
}

/// `text` with every whole-word `from` whose following text passes
/// `followed` replaced by `to`.
fn replace_where(text: &str, from: &str, to: &str, followed: impl Fn(&str) -> bool) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + from.len()..];
        let word = !before.is_some_and(is_word) && !after.chars().next().is_some_and(is_word);
        out.push_str(&rest[..at]);
        out.push_str(if word && followed(after) { to } else { from });
        rest = after;
    }
    out.push_str(rest);
    out
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
