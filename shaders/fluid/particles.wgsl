// Camera-facing billboards, one per particle (the seed's rendering): soft
// discs coloured by speed or density, drawn additively for a glowing look.
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
    let world = p.xyz + (axes[0] * corner.x + axes[1] * corner.y) * look.radius;
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
