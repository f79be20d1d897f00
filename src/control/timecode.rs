//! Timecode from outside, as the control surface hears it: MIDI timecode
//! assembled from its eight quarter frames (two frames behind the time
//! they complete, so two frames are added) or read whole from a
//! full-frame message, and Art-Net's `ArtTimeCode`; each handed to the
//! show as a `Command::Timecode` with the instant it arrived, for the
//! show's chase (`base::timecode::Chase`) to follow when
//! `master.timecode_source` names it. And the other way, the show as the
//! timecode master: `ArtTimeCode` of `master.timecode` once a frame of
//! `master.timecode_rate` when `master.timecode_out` is `artnet`.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Instant;

use super::event::ControlInput;
use super::{ControlSurface, ShowView};
use crate::base::dmx::ARTNET_PORT;
use crate::base::status::ErrorLog;
use crate::base::timecode::{FrameRate, Timecode, TimecodeSource};
use crate::command::Command;
use crate::params::{Registry, Value};

/// Where the show's own timecode goes unless `--timecode-to` says: every
/// Art-Net node of the local network.
pub const TIMECODE_TO: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::BROADCAST), ARTNET_PORT);

/// MIDI timecode's pieces as they arrive.
#[derive(Debug, Default)]
pub(super) struct MtcReader {
    pieces: [u8; 8],
    /// Bit n: piece n arrived since piece 0.
    seen: u8,
}

impl MtcReader {
    /// Quarter frame `piece` (0-7) with its 4 bits; the timecode once the
    /// eighth completes a run that began at piece 0.
    pub(super) fn quarter(&mut self, piece: u8, value: u8) -> Option<Timecode> {
        let piece = usize::from(piece & 7);
        if piece == 0 {
            self.seen = 0;
        }
        self.pieces[piece] = value & 0x0F;
        self.seen |= 1 << piece;
        if piece != 7 || self.seen != 0xFF {
            return None;
        }
        self.seen = 0;
        let p = self.pieces;
        let rate = FrameRate::from_code((p[7] >> 1) & 3)?;
        let timecode = Timecode {
            frames: p[0] | (p[1] & 1) << 4,
            seconds: p[2] | (p[3] & 3) << 4,
            minutes: p[4] | (p[5] & 3) << 4,
            hours: p[6] | (p[7] & 1) << 4,
            rate,
        };
        // The last piece arrives two frames after the frame it names.
        timecode.valid().then(|| timecode.plus_frames(2))
    }

    /// A full-frame message: the rate in bits 5-6 of the hours byte.
    pub(super) fn full(hours: u8, minutes: u8, seconds: u8, frames: u8) -> Option<Timecode> {
        let timecode = Timecode {
            hours: hours & 0x1F,
            minutes,
            seconds,
            frames,
            rate: FrameRate::from_code((hours >> 5) & 3)?,
        };
        timecode.valid().then_some(timecode)
    }
}

/// A timecode a receiving thread heard.
#[derive(Debug)]
pub struct TimecodeReceived {
    /// Where from.
    pub source: TimecodeSource,
    /// What.
    pub timecode: Timecode,
    /// When it arrived.
    pub at: Instant,
}

impl ControlInput for TimecodeReceived {
    fn apply(
        self: Box<Self>,
        surface: &mut ControlSurface,
        _view: &ShowView<'_>,
        _started: Instant,
    ) {
        surface.command(Command::Timecode(self.source, self.timecode, self.at));
    }
}

/// Art-Net's `ArtTimeCode`, read.
pub(super) fn artnet_timecode(packet: &artnet_protocol::Timecode) -> Option<Timecode> {
    let timecode = Timecode {
        hours: packet.hours,
        minutes: packet.minutes,
        seconds: packet.seconds,
        frames: packet.frames,
        rate: FrameRate::from_code(packet.frame_type as u8)?,
    };
    timecode.valid().then_some(timecode)
}

/// The show's position sent as Art-Net timecode.
pub(super) struct TimecodeOut {
    to: SocketAddr,
    socket: Option<UdpSocket>,
    /// The frame last sent.
    sent: Option<u64>,
}

impl TimecodeOut {
    /// Sending to `to` when asked.
    pub(super) fn new(to: SocketAddr) -> Self {
        Self {
            to,
            socket: None,
            sent: None,
        }
    }

    /// Sends `master.timecode` when `master.timecode_out` asks and a new
    /// frame of `master.timecode_rate` began; never while the show itself
    /// follows Art-Net timecode, which would answer itself.
    pub(super) fn send(&mut self, registry: &Registry, errors: &ErrorLog) {
        let wanted = registry.enum_index("master.timecode_out") == Some(1)
            && (registry.enum_index("master.timecode_source")).and_then(TimecodeSource::at)
                != Some(TimecodeSource::Artnet);
        if !wanted {
            self.sent = None;
            return;
        }
        let rate = (registry.enum_index("master.timecode_rate"))
            .and_then(|i| FrameRate::from_code(u8::try_from(i).ok()?))
            .unwrap_or(FrameRate::Smpte30);
        let Some(Value::Float(seconds)) = registry.get("master.timecode") else {
            return;
        };
        let timecode = Timecode::at_seconds(f64::from(*seconds), rate);
        let frame = timecode.frame_number();
        if self.sent.replace(frame) == Some(frame) {
            return;
        }
        let packet = artnet_protocol::ArtCommand::OpTimeCode(artnet_protocol::Timecode {
            frames: timecode.frames,
            seconds: timecode.seconds,
            minutes: timecode.minutes,
            hours: timecode.hours,
            frame_type: frame_type(rate),
            version: artnet_protocol::ARTNET_PROTOCOL_VERSION,
            filler1: 0,
            // The master stream.
            stream_id: 0,
        });
        let sent = packet
            .write_to_buffer()
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                let socket = match &self.socket {
                    Some(socket) => socket,
                    None => {
                        let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
                            .and_then(|s| s.set_broadcast(true).map(|()| s))
                            .map_err(|e| e.to_string())?;
                        self.socket.insert(socket)
                    }
                };
                socket.send_to(&bytes, self.to).map_err(|e| e.to_string())
            });
        match sent {
            Ok(_) => errors.clear("timecode out"),
            Err(why) => errors.report(
                "timecode out",
                format!("Art-Net timecode to {}: {why}", self.to),
            ),
        }
    }
}

/// Art-Net's name for a rate.
fn frame_type(rate: FrameRate) -> artnet_protocol::FrameType {
    match rate {
        FrameRate::Film24 => artnet_protocol::FrameType::Film,
        FrameRate::Ebu25 => artnet_protocol::FrameType::EBU,
        FrameRate::Drop2997 => artnet_protocol::FrameType::DF,
        FrameRate::Smpte30 => artnet_protocol::FrameType::SMPTE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight quarter frames of `tc`.
    fn quarters(tc: Timecode) -> [(u8, u8); 8] {
        let rate = tc.rate.code();
        [
            (0, tc.frames & 0x0F),
            (1, tc.frames >> 4),
            (2, tc.seconds & 0x0F),
            (3, tc.seconds >> 4),
            (4, tc.minutes & 0x0F),
            (5, tc.minutes >> 4),
            (6, tc.hours & 0x0F),
            (7, (tc.hours >> 4) | rate << 1),
        ]
    }

    #[test]
    fn eight_quarter_frames_make_a_timecode_two_frames_on() {
        let tc = Timecode {
            hours: 17,
            minutes: 42,
            seconds: 31,
            frames: 23,
            rate: FrameRate::Ebu25,
        };
        let mut reader = MtcReader::default();
        let mut got = None;
        for (piece, value) in quarters(tc) {
            got = reader.quarter(piece, value);
        }
        assert_eq!(got, Some(tc.plus_frames(2)));
        // A run that did not start at piece 0 gives nothing.
        let mut late = MtcReader::default();
        let from_three: Vec<_> = quarters(tc)[3..]
            .iter()
            .map(|(p, v)| late.quarter(*p, *v))
            .collect();
        assert!(from_three.iter().all(Option::is_none));
        assert_eq!(MtcReader::full(0x20 | 17, 42, 31, 23), Some(tc));
        assert_eq!(
            MtcReader::full(0x20 | 17, 42, 31, 25),
            None,
            "no frame 25 at 25 fps"
        );
    }
}
