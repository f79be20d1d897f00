// Camera-facing billboards, one per particle (the seed's rendering): soft
// discs coloured by speed or density, drawn additively for a glowing look,
// drawn out along the particle's motion across the view by `look.streak`
// seconds of it (falling water as rain, spray as streaks).
// The liquid surface's depth and thickness are splatted by compute
// (splat.wgsl) from the same particles.

#include "fluid/particle_look.wgsl"

struct Disc {
    @builtin(position) position: vec4<f32>,
    @location(0) corner: vec2<f32>,
    @location(1) colour: vec3<f32>,
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
    let v = velocities[i].xyz;
    let across_view = v - axes[2] * dot(v, axes[2]);
    // Drawn no longer than at rain's own speed: a particle flung hard is a
    // short bright streak, not a line across the picture.
    let moving = length(across_view);
    let speed = min(moving, 8.0);
    let along = select(axes[1], across_view / moving, moving > 1e-5);
    let side = normalize(cross(along, axes[2]));
    let reach = look.radius + 0.5 * look.streak * speed;
    let world = p.xyz - along * 0.5 * look.streak * speed + side * corner.x * look.radius + along * corner.y * reach;
    out.position = camera.view_proj * vec4<f32>(world, 1.0);
    out.corner = corner;
    out.colour = disc_colour(i);
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
