//! `--ui-pin`: a PIN a WebSocket client gives once before its OSC writes
//! are applied (the phone page asks for it once per device and keeps it).
//! Reading the namespace and LISTEN stay open to the allow-list; only
//! writes wait for the PIN. Wrong guesses lock that address out for a
//! while, so a four-digit PIN cannot be walked through.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Wrong guesses an address may make before it is locked out.
pub const MAX_WRONG: u32 = 5;

/// How long an address that guessed wrong [`MAX_WRONG`] times waits.
pub const LOCKOUT: Duration = Duration::from_secs(60);

/// Addresses whose wrong guesses are remembered; past it the oldest is
/// forgotten, so guesses from many addresses cannot grow memory.
const REMEMBERED: usize = 256;

/// Longest PIN `--ui-pin` takes.
pub const MAX_LENGTH: usize = 32;

/// What a guess at the PIN gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accepted,
    /// Wrong; this many guesses are left before the lockout.
    Wrong(u32),
    /// Too many wrong guesses from this address; try again after this long.
    LockedOut(Duration),
}

/// Wrong guesses from one address.
#[derive(Debug, Clone, Copy)]
struct Guesses {
    wrong: u32,
    last: Instant,
}

/// The PIN and the wrong guesses made at it.
#[derive(Debug)]
pub struct Pin {
    code: String,
    guesses: Mutex<HashMap<IpAddr, Guesses>>,
}

impl Pin {
    /// A PIN of 1 to [`MAX_LENGTH`] characters, or why not.
    pub fn new(code: &str) -> Result<Self, String> {
        if code.is_empty() || code.len() > MAX_LENGTH || code.chars().any(char::is_control) {
            return Err(format!(
                "a PIN is 1 to {MAX_LENGTH} characters without control characters"
            ));
        }
        Ok(Self {
            code: code.to_string(),
            guesses: Mutex::new(HashMap::new()),
        })
    }

    /// `attempt` from `peer` at `now`: accepted, wrong, or refused unread
    /// while that address is locked out.
    pub fn guess(&self, peer: IpAddr, attempt: &str, now: Instant) -> Answer {
        let mut guesses = self.guesses.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(past) = guesses.get(&peer) {
            let waited = now.saturating_duration_since(past.last);
            if past.wrong >= MAX_WRONG && waited < LOCKOUT {
                return Answer::LockedOut(LOCKOUT - waited);
            }
            if waited >= LOCKOUT {
                guesses.remove(&peer);
            }
        }
        if same(attempt.as_bytes(), self.code.as_bytes()) {
            guesses.remove(&peer);
            return Answer::Accepted;
        }
        if guesses.len() >= REMEMBERED && !guesses.contains_key(&peer) {
            let oldest = guesses.iter().min_by_key(|(_, g)| g.last).map(|(a, _)| *a);
            if let Some(oldest) = oldest {
                guesses.remove(&oldest);
            }
        }
        let entry = guesses.entry(peer).or_insert(Guesses {
            wrong: 0,
            last: now,
        });
        entry.wrong += 1;
        entry.last = now;
        Answer::Wrong(MAX_WRONG.saturating_sub(entry.wrong))
    }
}

/// Whether two byte strings are equal, taking as long whichever byte
/// differs (the time a reply takes says nothing of how much was right).
fn same(a: &[u8], b: &[u8]) -> bool {
    let longest = a.len().max(b.len());
    let differ = (0..longest).fold(u8::from(a.len() != b.len()), |differ, at| {
        differ | (a.get(at).copied().unwrap_or(0) ^ b.get(at).copied().unwrap_or(0))
    });
    differ == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]))
    }

    #[test]
    fn the_right_pin_is_accepted_and_a_wrong_one_counts_down() {
        let pin = Pin::new("2468").expect("a PIN");
        let now = Instant::now();
        assert_eq!(pin.guess(ip("10.0.0.2"), "1111", now), Answer::Wrong(4));
        assert_eq!(pin.guess(ip("10.0.0.2"), "246", now), Answer::Wrong(3));
        assert_eq!(pin.guess(ip("10.0.0.2"), "2468", now), Answer::Accepted);
        assert_eq!(pin.guess(ip("10.0.0.2"), "0000", now), Answer::Wrong(4));
    }

    #[test]
    fn five_wrong_guesses_lock_that_address_out_for_a_minute() {
        let pin = Pin::new("2468").expect("a PIN");
        let now = Instant::now();
        for _ in 0..MAX_WRONG {
            pin.guess(ip("10.0.0.2"), "0000", now);
        }
        let later = now + Duration::from_secs(10);
        assert!(matches!(
            pin.guess(ip("10.0.0.2"), "2468", later),
            Answer::LockedOut(left) if left == Duration::from_secs(50)
        ));
        assert_eq!(pin.guess(ip("10.0.0.3"), "2468", later), Answer::Accepted);
        assert_eq!(
            pin.guess(ip("10.0.0.2"), "2468", now + LOCKOUT),
            Answer::Accepted
        );
    }

    #[test]
    fn guesses_from_many_addresses_are_bounded() {
        let pin = Pin::new("2468").expect("a PIN");
        let now = Instant::now();
        for n in 0..2_000u32 {
            pin.guess(IpAddr::from(n.to_be_bytes()), "0", now);
        }
        let remembered = pin
            .guesses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert!(remembered <= REMEMBERED, "{remembered}");
    }

    #[test]
    fn a_pin_must_be_short_and_printable() {
        assert!(Pin::new("").is_err());
        assert!(Pin::new(&"1".repeat(MAX_LENGTH + 1)).is_err());
        assert!(Pin::new("12\n4").is_err());
        assert!(Pin::new("1234").is_ok());
    }
}
