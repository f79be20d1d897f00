//! One world: layers that share the scene draw with one camera into one
//! depth, so what is nearer hides what is farther whatever their order in
//! the stack (a golden image, and the same picture in both orders).

use crate::support;

/// Two figures in one scene, `near` (red, in front) and `far` (blue,
/// behind it and a little aside), drawn in the stack order `order`.
fn two_figures(name: &str, order: [&str; 2], only: Option<&str>) -> image::RgbaImage {
    let figure = |id: &str, colour: &str, offset: &str| {
        format!(
            "\"{id}.in_scene\" = true\n\"{id}.scene_offset\" = {offset}\n\"{id}.body\" = \"lit\"\n\"{id}.body_colour\" = {colour}\n\"{id}.brightness\" = 0.0\n\"{id}.attraction_count\" = 600\n\"{id}.node_capacity\" = 2000\n\"{id}.detail\" = 8\n\"{id}.speed\" = 0.0\n"
        )
    };
    let layers: Vec<String> = order
        .iter()
        .filter(|id| only.is_none_or(|o| o == **id))
        .map(|id| format!("\"{id}\""))
        .collect();
    let figures: String = [
        ("skinned.near", "[0.9, 0.05, 0.05, 1.0]", "[0.12, 0.0, 0.9]"),
        (
            "skinned.far",
            "[0.05, 0.05, 0.9, 1.0]",
            "[-0.12, 0.0, -0.9]",
        ),
    ]
    .iter()
    .filter(|(id, ..)| only.is_none_or(|o| o == *id))
    .map(|(id, colour, offset)| figure(id, colour, offset))
    .collect();
    let preset = format!(
        "layers = [{}]\n[params]\n\"scene.camera_distance\" = 4.0\n\"scene.camera_pitch\" = 0.0\n\"scene.camera_yaw\" = 0.0\n\"scene.target\" = [0.0, 1.0, 0.0]\n{figures}",
        layers.join(", "),
    );
    let root = support::show_folder(name, &[("presets/two.toml", preset.as_str())]);
    let image = crate::golden::render_project(root.clone(), "two", [160, 90], 4);
    std::fs::remove_dir_all(root).ok();
    image
}

#[test]
fn layers_in_one_scene_hide_each_other_by_depth_whatever_their_order() {
    let near_first = two_figures("scene_near_first", ["skinned.near", "skinned.far"], None);
    let far_first = two_figures("scene_far_first", ["skinned.far", "skinned.near"], None);
    let near_alone = two_figures(
        "scene_near_alone",
        ["skinned.near", "skinned.far"],
        Some("skinned.near"),
    );
    let red = |p: &image::Rgba<u8>| p[0] > 40 && u32::from(p[0]) > u32::from(p[2]) * 2;
    let blue = |p: &image::Rgba<u8>| p[2] > 40 && u32::from(p[2]) > u32::from(p[0]) * 2;
    let near_pixels: Vec<usize> = near_alone
        .pixels()
        .enumerate()
        .filter(|(_, p)| red(p))
        .map(|(i, _)| i)
        .collect();
    assert!(
        near_pixels.len() > 200,
        "the near figure covers {} pixels",
        near_pixels.len()
    );
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
fn figure_before_water(name: &str, look: &str, water: bool) -> image::RgbaImage {
    let mut layers = vec!["\"skinned\""];
    let mut params = String::from(
        "\"scene.camera_distance\" = 4.0\n\"scene.camera_pitch\" = 0.0\n\"scene.target\" = [0.0, 1.0, 0.0]\n\"skinned.in_scene\" = true\n\"skinned.body\" = \"lit\"\n\"skinned.body_colour\" = [0.9, 0.05, 0.05, 1.0]\n\"skinned.brightness\" = 0.0\n\"skinned.attraction_count\" = 600\n\"skinned.node_capacity\" = 2000\n\"skinned.detail\" = 8\n\"skinned.speed\" = 0.0\n\"skinned.scene_offset\" = [0.0, 0.0, 1.0]\n",
    );
    if water {
        layers.push("\"fluid\"");
        params.push_str(&format!(
            "\"fluid.in_scene\" = true\n\"fluid.render\" = \"{look}\"\n\"fluid.count\" = 3000\n\"fluid.container\" = [1.6, 1.6, 0.4]\n\"fluid.scene_offset\" = [0.0, 0.0, -0.6]\n\"fluid.gravity\" = [0.0, 0.0, 0.0]\n\"fluid.brightness\" = 2.0\n"
        ));
    }
    let preset = format!("layers = [{}]\n[params]\n{params}", layers.join(", "));
    let root = support::show_folder(name, &[("presets/w.toml", preset.as_str())]);
    let image = crate::golden::render_project(root.clone(), "w", [160, 90], 3);
    std::fs::remove_dir_all(root).ok();
    image
}

#[test]
fn water_behind_a_figure_in_the_scene_is_hidden_by_it() {
    let alone = figure_before_water("scene_figure_alone", "particles", false);
    let red = |p: &image::Rgba<u8>| p[0] > 40 && u32::from(p[0]) > u32::from(p[2]) * 2;
    let figure: Vec<usize> = alone
        .pixels()
        .enumerate()
        .filter(|(_, p)| red(p))
        .map(|(i, _)| i)
        .collect();
    assert!(
        figure.len() > 200,
        "the figure covers {} pixels",
        figure.len()
    );
    for look in ["particles", "surface"] {
        let both = figure_before_water(&format!("scene_water_{look}"), look, true);
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
