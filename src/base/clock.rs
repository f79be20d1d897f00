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

    /// Stands where another machine's clock `at` stood after the same
    /// frame (a follower at its leader's), from `before` beats; returns
    /// the number of the beat that started between, if one did.
    pub fn stand_at(&mut self, at: Clock, before: f64) -> Option<u64> {
        *self = at;
        (at.beats.floor() > before.floor()).then_some(at.beats.floor() as u64)
    }

    /// Follows a timecode's position `seconds` (frames of `frame`
    /// seconds) after a tick: a clock more than a frame away jumps there,
    /// frame-accurate; a nearer one is drawn a tenth of the way each
    /// frame, so frame-time jitter never shows as steps and the error
    /// never grows. Returns whether it jumped.
    pub fn chase(&mut self, seconds: f64, frame: f64) -> bool {
        let off = seconds - self.time;
        if off.abs() > frame {
            self.time = seconds;
            return true;
        }
        self.time += 0.1 * off;
        false
    }

    /// Position inside the current beat, 0..1.
    pub fn beat_phase(&self) -> f32 {
        self.beats.fract() as f32
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::base::timecode::{Chase, Chased, FrameRate, Timecode};

    #[test]
    fn a_clock_chasing_timecode_drifts_less_than_a_frame_in_an_hour() {
        // An hour of 25 fps timecode, heard every other frame (as MTC
        // completes it); the show renders at a jittering 60 fps and its
        // own clock runs a thousandth fast (3.6 s an hour on its own).
        let rate = FrameRate::Ebu25;
        let start = Instant::now();
        let mut chase = Chase::default();
        let mut clock = Clock::default();
        let mut now = 0.0f64;
        let mut next_code = 0u64;
        let mut jumps = 0;
        let mut worst: f64 = 0.0;
        let mut frame = 0u64;
        while now < 3600.0 {
            let dt = 1.0 / 60.0 * if frame.is_multiple_of(7) { 1.3 } else { 0.95 };
            now += dt;
            frame += 1;
            while (next_code as f64) / rate.fps() <= now {
                let at = start + Duration::from_secs_f64(next_code as f64 / rate.fps());
                chase.heard(Timecode::from_frame_number(next_code, rate), at);
                next_code += 2;
            }
            clock.tick((dt * 1.001) as f32, 120.0);
            if let Chased::At { seconds, .. } = chase.position(start + Duration::from_secs_f64(now))
            {
                jumps += usize::from(clock.chase(seconds, rate.frame()));
            }
            if now > 1.0 {
                worst = worst.max((clock.time - now).abs());
            }
        }
        assert!(jumps <= 1, "{jumps} jumps after the first");
        assert!(
            worst < rate.frame(),
            "{worst} s off at worst, a frame is {}",
            rate.frame()
        );
        assert!(
            (clock.time - now).abs() < 0.2 * rate.frame(),
            "{} s off after an hour",
            clock.time - now
        );
    }
}
