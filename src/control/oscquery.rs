//! OSCQuery (the Vidvox proposal) over HTTP: the namespace of every
//! parameter as JSON, one attribute with `?VALUE` and friends, `?HOST_INFO`,
//! and LISTEN streaming over a WebSocket on the same port. Requests are
//! parsed by httparse (hyper's HTTP/1 parser) and status lines come from
//! the `http` crate's codes; connections stay this module's own so every
//! bound (hosts, connections, head size, timeouts) holds. The server
//! threads answer from a snapshot the main thread publishes once per frame
//! and stream the changes it hands them; they never touch the registry.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use tungstenite::Message;
use tungstenite::protocol::WebSocketConfig;

use serde_json::{Value as Json, json};

use super::allow::AllowList;
use super::osc::{RateLimitedLog, address_of, args_of};
use crate::base::status::ErrorLog;
use crate::params::{ParamKind, ParamSpec, Registry, Value};

/// What the server shows: the specs (replaced when parameters come or go)
/// and the current target values.
#[derive(Debug, Clone, Default)]
pub struct Namespace {
    specs: Arc<Vec<ParamSpec>>,
    values: Vec<Value>,
    revision: u64,
}

/// A WebSocket client's queue of (address, OSC bytes) changes.
type Listener = SyncSender<(String, Vec<u8>)>;

/// Connections served at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 32;

/// Bytes of one request head (request line and headers).
const MAX_HEAD: usize = 16 * 1024;

/// Header lines of one request.
const MAX_HEADERS: usize = 64;

/// Bytes of a request body skipped; a longer one closes the connection.
const MAX_BODY: u64 = 64 * 1024;

/// Changes queued for one WebSocket client; a client that falls this far
/// behind is disconnected instead of growing the queue.
const LISTENER_QUEUE: usize = 1_024;

/// Paths one WebSocket client may listen to.
const MAX_LISTENED: usize = 4_096;

/// Longest a client may take to send a request or read a reply.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// The snapshot shared with the server threads, and the WebSocket
/// listeners that changes are streamed to.
#[derive(Debug, Clone, Default)]
pub struct SharedNamespace {
    snapshot: Arc<RwLock<Arc<Namespace>>>,
    listeners: Arc<Mutex<Vec<Listener>>>,
}

impl SharedNamespace {
    /// Streams a parameter change (its address and OSC bytes) to the
    /// WebSocket clients; those that left or fell too far behind are
    /// dropped (which closes their connection).
    pub fn notify(&self, spec: &ParamSpec, value: &Value) {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if listeners.is_empty() {
            return;
        }
        let address = address_of(&spec.name);
        let packet = rosc::OscPacket::Message(rosc::OscMessage {
            addr: address.clone(),
            args: args_of(spec, value),
        });
        let Ok(bytes) = rosc::encoder::encode(&packet) else {
            return;
        };
        listeners.retain(|l| l.try_send((address.clone(), bytes.clone())).is_ok());
    }

    /// Publishes the registry's state (step 7 of the frame).
    pub fn publish(&self, registry: &Registry) {
        let previous = self.get();
        let specs = if previous.revision == registry.revision() && !previous.specs.is_empty() {
            previous.specs.clone()
        } else {
            Arc::new(registry.iter().map(|(s, _)| s.clone()).collect())
        };
        let values = specs
            .iter()
            .map(|s| {
                registry
                    .target(&s.name)
                    .cloned()
                    .unwrap_or_else(|| s.default.clone())
            })
            .collect();
        let next = Arc::new(Namespace {
            specs,
            values,
            revision: registry.revision(),
        });
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = next;
    }

    fn get(&self) -> Arc<Namespace> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Counts a connection while it is served.
struct ConnectionSlot(Arc<AtomicUsize>);

impl ConnectionSlot {
    fn take(active: &Arc<AtomicUsize>) -> Option<Self> {
        let taken = active
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_CONNECTIONS).then_some(n + 1)
            })
            .is_ok();
        taken.then(|| Self(active.clone()))
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Starts the server on `port` (0 picks one) and returns the port;
/// `osc_port` is announced in HOST_INFO. Plain GETs are answered with JSON;
/// a WebSocket upgrade on the same port gets LISTEN streaming. Hosts
/// outside `allow` are closed at once; at most [`MAX_CONNECTIONS`] are
/// served together; accept errors (no file descriptors left) back off.
pub fn serve(
    bind: &str,
    port: u16,
    osc_port: u16,
    namespace: SharedNamespace,
    allow: AllowList,
    errors: ErrorLog,
) -> std::io::Result<u16> {
    let listener = TcpListener::bind((bind, port))?;
    let port = listener.local_addr()?.port();
    let active = Arc::new(AtomicUsize::new(0));
    let mut warnings = RateLimitedLog::default();
    crate::base::supervise::spawn("sylva-oscquery", errors, move || {
        let mut backoff = Duration::from_millis(10);
        loop {
            let (stream, peer) = match listener.accept() {
                Ok(accepted) => {
                    backoff = Duration::from_millis(10);
                    accepted
                }
                Err(error) => {
                    warnings.warn(|| format!("OSCQuery: cannot accept ({error}); backing off"));
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            };
            if !allow.allows(peer.ip()) {
                continue;
            }
            let Some(slot) = ConnectionSlot::take(&active) else {
                warnings.warn(|| {
                    format!("OSCQuery: {MAX_CONNECTIONS} connections open; closing {peer}")
                });
                continue;
            };
            let namespace = namespace.clone();
            let spawned = std::thread::Builder::new()
                .name("sylva-oscquery-client".into())
                .spawn(move || {
                    let _slot = slot;
                    let served =
                        catch_unwind(AssertUnwindSafe(|| client(stream, &namespace, osc_port)));
                    match served {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => tracing::debug!("OSCQuery client {peer}: {error}"),
                        Err(_) => tracing::warn!("OSCQuery client {peer}: handler panicked"),
                    }
                });
            if let Err(error) = spawned {
                warnings.warn(|| format!("OSCQuery: cannot serve a client: {error}"));
            }
        }
    })?;
    tracing::info!("OSCQuery on http://{bind}:{port}/ (WebSocket LISTEN on the same port)");
    Ok(port)
}

/// What the server needs of a request head.
struct Head {
    method: String,
    url: String,
    /// Bytes of body that follow (`Content-Length`).
    body: u64,
    /// The body's length cannot be known (`Transfer-Encoding`): the
    /// connection closes after the reply.
    unknown_body: bool,
    close: bool,
    websocket: bool,
}

impl Head {
    fn of(request: &httparse::Request<'_, '_>) -> Self {
        let header = |name: &'static str| {
            request
                .headers
                .iter()
                .filter(move |h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase())
        };
        let body = header("content-length")
            .next()
            .map_or(0, |v| v.trim().parse().unwrap_or(u64::MAX));
        Self {
            method: request.method.unwrap_or_default().to_string(),
            url: request.path.unwrap_or("/").to_string(),
            body,
            unknown_body: header("transfer-encoding").next().is_some(),
            close: header("connection").any(|v| v.contains("close")),
            websocket: header("upgrade").any(|v| v.contains("websocket")),
        }
    }
}

/// The next request head from `stream`, parsed by httparse, and its
/// length at the start of `buffer` (which may hold bytes past it). `None`
/// when the client closed between requests.
fn read_head(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
) -> std::io::Result<Option<(Head, usize)>> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(buffer) {
            Ok(httparse::Status::Complete(length)) => {
                return Ok(Some((Head::of(&request), length)));
            }
            Ok(httparse::Status::Partial) if buffer.len() >= MAX_HEAD => {
                return Err(std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!("a request head longer than {MAX_HEAD} bytes"),
                ));
            }
            Ok(httparse::Status::Partial) => {}
            Err(error) => {
                return Err(std::io::Error::new(
                    ErrorKind::InvalidData,
                    format!("not an HTTP request ({error})"),
                ));
            }
        }
        let mut chunk = [0u8; 2048];
        let room = (MAX_HEAD - buffer.len()).min(chunk.len());
        let read = stream.read(&mut chunk[..room])?;
        if read == 0 {
            return if buffer.is_empty() {
                Ok(None)
            } else {
                Err(ErrorKind::UnexpectedEof.into())
            };
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// Skips `length` body bytes, those already buffered first.
fn skip_body(stream: &mut TcpStream, buffer: &mut Vec<u8>, length: u64) -> std::io::Result<()> {
    let buffered = buffer
        .len()
        .min(usize::try_from(length).unwrap_or(usize::MAX));
    buffer.drain(..buffered);
    let rest = length - buffered as u64;
    let skipped = std::io::copy(&mut Read::by_ref(stream).take(rest), &mut std::io::sink())?;
    if skipped < rest {
        return Err(ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// One connection: HTTP requests until it closes, idles past
/// [`CLIENT_TIMEOUT`], sends a head that is too long or not HTTP, or asks
/// to upgrade to a WebSocket (then LISTEN streaming).
fn client(
    mut stream: TcpStream,
    namespace: &SharedNamespace,
    osc_port: u16,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut buffer = Vec::new();
    while let Some((head, length)) = read_head(&mut stream, &mut buffer)? {
        if head.websocket && head.method == "GET" {
            return websocket(stream, namespace, buffer);
        }
        buffer.drain(..length);
        // A body is skipped, never read as the next request; one whose
        // length cannot be known or that is too long ends the connection
        // after the reply.
        let close = head.close || head.unknown_body || head.body > MAX_BODY;
        if !close {
            skip_body(&mut stream, &mut buffer, head.body)?;
        }
        let (status, body) = if head.method == "GET" {
            answer(&head.url, &namespace.get(), osc_port)
        } else {
            (405, json!({ "error": "only GET" }).to_string())
        };
        let status = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_REQUEST);
        let response = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\n{}\r\n{body}",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            body.len(),
            if close { "Connection: close\r\n" } else { "" },
        );
        stream.write_all(response.as_bytes())?;
        if close {
            return Ok(());
        }
    }
    Ok(())
}

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
/// `{"COMMAND":"LISTEN","DATA":"/sylva/master/brightness"}` (IGNORE stops);
/// every change of a listened parameter arrives as a binary OSC frame.
/// Messages are bounded in size, the queue in length, and a client that
/// stops reading is disconnected once its writes time out.
fn websocket(
    stream: TcpStream,
    namespace: &SharedNamespace,
    handshake: Vec<u8>,
) -> std::io::Result<()> {
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
    let (sender, changes) = sync_channel::<(String, Vec<u8>)>(LISTENER_QUEUE);
    namespace
        .listeners
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(sender);
    let mut listening: Vec<String> = Vec::new();
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                let command: Json = serde_json::from_str(text.as_str()).unwrap_or_default();
                let path = command["DATA"].as_str().unwrap_or_default().to_string();
                match command["COMMAND"].as_str() {
                    Some("LISTEN")
                        if !listening.contains(&path) && listening.len() < MAX_LISTENED =>
                    {
                        listening.push(path)
                    }
                    Some("IGNORE") => listening.retain(|p| *p != path),
                    _ => {}
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
                Ok((address, bytes)) => {
                    if listening.contains(&address) {
                        socket
                            .send(Message::Binary(bytes.into()))
                            .map_err(|e| std::io::Error::other(e.to_string()))?;
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    return Err(std::io::Error::other("fell too far behind; disconnected"));
                }
            }
        }
    }
}

/// The HTTP status and JSON body for `url`.
pub fn answer(url: &str, namespace: &Namespace, osc_port: u16) -> (u16, String) {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    if query == "HOST_INFO" {
        return (200, host_info(osc_port).to_string());
    }
    let Some(node) = node(namespace, path) else {
        return (
            404,
            json!({ "error": format!("no node {path}") }).to_string(),
        );
    };
    if query.is_empty() {
        return (200, node.to_string());
    }
    match node.get(query) {
        Some(value) => (200, json!({ query: value }).to_string()),
        None if ATTRIBUTES.contains(&query) => (204, String::new()),
        None => (
            400,
            json!({ "error": format!("unknown attribute {query}") }).to_string(),
        ),
    }
}

const ATTRIBUTES: [&str; 9] = [
    "FULL_PATH",
    "CONTENTS",
    "TYPE",
    "VALUE",
    "RANGE",
    "ACCESS",
    "DESCRIPTION",
    "UNIT",
    "CLIPMODE",
];

fn host_info(osc_port: u16) -> Json {
    json!({
        "NAME": "sylva",
        "OSC_PORT": osc_port,
        "OSC_TRANSPORT": "UDP",
        "EXTENSIONS": {
            "ACCESS": true, "VALUE": true, "RANGE": true, "DESCRIPTION": true,
            "UNIT": true, "CLIPMODE": true, "LISTEN": true, "PATH_CHANGED": false
        }
    })
}

/// The node at `path` with everything below it.
fn node(namespace: &Namespace, path: &str) -> Option<Json> {
    let mut tree = Tree::default();
    for (spec, value) in namespace.specs.iter().zip(&namespace.values) {
        let address = address_of(&spec.name);
        let parts: Vec<&str> = address.trim_start_matches('/').split('/').collect();
        tree.insert(&parts, spec, value);
    }
    let mut at = &tree;
    let mut full = String::new();
    for part in path
        .trim_start_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
    {
        at = at.children.get(part)?;
        full.push('/');
        full.push_str(part);
    }
    Some(at.json(if full.is_empty() { "/" } else { &full }))
}

#[derive(Default)]
struct Tree<'a> {
    children: BTreeMap<String, Tree<'a>>,
    leaf: Option<(&'a ParamSpec, &'a Value)>,
}

impl<'a> Tree<'a> {
    fn insert(&mut self, parts: &[&str], spec: &'a ParamSpec, value: &'a Value) {
        match parts.split_first() {
            Some((first, rest)) => self
                .children
                .entry(first.to_string())
                .or_default()
                .insert(rest, spec, value),
            None => self.leaf = Some((spec, value)),
        }
    }

    fn json(&self, full_path: &str) -> Json {
        let mut node = match self.leaf {
            Some((spec, value)) => parameter(spec, value),
            None => json!({ "ACCESS": 0 }),
        };
        node["FULL_PATH"] = json!(full_path);
        if !self.children.is_empty() {
            let base = if full_path == "/" {
                String::new()
            } else {
                full_path.to_string()
            };
            let contents: serde_json::Map<String, Json> = self
                .children
                .iter()
                .map(|(name, child)| (name.clone(), child.json(&format!("{base}/{name}"))))
                .collect();
            node["CONTENTS"] = Json::Object(contents);
        }
        node
    }
}

/// A parameter's attributes.
fn parameter(spec: &ParamSpec, value: &Value) -> Json {
    let args: Vec<Json> = args_of(spec, value)
        .into_iter()
        .map(|a| match a {
            rosc::OscType::Float(v) => json!(v),
            rosc::OscType::Int(v) => json!(v),
            rosc::OscType::Bool(v) => json!(v),
            rosc::OscType::String(s) => json!(s),
            _ => Json::Null,
        })
        .collect();
    let list_type: String;
    let (osc_type, range) = match &spec.kind {
        ParamKind::Float { min, max } => ("f", json!([{ "MIN": min, "MAX": max }])),
        ParamKind::Int { min, max } => ("i", json!([{ "MIN": min, "MAX": max }])),
        ParamKind::Bool => (
            if matches!(value, Value::Bool(true)) {
                "T"
            } else {
                "F"
            },
            json!([{ "VALS": [false, true] }]),
        ),
        ParamKind::Enum { options } => ("s", json!([{ "VALS": options }])),
        ParamKind::Vec3 { min, max } => (
            "fff",
            json!([{ "MIN": min, "MAX": max }, { "MIN": min, "MAX": max }, { "MIN": min, "MAX": max }]),
        ),
        ParamKind::Colour => (
            "ffff",
            json!([{ "MIN": 0.0 }, { "MIN": 0.0 }, { "MIN": 0.0 }, { "MIN": 0.0 }]),
        ),
        ParamKind::Text | ParamKind::Path => ("s", Json::Null),
        ParamKind::List { len, min, max } => {
            list_type = "f".repeat(*len);
            (
                list_type.as_str(),
                Json::Array(vec![json!({ "MIN": min, "MAX": max }); *len]),
            )
        }
    };
    let mut node = json!({
        "TYPE": osc_type,
        "VALUE": args,
        // OSCQuery: 1 is read-only, 3 read and write.
        "ACCESS": if spec.read_only { 1 } else { 3 },
        "DESCRIPTION": spec.description,
        "CLIPMODE": "both",
    });
    if !range.is_null() {
        node["RANGE"] = range;
    }
    if !spec.unit.is_empty() {
        node["UNIT"] = json!([spec.unit]);
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace() -> Namespace {
        let mut registry = Registry::new();
        registry.register(
            ParamSpec::float("master.brightness", 1.0, 0.0, 4.0).with_description("Exposure"),
        );
        registry.register(ParamSpec::enumeration(
            "shader.aurora.blend",
            &["normal", "add"],
            1,
        ));
        for spec in crate::audio::audio_params() {
            registry.register(spec);
        }
        let shared = SharedNamespace::default();
        shared.publish(&registry);
        (*shared.get()).clone()
    }

    #[test]
    fn parameters_carry_the_required_attributes() {
        let (status, body) = answer("/sylva/master/brightness", &namespace(), 9000);
        assert_eq!(status, 200);
        let node: Json = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(node["FULL_PATH"], "/sylva/master/brightness");
        assert_eq!(node["TYPE"], "f");
        assert_eq!(node["VALUE"], json!([1.0]));
        assert_eq!(node["RANGE"], json!([{ "MIN": 0.0, "MAX": 4.0 }]));
        assert_eq!(node["ACCESS"], 3);
        assert_eq!(node["DESCRIPTION"], "Exposure");
        let (_, blend) = answer("/sylva/shader/aurora/blend", &namespace(), 9000);
        let blend: Json = serde_json::from_str(&blend).unwrap_or_default();
        assert_eq!(blend["VALUE"], json!(["add"]));
        assert_eq!(blend["RANGE"], json!([{ "VALS": ["normal", "add"] }]));
        let (_, bass) = answer("/sylva/audio/bass", &namespace(), 9000);
        let bass: Json = serde_json::from_str(&bass).unwrap_or_default();
        assert_eq!(bass["ACCESS"], 1, "the analysis is read-only");
        let (_, bands) = answer("/sylva/audio/bands", &namespace(), 9000);
        let bands: Json = serde_json::from_str(&bands).unwrap_or_default();
        assert_eq!(bands["TYPE"], "f".repeat(16));
        assert_eq!(bands["VALUE"], json!(vec![0.0; 16]));
    }

    #[test]
    fn containers_single_attributes_and_host_info() {
        let (_, root) = answer("/", &namespace(), 9000);
        let root: Json = serde_json::from_str(&root).unwrap_or_default();
        assert_eq!(
            root["CONTENTS"]["sylva"]["CONTENTS"]["master"]["FULL_PATH"],
            "/sylva/master"
        );
        assert_eq!(
            answer("/sylva/master/brightness?VALUE", &namespace(), 9000),
            (200, "{\"VALUE\":[1.0]}".to_string())
        );
        assert_eq!(answer("/nothing", &namespace(), 9000).0, 404);
        assert_eq!(
            answer("/sylva/master/brightness?BOGUS", &namespace(), 9000).0,
            400
        );
        let (_, info) = answer("/?HOST_INFO", &namespace(), 9123);
        let info: Json = serde_json::from_str(&info).unwrap_or_default();
        assert_eq!(info["OSC_PORT"], 9123);
        assert_eq!(info["OSC_TRANSPORT"], "UDP");
    }
}
