// One particle's walk over its neighbours for the stages after density
// (force, and the large-step solver's correction, velocity and finish
// stages): over the particles its lists hold (the grid's rows where they
// overflowed), those within h, then the mirror particles wall by wall,
// each a walk of its own (see `walks_around`), for the walls the lists
// were built for. What a stage gathers is its own: the file that includes
// this one defines
//   struct Gathered                       what the walk adds up,
//   fn gathered_zero() -> Gathered,
//   fn gather_pair(g: ptr<function, Gathered>, j: u32, d: vec3<f32>, mirror: bool)
//                                         neighbour j (`d` from the walk's
//                                         centre to it, within h; `mirror`:
//                                         a mirror particle),
//   fn gathered_turned(g: Gathered, axis: u32, flip: f32) -> Gathered
//                                         a wall walk's sum turned back into
//                                         the mirror particles' (its vectors'
//                                         `axis` component times `flip`),
//   fn gathered_added(a: Gathered, b: Gathered) -> Gathered,
// and binds `grid`, `position_b` (the positions the walk reads), `grid_starts`,
// `listed` and `anchor` as force.wgsl does.

// Neighbour j at `d` (its w in d.w) gathered if it is one: within h (a
// list also holds those within its skin), and not drained since the grid
// was sorted.
fn gather_if_near(g: ptr<function, Gathered>, j: u32, d: vec4<f32>, mirror: bool) {
    if is_neighbour(dot(d.xyz, d.xyz)) & (d.w != 0.0) {
        gather_pair(g, j, d.xyz, mirror);
    }
}

// Over the walker's listed entries `begin` to `end` of the walk around
// `centre`...
fn listed_gathered(walker: u32, begin: u32, end: u32, centre: vec3<f32>, mirror: bool) -> Gathered {
    var g = gathered_zero();
    // Four neighbours a step, their loads overlapping (1M particles on the
    // H200: force 0.222 ms two a step, 0.176 four; 10M: 2.05, 1.62), then
    // the rest one by one.
    var e = begin;
    for (; e + 3u < end; e += 4u) {
        let a = listed[listed_at(walker, LIST_HEAD + e)];
        let b = listed[listed_at(walker, LIST_HEAD + 1u + e)];
        let c = listed[listed_at(walker, LIST_HEAD + 2u + e)];
        let d = listed[listed_at(walker, LIST_HEAD + 3u + e)];
        let da = position_b[a] - vec4<f32>(centre, 0.0);
        let db = position_b[b] - vec4<f32>(centre, 0.0);
        let dc = position_b[c] - vec4<f32>(centre, 0.0);
        let dd = position_b[d] - vec4<f32>(centre, 0.0);
        gather_if_near(&g, a, da, mirror);
        gather_if_near(&g, b, db, mirror);
        gather_if_near(&g, c, dc, mirror);
        gather_if_near(&g, d, dd, mirror);
    }
    for (; e < end; e++) {
        let a = listed[listed_at(walker, LIST_HEAD + e)];
        gather_if_near(&g, a, position_b[a] - vec4<f32>(centre, 0.0), mirror);
    }
    return g;
}

// ...and over the lane's rows of the grid about cell `home`, where the
// list overflowed: at h (1 + SKIN / 2), as the grid may have been sorted
// up to REUSE - 1 substeps ago, about the cell the walk's centre was in
// then (so the lanes that walk the grid and those that walk their lists
// share out the same rows).
fn walked_gathered(centre: vec3<f32>, home: vec3<i32>, lane: u32, mirror: bool) -> Gathered {
    let walk2 = reach2(0.5 * SKIN);
    var g = gathered_zero();
    var cells: array<u32, 2>;
    for (var r = lane; r < ROWS; r += LANES) {
        row_span(grid, &cells, centre, home, r, walk2);
        // Two neighbours a step, their loads overlapping (force 0.408 ->
        // 0.372 ms at 1M particles on the H200, 5.65 -> 4.80 at 10M).
        let end = grid_starts[cells[1]];
        for (var j = grid_starts[cells[0]]; j < end; j += 2u) {
            let k = min(j + 1u, end - 1u);
            let da = position_b[j] - vec4<f32>(centre, 0.0);
            let db = position_b[k] - vec4<f32>(centre, 0.0);
            gather_if_near(&g, j, da, mirror);
            if k != j {
                gather_if_near(&g, k, db, mirror);
            }
        }
    }
    return g;
}

// This lane's share of what particle `walker` at `me` gathers: its
// neighbours, then the mirror particles of each wall its lists were built
// for, turned back (the mirror image of a neighbour's term is the term of
// a mirror particle: |R(o) - x| = |o - R(x)|).
fn gathered_around(walker: LaneOf, me: vec3<f32>) -> Gathered {
    var g = gathered_zero();
    let ends = listed[listed_at(walker.walker, 0u)];
    let walls = walls_of(listed[listed_at(walker.walker, 1u)]);
    var begin = 0u;
    for (var k = 0u; k <= walls.count; k++) {
        let around = walks_around(me, walls, k);
        let end = (ends >> (8u * k)) & 0xffu;
        var terms: Gathered;
        if ends == NOT_LISTED {
            let home = grid_coords(grid, walks_around(anchor[walker.particle].xyz, walls, k).centre);
            terms = walked_gathered(around.centre, home, walker.lane, k > 0u);
        } else {
            terms = listed_gathered(walker.walker, begin, end, around.centre, k > 0u);
        }
        begin = end;
        g = gathered_added(g, gathered_turned(terms, around.axis, around.flip));
    }
    return g;
}
