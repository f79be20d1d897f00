//! `--ui-pin`: a PIN or passphrase a WebSocket client gives once before
//! it may write or LISTEN (the phone page asks for it once per device and
//! keeps it). Reading the namespace over HTTP stays open to the
//! allow-list. Wrong guesses are bounded twice, so rotating addresses
//! buys nothing: each network (a /24, an IPv6 /64, all of loopback) is
//! locked out after [`MAX_WRONG`] for [`LOCKOUT`], and all networks
//! together may guess wrong [`MAX_WRONG_IN_ALL`] times a [`WINDOW`]; past
//! that every guess waits, unread. A network's wrong guesses are forgotten
//! [`LOCKOUT`] after its last one, not when someone there gets it right.
//! Four digits then take up to 17 hours
//! to walk through (a night, not an installation's week); six take 70
//! days, and a passphrase longer still.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, Ipv6Addr};
use std::ops::RangeInclusive;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Wrong guesses one network may make before it is locked out.
pub const MAX_WRONG: u32 = 5;

/// How long a network that guessed wrong [`MAX_WRONG`] times waits.
pub const LOCKOUT: Duration = Duration::from_secs(60);

/// Wrong guesses all networks together may make within [`WINDOW`].
pub const MAX_WRONG_IN_ALL: usize = 10;

/// The window [`MAX_WRONG_IN_ALL`] counts over.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Networks whose wrong guesses are remembered; past it the oldest is
/// forgotten (the limit in all still holds), so guesses from many
/// networks cannot grow memory.
const REMEMBERED: usize = 256;

/// Digits a numeric PIN has.
pub const DIGITS: RangeInclusive<usize> = 4..=12;

/// Digits below which a PIN is guessable within a long installation, and
/// the start-up log says so.
pub const WEAK_BELOW: usize = 6;

/// Characters a passphrase has.
pub const PASSPHRASE: RangeInclusive<usize> = 8..=64;

/// What a guess at the PIN gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Accepted,
    /// Wrong; this many guesses are left before a wait.
    Wrong(u32),
    /// Too many wrong guesses from this network, or from all of them; try
    /// again after this long.
    LockedOut(Duration),
}

/// Wrong guesses from one network.
#[derive(Debug, Clone, Copy)]
struct Wrong {
    count: u32,
    last: Instant,
}

/// The wrong guesses remembered.
#[derive(Debug, Default)]
struct Guesses {
    /// Per network ([`network`]).
    by_network: HashMap<IpAddr, Wrong>,
    /// When the latest wrong guesses from anywhere were made, at most
    /// [`MAX_WRONG_IN_ALL`] of them.
    recent: VecDeque<Instant>,
}

/// A PIN or passphrase too short, too long or with control characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a PIN is {} to {} digits ({WEAK_BELOW} or more recommended) or a passphrase of {} to {} characters without control characters",
    DIGITS.start(),
    DIGITS.end(),
    PASSPHRASE.start(),
    PASSPHRASE.end()
)]
pub struct PinError;

/// The PIN and the wrong guesses made at it.
#[derive(Debug)]
pub struct Pin {
    code: String,
    guesses: Mutex<Guesses>,
}

impl Pin {
    /// A PIN of [`DIGITS`] digits or a passphrase of [`PASSPHRASE`]
    /// characters (no control characters), or why not.
    pub fn new(code: &str) -> Result<Self, PinError> {
        let digits = code.chars().all(|c| c.is_ascii_digit());
        let fits = match digits {
            true => DIGITS.contains(&code.len()),
            false => {
                PASSPHRASE.contains(&code.chars().count())
                    && !code.chars().any(char::is_control)
                    && !code.trim().is_empty()
            }
        };
        if !fits {
            return Err(PinError);
        }
        Ok(Self {
            code: code.to_string(),
            guesses: Mutex::new(Guesses::default()),
        })
    }

    /// What the page should offer to type it with: `digits` or
    /// `passphrase`.
    pub fn kind(&self) -> &'static str {
        match self.code.chars().all(|c| c.is_ascii_digit()) {
            true => "digits",
            false => "passphrase",
        }
    }

    /// Whether the PIN is digits too few to outlast a long installation
    /// at [`MAX_WRONG_IN_ALL`] guesses a minute.
    pub fn weak(&self) -> bool {
        self.kind() == "digits" && self.code.len() < WEAK_BELOW
    }

    /// `attempt` from `peer` at `now`: accepted, wrong, or refused unread
    /// while that network, or everyone, is locked out.
    pub fn guess(&self, peer: IpAddr, attempt: &str, now: Instant) -> Answer {
        let mut guesses = self.guesses.lock().unwrap_or_else(PoisonError::into_inner);
        let Guesses { by_network, recent } = &mut *guesses;
        let key = network(peer);
        while recent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW)
        {
            recent.pop_front();
        }
        if let Some(past) = by_network.get(&key) {
            let waited = now.saturating_duration_since(past.last);
            if past.count >= MAX_WRONG && waited < LOCKOUT {
                return Answer::LockedOut(LOCKOUT - waited);
            }
            if waited >= LOCKOUT {
                by_network.remove(&key);
            }
        }
        if recent.len() >= MAX_WRONG_IN_ALL {
            let oldest = recent.front().map_or(now, |t| *t);
            return Answer::LockedOut(WINDOW.saturating_sub(now.saturating_duration_since(oldest)));
        }
        // The right PIN leaves the network's wrong guesses standing: a
        // phone that reconnects (and gives its kept PIN) must not wipe the
        // count for a guesser beside it on the same network.
        if same(attempt.as_bytes(), self.code.as_bytes()) {
            return Answer::Accepted;
        }
        recent.push_back(now);
        if by_network.len() >= REMEMBERED && !by_network.contains_key(&key) {
            let oldest = by_network
                .iter()
                .min_by_key(|(_, g)| g.last)
                .map(|(a, _)| *a);
            if let Some(oldest) = oldest {
                by_network.remove(&oldest);
            }
        }
        let entry = by_network.entry(key).or_insert(Wrong {
            count: 0,
            last: now,
        });
        entry.count += 1;
        entry.last = now;
        let left_here = MAX_WRONG.saturating_sub(entry.count);
        let left_in_all = (MAX_WRONG_IN_ALL - recent.len()) as u32;
        Answer::Wrong(left_here.min(left_in_all))
    }
}

/// The network `peer` guesses from, as far as its guesses count: all of
/// loopback is one (any local program can use any of 127/8), an IPv4
/// address its /24, an IPv6 address its /64 (what one host is handed).
fn network(peer: IpAddr) -> IpAddr {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    match peer {
        _ if peer.is_loopback() => IpAddr::from([127, 0, 0, 0]),
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            IpAddr::from([a, b, c, 0])
        }
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
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
        assert_eq!(pin.guess(ip("10.0.0.2"), "0000", now), Answer::Wrong(2));
        let forgotten = now + LOCKOUT;
        assert_eq!(
            pin.guess(ip("10.0.0.2"), "0000", forgotten),
            Answer::Wrong(4)
        );
    }

    #[test]
    fn a_phone_giving_the_right_pin_does_not_wipe_its_neighbours_wrong_ones() {
        let pin = Pin::new("2468").expect("a PIN");
        let now = Instant::now();
        for _ in 0..MAX_WRONG - 1 {
            pin.guess(ip("10.0.0.66"), "0000", now);
        }
        // The performer's phone on the same network reconnects.
        assert_eq!(pin.guess(ip("10.0.0.2"), "2468", now), Answer::Accepted);
        assert_eq!(pin.guess(ip("10.0.0.66"), "0001", now), Answer::Wrong(0));
        assert!(matches!(
            pin.guess(ip("10.0.0.66"), "2468", now),
            Answer::LockedOut(_)
        ));
    }

    #[test]
    fn five_wrong_guesses_lock_that_network_out_for_a_minute() {
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
        // Its neighbours in the same /24 wait too; another network not.
        assert!(matches!(
            pin.guess(ip("10.0.0.77"), "2468", later),
            Answer::LockedOut(_)
        ));
        assert_eq!(pin.guess(ip("10.0.1.3"), "2468", later), Answer::Accepted);
        assert_eq!(
            pin.guess(ip("10.0.0.2"), "2468", now + LOCKOUT),
            Answer::Accepted
        );
    }

    #[test]
    fn rotating_addresses_cannot_walk_the_pin() {
        // The security review's probe: 300 loopback addresses, a guess each.
        let pin = Pin::new("4821").expect("a PIN");
        let now = Instant::now();
        let mut guessed = 0;
        for n in 0..300u32 {
            let peer = IpAddr::from([127, 0, (n >> 8) as u8, (n & 0xff) as u8]);
            if matches!(pin.guess(peer, &format!("{n:04}"), now), Answer::Wrong(_)) {
                guessed += 1;
            }
        }
        assert!(guessed <= MAX_WRONG as usize, "{guessed} guesses read");
        // Rotated over networks instead: ten wrong guesses a minute in all.
        let pin = Pin::new("4821").expect("a PIN");
        let mut read = 0;
        for n in 0..3_000u32 {
            let [_, b, c, d] = n.to_be_bytes();
            let v4 = IpAddr::from([10, b, c, d]);
            let v6 = IpAddr::V6(Ipv6Addr::from((u128::from(n) << 64) | 1));
            for peer in [v4, v6] {
                let at = now + Duration::from_millis(u64::from(n) * 20);
                if matches!(pin.guess(peer, "0000", at), Answer::Wrong(_)) {
                    read += 1;
                }
            }
        }
        // 3,000 × 20 ms is one minute: one window.
        assert!(
            read <= MAX_WRONG_IN_ALL,
            "{read} wrong guesses read in a minute"
        );
        assert!(
            matches!(
                pin.guess(ip("192.168.9.9"), "4821", now + Duration::from_secs(59)),
                Answer::LockedOut(_)
            ),
            "the right PIN waits too: the limit reads nothing"
        );
        assert_eq!(
            pin.guess(ip("192.168.9.9"), "4821", now + Duration::from_secs(121)),
            Answer::Accepted
        );
    }

    #[test]
    fn networks_are_a_24_a_64_or_all_of_loopback() {
        assert_eq!(network(ip("10.1.2.3")), ip("10.1.2.0"));
        assert_eq!(network(ip("127.9.8.7")), network(ip("::1")));
        assert_eq!(network(ip("::ffff:10.1.2.3")), ip("10.1.2.0"));
        assert_eq!(network(ip("2001:db8:1:2:3:4:5:6")), ip("2001:db8:1:2::"));
        assert_ne!(
            network(ip("2001:db8:1:3::6")),
            network(ip("2001:db8:1:2::6"))
        );
    }

    #[test]
    fn guesses_from_many_networks_are_bounded() {
        let pin = Pin::new("2468").expect("a PIN");
        let now = Instant::now();
        for n in 0..2_000u32 {
            let at = now + WINDOW * n;
            pin.guess(IpAddr::from((n << 8).to_be_bytes()), "0000", at);
        }
        let guesses = pin.guesses.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(
            guesses.by_network.len() <= REMEMBERED,
            "{}",
            guesses.by_network.len()
        );
        assert!(guesses.recent.len() <= MAX_WRONG_IN_ALL);
    }

    #[test]
    fn a_pin_is_4_to_12_digits_or_a_passphrase() {
        for refused in [
            "",
            "1",
            "123",
            "1234567890123",
            "short",
            "12\n4 more words",
            "        ",
        ] {
            assert!(Pin::new(refused).is_err(), "{refused:?}");
        }
        assert!(Pin::new(&"é".repeat(65)).is_err());
        for taken in ["1234", "123456789012", "correct horse battery", "vjay-2025"] {
            assert!(Pin::new(taken).is_ok(), "{taken:?}");
        }
        assert!(Pin::new("4821").is_ok_and(|p| p.weak() && p.kind() == "digits"));
        assert!(Pin::new("482193").is_ok_and(|p| !p.weak()));
        assert!(Pin::new("a long passphrase").is_ok_and(|p| p.kind() == "passphrase"));
    }
}
