//! The attractions' own length scale: the mean distance from a point to its
//! nearest neighbour. With `colony.unit_distance = 0` (the default) one
//! distance unit follows it, so a shape or a user's point cloud grows the
//! same tree whether it spans centimetres or hundreds of metres, with a
//! thousand points or a million.

/// Points whose nearest neighbour is looked up; enough for a mean within a
/// few percent, few enough to stay far below a frame even for 16M points.
const SAMPLES: usize = 2_048;

/// Grid rings searched around a sample before it is skipped (a lone point
/// far from the others says nothing about the spacing).
const MAX_RINGS: i64 = 4;

/// One unit in nearest-neighbour distances: 1.5 keeps the built-in
/// shapes' look (20,000 attractions in a sphere of radius 7 gave the old
/// fixed unit of 0.35) while following any other scale.
pub const UNIT_PER_SPACING: f32 = 1.5;

/// The mean nearest-neighbour distance of `points` over a sample; `None`
/// for fewer than two distinct points.
pub fn mean_nearest(points: &[[f32; 3]]) -> Option<f32> {
    if points.len() < 2 {
        return None;
    }
    let (low, high) = bounds(points);
    let extent: Vec<f64> = (0..3).map(|a| f64::from(high[a] - low[a])).collect();
    let largest = extent.iter().cloned().fold(0.0, f64::max);
    if largest <= 0.0 {
        return None;
    }
    // Cells holding about one point each, whatever the cloud's shape.
    let occupied: f64 = extent.iter().map(|e| e.max(largest * 1e-3)).product();
    let cell = (occupied / points.len() as f64).cbrt().max(largest * 1e-6);
    let key = |p: &[f32; 3]| -> [i64; 3] {
        [0, 1, 2].map(|a| ((f64::from(p[a] - low[a])) / cell).floor() as i64)
    };
    let mut sorted: Vec<([i64; 3], u32)> = points
        .iter()
        .enumerate()
        .map(|(i, p)| (key(p), i as u32))
        .collect();
    sorted.sort_unstable();
    let step = (points.len() / SAMPLES).max(1);
    let (mut sum, mut found) = (0.0f64, 0usize);
    for index in (0..points.len()).step_by(step) {
        if let Some(d) = nearest(points, &sorted, key, index, cell) {
            sum += d;
            found += 1;
        }
    }
    (found > 0).then(|| (sum / found as f64) as f32)
}

/// The distance from point `index` to its nearest other point, searching
/// rings of cells outwards.
fn nearest(
    points: &[[f32; 3]],
    sorted: &[([i64; 3], u32)],
    key: impl Fn(&[f32; 3]) -> [i64; 3],
    index: usize,
    cell: f64,
) -> Option<f64> {
    let p = points[index];
    let home = key(&p);
    let mut best = f64::INFINITY;
    for ring in 0..=MAX_RINGS {
        for dx in -ring..=ring {
            for dy in -ring..=ring {
                for dz in -ring..=ring {
                    if dx.abs().max(dy.abs()).max(dz.abs()) != ring {
                        continue;
                    }
                    let c = [home[0] + dx, home[1] + dy, home[2] + dz];
                    let start = sorted.partition_point(|(k, _)| *k < c);
                    for (k, other) in &sorted[start..] {
                        if *k != c {
                            break;
                        }
                        if *other as usize == index {
                            continue;
                        }
                        let q = points[*other as usize];
                        let d = (0..3)
                            .map(|a| f64::from(p[a] - q[a]).powi(2))
                            .sum::<f64>()
                            .sqrt();
                        if d > 0.0 {
                            best = best.min(d);
                        }
                    }
                }
            }
        }
        // Anything in a further ring is at least `ring * cell` away.
        if best <= ring as f64 * cell {
            break;
        }
    }
    best.is_finite().then_some(best)
}

fn bounds(points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    points
        .iter()
        .fold(([f32::MAX; 3], [f32::MIN; 3]), |(lo, hi), p| {
            (
                [0, 1, 2].map(|a| lo[a].min(p[a])),
                [0, 1, 2].map(|a| hi[a].max(p[a])),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::colony::attractors::{AttractionSource, Shape};

    #[test]
    fn the_spacing_scales_with_the_cloud_and_matches_brute_force() {
        let points = Shape {
            kind: 0,
            radius: 1.0,
        }
        .points(3_000, 5);
        let brute: f64 = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                points
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, q)| {
                        (0..3)
                            .map(|a| f64::from(p[a] - q[a]).powi(2))
                            .sum::<f64>()
                            .sqrt()
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .sum::<f64>()
            / points.len() as f64;
        let estimate = f64::from(mean_nearest(&points).unwrap_or(0.0));
        assert!(
            (estimate / brute - 1.0).abs() < 0.05,
            "{estimate} vs {brute}"
        );
        for scale in [0.01f32, 100.0] {
            let scaled: Vec<[f32; 3]> = points.iter().map(|p| p.map(|c| c * scale)).collect();
            let s = f64::from(mean_nearest(&scaled).unwrap_or(0.0));
            assert!(
                (s / (estimate * f64::from(scale)) - 1.0).abs() < 1e-3,
                "{scale}: {s}"
            );
        }
        let flat: Vec<[f32; 3]> = points.iter().map(|p| [p[0], p[1], 0.0]).collect();
        assert!(
            mean_nearest(&flat).is_some_and(|s| s > 0.0),
            "a flat cloud too"
        );
        assert_eq!(mean_nearest(&[[1.0; 3], [1.0; 3]]), None);
    }
}
