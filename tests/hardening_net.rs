//! Hostile network input, each case exactly as the first security probe found it: single
//! datagrams that crashed or silenced OSC, floods that ate the frames or
//! memory, status replies that amplified, saves that overwrote, and
//! OSCQuery connections that grew without bound. Every test ends by
//! checking that OSC still sets a parameter.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use rosc::{OscBundle, OscPacket, OscTime, OscType};
use sylva::control::allow::AllowList;
use sylva::control::osc::MAX_QUEUED_BYTES;
use sylva::control::{ControlOptions, EVENTS_PER_FRAME, MAX_SCHEDULED};
use sylva::gpu::OUTPUT_FORMAT;
use sylva::params::Value;
use sylva::show::Show;

use crate::osc_rig::{NOW, Rig, encode, message, rig_with};

use crate::support;
use crate::support::Checked;

const CEILING: Duration = Duration::from_secs(20);

fn rig_in(show: Show, allow: AllowList) -> Rig {
    let options = ControlOptions {
        allow,
        ..ControlOptions::default()
    };
    rig_with(show, options, CEILING)
}

fn rig() -> Rig {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    rig_in(show, AllowList::default())
}

/// An OSC string: the bytes, a NUL, padding to four.
fn osc_string(text: &[u8]) -> Vec<u8> {
    let mut bytes = text.to_vec();
    bytes.push(0);
    while !bytes.len().is_multiple_of(4) {
        bytes.push(0);
    }
    bytes
}

/// A bundle around `inner` bytes with time tag `tag`.
fn raw_bundle(tag: (u32, u32), inner: &[u8]) -> Vec<u8> {
    let mut bytes = osc_string(b"#bundle");
    bytes.extend(tag.0.to_be_bytes());
    bytes.extend(tag.1.to_be_bytes());
    bytes.extend((inner.len() as u32).to_be_bytes());
    bytes.extend(inner);
    bytes
}

impl Rig {
    fn brightness(&self) -> Option<f32> {
        self.show
            .registry
            .target("master.brightness")
            .and_then(Value::as_f32)
    }

    /// OSC still works: a fresh brightness arrives.
    fn still_listening(&mut self, level: f32) {
        self.send(&message(
            "/sylva/master/brightness",
            vec![OscType::Float(level)],
        ));
        self.until("OSC still sets parameters", |r| {
            r.brightness() == Some(level)
        });
    }

    fn malformed(&self) -> u64 {
        self.control.osc_counts().1
    }
}

#[test]
fn reseed_without_a_layer_is_survived() {
    let mut rig = rig();
    rig.send(&message("/sylva/reseed", vec![]));
    rig.send(&message("/sylva//reseed", vec![]));
    rig.still_listening(0.31);
}

#[test]
fn deeply_nested_arrays_and_bundles_are_refused_not_overflowed() {
    let mut rig = rig();
    let mut arrays = osc_string(b"/sylva/master/brightness");
    let tags = format!(",{}{}", "[".repeat(16_000), "]".repeat(16_000));
    arrays.extend(osc_string(tags.as_bytes()));
    rig.send_raw(&arrays);
    let mut bundles = encode(&message(
        "/sylva/master/brightness",
        vec![OscType::Float(0.9)],
    ));
    for _ in 0..2_200 {
        bundles = raw_bundle((0, 1), &bundles);
    }
    assert!(bundles.len() < 65_000, "{} bytes", bundles.len());
    rig.send_raw(&bundles);
    rig.until("both counted malformed", |r| r.malformed() >= 2);
    assert_ne!(
        rig.brightness(),
        Some(0.9),
        "the nested message is refused whole"
    );
    rig.still_listening(0.32);
}

#[test]
fn tags_without_argument_bytes_cannot_grow_the_queue() {
    let mut rig = rig();
    // The hardening probe: a 65 KB datagram whose type tag is ~65,000
    // `N` decoded to ~1.65 MB; a stream of them took 3 GB.
    let mut nils = osc_string(b"/sylva/master/brightness");
    nils.extend(osc_string(format!(",{}", "N".repeat(65_000)).as_bytes()));
    assert!(nils.len() < 65_507);
    // Each sent once the one before is counted: 40 at once overflow the
    // socket's receive buffer on a busy machine, and the kernel drops them.
    for sent in 1..=40 {
        rig.send_raw(&nils);
        rig.until("each refused before decoding", |r| r.malformed() >= sent);
    }
    // Within the argument cap a datagram still packs ~200 messages of 256
    // `N`, 25 times their size once decoded: the queue counts bytes too.
    let mut one = osc_string(b"/x");
    one.extend(osc_string(format!(",{}", "N".repeat(256)).as_bytes()));
    let mut packed = osc_string(b"#bundle");
    packed.extend([0, 0, 0, 0, 0, 0, 0, 1]);
    while packed.len() + one.len() + 4 < 60_000 {
        packed.extend((one.len() as u32).to_be_bytes());
        packed.extend(&one);
    }
    // No frame drains the queue meanwhile; each datagram is sent once the
    // receiver has taken the one before (the kernel drops what a busy
    // receiver leaves waiting).
    let mut most = 0;
    for _ in 0..100 {
        let before = rig.control.osc_counts().0;
        rig.send_raw(&packed);
        let sent = Instant::now();
        while rig.control.osc_counts().0 == before && sent.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(1));
        }
        most = most.max(rig.control.osc_queued_bytes());
        if rig.control.osc_dropped() > 0 {
            break;
        }
    }
    assert!(
        rig.control.osc_dropped() > 0,
        "messages past the byte bound dropped ({most} bytes queued)"
    );
    assert!(
        most <= MAX_QUEUED_BYTES,
        "{most} bytes queued (at most {MAX_QUEUED_BYTES})"
    );
    rig.still_listening(0.34);
}

#[test]
fn time_tags_before_1970_mean_now() {
    let mut rig = rig();
    for (tag, level) in [((0, 0), 0.41), ((1000, 0), 0.42), ((0, 1), 0.43)] {
        let inner = encode(&message(
            "/sylva/master/brightness",
            vec![OscType::Float(level)],
        ));
        rig.send_raw(&raw_bundle(tag, &inner));
        rig.until("an old time tag applies at once", |r| {
            r.brightness() == Some(level)
        });
    }
    assert!(
        !rig.show.ground.errors.has("sylva-osc"),
        "the receiver never panicked: {:?}",
        rig.show.ground.errors.snapshot()
    );
    rig.still_listening(0.44);
}

#[test]
fn a_bundle_of_preset_loads_loads_once() {
    let mut rig = rig();
    let loads = (0..2_030)
        .map(|_| message("/sylva/preset", vec![OscType::String("default".into())]))
        .collect();
    let packet = OscPacket::Bundle(OscBundle {
        timetag: NOW,
        content: loads,
    });
    let bytes = encode(&packet);
    assert!(
        bytes.len() > 60_000 && bytes.len() < 65_507,
        "{} bytes",
        bytes.len()
    );
    let before = rig.show.presets_loaded();
    rig.send_raw(&bytes);
    rig.until("the bundle is applied", |r| {
        r.control.last_frame_events() > 0
    });
    for _ in 0..3 {
        rig.frame();
    }
    let loaded = rig.show.presets_loaded() - before;
    assert_eq!(
        loaded, 1,
        "2,030 requests in one bundle load the preset once"
    );
    rig.still_listening(0.33);
}

#[test]
fn a_flood_is_applied_within_the_frame_budget_and_schedules_are_bounded() {
    let mut rig = rig();
    let ahead = std::time::SystemTime::now() + Duration::from_secs(58);
    let tag = OscTime::try_from(ahead).unwrap_or_else(|e| panic!("time tag: {e:?}"));
    let scheduled = encode(&OscPacket::Bundle(OscBundle {
        timetag: tag,
        content: (0..8)
            .map(|_| message("/sylva/master/brightness", vec![OscType::Float(0.0)]))
            .collect(),
    }));
    // In batches: the kernel's socket buffer would drop a burst of them.
    for _ in 0..20 {
        for _ in 0..100 {
            rig.send_raw(&scheduled);
        }
        std::thread::sleep(Duration::from_millis(20));
        rig.frame();
    }
    let mut most = 0;
    rig.until("the schedule fills and drops", |r| {
        r.control.osc_dropped() > 0
    });
    for _ in 0..20 {
        rig.frame();
        most = most.max(rig.control.last_frame_events());
    }
    assert!(rig.control.scheduled() <= MAX_SCHEDULED);
    assert!(most <= EVENTS_PER_FRAME, "{most} events in one frame");
    let flood = encode(&message("/sylva/master/bpm", vec![OscType::Float(120.0)]));
    for _ in 0..20_000 {
        rig.send_raw(&flood);
    }
    for _ in 0..5 {
        rig.frame();
        most = most.max(rig.control.last_frame_events());
    }
    assert!(most <= EVENTS_PER_FRAME, "{most} events in one frame");
    assert!(
        rig.control.latency_samples() <= 8_192,
        "the latency history is a bounded ring, not a growing list"
    );
    rig.still_listening(0.34);
}

#[test]
fn status_replies_are_short_and_rate_limited() {
    let mut rig = rig();
    let planted = "a".repeat(60_000);
    rig.send(&message(
        "/sylva/shader/aurora/file",
        vec![OscType::String(planted)],
    ));
    for _ in 0..5 {
        rig.frame();
    }
    let listener = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("listener: {e}"));
    listener
        .set_read_timeout(Some(Duration::from_millis(300)))
        .checked("setting a test value");
    let requests = OscPacket::Bundle(OscBundle {
        timetag: NOW,
        content: (0..100).map(|_| message("/sylva/status", vec![])).collect(),
    });
    if let Err(error) = listener.send_to(&encode(&requests), rig.osc) {
        panic!("sending status requests: {error}");
    }
    let mut replies = Vec::new();
    let mut buffer = vec![0u8; 65_536];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        rig.frame();
        if let Ok(length) = listener.recv(&mut buffer) {
            replies.push(length);
        }
    }
    assert!(!replies.is_empty(), "status still answers");
    assert!(
        replies.len() <= 5,
        "{} replies to 100 requests",
        replies.len()
    );
    let total: usize = replies.iter().sum();
    assert!(
        replies.iter().all(|l| *l < 512),
        "replies of {replies:?} bytes"
    );
    assert!(total < encode(&requests).len(), "{total} bytes answered");
}

#[test]
fn network_saves_stay_plain_loadable_and_few() {
    let root = support::show_folder(
        "hardening_save",
        &[
            (
                "presets/mappings/mine.toml",
                "[[osc]]\naddress = \"/x\"\nparam = \"master.brightness\"\n",
            ),
            ("presets/show.toml", "layers = [\"shader.echo\"]\n"),
        ],
    );
    let show = support::show(root.clone(), "show", OUTPUT_FORMAT);
    let mut rig = rig_in(show, AllowList::default());
    let mapping = std::fs::read_to_string(root.join("presets/mappings/mine.toml")).ok();
    rig.send(&message(
        "/sylva/preset/save",
        vec![OscType::String("mappings/mine".into())],
    ));
    rig.send(&message(
        "/sylva/preset/save",
        vec![OscType::String("../escape".into())],
    ));
    for _ in 0..3 {
        rig.frame();
    }
    assert_eq!(
        std::fs::read_to_string(root.join("presets/mappings/mine.toml")).ok(),
        mapping,
        "a mapping file is never overwritten"
    );
    assert!(!root.join("escape.toml").exists());
    rig.send(&message(
        "/sylva/shader/echo/file",
        vec![OscType::String("nope".into())],
    ));
    for _ in 0..3 {
        rig.frame();
    }
    std::thread::sleep(Duration::from_millis(1_100));
    rig.send(&message(
        "/sylva/preset/save",
        vec![OscType::String("default".into())],
    ));
    for _ in 0..3 {
        rig.frame();
    }
    assert!(
        !root.join("presets/default.toml").exists(),
        "a show that would not load is not saved over default: {:?}",
        rig.show.ground.errors.snapshot()
    );
    std::thread::sleep(Duration::from_millis(1_100));
    let names = (0..500)
        .map(|i| message("/sylva/preset/save", vec![OscType::String(format!("n{i}"))]))
        .collect();
    rig.send(&OscPacket::Bundle(OscBundle {
        timetag: NOW,
        content: names,
    }));
    rig.until("the bundle is applied", |r| {
        r.control.last_frame_events() > 0
    });
    for _ in 0..3 {
        rig.frame();
    }
    let saved = std::fs::read_dir(root.join("presets"))
        .map(|d| d.flatten().filter(|e| e.path().is_file()).count())
        .unwrap_or(0);
    assert!(saved <= 2, "{saved} presets after 500 save requests");
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn hosts_outside_the_allow_list_are_refused() {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let allow = AllowList::new(vec!["10.0.0.0/8".parse().unwrap_or_else(|e| panic!("{e}"))]);
    let mut rig = rig_in(show, allow);
    let before = rig.brightness();
    rig.send(&message(
        "/sylva/master/brightness",
        vec![OscType::Float(0.77)],
    ));
    rig.until("the datagram is seen", |r| r.control.osc_counts().0 > 0);
    for _ in 0..3 {
        rig.frame();
    }
    assert_eq!(rig.brightness(), before);
    let refused = TcpStream::connect(rig.query).and_then(|mut stream| {
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(b"GET /?HOST_INFO HTTP/1.1\r\n\r\n")?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).map(|_| reply)
    });
    assert!(
        refused.as_ref().map_or(true, |r| r.is_empty()),
        "OSCQuery answered a refused host: {refused:?}"
    );
}

fn http_get(query: SocketAddr, path: &str) -> String {
    let mut stream =
        TcpStream::connect(query).unwrap_or_else(|e| panic!("connecting to OSCQuery: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n\r\n");
    if let Err(error) = stream.write_all(request.as_bytes()) {
        panic!("writing to OSCQuery: {error}");
    }
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok();
    reply
}

#[test]
fn oscquery_bounds_request_heads_and_connections() {
    let rig = rig();
    let mut endless = TcpStream::connect(rig.query).unwrap_or_else(|e| panic!("connect: {e}"));
    endless.set_write_timeout(Some(Duration::from_secs(5))).ok();
    endless.set_read_timeout(Some(Duration::from_secs(5))).ok();
    let line = vec![b'a'; 64 * 1024];
    let mut sent = 0;
    for _ in 0..64 {
        match endless.write_all(&line) {
            Ok(()) => sent += line.len(),
            Err(_) => break,
        }
    }
    let mut rest = Vec::new();
    let closed = match endless.read_to_end(&mut rest) {
        Ok(_) => true,
        Err(error) => !matches!(
            error.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    };
    assert!(
        closed,
        "a header without a newline closes the connection ({sent} bytes sent)"
    );
    let idle: Vec<TcpStream> = (0..40)
        .filter_map(|_| TcpStream::connect(rig.query).ok())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut closed_at_once = 0;
    for mut stream in idle.iter() {
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .checked("setting a test value");
        let mut byte = [0u8; 1];
        if matches!(stream.read(&mut byte), Ok(0)) {
            closed_at_once += 1;
        }
    }
    assert!(
        closed_at_once >= 8,
        "{closed_at_once} of 40 idle connections refused"
    );
    drop(idle);
    let started = Instant::now();
    loop {
        let reply = http_get(rig.query, "/sylva/master/brightness?TYPE");
        if reply.contains("200 OK") {
            break;
        }
        assert!(
            started.elapsed() < CEILING,
            "OSCQuery never answered again: {reply}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `GET path` answers 200 within a few seconds.
fn answers_promptly(query: SocketAddr, what: &str) {
    let started = Instant::now();
    let reply = http_get(query, "/sylva/master/brightness?TYPE");
    assert!(
        reply.contains("200 OK") && started.elapsed() < Duration::from_secs(3),
        "{what}: {reply:?} after {:?}",
        started.elapsed()
    );
}

#[test]
fn slow_or_idle_clients_cannot_lock_oscquery_out() {
    let rig = rig();
    // The hardening probe: 32 slowloris connections (a byte every few
    // seconds), or 32 idle WebSockets, took every slot, and an honest GET
    // was reset for as long as they stayed.
    let slow: Vec<TcpStream> = (0..32)
        .filter_map(|_| TcpStream::connect(rig.query).ok())
        .inspect(|mut s| {
            s.write_all(b"GET / HTTP/1.1\r\nX-Slow: ").ok();
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    answers_promptly(rig.query, "beside 32 slow heads");
    drop(slow);
    let handshake = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                     Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    let idle: Vec<TcpStream> = (0..32)
        .filter_map(|_| TcpStream::connect(rig.query).ok())
        .filter_map(|mut s| {
            s.write_all(handshake.as_bytes()).ok()?;
            s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
            let mut reply = [0u8; 12];
            s.read_exact(&mut reply).ok()?;
            (&reply == b"HTTP/1.1 101").then_some(s)
        })
        .collect();
    assert!(idle.len() >= 8, "{} WebSockets opened", idle.len());
    answers_promptly(rig.query, "beside 32 idle WebSockets");
    drop(idle);
    // A head that trickles in is closed once it has taken 5 s.
    let mut trickle = TcpStream::connect(rig.query).checked("connecting");
    trickle
        .set_read_timeout(Some(Duration::from_millis(400)))
        .checked("a timeout");
    let started = Instant::now();
    let closed = loop {
        if trickle.write_all(b"a").is_err() {
            break true;
        }
        let mut byte = [0u8; 1];
        if matches!(trickle.read(&mut byte), Ok(0)) {
            break true;
        }
        if started.elapsed() > Duration::from_secs(9) {
            break false;
        }
    };
    assert!(
        closed,
        "a trickling head still open after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "closed early: {:?}",
        started.elapsed()
    );
}

#[test]
fn oscquery_skips_request_bodies() {
    let rig = rig();
    let mut stream = TcpStream::connect(rig.query).unwrap_or_else(|e| panic!("connect: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let body = "GET /?HOST_INFO HTTP/1.1\r\n\r\n";
    let requests = format!(
        "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}GET /sylva/master/brightness?TYPE HTTP/1.1\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if let Err(error) = stream.write_all(requests.as_bytes()) {
        panic!("writing: {error}");
    }
    let mut replies = String::new();
    stream.read_to_string(&mut replies).ok();
    assert_eq!(replies.matches("HTTP/1.1 ").count(), 2, "{replies}");
    assert!(replies.starts_with("HTTP/1.1 405"), "{replies}");
    assert!(replies.contains("\"TYPE\""), "{replies}");
    assert!(
        !replies.contains("OSC_PORT"),
        "a body was answered as a request: {replies}"
    );
}

/// Everything the server sends back for `requests` written at once.
fn http_exchange(query: SocketAddr, requests: &[u8]) -> String {
    let mut stream = TcpStream::connect(query).unwrap_or_else(|e| panic!("connect: {e}"));
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
    if let Err(error) = stream.write_all(requests) {
        panic!("writing: {error}");
    }
    let mut replies = Vec::new();
    stream.read_to_end(&mut replies).ok();
    String::from_utf8_lossy(&replies).into_owned()
}

#[test]
fn oscquery_answers_pipelined_requests_and_closes_on_unknown_bodies_or_garbage() {
    let rig = rig();
    let pipelined = http_exchange(
        rig.query,
        b"GET /?HOST_INFO HTTP/1.1\r\n\r\nGET /sylva/master/brightness?TYPE HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(
        pipelined.matches("HTTP/1.1 200 OK").count(),
        2,
        "{pipelined}"
    );
    // A chunked body's length is unknown: answered, then closed, and the
    // chunk is never read as a request.
    let chunked = http_exchange(
        rig.query,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1b\r\nGET /?HOST_INFO HTTP/1.1\r\n\r\n\r\n0\r\n\r\n",
    );
    assert_eq!(chunked.matches("HTTP/1.1 ").count(), 1, "{chunked}");
    assert!(chunked.starts_with("HTTP/1.1 405"), "{chunked}");
    let garbage = http_exchange(
        rig.query,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 TLS hello\r\n\r\n",
    );
    assert!(
        garbage.is_empty(),
        "not HTTP: closed without a reply, got {garbage}"
    );
    let reply = http_get(rig.query, "/sylva/master/brightness?TYPE");
    assert!(reply.contains("200 OK"), "{reply}");
}
