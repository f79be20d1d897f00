// The fluid's shared declarations: parameters, particle
// layout, the Müller 2003 kernels in 2D and 3D, and the lanes that share a
// particle's neighbour walk over the grid's rows around it.

#include "common/grid.wgsl"

struct FluidParams {
    gravity: vec3<f32>,
    h: f32,
    container: vec3<f32>,
    mass: f32,
    rest_density: f32,
    stiffness: f32,
    viscosity: f32,
    dt: f32,
    wall_stiffness: f32,
    dimensions: u32,
    count: u32,
    seed: u32,
    // Interaction points: xyz and radius, then strength in w of `push`.
    point0: vec4<f32>,
    point1: vec4<f32>,
    push: vec4<f32>,
    emitter: vec4<f32>,
    emitter_velocity: vec4<f32>,
    sink: vec4<f32>,
    // The kernels' constants for h: poly6, spiky gradient, viscosity
    // Laplacian, h^2 (computed once on the CPU, not per particle).
    kernel: vec4<f32>,
    // The large-step solver's: its relaxation (epsilon), the tensile
    // term's scale, XSPH viscosity, vorticity confinement (unused by the
    // weakly compressible one).
    pbf: vec4<f32>,
}

const PI: f32 = 3.14159265358979;

// Which solver the stages run: the weakly compressible one (
// a substep bounded by the speed of sound) or Position Based Fluids
// (Macklin and Mueller 2013: the density constraint projected by Jacobi
// iterations, a substep bounded by the flow).
const WCSPH: u32 = 0u;
const PBF: u32 = 1u;
override SOLVER: u32 = 0u;

// What the density stage leaves for the next: Tait's pressure (exponent
// 7, no tension), or the density constraint's multiplier lambda, only
// where the water is compressed (C = rho / rho0 - 1 held at or below 0:
// a free surface is not pulled together), over `stiffness`, the squared
// gradient norm of C over the particle and its neighbours, relaxed by the
// paper's epsilon.
fn pressure_or_lambda(p: FluidParams, density: f32, stiffness: f32) -> f32 {
    if SOLVER == PBF {
        return -max(density / p.rest_density - 1.0, 0.0) / (stiffness + p.pbf.x);
    }
    return p.stiffness * max(pow(density / p.rest_density, 7.0) - 1.0, 0.0);
}

// Cells are (1 + SKIN) h / 2 wide, so the particles within (1 + SKIN) h
// of a particle lie in the grid's 5 x 5 rows around its own (`row_span`
// in common/grid.wgsl).
//
// Each particle's neighbour walk is shared by LANES threads side by side,
// each taking every LANES-th row and the workgroup adding their sums: a
// few thousand particles then still fill the GPU instead of each thread
// walking 25 rows alone (the latency of one walk was a small fluid's whole
// substep). The layer picks LANES for its particle count.
override LANES: u32 = 1u;

// The neighbours the density stage found near each walker (a particle's
// lane: particle * LANES + lane), kept for the force stage so that it
// walks only them and not the grid's rows again (every row's bounds and
// the candidates in them farther than h were half of its time), and for
// the next substeps, which reuse them (Verlet lists): a list holds every
// particle within (1 + SKIN) h when it was built, so while no particle has
// moved SKIN h / 2 since, it holds every neighbour within h. Word 0 of a
// walker packs where each of its walks' entries end (a byte a walk: its
// own neighbourhood, then its walls' mirror images), NOT_LISTED there when
// more were near than fit (its stages then walk the grid themselves);
// word 1 the walls walked (`walls_mask`); words 2 to LISTED + 1 the
// neighbours' indices, walk after walk. The lists of 32 walkers side by
// side make one block, word by word (word w of walker t at block t / 32,
// row w, column t % 32): a warp reads and writes whole lines, and its
// lines lie together (10M particles on the H200: density 3.61 ms with
// each word of every walker side by side across the whole buffer, 3.38 in
// blocks of 32, 3.54 in blocks of 8). The layer picks LISTED for the
// device's buffer limit (0: nothing is listed) and rounds the walkers up
// to whole blocks.
override LISTED: u32 = 0u;
const NOT_LISTED: u32 = 0xffffffffu;
const LIST_BLOCK: u32 = 32u;
const LIST_HEAD: u32 = 2u;

fn listed_at(walker: u32, word: u32) -> u32 {
    return ((walker / LIST_BLOCK) * (LISTED + LIST_HEAD) + word) * LIST_BLOCK + walker % LIST_BLOCK;
}

// The lists' margin, a share of h (the grid's cells are (1 + SKIN) h / 2
// wide, so a walk of that radius stays within its 5 x 5 rows), and the
// most substeps a list serves (`plan.wgsl`).
override SKIN: f32 = 0.0;
override REUSE: u32 = 1u;

// Whether this substep sorts and lists anew, decided on the GPU each
// substep by `plan_lists` (plan.wgsl) from what the last one found.
struct ListPlan {
    // Set by any particle that moved over SKIN h / 2 from where it was
    // when the lists were built: the next substep must rebuild. (Every
    // writer writes 1, so no atomic.)
    displaced: u32,
    // 1 when this substep sorts the grid and builds the lists, 0 when it
    // reuses them.
    rebuild: u32,
    // Substeps since the lists were built.
    since: u32,
    // Rebuilds so far (read by the bench and the tests).
    rebuilds: u32,
}

// The branches the water meets, binned once a frame (fluid/branches.wgsl)
// in a coarse grid of BIN_SIDE^3 cells over the tank: `bins` holds each
// cell's count, then BIN_DEPTH branch slots per cell. A particle tests the
// branches of its own cell, each listed in every cell its reach overlaps.
const BIN_SIDE: u32 = 16u;
const BIN_CELLS: u32 = 4096u;
const BIN_DEPTH: u32 = 32u;

fn bin_coords(x: vec3<f32>, container: vec3<f32>) -> vec3<u32> {
    let cell = floor(x / max(container, vec3<f32>(1e-6)) * f32(BIN_SIDE));
    return vec3<u32>(clamp(cell, vec3<f32>(0.0), vec3<f32>(f32(BIN_SIDE - 1u))));
}

fn bin_index(c: vec3<u32>) -> u32 {
    return c.x + BIN_SIDE * (c.y + BIN_SIDE * c.z);
}
