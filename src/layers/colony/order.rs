//! The order the attractions are kept in on the GPU: along a Morton curve
//! through their bounding box, so the threads of one workgroup search the
//! same few grid cells and share them in cache. Drawn at random, a
//! workgroup's 256 attractions lay all over the cloud and each walked its
//! own neighbourhood of cells through memory (the busiest iteration at ten
//! million was 2.2x the median). The simulation does not depend on the order (ties go
//! to the lower original index, sums are fixed-point): only speed changes.

/// For each GPU slot, the index into `points` of the attraction kept there.
pub fn morton_order(points: &[[f32; 3]]) -> Vec<u32> {
    let (min, max) = super::sim::bounds(points);
    let scale = [0, 1, 2].map(|a| 1023.0 / (max[a] - min[a]).max(1e-9));
    let mut keyed: Vec<(u32, u32)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cell = [0, 1, 2].map(|a| ((p[a] - min[a]) * scale[a]).clamp(0.0, 1023.0) as u32);
            (
                spread(cell[0]) | spread(cell[1]) << 1 | spread(cell[2]) << 2,
                i as u32,
            )
        })
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The ten low bits of `v` two bits apart (bit k to bit 3k).
fn spread(v: u32) -> u32 {
    let mut x = v & 0x3ff;
    x = (x | x << 16) & 0x0300_00ff;
    x = (x | x << 8) & 0x0300_f00f;
    x = (x | x << 4) & 0x030c_30c3;
    x = (x | x << 2) & 0x0924_9249;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_a_permutation_that_keeps_neighbours_together() {
        let mut points = Vec::new();
        for i in 0..512u32 {
            let [x, y, z] = [i % 8, i / 8 % 8, i / 64].map(|v| v as f32);
            points.push([x, y, z]);
        }
        points.reverse();
        let order = morton_order(&points);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..512).collect::<Vec<u32>>());
        // Each run of eight along the curve is one 2 x 2 x 2 block.
        for block in order.chunks(8) {
            let low = block
                .iter()
                .map(|&i| points[i as usize])
                .fold([f32::MAX; 3], |m, p| {
                    [m[0].min(p[0]), m[1].min(p[1]), m[2].min(p[2])]
                });
            for &i in block {
                let p = points[i as usize];
                assert!((0..3).all(|a| p[a] - low[a] <= 1.0), "{p:?} beside {low:?}");
            }
        }
        assert_eq!(spread(0b11), 0b1001);
    }
}
