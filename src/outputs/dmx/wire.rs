//! The universes onto the network, on the readback's worker thread: Art-Net
//! `ArtDmx` packets (the `artnet_protocol` crate) to a node or broadcast,
//! and sACN (the `sacn` crate, ANSI E1.31) to a node or each universe's
//! multicast group, with universe synchronisation so that every universe
//! of a destination changes in the same instant.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::fixtures::{CHANNELS, FixturePlan, Protocol};
use super::universes::{Patch, UniverseKey};
use crate::base::dmx::ARTNET_PORT;
use crate::outputs::send::tap::{Frame, Sink, SinkError};

/// Why packets could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum DmxError {
    /// A socket could not be opened or written.
    #[error("DMX over {protocol}: {error}")]
    Socket {
        /// `artnet` or `sacn`.
        protocol: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// The sACN source refused.
    #[error("DMX over sACN: {0}")]
    Sacn(String),
    /// An Art-Net packet could not be made.
    #[error("DMX over Art-Net: {0}")]
    Artnet(String),
}

/// The name receivers see for sylva's sACN source.
const SOURCE_NAME: &str = "sylva";

/// Sends each frame's colours as the fixtures' universes.
pub struct DmxSink {
    fixtures: Arc<Vec<FixturePlan>>,
    patch: Patch,
    artnet: Option<UdpSocket>,
    sacn: Option<sacn::source::SacnSource>,
    /// Art-Net's sequence per universe, 1-255.
    sequences: HashMap<UniverseKey, u8>,
    /// sACN's synchronisation universe per destination: its lowest.
    sync: HashMap<Option<SocketAddr>, u16>,
    /// Whether the end sends every channel at 0.
    dark: Arc<AtomicBool>,
}

impl DmxSink {
    /// Opens what `fixtures` need: one UDP socket for Art-Net, one sACN
    /// source with every universe registered.
    /// `dark` says, when the sink finishes, whether the show ended (the
    /// fixtures go black) or only its fixtures were read again.
    pub fn open(fixtures: Arc<Vec<FixturePlan>>, dark: Arc<AtomicBool>) -> Result<Self, DmxError> {
        let patch = Patch::new(&fixtures);
        let keys: Vec<UniverseKey> = patch.universes.keys().copied().collect();
        let uses = |p: Protocol| keys.iter().any(|k| k.protocol == p);
        let artnet = match uses(Protocol::Artnet) {
            true => Some(artnet_socket()?),
            false => None,
        };
        let sacn_keys: Vec<&UniverseKey> = keys
            .iter()
            .filter(|k| k.protocol == Protocol::Sacn)
            .collect();
        let mut sync: HashMap<Option<SocketAddr>, u16> = HashMap::new();
        for key in &sacn_keys {
            let lowest = sync.entry(key.to).or_insert(key.universe);
            *lowest = (*lowest).min(key.universe);
        }
        let sacn = match sacn_keys.is_empty() {
            true => None,
            false => {
                let bind = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
                let mut source = sacn::source::SacnSource::with_ip(SOURCE_NAME, bind)
                    .map_err(|e| DmxError::Sacn(e.to_string()))?;
                let mut universes: Vec<u16> = sacn_keys.iter().map(|k| k.universe).collect();
                universes.sort_unstable();
                universes.dedup();
                source
                    .register_universes(&universes)
                    .map_err(|e| DmxError::Sacn(e.to_string()))?;
                Some(source)
            }
        };
        Ok(Self {
            fixtures,
            patch,
            artnet,
            sacn,
            sequences: HashMap::new(),
            sync,
            dark,
        })
    }

    /// Sends every universe as it is now.
    fn send_universes(&mut self) -> Result<(), DmxError> {
        let mut synced: Vec<(Option<SocketAddr>, u16)> = Vec::new();
        let mut data = [0u8; CHANNELS + 1];
        for (key, channels) in &self.patch.universes {
            match key.protocol {
                Protocol::Artnet => {
                    let sequence = self.sequences.entry(*key).or_insert(0);
                    *sequence = sequence.wrapping_add(1).max(1);
                    let packet = artnet_packet(key.universe, *sequence, channels)?;
                    let to = key
                        .to
                        .unwrap_or(SocketAddr::from((Ipv4Addr::BROADCAST, ARTNET_PORT)));
                    if let Some(socket) = &self.artnet {
                        socket
                            .send_to(&packet, to)
                            .map_err(|error| DmxError::Socket {
                                protocol: "Art-Net",
                                error,
                            })?;
                    }
                }
                Protocol::Sacn => {
                    let Some(source) = self.sacn.as_mut() else {
                        continue;
                    };
                    // The start code, then the channels.
                    data[1..].copy_from_slice(channels);
                    let sync = self.sync.get(&key.to).copied();
                    source
                        .send(&[key.universe], &data, None, key.to, sync)
                        .map_err(|e| DmxError::Sacn(e.to_string()))?;
                    if let Some(sync) = sync
                        && !synced.contains(&(key.to, sync))
                    {
                        synced.push((key.to, sync));
                    }
                }
            }
        }
        if let Some(source) = self.sacn.as_mut() {
            for (to, universe) in synced {
                source
                    .send_sync_packet(universe, to)
                    .map_err(|e| DmxError::Sacn(e.to_string()))?;
            }
        }
        Ok(())
    }
}

impl Sink for DmxSink {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        let wanted = self.patch.pixels() * 4;
        if let Some(rgba) = frame.rgba.get(..wanted) {
            self.patch.fill(&self.fixtures, rgba);
        }
        Ok(self.send_universes()?)
    }

    fn finish(&mut self) -> Result<Option<String>, SinkError> {
        // Fixtures go dark with the show rather than hold its last frame.
        if self.dark.load(Ordering::Acquire) {
            self.patch.universes.values_mut().for_each(|u| u.fill(0));
            self.send_universes()?;
        }
        Ok(None)
    }
}

/// A socket that may broadcast, on any port.
fn artnet_socket() -> Result<UdpSocket, DmxError> {
    let socket_error = |error| DmxError::Socket {
        protocol: "Art-Net",
        error,
    };
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).map_err(socket_error)?;
    socket.set_broadcast(true).map_err(socket_error)?;
    Ok(socket)
}

/// One `ArtDmx` packet.
fn artnet_packet(universe: u16, sequence: u8, channels: &[u8]) -> Result<Vec<u8>, DmxError> {
    let port_address = artnet_protocol::PortAddress::try_from(universe)
        .map_err(|e| DmxError::Artnet(e.to_string()))?;
    let command = artnet_protocol::ArtCommand::Output(artnet_protocol::Output {
        sequence,
        port_address,
        data: channels.to_vec().into(),
        ..artnet_protocol::Output::default()
    });
    command
        .write_to_buffer()
        .map_err(|e| DmxError::Artnet(e.to_string()))
}
