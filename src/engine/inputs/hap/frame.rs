//! A HAP frame unpacked to its texture blocks, as Vidvox's HAP
//! specification lays it out: sections, each with a 4- or 8-byte header
//! (size and type); a top-level section per texture whose type's high
//! nibble is the second-stage compressor (none, Snappy, or chunks given by
//! decode instructions) and low nibble the texture format; HAP Q Alpha's
//! two textures inside one "multiple images" section. The blocks come out
//! exactly as long as the clip's size says (rows of 4×4 blocks, the last
//! row and column padded), or it is an error: a damaged or hostile frame
//! never makes more than that.

use super::mov::HapCodec;

/// Section type of two textures in one frame.
const MULTIPLE_IMAGES: u8 = 0x0D;
/// Section types inside the decode instructions of a chunked texture.
const INSTRUCTIONS: u8 = 0x01;
const CHUNK_COMPRESSORS: u8 = 0x02;
const CHUNK_SIZES: u8 = 0x03;
const CHUNK_OFFSETS: u8 = 0x04;
/// Second-stage compressors (a type's high nibble, a chunk's byte).
const STORED: u8 = 0x0A;
const SNAPPY: u8 = 0x0B;
const CHUNKED: u8 = 0x0C;

/// How a texture's 4×4 blocks are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockFormat {
    /// BC1 (DXT1): colour, 8 bytes a block.
    Bc1,
    /// BC3 (DXT5): colour and alpha, 16 bytes a block.
    Bc3,
    /// BC4 (RGTC1): one channel, 8 bytes a block.
    Bc4,
}

impl BlockFormat {
    /// Bytes of one block.
    pub fn block_bytes(self) -> usize {
        match self {
            Self::Bc1 | Self::Bc4 => 8,
            Self::Bc3 => 16,
        }
    }

    /// The bytes of a texture of `size` pixels.
    pub fn texture_bytes(self, [width, height]: [u32; 2]) -> usize {
        width.div_ceil(4) as usize * height.div_ceil(4) as usize * self.block_bytes()
    }
}

/// One texture of a codec: the format nibble its section carries, and how
/// its blocks are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Texture {
    /// The low nibble of its section's type.
    pub section: u8,
    /// Its blocks.
    pub format: BlockFormat,
}

impl HapCodec {
    /// The textures of a frame, in the order they are laid out unpacked.
    pub fn textures(self) -> &'static [Texture] {
        const RGB: Texture = Texture {
            section: 0xB,
            format: BlockFormat::Bc1,
        };
        const RGBA: Texture = Texture {
            section: 0xE,
            format: BlockFormat::Bc3,
        };
        const YCOCG: Texture = Texture {
            section: 0xF,
            format: BlockFormat::Bc3,
        };
        const ALPHA: Texture = Texture {
            section: 0x1,
            format: BlockFormat::Bc4,
        };
        match self {
            Self::Hap => &[RGB],
            Self::HapAlpha => &[RGBA],
            Self::HapQ => &[YCOCG],
            Self::HapQAlpha => &[YCOCG, ALPHA],
            Self::HapAlphaOnly => &[ALPHA],
        }
    }

    /// The bytes of one frame of `size` unpacked: its textures' blocks.
    pub fn frame_bytes(self, size: [u32; 2]) -> usize {
        (self.textures().iter())
            .map(|t| t.format.texture_bytes(size))
            .sum()
    }
}

/// Why a frame was not unpacked.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A section runs past the frame's end.
    #[error("a section runs past the frame's end")]
    Truncated,
    /// A texture the codec has is not in the frame.
    #[error("no texture of type {0:#x} in the frame")]
    Missing(u8),
    /// A section's compressor is none HAP has.
    #[error("an unknown compressor {0:#x}")]
    Compressor(u8),
    /// The texture unpacks to another length than its size gives.
    #[error("a texture of {found} bytes where its size takes {wanted}")]
    Length {
        /// What the size takes.
        wanted: usize,
        /// What the frame held.
        found: usize,
    },
    /// Snappy could not decompress it.
    #[error("damaged Snappy data: {0}")]
    Snappy(#[from] snap::Error),
    /// A chunked texture's decode instructions are damaged.
    #[error("damaged decode instructions")]
    Instructions,
}

/// Unpacks `frame`, of `codec` at `size`, into `blocks` (resized): each
/// texture's blocks in [`HapCodec::textures`] order.
pub fn unpack(
    frame: &[u8],
    codec: HapCodec,
    size: [u32; 2],
    blocks: &mut Vec<u8>,
) -> Result<(), FrameError> {
    blocks.resize(codec.frame_bytes(size), 0);
    let (kind, body) = section(frame)?.ok_or(FrameError::Truncated)?.0;
    let top: Vec<Section<'_>> = if kind == MULTIPLE_IMAGES {
        sections(body).collect::<Result<_, _>>()?
    } else {
        vec![(kind, body)]
    };
    let mut at = 0;
    for texture in codec.textures() {
        let length = texture.format.texture_bytes(size);
        let (kind, body) = (top.iter())
            .find(|(kind, _)| kind & 0x0F == texture.section)
            .ok_or(FrameError::Missing(texture.section))?;
        decompress(kind >> 4, body, &mut blocks[at..at + length])?;
        at += length;
    }
    Ok(())
}

/// Decompresses one texture section's `body` by `compressor` into all of
/// `out`.
fn decompress(compressor: u8, body: &[u8], out: &mut [u8]) -> Result<(), FrameError> {
    match compressor {
        STORED | SNAPPY => chunk(compressor, body, out),
        CHUNKED => {
            let ((kind, instructions), data) = section(body)?.ok_or(FrameError::Instructions)?;
            if kind != INSTRUCTIONS {
                return Err(FrameError::Instructions);
            }
            let mut compressors = None;
            let mut sizes = None;
            let mut offsets = None;
            for entry in sections(instructions) {
                match entry? {
                    (CHUNK_COMPRESSORS, table) => compressors = Some(table),
                    (CHUNK_SIZES, table) => sizes = Some(words(table)),
                    (CHUNK_OFFSETS, table) => offsets = Some(words(table)),
                    _ => {}
                }
            }
            let (Some(compressors), Some(sizes)) = (compressors, sizes) else {
                return Err(FrameError::Instructions);
            };
            if sizes.len() != compressors.len()
                || offsets.as_ref().is_some_and(|o| o.len() != sizes.len())
            {
                return Err(FrameError::Instructions);
            }
            let (mut read, mut written) = (0usize, 0usize);
            for (n, (&compressor, &size)) in compressors.iter().zip(&sizes).enumerate() {
                let start = offsets.as_ref().map_or(read, |o| o[n] as usize);
                let input = start
                    .checked_add(size as usize)
                    .and_then(|end| data.get(start..end))
                    .ok_or(FrameError::Truncated)?;
                let length = match compressor {
                    SNAPPY => snap::raw::decompress_len(input)?,
                    _ => input.len(),
                };
                let rest = out.len() - written;
                let target = out
                    .get_mut(written..written + length)
                    .ok_or(FrameError::Length {
                        wanted: rest,
                        found: length,
                    })?;
                chunk(compressor, input, target)?;
                read = start + size as usize;
                written += length;
            }
            match written == out.len() {
                true => Ok(()),
                false => Err(FrameError::Length {
                    wanted: out.len(),
                    found: written,
                }),
            }
        }
        other => Err(FrameError::Compressor(other)),
    }
}

/// One chunk (or a whole texture) stored or Snappy-compressed, into all of
/// `out`.
fn chunk(compressor: u8, input: &[u8], out: &mut [u8]) -> Result<(), FrameError> {
    let found = match compressor {
        STORED => {
            let found = input.len();
            if found == out.len() {
                out.copy_from_slice(input);
            }
            found
        }
        SNAPPY => {
            let found = snap::raw::decompress_len(input)?;
            if found == out.len() {
                snap::raw::Decoder::new().decompress(input, out)?;
            }
            found
        }
        other => return Err(FrameError::Compressor(other)),
    };
    match found == out.len() {
        true => Ok(()),
        false => Err(FrameError::Length {
            wanted: out.len(),
            found,
        }),
    }
}

/// The little-endian 32-bit words of a table.
fn words(table: &[u8]) -> Vec<u32> {
    (table.chunks_exact(4))
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

/// A section: its type and contents.
type Section<'a> = (u8, &'a [u8]);

/// The section at the start of `data` and what follows it; `None` when
/// `data` is empty.
fn section(data: &[u8]) -> Result<Option<(Section<'_>, &[u8])>, FrameError> {
    if data.is_empty() {
        return Ok(None);
    }
    let header = data.get(..4).ok_or(FrameError::Truncated)?;
    let short = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    let (length, start): (usize, usize) = match short {
        0 => {
            let long = data.get(4..8).ok_or(FrameError::Truncated)?;
            (
                u32::from_le_bytes([long[0], long[1], long[2], long[3]]) as usize,
                8,
            )
        }
        short => (short, 4),
    };
    let body = (start.checked_add(length))
        .and_then(|end| data.get(start..end))
        .ok_or(FrameError::Truncated)?;
    Ok(Some(((header[3], body), &data[start + length..])))
}

/// The sections laid one after another in `data`.
fn sections(mut data: &[u8]) -> impl Iterator<Item = Result<Section<'_>, FrameError>> {
    std::iter::from_fn(move || match section(data) {
        Ok(Some((found, rest))) => {
            data = rest;
            Some(Ok(found))
        }
        Ok(None) => None,
        Err(why) => {
            data = &[];
            Some(Err(why))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A section of `kind` holding `body`, with the short header or the
    /// long one.
    fn section_of(kind: u8, body: &[u8], long: bool) -> Vec<u8> {
        let mut out = match long {
            true => [&[0, 0, 0, kind][..], &(body.len() as u32).to_le_bytes()].concat(),
            false => [&(body.len() as u32).to_le_bytes()[..3], &[kind]].concat(),
        };
        out.extend_from_slice(body);
        out
    }

    /// The 4×8 texture's two BC1 blocks, distinct bytes.
    fn rgb_blocks() -> Vec<u8> {
        (0..16).collect()
    }

    #[test]
    fn stored_snappy_and_long_headed_textures_unpack_to_their_blocks() {
        let packed = snap::raw::Encoder::new().compress_vec(&rgb_blocks());
        let Ok(packed) = packed else {
            panic!("snappy");
        };
        for frame in [
            section_of(0xAB, &rgb_blocks(), false),
            section_of(0xAB, &rgb_blocks(), true),
            section_of(0xBB, &packed, false),
        ] {
            let mut blocks = Vec::new();
            let unpacked = unpack(&frame, HapCodec::Hap, [4, 8], &mut blocks);
            assert!(unpacked.is_ok(), "{unpacked:?}");
            assert_eq!(blocks, rgb_blocks());
        }
    }

    #[test]
    fn chunks_unpack_in_order_with_or_without_their_offsets() {
        let all = rgb_blocks();
        let (first, second) = all.split_at(6);
        let Ok(second_packed) = snap::raw::Encoder::new().compress_vec(second) else {
            panic!("snappy");
        };
        let sizes = [first.len() as u32, second_packed.len() as u32];
        let size_table: Vec<u8> = sizes.iter().flat_map(|s| s.to_le_bytes()).collect();
        // The second chunk first in the data, found by its offset.
        let data_swapped = [&second_packed[..], first].concat();
        let offsets: Vec<u8> = [second_packed.len() as u32, 0]
            .iter()
            .flat_map(|o| o.to_le_bytes())
            .collect();
        for (data, offsets) in [
            ([first, &second_packed[..]].concat(), None),
            (data_swapped, Some(offsets)),
        ] {
            let mut instructions = [
                section_of(CHUNK_COMPRESSORS, &[STORED, SNAPPY], false),
                section_of(CHUNK_SIZES, &size_table, false),
            ]
            .concat();
            if let Some(offsets) = offsets {
                instructions.extend(section_of(CHUNK_OFFSETS, &offsets, false));
            }
            let body = [section_of(INSTRUCTIONS, &instructions, false), data].concat();
            let frame = section_of(0xCB, &body, false);
            let mut blocks = Vec::new();
            let unpacked = unpack(&frame, HapCodec::Hap, [4, 8], &mut blocks);
            assert!(unpacked.is_ok(), "{unpacked:?}");
            assert_eq!(blocks, rgb_blocks());
        }
    }

    #[test]
    fn hap_q_alpha_finds_both_textures_in_any_order() {
        let colour: Vec<u8> = (0..16).collect();
        let alpha: Vec<u8> = (100..108).collect();
        let images = [
            section_of(0xA1, &alpha, false),
            section_of(0xAF, &colour, false),
        ]
        .concat();
        let frame = section_of(MULTIPLE_IMAGES, &images, false);
        let mut blocks = Vec::new();
        let unpacked = unpack(&frame, HapCodec::HapQAlpha, [4, 4], &mut blocks);
        assert!(unpacked.is_ok(), "{unpacked:?}");
        assert_eq!(blocks, [colour, alpha].concat());
    }

    #[test]
    fn damaged_frames_are_errors_that_never_make_more_than_the_size() {
        let mut blocks = Vec::new();
        let short = section_of(0xAB, &rgb_blocks()[..8], false);
        let long = section_of(0xAB, &[0u8; 24], false);
        let cut = section_of(0xAB, &rgb_blocks(), false)[..10].to_vec();
        let odd = section_of(0xDB, &rgb_blocks(), false);
        let missing = section_of(0xAE, &[0u8; 32], false);
        for (frame, want) in [
            (short, "a texture of 8 bytes where its size takes 16"),
            (long, "a texture of 24 bytes"),
            (cut, "runs past"),
            (odd, "unknown compressor"),
            (missing, "no texture of type 0xb"),
            (Vec::new(), "runs past"),
        ] {
            let said = match unpack(&frame, HapCodec::Hap, [4, 8], &mut blocks) {
                Ok(()) => panic!("{frame:?} unpacked"),
                Err(why) => why.to_string(),
            };
            assert!(said.contains(want), "{said}");
            assert_eq!(blocks.len(), 16);
        }
    }
}
