//! What GL drivers let ISF and Shadertoy files do that Vulkan GLSL does
//! not, each as a small shader of the test's own rendered by `sylva
//! render` against what the CPU expects: through glslang (the default)
//! and through naga's GLSL front end (`SYLVA_GLSL=naga`, the fallback
//! where glslang is not built). A function taking a `sampler2D`,
//! `isnan`/`isinf`, non-square matrices, `texelFetch` and `textureSize`,
//! a `samplerCube` channel showing an equirectangular picture, and a
//! loose uniform, a reserved word as an input's name, a built-in
//! function the file defines itself and a function that can run off its
//! end; an input named after a built-in function, an output of NaN or an
//! alpha past 1, a written `gl_FragCoord`, a `mat4x3` function and a
//! `case` variable, `IMG_PIXEL` with a bias, a varying no vertex stage
//! writes and an ISF port's `iMouse` read as a `vec4`; and MadMapper's
//! dialect of ISF, a surface shader and its mesh stage.

use std::process::Command;

use crate::support::{self, Checked, display_encoded};

/// A flat colour below the effects.
const SOLID: &str = "// @param colour colour 0.5,0.5,0.5,1\n\
                     @fragment\n\
                     fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
                     \x20   return params.colour;\n}\n";

/// Render size.
const SIZE: [u32; 2] = [8, 4];

/// The colour the first of `files` (the show's `shaders/`, name and
/// text) draws over a flat (0.25, 0.5, 0.75) (linear) through
/// `translator` (`SYLVA_GLSL`), as 8-bit sRGB, each pixel's: the
/// output's curve is the plain clamp, so a file's display value shows as
/// that value's 8-bit code, as in any other host.
fn rendered(name: &str, files: &[(&str, &str)], settings: &str, translator: &str) -> Vec<[u8; 3]> {
    let effect = files[0].0;
    let preset = format!(
        "layers = [\"shader.below\", \"shader.fx\"]\n[params]\n\
         \"master.tonemap\" = \"clamp\"\n\
         \"shader.below.file\" = \"shader/solid.wgsl\"\n\
         \"shader.below.colour\" = [0.25, 0.5, 0.75, 1.0]\n\
         \"shader.fx.file\" = \"{effect}\"\n{settings}"
    );
    let shaders: Vec<(String, &str)> = (files.iter())
        .map(|(file, text)| (format!("shaders/{file}"), *text))
        .collect();
    let mut show = vec![
        ("presets/p.toml", preset.as_str()),
        ("shaders/shader/solid.wgsl", SOLID),
    ];
    show.extend(shaders.iter().map(|(file, text)| (file.as_str(), *text)));
    let root = support::show_folder(&format!("glsl_{name}_{translator}"), &show);
    // Top half red, bottom half blue: a sky for the cube map's channel.
    let sky = image::RgbaImage::from_fn(16, 8, |_, y| match y < 4 {
        true => image::Rgba([255, 0, 0, 255]),
        false => image::Rgba([0, 0, 255, 255]),
    });
    std::fs::create_dir_all(root.join("media")).checked("the media folder");
    sky.save(root.join("media/sky.png"))
        .checked("the sky picture");
    // A cube map's six faces, each of its own colour.
    std::fs::create_dir_all(root.join("media/cube")).checked("the cube's folder");
    for (face, colour) in CUBE_FACES {
        image::RgbaImage::from_pixel(16, 16, image::Rgba(colour))
            .save(root.join(format!("media/cube/{face}.png")))
            .checked("a cube face");
    }
    let out = root.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .env("SYLVA_GLSL", translator)
        .args([
            "render",
            "--preset",
            "p",
            "--frames",
            "1",
            "--size",
            "8x4",
            "--project",
        ])
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .output()
        .checked("running sylva render");
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success() && !said.contains("ERROR"),
        "{effect} through {translator}: {said}"
    );
    let picture = image::open(out.join("frame_00000.png"))
        .checked("reading the frame")
        .to_rgb8();
    std::fs::remove_dir_all(root).ok();
    assert_eq!(picture.dimensions(), (SIZE[0], SIZE[1]));
    picture.pixels().map(|p| p.0).collect()
}

/// A display value as its 8-bit code.
fn code(value: f32) -> u8 {
    (value.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// The flat colour below, as a file samples it (display-encoded).
fn below_seen() -> [f32; 3] {
    [0.25, 0.5, 0.75].map(display_encoded)
}

/// The cube map's faces in `media/cube/`: +X red, −X green, +Y blue, −Y
/// black, +Z white, −Z cyan.
const CUBE_FACES: [(&str, [u8; 4]); 6] = [
    ("px", [255, 0, 0, 255]),
    ("nx", [0, 255, 0, 255]),
    ("py", [0, 0, 255, 255]),
    ("ny", [0, 0, 0, 255]),
    ("pz", [255, 255, 255, 255]),
    ("nz", [0, 255, 255, 255]),
];

/// The first of `files` draws `want` (display values, as the file writes
/// them) everywhere, through both front ends.
fn draws(name: &str, files: &[(&str, &str)], settings: &str, want: [f32; 3]) {
    let effect = files[0].0;
    for translator in ["glslang", "naga"] {
        for (i, pixel) in rendered(name, files, settings, translator)
            .iter()
            .enumerate()
        {
            let off = (pixel.iter().zip(want))
                .map(|(got, w)| got.abs_diff(code(w)))
                .max()
                .unwrap_or(0);
            assert!(
                off <= 3,
                "{effect} through {translator}, pixel {i}: {pixel:?}, expected {want:?} ({:?})",
                want.map(code)
            );
        }
    }
}

#[test]
fn a_function_taking_a_sampler2d_reads_the_channel_given_it() {
    let toy = "vec4 fetch(sampler2D s, vec2 uv) { return texture(s, uv); }\n\
               void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   c = vec4(fetch(iChannel0, f / iResolution.xy).rgb, 1.0);\n}\n";
    let channel = "\"shader.fx.iChannel0\" = \"below\"\n";
    draws("sampler", &[("toy/param.glsl", toy)], channel, below_seen());
}

#[test]
fn isnan_and_isinf_tell_a_nan_from_an_infinity() {
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              void main() {\n\
              \x20   float nan = uintBitsToFloat(0x7fc00000u + uint(FRAMEINDEX));\n\
              \x20   float inf = uintBitsToFloat(0x7f800000u + uint(FRAMEINDEX));\n\
              \x20   bvec2 pair = isnan(vec2(nan, 1.0));\n\
              \x20   gl_FragColor = vec4(isnan(nan) ? 1.0 : 0.0, isinf(inf) && !isinf(nan) ? 1.0 : 0.0,\n\
              \x20       (pair.y || isnan(inf)) ? 1.0 : 0.25, 1.0);\n}\n";
    draws("nan", &[("isf/nan.fs", fs)], "", [1.0, 1.0, 0.25]);
}

#[test]
fn non_square_matrices_multiply_as_glsl_does() {
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              void main() {\n\
              \x20   mat2x3 m = mat2x3(0.25, 0.5, 0.0, 0.0, 0.0, 0.75);\n\
              \x20   mat3x2 t = transpose(m);\n\
              \x20   vec2 back = t * vec3(1.0);\n\
              \x20   gl_FragColor = vec4(m * vec2(1.0, back.y / 0.75), 1.0);\n}\n";
    draws("matrix", &[("isf/matrix.fs", fs)], "", [0.25, 0.5, 0.75]);
}

#[test]
fn texel_fetch_and_texture_size_read_the_channel_by_its_pixels() {
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   ivec2 size = textureSize(iChannel0, 0);\n\
               \x20   vec4 t = texelFetch(iChannel0, ivec2(f), 0);\n\
               \x20   c = vec4(t.r, float(size.x) / 16.0, float(size.y) / 16.0, 1.0);\n}\n";
    let channel = "\"shader.fx.iChannel0\" = \"below\"\n";
    draws(
        "texel",
        &[("toy/texel.glsl", toy)],
        channel,
        [below_seen()[0], 0.5, 0.25],
    );
}

#[test]
fn a_cube_map_channel_shows_an_equirectangular_picture_by_direction() {
    let toy = "uniform samplerCube iChannel0;\n\
               void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   vec3 up = texture(iChannel0, normalize(vec3(0.3, 0.9, 0.0))).rgb;\n\
               \x20   vec3 down = textureLod(iChannel0, normalize(vec3(0.3, -0.9, 0.1)), 0.0).rgb;\n\
               \x20   c = vec4(up.r, down.b, up.b + down.r, 1.0);\n}\n";
    let channel = "\"shader.fx.iChannel0\" = \"media/sky.png\"\n";
    draws("cube", &[("toy/cube.glsl", toy)], channel, [1.0, 1.0, 0.0]);
}

#[test]
fn loose_uniforms_reserved_names_own_built_ins_and_open_ends_compile() {
    let fs = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"input\", \"TYPE\": \"float\", \"DEFAULT\": 0.5 } ] }*/\n\
              uniform float extra;\n\
              float distance(vec2 a, vec2 b) { return 0.25; }\n\
              float pick(int i) {\n\
              \x20   if (i == 0)\n\
              \x20       return 0.75;\n\
              }\n\
              void main() {\n\
              \x20   gl_FragColor = vec4(distance(vec2(0.0), vec2(1.0)) + extra, input, pick(0), 1.0);\n}\n";
    draws("lax", &[("isf/lax.fs", fs)], "", [0.25, 0.5, 0.75]);
}

#[test]
fn the_shader_library_lists_each_file_with_its_inputs_and_whether_it_compiles() {
    let good = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"level\", \"TYPE\": \"float\" }, \
                { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n\
                void main() { gl_FragColor = IMG_THIS_PIXEL(inputImage) * level; }\n";
    let broken = "/*{ \"ISFVSN\": \"2\" }*/\n\nvoid main() { gl_FragColor = vec4(nowhere); }\n";
    let image = "void mainImage(out vec4 c, in vec2 f) { c = texture(iChannel0, f); }\n";
    let buffer = "void mainImage(out vec4 c, in vec2 f) { c = vec4(1.0); }\n";
    let root = support::show_folder(
        "glsl_library",
        &[
            ("shaders/isf/good.fs", good),
            ("shaders/isf/broken.fs", broken),
            ("shaders/toy/pair/image.glsl", image),
            ("shaders/toy/pair/buffer_a.glsl", buffer),
        ],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_sylva"))
        .args(["shaders", "--project"])
        .arg(&root)
        .output()
        .checked("running sylva shaders");
    std::fs::remove_dir_all(root).ok();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = |file: &str| {
        (said.lines())
            .find(|l| l.starts_with(file))
            .unwrap_or_else(|| panic!("no line for {file}: {said}"))
    };
    assert_eq!(
        line("isf/good.fs "),
        "isf/good.fs  ISF  level (float), inputImage (image)  compiles"
    );
    assert!(
        line("isf/broken.fs ").contains("does not compile: shaders/isf/broken.fs:3:"),
        "{said}"
    );
    assert!(line("toy/pair/image.glsl ").ends_with("compiles"), "{said}");
    assert!(
        !said.contains("buffer_a"),
        "a buffer runs from its image pass: {said}"
    );
}

#[test]
fn a_cube_map_folder_of_six_faces_is_looked_up_by_direction() {
    let toy = "uniform samplerCube iChannel0;\n\
               vec3 at(vec3 d) { return texture(iChannel0, normalize(d)).rgb; }\n\
               void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   float r = at(vec3(1.0, 0.1, 0.1)).r * at(vec3(-1.0, -0.1, 0.1)).g;\n\
               \x20   float g = at(vec3(0.1, 1.0, -0.1)).b * 0.5 + at(vec3(0.1, -1.0, 0.1)).r;\n\
               \x20   float b = at(vec3(0.1, 0.1, 1.0)).r * 0.25 + at(vec3(-0.1, 0.1, -1.0)).r;\n\
               \x20   c = vec4(r, g, b, 1.0);\n}\n";
    let channel = "\"shader.fx.iChannel0\" = \"media/cube\"\n";
    draws(
        "cube_faces",
        &[("toy/faces.glsl", toy)],
        channel,
        [1.0, 0.5, 0.25],
    );
}

#[test]
fn a_buffer_at_half_size_draws_at_its_own_resolution_and_says_so() {
    let buffer = "// @size $WIDTH/2 $HEIGHT/2\n\
                  void mainImage(out vec4 c, in vec2 f) { c = vec4(iResolution.xy / 16.0, 0.0, 1.0); }\n";
    let image = "// @channel0 buffer_a\n\
                 void mainImage(out vec4 c, in vec2 f) {\n\
                 \x20   c = vec4(texelFetch(iChannel0, ivec2(0), 0).rg, iChannelResolution[0].x / 16.0, 1.0);\n}\n";
    let files = [
        ("toy/half/image.glsl", image),
        ("toy/half/buffer_a.glsl", buffer),
    ];
    draws("half", &files, "", [0.25, 0.125, 0.25]);
}

#[test]
fn the_keyboard_is_shadertoy_s_256_by_3_texture_with_no_key_down_in_a_render() {
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   float held = texelFetch(iChannel0, ivec2(65, 0), 0).x;\n\
               \x20   float sky = iChannelResolution[1].x / 64.0;\n\
               \x20   c = vec4(held + iChannelResolution[0].x / 512.0, iChannelResolution[0].y / 12.0, sky, 1.0);\n}\n";
    let channels = "\"shader.fx.iChannel0\" = \"keyboard\"\n\
                    \"shader.fx.iChannel1\" = \"media/sky.png\"\n";
    draws(
        "keyboard",
        &[("toy/keys.glsl", toy)],
        channels,
        [0.5, 0.25, 0.25],
    );
}

#[test]
fn the_sound_is_shadertoy_s_512_by_2_texture_silent_where_nothing_is_heard() {
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   float wave = texture(iChannel0, vec2(0.3, 0.75)).x;\n\
               \x20   float spectrum = texelFetch(iChannel0, ivec2(40, 0), 0).x;\n\
               \x20   c = vec4(wave, spectrum + iChannelResolution[0].x / 1024.0, iChannelResolution[0].y / 8.0, 1.0);\n}\n";
    let channel = "\"shader.fx.iChannel0\" = \"audio\"\n";
    draws(
        "sound",
        &[("toy/sound.glsl", toy)],
        channel,
        [128.0 / 255.0, 0.5, 0.25],
    );
}

#[test]
fn a_file_s_own_2d_cross_leaves_the_built_in_cross_callable() {
    let toy = "float cross(vec2 a, vec2 b) { return a.x * b.y - a.y * b.x; }\n\
               void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   float flat = cross(vec2(1.0, 0.0), vec2(0.0, 0.25));\n\
               \x20   c = vec4(flat, cross(vec3(1.0, 0.0, 0.0), vec3(0.0, 0.5, 0.0)).z, 0.75, 1.0);\n}\n";
    draws("cross", &[("toy/cross.glsl", toy)], "", [0.25, 0.5, 0.75]);
}

#[test]
fn a_file_sees_and_writes_display_values_as_every_other_host_shows_them() {
    // Below: linear 0.25, 0.5, 0.75, which a host of 8-bit textures would
    // hand the file as 137, 188 and 225 of 255. Red passes a threshold at
    // 0.5 and green one at 0.6 (in linear light neither would), blue not
    // one at 0.95; green's 0.5 shows as 128 of 255, not the 188 of linear
    // 0.5.
    let fs = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n\
              void main() {\n\
              \x20   vec4 seen = IMG_THIS_PIXEL(inputImage);\n\
              \x20   gl_FragColor = vec4(step(0.5, seen.r), step(0.6, seen.g) * 0.5, step(0.95, seen.b), 1.0);\n}\n";
    draws("display", &[("isf/display.fs", fs)], "", [1.0, 0.5, 0.0]);
}

#[test]
fn textures_a_port_never_declared_are_image_inputs_showing_the_layers_below() {
    // Loose `uniform sampler2D` lines (one a list) and Shadertoy's
    // iChannel0, none in the header: VDMX refuses the file, sylva takes
    // each as an image input showing the layers below until pointed
    // elsewhere.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              uniform sampler2D tex;\n\
              uniform sampler2D spare, unused;\n\
              void main() {\n\
              \x20   float r = texture2D(tex, isf_FragNormCoord).r;\n\
              \x20   float g = texture(iChannel0, isf_FragNormCoord).g;\n\
              \x20   float b = texture2D(spare, isf_FragNormCoord).b;\n\
              \x20   gl_FragColor = vec4(r, g, b, 1.0);\n}\n";
    draws("undeclared", &[("isf/undeclared.fs", fs)], "", below_seen());
}

#[test]
fn a_matrix_varying_passes_a_column_at_a_time() {
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              varying mat2 turn;\n\
              void main() {\n\
              \x20   gl_FragColor = vec4(turn[0][0] * 2.0, turn[0][1], turn[1][0], 1.0);\n}\n";
    let vs = "varying mat2 turn;\n\
              void main() {\n\
              \x20   isf_vertShaderInit();\n\
              \x20   turn = mat2(0.25, 0.25, 0.75, 1.0);\n}\n";
    draws(
        "matrix_varying",
        &[("isf/matrix_varying.fs", fs), ("isf/matrix_varying.vs", vs)],
        "",
        [0.5, 0.25, 0.75],
    );
}

#[test]
fn a_scalar_normalize_and_a_constant_past_the_float_range_compile_through_glslang() {
    // naga's own GLSL reader refuses both itself: the fallback cannot.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              #define MAX_FLOAT (pow(2., 128.) - 1.)\n\
              void main() {\n\
              \x20   float sign = normalize(normalize(TIME * 0.0 - 3.0) * 2.0) * -0.5;\n\
              \x20   gl_FragColor = vec4(min(MAX_FLOAT, 0.75), step(3.0e38, MAX_FLOAT), sign, 1.0);\n}\n";
    let files = [("isf/mended.fs", fs)];
    for pixel in rendered("mended", &files, "", "glslang") {
        let want = [191, 255, 128];
        let off = (pixel.iter().zip(want)).map(|(g, w)| g.abs_diff(w)).max();
        assert!(off <= Some(3), "{pixel:?}, expected {want:?}");
    }
}

#[test]
fn a_file_s_own_int_mod_and_struct_distance_leave_the_built_ins_callable() {
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              struct Edge { vec2 a; };\n\
              int mod(int a, int b) { return a - b * (a / b); }\n\
              float distance(Edge e, vec2 p) { return distance(e.a, p); }\n\
              void main() {\n\
              \x20   float whole = float(mod(7, 4)) / 4.0;\n\
              \x20   float part = mod(2.75, 1.0);\n\
              \x20   gl_FragColor = vec4(whole, part, distance(Edge(vec2(0.0)), vec2(0.25, 0.0)), 1.0);\n}\n";
    draws(
        "overloads",
        &[("isf/overloads.fs", fs)],
        "",
        [0.75, 0.75, 0.25],
    );
}

#[test]
fn smoothstep_with_equal_edges_is_the_step_desktop_drivers_make_it() {
    // GLSL leaves it undefined; files use it as a hard edge, which is what
    // NVIDIA's and AMD's drivers draw, and llvmpipe gave 0.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              void main() {\n\
              \x20   float edge = TIME * 0.0 + 0.25;\n\
              \x20   float up = smoothstep(edge, edge, 0.5);\n\
              \x20   float down = smoothstep(edge, edge, 0.125);\n\
              \x20   vec2 both = smoothstep(vec2(edge, 0.0), vec2(edge, 1.0), vec2(0.5));\n\
              \x20   gl_FragColor = vec4(up, down + both.x * 0.25, both.y, 1.0);\n}\n";
    draws(
        "smoothstep",
        &[("isf/smoothstep.fs", fs)],
        "",
        [1.0, 0.25, 0.5],
    );
}

#[test]
fn an_isf_input_named_after_a_built_in_leaves_the_built_in_callable() {
    // `step` hid the built-in from the prelude's own `isf_smoothstep`,
    // `mix` from the file's call.
    let fs = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"step\", \"TYPE\": \"float\", \"DEFAULT\": 0.5 }, \
              { \"NAME\": \"mix\", \"TYPE\": \"float\", \"DEFAULT\": 0.5 } ] }*/\n\
              uniform float step;\n\
              void main() {\n\
              \x20   float edge = TIME * 0.0 + 0.25;\n\
              \x20   gl_FragColor = vec4(step * smoothstep(edge, edge, 0.5), mix * 0.5, mix(0.5, 1.0, mix), 1.0);\n}\n";
    draws(
        "builtin_input",
        &[("isf/builtin.fs", fs)],
        "",
        [0.5, 0.25, 0.75],
    );
}

#[test]
fn an_isf_or_shadertoy_output_of_nan_infinity_or_alpha_past_one_shows_as_an_8_bit_target_would() {
    // NaN as 0, an infinity as the brightest, an alpha of 78 as 1: as a
    // GL host's 8-bit target holds them; else the layer was one colour.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              void main() {\n\
              \x20   float nan = uintBitsToFloat(0x7fc00000u + uint(FRAMEINDEX));\n\
              \x20   float inf = uintBitsToFloat(0x7f800000u + uint(FRAMEINDEX));\n\
              \x20   gl_FragColor = vec4(nan, 0.5, inf, 78.0);\n}\n";
    draws("held", &[("isf/held.fs", fs)], "", [0.0, 0.5, 1.0]);
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   float nan = uintBitsToFloat(0x7fc00000u + uint(iFrame));\n\
               \x20   c = vec4(nan, -1.0 / (iTime * 0.0), 0.5, 1.0);\n}\n";
    draws("held_toy", &[("toy/held.glsl", toy)], "", [0.0, 0.0, 0.5]);
}

#[test]
fn an_isf_or_shadertoy_file_may_write_gl_frag_coord_after_reading_where_it_is() {
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              void main() {\n\
              \x20   vec2 at = gl_FragCoord.xy / RENDERSIZE;\n\
              \x20   gl_FragCoord.xy = vec2(0.5, 0.75);\n\
              \x20   float inside = float(at.x > 0.0 && at.x < 1.0 && at.y > 0.0 && at.y < 1.0);\n\
              \x20   gl_FragColor = vec4(inside * 0.25, gl_FragCoord.xy, 1.0);\n}\n";
    draws("coord", &[("isf/coord.fs", fs)], "", [0.25, 0.5, 0.75]);
    let toy = "void mainImage(out vec4 c, in vec2 f) {\n\
               \x20   gl_FragCoord.x *= 0.0;\n\
               \x20   c = vec4(gl_FragCoord.x + 0.25, f.y == gl_FragCoord.y ? 0.5 : 0.0, 0.75, 1.0);\n}\n";
    draws(
        "coord_toy",
        &[("toy/coord.glsl", toy)],
        "",
        [0.25, 0.5, 0.75],
    );
}

#[test]
fn an_isf_file_s_own_mat4x3_function_and_a_variable_named_case_compile() {
    // GLSL 1.10 had neither non-square matrices nor `switch`.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              mat4 mat4x3(vec3 a, vec3 b, vec3 c, vec3 d) {\n\
              \x20   return mat4(vec4(a, 0.0), vec4(b, 0.0), vec4(c, 0.0), vec4(d, 1.0));\n}\n\
              float half_of(vec2 case) { return case.x * 0.5; }\n\
              void main() {\n\
              \x20   vec4 v = mat4x3(vec3(0.25, 0.0, 0.0), vec3(0.0), vec3(0.0, 0.0, 0.75), vec3(0.0)) * vec4(1.0, 1.0, 1.0, 0.0);\n\
              \x20   vec2 case = vec2(1.0);\n\
              \x20   gl_FragColor = vec4(v.r, half_of(case), v.b, 1.0);\n}\n";
    draws("names", &[("isf/names.fs", fs)], "", [0.25, 0.5, 0.75]);
}

#[test]
fn isf_img_pixel_takes_a_bias_as_vvisf_does() {
    let fs = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" } ] }*/\n\
              void main() {\n\
              \x20   vec4 biased = IMG_PIXEL(inputImage, gl_FragCoord.xy, 0.0);\n\
              \x20   gl_FragColor = vec4(biased.r, IMG_PIXEL(inputImage, gl_FragCoord.xy).gb, 1.0);\n}\n";
    draws("bias", &[("isf/bias.fs", fs)], "", below_seen());
}

#[test]
fn an_isf_varying_no_vertex_stage_writes_reads_zero() {
    // A `.fs` that lost its `.vs`, and glslsandbox's `surfaceSize`.
    let fs = "/*{ \"ISFVSN\": \"2\" }*/\n\
              varying vec2 surfaceSize;\n\
              varying vec3 lost[2];\n\
              void main() {\n\
              \x20   gl_FragColor = vec4(surfaceSize + vec2(0.25, 0.5), lost[1].x + 0.75, 1.0);\n}\n";
    draws(
        "unwritten",
        &[("isf/unwritten.fs", fs)],
        "",
        [0.25, 0.5, 0.75],
    );
}

#[test]
fn an_isf_port_s_imouse_point_is_read_as_shadertoy_s_vec4() {
    // Its point in xy, no press in zw, and the input after it its own.
    let fs = "/*{ \"ISFVSN\": \"2\", \"INPUTS\": [ { \"NAME\": \"iMouse\", \"TYPE\": \"point2D\", \"DEFAULT\": [0.25, 0.5] }, \
              { \"NAME\": \"level\", \"TYPE\": \"float\", \"DEFAULT\": 0.75 } ] }*/\n\
              void main() {\n\
              \x20   gl_FragColor = vec4(iMouse.xy, level + iMouse.z + iMouse.w, 1.0);\n}\n";
    draws("imouse", &[("isf/imouse.fs", fs)], "", [0.25, 0.5, 0.75]);
}

/// A hue in turns (0..1), as MadMapper's `rgb2hue` gives it.
fn hue(c: [f32; 3]) -> f32 {
    let high = c[0].max(c[1]).max(c[2]);
    let range = high - c[0].min(c[1]).min(c[2]);
    let sixths = match high {
        _ if range == 0.0 => 0.0,
        h if h == c[0] => (c[1] - c[2]) / range,
        h if h == c[1] => 2.0 + (c[2] - c[0]) / range,
        _ => 4.0 + (c[0] - c[1]) / range,
    };
    (sixths / 6.0).rem_euclid(1.0)
}

#[test]
fn a_madmapper_surface_shader_and_its_mesh_stage_draw_the_surface() {
    // MadMapper's dialect: an `int` input, a `long` of labels, a "True",
    // its library, the surface's picture, its coordinate, the host's
    // uniforms (white modulation, no alpha override) and its own output;
    // the `.vs` beside it reads MadMapper's mesh and matrices.
    let fs = "/*{ \"CREDIT\": \"sylva\", \"INPUTS\": [ { \"NAME\": \"inputImage\", \"TYPE\": \"image\" },\n\
              { \"NAME\": \"steps\", \"TYPE\": \"int\", \"MIN\": 1, \"MAX\": 8, \"DEFAULT\": 4 },\n\
              { \"NAME\": \"mode\", \"TYPE\": \"long\", \"VALUES\": [\"Red\", \"Hue\"], \"DEFAULT\": \"Hue\" },\n\
              { \"NAME\": \"on\", \"TYPE\": \"bool\", \"DEFAULT\": \"True\" } ] }*/\n\
              #include \"MadCommon.glsl\"\n\
              in vec2 mm_SurfaceCoord;\n\
              uniform vec4 modulationColor;\n\
              uniform float ignoreAlpha;\n\
              out vec4 out_color;\n\
              void main() {\n\
              \x20   vec4 c = MM_SHADER_NORM_PIXEL(mm_SurfaceCoord);\n\
              \x20   c.a += ignoreAlpha;\n\
              \x20   float hue = mode == 1 ? rgb2hue(MM_SHADER_THIS_NORM_PIXEL().rgb) : 0.0;\n\
              \x20   float level = float(steps) / 8.0 + (on ? 0.0 : 0.5);\n\
              \x20   out_color = vec4(hsv2rgb(rgb2hsv(c.rgb)).r, hue, level, c.a) * modulationColor;\n}\n";
    let vs = "in vec2 in_Vertex;\n\
              in vec2 in_TexCoord0;\n\
              uniform mat4 modelViewProjectionMatrix;\n\
              uniform mat4 textureMatrix;\n\
              out vec2 isf_FragNormCoord;\n\
              out vec2 mm_SurfaceCoord;\n\
              void main() {\n\
              \x20   isf_FragNormCoord = (textureMatrix * vec4(in_TexCoord0, 0, 1)).xy;\n\
              \x20   mm_SurfaceCoord = in_TexCoord0;\n\
              \x20   gl_Position = modelViewProjectionMatrix * vec4(in_Vertex.xy, 0, 1);\n}\n";
    let seen = below_seen();
    draws(
        "madmapper",
        &[("isf/surface.fs", fs), ("isf/surface.vs", vs)],
        "",
        [seen[0], hue(seen), 0.5],
    );
}

#[test]
fn a_madmapper_material_runs_with_its_library_generator_and_flagged_inputs() {
    // A material: its colour for each pixel, a time_base clock, an
    // animator drawn in the shape a long input chooses, a choice compiled
    // in as a macro, a floatRange, numbers written as C writes
    // them, a library from the folder above read after the define before
    // its include, and a mesh stage passing an array sized by a macro.
    let material = "/*{ \"RESOURCE_TYPE\": \"Material For MadMapper\", \"INPUTS\": [\n\
                    { \"NAME\": \"speed\", \"TYPE\": \"float\", \"MIN\": 0., \"MAX\": 1., \"DEFAULT\": .5 },\n\
                    { \"NAME\": \"mode\", \"TYPE\": \"long\", \"VALUES\": [\"Dim\", \"Full Bright\"],\n\
                    \"DEFAULT\": \"Full Bright\", \"FLAGS\": \"generate_as_define\" },\n\
                    { \"NAME\": \"band\", \"TYPE\": \"floatRange\", \"MIN\": 0.0, \"MAX\": 1.0, \"DEFAULT\": [0.25, 0.75] },\n\
                    { \"NAME\": \"shape\", \"TYPE\": \"long\", \"VALUES\": [\"Smooth\", \"In\", \"Out\"], \"DEFAULT\": \"Out\" } ],\n\
                    \"GENERATORS\": [ { \"NAME\": \"clock\", \"TYPE\": \"time_base\",\n\
                    \"PARAMS\": { \"speed\": \"speed\", \"speed_curve\": 2 } },\n\
                    { \"NAME\": \"wave\", \"TYPE\": \"animator\", \"PARAMS\": { \"speed\": 1, \"shape\": \"shape\" } } ] }*/\n\
                    #define GAIN 0.5\n\
                    #include \"Shades.glsl\"\n\
                    #define COUNT 2\n\
                    flat in vec3 fromVertex[COUNT];\n\
                    vec4 materialColorForPixel(vec2 texCoord) {\n\
                    #ifdef mode_IS_Full_Bright\n\
                    \x20   float level = shade(1.0);\n\
                    #else\n\
                    \x20   float level = 0.0;\n\
                    #endif\n\
                    \x20   return vec4(level * wave, clock * 60.0, band.y - band.x + fromVertex[1].z, 1.0);\n}\n";
    let mesh = "#define COUNT 2\n\
                flat out vec3 fromVertex[COUNT];\n\
                void materialVsFunc(vec2 uv) {\n\
                \x20   fromVertex[0] = vec3(0.0);\n\
                \x20   fromVertex[1] = vec3(0.0, 0.0, 0.25);\n}\n";
    let library =
        "#ifndef GAIN\n#define GAIN 1.0\n#endif\nfloat shade(float x) { return x * GAIN; }\n";
    let files = [
        ("isf/materials/glow.fs", material),
        ("isf/materials/glow.vs", mesh),
        ("isf/Shades.glsl", library),
    ];
    // One 60th of a second at 0.5 squared a second, times 60: 0.25; the
    // animator's cycle a 60th through, drawn Out (the long input's choice).
    draws("material", &files, "", [0.5 * 59.0 / 60.0, 0.25, 0.75]);
    // The compiled-in choice moved: the file compiles again with it, and
    // a render waits for it.
    let dim = "\"shader.fx.mode\" = \"Dim\"\n";
    draws("material_dim", &files, dim, [0.0, 0.25, 0.75]);
}
