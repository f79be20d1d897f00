//! `[[dmx]]` in a mapping file: a lighting desk's channel, received over
//! Art-Net or sACN, driving a parameter or firing an action, so a desk
//! plays sylva as it plays its fixtures.
//!
//! ```toml
//! [[dmx]]
//! universe = 1
//! channel = 10                 # 1-512; a 16-bit value takes 10 (coarse) and 11 (fine)
//! bits = 16                    # 8 (default) or 16
//! protocol = "sacn"            # or "artnet"; omitted: either
//! param = "master.brightness"  # or action = "preset:next" (fired as the channel passes half)
//! range = [0.0, 2.0]
//! curve = "linear"
//! invert = false
//! ```

use serde::{Deserialize, Serialize};

use super::check::MappingProblem;
use super::check_action;
use super::position::Placing;
use crate::base::dmx::{CHANNELS, Protocol};
use crate::params::Curve;

/// One desk channel bound to a parameter or an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DmxMapping {
    /// The universe, as the protocol numbers it.
    pub universe: u16,
    /// The channel, 1-512 (the coarse one of a 16-bit value).
    pub channel: u16,
    /// 8 or 16.
    #[serde(default = "eight")]
    pub bits: u8,
    /// Only this protocol; `None`: Art-Net and sACN alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Parameter driven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    /// Action fired as the channel rises past half.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Part of the parameter's range the channel spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f32; 2]>,
    /// Value curve.
    #[serde(default)]
    pub curve: Curve,
    /// Reverse the direction.
    #[serde(default)]
    pub invert: bool,
}

fn eight() -> u8 {
    8
}

impl DmxMapping {
    /// Whether the entry can fire: a channel a universe has, one target.
    pub fn check(&self) -> Result<(), MappingProblem> {
        match (&self.param, &self.action) {
            (None, None) => return Err(("param", "needs param or action".into())),
            (Some(_), Some(_)) => return Err(("action", "has both param and action".into())),
            _ => {}
        }
        if let Some(action) = &self.action {
            check_action(action).map_err(|e| ("action", e.to_string()))?;
        }
        if !matches!(self.bits, 8 | 16) {
            return Err(("bits", format!("bits {}: 8 or 16", self.bits)));
        }
        let last = CHANNELS as u16 + 1 - u16::from(self.bits / 8);
        if !(1..=last).contains(&self.channel) {
            return Err((
                "channel",
                format!(
                    "channel {}: 1-{last} for a {}-bit value",
                    self.channel, self.bits
                ),
            ));
        }
        let numbered = |p: Protocol| p.universes().contains(&u32::from(self.universe));
        let fits = match self.protocol {
            Some(protocol) => numbered(protocol),
            None => numbered(Protocol::Artnet) || numbered(Protocol::Sacn),
        };
        if !fits {
            return Err((
                "universe",
                format!(
                    "universe {}: Art-Net numbers them 0-32767, sACN 1-63999",
                    self.universe
                ),
            ));
        }
        Ok(())
    }

    /// Whether a universe of `protocol` numbered `universe` is this
    /// entry's.
    pub fn hears(&self, protocol: Protocol, universe: u16) -> bool {
        self.universe == universe && self.protocol.is_none_or(|p| p == protocol)
    }

    /// The channel's level in `channels` (a universe's 512 values), 0-1.
    pub fn level(&self, channels: &[u8]) -> Option<f32> {
        let at = usize::from(self.channel).checked_sub(1)?;
        match self.bits {
            16 => {
                let coarse = *channels.get(at)?;
                let fine = *channels.get(at + 1)?;
                Some(f32::from(u16::from_be_bytes([coarse, fine])) / 65535.0)
            }
            _ => Some(f32::from(*channels.get(at)?) / 255.0),
        }
    }

    /// How the level is placed on the parameter.
    pub fn placing(&self) -> Placing {
        Placing {
            range: self.range,
            curve: self.curve,
            invert: self.invert,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(text: &str) -> DmxMapping {
        toml::from_str(text).expect("a [[dmx]] entry")
    }

    #[test]
    fn sixteen_bits_read_coarse_then_fine() {
        let fader =
            mapping("universe = 1\nchannel = 511\nbits = 16\nparam = \"master.brightness\"");
        assert_eq!(fader.check(), Ok(()));
        let mut channels = [0u8; 512];
        channels[510] = 0x80;
        channels[511] = 0x00;
        let level = fader.level(&channels).unwrap_or_default();
        assert!((level - 32768.0 / 65535.0).abs() < 1e-6, "{level}");
        let eight = mapping("universe = 1\nchannel = 511\nparam = \"p\"");
        assert_eq!(eight.level(&channels), Some(128.0 / 255.0));
    }

    #[test]
    fn entries_that_cannot_fire_are_refused_at_their_key() {
        let cases = [
            (
                "universe = 1\nchannel = 512\nbits = 16\nparam = \"p\"",
                "channel",
            ),
            ("universe = 1\nchannel = 0\nparam = \"p\"", "channel"),
            (
                "universe = 1\nchannel = 1\nbits = 12\nparam = \"p\"",
                "bits",
            ),
            (
                "universe = 0\nchannel = 1\nprotocol = \"sacn\"\nparam = \"p\"",
                "universe",
            ),
            ("universe = 1\nchannel = 1", "param"),
            ("universe = 1\nchannel = 1\naction = \"explode\"", "action"),
        ];
        for (text, key) in cases {
            let refused = mapping(text).check().expect_err(text);
            assert_eq!(refused.0, key, "{text}: {}", refused.1);
        }
    }

    #[test]
    fn a_protocol_narrows_what_an_entry_hears() {
        let any = mapping("universe = 3\nchannel = 1\nparam = \"p\"");
        assert!(any.hears(Protocol::Artnet, 3) && any.hears(Protocol::Sacn, 3));
        let sacn = mapping("universe = 3\nchannel = 1\nprotocol = \"sacn\"\nparam = \"p\"");
        assert!(!sacn.hears(Protocol::Artnet, 3) && !sacn.hears(Protocol::Sacn, 4));
    }
}
