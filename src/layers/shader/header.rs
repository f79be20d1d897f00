//! The parameter header of a `shader` layer's WGSL file: comment lines of
//! the form
//!
//! ```text
//! // @param speed float 1.0 min=0 max=4 smooth=0.2 unit=x "Swirl speed"
//! // @param tint colour 1,0.6,0.3,1 "Colour of the glow"
//! // @param mode enum rings options=bands|rings|waves
//! // @param count int 5 min=1 max=12
//! // @param mirror bool false
//! // @param centre vec3 0,0,0 min=-1 max=1
//! // @param picture texture media/stage.png "What it warps"
//! ```
//!
//! Each becomes `<layer id>.<name>` in the registry and a field of the
//! shader's `params` uniform block; a `texture` becomes a texture the
//! shader samples by that name, its value naming the source (`below`,
//! `previous`, `layer:ID`, `media/…`), with `<name>_speed`, `<name>_loop`
//! and `<name>_position` for a clip.

use crate::params::{ParamKind, ParamSpec, SpecError};

/// One declared parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderParam {
    /// Name as written (and the WGSL field name).
    pub name: String,
    /// The registry spec, named relative to the layer (without its id).
    pub spec: ParamSpec,
}

impl HeaderParam {
    /// Whether it is a texture input rather than a field of `params`.
    pub fn is_texture(&self) -> bool {
        self.spec.kind == ParamKind::Texture
    }

    /// The parameter names it takes: its own, and a texture's clip controls.
    pub fn names(&self) -> Vec<String> {
        let controls = CLIP_CONTROLS.iter().filter(|_| self.is_texture());
        std::iter::once(self.name.clone())
            .chain(controls.map(|c| format!("{}_{c}", self.name)))
            .collect()
    }
}

/// A malformed `@param` line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{line}: {problem}")]
pub struct HeaderError {
    /// 1-based line in the WGSL file.
    pub line: usize,
    /// What is wrong.
    pub problem: HeaderProblem,
}

/// What is wrong with a `@param` line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeaderProblem {
    /// Fewer than three words.
    #[error("expected `// @param NAME TYPE DEFAULT [key=value ...] [\"description\"]`")]
    Usage,
    /// The name is not a WGSL identifier.
    #[error("{0:?} is not a WGSL identifier")]
    NotIdentifier(String),
    /// A word after the default is not `key=value`.
    #[error("{0:?}: expected `// @param NAME TYPE DEFAULT [key=value ...] [\"description\"]`")]
    NotKeyValue(String),
    /// An option this header does not know.
    #[error("unknown option {0:?} (min, max, smooth, unit, options)")]
    UnknownOption(String),
    /// An option that should be a number.
    #[error("{key}={value} is not a number")]
    NotNumber {
        /// The option.
        key: String,
        /// Its text.
        value: String,
    },
    /// A default that should be `count` comma-separated numbers.
    #[error("{text:?} is not {count} comma-separated numbers")]
    NotNumbers {
        /// The text.
        text: String,
        /// How many were expected.
        count: usize,
    },
    /// An int default that is not a whole number.
    #[error("{0:?} is not an int")]
    NotInt(String),
    /// An int option that is not a whole number.
    #[error("{key}={value} is not a whole number")]
    NotWhole {
        /// The option.
        key: String,
        /// Its text.
        value: String,
    },
    /// A bool default that is neither `true` nor `false`.
    #[error("{0:?} is not true or false")]
    NotBool(String),
    /// An enum without `options=`.
    #[error("an enum needs options=a|b|c")]
    NoOptions,
    /// An enum default missing from its options.
    #[error("default {0:?} is not one of the options")]
    NotAnOption(String),
    /// A type this header does not know.
    #[error("unknown type {0:?} (float, int, bool, enum, vec3, colour, texture)")]
    UnknownType(String),
    /// The range, default or smoothing cannot be used.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The name is declared on an earlier line.
    #[error("parameter {0:?} is declared twice")]
    Twice(String),
    /// More texture inputs than a shader may bind.
    #[error("more than {MAX_TEXTURES} texture inputs")]
    TooManyTextures,
}

/// The most texture inputs one shader declares.
pub const MAX_TEXTURES: usize = 8;

/// What a texture input `name` adds for a clip it shows: its speed, loop
/// and position.
pub const CLIP_CONTROLS: [&str; 3] = ["speed", "loop", "position"];

/// Reads every `// @param` line of `source`.
pub fn parse(source: &str) -> Result<Vec<HeaderParam>, HeaderError> {
    let mut params: Vec<HeaderParam> = Vec::new();
    for (index, text) in source.lines().enumerate() {
        let Some(declaration) = text.trim_start().strip_prefix("//").map(str::trim_start) else {
            continue;
        };
        let Some(rest) = declaration.strip_prefix("@param") else {
            continue;
        };
        let error = |problem: HeaderProblem| HeaderError {
            line: index + 1,
            problem,
        };
        let param = parse_line(rest).map_err(error)?;
        let names = param.names();
        if params
            .iter()
            .any(|p| p.names().iter().any(|n| names.contains(n)))
        {
            return Err(error(HeaderProblem::Twice(param.name)));
        }
        if param.is_texture() && params.iter().filter(|p| p.is_texture()).count() == MAX_TEXTURES {
            return Err(error(HeaderProblem::TooManyTextures));
        }
        params.push(param);
    }
    Ok(params)
}

fn parse_line(rest: &str) -> Result<HeaderParam, HeaderProblem> {
    let (fields, description) = match rest.split_once('"') {
        Some((fields, quoted)) => (fields, quoted.trim_end().trim_end_matches('"')),
        None => (rest, ""),
    };
    let mut words = fields.split_whitespace();
    let (Some(name), Some(kind), Some(default)) = (words.next(), words.next(), words.next()) else {
        return Err(HeaderProblem::Usage);
    };
    if !is_identifier(name) {
        return Err(HeaderProblem::NotIdentifier(name.to_string()));
    }
    let options: Vec<(&str, &str)> = words
        .map(|w| {
            w.split_once('=')
                .ok_or_else(|| HeaderProblem::NotKeyValue(w.to_string()))
        })
        .collect::<Result<_, _>>()?;
    let option = |key: &str| options.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    for (key, _) in &options {
        if !["min", "max", "smooth", "unit", "options"].contains(key) {
            return Err(HeaderProblem::UnknownOption(key.to_string()));
        }
    }
    let number = |key: &str, fallback: f32| {
        option(key).map_or(Ok(fallback), |v| {
            v.parse().map_err(|_| HeaderProblem::NotNumber {
                key: key.to_string(),
                value: v.to_string(),
            })
        })
    };
    let floats = |text: &str, count: usize| {
        let values: Option<Vec<f32>> = text.split(',').map(|v| v.trim().parse().ok()).collect();
        values
            .filter(|v| v.len() == count)
            .ok_or_else(|| HeaderProblem::NotNumbers {
                text: text.to_string(),
                count,
            })
    };
    let spec = match kind {
        "float" => {
            let default = floats(default, 1)?[0];
            ParamSpec::float(name, default, number("min", 0.0)?, number("max", 1.0)?)
        }
        "int" => {
            let default: i32 = default
                .parse()
                .map_err(|_| HeaderProblem::NotInt(default.to_string()))?;
            let whole = |key: &str, fallback: i32| {
                option(key).map_or(Ok(fallback), |v| {
                    v.parse().map_err(|_| HeaderProblem::NotWhole {
                        key: key.to_string(),
                        value: v.to_string(),
                    })
                })
            };
            let (min, max) = (whole("min", 0)?, whole("max", 100)?);
            ParamSpec::int(name, default, min, max)
        }
        "texture" => ParamSpec::texture(name, default),
        "bool" => match default {
            "true" => ParamSpec::bool(name, true),
            "false" => ParamSpec::bool(name, false),
            _ => return Err(HeaderProblem::NotBool(default.to_string())),
        },
        "enum" => {
            let names: Vec<&str> = option("options")
                .ok_or(HeaderProblem::NoOptions)?
                .split('|')
                .collect();
            let index = names
                .iter()
                .position(|o| *o == default)
                .ok_or_else(|| HeaderProblem::NotAnOption(default.to_string()))?;
            ParamSpec::enumeration(name, &names, index)
        }
        "vec3" => {
            let v = floats(default, 3)?;
            let (min, max) = (number("min", -1.0)?, number("max", 1.0)?);
            ParamSpec::vec3(name, [v[0], v[1], v[2]], min, max)
        }
        "colour" | "color" => {
            let v = floats(default, 4).or_else(|_| {
                floats(default, 3).map(|mut v| {
                    v.push(1.0);
                    v
                })
            })?;
            ParamSpec::colour(name, [v[0], v[1], v[2], v[3]])
        }
        other => return Err(HeaderProblem::UnknownType(other.to_string())),
    };
    let spec = spec
        .with_smoothing(number("smooth", 0.0)?)
        .with_unit(option("unit").unwrap_or(""))
        .with_description(description);
    spec.validate()?;
    Ok(HeaderParam {
        name: name.to_string(),
        spec,
    })
}

/// Whether `name` is an identifier in WGSL and GLSL alike.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Value;

    #[test]
    fn every_type_parses_with_its_options() {
        let source = "// @param speed float 1.5 min=0 max=4 smooth=0.2 unit=x \"Swirl speed\"\n\
                      // @param tint colour 1,0.5,0.25 \"Glow\"\n\
                      fn f() {}\n\
                      // @param mode enum rings options=bands|rings\n\
                      // @param count int 5 min=1 max=12\n\
                      // @param mirror bool true\n\
                      // @param centre vec3 0,1,0 min=-2 max=2\n";
        let params = parse(source);
        let Ok(params) = params else {
            panic!("{params:?}");
        };
        assert_eq!(params.len(), 6);
        assert_eq!(params[0].spec.default, Value::Float(1.5));
        assert_eq!(params[0].spec.description, "Swirl speed");
        assert_eq!(params[0].spec.smoothing, 0.2);
        assert_eq!(params[1].spec.default, Value::Colour([1.0, 0.5, 0.25, 1.0]));
        assert_eq!(params[2].spec.default, Value::Enum(1));
        assert_eq!(params[5].spec.default, Value::Vec3([0.0, 1.0, 0.0]));
    }

    #[test]
    fn mistakes_name_their_line() {
        for (source, line) in [
            ("\n// @param speed float\n", 2),
            ("// @param x float 1\n// @param x float 2\n", 2),
            ("\n\n// @param x enum a options=b|c\n", 3),
            ("// @param 1x float 0\n", 1),
            ("// @param x float 0 colour=red\n", 1),
            ("// @param x matrix 0\n", 1),
            ("\n// @param x float 0.5 min=2 max=1\n", 2),
            ("// @param x int 5 min=10 max=1\n", 1),
            ("// @param x int 5 min=1.5 max=9\n", 1),
            ("// @param x float 0.5 min=nan\n", 1),
            ("// @param x float 0.5 max=inf\n", 1),
            ("// @param x float nan\n", 1),
            ("\n\n// @param v vec3 0,0,0 min=3 max=-3\n", 3),
            ("// @param a texture below\n// @param a_speed float 1\n", 2),
            ("// @param a_loop bool true\n// @param a texture below\n", 2),
            (&"// @param t texture below\n".repeat(2), 2),
        ] {
            let result = parse(source);
            assert!(
                matches!(&result, Err(HeaderError { line: l, .. }) if *l == line),
                "{source:?}: {result:?}"
            );
        }
    }

    #[test]
    fn textures_are_inputs_not_fields_and_at_most_eight() {
        let source = "// @param picture texture media/stage.png \"What it warps\"\n\
                      // @param amount float 0.5\n";
        let Ok(params) = parse(source) else {
            panic!("parses");
        };
        assert!(params[0].is_texture() && !params[1].is_texture());
        assert_eq!(
            params[0].spec.default,
            crate::params::Value::Text("media/stage.png".into())
        );
        assert_eq!(
            params[0].names(),
            [
                "picture",
                "picture_speed",
                "picture_loop",
                "picture_position"
            ]
        );
        let many: String = (0..=MAX_TEXTURES)
            .map(|i| format!("// @param t{i} texture below\n"))
            .collect();
        assert!(matches!(
            parse(&many),
            Err(HeaderError { problem: HeaderProblem::TooManyTextures, line }) if line == MAX_TEXTURES + 1
        ));
    }
}
