//! The connections the OSCQuery server holds, and whom it closes when it
//! is full. Each connection has a standing that only rises: silent (no
//! request yet), asked (an HTTP request answered, or a WebSocket that has
//! said nothing since its handshake), listening (a WebSocket that has
//! spoken but may not write: the PIN not given) and trusted (a WebSocket
//! that may write and has spoken: the phone page). A newcomer makes room
//! by closing the lowest standing first, the one idle longest among
//! equals; a trusted WebSocket is never closed for a newcomer (who is
//! itself silent), so a flood of bare connects cannot cut a phone off.
//! When only trusted ones remain, the newcomer is turned away instead.

use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Connections served at once; past it the lowest standing, idle longest,
/// is closed to make room.
pub const MAX_CONNECTIONS: usize = 32;

/// Connections one address may hold; past it that address's lowest
/// standing, idle longest, is closed to make room.
pub const MAX_PER_ADDRESS: usize = 8;

/// How much a connection is worth keeping, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Standing {
    /// No whole request yet: a bare connect, a head trickling in.
    Silent = 0,
    /// An HTTP request answered, or a WebSocket silent since its handshake.
    Asked = 1,
    /// A WebSocket that has spoken but may not write (no PIN yet).
    Listening = 2,
    /// A WebSocket that may write and has spoken: never closed for a
    /// newcomer.
    Trusted = 3,
}

impl Standing {
    fn of(byte: u8) -> Self {
        match byte {
            0 => Self::Silent,
            1 => Self::Asked,
            2 => Self::Listening,
            _ => Self::Trusted,
        }
    }
}

/// When a connection last heard from its client, and its standing;
/// shared with the server so it can choose whom to close.
#[derive(Debug, Clone)]
pub struct Activity {
    since: Instant,
    last_ms: Arc<AtomicU64>,
    standing: Arc<AtomicU8>,
}

impl Activity {
    fn new() -> Self {
        Self {
            since: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
            standing: Arc::new(AtomicU8::new(Standing::Silent as u8)),
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

    /// Raises the connection's standing to `standing` (never lowers it).
    pub fn rise(&self, standing: Standing) {
        self.standing.fetch_max(standing as u8, Ordering::Relaxed);
    }

    /// The connection's standing.
    pub fn standing(&self) -> Standing {
        Standing::of(self.standing.load(Ordering::Relaxed))
    }
}

/// A connection being served: its address, when it was last active, and
/// a handle to close it.
struct Served {
    id: u64,
    address: IpAddr,
    activity: Activity,
    stream: Option<TcpStream>,
}

/// The connections being served.
#[derive(Clone, Default)]
pub struct Connections {
    served: Arc<Mutex<Vec<Served>>>,
    next_id: Arc<AtomicU64>,
}

/// A connection's place among the served; leaving frees it.
pub struct Admitted {
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

/// What became of a newcomer.
pub enum Admission {
    /// Let in, having closed the connection from this address if one had
    /// to make room.
    In(Admitted, Activity, Option<IpAddr>),
    /// Turned away: every connection it could have replaced is trusted.
    Full,
}

impl Connections {
    /// Lets a newcomer from `address` in, closing another first where one
    /// must make room; `stream` is the handle that closes it in turn
    /// (`None` where the caller closes it itself, as the tests do).
    pub fn admit(&self, address: IpAddr, stream: Option<TcpStream>) -> Admission {
        let activity = Activity::new();
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        let same = served.iter().filter(|c| c.address == address).count();
        let full = served.len() >= MAX_CONNECTIONS;
        let mut evicted = None;
        if same >= MAX_PER_ADDRESS || full {
            let victim = served
                .iter()
                .enumerate()
                .filter(|(_, c)| same < MAX_PER_ADDRESS || c.address == address)
                .filter(|(_, c)| c.activity.standing() < Standing::Trusted)
                .min_by_key(|(_, c)| (c.activity.standing(), std::cmp::Reverse(c.activity.idle())))
                .map(|(at, _)| at);
            let Some(at) = victim else {
                return Admission::Full;
            };
            let victim = served.swap_remove(at);
            if let Some(stream) = &victim.stream {
                stream.shutdown(Shutdown::Both).ok();
            }
            evicted = Some(victim.address);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        served.push(Served {
            id,
            address,
            activity: activity.clone(),
            stream,
        });
        let admitted = Admitted {
            id,
            connections: self.clone(),
        };
        Admission::In(admitted, activity, evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    /// Admits from `address`, keeping the place and the activity.
    fn admit(connections: &Connections, address: IpAddr) -> Option<(Admitted, Activity)> {
        match connections.admit(address, None) {
            Admission::In(admitted, activity, _) => Some((admitted, activity)),
            Admission::Full => None,
        }
    }

    fn count(connections: &Connections, standing: Standing) -> usize {
        connections
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|c| c.activity.standing() == standing)
            .count()
    }

    #[test]
    fn silent_newcomers_never_close_a_trusted_websocket() {
        let connections = Connections::default();
        let (_phone, phone) = admit(&connections, ip(1)).expect("the phone is let in");
        phone.rise(Standing::Trusted);
        std::thread::sleep(Duration::from_millis(30));
        // The phone is idle longest; from its own address and from others.
        let mut kept = Vec::new();
        for n in 0..80u8 {
            kept.extend(admit(&connections, ip(1 + n % 2)));
        }
        assert_eq!(count(&connections, Standing::Trusted), 1);
        let others = connections
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert!(others <= MAX_CONNECTIONS, "{others}");
    }

    /// Whether the connection of `activity` is still served.
    fn present(connections: &Connections, activity: &Activity) -> bool {
        connections
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|c| Arc::ptr_eq(&c.activity.last_ms, &activity.last_ms))
    }

    #[test]
    fn the_lowest_standing_goes_first_then_the_one_idle_longest() {
        let connections = Connections::default();
        let mut held = Vec::new();
        for standing in [Standing::Listening, Standing::Asked, Standing::Silent] {
            let (admitted, activity) = admit(&connections, ip(9)).expect("room");
            activity.rise(standing);
            held.push((admitted, activity));
        }
        for _ in 3..MAX_PER_ADDRESS {
            let (admitted, activity) = admit(&connections, ip(9)).expect("room");
            activity.rise(Standing::Trusted);
            held.push((admitted, activity));
        }
        std::thread::sleep(Duration::from_millis(20));
        let (_first, first) = admit(&connections, ip(9)).expect("a newcomer makes room");
        assert!(
            !present(&connections, &held[2].1),
            "the silent one closed first"
        );
        first.rise(Standing::Listening);
        let (_second, second) = admit(&connections, ip(9)).expect("room");
        assert!(!present(&connections, &held[1].1), "then the one asked");
        second.rise(Standing::Listening);
        std::thread::sleep(Duration::from_millis(20));
        first.touch();
        second.touch();
        let _third = admit(&connections, ip(9)).expect("room");
        assert!(
            !present(&connections, &held[0].1),
            "then the listening one idle longest"
        );
        assert!(present(&connections, &first) && present(&connections, &second));
        assert_eq!(count(&connections, Standing::Trusted), MAX_PER_ADDRESS - 3);
    }

    #[test]
    fn a_server_full_of_trusted_websockets_turns_newcomers_away() {
        let connections = Connections::default();
        let held: Vec<_> = (0..MAX_CONNECTIONS)
            .filter_map(|n| admit(&connections, ip(n as u8)))
            .inspect(|(_, activity)| activity.rise(Standing::Trusted))
            .collect();
        assert_eq!(held.len(), MAX_CONNECTIONS);
        assert!(matches!(connections.admit(ip(200), None), Admission::Full));
        drop(held);
        assert!(admit(&connections, ip(200)).is_some(), "room again");
    }
}
