//! DMX512 over a network, as the lighting out of the outputs tier sends it
//! and the control surface receives it from a desk: a universe's 512
//! channels, and the two protocols that carry universes, Art-Net and sACN
//! (ANSI E1.31), with their ports and universe numbers.

use serde::Deserialize;

/// Channels in a DMX universe.
pub const CHANNELS: usize = 512;
/// Art-Net's UDP port.
pub const ARTNET_PORT: u16 = 6454;
/// sACN's UDP port.
pub const SACN_PORT: u16 = 5568;

/// A network protocol that carries DMX universes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Art-Net 4 (`ArtDmx`), universes 0-32767 (the 15-bit port-address).
    Artnet,
    /// sACN, ANSI E1.31, universes 1-63999.
    Sacn,
}

impl Protocol {
    /// The universes the protocol numbers.
    pub fn universes(self) -> std::ops::RangeInclusive<u32> {
        match self {
            Protocol::Artnet => 0..=32767,
            Protocol::Sacn => 1..=63999,
        }
    }

    /// Its name in files.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Artnet => "artnet",
            Protocol::Sacn => "sacn",
        }
    }

    /// Its UDP port.
    pub fn port(self) -> u16 {
        match self {
            Protocol::Artnet => ARTNET_PORT,
            Protocol::Sacn => SACN_PORT,
        }
    }
}
