// The colony's data, shared by its simulation and drawing shaders
//. Nodes are split: positions with growth t for the grid
// sort and drawing, the rest beside them.

#include "common/random.wgsl"

struct ColonyParams {
    influence: f32,
    growth: f32,
    kill: f32,
    grow_step: f32,
    mass_min: f32,
    mass_max: f32,
    seed: u32,
    attraction_count: u32,
    capacity: u32,
    edge_capacity: u32,
    _pad0: u32,
    _pad1: u32,
}

struct NodeInfo {
    // Distance from the root in nodes.
    offset: u32,
    mass: f32,
    // Parent node, -1 for roots.
    parent: i32,
    // The attraction that pulled the node into being (for roots, the one
    // it was seeded at): the skinned layer reads the node's bones from it.
    tag: u32,
}

// state[]: node count, edge count, seed count, deepest offset.
const NODE_COUNT: u32 = 0u;
const EDGE_COUNT: u32 = 1u;
const SEED_COUNT: u32 = 2u;
const MAX_OFFSET: u32 = 3u;

// args[]: node dispatch (x, y, z), tube draw (vertices, instances, first
// vertex, first instance).
const ARGS_NODES: u32 = 0u;
const ARGS_TUBES: u32 = 3u;

// How much of a limb is left at a node `offset` nodes from its root when
// the deepest is `deepest`: 1 at the root, falling as a square to 0 at the
// deepest tips, so trunks and limbs thin out as a tree's do.
fn limb(offset: u32, deepest: u32) -> f32 {
    let depth = f32(offset) / f32(max(deepest, 1u));
    return (1.0 - depth) * (1.0 - depth);
}

// A tube's radius at such a node: a quarter of the root's at the tips.
// Drawn (draw.wgsl) and met by the water (standing.wgsl) alike.
fn tube_radius(thickness: f32, offset: u32, deepest: u32) -> f32 {
    return thickness * (0.25 + 0.75 * limb(offset, deepest));
}

// Fixed-point scale for summing directions with integer atomics: the sum
// is the same in any order, so growth is deterministic.
const FIXED: f32 = 65536.0;
