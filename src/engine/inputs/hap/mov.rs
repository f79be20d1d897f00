//! The QuickTime container (MOV, and MP4 which shares its atoms) read as
//! far as a HAP clip needs: the first video track's codec, size, rate and
//! where each frame's bytes lie in the file (the sample table). Every HAP
//! frame is a key frame, so playing is reading sample n in order; edit
//! lists and reordering do not apply. Read in bounds: a movie header of at
//! most [`MAX_MOVIE_BYTES`], at most [`MAX_SAMPLES`] frames, each of at
//! most [`MAX_SAMPLE_BYTES`], a [`MAX_TOP_ATOMS`] top-level atoms looked
//! through, so neither a damaged nor a hostile file makes it read or hold
//! more; a movie whose header is larger is left to ffmpeg unread. A file
//! that is no QuickTime movie, or whose video is not HAP, is `None`:
//! ffmpeg plays it.

use std::io::{Read, Seek, SeekFrom};

use super::super::video::{MAX_VIDEO_FPS, MAX_VIDEO_SIDE};

/// The largest movie header (`moov`) read: an hour of 60 fps takes a few
/// megabytes of tables.
pub const MAX_MOVIE_BYTES: u64 = 64 << 20;
/// The most frames a clip may have: 19 hours at 60 fps.
pub const MAX_SAMPLES: usize = 1 << 22;
/// The largest frame: a 4096² HAP Q Alpha frame uncompressed is 24 MiB.
pub const MAX_SAMPLE_BYTES: u32 = 64 << 20;
/// The most top-level atoms looked through for the movie header.
pub const MAX_TOP_ATOMS: usize = 4096;

/// The HAP flavours played on the GPU, by their QuickTime codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HapCodec {
    /// `Hap1`: RGB in BC1 (DXT1).
    Hap,
    /// `Hap5`: RGBA in BC3 (DXT5).
    HapAlpha,
    /// `HapY`: scaled YCoCg in BC3.
    HapQ,
    /// `HapM`: scaled YCoCg in BC3 and alpha in BC4.
    HapQAlpha,
    /// `HapA`: alpha alone in BC4, shown as grey.
    HapAlphaOnly,
}

impl HapCodec {
    /// The codec a sample description's four characters name, if HAP.
    pub fn from_code(code: &[u8; 4]) -> Option<Self> {
        match code {
            b"Hap1" => Some(Self::Hap),
            b"Hap5" => Some(Self::HapAlpha),
            b"HapY" => Some(Self::HapQ),
            b"HapM" => Some(Self::HapQAlpha),
            b"HapA" => Some(Self::HapAlphaOnly),
            _ => None,
        }
    }

    /// Its name as the applications that encode it say it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Hap => "HAP",
            Self::HapAlpha => "HAP Alpha",
            Self::HapQ => "HAP Q",
            Self::HapQAlpha => "HAP Q Alpha",
            Self::HapAlphaOnly => "HAP Alpha-Only",
        }
    }
}

/// Where one frame's bytes are in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Bytes from the start of the file.
    pub offset: u64,
    /// Its length.
    pub bytes: u32,
}

/// A clip's HAP video track.
#[derive(Debug, Clone, PartialEq)]
pub struct HapTrack {
    /// Its flavour.
    pub codec: HapCodec,
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// Frames per second, the mean over the track.
    pub fps: f64,
    /// Length in seconds.
    pub duration: f64,
    /// Every frame, in the order shown.
    pub samples: Vec<Sample>,
}

/// Why a HAP track was found but cannot be played.
#[derive(Debug, thiserror::Error)]
pub enum MovError {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// A table of the track is cut short or contradicts another.
    #[error("its {0} table is damaged")]
    Damaged(&'static str),
    /// Over [`MAX_SAMPLES`] frames.
    #[error("{0} frames, over the {MAX_SAMPLES} a clip may have")]
    TooManyFrames(u64),
    /// A frame over [`MAX_SAMPLE_BYTES`].
    #[error("a frame of {0} bytes, over the {MAX_SAMPLE_BYTES} a frame may have")]
    FrameTooLarge(u32),
    /// A side empty or over the largest clip's.
    #[error("{0}x{1}: clips may be at most {MAX_VIDEO_SIDE} pixels a side")]
    Size(u32, u32),
    /// No rate, or over the highest.
    #[error("{0:.1} fps: clips may run at most {MAX_VIDEO_FPS} fps")]
    Rate(f64),
}

/// The HAP video track of `file`, if it is a QuickTime movie whose first
/// video track is HAP.
pub fn hap_track(mut file: impl Read + Seek) -> Result<Option<HapTrack>, MovError> {
    let Some(movie) = movie_header(&mut file)? else {
        return Ok(None);
    };
    for (kind, track) in atoms(&movie) {
        if &kind != b"trak" {
            continue;
        }
        let Some(media) = child(track, b"mdia") else {
            continue;
        };
        let handler = child(media, b"hdlr").and_then(|h| h.get(8..12));
        if handler != Some(b"vide") {
            continue;
        }
        let Some(table) = child(media, b"minf").and_then(|m| child(m, b"stbl")) else {
            return Ok(None);
        };
        return read_track(media, table);
    }
    Ok(None)
}

/// The `moov` atom's contents, read from a file of top-level atoms.
fn movie_header(file: &mut (impl Read + Seek)) -> Result<Option<Vec<u8>>, MovError> {
    let mut at = 0u64;
    for _ in 0..MAX_TOP_ATOMS {
        file.seek(SeekFrom::Start(at))?;
        let mut header = [0u8; 8];
        if file.read_exact(&mut header).is_err() {
            return Ok(None);
        }
        let kind: [u8; 4] = [header[4], header[5], header[6], header[7]];
        let (length, header_length) = match be32(&header, 0) {
            1 => {
                let mut large = [0u8; 8];
                if file.read_exact(&mut large).is_err() {
                    return Ok(None);
                }
                (u64::from_be_bytes(large), 16)
            }
            // To the end of the file.
            0 => (file.seek(SeekFrom::End(0))? - at, 8),
            length => (u64::from(length), 8),
        };
        if length < header_length {
            return Ok(None);
        }
        if &kind == b"moov" {
            let body = length - header_length;
            // The codec is not known yet: a long H.264 movie's header may
            // be this large, and ffmpeg plays it (a HAP one too, on the CPU).
            if body > MAX_MOVIE_BYTES {
                return Ok(None);
            }
            file.seek(SeekFrom::Start(at + header_length))?;
            let mut movie = vec![0u8; body as usize];
            file.read_exact(&mut movie)?;
            return Ok(Some(movie));
        }
        at += length;
    }
    Ok(None)
}

/// The track whose media atom is `media` and sample table `table`, if HAP.
fn read_track(media: &[u8], table: &[u8]) -> Result<Option<HapTrack>, MovError> {
    // The first sample description: size, code, 6 reserved, 2 reference,
    // 16 of version and vendor, then width and height.
    let Some(description) = child(table, b"stsd").and_then(|d| d.get(8..)) else {
        return Ok(None);
    };
    let Some(code) = description.get(4..8) else {
        return Ok(None);
    };
    let Some(codec) = code.try_into().ok().and_then(HapCodec::from_code) else {
        return Ok(None);
    };
    let dimension = |at| {
        let bytes = description
            .get(at..at + 2)
            .ok_or(MovError::Damaged("stsd"))?;
        Ok::<u32, MovError>(u32::from(u16::from_be_bytes([bytes[0], bytes[1]])))
    };
    let size = [dimension(32)?, dimension(34)?];
    if size.iter().any(|&side| side == 0 || side > MAX_VIDEO_SIDE) {
        return Err(MovError::Size(size[0], size[1]));
    }
    let scale = timescale(media)?;
    let samples = samples(table)?;
    let ticks = table_entries(table, b"stts", 8)?
        .map(|entry| u64::from(be32(entry, 0)) * u64::from(be32(entry, 4)))
        .sum::<u64>();
    let duration = ticks as f64 / scale;
    let fps = samples.len() as f64 / duration;
    if !fps.is_finite() || fps <= 0.0 || fps > MAX_VIDEO_FPS {
        return Err(MovError::Rate(fps));
    }
    Ok(Some(HapTrack {
        codec,
        size,
        fps,
        duration,
        samples,
    }))
}

/// The media's time units a second (`mdhd`, version 0 or 1).
fn timescale(media: &[u8]) -> Result<f64, MovError> {
    let header = child(media, b"mdhd").ok_or(MovError::Damaged("mdhd"))?;
    let at = if header.first() == Some(&1) { 20 } else { 12 };
    let scale = header.get(at..at + 4).ok_or(MovError::Damaged("mdhd"))?;
    match be32(scale, 0) {
        0 => Err(MovError::Damaged("mdhd")),
        scale => Ok(f64::from(scale)),
    }
}

/// Where every frame lies: the sizes (`stsz`) laid out in the chunks
/// (`stco` or `co64`) as many to a chunk as `stsc` says.
fn samples(table: &[u8]) -> Result<Vec<Sample>, MovError> {
    let sizes = child(table, b"stsz").ok_or(MovError::Damaged("stsz"))?;
    let (fixed, count) = (be32_at(sizes, 4, "stsz")?, be32_at(sizes, 8, "stsz")?);
    if count as usize > MAX_SAMPLES {
        return Err(MovError::TooManyFrames(u64::from(count)));
    }
    let size_of = |n: usize| match fixed {
        0 => be32_at(sizes, 12 + 4 * n, "stsz"),
        fixed => Ok(fixed),
    };
    let chunks: Vec<u64> = match table_entries(table, b"stco", 4) {
        Ok(entries) => entries.map(|e| u64::from(be32(e, 0))).collect(),
        Err(_) => table_entries(table, b"co64", 8)?
            .map(|e| u64::from(be32(e, 0)) << 32 | u64::from(be32(e, 4)))
            .collect(),
    };
    let runs: Vec<(u32, u32)> = table_entries(table, b"stsc", 12)?
        .map(|e| (be32(e, 0), be32(e, 4)))
        .collect();
    let mut samples = Vec::with_capacity(count as usize);
    let mut run = 0;
    for (index, &offset) in chunks.iter().enumerate() {
        // Chunks are numbered from 1; each run lasts until the next begins.
        let number = index as u64 + 1;
        while runs
            .get(run + 1)
            .is_some_and(|(first, _)| u64::from(*first) <= number)
        {
            run += 1;
        }
        let per_chunk = match runs.get(run) {
            Some((first, per_chunk)) if u64::from(*first) <= number => *per_chunk,
            _ => 0,
        };
        let mut at = offset;
        for _ in 0..per_chunk {
            if samples.len() == count as usize {
                break;
            }
            let bytes = size_of(samples.len())?;
            if bytes > MAX_SAMPLE_BYTES {
                return Err(MovError::FrameTooLarge(bytes));
            }
            samples.push(Sample { offset: at, bytes });
            at += u64::from(bytes);
        }
    }
    if samples.len() != count as usize || samples.is_empty() {
        return Err(MovError::Damaged("stsc"));
    }
    Ok(samples)
}

/// The fixed-size entries of the full atom `kind` in `table`, each
/// `length` bytes, after its version, flags and count.
fn table_entries<'a>(
    table: &'a [u8],
    kind: &'static [u8; 4],
    length: usize,
) -> Result<impl Iterator<Item = &'a [u8]>, MovError> {
    let name = std::str::from_utf8(kind).unwrap_or("sample");
    let atom = child(table, kind).ok_or(MovError::Damaged(name))?;
    let count = be32_at(atom, 4, name)? as usize;
    let entries = atom
        .get(8..8 + count.saturating_mul(length).min(atom.len()))
        .filter(|entries| entries.len() == count * length)
        .ok_or(MovError::Damaged(name))?;
    Ok(entries.chunks_exact(length))
}

/// The atoms laid one after another in `data`: kind and contents. A
/// damaged length ends the list.
fn atoms(data: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let length = rest.get(..4).map(|b| be32(b, 0) as usize)?;
        let kind: [u8; 4] = rest.get(4..8)?.try_into().ok()?;
        let (body, header) = match length {
            0 => (rest.len(), 8),
            1 => {
                let large = rest.get(8..16)?;
                let high = be32(large, 0);
                (
                    usize::try_from(u64::from(high) << 32 | u64::from(be32(large, 4))).ok()?,
                    16,
                )
            }
            length => (length, 8),
        };
        let contents = rest.get(header..body)?;
        rest = &rest[body..];
        Some((kind, contents))
    })
}

/// The contents of the first atom `kind` in `data`.
fn child<'a>(data: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    atoms(data)
        .find(|(k, _)| k == kind)
        .map(|(_, contents)| contents)
}

/// The big-endian 32-bit number at `at` (the caller has checked the length).
fn be32(bytes: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The big-endian 32-bit number at `at` of the atom `name`, if it is there.
fn be32_at(bytes: &[u8], at: usize, name: &'static str) -> Result<u32, MovError> {
    match bytes.get(at..at + 4) {
        Some(number) => Ok(be32(number, 0)),
        None => Err(MovError::Damaged(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(body);
        out
    }

    fn full(kind: &[u8; 4], words: &[u32]) -> Vec<u8> {
        let body: Vec<u8> = [0u32]
            .iter()
            .chain(words)
            .flat_map(|w| w.to_be_bytes())
            .collect();
        atom(kind, &body)
    }

    /// A movie of `code` at 640x360, three frames of 10, 20 and 30 bytes
    /// at 25 fps: two in a chunk at 100, one at 500.
    fn movie(code: &[u8; 4], sizes: &[u32]) -> Vec<u8> {
        let mut entry = vec![0u8; 8];
        entry.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
        entry.extend_from_slice(&[0u8; 16]);
        entry.extend_from_slice(&640u16.to_be_bytes());
        entry.extend_from_slice(&360u16.to_be_bytes());
        entry.extend_from_slice(&[0u8; 50]);
        let length = entry.len() as u32;
        entry[..4].copy_from_slice(&length.to_be_bytes());
        entry[4..8].copy_from_slice(code);
        let mut description = vec![0u8, 0, 0, 0, 0, 0, 0, 1];
        description.extend(entry);
        let mut size_table = vec![0, sizes.len() as u32];
        size_table.extend_from_slice(sizes);
        let table = [
            atom(b"stsd", &description),
            full(b"stts", &[1, 3, 1000]),
            full(b"stsc", &[2, 1, 2, 1, 2, 1, 1]),
            full(b"stsz", &size_table),
            full(b"stco", &[2, 100, 500]),
        ]
        .concat();
        let media = [
            full(b"mdhd", &[0, 0, 25_000, 3000]),
            atom(b"hdlr", &[0, 0, 0, 0, 0, 0, 0, 0, b'v', b'i', b'd', b'e']),
            atom(b"minf", &atom(b"stbl", &table)),
        ]
        .concat();
        let track = atom(b"trak", &atom(b"mdia", &media));
        [
            atom(b"ftyp", b"qt  "),
            atom(b"mdat", &[0u8; 600]),
            atom(b"moov", &track),
        ]
        .concat()
    }

    #[test]
    fn a_hap_track_gives_its_frames_where_the_chunks_put_them() {
        let read = hap_track(std::io::Cursor::new(movie(b"HapY", &[10, 20, 30])));
        let Ok(Some(track)) = read else {
            panic!("{read:?}");
        };
        assert_eq!(track.codec, HapCodec::HapQ);
        assert_eq!(track.size, [640, 360]);
        assert!((track.fps - 25.0).abs() < 1e-9, "{}", track.fps);
        assert!((track.duration - 0.12).abs() < 1e-9);
        let at: Vec<(u64, u32)> = track.samples.iter().map(|s| (s.offset, s.bytes)).collect();
        assert_eq!(at, [(100, 10), (110, 20), (500, 30)]);
    }

    #[test]
    fn other_codecs_and_other_files_are_left_to_ffmpeg() {
        let other = hap_track(std::io::Cursor::new(movie(b"avc1", &[10, 20, 30])));
        assert!(matches!(other, Ok(None)), "{other:?}");
        for bytes in [&b"not a movie at all"[..], &[], &[0, 0, 0, 1]] {
            let read = hap_track(std::io::Cursor::new(bytes.to_vec()));
            assert!(matches!(read, Ok(None)), "{read:?}");
        }
        // A header over the limit is not read: the codec is not known yet.
        let mut endless = atom(b"ftyp", b"qt  ");
        endless.extend_from_slice(&(MAX_MOVIE_BYTES as u32 + 9).to_be_bytes());
        endless.extend_from_slice(b"moov");
        let read = hap_track(std::io::Cursor::new(endless));
        assert!(
            matches!(read, Ok(None)),
            "left to ffmpeg, not refused: {read:?}"
        );
    }

    #[test]
    fn a_damaged_or_oversized_hap_track_is_an_error() {
        // Four frames, where the chunks hold three.
        let longer = movie(b"Hap1", &[10, 20, 30, 40]);
        let read = hap_track(std::io::Cursor::new(longer));
        assert!(matches!(read, Err(MovError::Damaged("stsc"))), "{read:?}");
        let huge = movie(b"Hap1", &[10, MAX_SAMPLE_BYTES + 1, 30]);
        let read = hap_track(std::io::Cursor::new(huge));
        assert!(matches!(read, Err(MovError::FrameTooLarge(_))), "{read:?}");
    }
}
