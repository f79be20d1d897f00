// The fluid's shared declarations (SEEDS.md 002): parameters, particle
// layout, the Müller 2003 kernels in 2D and 3D, and the neighbour walk over
// the 27 (in 2D: 9) grid cells around a particle.

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
}

const PI: f32 = 3.14159265358979;

// Tait's equation with exponent 7, no tension.
fn tait_pressure(p: FluidParams, density: f32) -> f32 {
    return p.stiffness * max(pow(density / p.rest_density, 7.0) - 1.0, 0.0);
}

// Cells are h / 2 wide, so the neighbours within h of a particle lie in
// the 5 x 5 rows of 5 cells around its own (REACH cells each way).
const REACH: i32 = 2;
const ROWS: u32 = 25u;

// Each particle's neighbour walk is shared by LANES threads side by side,
// each taking every LANES-th row and the workgroup adding their sums: a
// few thousand particles then still fill the GPU instead of each thread
// walking 25 rows alone (the latency of one walk was a small fluid's whole
// substep). The layer picks LANES for its particle count.
override LANES: u32 = 1u;

// The particles that can lie within h of `x` in row `r` of its
// neighbourhood (offsets dy, dz from `home`): one contiguous range, since
// cells are sorted x fastest, cut to the chord of the sphere of radius h
// through that row, and empty when the whole row is farther than h or
// outside the grid. About half the 125 cells' candidates remain. The
// margin keeps every particle the exact test `r2 < h2` takes.
fn row_span(grid: Grid, starts_of: ptr<function, array<u32, 2>>, x: vec3<f32>, home: vec3<i32>, r: u32, h2: f32) {
    (*starts_of)[0] = 0u;
    (*starts_of)[1] = 0u;
    let y = home.y + i32(r % 5u) - REACH;
    let z = home.z + i32(r / 5u) - REACH;
    if y < 0 || z < 0 || y >= i32(grid.dims.y) || z >= i32(grid.dims.z) {
        return;
    }
    let low = grid.origin.yz + vec2<f32>(f32(y), f32(z)) * grid.cell_size;
    let off = max(max(low - x.yz, x.yz - (low + grid.cell_size)), vec2<f32>(0.0));
    let reach2 = h2 * 1.0001 - dot(off, off);
    if reach2 <= 0.0 {
        return;
    }
    let half_chord = sqrt(reach2);
    let lowest = i32(floor((x.x - half_chord - grid.origin.x) / grid.cell_size));
    let highest = i32(floor((x.x + half_chord - grid.origin.x) / grid.cell_size));
    let first = clamp(max(lowest, home.x - REACH), 0, i32(grid.dims.x) - 1);
    let last = clamp(min(highest, home.x + REACH), 0, i32(grid.dims.x) - 1);
    (*starts_of)[0] = grid_index(grid, vec3<i32>(first, y, z));
    (*starts_of)[1] = grid_index(grid, vec3<i32>(last, y, z)) + 1u;
}
