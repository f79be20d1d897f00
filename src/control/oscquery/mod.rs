//! OSCQuery (the Vidvox proposal) over HTTP: the namespace of every
//! parameter as JSON, one attribute with `?VALUE` and friends, `?HOST_INFO`,
//! and LISTEN streaming over a WebSocket on the same port. Requests are
//! parsed by httparse (hyper's HTTP/1 parser) and status lines come from
//! the `http` crate's codes; connections stay this module's own so every
//! bound (hosts, connections, head size, timeouts) holds. The server
//! threads answer from a snapshot the main thread publishes once per frame
//! and stream the changes it hands them; they never touch the registry.

mod http;
mod namespace;
mod nodes;
mod page;
mod pin;
mod websocket;

use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

pub use namespace::{Namespace, SharedNamespace, answer};
pub use pin::Pin;

use super::Inbox;
use super::allow::AllowList;
use super::osc::RateLimitedLog;
use crate::base::status::ErrorLog;

/// Connections served at once; past it the one idle longest is closed to
/// make room.
pub const MAX_CONNECTIONS: usize = 32;

/// Connections one address may hold; past it that address's connection
/// idle longest is closed to make room.
pub const MAX_PER_ADDRESS: usize = 8;

/// When a connection last heard from its client, shared with the server
/// so it can close the one idle longest.
#[derive(Debug, Clone)]
pub struct Activity {
    since: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Self {
            since: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The client sent something.
    pub fn touch(&self) {
        let now = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(now, Ordering::Relaxed);
    }

    /// How long since the client last sent something.
    pub fn idle(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.since.elapsed().saturating_sub(last)
    }
}

/// A connection being served: its address, when it was last active, and
/// a handle to close it.
struct Served {
    id: u64,
    address: IpAddr,
    activity: Activity,
    stream: TcpStream,
}

/// The connections being served. A newcomer is always let in: when all
/// [`MAX_CONNECTIONS`] are taken, or its address holds
/// [`MAX_PER_ADDRESS`], the connection idle longest (of that address, if
/// it is the address that is full) is closed first, so idle sockets and
/// slow senders can never lock an honest client out.
#[derive(Clone, Default)]
struct Connections {
    served: Arc<Mutex<Vec<Served>>>,
    next_id: Arc<AtomicU64>,
}

/// A connection's place among the served; leaving frees it.
struct Admitted {
    id: u64,
    connections: Connections,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.connections
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|c| c.id != self.id);
    }
}

impl Connections {
    /// Lets `stream` from `address` in, closing another first where one
    /// must make room; returns its place, its activity and whom it evicted.
    fn admit(
        &self,
        address: IpAddr,
        stream: &TcpStream,
    ) -> std::io::Result<(Admitted, Activity, Option<IpAddr>)> {
        let activity = Activity::new();
        let handle = stream.try_clone()?;
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        let same = served.iter().filter(|c| c.address == address).count();
        let full = served.len() >= MAX_CONNECTIONS;
        let evicted = if same >= MAX_PER_ADDRESS || full {
            let victim = served
                .iter()
                .enumerate()
                .filter(|(_, c)| same < MAX_PER_ADDRESS || c.address == address)
                .max_by_key(|(_, c)| c.activity.idle())
                .map(|(at, _)| at);
            victim.map(|at| {
                let victim = served.swap_remove(at);
                victim.stream.shutdown(Shutdown::Both).ok();
                victim.address
            })
        } else {
            None
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        served.push(Served {
            id,
            address,
            activity: activity.clone(),
            stream: handle,
        });
        let admitted = Admitted {
            id,
            connections: self.clone(),
        };
        Ok((admitted, activity, evicted))
    }
}

/// Starts the server on `port` (0 picks one) and returns the port;
/// `osc_port` is announced in HOST_INFO. Plain GETs are answered with JSON;
/// a WebSocket upgrade on the same port gets LISTEN streaming. Hosts
/// outside `allow` are closed at once; at most [`MAX_CONNECTIONS`] are
/// served together, [`MAX_PER_ADDRESS`] from one address, the one idle
/// longest closed to let a newcomer in; accept errors (no file descriptors
/// left) back off.
pub fn serve(
    bind: &str,
    port: u16,
    osc_port: u16,
    (namespace, inbox): (SharedNamespace, Option<Inbox>),
    allow: AllowList,
    errors: ErrorLog,
) -> std::io::Result<u16> {
    let listener = TcpListener::bind((bind, port))?;
    let port = listener.local_addr()?.port();
    let connections = Connections::default();
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
            let (admitted, activity, evicted) = match connections.admit(peer.ip(), &stream) {
                Ok(admitted) => admitted,
                Err(error) => {
                    warnings.warn(|| format!("OSCQuery: cannot serve {peer}: {error}"));
                    continue;
                }
            };
            if let Some(evicted) = evicted {
                warnings.warn(|| {
                    format!(
                        "OSCQuery: connections full; closed the one from {evicted} idle longest"
                    )
                });
            }
            let namespace = namespace.clone();
            let inbox = inbox.clone();
            let spawned = std::thread::Builder::new()
                .name("sylva-oscquery-client".into())
                .spawn(move || {
                    let _admitted = admitted;
                    let served = catch_unwind(AssertUnwindSafe(|| {
                        http::client(stream, &namespace, osc_port, &activity, inbox.as_ref())
                    }));
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
