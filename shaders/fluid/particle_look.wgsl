// What every way of drawing the fluid's particles shares: the look's
// uniforms, the particle buffers, the camera's axes, and each particle's
// colour, foam and spray (particles that fly fast or have few neighbours
// — spray, breaking crests — are white water).

#include "common/camera.wgsl"

struct ParticleDraw {
    colour: vec4<f32>,
    radius: f32,
    colour_by: u32,
    brightness: f32,
    rest_density: f32,
    absorption: f32,
    foam: f32,
    // Seconds of motion a glow is drawn along (0: a disc).
    streak: f32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> look: ParticleDraw;
@group(0) @binding(2) var<storage, read> positions: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocities: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> densities: array<vec2<f32>>;

fn camera_axes() -> array<vec3<f32>, 3> {
    // The view matrix's rows are the camera axes in world space.
    let m = camera.view_proj;
    let forward = normalize(vec3<f32>(m[0].w, m[1].w, m[2].w));
    let right = normalize(cross(forward, vec3<f32>(0.0, 1.0, 0.0)));
    let up = cross(right, forward);
    return array<vec3<f32>, 3>(right, up, forward);
}

// Particle `i`'s foam (0..1) and spray (1 for a droplet flying alone, 0
// inside the body).
fn disc_shading(i: u32) -> vec2<f32> {
    let speed = length(velocities[i].xyz);
    let crowd = densities[i].x / look.rest_density;
    // Alone means far fewer neighbours than even a particle in a corner of
    // the tank has, and moving: a droplet in flight.
    let spray = smoothstep(0.3, 0.15, crowd) * smoothstep(0.3, 1.0, speed);
    let foam = max(0.6 * smoothstep(3.5, 7.0, speed), spray);
    return vec2<f32>(foam, spray);
}

// How far particle `i`'s glow is whitened from the liquid's colour (0..1):
// by its speed, or by how far its density strays from rest.
fn disc_whiteness(i: u32) -> f32 {
    // A select, not a branch on the uniform (see fs_body in skinned/body.wgsl).
    let by_density = (densities[i].x / look.rest_density - 1.0) * 30.0 + 0.5;
    let x = select(length(velocities[i].xyz) / 4.0, by_density, look.colour_by == 1u);
    let t = clamp(x, 0.0, 1.0);
    return t * t;
}
