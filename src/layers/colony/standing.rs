//! The colony's first branches standing in the shared scene: each frame a
//! pass (`shaders/colony/standing.wgsl`) writes up to
//! [`MAX_BRANCHES`] of them, the oldest and thickest, as capsules into the
//! world's branches block, which the water in the scene meets
//! (`fluid.branches`).

use bytemuck::{Pod, Zeroable};

use super::sim::ColonySim;
use crate::base::Assets;
use crate::engine::world::MAX_BRANCHES;
use crate::gpu::bindings::uniform_buffer;
use crate::gpu::compute::{Binding, Kernel};
use crate::gpu::{BuildError, Gpu};

const FILE: &str = "colony/standing.wgsl";

/// `struct Standing` in the WGSL.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
struct StandingUniform {
    model: [[f32; 4]; 4],
    thickness: f32,
    _pad: [f32; 3],
}

/// The pass and its bindings for one colony.
pub struct StandingBranches {
    kernel: Kernel,
    binding: Binding,
    uniform: wgpu::Buffer,
}

impl StandingBranches {
    /// The pass over `sim`'s nodes into `branches` (the world's block).
    pub fn new(
        gpu: &Gpu,
        assets: &Assets,
        sim: &ColonySim,
        branches: &wgpu::Buffer,
    ) -> Result<Self, BuildError> {
        let kernel = Kernel::new(gpu, assets, FILE, "stand_branches")?;
        let uniform = uniform_buffer(&gpu.device, "colony.standing", size_of::<StandingUniform>());
        let binding = kernel.bind(
            gpu,
            &[
                (0, &uniform),
                (1, &sim.nodes),
                (2, &sim.info),
                (3, &sim.state),
                (4, branches),
            ],
        );
        Ok(Self {
            kernel,
            binding,
            uniform,
        })
    }

    /// This frame's placement (`model`: colony units into the scene) and
    /// tube radius at the roots.
    pub fn prepare(&self, gpu: &Gpu, model: glam::Mat4, thickness: f32) {
        let standing = StandingUniform {
            model: model.to_cols_array_2d(),
            thickness,
            _pad: [0.0; 3],
        };
        gpu.queue
            .write_buffer(&self.uniform, 0, bytemuck::bytes_of(&standing));
    }

    /// Records the pass (after this frame's growth).
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.kernel
            .dispatch(pass, &self.binding, MAX_BRANCHES as u32, 64);
    }
}
