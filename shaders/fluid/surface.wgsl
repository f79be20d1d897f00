// The screen-space fluid surface: the particles' eye depth is smoothed by a
// bilateral filter (blur within the liquid, keep its silhouette), normals
// come from the smoothed depth, and the shade reads as water: the layers
// below refracted through it and absorbed by its thickness (clear where
// thin, deep where thick), the sky reflected by Fresnel, the key light's
// glint, and foam where particles break away and splash. In a shared
// scene the surface also goes into the scene's depth, so what lies below
// the water in a layer drawn after it is hidden as in one drawn before.

#include "common/fullscreen.wgsl"
#include "common/camera.wgsl"
#include "common/lighting.wgsl"

struct Surface {
    colour: vec4<f32>,
    radius_px: f32,
    depth_falloff: f32,
    refraction: f32,
    // 0: horizontal blur, 1: vertical blur.
    direction: u32,
    // Absorption per metre of the colours the liquid's colour lacks.
    absorption: f32,
    // Brightness of the foam.
    foam: f32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> surface: Surface;
@group(0) @binding(2) var depth_in: texture_2d<f32>;
@group(0) @binding(3) var below: texture_2d<f32>;
// Thickness (metres) and foam along each ray.
@group(0) @binding(4) var thickness_in: texture_2d<f32>;

const EMPTY: f32 = 1e9;

@fragment
fn fs_blur(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let pixel = vec2<i32>(in.position.xy);
    let size = vec2<i32>(textureDimensions(depth_in));
    let centre = textureLoad(depth_in, pixel, 0).r;
    if centre >= EMPTY {
        return vec4<f32>(EMPTY);
    }
    let step = select(vec2<i32>(0, 1), vec2<i32>(1, 0), surface.direction == 0u);
    let radius = i32(clamp(surface.radius_px / max(centre, 1e-3), 1.0, 24.0));
    var sum = 0.0;
    var weight = 0.0;
    for (var k = -radius; k <= radius; k++) {
        let at = clamp(pixel + step * k, vec2<i32>(0), size - 1);
        let d = textureLoad(depth_in, at, 0).r;
        if d >= EMPTY {
            continue;
        }
        let spatial = exp(-f32(k * k) / f32(radius * radius) * 2.0);
        let range = exp(-(d - centre) * (d - centre) * surface.depth_falloff);
        sum += d * spatial * range;
        weight += spatial * range;
    }
    return vec4<f32>(sum / max(weight, 1e-6));
}

fn view_position(pixel: vec2<i32>, depth: f32) -> vec3<f32> {
    let size = camera.viewport.xy;
    let ndc = (vec2<f32>(pixel) + 0.5) / size * 2.0 - 1.0;
    let tan_half = camera.viewport.z;
    return vec3<f32>(ndc.x * tan_half * size.x / size.y * depth, -ndc.y * tan_half * depth, -depth);
}

// Where on screen the reflected ray `r` (view space) meets what it
// mirrors, taken as far away (a calm pond mirrors the sky and the far
// scene about its horizon, as a lake does); a ray leaving the picture
// reads its edge (the top: the sky).
fn mirrored_pixel(r: vec3<f32>, size: vec2<i32>) -> vec2<i32> {
    let ahead = max(-r.z, 1e-3);
    let aspect = camera.viewport.x / camera.viewport.y;
    let ndc = vec2<f32>(r.x / (ahead * camera.viewport.z * aspect), r.y / (ahead * camera.viewport.z));
    // Behind the eye it looks up, out of the picture's top.
    let uv = select(vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5), vec2<f32>(0.5, 0.0), r.z > -1e-3);
    return clamp(vec2<i32>(uv * vec2<f32>(size)), vec2<i32>(0), size - 1);
}

// White water over whatever is there: `amount` is foam-weighted
// thickness, metres. Thin froth lets the water show through; only a
// thick mat covers it.
fn foam_over(amount: f32, lit: f32) -> vec4<f32> {
    let cover = 0.85 * (1.0 - exp(-amount * 14.0));
    let white = vec3<f32>(0.9, 0.95, 1.0) * lit * surface.foam;
    return vec4<f32>(white * cover, cover);
}

// Foam-weighted thickness around `pixel`: a white particle at show scale
// is a pixel or two across, and alone they read as a dusting of white
// dots; gathered over a disc that grows with the picture (the same froth
// at 1080p and 4K), they read as froth, in patches and streaks.
fn foam_around(pixel: vec2<i32>, size: vec2<i32>) -> f32 {
    // A 5x5 grid, Gaussian-weighted, its taps a pixel apart at 1080p and
    // two at 4K: a lone droplet a soft round blob, not a star of taps.
    let spacing = max(round(f32(size.y) / 1080.0), 1.0);
    var sum = 0.0;
    var weight = 0.0;
    for (var y = -2; y <= 2; y++) {
        for (var x = -2; x <= 2; x++) {
            let offset = vec2<f32>(f32(x), f32(y)) * spacing;
            let at = clamp(pixel + vec2<i32>(round(offset)), vec2<i32>(0), size - 1);
            let w = exp(-f32(x * x + y * y) * 0.5);
            sum += textureLoad(thickness_in, at, 0).g * w;
            weight += w;
        }
    }
    return sum / weight;
}

@fragment
fn fs_shade(in: FullscreenVertex) -> @location(0) vec4<f32> {
    let pixel = vec2<i32>(in.position.xy);
    let size = vec2<i32>(textureDimensions(depth_in));
    let depth = textureLoad(depth_in, pixel, 0).r;
    let layer = textureLoad(thickness_in, pixel, 0).rg;
    let froth = foam_around(pixel, size);
    if depth >= EMPTY {
        // Spray flying alone: soft droplets of foam.
        return foam_over(froth, 0.8) * surface.colour.a;
    }
    // Normals from the smoothed depth, the smaller difference on each axis.
    let p = view_position(pixel, depth);
    let right = clamp(pixel + vec2<i32>(1, 0), vec2<i32>(0), size - 1);
    let left = clamp(pixel - vec2<i32>(1, 0), vec2<i32>(0), size - 1);
    let up = clamp(pixel - vec2<i32>(0, 1), vec2<i32>(0), size - 1);
    let down = clamp(pixel + vec2<i32>(0, 1), vec2<i32>(0), size - 1);
    let dr = view_position(right, textureLoad(depth_in, right, 0).r) - p;
    let dl = p - view_position(left, textureLoad(depth_in, left, 0).r);
    let du = view_position(up, textureLoad(depth_in, up, 0).r) - p;
    let dd = p - view_position(down, textureLoad(depth_in, down, 0).r);
    let dx = select(dr, dl, abs(dl.z) < abs(dr.z));
    let dy = select(du, dd, abs(dd.z) < abs(du.z));
    let n = normalize(cross(dx, dy));
    let view = normalize(-p);
    let thickness = max(layer.r, 0.0);
    // Refraction bends the view of what is behind more through thick water.
    let bend = n.xy * surface.refraction * clamp(thickness * 4.0, 0.2, 1.0) * vec2<f32>(1.0, -1.0);
    let refract_at = clamp(vec2<i32>(in.position.xy + bend * camera.viewport.xy), vec2<i32>(0), size - 1);
    let behind = textureLoad(below, refract_at, 0).rgb;
    let tint = surface.colour.rgb;
    let transmitted = exp(-(vec3<f32>(1.0) - tint) * surface.absorption * thickness);
    // Light scattered inside the body keeps the water coloured, deeper where
    // thicker, and visible over black (linear values: sRGB brightens them).
    let body = tint * tint * (0.03 + 0.2 * (vec3<f32>(1.0) - transmitted));
    let seen = behind * transmitted + body;
    // The surface mirrors the layers below where its reflected ray meets
    // them on screen, over a faint sky.
    let r = reflect(-view, n);
    let reflected = textureLoad(below, mirrored_pixel(r, size), 0).rgb + sky(r) * 0.1;
    let f = fresnel(n, view);
    let light = seen_in_view(camera.light);
    let glint = highlight(light, n, view, 160.0) * 3.0 + highlight(light, n, view, 30.0) * 0.2;
    let water = mix(seen, reflected, f) + glint;
    let foam = foam_over(froth, 0.55 + 0.6 * max(dot(n, light.towards.xyz), 0.0));
    let lit = water * (1.0 - foam.a) + foam.rgb;
    // Thin edges fade out, so the silhouette is a meniscus, not beads.
    let alpha = surface.colour.a * smoothstep(0.0, OPAQUE_THICKNESS, thickness);
    return vec4<f32>(lit * alpha, alpha);
}

// Thickness (metres) past which the surface hides what is behind it in
// the scene: the meniscus's thin edge stays see-through, as it is shaded.
const OPAQUE_THICKNESS: f32 = 0.04;

@fragment
fn fs_depth(in: FullscreenVertex) -> @builtin(frag_depth) f32 {
    let pixel = vec2<i32>(in.position.xy);
    let depth = textureLoad(depth_in, pixel, 0).r;
    let thickness = textureLoad(thickness_in, pixel, 0).r;
    if depth >= EMPTY || thickness < OPAQUE_THICKNESS {
        discard;
    }
    return depth_of(camera, depth);
}
