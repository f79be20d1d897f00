//! From the colours sampled off the picture to the channel values of each
//! universe: each fixture's gamma and brightness, its channel order, and a
//! white channel taken out of the colour where the fixture has one.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use super::fixtures::{CHANNELS, FixturePlan, Protocol};

/// Where one universe's packets go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UniverseKey {
    /// Art-Net or sACN.
    pub protocol: Protocol,
    /// One node, or the protocol's broadcast or multicast.
    pub to: Option<SocketAddr>,
    /// The universe.
    pub universe: u16,
}

/// Every universe the fixtures fill, and which pixel goes where: built
/// once when the outputs file is read, filled each time a picture's
/// colours come back.
#[derive(Debug, Clone)]
pub struct Patch {
    /// The universes, in a fixed order, each with its 512 channels.
    pub universes: BTreeMap<UniverseKey, [u8; CHANNELS]>,
    /// For each sampled pixel, in the order of the fixtures' pixels:
    /// where it goes and how.
    pixels: Vec<PixelPatch>,
    /// Lookup tables per fixture: 8-bit sRGB to 8-bit channel value.
    curves: Vec<[u8; 256]>,
}

#[derive(Debug, Clone, Copy)]
struct PixelPatch {
    key: UniverseKey,
    channel: usize,
    fixture: usize,
}

impl Patch {
    /// The patch of `fixtures`, all channels at 0.
    pub fn new(fixtures: &[FixturePlan]) -> Self {
        let mut universes = BTreeMap::new();
        let mut pixels = Vec::new();
        for (index, fixture) in fixtures.iter().enumerate() {
            for (universe, channel) in fixture.addresses() {
                let key = UniverseKey {
                    protocol: fixture.protocol,
                    to: fixture.to,
                    universe,
                };
                universes.entry(key).or_insert([0u8; CHANNELS]);
                pixels.push(PixelPatch {
                    key,
                    channel,
                    fixture: index,
                });
            }
        }
        let curves = fixtures
            .iter()
            .map(|f| curve(f.gamma, f.brightness))
            .collect();
        Self {
            universes,
            pixels,
            curves,
        }
    }

    /// How many pixels it maps.
    pub fn pixels(&self) -> usize {
        self.pixels.len()
    }

    /// Writes each pixel's colour (`rgba`, 4 bytes a pixel in the
    /// fixtures' order, sRGB as the screen shows them) into its channels.
    pub fn fill(&mut self, fixtures: &[FixturePlan], rgba: &[u8]) {
        for (pixel, colour) in self.pixels.iter().zip(rgba.chunks_exact(4)) {
            let Some(fixture) = fixtures.get(pixel.fixture) else {
                continue;
            };
            let Some(channels) = self.universes.get_mut(&pixel.key) else {
                continue;
            };
            let values = split_white([colour[0], colour[1], colour[2]], fixture.order.has_white());
            let curve = &self.curves[pixel.fixture];
            let order = &fixture.order.colours[..fixture.order.len];
            for (slot, colour) in channels[pixel.channel..].iter_mut().zip(order) {
                *slot = curve[usize::from(values[usize::from(*colour)])];
            }
        }
    }
}

/// The colour as red, green, blue and white: with a white channel, the
/// part all three share moves to it.
fn split_white([r, g, b]: [u8; 3], white: bool) -> [u8; 4] {
    if !white {
        return [r, g, b, 0];
    }
    let w = r.min(g).min(b);
    [r - w, g - w, b - w, w]
}

/// 8-bit value to channel value: `(v / 255)^gamma * brightness`.
fn curve(gamma: f32, brightness: f32) -> [u8; 256] {
    std::array::from_fn(|v| {
        let level = (v as f32 / 255.0).powf(gamma) * brightness;
        (level * 255.0).round().clamp(0.0, 255.0) as u8
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{ChannelOrder, Layout};
    use super::*;

    fn fixture(order: &str, gamma: f32, brightness: f32) -> FixturePlan {
        FixturePlan {
            name: "f".into(),
            line: 1,
            protocol: Protocol::Sacn,
            to: None,
            universe: 3,
            channel: 509,
            layout: Layout::Strip {
                from: [0.0, 0.0],
                to: [1.0, 0.0],
                pixels: 2,
            },
            order: ChannelOrder::parse(order).expect("an order"),
            gamma,
            brightness,
            source: None,
        }
    }

    #[test]
    fn colours_land_in_their_channels_in_the_fixtures_order() {
        let fixtures = [fixture("GRB", 1.0, 1.0)];
        let mut patch = Patch::new(&fixtures);
        patch.fill(&fixtures, &[10, 20, 30, 255, 40, 50, 60, 255]);
        let keys: Vec<u16> = patch.universes.keys().map(|k| k.universe).collect();
        assert_eq!(keys, vec![3, 4]);
        let first = patch.universes.values().next().expect("universe 3");
        assert_eq!(
            &first[508..],
            &[20, 10, 30, 0],
            "a pixel does not straddle universes"
        );
        let second = patch.universes.values().nth(1).expect("universe 4");
        assert_eq!(&second[..4], &[50, 40, 60, 0]);
    }

    #[test]
    fn white_takes_the_shared_part_and_the_curve_applies() {
        let fixtures = [fixture("RGBW", 2.0, 0.5)];
        let mut patch = Patch::new(&fixtures);
        patch.fill(&fixtures, &[255, 255, 128, 255, 0, 0, 0, 255]);
        let first = patch.universes.values().next().expect("universe 3");
        // White 128 -> (128/255)^2 * 0.5 * 255 = 32.1; red and green 127 -> 31.6.
        assert_eq!(&first[508..], &[32, 32, 0, 32]);
    }
}
