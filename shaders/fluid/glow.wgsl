// The particles' glow (the seed's look), splatted by compute: each
// particle a soft disc, drawn out along its motion across the view by
// `look.streak` seconds of it (falling water as rain, spray as streaks),
// whitened by its speed or density, added up in fixed point. A
// rasterizer blending millions of overlapping billboards is what made a
// storm slow (560,000 drops: 10.8 ms on the H200). `glow_measure` finds
// the tallest footprint on screen, `size_splat` (footprint.wgsl) the
// dispatch of a thread a row of each, `glow_rows` adds the row's pixels,
// and `glow_resolve` turns the sums into the layer's colour, leaving them
// cleared for the next frame.

#include "fluid/particle_look.wgsl"
#include "fluid/footprint.wgsl"

// Each pixel's glow: the summed weight of the liquid's colour, then of
// white, in fixed point.
@group(0) @binding(10) var<storage, read_write> glow_sums: array<atomic<u32>>;
@group(1) @binding(1) var glow_out: texture_storage_2d<rgba16float, write>;
@group(1) @binding(2) var scene_depth: texture_depth_2d;

// Fixed-point steps of one disc's full weight: fine against the dimmest
// drop, room for 260,000 discs on one pixel.
const GLOW_STEPS: f32 = 16384.0;
// A streak is drawn at most this long and wide on screen (a drop at the lens).
const MAX_REACH_PX: f32 = 128.0;

// A particle's disc on screen: its centre in pixels, the two half-axes
// (along its motion, and across), and the depth buffer's value there; no
// axes when it draws nothing.
struct Streak {
    centre: vec2<f32>,
    along: vec2<f32>,
    across: vec2<f32>,
    depth: f32,
}

// Where `world` falls on the target, in pixels from its top left.
fn to_pixels(world: vec3<f32>) -> vec2<f32> {
    let clip = camera.view_proj * vec4<f32>(world, 1.0);
    let ndc = clip.xy / clip.w;
    return vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5) * vec2<f32>(splat.size);
}

// `axis` no longer than the largest streak.
fn capped(axis: vec2<f32>) -> vec2<f32> {
    let length_px = length(axis);
    return axis * min(1.0, MAX_REACH_PX / max(length_px, 1e-6));
}

fn streak_of(i: u32) -> Streak {
    let nothing = Streak(vec2<f32>(0.0), vec2<f32>(0.0), vec2<f32>(0.0), 1.0);
    let p = positions[i];
    let axes = camera_axes();
    let eye_depth = dot(p.xyz - camera.eye.xyz, axes[2]);
    // (The streak lies across the view, all of it as deep as the particle.)
    if p.w == 0.0 || eye_depth < look.radius {
        return nothing;
    }
    let v = velocities[i].xyz;
    let across_view = v - axes[2] * dot(v, axes[2]);
    // Drawn no longer than at rain's own speed: a particle flung hard is a
    // short bright streak, not a line across the picture.
    let moving = length(across_view);
    let speed = min(moving, 8.0);
    let along = select(axes[1], across_view / moving, moving > 1e-5);
    let side = normalize(cross(along, axes[2]));
    let trail = 0.5 * look.streak * speed;
    let middle = p.xyz - along * trail;
    let centre = to_pixels(middle);
    let streak = Streak(
        centre,
        capped(to_pixels(middle + along * (look.radius + trail)) - centre),
        capped(to_pixels(middle + side * look.radius) - centre),
        depth_of(camera, eye_depth),
    );
    let half = vec2<f32>(length(vec2<f32>(streak.along.x, streak.across.x)), length(vec2<f32>(streak.along.y, streak.across.y)));
    let size = vec2<f32>(splat.size);
    if any(centre + half < vec2<f32>(0.0)) || any(centre - half > size) {
        return nothing;
    }
    return streak;
}

// Rows a streak covers, centred on its own (0: none).
fn rows_of(streak: Streak) -> u32 {
    if dot(streak.along, streak.along) == 0.0 {
        return 0u;
    }
    let half = length(vec2<f32>(streak.along.y, streak.across.y));
    return u32(ceil(half)) * 2u + 1u;
}

@compute @workgroup_size(64)
fn glow_measure(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let i = global.x + global.y * groups.x * WORKGROUP;
    var rows = 0u;
    if i < splat.particle_count {
        rows = rows_of(streak_of(i));
    }
    measured(local, rows);
}

@compute @workgroup_size(64)
fn glow_rows(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let thread = row_of(global, groups);
    if !thread.covers {
        return;
    }
    let i = thread.particle;
    let dy = thread.dy;
    let streak = streak_of(i);
    let own_rows = rows_of(streak);
    if own_rows == 0u || abs(dy) > i32(own_rows / 2u) {
        return;
    }
    let y = i32(floor(streak.centre.y)) + dy;
    let size = vec2<i32>(splat.size);
    if y < 0 || y >= size.y {
        return;
    }
    // The disc is where (d . a / |a|^2)^2 + (d . b / |b|^2)^2 <= 1, d from
    // its centre and a, b its half-axes: d^T M d <= 1.
    let a = streak.along / dot(streak.along, streak.along);
    let b = streak.across / max(dot(streak.across, streak.across), 1e-12);
    let m = vec3<f32>(a.x * a.x + b.x * b.x, a.x * a.y + b.x * b.y, a.y * a.y + b.y * b.y);
    let fy = f32(y) + 0.5 - streak.centre.y;
    // The row's span: where m.x fx^2 + 2 m.y fx fy + m.z fy^2 = 1.
    let opening = m.y * m.y * fy * fy - m.x * (m.z * fy * fy - 1.0);
    if opening <= 0.0 || m.x <= 0.0 {
        return;
    }
    let reach = sqrt(opening) / m.x;
    let middle = -m.y * fy / m.x;
    let first = max(i32(ceil(streak.centre.x + middle - reach - 0.5)), 0);
    let last = min(i32(floor(streak.centre.x + middle + reach - 0.5)), size.x - 1);
    let white = disc_whiteness(i);
    for (var x = first; x <= last; x++) {
        let fx = f32(x) + 0.5 - streak.centre.x;
        let r2 = m.x * fx * fx + 2.0 * m.y * fx * fy + m.z * fy * fy;
        let hidden = splat.in_scene == 1u && streak.depth > textureLoad(scene_depth, vec2<i32>(x, y), 0);
        if r2 >= 1.0 || hidden {
            continue;
        }
        let soft = (1.0 - r2) * (1.0 - r2) * GLOW_STEPS;
        let at = u32(y * size.x + x);
        atomicAdd(&glow_sums[at * 2u], u32(round(soft * (1.0 - white))));
        atomicAdd(&glow_sums[at * 2u + 1u], u32(round(soft * white)));
    }
}

@compute @workgroup_size(64)
fn glow_resolve(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let at = global.x + global.y * groups.x * WORKGROUP;
    if at >= splat.size.x * splat.size.y {
        return;
    }
    let pixel = vec2<i32>(vec2<u32>(at % splat.size.x, at / splat.size.x));
    let coloured = f32(atomicExchange(&glow_sums[at * 2u], 0u)) / GLOW_STEPS;
    let white = f32(atomicExchange(&glow_sums[at * 2u + 1u], 0u)) / GLOW_STEPS;
    let rgb = (look.colour.rgb * coloured + vec3<f32>(white)) * look.brightness;
    textureStore(glow_out, pixel, vec4<f32>(rgb, coloured + white));
}
