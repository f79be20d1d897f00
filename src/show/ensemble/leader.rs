//! The leader's side: followers connect over TCP, are sent the hello and
//! every frame since the show started (so a follower started late, or
//! started again after a crash, replays the show and stands in step),
//! then each frame as it is made. Each follower has a writer thread of its
//! own, so a slow or stalled one never holds the show; one whose backlog
//! passes [`MAX_BACKLOG`] is let go and may connect again.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::wire::{EnsemblePacket, encode};
use crate::base::status::ErrorLog;
use crate::base::supervise;

/// Bytes of the show's frames the leader keeps for followers that join
/// late; past it, a joining follower starts at the frame it joins on.
pub const MAX_LOG: usize = 64 << 20;

/// Bytes a follower may be behind before it is let go.
pub const MAX_BACKLOG: usize = MAX_LOG + (32 << 20);

/// Followers a leader serves at once.
const MAX_FOLLOWERS: usize = 64;

/// How long the end of the show waits for followers to be sent the rest.
const DRAIN: Duration = Duration::from_secs(20);

/// A packet with its length before it, as OSC 1.0 streams send it.
type Framed = Arc<[u8]>;

fn framed(packet: &EnsemblePacket) -> Framed {
    let body = encode(packet);
    let mut bytes = Vec::with_capacity(body.len() + 4);
    bytes.extend((body.len() as u32).to_be_bytes());
    bytes.extend(body);
    bytes.into()
}

/// A number for this run of the leader, unlike the last one's: the time
/// it started, to the nanosecond, with the process's id.
fn run_number() -> u64 {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    started ^ u64::from(std::process::id()).rotate_left(48)
}

/// One follower being sent the show.
struct Link {
    peer: SocketAddr,
    queue: Sender<Framed>,
    backlog: Arc<AtomicUsize>,
    writer: std::thread::JoinHandle<()>,
}

/// What the listener and the show share.
struct Shared {
    hello: Framed,
    log: Vec<Framed>,
    log_bytes: usize,
    /// The log holds every frame since the start.
    whole: bool,
    links: Vec<Link>,
}

impl Shared {
    /// Queues `packet` for `link`, counting it against its backlog;
    /// false (and said) when the follower left or is let go.
    fn queue(link: &Link, packet: &Framed) -> bool {
        let behind = link.backlog.fetch_add(packet.len(), Ordering::Relaxed) + packet.len();
        if behind > MAX_BACKLOG {
            tracing::warn!(
                "ensemble: follower {} let go, {} MiB behind",
                link.peer,
                behind >> 20
            );
            return false;
        }
        let sent = link.queue.send(packet.clone()).is_ok();
        if !sent {
            tracing::info!("ensemble: follower {} left", link.peer);
        }
        sent
    }
}

/// A show leading others.
pub struct Leader {
    shared: Arc<Mutex<Shared>>,
    address: SocketAddr,
    errors: ErrorLog,
}

impl Leader {
    /// Listens for followers on `bind`; `seed` and `preset` are what
    /// this show started with, for followers to check theirs against.
    pub fn start(
        bind: SocketAddr,
        seed: u64,
        preset: &str,
        errors: &ErrorLog,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(bind)?;
        let address = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Shared {
            hello: framed(&EnsemblePacket::Hello {
                seed,
                preset: preset.to_string(),
                run: run_number(),
            }),
            log: Vec::new(),
            log_bytes: 0,
            whole: true,
            links: Vec::new(),
        }));
        let listening = shared.clone();
        let log = errors.clone();
        supervise::spawn("ensemble leader", errors.clone(), move || {
            for stream in listener.incoming() {
                match stream {
                    Ok(stream) => welcome(&listening, stream, &log),
                    Err(error) => tracing::warn!("ensemble: a follower could not connect: {error}"),
                }
            }
        })?;
        tracing::info!(
            "ensemble: leading; followers connect to port {}",
            address.port()
        );
        Ok(Self {
            shared,
            address,
            errors: errors.clone(),
        })
    }

    /// The address followers connect to.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `packet` to every follower and keeps it for those to come.
    pub fn send(&self, packet: &EnsemblePacket) {
        let bytes = framed(packet);
        let mut shared = self.lock();
        if shared.whole {
            if shared.log_bytes + bytes.len() > MAX_LOG {
                shared.whole = false;
                shared.log = Vec::new();
                self.errors.report(
                    "ensemble",
                    "the record of the show for late followers is full: one joining now starts where the show is",
                );
            } else {
                shared.log_bytes += bytes.len();
                shared.log.push(bytes.clone());
            }
        }
        shared.links.retain(|link| Shared::queue(link, &bytes));
    }

    /// How many followers are being sent the show.
    pub fn followers(&self) -> usize {
        self.lock().links.len()
    }

    /// Tells the followers the show ended and waits (up to 20 s) until
    /// each was sent all it was behind.
    pub fn finish(&self) {
        self.send(&EnsemblePacket::End);
        let links = std::mem::take(&mut self.lock().links);
        let until = Instant::now() + DRAIN;
        for link in links {
            drop(link.queue);
            while !link.writer.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// A follower that connected: it is sent the hello and the show so far,
/// then every frame from the show, by a writer thread of its own.
fn welcome(shared: &Arc<Mutex<Shared>>, stream: TcpStream, errors: &ErrorLog) {
    let peer = stream
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    // Frames go out as they are made: no waiting to fill a segment.
    stream.set_nodelay(true).ok();
    let mut shared = shared.lock().unwrap_or_else(PoisonError::into_inner);
    if shared.links.len() >= MAX_FOLLOWERS {
        tracing::warn!("ensemble: follower {peer} refused: {MAX_FOLLOWERS} follow already");
        return;
    }
    let (queue, packets) = channel();
    let backlog = Arc::new(AtomicUsize::new(0));
    let writing = backlog.clone();
    let writer = match std::thread::Builder::new()
        .name("ensemble writer".into())
        .spawn(move || write(stream, &packets, &writing))
    {
        Ok(writer) => writer,
        Err(error) => {
            errors.report(
                "ensemble",
                format!("no thread for follower {peer}: {error}"),
            );
            return;
        }
    };
    let link = Link {
        peer,
        queue,
        backlog,
        writer,
    };
    let sent = std::iter::once(&shared.hello)
        .chain(&shared.log)
        .all(|packet| Shared::queue(&link, packet));
    if sent {
        tracing::info!(
            "ensemble: follower {peer} joined; sent {} frames so far",
            shared.log.len()
        );
        shared.links.push(link);
    }
}

/// A follower's writer: the queue onto its socket, until the socket
/// fails or the leader lets it go.
fn write(mut stream: TcpStream, packets: &Receiver<Framed>, backlog: &AtomicUsize) {
    for packet in packets {
        if let Err(error) = stream.write_all(&packet) {
            tracing::debug!("ensemble: a follower's stream closed ({error})");
            return;
        }
        backlog.fetch_sub(packet.len(), Ordering::Relaxed);
    }
    stream.flush().ok();
    stream.shutdown(std::net::Shutdown::Write).ok();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::ensemble::wire::FrameRecord;

    /// A leader's memory stays bounded over a long show: its record for
    /// late followers stops at [`MAX_LOG`], and a follower that reads
    /// nothing is let go once [`MAX_BACKLOG`] behind.
    #[test]
    fn the_record_and_a_stalled_followers_backlog_stay_bounded() {
        let errors = ErrorLog::default();
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let leader = Leader::start(bind, 1, "default", &errors).unwrap_or_else(|e| panic!("{e}"));
        let stalled = TcpStream::connect(leader.address()).unwrap_or_else(|e| panic!("{e}"));
        let until = Instant::now() + Duration::from_secs(10);
        while leader.followers() == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(leader.followers(), 1, "the follower was not welcomed");
        let frame = |n: u64| {
            EnsemblePacket::Frame(Box::new(FrameRecord {
                frame: n,
                ..FrameRecord::default()
            }))
        };
        let mut sent = 0u64;
        while leader.followers() == 1 {
            sent += 1;
            leader.send(&frame(sent));
            assert!(sent < 2_000_000, "the stalled follower was never let go");
        }
        let shared = leader.lock();
        assert!(!shared.whole && shared.log.is_empty(), "the record stopped");
        assert!(shared.log_bytes <= MAX_LOG);
        // 96 bytes a frame: let go between MAX_BACKLOG and that plus what
        // the socket's buffers took.
        assert!(sent * 96 > MAX_BACKLOG as u64, "let go after {sent} frames");
        drop(stalled);
        let said = errors.snapshot();
        assert!(
            said.iter()
                .any(|e| e.message.contains("record of the show"))
        );
    }
}
