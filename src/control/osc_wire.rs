//! A guard over raw OSC datagrams, run before anything decodes them: it
//! walks bundles and type tags without recursion and refuses a datagram
//! nested deeper than sylva unpacks, so no decoder, formatter or drop ever
//! recurses on a depth a stranger chose. Also the OSC time tag, read without
//! the conversions that panic on dates before 1970.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rosc::OscTime;

/// Bundles inside bundles that a datagram may nest.
pub const MAX_BUNDLE_DEPTH: usize = 16;

/// Arrays inside arrays that a message's type tag may nest.
pub const MAX_ARRAY_DEPTH: usize = 8;

/// Arguments one message may carry. A tag without argument bytes (`N`,
/// `T`, `F`, `I`) still decodes to a value in memory, so a 64 KiB datagram
/// of nothing but tags would grow 25-fold in the queue.
pub const MAX_ARGUMENTS: usize = 256;

/// Why a datagram was refused before decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Bundles nested deeper than [`MAX_BUNDLE_DEPTH`].
    #[error("bundles nested deeper than {MAX_BUNDLE_DEPTH}")]
    BundleDepth,
    /// Arrays nested deeper than [`MAX_ARRAY_DEPTH`].
    #[error("arrays nested deeper than {MAX_ARRAY_DEPTH}")]
    ArrayDepth,
    /// An array closed that was never opened, or one left open.
    #[error("unbalanced [ ] in a type tag")]
    UnbalancedArray,
    /// More than [`MAX_ARGUMENTS`] arguments in one message.
    #[error("{0} arguments in one message (at most {MAX_ARGUMENTS})")]
    Arguments(usize),
    /// A length or string that runs past the end of its container.
    #[error("truncated at byte {0}")]
    Truncated(usize),
}

const BUNDLE_HEADER: &[u8] = b"#bundle\0";

/// Checks the nesting of a datagram. Sizes inside are only followed as far
/// as needed to find nested bundles and type tags; everything else is left
/// to the decoder, which then never meets a depth above the limits.
pub fn check(datagram: &[u8]) -> Result<(), WireError> {
    // Each entry is a bundle's element range still to walk, with its depth.
    let mut open: Vec<(usize, usize, usize)> = Vec::new();
    if !datagram.starts_with(BUNDLE_HEADER) {
        return check_message(datagram);
    }
    open.push((BUNDLE_HEADER.len() + 8, datagram.len(), 1));
    while let Some((at, end, depth)) = open.pop() {
        if at + 4 > end {
            continue;
        }
        let size = u32::from_be_bytes([
            datagram[at],
            datagram[at + 1],
            datagram[at + 2],
            datagram[at + 3],
        ]) as usize;
        let start = at + 4;
        let element_end = start.checked_add(size).filter(|e| *e <= end);
        let Some(element_end) = element_end else {
            return Err(WireError::Truncated(at));
        };
        open.push((element_end, end, depth));
        let element = &datagram[start..element_end];
        if element.starts_with(BUNDLE_HEADER) {
            if depth + 1 > MAX_BUNDLE_DEPTH {
                return Err(WireError::BundleDepth);
            }
            open.push((start + BUNDLE_HEADER.len() + 8, element_end, depth + 1));
        } else {
            check_message(element)?;
        }
    }
    Ok(())
}

/// Checks a message's type tag for array depth, balance and its number
/// of arguments.
fn check_message(message: &[u8]) -> Result<(), WireError> {
    let Some(address_end) = message.iter().position(|b| *b == 0) else {
        return Err(WireError::Truncated(message.len()));
    };
    let tags_start = (address_end + 4) & !3;
    let Some(tags) = message.get(tags_start..) else {
        // A message with no type tag at all: old senders; nothing nests.
        return Ok(());
    };
    let tags = tags.split(|b| *b == 0).next().unwrap_or_default();
    // The leading `,` is not an argument.
    let arguments = tags
        .iter()
        .skip(1)
        .filter(|t| !matches!(t, b'[' | b']'))
        .count();
    if arguments > MAX_ARGUMENTS {
        return Err(WireError::Arguments(arguments));
    }
    let mut depth = 0usize;
    for tag in tags {
        match tag {
            b'[' => {
                depth += 1;
                if depth > MAX_ARRAY_DEPTH {
                    return Err(WireError::ArrayDepth);
                }
            }
            b']' => depth = depth.checked_sub(1).ok_or(WireError::UnbalancedArray)?,
            _ => {}
        }
    }
    if depth == 0 {
        Ok(())
    } else {
        Err(WireError::UnbalancedArray)
    }
}

/// Seconds between the OSC epoch (1900) and the Unix epoch (1970).
const OSC_TO_UNIX: u64 = 2_208_988_800;

/// When a bundle's time tag asks for its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Now: the "immediately" tag (0, 1), or a moment already past
    /// (including every date before 1970).
    Now,
    /// This far ahead of `now`.
    Ahead(Duration),
}

/// Reads `tag` against the wall clock `now`; never panics, whatever the tag.
pub fn due(tag: OscTime, now: SystemTime) -> Due {
    let Some(unix_seconds) = u64::from(tag.seconds).checked_sub(OSC_TO_UNIX) else {
        return Due::Now;
    };
    let nanos = (u64::from(tag.fractional) * 1_000_000_000) >> 32;
    let at = Duration::from_secs(unix_seconds) + Duration::from_nanos(nanos);
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    match at.checked_sub(now) {
        Some(ahead) if !ahead.is_zero() => Due::Ahead(ahead),
        _ => Due::Now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn padded(text: &[u8]) -> Vec<u8> {
        let mut bytes = text.to_vec();
        bytes.push(0);
        while !bytes.len().is_multiple_of(4) {
            bytes.push(0);
        }
        bytes
    }

    fn message(address: &str, tags: &str) -> Vec<u8> {
        let mut bytes = padded(address.as_bytes());
        bytes.extend(padded(tags.as_bytes()));
        bytes
    }

    fn bundle(content: &[Vec<u8>]) -> Vec<u8> {
        let mut bytes = BUNDLE_HEADER.to_vec();
        bytes.extend([0, 0, 0, 0, 0, 0, 0, 1]);
        for element in content {
            bytes.extend((element.len() as u32).to_be_bytes());
            bytes.extend(element);
        }
        bytes
    }

    #[test]
    fn nesting_within_the_limits_passes() {
        let inner = message("/a", ",[[f]]");
        let mut packet = bundle(std::slice::from_ref(&inner));
        for _ in 1..MAX_BUNDLE_DEPTH {
            packet = bundle(&[packet, inner.clone()]);
        }
        assert_eq!(check(&packet), Ok(()));
        assert!(rosc::decoder::decode_udp(&packet).is_ok());
    }

    #[test]
    fn deep_bundles_and_arrays_are_refused() {
        let mut packet = bundle(&[message("/a", ",")]);
        for _ in 0..MAX_BUNDLE_DEPTH {
            packet = bundle(&[packet]);
        }
        assert_eq!(check(&packet), Err(WireError::BundleDepth));
        let tags = format!(",{}{}", "[".repeat(9), "]".repeat(9));
        assert_eq!(check(&message("/a", &tags)), Err(WireError::ArrayDepth));
        assert_eq!(check(&message("/a", ",]")), Err(WireError::UnbalancedArray));
    }

    #[test]
    fn messages_of_absurdly_many_arguments_are_refused() {
        let many = format!(",{}", "N".repeat(MAX_ARGUMENTS));
        assert_eq!(check(&message("/a", &many)), Ok(()));
        let absurd = format!(",{}", "N".repeat(65_000));
        assert_eq!(
            check(&message("/a", &absurd)),
            Err(WireError::Arguments(65_000))
        );
        assert_eq!(
            check(&bundle(&[message("/a", &absurd)])),
            Err(WireError::Arguments(65_000))
        );
    }

    #[test]
    fn sizes_past_the_end_are_refused() {
        let mut packet = bundle(&[message("/a", ",")]);
        let at = BUNDLE_HEADER.len() + 8;
        packet[at..at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(check(&packet), Err(WireError::Truncated(at)));
    }

    #[test]
    fn time_tags_before_1970_are_now_and_future_ones_ahead() {
        let now = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        for (seconds, fractional) in [(0, 0), (0, 1), (1000, 0), (u32::MAX / 2, 7)] {
            assert_eq!(
                due(
                    OscTime {
                        seconds,
                        fractional
                    },
                    now
                ),
                Due::Now
            );
        }
        let later = OscTime {
            seconds: (OSC_TO_UNIX + 1_800_000_002) as u32,
            fractional: 1 << 31,
        };
        assert_eq!(due(later, now), Due::Ahead(Duration::from_millis(2500)));
    }
}
