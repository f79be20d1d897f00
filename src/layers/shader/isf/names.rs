//! The names GL drivers let older ISF and Shadertoy files use that Vulkan
//! GLSL keeps for itself: reserved words and the built-in functions an
//! input is named after (renamed wherever the file names them, the
//! built-ins' calls excepted), the built-in functions and non-square
//! matrix types a file defines as its own functions (renamed, calls and
//! all), and `case` as a variable's name.

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

/// Prefixes the renamed reserved words and inputs.
pub(super) const RENAMED: &str = "isf_w_";

/// `name` as the stages spell it: a reserved word, or an input or
/// texture named after a built-in function (which would hide the
/// built-in from the file and from the prelude's own functions), renamed.
pub(super) fn glsl_name(name: &str) -> String {
    match RESERVED.contains(&name) || hides_built_in(name) {
        true => format!("{RENAMED}{name}"),
        false => name.to_string(),
    }
}

/// The name a uniform member spelled `member` by [`glsl_name`] was given.
pub(super) fn given_name(member: &str) -> &str {
    (member.strip_prefix(RENAMED))
        .filter(|name| RESERVED.contains(name) || hides_built_in(name))
        .unwrap_or(member)
}

/// Whether a uniform named `name` would hide a built-in function that
/// the file or the prelude calls.
pub(super) fn hides_built_in(name: &str) -> bool {
    BUILT_IN_FUNCTIONS.contains(&name) || PRELUDE_CALLS.contains(&name)
}

/// The built-in functions the prelude calls beyond
/// [`BUILT_IN_FUNCTIONS`], and the texture calls a file makes.
const PRELUDE_CALLS: [&str; 20] = [
    "texture",
    "textureCube",
    "textureLod",
    "texture2DLod",
    "textureCubeLod",
    "textureGrad",
    "textureSize",
    "texelFetch",
    "floatBitsToUint",
    "floatBitsToInt",
    "uintBitsToFloat",
    "intBitsToFloat",
    "equal",
    "notEqual",
    "any",
    "all",
    "not",
    "dFdx",
    "dFdy",
    "fwidth",
];

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

/// The matrix types of later GLSL, which a GLSL 1.x file (without them)
/// may define as its own functions ("emulate GLSL ES 3" helpers): such a
/// file's own is renamed, calls and all, as a built-in function is.
const MATRIX_TYPES: [&str; 9] = [
    "mat2x2", "mat2x3", "mat2x4", "mat3x2", "mat3x3", "mat3x4", "mat4x2", "mat4x3", "mat4x4",
];

/// The types a function a file defines may return.
pub(super) const RETURN_TYPES: [&str; 17] = [
    "void", "float", "int", "bool", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "bvec2",
    "bvec3", "bvec4", "mat2", "mat3", "mat4", "uint",
];

/// The built-in functions (and matrix types) `source` defines (or
/// declares) itself as functions.
pub(super) fn redefined_built_ins(source: &str) -> Vec<&'static str> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    (BUILT_IN_FUNCTIONS.into_iter().chain(MATRIX_TYPES))
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
        // A type's name is never a function's as well.
        _ if MATRIX_TYPES.contains(&name) => false,
        _ if NOT_FLOAT_ONLY.contains(&name) => false,
        _ => first.is_some_and(|kind| !floats.contains(&kind)),
    }
}
