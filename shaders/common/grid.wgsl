// A uniform grid over a box: which cell a point falls in (points outside
// the box are clamped into its border cells, so nothing is ever lost), and
// the rows of cells a search around a point walks.

struct Grid {
    origin: vec3<f32>,
    cell_size: f32,
    dims: vec3<u32>,
    cell_total: u32,
    // Points whose w is 0 are sorted after every cell (`GridBox::dead_left_out`).
    dead_left_out: u32,
    // 1 / cell_size: the searches multiply by it (a division is several
    // instructions, and a walk computes two a row).
    inverse_cell_size: f32,
    _pad0: u32,
    _pad1: u32,
}

fn grid_coords(grid: Grid, p: vec3<f32>) -> vec3<i32> {
    let c = vec3<i32>(floor((p - grid.origin) * grid.inverse_cell_size));
    return clamp(c, vec3<i32>(0), vec3<i32>(grid.dims) - 1);
}

fn grid_index(grid: Grid, c: vec3<i32>) -> u32 {
    let u = vec3<u32>(c);
    return u.x + grid.dims.x * (u.y + grid.dims.y * u.z);
}

// A search around a point in cells half its radius wide: the 5 x 5 rows of
// 5 cells about its own cell (REACH cells each way), each row one
// contiguous range of sorted points, since cells are sorted x fastest.
const REACH: i32 = 2;
const ROWS: u32 = 25u;

// The points that can lie within sqrt(radius2) of `x` in row `r` of its
// neighbourhood (offsets dy = r % 5 - 2, dz = r / 5 - 2 from `home`): the
// row cut to the chord of that sphere through it, empty when the whole row
// is farther or outside the grid. About half the 125 cells' points remain
// at a full radius, fewer as a nearest-point search shrinks it. The margin
// keeps every point an exact test `d2 < radius2` takes.
fn row_span(grid: Grid, starts_of: ptr<function, array<u32, 2>>, x: vec3<f32>, home: vec3<i32>, r: u32, radius2: f32) {
    (*starts_of)[0] = 0u;
    (*starts_of)[1] = 0u;
    let y = home.y + i32(r % 5u) - REACH;
    let z = home.z + i32(r / 5u) - REACH;
    if y < 0 || z < 0 || y >= i32(grid.dims.y) || z >= i32(grid.dims.z) {
        return;
    }
    let low = grid.origin.yz + vec2<f32>(f32(y), f32(z)) * grid.cell_size;
    let off = max(max(low - x.yz, x.yz - (low + grid.cell_size)), vec2<f32>(0.0));
    let reach2 = radius2 * 1.0001 - dot(off, off);
    if reach2 <= 0.0 {
        return;
    }
    let half_chord = sqrt(reach2);
    let lowest = i32(floor((x.x - half_chord - grid.origin.x) * grid.inverse_cell_size));
    let highest = i32(floor((x.x + half_chord - grid.origin.x) * grid.inverse_cell_size));
    let first = clamp(max(lowest, home.x - REACH), 0, i32(grid.dims.x) - 1);
    let last = clamp(min(highest, home.x + REACH), 0, i32(grid.dims.x) - 1);
    (*starts_of)[0] = grid_index(grid, vec3<i32>(first, y, z));
    (*starts_of)[1] = grid_index(grid, vec3<i32>(last, y, z)) + 1u;
}
