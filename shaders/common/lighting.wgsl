// The light every 3D layer shares, as its camera carries it (`Light` in
// camera.wgsl, from the `scene.light_*` parameters): the key light's
// diffuse and mirror highlight, the ambient light that fills the rest, a
// rim that outlines silhouettes against the dark, Fresnel and a sky
// gradient for reflections. Layers that shade in view space (the fluid's
// screen-space surface) shade with `seen_in_view(light)`.

#include "common/camera.wgsl"

// Diffuse shading of `colour` with unit normal `n`.
fn lambert(light: Light, colour: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    return lambert_reached(light, colour, n, 1.0);
}

// The same where only `reaching` of the key light arrives (a shadow:
// common/shadow.wgsl), the ambient light whole.
fn lambert_reached(light: Light, colour: vec3<f32>, n: vec3<f32>, reaching: f32) -> vec3<f32> {
    let diffuse = max(dot(n, light.towards.xyz), 0.0) * reaching;
    return colour * (ambient_at(light, n) + light.colour.rgb * diffuse);
}

// The ambient light a surface facing `n` (in the scene's frame) gathers:
// the sky's from above, the ground's from below, blended between.
fn ambient_at(light: Light, n: vec3<f32>) -> vec3<f32> {
    return mix(light.ambient_ground.rgb, light.ambient.rgb, clamp(n.y * 0.5 + 0.5, 0.0, 1.0));
}

// A surface of base colour `colour` and glTF's metal-rough factors
// (`metal_rough`: metallic, roughness) under the key light, where
// `reaching` of it arrives, and the ambient light: its dielectric share
// diffuse, and a normalized Blinn-Phong lobe as sharp as the roughness
// allows, its reflectance Schlick's from 4% (a dielectric) to the base
// colour (a metal).
fn metal_rough_lit(light: Light, colour: vec3<f32>, metal_rough: vec2<f32>, n: vec3<f32>, view: vec3<f32>, reaching: f32) -> vec3<f32> {
    let metallic = clamp(metal_rough.x, 0.0, 1.0);
    let alpha = max(metal_rough.y * metal_rough.y, 0.02);
    let shininess = 2.0 / (alpha * alpha) - 2.0;
    let towards = light.towards.xyz;
    let half_way = normalize(towards + view);
    let f0 = mix(vec3<f32>(0.04), colour, metallic);
    let reflectance = f0 + (1.0 - f0) * pow(1.0 - max(dot(half_way, view), 0.0), 5.0);
    let lobe = (shininess + 8.0) / 8.0 * pow(max(dot(n, half_way), 0.0), shininess);
    let diffuse = colour * (1.0 - metallic);
    let direct = light.colour.rgb * reaching * max(dot(n, towards), 0.0) * (diffuse + reflectance * lobe);
    return ambient_at(light, n) * (diffuse + f0) + direct;
}

// The light with its direction in the camera's view space.
fn seen_in_view(light: Light) -> Light {
    var seen = light;
    seen.towards = light.towards_view;
    return seen;
}

// Brightening towards the silhouette, seen from `view` (unit, towards the eye).
fn rim(n: vec3<f32>, view: vec3<f32>, power: f32) -> f32 {
    return pow(1.0 - max(dot(n, view), 0.0), power);
}

// The key light's mirror highlight, in its colour.
fn highlight(light: Light, n: vec3<f32>, view: vec3<f32>, shininess: f32) -> vec3<f32> {
    return light.colour.rgb * pow(max(dot(reflect(-light.towards.xyz, n), view), 0.0), shininess);
}

// Schlick's Fresnel for water-like surfaces.
fn fresnel(n: vec3<f32>, view: vec3<f32>) -> f32 {
    return 0.02 + 0.98 * pow(1.0 - max(dot(n, view), 0.0), 5.0);
}

// The night sky a surface with normal `n` reflects.
fn sky(n: vec3<f32>) -> vec3<f32> {
    return mix(vec3<f32>(0.05, 0.08, 0.12), vec3<f32>(0.55, 0.7, 0.9), clamp(n.y * 0.5 + 0.5, 0.0, 1.0));
}
