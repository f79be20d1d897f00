//! The show's clock following timecode: MIDI timecode (a full-frame locate,
//! then running quarter frames) and Art-Net's `ArtTimeCode` on 127.0.0.1
//! take the clock to their position, frame-accurate, `master.timecode`
//! says it, the HUD line says locked; a source the show does not follow
//! moves nothing. A cue timeline plays its cues on that clock, stands
//! where a locate puts it, and stops and plays again over OSC.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use sylva::base::timecode::{FrameRate, Timecode};
use sylva::control::ControlOptions;
use sylva::control::midi_apply::MidiReceived;
use sylva::control::midi_parse::MidiMessage;
use sylva::gpu::OUTPUT_FORMAT;
use sylva::params::{Source, Value};

use crate::osc_rig::{Rig, message, rig_with};
use crate::support;
use crate::support::Checked;

fn rig() -> Rig {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    rig_with(show, ControlOptions::default(), Duration::from_secs(10))
}

/// Follows `master.timecode_source` option `source` (1 MTC, 2 Art-Net).
fn follow(rig: &mut Rig, source: usize) {
    rig.show
        .registry
        .set("master.timecode_source", Value::Enum(source), Source::Ui)
        .checked("choosing the timecode source");
    rig.frame();
}

fn midi(rig: &Rig, message: MidiMessage) {
    rig.control
        .sender()
        .send(Box::new(MidiReceived {
            port: "timecode".into(),
            message,
            at: Instant::now(),
        }))
        .checked("queueing MIDI");
}

/// `master.timecode` as the show says it.
fn said(rig: &Rig) -> f64 {
    match rig.show.registry.get("master.timecode") {
        Some(Value::Float(v)) => f64::from(*v),
        _ => f64::NAN,
    }
}

#[test]
fn midi_timecode_locates_the_clock_and_its_quarter_frames_keep_it_locked() {
    let mut rig = rig();
    // Not followed yet: a locate moves nothing.
    midi(
        &rig,
        MidiMessage::FullFrame {
            hours: 0x20 | 1,
            minutes: 0,
            seconds: 0,
            frames: 0,
        },
    );
    rig.frame();
    assert!(rig.show.clock.time < 10.0, "{}", rig.show.clock.time);

    follow(&mut rig, 1);
    // 01:00:00:00 at 25 fps: the rate in bits 5-6 of the hours.
    midi(
        &rig,
        MidiMessage::FullFrame {
            hours: 0x20 | 1,
            minutes: 0,
            seconds: 0,
            frames: 0,
        },
    );
    rig.frame();
    let time = rig.show.clock.time;
    assert!(
        (3600.0..3600.2).contains(&time),
        "the clock jumped to {time}"
    );
    assert!(
        (said(&rig) - time).abs() < 0.05,
        "master.timecode {} for {time}",
        said(&rig)
    );

    // The source runs on from 01:00:05:00: eight quarter frames every two
    // frames, as a sequencer sends them in time.
    let rate = FrameRate::Ebu25;
    let start = Instant::now();
    let first = Timecode {
        hours: 1,
        minutes: 0,
        seconds: 5,
        frames: 0,
        rate,
    };
    let mut sent = 0u64;
    while start.elapsed() < Duration::from_millis(1500) {
        let due = (start.elapsed().as_secs_f64() * 25.0 * 4.0) as u64;
        while sent <= due {
            let tc = first.plus_frames(sent / 4 / 2 * 2);
            let piece = (sent % 8) as u8;
            let value = match piece {
                0 => tc.frames & 0x0F,
                1 => tc.frames >> 4,
                2 => tc.seconds & 0x0F,
                3 => tc.seconds >> 4,
                4 => tc.minutes & 0x0F,
                5 => tc.minutes >> 4,
                6 => tc.hours & 0x0F,
                _ => (tc.hours >> 4) | rate.code() << 1,
            };
            midi(&rig, MidiMessage::QuarterFrame { piece, value });
            sent += 1;
        }
        rig.frame();
    }
    let expected = first.seconds() + start.elapsed().as_secs_f64();
    let time = rig.show.clock.time;
    assert!(
        (time - expected).abs() < 0.2,
        "the clock at {time}, the source at {expected}"
    );
    let status = rig.show.timecode_status().unwrap_or_default();
    assert!(
        status.contains("MIDI timecode 01:00:0") && status.contains("locked"),
        "{status}"
    );
}

#[test]
fn art_net_timecode_leads_the_clock_when_followed() {
    let _port = support::ARTNET_PORT
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut rig = rig();
    follow(&mut rig, 2);
    let console = UdpSocket::bind("127.0.0.1:0").checked("the console's socket");
    let rate = FrameRate::Smpte30;
    let first = Timecode {
        hours: 0,
        minutes: 10,
        seconds: 0,
        frames: 0,
        rate,
    };
    let start = Instant::now();
    let mut status = String::new();
    while start.elapsed() < Duration::from_secs(5) {
        let frames = (start.elapsed().as_secs_f64() * rate.fps()) as u64;
        let tc = first.plus_frames(frames);
        let packet = artnet_protocol::ArtCommand::OpTimeCode(artnet_protocol::Timecode {
            version: artnet_protocol::ARTNET_PROTOCOL_VERSION,
            filler1: 0,
            stream_id: 0,
            frames: tc.frames,
            seconds: tc.seconds,
            minutes: tc.minutes,
            hours: tc.hours,
            frame_type: artnet_protocol::FrameType::SMPTE,
        })
        .write_to_buffer()
        .checked("an ArtTimeCode packet");
        console.send_to(&packet, ("127.0.0.1", 6454)).ok();
        rig.frame();
        status = rig.show.timecode_status().unwrap_or_default();
        if status.contains("locked") && start.elapsed() > Duration::from_millis(500) {
            break;
        }
    }
    assert!(
        status.contains("Art-Net timecode 00:10:0") && status.contains("locked"),
        "{status}"
    );
    let expected = first.seconds() + start.elapsed().as_secs_f64();
    let time = rig.show.clock.time;
    assert!(
        (time - expected).abs() < 0.2,
        "the clock at {time}, the console at {expected}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "locked within {:?}",
        start.elapsed()
    );
}

#[test]
fn the_show_as_master_sends_its_position_as_art_net_timecode() {
    let listener = UdpSocket::bind("127.0.0.1:0").checked("a node's socket");
    listener
        .set_read_timeout(Some(Duration::from_millis(100)))
        .checked("a timeout");
    let to = listener.local_addr().checked("its address");
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let options = ControlOptions {
        timecode_to: to,
        ..ControlOptions::default()
    };
    let mut rig = rig_with(show, options, Duration::from_secs(10));
    for (name, option) in [("master.timecode_out", 1), ("master.timecode_rate", 1)] {
        rig.show
            .registry
            .set(name, Value::Enum(option), Source::Ui)
            .checked("asking for timecode out at 25 fps");
    }
    let mut heard: Vec<(Timecode, f64)> = Vec::new();
    let mut buffer = [0u8; 64];
    let start = Instant::now();
    while heard.len() < 10 && start.elapsed() < Duration::from_secs(10) {
        rig.frame();
        while let Ok((length, _)) = listener.recv_from(&mut buffer) {
            if let Ok(artnet_protocol::ArtCommand::OpTimeCode(tc)) =
                artnet_protocol::ArtCommand::from_buffer(&buffer[..length])
            {
                assert_eq!(tc.frame_type, artnet_protocol::FrameType::EBU);
                let tc = Timecode {
                    hours: tc.hours,
                    minutes: tc.minutes,
                    seconds: tc.seconds,
                    frames: tc.frames,
                    rate: FrameRate::Ebu25,
                };
                heard.push((tc, rig.show.clock.time));
            }
        }
    }
    assert!(heard.len() >= 10, "{} timecodes came", heard.len());
    for pair in heard.windows(2) {
        assert!(
            pair[1].0.frame_number() > pair[0].0.frame_number(),
            "{:?}",
            pair
        );
    }
    let (last, clock) = heard[heard.len() - 1];
    assert!(
        (last.seconds() - clock).abs() <= 2.0 / 25.0,
        "{last} sent at clock {clock}"
    );
    // A machine following another's leaves the timecode to its leader.
    rig.show.follow_a_leader();
    for _ in 0..10 {
        rig.frame();
    }
    while listener.recv_from(&mut buffer).is_ok() {}
    for _ in 0..10 {
        rig.frame();
    }
    assert!(
        listener.recv_from(&mut buffer).is_err(),
        "a follower sent timecode"
    );
}

#[test]
fn a_timeline_plays_its_cues_on_the_clock_and_stands_where_a_locate_puts_it() {
    let order = "[[cue]]\nat = 0.5\npreset = \"b\"\nfade = 0.0\n\n\
                 [[cue]]\nat = 1.0\nparam = \"master.brightness\"\nto = 0.25\n\n\
                 [[cue]]\nat = 2.0\naction = \"preset:a\"\n\n\
                 [[cue]]\nat = \"00:01:00:00\"\npreset = \"b\"\n\n\
                 [[cue]]\nat = \"00:01:00:00\"\nparam = \"master.brightness\"\nto = 1.5\n";
    let root = support::show_folder(
        "timeline_order",
        &[
            ("presets/a.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/b.toml", "layers = [\"shader.echo\"]\n"),
            ("presets/timelines/order.toml", order),
        ],
    );
    let show = support::start(
        sylva::show::ShowOptions {
            timeline: Some("order".into()),
            ..sylva::show::ShowOptions::new(root.clone(), "a")
        },
        OUTPUT_FORMAT,
    );
    let mut rig = rig_with(show, ControlOptions::default(), Duration::from_secs(20));
    let brightness = |rig: &Rig| match rig.show.registry.target("master.brightness") {
        Some(Value::Float(v)) => *v,
        _ => f32::NAN,
    };
    let mut seen = Vec::new();
    while rig.show.clock.time < 2.5 {
        rig.frame();
        let preset = rig.show.preset().unwrap_or_default().to_string();
        if seen.last() != Some(&preset) {
            seen.push(preset);
        }
        if (1.05..1.9).contains(&rig.show.clock.time) {
            assert!(
                (brightness(&rig) - 0.25).abs() < 1e-6,
                "at {}",
                rig.show.clock.time
            );
        }
    }
    assert_eq!(seen, vec!["a", "b", "a"], "the presets in the cues' order");
    let status = rig.show.timeline_status().unwrap_or_default();
    assert!(status.contains("cue 4 of 5"), "{status}");

    // A locate to 00:01:05:00: the show stands where the running order says.
    follow(&mut rig, 1);
    midi(
        &rig,
        MidiMessage::FullFrame {
            hours: 0x20,
            minutes: 1,
            seconds: 5,
            frames: 0,
        },
    );
    rig.until("the locate", |rig| rig.show.clock.time > 64.0);
    rig.until("preset b", |rig| rig.show.preset() == Some("b"));
    assert!(
        (brightness(&rig) - 1.5).abs() < 1e-6,
        "{}",
        brightness(&rig)
    );

    // Over OSC, as TouchDesigner would: stopped, then played again.
    rig.send(&message("/sylva/timeline/stop", vec![]));
    rig.until("the timeline stops", |rig| {
        rig.show.timeline_status().is_none()
    });
    let play = vec![rosc::OscType::String("order".into())];
    rig.send(&message("/sylva/timeline/play", play));
    rig.until("the timeline plays again", |rig| {
        rig.show.timeline_status().is_some()
    });
    std::fs::remove_dir_all(root).ok();
}
