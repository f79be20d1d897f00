//! The default character, built in code so `sylva --preset skinned` needs
//! no asset: a figure of capsules on a bone chain (hips, spine, chest,
//! neck, head, arms, legs) in a T pose, joined into one smooth body
//! (`fillets.rs`) and skinned smoothly across its joints,
//! with three looping clips made of keyframes like any glTF clip: `Dance`,
//! `Walking` and `Idle` (a sway), named as the shipped dancer's are, so a
//! script's moves fit both.

use std::f32::consts::TAU;

use glam::{Quat, Vec3};

use super::anim::{Channel, Clip, Interpolation, Property};
use super::fillets::{Limb, join};
use super::model::{Joint, Material, MeshSummary, Model, Node, Trs, Vertex};

/// A bone of the figure: where it starts and ends in the T pose, its
/// parent and its capsule's radius (none for the root).
struct FigureBone {
    name: &'static str,
    parent: Option<usize>,
    head: Vec3,
    tail: Vec3,
    radius: f32,
}

const fn bone(
    name: &'static str,
    parent: Option<usize>,
    head: [f32; 3],
    tail: [f32; 3],
    radius: f32,
) -> FigureBone {
    FigureBone {
        name,
        parent,
        head: Vec3::from_array(head),
        tail: Vec3::from_array(tail),
        radius,
    }
}

/// The skeleton, parents before children.
const BONES: [FigureBone; 18] = [
    bone("root", None, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 0.0),
    bone("hips", Some(0), [0.0, 0.95, 0.0], [0.0, 1.12, 0.0], 0.15),
    bone("spine", Some(1), [0.0, 1.12, 0.0], [0.0, 1.3, 0.0], 0.13),
    bone("chest", Some(2), [0.0, 1.3, 0.0], [0.0, 1.5, 0.0], 0.16),
    bone("neck", Some(3), [0.0, 1.5, 0.0], [0.0, 1.6, 0.0], 0.06),
    bone("head", Some(4), [0.0, 1.6, 0.0], [0.0, 1.84, 0.02], 0.12),
    bone("arm.l", Some(3), [0.2, 1.45, 0.0], [0.48, 1.45, 0.0], 0.055),
    bone(
        "forearm.l",
        Some(6),
        [0.48, 1.45, 0.0],
        [0.74, 1.45, 0.0],
        0.045,
    ),
    bone(
        "hand.l",
        Some(7),
        [0.74, 1.45, 0.0],
        [0.86, 1.45, 0.0],
        0.04,
    ),
    bone(
        "arm.r",
        Some(3),
        [-0.2, 1.45, 0.0],
        [-0.48, 1.45, 0.0],
        0.055,
    ),
    bone(
        "forearm.r",
        Some(9),
        [-0.48, 1.45, 0.0],
        [-0.74, 1.45, 0.0],
        0.045,
    ),
    bone(
        "hand.r",
        Some(10),
        [-0.74, 1.45, 0.0],
        [-0.86, 1.45, 0.0],
        0.04,
    ),
    bone(
        "thigh.l",
        Some(1),
        [0.1, 0.95, 0.0],
        [0.11, 0.5, 0.0],
        0.075,
    ),
    bone(
        "shin.l",
        Some(12),
        [0.11, 0.5, 0.0],
        [0.11, 0.08, 0.0],
        0.06,
    ),
    bone(
        "foot.l",
        Some(13),
        [0.11, 0.08, 0.0],
        [0.11, 0.04, 0.18],
        0.045,
    ),
    bone(
        "thigh.r",
        Some(1),
        [-0.1, 0.95, 0.0],
        [-0.11, 0.5, 0.0],
        0.075,
    ),
    bone(
        "shin.r",
        Some(15),
        [-0.11, 0.5, 0.0],
        [-0.11, 0.08, 0.0],
        0.06,
    ),
    bone(
        "foot.r",
        Some(16),
        [-0.11, 0.08, 0.0],
        [-0.11, 0.04, 0.18],
        0.045,
    ),
];

/// The figure with capsules of about `detail` sides (rings follow), so
/// the vertex count grows with its square: 12 gives about 4,000 vertices,
/// 200 about a million.
pub fn figure(detail: u32) -> Model {
    let sides = detail.clamp(6, 1024);
    let nodes: Vec<Node> = BONES
        .iter()
        .map(|b| Node {
            name: b.name.to_string(),
            parent: b.parent,
            rest: Trs {
                translation: b.head - b.parent.map_or(Vec3::ZERO, |p| BONES[p].head),
                ..Trs::default()
            },
        })
        .collect();
    let joints: Vec<Joint> = BONES
        .iter()
        .enumerate()
        .map(|(node, b)| Joint {
            node,
            inverse_bind: glam::Mat4::from_translation(-b.head),
        })
        .collect();
    let mut positions = Vec::new();
    let mut weights = Vec::new();
    let mut indices = Vec::new();
    let mut owners = Vec::new();
    let mut limbs = Vec::new();
    for (index, b) in BONES.iter().enumerate().filter(|(_, b)| b.radius > 0.0) {
        capsule(
            b,
            index as u32,
            sides,
            &mut positions,
            &mut weights,
            &mut indices,
        );
        owners.resize(positions.len(), limbs.len());
        limbs.push(Limb {
            head: b.head,
            tail: b.tail,
            radius: b.radius,
            joint: index as u32,
        });
    }
    let normals = join(&limbs, &owners, &mut positions, &mut weights);
    let vertices: Vec<Vertex> = positions
        .iter()
        .zip(&normals)
        .zip(&weights)
        .map(|((&position, &normal), &(joints, weights))| Vertex {
            position,
            normal,
            joints,
            weights,
            material: Material::PLAIN,
        })
        .collect();
    let meshes = vec![MeshSummary {
        name: "figure".into(),
        vertices: vertices.len(),
        triangles: indices.len() / 3,
        skinned: true,
    }];
    Model {
        source: "the built-in figure".into(),
        // The figure's bones are listed parents first.
        order: (0..nodes.len()).collect(),
        nodes,
        joints,
        vertices,
        indices,
        clips: vec![dance(), walk(), sway()],
        meshes,
    }
}

/// A capsule around bone `b` (joint `joint`): rings along its axis and
/// hemispherical caps. Near its start a vertex shares its weight with the
/// parent bone, so joints bend smoothly instead of creasing.
fn capsule(
    b: &FigureBone,
    joint: u32,
    sides: u32,
    positions: &mut Vec<Vec3>,
    weights: &mut Vec<([u32; 4], [f32; 4])>,
    indices: &mut Vec<u32>,
) {
    let axis = b.tail - b.head;
    let length = axis.length().max(1e-4);
    let direction = axis / length;
    let side = direction.any_orthonormal_vector();
    let up = direction.cross(side);
    let cap_rings = (sides / 4).max(2);
    let body_rings = ((length / b.radius) * sides as f32 / 6.0).ceil().max(2.0) as u32;
    // Rings from the tip of the start cap to the tip of the end cap:
    // (distance along the axis, ring radius).
    let mut rings: Vec<(f32, f32)> = Vec::new();
    for k in 0..cap_rings {
        let angle = std::f32::consts::FRAC_PI_2 * (1.0 - k as f32 / cap_rings as f32);
        rings.push((-b.radius * angle.sin(), b.radius * angle.cos()));
    }
    for k in 0..=body_rings {
        rings.push((length * k as f32 / body_rings as f32, b.radius));
    }
    for k in 1..=cap_rings {
        let angle = std::f32::consts::FRAC_PI_2 * k as f32 / cap_rings as f32;
        rings.push((length + b.radius * angle.sin(), b.radius * angle.cos()));
    }
    let parent = BONES[joint as usize]
        .parent
        .filter(|p| BONES[*p].radius > 0.0);
    let base = positions.len() as u32;
    for &(along, radius) in &rings {
        let t = (along / length).clamp(0.0, 1.0);
        // The first quarter of the bone blends from half parent to all own.
        let weight = match parent {
            Some(p) if t < 0.25 => {
                let own = 0.5 + 0.5 * (t / 0.25);
                ([joint, p as u32, 0, 0], [own, 1.0 - own, 0.0, 0.0])
            }
            _ => ([joint, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
        };
        for s in 0..sides {
            let angle = TAU * s as f32 / sides as f32;
            let offset = (side * angle.cos() + up * angle.sin()) * radius;
            positions.push(b.head + direction * along + offset);
            weights.push(weight);
        }
    }
    for r in 0..rings.len() as u32 - 1 {
        for s in 0..sides {
            let (a, c) = (base + r * sides + s, base + (r + 1) * sides + s);
            let (b2, d) = (
                base + r * sides + (s + 1) % sides,
                base + (r + 1) * sides + (s + 1) % sides,
            );
            indices.extend([a, b2, c, c, b2, d]);
        }
    }
}

/// The names of the figure's clips.
pub fn clip_names() -> Vec<String> {
    [dance(), walk(), sway()].map(|c| c.name).to_vec()
}

/// Keys per clip.
const KEYS: usize = 48;

/// A looping clip of `seconds` whose rotations come from `rotate(bone,
/// phase)` and root translation from `lift(phase)`, phase 0..1.
fn clip(
    name: &str,
    seconds: f32,
    rotate: impl Fn(&str, f32) -> Option<Quat>,
    lift: impl Fn(f32) -> Vec3,
) -> Clip {
    let times: Vec<f32> = (0..=KEYS)
        .map(|k| seconds * k as f32 / KEYS as f32)
        .collect();
    let phase = |k: usize| k as f32 / KEYS as f32;
    let mut channels = vec![Channel {
        node: 0,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: (0..=KEYS)
            .map(|k| lift(phase(k)).extend(0.0).to_array())
            .collect(),
    }];
    for (node, b) in BONES.iter().enumerate() {
        if rotate(b.name, 0.0).is_none() {
            continue;
        }
        channels.push(Channel {
            node,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: (0..=KEYS)
                .map(|k| {
                    rotate(b.name, phase(k))
                        .unwrap_or(Quat::IDENTITY)
                        .to_array()
                })
                .collect(),
        });
    }
    Clip {
        name: name.into(),
        duration: seconds,
        channels,
    }
}

/// Side of a limb: 1 for left, -1 for right.
fn side(name: &str) -> f32 {
    if name.ends_with(".r") { -1.0 } else { 1.0 }
}

fn wave(phase: f32, cycles: f32, offset: f32) -> f32 {
    (TAU * (phase * cycles + offset)).sin()
}

/// Hips sway and bounce, arms wave overhead in turn, knees pump: a loop
/// of four beats at 120 bpm, two seconds.
fn dance() -> Clip {
    clip(
        "Dance",
        2.0,
        |name, p| {
            let s = side(name);
            let beat = |offset| wave(p, 2.0, offset);
            Some(match name.trim_end_matches(".l").trim_end_matches(".r") {
                "hips" => {
                    Quat::from_rotation_y(0.35 * wave(p, 1.0, 0.0))
                        * Quat::from_rotation_z(0.12 * beat(0.0))
                }
                "spine" => Quat::from_rotation_z(-0.15 * beat(0.0)),
                "chest" => Quat::from_rotation_y(-0.3 * wave(p, 1.0, 0.1)),
                "head" => Quat::from_rotation_x(0.2 * beat(0.25)),
                "arm" => Quat::from_rotation_z(
                    s * (0.9 + 0.6 * wave(p, 1.0, if s > 0.0 { 0.0 } else { 0.5 })),
                ),
                "forearm" => Quat::from_rotation_z(s * (0.8 + 0.5 * beat(0.2))),
                "thigh" => Quat::from_rotation_x(
                    -0.35 * (0.5 + 0.5 * beat(if s > 0.0 { 0.0 } else { 0.5 })),
                ),
                "shin" => {
                    Quat::from_rotation_x(0.6 * (0.5 + 0.5 * beat(if s > 0.0 { 0.0 } else { 0.5 })))
                }
                _ => return None,
            })
        },
        |p| {
            Vec3::new(
                0.05 * wave(p, 1.0, 0.0),
                -0.05 * (0.5 + 0.5 * wave(p, 2.0, 0.25)),
                0.0,
            )
        },
    )
}

/// Legs swing opposite the arms, the body bobs twice a stride.
fn walk() -> Clip {
    clip(
        "Walking",
        1.2,
        |name, p| {
            let s = side(name);
            let stride = wave(p, 1.0, if s > 0.0 { 0.0 } else { 0.5 });
            Some(match name.trim_end_matches(".l").trim_end_matches(".r") {
                "hips" => Quat::from_rotation_y(0.12 * wave(p, 1.0, 0.0)),
                "chest" => Quat::from_rotation_y(-0.18 * wave(p, 1.0, 0.0)),
                "arm" => Quat::from_rotation_x(0.5 * stride) * Quat::from_rotation_z(-s * 1.3),
                "forearm" => Quat::from_rotation_z(-s * 0.2),
                "thigh" => Quat::from_rotation_x(-0.5 * stride),
                "shin" => Quat::from_rotation_x(0.4 + 0.4 * stride.max(0.0)),
                _ => return None,
            })
        },
        |p| Vec3::new(0.0, 0.03 * wave(p, 2.0, 0.25), 0.0),
    )
}

/// A slow sway from the ankles up, arms floating.
fn sway() -> Clip {
    clip(
        "Idle",
        6.0,
        |name, p| {
            let s = side(name);
            Some(match name.trim_end_matches(".l").trim_end_matches(".r") {
                "hips" => Quat::from_rotation_z(0.08 * wave(p, 1.0, 0.0)),
                "spine" => Quat::from_rotation_z(0.1 * wave(p, 1.0, 0.1)),
                "chest" => {
                    Quat::from_rotation_z(0.1 * wave(p, 1.0, 0.2))
                        * Quat::from_rotation_y(0.2 * wave(p, 2.0, 0.0))
                }
                "head" => Quat::from_rotation_z(-0.15 * wave(p, 1.0, 0.3)),
                "arm" => Quat::from_rotation_z(-s * (0.7 + 0.3 * wave(p, 2.0, 0.0))),
                "forearm" => Quat::from_rotation_z(s * 0.3 * wave(p, 2.0, 0.15)),
                _ => return None,
            })
        },
        |p| Vec3::new(0.08 * wave(p, 1.0, 0.0), 0.0, 0.0),
    )
}
