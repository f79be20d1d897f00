// Camera-facing billboards, one per particle (the seed's rendering): soft
// discs coloured by speed or density, drawn additively for a glowing look;
// and, for the screen-space surface, the same discs as sphere impostors
// writing eye depth, and added up as the liquid's thickness along each
// ray together with its foam: particles that fly fast or have few
// neighbours (spray, breaking crests) are white water.

#include "common/camera.wgsl"

struct ParticleDraw {
    colour: vec4<f32>,
    radius: f32,
    colour_by: u32,
    brightness: f32,
    rest_density: f32,
    absorption: f32,
    foam: f32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> look: ParticleDraw;
@group(0) @binding(2) var<storage, read> positions: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocities: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> densities: array<vec2<f32>>;

struct Disc {
    @builtin(position) position: vec4<f32>,
    @location(0) corner: vec2<f32>,
    @location(1) colour: vec3<f32>,
    @location(2) eye_depth: f32,
    @location(3) foam: f32,
    // 1 for a droplet flying alone (spray), 0 inside the body.
    @location(4) spray: f32,
}

fn camera_axes() -> array<vec3<f32>, 3> {
    // The view matrix's rows are the camera axes in world space.
    let m = camera.view_proj;
    let forward = normalize(vec3<f32>(m[0].w, m[1].w, m[2].w));
    let right = normalize(cross(forward, vec3<f32>(0.0, 1.0, 0.0)));
    let up = cross(right, forward);
    return array<vec3<f32>, 3>(right, up, forward);
}

@vertex
fn vs_disc(@builtin(vertex_index) vertex: u32, @builtin(instance_index) i: u32) -> Disc {
    var out: Disc;
    let p = positions[i];
    if p.w == 0.0 {
        out.position = vec4<f32>(2.0, 2.0, 2.0, 1.0);
        return out;
    }
    let corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let corner = corners[vertex % 6u];
    let axes = camera_axes();
    let world = p.xyz + (axes[0] * corner.x + axes[1] * corner.y) * look.radius;
    out.position = camera.view_proj * vec4<f32>(world, 1.0);
    out.corner = corner;
    out.eye_depth = dot(p.xyz - camera.eye.xyz, axes[2]);
    // A select, not a branch on the uniform (see fs_body in skinned/body.wgsl).
    let by_density = (densities[i].x / look.rest_density - 1.0) * 30.0 + 0.5;
    let x = select(length(velocities[i].xyz) / 4.0, by_density, look.colour_by == 1u);
    let t = clamp(x, 0.0, 1.0);
    out.colour = mix(look.colour.rgb, vec3<f32>(1.0, 1.0, 1.0), t * t) * look.brightness;
    let speed = length(velocities[i].xyz);
    let crowd = densities[i].x / look.rest_density;
    // Alone means far fewer neighbours than even a particle in a corner of
    // the tank has, and moving: a droplet in flight.
    out.spray = smoothstep(0.3, 0.15, crowd) * smoothstep(0.3, 1.0, speed);
    out.foam = max(0.6 * smoothstep(3.5, 7.0, speed), out.spray);
    return out;
}

@fragment
fn fs_glow(in: Disc) -> @location(0) vec4<f32> {
    let r2 = dot(in.corner, in.corner);
    if r2 > 1.0 {
        discard;
    }
    let soft = (1.0 - r2) * (1.0 - r2);
    return vec4<f32>(in.colour * soft, soft);
}

struct Depth {
    @location(0) eye_depth: f32,
    @builtin(frag_depth) depth: f32,
}

// A sphere impostor: the disc bulges toward the camera like the particle's sphere.
@fragment
fn fs_depth(in: Disc) -> Depth {
    let r2 = dot(in.corner, in.corner);
    // Spray is no part of the surface: it is drawn as foam alone.
    if r2 > 1.0 || in.spray > 0.5 {
        discard;
    }
    let eye = in.eye_depth - sqrt(1.0 - r2) * look.radius;
    var out: Depth;
    out.eye_depth = eye;
    out.depth = clamp(in.position.z - sqrt(1.0 - r2) * 0.001, 0.0, 1.0);
    return out;
}

// The sphere's chord under this pixel (thickness, metres; spray adds
// none) and its foam; spray is drawn at half size, as fine droplets.
@fragment
fn fs_thickness(in: Disc) -> @location(0) vec2<f32> {
    let r2 = dot(in.corner, in.corner) * mix(1.0, 4.0, in.spray);
    if r2 > 1.0 {
        discard;
    }
    let chord = 2.0 * sqrt(1.0 - r2) * look.radius;
    return vec2<f32>(chord * (1.0 - in.spray), chord * in.foam);
}
