// What the two ways of drawing particles by compute share (splat.wgsl,
// the surface; glow.wgsl, the glow): the target's size and the particle
// count, and a dispatch of one thread a row of each particle's footprint,
// sized on the GPU for the tallest footprint a measure pass found. A
// rasterizer runs a fragment for each of millions of overlapping
// billboards and blends each into the target; a thread a row adds its
// pixels with atomics, at memory speed on every GPU.

struct Splat {
    // Target size in pixels.
    size: vec2<u32>,
    particle_count: u32,
    // Thickness units per metre in the surface's fixed-point sums.
    scale: f32,
    // 1 in the shared scene: water behind what the scene's layers drew
    // before it is hidden.
    in_scene: u32,
    // Slots of the fluid's white water (0: it has none).
    white_count: u32,
    _pad1: u32,
    _pad2: u32,
}

// Rows of the tallest footprint (found by a measure pass), then the rows
// the splat covers (set by `size_splat`, which clears the first for the
// next frame).
struct Footprint {
    widest: atomic<u32>,
    rows: u32,
}

@group(0) @binding(5) var<uniform> splat: Splat;
@group(0) @binding(6) var<storage, read_write> footprint: Footprint;
@group(0) @binding(9) var<storage, read_write> dispatch_args: array<u32>;

const WORKGROUP: u32 = 64u;
const MAX_GROUPS: u32 = 65535u;

// The dispatch of a thread for each row of each particle.
@compute @workgroup_size(1)
fn size_splat() {
    let rows = atomicLoad(&footprint.widest);
    let groups = (splat.particle_count * rows + WORKGROUP - 1u) / WORKGROUP;
    let x = min(max(groups, 1u), MAX_GROUPS);
    dispatch_args[0] = x;
    dispatch_args[1] = select(0u, (groups + x - 1u) / x, groups > 0u);
    dispatch_args[2] = 1u;
    footprint.rows = rows;
    atomicStore(&footprint.widest, 0u);
}

// The particle a thread of the splat covers, and its row counted from the
// footprint's middle (negative above); `covers` is false past the last
// row.
struct RowOf {
    particle: u32,
    dy: i32,
    covers: bool,
}

fn row_of(global: vec3<u32>, groups: vec3<u32>) -> RowOf {
    let thread = global.x + global.y * groups.x * WORKGROUP;
    let rows = footprint.rows;
    let row = thread / splat.particle_count;
    return RowOf(thread % splat.particle_count, i32(row) - i32(rows / 2u), row < rows);
}

var<workgroup> tallest: atomic<u32>;

// Widens the footprint to `rows` rows; called by every thread of a
// measure pass's workgroup (`rows` 0 where a particle draws nothing), so
// that one global atomic a workgroup is made, not one a particle.
fn measured(local: u32, rows: u32) {
    if local == 0u {
        atomicStore(&tallest, 0u);
    }
    workgroupBarrier();
    if rows > 0u {
        atomicMax(&tallest, rows);
    }
    workgroupBarrier();
    if local == 0u {
        atomicMax(&footprint.widest, atomicLoad(&tallest));
    }
}
