//! What a Shadertoy multipass pass's `// @channelN SOURCE` line shows,
//! for every source a texture input takes: a picture and a clip from
//! `media/`, a camera, the layers below, another layer, the layer's last
//! frame and a pass buffer that itself reads a picture. Each is checked
//! texel for texel against what the CPU knows the source holds; a line
//! naming nothing a channel can show is refused at its line.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use sylva::base::Assets;
use sylva::engine::inputs::camera::{CameraFeed, Cameras};
use sylva::engine::inputs::still::DecodedImage;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::layers::shader::isf::IsfSource;
use sylva::show::Show;

use crate::support;
use crate::support::Checked;

/// Render size, and the size of every picture, so each texel is sampled
/// at its centre.
const SIZE: [u32; 2] = [8, 4];

/// A flat colour below the shader.
const SOLID: &str = "// @param colour colour 0.5,0.5,0.5,1\n\
                     @fragment\n\
                     fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n\
                     \x20   return params.colour;\n}\n";

/// The colour of `SOLID` in the preset.
const BELOW: [f32; 3] = [0.25, 0.5, 0.75];

/// What the image pass adds to its channel, so that `previous` climbs.
const STEP: f32 = 0.125;

/// A picture distinct in every texel, RGB rows top first; `blue` tells
/// pictures apart.
fn picture(blue: u8) -> Vec<u8> {
    (0..SIZE[0] * SIZE[1])
        .flat_map(|i| [(i % SIZE[0] * 32) as u8, (i / SIZE[0] * 64) as u8, blue])
        .collect()
}

/// `rgb`'s texels as the file sees them (display values: the bytes as
/// stored), `add` added.
fn expected(rgb: &[u8], add: f32) -> Vec<[f32; 3]> {
    rgb.chunks(3)
        .map(|c| [c[0], c[1], c[2]].map(|v| f32::from(v) / 255.0 + add))
        .collect()
}

/// An image pass showing what its `@channel0` line names, plus `add`.
fn image_pass(source: &str, add: f32) -> String {
    format!(
        "// @channel0 {source}\n\
         void mainImage(out vec4 fragColor, in vec2 fragCoord) {{\n\
         \x20   fragColor = vec4(texture(iChannel0, fragCoord / iResolution.xy).rgb + {add:.3}, 1.0);\n}}\n"
    )
}

/// The show folder `name`: `shader.below` a flat colour, `shader.fx` the
/// multipass shader `toy/channels/` made of `passes` (file names and
/// text), and `media/tex.png`.
fn toy_show(name: &str, passes: &[(&str, String)]) -> Show {
    let preset = format!(
        "layers = [\"shader.below\", \"shader.fx\"]\n[params]\n\
         \"shader.below.file\" = \"shader/solid.wgsl\"\n\
         \"shader.below.colour\" = [{}, {}, {}, 1.0]\n\
         \"shader.fx.file\" = \"toy/channels/image.glsl\"\n",
        BELOW[0], BELOW[1], BELOW[2]
    );
    let paths: Vec<String> = (passes.iter())
        .map(|(file, _)| format!("shaders/toy/channels/{file}"))
        .collect();
    let mut files = vec![
        ("presets/toy.toml", preset.as_str()),
        ("shaders/shader/solid.wgsl", SOLID),
    ];
    files.extend(
        paths
            .iter()
            .zip(passes)
            .map(|(p, (_, t))| (p.as_str(), t.as_str())),
    );
    let root = support::show_folder(name, &files);
    std::fs::create_dir_all(root.join("media")).checked("making media/");
    write_png(&root.join("media/tex.png"), picture(200));
    let mut show = support::show(root, "toy", OUTPUT_FORMAT);
    // A picture or a clip is waited for, so the first frame shows it.
    show.media_in_lockstep();
    show
}

fn write_png(path: &Path, rgb: Vec<u8>) {
    let Some(image) = image::RgbImage::from_raw(SIZE[0], SIZE[1], rgb) else {
        panic!("picture size");
    };
    image.save(path).checked("writing the PNG");
}

/// A one-frame lossless clip of `rgb`, encoded by ffmpeg.
fn write_clip(path: &Path, rgb: &[u8]) {
    let mut child = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24"])
        .args([
            "-s",
            &format!("{}x{}", SIZE[0], SIZE[1]),
            "-r",
            "1",
            "-i",
            "-",
        ])
        .args(["-c:v", "png"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .checked("running ffmpeg (make test installs it)");
    if let Some(stdin) = child.stdin.as_mut() {
        stdin.write_all(rgb).checked("writing the frame");
    }
    drop(child.stdin.take());
    assert!(
        child.wait().checked("ffmpeg").success(),
        "ffmpeg made the clip"
    );
}

/// `frames` frames, then `shader.fx`'s texels, RGB, rows top first, in
/// the display space the file wrote them in (the layer holds them
/// decoded to linear).
fn run(show: &mut Show, frames: u32) -> Vec<[f32; 3]> {
    let mut output = RenderTarget::new(&show.ground.gpu.device, "toy.output", SIZE, OUTPUT_FORMAT);
    for _ in 0..frames {
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    }
    let errors = support::error_messages(show);
    assert!(errors.is_empty(), "no errors: {errors:?}");
    match (show.compositor().layer_target("shader.fx")).map(|t| read_rgba16f(&show.ground.gpu, t)) {
        Some(Ok(texels)) => (texels.iter())
            .map(|t| [t[0], t[1], t[2]].map(support::display_encoded))
            .collect(),
        other => panic!("readback: {other:?}"),
    }
}

/// The largest difference between `got` and `want`, over every texel.
fn off(got: &[[f32; 3]], want: &[[f32; 3]]) -> f32 {
    assert_eq!(got.len(), want.len(), "texel count");
    (got.iter().zip(want))
        .flat_map(|(g, w)| (0..3).map(move |c| (g[c] - w[c]).abs()))
        .fold(0.0, f32::max)
}

#[test]
fn a_multipass_image_pass_shows_a_media_picture_through_its_channel_line() {
    let image = "// @channel0 media/tex.png\n\
                 void mainImage(out vec4 fragColor, in vec2 fragCoord) {\n\
                 \x20   fragColor = texture(iChannel0, fragCoord / iResolution.xy);\n}\n";
    let mut show = toy_show("toy_channel_media", &[("image.glsl", image.to_string())]);
    let texels = run(&mut show, 1);
    let error = off(&texels, &expected(&picture(200), 0.0));
    assert!(
        error < 4e-3,
        "the picture, texel for texel, not black: {error}"
    );
}

#[test]
fn every_texture_source_works_in_a_passs_channel_line() {
    let buffer_a = image_pass("media/tex.png", 0.0);
    let solid = vec![BELOW.map(support::display_encoded); (SIZE[0] * SIZE[1]) as usize];
    let cases: Vec<Case> = vec![
        ("media/clip.mkv", vec![], expected(&picture(90), STEP)),
        ("camera:test", vec![], expected(&picture(40), STEP)),
        ("below", vec![], expected_from(&solid, STEP)),
        ("layer:shader.below", vec![], expected_from(&solid, STEP)),
        (
            "previous",
            vec![],
            expected_from(&vec![[0.0; 3]; solid.len()], 4.0 * STEP),
        ),
        (
            "buffer_a",
            vec![("buffer_a.glsl", buffer_a)],
            expected(&picture(200), STEP),
        ),
    ];
    for (source, mut passes, want) in cases {
        passes.push(("image.glsl", image_pass(source, STEP)));
        let name = format!("toy_channel_{}", source.replace([':', '/', '.'], "_"));
        let mut show = toy_show(&name, &passes);
        write_clip(
            &support::out_dir().join(&name).join("media/clip.mkv"),
            &picture(90),
        );
        show.see_from(Arc::new(TestCamera));
        let texels = run(&mut show, 4);
        let error = off(&texels, &want);
        assert!(error < 4e-3, "@channel0 {source}: {error}: {texels:?}");
    }
}

/// A channel's source, the passes beside the image pass, and what the
/// layer then shows.
type Case = (&'static str, Vec<(&'static str, String)>, Vec<[f32; 3]>);

/// `colours` with `add` added.
fn expected_from(colours: &[[f32; 3]], add: f32) -> Vec<[f32; 3]> {
    colours.iter().map(|c| c.map(|v| v + add)).collect()
}

#[test]
fn a_channel_line_naming_what_no_channel_shows_is_refused_at_its_line() {
    let body = "void mainImage(out vec4 fragColor, in vec2 fragCoord) {\n\
                \x20   fragColor = vec4(1.0);\n}\n";
    for (line, said) in [
        ("// @channel1 bufer_a", "not a source"),
        ("// @channel0 buffer_b", "no buffer_b.glsl"),
        ("// @channel4 below", "0-3"),
        (
            "// @channel0 media/../../etc/passwd",
            "inside the show folder",
        ),
    ] {
        let text = format!("// a pass\n{line}\n{body}");
        let root = support::show_folder(
            "toy_channel_refused",
            &[("shaders/toy/bad/image.glsl", text.as_str())],
        );
        let read = IsfSource::read(&Assets::new(root), "toy/bad/image.glsl", "shader.fx", &[]);
        let Err(error) = read else {
            panic!("{line} was taken");
        };
        let error = error.to_string();
        assert!(
            error.contains("toy/bad/image.glsl:2:") && error.contains(said),
            "{line}: {error}"
        );
    }
}

/// A camera whose every picture is `picture(40)`.
struct TestCamera;

impl Cameras for TestCamera {
    fn names(&self) -> Vec<String> {
        vec!["video0: Test Cam".into()]
    }

    fn open(&self, _: &str) -> Result<Box<dyn CameraFeed>, String> {
        Ok(Box::new(TestCamera))
    }
}

impl CameraFeed for TestCamera {
    fn newest(&mut self) -> Result<Option<DecodedImage>, String> {
        let rgba = (picture(40).chunks(3))
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect();
        Ok(Some(DecodedImage { size: SIZE, rgba }))
    }
}
