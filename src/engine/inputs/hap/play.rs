//! The worker playing a HAP clip: reads frame after frame from where the
//! clip starts, unpacks each to its blocks (or on to RGBA where the GPU
//! takes no blocks) into a buffer the frame thread gave back, and hands it
//! over through the decoder's queue, whose bound holds it back as
//! ffmpeg's pipe would. Frames are numbered on across loops, as the clip
//! clock counts them.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::Instant;

use super::super::decoder::{Decoded, Held};
use super::super::source::FrameLayout;
use super::super::video::{ClipInfo, PlayError};
use super::{HapError, HapTrack, blocks, unpack};

/// Plays `track` of `file` from `at` seconds, over and over when
/// `looping`, as blocks when `as_blocks` else as RGBA, telling `held` the
/// time each frame took.
pub fn play(
    mut file: &File,
    track: HapTrack,
    (at, looping): (f64, bool),
    (as_blocks, held): (bool, &Held),
    send: &SyncSender<Decoded>,
    spares: &Receiver<Vec<u8>>,
) -> Result<(), PlayError> {
    let layout = match as_blocks {
        true => FrameLayout::Blocks(track.codec),
        false => FrameLayout::Rgba,
    };
    let info = ClipInfo {
        size: track.size,
        fps: track.fps,
        duration: track.duration,
        layout,
        hap: Some(track.codec),
    };
    if send.send(Decoded::Info(info)).is_err() {
        return Ok(());
    }
    let count = track.samples.len();
    let mut n = ((at * track.fps).floor().max(0.0) as usize).min(count - 1);
    let (mut packed, mut unpacked) = (Vec::new(), Vec::new());
    let bytes = info.frame_bytes();
    for index in 0u64.. {
        let started = Instant::now();
        let sample = track.samples[n];
        packed.resize(sample.bytes as usize, 0);
        file.seek(SeekFrom::Start(sample.offset))
            .and_then(|_| file.read_exact(&mut packed))
            .map_err(|error| HapError::Read(n, error))?;
        let mut frame = spares
            .try_recv()
            .ok()
            .filter(|f| f.len() == bytes)
            .unwrap_or_default();
        let target = if as_blocks { &mut frame } else { &mut unpacked };
        unpack(&packed, track.codec, track.size, target).map_err(|why| HapError::Frame(n, why))?;
        if !as_blocks {
            blocks::to_rgba(track.codec, track.size, &unpacked, &mut frame);
        }
        held.made(started.elapsed());
        if send.send(Decoded::Frame(index, frame)).is_err() {
            return Ok(());
        }
        n += 1;
        if n == count {
            if !looping {
                send.send(Decoded::Ended).ok();
                return Ok(());
            }
            n = 0;
        }
    }
    Ok(())
}
