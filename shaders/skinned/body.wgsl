// The character's skin, drawn from the skinned vertices: lit with the
// shared light, or as a glass shell of added light whose rim glows so the
// branches inside show through.

#include "common/camera.wgsl"
#include "common/lighting.wgsl"
#include "common/shadow.wgsl"

struct BodyParams {
    colour: vec4<f32>,
    // 0 lit, 1 translucent.
    style: u32,
    opacity: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> body: BodyParams;
// The scene's shadow map (common/shadow.wgsl): the figure stands in the
// shadows of the trees and of its own limbs.
@group(1) @binding(0) var scene_shadow: texture_depth_2d;
@group(1) @binding(1) var scene_shadow_sampler: sampler_comparison;

struct Surface {
    @builtin(position) position: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) world: vec3<f32>,
}

@vertex
fn vs_body(@location(0) position: vec4<f32>, @location(1) normal: vec4<f32>) -> Surface {
    return Surface(camera.view_proj * vec4<f32>(position.xyz, 1.0), normal.xyz, position.xyz);
}

// Both looks are computed and one selected, with no branch on a uniform:
// lavapipe (Mesa 22.3) inlines the uniforms a branch reads and compiles a
// new shader variant for every value they take, keeping each one, which
// grew the process by half a megabyte a frame.
@fragment
fn fs_body(surface: Surface) -> @location(0) vec4<f32> {
    let n = normalize(surface.normal);
    let view = normalize(camera.eye.xyz - surface.world);
    let colour = body.colour.rgb;
    let key = key_light_reaching(camera.light, scene_shadow, scene_shadow_sampler, surface.world);
    let lit = lambert_reached(camera.light, colour, n, key) + 0.6 * key * highlight(camera.light, n, view, 32.0) + colour * rim(n, view, 3.0) * 0.5;
    // Glass: light added over the branches, a faint fill and a bright rim
    // at the silhouette, with the key light's glint.
    let edge = rim(n, view, 3.0);
    let glass = colour * (0.04 + 1.4 * edge) + 0.6 * key * highlight(camera.light, n, view, 64.0);
    return select(vec4<f32>(glass * body.opacity, body.opacity * edge), vec4<f32>(lit, 1.0), body.style == 0u);
}
