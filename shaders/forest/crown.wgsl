// A grown crown's geometry (src/layers/forest/crowns.rs), shared by the
// trees drawn whole (forest/draw.wgsl) and the capture of their
// impostors (forest/impostor.wgsl): the trunk below the crown, then each
// branch a four-sided prism and each tip a leaf cluster of two triangles
// facing the viewer, in the frame of a tree one unit tall turned about
// its trunk. The including file binds `crown_segments`, `crown_leaves`
// and `crown_table`.

// One branch of a grown crown, in the frame of a tree one unit tall.
struct CrownSegment {
    a: vec3<f32>,
    radius_a: f32,
    b: vec3<f32>,
    radius_b: f32,
}

// Vertices of a grown crown: a four-sided prism a branch, a quad a leaf
// cluster (CROWN_SEGMENTS and CROWN_LEAVES in crowns.rs).
const CROWN_SEGMENTS: u32 = 160u;
const CROWN_LEAVES: u32 = 96u;
const PRISM_VERTICES: u32 = 24u;
// The trunk below the crown, then its branches.
const PRISMS: u32 = CROWN_SEGMENTS + 1u;
const CROWN_VERTICES: u32 = PRISMS * PRISM_VERTICES + CROWN_LEAVES * 6u;
// Size classes and variants of the grown crowns.
const CLASSES: u32 = 3u;
const VARIANTS: u32 = 2u;
const CROWN_BASE: f32 = 0.3;

// `p` turned about the trunk (the y axis) by the angle whose cosine and
// sine `spin` holds.
fn turned_by(p: vec3<f32>, spin: vec2<f32>) -> vec3<f32> {
    return vec3<f32>(p.x * spin.x - p.z * spin.y, p.y, p.x * spin.y + p.z * spin.x);
}

// Which crown (its row of `crown_table`: first branch, branches, first
// leaf, leaves; its cell of the impostor atlas) a tree of `kind`, its
// height the share `grown` of its species' tallest, in slot `slot` draws.
fn crown_index(kind: u32, grown: f32, slot: u32) -> u32 {
    let size_class = min(u32(grown * f32(CLASSES)), CLASSES - 1u);
    return (kind * CLASSES + size_class) * VARIANTS + slot % VARIANTS;
}

// One vertex of a crown: where it is (unit-height frame, turned), how far
// it is set off from there and which way (a prism's radius, a leaf's
// corner), whether it is a leaf and how bright, its normal, or hidden.
struct CrownVertex {
    at: vec3<f32>,
    spread: vec3<f32>,
    width: f32,
    leaf: bool,
    shade: f32,
    normal: vec3<f32>,
    hidden: bool,
}

// Vertex `vertex` of `crown` turned by `spin`, its leaves facing along
// `forward` (from the viewer into the scene); `seed` varies the leaves
// from tree to tree.
fn crown_vertex(vertex: u32, crown: vec4<u32>, spin: vec2<f32>, forward: vec3<f32>, seed: u32) -> CrownVertex {
    var out = CrownVertex(vec3<f32>(0.0), vec3<f32>(0.0), 0.0, false, 1.0, vec3<f32>(0.0, 1.0, 0.0), false);
    if vertex < PRISMS * PRISM_VERTICES {
        let index = vertex / PRISM_VERTICES;
        // Prism 0 is the trunk below the crown, prism k its branch k - 1.
        var segment = CrownSegment(vec3<f32>(0.0), 0.02, vec3<f32>(0.0, CROWN_BASE, 0.0), 0.018);
        if index > crown.y {
            out.hidden = true;
            return out;
        }
        if index > 0u {
            segment = crown_segments[crown.x + index - 1u];
        }
        let corner = array<vec2<u32>, 6>(
            vec2<u32>(0u, 0u), vec2<u32>(1u, 0u), vec2<u32>(1u, 1u),
            vec2<u32>(0u, 0u), vec2<u32>(1u, 1u), vec2<u32>(0u, 1u),
        )[vertex % 6u];
        let side = (vertex % PRISM_VERTICES) / 6u + corner.x;
        let a = turned_by(segment.a, spin);
        let b = turned_by(segment.b, spin);
        let axis = normalize(b - a + vec3<f32>(0.0, 1e-6, 0.0));
        let helper = select(vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(1.0, 0.0, 0.0), abs(axis.y) > 0.9);
        let u = normalize(cross(axis, helper));
        let w = cross(axis, u);
        let angle = f32(side) * 1.5707963 + 0.7853982;
        out.at = select(a, b, corner.y == 1u);
        out.spread = cos(angle) * u + sin(angle) * w;
        out.width = select(segment.radius_a, segment.radius_b, corner.y == 1u);
        out.normal = out.spread;
        return out;
    }
    let leaf = (vertex - PRISMS * PRISM_VERTICES) / 6u;
    if leaf >= crown.w {
        out.hidden = true;
        return out;
    }
    let cluster = crown_leaves[crown.z + leaf];
    out.at = turned_by(cluster.xyz, spin);
    let right = normalize(cross(forward, vec3<f32>(0.0, 1.0, 0.0)) + vec3<f32>(1e-6, 0.0, 0.0));
    let up = cross(right, forward);
    // Two leaves a cluster, each a triangle facing the viewer, turned and
    // set off its own way, lit as the crown's surface there: outward from
    // the trunk and up.
    let which = (vertex % 6u) / 3u;
    let varied = seed ^ ((leaf * 2u + which) * 7919u);
    let twist = random01(varied, 15u) * 6.2831853;
    let corner = f32(vertex % 3u) * 2.0943951 + twist;
    let offset = (vec2<f32>(random01(varied, 17u), random01(varied, 18u)) - 0.5) * 0.9;
    let c = vec2<f32>(cos(corner), sin(corner)) + offset;
    out.spread = right * c.x + up * c.y;
    out.width = cluster.w * 0.55;
    out.leaf = true;
    out.shade = 0.75 + 0.5 * random01(varied, 16u);
    let outward = normalize(vec3<f32>(out.at.x, 0.35, out.at.z) + vec3<f32>(0.0, 1e-3, 0.0));
    out.normal = normalize(outward - forward * 0.5);
    return out;
}

// The colour of a crown's bark and its leaves for a tree tinted `tint`.
fn bark_of(tint: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(0.09, 0.06, 0.04) + tint * 0.08;
}
