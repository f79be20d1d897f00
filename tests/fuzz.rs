//! Deterministic in-process fuzzing, run with every `make test`: a fixed
//! seed and a bounded count per target, so a failure reproduces exactly.
//! Targets: OSC decoding (random bytes, mutated valid packets, random deep
//! structures) and applying what decodes to a running show; preset,
//! mapping and shader-header parsing; the MIDI byte parser. Nothing may
//! panic, and the show must still answer afterwards. The counts are in
//! BENCHMARKS.md's Reliability section.

use std::time::{Duration, Instant, SystemTime};

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use sylva::control::midi_parse::MidiParser;
use sylva::control::osc::{self, OscReceived};
use sylva::control::{ControlEvent, ControlOptions, ControlSurface};
use sylva::engine::Preset;
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
use sylva::layers::shader::header;
use sylva::mapping::Mappings;
use sylva::params::Value;

use crate::support;

/// Datagrams decoded by [`osc_datagrams_never_panic`].
pub const OSC_DECODES: usize = 100_000;
/// Messages applied to a running show by [`osc_messages_never_stop_the_show`].
pub const OSC_APPLIED: usize = 6_000;
/// Texts parsed per parser target.
pub const TEXTS: usize = 20_000;
/// Bytes fed to the MIDI parser.
pub const MIDI_BYTES: usize = 1_000_000;

/// xorshift64*: small, fast, and the same on every machine.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }

    /// `text` with a few random edits: flipped bytes, cuts, insertions,
    /// duplicated spans.
    fn mutate(&mut self, text: &[u8]) -> Vec<u8> {
        let mut out = text.to_vec();
        for _ in 0..=self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(5) {
                0 if at < out.len() => out[at] ^= 1 << self.below(8),
                1 => out.truncate(at),
                2 => {
                    let length = self.below(8) + 1;
                    let noise = self.bytes(length);
                    out.splice(at..at, noise);
                }
                3 if at < out.len() => {
                    let end = (at + self.below(32)).min(out.len());
                    let span = out[at..end].to_vec();
                    out.splice(at..at, span);
                }
                _ => {
                    let token = self
                        .pick(&[
                            &b"["[..],
                            b"]",
                            b"\"",
                            b"=",
                            b"\n",
                            b"{",
                            b",",
                            b"0",
                            b"-1e39",
                        ])
                        .to_vec();
                    out.splice(at..at, token);
                }
            }
        }
        out
    }
}

const ADDRESSES: [&str; 12] = [
    "/sylva/master/brightness",
    "/sylva/master/bpm",
    "/sylva/master/blackout",
    "/sylva/master/tonemap",
    "/sylva/shader/aurora/glow",
    "/sylva/shader/echo/decay",
    "/sylva/preset",
    "/sylva/preset/save",
    "/sylva/reseed",
    "/sylva/shader/echo/reseed",
    "/sylva/learn",
    "/sylva/status",
];

fn random_arg(random: &mut Random, depth: usize) -> OscType {
    match random.below(if depth < 3 { 9 } else { 8 }) {
        0 => OscType::Float(f32::from_bits(random.next() as u32)),
        1 => OscType::Int(random.next() as i32),
        2 => OscType::Double(f64::from_bits(random.next())),
        3 => OscType::Bool(random.next().is_multiple_of(2)),
        4 => {
            let length = random.below(12);
            OscType::String(String::from_utf8_lossy(&random.bytes(length)).into())
        }
        5 => OscType::String(
            random
                .pick(&["default", "n1", "../x", "mappings/m", ""])
                .to_string(),
        ),
        6 => OscType::Long(random.next() as i64),
        7 => OscType::Nil,
        _ => OscType::Array(rosc::OscArray {
            content: (0..random.below(4))
                .map(|_| random_arg(random, depth + 1))
                .collect(),
        }),
    }
}

fn random_message(random: &mut Random) -> OscMessage {
    OscMessage {
        addr: random.pick(&ADDRESSES).to_string(),
        args: (0..random.below(5))
            .map(|_| random_arg(random, 0))
            .collect(),
    }
}

fn random_packet(random: &mut Random, depth: usize) -> OscPacket {
    if depth > 20 || random.below(3) > 0 {
        return OscPacket::Message(random_message(random));
    }
    let timetag = match random.below(4) {
        0 => OscTime {
            seconds: 0,
            fractional: 1,
        },
        1 => OscTime {
            seconds: random.next() as u32,
            fractional: random.next() as u32,
        },
        2 => OscTime {
            seconds: 0,
            fractional: 0,
        },
        _ => {
            OscTime::try_from(SystemTime::now() + Duration::from_millis(random.below(2_000) as u64))
                .unwrap_or(OscTime {
                    seconds: 0,
                    fractional: 1,
                })
        }
    };
    OscPacket::Bundle(OscBundle {
        timetag,
        content: (0..random.below(4))
            .map(|_| random_packet(random, depth + 1))
            .collect(),
    })
}

#[test]
fn osc_datagrams_never_panic() {
    let mut random = Random(0x5eed_0001);
    let (mut decoded, mut refused) = (0, 0);
    for _ in 0..OSC_DECODES {
        let datagram = match random.below(3) {
            0 => {
                let length = random.below(256);
                random.bytes(length)
            }
            1 => {
                let packet = random_packet(&mut random, 0);
                let bytes = rosc::encoder::encode(&packet).unwrap_or_default();
                random.mutate(&bytes)
            }
            _ => rosc::encoder::encode(&random_packet(&mut random, 0)).unwrap_or_default(),
        };
        match osc::decode(&datagram, Instant::now(), SystemTime::now()) {
            Ok(messages) => decoded += messages.len(),
            Err(_) => refused += 1,
        }
    }
    eprintln!("{OSC_DECODES} datagrams: {decoded} messages decoded, {refused} refused");
    assert!(
        decoded > 0 && refused > 0,
        "the fuzzer reaches both outcomes"
    );
}

#[test]
fn osc_messages_never_stop_the_show() {
    let root = support::show_folder(
        "fuzz_show",
        &[("presets/n1.toml", "layers = [\"shader.echo\"]\n")],
    );
    let show = support::show(root.clone(), "default", OUTPUT_FORMAT);
    let mut show = show;
    let mut control = ControlSurface::start(
        &ControlOptions {
            midi: false,
            osc_port: None,
            oscquery_port: None,
            ..ControlOptions::default()
        },
        &show.registry,
        &show.errors,
    );
    let mut output = RenderTarget::new(&show.gpu.device, "fuzz.output", [8, 8], OUTPUT_FORMAT);
    let sender = control.sender();
    let mut random = Random(0x5eed_0002);
    let from = "127.0.0.1:9".parse().unwrap_or_else(|e| panic!("{e}"));
    for sent in 0..OSC_APPLIED {
        let bytes = rosc::encoder::encode(&random_packet(&mut random, 0)).unwrap_or_default();
        let now = Instant::now();
        for (message, due) in osc::decode(&bytes, now, SystemTime::now()).unwrap_or_default() {
            let received = OscReceived {
                from,
                message,
                due,
                received: now,
                rest: 0,
            };
            if sender.try_send(ControlEvent::Osc(received)).is_err() {
                break;
            }
        }
        if sent % 500 == 0 {
            show.frame(1.0 / 60.0, Some(&mut control), &mut output, |_, _| {});
        }
    }
    for _ in 0..5 {
        show.frame(1.0 / 60.0, Some(&mut control), &mut output, |_, _| {});
    }
    let set = show.registry.set(
        "master.brightness",
        Value::Float(0.5),
        sylva::params::Source::Show,
    );
    assert!(set.is_ok(), "the show still takes values");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn presets_mappings_and_headers_never_panic() {
    let mut random = Random(0x5eed_0003);
    let presets: Vec<&str> = [
        include_str!("../presets/default.toml"),
        include_str!("../presets/colony.toml"),
        include_str!("../presets/fluid.toml"),
    ]
    .to_vec();
    let mapping = include_str!("../presets/mappings/nanokontrol2.toml");
    let headers = [
        include_str!("../shaders/shader/aurora.wgsl"),
        include_str!("../shaders/shader/echo.wgsl"),
        "// @param v vec3 0,1,0 min=-2 max=2\n// @param c colour 1,0,0\n// @param e enum a options=a|b\n// @param i int 3 min=1 max=9 smooth=0.5 unit=x \"d\"\n",
    ];
    let (mut presets_ok, mut mappings_ok, mut headers_ok) = (0, 0, 0);
    for _ in 0..TEXTS {
        let preset = *random.pick(&presets);
        let text = random.mutate(preset.as_bytes());
        presets_ok +=
            usize::from(Preset::parse("fuzz.toml", &String::from_utf8_lossy(&text)).is_ok());
        let text = random.mutate(mapping.as_bytes());
        mappings_ok +=
            usize::from(Mappings::parse("fuzz.toml", &String::from_utf8_lossy(&text)).is_ok());
        let shader = *random.pick(&headers);
        let text = random.mutate(shader.as_bytes());
        if let Ok(params) = header::parse(&String::from_utf8_lossy(&text)) {
            headers_ok += 1;
            for param in params {
                for value in [
                    Value::Float(f32::from_bits(random.next() as u32)),
                    Value::Int(random.next() as i32),
                    Value::Text("a".into()),
                    Value::Vec3([f32::NAN, f32::INFINITY, -1e30]),
                    Value::Colour([f32::NEG_INFINITY, 0.0, 1.0, f32::NAN]),
                ] {
                    let _ = param.spec.clamp(value);
                }
            }
        }
    }
    eprintln!(
        "{TEXTS} texts each: {presets_ok} presets, {mappings_ok} mappings, {headers_ok} headers parsed"
    );
    assert!(presets_ok > 0 && mappings_ok > 0 && headers_ok > 0);
}

#[test]
fn midi_bytes_never_panic() {
    let mut random = Random(0x5eed_0004);
    let mut parser = MidiParser::new();
    let (mut fed, mut messages) = (0, 0);
    while fed < MIDI_BYTES {
        let length = random.below(64) + 1;
        let chunk = random.bytes(length);
        fed += chunk.len();
        messages += parser.feed(&chunk).len();
    }
    eprintln!("{fed} MIDI bytes: {messages} messages");
    assert!(messages > 0);
}
