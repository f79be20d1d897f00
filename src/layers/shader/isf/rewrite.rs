//! An ISF or Shadertoy file's own GLSL, rewritten line for line into the
//! Vulkan GLSL both front ends take (glsl.rs gives it its prelude): the
//! varyings at explicit locations (an array as one varying an element, a
//! matrix as one a column; one no vertex stage writes a plain global),
//! GLSL 1.x's `gl_FragColor`, the texture calls of every era onto the
//! prelude's functions, `sampler2D` parameters as `texture2D`, loose
//! uniforms as globals, the names Vulkan GLSL keeps for itself renamed
//! ([`super::names`]), `smoothstep` with equal edges a step, and a final
//! `return` for a function that can run off its end (GL drivers let all
//! of these by); a fragment stage's own `out vec4` is the colour shown,
//! and MadMapper's dialect is read by [`madmapper`].

use std::collections::BTreeMap;

use super::madmapper;
use super::names::{RESERVED, RETURN_TYPES, glsl_name, hides_built_in, redefined_built_ins};

/// Which stage a file's text is rewritten for.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// Varyings are outputs.
    Vertex,
    /// Varyings are inputs.
    Fragment,
}

/// Locations for the varyings the vertex stage declares, from 1 (0
/// carries `isf_FragNormCoord`); a varying only the fragment stage
/// declares (its `.vs` lost, or never written) has none, and is a plain
/// global.
pub(super) fn varying_locations(vertex: &str) -> BTreeMap<String, u32> {
    let mut locations = BTreeMap::new();
    let mut next = 1;
    for line in with_macro_sizes(vertex).lines() {
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

/// `source` with each varying array's size that a macro gives
/// (`vNoises[NUM_ARCS]`, `#define NUM_ARCS 8`) written as its number, so
/// both stages locate the array element by element alike.
fn with_macro_sizes(source: &str) -> String {
    let numbers: Vec<(&str, &str)> = (source.lines())
        .filter_map(|line| {
            let define = line
                .trim()
                .strip_prefix('#')?
                .trim_start()
                .strip_prefix("define ")?;
            let mut words = define.split_whitespace();
            let (name, value) = (words.next()?, words.next()?);
            (words.next().is_none() && value.parse::<u32>().is_ok()).then_some((name, value))
        })
        .collect();
    let mut out = String::with_capacity(source.len());
    for line in source.split_inclusive('\n') {
        match varying(line).is_some_and(|(_, _, name)| name.contains('[')) {
            true => out.push_str(
                &numbers
                    .iter()
                    .fold(line.to_string(), |line, (name, value)| {
                        line.replace(&format!("[{name}]"), &format!("[{value}]"))
                    }),
            ),
            false => out.push_str(line),
        }
    }
    out
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

/// A line `[interpolation] varying|in|out [precision] TYPE NAME;`: its
/// qualifier, type and name.
fn varying(line: &str) -> Option<(&str, &str, String)> {
    let code = line.split("//").next()?.trim().strip_suffix(';')?;
    let qualifiers = [
        "highp",
        "mediump",
        "lowp",
        "smooth",
        "flat",
        "noperspective",
        "centroid",
    ];
    let words: Vec<&str> = (code.split_whitespace())
        .filter(|w| !qualifiers.contains(w))
        .collect();
    let qualifier = *words.first()?;
    if !["varying", "in", "out"].contains(&qualifier) {
        return None;
    }
    let rest = &words[1..];
    match rest[..] {
        [kind, name] if super::header::is_identifier(name.split('[').next()?) => {
            Some((qualifier, kind, name.to_string()))
        }
        _ => None,
    }
}

/// The texture calls of each GLSL era, and the function of
/// [`super::prelude::TEXTURE_FUNCTIONS`] each becomes.
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
    let source = &with_final_returns(&with_macro_sizes(source));
    let mut out = String::with_capacity(source.len() + 256);
    let redefined = redefined_built_ins(source);
    // Inputs named after a built-in function, renamed where they are not
    // called (the call is the built-in's).
    let hiding: Vec<&String> = provided.iter().filter(|n| hides_built_in(n)).collect();
    let switches = mentions(source, "switch");
    let madmapper = madmapper::dialect(source);
    for line in source.split_inclusive('\n') {
        let ending = if line.ends_with('\n') { "\n" } else { "" };
        let body = line.trim_end_matches(['\n', '\r']);
        if body.trim_start().starts_with("#version") {
            out.push_str(ending);
            continue;
        }
        if let Some(text) = madmapper.then(|| madmapper::line(body)).flatten() {
            out.push_str(&text);
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
        // GLSL 1.30's own output: the colour a GL host shows.
        if let Some(("out", "vec4", name)) = varying(body).as_ref().map(|(q, k, n)| (*q, *k, n))
            && stage == Stage::Fragment
        {
            out.push_str(&format!("#define {name} isf_FragColor{ending}"));
            continue;
        }
        if let Some((qualifier, kind, name)) = varying(body)
            && stage == Stage::Fragment
            && qualifier != "out"
        {
            // No stage before writes it: GL reads zero.
            let zero = if name.contains('[') {
                String::new()
            } else {
                format!(" = {kind}(0)")
            };
            out.push_str(&format!("{kind} {name}{zero};{ending}"));
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
        for name in &hiding {
            let not_called = |after: &str| !after.trim_start().starts_with('(');
            text = replace_where(&text, name, &glsl_name(name), not_called);
        }
        // `case` as a name (GLSL 1.10 had no `switch`): every one in a
        // file without a `switch`, else one a label cannot be.
        text = replace_where(&text, "case", "isf_w_case", |after| {
            !switches
                || after
                    .trim_start()
                    .starts_with([')', ',', ';', '.', '[', '='])
        });
        out.push_str(&text);
        out.push_str(ending);
    }
    out
}

/// Whether `source` reads `name` past its `xy` (`iMouse.z`, `.zw`…), as
/// a vec4.
pub(super) fn reads_past_xy(source: &str, name: &str) -> bool {
    source.match_indices(name).any(|(at, _)| {
        let before = source[..at].chars().next_back();
        let after = source[at + name.len()..].trim_start();
        let swizzle = after.strip_prefix('.').map_or("", |s| s.trim_start());
        let swizzle = swizzle.split(|c: char| !c.is_alphabetic()).next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && swizzle.is_some_and(|s| s.contains(['z', 'w', 'b', 'a', 'p', 'q']))
    })
}

/// Whether `source` writes `gl_FragCoord` (a Shadertoy port's
/// `fragCoord = …`), which GL lets a file do: the coordinate is then a
/// global the entry point sets, not the built-in.
pub(super) fn writes_frag_coord(source: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    source.match_indices("gl_FragCoord").any(|(at, word)| {
        let mut rest = &source[at + word.len()..];
        if source[..at].ends_with(is_word) || rest.starts_with(is_word) {
            return false;
        }
        // Past a swizzle or an index, an assignment.
        loop {
            let trimmed = rest.trim_start();
            if let Some(swizzle) = trimmed.strip_prefix('.') {
                rest = swizzle.trim_start().trim_start_matches(is_word);
            } else if let Some(index) = trimmed.strip_prefix('[') {
                rest = index.split_once(']').map_or("", |(_, after)| after);
            } else {
                rest = trimmed;
                break;
            }
        }
        let assigns = rest.starts_with('=') && !rest.starts_with("==");
        assigns
            || ["+=", "-=", "*=", "/=", "++", "--"]
                .iter()
                .any(|op| rest.starts_with(op))
    })
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

/// Whether `text` calls (or defines) the function `name`: the whole word,
/// then `(`.
pub(super) fn calls(text: &str, name: &str) -> bool {
    replace_call(text, name, "") != text
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
        let locations = varying_locations("varying vec2 left;\nout highp vec2 right;\n");
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
        let own = rewrite(
            "out vec4 shown;\nout vec3 other;\n",
            &[],
            &locations,
            Stage::Fragment,
        );
        assert_eq!(own, "#define shown isf_FragColor\nout vec3 other;\n");
    }

    #[test]
    fn names_gl_let_a_file_use_are_renamed_and_written_coordinates_seen() {
        let text = rewrite(
            "float f(vec2 case) { return step(0.5, step) + case.x; }\nmat4 mat4x3(vec3 a) { return mat4(1.0); }\n",
            &["step".to_string()],
            &BTreeMap::new(),
            Stage::Fragment,
        );
        assert_eq!(
            text,
            "float f(vec2 isf_w_case) { return step(0.5, isf_w_step) + isf_w_case.x; }\nmat4 isf_u_mat4x3(vec3 a) { return mat4(1.0); }\n"
        );
        let labels = "switch (i) { case 1: x = case; }\nvarying vec2 lost;\n";
        let text = rewrite(labels, &[], &BTreeMap::new(), Stage::Fragment);
        assert_eq!(
            text,
            "switch (i) { case 1: x = isf_w_case; }\nvec2 lost = vec2(0);\n"
        );
        assert!(reads_past_xy("if (iMouse . z > 0.0)", "iMouse"));
        assert!(!reads_past_xy(
            "uv - iMouse + myMouse.z + iMouse.xy",
            "iMouse"
        ));
        assert!(writes_frag_coord("gl_FragCoord.xy = p;"));
        assert!(writes_frag_coord("gl_FragCoord[0] += 1.0;"));
        assert!(!writes_frag_coord(
            "if (gl_FragCoord.x == 0.5) c = gl_FragCoord;"
        ));
    }
}
