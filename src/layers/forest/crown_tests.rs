//! The forest's crowns on the software adapter: the biggest on screen
//! drawn whole as the colony grew them, up to the cap, and every other
//! tree as the impostor of its crown, close to the crown drawn whole.

use super::forest::{forest_show, output};
use crate::support;
use crate::support::Checked;

/// Sets `name` to `value` from the UI and plays three frames into
/// `output`, which must raise no error.
fn set_and_play(
    show: &mut sylva::show::Show,
    output: &mut sylva::gpu::RenderTarget,
    name: &str,
    value: sylva::params::Value,
) {
    show.registry
        .set_now(name, value, sylva::params::Source::Ui)
        .checked("setting the forest");
    for _ in 0..3 {
        show.frame(1.0 / 30.0, None, output, |_, _| {});
    }
    let errors = show.ground.errors.snapshot();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn trees_big_on_screen_draw_the_crowns_the_colony_grew_up_to_the_cap() {
    use sylva::params::Value;
    let extra = "\"forest.crowns\" = \"grown\"\n\"forest.grown_pixels\" = 40.0\n\"forest.grown_trees\" = 7\n";
    let root = forest_show("forest_grown", extra, &[]);
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [192, 108]);
    let mut drawn = |show: &mut sylva::show::Show, name: &str, value: Value| {
        set_and_play(show, &mut output, name, value);
        let gpu = show.ground.gpu.clone();
        let report: std::collections::HashMap<String, f64> =
            show.layers()[0].report(&gpu).into_iter().collect();
        let count = |name: &str| report.get(name).copied().checked(name) as u32;
        let [alive, near, far, grown] = [
            "trees",
            "trees_drawn_whole",
            "trees_drawn_as_silhouettes",
            "trees_drawn_grown",
        ]
        .map(count);
        assert!(
            near + far + grown <= alive,
            "{near} + {far} + {grown} of {alive}"
        );
        grown
    };
    // Close up, every tree big on screen grows its crown when the cap
    // allows; under a cap of 7, the biggest that fit it do, the rest draw
    // as impostors.
    drawn(&mut show, "forest.grown_trees", Value::Int(65_536));
    let all = drawn(&mut show, "forest.camera_distance", Value::Float(0.12));
    assert!(all > 7, "{all} trees big on screen");
    let close = drawn(&mut show, "forest.grown_trees", Value::Int(7));
    assert!(
        (1..=7).contains(&close),
        "the biggest within the cap: {close}"
    );
    let far = drawn(&mut show, "forest.camera_distance", Value::Float(10_000.0));
    assert_eq!(far, 0, "from far away no crown is big enough");
    drawn(&mut show, "forest.camera_distance", Value::Float(0.12));
    let off = drawn(&mut show, "forest.crowns", Value::Text("cone".into()));
    assert_eq!(off, 0, "cones only");
    std::fs::remove_dir_all(root).ok();
}

/// The trees not drawn whole draw as impostors of their grown crowns
/// (`impostors.rs`): with every tree an impostor, the picture is close to
/// the one with every tree drawn whole, much closer than the cones'.
#[test]
fn trees_drawn_as_impostors_look_like_their_crowns_drawn_whole() {
    use sylva::params::Value;
    let extra = "\"forest.crowns\" = \"grown\"\n\"forest.grown_pixels\" = 16.0\n\"forest.wind\" = 0.0\n\"forest.camera_distance\" = 1.0\n";
    let root = forest_show("forest_impostors", extra, &[]);
    let mut show = support::show(root.clone(), "f", sylva::gpu::OUTPUT_FORMAT);
    let mut output = output(&show, [192, 108]);
    for _ in 0..20 {
        show.frame(1.0 / 30.0, None, &mut output, |_, _| {});
    }
    let mut picture = |show: &mut sylva::show::Show, name: &str, value: Value| {
        set_and_play(show, &mut output, name, value);
        sylva::gpu::read_rgba8(&show.ground.gpu, &output.texture).checked("reading the frame")
    };
    // The forest stands still from here.
    picture(&mut show, "forest.steps_per_frame", Value::Int(0));
    let whole = picture(&mut show, "forest.grown_trees", Value::Int(65_536));
    let report: std::collections::HashMap<String, f64> = show.layers()[0]
        .report(&show.ground.gpu)
        .into_iter()
        .collect();
    let grown = report.get("trees_drawn_grown").copied().unwrap_or(0.0);
    let impostors = picture(&mut show, "forest.grown_trees", Value::Int(0));
    let cones = picture(&mut show, "forest.crowns", Value::Text("cone".into()));
    // How far apart two pictures are in the mean of each 8 x 8 block: a
    // leaf or a twig an impostor has a texel off matters less than where
    // the crowns are and what colour.
    let blocks = |picture: &image::RgbaImage| -> Vec<f64> {
        let (w, h) = (picture.width() / 8, picture.height() / 8);
        let mut means = vec![0.0; (w * h * 3) as usize];
        for (x, y, pixel) in picture.enumerate_pixels() {
            if x / 8 < w && y / 8 < h {
                for c in 0..3 {
                    means[(((y / 8) * w + x / 8) * 3) as usize + c] += f64::from(pixel[c]) / 64.0;
                }
            }
        }
        means
    };
    let apart = |a: &image::RgbaImage, b: &image::RgbaImage| {
        let (a, b) = (blocks(a), blocks(b));
        a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum::<f64>() / a.len() as f64
    };
    let (as_impostors, as_cones) = (apart(&whole, &impostors), apart(&whole, &cones));
    assert!(grown > 20.0, "{grown} trees drawn whole");
    for (name, picture) in [
        ("whole", &whole),
        ("impostors", &impostors),
        ("cones", &cones),
    ] {
        picture
            .save(root.join(format!("{name}.png")))
            .checked("saving a frame");
    }
    assert!(
        as_impostors < 0.6 * as_cones,
        "impostors {as_impostors:.2} from the crowns drawn whole, cones {as_cones:.2} (frames in {})",
        root.display()
    );
    std::fs::remove_dir_all(root).ok();
}
