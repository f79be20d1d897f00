//! Repeats held back: each distinct message (its origin and its text) is
//! let through at most once per interval, then with the number of times it
//! came meanwhile. The interval doubles while the message keeps coming
//! (1 s, 2 s, 4 s … a minute) and starts again at a second once it has
//! been quiet for a while. A bounded map remembers the recent messages, so
//! two senders whose errors alternate under one origin, a device missing
//! at every rescan or a frame failing the same way 60 times a second end
//! up as a line a minute each, not a line a frame. The error log
//! ([`super::status::ErrorLog`]) and every periodic warning go through it.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

/// The interval a message starts with.
pub const FIRST_INTERVAL: Duration = Duration::from_secs(1);

/// The longest interval: a message that never stops is let through once a
/// minute, with its count.
pub const LONGEST_INTERVAL: Duration = Duration::from_secs(60);

/// Distinct messages remembered; past this the one heard of least
/// recently is forgotten (and let through again if it comes back).
pub const MAX_REMEMBERED: usize = 256;

/// A message that comes back more than this many intervals after it was
/// last let through has stopped in between: its interval starts again.
const QUIET_INTERVALS: u32 = 4;

/// One remembered message.
#[derive(Debug)]
struct Recent {
    /// Its origin, so fixing the origin forgets it.
    origin: String,
    /// When it was last let through.
    shown: Instant,
    /// When it last came.
    seen: Instant,
    /// How long it is held back after being let through.
    interval: Duration,
    /// Times it came since it was last let through.
    held: u64,
}

/// What to do with a message that came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through: it came `held` more times in the `over` since it
    /// was last let through (none the first time).
    Show {
        /// Times it was held back since.
        held: u64,
        /// Since it was last let through.
        over: Duration,
    },
    /// Held back: it was let through within its interval.
    Hold,
}

impl Verdict {
    /// What a log line adds for the repeats it stands for: nothing, or
    /// `" (12 more times in the last 4 s)"`.
    pub fn suffix(&self) -> String {
        match self {
            Self::Show { held, over } if *held > 0 => {
                format!(
                    " ({held} more time{} in the last {} s)",
                    if *held == 1 { "" } else { "s" },
                    over.as_secs().max(1)
                )
            }
            _ => String::new(),
        }
    }
}

/// Recent messages and when each may be let through again.
#[derive(Debug, Default)]
pub struct Repeats {
    recent: HashMap<u64, Recent>,
}

/// The key of a message: a hash of its origin and text (a planted
/// megabyte-long message is not kept twice).
fn key(origin: &str, message: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    origin.hash(&mut hasher);
    message.hash(&mut hasher);
    hasher.finish()
}

impl Repeats {
    /// Whether `message` of `origin`, coming at `now`, is let through.
    pub fn admit(&mut self, origin: &str, message: &str, now: Instant) -> Verdict {
        let key = key(origin, message);
        if let Some(recent) = self.recent.get_mut(&key) {
            recent.seen = now;
            let over = now.saturating_duration_since(recent.shown);
            if over < recent.interval {
                recent.held += 1;
                return Verdict::Hold;
            }
            let held = std::mem::take(&mut recent.held);
            recent.interval = if over <= recent.interval * QUIET_INTERVALS {
                (recent.interval * 2).min(LONGEST_INTERVAL)
            } else {
                FIRST_INTERVAL
            };
            recent.shown = now;
            return Verdict::Show { held, over };
        }
        if self.recent.len() >= MAX_REMEMBERED {
            let least = self
                .recent
                .iter()
                .min_by_key(|(_, r)| r.seen)
                .map(|(k, _)| *k);
            if let Some(least) = least {
                self.recent.remove(&least);
            }
        }
        self.recent.insert(
            key,
            Recent {
                origin: origin.to_string(),
                shown: now,
                seen: now,
                interval: FIRST_INTERVAL,
                held: 0,
            },
        );
        Verdict::Show {
            held: 0,
            over: Duration::ZERO,
        }
    }

    /// Forgets the messages of `origin` (it was fixed: the same error
    /// again is news).
    pub fn forget(&mut self, origin: &str) {
        self.recent.retain(|_, r| r.origin != origin);
    }

    /// Messages remembered.
    pub fn len(&self) -> usize {
        self.recent.len()
    }

    /// Whether none is remembered.
    pub fn is_empty(&self) -> bool {
        self.recent.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages let through when `messages` come in turn, one every `step`,
    /// for `seconds`.
    fn shown(messages: &[(&str, &str)], step: Duration, seconds: u64) -> Vec<Verdict> {
        let mut repeats = Repeats::default();
        let start = Instant::now();
        let mut said = Vec::new();
        let mut at = Duration::ZERO;
        let mut i = 0;
        while at < Duration::from_secs(seconds) {
            let (origin, message) = messages[i % messages.len()];
            let verdict = repeats.admit(origin, message, start + at);
            if verdict != Verdict::Hold {
                said.push(verdict);
            }
            at += step;
            i += 1;
        }
        said
    }

    #[test]
    fn two_errors_alternating_under_one_origin_are_each_held_back() {
        // Two NDI senders without a runtime, 20 reports a second for a day.
        let messages = [
            ("send", "ndi:left: no runtime"),
            ("send", "ndi:right: no runtime"),
        ];
        let said = shown(&messages, Duration::from_millis(50), 24 * 3600);
        // A line a minute each once the interval has grown.
        assert!(said.len() <= 2 * (24 * 60 + 10), "{} lines", said.len());
        // Each line after the first says how many it stands for.
        let counted: u64 = said
            .iter()
            .map(|v| match v {
                Verdict::Show { held, .. } => held + 1,
                Verdict::Hold => 0,
            })
            .sum();
        assert!(counted >= 24 * 3600 * 20 - 2 * 60 * 20, "{counted}");
    }

    #[test]
    fn a_message_every_two_seconds_is_held_back_too() {
        // A sink retried every 2 s, failing the same way each time.
        let said = shown(&[("tap", "gone")], Duration::from_secs(2), 3600);
        assert!(said.len() <= 70, "{} lines in an hour", said.len());
    }

    #[test]
    fn a_message_after_a_quiet_while_and_a_new_one_show_at_once() {
        let mut repeats = Repeats::default();
        let t = Instant::now();
        assert!(matches!(repeats.admit("a", "x", t), Verdict::Show { .. }));
        assert_eq!(
            repeats.admit("a", "x", t + Duration::from_millis(10)),
            Verdict::Hold
        );
        // Another text of the same origin is news.
        assert!(matches!(
            repeats.admit("a", "y", t + Duration::from_millis(20)),
            Verdict::Show { held: 0, .. }
        ));
        let again = repeats.admit("a", "x", t + Duration::from_secs(2));
        assert_eq!(
            again,
            Verdict::Show {
                held: 1,
                over: Duration::from_secs(2)
            }
        );
        assert_eq!(again.suffix(), " (1 more time in the last 2 s)");
        // Fixed, then broken the same way: shown at once.
        repeats.forget("a");
        assert!(matches!(
            repeats.admit("a", "x", t + Duration::from_millis(2100)),
            Verdict::Show { held: 0, .. }
        ));
    }

    #[test]
    fn the_map_is_bounded_and_forgets_the_least_recent() {
        let mut repeats = Repeats::default();
        let t = Instant::now();
        for i in 0..10 * MAX_REMEMBERED {
            repeats.admit("flood", &format!("message {i}"), t);
        }
        assert_eq!(repeats.len(), MAX_REMEMBERED);
        // One that keeps coming outlives a flood of others.
        let mut repeats = Repeats::default();
        for i in 0..4 * MAX_REMEMBERED {
            let at = t + Duration::from_millis(i as u64);
            repeats.admit("steady", "again", at);
            repeats.admit("flood", &format!("message {i}"), at);
        }
        assert_eq!(
            repeats.admit("steady", "again", t + Duration::from_millis(1100)),
            Verdict::Hold
        );
    }
}
