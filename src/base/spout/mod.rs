//! Spout's shared memory as bytes, for a sender (`outputs::send::spout`)
//! and a receiver (`engine::inputs::spout`) alike: the list of sender
//! names, the active sender, the block that describes one sender's shared
//! texture, and the names of the Windows objects around them. Kept apart
//! from the Windows calls so that it is tested on every platform;
//! `windows` (built on Windows only) opens the named memory, mutexes and Direct3D 11.

#[cfg(windows)]
pub mod windows;

use std::collections::BTreeSet;

/// `DXGI_FORMAT_R8G8B8A8_UNORM`, which some senders share instead.
pub const FORMAT_RGBA: u32 = 28;

/// Bytes a name takes in the sender list (255 characters and a NUL).
pub const NAME_SLOT: usize = 256;
/// Sender slots when the registry does not say (`MaxSenders`).
pub const DEFAULT_MAX_SENDERS: usize = 64;

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

/// The active sender's name, as the block holds it (up to its NUL).
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

impl SenderInfo {
    /// Reads a description block: `None` when it is shorter than the
    /// fields receivers need.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let word = |at: usize| {
            let b = bytes.get(at..at + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let host = bytes.get(20..INFO_BYTES - 4).unwrap_or_default();
        let end = host.iter().position(|b| *b == 0).unwrap_or(host.len());
        Some(Self {
            share_handle: word(0)?,
            size: [word(4)?, word(8)?],
            format: word(12)?,
            host: host[..end].to_vec(),
        })
    }
}

/// The sender a receiver asked for `wanted` takes from `names`: the
/// active one when `wanted` is empty (else the first listed), else the
/// one named exactly, else the first whose name holds `wanted` in any
/// case.
pub fn find_sender(names: &BTreeSet<Name>, active: &[u8], wanted: &str) -> Option<Name> {
    if wanted.is_empty() {
        return (names.get(active).or_else(|| names.first())).cloned();
    }
    if let Some(exact) = names.get(wanted.as_bytes()) {
        return Some(exact.clone());
    }
    let wanted = wanted.to_lowercase();
    (names.iter())
        .find(|name| {
            String::from_utf8_lossy(name)
                .to_lowercase()
                .contains(&wanted)
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(SenderInfo::from_bytes(&bytes), Some(info));
        assert_eq!(SenderInfo::from_bytes(&bytes[..10]), None);
    }

    #[test]
    fn objects_are_named_as_receivers_open_them() {
        assert_eq!(mutex_of(SENDER_NAMES), "SpoutSenderNames_mutex");
        assert_eq!(access_mutex("sylva"), "sylva_SpoutAccessMutex");
        assert_eq!(frame_semaphore("sylva"), "sylva_Count_Semaphore");
    }

    #[test]
    fn a_receiver_finds_the_active_sender_an_exact_name_or_part_of_one() {
        let mut slots = vec![0u8; 4 * NAME_SLOT];
        for (n, name) in [&b"Resolume Arena"[..], b"TouchDesigner", b"sylva"]
            .iter()
            .enumerate()
        {
            slots[n * NAME_SLOT..n * NAME_SLOT + name.len()].copy_from_slice(name);
        }
        let names = read_names(&slots);
        let find = |active: &[u8], wanted| find_sender(&names, active, wanted);
        assert_eq!(find(b"sylva", ""), Some(b"sylva".to_vec()));
        assert_eq!(find(b"gone", ""), Some(b"Resolume Arena".to_vec()));
        assert_eq!(find(b"", "TouchDesigner"), Some(b"TouchDesigner".to_vec()));
        assert_eq!(find(b"", "arena"), Some(b"Resolume Arena".to_vec()));
        assert_eq!(find(b"", "obs"), None);
    }
}
