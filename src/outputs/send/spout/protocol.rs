//! What Spout's receivers read, as bytes: the list of sender names, the
//! block that describes one sender's shared texture, and the names of the
//! Windows objects around them. Kept apart from the Windows calls so that
//! it is tested on every platform; `windows.rs` puts these bytes into
//! named shared memory.

use std::collections::BTreeSet;

use super::SpoutError;
use crate::outputs::send::kinds::NameError;

/// Bytes a name takes in the sender list (255 characters and a NUL).
pub const NAME_SLOT: usize = 256;
/// Sender slots when the registry does not say (`MaxSenders`).
pub const DEFAULT_MAX_SENDERS: usize = 64;
/// The longest sender name sylva gives: the Windows objects named after
/// it append up to 16 characters, and Spout's buffers hold 256.
pub const MAX_NAME: usize = 200;
/// Bytes of one sender's description block (`SharedTextureInfo`).
pub const INFO_BYTES: usize = 280;
/// `DXGI_FORMAT_B8G8R8A8_UNORM`: what every Spout receiver takes,
/// DirectX 9 ones included.
pub const FORMAT_BGRA: u32 = 87;

/// The shared memory holding every sender's name.
pub const SENDER_NAMES: &str = "SpoutSenderNames";
/// The shared memory naming the sender a receiver takes by default.
pub const ACTIVE_SENDER: &str = "ActiveSenderName";

/// The mutex guarding the shared memory `map`.
pub fn mutex_of(map: &str) -> String {
    format!("{map}_mutex")
}

/// The mutex a sender holds while it writes its texture.
pub fn access_mutex(sender: &str) -> String {
    format!("{sender}_SpoutAccessMutex")
}

/// The semaphore counting a sender's frames (receivers skip a copy when
/// it has not moved).
pub fn frame_semaphore(sender: &str) -> String {
    format!("{sender}_Count_Semaphore")
}

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

/// A sender's name as the list holds it: bytes in the sending program's
/// code page, kept as they are (another program's name is never
/// rewritten), sorted byte by byte as Spout sorts them.
pub type Name = Vec<u8>;

/// The names in the sender list `slots`: one a slot, up to the first empty
/// slot (bytes after a name's NUL are stale and ignored).
pub fn read_names(slots: &[u8]) -> BTreeSet<Name> {
    slots
        .chunks_exact(NAME_SLOT)
        .map(|slot| &slot[..slot.iter().position(|b| *b == 0).unwrap_or(NAME_SLOT)])
        .take_while(|name| !name.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
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

/// The active sender's name, as [`write_active`] left it.
pub fn read_active(block: &[u8]) -> Name {
    let end = block.iter().position(|b| *b == 0).unwrap_or(block.len());
    block[..end].to_vec()
}

/// One sender's shared texture, as receivers find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderInfo {
    /// The texture's legacy DXGI shared handle (receivers open it with
    /// `OpenSharedResource`; it fits 32 bits by design).
    pub share_handle: u32,
    /// Width and height in pixels.
    pub size: [u32; 2],
    /// Its DXGI format.
    pub format: u32,
    /// The program sending (its executable's path, as Windows gave it).
    pub host: Vec<u8>,
}

impl SenderInfo {
    /// The 280 bytes of `SharedTextureInfo`: handle, width, height,
    /// format, usage (0), description (256 bytes, NUL-terminated), and
    /// partner id (0: a Direct3D 11 sender sharing on the GPU).
    pub fn to_bytes(&self) -> [u8; INFO_BYTES] {
        let mut bytes = [0u8; INFO_BYTES];
        let words = [
            self.share_handle,
            self.size[0],
            self.size[1],
            self.format,
            0,
        ];
        for (slot, word) in bytes.chunks_exact_mut(4).zip(words) {
            slot.copy_from_slice(&word.to_le_bytes());
        }
        let kept = self.host.len().min(255);
        bytes[20..20 + kept].copy_from_slice(&self.host[..kept]);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_description_block_is_spouts_shared_texture_info() {
        let info = SenderInfo {
            share_handle: 0x4000_0a02,
            size: [1920, 1080],
            format: FORMAT_BGRA,
            host: b"C:\\sylva\\sylva.exe".to_vec(),
        };
        let bytes = info.to_bytes();
        assert_eq!(bytes.len(), 280);
        assert_eq!(bytes[0..4], 0x4000_0a02u32.to_le_bytes());
        assert_eq!(bytes[4..8], 1920u32.to_le_bytes());
        assert_eq!(bytes[8..12], 1080u32.to_le_bytes());
        assert_eq!(bytes[12..16], 87u32.to_le_bytes());
        assert_eq!(bytes[16..20], [0; 4], "usage");
        assert_eq!(&bytes[20..39], b"C:\\sylva\\sylva.exe\0");
        assert_eq!(bytes[276..280], [0; 4], "partner id");
        let long = SenderInfo {
            host: vec![b'p'; 400],
            ..info
        };
        assert_eq!(
            long.to_bytes()[20 + 255],
            0,
            "the description keeps its NUL"
        );
    }

    #[test]
    fn names_and_objects_are_what_receivers_open() {
        assert_eq!(mutex_of(SENDER_NAMES), "SpoutSenderNames_mutex");
        assert_eq!(access_mutex("sylva"), "sylva_SpoutAccessMutex");
        assert_eq!(frame_semaphore("sylva"), "sylva_Count_Semaphore");
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
