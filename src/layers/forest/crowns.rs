//! Crowns grown by the colony: for each species, size class and variant,
//! the colony's space colonization (`colony::reference`, the same step the
//! colony layer runs) grows a branch structure from the trunk's top
//! toward attractions scattered in the species' crown cone, once, at a
//! tree one unit tall. Every tree of that species and size draws it
//! scaled by its height and turned about its trunk, so a hundred thousand
//! trees share a few dozen grown crowns. The simulation's cone stays the
//! model: the grown crown lies inside it.

use bytemuck::{Pod, Zeroable};

use crate::layers::colony::reference::ColonyCpu;
use crate::layers::colony::sim::{StepParams, random01};

/// Where the crown starts on a tree one unit tall (the trunk below it),
/// as `vs_tree` in `shaders/forest/draw.wgsl` draws the cone.
pub const CROWN_BASE: f32 = 0.3;
/// Size classes: young, grown and old trees of a species.
pub const CLASSES: usize = 3;
/// Crowns grown per species and class (neighbours differ).
pub const VARIANTS: usize = 2;
/// Branch segments one crown holds at most.
pub const CROWN_SEGMENTS: usize = 160;
/// Leaf clusters one crown holds at most (its branch tips first).
pub const CROWN_LEAVES: usize = 96;
/// Crowns a forest holds at most: its species' every class and variant.
pub const MAX_CROWNS: usize = super::species::MAX_SPECIES * CLASSES * VARIANTS;
/// Attractions scattered in the cone, by class.
const ATTRACTIONS: [usize; CLASSES] = [40, 90, 180];
/// Radius of a branch tip and of the crown's first branch, per unit of
/// height (the trunk `vs_tree` draws is 0.02).
const TIP_RADIUS: f32 = 0.003;
const ROOT_RADIUS: f32 = 0.018;

/// One branch: from `a` to `b` (unit-height crown frame), its radius at
/// each end (`struct CrownSegment` in `shaders/forest/draw.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct CrownSegment {
    /// Start.
    pub a: [f32; 3],
    /// Radius at the start.
    pub radius_a: f32,
    /// End.
    pub b: [f32; 3],
    /// Radius at the end.
    pub radius_b: f32,
}

/// One crown: its branches and the leaf clusters at their tips (xyz, size).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Crown {
    /// Branches, parents before children.
    pub segments: Vec<CrownSegment>,
    /// Leaf clusters: where (xyz) and how big (w), per unit of height.
    pub leaves: Vec<[f32; 4]>,
}

/// Every crown of a forest, packed as the draw reads them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CrownSet {
    /// Every crown's branches, one after another.
    pub segments: Vec<CrownSegment>,
    /// Every crown's leaves.
    pub leaves: Vec<[f32; 4]>,
    /// Per crown (species × class × variant): first segment, segments,
    /// first leaf, leaves.
    pub table: Vec<[u32; 4]>,
}

/// The size class of a tree `height` tall of a species growing to `max`.
pub fn class_of(height: f32, max: f32) -> usize {
    ((height / max.max(1e-3) * CLASSES as f32) as usize).min(CLASSES - 1)
}

/// Where in a [`CrownSet`] the crown of `species`, `class`, `variant` is.
pub fn crown_index(species: usize, class: usize, variant: usize) -> usize {
    (species * CLASSES + class) * VARIANTS + variant
}

/// Whether `p` (unit-height crown frame) lies in the crown cone of a
/// species whose cone opens by `tan_spread`, within `slack`.
pub fn in_cone(p: [f32; 3], tan_spread: f32, slack: f32) -> bool {
    let radius = (1.0 - p[1]).max(0.0) * tan_spread;
    p[1] >= CROWN_BASE - slack && p[1] <= 1.0 + slack && p[0].hypot(p[2]) <= radius + slack
}

/// `p` moved into the crown cone: its height kept within the crown, its
/// distance from the trunk within the cone's radius there.
fn into_cone(p: [f32; 3], tan_spread: f32) -> [f32; 3] {
    let y = p[1].clamp(CROWN_BASE, 1.0);
    let radius = ((1.0 - y) * tan_spread).max(0.0);
    let r = p[0].hypot(p[2]);
    let scale = if r > radius && r > 0.0 {
        radius / r
    } else {
        1.0
    };
    [p[0] * scale, y, p[2] * scale]
}

/// The crown of class `class`, variant `variant` of a species whose cone
/// opens by `tan_spread`.
pub fn grow(tan_spread: f32, class: usize, variant: usize) -> Crown {
    let seed = (class * VARIANTS + variant) as u32 ^ tan_spread.to_bits();
    let count = ATTRACTIONS[class.min(CLASSES - 1)];
    // Even in the cone's volume: heights weighted by the slice's area,
    // radii by the disc's.
    // And the leader's: up the middle to the tip, so every crown has one.
    let attractors: Vec<[f32; 3]> = (0..count as u32)
        .map(|i| {
            let u = random01(seed, i * 3);
            let y = 1.0 - (1.0 - CROWN_BASE) * u.cbrt();
            let r = random01(seed, i * 3 + 1).sqrt() * (1.0 - y) * tan_spread;
            let angle = random01(seed, i * 3 + 2) * std::f32::consts::TAU;
            [r * angle.cos(), y, r * angle.sin()]
        })
        .chain([0.6, 0.75, 0.9, 0.97].map(|y| [0.0, y, 0.0]))
        .collect();
    let height = 1.0 - CROWN_BASE;
    let volume = std::f32::consts::PI / 3.0 * (height * tan_spread).powi(2) * height;
    let spacing = (volume / count as f32).cbrt();
    // The influence reaches the whole crown from the trunk's top (a wide
    // one's rim too), so the first branches climb toward its middle before
    // they fork.
    let params = StepParams::new(
        height * 1.5 * tan_spread.max(1.0),
        spacing * 0.6,
        spacing * 0.9,
        1.0,
        (1.0, 1.0),
        seed,
        attractors.len() as u32,
        CROWN_SEGMENTS as u32 + 1,
    );
    let mut colony = ColonyCpu::from_roots(&attractors, &[[0.0, CROWN_BASE, 0.0]]);
    let mut grown = colony.nodes.len();
    for _ in 0..96 {
        colony.step(&params);
        if colony.nodes.len() == grown {
            break;
        }
        grown = colony.nodes.len();
    }
    let nodes: Vec<[f32; 3]> = colony
        .nodes
        .iter()
        .map(|n| into_cone([n[0], n[1], n[2]], tan_spread))
        .collect();
    // The pipe model: a branch as thick as all it carries.
    let mut radius2 = vec![0.0f32; nodes.len()];
    let mut children = vec![0u32; nodes.len()];
    for &[parent, _] in &colony.edges {
        children[parent as usize] += 1;
    }
    for index in (0..nodes.len()).rev() {
        if children[index] == 0 {
            radius2[index] = TIP_RADIUS * TIP_RADIUS;
        }
        if let Ok(parent) = usize::try_from(colony.info[index].parent) {
            radius2[parent] += radius2[index];
        }
    }
    let scale = ROOT_RADIUS / radius2[0].sqrt().max(ROOT_RADIUS);
    let radius = |i: usize| (radius2[i].sqrt() * scale).max(TIP_RADIUS * 0.5);
    let segments = colony
        .edges
        .iter()
        .map(|&[parent, child]| {
            let (p, c) = (parent as usize, child as usize);
            CrownSegment {
                a: nodes[p],
                radius_a: radius(p),
                b: nodes[c],
                radius_b: radius(c),
            }
        })
        .collect();
    // Leaves along the outer twigs: every tip, then the nodes nearest the
    // tips, so the foliage is a shell around the branches.
    let mut sites: Vec<usize> = (1..nodes.len()).collect();
    sites.sort_by_key(|&i| (children[i] != 0, u32::MAX - colony.info[i].offset, i));
    let leaves = sites
        .into_iter()
        .take(CROWN_LEAVES)
        .map(|i| {
            let size = if children[i] == 0 { 1.0 } else { 0.8 };
            [nodes[i][0], nodes[i][1], nodes[i][2], spacing * size]
        })
        .collect();
    Crown { segments, leaves }
}

/// Every crown of species opening by `tan_spreads`, packed.
pub fn grow_all(tan_spreads: &[f32]) -> CrownSet {
    let mut set = CrownSet::default();
    for &tan_spread in tan_spreads {
        for class in 0..CLASSES {
            for variant in 0..VARIANTS {
                let crown = grow(tan_spread, class, variant);
                set.table.push([
                    set.segments.len() as u32,
                    crown.segments.len() as u32,
                    set.leaves.len() as u32,
                    crown.leaves.len() as u32,
                ]);
                set.segments.extend(crown.segments);
                set.leaves.extend(crown.leaves);
            }
        }
    }
    set
}

/// The point of a crown one unit tall its impostor is captured about
/// (`CAPTURE_CENTRE` in `shaders/forest/atlas.wgsl`).
pub const CAPTURE_CENTRE: [f32; 3] = [0.0, 0.5, 0.0];

/// How far a leaf's triangles reach from its cluster, per unit of the
/// cluster's size: 0.55 of it, times a corner's distance (1) and its
/// offset (0.45 each way) (`crown_vertex` in `shaders/forest/crown.wgsl`).
const LEAF_REACH: f32 = 0.55 * (1.0 + 0.45 * std::f32::consts::SQRT_2);

impl CrownSet {
    /// Each crown's bounding radius about [`CAPTURE_CENTRE`], trunk, branches
    /// and leaves (a little over), the square its impostor is captured in.
    pub fn reaches(&self) -> Vec<f32> {
        let from_centre = |p: [f32; 3]| {
            let d = [0, 1, 2].map(|k| p[k] - CAPTURE_CENTRE[k]);
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        };
        let trunk = from_centre([0.0, 0.0, 0.0]) + 0.02;
        self.table
            .iter()
            .map(|&[first, count, first_leaf, leaves]| {
                let (first, count) = (first as usize, count as usize);
                let branches = self.segments[first..first + count]
                    .iter()
                    .map(|s| (from_centre(s.a) + s.radius_a).max(from_centre(s.b) + s.radius_b));
                let (first_leaf, leaves) = (first_leaf as usize, leaves as usize);
                let tips = self.leaves[first_leaf..first_leaf + leaves]
                    .iter()
                    .map(|l| from_centre([l[0], l[1], l[2]]) + l[3] * LEAF_REACH);
                branches.chain(tips).fold(trunk, f32::max) * 1.02
            })
            .collect()
    }
}

/// The value `const NAME: TYPE = VALUE;` declares in `shader`, for the
/// tests that hold the forest's WGSL to the sizes Rust makes.
#[cfg(test)]
pub(super) fn declared(shader: &str, name: &str) -> Option<String> {
    let line = format!("const {name}: ");
    shader
        .lines()
        .find_map(|l| l.strip_prefix(&line))
        .and_then(|rest| rest.split_once(" = "))
        .map(|(_, v)| v.trim_end_matches(';').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colony_grown_crowns_stay_inside_their_cone_and_fill_it() {
        for spread in [1.0f32, 22.0, 30.0, 45.0, 60.0, 80.0] {
            let tan = spread.to_radians().tan();
            let mut last = 0;
            for class in 0..CLASSES {
                for variant in 0..VARIANTS {
                    let crown = grow(tan, class, variant);
                    let points = crown
                        .segments
                        .iter()
                        .flat_map(|s| [s.a, s.b])
                        .chain(crown.leaves.iter().map(|l| [l[0], l[1], l[2]]));
                    for p in points {
                        assert!(in_cone(p, tan, 1e-5), "{spread}° class {class}: {p:?}");
                    }
                    assert!(!crown.segments.is_empty() && crown.segments.len() <= CROWN_SEGMENTS);
                    assert!(!crown.leaves.is_empty() && crown.leaves.len() <= CROWN_LEAVES);
                    // It fills the cone: up near the tip and out near the rim.
                    let top = crown.segments.iter().map(|s| s.b[1]).fold(0.0, f32::max);
                    let out = crown
                        .segments
                        .iter()
                        .map(|s| s.b[0].hypot(s.b[2]) / ((1.0 - CROWN_BASE) * tan))
                        .fold(0.0, f32::max);
                    // (A cone of a degree is a needle: nothing to fill out.)
                    assert!(
                        top > 0.6 && (out > 0.4 || spread < 10.0),
                        "{spread}° class {class}: top {top}, out {out}"
                    );
                    // Thicker toward the trunk: a branch no thicker at its
                    // end than at its start.
                    assert!(
                        crown
                            .segments
                            .iter()
                            .all(|s| s.radius_b <= s.radius_a + 1e-6)
                    );
                    if variant == 0 {
                        assert!(crown.segments.len() >= last, "older crowns branch more");
                        last = crown.segments.len();
                    }
                    assert_eq!(
                        crown,
                        grow(tan, class, variant),
                        "grown the same every time"
                    );
                }
            }
        }
    }

    #[test]
    fn the_draw_shader_sizes_crowns_as_they_are_grown() {
        let shader = include_str!("../../../shaders/forest/crown.wgsl");
        for (name, value) in [
            ("CROWN_SEGMENTS", format!("{CROWN_SEGMENTS}u")),
            ("CROWN_LEAVES", format!("{CROWN_LEAVES}u")),
            ("CLASSES", format!("{CLASSES}u")),
            ("VARIANTS", format!("{VARIANTS}u")),
            ("CROWN_BASE", format!("{CROWN_BASE}")),
        ] {
            assert_eq!(
                declared(shader, name),
                Some(value),
                "{name} in shaders/forest/crown.wgsl"
            );
        }
    }

    #[test]
    fn a_tree_takes_the_crown_of_its_species_and_size() {
        assert_eq!(class_of(0.5, 20.0), 0);
        assert_eq!(class_of(10.0, 20.0), 1);
        assert_eq!(class_of(19.9, 20.0), 2);
        assert_eq!(class_of(25.0, 20.0), 2);
        let set = grow_all(&[0.4, 0.6]);
        assert_eq!(set.table.len(), 2 * CLASSES * VARIANTS);
        let [first, count, leaf, leaves] = set.table[crown_index(1, 2, 1)];
        let alone = grow(0.6, 2, 1);
        assert_eq!(
            &set.segments[first as usize..(first + count) as usize],
            alone.segments.as_slice()
        );
        assert_eq!(
            &set.leaves[leaf as usize..(leaf + leaves) as usize],
            alone.leaves.as_slice()
        );
    }
}
