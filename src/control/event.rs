//! What a control thread hands the show: any [`ControlInput`], queued as a
//! [`ControlEvent`] and carried out at the start of the next frame. MIDI
//! ([`MidiReceived`](super::midi_apply::MidiReceived)) and OSC
//! ([`OscReceived`](super::osc::OscReceived), which the OSCQuery
//! WebSocket and the phone page send too) are two of them; a new control
//! source is its thread, its event type and this trait for it, with no
//! arm to add anywhere.

use std::time::Instant;

use super::{ControlSurface, ShowView};

/// Something a control thread received.
pub trait ControlInput: Send + std::fmt::Debug {
    /// The bytes it holds of the queue's budget
    /// ([`MAX_QUEUED_BYTES`](super::osc::MAX_QUEUED_BYTES)); only what
    /// a peer can make large counts.
    fn queued_bytes(&self) -> usize {
        0
    }

    /// The datagram it arrived in, when it is one of several messages a
    /// frame applies whole (an OSC bundle).
    fn datagram(&self) -> Option<Datagram> {
        None
    }

    /// Carries it out on `surface` in the frame's control step, which
    /// started at `started`.
    fn apply(self: Box<Self>, surface: &mut ControlSurface, view: &ShowView<'_>, started: Instant);
}

/// Where a message stands in the datagram it arrived in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Datagram {
    /// When the datagram arrived: the messages of one share it.
    pub received: Instant,
    /// Its messages queued after this one.
    pub rest: usize,
}

/// One event in the show's queue of control input.
pub type ControlEvent = Box<dyn ControlInput>;
