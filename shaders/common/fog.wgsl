// The scene's height fog (`scene.fog*`, carried in every camera's Light):
// one fog for the stage, the forest and the layers in a scene, densest at
// the ground and thinning upwards, so the far floor and the trees' feet
// fade into it before their tops.

#include "common/camera.wgsl"

// Whether the scene has a fog (else each layer keeps its own).
fn scene_fog_on(light: Light) -> bool {
    return light.fog.w > 0.0;
}

// How much of the fog lies between `eye` and `p` (both in the frame of
// the camera that carries `light`), 0..1: the density exp(-y / height)
// integrated along the ray, heights in the scene's metres (below the
// ground counted as at it).
fn fog_between(light: Light, eye: vec3<f32>, p: vec3<f32>) -> f32 {
    let a = (light.to_scene * vec4<f32>(eye, 1.0)).xyz;
    let b = (light.to_scene * vec4<f32>(p, 1.0)).xyz;
    let height = max(light.fog_height.x, 1e-3);
    let ya = max(a.y, 0.0);
    let yb = max(b.y, 0.0);
    let rise = yb - ya;
    let level = exp(-ya / height);
    let mean = select(level, (level - exp(-yb / height)) * height / rise, abs(rise) > 1e-4);
    return 1.0 - exp(-light.fog.w * length(b - a) * mean);
}

// `colour` at `p` seen from `eye` through the scene's fog.
fn through_scene_fog(light: Light, colour: vec3<f32>, eye: vec3<f32>, p: vec3<f32>) -> vec3<f32> {
    return mix(colour, light.fog.rgb, fog_between(light, eye, p));
}
