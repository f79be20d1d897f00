//! One OSCQuery connection's HTTP: request heads parsed by httparse
//! (hyper's HTTP/1 parser), bodies skipped, status lines from the `http`
//! crate's codes, and the upgrade to a WebSocket handed on when the page
//! asking is one `origin.rs` admits. HTTP itself changes nothing: it
//! answers GET (the namespace, the phone page) and the CORS preflight,
//! and every other method is 405.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::connections::{Activity, Standing};
use std::path::Path;

use super::namespace::{SharedNamespace, answer};
use super::origin::{OriginRefusal, Origins};
use super::websocket::websocket;
use crate::control::Inbox;

/// What decides who may do more than read: the pages that may open the
/// WebSocket, and the show's queue (with the PIN) its writes join.
#[derive(Clone, Copy)]
pub(super) struct Gate<'a> {
    pub inbox: Option<&'a Inbox>,
    pub origins: &'a Origins,
}

/// What the server answers from: the namespace, the OSC port it names, and
/// the folder of the presets' thumbnails (`/thumbs/NAME.png`), if any.
pub(super) struct Site<'a> {
    pub namespace: &'a SharedNamespace,
    pub osc_port: u16,
    pub thumbs: Option<&'a Path>,
}

/// Bytes of one thumbnail at most.
const MAX_THUMB: u64 = 1 << 20;

/// Bytes of one request head (request line and headers).
const MAX_HEAD: usize = 16 * 1024;

/// Header lines of one request.
const MAX_HEADERS: usize = 64;

/// Bytes of a request body skipped; a longer one closes the connection.
const MAX_BODY: u64 = 64 * 1024;

/// Longest a client may stay silent between requests, or take to read a
/// reply.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest a request head may take to arrive whole, however its bytes
/// trickle in (a byte every few seconds holds no connection for long).
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);

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
    /// Every `Origin` header (a browser sends one; two are refused).
    origin: Vec<String>,
    /// Every `Host` header.
    host: Vec<String>,
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
            origin: header("origin").collect(),
            host: header("host").collect(),
        }
    }

    /// Whether the page asking for this upgrade may open a WebSocket.
    fn admitted_by(&self, origins: &Origins) -> Result<(), OriginRefusal> {
        if self.origin.len() > 1 {
            let quoted = self.origin.join(", ").chars().take(100).collect();
            return Err(OriginRefusal::Opaque(quoted));
        }
        let host = match self.host.as_slice() {
            [host] => Some(host.as_str()),
            _ => None,
        };
        origins.admit(self.origin.first().map(String::as_str), host)
    }
}

/// The next request head from `stream`, parsed by httparse, and its
/// length at the start of `buffer` (which may hold bytes past it). `None`
/// when the client closed between requests.
fn read_head(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    activity: &Activity,
) -> std::io::Result<Option<(Head, usize)>> {
    // The head's clock starts with its first byte; until then the
    // connection is idle, within CLIENT_TIMEOUT.
    let mut deadline = (!buffer.is_empty()).then(|| Instant::now() + HEAD_TIMEOUT);
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
        let wait = match deadline {
            Some(deadline) => deadline.saturating_duration_since(Instant::now()),
            None => CLIENT_TIMEOUT,
        };
        if wait.is_zero() {
            return Err(std::io::Error::new(
                ErrorKind::TimedOut,
                format!(
                    "a request head not complete within {} s",
                    HEAD_TIMEOUT.as_secs()
                ),
            ));
        }
        stream.set_read_timeout(Some(wait))?;
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
        activity.touch();
        deadline.get_or_insert_with(|| Instant::now() + HEAD_TIMEOUT);
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
/// [`CLIENT_TIMEOUT`], sends a head that is too long, too slow or not HTTP,
/// or asks
/// to upgrade to a WebSocket (then LISTEN streaming).
pub(super) fn client(
    mut stream: TcpStream,
    site: &Site<'_>,
    activity: &Activity,
    gate: Gate<'_>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let mut buffer = Vec::new();
    while let Some((head, length)) = read_head(&mut stream, &mut buffer, activity)? {
        if head.websocket && head.method == "GET" {
            if let Err(refusal) = head.admitted_by(gate.origins) {
                return refuse(stream, &refusal, gate);
            }
            return websocket(stream, site.namespace, buffer, activity, gate.inbox);
        }
        buffer.drain(..length);
        // A body is skipped, never read as the next request; one whose
        // length cannot be known or that is too long ends the connection
        // after the reply.
        let close = head.close || head.unknown_body || head.body > MAX_BODY;
        if !close {
            stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
            skip_body(&mut stream, &mut buffer, head.body)?;
        }
        let (status, content_type, body) = reply(&head.method, &head.url, site);
        // A thumbnail ends its connection: a browser fetching a page of
        // them would otherwise hold idle ones open and fill the places
        // the page's own WebSocket needs.
        let close = close || head.url.starts_with("/thumbs/");
        // CORS on what only reads: a page served elsewhere (a patch's own
        // web UI, a tool) may read the namespace, which any client on the
        // allow-list can read anyway; nothing here takes cookies or
        // credentials, and nothing answered with it changes the show.
        // The phone page and refusals carry none.
        let cors = (head.method == "GET" && content_type == JSON) || head.method == "OPTIONS";
        respond(&mut stream, status, content_type, &body, (cors, close))?;
        activity.rise(Standing::Asked);
        if close {
            return Ok(());
        }
    }
    Ok(())
}

/// A preset's thumbnail, `/thumbs/NAME.png` in `folder`: a plain name (no
/// path, no dots but the extension's), a file within [`MAX_THUMB`], read
/// as the show reads its files (no links, nothing outside the folder).
fn thumbnail(path: &str, folder: Option<&Path>) -> (u16, &'static str, Vec<u8>) {
    let missing = |why: &str| (404, JSON, json!({ "error": why }).to_string().into_bytes());
    let name = path.trim_start_matches("/thumbs/");
    let plain = name.strip_suffix(".png").is_some_and(|stem| {
        !stem.is_empty()
            && stem.len() <= 64
            && stem
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    });
    let Some(folder) = folder.filter(|_| plain) else {
        return missing("no such thumbnail");
    };
    match crate::base::opener::read(folder, Path::new(name), MAX_THUMB) {
        Ok(bytes) => (200, "image/png", bytes),
        Err(_) => missing("no such thumbnail"),
    }
}

/// The content type of the namespace's answers.
const JSON: &str = "application/json";

/// Writes one reply; `cors` adds the read-only CORS headers, `close`
/// says the connection closes after it.
fn respond(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
    (cors, close): (bool, bool),
) -> std::io::Result<()> {
    let status = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::BAD_REQUEST);
    let response = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{}Cache-Control: no-cache\r\n{}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len(),
        if cors {
            "Access-Control-Allow-Origin: *\r\nAccess-Control-Allow-Methods: GET\r\nAccess-Control-Allow-Headers: *\r\n"
        } else {
            ""
        },
        if close { "Connection: close\r\n" } else { "" },
    );
    stream.write_all(response.as_bytes())?;
    stream.write_all(body)
}

/// Answers a WebSocket upgrade from a page that may not open one: 403,
/// saying why, logged at most once a second and counted as refused.
fn refuse(mut stream: TcpStream, refusal: &OriginRefusal, gate: Gate<'_>) -> std::io::Result<()> {
    if let Ok(peer) = stream.peer_addr() {
        gate.origins.report(peer, refusal);
    }
    if let Some(inbox) = gate.inbox {
        inbox
            .stats
            .refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let body = json!({ "error": refusal.to_string() }).to_string();
    respond(&mut stream, 403, JSON, body.as_bytes(), (false, true))
}

/// The status, content type and body answering `method` for `url`: the
/// phone page at `/ui`, a preset's thumbnail at `/thumbs/NAME.png`, JSON
/// of the namespace for every other GET, an empty answer to a CORS
/// preflight.
fn reply(method: &str, url: &str, site: &Site<'_>) -> (u16, &'static str, Vec<u8>) {
    let path = url.split('?').next().unwrap_or(url);
    match method {
        "GET" if path == "/ui" || path == "/ui/" => (
            200,
            "text/html; charset=utf-8",
            super::page::PAGE.as_bytes().to_vec(),
        ),
        "GET" if path.starts_with("/thumbs/") => thumbnail(path, site.thumbs),
        "GET" => {
            let (status, body) = answer(url, &site.namespace.get(), site.osc_port);
            (status, JSON, body.into_bytes())
        }
        "OPTIONS" => (204, "text/plain", Vec::new()),
        _ => (
            405,
            JSON,
            json!({ "error": "only GET" }).to_string().into_bytes(),
        ),
    }
}
