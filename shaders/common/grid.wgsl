// A uniform grid over a box: which cell a point falls in. Points outside
// the box are clamped into its border cells, so nothing is ever lost.

struct Grid {
    origin: vec3<f32>,
    cell_size: f32,
    dims: vec3<u32>,
    cell_total: u32,
}

fn grid_coords(grid: Grid, p: vec3<f32>) -> vec3<i32> {
    let c = vec3<i32>(floor((p - grid.origin) / grid.cell_size));
    return clamp(c, vec3<i32>(0), vec3<i32>(grid.dims) - 1);
}

fn grid_index(grid: Grid, c: vec3<i32>) -> u32 {
    let u = vec3<u32>(c);
    return u.x + grid.dims.x * (u.y + grid.dims.y * u.z);
}
