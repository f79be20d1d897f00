//! The phone page's network, each case as the security review found it: a page from
//! another origin driving the show through the WebSocket, a PIN walked
//! through by rotating loopback addresses, LISTEN holding what a client
//! names, bare connects closing a live phone, and writes a UDP peer
//! triggers as fast as it sends them. Each ends with the honest client
//! still served.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use rosc::{OscPacket, OscType};
use serde_json::Value as Json;
use sylva::control::ControlOptions;
use sylva::control::oscquery::MAX_LISTENED_BYTES;
use sylva::control::writes::{MIN_WRITE_BYTES, WRITE_BYTES_PER_SECOND, WRITES_PER_PEER};
use sylva::gpu::OUTPUT_FORMAT;
use sylva::params::{ParamSpec, Source, Value};
use tungstenite::Message;
use tungstenite::client::IntoClientRequest;

use crate::osc_rig::{NOW, Rig, bundle, encode, message, rig_with};
use crate::support;
use crate::support::Checked;

const CEILING: Duration = Duration::from_secs(20);

/// The parameter that starts a take (the senders declare it in a show).
const RECORD: &str = "record.on";

pub type Socket = tungstenite::WebSocket<TcpStream>;

/// A show in `root` (the fixtures when `None`) with `options`, `record.on`
/// declared as the senders do.
fn rig_in(root: Option<std::path::PathBuf>, options: ControlOptions) -> Rig {
    let show = support::show(
        root.unwrap_or_else(support::fixtures),
        "default",
        OUTPUT_FORMAT,
    );
    let mut rig = rig_with(show, options, CEILING);
    rig.show.registry.register(ParamSpec::bool(RECORD, false));
    rig
}

/// A TCP connection to `to` from the loopback address `from` (all of
/// 127/8 is this machine on Linux; elsewhere from 127.0.0.1).
pub fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::{FromRawFd, OwnedFd};
        let SocketAddr::V4(to) = to else {
            return TcpStream::connect(to);
        };
        let v4 = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        };
        let size = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let (local, remote) = (v4(from, 0), v4(*to.ip(), to.port()));
        // SAFETY: a fresh socket owned at once by `OwnedFd` (closed on
        // every path out); the addresses are `sockaddr_in`s of the size
        // given, alive across the calls.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let owned = OwnedFd::from_raw_fd(fd);
            if libc::bind(fd, (&raw const local).cast(), size) != 0
                || libc::connect(fd, (&raw const remote).cast(), size) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(TcpStream::from(owned))
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = from;
        TcpStream::connect(to)
    }
}

/// A WebSocket over `stream` to `url` (its host is the `Host` header),
/// sending `origin`: the socket, reads timing out quickly, or the HTTP
/// status it was refused with.
pub fn handshake(stream: TcpStream, url: &str, origin: Option<&str>) -> Result<Socket, u16> {
    let mut request = url.into_client_request().checked("a WebSocket request");
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("Origin", origin.parse().checked("an Origin header"));
    }
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .checked("a timeout");
    match tungstenite::client(request, stream) {
        Ok((socket, _)) => {
            socket
                .get_ref()
                .set_read_timeout(Some(Duration::from_millis(20)))
                .checked("a timeout");
            Ok(socket)
        }
        Err(tungstenite::HandshakeError::Failure(tungstenite::Error::Http(response))) => {
            Err(response.status().as_u16())
        }
        Err(other) => panic!("the handshake to {url}: {other}"),
    }
}

/// A WebSocket from 127.0.0.1 with no `Origin` (TouchDesigner, python).
fn plain(rig: &Rig) -> Socket {
    let stream = TcpStream::connect(rig.query).checked("connecting");
    handshake(stream, &format!("ws://{}/", rig.query), None).checked("a plain WebSocket")
}

/// Sends `command` with `data` as OSCQuery's JSON.
fn command(socket: &mut Socket, command: &str, data: &str) {
    let text = serde_json::json!({ "COMMAND": command, "DATA": data }).to_string();
    socket
        .send(Message::Text(text.into()))
        .checked("sending a command");
}

/// Sends an OSC packet as a binary frame.
fn osc(socket: &mut Socket, packet: &OscPacket) {
    socket
        .send(Message::Binary(encode(packet).into()))
        .checked("sending OSC");
}

/// The next text message, running frames meanwhile.
fn next_text(rig: &mut Rig, socket: &mut Socket) -> Json {
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < CEILING, "no text message");
        match socket.read() {
            Ok(Message::Text(text)) => {
                return serde_json::from_str(text.as_str()).unwrap_or_default();
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(error) => panic!("the socket failed: {error}"),
        }
        rig.frame();
    }
}

/// Moves the brightness for `time`; whether its change streamed to
/// `socket` as OSC, and whether the socket is still open.
fn streams(rig: &mut Rig, socket: &mut Socket, time: Duration) -> (bool, bool) {
    let started = Instant::now();
    while started.elapsed() < time {
        let level = 1.0 + (started.elapsed().as_millis() % 100) as f32 / 100.0;
        rig.show
            .registry
            .set("master.brightness", Value::Float(level), Source::Ui)
            .checked("moving the brightness");
        rig.frame();
        match socket.read() {
            Ok(Message::Binary(bytes)) => {
                if let Ok((_, OscPacket::Message(m))) = rosc::decoder::decode_udp(&bytes)
                    && m.addr == "/sylva/master/brightness"
                {
                    return (true, true);
                }
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return (false, false),
        }
    }
    (false, true)
}

/// The head of the reply to `request`, sent whole on a fresh connection.
fn reply_head(query: SocketAddr, request: &str) -> String {
    let mut stream = TcpStream::connect(query).checked("connecting");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .checked("a timeout");
    stream.write_all(request.as_bytes()).checked("writing");
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).ok();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    reply
        .split_once("\r\n\r\n")
        .map_or(reply.clone(), |(head, _)| head.to_string())
}

#[test]
fn a_page_from_another_origin_cannot_drive_the_show() {
    let root = support::show_folder(
        "page_origin",
        &[("presets/default.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let options = ControlOptions {
        allow_origins: vec!["http://patch.example:8000/ui".parse().checked("an origin")],
        ..ControlOptions::default()
    };
    let mut rig = rig_in(Some(root.clone()), options);
    let own = format!("http://{}", rig.query);
    let port = rig.query.port();
    // The security review's probe and its variants: another site, another port
    // of this machine, another name for it, a file, a sandboxed frame, an
    // extension, a rebound public name.
    let local = format!("ws://127.0.0.1:{port}/");
    let refused: Vec<(String, String)> = [
        "http://evil.example".to_string(),
        "https://evil.example".into(),
        "http://127.0.0.1:8000".into(),
        format!("http://127.0.0.1:{port}.evil.example"),
        format!("http://localhost:{port}"),
        "null".into(),
        "file://".into(),
        "chrome-extension://abcdef".into(),
    ]
    .into_iter()
    .map(|origin| (origin, local.clone()))
    .chain([(
        format!("http://rebound.example.com:{port}"),
        format!("ws://rebound.example.com:{port}/"),
    )])
    .collect();
    let mut opened = Vec::new();
    for (origin, url) in &refused {
        let stream = TcpStream::connect(rig.query).checked("connecting");
        match handshake(stream, url, Some(origin)) {
            Err(status) => assert_eq!(status, 403, "{origin}"),
            Ok(mut socket) => {
                // What the page did: start a take, write the favourites.
                osc(
                    &mut socket,
                    &message("/sylva/record/on", vec![OscType::Int(1)]),
                );
                osc(
                    &mut socket,
                    &message(
                        "/sylva/ui/favourites",
                        vec![OscType::String("[\"/bin/echo pwned\"]".into())],
                    ),
                );
                opened.push(origin.to_string());
            }
        }
    }
    for _ in 0..10 {
        rig.frame();
    }
    assert!(
        opened.is_empty(),
        "pages from {opened:?} opened the WebSocket"
    );
    assert_eq!(
        rig.target(RECORD),
        Some(Value::Bool(false)),
        "a take started"
    );
    assert!(
        !root.join("ui/favourites.json").exists(),
        "favourites written"
    );
    // The show's own page, an allowed one, and clients with no origin.
    for origin in [Some(own.as_str()), Some("http://patch.example:8000"), None] {
        let stream = TcpStream::connect(rig.query).checked("connecting");
        let url = format!("ws://{}/", rig.query);
        let mut socket = handshake(stream, &url, origin)
            .unwrap_or_else(|status| panic!("{origin:?} refused with {status}"));
        command(&mut socket, "LISTEN", "/sylva/master/brightness");
        assert_eq!(
            streams(&mut rig, &mut socket, CEILING),
            (true, true),
            "{origin:?}"
        );
    }
    let ui = reply_head(rig.query, "GET /ui HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert!(
        ui.contains("200 OK") && !ui.contains("Access-Control"),
        "{ui}"
    );
    let json = reply_head(
        rig.query,
        "GET /sylva/master/brightness HTTP/1.1\r\nOrigin: http://tool.example\r\nConnection: close\r\n\r\n",
    );
    assert!(
        json.contains("Access-Control-Allow-Origin: *"),
        "the namespace stays readable: {json}"
    );
    let preflight = reply_head(
        rig.query,
        "OPTIONS / HTTP/1.1\r\nOrigin: http://tool.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n",
    );
    let methods = preflight
        .lines()
        .find(|l| l.starts_with("Access-Control-Allow-Methods"))
        .unwrap_or("");
    assert!(
        !methods.contains("POST") && methods.contains("GET"),
        "{preflight}"
    );
    let post = reply_head(
        rig.query,
        "POST / HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert!(
        post.contains("405") && !post.contains("Access-Control"),
        "{post}"
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn rotating_addresses_cannot_walk_the_pin() {
    let options = ControlOptions {
        ui_pin: Some("4821".into()),
        ..ControlOptions::default()
    };
    let mut rig = rig_in(None, options);
    let url = format!("ws://{}/", rig.query);
    let mut read = 0;
    // The security review's probe rotated over 300 loopback addresses, a guess
    // each; 40 show the bound (all of loopback is one network).
    for n in 0..40u8 {
        let from = Ipv4Addr::new(127, 0, n / 8, 2 + n % 8);
        let stream = connect_from(from, rig.query).checked("connecting from another address");
        let mut socket = handshake(stream, &url, None).checked("a WebSocket");
        assert_eq!(next_text(&mut rig, &mut socket)["COMMAND"], "PIN_REQUIRED");
        command(&mut socket, "PIN", &format!("{:04}", u32::from(n) * 7));
        let answer = next_text(&mut rig, &mut socket);
        if answer["DATA"]
            .as_str()
            .is_some_and(|d| d.starts_with("wrong PIN"))
        {
            read += 1;
        }
    }
    assert!(read <= 5, "{read} wrong guesses were read");
    let stream = connect_from(Ipv4Addr::new(127, 9, 9, 9), rig.query).checked("connecting");
    let mut socket = handshake(stream, &url, None).checked("a WebSocket");
    next_text(&mut rig, &mut socket);
    command(&mut socket, "PIN", "4821");
    let answer = next_text(&mut rig, &mut socket);
    assert_eq!(
        answer["COMMAND"], "PIN_REFUSED",
        "the right PIN read while locked: {answer}"
    );
}

#[test]
fn listen_waits_for_the_pin_and_holds_only_known_paths() {
    let options = ControlOptions {
        ui_pin: Some("482193".into()),
        ..ControlOptions::default()
    };
    let mut rig = rig_in(None, options);
    let mut socket = plain(&rig);
    let required = next_text(&mut rig, &mut socket);
    assert_eq!(required["COMMAND"], "PIN_REQUIRED");
    assert_eq!(required["DATA"], "digits", "the page offers a keypad");
    command(&mut socket, "LISTEN", "/sylva/master/brightness");
    assert_eq!(
        streams(&mut rig, &mut socket, Duration::from_secs(1)),
        (false, true),
        "LISTEN before the PIN streamed"
    );
    // The security review's probe: 65 KB paths the namespace does not have,
    // before the PIN and after it.
    let long = |n: usize| format!("/sylva/{n}{}", "x".repeat(65_000));
    for n in 0..20 {
        command(&mut socket, "LISTEN", &long(n));
    }
    command(&mut socket, "PIN", "482193");
    assert_eq!(next_text(&mut rig, &mut socket)["COMMAND"], "PIN_ACCEPTED");
    for n in 20..40 {
        command(&mut socket, "LISTEN", &long(n));
    }
    command(&mut socket, "LISTEN", "/sylva/master/brightness");
    assert_eq!(streams(&mut rig, &mut socket, CEILING), (true, true));
    let listened = rig.control.oscquery_listened_bytes();
    assert_eq!(
        listened,
        "/sylva/master/brightness".len(),
        "unknown paths held"
    );
    // Every path the namespace has, twice over, from two sockets.
    let paths: Vec<String> = rig
        .show
        .registry
        .iter()
        .map(|(spec, _)| sylva::control::osc::address_of(&spec.name))
        .collect();
    let mut other = plain(&rig);
    command(&mut other, "PIN", "482193");
    for socket in [&mut socket, &mut other] {
        for path in paths.iter().chain(&paths) {
            command(socket, "LISTEN", path);
        }
    }
    let all = 2 * paths.iter().map(String::len).sum::<usize>();
    let started = Instant::now();
    while rig.control.oscquery_listened_bytes() != all.min(2 * MAX_LISTENED_BYTES) {
        let listened = rig.control.oscquery_listened_bytes();
        assert!(
            started.elapsed() < CEILING,
            "{listened} bytes listened, not {all}"
        );
        rig.frame();
    }
    drop((socket, other));
    let started = Instant::now();
    while rig.control.oscquery_listened_bytes() > 0 {
        assert!(
            started.elapsed() < CEILING,
            "closed sockets still hold their paths"
        );
        rig.frame();
    }
}

#[test]
fn bare_connects_never_close_a_live_phone() {
    for pin in [None, Some("482193")] {
        let options = ControlOptions {
            ui_pin: pin.map(str::to_string),
            ..ControlOptions::default()
        };
        let mut rig = rig_in(None, options);
        let mut phone = plain(&rig);
        if let Some(pin) = pin {
            next_text(&mut rig, &mut phone);
            command(&mut phone, "PIN", pin);
            assert_eq!(next_text(&mut rig, &mut phone)["COMMAND"], "PIN_ACCEPTED");
        }
        command(&mut phone, "LISTEN", "/sylva/master/brightness");
        assert_eq!(streams(&mut rig, &mut phone, CEILING), (true, true));
        // Idle longer than any newcomer will be.
        std::thread::sleep(Duration::from_millis(1_200));
        // The security review's probe: 40 silent connects from the phone's
        // address, then 40 from others.
        let mut silent: Vec<TcpStream> = (0..40)
            .filter_map(|_| TcpStream::connect(rig.query).ok())
            .collect();
        silent.extend(
            (0..40u8).filter_map(|n| connect_from(Ipv4Addr::new(127, 0, 1, 2 + n), rig.query).ok()),
        );
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            streams(&mut rig, &mut phone, CEILING),
            (true, true),
            "the phone (PIN {pin:?}) was closed for a silent socket"
        );
        let (status, _) = support::http_get(rig.query.port(), "/sylva/master/brightness?TYPE");
        assert_eq!(status, 200, "an honest GET beside the silent ones");
        drop(silent);
    }
}

#[test]
fn writes_a_peer_triggers_are_rate_limited() {
    let root = support::show_folder(
        "page_writes",
        &[("presets/default.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let mut rig = rig_in(Some(root.clone()), ControlOptions::default());
    let favourite = |n: usize| format!("[\"/sylva/favourite/{n}\"]");
    // The security review's probe: favourites as fast as UDP carries them.
    let flood = (0..40)
        .map(|n| message("/sylva/ui/favourites", vec![OscType::String(favourite(n))]))
        .collect();
    rig.send(&bundle(NOW, flood));
    rig.until("the favourites applied", |r| {
        r.control.last_frame_events() > 0
    });
    for _ in 0..3 {
        rig.frame();
    }
    let kept = std::fs::read_to_string(root.join("ui/favourites.json")).unwrap_or_default();
    assert!(
        kept.contains(&format!("\"/sylva/favourite/{}\"", WRITES_PER_PEER - 1)),
        "the last write let through is the fourth: {kept}"
    );
    assert!(
        rig.control.writes_dropped() >= 36,
        "{}",
        rig.control.writes_dropped()
    );
    // record.on toggled 49 times: four changes go through (a take, its
    // end, another and its end), and the show ends with none running.
    std::thread::sleep(Duration::from_millis(1_100));
    let toggles = (0..49)
        .map(|n| message("/sylva/record/on", vec![OscType::Bool(n % 2 == 0)]))
        .collect();
    rig.send(&bundle(NOW, toggles));
    rig.until("the toggles applied", |r| r.control.last_frame_events() > 0);
    rig.frame();
    assert_eq!(
        rig.target(RECORD),
        Some(Value::Bool(false)),
        "a fifth take started"
    );
    // Saves and learns through the WebSocket, from the same peer.
    let before = rig.control.writes_dropped();
    let mut socket = plain(&rig);
    for address in [
        "/sylva/outputs/save",
        "/sylva/preset/save",
        "/sylva/learn",
        "/sylva/playlist/next",
    ] {
        for _ in 0..5 {
            let args = match address {
                "/sylva/outputs/save" | "/sylva/playlist/next" => vec![],
                "/sylva/learn" => vec![OscType::String("master.brightness".into())],
                _ => vec![OscType::String("saved".into())],
            };
            osc(&mut socket, &message(address, args));
        }
    }
    rig.until("20 writes seen", |r| {
        r.control.writes_dropped() >= before + 16
    });
    // Many peers together: 20 addresses, four small writes each, within
    // the bytes of a second in all.
    std::thread::sleep(Duration::from_millis(1_100));
    let (taken, dropped) = (rig.control.writes_taken(), rig.control.writes_dropped());
    let sent = std::time::Instant::now();
    for n in 0..20u8 {
        let peer = UdpSocket::bind((Ipv4Addr::new(127, 0, 2, 2 + n), 0)).checked("a peer");
        for i in 0..WRITES_PER_PEER {
            let write = message("/sylva/ui/favourites", vec![OscType::String(favourite(i))]);
            peer.send_to(&encode(&write), rig.osc).checked("sending");
        }
    }
    let writes = (20 * WRITES_PER_PEER) as u64;
    rig.until("every peer's writes judged", |r| {
        r.control.writes_taken() + r.control.writes_dropped() >= taken + dropped + writes
    });
    // The limit counts from arrival: the datagrams came within a second
    // unless the receiver was held up, and each second lets `in_all` by.
    let seconds = sent.elapsed().as_secs() as usize + 1;
    let in_all = (WRITE_BYTES_PER_SECOND / MIN_WRITE_BYTES) as u64;
    let let_by = rig.control.writes_taken() - taken;
    assert!(
        let_by <= in_all * seconds as u64 && let_by < writes,
        "{let_by} of {writes} writes from 20 peers let by within {seconds} s, {in_all} a second in all"
    );
    rig.send(&message(
        "/sylva/master/brightness",
        vec![OscType::Float(0.37)],
    ));
    rig.until("OSC still sets parameters", |r| {
        r.target("master.brightness") == Some(Value::Float(0.37))
    });
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn writes_scheduled_for_one_instant_count_there() {
    // The probe of the review: favourites dripped within the limit, four
    // a second for three seconds, each bundle due at the same instant.
    // The limiter counts a write when it is done: at that instant four go
    // through, not twelve.
    let root = support::show_folder(
        "page_scheduled_writes",
        &[("presets/default.toml", "layers = [\"shader.aurora\"]\n")],
    );
    let mut rig = rig_in(Some(root.clone()), ControlOptions::default());
    let due = std::time::SystemTime::now() + Duration::from_millis(3_600);
    let tag = rosc::OscTime::try_from(due).unwrap_or(NOW);
    let (taken, dropped) = (rig.control.writes_taken(), rig.control.writes_dropped());
    for second in 0..3 {
        let writes = (0..WRITES_PER_PEER)
            .map(|n| {
                let list = format!("[\"/sylva/favourite/{}\"]", second * 10 + n);
                message("/sylva/ui/favourites", vec![OscType::String(list)])
            })
            .collect();
        rig.send(&bundle(tag, writes));
        std::thread::sleep(Duration::from_millis(1_050));
        rig.frame();
    }
    rig.until("every scheduled write judged", |r| {
        r.control.writes_taken() + r.control.writes_dropped()
            >= taken + dropped + 3 * WRITES_PER_PEER as u64
    });
    assert_eq!(
        rig.control.writes_taken() - taken,
        WRITES_PER_PEER as u64,
        "writes let through at the instant they were due"
    );
    std::fs::remove_dir_all(root).ok();
}
