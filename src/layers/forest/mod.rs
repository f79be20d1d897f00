//! The forest (SEEDS.md 003, Mizoguchi and Miyata's layered extension of
//! Deussen et al.): trees as cones competing for light in horizontal
//! slices, guided by painted density maps. The GPU simulation and its CPU
//! reference are here; the layer that draws it (issue 12) joins them.

pub mod reference;
pub mod sim;
pub mod species;
