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
}

const PI: f32 = 3.14159265358979;

fn poly6_coefficient(p: FluidParams) -> f32 {
    if p.dimensions == 2u {
        return 4.0 / (PI * pow(p.h, 8.0));
    }
    return 315.0 / (64.0 * PI * pow(p.h, 9.0));
}

fn spiky_gradient_coefficient(p: FluidParams) -> f32 {
    if p.dimensions == 2u {
        return -30.0 / (PI * pow(p.h, 5.0));
    }
    return -45.0 / (PI * pow(p.h, 6.0));
}

fn viscosity_laplacian_coefficient(p: FluidParams) -> f32 {
    if p.dimensions == 2u {
        return 20.0 / (3.0 * PI * pow(p.h, 5.0));
    }
    return 45.0 / (PI * pow(p.h, 6.0));
}

// Tait's equation with exponent 7, no tension.
fn tait_pressure(p: FluidParams, density: f32) -> f32 {
    return p.stiffness * max(pow(density / p.rest_density, 7.0) - 1.0, 0.0);
}

fn cell_range(grid: Grid, c: vec3<i32>) -> bool {
    return all(c >= vec3<i32>(0)) && all(c < vec3<i32>(grid.dims));
}
