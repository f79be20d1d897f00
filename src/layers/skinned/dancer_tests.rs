//! The shipped figures (`assets/Dancer.glb`, a woman, and
//! `assets/RobotExpressive.glb`, both built in): the robot's rigid parts
//! standing where its nodes put them, the materials as the files have
//! them, the clips skinned on the GPU as the CPU reference skins them,
//! and the half-translucent skin showing the branches inside where the
//! lit one hides them.

use std::path::PathBuf;

use sylva::layers::skinned::asset::skin_at;
use sylva::layers::skinned::model::Model;
use sylva::layers::skinned::pose::skin_vertex;

use super::{gpu_against_reference, skinned_show};

fn shipped(file: &str) -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(file);
    Model::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn dancer() -> Model {
    shipped("RobotExpressive.glb")
}

/// Each of `clips` of `model` skinned on the GPU within a ten-thousandth
/// of the model's size of the CPU reference (normals within 1e-3), at
/// three times, by quaternions and by matrices.
fn skins_as_the_reference(model: &Model, clips: &[&str]) {
    for name in clips {
        let Some(clip) = model.clip_index(name) else {
            panic!("the figure has no clip {name}");
        };
        let duration = model.clips[clip].duration;
        for time in [0.0, 0.37 * duration, 0.81 * duration] {
            for matrices in [false, true] {
                let (position, normal) = gpu_against_reference(model, Some(clip), time, matrices);
                assert!(
                    position <= 1e-4 && normal <= 1e-3,
                    "{name} at {time} s (matrices {matrices}): positions off by {position} of the size, normals by {normal}"
                );
            }
        }
    }
}

#[test]
fn the_woman_is_a_skinned_figure_of_her_file_s_colours_and_clips() {
    let model = shipped("Dancer.glb");
    let (low, high) = model.bounds();
    let height = high.y - low.y;
    assert!(
        (1.5..2.1).contains(&height) && low.y.abs() < 0.1,
        "a figure of a person's height standing on the ground: {low} to {high}"
    );
    assert!(
        model.meshes.iter().all(|m| m.skinned),
        "every mesh rides the skeleton"
    );
    let skin = [0.617_207, 0.417_885, 0.238_398];
    assert!(
        (model.vertices.iter()).any(|v| v
            .material
            .colour
            .iter()
            .zip(skin)
            .all(|(a, b)| (a - b).abs() < 1e-5)),
        "her skin's colour is her file's"
    );
    for clip in [
        "Wave",
        "Walk",
        "Run",
        "Idle",
        "Punch_Left",
        "Kick_Right",
        "Roll",
    ] {
        assert!(model.clip_index(clip).is_some(), "no clip {clip}");
    }
    skins_as_the_reference(&model, &["Wave", "Run", "Kick_Right"]);
}

#[test]
fn the_dancer_s_rigid_parts_stand_where_its_nodes_put_them() {
    let model = dancer();
    let rest = skin_at(&model, None, 0.0);
    let mut first = 0;
    let mut rigid = 0;
    for mesh in &model.meshes {
        let vertices = &model.vertices[first..first + mesh.vertices];
        first += mesh.vertices;
        if mesh.skinned {
            continue;
        }
        for vertex in vertices {
            // At rest a part's node stands where it was bound: the skin
            // leaves its vertices where the model holds them.
            let (at_rest, _) = skin_vertex(vertex, &rest);
            assert!(
                at_rest.distance(vertex.position) <= 1e-4 * model.size(),
                "{}: a vertex bound at {} stands at {at_rest} at rest",
                mesh.name,
                vertex.position
            );
            rigid += 1;
        }
    }
    assert!(
        rigid > 5000,
        "the robot is mostly rigid parts: {rigid} vertices"
    );
    let (low, high) = model.bounds();
    assert!(
        low.y.abs() < 0.1 && high.y > 4.0,
        "the parts stand as a figure 4.5 units tall, not heaped at its origin: {low} to {high}"
    );
}

#[test]
fn the_dancer_s_materials_are_its_file_s() {
    let model = dancer();
    let mut colours: Vec<[f32; 3]> = Vec::new();
    for vertex in &model.vertices {
        let material = vertex.material;
        assert!(
            (material.metallic - 0.1).abs() < 1e-6 && (material.roughness - 0.9).abs() < 1e-6,
            "{material:?}"
        );
        if !colours.contains(&material.colour) {
            colours.push(material.colour);
        }
    }
    assert_eq!(colours.len(), 3, "grey, main and black: {colours:?}");
    let main = [0.590_328, 0.291_314, 0.038_338];
    assert!(
        colours
            .iter()
            .any(|c| c.iter().zip(main).all(|(a, b)| (a - b).abs() < 1e-5)),
        "the main orange: {colours:?}"
    );
}

#[test]
fn the_shipped_dancer_skins_on_the_gpu_as_the_reference_does() {
    skins_as_the_reference(&dancer(), &["Dance", "Idle", "Walking"]);
}

/// The mean difference, in 8-bit steps per channel, between two pictures.
fn mean_difference(a: &image::RgbaImage, b: &image::RgbaImage) -> f64 {
    let total: u64 = (a.as_raw().iter())
        .zip(b.as_raw())
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    total as f64 / a.as_raw().len() as f64
}

#[test]
fn the_skin_shows_the_branches_inside_and_the_lit_body_hides_them() {
    // The show folder has no assets/: the built-in dancer stands in.
    let picture = |body: &str, brightness: f32| {
        let extra = format!(
            "\"skinned.model\" = \"RobotExpressive.glb\"\n\"skinned.body\" = \"{body}\"\n\"skinned.body_opacity\" = 0.35\n\"skinned.brightness\" = {brightness}\n"
        );
        let root = skinned_show(&format!("dancer_{body}_{brightness}"), &extra);
        let image = crate::golden::render_project(root.clone(), "s", [128, 96], 40);
        std::fs::remove_dir_all(root).ok();
        image
    };
    let through_skin = mean_difference(&picture("skin", 1.0), &picture("skin", 0.0));
    let through_lit = mean_difference(&picture("lit", 1.0), &picture("lit", 0.0));
    assert!(
        through_skin > 0.5,
        "the branches show through the skin: {through_skin:.3} steps"
    );
    assert!(
        through_lit < through_skin * 0.1,
        "the lit body hides them: {through_lit:.3} steps against {through_skin:.3}"
    );
}
