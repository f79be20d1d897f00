//! Deterministic in-process fuzzing, run with every `make test`: a fixed
//! seed and a bounded count per target, so a failure reproduces exactly.
//! Targets: OSC decoding (random bytes, mutated valid packets, random deep
//! structures) and applying what decodes to a running show; preset,
//! mapping and shader-header parsing; the MIDI byte parser; the show
//! folder's file opener (links, FIFOs, devices, sparse files just over
//! their caps, read and written); Art-Net and sACN packets, MIDI and
//! linear timecode, cue timelines and lighting fixtures. Nothing may
//! panic, and the show must still answer afterwards. The counts are in
//! BENCHMARKS.md's Reliability section.

use std::time::{Duration, Instant, SystemTime};

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use sylva::control::midi_parse::MidiParser;
use sylva::control::osc::{self, OscReceived};
use sylva::control::{ControlOptions, ControlSurface};
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
        &show.ground.errors,
    );
    let mut output = RenderTarget::new(
        &show.ground.gpu.device,
        "fuzz.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
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
            if sender.try_send(Box::new(received)).is_err() {
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

/// Outputs files of random counts and sizes generated by
/// [`outputs_files_are_refused_exactly_over_the_pixel_budget`].
pub const OUTPUTS_FILES: usize = 2_000;

#[test]
fn outputs_files_are_refused_exactly_over_the_pixel_budget() {
    use sylva::outputs::OutputsPlan;
    use sylva::outputs::plan::{MAX_OUTPUT_PIXELS, MAX_OUTPUT_SIDE};
    let mut random = Random(0x0b17_5e55_a1d5_0019);
    for _ in 0..OUTPUTS_FILES {
        let count = 1 + random.below(16);
        // Sides near the edges as often as in between.
        let side = |random: &mut Random| match random.below(3) {
            0 => 1 + random.below(64) as u32,
            1 => MAX_OUTPUT_SIDE - random.below(64) as u32,
            _ => 1 + random.below(MAX_OUTPUT_SIDE as usize) as u32,
        };
        let sizes: Vec<[u32; 2]> = (0..count)
            .map(|_| [side(&mut random), side(&mut random)])
            .collect();
        let text: String = sizes
            .iter()
            .enumerate()
            .map(|(i, [w, h])| format!("[[output]]\nname = \"o{i}\"\nsize = [{w}, {h}]\n"))
            .collect();
        let total: u64 = sizes
            .iter()
            .map(|[w, h]| u64::from(*w) * u64::from(*h))
            .sum();
        let parsed = OutputsPlan::parse("outputs/fuzz.toml", &text);
        assert_eq!(
            parsed.is_ok(),
            total <= MAX_OUTPUT_PIXELS,
            "{total} pixels: {parsed:?}"
        );
        // Mutated, it parses or is refused; it never panics.
        let mutated = random.mutate(text.as_bytes());
        let _ = OutputsPlan::parse("outputs/fuzz.toml", &String::from_utf8_lossy(&mutated));
    }
}

/// Errors reported by [`error_floods_stay_bounded_and_show_the_latest`].
pub const ERRORS_REPORTED: usize = 20_000;

#[test]
fn error_floods_stay_bounded_and_show_the_latest() {
    use sylva::base::status::ErrorLog;
    let mut random = Random(0xe770_5f10_0d00_0018);
    let errors = ErrorLog::default();
    let origins = ["send", "ndi:left", "shader.a", "outputs", "gpu", ""];
    let mut last = String::new();
    for i in 0..ERRORS_REPORTED {
        // Alternating pairs, counters in the text, long and empty texts.
        let message = match random.below(5) {
            0 => format!(
                "ndi:{}: no runtime",
                if i % 2 == 0 { "left" } else { "right" }
            ),
            1 => format!("frame {i} dropped"),
            2 => "x".repeat(random.below(20_000)),
            3 => String::new(),
            _ => {
                let length = random.below(64);
                String::from_utf8_lossy(&random.bytes(length)).into_owned()
            }
        };
        let origin = *random.pick(&origins);
        errors.report(origin, &message);
        last = origin.to_string();
    }
    let shown = errors.snapshot();
    assert!(shown.len() <= 16, "{} errors kept", shown.len());
    assert!(shown.iter().all(|e| e.message.len() < 4_100));
    assert!(errors.has(&last));
}

/// WebSocket handshakes with random `Origin` and `Host` headers sent by
/// [`websocket_origins_and_listens_stay_bounded`].
pub const WS_HANDSHAKES: usize = 400;
/// LISTEN, IGNORE and other text commands it sends one WebSocket.
pub const WS_COMMANDS: usize = 3_000;

/// Whether a WebSocket upgrade with `host` and `origin` (`None`: no such
/// header) was accepted (101); a refusal or a closed connection is not.
fn upgraded(query: std::net::SocketAddr, host: &str, origin: Option<&str>) -> bool {
    use std::io::{Read, Write};
    let mut request = format!(
        "GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
    );
    if let Some(origin) = origin {
        request.push_str(&format!("Origin: {origin}\r\n"));
    }
    request.push_str("\r\n");
    let Ok(mut stream) = std::net::TcpStream::connect(query) else {
        return false;
    };
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let mut reply = [0u8; 12];
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"HTTP/1.1 101"
}

#[test]
fn websocket_origins_and_listens_stay_bounded() {
    use sylva::control::oscquery::MAX_LISTENED_BYTES;
    use tungstenite::Message;

    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let mut rig =
        crate::osc_rig::rig_with(show, ControlOptions::default(), Duration::from_secs(20));
    let port = rig.query.port();
    let own = format!("http://127.0.0.1:{port}");
    let mut random = Random(0x5eed_0005);
    let (mut accepted, mut refused) = (0, 0);
    for _ in 0..WS_HANDSHAKES {
        let host = match random.below(7) {
            0 => format!("localhost:{port}"),
            1 => format!("evil.example.com:{port}"),
            _ => format!("127.0.0.1:{port}"),
        };
        let noise = |random: &mut Random, n: usize| -> String {
            (0..random.below(n))
                .map(|_| (b' ' + random.below(95) as u8) as char)
                .collect()
        };
        let origin = match random.below(8) {
            0 => Some(own.clone()),
            1 => Some(own.to_uppercase()),
            2 => Some(format!(
                "http://127.0.0.1:{}",
                port.wrapping_add(1 + random.below(9) as u16)
            )),
            3 => Some(noise(&mut random, 40)),
            4 => Some(format!(
                "{own}{}",
                random.pick(&[".evil.example", "@evil", "/", ":80", "0", "]"])
            )),
            5 => Some(format!("{}{own}", noise(&mut random, 4))),
            6 => {
                let mutated = random.mutate(own.as_bytes());
                // Header injection is no origin: one line stays one line,
                // and a control byte is a space (HTTP and `trim` differ
                // on which are white).
                Some(
                    String::from_utf8_lossy(&mutated)
                        .chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .collect(),
                )
            }
            _ => None,
        };
        let opened = upgraded(rig.query, &host, origin.as_deref());
        let own_page = |origin: &str| {
            let origin = origin.trim().to_ascii_lowercase();
            !host.starts_with("evil")
                && (origin == format!("http://{host}") || origin == format!("https://{host}"))
        };
        let legitimate = origin.as_deref().is_none_or(own_page);
        assert_eq!(
            opened, legitimate,
            "Origin {origin:?} on Host {host}: opened {opened}"
        );
        if opened {
            accepted += 1;
        } else {
            refused += 1;
        }
    }
    eprintln!("{WS_HANDSHAKES} handshakes: {accepted} accepted, {refused} refused");
    assert!(
        accepted > 0 && refused > 0,
        "the fuzzer reaches both outcomes"
    );

    // LISTEN and IGNORE of mutated, huge and container paths, and text
    // that is no command at all: what one client holds stays bounded.
    let stream = std::net::TcpStream::connect(rig.query).unwrap_or_else(|e| panic!("{e}"));
    stream.set_read_timeout(Some(Duration::from_millis(5))).ok();
    let (mut socket, _) = tungstenite::client(format!("ws://127.0.0.1:{port}/"), stream)
        .unwrap_or_else(|e| panic!("the handshake: {e}"));
    // Every node the namespace serves, containers included: the paths
    // LISTEN may hold.
    let (_, root) = support::http_get(port, "/");
    let root: serde_json::Value = serde_json::from_str(&root).unwrap_or_default();
    let mut known = Vec::new();
    let mut nodes = vec![&root];
    while let Some(node) = nodes.pop() {
        known.extend(node["FULL_PATH"].as_str().map(String::from));
        nodes.extend(
            node["CONTENTS"]
                .as_object()
                .into_iter()
                .flat_map(|c| c.values()),
        );
    }
    assert!(known.len() > 50, "{} nodes", known.len());
    let mut most = 0;
    for sent in 0..WS_COMMANDS {
        let path = match random.below(4) {
            0 => random.pick(&known).clone(),
            1 => {
                let path = random.pick(&known).clone();
                String::from_utf8_lossy(&random.mutate(path.as_bytes())).into()
            }
            2 => format!("/sylva/{}", "x".repeat(random.below(60_000))),
            _ => {
                let length = random.below(64);
                String::from_utf8_lossy(&random.bytes(length)).into()
            }
        };
        let text = match random.below(6) {
            0 => serde_json::json!({ "COMMAND": "IGNORE", "DATA": path }).to_string(),
            1 => {
                let length = random.below(200);
                String::from_utf8_lossy(&random.bytes(length)).into()
            }
            2 => serde_json::json!({ "COMMAND": "LISTEN", "DATA": random.below(9) }).to_string(),
            _ => serde_json::json!({ "COMMAND": "LISTEN", "DATA": path }).to_string(),
        };
        if socket.send(Message::Text(text.into())).is_err() {
            panic!("the server closed a client for its commands ({sent} sent)");
        }
        while socket.read().is_ok() {}
        if sent % 100 == 0 {
            rig.frame();
            most = most.max(rig.control.oscquery_listened_bytes());
        }
    }
    for _ in 0..20 {
        rig.frame();
        most = most.max(rig.control.oscquery_listened_bytes());
    }
    let all_known: usize = known.iter().map(String::len).sum();
    eprintln!(
        "{WS_COMMANDS} commands: at most {most} bytes listened (all known paths: {all_known})"
    );
    assert!(
        most <= MAX_LISTENED_BYTES.min(all_known),
        "{most} bytes listened"
    );
    drop(socket);
    let started = Instant::now();
    while rig.control.oscquery_listened_bytes() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "a closed client still listens"
        );
        rig.frame();
    }
    assert_eq!(
        support::http_get(port, "/sylva/master/brightness?TYPE").0,
        200
    );
}

/// GLSL stages generated by [`shader_translation_stays_bounded`].
pub const GLSL_STAGES: usize = 240;
/// Pass size expressions it evaluates.
pub const SIZE_EXPRESSIONS: usize = 4_000;

/// An expression nested `depth` deep, each level of a kind picked at
/// random: brackets, calls, signs, chained operators, conditionals,
/// swizzles.
fn nested_expression(random: &mut Random, depth: usize) -> String {
    let (mut open, mut close) = (String::new(), String::new());
    for _ in 0..depth {
        let (before, after) = *random.pick(&[
            ("(", ")"),
            ("abs(", ")"),
            ("- ", ""),
            ("-(", ")"),
            ("!", ""),
            ("x + ", ""),
            ("x * ", ""),
            ("(x > 0.0 ? ", " : 1.0)"),
            ("vec4(", ").x"),
            ("float[2](1.0, ", ")[0]"),
        ]);
        open.push_str(before);
        close.insert_str(0, after);
    }
    format!("{open}1.0{close}")
}

/// Macros that expand `levels` times over, each `fan` times its last:
/// object-like, or function-like called nested.
fn macro_expression(random: &mut Random, levels: usize) -> (String, String) {
    let fan = 1 + random.below(4);
    let mut defines = String::new();
    if random.below(2) == 0 {
        defines.push_str("#define M0 x\n");
        for i in 1..=levels {
            let uses = vec![format!("M{}", i - 1); fan].join(" + ");
            defines.push_str(&format!("#define M{i} ({uses})\n"));
        }
        return (defines, format!("M{levels}"));
    }
    let uses = vec!["a"; fan].join(" + ");
    defines.push_str(&format!("#define F(a) ({uses})\n"));
    (
        defines,
        format!("{}x{}", "F(".repeat(levels), ")".repeat(levels)),
    )
}

#[test]
fn shader_translation_stays_bounded() {
    use sylva::layers::shader::isf::bounds::MAX_NESTING;
    use sylva::layers::shader::isf::shadertoy::{ToyPass, translate};
    use sylva::layers::shader::isf::size;
    let mut random = Random(0x6151_0035_0000_0001);
    let valid = "void mainImage(out vec4 c, in vec2 f) {\n    vec2 uv = f / iResolution.xy;\n    \
                 float x = sin(uv.x * 6.0 + iTime) * 0.5 + 0.5;\n    \
                 for (int i = 0; i < 3; i++) { x = x > 0.5 ? x - 0.1 : x + 0.1; }\n    \
                 c = vec4(x, uv, 1.0) * texture(iChannel0, uv);\n}\n";
    let depths = [
        0,
        1,
        16,
        MAX_NESTING / 2,
        MAX_NESTING + 1,
        2 * MAX_NESTING,
        20_000,
    ];
    let (mut translated, mut refused) = (0, 0);
    for _ in 0..GLSL_STAGES {
        let text = match random.below(4) {
            0 => String::from_utf8_lossy(&random.mutate(valid.as_bytes())).into_owned(),
            1 => {
                let levels = *random.pick(&[1, 4, 8, 11, 17, 24, 40]);
                let (defines, expression) = macro_expression(&mut random, levels);
                format!(
                    "{defines}void mainImage(out vec4 c, in vec2 f) {{\n    float x = f.x;\n    x = {expression};\n    c = vec4(x);\n}}\n"
                )
            }
            _ => {
                let depth = *random.pick(&depths);
                let expression = nested_expression(&mut random, depth);
                format!(
                    "void mainImage(out vec4 c, in vec2 f) {{\n    float x = f.x;\n    x = {expression};\n    c = vec4(x);\n}}\n"
                )
            }
        };
        let pass = ToyPass {
            file: "shaders/fuzz.glsl".into(),
            text,
            target: None,
        };
        let started = Instant::now();
        match translate(&[pass], None) {
            Ok(_) => translated += 1,
            Err(_) => refused += 1,
        }
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "one stage took {took:?}");
    }
    eprintln!("{GLSL_STAGES} stages: {translated} translated, {refused} refused");
    assert!(translated > 0 && refused > 0);

    let pieces = [
        "-", "+", " - ", "(", ")", "$WIDTH", "$HEIGHT", "2", "*", "/", "floor(", ",", "max(",
        "1e308",
    ];
    let lookup = |name: &str| matches!(name, "WIDTH" | "HEIGHT").then_some(640.0);
    for _ in 0..SIZE_EXPRESSIONS {
        let length = *random.pick(&[4, 64, 5_000, 60_000]);
        let text: String = (0..random.below(length))
            .map(|_| *random.pick(&pieces))
            .collect();
        let _ = size::side(Some(&text), 640, &lookup);
    }
}

/// Show files generated by [`show_files_that_are_not_plain_files_are_refused_at_once`].
pub const FILE_VARIANTS: usize = 300;

/// What a generated show file is.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Planted {
    /// A plain file of this many bytes.
    Plain(u64),
    /// A link to a plain file outside the show folder.
    LinkOut,
    /// A link on the way: one of its folders links to a folder outside.
    FolderLinkOut,
    /// A link to a device.
    LinkToDevice,
    /// A FIFO.
    Fifo,
    /// A folder where the file should be.
    Folder,
}

/// The show files the security review found and their variants: at a random depth,
/// plain files just under, at and over a random cap (sparse when large),
/// links out of the folder at the file or at a folder on its way, links
/// to `/dev/zero`, FIFOs and folders. Read through the opener and
/// `Assets::read` each is refused at once unless plain and within its
/// cap; written through the opener, nothing outside changes.
#[cfg(unix)]
#[test]
fn show_files_that_are_not_plain_files_are_refused_at_once() {
    use std::path::{Path, PathBuf};
    use sylva::base::opener;
    use sylva::base::opener::OpenError;
    use sylva::base::{Assets, Folder, MAX_FILE_BYTES};
    let mut random = Random(0x0f11_e5ee_d035_0035);
    let root = support::show_folder("fuzz_files", &[("presets/keep.toml", "layers = []\n")]);
    let away = root.with_file_name("fuzz_files-outside");
    std::fs::remove_dir_all(&away).ok();
    std::fs::create_dir_all(&away).ok();
    let outside_text = "outside\n";
    std::fs::write(away.join("target.toml"), outside_text).ok();
    let assets = Assets::new(&root);
    let mut counts = [0usize; 6];
    for i in 0..FILE_VARIANTS {
        let depth = random.below(3);
        let folders: PathBuf = (0..depth).map(|d| format!("d{i}-{d}")).collect();
        let name = format!("f{i}.toml");
        let relative = folders.join(&name);
        let on_disk = root.join("presets").join(&relative);
        if let Some(parent) = on_disk.parent() {
            std::fs::create_dir_all(parent).ok();
        }
        let cap = *random.pick(&[16u64, 4096, 65_536, MAX_FILE_BYTES]);
        let planted = match random.below(6) {
            0 => Planted::Plain(cap - 1 + random.below(3) as u64),
            1 => Planted::LinkOut,
            2 if depth > 0 => Planted::FolderLinkOut,
            3 => Planted::LinkToDevice,
            4 => Planted::Fifo,
            5 => Planted::Folder,
            _ => Planted::Plain(cap * 1024 + 1),
        };
        match planted {
            Planted::Plain(bytes) => {
                let file = std::fs::File::create(&on_disk).map(|f| f.set_len(bytes));
                assert!(file.is_ok_and(|set| set.is_ok()), "{}", on_disk.display());
            }
            Planted::LinkOut => {
                std::os::unix::fs::symlink(away.join("target.toml"), &on_disk).ok();
            }
            Planted::FolderLinkOut => {
                // The first folder on the way becomes a link to a folder
                // outside that holds the rest.
                let first = root.join("presets").join(format!("d{i}-0"));
                let elsewhere = away.join(format!("d{i}-0"));
                std::fs::remove_dir_all(&first).ok();
                let rest = on_disk.strip_prefix(&first).map(Path::to_path_buf);
                let rest = rest.unwrap_or_default();
                std::fs::create_dir_all(elsewhere.join(&rest).parent().unwrap_or(&elsewhere)).ok();
                std::fs::write(elsewhere.join(&rest), outside_text).ok();
                std::os::unix::fs::symlink(&elsewhere, &first).ok();
            }
            Planted::LinkToDevice => {
                std::os::unix::fs::symlink("/dev/zero", &on_disk).ok();
            }
            Planted::Fifo => crate::hardening_files::mkfifo(&on_disk),
            Planted::Folder => {
                std::fs::create_dir_all(&on_disk).ok();
            }
        }
        let started = Instant::now();
        let read = opener::read(&root.join("presets"), &relative, cap);
        let asset = assets.read(Folder::Presets, &relative.to_string_lossy());
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(500),
            "{planted:?} took {took:?}"
        );
        let plain_within = matches!(planted, Planted::Plain(bytes) if bytes <= cap);
        assert_eq!(
            read.is_ok(),
            plain_within,
            "{planted:?} under cap {cap}: {read:?}"
        );
        let shown = read
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        let says = match planted {
            Planted::Plain(_) if !plain_within => Some("at most"),
            Planted::LinkOut | Planted::FolderLinkOut | Planted::LinkToDevice => {
                Some("symbolic link")
            }
            Planted::Fifo => Some("FIFO"),
            Planted::Folder => Some("a folder"),
            Planted::Plain(_) => None,
        };
        if let Some(says) = says {
            assert!(shown.contains(says), "{planted:?}: {shown}");
        }
        // The show's own reader: never what lies outside.
        let plain_for_show = matches!(planted, Planted::Plain(b) if b <= MAX_FILE_BYTES);
        match &asset {
            Ok(asset) => assert!(plain_for_show, "{planted:?} read as {:?}", asset.path),
            Err(error) => assert!(!plain_for_show, "{planted:?}: {error}"),
        }
        // A write through the same name: refused unless a plain file (or
        // none) stands there, and nothing outside changes.
        let written = opener::write(&root.join("presets"), &relative, b"layers = []\n", false);
        let writable = matches!(planted, Planted::Plain(_));
        assert_eq!(written.is_ok(), writable, "{planted:?}: {written:?}");
        if let Err(error) = &written {
            assert!(!matches!(error, OpenError::TooLarge { .. }), "{error}");
        }
        counts[match planted {
            Planted::Plain(_) => 0,
            Planted::LinkOut => 1,
            Planted::FolderLinkOut => 2,
            Planted::LinkToDevice => 3,
            Planted::Fifo => 4,
            Planted::Folder => 5,
        }] += 1;
    }
    let kept = std::fs::read_to_string(away.join("target.toml")).unwrap_or_default();
    assert_eq!(kept, outside_text, "a write went outside the show folder");
    for entry in walk(&away) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert_eq!(text, outside_text, "{} was written", entry.display());
    }
    eprintln!(
        "{FILE_VARIANTS} show files: {counts:?} (plain, link out, folder link out, link to a device, FIFO, folder)"
    );
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    std::fs::remove_dir_all(&root).ok();
    std::fs::remove_dir_all(&away).ok();
}

/// Every file under `dir`.
#[cfg(unix)]
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// HAP clips mutated by [`hap_clips_never_panic`].
pub const HAP_CLIPS: usize = 3_000;

#[test]
fn hap_clips_never_panic() {
    use sylva::engine::inputs::hap::{hap_track, unpack};
    let folder = support::out_dir().join("fuzz_hap");
    std::fs::create_dir_all(&folder).ok();
    let clip = folder.join("clip.mov");
    let made = std::process::Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=16x8:rate=10",
        ])
        .args([
            "-frames:v",
            "3",
            "-c:v",
            "hap",
            "-format",
            "hap_q",
            "-chunks",
            "2",
        ])
        .arg(&clip)
        .status();
    assert!(made.is_ok_and(|s| s.success()), "ffmpeg made the clip");
    let Ok(original) = std::fs::read(&clip) else {
        panic!("reading the clip back");
    };
    let mut random = Random(0x5eed_0004);
    let (mut tracks, mut frames) = (0, 0);
    let mut blocks = Vec::new();
    for n in 0..HAP_CLIPS {
        let bytes = match n % 10 {
            0 => {
                let length = random.below(2000);
                random.bytes(length)
            }
            _ => random.mutate(&original),
        };
        let Ok(Some(track)) = hap_track(std::io::Cursor::new(&bytes)) else {
            continue;
        };
        tracks += 1;
        for sample in &track.samples {
            let start = usize::try_from(sample.offset)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let end = start.saturating_add(sample.bytes as usize).min(bytes.len());
            if unpack(&bytes[start..end], track.codec, track.size, &mut blocks).is_ok() {
                frames += 1;
            }
            assert_eq!(
                blocks.len(),
                track.codec.frame_bytes(track.size),
                "never more than the size"
            );
        }
    }
    eprintln!("{HAP_CLIPS} clips: {tracks} tracks read, {frames} frames unpacked");
    assert!(tracks > 0 && frames > 0, "valid clips among the mutations");
    std::fs::remove_dir_all(&folder).ok();
}

/// Packets, bytes, samples and texts fed to each target of
/// [`lighting_and_timecode_inputs_never_panic`].
pub const LIGHTING_INPUTS: usize = 20_000;

#[test]
fn lighting_and_timecode_inputs_never_panic() {
    use sylva::base::timecode::{FrameRate, Timecode};
    let mut random = Random(0x5eed_0011);
    // Art-Net and sACN packets as a desk or a console sends them, mutated,
    // and random bytes: what the listeners parse off the network.
    let artdmx = artnet_protocol::ArtCommand::Output(artnet_protocol::Output {
        data: vec![7u8; 512].into(),
        ..artnet_protocol::Output::default()
    })
    .write_to_buffer()
    .unwrap_or_default();
    let timecode = artnet_protocol::ArtCommand::OpTimeCode(artnet_protocol::Timecode {
        version: artnet_protocol::ARTNET_PROTOCOL_VERSION,
        filler1: 0,
        stream_id: 0,
        frames: 3,
        seconds: 4,
        minutes: 5,
        hours: 6,
        frame_type: artnet_protocol::FrameType::EBU,
    })
    .write_to_buffer()
    .unwrap_or_default();
    let sacn = sacn_data_packet(1, &[9u8; 512]);
    assert!(
        sacn::packet::AcnRootLayerProtocol::parse(&sacn).is_ok(),
        "the sACN packet is well made"
    );
    let (mut artnet_ok, mut sacn_ok) = (0, 0);
    for i in 0..LIGHTING_INPUTS {
        let packet = match i % 3 {
            0 => random.mutate(&artdmx),
            1 => random.mutate(&timecode),
            _ => {
                let length = random.below(600);
                random.bytes(length)
            }
        };
        artnet_ok += usize::from(artnet_protocol::ArtCommand::from_buffer(&packet).is_ok());
        let packet = random.mutate(&sacn);
        sacn_ok += usize::from(sacn::packet::AcnRootLayerProtocol::parse(&packet).is_ok());
    }
    // MIDI timecode: quarter frames and full frames among random bytes.
    let mut parser = MidiParser::new();
    let mut timecodes = 0;
    for _ in 0..LIGHTING_INPUTS {
        let mut bytes = match random.below(3) {
            0 => vec![0xF1, random.next() as u8],
            1 => vec![0xF0, 0x7F, 0x7F, 0x01, 0x01],
            _ => Vec::new(),
        };
        let length = random.below(12);
        bytes.extend(random.bytes(length));
        timecodes += parser
            .feed(&bytes)
            .iter()
            .filter(|m| m.kind().starts_with("mtc"))
            .count();
    }
    // LTC: a real signal, cut, with noise and bursts, and pure noise.
    let signal = sylva::audio::ltc::encode(
        Timecode::from_frame_number(1_000, FrameRate::Ebu25),
        50,
        48_000,
    );
    let mut decoder = sylva::audio::ltc::LtcDecoder::new(48_000);
    let mut read = 0;
    for _ in 0..LIGHTING_INPUTS / 100 {
        let from = random.below(signal.len());
        let length = random.below(4_000);
        let mut samples: Vec<f32> = signal[from..(from + length).min(signal.len())].to_vec();
        for s in samples.iter_mut() {
            *s += (random.below(1_000) as f32 / 1_000.0 - 0.5) * 0.3;
        }
        samples.extend((0..random.below(500)).map(|_| f32::from_bits(random.next() as u32)));
        decoder.push(&samples, |tc, _| {
            assert!(tc.valid(), "{tc:?}");
            read += 1;
        });
    }
    // Timelines and fixtures as a show folder holds them, mutated.
    let timeline = include_str!("../presets/timelines/premiere.toml");
    let fixtures = include_str!("../outputs/ledstrip.toml");
    let (mut timelines_ok, mut fixtures_ok) = (0, 0);
    for _ in 0..LIGHTING_INPUTS / 4 {
        let text = random.mutate(timeline.as_bytes());
        let parsed =
            sylva::show::timeline::Timeline::parse("t.toml", &String::from_utf8_lossy(&text));
        if let Ok(parsed) = parsed {
            timelines_ok += 1;
            let at = random.below(400) as f64;
            let _ = (parsed.state_at(at), parsed.due(at - 1.0, at).len());
        }
        let text = random.mutate(fixtures.as_bytes());
        let parsed = sylva::outputs::OutputsPlan::parse("o.toml", &String::from_utf8_lossy(&text));
        if let Ok(plan) = parsed {
            fixtures_ok += 1;
            for fixture in &plan.dmx {
                let _ = (fixture.layout.spots().len(), fixture.addresses().len());
            }
        }
    }
    eprintln!(
        "{LIGHTING_INPUTS} each: {artnet_ok} Art-Net and {sacn_ok} sACN packets parsed, {timecodes} MTC messages, {read} LTC frames, {timelines_ok} timelines and {fixtures_ok} fixture files parsed"
    );
    assert!(artnet_ok > 0 && sacn_ok > 0 && timecodes > 0 && read > 0);
    assert!(timelines_ok > 0 && fixtures_ok > 0);
}

/// What a follower decodes off its leader's stream: mutated frames (with
/// every kind of change and the ear) and random bytes never panic.
#[test]
fn ensemble_packets_never_panic() {
    use sylva::command::Command;
    use sylva::params::Source;
    use sylva::show::ensemble::wire::{EnsemblePacket, FrameRecord, decode, encode};
    let mut random = Random(0x5eed_0012);
    let frame = encode(&EnsemblePacket::Frame(Box::new(FrameRecord {
        frame: 600,
        dt: 1.0 / 60.0,
        changes: vec![
            Command::Set("master.brightness".into(), Value::Float(0.5), Source::Midi),
            Command::Set(
                "a.c".into(),
                Value::Colour([1.0; 4]),
                Source::Osc("x".into()),
            ),
            Command::LoadPreset("fluid".into(), Some(2.0)),
            Command::Reseed("colony".into()),
        ],
        heard: Some(sylva::audio::Heard::default()),
        ..FrameRecord::default()
    })));
    let mut decoded = 0;
    for i in 0..LIGHTING_INPUTS {
        let bytes = if i % 4 == 3 {
            let length = random.below(2_000);
            random.bytes(length)
        } else {
            random.mutate(&frame)
        };
        decoded += usize::from(decode(&bytes).is_ok());
    }
    eprintln!("{LIGHTING_INPUTS} ensemble packets: {decoded} decoded");
    assert!(decoded > 0 && decoded < LIGHTING_INPUTS);
}

/// An E1.31 data packet for `universe` (ANSI E1.31-2018 section 4: the
/// root, framing and DMP layers, then the start code and `channels`).
fn sacn_data_packet(universe: u16, channels: &[u8]) -> Vec<u8> {
    let total = 126 + channels.len();
    let flags_and_length = |from: usize| (0x7000 | (total - from) as u16).to_be_bytes();
    let mut packet = Vec::with_capacity(total);
    packet.extend(0x0010u16.to_be_bytes());
    packet.extend(0u16.to_be_bytes());
    packet.extend(b"ASC-E1.17\0\0\0");
    packet.extend(flags_and_length(16));
    packet.extend(4u32.to_be_bytes());
    packet.extend([0x5Au8; 16]);
    packet.extend(flags_and_length(38));
    packet.extend(2u32.to_be_bytes());
    let mut name = [0u8; 64];
    name[..4].copy_from_slice(b"fuzz");
    packet.extend(name);
    packet.extend([100u8]);
    packet.extend(0u16.to_be_bytes());
    packet.extend([1u8, 0]);
    packet.extend(universe.to_be_bytes());
    packet.extend(flags_and_length(115));
    packet.extend([0x02u8, 0xA1]);
    packet.extend(0u16.to_be_bytes());
    packet.extend(1u16.to_be_bytes());
    packet.extend((channels.len() as u16 + 1).to_be_bytes());
    packet.push(0);
    packet.extend(channels);
    packet
}
