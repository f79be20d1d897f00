//! How a sender keeps its place in Spout's shared memory (whose bytes are
//! `base::spout`'s): the name it takes, its entry in the list of senders
//! and the active sender, given up when it stops. Kept apart from the
//! Windows calls so that it is tested on every platform; `windows.rs`
//! puts these bytes into named shared memory.

use std::collections::BTreeSet;

use super::SpoutError;
use crate::base::spout::{ACTIVE_SENDER, NAME_SLOT, Name, SENDER_NAMES, read_names};
use crate::outputs::send::kinds::NameError;

/// The longest sender name sylva gives: the Windows objects named after
/// it append up to 16 characters, and Spout's buffers hold 256.
pub const MAX_NAME: usize = 200;
/// The names of Spout's own shared memory, which no sender may take.
const RESERVED: [&str; 2] = [SENDER_NAMES, ACTIVE_SENDER];

/// Checks a name asked for on the command line (`spout:NAME`).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(NameError::SpoutLength(name.to_string()));
    }
    if !name.chars().all(|c| c.is_ascii_graphic() || c == ' ') || name.contains('\\') {
        return Err(NameError::SpoutCharacters(name.to_string()));
    }
    if RESERVED.contains(&name) {
        return Err(NameError::SpoutReserved(name.to_string()));
    }
    Ok(())
}

/// Writes `names` into `slots`, sorted as Spout keeps them, each with its
/// NUL, and an empty slot after the last when there is room.
fn write_names(slots: &mut [u8], names: &BTreeSet<Name>) {
    let mut chunks = slots.chunks_exact_mut(NAME_SLOT);
    for name in names {
        let Some(slot) = chunks.next() else {
            return;
        };
        let bytes = &name[..name.len().min(NAME_SLOT - 1)];
        slot[..bytes.len()].copy_from_slice(bytes);
        slot[bytes.len()] = 0;
    }
    if let Some(slot) = chunks.next() {
        slot[0] = 0;
    }
}

/// `wanted`, or the first of `wanted_1`, `wanted_2`, … (as Spout's own
/// senders name themselves) that is neither in `names` nor `taken` (a
/// sender running unlisted); `None` after a thousand.
pub fn free_name(
    names: &BTreeSet<Name>,
    wanted: &str,
    taken: impl Fn(&str) -> bool,
) -> Option<String> {
    std::iter::once(wanted.to_string())
        .chain((1..1000).map(|n| format!("{wanted}_{n}")))
        .find(|name| !names.contains(name.as_bytes()) && !taken(name))
}

/// Adds `name` to the list `slots`. `alive` says whether a listed sender
/// still runs (its description can be opened); those that do not are
/// dropped when the list is full.
pub fn register(
    slots: &mut [u8],
    name: &str,
    alive: impl Fn(&[u8]) -> bool,
) -> Result<(), SpoutError> {
    let mut names = read_names(slots);
    let capacity = slots.len() / NAME_SLOT;
    if names.len() >= capacity {
        names.retain(|name| alive(name));
    }
    if names.len() >= capacity {
        return Err(SpoutError::ListFull(capacity));
    }
    names.insert(name.as_bytes().to_vec());
    write_names(slots, &names);
    Ok(())
}

/// Takes `name` off the list `slots`. Returns the sender that becomes the
/// active one (the first left) when `name` was active or one is left.
pub fn release(slots: &mut [u8], name: &str, active: &[u8]) -> Option<Name> {
    let mut names = read_names(slots);
    names.remove(name.as_bytes());
    write_names(slots, &names);
    let first = names.first()?;
    (active == name.as_bytes() || names.len() == 1).then(|| first.clone())
}

/// Writes `name` as the active sender into its 256-byte block.
pub fn write_active(block: &mut [u8], name: &[u8]) {
    let bytes = &name[..name.len().min(block.len().saturating_sub(1))];
    block[..bytes.len()].copy_from_slice(bytes);
    if let Some(end) = block.get_mut(bytes.len()) {
        *end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::spout::{DEFAULT_MAX_SENDERS, read_active};

    fn list(slots: usize) -> Vec<u8> {
        vec![0u8; slots * NAME_SLOT]
    }

    fn names(slots: &[u8]) -> Vec<String> {
        read_names(slots)
            .into_iter()
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .collect()
    }

    /// Registers `wanted` under its free name, as the sender does.
    fn add(slots: &mut [u8], wanted: &str) -> Option<String> {
        let name = free_name(&read_names(slots), wanted, |_| false)?;
        register(slots, &name, |_| true).ok()?;
        Some(name)
    }

    #[test]
    fn senders_are_listed_sorted_and_a_taken_name_gets_a_number() {
        let mut slots = list(DEFAULT_MAX_SENDERS);
        assert_eq!(add(&mut slots, "sylva").as_deref(), Some("sylva"));
        assert_eq!(add(&mut slots, "Resolume").as_deref(), Some("Resolume"));
        assert_eq!(add(&mut slots, "sylva").as_deref(), Some("sylva_1"));
        assert_eq!(add(&mut slots, "sylva").as_deref(), Some("sylva_2"));
        assert_eq!(names(&slots), ["Resolume", "sylva", "sylva_1", "sylva_2"]);
        // As receivers read the memory: NUL-terminated slots, then an empty one.
        assert_eq!(&slots[..9], b"Resolume\0");
        assert_eq!(&slots[NAME_SLOT..NAME_SLOT + 6], b"sylva\0");
        assert_eq!(slots[4 * NAME_SLOT], 0);
        // A sender running unlisted (the list was full when it started)
        // keeps its name too.
        let unlisted = |name: &str| name == "sylva_3";
        let name = free_name(&read_names(&slots), "sylva", unlisted);
        assert_eq!(name.as_deref(), Some("sylva_4"));
    }

    #[test]
    fn another_programs_name_is_kept_byte_for_byte() {
        let mut slots = list(8);
        // "Caméra" in Windows-1252, as an ANSI program lists it.
        let theirs = b"Cam\xe9ra".to_vec();
        slots[..theirs.len()].copy_from_slice(&theirs);
        add(&mut slots, "sylva");
        release(&mut slots, "sylva", b"sylva");
        assert_eq!(read_names(&slots).into_iter().collect::<Vec<_>>(), [theirs]);
    }

    #[test]
    fn a_released_sender_leaves_the_list_and_hands_on_the_active_name() {
        let mut slots = list(8);
        for name in ["b", "a", "c"] {
            add(&mut slots, name);
        }
        assert_eq!(release(&mut slots, "b", b"b"), Some(b"a".to_vec()));
        assert_eq!(
            release(&mut slots, "a", b"c"),
            Some(b"c".to_vec()),
            "one left"
        );
        assert_eq!(names(&slots), ["c"]);
        assert_eq!(release(&mut slots, "c", b"c"), None);
        assert!(read_names(&slots).is_empty());
        // Stale bytes after a shorter list's end are not read as names.
        let mut slots = list(4);
        for name in ["x", "y", "z"] {
            add(&mut slots, name);
        }
        release(&mut slots, "z", b"x");
        assert_eq!(names(&slots), ["x", "y"]);
    }

    #[test]
    fn a_full_list_drops_senders_that_are_gone_before_it_refuses() {
        let mut slots = list(2);
        add(&mut slots, "crashed");
        add(&mut slots, "running");
        let alive = |name: &[u8]| name != b"crashed";
        register(&mut slots, "sylva", alive).expect("registered");
        assert_eq!(names(&slots), ["running", "sylva"]);
        let full = register(&mut slots, "more", |_| true);
        assert!(full.is_err_and(|e| e.to_string().contains("full (2)")));
    }

    #[test]
    fn names_are_checked_and_the_active_one_is_written_as_receivers_read_it() {
        assert!(check_name("sylva main").is_ok());
        for bad in ["", "a\\b", "ü", SENDER_NAMES, ACTIVE_SENDER] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name(&"n".repeat(MAX_NAME + 1)).is_err());
        let mut block = [7u8; NAME_SLOT];
        write_active(&mut block, b"sylva");
        assert_eq!(read_active(&block), b"sylva");
    }
}
