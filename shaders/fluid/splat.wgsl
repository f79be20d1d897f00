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

// Where particle `i` falls on screen: centre (pixels), radius (pixels)
// and eye depth; radius 0 when it is off or behind the camera.
fn on_screen(i: u32) -> vec4<f32> {
    let p = positions[i];
    let eye_depth = dot(p.xyz - camera.eye.xyz, camera_axes()[2]);
    if p.w == 0.0 || eye_depth < look.radius {
        return vec4<f32>(0.0);
    }
    let clip = camera.view_proj * vec4<f32>(p.xyz, 1.0);
    let ndc = clip.xy / clip.w;
    let size = vec2<f32>(splat.size);
    let centre = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5) * size;
    let radius = min(look.radius * size.y / (2.0 * camera.viewport.z * eye_depth), MAX_RADIUS_PX);
    let outside = any(centre + radius < vec2<f32>(0.0)) || any(centre - radius > size);
    return select(vec4<f32>(centre, radius, eye_depth), vec4<f32>(0.0), outside);
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
        // Spray is drawn at half size, as fine droplets, and adds no body.
        let r2_layer = r2 * mix(1.0, 4.0, spray);
        if r2_layer <= 1.0 {
            let chord = 2.0 * sqrt(1.0 - r2_layer) * look.radius * splat.scale;
            atomicAdd(&layer_sums[at * 2u], u32(chord * (1.0 - spray)));
            atomicAdd(&layer_sums[at * 2u + 1u], u32(chord * foam));
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
