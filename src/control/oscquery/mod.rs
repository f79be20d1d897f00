//! OSCQuery (the Vidvox proposal) over HTTP: the namespace of every
//! parameter as JSON, one attribute with `?VALUE` and friends, `?HOST_INFO`,
//! and LISTEN streaming over a WebSocket on the same port. Requests are
//! parsed by httparse (hyper's HTTP/1 parser) and status lines come from
//! the `http` crate's codes; connections stay this module's own so every
//! bound (hosts, connections, head size, timeouts) holds. The server
//! threads answer from a snapshot the main thread publishes once per frame
//! and stream the changes it hands them; they never touch the registry.

mod connections;
mod http;
mod listening;
mod namespace;
mod nodes;
mod origin;
mod page;
mod pin;
mod websocket;

use std::net::TcpListener;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use connections::{MAX_CONNECTIONS, MAX_PER_ADDRESS};
pub use listening::{MAX_LISTENED, MAX_LISTENED_BYTES};
pub use namespace::{Namespace, SharedNamespace, answer};
pub use origin::{NotAnOrigin, Origin, Origins};
pub use pin::{Pin, PinError};

use connections::{Admission, Connections};

use super::Inbox;
use super::allow::AllowList;
use super::osc::RateLimitedLog;
use crate::base::status::ErrorLog;

/// Starts the server on `port` (0 picks one) and returns the port;
/// `osc_port` is announced in HOST_INFO. Plain GETs are answered with JSON
/// (the phone page at `/ui`, the presets' thumbnails from `thumbs`);
/// a WebSocket upgrade on the same port gets LISTEN streaming, from the
/// pages `origins` admits. Hosts outside `allow` are closed at once; at
/// most [`MAX_CONNECTIONS`] are served together, [`MAX_PER_ADDRESS`] from
/// one address, the lowest standing closed to let a newcomer in
/// (`connections.rs`); accept errors (no file descriptors left) back off.
pub fn serve(
    bind: &str,
    (port, osc_port): (u16, u16),
    (namespace, inbox, thumbs): (SharedNamespace, Option<Inbox>, Option<PathBuf>),
    (allow, origins): (AllowList, Arc<Origins>),
    errors: ErrorLog,
) -> std::io::Result<u16> {
    if inbox
        .as_ref()
        .and_then(|inbox| inbox.pin.as_ref())
        .is_some_and(|pin| pin.weak())
    {
        tracing::warn!(
            "--ui-pin: under {} digits a PIN falls to {} guesses a minute within a day; use more digits or a passphrase",
            pin::WEAK_BELOW,
            pin::MAX_WRONG_IN_ALL
        );
    }
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
            let handle = match stream.try_clone() {
                Ok(handle) => handle,
                Err(error) => {
                    warnings.warn(|| format!("OSCQuery: cannot serve {peer}: {error}"));
                    continue;
                }
            };
            let (admitted, activity, evicted) = match connections.admit(peer.ip(), Some(handle)) {
                Admission::In(admitted, activity, evicted) => (admitted, activity, evicted),
                Admission::Full => {
                    warnings.warn(|| {
                        format!("OSCQuery: every connection is a WebSocket that may write; turned {peer} away")
                    });
                    continue;
                }
            };
            if let Some(evicted) = evicted {
                warnings.warn(|| {
                    format!(
                        "OSCQuery: connections full; closed a silent or idle one from {evicted}"
                    )
                });
            }
            let namespace = namespace.clone();
            let thumbs = thumbs.clone();
            let inbox = inbox.clone();
            let origins = origins.clone();
            let spawned = std::thread::Builder::new()
                .name("sylva-oscquery-client".into())
                .spawn(move || {
                    let _admitted = admitted;
                    let served = catch_unwind(AssertUnwindSafe(|| {
                        let gate = http::Gate {
                            inbox: inbox.as_ref(),
                            origins: &origins,
                        };
                        let site = http::Site {
                            namespace: &namespace,
                            osc_port,
                            thumbs: thumbs.as_deref(),
                        };
                        http::client(stream, &site, &activity, gate)
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
