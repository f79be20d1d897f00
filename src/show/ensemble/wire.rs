//! What a leader tells its followers, as OSC: one bundle a frame, its
//! first message the frame it stamps (`/sylva/ensemble/frame`: number,
//! dt, show time, beats, tempo, the leader's wall clock), then every
//! performer change the leader applied before drawing that frame, then
//! what its ear heard. Over TCP each packet goes with its length before
//! it, as OSC 1.0 streams do.

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};

use crate::audio::{BANDS, Heard};
use crate::command::{Command, OscArg, PlaylistCommand, ScriptEvent};
use crate::params::{Easing, Source, Value};

/// Longest packet a follower reads: a frame of changes at the control
/// surface's cap fits many times over, and a peer cannot make it grow.
pub const MAX_PACKET: usize = 4 << 20;

/// Changes one frame carries at most; more is refused as malformed (and
/// a leader keeps no more).
pub const MAX_CHANGES: usize = 8_192;

/// Values a list parameter carries at most.
const MAX_LIST: usize = 1_024;

/// One frame of the leader's show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameRecord {
    /// The frame's number (the first frame is 1).
    pub frame: u64,
    /// Seconds the frame stepped.
    pub dt: f32,
    /// Show time after the frame's tick.
    pub time: f64,
    /// Beats after the frame's tick.
    pub beats: f64,
    /// The tempo.
    pub bpm: f32,
    /// The leader's wall clock when it sent the frame (seconds since 1970).
    pub sent: f64,
    /// The performer changes applied before the frame was drawn, in order.
    pub changes: Vec<Command>,
    /// What the leader's ear heard in the frame, when it hears.
    pub heard: Option<Heard>,
}

/// A packet of the ensemble.
#[derive(Debug, Clone, PartialEq)]
pub enum EnsemblePacket {
    /// The first a follower hears: the seed and the preset the leader
    /// started with (a follower started otherwise says so), and which of
    /// the leader's runs this is.
    Hello {
        /// The leader's seed.
        seed: u64,
        /// The preset on the leader's stage at its start.
        preset: String,
        /// A number of the leader's run, new each time it starts: a
        /// leader started again begins a new show.
        run: u64,
    },
    /// A frame.
    Frame(Box<FrameRecord>),
    /// The leader's show ended.
    End,
}

/// Why a packet was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// Not OSC.
    #[error("not OSC: {0}")]
    Osc(String),
    /// OSC, but not a packet of the ensemble.
    #[error("not an ensemble packet: {0}")]
    Shape(String),
}

fn message(address: &str, args: Vec<OscType>) -> OscPacket {
    OscPacket::Message(OscMessage {
        addr: format!("/sylva/ensemble/{address}"),
        args,
    })
}

fn text(s: &str) -> OscType {
    OscType::String(s.to_string())
}

/// `packet` as the bytes of one OSC packet (without its length).
pub fn encode(packet: &EnsemblePacket) -> Vec<u8> {
    let osc = match packet {
        EnsemblePacket::Hello { seed, preset, run } => message(
            "hello",
            vec![
                OscType::Long(*seed as i64),
                text(preset),
                OscType::Long(*run as i64),
            ],
        ),
        EnsemblePacket::End => message("end", Vec::new()),
        EnsemblePacket::Frame(record) => {
            let mut content = vec![message(
                "frame",
                vec![
                    OscType::Long(record.frame as i64),
                    OscType::Float(record.dt),
                    OscType::Double(record.time),
                    OscType::Double(record.beats),
                    OscType::Float(record.bpm),
                    OscType::Double(record.sent),
                ],
            )];
            content.extend(record.changes.iter().filter_map(change_message));
            if let Some(heard) = &record.heard {
                content.push(message("heard", vec![OscType::Blob(heard_bytes(heard))]));
            }
            OscPacket::Bundle(OscBundle {
                timetag: OscTime {
                    seconds: 0,
                    fractional: 1,
                },
                content,
            })
        }
    };
    // Every argument above is a type OSC encodes; a failure would be a
    // bug in rosc, and an empty packet is refused by every follower.
    rosc::encoder::encode(&osc).unwrap_or_default()
}

/// Whether a follower must be told of `command`: what changes the
/// picture. Saves, MIDI learn and favourites stay on the machine they
/// were asked of; a timecode heard is in the frame's clock already.
pub fn forwarded(command: &Command) -> bool {
    change_message(command).is_some()
}

fn change_message(command: &Command) -> Option<OscPacket> {
    Some(match command {
        Command::Set(name, value, source) => {
            let mut args = vec![text(name), text(&source_name(source))];
            args.extend(value_args(value));
            message("set", args)
        }
        Command::Ramp(name, value, seconds, easing, source) => {
            let mut args = vec![
                text(name),
                text(&source_name(source)),
                OscType::Float(*seconds),
                text(easing_name(*easing)),
            ];
            args.extend(value_args(value));
            message("ramp", args)
        }
        Command::LoadPreset(name, fade) => {
            let mut args = vec![text(name)];
            args.extend(fade.map(OscType::Float));
            message("preset", args)
        }
        Command::StepPreset(forward) => message("step", vec![OscType::Bool(*forward)]),
        Command::Reseed(layer) => message("reseed", vec![text(layer)]),
        Command::ReseedAll => message("reseed", Vec::new()),
        Command::RestartBeat => message("restart_beat", Vec::new()),
        Command::Timeline(name) => message("timeline", name.iter().map(|n| text(n)).collect()),
        Command::Release(name) => message("release", name.iter().map(|n| text(n)).collect()),
        Command::Playlist(step) => message(
            "playlist",
            match step {
                PlaylistCommand::Play(name) => vec![text("play"), text(name)],
                PlaylistCommand::Next => vec![text("next")],
                PlaylistCommand::Previous => vec![text("previous")],
                PlaylistCommand::Jump(at) => vec![text("jump"), OscType::Long(*at as i64)],
                PlaylistCommand::Stop => vec![text("stop")],
            },
        ),
        Command::Script(ScriptEvent::Midi {
            kind,
            channel,
            number,
            value,
        }) => message(
            "midi",
            vec![
                text(kind),
                OscType::Int(i32::from(*channel)),
                OscType::Int(i32::from(*number)),
                OscType::Int(i32::from(*value)),
            ],
        ),
        Command::Script(ScriptEvent::Osc(address, args)) => {
            let mut all = vec![text(address)];
            all.extend(args.iter().map(|arg| match arg {
                OscArg::Number(n) => OscType::Double(*n),
                OscArg::Text(t) => text(t),
                OscArg::Bool(b) => OscType::Bool(*b),
            }));
            message("osc", all)
        }
        Command::Script(_)
        | Command::SavePreset(_)
        | Command::Learn(_)
        | Command::KeepLearned(_)
        | Command::KeepFavourites(_)
        | Command::SaveOutputs
        | Command::Timecode(..) => return None,
    })
}

fn source_name(source: &Source) -> String {
    match source {
        Source::Preset => "preset".into(),
        Source::Script => "script".into(),
        Source::Midi => "midi".into(),
        Source::Dmx => "dmx".into(),
        Source::Osc(peer) => format!("osc:{peer}"),
        Source::Ui => "ui".into(),
        Source::Show => "show".into(),
    }
}

fn source_of(name: &str) -> Option<Source> {
    Some(match name {
        "preset" => Source::Preset,
        "script" => Source::Script,
        "midi" => Source::Midi,
        "dmx" => Source::Dmx,
        "ui" => Source::Ui,
        "show" => Source::Show,
        _ => Source::Osc(name.strip_prefix("osc:")?.to_string()),
    })
}

fn easing_name(easing: Easing) -> &'static str {
    match easing {
        Easing::Linear => "linear",
        Easing::In => "in",
        Easing::Out => "out",
        Easing::InOut => "inout",
        Easing::Smooth => "smooth",
    }
}

/// A value as a kind letter and its numbers or text.
fn value_args(value: &Value) -> Vec<OscType> {
    let (kind, mut rest) = match value {
        Value::Float(v) => ("f", vec![OscType::Float(*v)]),
        Value::Int(v) => ("i", vec![OscType::Int(*v)]),
        Value::Bool(v) => ("b", vec![OscType::Bool(*v)]),
        Value::Enum(v) => ("e", vec![OscType::Long(*v as i64)]),
        Value::Vec3(v) => ("v", v.iter().map(|x| OscType::Float(*x)).collect()),
        Value::Colour(v) => ("c", v.iter().map(|x| OscType::Float(*x)).collect()),
        Value::Text(v) => ("t", vec![text(v)]),
        Value::List(v) => ("l", v.iter().map(|x| OscType::Float(*x)).collect()),
    };
    rest.insert(0, text(kind));
    rest
}

fn floats<const N: usize>(args: &[OscType]) -> Option<[f32; N]> {
    let mut out = [0.0; N];
    if args.len() != N {
        return None;
    }
    for (slot, arg) in out.iter_mut().zip(args) {
        *slot = arg.clone().float()?;
    }
    Some(out)
}

fn value_of(args: &[OscType]) -> Option<Value> {
    let (kind, rest) = args.split_first()?;
    let kind = kind.clone().string()?;
    Some(match (kind.as_str(), rest) {
        ("f", [v]) => Value::Float(v.clone().float()?),
        ("i", [v]) => Value::Int(v.clone().int()?),
        ("b", [v]) => Value::Bool(v.clone().bool()?),
        ("e", [v]) => Value::Enum(usize::try_from(v.clone().long()?).ok()?),
        ("v", _) => Value::Vec3(floats(rest)?),
        ("c", _) => Value::Colour(floats(rest)?),
        ("t", [v]) => Value::Text(v.clone().string()?),
        ("l", _) if rest.len() <= MAX_LIST => Value::List(
            rest.iter()
                .map(|v| v.clone().float())
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// Bytes a heard frame takes in its blob.
const HEARD_BYTES: usize =
    8 + 4 * 4 + 4 * BANDS + 4 + 9 + 9 + 4 + 2 * crate::audio::picture::TEXELS;

fn heard_bytes(heard: &Heard) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEARD_BYTES);
    out.extend(heard.time.to_le_bytes());
    for v in [heard.level, heard.bass, heard.mid, heard.high] {
        out.extend(v.to_le_bytes());
    }
    heard.bands.iter().for_each(|v| out.extend(v.to_le_bytes()));
    out.extend(heard.flux.to_le_bytes());
    for at in [heard.onset, heard.beat] {
        out.push(u8::from(at.is_some()));
        out.extend(at.unwrap_or(0.0).to_le_bytes());
    }
    out.extend(heard.bpm.to_le_bytes());
    out.extend(heard.picture.spectrum);
    out.extend(heard.picture.wave);
    out
}

/// Reads little-endian numbers off the front of a blob.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn f32(&mut self) -> Option<f32> {
        self.take().map(f32::from_le_bytes)
    }

    fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }

    fn instant(&mut self) -> Option<Option<f64>> {
        let [flag] = self.take()?;
        let at = self.f64()?;
        Some((flag != 0).then_some(at))
    }
}

fn heard_of(blob: &[u8]) -> Option<Heard> {
    if blob.len() != HEARD_BYTES {
        return None;
    }
    let mut read = Reader(blob);
    let mut heard = Heard {
        time: read.f64()?,
        level: read.f32()?,
        bass: read.f32()?,
        mid: read.f32()?,
        high: read.f32()?,
        ..Heard::default()
    };
    for band in &mut heard.bands {
        *band = read.f32()?;
    }
    heard.flux = read.f32()?;
    heard.onset = read.instant()?;
    heard.beat = read.instant()?;
    heard.bpm = read.f32()?;
    heard.picture.spectrum = read.take()?;
    heard.picture.wave = read.take()?;
    Some(heard)
}

/// The packet in `bytes` (one OSC packet, without its length).
pub fn decode(bytes: &[u8]) -> Result<EnsemblePacket, WireError> {
    let (_, packet) =
        rosc::decoder::decode_udp(bytes).map_err(|e| WireError::Osc(format!("{e:?}")))?;
    let shape = |what: &str| WireError::Shape(what.to_string());
    match packet {
        OscPacket::Message(m) => match (m.addr.as_str(), m.args.as_slice()) {
            ("/sylva/ensemble/end", []) => Ok(EnsemblePacket::End),
            ("/sylva/ensemble/hello", [seed, preset, run]) => Ok(EnsemblePacket::Hello {
                seed: seed.clone().long().ok_or_else(|| shape("hello's seed"))? as u64,
                preset: preset
                    .clone()
                    .string()
                    .ok_or_else(|| shape("hello's preset"))?,
                run: run.clone().long().ok_or_else(|| shape("hello's run"))? as u64,
            }),
            (address, _) => Err(shape(address)),
        },
        OscPacket::Bundle(bundle) => {
            let mut content = bundle.content.into_iter();
            let Some(OscPacket::Message(head)) = content.next() else {
                return Err(shape("a bundle without its frame"));
            };
            let mut record = frame_of(&head).ok_or_else(|| shape("the frame message"))?;
            for packet in content {
                let OscPacket::Message(m) = packet else {
                    return Err(shape("a bundle within a frame"));
                };
                if m.addr == "/sylva/ensemble/heard" {
                    let blob = m.args.first().cloned().and_then(OscType::blob);
                    record.heard = Some(
                        blob.and_then(|b| heard_of(&b))
                            .ok_or_else(|| shape("heard"))?,
                    );
                    continue;
                }
                if record.changes.len() >= MAX_CHANGES {
                    return Err(shape("too many changes in one frame"));
                }
                record
                    .changes
                    .push(command_of(&m).ok_or_else(|| WireError::Shape(m.addr.clone()))?);
            }
            Ok(EnsemblePacket::Frame(Box::new(record)))
        }
    }
}

fn frame_of(m: &OscMessage) -> Option<FrameRecord> {
    let [frame, dt, time, beats, bpm, sent] = m.args.as_slice() else {
        return None;
    };
    (m.addr == "/sylva/ensemble/frame").then_some(())?;
    Some(FrameRecord {
        frame: u64::try_from(frame.clone().long()?).ok()?,
        dt: dt.clone().float()?,
        time: time.clone().double()?,
        beats: beats.clone().double()?,
        bpm: bpm.clone().float()?,
        sent: sent.clone().double()?,
        changes: Vec::new(),
        heard: None,
    })
}

fn command_of(m: &OscMessage) -> Option<Command> {
    let what = m.addr.strip_prefix("/sylva/ensemble/")?;
    let args = m.args.as_slice();
    let string = |at: usize| args.get(at).cloned().and_then(OscType::string);
    Some(match (what, args.len()) {
        ("set", 3..) => Command::Set(string(0)?, value_of(&args[2..])?, source_of(&string(1)?)?),
        ("ramp", 5..) => Command::Ramp(
            string(0)?,
            value_of(&args[4..])?,
            args[2].clone().float()?,
            string(3)?.parse().ok()?,
            source_of(&string(1)?)?,
        ),
        ("preset", 1) => Command::LoadPreset(string(0)?, None),
        ("preset", 2) => Command::LoadPreset(string(0)?, Some(args[1].clone().float()?)),
        ("step", 1) => Command::StepPreset(args[0].clone().bool()?),
        ("reseed", 0) => Command::ReseedAll,
        ("reseed", 1) => Command::Reseed(string(0)?),
        ("restart_beat", 0) => Command::RestartBeat,
        ("timeline", 0) => Command::Timeline(None),
        ("timeline", 1) => Command::Timeline(Some(string(0)?)),
        ("release", 0) => Command::Release(None),
        ("release", 1) => Command::Release(Some(string(0)?)),
        ("playlist", 1 | 2) => Command::Playlist(match (string(0)?.as_str(), args.get(1)) {
            ("play", Some(name)) => PlaylistCommand::Play(name.clone().string()?),
            ("next", None) => PlaylistCommand::Next,
            ("previous", None) => PlaylistCommand::Previous,
            ("jump", Some(at)) => PlaylistCommand::Jump(usize::try_from(at.clone().long()?).ok()?),
            ("stop", None) => PlaylistCommand::Stop,
            _ => return None,
        }),
        ("midi", 4) => {
            let byte = |at: usize| u8::try_from(args[at].clone().int()?).ok();
            Command::Script(ScriptEvent::Midi {
                kind: string(0)?,
                channel: byte(1)?,
                number: byte(2)?,
                value: byte(3)?,
            })
        }
        ("osc", 1..) => Command::Script(ScriptEvent::Osc(
            string(0)?,
            args[1..]
                .iter()
                .map(|arg| match arg {
                    OscType::Double(n) => Some(OscArg::Number(*n)),
                    OscType::String(t) => Some(OscArg::Text(t.clone())),
                    OscType::Bool(b) => Some(OscArg::Bool(*b)),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        )),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(packet: EnsemblePacket) {
        let bytes = encode(&packet);
        assert_eq!(decode(&bytes), Ok(packet));
    }

    #[test]
    fn every_forwarded_change_and_the_ear_come_back_as_they_went() {
        let mut heard = Heard {
            time: 12.5,
            level: 0.5,
            bass: 0.25,
            onset: Some(12.49),
            bpm: 124.0,
            ..Heard::default()
        };
        heard.bands[3] = 0.75;
        heard.picture.spectrum[7] = 200;
        let changes = vec![
            Command::Set(
                "a.f".into(),
                Value::Float(0.5),
                Source::Osc("10.0.0.2:9".into()),
            ),
            Command::Set("a.i".into(), Value::Int(-3), Source::Midi),
            Command::Set("a.b".into(), Value::Bool(true), Source::Ui),
            Command::Set("a.e".into(), Value::Enum(2), Source::Dmx),
            Command::Set("a.v".into(), Value::Vec3([1.0, 2.0, 3.0]), Source::Ui),
            Command::Set(
                "a.c".into(),
                Value::Colour([0.1, 0.2, 0.3, 1.0]),
                Source::Ui,
            ),
            Command::Set("a.t".into(), Value::Text("media/x.png".into()), Source::Ui),
            Command::Ramp(
                "a.f".into(),
                Value::Float(1.0),
                2.0,
                Easing::Smooth,
                Source::Midi,
            ),
            Command::LoadPreset("fluid".into(), Some(1.5)),
            Command::LoadPreset("colony".into(), None),
            Command::StepPreset(false),
            Command::Reseed("colony".into()),
            Command::ReseedAll,
            Command::RestartBeat,
            Command::Timeline(Some("premiere".into())),
            Command::Timeline(None),
            Command::Release(None),
            Command::Playlist(PlaylistCommand::Jump(3)),
            Command::Playlist(PlaylistCommand::Play("default".into())),
            Command::Script(ScriptEvent::Midi {
                kind: "cc".into(),
                channel: 1,
                number: 7,
                value: 127,
            }),
            Command::Script(ScriptEvent::Osc(
                "/hit".into(),
                vec![
                    OscArg::Number(0.5),
                    OscArg::Text("x".into()),
                    OscArg::Bool(true),
                ],
            )),
        ];
        assert!(changes.iter().all(forwarded));
        round_trip(EnsemblePacket::Frame(Box::new(FrameRecord {
            frame: 1 << 40,
            dt: 1.0 / 60.0,
            time: 3600.25,
            beats: 7200.5,
            bpm: 120.0,
            sent: 1.8e9,
            changes,
            heard: Some(heard),
        })));
        round_trip(EnsemblePacket::Hello {
            seed: u64::MAX,
            preset: "world".into(),
            run: 1 << 60,
        });
        round_trip(EnsemblePacket::End);
    }

    #[test]
    fn a_frame_takes_the_bytes_the_guide_says() {
        // docs/guide/timecode.md: what the leader keeps a frame, its
        // length before it included.
        let bare = FrameRecord::default();
        let heard = FrameRecord {
            heard: Some(Heard::default()),
            ..FrameRecord::default()
        };
        let framed = |r: FrameRecord| encode(&EnsemblePacket::Frame(Box::new(r))).len() + 4;
        assert_eq!((framed(bare), framed(heard)), (96, 1272));
    }

    #[test]
    fn what_stays_on_its_machine_is_not_forwarded_and_nonsense_is_refused() {
        assert!(!forwarded(&Command::SavePreset("x".into())));
        assert!(!forwarded(&Command::Learn("x".into())));
        assert!(!forwarded(&Command::Script(ScriptEvent::Beat(3))));
        assert!(decode(b"garbage").is_err());
        let stray = rosc::encoder::encode(&message("set", vec![text("a")]));
        assert!(decode(&stray.unwrap_or_default()).is_err());
        let mut bytes = encode(&EnsemblePacket::Frame(Box::default()));
        bytes.truncate(bytes.len() - 3);
        assert!(decode(&bytes).is_err());
    }
}
