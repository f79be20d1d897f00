//! SMPTE timecode and chasing it: hours, minutes, seconds and frames at
//! 24, 25, 29.97 drop-frame or 30 frames a second, as LTC, MIDI timecode
//! and Art-Net carry it, to and from a count of frames and seconds; and
//! [`Chase`], which follows a source's timecodes as they arrive: it locks
//! after a few that agree, jumps with the source to a new place at once,
//! holds where the source stops, and freewheels through a dropout until
//! [`FREEWHEEL`] passes without a word.

use std::time::{Duration, Instant};

/// Where the show's timecode comes from, in the order of
/// `master.timecode_source`: none, MIDI timecode, Art-Net timecode, LTC on
/// the audio input.
pub const TIMECODE_SOURCES: [&str; 4] = ["off", "mtc", "artnet", "ltc"];

/// What `master.timecode_out` offers: the show's position sent as timecode,
/// or not.
pub const TIMECODE_OUTS: [&str; 2] = ["off", "artnet"];

/// `master.timecode_source`, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimecodeSource {
    /// The show's own clock.
    Off,
    /// MIDI timecode: quarter frames and full-frame messages.
    Mtc,
    /// Art-Net's `ArtTimeCode`.
    Artnet,
    /// Linear timecode on the audio input.
    Ltc,
}

impl TimecodeSource {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            TimecodeSource::Off => "the show's own clock",
            TimecodeSource::Mtc => "MIDI timecode",
            TimecodeSource::Artnet => "Art-Net timecode",
            TimecodeSource::Ltc => "LTC on the audio input",
        }
    }

    /// The source at `index` of [`TIMECODE_SOURCES`].
    pub fn at(index: usize) -> Option<Self> {
        const IN_ORDER: [TimecodeSource; 4] = [
            TimecodeSource::Off,
            TimecodeSource::Mtc,
            TimecodeSource::Artnet,
            TimecodeSource::Ltc,
        ];
        IN_ORDER.get(index).copied()
    }
}

/// The frame rates timecode names, in the order MTC and Art-Net number
/// them (0-3), as `master.timecode_rate` lists them.
pub const FRAME_RATES: [&str; 4] = ["24", "25", "29.97df", "30"];

/// A timecode's frame rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameRate {
    /// Film, 24.
    Film24,
    /// EBU, 25.
    Ebu25,
    /// NTSC, 30000/1001 with frames 0 and 1 dropped from each minute but
    /// every tenth.
    Drop2997,
    /// SMPTE, 30.
    Smpte30,
}

impl FrameRate {
    /// The rate numbered `code` (0-3), as MTC and Art-Net send it.
    pub fn from_code(code: u8) -> Option<Self> {
        [Self::Film24, Self::Ebu25, Self::Drop2997, Self::Smpte30]
            .get(usize::from(code))
            .copied()
    }

    /// Its number, 0-3.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Frames counted a second (30 for 29.97).
    pub fn nominal(self) -> u32 {
        match self {
            Self::Film24 => 24,
            Self::Ebu25 => 25,
            Self::Drop2997 | Self::Smpte30 => 30,
        }
    }

    /// Frames a second of real time.
    pub fn fps(self) -> f64 {
        match self {
            Self::Drop2997 => 30_000.0 / 1001.0,
            other => f64::from(other.nominal()),
        }
    }

    /// One frame, in seconds.
    pub fn frame(self) -> f64 {
        1.0 / self.fps()
    }
}

/// One timecode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timecode {
    /// 0-23.
    pub hours: u8,
    /// 0-59.
    pub minutes: u8,
    /// 0-59.
    pub seconds: u8,
    /// 0 to the rate's count less one.
    pub frames: u8,
    /// Its rate.
    pub rate: FrameRate,
}

/// Frames a day at a nominal rate.
const HOURS_A_DAY: u64 = 24;

impl Timecode {
    /// Whether each field is in range (and no dropped frame is named).
    pub fn valid(&self) -> bool {
        let dropped = self.rate == FrameRate::Drop2997
            && self.seconds == 0
            && self.frames < 2
            && !self.minutes.is_multiple_of(10);
        u64::from(self.hours) < HOURS_A_DAY
            && self.minutes < 60
            && self.seconds < 60
            && u32::from(self.frames) < self.rate.nominal()
            && !dropped
    }

    /// Frames since 00:00:00:00.
    pub fn frame_number(&self) -> u64 {
        let nominal = u64::from(self.rate.nominal());
        let minutes = u64::from(self.hours) * 60 + u64::from(self.minutes);
        let counted = (minutes * 60 + u64::from(self.seconds)) * nominal + u64::from(self.frames);
        match self.rate {
            FrameRate::Drop2997 => counted - 2 * (minutes - minutes / 10),
            _ => counted,
        }
    }

    /// The timecode of frame `n` (wrapping at 24 hours).
    pub fn from_frame_number(n: u64, rate: FrameRate) -> Self {
        let nominal = u64::from(rate.nominal());
        let mut n = n;
        if rate == FrameRate::Drop2997 {
            // 17,982 frames every ten minutes, 1,798 in each minute but the
            // first: put the dropped numbers back in.
            let n_day = n % (HOURS_A_DAY * 6 * 17_982);
            let (tens, rest) = (n_day / 17_982, n_day % 17_982);
            let skipped = if rest > 1 {
                2 * ((rest - 2) / 1_798)
            } else {
                0
            };
            n = n_day + 18 * tens + skipped;
        }
        let total_seconds = n / nominal;
        Self {
            hours: ((total_seconds / 3600) % HOURS_A_DAY) as u8,
            minutes: ((total_seconds / 60) % 60) as u8,
            seconds: (total_seconds % 60) as u8,
            frames: (n % nominal) as u8,
            rate,
        }
    }

    /// Seconds since 00:00:00:00 of real time.
    pub fn seconds(&self) -> f64 {
        self.frame_number() as f64 / self.rate.fps()
    }

    /// The timecode of the frame `seconds` falls in.
    pub fn at_seconds(seconds: f64, rate: FrameRate) -> Self {
        // A hair over, so a whole frame's time never lands a frame short.
        let n = (seconds.max(0.0) * rate.fps() + 1e-6).floor() as u64;
        Self::from_frame_number(n, rate)
    }

    /// `n` frames on.
    pub fn plus_frames(&self, n: u64) -> Self {
        Self::from_frame_number(self.frame_number() + n, self.rate)
    }
}

impl std::fmt::Display for Timecode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let separator = if self.rate == FrameRate::Drop2997 {
            ';'
        } else {
            ':'
        };
        write!(
            f,
            "{:02}:{:02}:{:02}{separator}{:02}",
            self.hours, self.minutes, self.seconds, self.frames
        )
    }
}

/// Timecodes that agree before the chase counts itself locked.
const LOCK_AFTER: u32 = 3;
/// A dropout the chase runs through on its own before it lets go.
pub const FREEWHEEL: Duration = Duration::from_secs(2);
/// Frames a timecode may stand still before the source counts as stopped.
const STOPPED_AFTER: f64 = 3.0;

/// Where the chase puts the show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Chased {
    /// No source heard, or none for longer than [`FREEWHEEL`].
    Lost,
    /// The source's position, seconds, and whether it is locked (its last
    /// timecodes agreed) and running (rather than stopped).
    At {
        /// Seconds since 00:00:00:00.
        seconds: f64,
        /// Its last [`LOCK_AFTER`] timecodes followed one another.
        locked: bool,
        /// The source is running; a stopped one holds its place.
        running: bool,
        /// The source has been silent for more than a few frames.
        freewheeling: bool,
    },
}

#[derive(Debug, Clone, Copy)]
struct Heard {
    timecode: Timecode,
    /// When this timecode first arrived.
    at: Instant,
    /// When any timecode last arrived.
    last: Instant,
}

/// Follows one source's timecodes.
#[derive(Debug, Clone, Default)]
pub struct Chase {
    heard: Option<Heard>,
    agreeing: u32,
}

impl Chase {
    /// A timecode arrived at `at`.
    pub fn heard(&mut self, timecode: Timecode, at: Instant) {
        let Some(before) = self.heard.as_mut() else {
            self.heard = Some(Heard {
                timecode,
                at,
                last: at,
            });
            return;
        };
        if before.timecode == timecode {
            before.last = at;
            return;
        }
        let predicted =
            before.timecode.seconds() + at.saturating_duration_since(before.at).as_secs_f64();
        let off = (timecode.seconds() - predicted).abs();
        // Within two frames of where it should be: the source runs on.
        self.agreeing = if off <= 2.0 * timecode.rate.frame() {
            self.agreeing.saturating_add(1)
        } else {
            0
        };
        *before = Heard {
            timecode,
            at,
            last: at,
        };
    }

    /// Where the source is at `now`.
    pub fn position(&self, now: Instant) -> Chased {
        let Some(heard) = self.heard else {
            return Chased::Lost;
        };
        let silent = now.saturating_duration_since(heard.last);
        if silent > FREEWHEEL {
            return Chased::Lost;
        }
        let frame = heard.timecode.rate.frame();
        let standing = heard.last.saturating_duration_since(heard.at).as_secs_f64();
        let running = standing < STOPPED_AFTER * frame;
        let since = now.saturating_duration_since(heard.at).as_secs_f64();
        Chased::At {
            seconds: heard.timecode.seconds() + if running { since } else { 0.0 },
            locked: self.agreeing >= LOCK_AFTER,
            running,
            freewheeling: silent.as_secs_f64() > STOPPED_AFTER * frame,
        }
    }

    /// The last timecode heard.
    pub fn last(&self) -> Option<Timecode> {
        self.heard.map(|h| h.timecode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_frame_numbers_skip_two_frames_a_minute_but_every_tenth() {
        let tc = |m, s, f| Timecode {
            hours: 0,
            minutes: m,
            seconds: s,
            frames: f,
            rate: FrameRate::Drop2997,
        };
        assert_eq!(tc(0, 59, 29).frame_number() + 1, tc(1, 0, 2).frame_number());
        assert_eq!(
            tc(9, 59, 29).frame_number() + 1,
            tc(10, 0, 0).frame_number()
        );
        assert_eq!(tc(10, 0, 0).frame_number(), 17_982);
        assert!(!tc(1, 0, 0).valid() && tc(10, 0, 0).valid());
        // An hour of 29.97 drop-frame is 3599.9964 s: within 4 ms of real time.
        let hour = Timecode {
            hours: 1,
            ..tc(0, 0, 0)
        };
        assert!(
            (hour.seconds() - 3600.0).abs() < 0.004,
            "{}",
            hour.seconds()
        );
        assert_eq!(hour.to_string(), "01:00:00;00");
    }

    #[test]
    fn frame_numbers_round_trip_at_every_rate() {
        for rate in [
            FrameRate::Film24,
            FrameRate::Ebu25,
            FrameRate::Drop2997,
            FrameRate::Smpte30,
        ] {
            for n in (0..2 * 3600 * 30)
                .step_by(7)
                .chain([0, 1, 1799, 1800, 17_981, 17_982])
            {
                let tc = Timecode::from_frame_number(n, rate);
                assert!(tc.valid(), "{rate:?} {n}: {tc}");
                assert_eq!(tc.frame_number(), n, "{rate:?} {tc}");
            }
            let tc = Timecode::at_seconds(3723.5, rate);
            assert!(
                (tc.seconds() - 3723.5).abs() <= rate.frame(),
                "{rate:?} {tc}"
            );
        }
    }

    /// A source running at `rate` from `start`, heard every `every` frames.
    fn feed(
        chase: &mut Chase,
        start: (Instant, u64),
        frames: std::ops::Range<u64>,
        every: u64,
        rate: FrameRate,
    ) {
        for n in frames.step_by(every as usize) {
            let at = start.0 + Duration::from_secs_f64(n as f64 / rate.fps());
            chase.heard(Timecode::from_frame_number(start.1 + n, rate), at);
        }
    }

    #[test]
    fn it_locks_within_a_second_jumps_with_the_source_and_lets_go_after_a_dropout() {
        let rate = FrameRate::Ebu25;
        let t0 = Instant::now();
        let mut chase = Chase::default();
        assert_eq!(chase.position(t0), Chased::Lost);
        // MTC completes a timecode every other frame.
        feed(&mut chase, (t0, 90_000), 0..8, 2, rate);
        let at = t0 + Duration::from_secs_f64(7.5 / 25.0);
        let Chased::At {
            seconds,
            locked,
            running,
            ..
        } = chase.position(at)
        else {
            panic!("lost");
        };
        assert!(locked && running, "locked within a third of a second");
        assert!((seconds - (3600.0 + 7.5 / 25.0)).abs() < 1e-6, "{seconds}");
        // A jump to ten minutes later: the position follows at once.
        let jump = t0 + Duration::from_secs(1);
        chase.heard(Timecode::from_frame_number(105_000, rate), jump);
        let Chased::At {
            seconds, locked, ..
        } = chase.position(jump)
        else {
            panic!("lost");
        };
        assert!(!locked && (seconds - 4200.0).abs() < 1e-6, "{seconds}");
        // Silence: freewheeling on, then lost after FREEWHEEL.
        let quiet = jump + Duration::from_millis(500);
        assert!(matches!(
            chase.position(quiet),
            Chased::At {
                freewheeling: true,
                ..
            }
        ));
        assert_eq!(
            chase.position(jump + FREEWHEEL + Duration::from_millis(1)),
            Chased::Lost
        );
    }

    #[test]
    fn a_stopped_source_holds_its_place() {
        let rate = FrameRate::Smpte30;
        let t0 = Instant::now();
        let mut chase = Chase::default();
        for i in 0..30 {
            let tc = Timecode::from_frame_number(300, rate);
            chase.heard(tc, t0 + Duration::from_millis(33 * i));
        }
        let Chased::At {
            seconds, running, ..
        } = chase.position(t0 + Duration::from_secs(1))
        else {
            panic!("lost");
        };
        assert!(!running && (seconds - 10.0).abs() < 1e-9, "{seconds}");
    }
}
