//! Tempo from outside: MIDI clock (24 pulses per quarter note, smoothed
//! over the last beat's pulses) and tap tempo. Both only compute a BPM; the
//! control surface writes it to `master.bpm`.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Pulses per quarter note.
const PPQN: usize = 24;
/// Taps further apart than this start a new tempo.
const TAP_GAP: Duration = Duration::from_secs(2);

/// Follows MIDI clock pulses.
#[derive(Debug, Default)]
pub struct MidiClock {
    pulses: VecDeque<Instant>,
    running: bool,
}

impl MidiClock {
    /// A pulse at `at`; returns the tempo once a beat's worth has arrived.
    pub fn pulse(&mut self, at: Instant) -> Option<f32> {
        self.pulses.push_back(at);
        while self.pulses.len() > PPQN + 1 {
            self.pulses.pop_front();
        }
        let (first, last) = (self.pulses.front()?, self.pulses.back()?);
        let intervals = self.pulses.len().checked_sub(1).filter(|n| *n >= PPQN)?;
        let per_pulse = last.duration_since(*first).as_secs_f32() / intervals as f32;
        (per_pulse > 0.0).then(|| 60.0 / (per_pulse * PPQN as f32))
    }

    /// Start (from the top) or continue.
    pub fn start(&mut self) {
        self.running = true;
        self.pulses.clear();
    }

    /// Stop.
    pub fn stop(&mut self) {
        self.running = false;
    }

    /// Whether a sequencer is playing.
    pub fn running(&self) -> bool {
        self.running
    }
}

/// Averages the intervals between taps.
#[derive(Debug, Default)]
pub struct TapTempo {
    taps: Vec<Instant>,
}

impl TapTempo {
    /// A tap at `at`; returns the tempo from the second tap on.
    pub fn tap(&mut self, at: Instant) -> Option<f32> {
        if self
            .taps
            .last()
            .is_some_and(|last| at.duration_since(*last) > TAP_GAP)
        {
            self.taps.clear();
        }
        self.taps.push(at);
        if self.taps.len() > 8 {
            self.taps.remove(0);
        }
        let (first, last) = (self.taps.first()?, self.taps.last()?);
        let intervals = self.taps.len() - 1;
        let seconds = last.duration_since(*first).as_secs_f32() / intervals.max(1) as f32;
        (intervals > 0 && seconds > 0.0).then(|| 60.0 / seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_pulses_give_the_tempo() {
        let mut clock = MidiClock::default();
        let start = Instant::now();
        let pulse = Duration::from_secs_f64(60.0 / (128.0 * 24.0));
        let mut bpm = None;
        for i in 0..48u32 {
            bpm = clock.pulse(start + pulse * i).or(bpm);
        }
        let bpm = bpm.unwrap_or_default();
        assert!((bpm - 128.0).abs() < 0.01, "{bpm}");
    }

    #[test]
    fn taps_average_and_a_pause_starts_over() {
        let mut tap = TapTempo::default();
        let start = Instant::now();
        assert_eq!(tap.tap(start), None);
        let half = Duration::from_millis(500);
        assert!(
            tap.tap(start + half)
                .is_some_and(|b| (b - 120.0).abs() < 0.01)
        );
        assert!(
            tap.tap(start + half * 2)
                .is_some_and(|b| (b - 120.0).abs() < 0.01)
        );
        assert_eq!(tap.tap(start + Duration::from_secs(10)), None);
    }
}
