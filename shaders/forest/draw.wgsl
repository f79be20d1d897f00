// Drawing the forest: every live tree sized by its height and species, lit
// with the shared light, on a ground plane, fading into fog with distance.
// `cull` sorts the live trees first: those outside the view or under a
// pixel are left out. With grown crowns (the default) the biggest on
// screen, up to a cap, draw whole, the branches and leaves the colony grew
// for their species and size (forest/crown.wgsl, src/layers/forest/
// crowns.rs), and every other tree as the impostor of its crown, a square
// showing the crown captured from the nearest of sixteen views
// (forest/atlas.wgsl), drawn by compute (forest/impostor_splat.wgsl).
// With cones, the simulation's own crowns: a trunk and a cone for those
// close enough to show their shape, one triangle (the cone's silhouette)
// for those a few pixels wide. Or, seen from above, the
// space maps coloured by the species that owns each pixel (the paper's
// figures), brighter where the owning crown is higher.

#include "common/camera.wgsl"
#include "common/lighting.wgsl"
#include "common/shadow.wgsl"
#include "common/fog.wgsl"
#include "common/noise.wgsl"
#include "common/fullscreen.wgsl"
#include "common/sky.wgsl"
#include "forest/forest.wgsl"
#include "forest/crown.wgsl"
#include "forest/atlas.wgsl"

struct DrawParams {
    // Per species, linear RGB (w unused).
    colours: array<vec4<f32>, 8>,
    fog_colour: vec4<f32>,
    // Metres of the map's side.
    extent: f32,
    fog_density: f32,
    brightness: f32,
    // The slice the maps view shows; past the last: the highest owner.
    view_slice: u32,
    time: f32,
    wind: f32,
    // Crown width on screen (pixels) from which a tree draws its grown
    // crown, and how many may (0: grown crowns off).
    grown_pixels: f32,
    grown_cap: u32,
    // The atlas's rows of crowns.
    atlas_rows: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> draw: DrawParams;
@group(0) @binding(2) var<uniform> params: ForestParams;
@group(0) @binding(3) var<uniform> species: array<Species, 8>;
@group(0) @binding(4) var<storage, read> trees: array<Tree>;
@group(0) @binding(5) var<storage, read> maps: array<u32>;
// The trees to draw: the simulation's list of live trees for `cull`; the
// near or the far list it writes for the drawing passes.
@group(0) @binding(6) var<storage, read> draw_list: array<u32>;
@group(0) @binding(7) var<storage, read_write> near_out: array<u32>;
@group(0) @binding(8) var<storage, read_write> far_out: array<u32>;
// Indirect draws: near (vertices, instances, 0, 0), far, then grown.
@group(0) @binding(9) var<storage, read_write> cull_args: array<atomic<u32>, 12>;
@group(0) @binding(10) var<storage, read> state: array<u32>;
@group(0) @binding(11) var<storage, read_write> grown_out: array<u32>;
// The grown crowns: branches, leaf clusters (xyz, size), and per crown
// (species, class, variant) its first branch, branches, first leaf, leaves.
@group(0) @binding(12) var<storage, read> crown_segments: array<CrownSegment>;
@group(0) @binding(13) var<storage, read> crown_leaves: array<vec4<f32>>;
@group(0) @binding(14) var<storage, read> crown_table: array<vec4<u32>>;
// Each crown's bounding radius about CAPTURE_CENTRE (forest/atlas.wgsl).
@group(0) @binding(16) var<storage, read> crown_reaches: array<f32>;
// Grown-crown candidates by size on screen, then the lowest size drawn.
@group(0) @binding(15) var<storage, read_write> grown_bins: array<atomic<u32>, 33>;

struct Surface {
    @builtin(position) position: vec4<f32>,
    @location(0) colour: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) world: vec3<f32>,
}

// Sides of trunks and crowns (TREE_VERTICES counts them).
const SIDES: u32 = 8u;

fn hidden() -> Surface {
    return Surface(vec4<f32>(0.0, 0.0, 2.0, 1.0), vec3<f32>(0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0));
}

fn lit(world: vec3<f32>, colour: vec3<f32>, normal: vec3<f32>) -> Surface {
    return Surface(camera.view_proj * vec4<f32>(world, 1.0), colour, normal, world);
}

// Ground position (x, z) of map position p, with the map centred on 0.
fn ground(p: vec2<f32>) -> vec3<f32> {
    return vec3<f32>(p.x - draw.extent * 0.5, 0.0, p.y - draw.extent * 0.5);
}

// A crown point `p` of a tree standing at `base`, `h` tall, bent by the
// wind: nothing at the foot, most at the tip, in gusts that roll across
// the forest (their phase runs with the ground position).
fn swayed(p: vec3<f32>, base: vec3<f32>, h: f32) -> vec3<f32> {
    let up = clamp((p.y - base.y) / max(h, 1e-3), 0.0, 1.0);
    let phase = dot(base.xz, vec2<f32>(0.11, 0.07));
    // Whole turns in the hour the time wraps at (about 0.23, 1.3 and 2.9
    // radians a second), so the sway runs on across the wrap unbroken.
    let turn = draw.time * 6.2831853 / 3600.0;
    let gust = 0.6 + 0.4 * sin(turn * 132.0 - phase * 0.5);
    let swing = sin(turn * 745.0 - phase) * 0.7 + sin(turn * 1662.0 - phase * 1.7) * 0.3;
    let bend = draw.wind * 0.05 * h * up * up * (gust + swing * gust);
    return p + vec3<f32>(0.8, 0.0, 0.6) * bend;
}

@vertex
fn vs_tree(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> Surface {
    let tree = trees[draw_list[instance]];
    if tree.alive == 0u || tree.height <= 0.0 {
        return hidden();
    }
    let kind = species[tree.species];
    let base = ground(tree.position);
    let h = tree.height;
    // The cone of the simulation: radius (h - z) tan(spread) at height z;
    // the crown starts where the trunk ends.
    let crown_base = h * 0.3;
    let crown_radius = (h - crown_base) * kind.tan_spread;
    let trunk_radius = max(0.02 * h, 0.03);
    let bark = vec3<f32>(0.09, 0.06, 0.04);
    let step = 6.2831853 / f32(SIDES);
    if vertex < SIDES * 6u {
        let quad = array<vec2<u32>, 6>(
            vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), vec2<u32>(1u, 1u),
            vec2<u32>(0u, 0u), vec2<u32>(1u, 1u), vec2<u32>(0u, 1u),
        );
        let corner = quad[vertex % 6u];
        let angle = f32(vertex / 6u + corner.x) * step;
        let ring = vec3<f32>(cos(angle), 0.0, sin(angle));
        let y = select(0.0, crown_base + 0.05 * h, corner.y == 1u);
        return lit(base + ring * trunk_radius + vec3<f32>(0.0, y, 0.0), bark, ring);
    }
    let k = vertex - SIDES * 6u;
    let side = (k / 3u) % SIDES;
    let corner = k % 3u;
    let angle = f32(side + select(0u, 1u, corner == 1u)) * step;
    let ring = vec3<f32>(cos(angle), 0.0, sin(angle));
    let tint = tree_tint(draw_list[instance], tree);
    if k < SIDES * 3u {
        // Crown side: ring at its base to the apex.
        let slope = normalize(ring * (h - crown_base) + vec3<f32>(0.0, crown_radius, 0.0));
        if corner == 2u {
            return lit(swayed(base + vec3<f32>(0.0, h, 0.0), base, h), tint * 1.15, slope);
        }
        return lit(swayed(base + ring * crown_radius + vec3<f32>(0.0, crown_base, 0.0), base, h), tint, slope);
    }
    // Crown underside: a flat disc.
    if corner == 2u {
        return lit(swayed(base + vec3<f32>(0.0, crown_base, 0.0), base, h), tint * 0.5, vec3<f32>(0.0, -1.0, 0.0));
    }
    return lit(swayed(base + ring * crown_radius + vec3<f32>(0.0, crown_base, 0.0), base, h), tint * 0.5, vec3<f32>(0.0, -1.0, 0.0));
}

// A far tree: the cone's silhouette as one triangle facing the camera,
// tinted as the near crown is.
@vertex
fn vs_far(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> Surface {
    let slot = draw_list[instance];
    let tree = trees[slot];
    let kind = species[tree.species];
    let base = ground(tree.position);
    let h = tree.height;
    let crown_base = h * 0.3;
    let crown_radius = (h - crown_base) * kind.tan_spread;
    let to_eye = camera.eye.xyz - base;
    let right = normalize(cross(vec3<f32>(0.0, 1.0, 0.0), to_eye + vec3<f32>(1e-4, 0.0, 0.0)));
    let facing = normalize(vec3<f32>(to_eye.x, 0.0, to_eye.z) + vec3<f32>(1e-4, 0.0, 0.0));
    let tint = tree_tint(slot, tree);
    let slope = normalize(facing * (h - crown_base) + vec3<f32>(0.0, crown_radius, 0.0));
    let side = select(-1.0, 1.0, vertex == 1u);
    if vertex == 2u {
        return lit(swayed(base + vec3<f32>(0.0, h, 0.0), base, h), tint, slope);
    }
    return lit(swayed(base + right * side * crown_radius + vec3<f32>(0.0, crown_base * 0.5, 0.0), base, h), tint, slope);
}

// Crowns at least this many pixels across are drawn whole.
const NEAR_PIXELS: f32 = 16.0;
// Crowns under this many pixels across are not drawn.
const TINY_PIXELS: f32 = 0.5;
const FAR_VERTICES: u32 = 3u;


@compute @workgroup_size(1)
fn cull_start() {
    atomicStore(&cull_args[0], TREE_VERTICES);
    atomicStore(&cull_args[1], 0u);
    atomicStore(&cull_args[4], FAR_VERTICES);
    atomicStore(&cull_args[5], 0u);
    atomicStore(&cull_args[8], CROWN_VERTICES);
    atomicStore(&cull_args[9], 0u);
}

// The grown trees' count, held to the cap (those past it drew as the
// near trees).
@compute @workgroup_size(1)
fn cull_finish() {
    atomicMin(&cull_args[9], draw.grown_cap);
}

// Whether a sphere lies at least partly inside the view (its left, right,
// bottom, top and near planes, from the rows of the projection).
fn in_view(centre: vec3<f32>, radius: f32) -> bool {
    let m = camera.view_proj;
    let row = array<vec4<f32>, 4>(
        vec4<f32>(m[0].x, m[1].x, m[2].x, m[3].x),
        vec4<f32>(m[0].y, m[1].y, m[2].y, m[3].y),
        vec4<f32>(m[0].z, m[1].z, m[2].z, m[3].z),
        vec4<f32>(m[0].w, m[1].w, m[2].w, m[3].w),
    );
    let planes = array<vec4<f32>, 5>(row[3] + row[0], row[3] - row[0], row[3] + row[1], row[3] - row[1], row[2]);
    for (var k = 0u; k < 5u; k++) {
        let plane = planes[k];
        if dot(plane.xyz, centre) + plane.w < -radius * length(plane.xyz) {
            return false;
        }
    }
    return true;
}

// The trees that cast into the scene's shadow map: with the key light as
// `camera`, every live tree whose sphere meets the light's view, whole (a
// shadow has no level of detail), listed in the near list's place (one
// atomic a tree: a grove, not a forest to the horizon, stands in a scene).
@compute @workgroup_size(256)
fn cull_casters(@builtin(global_invocation_id) global: vec3<u32>) {
    if global.x >= state[ALIVE] {
        return;
    }
    let slot = draw_list[global.x];
    let tree = trees[slot];
    if tree.alive == 0u || tree.height <= 0.0 {
        return;
    }
    let h = tree.height;
    let crown_radius = h * 0.7 * species[tree.species].tan_spread;
    let centre = ground(tree.position) + vec3<f32>(0.0, h * 0.5, 0.0);
    if in_view(centre, length(vec2<f32>(h * 0.5, crown_radius))) {
        near_out[atomicAdd(&cull_args[1], 1u)] = slot;
    }
}

// How a tree is drawn: not at all, whole, as its silhouette, or with its
// grown crown.
const UNSEEN: u32 = 0u;
const NEAR: u32 = 1u;
const FAR: u32 = 2u;
const GROWN: u32 = 3u;

// Tree `i`'s crown radius on screen in pixels, or 0 when it is not seen.
fn crown_pixels(i: u32) -> f32 {
    if i >= state[ALIVE] {
        return 0.0;
    }
    let tree = trees[draw_list[i]];
    if tree.alive == 0u || tree.height <= 0.0 {
        return 0.0;
    }
    let h = tree.height;
    let crown_radius = h * 0.7 * species[tree.species].tan_spread;
    let centre = ground(tree.position) + vec3<f32>(0.0, h * 0.5, 0.0);
    if !in_view(centre, length(vec2<f32>(h * 0.5, crown_radius))) {
        return 0.0;
    }
    let distance = max(length(centre - camera.eye.xyz), 1e-3);
    return crown_radius * camera.viewport.y / (camera.viewport.z * distance);
}

// Bins of grown-crown candidates by size on screen: a quarter of an
// octave each from `grown_pixels` wide up; the last also counts all
// larger. `grown_bins[BINS]` is the lowest bin drawn grown this frame.
const BINS: u32 = 32u;

fn size_bin(across: f32) -> u32 {
    let octaves = log2(max(across * 2.0 / draw.grown_pixels, 1.0));
    return min(u32(octaves * 4.0), BINS - 1u);
}

// How a tree whose crown is `across` pixels in radius on screen is drawn.
fn lod(across: f32) -> u32 {
    if across < TINY_PIXELS {
        return UNSEEN;
    }
    // `across` is the crown's radius on screen; `grown_pixels` its width.
    if draw.grown_cap > 0u && across * 2.0 >= draw.grown_pixels {
        return GROWN;
    }
    return select(FAR, NEAR, across >= NEAR_PIXELS);
}

// Counts the grown-crown candidates by size, so `cull_threshold` can give
// the cap's places to the biggest on screen.
@compute @workgroup_size(256)
fn cull_measure(@builtin(global_invocation_id) global: vec3<u32>) {
    let across = crown_pixels(global.x);
    if lod(across) == GROWN {
        atomicAdd(&grown_bins[size_bin(across)], 1u);
    }
}

// The lowest size bin whose trees, with all bigger ones, fit the cap (the
// biggest bin alone when even it does not); the bins cleared for the next
// frame.
@compute @workgroup_size(1)
fn cull_threshold() {
    var taken = 0u;
    var lowest = BINS - 1u;
    for (var k = 0u; k < BINS; k++) {
        let bin = BINS - 1u - k;
        taken += atomicLoad(&grown_bins[bin]);
        if taken > draw.grown_cap && bin != BINS - 1u {
            break;
        }
        lowest = bin;
    }
    for (var k = 0u; k < BINS; k++) {
        atomicStore(&grown_bins[k], 0u);
    }
    atomicStore(&grown_bins[BINS], lowest);
}

var<workgroup> near_count: atomic<u32>;
var<workgroup> far_count: atomic<u32>;
var<workgroup> near_first: u32;
var<workgroup> far_first: u32;

// Each live tree into the near or the far list. A workgroup counts its
// own first and reserves its places with one global atomic per list, so
// a million trees do not queue on two counters.
@compute @workgroup_size(256)
fn cull(@builtin(global_invocation_id) global: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    if local == 0u {
        atomicStore(&near_count, 0u);
        atomicStore(&far_count, 0u);
    }
    workgroupBarrier();
    let across = crown_pixels(global.x);
    var kind = lod(across);
    if kind == GROWN && size_bin(across) < atomicLoad(&grown_bins[BINS]) {
        kind = NEAR;
    }
    if kind == GROWN {
        // The biggest on screen: one atomic each; past the cap (only when
        // the biggest bin alone overflows it: whichever come last), a near tree.
        let slot = atomicAdd(&cull_args[9], 1u);
        if slot < draw.grown_cap {
            grown_out[slot] = draw_list[global.x];
            kind = UNSEEN;
        } else {
            kind = NEAR;
        }
    }
    var place = 0u;
    if kind == NEAR {
        place = atomicAdd(&near_count, 1u);
    } else if kind == FAR {
        place = atomicAdd(&far_count, 1u);
    }
    workgroupBarrier();
    if local == 0u {
        near_first = atomicAdd(&cull_args[1], atomicLoad(&near_count));
        far_first = atomicAdd(&cull_args[5], atomicLoad(&far_count));
    }
    workgroupBarrier();
    if kind == NEAR {
        near_out[near_first + place] = draw_list[global.x];
    } else if kind == FAR {
        far_out[far_first + place] = draw_list[global.x];
    }
}

var<workgroup> order_scan: array<vec2<u32>, 256>;
var<workgroup> order_alive: u32;

// The exclusive prefix of `value` over the workgroup's lanes; the block's
// total is then in order_scan[255] until the next call.
fn lanes_before(local: u32, value: vec2<u32>) -> vec2<u32> {
    order_scan[local] = value;
    workgroupBarrier();
    for (var offset = 1u; offset < 256u; offset = offset << 1u) {
        var add = vec2<u32>(0u);
        if local >= offset {
            add = order_scan[local - offset];
        }
        workgroupBarrier();
        order_scan[local] += add;
        workgroupBarrier();
    }
    return order_scan[local] - value;
}

// `cull` with every list in the order of the draw list, the same on every
// run (`sylva render`): where two trees meet a pixel at the same depth the
// one drawn first shows, and `cull`'s places follow the order its threads
// happen to run in. Workgroup 0 walks the trees 256 at a time, placing
// each after those before it; the dispatch is `cull`'s, so the other
// workgroups only return.
@compute @workgroup_size(256)
fn cull_in_order(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    if any(group != vec3<u32>(0u)) {
        return;
    }
    if local == 0u {
        order_alive = state[ALIVE];
    }
    let alive = workgroupUniformLoad(&order_alive);
    var grown_placed = 0u;
    var placed = vec2<u32>(0u);
    for (var first = 0u; first < alive; first += 256u) {
        let i = first + local;
        let across = crown_pixels(i);
        var kind = lod(across);
        if kind == GROWN && size_bin(across) < atomicLoad(&grown_bins[BINS]) {
            kind = NEAR;
        }
        // The grown first: past the cap (only when the biggest bin alone
        // overflows it), the later ones draw as near trees.
        let grown_before = lanes_before(local, vec2<u32>(u32(kind == GROWN), 0u)).x;
        let grown_here = order_scan[255].x;
        workgroupBarrier();
        if kind == GROWN {
            let slot = grown_placed + grown_before;
            if slot < draw.grown_cap {
                grown_out[slot] = draw_list[i];
                kind = UNSEEN;
            } else {
                kind = NEAR;
            }
        }
        grown_placed += grown_here;
        let before = lanes_before(local, vec2<u32>(u32(kind == NEAR), u32(kind == FAR)));
        let here = order_scan[255];
        workgroupBarrier();
        if kind == NEAR {
            near_out[placed.x + before.x] = draw_list[i];
        } else if kind == FAR {
            far_out[placed.y + before.y] = draw_list[i];
        }
        placed += here;
    }
    if local == 0u {
        atomicStore(&cull_args[1], placed.x);
        atomicStore(&cull_args[5], placed.y);
        // cull_finish holds it to the cap.
        atomicStore(&cull_args[9], grown_placed);
    }
}

// A tree's colour: its species' by height (old and young trees differ) and
// a little its own (no two neighbours quite alike).
fn tree_tint(slot: u32, tree: Tree) -> vec3<f32> {
    let kind = species[tree.species];
    let jitter = vec3<f32>(random01(slot, 11u), random01(slot, 12u), random01(slot, 13u)) - 0.5;
    return draw.colours[tree.species].rgb * (0.75 + 0.5 * tree.height / max(kind.max_height, 0.1))
        * (vec3<f32>(1.0) + 0.35 * jitter);
}

// A tree drawn with its grown crown (forest/crown.wgsl): the crown of its
// species, size class and variant scaled by its height and turned about
// its trunk, swaying as the cone does; each branch at least a pixel thick,
// so far twigs thin out, not vanish.
@vertex
fn vs_crown(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> Surface {
    let slot = draw_list[instance];
    let tree = trees[slot];
    if tree.alive == 0u || tree.height <= 0.0 {
        return hidden();
    }
    let h = tree.height;
    let base = ground(tree.position);
    let crown = crown_table[crown_index(tree.species, h / max(species[tree.species].max_height, 1e-3), slot)];
    let spin = tree_spin(slot);
    let tint = tree_tint(slot, tree);
    let forward = normalize(base + vec3<f32>(0.0, 0.6 * h, 0.0) - camera.eye.xyz);
    let v = crown_vertex(vertex, crown, spin, forward, slot);
    if v.hidden {
        return hidden();
    }
    let centre = swayed(base + v.at * h, base, h);
    if v.leaf {
        return lit(centre + v.spread * v.width * h, tint * v.shade, v.normal);
    }
    let pixel = length(centre - camera.eye.xyz) * camera.viewport.z * 2.0 / camera.viewport.y;
    return lit(centre + v.spread * max(v.width * h, 0.5 * pixel), bark_of(tint), v.normal);
}

// How a tree's crown is turned about its trunk: the cosine and sine of an
// angle of its own.
fn tree_spin(slot: u32) -> vec2<f32> {
    let turn = random01(slot, 14u) * 6.2831853;
    return vec2<f32>(cos(turn), sin(turn));
}

// `colour` at `world` seen through the forest's fog: thin near, whole at
// the map's rim far off (so where the trees end no edge shows), fading
// into the sky's haze in that bearing; in a scene with a fog, the
// scene's, which the stage shares.
fn fogged(world: vec3<f32>, colour: vec3<f32>) -> vec4<f32> {
    let distance = length(world - camera.eye.xyz);
    let rim = smoothstep(0.3, 0.5, length(world.xz) / draw.extent) * smoothstep(0.35, 0.9, distance / draw.extent);
    let fog = max(1.0 - exp(-draw.fog_density * distance), rim);
    let own = mix(colour, sky_haze(sky_look(), world - camera.eye.xyz), fog);
    let scene_fogged = through_scene_fog(camera.light, colour, camera.eye.xyz, world);
    return vec4<f32>(select(own, scene_fogged, scene_fog_on(camera.light)) * draw.brightness, 1.0);
}

// The day sky over the forest: the fog's colour at the horizon, deepening
// to blue overhead, a warm glow low in the key light's bearing, clouds.
fn sky_look() -> SkyLook {
    let haze = draw.fog_colour.rgb;
    let glow = camera.light.colour.rgb * vec3<f32>(1.0, 0.62, 0.38) * 0.2;
    return SkyLook(haze, haze * vec3<f32>(0.35, 0.5, 0.9), glow, glow_towards(camera.light.towards.xyz), 0.6, 0.0, draw.time);
}

// The scene's shadow map (common/shadow.wgsl), where the trees and the
// ground are shaded; a forest outside the scene has none (its camera's
// light says so) and is lit whole.
@group(1) @binding(0) var scene_shadow: texture_depth_2d;
@group(1) @binding(1) var scene_shadow_sampler: sampler_comparison;

// How much of the key light reaches `world`.
fn reaching(world: vec3<f32>) -> f32 {
    return key_light_reaching(camera.light, scene_shadow, scene_shadow_sampler, world);
}

@fragment
fn fs_tree(surface: Surface) -> @location(0) vec4<f32> {
    return tree_lit(surface.world, surface.colour, surface.normal);
}

// A tree's surface at `world` of `colour` facing `normal`, in the key
// light where it reaches, the sky's light from around and the fog.
fn tree_lit(world: vec3<f32>, colour: vec3<f32>, normal: vec3<f32>) -> vec4<f32> {
    let n = normalize(normal);
    let view = normalize(camera.eye.xyz - world);
    let key = reaching(world);
    let shade = lambert_reached(camera.light, colour, n, key) * 1.2 + colour * rim(n, view, 3.0) * 0.6
        + vec3<f32>(0.25, 0.3, 0.35) * highlight(camera.light, n, view, 24.0) * 0.15 * key;
    return fogged(world, shade);
}


// The ground: one quad under the whole map.
@vertex
fn vs_ground(@builtin(vertex_index) vertex: u32) -> Surface {
    let corners = array<vec2<f32>, 6>(
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 1.0), vec2<f32>(0.0, 1.0),
    );
    let p = (corners[vertex] * 3.0 - 1.0) * draw.extent;
    return lit(ground(p), vec3<f32>(0.0), vec3<f32>(0.0, 1.0, 0.0));
}

// The forest floor at `p` (metres): soil and moss in patches tens of
// metres across, with grain, so the ground reads as land, not a void.
fn floor_colour(p: vec2<f32>) -> vec3<f32> {
    let patches = fbm2(p * 0.02);
    let grain = value_noise2(p * 0.5);
    let soil = vec3<f32>(0.075, 0.055, 0.035);
    let moss = vec3<f32>(0.06, 0.1, 0.035);
    return mix(soil, moss, smoothstep(0.35, 0.65, patches)) * (0.8 + 0.4 * grain);
}

// The ground's depth only, so the scene's other layers stand on it and
// sink below it; its colour is the backdrop's (`fs_backdrop`), drawn before.
@fragment
fn fs_ground(surface: Surface) -> @location(0) vec4<f32> {
    return vec4<f32>(0.0);
}

// The floor at `world` in the key light where it reaches.
fn floor_lit(world: vec3<f32>) -> vec3<f32> {
    return lambert_reached(camera.light, floor_colour(world.xz), vec3<f32>(0.0, 1.0, 0.0), reaching(world));
}

// What a forest with its backdrop shows at `uv` where no tree stands:
// below the horizon the floor (the ground's quad and on past it to the
// horizon) in the key light, into the fog; above it the sky (`sky_look`).
// Drawn over the whole target before the trees, as compute where it can
// be (src/layers/forest/draw.rs): shaded by the rasterizer behind them,
// the floor's shadow lookups and the sky's clouds cost this GPU's narrow
// fragment units milliseconds at 4K.
@fragment
fn fs_backdrop(at: FullscreenVertex) -> @location(0) vec4<f32> {
    let ray = camera_ray(camera, at.uv);
    let eye = camera.eye.xyz;
    if ray.y < 0.0 && eye.y > 0.0 {
        let floor = eye + ray * (-eye.y / ray.y);
        return fogged(floor, floor_lit(floor));
    }
    return vec4<f32>(sky_along(sky_look(), ray) * draw.brightness, 1.0);
}

// The maps seen from above, square in the middle of the picture.
@fragment
fn fs_maps(@builtin(position) position: vec4<f32>) -> @location(0) vec4<f32> {
    let side = min(camera.viewport.x, camera.viewport.y);
    let corner = (camera.viewport.xy - side) * 0.5;
    let uv = (position.xy - corner) / side;
    if any(uv < vec2<f32>(0.0)) || any(uv >= vec2<f32>(1.0)) {
        return vec4<f32>(0.0, 0.0, 0.0, 1.0);
    }
    let size = params.map_size;
    let pixel = min(vec2<u32>(uv * f32(size)), vec2<u32>(size - 1u));
    let area = size * size;
    var owner = 0u;
    var level = 0u;
    if draw.view_slice < params.slices {
        owner = maps[draw.view_slice * area + pixel.y * size + pixel.x] & ID_MASK;
        level = draw.view_slice;
    } else {
        for (var k = 0u; k < params.slices; k++) {
            let here = maps[k * area + pixel.y * size + pixel.x] & ID_MASK;
            if here != 0u {
                owner = here;
                level = k;
            }
        }
    }
    if owner == 0u {
        return vec4<f32>(0.02, 0.02, 0.015, 1.0) * draw.brightness;
    }
    let tree = trees[owner - 1u];
    let light = 0.35 + 0.65 * f32(level + 1u) / f32(params.slices);
    return vec4<f32>(draw.colours[tree.species].rgb * light * 2.0 * draw.brightness, 1.0);
}
