//! One world: layers that share the scene draw with one camera into one
//! depth, so what is nearer hides what is farther whatever their order in
//! the stack (a golden image, and the same picture in both orders), and
//! water in the scene is hidden by a figure standing before it; the stage
//! puts a floor and sky around the scene and the figure's shadow on it, and
//! a forest without its backdrop lets it show.

use crate::support;

/// The scene's camera: 4 m from a point a metre up, level, facing -z.
const CAMERA: &str = "\"scene.camera_distance\" = 4.0\n\"scene.camera_pitch\" = 0.0\n\"scene.camera_yaw\" = 0.0\n\"scene.target\" = [0.0, 1.0, 0.0]\n";

/// A skinned layer `id` in the scene at `offset`: a still, opaque figure
/// of `colour` with no branches.
fn figure(id: &str, colour: &str, offset: &str) -> String {
    format!(
        "\"{id}.in_scene\" = true\n\"{id}.scene_offset\" = {offset}\n\"{id}.body\" = \"lit\"\n\"{id}.body_colour\" = {colour}\n\"{id}.brightness\" = 0.0\n\"{id}.attraction_count\" = 600\n\"{id}.node_capacity\" = 2000\n\"{id}.detail\" = 8\n\"{id}.speed\" = 0.0\n"
    )
}

/// `frames` frames at 160x90 of a preset of `layers` with `params` (and
/// the scene's camera).
fn render(name: &str, layers: &[&str], params: &str, frames: u32) -> image::RgbaImage {
    let quoted: Vec<String> = layers.iter().map(|id| format!("\"{id}\"")).collect();
    let preset = format!(
        "layers = [{}]\n[params]\n{CAMERA}{params}",
        quoted.join(", ")
    );
    let root = support::show_folder(name, &[("presets/p.toml", preset.as_str())]);
    let image = crate::golden::render_project(root.clone(), "p", [160, 90], frames);
    std::fs::remove_dir_all(root).ok();
    image
}

fn red(p: &image::Rgba<u8>) -> bool {
    p[0] > 40 && u32::from(p[0]) > u32::from(p[2]) * 2
}

fn blue(p: &image::Rgba<u8>) -> bool {
    p[2] > 40 && u32::from(p[2]) > u32::from(p[0]) * 2
}

/// The indices of `image`'s red pixels: where a red figure stands.
fn red_pixels(image: &image::RgbaImage) -> Vec<usize> {
    let pixels: Vec<usize> = image
        .pixels()
        .enumerate()
        .filter(|(_, p)| red(p))
        .map(|(i, _)| i)
        .collect();
    assert!(
        pixels.len() > 200,
        "the figure covers {} pixels",
        pixels.len()
    );
    pixels
}

/// Two figures in one scene, `skinned.near` (red, in front) and
/// `skinned.far` (blue, behind it and a little aside), in stack order
/// `order`.
fn two_figures(name: &str, order: &[&str]) -> image::RgbaImage {
    let params: String = order
        .iter()
        .map(|&id| match id {
            "skinned.near" => figure(id, "[0.9, 0.05, 0.05, 1.0]", "[0.12, 0.0, 0.9]"),
            _ => figure(id, "[0.05, 0.05, 0.9, 1.0]", "[-0.12, 0.0, -0.9]"),
        })
        .collect();
    render(name, order, &params, 4)
}

#[test]
fn layers_in_one_scene_hide_each_other_by_depth_whatever_their_order() {
    let near_first = two_figures("scene_near_first", &["skinned.near", "skinned.far"]);
    let far_first = two_figures("scene_far_first", &["skinned.far", "skinned.near"]);
    let near_pixels = red_pixels(&two_figures("scene_near_alone", &["skinned.near"]));
    for (image, order) in [(&near_first, "near first"), (&far_first, "far first")] {
        let pixels: Vec<&image::Rgba<u8>> = image.pixels().collect();
        let hidden = near_pixels.iter().filter(|&&i| blue(pixels[i])).count();
        assert!(
            hidden * 100 <= near_pixels.len(),
            "{order}: the far figure shows through the near one at {hidden} of {} pixels",
            near_pixels.len()
        );
        let far_seen = pixels.iter().filter(|p| blue(p)).count();
        assert!(
            far_seen > 50,
            "{order}: the far figure shows beside the near one ({far_seen} px)"
        );
    }
    crate::golden::check_golden("tests/golden/scene_two_figures_160x90.png", &near_first);
    crate::golden::check_golden("tests/golden/scene_two_figures_160x90.png", &far_first);
}

/// A red figure in front of a fluid's tank in one scene (`look`: the
/// fluid's `render`), or the figure alone.
fn figure_before_water(name: &str, look: Option<&str>) -> image::RgbaImage {
    // Sharp edges: the anti-aliasing would blend the figure's rim with
    // what stands behind it, the water.
    let mut params = figure("skinned", "[0.9, 0.05, 0.05, 1.0]", "[0.0, 0.0, 1.0]")
        + "\"scene.antialias\" = false\n";
    let mut layers = vec!["skinned"];
    if let Some(look) = look {
        layers.push("fluid");
        params.push_str(&format!(
            "\"fluid.in_scene\" = true\n\"fluid.render\" = \"{look}\"\n\"fluid.count\" = 3000\n\"fluid.container\" = [1.6, 1.6, 0.4]\n\"fluid.scene_offset\" = [0.0, 0.0, -0.6]\n\"fluid.gravity\" = [0.0, 0.0, 0.0]\n\"fluid.brightness\" = 2.0\n"
        ));
    }
    render(name, &layers, &params, 3)
}

#[test]
fn water_behind_a_figure_in_the_scene_is_hidden_by_it() {
    let alone = figure_before_water("scene_figure_alone", None);
    let figure = red_pixels(&alone);
    for look in ["particles", "surface"] {
        let both = figure_before_water(&format!("scene_water_{look}"), Some(look));
        let (a, b): (Vec<_>, Vec<_>) = (alone.pixels().collect(), both.pixels().collect());
        let changed = |i: usize| (0..3).any(|c| a[i][c].abs_diff(b[i][c]) > 12);
        let over_figure = figure.iter().filter(|&&i| changed(i)).count();
        let elsewhere = (0..a.len()).filter(|&i| changed(i)).count() - over_figure;
        assert!(
            elsewhere > 100,
            "{look}: the water shows beside the figure ({elsewhere} px)"
        );
        assert!(
            over_figure * 50 <= figure.len(),
            "{look}: water behind the figure shows through it at {over_figure} of {} pixels",
            figure.len()
        );
    }
}

/// The fluid's tank as [`figure_before_water`] has it, its surface look.
const WATER: &str = "\"fluid.in_scene\" = true\n\"fluid.render\" = \"surface\"\n\"fluid.count\" = 3000\n\"fluid.container\" = [1.6, 1.6, 0.4]\n\"fluid.scene_offset\" = [0.0, 0.0, -0.6]\n\"fluid.gravity\" = [0.0, 0.0, 0.0]\n\"fluid.brightness\" = 2.0\n";

#[test]
fn a_figure_behind_the_water_is_hidden_by_its_surface_though_drawn_after_it() {
    // The figure stands behind the tank and comes after the fluid in the
    // stack: only the surface's depth in the scene can hide it.
    let body = figure("skinned", "[0.9, 0.05, 0.05, 1.0]", "[-0.5, 0.0, -1.6]");
    let alone = render("scene_behind_alone", &["skinned"], &body, 3);
    let figure_at = red_pixels(&alone);
    let water = render("scene_water_only", &["fluid"], WATER, 3);
    let both = render(
        "scene_behind_water",
        &["fluid", "skinned"],
        &(body + WATER),
        3,
    );
    for (image, name) in [
        (&both, "scene_behind_water.png"),
        (&water, "scene_water_only.png"),
    ] {
        image.save(support::out_dir().join(name)).ok();
    }
    let (w, b): (Vec<_>, Vec<_>) = (water.pixels().collect(), both.pixels().collect());
    let wet = |i: usize| w[i][0] as u32 + w[i][1] as u32 + w[i][2] as u32 > 30;
    let behind: Vec<usize> = figure_at.iter().copied().filter(|&i| wet(i)).collect();
    let elsewhere: Vec<usize> = figure_at.iter().copied().filter(|&i| !wet(i)).collect();
    assert!(
        behind.len() > 100 && elsewhere.len() > 50,
        "the tank covers {} of the figure's {} pixels",
        behind.len(),
        figure_at.len()
    );
    let shows = |pixels: &[usize]| pixels.iter().filter(|&&i| red(b[i])).count();
    assert!(
        shows(&behind) * 10 <= behind.len(),
        "the figure shows through the water at {} of {} pixels",
        shows(&behind),
        behind.len()
    );
    assert!(
        shows(&elsewhere) * 10 >= elsewhere.len() * 9,
        "the figure beside the water stays: {} of {}",
        shows(&elsewhere),
        elsewhere.len()
    );
}

/// The stage (shaders/shader/stage.wgsl) as the scene's ground and sky,
/// without its clouds, stars and rings, with the scene's shadows and the
/// floor's contact darkening as `shadow` says.
fn stage(shadow: f32) -> String {
    format!(
        "\"shader.stage.file\" = \"shader/stage.wgsl\"\n\"shader.stage.clouds\" = 0.0\n\"shader.stage.stars\" = 0.0\n\"shader.stage.rings\" = 0.0\n\"shader.stage.shadow\" = {shadow}\n\"scene.shadows\" = {shadow}\n"
    )
}

/// Summed brightness of the pixels of `image` in `rows` x `columns` that
/// the figure does not cover.
fn floor_light(
    image: &image::RgbaImage,
    rows: std::ops::Range<u32>,
    columns: std::ops::Range<u32>,
) -> f64 {
    let mut sum = 0.0;
    for y in rows {
        for x in columns.clone() {
            let p = image.get_pixel(x, y);
            if !red(p) {
                sum += f64::from(p[0]) + f64::from(p[1]) + f64::from(p[2]);
            }
        }
    }
    sum
}

/// `frames` frames at 160x90 of the preset `text`, the last kept in
/// tests/out as `name`.png to look at.
fn kept_render(name: &str, text: &str, frames: u32) -> image::RgbaImage {
    let root = support::show_folder(name, &[("presets/p.toml", text)]);
    let image = crate::golden::render_project(root.clone(), "p", [160, 90], frames);
    std::fs::remove_dir_all(root).ok();
    image
        .save(support::out_dir().join(format!("{name}.png")))
        .ok();
    image
}

/// The figure on the stage seen from above its front, lit by a key light
/// low at `azimuth` (degrees: 90 stands at +x, the picture's right), its
/// shadow from the scene's map alone (no contact darkening).
fn lit_from(azimuth: f32) -> image::RgbaImage {
    let body = figure("skinned", "[0.9, 0.05, 0.05, 1.0]", "[0.0, 0.0, 0.0]");
    let preset = format!(
        "layers = [\"shader.stage\", \"skinned\"]\n[params]\n\"scene.camera_distance\" = 5.0\n\"scene.camera_pitch\" = 35.0\n\"scene.camera_yaw\" = 0.0\n\"scene.target\" = [0.0, 0.6, 0.0]\n\"scene.light_elevation\" = 35.0\n\"scene.light_azimuth\" = {azimuth}\n{}\"shader.stage.fog\" = 0.0\n{body}",
        stage(0.0).replace("\"scene.shadows\" = 0\n", "\"scene.shadows\" = 1.0\n")
    );
    let name = format!(
        "shadow_from_{}",
        if azimuth > 0.0 { "right" } else { "left" }
    );
    kept_render(&name, &preset, 3)
}

#[test]
fn a_figure_s_shadow_falls_on_the_floor_where_the_key_light_projects_it() {
    let from_right = lit_from(90.0);
    let from_left = lit_from(-90.0);
    let _ = red_pixels(&from_right);
    // The floor beside the feet: the shadow of a figure 1.7 m tall under a
    // light 35 degrees high reaches 2.4 m along the floor away from it.
    let (left, right) = ((52..59, 20..72), (52..59, 88..140));
    let light = |image: &image::RgbaImage,
                 (rows, columns): &(std::ops::Range<u32>, std::ops::Range<u32>)| {
        floor_light(image, rows.clone(), columns.clone())
    };
    assert!(
        light(&from_right, &left) < 0.85 * light(&from_left, &left),
        "lit from the right, the shadow falls left: {} against {}",
        light(&from_right, &left),
        light(&from_left, &left)
    );
    assert!(
        light(&from_left, &right) < 0.85 * light(&from_right, &right),
        "lit from the left, the shadow falls right: {} against {}",
        light(&from_left, &right),
        light(&from_right, &right)
    );
    // In front of the feet, towards the camera, no shadow either way.
    let front = (80..90, 60..100);
    let (a, b) = (light(&from_right, &front), light(&from_left, &front));
    assert!((a - b).abs() < 0.02 * a, "in front: {a} and {b}");
}

/// The stage under a colony grown as tubes in the scene, lit from
/// straight above, with the scene's shadows at `shadows`.
fn under_a_tree(shadows: f32) -> image::RgbaImage {
    let preset = format!(
        "layers = [\"shader.stage\", \"colony\"]\n[params]\n\"scene.camera_distance\" = 6.0\n\"scene.camera_pitch\" = 60.0\n\"scene.target\" = [0.0, 0.0, 0.0]\n\"scene.light_elevation\" = 90.0\n{}\"shader.stage.fog\" = 0.0\n\"scene.shadows\" = {shadows:.1}\n\"colony.in_scene\" = true\n\"colony.render\" = \"tubes\"\n\"colony.scene_offset\" = [0.0, 1.5, 0.0]\n\"colony.scene_scale\" = 0.3\n\"colony.steps_per_frame\" = 40\n",
        stage(0.0).replace("\"scene.shadows\" = 0\n", "")
    );
    let name = format!("tree_shadows_{shadows}");
    kept_render(&name, &preset, 12)
}

#[test]
fn the_colony_s_tubes_in_the_scene_cast_their_shadow_on_the_floor() {
    let lit = under_a_tree(0.0);
    let shaded = under_a_tree(1.0);
    // The same picture but where the branches hide the light from the
    // floor: there, darker in every channel.
    let darker = darkened(&lit, &shaded);
    let brighter = lit
        .pixels()
        .zip(shaded.pixels())
        .filter(|(a, b)| (0..3).any(|c| u16::from(a[c]) + 3 < u16::from(b[c])))
        .count();
    assert!(darker > 30, "pixels in the branches' shadow: {darker}");
    assert_eq!(brighter, 0, "a shadow only darkens");
}

/// A small forest in the scene on its own ground, seen from the front,
/// lit from the right 30 degrees up, its crowns as `crowns`, with the
/// scene's shadows at `shadows`.
fn grove(crowns: &str, shadows: f32) -> image::RgbaImage {
    let preset = format!(
        "layers = [\"forest\"]\n[params]\n\"scene.camera_distance\" = 7.0\n\"scene.camera_pitch\" = 40.0\n\"scene.target\" = [0.0, 0.0, 0.0]\n\"scene.light_elevation\" = 30.0\n\"scene.light_azimuth\" = 90.0\n\"scene.shadows\" = {shadows:.1}\n\"scene.antialias\" = false\n\"scene.occlusion\" = 0.0\n\"forest.in_scene\" = true\n\"forest.scene_scale\" = 0.08\n\"forest.map_size\" = 64\n\"forest.initial_trees\" = 300\n\"forest.auto_rotate\" = 0.0\n\"forest.wind\" = 0.0\n\"forest.fog_density\" = 0.0\n\"forest.crowns\" = \"{crowns}\"\n"
    );
    kept_render(&format!("grove_{crowns}_{shadows}"), &preset, 12)
}

/// Pixels of `shaded` darker in every channel than in `lit`.
fn darkened(lit: &image::RgbaImage, shaded: &image::RgbaImage) -> usize {
    lit.pixels()
        .zip(shaded.pixels())
        .filter(|(a, b)| (0..3).all(|c| u16::from(b[c]) + 3 < u16::from(a[c])))
        .count()
}

#[test]
fn the_forest_s_impostors_cast_their_crowns_toward_the_light() {
    // Trees drawn as impostors cast as impostors facing the light: lit
    // from the side, their shadows darken the ground more than a quarter
    // as much as the cones' (a crown has gaps a cone has not: 30% on
    // lavapipe); a square facing the viewer instead is seen nearly edge-on
    // by the light and casts less (23%).
    let impostors = darkened(&grove("grown", 0.0), &grove("grown", 1.0));
    let cones = darkened(&grove("cone", 0.0), &grove("cone", 1.0));
    assert!(cones > 200, "pixels in the cones' shadows: {cones}");
    assert!(
        impostors * 100 > cones * 27,
        "pixels in the impostors' shadows: {impostors}, the cones': {cones}"
    );
}

#[test]
fn the_stage_gives_the_scene_a_floor_and_sky_and_the_figure_a_shadow_on_it() {
    let layers = ["shader.stage", "skinned.near"];
    let body = figure("skinned.near", "[0.9, 0.05, 0.05, 1.0]", "[0.0, 0.0, 0.0]");
    let shaded = render("stage_shadow", &layers, &(stage(0.9) + &body), 4);
    let unshaded = render("stage_no_shadow", &layers, &(stage(0.0) + &body), 4);
    let _ = red_pixels(&shaded);
    for (image, name) in [
        (&shaded, "stage_shadow.png"),
        (&unshaded, "stage_no_shadow.png"),
    ] {
        image.save(support::out_dir().join(name)).ok();
    }
    // Sky above, floor below: neither black, and not the same colour.
    let sky = shaded.get_pixel(10, 2);
    let floor = shaded.get_pixel(10, 88);
    assert!(
        u32::from(sky[0]) + u32::from(sky[1]) + u32::from(sky[2]) > 15,
        "sky {sky:?}"
    );
    assert!(
        u32::from(floor[0]) + u32::from(floor[1]) + u32::from(floor[2]) > 5,
        "floor {floor:?}"
    );
    assert_ne!(sky, floor);
    // Where its shadow falls (behind and left of it, along the key light)
    // the floor is darker with shadows than without.
    let near_feet = (65..74, 45..80);
    let with = floor_light(&shaded, near_feet.0.clone(), near_feet.1.clone());
    let without = floor_light(&unshaded, near_feet.0, near_feet.1);
    assert!(
        with < without * 0.95,
        "floor light near the feet: {with} with shadows, {without} without"
    );
    // Far from the figure the floor is the same either way.
    let aside = floor_light(&shaded, 70..90, 0..12) - floor_light(&unshaded, 70..90, 0..12);
    assert!(
        aside.abs() < 0.02 * floor_light(&unshaded, 70..90, 0..12) + 50.0,
        "aside: {aside}"
    );
}

#[test]
fn a_forest_without_its_backdrop_lets_the_stage_below_show_around_its_trees() {
    // A magenta "stage" under a small forest seen level from its edge: with
    // its backdrop the forest's own sky covers the top of the picture, without
    // it the magenta shows there and the trees still stand in front of it.
    let magenta = "@fragment\nfn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {\n    return vec4<f32>(1.0, 0.0, 1.0, 1.0);\n}\n";
    let picture = |backdrop: bool| {
        let preset = format!(
            "layers = [\"shader.magenta\", \"forest\"]\n[params]\n\"master.tonemap\" = \"clamp\"\n\"forest.initial_trees\" = 400\n\"forest.map_size\" = 64\n\"forest.camera_pitch\" = 5.0\n\"forest.backdrop\" = {backdrop}\n"
        );
        let root = support::show_folder(
            &format!("forest_backdrop_{backdrop}"),
            &[
                ("presets/p.toml", preset.as_str()),
                ("shaders/shader/magenta.wgsl", magenta),
            ],
        );
        let image = crate::golden::render_project(root.clone(), "p", [160, 90], 2);
        std::fs::remove_dir_all(root).ok();
        image
    };
    let magenta_share = |image: &image::RgbaImage| {
        let top = image.pixels().take(160 * 10);
        top.filter(|p| p[0] > 200 && p[1] < 60 && p[2] > 200)
            .count()
    };
    let with = picture(true);
    let without = picture(false);
    assert_eq!(
        magenta_share(&with),
        0,
        "the forest's own sky hides the stage"
    );
    assert!(
        magenta_share(&without) > 800,
        "the stage shows above the trees: {}",
        magenta_share(&without)
    );
    let green = without
        .pixels()
        .filter(|p| p[1] > p[0] && p[1] > p[2])
        .count();
    assert!(
        green > 300,
        "trees drawn over the stage: {green} green pixels"
    );
}

/// `frames` frames of a still red figure on the stage (the scene's
/// anti-aliasing as `settings` say), each read back; after `cut` frames
/// (if any) the figure is switched off.
fn still_figure(
    name: &str,
    settings: &str,
    frames: usize,
    cut: Option<usize>,
) -> Vec<image::RgbaImage> {
    use crate::support::Checked;
    use sylva::gpu::{OUTPUT_FORMAT, RenderTarget, read_rgba8};
    use sylva::params::{Source, Value};
    let body = figure("skinned", "[0.9, 0.05, 0.05, 1.0]", "[0.0, 0.0, 0.0]");
    let preset = format!(
        "layers = [\"shader.stage\", \"skinned\"]\n[params]\n{CAMERA}{}\"shader.stage.fog\" = 0.0\n{body}{settings}",
        stage(0.0)
    );
    let root = support::show_folder(name, &[("presets/p.toml", preset.as_str())]);
    let mut show = support::show(root.clone(), "p", OUTPUT_FORMAT);
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "test.output",
        [160, 90],
        OUTPUT_FORMAT,
    );
    let mut images = Vec::new();
    for frame in 0..frames {
        if cut == Some(frame) {
            let off = show
                .registry
                .set("skinned.enabled", Value::Bool(false), Source::Midi);
            off.checked("switching the figure off");
        }
        show.frame(1.0 / 60.0, None, &mut output, |_, _| {});
        images
            .push(read_rgba8(&show.ground.gpu, &output.texture).checked("reading the frame back"));
    }
    assert!(
        show.ground.errors.snapshot().is_empty(),
        "{:?}",
        show.ground.errors.snapshot()
    );
    std::fs::remove_dir_all(root).ok();
    images
}

/// Mean difference of two frames, in 8-bit steps a channel.
fn mean_step(a: &image::RgbaImage, b: &image::RgbaImage) -> f64 {
    let total: u64 = (a.pixels().zip(b.pixels()))
        .map(|(p, q)| (0..3).map(|c| u64::from(p[c].abs_diff(q[c]))).sum::<u64>())
        .sum();
    total as f64 / (f64::from(a.width() * a.height()) * 3.0)
}

#[test]
fn the_scene_s_anti_aliasing_settles_on_a_still_scene() {
    // Each frame is drawn shifted within its pixels: kept as drawn, the
    // figure's edges step from frame to frame; gathered, they settle.
    let drawn = still_figure("taa_drawn", "\"scene.antialias_history\" = 0.0\n", 40, None);
    let gathered = still_figure("taa_gathered", "", 40, None);
    let settled = mean_step(&gathered[38], &gathered[39]);
    let stepping = mean_step(&drawn[38], &drawn[39]);
    assert!(
        stepping > 0.5,
        "without history the shifts show: {stepping}"
    );
    assert!(
        settled < stepping * 0.2,
        "gathered {settled}, drawn {stepping}"
    );
    // The gathered edge is the drawn ones' mean, not a blur of them.
    let off = still_figure("taa_off", "\"scene.antialias\" = false\n", 2, None);
    let near_still = mean_step(&gathered[39], &off[1]);
    assert!(near_still < 1.0, "gathered against unshifted: {near_still}");
}

#[test]
fn the_scene_s_anti_aliasing_leaves_no_ghost_after_a_cut() {
    // The figure switched off after 30 still frames: the first frame
    // after it shows the stage where it stood, not a fading figure.
    let cut = still_figure("taa_cut", "", 31, Some(30));
    let empty = still_figure("taa_empty", "\"skinned.enabled\" = false\n", 31, None);
    red_pixels(&cut[29]);
    let ghost = cut[30].pixels().filter(|p| red(p)).count();
    assert_eq!(ghost, 0, "pixels of the figure left after the cut");
    let after = mean_step(&cut[30], &empty[30]);
    assert!(
        after < 1.5,
        "after the cut, against the empty stage: {after}"
    );
}
