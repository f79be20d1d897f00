//! The follower's side: a thread connects to the leader (again, four
//! times a second, while it cannot), reads its packets off the stream,
//! length first and within [`MAX_PACKET`](super::wire::MAX_PACKET), and
//! queues them for the show. The queue is bounded, so a follower replaying the show holds
//! the stream back rather than growing.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;

use super::wire::{EnsemblePacket, MAX_PACKET, decode};
use crate::base::status::ErrorLog;
use crate::base::supervise;

/// Packets queued for the show at most.
const QUEUE: usize = 1024;

/// Pause between tries to reach the leader: short, so a follower started
/// before its leader joins on the leader's first frames.
const RETRY: Duration = Duration::from_millis(250);

/// How long one try to reach the leader may take.
const CONNECT: Duration = Duration::from_secs(1);

/// What the reading thread hands the show.
#[derive(Debug)]
pub enum FromLeader {
    /// A packet from the leader.
    Packet(EnsemblePacket),
    /// The stream from the leader broke or could not be opened.
    Lost(String),
}

/// The link to a leader.
pub struct LeaderLink {
    packets: Receiver<FromLeader>,
    /// One looked at ahead ([`LeaderLink::behind`]), handed out next.
    ahead: Option<FromLeader>,
}

impl LeaderLink {
    /// Starts reaching for the leader at `leader`.
    pub fn start(leader: SocketAddr, errors: &ErrorLog) -> std::io::Result<Self> {
        let (queue, packets) = sync_channel(QUEUE);
        supervise::spawn("ensemble follower", errors.clone(), move || {
            follow(leader, &queue);
        })?;
        Ok(Self {
            packets,
            ahead: None,
        })
    }

    /// The next thing heard, waiting up to `wait`.
    pub fn next(&mut self, wait: Duration) -> Option<FromLeader> {
        self.ahead
            .take()
            .or_else(|| self.packets.recv_timeout(wait).ok())
    }

    /// Whether something more is already heard.
    pub fn behind(&mut self) -> bool {
        if self.ahead.is_none() {
            self.ahead = self.packets.try_recv().ok();
        }
        self.ahead.is_some()
    }
}

/// Connects, reads until the stream ends, says so, and connects again;
/// returns when the show has gone or the leader said the show ended.
fn follow(leader: SocketAddr, queue: &SyncSender<FromLeader>) {
    let mut said = String::new();
    loop {
        let lost = match TcpStream::connect_timeout(&leader, CONNECT) {
            Ok(stream) => {
                stream.set_nodelay(true).ok();
                said.clear();
                match read(stream, queue) {
                    Ended::Show | Ended::Gone => return,
                    Ended::Stream(why) => why,
                }
            }
            Err(error) => format!("cannot reach the leader at {leader}: {error}"),
        };
        // One report per kind of trouble, not one a second.
        if lost != said {
            if queue.send(FromLeader::Lost(lost.clone())).is_err() {
                return;
            }
            said = lost;
        }
        std::thread::sleep(RETRY);
    }
}

/// Why reading stopped.
enum Ended {
    /// The leader's show ended.
    Show,
    /// The stream broke, for this reason.
    Stream(String),
    /// The show is no longer listening.
    Gone,
}

/// Reads packets off `stream` into `queue` until one of the reasons to stop.
fn read(stream: TcpStream, queue: &SyncSender<FromLeader>) -> Ended {
    match read_packets(stream, queue) {
        Ok(never) => match never {},
        Err(ended) => ended,
    }
}

fn read_packets(
    mut stream: TcpStream,
    queue: &SyncSender<FromLeader>,
) -> Result<std::convert::Infallible, Ended> {
    let broke = |e: std::io::Error| Ended::Stream(format!("the leader's stream broke: {e}"));
    let mut body = Vec::new();
    loop {
        let mut length = [0u8; 4];
        stream.read_exact(&mut length).map_err(broke)?;
        let length = u32::from_be_bytes(length) as usize;
        if length > MAX_PACKET {
            return Err(Ended::Stream(format!(
                "the leader sent a packet of {length} bytes (at most {MAX_PACKET})"
            )));
        }
        body.resize(length, 0);
        stream.read_exact(&mut body).map_err(broke)?;
        let packet = decode(&body).map_err(|e| Ended::Stream(format!("from the leader: {e}")))?;
        let end = packet == EnsemblePacket::End;
        queue
            .send(FromLeader::Packet(packet))
            .map_err(|_| Ended::Gone)?;
        if end {
            return Err(Ended::Show);
        }
    }
}
