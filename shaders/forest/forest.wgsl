// The forest's data, shared by its simulation and drawing
// shaders. A tree is a cone: apex at its height, its cross-section at a
// slice's height a circle of radius (height - slice height) * tan(spread).

#include "common/random.wgsl"

struct ForestParams {
    // Pixels per side of every space and density map.
    map_size: u32,
    // Space-map slices and their spacing (slice k lies at (k + 1) * spacing).
    slices: u32,
    slice_spacing: f32,
    metres_per_pixel: f32,
    capacity: u32,
    seed: u32,
    // Density maps, each weighting `slices_per_map` slices.
    density_maps: u32,
    slices_per_map: u32,
    // Below r1 a tree dies, below r2 it does not grow.
    r1: f32,
    r2: f32,
    // 4095 / the tallest species' maximum height: heights as 12 bits.
    height_scale: f32,
    // Years a step stands for.
    dt: f32,
    species_count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

struct Species {
    max_height: f32,
    tan_spread: f32,
    // Metres a year at R = 1.
    growth: f32,
    // Height from which it seeds.
    seed_height: f32,
    // Seeds a year.
    seed_rate: f32,
    // Seed distance per metre of height.
    dispersal: f32,
    _pad0: f32,
    _pad1: f32,
}

struct Tree {
    position: vec2<f32>,
    height: f32,
    species: u32,
    age: f32,
    // R = V / Vmax of the last step.
    vitality: f32,
    alive: u32,
    // Seeds it scatters this step.
    seeds: u32,
}

// state[]: trees in use (live and dead slots), live trees, dead slots,
// seeds this step, trees in use before it, steps run (mixed into every
// random choice).
const COUNT: u32 = 0u;
const ALIVE: u32 = 1u;
const DEAD: u32 = 2u;
const BIRTHS: u32 = 3u;
const COUNT_BEFORE: u32 = 4u;
const STEP: u32 = 5u;

// The id field of a space-map pixel: 20 bits (id + 1, 0 = nobody), under
// 12 bits of height, so the tallest cone wins an atomicMax.
const ID_BITS: u32 = 20u;
const ID_MASK: u32 = 0xfffffu;
const MAX_TREES: u32 = 0xffffeu;

// Vertices of a drawn tree: a trunk's side quads, a crown's side
// triangles and its underside, eight sides each.
const TREE_VERTICES: u32 = 96u;

// Fixed point of a density value summed into V.
const DENSITY_ONE: f32 = 255.0;


// The radius in pixels of `tree`'s cross-section at slice `k` (<= 0: none).
fn slice_radius(params: ForestParams, tree: Tree, tan_spread: f32, k: u32) -> f32 {
    let z = f32(k + 1u) * params.slice_spacing;
    return (tree.height - z) * tan_spread / params.metres_per_pixel;
}

fn packed_owner(params: ForestParams, tree: Tree, id: u32) -> u32 {
    let h = min(u32(max(tree.height, 0.0) * params.height_scale), 4095u);
    return (h << ID_BITS) | (id + 1u);
}
