// Stage: the ground and sky the 3D layers of a scene stand in, seen by the
// scene's camera. A floor that fades into fog at the horizon, a sky from a
// warm glow low where the light comes from up to night overhead, slow
// clouds drifting across it, and the shadows the layers in the scene cast
// on the floor from the key light (the scene's shadow map), with a contact
// darkening under each body. Put it first in a scene preset's layers.
//
// @param zenith colour 0.015,0.02,0.06,1 "Sky overhead"
// @param horizon colour 0.2,0.12,0.16,1 "Sky at the horizon; the fog takes this colour"
// @param glow colour 1.0,0.55,0.3,1 "The light low in the sky behind the key light"
// @param floor colour 0.035,0.032,0.03,1 "The floor near the camera"
// @param fog float 0.03 min=0 max=1 smooth=0.3 "Fog per metre over the floor"
// @param shadow float 0.75 min=0 max=1 smooth=0.2 "How dark the floor falls close under the bodies (their shadows from the light: scene.shadows)"
// @param rings float 0.35 min=0 max=1 smooth=0.2 "A ring of light running outwards over the floor on the beat"
// @param clouds float 0.5 min=0 max=2 smooth=0.3 "How much cloud drifts across the sky"
// @param stars float 0.6 min=0 max=3 "Brightness of the stars (they fade out as the key light rises above the horizon)"

#include "common/noise.wgsl"
#include "common/sky.wgsl"
#include "common/lighting.wgsl"

fn sky_colour(ray: vec3<f32>) -> vec3<f32> {
    let look = SkyLook(params.horizon.rgb, params.zenith.rgb, params.glow.rgb, glow_towards(scene.light.towards.xyz), params.clouds, params.stars * starlight(scene.light.towards.xyz), sylva.time);
    return sky_along(look, ray);
}

// How dark floor point `p` is close under the bodies, whatever the light:
// the ambient light they hide (their shadows from the key light come from
// the scene's shadow map).
fn floor_contact(p: vec3<f32>) -> f32 {
    var open = 1.0;
    for (var k = 0u; k < min(scene_bodies.count, 64u); k++) {
        let c = scene_bodies.capsules[k];
        let r = c.a.w;
        let gap = length(p - mix(c.a.xyz, c.b.xyz, along_segment(p, c.a.xyz, c.b.xyz))) - r;
        let contact = 1.0 - smoothstep(0.0, r * 3.0 + 0.05, gap);
        open *= 1.0 - params.shadow * contact * 0.9;
    }
    return open;
}

fn floor_colour(p: vec3<f32>, distance: f32) -> vec3<f32> {
    // Large soft patches and fine grain, so the floor reads as a surface.
    let patches = fbm2(p.xz * 0.35);
    let grain = value_noise2(p.xz * 9.0);
    var colour = params.floor.rgb * (0.7 + 0.6 * patches) * (0.9 + 0.2 * grain);
    // A ring of light running outwards from the centre each beat (no
    // standing rings: far off they thin into a line across the floor).
    let radius = length(p.xz);
    let pulse = exp(-abs(radius - sylva.beat_phase * 6.0) * 2.0) * exp(-radius * 0.15);
    colour += params.glow.rgb * params.rings * pulse * 0.12 / (1.0 + distance * 0.2);
    let lit = lambert_reached(scene.light, colour, vec3<f32>(0.0, 1.0, 0.0), scene_light_reaching(p));
    return lit * 1.3 * floor_contact(p);
}

@fragment
fn fs_main(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let ray = scene_ray(in.uv);
    let eye = scene.eye.xyz;
    if ray.y >= 0.0 || eye.y <= 0.0 {
        return vec4<f32>(sky_colour(ray), 1.0);
    }
    let t = -eye.y / ray.y;
    let p = eye + ray * t;
    // The stage's own fog, or the scene's where it has one (which the
    // forest and the other layers share), into the scene's fog colour or
    // else the sky just above the horizon in the ray's bearing (a unit
    // ray, as the sky's own: no seam where floor meets sky). The sky is
    // worked out only where it shows: its clouds are the dearest part of
    // the stage at 4K.
    var fog = 1.0 - exp(-params.fog * t);
    var horizon = scene.light.fog.rgb;
    if scene_fog_on(scene.light) {
        fog = fog_between(scene.light, eye, p);
    } else {
        horizon = sky_colour(normalize(vec3<f32>(ray.x, 0.0, ray.z)));
    }
    return vec4<f32>(mix(floor_colour(p, t), horizon, fog), 1.0);
}
