//! The `fluid` layer: weakly compressible SPH (SEEDS.md 002) in 2D and 3D
//! on the GPU.

pub mod reference;
pub mod scene;
pub mod sim;
pub mod validate;
