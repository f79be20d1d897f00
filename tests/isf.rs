//! ISF shaders of the test's own, each against what the CPU computes: a
//! filter over the layer below, a generator reading its inputs and
//! coordinates, a multipass shader with a half-size buffer, a persistent
//! buffer that accumulates; and `sylva check`'s file:line for a broken
//! header and broken GLSL.

use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::show::Show;

use crate::support;
use crate::support::{Checked, display_encoded};

/// The flat colour below the effect, linear, as the file samples it.
fn below_seen() -> [f32; 3] {
    [0.25, 0.5, 0.75].map(display_encoded)
}

/// Render size.
const SIZE: [u32; 2] = [8, 4];

/// A flat colour below the effect.
const SOLID: &str = "// @param colour colour 0.5,0.5,0.5,1\n\
                     @fragment\n\
                     fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
                     \x20   return params.colour;\n}\n";

/// A show with `shader.below` (a flat colour) and `shader.fx` running
/// `effect` (a file in `shaders/`), with `files` (paths in the show
/// folder and their text) and `settings` in the preset.
fn effect_show(name: &str, effect: &str, files: &[(&str, &str)], settings: &str) -> Show {
    let preset = format!(
        "layers = [\"shader.below\", \"shader.fx\"]\n[params]\n\
         \"shader.below.file\" = \"shader/solid.wgsl\"\n\
         \"shader.below.colour\" = [0.25, 0.5, 0.75, 1.0]\n\
         \"shader.fx.file\" = \"{effect}\"\n{settings}"
    );
    let mut all = vec![
        ("presets/isf.toml", preset.as_str()),
        ("shaders/shader/solid.wgsl", SOLID),
    ];
    all.extend_from_slice(files);
    support::show(support::show_folder(name, &all), "isf", OUTPUT_FORMAT)
}

/// The same running `isf/test.fs` with `fs` as its text.
fn isf_show(name: &str, fs: &str, settings: &str) -> Show {
    effect_show(
        name,
        "isf/test.fs",
        &[("shaders/isf/test.fs", fs)],
        settings,
    )
}

/// `frames` frames of `dt`, then the effect layer's texels, rows top
/// first, in the display space the file wrote them in (the layer holds
/// them decoded to linear).
fn run(show: &mut Show, frames: u32, dt: f32) -> Vec<[f32; 4]> {
    let mut output = RenderTarget::new(&show.ground.gpu.device, "isf.output", SIZE, OUTPUT_FORMAT);
    for _ in 0..frames {
        show.frame(dt, None, &mut output, |_, _| {});
    }
    let errors: Vec<String> = show
        .ground
        .errors
        .snapshot()
        .iter()
        .map(|e| format!("{}: {}", e.origin, e.message))
        .collect();
    assert!(errors.is_empty(), "no errors: {errors:?}");
    match show
        .compositor()
        .layer_target("shader.fx")
        .map(|t| read_rgba16f(&show.ground.gpu, t))
    {
        Some(Ok(texels)) => (texels.into_iter())
            .map(|[r, g, b, a]| {
                let [r, g, b] = [r, g, b].map(display_encoded);
                [r, g, b, a]
            })
            .collect(),
        other => panic!("readback: {other:?}"),
    }
}

fn assert_near(got: [f32; 4], want: [f32; 4], what: &str) {
    let off = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0, f32::max);
    assert!(off < 2e-3, "{what}: {got:?}, expected {want:?}");
}

#[test]
fn an_isf_filter_inverts_the_layers_below() {
    let fs = r#"/*{ "ISFVSN": "2", "INPUTS": [ { "NAME": "inputImage", "TYPE": "image" } ] }*/
void main() {
    vec4 below = IMG_THIS_PIXEL(inputImage);
    gl_FragColor = vec4(1.0 - below.rgb, 1.0);
}
"#;
    let mut show = isf_show("isf_filter", fs, "");
    let [r, g, b] = below_seen().map(|c| 1.0 - c);
    for texel in run(&mut show, 1, 1.0 / 60.0) {
        assert_near(texel, [r, g, b, 1.0], "1 - below");
    }
}

#[test]
fn an_isf_generator_reads_its_inputs_and_gl_coordinates() {
    let fs = r#"/*{
    "ISFVSN": "2",
    "INPUTS": [
        { "NAME": "gain", "TYPE": "float", "MIN": 0, "MAX": 4, "DEFAULT": 1 },
        { "NAME": "pick", "TYPE": "long", "VALUES": [2, 7, 40], "LABELS": ["two", "seven", "forty"], "DEFAULT": 2 },
        { "NAME": "tint", "TYPE": "color", "DEFAULT": [0.1, 0.2, 0.3, 1.0] },
        { "NAME": "blue", "TYPE": "bool", "DEFAULT": true }
    ]
}*/
void main() {
    vec2 pixel = gl_FragCoord.xy / RENDERSIZE;
    float b = blue ? tint.b + float(pick) / 100.0 : 0.0;
    gl_FragColor = vec4(isf_FragNormCoord.x * gain, pixel.y, b, 1.0);
}
"#;
    let settings = "\"shader.fx.gain\" = 0.5\n\"shader.fx.pick\" = \"forty\"\n";
    let mut show = isf_show("isf_generator", fs, settings);
    let texels = run(&mut show, 1, 1.0 / 60.0);
    let [w, h] = SIZE.map(|s| s as f32);
    for (i, texel) in texels.iter().enumerate() {
        let (x, row) = ((i as u32 % SIZE[0]) as f32, (i as u32 / SIZE[0]) as f32);
        // GL's y counts from the bottom row.
        let y = (h - row - 0.5) / h;
        let want = [(x + 0.5) / w * 0.5, y, 0.3 + 0.40, 1.0];
        assert_near(*texel, want, &format!("texel {i}"));
    }
}

#[test]
fn an_isf_multipass_shader_reads_its_half_size_buffer() {
    let fs = r#"/*{
    "ISFVSN": "2",
    "INPUTS": [ { "NAME": "level", "TYPE": "float", "DEFAULT": 0.5 } ],
    "PASSES": [ { "TARGET": "half", "WIDTH": "$WIDTH / 2.0", "HEIGHT": "$HEIGHT / 2.0", "FLOAT": true }, {} ]
}*/
void main() {
    if (PASSINDEX == 0) {
        gl_FragColor = vec4(level, RENDERSIZE.x / 100.0, 0.0, 1.0);
    } else {
        vec4 small = IMG_NORM_PIXEL(half, isf_FragNormCoord);
        gl_FragColor = vec4(small.r + 0.25, small.g, IMG_SIZE(half).y / 100.0, 1.0);
    }
}
"#;
    let mut show = isf_show("isf_multipass", fs, "");
    let half = (SIZE[0] / 2) as f32 / 100.0;
    let rows = (SIZE[1] / 2) as f32 / 100.0;
    for texel in run(&mut show, 1, 1.0 / 60.0) {
        assert_near(
            texel,
            [0.75, half, rows, 1.0],
            "the second pass over the first's buffer",
        );
    }
}

#[test]
fn an_isf_persistent_buffer_accumulates_frame_after_frame() {
    let fs = r#"/*{
    "ISFVSN": "2",
    "PASSES": [ { "TARGET": "sum", "PERSISTENT": true, "FLOAT": true }, {} ]
}*/
void main() {
    vec4 before = IMG_THIS_PIXEL(sum);
    if (PASSINDEX == 0) {
        gl_FragColor = vec4(before.r + 0.125, float(FRAMEINDEX), TIMEDELTA, 1.0);
    } else {
        gl_FragColor = before;
    }
}
"#;
    let mut show = isf_show("isf_persistent", fs, "");
    let texels = run(&mut show, 6, 0.25);
    for texel in texels {
        assert_near(texel, [6.0 * 0.125, 5.0, 0.25, 1.0], "six frames summed");
    }
}

#[test]
fn a_shadertoy_shader_gets_its_uniforms_and_channels() {
    let glsl = "void mainImage(out vec4 fragColor, in vec2 fragCoord) {\n\
                \x20   vec2 uv = fragCoord / iResolution.xy;\n\
                \x20   float below = texture(iChannel0, uv).b;\n\
                \x20   fragColor = vec4(uv, below + float(iFrame) + iChannelResolution[0].x / 100.0, 0.5);\n}\n";
    let files = [("shaders/toy/test.glsl", glsl)];
    let channel = "\"shader.fx.iChannel0\" = \"below\"\n";
    let mut show = effect_show("isf_shadertoy", "toy/test.glsl", &files, channel);
    let texels = run(&mut show, 1, 1.0 / 60.0);
    let [w, h] = SIZE.map(|s| s as f32);
    for (i, texel) in texels.iter().enumerate() {
        let (x, row) = ((i as u32 % SIZE[0]) as f32, (i as u32 / SIZE[0]) as f32);
        let below = below_seen()[2];
        let want = [(x + 0.5) / w, (h - row - 0.5) / h, below + w / 100.0, 1.0];
        assert_near(*texel, want, &format!("texel {i}"));
    }
}

#[test]
fn a_shadertoy_buffer_feeds_back_into_itself_and_the_image_pass() {
    let common = "const float STEP = 0.125;\n";
    let buffer = "// @channel0 buffer_a\n\
                  void mainImage(out vec4 fragColor, in vec2 fragCoord) {\n\
                  \x20   vec4 before = texture(iChannel0, fragCoord / iResolution.xy);\n\
                  \x20   fragColor = vec4(before.r + STEP, 0.0, 0.0, 0.5);\n}\n";
    let image = "// @channel1 buffer_a\n\
                 void mainImage(out vec4 fragColor, in vec2 fragCoord) {\n\
                 \x20   vec4 sum = texture(iChannel1, fragCoord / iResolution.xy);\n\
                 \x20   fragColor = vec4(sum.r, sum.a, texture(iChannel0, vec2(0.5)).b, 0.0);\n}\n";
    let files = [
        ("shaders/toy/sum/common.glsl", common),
        ("shaders/toy/sum/buffer_a.glsl", buffer),
        ("shaders/toy/sum/image.glsl", image),
    ];
    let channel = "\"shader.fx.iChannel0\" = \"below\"\n";
    let mut show = effect_show(
        "isf_shadertoy_buffers",
        "toy/sum/image.glsl",
        &files,
        channel,
    );
    for texel in run(&mut show, 4, 1.0 / 60.0) {
        assert_near(
            texel,
            [0.5, 0.5, below_seen()[2], 1.0],
            "four frames of the buffer, and the layer below",
        );
    }
}

#[test]
fn check_names_the_line_of_a_broken_isf_header_and_of_broken_glsl() {
    let broken_json = "/*{\n  \"ISFVSN\": \"2\",\n  \"INPUTS\": [ { \"NAME\": \"a\" \"TYPE\": \"float\" } ]\n}*/\nvoid main() { gl_FragColor = vec4(1.0); }\n";
    let broken_glsl =
        "/*{ \"ISFVSN\": \"2\" }*/\n\nvoid main() {\n    gl_FragColor = vec4(nowhere, 1.0);\n}\n";
    let root = support::show_folder(
        "isf_check",
        &[
            ("shaders/isf/json.fs", broken_json),
            ("shaders/isf/glsl.fs", broken_glsl),
        ],
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["check", "--project"])
        .arg(&root)
        .output()
        .checked("running sylva check");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "check fails: {said}");
    assert!(
        said.contains("shaders/isf/json.fs:3:"),
        "the JSON's line: {said}"
    );
    assert!(
        said.contains("shaders/isf/glsl.fs:4:"),
        "the GLSL's line: {said}"
    );
}
