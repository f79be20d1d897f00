//! One limiter for everything a network peer (UDP or the WebSocket) can
//! make the show write: a preset, the outputs file, the favourites, a
//! learned mapping, a take (`record.on` switched), the state file a
//! playlist move rewrites. Each peer gets [`WRITES_PER_PEER`] a second,
//! and all peers together [`WRITE_BYTES_PER_SECOND`], a write counting
//! what it carries and at least [`MIN_WRITE_BYTES`] (a preset or an
//! outputs file is only sized once written), so a flood from many
//! addresses writes no more than one from a few. The excess is dropped,
//! counted, and logged once a second.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use rosc::{OscMessage, OscType};

use super::ControlSurface;
use super::osc::RateLimitedLog;

/// Writes one peer may trigger a second.
pub const WRITES_PER_PEER: usize = 4;

/// Bytes all peers together may have written a second.
pub const WRITE_BYTES_PER_SECOND: usize = 1 << 20;

/// What one write counts at least against [`WRITE_BYTES_PER_SECOND`]: at
/// most 16 writes a second in all.
pub const MIN_WRITE_BYTES: usize = 64 << 10;

/// The addresses whose every message writes a file.
pub const WRITING_ADDRESSES: [&str; 9] = [
    "/sylva/preset/save",
    "/sylva/outputs/save",
    "/sylva/ui/favourites",
    "/sylva/learn",
    // A playlist move rewrites the installation's state file at once.
    "/sylva/playlist/play",
    "/sylva/playlist/next",
    "/sylva/playlist/previous",
    "/sylva/playlist/jump",
    "/sylva/playlist/stop",
];

/// The parameters whose change writes a file: switching `record.on`
/// starts or finishes a take (`outputs::send` declares it).
pub const WRITING_PARAMS: [&str; 1] = ["record.on"];

/// The span the limits count over.
const SECOND: Duration = Duration::from_secs(1);

/// Peers remembered before those with no write in the last second are
/// forgotten (at most 16 have one).
const PEERS: usize = 64;

/// The writes of the last second, per peer and in all.
#[derive(Debug, Default)]
pub struct PeerWrites {
    peers: HashMap<IpAddr, VecDeque<Instant>>,
    all: VecDeque<(Instant, usize)>,
    taken: u64,
    dropped: u64,
    log: RateLimitedLog,
}

impl PeerWrites {
    /// Whether `what` from `peer`, carrying `bytes`, may write at `now`;
    /// if not it is dropped, counted and logged (once a second).
    pub fn allow(&mut self, peer: IpAddr, what: &str, bytes: usize, now: Instant) -> bool {
        let recent = |t: &Instant| now.saturating_duration_since(*t) < SECOND;
        while self.all.front().is_some_and(|(t, _)| !recent(t)) {
            self.all.pop_front();
        }
        let cost = bytes.max(MIN_WRITE_BYTES);
        let written: usize = self.all.iter().map(|(_, b)| b).sum();
        let mine = self.peers.get_mut(&peer).map_or(0, |mine| {
            mine.retain(recent);
            mine.len()
        });
        let over_peer = mine >= WRITES_PER_PEER;
        let over_all = written + cost > WRITE_BYTES_PER_SECOND;
        if over_peer || over_all {
            self.dropped += 1;
            let dropped = self.dropped;
            let limit = match over_peer {
                true => format!("{WRITES_PER_PEER} writes a second from one peer"),
                false => format!("{} MiB a second in all", WRITE_BYTES_PER_SECOND >> 20),
            };
            self.log.warn(|| {
                format!(
                    "OSC: {what:.60} from {peer} dropped: over {limit}; {dropped} dropped so far"
                )
            });
            return false;
        }
        if self.peers.len() >= PEERS {
            self.peers
                .retain(|_, writes| writes.back().is_some_and(&recent));
        }
        self.peers.entry(peer).or_default().push_back(now);
        self.all.push_back((now, cost));
        self.taken += 1;
        true
    }

    /// Writes let through so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Writes dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The bytes a message carries in its strings and blobs: what it asks to
/// write, at most.
pub fn carried(message: &OscMessage) -> usize {
    message
        .args
        .iter()
        .map(|arg| match arg {
            OscType::String(s) => s.len(),
            OscType::Blob(b) => b.len(),
            _ => 0,
        })
        .sum()
}

impl ControlSurface {
    /// Whether `message` from `from` may go on to write (it names a
    /// writing address), through the one limiter; true for every other
    /// message. It counts at `sent`: when the datagram arrived, or when a
    /// bundle's time tag has it done, if later (a peer's rate is what it
    /// sends, whenever a slow frame gets round to it, and what a schedule
    /// gathers at one instant counts there).
    pub(super) fn may_write(
        &mut self,
        from: SocketAddr,
        message: &OscMessage,
        sent: Instant,
    ) -> bool {
        if !WRITING_ADDRESSES.contains(&message.addr.as_str()) {
            return true;
        }
        let bytes = carried(message);
        self.writes.allow(from.ip(), &message.addr, bytes, sent)
    }

    /// Whether a change of `param` from `from` (through `address`, arrived
    /// at `sent`) may go on: a writing parameter's change goes through the
    /// limiter.
    pub(super) fn may_change(
        &mut self,
        from: SocketAddr,
        address: &str,
        param: &str,
        sent: Instant,
    ) -> bool {
        !WRITING_PARAMS.contains(&param) || self.writes.allow(from.ip(), address, 0, sent)
    }

    /// Writes from the network dropped by the limiter so far.
    pub fn writes_dropped(&self) -> u64 {
        self.writes.dropped()
    }

    /// Writes from the network the limiter let through so far.
    pub fn writes_taken(&self) -> u64 {
        self.writes.taken()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn a_peer_writes_four_times_a_second() {
        let mut writes = PeerWrites::default();
        let now = Instant::now();
        let taken = (0..50)
            .filter(|_| writes.allow(ip(1), "/sylva/outputs/save", 0, now))
            .count();
        assert_eq!(taken, WRITES_PER_PEER);
        assert_eq!(writes.dropped(), 46);
        assert!(writes.allow(ip(1), "/sylva/outputs/save", 0, now + SECOND));
    }

    #[test]
    fn peers_together_write_a_mebibyte_a_second() {
        let mut writes = PeerWrites::default();
        let now = Instant::now();
        // The security review's probe from 300 addresses: 60 KB favourites each.
        let mut bytes = 0;
        for n in 0..300u32 {
            let peer = IpAddr::from((0x0a00_0000 + n).to_be_bytes());
            let at = now + Duration::from_millis(u64::from(n));
            if writes.allow(peer, "/sylva/ui/favourites", 60_000, at) {
                bytes += 60_000usize.max(MIN_WRITE_BYTES);
            }
        }
        assert!(bytes <= WRITE_BYTES_PER_SECOND, "{bytes} bytes in 0.3 s");
        assert!(writes.peers.len() <= PEERS, "{}", writes.peers.len());
        // Small writes count at least MIN_WRITE_BYTES each.
        let later = now + SECOND * 3;
        let taken = (0..100u8)
            .filter(|n| writes.allow(ip(*n), "/sylva/outputs/save", 0, later))
            .count();
        assert_eq!(taken, WRITE_BYTES_PER_SECOND / MIN_WRITE_BYTES);
    }

    #[test]
    fn a_message_carries_its_strings_and_blobs() {
        let message = OscMessage {
            addr: "/sylva/ui/favourites".into(),
            args: vec![
                OscType::String("abc".into()),
                OscType::Blob(vec![0; 10]),
                OscType::Float(1.0),
            ],
        };
        assert_eq!(carried(&message), 13);
    }
}
