//! Shadertoy shaders: a `.glsl` file with `void mainImage(out vec4
//! fragColor, in vec2 fragCoord)`, run as an ISF shader whose inputs are
//! the texture inputs `iChannel0` … `iChannel3`, with Shadertoy's
//! uniforms (`iResolution`, `iTime`, `iTimeDelta`, `iFrame`, `iFrameRate`,
//! `iMouse` from `master.pointer`, `iDate`, `iChannelResolution`,
//! `iChannelTime`, `iSampleRate`, and `iGlobalTime`, `iTime`'s name in
//! Shadertoy's first years) and its GL conventions (y up, textures
//! sampled upright; a channel the file declares a `samplerCube` looked up
//! by direction in an equirectangular picture) through the same
//! translation as ISF.
//!
//! Multipass: a file named `image.glsl` whose folder holds `buffer_a.glsl`
//! … `buffer_d.glsl` runs them first, each into a persistent float buffer
//! of its name, then itself; `common.glsl` there is put before each. A
//! pass says what a channel shows with a line `// @channel0 buffer_a`
//! (any buffer, reading its last frame when it is itself or comes later,
//! or any texture source: `below`, `previous`, `layer:ID`, `media/…`,
//! `camera`, which the layer names to the media shelf itself, `keyboard`,
//! `audio`);
//! a channel it does not name shows the layer's `iChannelN` parameter. A
//! buffer is drawn at the render's size, or at the size its line
//! `// @size $WIDTH/2 $HEIGHT/2` gives (ISF's size expressions).

use super::IsfError;
use super::glsl::{self, TranslateError, Translated};
use super::header::{InputKind, IsfHeader, IsfHeaderError, IsfInput, IsfPass};
use super::prelude;
use super::rewrite::{Stage, rewrite, writes_frag_coord};
use super::size;
use super::size::SizeError;
use crate::base::{AssetError, Assets, Folder, inside_show};
use crate::engine::inputs::camera::is_camera;
use crate::engine::inputs::keyboard::KEYBOARD;
use crate::engine::inputs::sound::SOUND;
use crate::params::ParamSpec;

/// Texture inputs a Shadertoy shader has.
pub const CHANNELS: usize = 4;

/// The uniforms Shadertoy gives a pass (an exported file may declare
/// them itself: those lines go).
const UNIFORMS: [&str; 11] = [
    "iResolution",
    "iTime",
    "iTimeDelta",
    "iFrame",
    "iFrameRate",
    "iMouse",
    "iDate",
    "iChannelResolution",
    "iChannelTime",
    "iSampleRate",
    "iGlobalTime",
];

/// Whether `file` is a Shadertoy shader.
pub fn is_shadertoy(file: &str) -> bool {
    file.ends_with(".glsl")
}

/// The buffers a multipass shader may have, in the order they run.
pub const BUFFERS: [&str; 4] = ["buffer_a", "buffer_b", "buffer_c", "buffer_d"];

/// One pass: its file as shown, its text, and the buffer it draws into
/// (none: the layer's output).
#[derive(Debug, Clone, PartialEq)]
pub struct ToyPass {
    /// The file as shown (`shaders/toy/fire/buffer_a.glsl`).
    pub file: String,
    /// Its text.
    pub text: String,
    /// The buffer it draws into.
    pub target: Option<String>,
}

/// A Shadertoy shader's files.
pub struct ToyFiles {
    /// Its passes, in the order they run.
    pub passes: Vec<ToyPass>,
    /// The code put before each.
    pub common: Option<ToyPass>,
    /// The files read (names in `shaders/`), for reloading.
    pub watched: Vec<String>,
}

/// The passes of the Shadertoy shader `file` (in `shaders/`) and the
/// common code before them, if any.
pub fn passes(assets: &Assets, file: &str) -> Result<ToyFiles, AssetError> {
    let image = assets.read(Folder::Shaders, file)?;
    let mut watched = vec![file.to_string()];
    let mut passes = Vec::new();
    let mut common = None;
    if let Some(folder) = file
        .strip_suffix("image.glsl")
        .filter(|f| f.is_empty() || f.ends_with('/'))
    {
        let mut sibling = |name: &str| {
            let path = format!("{folder}{name}.glsl");
            let read = assets.read(Folder::Shaders, &path).ok()?;
            watched.push(path);
            Some(read)
        };
        for buffer in BUFFERS {
            if let Some(read) = sibling(buffer) {
                passes.push(ToyPass {
                    file: read.display,
                    text: read.text,
                    target: Some(buffer.to_string()),
                });
            }
        }
        common = sibling("common").map(|read| ToyPass {
            file: read.display,
            text: read.text,
            target: None,
        });
    }
    passes.push(ToyPass {
        file: image.display,
        text: image.text,
        target: None,
    });
    Ok(ToyFiles {
        passes,
        common,
        watched,
    })
}

/// The header a Shadertoy shader is run with: its four channels, and a
/// pass for each file with what its `// @channelN` lines name; a line
/// naming what no channel can show is refused at its line, since the
/// channel would otherwise show black without a word.
pub fn header(passes: &[ToyPass]) -> Result<IsfHeader, IsfError> {
    let inputs = (0..CHANNELS)
        .map(|i| {
            let name = format!("iChannel{i}");
            IsfInput {
                spec: ParamSpec::texture(name.as_str(), "")
                    .with_description("What iChannel shows: below, previous, layer:ID, media/…"),
                name,
                kind: InputKind::Image,
            }
        })
        .collect();
    let buffers: Vec<&str> = passes.iter().filter_map(|p| p.target.as_deref()).collect();
    let passes = passes
        .iter()
        .map(|pass| {
            let (channels, [width, height]) = directives(pass, &buffers)?;
            Ok(IsfPass {
                target: pass.target.clone(),
                persistent: true,
                float: true,
                width,
                height,
                channels,
            })
        })
        .collect::<Result<_, IsfError>>()?;
    Ok(IsfHeader {
        inputs,
        passes,
        ..IsfHeader::default()
    })
}

/// What the `// @channelN SOURCE` lines of `pass` name, by channel, and
/// the size its `// @size WIDTH HEIGHT` line gives a buffer (ISF's size
/// expressions: `// @size $WIDTH/2 $HEIGHT/2`, `// @size 256 256`);
/// `buffers` are the passes' buffers there are.
fn directives(pass: &ToyPass, buffers: &[&str]) -> Result<Directives, IsfError> {
    let mut channels = vec![None; CHANNELS];
    let mut size = [None, None];
    for (at, line) in pass.text.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("//").map(str::trim) else {
            continue;
        };
        let refuse = |problem: DirectiveError| IsfError::Header {
            file: pass.file.clone(),
            reason: IsfHeaderError {
                line: at + 1,
                problem: problem.into(),
            },
        };
        if let Some(sides) = rest.strip_prefix("@size") {
            size = buffer_size(sides, pass.target.is_some()).map_err(refuse)?;
            continue;
        }
        let Some(rest) = rest.strip_prefix("@channel") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(n), Some(source)) = (words.next(), words.next()) else {
            return Err(refuse(DirectiveError::ChannelUsage));
        };
        let Some(slot) = n.parse::<usize>().ok().and_then(|n| channels.get_mut(n)) else {
            return Err(refuse(DirectiveError::NoSuchChannel(n.to_string())));
        };
        if let Some(problem) = source_problem(source, buffers) {
            return Err(refuse(DirectiveError::Source {
                channel: n.to_string(),
                named: source.to_string(),
                problem,
            }));
        }
        *slot = Some(source.to_string());
    }
    Ok((channels, size))
}

/// A pass's channels' sources and its buffer's width and height
/// expressions.
type Directives = (Vec<Option<String>>, [Option<String>; 2]);

/// What is wrong with a `// @channelN SOURCE` or `// @size` line.
#[derive(Debug, thiserror::Error)]
pub enum DirectiveError {
    /// `// @channel` without a number and a source.
    #[error("write `// @channel0 SOURCE`")]
    ChannelUsage,
    /// A channel past the last (as written).
    #[error("@channel{0}: the channels are 0-{last}", last = CHANNELS - 1)]
    NoSuchChannel(String),
    /// A source the channel cannot show.
    #[error("@channel{channel} {named}: {problem}")]
    Source {
        /// The channel, as written.
        channel: String,
        /// The source named.
        named: String,
        /// Why not.
        problem: SourceProblem,
    },
    /// `// @size` in the image pass.
    #[error("@size: the image pass draws at the render's size; a buffer may have its own")]
    SizeInImage,
    /// `// @size` without exactly two sides.
    #[error("write `// @size WIDTH HEIGHT`, e.g. `// @size $WIDTH/2 $HEIGHT/2`")]
    SizeUsage,
    /// A side that does not read.
    #[error("@size: {0} (it may read $WIDTH and $HEIGHT)")]
    Size(#[source] SizeError),
}

/// Why a channel cannot show a source.
#[derive(Debug, thiserror::Error)]
pub enum SourceProblem {
    /// A pass buffer this shader does not have.
    #[error("there is no {0}.glsl beside this file")]
    NoBuffer(String),
    /// A media name outside the show folder.
    #[error(transparent)]
    Outside(#[from] AssetError),
    /// Nothing a texture input takes.
    #[error(
        "not a source: buffer_a … buffer_d, below, previous, layer:ID, media/…, camera, camera:NAME, keyboard or audio"
    )]
    Unknown,
}

/// The width and height expressions of a `// @size` line's `sides`, in a
/// buffer pass (`buffer`) only: the image pass draws at the render's size.
fn buffer_size(sides: &str, buffer: bool) -> Result<[Option<String>; 2], DirectiveError> {
    if !buffer {
        return Err(DirectiveError::SizeInImage);
    }
    let sides: Vec<&str> = sides.split_whitespace().collect();
    let [width, height] = sides[..] else {
        return Err(DirectiveError::SizeUsage);
    };
    let render = |name: &str| matches!(name, "WIDTH" | "HEIGHT").then_some(1.0);
    for side in [width, height] {
        size::evaluate(side, &render).map_err(DirectiveError::Size)?;
    }
    Ok([Some(width.to_string()), Some(height.to_string())])
}

/// Why `source` cannot be shown in a channel, if it cannot: a pass buffer
/// of this shader, or any source a texture input takes.
fn source_problem(source: &str, buffers: &[&str]) -> Option<SourceProblem> {
    if BUFFERS.contains(&source) {
        return (!buffers.contains(&source)).then(|| SourceProblem::NoBuffer(source.to_string()));
    }
    if source.starts_with("media/") {
        // The shelf refuses it too, but only once it is on stage.
        return inside_show(source).err().map(SourceProblem::Outside);
    }
    let known = matches!(source, "below" | "previous" | KEYBOARD | SOUND)
        || source
            .strip_prefix("layer:")
            .is_some_and(|id| !id.is_empty())
        || is_camera(source);
    (!known).then_some(SourceProblem::Unknown)
}

/// Translates each of `passes`, `common` before each.
pub fn translate(
    passes: &[ToyPass],
    common: Option<&ToyPass>,
) -> Result<Translated, TranslateError> {
    let textures: Vec<String> = (0..CHANNELS).map(|i| format!("iChannel{i}")).collect();
    let mut prelude = String::from(
        "#version 450\n\
         layout(set = 0, binding = 0, std140) uniform ShadertoyUniforms {\n\
         \x20   vec4 sylva_resolution;\n    vec4 iMouse;\n    vec4 iDate;\n\
         \x20   vec4 sylva_channel0;\n    vec4 sylva_channel1;\n    vec4 sylva_channel2;\n    vec4 sylva_channel3;\n\
         \x20   float iTime;\n    float iTimeDelta;\n    float iFrameRate;\n    int iFrame;\n\
         };\n\
         layout(set = 0, binding = 1) uniform sampler isf_sampler;\n",
    );
    for (i, name) in textures.iter().enumerate() {
        prelude.push_str(&format!(
            "layout(set = 0, binding = {}) uniform texture2D {name};\n",
            i + 2
        ));
    }
    prelude.push_str(prelude::TEXTURE_FUNCTIONS);
    prelude.push_str(prelude::BIAS_FUNCTIONS);
    prelude.push_str(
        "layout(location = 0) in vec2 isf_FragNormCoord;\n\
         layout(location = 0) out vec4 isf_FragColor;\n\
         vec3 iResolution;\n\
         vec3 iChannelResolution[4];\n\
         float iChannelTime[4];\n\
         const float iSampleRate = 44100.0;\n\
         #define iGlobalTime iTime\n",
    );
    let writes = (passes.iter().chain(common)).any(|p| writes_frag_coord(&p.text));
    let coord = prelude::frag_coord("sylva_resolution", writes);
    prelude.push_str(&coord.0);
    let provided: Vec<String> = (textures.iter().cloned())
        .chain(UNIFORMS.iter().map(|u| u.to_string()))
        .collect();
    let common_text = common.map_or(String::new(), |c| {
        rewrite(&c.text, &provided, &Default::default(), Stage::Fragment) + "\n"
    });
    let common_lines = common_text.matches('\n').count();
    let mut fragments = Vec::with_capacity(passes.len());
    let mut module = None;
    for pass in passes {
        let image = pass.target.is_none();
        let text = common_text.clone() + &pass_text(&pass.text, &provided, image, &coord.1);
        let translated = glsl::to_wgsl(&prelude, &text, naga::ShaderStage::Fragment, &pass.file)
            .map_err(|mut error| {
                // A line of the common code is that file's.
                match common.filter(|_| error.line > 0 && error.line <= common_lines) {
                    Some(common) => error.file = common.file.clone(),
                    None => error.line = error.line.saturating_sub(common_lines),
                }
                error
            })?;
        fragments.push(translated.1);
        module.get_or_insert(translated.0);
    }
    let corner = prelude::CORNER;
    let vertex_source = format!(
        "#version 450\n\
         layout(location = 0) out vec2 isf_FragNormCoord;\n\
         void main() {{\n\
         \x20   vec2 corner = {corner};\n\
         \x20   isf_FragNormCoord = corner;\n\
         \x20   gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n\
         }}\n"
    );
    let (_, vertex) = glsl::to_wgsl(
        "",
        &vertex_source,
        naga::ShaderStage::Vertex,
        "(the built-in vertex stage)",
    )?;
    let (uniforms, uniform_size) = module
        .as_ref()
        .map_or((Vec::new(), 16), glsl::uniform_members);
    Ok(Translated {
        vertex,
        fragments,
        uniforms,
        uniform_size,
        textures,
        builtin_vertex: true,
    })
}

/// A pass's text as naga takes it: rewritten, then the entry point
/// (`first` its first lines). The image pass is shown `opaque`, as
/// Shadertoy shows it, and its colour held where an 8-bit target would
/// and decoded from display space to linear; a buffer keeps what it wrote.
fn pass_text(source: &str, provided: &[String], opaque: bool, first: &str) -> String {
    let mut text = rewrite(source, provided, &Default::default(), Stage::Fragment);
    text.push_str("\nvoid main() {\n");
    text.push_str(first);
    text.push_str(
        "\
         \x20   iResolution = sylva_resolution.xyz;\n\
         \x20   iChannelResolution[0] = sylva_channel0.xyz;\n\
         \x20   iChannelResolution[1] = sylva_channel1.xyz;\n\
         \x20   iChannelResolution[2] = sylva_channel2.xyz;\n\
         \x20   iChannelResolution[3] = sylva_channel3.xyz;\n\
         \x20   iChannelTime = float[4](iTime, iTime, iTime, iTime);\n\
         \x20   vec4 colour = vec4(0.0);\n\
         \x20   mainImage(colour, isf_FragCoord.xy);\n\
         \x20   isf_FragColor = colour;\n\
         }\n",
    );
    if opaque {
        text = text.replace(
            "    isf_FragColor = colour;\n}\n",
            "    isf_FragColor = isf_shown(vec4(colour.rgb, 1.0));\n}\n",
        );
    }
    text
}
