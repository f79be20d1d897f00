//! The `colony` layer: space colonization growth (SEEDS.md 000) on the GPU.
pub mod attractors;
pub mod reference;
pub mod sim;
