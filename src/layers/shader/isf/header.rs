//! An ISF 2.0 file's JSON header (the `/*{ … }*/` comment that opens it):
//! its inputs, which become the layer's parameters, its render passes and
//! the images it imports. Errors name the line of the `.fs` file.

use serde_json::Value as Json;

use super::generators::Generator;
use super::madmapper;
use super::shadertoy::DirectiveError;
use super::size::SizeError;
pub use crate::layers::shader::header::is_identifier;
use crate::params::{ParamSpec, SpecError, Value};

/// The most passes one ISF shader may run.
pub const MAX_PASSES: usize = 16;
/// The most inputs (and generators) one ISF shader may declare: room for
/// MadMapper's largest materials.
pub const MAX_INPUTS: usize = 128;
/// The most images one ISF shader may import.
pub const MAX_IMPORTED: usize = 16;
/// The most `VALUES` (and `LABELS`) one `long` input may list.
pub const MAX_VALUES: usize = 256;
/// The longest name (of an input, a pass buffer or an imported image).
pub const MAX_NAME_CHARS: usize = 64;
/// The longest label, and the longest size expression of a pass.
pub const MAX_TEXT_CHARS: usize = 1024;

/// One declared input.
#[derive(Debug, Clone, PartialEq)]
pub struct IsfInput {
    /// Its name, in the GLSL and (after the layer id) in the registry.
    pub name: String,
    /// What it is.
    pub kind: InputKind,
    /// The registry spec, named relative to the layer.
    pub spec: ParamSpec,
}

/// The types of ISF inputs.
#[derive(Debug, Clone, PartialEq)]
pub enum InputKind {
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `event`: true for the one frame after it is set.
    Event,
    /// `long`: an int, chosen from `values` when it has them (by index).
    Long(Vec<i32>),
    /// `color`: RGBA.
    Colour,
    /// `point2D`: a position in pixels (the parameter's z is unused).
    Point,
    /// `image`: a texture input.
    Image,
    /// `audio` (`fft` false: the waveform, 0.5 at silence) or `audioFFT`
    /// (the spectrum): the latest sound heard as a 512 x 1 image.
    Audio {
        /// `audioFFT`.
        fft: bool,
    },
}

/// One render pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IsfPass {
    /// The buffer it draws into (none: the layer's output).
    pub target: Option<String>,
    /// Whether its buffer keeps its content from frame to frame.
    pub persistent: bool,
    /// A float buffer rather than 8 bits a channel.
    pub float: bool,
    /// Its size as expressions of `$WIDTH`, `$HEIGHT` and the inputs.
    pub width: Option<String>,
    /// The same for the height.
    pub height: Option<String>,
    /// What a Shadertoy pass's `iChannel0..3` show, where its file says
    /// (`// @channel0 buffer_a`); none: the layer's `iChannelN`.
    pub channels: Vec<Option<String>>,
}

/// What the header declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IsfHeader {
    /// Inputs, in declaration order.
    pub inputs: Vec<IsfInput>,
    /// Passes, in order (at least one).
    pub passes: Vec<IsfPass>,
    /// Imported images: a name and the path beside the file.
    pub imported: Vec<(String, String)>,
    /// The inputs its `FLAGS` say `generate_as_define` (MadMapper's):
    /// compiled in as macros.
    pub compiled_in: Vec<String>,
    /// Their `NAME_IS_VALUE` macros, at their defaults or as chosen
    /// ([`IsfHeader::choose`]).
    pub defines: Vec<String>,
    /// MadMapper's `GENERATORS`: values sylva advances each frame.
    pub generators: Vec<Generator>,
}

/// A header that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{line}: {problem}")]
pub struct IsfHeaderError {
    /// The line of the `.fs` file.
    pub line: usize,
    /// What is wrong.
    pub problem: IsfHeaderProblem,
}

/// What is wrong with an ISF header (or a Shadertoy file's directives).
#[derive(Debug, thiserror::Error)]
pub enum IsfHeaderProblem {
    /// No `/*` at all.
    #[error("no ISF header (a /*{{ … }}*/ comment) at its start")]
    NoHeader,
    /// A `/*` without its `*/`.
    #[error("the header's comment is never closed")]
    NeverClosed,
    /// The comment is not JSON.
    #[error("the header is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// More entries under `key` (`INPUTS`, `PASSES`, `IMPORTED`) than
    /// `most`.
    #[error("more than {most} {}", .key.to_lowercase())]
    TooMany {
        /// The header's key.
        key: &'static str,
        /// The most it may hold.
        most: usize,
    },
    /// Two inputs of one name.
    #[error("input {0:?} is declared twice")]
    DeclaredTwice(String),
    /// A name, label or size over its length: what it is, and its start.
    #[error("{what} {shown:?}… is longer than a header allows")]
    TooLong {
        /// What it is (`input name`, `input "x"'s LABEL`).
        what: String,
        /// Its first 24 characters.
        shown: String,
    },
    /// An input with no `NAME`.
    #[error("an input without a NAME")]
    NoName,
    /// An input name GLSL cannot use.
    #[error("input name {0:?} is not a GLSL identifier")]
    NotIdentifier(String),
    /// A `TYPE` ISF does not have.
    #[error("input {name:?} has unknown TYPE {kind:?}")]
    UnknownType {
        /// The input.
        name: String,
        /// Its `TYPE`.
        kind: String,
    },
    /// A generator MadMapper has that sylva does not run, or one without
    /// a name GLSL can use.
    #[error(
        "generator {name:?} of TYPE {kind:?}: sylva runs time_base, animator, multiplier, \
         incrementer and pass_thru generators"
    )]
    UnknownGenerator {
        /// The generator.
        name: String,
        /// Its `TYPE`.
        kind: String,
    },
    /// The input's parameter cannot be used.
    #[error("input {name:?}: {error}")]
    Spec {
        /// The input.
        name: String,
        /// Why.
        #[source]
        error: SpecError,
    },
    /// A `long` listing more than [`MAX_VALUES`] `VALUES` or `LABELS`.
    #[error("input {name:?} lists more than {MAX_VALUES} {key}")]
    TooManyValues {
        /// The input.
        name: String,
        /// `VALUES` or `LABELS`.
        key: &'static str,
    },
    /// A pass's size expression does not read.
    #[error(transparent)]
    Size(#[from] SizeError),
    /// A Shadertoy file's `// @channelN` or `// @size` line.
    #[error(transparent)]
    Directive(Box<DirectiveError>),
}

impl From<DirectiveError> for IsfHeaderProblem {
    fn from(error: DirectiveError) -> Self {
        Self::Directive(Box::new(error))
    }
}

/// `text` as strict JSON: each comma that ends a list or an object
/// (`[1, 2,]`) made a space, numbers written as C writes them (`0.`,
/// `.5`) given their zero and `//` comments blanked, outside strings.
/// VDMX and MadMapper read such headers, and so many published files have
/// them. Lines stay where they were, so an error's line is the file's.
fn as_strict_json(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let (mut in_string, mut escaped, mut commented) = (false, false, false);
    for (at, &byte) in bytes.iter().enumerate() {
        if in_string {
            match byte {
                b'\\' if !escaped => escaped = true,
                b'"' if !escaped => in_string = false,
                _ => escaped = false,
            }
            out.push(byte);
            continue;
        }
        let before = at.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(at + 1).copied();
        let digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
        if commented {
            commented = byte != b'\n';
            out.push(if commented { b' ' } else { byte });
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'/' if after == Some(b'/') => {
                commented = true;
                out.push(b' ');
                continue;
            }
            b',' => {
                let next = bytes[at + 1..].iter().find(|b| !b.is_ascii_whitespace());
                if matches!(next, Some(b'}' | b']')) {
                    out.push(b' ');
                    continue;
                }
            }
            b'.' if digit(before) != digit(after) => {
                let (lead, trail): (&[u8], &[u8]) = match digit(before) {
                    true => (b"", b"0"),
                    false => (b"0", b""),
                };
                out.extend_from_slice(lead);
                out.push(byte);
                out.extend_from_slice(trail);
                continue;
            }
            _ => {}
        }
        out.push(byte);
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Reads the header at the start of `source`.
pub fn parse(source: &str) -> Result<IsfHeader, IsfHeaderError> {
    let at_line = |offset: usize| source[..offset].matches('\n').count() + 1;
    let fail = |offset: usize, problem: IsfHeaderProblem| IsfHeaderError {
        line: at_line(offset),
        problem,
    };
    let Some(open) = source.find("/*") else {
        return Err(fail(0, IsfHeaderProblem::NoHeader));
    };
    let body = open + 2;
    let Some(length) = source[body..].find("*/") else {
        return Err(fail(open, IsfHeaderProblem::NeverClosed));
    };
    let text = &source[body..body + length];
    let json: Json = serde_json::from_str(&as_strict_json(text)).map_err(|e| {
        let offset = body + offset_of(text, e.line(), e.column());
        fail(offset, IsfHeaderProblem::NotJson(e))
    })?;
    let at = |name: &str| body + text.find(&format!("\"{name}\"")).unwrap_or(0);
    let mut header = IsfHeader::default();
    // Every list is counted before any of it is read, so a header of
    // 100,000 inputs costs no more than one of 65.
    let count = |key: &str| match json.get(key) {
        Some(Json::Array(list)) => list.len(),
        Some(Json::Object(map)) => map.len(),
        _ => 0,
    };
    for (key, most) in [
        ("INPUTS", MAX_INPUTS),
        ("PASSES", MAX_PASSES),
        ("IMPORTED", MAX_IMPORTED),
        ("GENERATORS", MAX_INPUTS),
    ] {
        if count(key) > most {
            return Err(fail(at(key), IsfHeaderProblem::TooMany { key, most }));
        }
    }
    let inputs = json.get("INPUTS").and_then(Json::as_array);
    for input in inputs.into_iter().flatten() {
        let parsed = parse_input(input).map_err(|p| fail(at("INPUTS"), p))?;
        if header.inputs.iter().any(|i| i.name == parsed.name) {
            let at = at(&parsed.name);
            return Err(fail(at, IsfHeaderProblem::DeclaredTwice(parsed.name)));
        }
        header.inputs.push(parsed);
    }
    header.compiled_in = madmapper::compiled_in(inputs.into_iter().flatten());
    header.choose(&[]);
    let generators = json.get("GENERATORS").and_then(Json::as_array);
    header.generators = (generators.into_iter().flatten())
        .map(Generator::parse)
        .collect::<Result<_, _>>()
        .map_err(|p| fail(at("GENERATORS"), p))?;
    let passes = json.get("PASSES").and_then(Json::as_array);
    for pass in passes.into_iter().flatten() {
        let pass = parse_pass(pass).map_err(|p| fail(at("PASSES"), p))?;
        sizes_read(&pass, &header.inputs).map_err(|p| fail(at("PASSES"), p))?;
        header.passes.push(pass);
    }
    if header.passes.is_empty() {
        header.passes.push(IsfPass::default());
    }
    header.imported = imported(json.get("IMPORTED"));
    if let Some((name, _)) = header
        .imported
        .iter()
        .find(|(n, _)| n.len() > MAX_NAME_CHARS)
    {
        return Err(fail(
            at("IMPORTED"),
            too_long("an imported image's name", name),
        ));
    }
    Ok(header)
}

impl IsfHeader {
    /// Compiles its `generate_as_define` inputs in at the values `chosen`
    /// (by input name), the others at their defaults.
    pub fn choose(&mut self, chosen: &[(String, Value)]) {
        let compiled = (self.inputs.iter()).filter(|i| self.compiled_in.contains(&i.name));
        self.defines = compiled
            .filter_map(|input| {
                let picked = chosen.iter().find(|(name, _)| *name == input.name);
                madmapper::define(input, picked.map_or(&input.spec.default, |(_, v)| v))
            })
            .collect();
    }

    /// The names its inputs, imported images and pass buffers take.
    pub fn names(&self) -> Vec<String> {
        let inputs = self.inputs.iter().map(|i| i.name.clone());
        let imported = self.imported.iter().map(|(name, _)| name.clone());
        let buffers = self.passes.iter().filter_map(|p| p.target.clone());
        inputs.chain(imported).chain(buffers).collect()
    }

    /// Takes each of `names`, a texture the file samples without
    /// declaring it, as an image input showing the layers below (what the
    /// Shadertoy port it usually is read there), so it can be pointed
    /// elsewhere like any other.
    pub fn adopt_images(&mut self, names: Vec<String>) {
        for name in names {
            let spec = ParamSpec::texture(&name, "below");
            self.inputs.push(IsfInput {
                name,
                kind: InputKind::Image,
                spec,
            });
        }
    }
}

/// `what` (`text`) is longer than a header allows.
fn too_long(what: &str, text: &str) -> IsfHeaderProblem {
    IsfHeaderProblem::TooLong {
        what: what.to_string(),
        shown: text.chars().take(24).collect(),
    }
}

/// A pass's size expressions read, so a mistake in one is found when the
/// file is (and by `sylva check`), not only each frame: the render's
/// sides and the numeric inputs are the names they may use.
fn sizes_read(pass: &IsfPass, inputs: &[IsfInput]) -> Result<(), IsfHeaderProblem> {
    let lookup = |name: &str| {
        let numeric = |i: &&IsfInput| {
            i.name == name && !matches!(i.kind, InputKind::Image | InputKind::Audio { .. })
        };
        (matches!(name, "WIDTH" | "HEIGHT") || inputs.iter().any(|i| numeric(&i))).then_some(1.0)
    };
    for expression in [&pass.width, &pass.height].into_iter().flatten() {
        if expression.chars().count() > MAX_TEXT_CHARS {
            return Err(too_long("the size", expression));
        }
        super::size::evaluate(expression, &lookup)?;
    }
    Ok(())
}

/// The byte offset of 1-based `line`, `column` in `text`.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + column.saturating_sub(1)).min(text.len())
}

fn parse_input(input: &Json) -> Result<IsfInput, IsfHeaderProblem> {
    let name = input
        .get("NAME")
        .and_then(Json::as_str)
        .ok_or(IsfHeaderProblem::NoName)?;
    if name.len() > MAX_NAME_CHARS {
        return Err(too_long("input name", name));
    }
    if !is_identifier(name) {
        return Err(IsfHeaderProblem::NotIdentifier(name.to_string()));
    }
    let number = |key: &str| input.get(key).and_then(Json::as_f64).map(|v| v as f32);
    let kind_name = input.get("TYPE").and_then(Json::as_str).unwrap_or("");
    let description = input
        .get("LABEL")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    if description.chars().count() > MAX_TEXT_CHARS {
        return Err(too_long(&format!("input {name:?}'s LABEL"), &description));
    }
    let (kind, spec) = match kind_name {
        "float" => {
            let (min, max) = (number("MIN").unwrap_or(0.0), number("MAX").unwrap_or(1.0));
            let (min, max) = (min.min(max), max.max(min));
            let default = number("DEFAULT").unwrap_or(min).clamp(min, max);
            (InputKind::Float, ParamSpec::float(name, default, min, max))
        }
        "bool" => {
            let default = input.get("DEFAULT").is_some_and(truthy);
            (InputKind::Bool, ParamSpec::bool(name, default))
        }
        // The unit tells control surfaces (the phone page) to offer a
        // button that fires while pressed, not a switch.
        "event" => (
            InputKind::Event,
            ParamSpec::bool(name, false).with_unit("trigger"),
        ),
        // MadMapper's surface shaders say `int` for ISF's `long`.
        "long" | "int" => long(input, name)?,
        "color" => {
            let mut c = [0.0, 0.0, 0.0, 1.0];
            let given = input.get("DEFAULT").and_then(Json::as_array);
            for (slot, v) in c.iter_mut().zip(given.into_iter().flatten()) {
                *slot = v.as_f64().unwrap_or(0.0) as f32;
            }
            (InputKind::Colour, ParamSpec::colour(name, c))
        }
        // MadMapper's `floatRange` is a pair too (a low and a high), its
        // MIN and MAX one number each.
        "point2D" | "floatRange" => {
            let pair = |key: &str| match input.get(key)? {
                Json::Array(v) => Some([v.first()?.as_f64()? as f32, v.get(1)?.as_f64()? as f32]),
                one => one.as_f64().map(|v| [v as f32; 2]),
            };
            let default = pair("DEFAULT").unwrap_or([0.0, 0.0]);
            let min = pair("MIN").map_or(-10_000.0, |m| m[0].min(m[1]));
            let max = pair("MAX").map_or(10_000.0, |m| m[0].max(m[1]));
            let spec = ParamSpec::vec3(
                name,
                [default[0], default[1], 0.0],
                min.min(max),
                max.max(min),
            );
            (InputKind::Point, spec)
        }
        "image" => {
            let source = if name == "inputImage" { "below" } else { "" };
            (InputKind::Image, ParamSpec::texture(name, source))
        }
        "audio" | "audioFFT" => (
            InputKind::Audio {
                fft: kind_name == "audioFFT",
            },
            ParamSpec::texture(name, ""),
        ),
        other => {
            return Err(IsfHeaderProblem::UnknownType {
                name: name.to_string(),
                kind: other.to_string(),
            });
        }
    };
    let spec = spec.with_description(description);
    spec.validate().map_err(|error| IsfHeaderProblem::Spec {
        name: name.to_string(),
        error,
    })?;
    Ok(IsfInput {
        name: name.to_string(),
        kind,
        spec,
    })
}

/// A `long`: an enum over its LABELS (or VALUES) when it lists VALUES,
/// else an int. VALUES that are all strings (MadMapper's way) are the
/// labels of 0, 1, 2…, and a DEFAULT that is one of them picks it.
fn long(input: &Json, name: &str) -> Result<(InputKind, ParamSpec), IsfHeaderProblem> {
    for key in ["VALUES", "LABELS"] {
        let listed = input.get(key).and_then(Json::as_array).map_or(0, Vec::len);
        if listed > MAX_VALUES {
            return Err(IsfHeaderProblem::TooManyValues {
                name: name.to_string(),
                key,
            });
        }
    }
    let listed = input.get("VALUES").and_then(Json::as_array);
    let named: Option<Vec<String>> = listed
        .filter(|l| !l.is_empty())
        .and_then(|l| l.iter().map(|v| v.as_str().map(str::to_string)).collect());
    let default = match input.get("DEFAULT") {
        Some(Json::String(label)) => named
            .as_ref()
            .and_then(|n| n.iter().position(|l| l == label))
            .map(|i| i as f32),
        other => other.and_then(Json::as_f64).map(|v| v as f32),
    };
    let values: Vec<i32> = match &named {
        Some(labels) => (0..labels.len() as i32).collect(),
        None => (listed.into_iter().flatten())
            .filter_map(|v| v.as_f64().map(|v| v as i32))
            .collect(),
    };
    if values.is_empty() {
        let number = |key: &str, fallback: i32| {
            input
                .get(key)
                .and_then(Json::as_f64)
                .map_or(fallback, |v| v as i32)
        };
        let (min, max) = (number("MIN", 0), number("MAX", 100));
        let (min, max) = (min.min(max), max.max(min));
        let default = (default.unwrap_or(min as f32) as i32).clamp(min, max);
        return Ok((
            InputKind::Long(Vec::new()),
            ParamSpec::int(name, default, min, max),
        ));
    }
    let labels: Vec<String> = named.unwrap_or_else(|| {
        (input
            .get("LABELS")
            .and_then(Json::as_array)
            .into_iter()
            .flatten())
        .filter_map(|l| l.as_str().map(str::to_string))
        .collect()
    });
    if let Some(label) = labels.iter().find(|l| l.chars().count() > MAX_TEXT_CHARS) {
        return Err(too_long(&format!("input {name:?}'s label"), label));
    }
    let mut options: Vec<String> = (0..values.len())
        .map(|i| {
            labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| values[i].to_string())
        })
        .collect();
    // Enum options must be distinct names.
    for i in 0..options.len() {
        if options[..i].contains(&options[i]) {
            options[i] = format!("{} ({})", options[i], values[i]);
        }
    }
    let chosen = default.map(|d| d as i32);
    let index = values.iter().position(|v| Some(*v) == chosen).unwrap_or(0);
    let names: Vec<&str> = options.iter().map(String::as_str).collect();
    Ok((
        InputKind::Long(values),
        ParamSpec::enumeration(name, &names, index),
    ))
}

fn parse_pass(pass: &Json) -> Result<IsfPass, IsfHeaderProblem> {
    let text = |key: &str| match pass.get(key) {
        Some(Json::String(s)) => Some(s.clone()),
        Some(Json::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let target = text("TARGET").filter(|t| is_identifier(t));
    if let Some(target) = target.as_ref().filter(|t| t.len() > MAX_NAME_CHARS) {
        return Err(too_long("a pass's TARGET", target));
    }
    Ok(IsfPass {
        target,
        persistent: pass.get("PERSISTENT").is_some_and(truthy),
        float: pass.get("FLOAT").is_some_and(truthy),
        width: text("WIDTH"),
        height: text("HEIGHT"),
        channels: Vec::new(),
    })
}

/// `IMPORTED` as an object of `{ "PATH": … }` by name, or an array of
/// objects with `NAME` and `PATH`.
fn imported(value: Option<&Json>) -> Vec<(String, String)> {
    let path = |v: &Json| v.get("PATH").and_then(Json::as_str).map(str::to_string);
    match value {
        Some(Json::Object(map)) => map
            .iter()
            .filter_map(|(name, v)| Some((name.clone(), path(v)?)))
            .filter(|(name, _)| is_identifier(name))
            .collect(),
        Some(Json::Array(list)) => list
            .iter()
            .filter_map(|v| Some((v.get("NAME")?.as_str()?.to_string(), path(v)?)))
            .filter(|(name, _)| is_identifier(name))
            .collect(),
        _ => Vec::new(),
    }
}

/// JSON's true, a non-zero number, "true" (any case: MadMapper writes
/// "True") or "1".
fn truthy(value: &Json) -> bool {
    match value {
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|v| v != 0.0),
        Json::String(s) => s.eq_ignore_ascii_case("true") || s == "1",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_comma_ending_a_list_or_an_object_is_read_as_vdmx_reads_it() {
        let header = super::parse(
            "/*{\n \"INPUTS\": [ { \"NAME\": \"a\", \"TYPE\": \"float\", },\n ],\n}*/\nvoid main() {}\n",
        );
        let inputs = header.map(|h| h.inputs.into_iter().map(|i| i.name).collect::<Vec<_>>());
        assert_eq!(inputs.ok(), Some(vec!["a".to_string()]));
        assert_eq!(
            super::as_strict_json("[\"a,]\\\",]\", 1,\n]"),
            "[\"a,]\\\",]\", 1 \n]",
            "a comma in a string stays"
        );
        assert_eq!(
            super::as_strict_json("[0., -.5, 1.25, \"v1.//\"] // a, b\n"),
            "[0.0, -0.5, 1.25, \"v1.//\"]        \n"
        );
        let broken = super::parse("/*{\n \"INPUTS\": [ 1,, ]\n}*/\n");
        assert_eq!(
            broken.map_err(|e| e.line),
            Err(2),
            "a stray comma is still an error at its line"
        );
    }

    use super::*;

    #[test]
    fn inputs_passes_and_imports_are_read_and_mistakes_name_their_line() {
        let source = r#"/*{
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "inputImage", "TYPE": "image" },
        { "NAME": "amount", "TYPE": "float", "MIN": 0, "MAX": 2, "DEFAULT": 0.5 },
        { "NAME": "mode", "TYPE": "long", "VALUES": [0, 4, 9], "LABELS": ["a", "b", "c"], "DEFAULT": 4 },
        { "NAME": "at", "TYPE": "point2D", "DEFAULT": [3, 4] },
        { "NAME": "flash", "TYPE": "event" }
    ],
    "PASSES": [ { "TARGET": "half", "WIDTH": "$WIDTH/2", "PERSISTENT": true }, {} ],
    "IMPORTED": { "noise": { "PATH": "noise.png" } }
}*/
void main() {}
"#;
        let header = parse(source).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(header.inputs.len(), 5);
        assert_eq!(header.inputs[0].kind, InputKind::Image);
        assert_eq!(header.inputs[2].kind, InputKind::Long(vec![0, 4, 9]));
        assert_eq!(header.inputs[2].spec.default, crate::params::Value::Enum(1));
        assert_eq!(header.passes.len(), 2);
        assert!(header.passes[0].persistent);
        assert_eq!(header.passes[0].width.as_deref(), Some("$WIDTH/2"));
        assert_eq!(header.imported, vec![("noise".into(), "noise.png".into())]);
        let broken =
            "/*{\n  \"INPUTS\": [\n    { \"NAME\": \"x\" \"TYPE\": \"float\" }\n  ]\n}*/\n";
        let Err(error) = parse(broken) else {
            panic!("broken JSON is refused");
        };
        assert_eq!(error.line, 3, "{error}");
        let unknown = "/*{ \"INPUTS\": [ { \"NAME\": \"x\", \"TYPE\": \"matrix\" } ] }*/";
        assert!(parse(unknown).is_err_and(|e| e.problem.to_string().contains("matrix")));
    }

    #[test]
    fn madmappers_int_labelled_values_and_true_are_read() {
        let source = r#"/*{ "INPUTS": [
        { "NAME": "steps", "TYPE": "int", "MIN": 2, "MAX": 30, "DEFAULT": 5 },
        { "NAME": "mode", "TYPE": "long", "VALUES": ["Density", "Width", "Both"], "DEFAULT": "Width" },
        { "NAME": "on", "TYPE": "bool", "DEFAULT": "True" }
    ] }*/"#;
        let header = parse(source).unwrap_or_else(|e| panic!("{e}"));
        let defaults: Vec<_> = header
            .inputs
            .iter()
            .map(|i| i.spec.default.clone())
            .collect();
        assert_eq!(defaults, [Value::Int(5), Value::Enum(1), Value::Bool(true)]);
        assert_eq!(header.inputs[1].kind, InputKind::Long(vec![0, 1, 2]));
    }
}
