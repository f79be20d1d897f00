//! A CPU reference of one forest step's competition, for the tests: the
//! space maps with each pixel owned by the tallest cone over it (as
//! packed on the GPU), and R = V / Vmax per tree (a seedling below the
//! first slice: the ground's density, or 0 in another tree's shade).

use super::sim::{ForestParams, Tree};
use super::species::Species;

/// The space maps and R per tree for `trees` (all alive).
pub fn competition(
    params: &ForestParams,
    species: &[Species],
    trees: &[Tree],
    density: &[f32],
) -> (Vec<u32>, Vec<f32>) {
    let size = params.map_size as usize;
    let area = size * size;
    let mut maps = vec![0u32; area * params.slices as usize];
    let mut covered = vec![0u32; trees.len()];
    for (id, tree) in trees.iter().enumerate() {
        let tan = species[tree.species as usize].spread.to_radians().tan();
        let height = ((tree.height.max(0.0) * params.height_scale) as u32).min(4095);
        let owner = (height << 20) | (id as u32 + 1);
        let centre = [
            tree.position[0] / params.metres_per_pixel,
            tree.position[1] / params.metres_per_pixel,
        ];
        for k in 0..params.slices as usize {
            let z = (k + 1) as f32 * params.slice_spacing;
            let r = (tree.height - z) * tan / params.metres_per_pixel;
            if r <= 0.0 {
                continue;
            }
            let lo = [
                (centre[0] - r).floor().max(0.0) as i64,
                (centre[1] - r).floor().max(0.0) as i64,
            ];
            let hi = [
                ((centre[0] + r).floor() as i64).min(size as i64 - 1),
                ((centre[1] + r).floor() as i64).min(size as i64 - 1),
            ];
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let d = [x as f32 + 0.5 - centre[0], y as f32 + 0.5 - centre[1]];
                    if d[0] * d[0] + d[1] * d[1] <= r * r {
                        let pixel = &mut maps[k * area + y as usize * size + x as usize];
                        *pixel = (*pixel).max(owner);
                        covered[id] += 1;
                    }
                }
            }
        }
    }
    let mut owned = vec![0u64; trees.len()];
    for (p, &owner) in maps.iter().enumerate() {
        let id = owner & 0xfffff;
        if id == 0 {
            continue;
        }
        let k = p / area;
        let map = (k / params.slices_per_map as usize).min(params.density_maps as usize - 1);
        let w = density[map * area + p % area].clamp(0.0, 1.0);
        owned[id as usize - 1] += (w * 255.0).round() as u64;
    }
    let vitality = trees
        .iter()
        .zip(owned.iter().zip(&covered))
        .map(|(tree, (&v, &vmax))| {
            if vmax > 0 {
                v as f32 / 255.0 / vmax as f32
            } else {
                let x = ((tree.position[0] / params.metres_per_pixel) as usize).min(size - 1);
                let y = ((tree.position[1] / params.metres_per_pixel) as usize).min(size - 1);
                if maps[y * size + x] & 0xfffff != 0 {
                    0.0
                } else {
                    density[y * size + x]
                }
            }
        })
        .collect();
    (maps, vitality)
}
