// The liquid's eye depth, thickness and foam splatted by compute instead
// of rasterized discs (a rasterizer that runs a fragment for each of
// millions of overlapping discs, writing depth by hand so early depth
// tests are off, is what made the surface slow). One thread covers one
// row of one particle's disc: `measure` finds the widest disc on screen,
// `size_splat` (footprint.wgsl) writes the dispatch for that many rows, `splat_rows` adds each
// pixel of the row with atomics (nearest sphere surface by atomicMin on
// the depth's bits, thickness and foam added in fixed point), and
// `resolve` turns the sums into the textures the smoothing and shading
// read, leaving the sums cleared for the next frame.

#include "fluid/particle_look.wgsl"
#include "fluid/footprint.wgsl"

@group(0) @binding(7) var<storage, read_write> depth_bits: array<atomic<u32>>;
// Thickness then foam, two words a pixel.
@group(0) @binding(8) var<storage, read_write> layer_sums: array<atomic<u32>>;
@group(1) @binding(0) var eye_out: texture_storage_2d<r32float, write>;
@group(1) @binding(1) var layer_out: texture_storage_2d<rgba16float, write>;
@group(1) @binding(2) var scene_depth: texture_depth_2d;

// Larger discs are drawn this large (a particle right at the lens).
const MAX_RADIUS_PX: f32 = 128.0;
// A spray droplet's largest radius on screen.
const SPRAY_MAX_PX: f32 = 3.0;

// Where a sphere of `radius` metres at `p` falls on screen: centre
// (pixels), radius (pixels) and eye depth; all 0 when it reaches behind
// the eye.
fn projected(p: vec3<f32>, radius: f32) -> vec4<f32> {
    let eye_depth = dot(p - camera.eye.xyz, camera_axes()[2]);
    if eye_depth < radius {
        return vec4<f32>(0.0);
    }
    let clip = camera.view_proj * vec4<f32>(p, 1.0);
    let ndc = clip.xy / clip.w;
    let size = vec2<f32>(splat.size);
    let centre = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5) * size;
    return vec4<f32>(centre, radius * size.y / (2.0 * camera.viewport.z * eye_depth), eye_depth);
}

// Where particle `i` falls on screen: centre (pixels), radius (pixels)
// and eye depth; radius 0 when it is off or behind the camera.
fn on_screen(i: u32) -> vec4<f32> {
    let p = positions[i];
    let disc = projected(p.xyz, look.radius);
    let radius = min(disc.z, MAX_RADIUS_PX);
    let size = vec2<f32>(splat.size);
    let outside = any(disc.xy + radius < vec2<f32>(0.0)) || any(disc.xy - radius > size);
    let off = p.w == 0.0 || radius == 0.0 || outside;
    return select(vec4<f32>(disc.xy, radius, disc.w), vec4<f32>(0.0), off);
}

@compute @workgroup_size(64)
fn measure(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let i = global.x + global.y * groups.x * WORKGROUP;
    var rows = 0u;
    if i < splat.particle_count {
        let disc = on_screen(i);
        rows = select(0u, u32(ceil(disc.z)) * 2u + 1u, disc.z > 0.0);
    }
    measured(local, rows);
}

@compute @workgroup_size(64)
fn splat_rows(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let thread = row_of(global, groups);
    if !thread.covers {
        return;
    }
    let i = thread.particle;
    let dy = thread.dy;
    let disc = on_screen(i);
    let radius = disc.z;
    let reach = i32(ceil(radius));
    if radius == 0.0 || abs(dy) > reach {
        return;
    }
    let y = i32(floor(disc.y)) + dy;
    let size = vec2<i32>(splat.size);
    if y < 0 || y >= size.y {
        return;
    }
    let shading = disc_shading(i);
    let foam = shading.x;
    let spray = shading.y;
    let fy = (f32(y) + 0.5 - disc.y) / radius;
    let droplet = min(radius * 0.5, SPRAY_MAX_PX);
    let droplet_shrink = (radius / droplet) * (radius / droplet);
    let first = max(i32(floor(disc.x - radius)), 0);
    let last = min(i32(ceil(disc.x + radius)), size.x - 1);
    for (var x = first; x <= last; x++) {
        let fx = (f32(x) + 0.5 - disc.x) / radius;
        let r2 = fx * fx + fy * fy;
        if r2 > 1.0 {
            continue;
        }
        let at = u32(y * size.x + x);
        if spray <= 0.5 {
            // The sphere's near surface; positive floats order as their bits.
            let eye = bitcast<u32>(disc.w - sqrt(1.0 - r2) * look.radius);
            if eye < atomicLoad(&depth_bits[at]) {
                atomicMin(&depth_bits[at], eye);
            }
        }
        // Spray is drawn as fine droplets, half size and never wider than
        // SPRAY_MAX_PX (one flying past the lens is a droplet, not a
        // bead), and adds no body.
        let r2_layer = r2 * mix(1.0, droplet_shrink, spray);
        if r2_layer <= 1.0 {
            let chord = 2.0 * sqrt(1.0 - r2_layer) * look.radius * splat.scale;
            atomicAdd(&layer_sums[at * 2u], u32(chord * (1.0 - spray)));
            atomicAdd(&layer_sums[at * 2u + 1u], u32(chord * foam));
        }
    }
}

// White water (white_water.wgsl): position and life left, velocity and
// kind (0 spray, 1 foam, 2 bubble).
@group(0) @binding(10) var<storage, read> white_position: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read> white_velocity: array<vec4<f32>>;

// A white particle's radius, a share of the liquid's particles', and the
// smallest disc one is drawn as (a smaller one adds its share of it).
const WHITE_SIZE: f32 = 0.35;
const WHITE_MIN_PX: f32 = 0.75;
const WHITE_MAX_PX: f32 = 8.0;

// Each white particle adds to the foam of the pixels it covers, after the
// liquid's splat has found its nearest surface: one under that surface
// fades with its depth below it (a bubble seen through the water), one
// behind what the scene drew is hidden. A thread a particle: they are a
// few pixels wide.
@compute @workgroup_size(64)
fn splat_white_water(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = global.x + global.y * groups.x * WORKGROUP;
    if i >= splat.white_count {
        return;
    }
    let p = white_position[i];
    let radius = look.radius * WHITE_SIZE;
    let disc = projected(p.xyz, radius);
    if p.w <= 0.0 || disc.z == 0.0 {
        return;
    }
    let size = vec2<f32>(splat.size);
    let centre = disc.xy;
    let true_px = disc.z;
    let eye_depth = disc.w;
    let drawn_px = clamp(true_px, WHITE_MIN_PX, WHITE_MAX_PX);
    // Born and dying softly; bubbles paler than foam on top.
    let kind = white_velocity[i].w;
    let fade = smoothstep(0.0, 0.5, p.w) * select(1.0, 0.5, kind > 1.5);
    let share = fade * min(true_px * true_px / (drawn_px * drawn_px), 1.0);
    let first = max(vec2<i32>(floor(centre - drawn_px)), vec2<i32>(0));
    let last = min(vec2<i32>(ceil(centre + drawn_px)), vec2<i32>(splat.size) - 1);
    let scene_hides = (splat.in_scene == 1u)
        & (depth_of(camera, eye_depth) > textureLoad(scene_depth, vec2<i32>(clamp(centre, vec2<f32>(0.0), size - 1.0)), 0));
    if scene_hides {
        return;
    }
    for (var y = first.y; y <= last.y; y++) {
        for (var x = first.x; x <= last.x; x++) {
            let f = (vec2<f32>(f32(x), f32(y)) + 0.5 - centre) / drawn_px;
            let r2 = dot(f, f);
            if r2 > 1.0 {
                continue;
            }
            let at = u32(y) * splat.size.x + u32(x);
            let water = bitcast<f32>(atomicLoad(&depth_bits[at]));
            let under = max(eye_depth - water - look.radius, 0.0);
            let seen = share * exp(-under / (3.0 * look.radius));
            let chord = 2.0 * sqrt(1.0 - r2) * radius * splat.scale;
            atomicAdd(&layer_sums[at * 2u + 1u], u32(chord * seen));
        }
    }
}

const EMPTY_BITS: u32 = 0x4e6e6b28u; // bitcast<u32>(1e9), EMPTY in surface.wgsl
const EMPTY_DEPTH: f32 = 1e9;

@compute @workgroup_size(64)
fn resolve(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let at = global.x + global.y * groups.x * WORKGROUP;
    if at >= splat.size.x * splat.size.y {
        return;
    }
    let pixel = vec2<i32>(vec2<u32>(at % splat.size.x, at / splat.size.x));
    var eye = bitcast<f32>(atomicExchange(&depth_bits[at], EMPTY_BITS));
    var thickness = f32(atomicExchange(&layer_sums[at * 2u], 0u)) / splat.scale;
    var foam = f32(atomicExchange(&layer_sums[at * 2u + 1u], 0u)) / splat.scale;
    let hidden = splat.in_scene == 1u && eye < EMPTY_DEPTH
        && depth_of(camera, eye) > textureLoad(scene_depth, pixel, 0);
    if hidden {
        eye = EMPTY_DEPTH;
        thickness = 0.0;
        foam = 0.0;
    }
    textureStore(eye_out, pixel, vec4<f32>(eye));
    textureStore(layer_out, pixel, vec4<f32>(thickness, foam, 0.0, 0.0));
}
