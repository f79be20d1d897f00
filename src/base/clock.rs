//! The show clock: time, frame count and the beat. The beat is integrated
//! from `master.bpm` frame by frame so a tempo change never makes the phase
//! jump; MIDI clock and tap tempo will drive the same parameter.

/// Time as layers and shaders see it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Clock {
    /// Seconds since the show started.
    pub time: f64,
    /// Seconds since the previous frame.
    pub dt: f32,
    /// Frames rendered so far.
    pub frame: u64,
    /// Beats since start, fractional.
    pub beats: f64,
    /// Current tempo.
    pub bpm: f32,
}

impl Clock {
    /// Advances by `dt` seconds at `bpm`; returns the number of the beat
    /// that started during this tick, if one did.
    pub fn tick(&mut self, dt: f32, bpm: f32) -> Option<u64> {
        let before = self.beats.floor();
        self.dt = dt;
        self.time += f64::from(dt);
        self.frame += 1;
        self.bpm = bpm;
        self.beats += f64::from(dt) * f64::from(bpm) / 60.0;
        let after = self.beats.floor();
        (after > before).then_some(after as u64)
    }

    /// Follows a tempo source after a tick: stands at Link's beat, or is
    /// pulled half-way toward the nearest whole beat when one was heard.
    pub fn follow(&mut self, lead: crate::base::tempo::TempoLead) {
        match lead {
            crate::base::tempo::TempoLead::Own => {}
            crate::base::tempo::TempoLead::Beats(beats) => self.beats = beats.max(0.0),
            crate::base::tempo::TempoLead::Nudge => {
                self.beats += 0.5 * (self.beats.round() - self.beats);
            }
        }
    }

    /// Position inside the current beat, 0..1.
    pub fn beat_phase(&self) -> f32 {
        self.beats.fract() as f32
    }
}
