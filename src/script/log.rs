//! `print` and `sylva.log` with a rate limit: a script logging in a loop
//! fills neither the disk nor the frame. Lines beyond the limit are counted
//! and one notice says how many were dropped.

use std::time::{Duration, Instant};

/// Script log lines written per second at most.
pub const LINES_PER_SECOND: u32 = 20;

/// Characters of one script log line kept.
pub const MAX_LINE_CHARS: usize = 1_000;

/// Counts lines in the current second and those dropped.
#[derive(Debug, Default)]
pub struct LogLimiter {
    window: Option<Instant>,
    written: u32,
    dropped: u64,
}

impl LogLimiter {
    /// Logs `line` unless this second's lines are used up.
    pub fn line(&mut self, line: String) {
        self.roll();
        if self.written >= LINES_PER_SECOND {
            self.dropped += 1;
            return;
        }
        self.written += 1;
        tracing::info!(target: "lua", "{}", crate::base::status::truncated(line, MAX_LINE_CHARS));
    }

    /// Writes the drop notice once the second that dropped lines is over.
    pub fn flush(&mut self) {
        self.roll();
    }

    fn roll(&mut self) {
        let now = Instant::now();
        if self
            .window
            .is_some_and(|w| now.duration_since(w) < Duration::from_secs(1))
        {
            return;
        }
        if self.dropped > 0 {
            tracing::warn!(
                target: "lua",
                "{} script log lines dropped (at most {LINES_PER_SECOND} a second)",
                self.dropped
            );
            self.dropped = 0;
        }
        self.window = Some(now);
        self.written = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_beyond_the_rate_are_counted_not_written() {
        let mut log = LogLimiter::default();
        for i in 0..1_000 {
            log.line(format!("line {i}"));
        }
        assert_eq!(log.dropped, 1_000 - u64::from(LINES_PER_SECOND));
    }
}
