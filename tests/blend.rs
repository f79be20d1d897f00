//! The compositor's blend modes on solid-colour layers, read back from the
//! HDR composite and held to the expected value within one half-float step.

use half::f16;
use sylva::engine::Preset;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};

use crate::support;
use crate::support::Checked;

const BOTTOM: [f32; 4] = [0.3, 0.6, 1.5, 1.0];
const TOP: [f32; 4] = [0.32, 0.16, 0.64, 0.8];
const OPACITY: f32 = 0.7;

/// The spacing of half floats around `v`.
fn half_step(v: f32) -> f32 {
    let h = f16::from_f32(v.abs());
    f16::from_bits(h.to_bits() + 1).to_f32() - h.to_f32()
}

/// The compositor's formulas on the texels the layer targets hold (read
/// back, since adapters may round to half floats differently: lavapipe
/// truncates).
fn expected(mode: &str, b: [f32; 4], l: [f32; 4]) -> [f32; 3] {
    let (a, o) = (l[3], OPACITY);
    let mut out = [0.0; 3];
    for c in 0..3 {
        out[c] = match mode {
            "add" => b[c] + l[c] * o,
            "screen" => b[c] + (l[c] - b[c] * l[c]) * o,
            "multiply" => b[c] * (1.0 + (l[c] + 1.0 - a - 1.0) * o),
            _ => b[c] * (1.0 - a * o) + l[c] * o,
        };
    }
    out
}

/// The composite and the two layer targets' first texels after one frame.
fn composite(mode: &str) -> (Vec<[f32; 4]>, [f32; 4], [f32; 4]) {
    let mut show = support::show(support::fixtures(), "empty", OUTPUT_FORMAT);
    let preset = Preset::parse(
        "blend.toml",
        &format!(
            r#"layers = ["shader.bottom", "shader.top"]
[params]
"shader.bottom.file" = "shader/solid.wgsl"
"shader.top.file" = "shader/solid.wgsl"
"shader.bottom.colour" = {BOTTOM:?}
"shader.top.colour" = {TOP:?}
"shader.top.opacity" = {OPACITY:?}
"shader.top.blend" = "{mode}"
"#
        ),
    );
    let preset = match preset {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    };
    if let Err(error) = show.apply_preset("blend", &preset) {
        panic!("{error}");
    }
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "blend.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    let read = |texture: Option<&wgpu::Texture>| match texture
        .map(|t| read_rgba16f(&show.ground.gpu, t))
    {
        Some(Ok(texels)) => texels,
        other => panic!("readback: {other:?}"),
    };
    let compositor = show.compositor();
    let bottom = read(compositor.layer_target("shader.bottom"))[0];
    let top = read(compositor.layer_target("shader.top"))[0];
    (read(Some(compositor.composite())), bottom, top)
}

#[test]
fn every_blend_mode_gives_its_formula_within_a_half_float_step() {
    for mode in ["normal", "add", "screen", "multiply"] {
        let (texels, bottom, top) = composite(mode);
        assert!(
            (bottom[2] - 1.5).abs() < 1e-3 && (top[3] - 0.8).abs() < 1e-3,
            "{bottom:?} {top:?}"
        );
        let want = expected(mode, bottom, top);
        for texel in texels {
            for c in 0..3 {
                let error = (texel[c] - want[c]).abs();
                assert!(
                    error <= half_step(want[c]),
                    "{mode}: channel {c} is {} but should be {} (step {})",
                    texel[c],
                    want[c],
                    half_step(want[c])
                );
            }
        }
    }
}

#[test]
fn a_disabled_or_transparent_layer_leaves_the_composite_alone() {
    let mut show = support::show(support::fixtures(), "empty", OUTPUT_FORMAT);
    let text = r#"layers = ["shader.bottom", "shader.top"]
[params]
"shader.bottom.file" = "shader/solid.wgsl"
"shader.top.file" = "shader/solid.wgsl"
"shader.bottom.colour" = [0.25, 0.5, 0.75, 1.0]
"shader.top.colour" = [1.0, 1.0, 1.0, 1.0]
"shader.top.enabled" = false
"#;
    let applied = Preset::parse("t.toml", text).map(|p| show.apply_preset("t", &p));
    assert!(matches!(applied, Ok(Ok(()))), "{applied:?}");
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "blend.output",
        [4, 4],
        OUTPUT_FORMAT,
    );
    for (enabled, opacity) in [(false, 1.0), (true, 0.0)] {
        show.registry
            .set_now("shader.top.enabled", Value::Bool(enabled), Source::Ui)
            .checked("setting a test value");
        show.registry
            .set_now("shader.top.opacity", Value::Float(opacity), Source::Ui)
            .checked("setting a test value");
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
        let texels = read_rgba16f(&show.ground.gpu, show.compositor().composite());
        let Ok(texels) = texels else {
            panic!("readback");
        };
        assert_eq!(
            texels[0][..3],
            [0.25, 0.5, 0.75],
            "enabled {enabled}, opacity {opacity}"
        );
    }
}

/// A preset of one solid layer of `colour`.
fn solid(colour: [f32; 4]) -> Preset {
    let text = format!(
        "layers = [\"shader.solid\"]\n[params]\n\"shader.solid.file\" = \"shader/solid.wgsl\"\n\"shader.solid.colour\" = {colour:?}\n"
    );
    Preset::parse("solid.toml", &text).checked("parsing the stack's preset")
}

/// The composite's first texel after one frame of `dt`.
fn frame_colour(show: &mut sylva::show::Show, output: &mut RenderTarget, dt: f32) -> [f32; 3] {
    show.frame(dt, None, output, |_, _| {});
    let texels =
        read_rgba16f(&show.ground.gpu, show.compositor().composite()).checked("reading back");
    [texels[0][0], texels[0][1], texels[0][2]]
}

#[test]
fn a_preset_crossfades_in_over_the_running_one_inside_the_frame() {
    let (red, blue) = ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
    let mut show = support::show(support::fixtures(), "empty", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "stack.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    show.apply_preset("red", &solid(red))
        .checked("loading the first stack");
    assert_eq!(frame_colour(&mut show, &mut output, 0.0), [1.0, 0.0, 0.0]);
    show.registry
        .set_now("master.crossfade", Value::Float(2.0), Source::Ui)
        .checked("setting the crossfade time");
    show.apply_preset("blue", &solid(blue))
        .checked("loading the second stack");
    assert!(show.outgoing().is_some(), "the red stack stays to fade out");
    // Halfway (eased: the smoothstep of 0.5 is 0.5) both stacks show
    // equally, and the colour both presets set glides with the picture:
    // the new stack is half way from red to blue, so the composite is
    // 0.5 red + 0.5 (0.5 red + 0.5 blue).
    let [r, g, b] = frame_colour(&mut show, &mut output, 1.0);
    let near = |x: f32, want: f32| (x - want).abs() <= half_step(want).max(1e-3);
    assert!(
        near(r, 0.75) && near(g, 0.0) && near(b, 0.25),
        "{r} {g} {b}"
    );
    // The stack on stage is the new one: control reaches it.
    assert!(show.registry.contains("shader.solid.colour"));
    let [r, _, b] = frame_colour(&mut show, &mut output, 1.0);
    assert!(near(r, 0.0) && near(b, 1.0), "{r} {b}");
    assert!(
        show.outgoing().is_none(),
        "the red stack is gone once faded"
    );
    // Without a crossfade time a preset cuts in.
    show.registry
        .set_now("master.crossfade", Value::Float(0.0), Source::Ui)
        .checked("setting the crossfade time");
    show.apply_preset("red", &solid(red))
        .checked("loading the first stack again");
    assert!(show.outgoing().is_none());
    assert_eq!(frame_colour(&mut show, &mut output, 0.0), [1.0, 0.0, 0.0]);
}

/// What the probe layer found among its inputs, by name.
static FOUND: std::sync::Mutex<Vec<(String, bool)>> = std::sync::Mutex::new(Vec::new());

/// A layer that draws nothing and asks its inputs for each name.
struct Probe(sylva::engine::LayerSwitches);

const ASKED: [&str; 5] = [
    "below",
    "previous",
    "layer:shader.solid",
    "layer:probe",
    "camera",
];

impl sylva::engine::Layer for Probe {
    fn id(&self) -> &str {
        "probe"
    }

    fn kind(&self) -> &'static sylva::engine::LayerKind {
        &PROBE
    }

    fn switches(&self) -> &sylva::engine::LayerSwitches {
        &self.0
    }

    fn params(&self) -> Vec<sylva::params::ParamSpec> {
        Vec::new()
    }

    fn prepare(
        &mut self,
        _: &sylva::engine::LayerEnv<'_>,
        _: &sylva::params::Registry,
        _: &sylva::base::clock::Clock,
        _: [u32; 2],
    ) -> bool {
        false
    }

    fn encode(
        &self,
        _: &sylva::engine::LayerEnv<'_>,
        frame: &sylva::engine::LayerFrame<'_>,
        encoder: &mut wgpu::CommandEncoder,
        _: &mut sylva::gpu::GpuProfiler,
    ) {
        let found = ASKED
            .iter()
            .map(|name| (name.to_string(), frame.inputs.get(name).is_some()))
            .collect();
        *FOUND
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = found;
        sylva::gpu::clear_view(encoder, frame.target);
    }

    fn reseed(&mut self, _: u64) {}

    fn reload(&mut self, _: &sylva::engine::LayerEnv<'_>, _: &[sylva::base::ChangedFile]) -> bool {
        false
    }
}

static PROBE: sylva::engine::LayerKind = sylva::engine::LayerKind {
    name: "probe",
    create: |id, _| Box::new(Probe(sylva::engine::LayerSwitches::new(id))),
    params: |_, _, _| Ok(Vec::new()),
    bench: |_| sylva::engine::BenchWorkload {
        resolution: [1, 1],
        unit: "nothing",
        settings: Vec::new(),
        groups: Vec::new(),
    },
    layouts: &[],
};

#[test]
fn a_layer_binds_its_inputs_by_name_and_another_layers_output_as_layer_id() {
    let mut show = support::show(support::fixtures(), "empty", OUTPUT_FORMAT);
    show.apply_preset("solid", &solid([0.2, 0.4, 0.6, 1.0]))
        .checked("loading the stack");
    show.add_layer(&PROBE, "probe");
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "inputs.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
    let found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let expected: Vec<(String, bool)> = [
        ("below", true),
        ("previous", true),
        ("layer:shader.solid", true),
        ("layer:probe", false),
        ("camera", false),
    ]
    .iter()
    .map(|(name, there)| (name.to_string(), *there))
    .collect();
    assert_eq!(
        found, expected,
        "a layer's own output is `previous`, not `layer:` itself"
    );
}

/// A bright dot in the middle of black, through the master section with
/// `bloom` (linear, 8-bit output read back).
fn dot_with_bloom(name: &str, bloom: f32) -> image::RgbaImage {
    let dot = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    let d = distance(in.uv * sylva.resolution.xy, sylva.resolution.xy * 0.5);\n    return select(vec4<f32>(0.0, 0.0, 0.0, 1.0), vec4<f32>(8.0, 8.0, 8.0, 1.0), d < 3.0);\n}\n";
    let preset = format!(
        "layers = [\"shader.dot\"]\n[params]\n\"shader.dot.file\" = \"shader/dot.wgsl\"\n\"master.bloom\" = {bloom:.1}\n\"master.bloom_radius\" = 6.0\n\"master.tonemap\" = \"clamp\"\n"
    );
    let root = support::show_folder(
        name,
        &[
            ("presets/d.toml", preset.as_str()),
            ("shaders/shader/dot.wgsl", dot),
        ],
    );
    let image = crate::golden::render_project(root.clone(), "d", [96, 64], 2);
    std::fs::remove_dir_all(root).ok();
    image
}

#[test]
fn bloom_spreads_a_bright_dot_s_light_around_it_and_nowhere_far() {
    let plain = dot_with_bloom("bloom_off", 0.0);
    let bloomed = dot_with_bloom("bloom_on", 1.0);
    let at = |image: &image::RgbaImage, x: u32, y: u32| image.get_pixel(x, y)[0];
    // Six pixels from the dot's edge: black without bloom, lit with it.
    assert_eq!(at(&plain, 48 + 9, 32), 0);
    assert!(at(&bloomed, 48 + 9, 32) > 8, "{}", at(&bloomed, 48 + 9, 32));
    // Its centre stays white, the corners black.
    assert_eq!(at(&bloomed, 48, 32), 255);
    assert_eq!(at(&bloomed, 2, 2), 0);
}
