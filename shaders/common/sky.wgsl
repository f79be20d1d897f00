// A sky seen along a ray, for the layers that draw their own (the stage,
// a forest with its backdrop): from the horizon's colour up to the
// zenith's, a glow low in the key light's bearing, clouds drifting across
// it, thinner overhead, and stars only where the sky is dark enough for
// them (a day or dusk sky drowns them).

#include "common/noise.wgsl"

struct SkyLook {
    horizon: vec3<f32>,
    zenith: vec3<f32>,
    // The glow's colour and where it stands (unit, a little above the horizon).
    glow: vec3<f32>,
    glow_direction: vec3<f32>,
    clouds: f32,
    stars: f32,
    // Seconds, for the clouds' drift and the stars' twinkle.
    time: f32,
}

// Where a glow stands for a key light shining along `towards` (towards
// the light): its bearing, low over the horizon.
fn glow_towards(towards: vec3<f32>) -> vec3<f32> {
    return normalize(vec3<f32>(-towards.x, 0.12, -towards.z));
}

// How much of its stars a sky keeps under a key light along unit
// `towards` (towards the light): none while the light stands well above
// the horizon (day), all once it is down at dusk or night.
fn starlight(towards: vec3<f32>) -> f32 {
    return 1.0 - smoothstep(0.02, 0.25, towards.y);
}

// The sky's colour low along unit `ray`'s bearing, at the horizon with
// its glow and without clouds: what a fog fades into there, so a far floor
// meets the sky without a seam.
fn sky_haze(look: SkyLook, ray: vec3<f32>) -> vec3<f32> {
    return sky_gradient(look, normalize(vec3<f32>(ray.x, 0.0, ray.z) + vec3<f32>(1e-4, 0.0, 0.0)));
}

// The horizon-to-zenith gradient and the glow along unit `ray`.
fn sky_gradient(look: SkyLook, ray: vec3<f32>) -> vec3<f32> {
    let up = clamp(ray.y, 0.0, 1.0);
    let towards = max(dot(ray, look.glow_direction), 0.0);
    let glow = look.glow * (pow(towards, 6.0) * 0.5 + pow(towards, 60.0) * 1.5) * (1.0 - up * 0.7);
    return mix(look.horizon, look.zenith, pow(up, 0.45)) + glow;
}

// The sky's colour along unit `ray`.
fn sky_along(look: SkyLook, ray: vec3<f32>) -> vec3<f32> {
    let up = clamp(ray.y, 0.0, 1.0);
    var colour = sky_gradient(look, ray);
    // Clouds: noise on the sky's plane, drifting, thinner overhead and
    // gone at the horizon, where the sky meets the fog.
    let plane = ray.xz / max(ray.y + 0.15, 0.05);
    let drift = vec2<f32>(look.time * 0.012, look.time * 0.004);
    let cloud = smoothstep(0.45, 0.85, fbm2(plane * 0.6 + drift)) * look.clouds * smoothstep(0.0, 0.08, up);
    colour = mix(colour, look.horizon * 1.3 + look.glow * 0.08, cloud * (1.0 - up * 0.5) * 0.6);
    let cell = floor(plane * 90.0);
    let twinkle = 0.6 + 0.4 * sin(look.time * 2.0 + hash21(cell + 3.0) * 30.0);
    let night = 1.0 - smoothstep(0.02, 0.12, dot(colour, vec3<f32>(0.2126, 0.7152, 0.0722)));
    let star = step(0.996, hash21(cell)) * twinkle * look.stars * smoothstep(0.05, 0.3, up) * night;
    return colour + vec3<f32>(star * (1.0 - cloud));
}
