//! Shadertoy shaders: a `.glsl` file with `void mainImage(out vec4
//! fragColor, in vec2 fragCoord)`, run as a one-pass ISF shader whose
//! inputs are the texture inputs `iChannel0` … `iChannel3`, with
//! Shadertoy's uniforms (`iResolution`, `iTime`, `iTimeDelta`, `iFrame`,
//! `iFrameRate`, `iMouse` from `master.pointer`, `iDate`,
//! `iChannelResolution`) and its GL conventions (y up, textures sampled
//! upright) through the same translation as ISF.

use super::glsl::{self, Stage, TranslateError, Translated};
use super::header::{InputKind, IsfHeader, IsfInput, IsfPass};
use crate::params::ParamSpec;

/// Texture inputs a Shadertoy shader has.
pub const CHANNELS: usize = 4;

/// Whether `file` is a Shadertoy shader.
pub fn is_shadertoy(file: &str) -> bool {
    file.ends_with(".glsl")
}

/// The header a Shadertoy shader is run with: its four channels.
pub fn header() -> IsfHeader {
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
    IsfHeader {
        inputs,
        passes: vec![IsfPass::default()],
        imported: Vec::new(),
    }
}

/// Translates the Shadertoy shader `source` (`file` for errors).
pub fn translate(source: &str, file: &str) -> Result<Translated, TranslateError> {
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
    prelude.push_str(
        "layout(location = 0) in vec2 isf_FragNormCoord;\n\
         layout(location = 0) out vec4 isf_FragColor;\n\
         vec3 iResolution;\n\
         vec3 iChannelResolution[4];\n\
         vec2 isf_flip(vec2 c) { return vec2(c.x, 1.0 - c.y); }\n\
         #define isf_FragCoord vec4(gl_FragCoord.x, sylva_resolution.y - gl_FragCoord.y, gl_FragCoord.zw)\n\
         #define isf_texture2D(image, c) texture(sampler2D(image, isf_sampler), isf_flip(c))\n\
         #define isf_texture2DRect(image, c) isf_texture2D(image, c)\n\
         #define isf_textureLod(image, c, lod) textureLod(sampler2D(image, isf_sampler), isf_flip(c), lod)\n\
         #define isf_texelFetch(image, p, lod) texelFetch(sampler2D(image, isf_sampler), \
         ivec2((p).x, textureSize(sampler2D(image, isf_sampler), 0).y - 1 - (p).y), lod)\n",
    );
    let mut text = glsl::rewrite(source, &textures, &Default::default(), Stage::Fragment);
    for name in &textures {
        for call in ["textureLod", "texelFetch"] {
            text = text.replace(&format!("{call}({name},"), &format!("isf_{call}({name},"));
        }
    }
    text.push_str(
        "\nvoid main() {\n\
         \x20   iResolution = sylva_resolution.xyz;\n\
         \x20   iChannelResolution[0] = sylva_channel0.xyz;\n\
         \x20   iChannelResolution[1] = sylva_channel1.xyz;\n\
         \x20   iChannelResolution[2] = sylva_channel2.xyz;\n\
         \x20   iChannelResolution[3] = sylva_channel3.xyz;\n\
         \x20   vec4 colour = vec4(0.0);\n\
         \x20   mainImage(colour, isf_FragCoord.xy);\n\
         \x20   isf_FragColor = vec4(colour.rgb, 1.0);\n\
         }\n",
    );
    let (module, fragment) = glsl::to_wgsl(&prelude, &text, naga::ShaderStage::Fragment, file)?;
    let vertex_source = "#version 450\n\
         layout(location = 0) out vec2 isf_FragNormCoord;\n\
         void main() {\n\
         \x20   vec2 corner = vec2(float((gl_VertexIndex << 1) & 2), float(gl_VertexIndex & 2));\n\
         \x20   isf_FragNormCoord = corner;\n\
         \x20   gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);\n\
         }\n";
    let (_, vertex) = glsl::to_wgsl(
        "",
        vertex_source,
        naga::ShaderStage::Vertex,
        "(the built-in vertex stage)",
    )?;
    let (uniforms, uniform_size) = glsl::uniform_members(&module);
    Ok(Translated {
        vertex,
        fragment,
        uniforms,
        uniform_size,
        textures,
    })
}
