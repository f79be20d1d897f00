//! HAP frames decoded on the CPU, for a GPU without BC compression: the
//! blocks (BC1, BC3, BC4, as the S3TC and RGTC extensions define them)
//! expanded to RGBA, and HAP Q's scaled YCoCg turned into RGB the way
//! `shaders/media/hap.wgsl` does on the GPU, so both paths show the same
//! picture.

use super::frame::BlockFormat;
use super::mov::HapCodec;

/// Decodes the unpacked `blocks` of a `codec` frame of `size` into
/// `rgba` (resized; 8-bit sRGB and alpha, rows top first).
pub fn to_rgba(codec: HapCodec, size: [u32; 2], blocks: &[u8], rgba: &mut Vec<u8>) {
    rgba.clear();
    rgba.resize(size[0] as usize * size[1] as usize * 4, 255);
    let mut at = 0;
    for (n, texture) in codec.textures().iter().enumerate() {
        let length = texture.format.texture_bytes(size);
        let Some(texture_blocks) = blocks.get(at..at + length) else {
            return;
        };
        // A second texture is HAP Q Alpha's alpha; HAP Alpha-Only's one
        // texture is shown as grey.
        let channels = match (codec, n) {
            (HapCodec::HapAlphaOnly, _) => 0..3,
            (_, 1) => 3..4,
            _ => 0..4,
        };
        decode(texture.format, size, texture_blocks, rgba, channels);
        // HAP Q's colour is turned into RGB before its alpha (which takes
        // the place of Y) comes in.
        if n == 0 && matches!(codec, HapCodec::HapQ | HapCodec::HapQAlpha) {
            for texel in rgba.chunks_exact_mut(4) {
                let rgb = from_scaled_ycocg([texel[0], texel[1], texel[2], texel[3]]);
                texel.copy_from_slice(&[rgb[0], rgb[1], rgb[2], 255]);
            }
        }
        at += length;
    }
    if codec == HapCodec::Hap {
        rgba.chunks_exact_mut(4).for_each(|texel| texel[3] = 255);
    }
}

/// Writes the texels of `blocks` (of `format`, a texture of `size`) into
/// the `channels` of `rgba`; a one-channel format fills every channel
/// named with its value.
fn decode(
    format: BlockFormat,
    [width, height]: [u32; 2],
    blocks: &[u8],
    rgba: &mut [u8],
    channels: std::ops::Range<usize>,
) {
    let across = width.div_ceil(4) as usize;
    for (n, block) in blocks.chunks_exact(format.block_bytes()).enumerate() {
        let texels: [[u8; 4]; 16] = match format {
            BlockFormat::Bc1 => colour_block(block, false),
            BlockFormat::Bc3 => {
                let mut texels = colour_block(&block[8..], true);
                for (texel, alpha) in texels.iter_mut().zip(alpha_block(&block[..8])) {
                    texel[3] = alpha;
                }
                texels
            }
            BlockFormat::Bc4 => alpha_block(block).map(|value| [value; 4]),
        };
        let (bx, by) = ((n % across) * 4, (n / across) * 4);
        for (i, texel) in texels.iter().enumerate() {
            let (x, y) = (bx + i % 4, by + i / 4);
            if x >= width as usize || y >= height as usize {
                continue;
            }
            let at = (y * width as usize + x) * 4;
            for c in channels.clone() {
                rgba[at + c] = texel[c];
            }
        }
    }
}

/// A BC1 colour block's 16 texels; `opaque` (BC3's colour) always takes
/// the four-colour mode.
fn colour_block(block: &[u8], opaque: bool) -> [[u8; 4]; 16] {
    let raw = [
        u16::from_le_bytes([block[0], block[1]]),
        u16::from_le_bytes([block[2], block[3]]),
    ];
    let [c0, c1] = raw.map(|c| {
        let (r, g, b) = ((c >> 11) & 31, (c >> 5) & 63, c & 31);
        [(r << 3 | r >> 2), (g << 2 | g >> 4), (b << 3 | b >> 2)].map(|v| v as u32)
    });
    let mix = |a: u32, b: u32, wa: u32, wb: u32| ((a * wa + b * wb) / (wa + wb)) as u8;
    let blend = |wa, wb| [0, 1, 2].map(|i| mix(c0[i], c1[i], wa, wb));
    let opaque_colour = |rgb: [u8; 3]| [rgb[0], rgb[1], rgb[2], 255];
    let palette = if opaque || raw[0] > raw[1] {
        [
            opaque_colour(blend(1, 0)),
            opaque_colour(blend(0, 1)),
            opaque_colour(blend(2, 1)),
            opaque_colour(blend(1, 2)),
        ]
    } else {
        [
            opaque_colour(blend(1, 0)),
            opaque_colour(blend(0, 1)),
            opaque_colour(blend(1, 1)),
            [0, 0, 0, 0],
        ]
    };
    let indices = u32::from_le_bytes([block[4], block[5], block[6], block[7]]);
    std::array::from_fn(|i| palette[(indices >> (2 * i) & 3) as usize])
}

/// A BC4 block (or BC3's alpha half): 16 values between two end points.
fn alpha_block(block: &[u8]) -> [u8; 16] {
    let (a0, a1) = (u32::from(block[0]), u32::from(block[1]));
    let palette: [u8; 8] = std::array::from_fn(|i| {
        let i = i as u32;
        match i {
            0 => a0 as u8,
            1 => a1 as u8,
            _ if a0 > a1 => (((8 - i) * a0 + (i - 1) * a1) / 7) as u8,
            6 => 0,
            7 => 255,
            _ => (((6 - i) * a0 + (i - 1) * a1) / 5) as u8,
        }
    });
    let mut bits = 0u64;
    for (k, byte) in block[2..8].iter().enumerate() {
        bits |= u64::from(*byte) << (8 * k);
    }
    std::array::from_fn(|i| palette[(bits >> (3 * i) & 7) as usize])
}

/// RGB from a texel of scaled YCoCg (Co, Cg, scale, Y), after van
/// Waveren and Castaño: the chroma offset by a half and divided by the
/// block's scale (1, 2 or 4, stored as (scale − 1) × 8).
fn from_scaled_ycocg([co, cg, scale, y]: [u8; 4]) -> [u8; 3] {
    let unit = |v: u8| f32::from(v) / 255.0;
    let scale = unit(scale) * (255.0 / 8.0) + 1.0;
    let offset = 128.0 / 255.0;
    let (co, cg, y) = (
        (unit(co) - offset) / scale,
        (unit(cg) - offset) / scale,
        unit(y),
    );
    [y + co - cg, y + cg, y - co - cg].map(|v| (v.clamp(0.0, 1.0) * 255.0).round() as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BC1 block from two 5:6:5 colours and the texels' indices.
    fn bc1(c0: u16, c1: u16, indices: [u32; 16]) -> Vec<u8> {
        let bits =
            (indices.iter().enumerate()).fold(0u32, |bits, (i, &index)| bits | index << (2 * i));
        [c0.to_le_bytes(), c1.to_le_bytes()]
            .concat()
            .into_iter()
            .chain(bits.to_le_bytes())
            .collect()
    }

    #[test]
    fn bc1_blocks_give_their_end_points_and_the_thirds_between() {
        let (red, blue) = (0xF800, 0x001F);
        let indices = std::array::from_fn(|i| (i % 4) as u32);
        let mut rgba = Vec::new();
        to_rgba(HapCodec::Hap, [4, 4], &bc1(red, blue, indices), &mut rgba);
        assert_eq!(
            &rgba[..16],
            &[
                255, 0, 0, 255, 0, 0, 255, 255, 170, 0, 85, 255, 85, 0, 170, 255
            ]
        );
        // End points in the other order: three colours, the fourth
        // transparent black (shown opaque: HAP has no alpha).
        let mut rgba = Vec::new();
        to_rgba(HapCodec::Hap, [4, 4], &bc1(blue, red, indices), &mut rgba);
        assert_eq!(&rgba[8..16], &[127, 0, 127, 255, 0, 0, 0, 255]);
        // BC3's colour half always takes four colours.
        let opaque = [
            [255u8, 255, 0, 0, 0, 0, 0, 0].to_vec(),
            bc1(blue, red, indices),
        ]
        .concat();
        to_rgba(HapCodec::HapAlpha, [4, 4], &opaque, &mut rgba);
        assert_eq!(&rgba[8..16], &[85, 0, 170, 255, 170, 0, 85, 255]);
    }

    #[test]
    fn alpha_blocks_interpolate_eight_or_six_values() {
        let indices = |values: [u64; 16]| {
            let bits = (values.iter().enumerate()).fold(0u64, |b, (i, &v)| b | v << (3 * i));
            bits.to_le_bytes()[..6].to_vec()
        };
        let ramp = std::array::from_fn(|i| (i % 8) as u64);
        let eight = alpha_block(&[&[210u8, 70][..], &indices(ramp)].concat());
        assert_eq!(&eight[..8], &[210, 70, 190, 170, 150, 130, 110, 90]);
        let six = alpha_block(&[&[70u8, 210][..], &indices(ramp)].concat());
        assert_eq!(&six[..8], &[70, 210, 98, 126, 154, 182, 0, 255]);
    }

    #[test]
    fn scaled_ycocg_turns_back_into_the_colour_it_was_made_from() {
        // Y, Co, Cg of (140, 120, 90) at scale 2: Co = (R − B) / 2,
        // Cg = (−R + 2G − B) / 4, Y = (R + 2G + B) / 4.
        let (r, g, b) = (140.0f32, 120.0, 90.0);
        let (y, co, cg) = (
            (r + 2.0 * g + b) / 4.0,
            (r - b) / 2.0,
            (-r + 2.0 * g - b) / 4.0,
        );
        let stored = |c: f32| (c * 2.0 + 128.0).round() as u8;
        let rgb = from_scaled_ycocg([stored(co), stored(cg), 8, y.round() as u8]);
        for (got, want) in rgb.iter().zip([r, g, b]) {
            assert!((f32::from(*got) - want).abs() <= 1.0, "{rgb:?}");
        }
    }

    #[test]
    fn a_size_off_the_blocks_takes_the_texels_inside_it() {
        let white = bc1(0xFFFF, 0xFFFF, [0; 16]);
        let black = bc1(0, 0, [0; 16]);
        let mut rgba = Vec::new();
        to_rgba(HapCodec::Hap, [6, 3], &[white, black].concat(), &mut rgba);
        assert_eq!(rgba.len(), 6 * 3 * 4);
        let row: Vec<u8> = rgba[..24].chunks(4).map(|t| t[0]).collect();
        assert_eq!(row, [255, 255, 255, 255, 0, 0]);
    }
}
