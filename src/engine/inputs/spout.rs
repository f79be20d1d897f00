//! Spout in (`spout:SENDER NAME`, Windows): another application's Spout
//! sender (Resolume, TouchDesigner, OBS's Spout plugin, another sylva) as
//! a texture source, found by its name or part of it; `spout:` alone
//! takes the active sender. sylva reads Spout's shared memory itself
//! (`base::spout`, the same bytes its sender writes), opens the sender's
//! shared Direct3D 11 texture and, on a thread of its own, copies each
//! new frame through a staging texture into the newest picture. On other
//! systems the source is an error on screen. A sender that is not there,
//! or goes, is black and an error, and is looked for again every
//! [`RETRY`]; one that changes size is opened again.

use std::time::Duration;

use super::feed::{FedSource, Feed};
use super::media::MediaError;
use super::source::SourceKind;
use crate::base::spout::NAME_SLOT;

/// How often a sender that is not there is looked for again.
pub const RETRY: Duration = Duration::from_secs(2);

/// `spout:SENDER NAME`, or `spout:` for the active sender.
pub const SOURCE: SourceKind = SourceKind {
    form: "spout:SENDER NAME",
    names: |name| name.starts_with("spout:"),
    well_formed: |name| {
        name.strip_prefix("spout:")
            .is_some_and(|sender| sender.len() < NAME_SLOT && !sender.contains('\0'))
    },
    file: false,
    open: |opening| Box::new(open(opening.name)),
};

/// Receives the sender source `name` (`spout:…`) names, on a thread of
/// its own.
fn open(name: &str) -> FedSource {
    let wanted = name.trim_start_matches("spout:").to_string();
    let work = move |feed: &Feed<String>| receive(&wanted, feed);
    FedSource::start(name, "spout in", RETRY, work, MediaError::Spout)
}

#[cfg(windows)]
use receiver::receive;

#[cfg(not(windows))]
fn receive(_wanted: &str, _feed: &Feed<String>) -> Result<(), String> {
    Err("Spout is Windows'; receive NDI instead (ndi:NAME), which every Spout application also sends".into())
}

#[cfg(windows)]
mod receiver {
    //! The receiving thread: the sender found in the list, its texture
    //! opened by its shared handle, each frame copied under the sender's
    //! access mutex into a staging texture, mapped and read as RGBA.

    use std::time::{Duration, Instant};

    use windows::Win32::Foundation::HANDLE;
    use windows::Win32::Graphics::Direct3D11::{
        D3D11_CPU_ACCESS_READ, D3D11_MAP_READ, D3D11_MAPPED_SUBRESOURCE, D3D11_TEXTURE2D_DESC,
        D3D11_USAGE_STAGING, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
    };
    use windows::Win32::Graphics::Dxgi::Common::{DXGI_FORMAT, DXGI_SAMPLE_DESC};

    use super::super::feed::Feed;
    use super::super::still::DecodedImage;
    use crate::base::spout::windows::{SharedMemory, device, locked, mutex};
    use crate::base::spout::{
        ACTIVE_SENDER, FORMAT_BGRA, FORMAT_RGBA, INFO_BYTES, NAME_SLOT, SENDER_NAMES, SenderInfo,
        access_mutex, find_sender, read_active, read_names,
    };

    /// Frames looked for a second, at most.
    const POLL_FPS: f64 = 60.0;
    /// The most slots of Spout's list read.
    const MAX_SENDERS: usize = 1024;
    /// The largest picture taken, a side.
    const MAX_SIDE: u32 = 8192;

    /// Receives the sender `wanted` names until the feed stops (`Ok`) or
    /// the sender is gone (`Err`, to be looked for again).
    pub fn receive(wanted: &str, feed: &Feed<String>) -> Result<(), String> {
        let (device, context) = device().map_err(|e| e.to_string())?;
        let names = SharedMemory::open(SENDER_NAMES.as_bytes(), MAX_SENDERS * NAME_SLOT)
            .map_err(|_| "no Spout sender is running".to_string())?;
        let active = SharedMemory::open(ACTIVE_SENDER.as_bytes(), NAME_SLOT).ok();
        let listed = names.read().map(|b| read_names(&b)).unwrap_or_default();
        let active_name = (active.as_ref())
            .and_then(SharedMemory::read)
            .map(|b| read_active(&b))
            .unwrap_or_default();
        let Some(name) = find_sender(&listed, &active_name, wanted) else {
            return Err(format!("no Spout sender named {wanted:?} is running"));
        };
        let shown = String::from_utf8_lossy(&name).into_owned();
        let info = SharedMemory::open(&name, INFO_BYTES).map_err(|e| e.to_string())?;
        let access = mutex(&access_mutex(&shown)).map_err(|e| e.to_string())?;
        loop {
            let described = (info.read().as_deref())
                .and_then(SenderInfo::from_bytes)
                .ok_or_else(|| format!("{shown}'s description cannot be read"))?;
            let opened =
                Opened::open(&device, &described).map_err(|why| format!("{shown}: {why}"))?;
            let period = Duration::from_secs_f64(1.0 / POLL_FPS);
            for poll in 0u64.. {
                let started = Instant::now();
                if feed.stopped() {
                    return Ok(());
                }
                // A sender that stops takes its name off the list; its
                // memory and texture live on while this holds them.
                let listed = poll % POLL_FPS as u64 != 0
                    || names.read().is_some_and(|b| read_names(&b).contains(&name));
                if !listed {
                    return Err(format!("{shown} stopped sending"));
                }
                let now = (info.read().as_deref()).and_then(SenderInfo::from_bytes);
                if now.as_ref() != Some(&described) {
                    // A new texture: the sender was resized.
                    break;
                }
                if let Some(picture) = locked(&access, || opened.copy(&context, feed)).flatten() {
                    feed.hand_over(picture);
                }
                feed.pause(period.saturating_sub(started.elapsed()));
            }
        }
    }

    /// A sender's texture, opened, and the staging texture it is read
    /// through.
    struct Opened {
        shared: ID3D11Texture2D,
        staging: ID3D11Texture2D,
        size: [u32; 2],
        bgra: bool,
    }

    impl Opened {
        /// Opens the texture `info` describes on `device`.
        fn open(device: &ID3D11Device, info: &SenderInfo) -> Result<Self, String> {
            let bgra = match info.format {
                FORMAT_BGRA => true,
                FORMAT_RGBA => false,
                other => {
                    return Err(format!(
                        "a texture of DXGI format {other}, not 8-bit RGBA or BGRA"
                    ));
                }
            };
            if info.size.iter().any(|&side| side == 0 || side > MAX_SIDE) {
                return Err(format!(
                    "{}x{}: at most {MAX_SIDE} a side",
                    info.size[0], info.size[1]
                ));
            }
            let mut shared: Option<ID3D11Texture2D> = None;
            // Legacy shared handles are 32-bit values, whatever the process's width.
            let handle = HANDLE(info.share_handle as usize as *mut core::ffi::c_void);
            // SAFETY: the out-pointer is valid for the call; a stale handle
            // is an error, not undefined behaviour, for Direct3D 11.
            unsafe { device.OpenSharedResource(handle, &mut shared) }
                .map_err(|e| format!("its texture cannot be opened: {e}"))?;
            let shared = shared.ok_or("its texture cannot be opened")?;
            let desc = D3D11_TEXTURE2D_DESC {
                Width: info.size[0],
                Height: info.size[1],
                MipLevels: 1,
                ArraySize: 1,
                Format: DXGI_FORMAT(info.format as i32),
                SampleDesc: DXGI_SAMPLE_DESC {
                    Count: 1,
                    Quality: 0,
                },
                Usage: D3D11_USAGE_STAGING,
                BindFlags: 0,
                CPUAccessFlags: D3D11_CPU_ACCESS_READ.0 as u32,
                MiscFlags: 0,
            };
            let mut staging: Option<ID3D11Texture2D> = None;
            // SAFETY: the descriptor and out-pointer are valid for the call.
            unsafe { device.CreateTexture2D(&desc, None, Some(&mut staging)) }
                .map_err(|e| format!("no staging texture: {e}"))?;
            Ok(Self {
                shared,
                staging: staging.ok_or("no staging texture")?,
                size: info.size,
                bgra,
            })
        }

        /// The sender's current frame as RGBA, in a buffer of `feed`'s.
        fn copy(&self, context: &ID3D11DeviceContext, feed: &Feed<String>) -> Option<DecodedImage> {
            let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
            // SAFETY: both textures are live and of one size and format;
            // the staging texture is mapped for reading and unmapped below.
            unsafe {
                context.CopyResource(&self.staging, &self.shared);
                context
                    .Map(&self.staging, 0, D3D11_MAP_READ, 0, Some(&mut mapped))
                    .ok()?;
            }
            let [width, height] = self.size.map(|side| side as usize);
            let mut rgba = feed.spare();
            rgba.resize(width * height * 4, 0);
            for (y, row) in rgba.chunks_exact_mut(width * 4).enumerate() {
                // SAFETY: the mapping holds `height` rows `RowPitch` apart,
                // each at least `4 * width` bytes.
                let source = unsafe {
                    std::slice::from_raw_parts(
                        mapped.pData.cast::<u8>().add(y * mapped.RowPitch as usize),
                        width * 4,
                    )
                };
                row.copy_from_slice(source);
                if self.bgra {
                    row.chunks_exact_mut(4).for_each(|texel| texel.swap(0, 2));
                }
            }
            // SAFETY: mapped above.
            unsafe { context.Unmap(&self.staging, 0) };
            Some(DecodedImage {
                size: self.size,
                rgba,
            })
        }
    }
}
