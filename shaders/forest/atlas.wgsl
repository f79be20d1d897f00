// The impostor atlas of the grown crowns (src/layers/forest/impostors.rs):
// each crown seen from VIEWS_AROUND directions around it at each of RINGS
// heights, one array layer a view, the crowns in cells of ATLAS_COLUMNS a
// row. A cell spans the crown's bounding sphere about CAPTURE_CENTRE (a
// tree one unit tall; `crown_reaches`), seen orthographically, in its
// own frame (not turned); a tree turns the direction it is seen from back
// into that frame to pick its view.

const VIEWS_AROUND: u32 = 8u;
const RINGS: u32 = 2u;
const ATLAS_COLUMNS: u32 = 8u;
const CAPTURE_CENTRE: vec3<f32> = vec3<f32>(0.0, 0.5, 0.0);
// The rings' heights above the horizon (15 and 50 degrees): a camera
// among the trees, and one looking down on the forest.
const RING_ELEVATIONS: vec2<f32> = vec2<f32>(0.2618, 0.8727);

// The direction from a crown toward whoever sees it in view `view`.
fn view_direction(view: u32) -> vec3<f32> {
    let around = f32(view % VIEWS_AROUND) * 6.2831853 / f32(VIEWS_AROUND);
    let elevation = RING_ELEVATIONS[min(view / VIEWS_AROUND, RINGS - 1u)];
    return vec3<f32>(cos(elevation) * cos(around), sin(elevation), cos(elevation) * sin(around));
}

// The view that sees a crown most nearly from `toward` (the direction to
// the viewer, in the crown's frame).
fn nearest_view(toward: vec3<f32>) -> u32 {
    let step = 6.2831853 / f32(VIEWS_AROUND);
    let around = u32(round(atan2(toward.z, toward.x) / step) + f32(VIEWS_AROUND)) % VIEWS_AROUND;
    let elevation = asin(clamp(toward.y, -1.0, 1.0));
    let ring = select(0u, 1u, elevation > 0.5 * (RING_ELEVATIONS.x + RING_ELEVATIONS.y));
    return ring * VIEWS_AROUND + around;
}

// A viewer's right and up for one looking along `forward`, upright.
fn upright_basis(forward: vec3<f32>) -> array<vec3<f32>, 2> {
    let right = normalize(cross(forward, vec3<f32>(0.0, 1.0, 0.0)) + vec3<f32>(1e-6, 0.0, 0.0));
    return array<vec3<f32>, 2>(right, cross(right, forward));
}

// Where `at` (each coordinate -1 to 1 across the cell, y up) of crown
// `crown`'s cell lies in the atlas, 0 to 1 (v down).
fn atlas_uv(crown: u32, at: vec2<f32>, rows: u32) -> vec2<f32> {
    let cell = vec2<f32>(f32(crown % ATLAS_COLUMNS), f32(crown / ATLAS_COLUMNS));
    let within = vec2<f32>(0.5 + 0.5 * at.x, 0.5 - 0.5 * at.y);
    return (cell + within) / vec2<f32>(f32(ATLAS_COLUMNS), f32(max(rows, 1u)));
}
