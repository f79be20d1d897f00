// The impostors drawn by compute (src/layers/forest/impostor_splat.rs).
// Rasterized, every impostor was a square whose fragments read the atlas
// and discarded where it held no leaves, which turns off the early depth
// test: each of the many overlapping squares of a forest was shaded
// wherever it lay, and the GPU's few raster units spent milliseconds on
// it. Here a few workgroups walk each impostor's pixels, find where each
// pixel meets its square and keep the nearest leafy hit by an atomic
// (`splat_impostors`); a second walk marks which tree that was
// (`claim_impostor_pixels`), or, where the GPU has 64-bit atomics, one
// walk keeps both at once (`splat_impostor_pairs` in
// forest/impostor_pairs.wgsl); then each such pixel is shaded once, for the
// tree that owns it, by compute straight into the layer's target
// (`shade_impostor_pixels`: this GPU's fragment units are its narrow
// part), and one fullscreen pass writes their depth alone into the
// scene's (`fs_impostor_resolve`).
// Seen from the key light, the first walk alone
// finds the leaves' depth, and one fullscreen pass writes it into the
// shadow map (`fs_impostor_cast`).

#include "forest/draw.wgsl"
#include "common/screen.wgsl"

// The impostor atlas (forest/atlas.wgsl).
@group(2) @binding(0) var atlas_leaves: texture_2d_array<f32>;
@group(2) @binding(1) var atlas_normals: texture_2d_array<f32>;
@group(2) @binding(2) var atlas_sampler: sampler;

// Two words a pixel of the target, cleared to 0 each frame: the tree that
// made its nearest leafy hit and that hit's key (`owner_word`,
// `key_word`).
@group(0) @binding(17) var<storage, read_write> per_pixel: array<atomic<u32>>;
// The splat's dispatch: a few workgroups an impostor.
@group(0) @binding(19) var<storage, read_write> splat_args: array<u32, 3>;

const SPLAT_WORKGROUP: u32 = 64u;
const MAX_GROUPS: u32 = 65535u;
// Workgroups an impostor's walk is shared among, at most, and the most
// workgroups a walk dispatches before it gives each impostor fewer: one
// workgroup an impostor left a tree near the lens, hundreds of thousands
// of pixels, to one workgroup's 64 threads while the rest of the GPU had
// finished, and the walk took as long as that one tree.
const MOST_PARTS: u32 = 16u;
const MOST_SPLAT_GROUPS: u32 = 262144u;
// How far (in the depth's last bits) a claim may miss the nearest hit
// and still own it.
const CLAIM_ULPS: u32 = 4u;

// A tree drawn as the impostor of its grown crown: a square facing the
// viewer (or the light), the bounding sphere of a tree its height, showing
// its crown's cell of the view nearest the direction it is seen from
// (turned back by the tree's own turn), its top swaying as the crowns do.
struct Billboard {
    shown: bool,
    // The tree's foot and height, its crown (atlas cell) and turn.
    base: vec3<f32>,
    height: f32,
    crown: u32,
    spin: vec2<f32>,
    // The square's centre, half its side, the way it faces (toward the
    // viewer), its right and up, and the atlas view it shows.
    centre: vec3<f32>,
    radius: f32,
    toward: vec3<f32>,
    basis: array<vec3<f32>, 2>,
    view: u32,
}

// Tree `slot`'s square seen by `camera`: facing its eye, or with
// `to_light`, facing the light and pushed away from it by its radius, so
// its shadow on what lies below falls where it did (it moves along the
// light) and its own square, which faces the viewer through the crown's
// centre, is not shaded by it.
fn billboard(slot: u32, to_light: bool) -> Billboard {
    let tree = trees[slot];
    let h = tree.height;
    let base = ground(tree.position);
    let crown = crown_index(tree.species, h / max(species[tree.species].max_height, 1e-3), slot);
    let spin = tree_spin(slot);
    let radius = crown_reaches[crown] * h;
    var centre = base + CAPTURE_CENTRE * h;
    var toward = normalize(camera.eye.xyz - centre + vec3<f32>(0.0, 0.0, 1e-6));
    if to_light {
        toward = normalize(camera.light.towards.xyz + vec3<f32>(0.0, 0.0, 1e-6));
        centre -= toward * radius;
    }
    let view = nearest_view(turned_by(toward, vec2<f32>(spin.x, -spin.y)));
    let shown = tree.alive != 0u && h > 0.0;
    return Billboard(shown, base, h, crown, spin, centre, radius, toward, upright_basis(-toward), view);
}

// Corner `corner` (-1 or 1 each way) of a billboard, swayed.
fn billboard_corner(b: Billboard, corner: vec2<f32>) -> vec3<f32> {
    return swayed(b.centre + (b.basis[0] * corner.x + b.basis[1] * corner.y) * b.radius, b.base, b.height);
}

// Impostors: the near list's then the far list's.
fn impostor_count() -> u32 {
    return atomicLoad(&cull_args[1]) + atomicLoad(&cull_args[5]);
}

fn impostor_slot(k: u32) -> u32 {
    let near = atomicLoad(&cull_args[1]);
    return select(far_out[k - near], near_out[k], k < near);
}

// Parts of workgroups for each impostor the cull listed: as many for
// each as `MOST_SPLAT_GROUPS` allows, up to `MOST_PARTS`.
@compute @workgroup_size(1)
fn size_impostor_splat() {
    let count = impostor_count();
    let parts = clamp(MOST_SPLAT_GROUPS / max(count, 1u), 1u, MOST_PARTS);
    let groups = count * parts;
    let x = min(max(groups, 1u), MAX_GROUPS);
    splat_args[0] = x;
    splat_args[1] = select(0u, (groups + x - 1u) / x, count > 0u);
    splat_args[2] = 1u;
}

// Which impostor workgroup `group` of `groups` walks, and which of the
// parts of its walk: the parts are the dispatch over the impostors
// (`parts` the same for each, `part` past it walks nothing).
struct SplatPart {
    impostor: u32,
    part: u32,
    parts: u32,
}

fn splat_part(group: vec3<u32>, groups: vec3<u32>) -> SplatPart {
    let count = max(impostor_count(), 1u);
    let g = group.x + group.y * groups.x;
    return SplatPart(g % count, g / count, groups.x * groups.y / count);
}

// Whether `camera` is the key light (`from_light`: no field of view),
// whose squares face the light and are walked for the shadow map.
fn seen_from_light() -> bool {
    return camera.viewport.z == 0.0;
}

// The point of a billboard's plane that pixel position `pixel` shows: where
// the planes that project onto its column and its row (through the eye, or
// along the light) meet the billboard's, from the rows of the projection,
// so one solve serves the camera and the light; w is 0 where the plane is
// seen edge on.
fn on_billboard(b: Billboard, pixel: vec2<f32>) -> vec4<f32> {
    let m = camera.view_proj;
    let across = vec4<f32>(m[0].x, m[1].x, m[2].x, m[3].x);
    let down = vec4<f32>(m[0].y, m[1].y, m[2].y, m[3].y);
    let w = vec4<f32>(m[0].w, m[1].w, m[2].w, m[3].w);
    let ndc = vec2<f32>(pixel.x / camera.viewport.x * 2.0 - 1.0, 1.0 - pixel.y / camera.viewport.y * 2.0);
    let column = across - ndc.x * w;
    let row = down - ndc.y * w;
    let plane = vec4<f32>(b.toward, -dot(b.toward, b.centre));
    let det = dot(column.xyz, cross(row.xyz, plane.xyz));
    if abs(det) < 1e-12 {
        return vec4<f32>(0.0);
    }
    let p = -(column.w * cross(row.xyz, plane.xyz) + row.w * cross(plane.xyz, column.xyz) + plane.w * cross(column.xyz, row.xyz)) / det;
    return vec4<f32>(p, 1.0);
}

// Where pixel centre `pixel` meets a billboard: its corner coordinates
// (each -1..1 across the square, y up), the atlas texel there, the point
// met (swayed, as drawn) and its depth; `inside` is false off the square.
struct BillboardHit {
    inside: bool,
    uv: vec2<f32>,
    world: vec3<f32>,
    depth: f32,
}

fn billboard_hit(b: Billboard, pixel: vec2<f32>) -> BillboardHit {
    let met = on_billboard(b, pixel);
    let world = met.xyz;
    // The square sways; the point it swayed from, to a close enough guess
    // (the sway is small and grows slowly with height).
    let unswayed = world - (swayed(world, b.base, b.height) - world);
    let from_centre = unswayed - b.centre;
    let corner = vec2<f32>(dot(from_centre, b.basis[0]), dot(from_centre, b.basis[1])) / b.radius;
    let clip = camera.view_proj * vec4<f32>(world, 1.0);
    let depth = clip.z / clip.w;
    let seen = met.w > 0.0 && clip.w > 0.0 && depth >= 0.0 && depth <= 1.0;
    let inside = seen && all(abs(corner) <= vec2<f32>(1.0));
    return BillboardHit(inside, atlas_uv(b.crown, corner, draw.atlas_rows), world, depth);
}

// The share of a billboard's atlas cell one pixel spans, taken at its
// centre: the square faces the viewer, so it is nearly the same across.
fn billboard_footprint(b: Billboard) -> f32 {
    let centre = camera.view_proj * vec4<f32>(b.centre, 1.0);
    let edge = camera.view_proj * vec4<f32>(b.centre + b.basis[0] * b.radius, 1.0);
    let half_across = (edge.xy / edge.w - centre.xy / centre.w) * 0.5 * camera.viewport.xy;
    return 1.0 / max(2.0 * length(half_across), 1e-6);
}

// The mip level of the atlas a pixel spans (its texels across) where it
// spans `footprint` of a cell: a far crown's leaves and the gaps between
// them averaged, not sparkling.
fn atlas_level(footprint: f32) -> f32 {
    let across = footprint * f32(textureDimensions(atlas_leaves).x) / f32(ATLAS_COLUMNS);
    return clamp(log2(max(across, 1.0)), 0.0, f32(textureNumLevels(atlas_leaves) - 1u));
}

// The pixels a billboard may cover: its swayed corners' bounding box on
// screen (min, max + 1), clamped to the target; empty where a corner lies
// behind the eye (a tree at the lens draws its grown crown).
fn billboard_box(b: Billboard) -> vec4<i32> {
    let size = camera.viewport.xy;
    var low = size;
    var high = vec2<f32>(0.0);
    for (var k = 0u; k < 4u; k++) {
        let corner = vec2<f32>(f32(k & 1u) * 2.0 - 1.0, f32(k >> 1u) * 2.0 - 1.0);
        let clip = camera.view_proj * vec4<f32>(billboard_corner(b, corner), 1.0);
        if clip.w <= camera.viewport.w {
            return vec4<i32>(0);
        }
        let ndc = clip.xy / clip.w;
        let at = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5) * size;
        low = min(low, at);
        high = max(high, at);
    }
    let first = vec2<i32>(clamp(floor(low), vec2<f32>(0.0), size));
    let last = vec2<i32>(clamp(ceil(high), vec2<f32>(0.0), size));
    return vec4<i32>(first, max(last, first));
}

// One part of an impostor's walk: its tree and its square, and the
// pixels of its box on screen (`pixels` of them, `width` a row from
// `first`) that this part takes.
struct Walk {
    shown: bool,
    slot: u32,
    b: Billboard,
    first: vec2<u32>,
    width: u32,
    pixels: u32,
    // The walk's first pixel for thread 0 and its stride.
    start: u32,
    stride: u32,
}

fn start_walk(at: SplatPart) -> Walk {
    var walk: Walk;
    if at.impostor >= impostor_count() || at.part >= at.parts {
        return walk;
    }
    walk.slot = impostor_slot(at.impostor);
    walk.b = billboard(walk.slot, seen_from_light());
    walk.shown = walk.b.shown;
    let box = billboard_box(walk.b);
    walk.first = vec2<u32>(box.xy);
    walk.width = u32(box.z - box.x);
    walk.pixels = walk.width * u32(box.w - box.y);
    walk.start = at.part * SPLAT_WORKGROUP;
    walk.stride = at.parts * SPLAT_WORKGROUP;
    return walk;
}

// Pixel `i` of a walk where it meets the square: its index in the target,
// the depth's key (positive floats order as their bits, inverted so the
// nearest is the largest) and the atlas texel there.
struct WalkedPixel {
    at: u32,
    key: u32,
    inside: bool,
    uv: vec2<f32>,
}

fn walked_pixel(walk: Walk, i: u32) -> WalkedPixel {
    let pixel = walk.first + vec2<u32>(i % walk.width, i / walk.width);
    let hit = billboard_hit(walk.b, vec2<f32>(pixel) + 0.5);
    let at = pixel.y * u32(camera.viewport.x) + pixel.x;
    return WalkedPixel(at, ~bitcast<u32>(hit.depth), hit.inside, hit.uv);
}

// The mip level of the atlas a pixel of a walk spans.
fn walk_level(walk: Walk) -> f32 {
    return atlas_level(billboard_footprint(walk.b));
}

// Whether the crown has leaves where a walked pixel meets its square, read
// at mip level `level`.
fn leafy(walk: Walk, met: WalkedPixel, level: f32) -> bool {
    return textureSampleLevel(atlas_leaves, atlas_sampler, met.uv, walk.b.view, level).a >= 0.5;
}

// Each pixel's two words in `per_pixel`: the tree that owns it (its slot
// + 1) and the key of its nearest leafy hit; read as one little-endian
// 64-bit word, the key is the high half, so the widest atomics keep both
// at once (forest/impostor_pairs.wgsl).
fn owner_word(at: u32) -> u32 {
    return at * 2u;
}

fn key_word(at: u32) -> u32 {
    return at * 2u + 1u;
}

@compute @workgroup_size(64)
fn splat_impostors(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let walk = start_walk(splat_part(group, groups));
    if !walk.shown {
        return;
    }
    let level = walk_level(walk);
    for (var i = walk.start + local; i < walk.pixels; i += walk.stride) {
        let met = walked_pixel(walk, i);
        let kept = key_word(met.at);
        if met.inside && met.key > atomicLoad(&per_pixel[kept]) && leafy(walk, met, level) {
            atomicMax(&per_pixel[kept], met.key);
        }
    }
}

@compute @workgroup_size(64)
fn claim_impostor_pixels(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let walk = start_walk(splat_part(group, groups));
    if !walk.shown {
        return;
    }
    for (var i = walk.start + local; i < walk.pixels; i += walk.stride) {
        let met = walked_pixel(walk, i);
        // Within a few ulps either way: the two walks are compiled apart.
        // A nearer square, clear here, is far more than that. Where two
        // trees tie, the higher slot keeps it, whichever walks first, so
        // that renders repeat.
        let kept = atomicLoad(&per_pixel[key_word(met.at)]);
        if met.inside && kept != 0u && met.key + CLAIM_ULPS >= kept && met.key <= kept + CLAIM_ULPS {
            atomicMax(&per_pixel[owner_word(met.at)], walk.slot + 1u);
        }
    }
}

// Each pixel an impostor owns, shaded: its crown's leaves or bark there,
// their normal turned by the tree's turn, in the scene's light.
@group(3) @binding(0) var shaded_store: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(64)
fn shade_impostor_pixels(@builtin(global_invocation_id) global: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let pixel = thread_pixel(global, groups, vec2<u32>(camera.viewport.xy));
    if pixel.x < 0 {
        return;
    }
    let own = atomicLoad(&per_pixel[owner_word(u32(pixel.y) * u32(camera.viewport.x) + u32(pixel.x))]);
    if own == 0u {
        return;
    }
    let slot = own - 1u;
    let b = billboard(slot, false);
    let hit = billboard_hit(b, vec2<f32>(pixel) + 0.5);
    let level = atlas_level(billboard_footprint(b));
    let leaves = textureSampleLevel(atlas_leaves, atlas_sampler, hit.uv, b.view, level);
    // Both cleared to 0 round each crown: a texel at its edge, or of a
    // coarser level, is covered in part, so its values are weighed back by
    // how much.
    let normals = textureSampleLevel(atlas_normals, atlas_sampler, hit.uv, b.view, level);
    let captured = normals.xyz / max(normals.a, 1e-3) * 2.0 - 1.0;
    let normal = turned_by(captured, b.spin);
    // Leafiness among what covers the texel, and the leaves' brightness
    // among the leaves (bark keeps none).
    let leafy = clamp(leaves.r / max(leaves.a, 1e-3), 0.0, 1.0);
    let tint = tree_tint(slot, trees[slot]);
    let colour = mix(bark_of(tint), tint * leaves.g / max(leaves.r, 1e-3) * 1.25, leafy);
    textureStore(shaded_store, pixel, tree_lit(hit.world, colour, normal));
}

// The pipeline writes no colour (the shading stored it); the output is
// there for the target it is drawn with.
struct ResolvedImpostor {
    @location(0) colour: vec4<f32>,
    @builtin(frag_depth) depth: f32,
}

// Each pixel an impostor owns: the depth the splat kept, into the scene's.
@fragment
fn fs_impostor_resolve(at: FullscreenVertex) -> ResolvedImpostor {
    let pixel = vec2<u32>(at.position.xy);
    let index = pixel.y * u32(camera.viewport.x) + pixel.x;
    if atomicLoad(&per_pixel[owner_word(index)]) == 0u {
        discard;
    }
    let depth = bitcast<f32>(~atomicLoad(&per_pixel[key_word(index)]));
    return ResolvedImpostor(vec4<f32>(0.0), depth);
}

// The impostors' leaves into the key light's shadow map (`camera` the
// light): each texel's nearest, where the splat kept one.
@fragment
fn fs_impostor_cast(at: FullscreenVertex) -> @builtin(frag_depth) f32 {
    let texel = vec2<u32>(at.position.xy);
    let kept = atomicLoad(&per_pixel[key_word(texel.y * u32(camera.viewport.x) + texel.x)]);
    if kept == 0u {
        discard;
    }
    return bitcast<f32>(~kept);
}
