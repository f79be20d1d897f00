//! OSC and OSCQuery over real sockets on loopback: messages, nested and
//! empty bundles, wrong types and garbage followed by a valid message,
//! future time tags, TouchDesigner-style aliases, feedback to a listening
//! UDP socket without echo, and the OSCQuery namespace over HTTP.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant, SystemTime};

use rosc::{OscMessage, OscPacket, OscTime, OscType};
use sylva::command::Command;
use sylva::control::ControlOptions;
use sylva::control::midi_apply::MidiReceived;
use sylva::gpu::OUTPUT_FORMAT;
use sylva::params::{Source, Value};

use crate::osc_rig::{NOW, Rig, bundle, message, rig_with};

use crate::support;
use crate::support::Checked;

const CEILING: Duration = Duration::from_secs(10);

/// The default show with OSC and OSCQuery on free loopback ports and
/// feedback to `feedback` if given.
fn rig(feedback: Option<SocketAddr>) -> Rig {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let options = ControlOptions {
        osc_out: feedback.into_iter().collect(),
        ..ControlOptions::default()
    };
    rig_with(show, options, CEILING)
}

#[test]
fn messages_and_bundles_set_parameters_and_garbage_is_survived() {
    let mut rig = rig(None);
    rig.send(&message(
        "/sylva/master/brightness",
        vec![OscType::Float(2.5)],
    ));
    rig.until("float message", |r| {
        r.target("master.brightness") == Some(Value::Float(2.5))
    });

    rig.send(&bundle(
        NOW,
        vec![
            bundle(NOW, vec![]),
            bundle(
                NOW,
                vec![message(
                    "/sylva/shader/echo/blend",
                    vec![OscType::String("screen".into())],
                )],
            ),
            message(
                "/sylva/shader/aurora/base",
                vec![
                    OscType::Float(1.0),
                    OscType::Float(0.0),
                    OscType::Float(0.5),
                ],
            ),
        ],
    ));
    rig.until("nested bundle", |r| {
        r.target("shader.echo.blend") == Some(Value::Enum(2))
            && r.target("shader.aurora.base") == Some(Value::Colour([1.0, 0.0, 0.5, 1.0]))
    });

    rig.send(&bundle(NOW, vec![]));
    rig.send(&message(
        "/sylva/master/brightness",
        vec![OscType::String("bright".into())],
    ));
    rig.send(&message("/sylva/master/nothing", vec![OscType::Float(1.0)]));
    rig.send_raw(b"\xff\x00garbage that is not OSC");
    rig.send_raw(b"");
    rig.send(&message("/sylva/master/brightness", vec![OscType::Int(1)]));
    rig.until("valid message after garbage", |r| {
        r.target("master.brightness") == Some(Value::Float(1.0))
    });
    let (datagrams, malformed) = rig.control.osc_counts();
    assert!(
        malformed >= 1,
        "garbage counted: {datagrams} datagrams, {malformed} malformed"
    );
    assert!(
        rig.show.ground.errors.snapshot().is_empty(),
        "{:?}",
        rig.show.ground.errors.snapshot()
    );
}

#[test]
fn future_time_tags_wait_and_aliases_convert_ranges() {
    let mut rig = rig(None);
    let later = OscTime::try_from(SystemTime::now() + Duration::from_millis(400)).unwrap_or(NOW);
    rig.send(&bundle(
        later,
        vec![message("/sylva/master/bpm", vec![OscType::Float(90.0)])],
    ));
    let waited = rig.until("scheduled bundle", |r| {
        r.target("master.bpm") == Some(Value::Float(90.0))
    });
    assert!(
        waited >= Duration::from_millis(300),
        "applied after {waited:?}, before its time tag"
    );

    // presets/mappings/touchdesigner.toml: /chan1 0..1 drives master.brightness 0..4.
    rig.send(&message("/chan1", vec![OscType::Float(0.25)]));
    rig.until("alias", |r| {
        r.target("master.brightness") == Some(Value::Float(1.0))
    });
}

#[test]
fn feedback_reaches_targets_but_never_echoes_the_sender() {
    let listener = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("listener: {e}"));
    listener
        .set_read_timeout(Some(Duration::from_millis(50)))
        .checked("setting a test value");
    let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let mut rig = rig(Some(address));
    let received = |listener: &UdpSocket| -> Vec<OscMessage> {
        let mut out = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = listener.recv(&mut buffer) {
            let mut messages = Vec::new();
            if let Ok((_, packet)) = rosc::decoder::decode_udp(&buffer[..n]) {
                sylva::control::osc::unpack(packet, None, &mut messages);
            }
            out.extend(messages.into_iter().map(|(m, _)| m));
        }
        out
    };
    // The preset's values go out on the first frame; then a change from the
    // HUD is sent, once, as its target value.
    rig.frame();
    received(&listener);
    for value in [0.5, 0.75] {
        rig.show
            .registry
            .set("shader.echo.opacity", Value::Float(value), Source::Ui)
            .checked("setting a test value");
    }
    rig.frame();
    rig.frame();
    let sent = received(&listener);
    let opacity: Vec<&OscMessage> = sent
        .iter()
        .filter(|m| m.addr == "/sylva/shader/echo/opacity")
        .collect();
    assert_eq!(
        opacity.len(),
        1,
        "one message per parameter per frame: {sent:?}"
    );
    assert_eq!(
        opacity[0].args,
        vec![OscType::Float(0.75)],
        "the target, not the smoothed value"
    );

    // A change that came from this host over OSC is not echoed back to it.
    rig.send(&message(
        "/sylva/master/brightness",
        vec![OscType::Float(3.0)],
    ));
    rig.until("osc change", |r| {
        r.target("master.brightness") == Some(Value::Float(3.0))
    });
    rig.frame();
    let echoed = received(&listener);
    assert!(
        echoed.iter().all(|m| m.addr != "/sylva/master/brightness"),
        "echoed: {echoed:?}"
    );

    // /sylva/status answers the asker.
    rig.send(&message("/sylva/status", vec![]));
    rig.sender
        .set_read_timeout(Some(Duration::from_millis(20)))
        .checked("setting a test value");
    let mut buffer = [0u8; 4096];
    let started = Instant::now();
    let status = loop {
        assert!(
            started.elapsed() < CEILING,
            "no /sylva/status reply within {CEILING:?}"
        );
        rig.frame();
        if let Ok(n) = rig.sender.recv(&mut buffer) {
            break rosc::decoder::decode_udp(&buffer[..n]).map(|(_, p)| p);
        }
    };
    assert!(
        matches!(status, Ok(OscPacket::Message(ref m)) if m.addr == "/sylva/status"),
        "{status:?}"
    );
}

#[test]
fn oscquery_serves_the_namespace_with_current_values() {
    let mut rig = rig(None);
    rig.show
        .registry
        .set("master.brightness", Value::Float(1.5), Source::Ui)
        .checked("setting a test value");
    rig.frame();
    let port = rig
        .control
        .oscquery_port()
        .unwrap_or_else(|| panic!("OSCQuery did not start"));
    let get = |path: &str| support::http_get(port, path);
    let (status, body) = get("/sylva/master/brightness");
    assert_eq!(status, 200);
    let node: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    for attribute in [
        "FULL_PATH",
        "TYPE",
        "VALUE",
        "RANGE",
        "ACCESS",
        "DESCRIPTION",
    ] {
        assert!(
            node.get(attribute).is_some(),
            "{attribute} missing in {body}"
        );
    }
    assert_eq!(node["VALUE"], serde_json::json!([1.5]));
    let (_, value) = get("/sylva/shader/echo/blend?VALUE");
    assert_eq!(value, "{\"VALUE\":[\"add\"]}");
    let (_, root) = get("/");
    let root: serde_json::Value = serde_json::from_str(&root).unwrap_or_default();
    assert!(root["CONTENTS"]["sylva"]["CONTENTS"]["shader"]["CONTENTS"]["aurora"]["CONTENTS"]["glow"]["UNIT"].is_null());
    assert_eq!(
        root["CONTENTS"]["sylva"]["CONTENTS"]["shader"]["CONTENTS"]["aurora"]["CONTENTS"]["glow"]["TYPE"],
        "f"
    );
    let (_, info) = get("/?HOST_INFO");
    let info: serde_json::Value = serde_json::from_str(&info).unwrap_or_default();
    assert_eq!(info["OSC_PORT"], rig.osc.port());
    assert_eq!(get("/sylva/nothing").0, 404);
}

#[test]
fn oscquery_listen_streams_changes_over_a_websocket() {
    let mut rig = rig(None);
    let port = rig
        .control
        .oscquery_port()
        .unwrap_or_else(|| panic!("OSCQuery did not start"));
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|e| panic!("connect: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .checked("setting a test value");
    let (mut socket, _) = tungstenite::client(format!("ws://127.0.0.1:{port}/"), stream)
        .unwrap_or_else(|e| panic!("websocket handshake: {e}"));
    let listen = r#"{"COMMAND":"LISTEN","DATA":"/sylva/master/brightness"}"#;
    socket
        .send(tungstenite::Message::Text(listen.into()))
        .checked("sending");
    // Give the server a moment to register the listener and read the command.
    let started = Instant::now();
    let mut heard = None;
    while heard.is_none() {
        assert!(
            started.elapsed() < CEILING,
            "no LISTEN update within {CEILING:?}"
        );
        let value = 1.0 + (started.elapsed().as_millis() % 100) as f32 / 100.0;
        rig.show
            .registry
            .set("master.brightness", Value::Float(value), Source::Ui)
            .checked("setting a test value");
        rig.show
            .registry
            .set("master.bpm", Value::Float(100.0 + value), Source::Ui)
            .checked("setting a test value");
        rig.frame();
        if let Ok(tungstenite::Message::Binary(bytes)) = socket.read() {
            heard = rosc::decoder::decode_udp(&bytes).ok().map(|(_, p)| p);
        }
    }
    match heard {
        Some(OscPacket::Message(m)) => {
            assert_eq!(
                m.addr, "/sylva/master/brightness",
                "only the listened path streams"
            );
            assert!(
                matches!(m.args[..], [OscType::Float(v)] if (1.0..2.0).contains(&v)),
                "{m:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn midi_learn_binds_a_control_and_saves_the_mapping_in_the_show() {
    let project = support::out_dir().join("control_learn");
    std::fs::remove_dir_all(&project).ok();
    std::fs::create_dir_all(project.join("presets")).checked("writing the test show");
    let show = support::show(project.clone(), "default", OUTPUT_FORMAT);
    let mut rig = rig_with(show, ControlOptions::default(), CEILING);
    let midi = |message| -> sylva::control::ControlEvent {
        Box::new(MidiReceived {
            port: "Launch Control XL".into(),
            message,
            at: Instant::now(),
        })
    };
    use sylva::control::midi_parse::MidiMessage::ControlChange;
    rig.show
        .apply(Command::Learn("shader.echo.decay".into()))
        .checked("arming MIDI learn");
    rig.control
        .sender()
        .send(midi(ControlChange {
            channel: 9,
            controller: 77,
            value: 3,
        }))
        .checked("setting a test value");
    rig.frame();
    let saved =
        std::fs::read_to_string(project.join("presets/mappings/learned.toml")).unwrap_or_default();
    assert!(
        saved.contains("cc = 77")
            && saved.contains("shader.echo.decay")
            && saved.contains("channel = 9"),
        "{saved}"
    );
    // The knob now drives the parameter once it picks up its value (0.9 of 0..0.999).
    for value in [100, 127] {
        rig.control
            .sender()
            .send(midi(ControlChange {
                channel: 9,
                controller: 77,
                value,
            }))
            .checked("setting a test value");
    }
    rig.frame();
    assert_eq!(rig.target("shader.echo.decay"), Some(Value::Float(0.999)));
    std::fs::remove_dir_all(project).ok();
}

#[test]
fn names_from_the_network_stay_inside_the_show() {
    let mut rig = rig(None);
    rig.send(&message(
        "/sylva/preset",
        vec![OscType::String("../../etc/passwd".into())],
    ));
    rig.send(&message(
        "/sylva/preset/save",
        vec![OscType::String("/tmp/evil".into())],
    ));
    rig.send(&message("/sylva/master/bpm", vec![OscType::Float(99.0)]));
    rig.until("later message", |r| {
        r.target("master.bpm") == Some(Value::Float(99.0))
    });
    assert_eq!(rig.show.preset(), Some("default"));
    assert!(!std::path::Path::new("/tmp/evil.toml").exists());
    let errors = rig.show.ground.errors.snapshot();
    assert!(
        errors
            .iter()
            .any(|e| e.message.contains("not a name inside the show folder")),
        "{errors:?}"
    );
}

#[test]
fn buttons_step_through_presets_and_saved_mappings_take_effect() {
    let root = support::show_folder(
        "control_step",
        &[
            ("presets/a.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            (
                "presets/mappings/pads.toml",
                "[[midi]]\nnote = 36\naction = \"preset:next\"\n\n[[midi]]\nnote = 37\naction = \"preset:prev\"\n",
            ),
        ],
    );
    let mut show = support::show(root.clone(), "a", OUTPUT_FORMAT);
    show.watch(Box::new(|| {}));
    let mut rig = rig_with(show, ControlOptions::default(), CEILING);
    let pad = |note| -> sylva::control::ControlEvent {
        Box::new(MidiReceived {
            port: "pads".into(),
            message: sylva::control::midi_parse::MidiMessage::NoteOn {
                channel: 1,
                note,
                velocity: 100,
            },
            at: Instant::now(),
        })
    };
    let press = |rig: &mut Rig, note| {
        rig.control
            .sender()
            .send(pad(note))
            .checked("pressing a pad");
        rig.frame();
        rig.frame();
        rig.until("the preset comes on", |rig| rig.show.arriving().is_none());
    };
    press(&mut rig, 36);
    assert_eq!(rig.show.preset(), Some("b"));
    press(&mut rig, 37);
    assert_eq!(rig.show.preset(), Some("a"));
    press(&mut rig, 36);
    assert_eq!(rig.show.preset(), Some("b"));
    // Saving the mapping file rebinds the pads while the show runs.
    let revision = rig.show.mappings().revision;
    std::fs::write(
        root.join("presets/mappings/pads.toml"),
        "[[midi]]\nnote = 38\naction = \"preset:a\"\n",
    )
    .checked("saving the mapping file");
    rig.until("the saved mapping file is read again", |rig| {
        rig.show.mappings().revision > revision
    });
    press(&mut rig, 36);
    assert_eq!(rig.show.preset(), Some("b"), "the old binding is gone");
    press(&mut rig, 38);
    assert_eq!(rig.show.preset(), Some("a"));
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn a_preset_asked_for_with_seconds_crossfades_over_them() {
    let mut rig = rig(None);
    rig.send(&message(
        "/sylva/preset",
        vec![OscType::String("empty".into()), OscType::Float(2.5)],
    ));
    rig.until("the preset fades in", |r| r.show.preset() == Some("empty"));
    let fade = rig.show.outgoing().map(|o| o.seconds);
    assert_eq!(fade, Some(2.5), "the default show fades out over 2.5 s");
    // From Lua: `sylva.preset(name, seconds)` goes through the same command.
    let root = support::show_folder(
        "control_lua_fade",
        &[
            (
                "presets/a.toml",
                "layers = [\"shader.echo\"]\nscript = \"scripts/go.lua\"\n",
            ),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            (
                "scripts/go.lua",
                "function on_beat(n) if n == 1 then sylva.preset(\"b\", 4) end end\n",
            ),
        ],
    );
    let mut show = support::show(root.clone(), "a", OUTPUT_FORMAT);
    let mut output = sylva::gpu::RenderTarget::new(
        &show.ground.gpu.device,
        "fade.output",
        [8, 8],
        OUTPUT_FORMAT,
    );
    // Beat 1 falls on the first frame (120 bpm); the preset it asks for
    // comes on once its layers' files are in, which a loaded machine may
    // take several frames to finish: short frames then, so the fade is
    // still under way when it does.
    show.frame(0.5, None, &mut output, |_, _| {});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while show.preset() != Some("b") && std::time::Instant::now() < deadline {
        show.frame(0.01, None, &mut output, |_, _| {});
    }
    assert_eq!(show.preset(), Some("b"));
    assert_eq!(show.outgoing().map(|o| o.seconds), Some(4.0));
    std::fs::remove_dir_all(root).ok();
}
