//! What the fluid's GPU state says when read back (tests, the bench and
//! validation; never while the show runs): particles, densities and
//! forces, how compressed the water is, how its lists fared, and the
//! bytes a substep moves.

use super::super::lists::{LIST_BLOCK, LIST_HEAD};
use super::{FluidSim, Solving};
use crate::gpu::compute::read_buffer;
use crate::gpu::{Gpu, ReadbackError};

/// How compressed a fluid is ([`FluidSim::compression`]).
#[derive(Debug, Clone, Copy)]
pub struct Compression {
    /// Live (not drained) particles.
    pub live: usize,
    /// Mean density error over them, a share of rho0.
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

impl FluidSim {
    /// Substeps run so far, as the GPU counted them (the integrate stage
    /// mixes this count into its random draws). Waits for the GPU.
    pub fn substeps_run(&self, gpu: &Gpu) -> Result<u32, ReadbackError> {
        Ok(read_buffer::<u32>(gpu, &self.substeps, 1)?
            .first()
            .copied()
            .unwrap_or(0))
    }

    /// Reads positions and velocities (grid order; waits for the GPU).
    #[allow(
        clippy::type_complexity,
        reason = "positions and velocities, read back together"
    )]
    pub fn read_particles(
        &self,
        gpu: &Gpu,
    ) -> Result<(Vec<[f32; 4]>, Vec<[f32; 4]>), ReadbackError> {
        Ok((
            read_buffer(gpu, &self.positions, self.count as usize)?,
            read_buffer(gpu, &self.velocities, self.count as usize)?,
        ))
    }

    /// Reads the last substep's densities (with pressures) and
    /// accelerations, and for each the index the particle had before that
    /// substep's reorder (waits for the GPU).
    #[allow(
        clippy::type_complexity,
        reason = "three parallel arrays read back together"
    )]
    pub fn read_forces(
        &self,
        gpu: &Gpu,
    ) -> Result<(Vec<[f32; 2]>, Vec<[f32; 4]>, Vec<u32>), ReadbackError> {
        Ok((
            read_buffer(gpu, &self.densities, self.count as usize)?,
            read_buffer(gpu, &self.accelerations, self.count as usize)?,
            read_buffer(gpu, &self.grid.sorted, self.count as usize)?,
        ))
    }

    /// The live particles and how compressed the water is: the density
    /// error max(rho / rho0 - 1, 0) (a free surface's particles, short of
    /// neighbours, are not errors), mean over the live particles and the
    /// largest, from the densities the last substep's last iteration found
    /// (before its correction: an upper bound). Waits for the GPU.
    pub fn compression(&self, gpu: &Gpu) -> Result<Compression, ReadbackError> {
        let (positions, _) = self.read_particles(gpu)?;
        let densities: Vec<[f32; 2]> = read_buffer(gpu, &self.densities, self.count as usize)?;
        let rest = f64::from(self.rest_density.get());
        let errors: Vec<f64> = positions
            .iter()
            .zip(&densities)
            .filter(|(p, _)| p[3] != 0.0)
            .map(|(_, d)| (f64::from(d[0]) / rest - 1.0).max(0.0))
            .collect();
        Ok(Compression {
            live: errors.len(),
            mean: errors.iter().sum::<f64>() / errors.len().max(1) as f64,
            max: errors.iter().copied().fold(0.0, f64::max),
        })
    }

    /// Substeps so far that sorted the grid and built the lists anew
    /// (waits for the GPU).
    pub fn list_rebuilds(&self, gpu: &Gpu) -> Result<u32, ReadbackError> {
        if self.reuse == 1 {
            return self.substeps_run(gpu);
        }
        Ok(read_buffer::<u32>(gpu, &self.plan, 4)?
            .get(3)
            .copied()
            .unwrap_or(0))
    }

    /// Walkers (particles' lanes) whose neighbours did not fit their list
    /// in the last substep, so that the force stage walked the grid for
    /// them, and walkers in all (waits for the GPU).
    pub fn walked_unlisted(&self, gpu: &Gpu) -> Result<(usize, usize), ReadbackError> {
        let walkers = (self.count * self.lanes) as usize;
        let words = self.listed.size() as usize / 4;
        let listed = read_buffer::<u32>(gpu, &self.listed, words)?;
        // Word 0 of each walker (`listed_at` in fluid.wgsl).
        let block = LIST_BLOCK * (LIST_HEAD as usize + self.depth as usize);
        let walked = (0..walkers)
            .filter(|t| listed[t / LIST_BLOCK * block + t % LIST_BLOCK] == u32::MAX)
            .count();
        Ok((walked, walkers))
    }

    /// Bytes a substep that sorts and walks the grid moves (each buffer
    /// touch counted once; the neighbour reads of density and force
    /// counted per neighbour within h; a substep that reuses the lists
    /// moves less, the list's skin more).
    pub fn bytes_per_step(&self, neighbours: f64) -> u64 {
        let n = f64::from(self.count);
        let cells = f64::from(self.grid.cells() + 1);
        let grid = cells * 4.0 * 4.0 + n * (16.0 + 8.0 + 4.0);
        let reorder = n * (8.0 + 4.0 + 4.0 + 16.0 * 4.0);
        let density = n * (16.0 + 8.0 + 4.0) + n * neighbours * (16.0 + 4.0);
        let solving = match self.solving {
            Solving::Wcsph { .. } => {
                density + n * (16.0 * 5.0 + 8.0 + 4.0) + n * neighbours * (4.0 + 16.0 + 16.0 + 8.0)
            }
            Solving::Pbf { .. } => {
                // The prediction; each iteration density (and its copy),
                // then the correction (a neighbour's position and
                // multiplier); then velocity (position, velocity,
                // density) and finish (position, vorticity, density, and
                // the settling as force's).
                let iterations = f64::from(self.iterations.get());
                let predict = n * 16.0 * 5.0;
                let correct = n * (16.0 * 3.0 + 8.0 + 4.0) + n * neighbours * (4.0 + 16.0 + 8.0);
                let velocity = n * (16.0 * 4.0 + 8.0) + n * neighbours * (4.0 + 16.0 + 16.0 + 8.0);
                let finish = n * (16.0 * 5.0 + 8.0) + n * neighbours * (4.0 + 16.0 + 16.0 + 8.0);
                predict + iterations * (density + n * 16.0 + correct) + velocity + finish
            }
        };
        (grid + reorder + solving) as u64
    }
}
