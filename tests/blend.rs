//! The compositor's blend modes on solid-colour layers, read back from the
//! HDR composite and held to the expected value within one half-float step.

use half::f16;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba16f};
use sylva::params::{Source, Value};
use sylva::show::Preset;

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
    let output = RenderTarget::new(&show.gpu.device, "blend.output", [8, 8], OUTPUT_FORMAT);
    show.frame(1.0 / 60.0, None, (&output.view, [8, 8]), |_, _| {});
    let read = |texture: Option<&wgpu::Texture>| match texture.map(|t| read_rgba16f(&show.gpu, t)) {
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
    let output = RenderTarget::new(&show.gpu.device, "blend.output", [4, 4], OUTPUT_FORMAT);
    for (enabled, opacity) in [(false, 1.0), (true, 0.0)] {
        show.registry
            .set_now("shader.top.enabled", Value::Bool(enabled), Source::Ui)
            .checked("setting a test value");
        show.registry
            .set_now("shader.top.opacity", Value::Float(opacity), Source::Ui)
            .checked("setting a test value");
        show.frame(1.0 / 60.0, None, (&output.view, [4, 4]), |_, _| {});
        let texels = read_rgba16f(&show.gpu, show.compositor().composite());
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

/// A show of one solid layer of `colour`, one frame drawn.
fn solid_stack(colour: [f32; 4]) -> sylva::show::Show {
    let mut show = support::show(support::fixtures(), "empty", OUTPUT_FORMAT);
    let text = format!(
        "layers = [\"shader.solid\"]\n[params]\n\"shader.solid.file\" = \"shader/solid.wgsl\"\n\"shader.solid.colour\" = {colour:?}\n"
    );
    let preset = Preset::parse("solid.toml", &text).checked("parsing the stack's preset");
    show.apply_preset("solid", &preset)
        .checked("loading the stack's preset");
    let output = RenderTarget::new(&show.gpu.device, "stack.output", [8, 8], OUTPUT_FORMAT);
    show.frame(1.0 / 60.0, None, (&output.view, [8, 8]), |_, _| {});
    show
}

#[test]
fn two_layer_stacks_render_and_crossfade() {
    let (a, b) = ([1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
    let mut outgoing = solid_stack(a);
    let incoming = solid_stack(b);
    let other = incoming
        .compositor()
        .composite()
        .create_view(&wgpu::TextureViewDescriptor::default());
    let gpu = outgoing.gpu.clone();
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let (compositor, env, profiler) = outgoing.compositor_mut();
        compositor.crossfade(&env, &other, 0.25, &mut encoder, profiler);
    }
    gpu.queue.submit([encoder.finish()]);
    let texels = read_rgba16f(&gpu, outgoing.compositor().composite()).checked("reading back");
    for texel in texels {
        let want = [0.75, 0.0, 0.25];
        for c in 0..3 {
            assert!(
                (texel[c] - want[c]).abs() <= half_step(want[c]).max(1e-3),
                "channel {c}: {} for {}",
                texel[c],
                want[c]
            );
        }
    }
}
