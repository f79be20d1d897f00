//! The scene's lens (`engine::lens`): depth of field keeps what is at the
//! focus sharp and blurs what is far from it; motion blur smears what the
//! camera's turn moves across the picture and leaves a still camera's
//! picture as it was.

use crate::support;
use crate::support::Checked;

const SIZE: [u32; 2] = [320, 180];

/// A still, opaque figure of `colour` at `offset` in the scene.
fn figure(id: &str, colour: &str, offset: &str) -> String {
    format!(
        "\"{id}.in_scene\" = true\n\"{id}.scene_offset\" = {offset}\n\"{id}.body\" = \"lit\"\n\"{id}.body_colour\" = {colour}\n\"{id}.brightness\" = 0.0\n\"{id}.attraction_count\" = 600\n\"{id}.node_capacity\" = 2000\n\"{id}.detail\" = 8\n\"{id}.speed\" = 0.0\n"
    )
}

/// The last of `frames` frames of a red figure 4 m from the camera (what it
/// looks at) and a blue one 14 m off, with `settings`.
fn two_figures(name: &str, settings: &str, frames: u32) -> image::RgbaImage {
    let preset = format!(
        "layers = [\"skinned.near\", \"skinned.far\"]\n[params]\n\"scene.camera_distance\" = 4.0\n\"scene.camera_pitch\" = 0.0\n\"scene.camera_yaw\" = 0.0\n\"scene.target\" = [0.0, 1.0, 0.0]\n{}{}{settings}",
        figure("skinned.near", "[0.9, 0.05, 0.05, 1.0]", "[0.5, 0.0, 0.0]"),
        figure(
            "skinned.far",
            "[0.05, 0.05, 0.9, 1.0]",
            "[-1.5, 0.0, -10.0]"
        ),
    );
    let root = support::show_folder(name, &[("presets/p.toml", preset.as_str())]);
    let image = crate::golden::render_project(root.clone(), "p", SIZE, frames);
    std::fs::remove_dir_all(root).ok();
    image
        .save(support::out_dir().join(format!("{name}.png")))
        .checked("keeping the frame");
    image
}

/// The summed squared difference of `channel` between neighbours across
/// `columns`: how sharp the edges there are (blurring an edge over n
/// pixels keeps its summed difference and divides this by n).
fn sharpness(image: &image::RgbaImage, channel: usize, columns: std::ops::Range<u32>) -> f64 {
    let mut sum = 0.0;
    for y in 0..image.height() {
        for x in columns.start..columns.end.min(image.width() - 1) {
            let (p, q) = (image.get_pixel(x, y), image.get_pixel(x + 1, y));
            sum += f64::from(p[channel].abs_diff(q[channel])).powi(2);
        }
    }
    sum
}

#[test]
fn depth_of_field_keeps_the_focus_sharp_and_blurs_what_is_far_from_it() {
    // Without anti-aliasing, so the frames differ by the lens alone.
    let plain = "\"scene.antialias\" = false\n";
    let sharp = two_figures("lens_sharp", plain, 3);
    let blurred = two_figures(
        "lens_focused",
        &format!("{plain}\"scene.aperture\" = 0.03\n"),
        3,
    );
    // The near figure stands right of the middle, the far one left.
    let (near, far) = (SIZE[0] / 2..SIZE[0], 0..SIZE[0] / 2);
    let near_kept = sharpness(&blurred, 0, near.clone()) / sharpness(&sharp, 0, near);
    let far_kept = sharpness(&blurred, 2, far.clone()) / sharpness(&sharp, 2, far);
    // (The near figure's own depth spans 0.4 m about the focus: its
    // shading softens a little.)
    assert!(
        near_kept > 0.7 && far_kept < near_kept * 0.5,
        "in focus the figure keeps its edges ({near_kept}), far off they soften ({far_kept})"
    );
}

#[test]
fn motion_blur_smears_a_turn_and_leaves_a_still_camera_as_it_was() {
    let plain = "\"scene.antialias\" = false\n";
    let open = format!("{plain}\"scene.motion_blur\" = 1.0\n");
    let still = two_figures("lens_still", plain, 3);
    let still_open = two_figures("lens_still_open", &open, 3);
    let same = (still.pixels().zip(still_open.pixels()))
        .filter(|(p, q)| (0..3).any(|c| p[c].abs_diff(q[c]) > 1))
        .count();
    assert_eq!(same, 0, "pixels a still camera's shutter changed");
    // The camera swinging round at 90 degrees a second.
    let turning = "\"scene.auto_rotate\" = 90.0\n";
    let shut = two_figures("lens_turning", &format!("{plain}{turning}"), 20);
    let smeared = two_figures("lens_turning_open", &format!("{open}{turning}"), 20);
    let all = 0..SIZE[0];
    let kept = sharpness(&smeared, 0, all.clone()) / sharpness(&shut, 0, all);
    assert!(
        kept < 0.8,
        "the turn smears the figure's edges across it: {kept}"
    );
}
