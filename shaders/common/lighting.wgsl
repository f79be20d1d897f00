// The light every 3D layer shares: one key light from above and a little
// to the side, a dim fill so shadowed sides keep their colour, a rim that
// outlines silhouettes against the dark, a specular highlight, Fresnel and
// a sky gradient for reflections. Layers that shade in view space (the
// fluid's screen-space surface) get a light that follows the camera;
// layers in world space (the colony's tubes) a fixed one.

const KEY_LIGHT: vec3<f32> = vec3<f32>(0.4, 0.9, 0.3);
const FILL: f32 = 0.18;

// Diffuse shading of `colour` with unit normal `n`.
fn lambert(colour: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    let diffuse = max(dot(n, normalize(KEY_LIGHT)), 0.0);
    return colour * (FILL + (1.0 - FILL) * diffuse);
}

// Brightening towards the silhouette, seen from `view` (unit, towards the eye).
fn rim(n: vec3<f32>, view: vec3<f32>, power: f32) -> f32 {
    return pow(1.0 - max(dot(n, view), 0.0), power);
}

// The key light's mirror highlight.
fn highlight(n: vec3<f32>, view: vec3<f32>, shininess: f32) -> f32 {
    return pow(max(dot(reflect(-normalize(KEY_LIGHT), n), view), 0.0), shininess);
}

// Schlick's Fresnel for water-like surfaces.
fn fresnel(n: vec3<f32>, view: vec3<f32>) -> f32 {
    return 0.02 + 0.98 * pow(1.0 - max(dot(n, view), 0.0), 5.0);
}

// The night sky a surface with normal `n` reflects.
fn sky(n: vec3<f32>) -> vec3<f32> {
    return mix(vec3<f32>(0.05, 0.08, 0.12), vec3<f32>(0.55, 0.7, 0.9), clamp(n.y * 0.5 + 0.5, 0.0, 1.0));
}
