//! Presets: a TOML file naming the layers in compositing order, the script,
//! the mapping files and the parameter values. Parsing checks the file's own
//! shape (unknown keys are errors with file:line); applying checks every
//! parameter name against the registry, so a typo is reported where it is.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use crate::base::inside_show;
use crate::params::{ParamKind, Registry, Source, Value};

/// A problem in a preset, located at file:line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PresetError {
    /// The file, as shown to the performer.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetFile {
    #[serde(default)]
    description: String,
    layers: Vec<Spanned<String>>,
    script: Option<Spanned<String>>,
    #[serde(default)]
    mappings: Vec<Spanned<String>>,
    #[serde(default)]
    params: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// Layers one preset may stack: more than any stage needs, few enough that
/// building them never freezes the frames for long.
pub const MAX_LAYERS: usize = 32;

/// `[params]` entries one preset may hold.
pub const MAX_PARAMS: usize = 4_096;

/// One `[params]` entry with the line it was written on.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetParam {
    /// Full parameter name.
    pub name: String,
    /// The value as written.
    pub value: toml::Value,
    /// Line in the file.
    pub line: usize,
}

/// A parsed preset.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// The file name shown in messages.
    pub file: String,
    /// One line saying what the preset shows.
    pub description: String,
    /// Layer ids in compositing order, with their lines.
    pub layers: Vec<(String, usize)>,
    /// Script path inside the show folder.
    pub script: Option<String>,
    /// Mapping files inside the show folder.
    pub mappings: Vec<String>,
    /// Parameter values.
    pub params: Vec<PresetParam>,
}

impl Preset {
    /// Parses preset text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, PresetError> {
        let at = |offset: usize| line_of(text, offset);
        let error = |line: usize, message: String| PresetError {
            file: file.to_string(),
            line,
            message,
        };
        let raw: PresetFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| at(s.start));
            error(line, e.message().to_string())
        })?;
        if raw.layers.len() > MAX_LAYERS {
            return Err(error(
                raw.layers.get(MAX_LAYERS).map_or(1, |l| at(l.span().start)),
                format!(
                    "{} layers; a preset may have at most {MAX_LAYERS}",
                    raw.layers.len()
                ),
            ));
        }
        if raw.params.len() > MAX_PARAMS {
            return Err(error(
                1,
                format!(
                    "{} parameters; a preset may set at most {MAX_PARAMS}",
                    raw.params.len()
                ),
            ));
        }
        let mut layers = Vec::new();
        for layer in &raw.layers {
            let line = at(layer.span().start);
            if !is_layer_id(layer.get_ref()) {
                return Err(error(
                    line,
                    format!(
                        "layer {:?} must be `kind` or `kind.name` (lowercase letters, digits, _)",
                        layer.get_ref()
                    ),
                ));
            }
            if layers.iter().any(|(id, _)| id == layer.get_ref()) {
                return Err(error(
                    line,
                    format!("layer {:?} is listed twice", layer.get_ref()),
                ));
            }
            layers.push((layer.get_ref().clone(), line));
        }
        let checked_path = |p: &Spanned<String>| {
            inside_show(p.get_ref())
                .map(|_| p.get_ref().clone())
                .map_err(|e| error(at(p.span().start), e.to_string()))
        };
        let script = raw.script.as_ref().map(checked_path).transpose()?;
        let mappings = raw
            .mappings
            .iter()
            .map(checked_path)
            .collect::<Result<_, _>>()?;
        let mut params: Vec<PresetParam> = raw
            .params
            .into_iter()
            .map(|(name, value)| PresetParam {
                line: at(name.span().start),
                name: name.into_inner(),
                value: value.into_inner(),
            })
            .collect();
        params.sort_by_key(|p| p.line);
        Ok(Self {
            file: file.to_string(),
            description: raw.description,
            layers,
            script,
            mappings,
            params,
        })
    }

    /// Writes every `[params]` value into the registry at once (no
    /// smoothing). Stops at the first unknown name or mistyped value.
    pub fn apply(&self, registry: &mut Registry) -> Result<(), PresetError> {
        for param in &self.params {
            let error = |message: String| PresetError {
                file: self.file.clone(),
                line: param.line,
                message,
            };
            let value = toml_value(&param.value).ok_or_else(|| {
                error(format!(
                    "{:?}: unsupported value {}",
                    param.name, param.value
                ))
            })?;
            if let Value::Text(text) = &value
                && registry
                    .spec(&param.name)
                    .is_some_and(|spec| spec.kind == ParamKind::Texture)
            {
                crate::engine::inputs::check_name(text).map_err(|e| error(e.to_string()))?;
            }
            registry
                .set_now(&param.name, value, Source::Preset)
                .map_err(|e| error(e.to_string()))?;
        }
        Ok(())
    }

    /// The line where layer `id` is listed, for errors found when building it.
    pub fn line_of_layer(&self, id: &str) -> usize {
        self.layers
            .iter()
            .find(|(l, _)| l == id)
            .map_or(1, |(_, line)| *line)
    }
}

/// `kind` or `kind.name`, lowercase letters, digits and `_`.
pub(super) fn is_layer_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    parts.len() <= 2 && parts.iter().all(|p| word(p))
}

/// Converts a TOML value to a registry value; arrays of 3 or 4 numbers
/// become vec3 or colour.
pub fn toml_value(value: &toml::Value) -> Option<Value> {
    match value {
        toml::Value::Float(v) => Some(Value::Float(*v as f32)),
        toml::Value::Integer(v) => Some(Value::Int(i32::try_from(*v).ok()?)),
        toml::Value::Boolean(v) => Some(Value::Bool(*v)),
        toml::Value::String(s) => Some(Value::Text(s.clone())),
        toml::Value::Array(items) => {
            let numbers: Option<Vec<f32>> = items
                .iter()
                .map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                .map(|v| v.map(|v| v as f32))
                .collect();
            match numbers?.as_slice() {
                [x, y, z] => Some(Value::Vec3([*x, *y, *z])),
                [r, g, b, a] => Some(Value::Colour([*r, *g, *b, *a])),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The TOML form of a parameter value, as presets write it.
pub fn toml_of(spec: &crate::params::ParamSpec, value: &Value) -> toml::Value {
    let floats = |v: &[f32]| {
        toml::Value::Array(
            v.iter()
                .map(|c| toml::Value::Float(f64::from(*c)))
                .collect(),
        )
    };
    match value {
        Value::Float(v) => toml::Value::Float(f64::from(*v)),
        Value::Int(v) => toml::Value::Integer(i64::from(*v)),
        Value::Bool(v) => toml::Value::Boolean(*v),
        Value::Enum(_) => toml::Value::String(spec.display(value)),
        Value::Vec3(v) => floats(v),
        Value::Colour(v) => floats(v),
        Value::List(v) => floats(v),
        Value::Text(s) => toml::Value::String(s.clone()),
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamSpec;

    const GOOD: &str = r#"
description = "test"
layers = ["shader.sky", "shader.trails"]

[params]
"shader.sky.speed" = 2
"master.tint" = [1.0, 0.5, 0.25]
"#;

    #[test]
    fn a_good_preset_parses_and_applies() {
        let preset = Preset::parse("presets/t.toml", GOOD);
        let Ok(preset) = preset else {
            panic!("{preset:?}");
        };
        assert_eq!(preset.layers[1], ("shader.trails".to_string(), 3));
        let mut registry = Registry::new();
        registry.register(ParamSpec::float("shader.sky.speed", 1.0, 0.0, 10.0));
        registry.register(ParamSpec::colour("master.tint", [1.0; 4]));
        assert_eq!(preset.apply(&mut registry), Ok(()));
        assert_eq!(registry.float("shader.sky.speed"), 2.0);
        assert_eq!(
            registry.get("master.tint"),
            Some(&Value::Colour([1.0, 0.5, 0.25, 1.0]))
        );
    }

    #[test]
    fn unknown_keys_and_parameters_are_reported_with_their_line() {
        let unknown_key = Preset::parse("p.toml", "layers = []\nspeed = 3\n");
        assert!(
            matches!(unknown_key, Err(PresetError { line: 2, .. })),
            "{unknown_key:?}"
        );
        let preset = Preset::parse("p.toml", GOOD);
        let applied = preset.map(|p| p.apply(&mut Registry::new()));
        assert!(
            matches!(applied, Ok(Err(PresetError { line: 6, .. }))),
            "{applied:?}"
        );
        let escaping = Preset::parse("p.toml", "layers = []\nscript = \"../x.lua\"\n");
        assert!(
            matches!(escaping, Err(PresetError { line: 2, .. })),
            "{escaping:?}"
        );
        let bad_layer = Preset::parse("p.toml", "layers = [\n\"Shader/x\"]\n");
        assert!(
            matches!(bad_layer, Err(PresetError { line: 2, .. })),
            "{bad_layer:?}"
        );
    }
}
