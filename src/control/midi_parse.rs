//! MIDI byte-stream parsing: running status, real-time bytes (clock,
//! start, stop) in the middle of other messages, MIDI timecode (quarter
//! frames and the full-frame SysEx), every other SysEx skipped, note-on
//! with velocity 0 read as note-off. midir usually hands over whole
//! messages, but some drivers split or merge them; this parser takes any
//! chunking and never fails on a bad byte.

/// One MIDI message. Channels are 1..=16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MidiMessage {
    /// Key released (or pressed with velocity 0).
    NoteOff {
        /// Channel 1..=16.
        channel: u8,
        /// Note number.
        note: u8,
        /// Release velocity.
        velocity: u8,
    },
    /// Key pressed.
    NoteOn {
        /// Channel 1..=16.
        channel: u8,
        /// Note number.
        note: u8,
        /// Velocity 1..=127.
        velocity: u8,
    },
    /// Control change.
    ControlChange {
        /// Channel 1..=16.
        channel: u8,
        /// Controller number.
        controller: u8,
        /// Value 0..=127.
        value: u8,
    },
    /// Program change.
    ProgramChange {
        /// Channel 1..=16.
        channel: u8,
        /// Program number.
        program: u8,
    },
    /// Pitch bend, 0..=16383 with 8192 at rest.
    PitchBend {
        /// Channel 1..=16.
        channel: u8,
        /// 14-bit value.
        value: u16,
    },
    /// Clock pulse, 24 per quarter note.
    Clock,
    /// Start from the top.
    Start,
    /// Continue from where it stopped.
    Continue,
    /// Stop.
    Stop,
    /// MIDI timecode's quarter frame: piece 0-7 of a timecode, 4 bits.
    QuarterFrame {
        /// Which piece: frames low and high, seconds, minutes, hours and rate.
        piece: u8,
        /// Its 4 bits.
        value: u8,
    },
    /// MIDI timecode's full frame (`F0 7F dev 01 01 hh mm ss ff F7`), sent
    /// on a locate: the hours byte carries the rate in bits 5-6.
    FullFrame {
        /// Rate and hours.
        hours: u8,
        /// Minutes.
        minutes: u8,
        /// Seconds.
        seconds: u8,
        /// Frames.
        frames: u8,
    },
}

impl MidiMessage {
    /// A short name for scripts: `note_on`, `note_off`, `cc`, ...
    pub fn kind(&self) -> &'static str {
        match self {
            MidiMessage::NoteOff { .. } => "note_off",
            MidiMessage::NoteOn { .. } => "note_on",
            MidiMessage::ControlChange { .. } => "cc",
            MidiMessage::ProgramChange { .. } => "program",
            MidiMessage::PitchBend { .. } => "pitch_bend",
            MidiMessage::Clock => "clock",
            MidiMessage::Start => "start",
            MidiMessage::Continue => "continue",
            MidiMessage::Stop => "stop",
            MidiMessage::QuarterFrame { .. } => "mtc_quarter",
            MidiMessage::FullFrame { .. } => "mtc_full",
        }
    }
}

/// Parser state across chunks of bytes.
#[derive(Debug, Default, Clone)]
pub struct MidiParser {
    status: Option<u8>,
    data: Vec<u8>,
    in_sysex: bool,
    /// An `F1` waits for its data byte.
    quarter: bool,
}

/// The bytes of a full-frame SysEx between `F0` and `F7`.
const FULL_FRAME: usize = 8;

impl MidiParser {
    /// A parser with no running status.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the messages they complete, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<MidiMessage> {
        let mut out = Vec::new();
        for &byte in bytes {
            if let Some(message) = self.byte(byte) {
                out.push(message);
            }
        }
        out
    }

    fn byte(&mut self, byte: u8) -> Option<MidiMessage> {
        if byte >= 0xF8 {
            // Real-time bytes may come anywhere and leave running status alone.
            return match byte {
                0xF8 => Some(MidiMessage::Clock),
                0xFA => Some(MidiMessage::Start),
                0xFB => Some(MidiMessage::Continue),
                0xFC => Some(MidiMessage::Stop),
                _ => None,
            };
        }
        if byte >= 0x80 {
            let ended = (byte == 0xF7 && self.in_sysex).then(|| full_frame(&self.data));
            self.data.clear();
            self.in_sysex = byte == 0xF0;
            self.quarter = byte == 0xF1;
            // System common messages cancel running status.
            self.status = (byte < 0xF0).then_some(byte);
            return ended.flatten();
        }
        if self.quarter {
            self.quarter = false;
            return Some(MidiMessage::QuarterFrame {
                piece: byte >> 4,
                value: byte & 0x0F,
            });
        }
        if self.in_sysex {
            // Only a full frame's few bytes are kept; a longer SysEx is
            // skipped as before.
            if self.data.len() <= FULL_FRAME {
                self.data.push(byte);
            }
            return None;
        }
        let status = self.status?;
        self.data.push(byte);
        let needed = match status & 0xF0 {
            0xC0 | 0xD0 => 1,
            _ => 2,
        };
        if self.data.len() < needed {
            return None;
        }
        let data = std::mem::take(&mut self.data);
        decode(status, &data)
    }
}

/// MIDI timecode's full frame, from a SysEx's bytes: universal real
/// time (`7F`), any device, sub-IDs `01 01`.
fn full_frame(data: &[u8]) -> Option<MidiMessage> {
    match data {
        [0x7F, _, 0x01, 0x01, hours, minutes, seconds, frames] => Some(MidiMessage::FullFrame {
            hours: *hours,
            minutes: *minutes,
            seconds: *seconds,
            frames: *frames,
        }),
        _ => None,
    }
}

fn decode(status: u8, data: &[u8]) -> Option<MidiMessage> {
    let channel = (status & 0x0F) + 1;
    match (status & 0xF0, data) {
        (0x80, [note, velocity]) => Some(MidiMessage::NoteOff {
            channel,
            note: *note,
            velocity: *velocity,
        }),
        (0x90, [note, 0]) => Some(MidiMessage::NoteOff {
            channel,
            note: *note,
            velocity: 0,
        }),
        (0x90, [note, velocity]) => Some(MidiMessage::NoteOn {
            channel,
            note: *note,
            velocity: *velocity,
        }),
        (0xB0, [controller, value]) => Some(MidiMessage::ControlChange {
            channel,
            controller: *controller,
            value: *value,
        }),
        (0xC0, [program]) => Some(MidiMessage::ProgramChange {
            channel,
            program: *program,
        }),
        (0xE0, [lsb, msb]) => Some(MidiMessage::PitchBend {
            channel,
            value: u16::from(*msb) << 7 | u16::from(*lsb),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::MidiMessage::*;
    use super::*;

    #[test]
    fn midi_timecode_quarter_frames_and_a_full_frame() {
        let mut parser = MidiParser::new();
        let mut bytes = vec![0xF1, 0x23, 0xF8, 0xF1, 0x71];
        // A long SysEx is still skipped; a full frame is read.
        bytes.extend([0xF0, 0x43, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xF7]);
        bytes.extend([0xF0, 0x7F, 0x7F, 0x01, 0x01, 0x21, 0x02, 0x03, 0x04, 0xF7]);
        assert_eq!(
            parser.feed(&bytes),
            vec![
                QuarterFrame { piece: 2, value: 3 },
                Clock,
                QuarterFrame { piece: 7, value: 1 },
                FullFrame {
                    hours: 0x21,
                    minutes: 2,
                    seconds: 3,
                    frames: 4
                },
            ]
        );
    }

    #[test]
    fn running_status_and_real_time_bytes_inside_messages() {
        let mut parser = MidiParser::new();
        // CC 0 = 10, then running status CC 1 = 20, with a clock pulse
        // between the controller and the value bytes.
        let bytes = [0xB0, 0x00, 0x0A, 0x01, 0xF8, 0x14];
        assert_eq!(
            parser.feed(&bytes),
            vec![
                ControlChange {
                    channel: 1,
                    controller: 0,
                    value: 10
                },
                Clock,
                ControlChange {
                    channel: 1,
                    controller: 1,
                    value: 20
                },
            ]
        );
    }

    #[test]
    fn sysex_is_skipped_and_zero_velocity_is_note_off() {
        let mut parser = MidiParser::new();
        let bytes = [0xF0, 0x42, 0x10, 0x7F, 0xF7, 0x95, 0x24, 0x64, 0x24, 0x00];
        assert_eq!(
            parser.feed(&bytes),
            vec![
                NoteOn {
                    channel: 6,
                    note: 36,
                    velocity: 100
                },
                NoteOff {
                    channel: 6,
                    note: 36,
                    velocity: 0
                },
            ]
        );
    }

    #[test]
    fn any_chunking_gives_the_same_messages_and_garbage_is_ignored() {
        let bytes = [
            0x12, 0x34, 0xE2, 0x00, 0x40, 0xFA, 0xC3, 0x05, 0xFC, 0xB0, 0x07,
        ];
        let whole = MidiParser::new().feed(&bytes);
        assert_eq!(
            whole,
            vec![
                PitchBend {
                    channel: 3,
                    value: 8192
                },
                Start,
                ProgramChange {
                    channel: 4,
                    program: 5
                },
                Stop
            ]
        );
        let mut parser = MidiParser::new();
        let split: Vec<MidiMessage> = bytes.iter().flat_map(|b| parser.feed(&[*b])).collect();
        assert_eq!(split, whole);
    }
}
