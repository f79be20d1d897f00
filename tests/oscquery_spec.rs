//! OSCQuery held to the Vidvox proposal over the HTTP and WebSocket of a
//! running show (the default preset, its real registry): every node's
//! VALUE, RANGE, CLIPMODE and UNIT hold one entry per type tag; every
//! extension `?HOST_INFO` claims is produced (attributes on nodes, LISTEN
//! streaming, the PATH_* messages after a preset switch); and every
//! address the `--verbose` table lists answers over HTTP.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use rosc::OscType;
use serde_json::Value as Json;
use sylva::control::ControlOptions;
use sylva::control::osc_commands::{address_table, table_addresses};
use sylva::gpu::OUTPUT_FORMAT;
use sylva::params::{Source, Value};
use tungstenite::Message;

use crate::osc_rig::{Rig, message, rig_with};
use crate::support;
use crate::support::Checked;

const CEILING: Duration = Duration::from_secs(20);

/// The extensions a streaming client sees happen, as against attributes
/// it finds on nodes.
const PATH_EVENTS: [&str; 4] = ["PATH_CHANGED", "PATH_ADDED", "PATH_REMOVED", "PATH_RENAMED"];

/// A node as JSON, after a 200.
fn get_json(port: u16, path: &str) -> Json {
    let (status, body) = support::http_get(port, path);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"))
}

/// Every node below `node`, itself first.
fn walk<'a>(node: &'a Json, out: &mut Vec<&'a Json>) {
    out.push(node);
    if let Some(contents) = node["CONTENTS"].as_object() {
        for child in contents.values() {
            walk(child, out);
        }
    }
}

/// The entries a type tag string asks of VALUE, RANGE, CLIPMODE and UNIT:
/// one per tag, an OSC array (`[ff]`) one entry of its own.
fn entries(tags: &str) -> usize {
    let mut depth = 0usize;
    let mut count = 0;
    for tag in tags.chars() {
        match tag {
            '[' => {
                count += usize::from(depth == 0);
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            _ => count += usize::from(depth == 0),
        }
    }
    count
}

/// A WebSocket on the rig's OSCQuery port, reads timing out quickly so
/// the test can run frames between them.
fn websocket(port: u16) -> tungstenite::WebSocket<TcpStream> {
    let stream = TcpStream::connect(("127.0.0.1", port)).checked("connecting");
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .checked("a read timeout");
    let (socket, _) =
        tungstenite::client(format!("ws://127.0.0.1:{port}/"), stream).checked("the handshake");
    socket
}

/// LISTEN on the brightness and move it until its change arrives as OSC.
fn listen_streams(rig: &mut Rig, socket: &mut tungstenite::WebSocket<TcpStream>) {
    let listen = r#"{"COMMAND":"LISTEN","DATA":"/sylva/master/brightness"}"#;
    socket
        .send(Message::Text(listen.into()))
        .checked("sending LISTEN");
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < CEILING,
            "LISTEN claimed, nothing streamed"
        );
        let value = 1.0 + (started.elapsed().as_millis() % 100) as f32 / 100.0;
        rig.show
            .registry
            .set("master.brightness", Value::Float(value), Source::Ui)
            .checked("moving the brightness");
        rig.frame();
        if let Ok(Message::Binary(bytes)) = socket.read()
            && let Ok((_, rosc::OscPacket::Message(m))) = rosc::decoder::decode_udp(&bytes)
        {
            assert_eq!(m.addr, "/sylva/master/brightness");
            return;
        }
    }
}

/// Switches to `preset` over OSC and adds the namespace messages the
/// socket hears to `heard` until the show has it on stage and `done`.
fn switch_and_hear(
    rig: &mut Rig,
    socket: &mut tungstenite::WebSocket<TcpStream>,
    preset: &str,
    heard: &mut Vec<Json>,
    done: impl Fn(&[Json]) -> bool,
) {
    rig.send(&message(
        "/sylva/preset",
        vec![OscType::String(preset.into()), OscType::Float(0.0)],
    ));
    let started = Instant::now();
    while rig.show.preset() != Some(preset) || !done(heard) {
        assert!(
            started.elapsed() < CEILING,
            "switching to {preset}: heard only {heard:?}"
        );
        rig.frame();
        while let Ok(read) = socket.read() {
            if let Message::Text(text) = read {
                heard.push(serde_json::from_str(text.as_str()).unwrap_or_default());
            }
        }
    }
}

#[test]
fn the_served_namespace_keeps_the_oscquery_proposal() {
    let show = support::show(support::fixtures(), "default", OUTPUT_FORMAT);
    let mut rig = rig_with(show, ControlOptions::default(), CEILING);
    rig.frame();
    let port = rig.query.port();

    // One entry per type tag in every per-value attribute, as arrays.
    let root = get_json(port, "/");
    let mut nodes = Vec::new();
    walk(&root, &mut nodes);
    let mut typed = 0;
    for node in &nodes {
        let Some(tags) = node["TYPE"].as_str() else {
            continue;
        };
        typed += 1;
        for attribute in ["VALUE", "RANGE", "CLIPMODE", "UNIT"] {
            if node.get(attribute).is_some() {
                assert_eq!(
                    node[attribute].as_array().map(Vec::len),
                    Some(entries(tags)),
                    "{attribute} of {} for TYPE {tags}: {}",
                    node["FULL_PATH"],
                    node[attribute]
                );
            }
        }
    }
    assert!(typed > 50, "only {typed} nodes with a TYPE");

    // Every address the `--verbose` table lists answers, with a TYPE.
    let table = address_table(rig.show.registry.iter().map(|(spec, _)| spec));
    let mut listed = 0;
    for address in table_addresses(&table) {
        let (status, body) = support::http_get(port, address);
        assert_eq!(status, 200, "{address} is listed by --verbose: {body}");
        let node: Json = serde_json::from_str(&body).unwrap_or_default();
        assert!(node["TYPE"].is_string(), "{address} has no TYPE: {body}");
        listed += 1;
    }
    assert!(listed > 50, "only {listed} addresses listed");

    // Every extension claimed is produced.
    let info = get_json(port, "/?HOST_INFO");
    let claimed: Vec<String> = info["EXTENSIONS"]
        .as_object()
        .checked("HOST_INFO's EXTENSIONS")
        .iter()
        .filter(|(_, on)| on.as_bool() == Some(true))
        .map(|(name, _)| name.clone())
        .collect();
    let mut socket = websocket(port);
    for name in &claimed {
        match name.as_str() {
            "LISTEN" => listen_streams(&mut rig, &mut socket),
            event if PATH_EVENTS.contains(&event) => {}
            attribute => assert!(
                nodes.iter().any(|n| n.get(attribute).is_some()),
                "HOST_INFO claims {attribute}; no node has it"
            ),
        }
    }
    let events: Vec<&str> = claimed
        .iter()
        .map(String::as_str)
        .filter(|c| PATH_EVENTS.contains(c))
        .collect();
    // Leaving the default for the empty preset removes parameters;
    // coming back adds them.
    let mut heard = Vec::new();
    switch_and_hear(&mut rig, &mut socket, "empty", &mut heard, |h| {
        !h.is_empty()
    });
    let all_claimed = |heard: &[Json]| {
        events
            .iter()
            .all(|event| heard.iter().any(|h| h["COMMAND"] == *event))
    };
    switch_and_hear(&mut rig, &mut socket, "default", &mut heard, all_claimed);
    for changed in heard.iter().filter(|h| h["COMMAND"] == "PATH_CHANGED") {
        let path = changed["DATA"].as_str().checked("PATH_CHANGED's path");
        assert_eq!(
            support::http_get(port, path).0,
            200,
            "PATH_CHANGED names {path}"
        );
    }
}
