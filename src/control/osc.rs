//! OSC over UDP: the receiver thread (refuse hosts outside the allow-list,
//! check nesting, decode, unpack bundles, keep time tags, count malformed
//! and dropped datagrams), the mapping between
//! addresses and parameter names (`/sylva/shader/aurora/glow` is
//! `shader.aurora.glow`), the reading of arguments per parameter type, and
//! the feedback sender. Only the main thread applies anything.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant, SystemTime};

use rosc::{OscMessage, OscPacket, OscTime, OscType};

use super::ControlEvent;
use super::allow::AllowList;
use super::osc_wire::{self, Due};
use crate::base::status::ErrorLog;
use crate::params::{ParamKind, ParamSpec, Value};

/// Prefix of every sylva address.
pub const PREFIX: &str = "/sylva/";

/// A message from the network, unpacked from its bundles.
#[derive(Debug, Clone)]
pub struct OscReceived {
    /// The sender.
    pub from: SocketAddr,
    /// The message.
    pub message: OscMessage,
    /// When a bundle's time tag asks for it, if in the future.
    pub due: Option<Instant>,
    /// Messages of the same datagram queued after it, so a frame applies
    /// a bundle whole even while the receiver is still queueing it.
    pub rest: usize,
    /// When the datagram arrived.
    pub received: Instant,
}

impl OscReceived {
    /// About how many bytes the message holds in memory, for bounding
    /// queues: every argument is an `OscType`, whatever it weighed on the
    /// wire, and strings and blobs add their heap.
    pub fn size(&self) -> usize {
        fn heap(arg: &OscType) -> usize {
            match arg {
                OscType::String(s) => s.len(),
                OscType::Blob(b) => b.len(),
                OscType::Array(array) => array
                    .content
                    .iter()
                    .map(|a| std::mem::size_of::<OscType>() + heap(a))
                    .sum(),
                _ => 0,
            }
        }
        std::mem::size_of::<Self>()
            + self.message.addr.len()
            + self
                .message
                .args
                .iter()
                .map(|a| std::mem::size_of::<OscType>() + heap(a))
                .sum::<usize>()
    }
}

/// Counters the HUD and `/sylva/status` report.
#[derive(Debug, Default)]
pub struct OscStats {
    /// Datagrams received.
    pub datagrams: AtomicU64,
    /// Datagrams that did not decode or nest too deep.
    pub malformed: AtomicU64,
    /// Datagrams from hosts outside `--osc-allow`.
    pub refused: AtomicU64,
    /// Messages dropped: the queue was full, or a time tag asked for more
    /// than the schedule holds.
    pub dropped: AtomicU64,
    /// Bytes of the messages waiting in the event queue (see
    /// [`MAX_QUEUED_BYTES`]); the receiver adds, the frame subtracts.
    pub queued_bytes: AtomicUsize,
}

/// Bytes of OSC messages the event queue may hold, whatever their count.
pub const MAX_QUEUED_BYTES: usize = 16 << 20;

/// Furthest ahead a bundle may be scheduled; later ones are dropped.
pub const MAX_AHEAD: Duration = Duration::from_secs(60);

/// Starts the receiver on `socket`; it stops when `stop` is set or the
/// channel closes. A panic inside restarts it (see [`crate::base::supervise`]).
pub fn spawn_receiver(
    socket: UdpSocket,
    events: SyncSender<ControlEvent>,
    stats: Arc<OscStats>,
    allow: AllowList,
    stop: Arc<AtomicBool>,
    errors: ErrorLog,
) -> std::io::Result<()> {
    socket.set_read_timeout(Some(Duration::from_millis(200)))?;
    let mut buffer = vec![0u8; 65_536];
    let mut warnings = RateLimitedLog::default();
    crate::base::supervise::spawn("sylva-osc", errors, move || {
        while !stop.load(Ordering::Relaxed) {
            let Ok((length, from)) = socket.recv_from(&mut buffer) else {
                continue;
            };
            let received = Instant::now();
            stats.datagrams.fetch_add(1, Ordering::Relaxed);
            if !allow.allows(from.ip()) {
                let count = stats.refused.fetch_add(1, Ordering::Relaxed) + 1;
                warnings
                    .warn(|| format!("OSC: refused {from} (not in --osc-allow); {count} so far"));
                continue;
            }
            match queue_datagram(&buffer[..length], from, received, &events, &stats) {
                Queued::All => {}
                Queued::Malformed(error) => {
                    let count = stats.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                    warnings.warn(|| {
                        format!("OSC: malformed datagram from {from} ({error}); {count} so far")
                    });
                }
                Queued::Dropped => {
                    let count = stats.dropped.load(Ordering::Relaxed);
                    warnings.warn(|| {
                        format!("OSC: the show is behind, messages dropped; {count} so far")
                    });
                }
                Queued::Closed => return,
            }
        }
    })?;
    Ok(())
}

/// What became of a datagram handed to the show.
#[derive(Debug)]
pub enum Queued {
    /// Every message of it is queued.
    All,
    /// It was refused.
    Malformed(DecodeError),
    /// The queue was full; messages were dropped (counted in the stats).
    Dropped,
    /// The show is gone.
    Closed,
}

/// Decodes `datagram` from `from` (received at `received`) and queues its
/// messages for the show's next frame, bounded by the queue's length and
/// [`MAX_QUEUED_BYTES`]: what UDP and the OSCQuery WebSocket both do.
pub fn queue_datagram(
    datagram: &[u8],
    from: SocketAddr,
    received: Instant,
    events: &SyncSender<ControlEvent>,
    stats: &OscStats,
) -> Queued {
    let messages = match decode(datagram, received, SystemTime::now()) {
        Ok(messages) => messages,
        Err(error) => return Queued::Malformed(error),
    };
    let count = messages.len();
    let mut outcome = Queued::All;
    for (index, (message, due)) in messages.into_iter().enumerate() {
        let event: ControlEvent = Box::new(OscReceived {
            from,
            message,
            due,
            received,
            rest: count - index - 1,
        });
        let size = event.queued_bytes();
        let queued = stats.queued_bytes.load(Ordering::Relaxed);
        let sent = match queued + size > MAX_QUEUED_BYTES {
            true => Err(TrySendError::Full(event)),
            false => {
                stats.queued_bytes.fetch_add(size, Ordering::Relaxed);
                events.try_send(event).inspect_err(|_| {
                    stats.queued_bytes.fetch_sub(size, Ordering::Relaxed);
                })
            }
        };
        match sent {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                stats.dropped.fetch_add(1, Ordering::Relaxed);
                outcome = Queued::Dropped;
            }
            Err(TrySendError::Disconnected(_)) => return Queued::Closed,
        }
    }
    outcome
}

/// Why a datagram was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Its nesting or lengths break the wire limits.
    #[error(transparent)]
    Wire(#[from] osc_wire::WireError),
    /// rosc could not decode it.
    #[error("{0}")]
    Malformed(String),
    /// A bundle is scheduled beyond [`MAX_AHEAD`].
    #[error("a bundle scheduled {:.0} s ahead (at most {} s)", .0.as_secs_f64(), MAX_AHEAD.as_secs())]
    TooFarAhead(Duration),
}

/// Decodes a datagram into messages with the instant each is due (none
/// for now). Refuses nesting beyond [`osc_wire`]'s limits and bundles
/// scheduled more than [`MAX_AHEAD`] ahead.
pub fn decode(
    datagram: &[u8],
    received: Instant,
    wall: SystemTime,
) -> Result<Vec<(OscMessage, Option<Instant>)>, DecodeError> {
    osc_wire::check(datagram)?;
    let (_, packet) = rosc::decoder::decode_udp(datagram)
        .map_err(|e| DecodeError::Malformed(format!("{e:?}")))?;
    let mut messages = Vec::new();
    unpack(packet, None, &mut messages);
    messages
        .into_iter()
        .map(|(message, tag)| {
            let due = match tag.map(|t| osc_wire::due(t, wall)) {
                None | Some(Due::Now) => None,
                Some(Due::Ahead(ahead)) if ahead <= MAX_AHEAD => Some(received + ahead),
                Some(Due::Ahead(ahead)) => return Err(DecodeError::TooFarAhead(ahead)),
            };
            Ok((message, due))
        })
        .collect()
}

/// Flattens bundles (nested or empty) into messages with their time tags.
/// Depth is bounded by [`osc_wire::check`] before anything is decoded.
pub fn unpack(
    packet: OscPacket,
    tag: Option<OscTime>,
    out: &mut Vec<(OscMessage, Option<OscTime>)>,
) {
    match packet {
        OscPacket::Message(message) => out.push((message, tag)),
        OscPacket::Bundle(bundle) => {
            let immediate = bundle.timetag.seconds == 0 && bundle.timetag.fractional == 1;
            let tag = if immediate { tag } else { Some(bundle.timetag) };
            for inner in bundle.content {
                unpack(inner, tag, out);
            }
        }
    }
}

/// A warning at most once a second, whatever a sender floods.
#[derive(Debug, Default)]
pub struct RateLimitedLog {
    last: Option<Instant>,
}

impl RateLimitedLog {
    /// Logs the message `text` makes, unless one was logged this second.
    pub fn warn(&mut self, text: impl FnOnce() -> String) {
        if self
            .last
            .is_none_or(|t| t.elapsed() > Duration::from_secs(1))
        {
            tracing::warn!("{}", text());
            self.last = Some(Instant::now());
        }
    }
}

/// `shader.aurora.glow` from `/sylva/shader/aurora/glow`.
/// A dot in the address is refused: `/sylva/master.brightness` would
/// otherwise alias `/sylva/master/brightness`, and one parameter would
/// answer to two addresses (one of them missing from OSCQuery).
pub fn param_of(address: &str) -> Option<String> {
    let rest = address.strip_prefix(PREFIX)?;
    (!rest.is_empty() && !rest.contains('.')).then(|| rest.replace('/', "."))
}

/// `/sylva/shader/aurora/glow` for `shader.aurora.glow`.
pub fn address_of(param: &str) -> String {
    format!("{PREFIX}{}", param.replace('.', "/"))
}

/// Reads OSC arguments as a value of `spec`'s type: floats from f, d or i;
/// ints rounded; bools from T, F or a non-zero number; enums by name or
/// index; vec3 as three numbers; colours as three or four.
pub fn value_from_args(spec: &ParamSpec, args: &[OscType]) -> Option<Value> {
    let numbers: Vec<f32> = args.iter().filter_map(number).collect();
    let value = match (&spec.kind, args) {
        (ParamKind::Bool, [OscType::Bool(b)]) => Value::Bool(*b),
        (ParamKind::Bool, [other]) => Value::Bool(number(other)? != 0.0),
        (
            ParamKind::Enum { .. } | ParamKind::Text | ParamKind::Path | ParamKind::Texture,
            [OscType::String(s)],
        ) => Value::Text(s.clone()),
        (ParamKind::Enum { .. }, [other]) => Value::Int(number(other)?.round() as i32),
        (ParamKind::Float { .. }, [other]) => Value::Float(number(other)?),
        (ParamKind::Int { .. }, [other]) => Value::Float(number(other)?),
        (ParamKind::Vec3 { .. }, [_, _, _]) if numbers.len() == 3 => {
            Value::Vec3([numbers[0], numbers[1], numbers[2]])
        }
        (ParamKind::Colour, [_, _, _]) if numbers.len() == 3 => {
            Value::Colour([numbers[0], numbers[1], numbers[2], 1.0])
        }
        (ParamKind::Colour, [_, _, _, _]) if numbers.len() == 4 => {
            Value::Colour([numbers[0], numbers[1], numbers[2], numbers[3]])
        }
        _ => return None,
    };
    spec.clamp(value)
}

/// The OSC arguments of a value: what feedback sends and OSCQuery shows.
pub fn args_of(spec: &ParamSpec, value: &Value) -> Vec<OscType> {
    match value {
        Value::Float(v) => vec![OscType::Float(*v)],
        Value::Int(v) => vec![OscType::Int(*v)],
        Value::Bool(v) => vec![OscType::Bool(*v)],
        Value::Enum(_) => vec![OscType::String(spec.display(value))],
        Value::Vec3(v) => v.iter().map(|c| OscType::Float(*c)).collect(),
        Value::Colour(v) => v.iter().map(|c| OscType::Float(*c)).collect(),
        Value::List(v) => v.iter().map(|c| OscType::Float(*c)).collect(),
        Value::Text(s) => vec![OscType::String(s.clone())],
    }
}

fn number(arg: &OscType) -> Option<f32> {
    match arg {
        OscType::Float(v) => Some(*v),
        OscType::Double(v) => Some(*v as f32),
        OscType::Int(v) => Some(*v as f32),
        OscType::Long(v) => Some(*v as f32),
        OscType::Bool(v) => Some(f32::from(u8::from(*v))),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// Sends parameter changes to the configured targets.
pub struct Feedback {
    socket: Option<UdpSocket>,
    targets: Vec<SocketAddr>,
}

impl Feedback {
    /// Feedback to `targets`; none means nothing is sent.
    pub fn new(targets: Vec<SocketAddr>) -> Self {
        let socket = if targets.is_empty() {
            None
        } else {
            UdpSocket::bind(("0.0.0.0", 0))
                .inspect_err(|e| tracing::warn!("OSC feedback: cannot open a socket: {e}"))
                .ok()
        };
        Self { socket, targets }
    }

    /// Sends `value` of `spec` to every target except the host that caused
    /// the change (`origin`), so a controller never hears its own echo.
    pub fn send(&self, spec: &ParamSpec, value: &Value, origin: Option<&SocketAddr>) {
        let Some(socket) = &self.socket else {
            return;
        };
        let packet = OscPacket::Message(OscMessage {
            addr: address_of(&spec.name),
            args: args_of(spec, value),
        });
        let Ok(bytes) = rosc::encoder::encode(&packet) else {
            return;
        };
        for target in &self.targets {
            if origin.is_some_and(|o| o.ip() == target.ip()) {
                continue;
            }
            if let Err(error) = socket.send_to(&bytes, target) {
                tracing::debug!("OSC feedback to {target}: {error}");
            }
        }
    }

    /// Sends a raw message (status replies) to `to`.
    pub fn reply(&self, to: SocketAddr, message: OscMessage) {
        let socket = self.socket.as_ref().map_or_else(
            || UdpSocket::bind(("0.0.0.0", 0)).ok(),
            |s| s.try_clone().ok(),
        );
        if let (Some(socket), Ok(bytes)) =
            (socket, rosc::encoder::encode(&OscPacket::Message(message)))
        {
            let _ = socket.send_to(&bytes, to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosc::OscBundle;

    #[test]
    fn arguments_are_read_per_type() {
        let float = ParamSpec::float("a.f", 0.0, 0.0, 10.0);
        assert_eq!(
            value_from_args(&float, &[OscType::Int(3)]),
            Some(Value::Float(3.0))
        );
        assert_eq!(
            value_from_args(&float, &[OscType::Double(20.0)]),
            Some(Value::Float(10.0))
        );
        assert_eq!(
            value_from_args(&float, &[OscType::String("x".into())]),
            None
        );
        let int = ParamSpec::int("a.i", 0, 0, 10);
        assert_eq!(
            value_from_args(&int, &[OscType::Float(2.6)]),
            Some(Value::Int(3))
        );
        let flag = ParamSpec::bool("a.b", false);
        assert_eq!(
            value_from_args(&flag, &[OscType::Bool(true)]),
            Some(Value::Bool(true))
        );
        assert_eq!(
            value_from_args(&flag, &[OscType::Float(0.0)]),
            Some(Value::Bool(false))
        );
        let mode = ParamSpec::enumeration("a.e", &["normal", "add"], 0);
        assert_eq!(
            value_from_args(&mode, &[OscType::String("add".into())]),
            Some(Value::Enum(1))
        );
        assert_eq!(
            value_from_args(&mode, &[OscType::Int(1)]),
            Some(Value::Enum(1))
        );
        assert_eq!(value_from_args(&mode, &[OscType::Int(5)]), None);
        let colour = ParamSpec::colour("a.c", [1.0; 4]);
        let rgb = [
            OscType::Float(0.5),
            OscType::Float(0.25),
            OscType::Float(1.0),
        ];
        assert_eq!(
            value_from_args(&colour, &rgb),
            Some(Value::Colour([0.5, 0.25, 1.0, 1.0]))
        );
        let vec3 = ParamSpec::vec3("a.v", [0.0; 3], -1.0, 1.0);
        assert_eq!(
            value_from_args(&vec3, &rgb),
            Some(Value::Vec3([0.5, 0.25, 1.0]))
        );
        assert_eq!(value_from_args(&vec3, &rgb[..2]), None);
    }

    #[test]
    fn addresses_and_names_map_both_ways() {
        assert_eq!(
            param_of("/sylva/shader/aurora/glow").as_deref(),
            Some("shader.aurora.glow")
        );
        assert_eq!(address_of("master.brightness"), "/sylva/master/brightness");
        assert_eq!(param_of("/other/x"), None);
        assert_eq!(param_of("/sylva/master.brightness"), None);
    }

    #[test]
    fn nested_and_empty_bundles_unpack() {
        let message = |addr: &str| {
            OscPacket::Message(OscMessage {
                addr: addr.into(),
                args: vec![],
            })
        };
        let immediate = OscTime {
            seconds: 0,
            fractional: 1,
        };
        let packet = OscPacket::Bundle(OscBundle {
            timetag: immediate,
            content: vec![
                message("/a"),
                OscPacket::Bundle(OscBundle {
                    timetag: immediate,
                    content: vec![],
                }),
                OscPacket::Bundle(OscBundle {
                    timetag: immediate,
                    content: vec![message("/b")],
                }),
            ],
        });
        let mut out = Vec::new();
        unpack(packet, None, &mut out);
        let addresses: Vec<&str> = out.iter().map(|(m, _)| m.addr.as_str()).collect();
        assert_eq!(addresses, ["/a", "/b"]);
    }
}
