//! Lighting in: a desk's DMX over Art-Net and sACN, played through the
//! mapping files' `[[dmx]]` entries like a MIDI controller. The sockets
//! open only while a mapping listens (Art-Net on its port 6454, sACN on
//! 5568 for the universes mapped), each on a thread of its own that
//! queues a universe only when its channels changed, since a desk sends
//! every universe some 40 times a second whether or not a fader moved.
//! A channel's level sets its parameter when it changes; an action fires
//! as the level rises past half. Art-Net's port also carries timecode,
//! passed on while the show follows it.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::{Duration, Instant};

use super::event::{ControlEvent, ControlInput};
use super::{ControlSurface, ShowView};
use crate::base::dmx::{ARTNET_PORT, CHANNELS, Protocol, SACN_PORT};
use crate::base::status::ErrorLog;
use crate::command::Command;
use crate::mapping::check_action;
use crate::mapping::dmx::DmxMapping;
use crate::mapping::names;
use crate::params::Source;

/// How long a receiving thread waits for a packet before it looks at
/// whether it should stop.
const WAIT: Duration = Duration::from_millis(200);

/// Universes a thread tells apart; more are not listened to.
const MAX_UNIVERSES: usize = 256;

/// A universe whose channels changed.
#[derive(Debug)]
pub struct DmxReceived {
    /// Art-Net or sACN.
    pub protocol: Protocol,
    /// The universe.
    pub universe: u16,
    /// Its 512 channels.
    pub channels: Box<[u8; CHANNELS]>,
}

impl ControlInput for DmxReceived {
    fn apply(
        self: Box<Self>,
        surface: &mut ControlSurface,
        view: &ShowView<'_>,
        _started: Instant,
    ) {
        surface.handle_dmx(&self, view);
    }
}

/// The `[[dmx]]` mappings in force, what each last heard, and the threads
/// listening for them (and for Art-Net's timecode, when the show follows
/// it).
#[derive(Default)]
pub(super) struct Desk {
    mappings: Vec<DmxMapping>,
    levels: Vec<Option<f32>>,
    listening: Vec<(Protocol, u16)>,
    timecode: bool,
    stop: Option<Arc<AtomicBool>>,
}

impl Desk {
    /// Takes the mappings of a new load; listens again where the
    /// universes changed.
    pub(super) fn follow(
        &mut self,
        mappings: &[DmxMapping],
        events: &SyncSender<ControlEvent>,
        errors: &ErrorLog,
    ) {
        self.mappings = mappings.to_vec();
        self.levels = vec![None; mappings.len()];
        let mut wanted: Vec<(Protocol, u16)> = mappings
            .iter()
            .flat_map(|m| {
                let protocols = match m.protocol {
                    Some(p) => vec![p],
                    None => vec![Protocol::Artnet, Protocol::Sacn],
                };
                protocols
                    .into_iter()
                    .filter(|p| p.universes().contains(&u32::from(m.universe)))
                    .map(move |p| (p, m.universe))
            })
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        wanted.truncate(MAX_UNIVERSES);
        self.listen(wanted, self.timecode, events, errors);
    }

    /// Listens for Art-Net's timecode too (`on`), or no longer.
    pub(super) fn timecode(
        &mut self,
        on: bool,
        events: &SyncSender<ControlEvent>,
        errors: &ErrorLog,
    ) {
        if on != self.timecode {
            self.listen(self.listening.clone(), on, events, errors);
        }
    }

    /// Starts the threads `wanted` and `timecode` need, when they differ
    /// from those running.
    fn listen(
        &mut self,
        wanted: Vec<(Protocol, u16)>,
        timecode: bool,
        events: &SyncSender<ControlEvent>,
        errors: &ErrorLog,
    ) {
        if wanted == self.listening && timecode == self.timecode {
            return;
        }
        self.quiet();
        self.listening = wanted.clone();
        self.timecode = timecode;
        let stop = Arc::new(AtomicBool::new(false));
        for protocol in [Protocol::Artnet, Protocol::Sacn] {
            let universes: Vec<u16> = (wanted.iter())
                .filter(|(p, _)| *p == protocol)
                .map(|(_, u)| *u)
                .collect();
            let timecode = timecode && protocol == Protocol::Artnet;
            if universes.is_empty() && !timecode {
                continue;
            }
            let mut listener = Listener {
                protocol,
                universes,
                timecode,
                events: events.clone(),
                stop: stop.clone(),
                errors: errors.clone(),
                last: Vec::new(),
            };
            let name = format!("sylva dmx in ({})", protocol.name());
            if let Err(error) = crate::base::supervise::spawn(&name, errors.clone(), move || {
                listener.run();
            }) {
                errors.report("dmx in", format!("no thread to listen on: {error}"));
            }
        }
        self.stop = Some(stop);
    }

    /// Stops listening.
    fn quiet(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.store(true, Ordering::Relaxed);
        }
        self.listening.clear();
        self.timecode = false;
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        self.quiet();
    }
}

impl ControlSurface {
    /// A universe's channels through every `[[dmx]]` entry that hears it.
    fn handle_dmx(&mut self, received: &DmxReceived, view: &ShowView<'_>) {
        let registry = view.registry;
        for index in 0..self.desk.mappings.len() {
            let mapping = &self.desk.mappings[index];
            if !mapping.hears(received.protocol, received.universe) {
                continue;
            }
            let Some(level) = mapping.level(received.channels.as_slice()) else {
                continue;
            };
            let before = self.desk.levels[index].replace(level);
            if before == Some(level) {
                continue;
            }
            if let Some(action) = mapping.action.as_deref().and_then(|a| check_action(a).ok()) {
                if level >= 0.5 && before.is_none_or(|b| b < 0.5) {
                    self.act(action, Instant::now(), registry, Source::Dmx);
                }
                continue;
            }
            let Some(param) = mapping.param.clone() else {
                continue;
            };
            match registry.spec(&param) {
                Some(spec) => {
                    if let Some(value) = mapping.placing().value_at(spec, level) {
                        self.command(Command::Set(param, value, Source::Dmx));
                    }
                }
                None if names::owner_on_stage(&param, registry) => {
                    self.warnings.warn(|| {
                        format!(
                            "DMX universe {}: {}",
                            received.universe,
                            names::missing_param(&param, registry)
                        )
                    });
                }
                None => {}
            }
        }
    }
}

/// One protocol's socket and what it last queued of each universe.
struct Listener {
    protocol: Protocol,
    universes: Vec<u16>,
    /// Art-Net's timecode is passed on too.
    timecode: bool,
    events: SyncSender<ControlEvent>,
    stop: Arc<AtomicBool>,
    errors: ErrorLog,
    last: Vec<(u16, Box<[u8; CHANNELS]>)>,
}

impl Listener {
    fn run(&mut self) {
        let opened = match self.protocol {
            Protocol::Artnet => self.artnet().map_err(|e| e.to_string()),
            Protocol::Sacn => self.sacn(),
        };
        if let Err(error) = opened {
            self.errors.report(
                "dmx in",
                format!(
                    "cannot listen for {} on port {}: {error}",
                    self.protocol.name(),
                    self.protocol.port()
                ),
            );
        }
    }

    /// `ArtDmx` packets on Art-Net's port.
    fn artnet(&mut self) -> std::io::Result<()> {
        // The thread this one replaces lets go of the port within a wait.
        let mut bound = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, ARTNET_PORT));
        for _ in 0..10 {
            match &bound {
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                    std::thread::sleep(WAIT / 2);
                    bound = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, ARTNET_PORT));
                }
                _ => break,
            }
        }
        let socket = bound?;
        socket.set_read_timeout(Some(WAIT))?;
        let mut buffer = [0u8; 1024];
        while !self.stop.load(Ordering::Relaxed) {
            let Ok((length, _)) = socket.recv_from(&mut buffer) else {
                continue;
            };
            match artnet_protocol::ArtCommand::from_buffer(&buffer[..length]) {
                Ok(artnet_protocol::ArtCommand::Output(output)) => {
                    self.heard(u16::from(output.port_address), output.data.as_ref());
                }
                Ok(artnet_protocol::ArtCommand::OpTimeCode(packet)) if self.timecode => {
                    if let Some(timecode) = super::timecode::artnet_timecode(&packet) {
                        let event = super::timecode::TimecodeReceived {
                            source: crate::base::timecode::TimecodeSource::Artnet,
                            timecode,
                            at: Instant::now(),
                        };
                        self.events.try_send(Box::new(event)).ok();
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// sACN data on its port, for the universes mapped (their multicast
    /// groups joined, unicast taken too); synchronised universes come
    /// when their synchronisation packet does.
    fn sacn(&mut self) -> Result<(), String> {
        let at = SocketAddr::from((Ipv4Addr::UNSPECIFIED, SACN_PORT));
        let mut receiver =
            sacn::receive::SacnReceiver::with_ip(at, None).map_err(|e| e.to_string())?;
        receiver
            .listen_universes(&self.universes)
            .map_err(|e| e.to_string())?;
        while !self.stop.load(Ordering::Relaxed) {
            let Ok(data) = receiver.recv(Some(WAIT)) else {
                continue;
            };
            for universe in data {
                // The start code first: 0 is DMX's own data.
                if let Some((0, channels)) = universe.values.split_first() {
                    self.heard(universe.universe, channels);
                }
            }
        }
        Ok(())
    }

    /// Queues `universe` when it is mapped and its channels changed.
    fn heard(&mut self, universe: u16, values: &[u8]) {
        if !self.universes.contains(&universe) {
            return;
        }
        // A desk repeats unchanged universes: compared on the stack, boxed
        // only when they are passed on.
        let mut channels = [0u8; CHANNELS];
        let n = values.len().min(CHANNELS);
        channels[..n].copy_from_slice(&values[..n]);
        match self.last.iter_mut().find(|(u, _)| *u == universe) {
            Some((_, last)) if **last == channels => return,
            Some((_, last)) => **last = channels,
            None => self.last.push((universe, Box::new(channels))),
        }
        let event = DmxReceived {
            protocol: self.protocol,
            universe,
            channels: Box::new(channels),
        };
        if self.events.try_send(Box::new(event)).is_err() {
            // The queue is full: forget this state so the next packet
            // (the desk repeats it) is queued.
            self.last.retain(|(u, _)| *u != universe);
        }
    }
}
