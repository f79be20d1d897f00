// The character's skin, drawn from the skinned vertices and their
// materials' metal-rough factors: lit with the shared light; as a
// half-translucent skin, see-through where it faces the eye and thickening
// towards its silhouette, lit by its materials, the key light showing
// through thin parts from behind and a rim light outlining it, so the
// branches inside show through; or as a glass shell of added light whose
// rim glows.

#include "common/camera.wgsl"
#include "common/lighting.wgsl"
#include "common/shadow.wgsl"

struct BodyParams {
    colour: vec4<f32>,
    // 0 lit, 1 glass, 2 skin.
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
    // Base colour and metallic, then roughness.
    @location(2) colour_metallic: vec4<f32>,
    @location(3) roughness: f32,
}

@vertex
fn vs_body(
    @location(0) position: vec4<f32>,
    @location(1) normal: vec4<f32>,
    @location(2) colour_metallic: vec4<f32>,
    @location(3) roughness: f32,
) -> Surface {
    let clip = camera.view_proj * vec4<f32>(position.xyz, 1.0);
    return Surface(clip, normal.xyz, position.xyz, colour_metallic, roughness);
}

// How opaque the skin is where it faces the eye (its opacity) and at its
// silhouette, where the eye looks through more of it (nearly whole).
fn skin_cover(n: vec3<f32>, view: vec3<f32>) -> f32 {
    return mix(body.opacity, 1.0, rim(n, view, 2.0) * 0.9);
}

// Both looks are computed and one selected, with no branch on a uniform:
// lavapipe (Mesa 22.3) inlines the uniforms a branch reads and compiles a
// new shader variant for every value they take, keeping each one, which
// grew the process by half a megabyte a frame.
@fragment
fn fs_body(surface: Surface) -> @location(0) vec4<f32> {
    let n = normalize(surface.normal);
    let view = normalize(camera.eye.xyz - surface.world);
    let colour = body.colour.rgb * surface.colour_metallic.rgb;
    let metal_rough = vec2<f32>(surface.colour_metallic.a, surface.roughness);
    let key = key_light_reaching(camera.light, scene_shadow, scene_shadow_sampler, surface.world);
    let edge = rim(n, view, 3.0);
    let lit = metal_rough_lit(camera.light, colour, metal_rough, n, view, key) + colour * edge * 0.5;
    // Skin: the key light through thin parts from behind (wrapped past the
    // terminator) and a rim light in its colour, over the branches.
    let through = colour * camera.light.colour.rgb * key * max(-dot(n, camera.light.towards.xyz) + 0.3, 0.0) * 0.35;
    let rimmed = lit + through + camera.light.colour.rgb * edge * 0.8;
    let cover = skin_cover(n, view);
    // Glass: light added over the branches, a faint fill and a bright rim
    // at the silhouette, with the key light's glint.
    let glass = colour * (0.04 + 1.4 * edge) + 0.6 * key * highlight(camera.light, n, view, 64.0);
    let glassy = vec4<f32>(glass * body.opacity, body.opacity * edge);
    let skin = vec4<f32>(rimmed * cover, cover);
    return select(select(glassy, skin, body.style == 2u), vec4<f32>(lit, 1.0), body.style == 0u);
}
