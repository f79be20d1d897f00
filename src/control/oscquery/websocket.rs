//! LISTEN streaming over a WebSocket on the OSCQuery port: the client
//! names paths, and every change of one arrives as a binary OSC frame.
//! The page asking was already admitted by its origin (`http.rs`); with
//! `--ui-pin` nothing but the PIN is taken until it is given.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{TryRecvError, sync_channel};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use tungstenite::Message;
use tungstenite::protocol::WebSocketConfig;

use super::connections::{Activity, Standing};
use super::listening::Listening;
use super::namespace::{ClientMessage, SharedNamespace};
use super::pin::Answer;
use crate::control::Inbox;
use crate::control::osc::{Queued, queue_datagram};

/// Changes queued for one WebSocket client; a client that falls this far
/// behind is disconnected instead of growing the queue.
const LISTENER_QUEUE: usize = 1_024;

/// How often the server pings a WebSocket client.
const PING_EVERY: Duration = Duration::from_secs(10);

/// How long a WebSocket client may send nothing, not even a pong, before
/// it is closed (three pings unanswered).
const WEBSOCKET_IDLE: Duration = Duration::from_secs(30);

/// The request bytes read before the upgrade, then the socket: what the
/// WebSocket handshake reads.
struct Replayed {
    read_first: std::io::Cursor<Vec<u8>>,
    stream: TcpStream,
}

impl Read for Replayed {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        match self.read_first.read(out)? {
            0 => self.stream.read(out),
            n => Ok(n),
        }
    }
}

impl Write for Replayed {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.stream.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

/// LISTEN streaming: the client names paths with
/// `{"COMMAND":"LISTEN","DATA":"/sylva/master/brightness"}` (IGNORE stops;
/// a container, `/sylva/colony` or `/`, listens to everything below it);
/// every change of a listened parameter arrives as a binary OSC frame, and
/// `PATH_ADDED`/`PATH_REMOVED` and a `PATH_CHANGED` as text when a
/// preset changes the namespace. Binary frames the client sends are OSC packets, applied as
/// if they came over UDP (the spec's path for browsers); with `--ui-pin`
/// they and LISTEN are refused until the client sends
/// `{"COMMAND":"PIN","DATA":"1234"}` (told by `PIN_REQUIRED`, whose DATA
/// says `digits` or `passphrase`; answered `PIN_ACCEPTED` or
/// `PIN_REFUSED` with the reason). Only paths the namespace has are
/// listened to, bounded in count and bytes (`listening.rs`).
/// Messages are bounded in size, the queue in length; a client that
/// stops reading is disconnected once its writes time out, and one that
/// answers no ping for [`WEBSOCKET_IDLE`] is closed. Once it has spoken
/// and may write it is trusted: no newcomer closes it (`connections.rs`).
pub(super) fn websocket(
    stream: TcpStream,
    namespace: &SharedNamespace,
    handshake: Vec<u8>,
    activity: &Activity,
    inbox: Option<&Inbox>,
) -> std::io::Result<()> {
    let peer = stream.peer_addr()?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(64 << 10))
        .max_frame_size(Some(64 << 10))
        .max_write_buffer_size(1 << 20);
    let replayed = Replayed {
        read_first: std::io::Cursor::new(handshake),
        stream: stream.try_clone()?,
    };
    let mut socket = tungstenite::accept_with_config(replayed, Some(config))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    let (sender, changes) = sync_channel::<ClientMessage>(LISTENER_QUEUE);
    namespace
        .listeners
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(sender);
    let mut listening = Listening::new(namespace.listened.clone());
    let mut pinged = Instant::now();
    let pin = inbox.and_then(|inbox| inbox.pin.as_deref());
    let mut unlocked = pin.is_none();
    activity.rise(Standing::Asked);
    if let Some(pin) = pin {
        send_text(
            &mut socket,
            json!({ "COMMAND": "PIN_REQUIRED", "DATA": pin.kind() }),
        )?;
    }
    loop {
        if activity.idle() > WEBSOCKET_IDLE {
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                "silent for 30 s, pings unanswered; closed",
            ));
        }
        if pinged.elapsed() >= PING_EVERY {
            pinged = Instant::now();
            socket
                .send(Message::Ping(Vec::new().into()))
                .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        let read = socket.read();
        if read.is_ok() {
            activity.touch();
            activity.rise(match unlocked {
                true => Standing::Trusted,
                false => Standing::Listening,
            });
        }
        match read {
            Ok(Message::Text(text)) => {
                let command: Json = serde_json::from_str(text.as_str()).unwrap_or_default();
                let data = command["DATA"].as_str().unwrap_or_default();
                match (command["COMMAND"].as_str(), pin) {
                    (Some("PIN"), Some(pin)) if !unlocked => {
                        let answer = pin.guess(peer.ip(), data, Instant::now());
                        unlocked = answer == Answer::Accepted;
                        if unlocked {
                            activity.rise(Standing::Trusted);
                        }
                        send_text(&mut socket, pin_reply(answer))?;
                    }
                    (Some("LISTEN"), _) if unlocked => {
                        if let Err(why) = listening.listen(data, &namespace.get()) {
                            tracing::debug!("OSCQuery: {peer} LISTEN {data:.80}: {why}");
                        }
                    }
                    (Some("IGNORE"), _) => listening.ignore(data),
                    (Some("LISTEN"), _) => refused(inbox),
                    _ => {}
                }
            }
            Ok(Message::Binary(_)) if !unlocked => refused(inbox),
            Ok(Message::Binary(bytes)) => {
                if let Some(inbox) = inbox {
                    let queued =
                        queue_datagram(&bytes, peer, Instant::now(), &inbox.events, &inbox.stats);
                    match queued {
                        Queued::Malformed(_) => {
                            inbox.stats.malformed.fetch_add(1, Ordering::Relaxed);
                        }
                        Queued::Closed => return Ok(()),
                        Queued::All | Queued::Dropped => {}
                    }
                }
            }
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(error) => return Err(std::io::Error::other(error.to_string())),
        }
        loop {
            match changes.try_recv() {
                Ok(ClientMessage::Osc(address, bytes)) => {
                    if listening.covers(&address) {
                        socket
                            .send(Message::Binary(bytes.into()))
                            .map_err(|e| std::io::Error::other(e.to_string()))?;
                    }
                }
                // Namespace events tell what exists, which HTTP tells anyone.
                Ok(ClientMessage::Text(text)) => socket
                    .send(Message::Text(text.into()))
                    .map_err(|e| std::io::Error::other(e.to_string()))?,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    return Err(std::io::Error::other("fell too far behind; disconnected"));
                }
            }
        }
    }
}

/// Counts something a client without the PIN asked for and did not get.
fn refused(inbox: Option<&Inbox>) {
    if let Some(inbox) = inbox {
        inbox.stats.refused.fetch_add(1, Ordering::Relaxed);
    }
}

/// Sends `message` as a text frame.
fn send_text(socket: &mut tungstenite::WebSocket<Replayed>, message: Json) -> std::io::Result<()> {
    socket
        .send(Message::Text(message.to_string().into()))
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// What the client is told of its guess at the PIN.
fn pin_reply(answer: Answer) -> Json {
    match answer {
        Answer::Accepted => json!({ "COMMAND": "PIN_ACCEPTED" }),
        Answer::Wrong(left) => json!({
            "COMMAND": "PIN_REFUSED",
            "DATA": format!("wrong PIN; {left} more tries before a wait"),
        }),
        Answer::LockedOut(wait) => json!({
            "COMMAND": "PIN_REFUSED",
            "DATA": format!("too many wrong PINs; try again in {} s", wait.as_secs().max(1)),
        }),
    }
}
