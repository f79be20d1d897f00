//! Ableton Link (`rusty_link`): the session's tempo and beat (quantum 4),
//! and tempo changes made in sylva proposed to it. Without the network the
//! session is Link's local timeline alone (the tests never join one).

use rusty_link::{AblLink, SessionState};

/// Beats in a Link phrase.
const QUANTUM: f64 = 4.0;

/// A Link session joined (or its local timeline).
pub struct LinkSession {
    link: AblLink,
    state: SessionState,
}

impl LinkSession {
    /// A session at `bpm`; `network` joins the peers on the network.
    pub fn new(bpm: f32, network: bool) -> Self {
        let link = AblLink::new(f64::from(bpm));
        link.enable(network);
        Self {
            link,
            state: SessionState::new(),
        }
    }

    /// The session's tempo and beat now.
    pub fn now(&mut self) -> (f32, f64) {
        self.link.capture_app_session_state(&mut self.state);
        let at = self.link.clock_micros();
        (
            self.state.tempo() as f32,
            self.state.beat_at_time(at, QUANTUM),
        )
    }

    /// Proposes `bpm` to the session from now on.
    pub fn propose(&mut self, bpm: f32) {
        self.link.capture_app_session_state(&mut self.state);
        let at = self.link.clock_micros();
        self.state.set_tempo(f64::from(bpm), at);
        self.link.commit_app_session_state(&self.state);
    }

    /// Other apps in the session.
    pub fn peers(&self) -> u64 {
        self.link.num_peers()
    }
}
