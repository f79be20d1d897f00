//! A running show with OSC and OSCQuery on free loopback ports, and a UDP
//! socket to talk to it: what the control tests and the hostile-network
//! tests drive.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use sylva::control::{ControlOptions, ControlSurface};
use sylva::gpu::{OUTPUT_FORMAT, RenderTarget};
use sylva::params::Value;
use sylva::show::Show;

/// The show, its control surface and a sender.
pub struct Rig {
    pub show: Show,
    pub control: ControlSurface,
    pub output: RenderTarget,
    pub osc: SocketAddr,
    pub query: SocketAddr,
    pub sender: UdpSocket,
    /// How long [`Rig::until`] waits before failing.
    pub ceiling: Duration,
}

/// `show` listening on loopback with `options` (ports and bind address
/// are the rig's own).
pub fn rig_with(show: Show, options: ControlOptions, ceiling: Duration) -> Rig {
    let control = ControlSurface::start(
        &ControlOptions {
            midi: false,
            osc_bind: "127.0.0.1".into(),
            osc_port: Some(0),
            oscquery_port: Some(0),
            ..options
        },
        &show.registry,
        &show.ground.errors,
    );
    let (Some(osc), Some(query)) = (control.osc_port(), control.oscquery_port()) else {
        panic!("OSC did not open: {:?}", show.ground.errors.snapshot());
    };
    let output = RenderTarget::new(&show.ground.gpu.device, "rig.output", [8, 8], OUTPUT_FORMAT);
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("sender socket: {e}"));
    Rig {
        show,
        control,
        output,
        osc: SocketAddr::from(([127, 0, 0, 1], osc)),
        query: SocketAddr::from(([127, 0, 0, 1], query)),
        sender,
        ceiling,
    }
}

impl Rig {
    pub fn send(&self, packet: &OscPacket) {
        self.send_raw(&encode(packet));
    }

    pub fn send_raw(&self, bytes: &[u8]) {
        if let Err(error) = self.sender.send_to(bytes, self.osc) {
            panic!("sending {} bytes: {error}", bytes.len());
        }
    }

    pub fn frame(&mut self) {
        self.show.frame(
            1.0 / 60.0,
            Some(&mut self.control),
            &mut self.output,
            |_, _| {},
        );
    }

    /// Runs frames until `done`; fails after the ceiling. Returns the wait.
    pub fn until(&mut self, what: &str, done: impl Fn(&Rig) -> bool) -> Duration {
        let started = Instant::now();
        while !done(self) {
            assert!(
                started.elapsed() < self.ceiling,
                "{what}: not within {:?}",
                self.ceiling
            );
            self.frame();
            std::thread::sleep(Duration::from_millis(2));
        }
        eprintln!("{what}: after {:?}", started.elapsed());
        started.elapsed()
    }

    /// The target value of parameter `name`.
    pub fn target(&self, name: &str) -> Option<Value> {
        self.show.registry.target(name).cloned()
    }
}

pub fn message(addr: &str, args: Vec<OscType>) -> OscPacket {
    OscPacket::Message(OscMessage {
        addr: addr.into(),
        args,
    })
}

pub fn bundle(timetag: OscTime, content: Vec<OscPacket>) -> OscPacket {
    OscPacket::Bundle(OscBundle { timetag, content })
}

pub fn encode(packet: &OscPacket) -> Vec<u8> {
    rosc::encoder::encode(packet).unwrap_or_else(|e| panic!("encoding: {e:?}"))
}

/// The "immediately" time tag.
pub const NOW: OscTime = OscTime {
    seconds: 0,
    fractional: 1,
};
