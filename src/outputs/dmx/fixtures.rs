//! The `[[dmx]]` fixtures of an outputs file, read and checked: where each
//! fixture's pixels lie on the canvas (a strip between two points, or a
//! matrix over a region), which universe and channel it starts at, in
//! which protocol and to which address it goes, and how its colour is
//! turned into channel values.
//!
//! ```toml
//! [[dmx]]
//! name = "bar"
//! protocol = "sacn"            # or "artnet"
//! to = "10.0.0.50"             # omitted: sACN multicast, Art-Net broadcast
//! universe = 1
//! channel = 1                  # where the first pixel starts, 1-512
//! strip = { from = [0.0, 0.9], to = [1.0, 0.9], pixels = 60 }
//! # matrix = { region = [0.0, 0.0, 1.0, 0.5], columns = 32, rows = 8, zigzag = true }
//! order = "GRB"                # RGB, RBG, GRB, GBR, BRG, BGR, RGBW, GRBW, W
//! gamma = 2.2                  # the LEDs' response: 1.0 sends the picture's values
//! brightness = 1.0
//! source = "left"              # an [[output]]'s picture, or "layer:fluid" a layer's own; omitted: the canvas
//! ```

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use serde::Deserialize;
use toml::Spanned;

pub use crate::base::dmx::{CHANNELS, Protocol};

/// Fixtures a file may hold.
pub const MAX_FIXTURES: usize = 256;
/// Pixels a file may map, over all its fixtures (64 universes of RGB).
pub const MAX_PIXELS: usize = 64 * 170 * 4;
/// Universes a file may fill.
pub const MAX_UNIVERSES: usize = 512;

/// The order a pixel's colours take in its channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChannelOrder {
    /// For each channel, the colour it carries: 0 red, 1 green, 2 blue,
    /// 3 white.
    pub colours: [u8; 4],
    /// Channels a pixel takes, 1-4.
    pub len: usize,
}

impl ChannelOrder {
    /// `RGB`, `GRBW`, `W`...: each of R, G, B, W at most once.
    pub fn parse(text: &str) -> Option<Self> {
        let mut colours = [0u8; 4];
        let mut seen = [false; 4];
        if text.is_empty() || text.len() > 4 {
            return None;
        }
        for (slot, c) in colours.iter_mut().zip(text.chars()) {
            let colour = match c.to_ascii_uppercase() {
                'R' => 0,
                'G' => 1,
                'B' => 2,
                'W' => 3,
                _ => return None,
            };
            if std::mem::replace(&mut seen[colour as usize], true) {
                return None;
            }
            *slot = colour;
        }
        Some(Self {
            colours,
            len: text.len(),
        })
    }

    /// Whether a white channel is among them.
    pub fn has_white(&self) -> bool {
        self.colours[..self.len].contains(&3)
    }
}

/// Where a fixture's pixels lie on its picture, each a rectangle of it in
/// 0..1 (x right, y down) that the pixel's colour is averaged over.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// `pixels` in a line from `from` to `to` (its first pixel nearest
    /// `from`).
    Strip {
        /// Where the first pixel's end is.
        from: [f32; 2],
        /// Where the last pixel's end is.
        to: [f32; 2],
        /// How many.
        pixels: u32,
    },
    /// A grid over `region` (`[x, y, w, h]`), rows from the top, each row
    /// left to right, or every other row right to left when `zigzag`.
    Matrix {
        /// `[x, y, w, h]`.
        region: [f32; 4],
        /// Pixels a row.
        columns: u32,
        /// Rows.
        rows: u32,
        /// Serpentine wiring.
        zigzag: bool,
    },
}

impl Layout {
    /// How many pixels.
    pub fn pixels(&self) -> usize {
        match self {
            Layout::Strip { pixels, .. } => *pixels as usize,
            Layout::Matrix { columns, rows, .. } => *columns as usize * *rows as usize,
        }
    }

    /// Each pixel's rectangle `[x0, y0, x1, y1]`, in wiring order.
    pub fn spots(&self) -> Vec<[f32; 4]> {
        match *self {
            Layout::Strip { from, to, pixels } => {
                let n = pixels.max(1) as f32;
                let step = [(to[0] - from[0]) / n, (to[1] - from[1]) / n];
                // A pixel covers its length of the line, as wide as long.
                let half = 0.5 * step[0].hypot(step[1]);
                (0..pixels)
                    .map(|i| {
                        let t = i as f32 + 0.5;
                        let [x, y] = [from[0] + step[0] * t, from[1] + step[1] * t];
                        [x - half, y - half, x + half, y + half]
                    })
                    .collect()
            }
            Layout::Matrix {
                region: [x, y, w, h],
                columns,
                rows,
                zigzag,
            } => {
                let (cw, ch) = (w / columns.max(1) as f32, h / rows.max(1) as f32);
                (0..rows)
                    .flat_map(|row| {
                        (0..columns).map(move |i| {
                            let column = if zigzag && row % 2 == 1 {
                                columns - 1 - i
                            } else {
                                i
                            };
                            let x0 = x + cw * column as f32;
                            let y0 = y + ch * row as f32;
                            [x0, y0, x0 + cw, y0 + ch]
                        })
                    })
                    .collect()
            }
        }
    }
}

/// One fixture, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FixturePlan {
    /// Its name, for messages.
    pub name: String,
    /// Its line in the file.
    pub line: usize,
    /// Art-Net or sACN.
    pub protocol: Protocol,
    /// Where its packets go: one node, or `None` for sACN's multicast
    /// group per universe and Art-Net's broadcast.
    pub to: Option<SocketAddr>,
    /// The universe of its first pixel.
    pub universe: u16,
    /// The channel of its first pixel, 1-512.
    pub channel: u16,
    /// Its pixels on the picture.
    pub layout: Layout,
    /// Its channel order.
    pub order: ChannelOrder,
    /// The exponent the picture's values are raised to.
    pub gamma: f32,
    /// A factor on every channel, 0-1.
    pub brightness: f32,
    /// An output's picture, a layer's (`layer:ID`), or the canvas.
    pub source: Option<String>,
}

impl FixturePlan {
    /// Each pixel's universe and first channel (0-based), in wiring order:
    /// a pixel that would not fit in what is left of a universe starts the
    /// next one, as pixel controllers wire them.
    pub fn addresses(&self) -> Vec<(u16, usize)> {
        let width = self.order.len;
        let mut universe = self.universe;
        let mut channel = usize::from(self.channel) - 1;
        (0..self.layout.pixels())
            .map(|_| {
                if channel + width > CHANNELS {
                    universe = universe.saturating_add(1);
                    channel = 0;
                }
                let at = (universe, channel);
                channel += width;
                at
            })
            .collect()
    }
}

/// One `[[dmx]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::outputs) struct RawFixture {
    name: Spanned<String>,
    protocol: Spanned<Protocol>,
    #[serde(default)]
    to: Option<Spanned<String>>,
    universe: Spanned<u32>,
    #[serde(default = "first_channel")]
    channel: Spanned<u32>,
    #[serde(default)]
    strip: Option<Spanned<RawStrip>>,
    #[serde(default)]
    matrix: Option<Spanned<RawMatrix>>,
    #[serde(default = "rgb")]
    order: Spanned<String>,
    #[serde(default = "unit")]
    gamma: Spanned<f32>,
    #[serde(default = "unit")]
    brightness: Spanned<f32>,
    #[serde(default)]
    source: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStrip {
    from: [f32; 2],
    to: [f32; 2],
    pixels: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    #[serde(default = "whole")]
    region: [f32; 4],
    columns: u32,
    rows: u32,
    #[serde(default)]
    zigzag: bool,
}

fn first_channel() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

fn rgb() -> Spanned<String> {
    Spanned::new(0..0, "RGB".into())
}

fn unit() -> Spanned<f32> {
    Spanned::new(0..0, 1.0)
}

fn whole() -> [f32; 4] {
    [0.0, 0.0, 1.0, 1.0]
}

/// A fault, at its line.
type Fault = (usize, String);

/// The fixtures `raw` (with `at` turning an offset into a line) checked,
/// each against the file's limits and the ones before it; `outputs` are
/// the names a `source` may give.
pub(in crate::outputs) fn checked_fixtures(
    raw: Vec<Spanned<RawFixture>>,
    at: &dyn Fn(usize) -> usize,
    outputs: &[&str],
) -> Result<Vec<FixturePlan>, Fault> {
    if let Some(extra) = raw.get(MAX_FIXTURES) {
        let line = at(extra.span().start);
        return Err((line, format!("at most {MAX_FIXTURES} [[dmx]] fixtures")));
    }
    let mut fixtures: Vec<FixturePlan> = Vec::new();
    let mut pixels = 0;
    let mut universes = std::collections::HashSet::new();
    for spanned in raw {
        let line = at(spanned.span().start);
        let fixture = checked_fixture(spanned.into_inner(), line, at, outputs)?;
        if fixtures.iter().any(|f| f.name == fixture.name) {
            return Err((line, format!("fixture {:?} twice", fixture.name)));
        }
        pixels += fixture.layout.pixels();
        if pixels > MAX_PIXELS {
            return Err((
                line,
                format!(
                    "fixture {:?} brings the file to {pixels} pixels, over the {MAX_PIXELS} it may map",
                    fixture.name
                ),
            ));
        }
        let addresses = fixture.addresses();
        let last = addresses.last().map_or(fixture.universe, |a| a.0);
        if !fixture.protocol.universes().contains(&u32::from(last)) {
            return Err((
                line,
                format!(
                    "fixture {:?} runs on to universe {last}, past the last {} numbers",
                    fixture.name,
                    fixture.protocol.name()
                ),
            ));
        }
        universes.extend(
            addresses
                .iter()
                .map(|a| (fixture.protocol, fixture.to, a.0)),
        );
        if universes.len() > MAX_UNIVERSES {
            return Err((
                line,
                format!(
                    "fixture {:?} brings the file over {MAX_UNIVERSES} universes",
                    fixture.name
                ),
            ));
        }
        fixtures.push(fixture);
    }
    Ok(fixtures)
}

fn checked_fixture(
    raw: RawFixture,
    line: usize,
    at: &dyn Fn(usize) -> usize,
    outputs: &[&str],
) -> Result<FixturePlan, Fault> {
    let line_of = |span: std::ops::Range<usize>| {
        if span.is_empty() {
            line
        } else {
            at(span.start)
        }
    };
    let name = raw.name.into_inner();
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err((line, format!("fixture name {name:?}: 1 to 64 characters")));
    }
    let protocol = raw.protocol.into_inner();
    let universe = *raw.universe.get_ref();
    if !protocol.universes().contains(&universe) {
        let range = protocol.universes();
        return Err((
            line_of(raw.universe.span()),
            format!(
                "universe {universe}: {} numbers them {}-{}",
                protocol.name(),
                range.start(),
                range.end()
            ),
        ));
    }
    let channel = *raw.channel.get_ref();
    if !(1..=CHANNELS as u32).contains(&channel) {
        return Err((
            line_of(raw.channel.span()),
            format!("channel {channel}: 1-{CHANNELS}"),
        ));
    }
    let to = match raw.to {
        Some(to) => Some(address(to.get_ref(), protocol).ok_or_else(|| {
            (
                line_of(to.span()),
                format!(
                    "to {:?}: an IPv4 or IPv6 address, with or without :port",
                    to.get_ref()
                ),
            )
        })?),
        None => None,
    };
    let layout = match (raw.strip, raw.matrix) {
        (Some(strip), None) => {
            strip_layout(strip.get_ref()).map_err(|m| (line_of(strip.span()), m))?
        }
        (None, Some(matrix)) => {
            matrix_layout(matrix.get_ref()).map_err(|m| (line_of(matrix.span()), m))?
        }
        _ => {
            return Err((
                line,
                "a fixture has one of strip = {..} or matrix = {..}".into(),
            ));
        }
    };
    let order = ChannelOrder::parse(raw.order.get_ref()).ok_or_else(|| {
        (
            line_of(raw.order.span()),
            format!(
                "order {:?}: R, G, B and W, each at most once",
                raw.order.get_ref()
            ),
        )
    })?;
    let gamma = *raw.gamma.get_ref();
    if !(0.1..=5.0).contains(&gamma) {
        return Err((line_of(raw.gamma.span()), format!("gamma {gamma}: 0.1-5")));
    }
    let brightness = *raw.brightness.get_ref();
    if !(0.0..=1.0).contains(&brightness) {
        return Err((
            line_of(raw.brightness.span()),
            format!("brightness {brightness}: 0-1"),
        ));
    }
    if let Some(source) = &raw.source {
        checked_source(source, outputs).map_err(|m| (line, m))?;
    }
    Ok(FixturePlan {
        name,
        line,
        protocol,
        to,
        universe: universe as u16,
        channel: channel as u16,
        layout,
        order,
        gamma,
        brightness,
        source: raw.source,
    })
}

/// A fixture's `source`: an output of the file, or `layer:ID`.
fn checked_source(source: &str, outputs: &[&str]) -> Result<(), String> {
    match source.strip_prefix(super::LAYER) {
        Some(id) => {
            let plain = !id.is_empty()
                && id.len() <= 64
                && (id.chars())
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
            match plain {
                true => Ok(()),
                false => Err(format!(
                    "source {source:?}: layer:ID, a layer's id (colony, shader.aurora)"
                )),
            }
        }
        None if outputs.contains(&source) => Ok(()),
        None => Err(format!(
            "source {source:?}: no [[output]] of that name (a layer's picture is layer:ID)"
        )),
    }
}

/// `host` or `host:port` (IPv6 as `[..]:port`), with the protocol's port
/// when none is given.
fn address(text: &str, protocol: Protocol) -> Option<SocketAddr> {
    let port = protocol.port();
    text.parse::<SocketAddr>()
        .ok()
        .or_else(|| {
            text.parse::<IpAddr>()
                .ok()
                .map(|ip| SocketAddr::new(ip, port))
        })
        .filter(|a| a.ip() != IpAddr::V4(Ipv4Addr::UNSPECIFIED) && a.port() != 0)
}

/// Whether `v` lies on the canvas.
fn on_canvas(v: f32) -> bool {
    (0.0..=1.0).contains(&v)
}

fn strip_layout(raw: &RawStrip) -> Result<Layout, String> {
    if !raw.from.iter().chain(&raw.to).all(|v| on_canvas(*v)) {
        return Err("strip from and to: points on the canvas, 0..1".into());
    }
    if raw.pixels == 0 || raw.pixels as usize > MAX_PIXELS {
        return Err(format!("strip pixels {}: 1-{MAX_PIXELS}", raw.pixels));
    }
    Ok(Layout::Strip {
        from: raw.from,
        to: raw.to,
        pixels: raw.pixels,
    })
}

fn matrix_layout(raw: &RawMatrix) -> Result<Layout, String> {
    let [x, y, w, h] = raw.region;
    let inside = [x, y, w, h].iter().all(|v| v.is_finite())
        && on_canvas(x)
        && on_canvas(y)
        && w > 0.0
        && h > 0.0
        && x + w <= 1.0 + 1e-4
        && y + h <= 1.0 + 1e-4;
    if !inside {
        return Err("matrix region [x, y, w, h]: inside the canvas, 0..1, w and h above 0".into());
    }
    let count = u64::from(raw.columns) * u64::from(raw.rows);
    if count == 0 || count > MAX_PIXELS as u64 {
        return Err(format!(
            "matrix of {} x {}: 1-{MAX_PIXELS} pixels",
            raw.columns, raw.rows
        ));
    }
    Ok(Layout::Matrix {
        region: raw.region,
        columns: raw.columns,
        rows: raw.rows,
        zigzag: raw.zigzag,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct File {
        dmx: Vec<Spanned<RawFixture>>,
    }

    fn parse(text: &str) -> Result<Vec<FixturePlan>, Fault> {
        let at = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let file: File = toml::from_str(text).map_err(|e| (0, e.to_string()))?;
        checked_fixtures(file.dmx, &at, &["left"])
    }

    #[test]
    fn a_strip_spreads_its_pixels_and_runs_into_the_next_universe() {
        let fixtures = parse(
            "[[dmx]]\nname = \"bar\"\nprotocol = \"sacn\"\nuniverse = 1\nchannel = 508\n\
             strip = { from = [0.0, 0.5], to = [1.0, 0.5], pixels = 4 }\n",
        )
        .expect("parses");
        let bar = &fixtures[0];
        let spots = bar.layout.spots();
        assert!((spots[0][0] - 0.0).abs() < 1e-6 && (spots[0][2] - 0.25).abs() < 1e-6);
        assert!((spots[3][2] - 1.0).abs() < 1e-6);
        // 508-510 holds the first pixel; the second would pass 512.
        assert_eq!(bar.addresses(), vec![(1, 507), (2, 0), (2, 3), (2, 6)]);
    }

    #[test]
    fn a_zigzag_matrix_turns_every_other_row() {
        let fixtures = parse(
            "[[dmx]]\nname = \"wall\"\nprotocol = \"artnet\"\nuniverse = 0\norder = \"GRBW\"\n\
             matrix = { columns = 2, rows = 2, zigzag = true }\n",
        )
        .expect("parses");
        let spots = fixtures[0].layout.spots();
        assert_eq!(spots[2], [0.5, 0.5, 1.0, 1.0]);
        assert_eq!(spots[3], [0.0, 0.5, 0.5, 1.0]);
        assert_eq!(fixtures[0].order.len, 4);
        assert!(fixtures[0].order.has_white());
    }

    #[test]
    fn faults_are_found_at_their_line() {
        // Line 2 is the fixture's `[[dmx]]`, line 5 the first of `body`.
        let cases = [
            (
                "universe = 0\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                5,
                "universe 0",
            ),
            (
                "universe = 1\nchannel = 513\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                6,
                "channel 513",
            ),
            (
                "universe = 1\norder = \"RRB\"\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                6,
                "order",
            ),
            (
                "universe = 1\nstrip = { from = [0.0, 0.0], to = [2.0, 0.0], pixels = 1 }",
                6,
                "on the canvas",
            ),
            (
                "universe = 1\nto = \"lights.local\"\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                6,
                "IPv4",
            ),
            ("universe = 1", 2, "one of strip"),
            (
                "universe = 63999\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 200 }",
                2,
                "past the last",
            ),
            (
                "universe = 1\nsource = \"right\"\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                2,
                "no [[output]]",
            ),
            (
                "universe = 1\nsource = \"layer:Fluid!\"\nstrip = { from = [0.0, 0.0], to = [1.0, 0.0], pixels = 1 }",
                2,
                "a layer's id",
            ),
        ];
        for (body, line, words) in cases {
            let text = format!("\n[[dmx]]\nname = \"f\"\nprotocol = \"sacn\"\n{body}\n");
            let (at, message) = parse(&text).expect_err(body);
            assert!(message.contains(words), "{body}: {message}");
            assert_eq!(at, line, "{body}: {message}");
        }
    }

    #[test]
    fn an_address_takes_the_protocols_port_unless_it_names_one() {
        assert_eq!(
            address("10.0.0.5", Protocol::Artnet),
            "10.0.0.5:6454".parse().ok()
        );
        assert_eq!(
            address("10.0.0.5:7000", Protocol::Sacn),
            "10.0.0.5:7000".parse().ok()
        );
        assert_eq!(address("::1", Protocol::Sacn), "[::1]:5568".parse().ok());
        assert_eq!(address("0.0.0.0", Protocol::Sacn), None);
    }
}
