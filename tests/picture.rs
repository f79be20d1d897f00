//! The picture on the GPU against its references on the CPU: the master
//! section's filmic tone map (`engine::tonemap`), exposure in stops and
//! the older curves kept as options; the scene's key light as its
//! parameters set it (`engine::light`); the scene's ambient occlusion
//! on a corner (`engine::occlusion`).

use sylva::engine::tonemap::filmic;

use crate::support;

/// Columns of the test strip: each a known linear light, grey on the top
/// row and coloured on the bottom one.
const COLUMNS: u32 = 16;

/// The light of column `i`: middle grey from nine stops under to six over.
fn light(i: u32) -> f64 {
    0.18 * (f64::from(i) - 9.0).exp2()
}

/// The colour of the bottom row's column `i` (a saturated orange, then a
/// cyan, by halves), as a share of its light.
fn tint(i: u32) -> [f64; 3] {
    if i.is_multiple_of(2) {
        [1.0, 0.35, 0.05]
    } else {
        [0.05, 0.6, 1.0]
    }
}

/// The strip: one column of `light` a pixel column group, written in
/// full float by a shader layer.
fn strip_shader() -> String {
    let mut cases = String::new();
    for i in 0..COLUMNS {
        let [r, g, b] = tint(i);
        let l = light(i);
        cases.push_str(&format!(
            "    if column == {i}u {{ return select(vec4<f32>({l:.8}, {l:.8}, {l:.8}, 1.0), vec4<f32>({:.8}, {:.8}, {:.8}, 1.0), in.uv.y > 0.5); }}\n",
            r * l,
            g * l,
            b * l
        ));
    }
    format!(
        "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {{\n    let column = u32(in.uv.x * {COLUMNS}.0);\n{cases}    return vec4<f32>(0.0, 0.0, 0.0, 1.0);\n}}\n"
    )
}

/// The strip through the master section with `settings` (preset lines),
/// read back 8-bit sRGB.
fn strip(name: &str, settings: &str) -> image::RgbaImage {
    let preset = format!(
        "layers = [\"shader.strip\"]\n[params]\n\"shader.strip.file\" = \"shader/strip.wgsl\"\n{settings}"
    );
    let shader = strip_shader();
    let root = support::show_folder(
        name,
        &[
            ("presets/s.toml", preset.as_str()),
            ("shaders/shader/strip.wgsl", shader.as_str()),
        ],
    );
    let image = crate::golden::render_project(root.clone(), "s", [COLUMNS * 4, 8], 2);
    std::fs::remove_dir_all(root).ok();
    image
}

/// The 8-bit sRGB code of a linear display value.
fn code(linear: f64) -> f64 {
    let c = linear.clamp(0.0, 1.0);
    255.0
        * if c <= 0.003_130_8 {
            c * 12.92
        } else {
            1.055 * c.powf(1.0 / 2.4) - 0.055
        }
}

/// Largest difference, in 8-bit steps, between the strip and `curve` of
/// each column's light times `gain`.
fn worst_step(image: &image::RgbaImage, gain: f64, curve: impl Fn([f64; 3]) -> [f64; 3]) -> f64 {
    let mut worst: f64 = 0.0;
    for i in 0..COLUMNS {
        for (row, y) in [(false, 2), (true, 6)] {
            let colour = if row { tint(i) } else { [1.0; 3] };
            let expected = curve(colour.map(|c| c * light(i) * gain));
            let got = image.get_pixel(i * 4 + 2, y);
            for c in 0..3 {
                let step = (f64::from(got[c]) - code(expected[c])).abs();
                assert!(
                    step <= 2.5,
                    "column {i} ({:.4} x {colour:?}) channel {c}: {} on the GPU, {:.1} on the CPU",
                    light(i) * gain,
                    got[c],
                    code(expected[c])
                );
                worst = worst.max(step);
            }
        }
    }
    worst
}

#[test]
fn the_filmic_tone_map_on_the_gpu_follows_its_curve_on_the_cpu() {
    let image = strip("tonemap_filmic", "");
    worst_step(&image, 1.0, filmic);
    // Grey rises column by column, from black to white, and every stop
    // from six under middle grey up shows.
    let greys: Vec<u8> = (0..COLUMNS)
        .map(|i| image.get_pixel(i * 4 + 2, 2)[0])
        .collect();
    assert!(greys.windows(2).all(|w| w[0] <= w[1]), "{greys:?}");
    assert!(greys[3..].windows(2).all(|w| w[0] < w[1]), "{greys:?}");
    assert!(
        greys[0] < 8 && greys[COLUMNS as usize - 1] > 245,
        "{greys:?}"
    );
}

#[test]
fn exposure_is_in_stops_and_the_older_curves_stay() {
    let brighter = strip("tonemap_exposure", "\"master.exposure\" = 2.0\n");
    worst_step(&brighter, 4.0, filmic);
    let reinhard = strip("tonemap_reinhard", "\"master.tonemap\" = \"reinhard\"\n");
    worst_step(&reinhard, 1.0, |c| c.map(|v| v / (1.0 + v)));
}

/// The stage's floor under the scene's light set by `settings`: the mean
/// linear colour of the picture's bottom rows (the floor near the camera).
fn lit_floor(name: &str, settings: &str) -> [f32; 3] {
    floor_rows(name, settings, 44..54)
}

/// The same over `rows` (0 is the top: the floor farthest off).
fn floor_rows(name: &str, settings: &str, rows: std::ops::Range<u32>) -> [f32; 3] {
    let preset = format!(
        "layers = [\"shader.stage\"]\n[params]\n\"shader.stage.file\" = \"shader/stage.wgsl\"\n\"shader.stage.rings\" = 0.0\n\"shader.stage.fog\" = 0.0\n\"master.tonemap\" = \"clamp\"\n\"scene.camera_pitch\" = 30.0\n{settings}"
    );
    let root = support::show_folder(name, &[("presets/s.toml", preset.as_str())]);
    let image = crate::golden::render_project(root.clone(), "s", [96, 54], 2);
    std::fs::remove_dir_all(root).ok();
    let mut sum = [0.0f32; 3];
    let mut n = 0.0;
    for y in rows {
        for x in 0..96 {
            let p = image.get_pixel(x, y);
            for (c, total) in sum.iter_mut().enumerate() {
                *total += support::srgb_to_linear(p[c]);
            }
            n += 1.0;
        }
    }
    sum.map(|c| c / n)
}

#[test]
fn the_scene_s_key_light_lights_the_stage_from_where_its_parameters_put_it() {
    let high = lit_floor("light_high", "\"scene.light_elevation\" = 90.0\n");
    let low = lit_floor("light_low", "\"scene.light_elevation\" = 10.0\n");
    // Diffuse light on the floor goes as the sine of the light's height:
    // (0.18 + 0.82) / (0.18 + 0.82 sin 10°) = 3.1 times the light from
    // overhead.
    let ratio = high[1] / low[1].max(1e-6);
    assert!(
        (2.4..3.8).contains(&ratio),
        "overhead {high:?}, low {low:?}: {ratio}"
    );
    let red = lit_floor(
        "light_red",
        "\"scene.light_elevation\" = 90.0\n\"scene.light_colour\" = [1.0, 0.0, 0.0, 1.0]\n\"scene.ambient\" = [0.0, 0.0, 0.0, 1.0]\n",
    );
    assert!(
        red[0] > 0.8 * high[0] && red[1] < 0.05 * high[1],
        "a red light and no ambient: {red:?} against {high:?}"
    );
}

#[test]
fn the_scene_s_height_fog_hides_the_far_floor_and_thins_upwards() {
    let far = 0..6;
    let fog = |name: &str, density: f32, height: f32| {
        floor_rows(
            name,
            &format!(
                "\"scene.fog\" = [0.0, 0.5, 0.0, 1.0]\n\"scene.fog_density\" = {density:.2}\n\"scene.fog_height\" = {height:.2}\n"
            ),
            far.clone(),
        )
    };
    let clear = fog("fog_off", 0.0, 3.0);
    let thick = fog("fog_thick", 1.0, 50.0);
    let thin = fog("fog_low", 1.0, 0.05);
    // A thick fog turns the far floor the fog's green; one that lies in
    // the last few centimetres over the ground, seen from above it,
    // hardly.
    assert!(thick[1] > 0.4 && thick[0] < 0.05, "thick: {thick:?}");
    assert!(
        thin[1] < 0.5 * thick[1] && thin[1] > clear[1],
        "low {thin:?}, thick {thick:?}, none {clear:?}"
    );
}

/// The test's lens: 60 degrees high, the near plane 5 cm off.
const TAN_HALF: f32 = 0.577_350_3;
const NEAR: f32 = 0.05;
const SIZE: [u32; 2] = [160, 90];

/// A corner seen from a camera 1.5 m above a floor, looking 30 degrees
/// down at a wall 4 m ahead, written into a scene depth by a fullscreen
/// pass of each ray's nearer hit (its eye depth: along the view axis).
fn corner_depth(gpu: &sylva::gpu::Gpu) -> wgpu::TextureView {
    let [w, h] = SIZE;
    let aspect = w as f32 / h as f32;
    let far = NEAR * sylva::engine::camera::CLIP_RANGE;
    let source = format!(
        "@vertex\nfn vs_fullscreen(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {{\n    let uv = vec2<f32>(f32((i << 1u) & 2u), f32(i & 2u));\n    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);\n}}\n\
         @fragment\nfn fs_depth(@builtin(position) at: vec4<f32>) -> @builtin(frag_depth) f32 {{\n    let ndc = vec2<f32>(at.x / {w}.0 * 2.0 - 1.0, 1.0 - at.y / {h}.0 * 2.0);\n    let forward = vec3<f32>(0.0, -0.5, -0.8660254);\n    let up = vec3<f32>(0.0, 0.8660254, -0.5);\n    let ray = forward + up * ndc.y * {TAN_HALF} + vec3<f32>(ndc.x * {TAN_HALF} * {aspect}, 0.0, 0.0);\n    var e = 4.0 / -ray.z;\n    if ray.y < 0.0 {{ e = min(e, 1.5 / -ray.y); }}\n    return {far} * (e - {NEAR}) / (({far} - {NEAR}) * e);\n}}\n"
    );
    let layout = gpu
        .device
        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("test.corner"),
            entries: &[],
        });
    let writer = sylva::gpu::DepthWriter::new(gpu, "test.corner", &source, &layout, "fs_depth")
        .unwrap_or_else(|e| panic!("{e}"));
    let group = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("test.corner"),
        layout: &layout,
        entries: &[],
    });
    let depth = sylva::gpu::raster::scene_depth_view(&gpu.device, SIZE);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    sylva::gpu::raster::clear_depth(&mut encoder, &depth);
    writer.draw(&mut encoder, "test.corner", &depth, &group, None);
    gpu.queue.submit([encoder.finish()]);
    depth
}

/// The scene's ambient occlusion of the corner, a value a pixel.
fn corner_occlusion() -> Vec<f32> {
    use sylva::engine::occlusion::{Occlusion, OcclusionUniforms};
    let gpu = support::gpu();
    let assets = sylva::base::Assets::new(env!("CARGO_MANIFEST_DIR"));
    let depth = corner_depth(&gpu);
    let mut occlusion = Occlusion::new(&gpu, &assets).unwrap_or_else(|e| panic!("{e}"));
    let mut profiler = sylva::gpu::GpuProfiler::new(&gpu.device, &gpu.queue, false);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let uniforms = OcclusionUniforms::new(SIZE, TAN_HALF, NEAR, 0.6, 1.0);
    let texture = occlusion
        .trace(&gpu, &mut encoder, &mut profiler, &depth, &uniforms)
        .texture()
        .clone();
    gpu.queue.submit([encoder.finish()]);
    let texels = sylva::gpu::read_rgba16f(&gpu, &texture).unwrap_or_else(|e| panic!("{e}"));
    texels.iter().map(|t| t[0]).collect()
}

/// The mean occlusion over `rows` in the middle half of the columns.
fn mean_over(ao: &[f32], rows: std::ops::Range<u32>) -> f32 {
    let [w, _] = SIZE;
    let (mut sum, mut n) = (0.0, 0.0);
    for y in rows {
        for x in w / 4..w * 3 / 4 {
            sum += ao[(y * w + x) as usize];
            n += 1.0;
        }
    }
    sum / n
}

#[test]
fn ambient_occlusion_darkens_the_crease_and_not_the_open_floor_or_wall() {
    let ao = corner_occlusion();
    let [_, h] = SIZE;
    // The crease's row: where the floor meets the wall, 4.21 m along the
    // view and 0.70 m above its axis.
    let crease = ((1.0 - 0.701 / (4.214 * TAN_HALF)) * 0.5 * h as f32) as u32;
    let at_crease = mean_over(&ao, crease - 1..crease + 2);
    // The floor at the bottom, 3 m short of the wall; the wall 1.3 m up.
    let open_floor = mean_over(&ao, h - 6..h);
    let open_wall = mean_over(&ao, 0..6);
    assert!(at_crease < 0.8, "the crease is darkened: {at_crease}");
    assert!(open_floor > 0.97, "the open floor is not: {open_floor}");
    assert!(open_wall > 0.97, "the open wall is not: {open_wall}");
    // Nowhere brighter than unoccluded, nowhere black.
    assert!(
        ao.iter().all(|&a| (0.05..=1.0).contains(&a)),
        "{:?}",
        ao.iter().fold(f32::MAX, |m, &a| m.min(a))
    );
}
