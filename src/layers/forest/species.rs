//! Tree species: a cone's maximum height, spread angle and
//! growth speed, when and how far it seeds, its colour and crown shape.
//! Four contrasting ones by default, a layer each: canopy, sub-canopy,
//! shrub and herb.

use bytemuck::{Pod, Zeroable};
use serde::Deserialize;

/// Most species a forest holds (the uniform array's length).
pub const MAX_SPECIES: usize = 8;

/// A tree species.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Species {
    /// Its name.
    pub name: String,
    /// Height it stops growing at, metres.
    pub max_height: f32,
    /// Half the cone's opening, degrees.
    pub spread: f32,
    /// Metres a year at R = 1.
    pub growth: f32,
    /// Part of the maximum height from which it seeds (0..1).
    pub seed_size: f32,
    /// Seeds a year once that tall.
    pub seed_rate: f32,
    /// Seed distance per metre of height.
    pub dispersal: f32,
    /// Linear RGB.
    pub colour: [f32; 3],
}

/// `struct Species` in `shaders/forest/forest.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Pod, Zeroable)]
pub struct SpeciesGpu {
    max_height: f32,
    tan_spread: f32,
    growth: f32,
    seed_height: f32,
    seed_rate: f32,
    dispersal: f32,
    _pad: [f32; 2],
}

impl Species {
    /// What the shaders read.
    pub fn gpu(&self) -> SpeciesGpu {
        SpeciesGpu {
            max_height: self.max_height,
            tan_spread: self.spread.to_radians().tan(),
            growth: self.growth,
            seed_height: self.seed_size * self.max_height,
            seed_rate: self.seed_rate,
            dispersal: self.dispersal,
            _pad: [0.0; 2],
        }
    }
}

/// Canopy, sub-canopy, shrub and herb: tall and narrow to low and wide,
/// fast seeding low layers against slow tall ones.
pub fn defaults() -> Vec<Species> {
    let species =
        |name: &str, max_height, spread, growth, seed_size, seed_rate, dispersal, colour| Species {
            name: name.into(),
            max_height,
            spread,
            growth,
            seed_size,
            seed_rate,
            dispersal,
            colour,
        };
    vec![
        species(
            "canopy",
            20.0,
            22.0,
            0.8,
            0.6,
            0.35,
            1.2,
            [0.05, 0.22, 0.08],
        ),
        species(
            "sub-canopy",
            11.0,
            30.0,
            0.7,
            0.5,
            0.5,
            1.0,
            [0.18, 0.35, 0.06],
        ),
        species("shrub", 4.5, 45.0, 0.5, 0.4, 0.8, 1.5, [0.35, 0.30, 0.08]),
        species("herb", 1.6, 60.0, 0.4, 0.3, 1.5, 2.5, [0.45, 0.55, 0.12]),
    ]
}
