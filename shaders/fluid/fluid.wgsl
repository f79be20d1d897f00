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
// the 5 x 5 x 5 cells around its own; smaller cells than h mean fewer
// candidates to test (about 125 instead of 216 at 8 particles per h^3).
const REACH: i32 = 2;

// The particles of the cells within REACH along x of cell `c`, in the row
// at offset (dy, dz): one contiguous range, since cells are sorted x
// fastest. Empty when the row is outside the grid.
fn row_range(grid: Grid, starts_of: ptr<function, array<u32, 2>>, c: vec3<i32>, dy: i32, dz: i32) {
    let y = c.y + dy;
    let z = c.z + dz;
    (*starts_of)[0] = 0u;
    (*starts_of)[1] = 0u;
    if y < 0 || z < 0 || y >= i32(grid.dims.y) || z >= i32(grid.dims.z) {
        return;
    }
    let first = grid_index(grid, vec3<i32>(max(c.x - REACH, 0), y, z));
    let last = grid_index(grid, vec3<i32>(min(c.x + REACH, i32(grid.dims.x) - 1), y, z));
    (*starts_of)[0] = first;
    (*starts_of)[1] = last + 1u;
}
