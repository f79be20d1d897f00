//! Spout out on Windows: a Direct3D 11 texture shared through its legacy
//! DXGI handle, the sender's name in Spout's list, its description in
//! shared memory named after it, and the access mutex and frame semaphore
//! receivers wait on ([`protocol`] and `base::spout` hold the bytes, the
//! Windows objects are `base::spout::windows`'s). Frames arrive read
//! back on the tap's worker thread and are written into the texture
//! there, so the show never waits on a receiver.

use windows::Win32::Graphics::Direct3D11::{
    D3D11_BIND_RENDER_TARGET, D3D11_BIND_SHADER_RESOURCE, D3D11_RESOURCE_MISC_SHARED,
    D3D11_TEXTURE2D_DESC, D3D11_USAGE_DEFAULT, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::Common::{DXGI_FORMAT_B8G8R8A8_UNORM, DXGI_SAMPLE_DESC};
use windows::Win32::Graphics::Dxgi::IDXGIResource;
use windows::Win32::System::LibraryLoader::GetModuleFileNameA;
use windows::Win32::System::Registry::{HKEY_CURRENT_USER, RRF_RT_REG_DWORD, RegGetValueA};
use windows::Win32::System::Threading::{ReleaseSemaphore, WaitForSingleObject};
use windows::core::{Interface, s};

use super::SpoutError;
use super::protocol;
use crate::base::spout::windows::{Owned, SharedMemory, device, exists, locked, mutex, semaphore};
use crate::base::spout::{self as memory, SenderInfo};
use crate::outputs::send::tap::{Frame, Sink, SinkError};

/// Spout's sender slots: its `MaxSenders` setting, else 64.
fn max_senders() -> usize {
    let mut value = 0u32;
    let mut size = std::mem::size_of::<u32>() as u32;
    // SAFETY: `value` is a DWORD and `size` says so.
    let read = unsafe {
        RegGetValueA(
            HKEY_CURRENT_USER,
            s!("Software\\Leading Edge\\Spout"),
            s!("MaxSenders"),
            RRF_RT_REG_DWORD,
            None,
            Some((&mut value as *mut u32).cast()),
            Some(&mut size),
        )
    };
    if read.is_ok() && value > 0 {
        (value as usize).min(1024)
    } else {
        memory::DEFAULT_MAX_SENDERS
    }
}

/// This program's path, for the sender's description (bytes in the
/// system's code page, as Windows gives them).
fn host() -> Vec<u8> {
    let mut path = [0u8; 260];
    // SAFETY: the buffer's length is passed with it.
    let len = unsafe { GetModuleFileNameA(None, &mut path) } as usize;
    path[..len.min(path.len())].to_vec()
}

/// A Spout sender.
pub struct SpoutSender {
    name: String,
    device: ID3D11Device,
    context: ID3D11DeviceContext,
    texture: ID3D11Texture2D,
    size: [u32; 2],
    bgra: Vec<u8>,
    access: Owned,
    frames: Owned,
    /// The description, held open while the sender runs: receivers take
    /// a sender whose description they cannot open for gone. Dropped after
    /// the name leaves the list (fields drop in order, after `drop`).
    info: SharedMemory,
    active: SharedMemory,
    names: SharedMemory,
}

// SAFETY: the device context is used by the one worker thread that owns
// the sender (Direct3D 11 devices are free-threaded; contexts are not
// shared here).
unsafe impl Send for SpoutSender {}

impl SpoutSender {
    /// Starts sending as `wanted` (or `wanted_1`… when taken) frames of
    /// `size`, on the system's GPU.
    pub fn open(wanted: &str, size: [u32; 2]) -> Result<Self, SpoutError> {
        protocol::check_name(wanted)?;
        let (device, context) = device()?;
        let (texture, handle) = shared_texture(&device, size)?;
        let slots = max_senders() * memory::NAME_SLOT;
        let (names, _) = SharedMemory::create(memory::SENDER_NAMES, slots)?;
        let (active, _) = SharedMemory::create(memory::ACTIVE_SENDER, memory::NAME_SLOT)?;
        // Everything a receiver opens exists before the name is listed (a
        // listed name whose description cannot be opened is dropped by
        // the next sender), and nothing is listed unless it all does.
        let made = names
            .update(|list| {
                let listed = memory::read_names(list);
                let mut taken = Vec::new();
                let made = loop {
                    let name = protocol::free_name(&listed, wanted, |n| {
                        taken.iter().any(|t: &String| t == n)
                    })
                    .ok_or_else(|| SpoutError::NoFreeName(wanted.to_string()))?;
                    let (info, existed) = SharedMemory::create(&name, memory::INFO_BYTES)?;
                    if existed {
                        // A sender running unlisted has it.
                        taken.push(name);
                        continue;
                    }
                    describe(&info, &name, handle, size)?;
                    let access = mutex(&memory::access_mutex(&name))?;
                    let frames = semaphore(&memory::frame_semaphore(&name))?;
                    break (name, info, access, frames);
                };
                protocol::register(list, &made.0, exists)?;
                active.update(|block| protocol::write_active(block, made.0.as_bytes()));
                Ok::<_, SpoutError>(made)
            })
            .ok_or(SpoutError::ListLocked)?;
        let (name, info, access, frames) = made?;
        tracing::info!("spout: sending as {name:?}, {}x{}", size[0], size[1]);
        Ok(Self {
            name,
            device,
            context,
            texture,
            size,
            bgra: Vec::new(),
            access,
            frames,
            info,
            active,
            names,
        })
    }
}

/// Writes the description of a texture of `size` shared as `handle` into
/// `info`, sender `name`'s.
fn describe(
    info: &SharedMemory,
    name: &str,
    handle: u32,
    size: [u32; 2],
) -> Result<(), SpoutError> {
    let described = SenderInfo {
        share_handle: handle,
        size,
        format: memory::FORMAT_BGRA,
        host: host(),
    };
    info.update(|bytes| {
        let written = described.to_bytes();
        let n = bytes.len().min(written.len());
        bytes[..n].copy_from_slice(&written[..n]);
    })
    .ok_or_else(|| SpoutError::DescriptionLocked(name.to_string()))
}

/// A BGRA texture of `size` that other processes open by its handle.
fn shared_texture(
    device: &ID3D11Device,
    size: [u32; 2],
) -> Result<(ID3D11Texture2D, u32), SpoutError> {
    let desc = D3D11_TEXTURE2D_DESC {
        Width: size[0],
        Height: size[1],
        MipLevels: 1,
        ArraySize: 1,
        Format: DXGI_FORMAT_B8G8R8A8_UNORM,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: 1,
            Quality: 0,
        },
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: (D3D11_BIND_RENDER_TARGET.0 | D3D11_BIND_SHADER_RESOURCE.0) as u32,
        CPUAccessFlags: 0,
        MiscFlags: D3D11_RESOURCE_MISC_SHARED.0 as u32,
    };
    let mut texture: Option<ID3D11Texture2D> = None;
    // SAFETY: the descriptor and out-pointer are valid for the call.
    unsafe { device.CreateTexture2D(&desc, None, Some(&mut texture)) }
        .map_err(|error| SpoutError::Texture { size, error })?;
    let texture = texture.ok_or(SpoutError::NoTexture)?;
    // SAFETY: a shared texture is a DXGI resource.
    let handle = unsafe {
        texture
            .cast::<IDXGIResource>()
            .and_then(|r| r.GetSharedHandle())
    }
    .map_err(SpoutError::SharedHandle)?;
    // Legacy shared handles are 32-bit values, whatever the process's width.
    Ok((texture, handle.0 as usize as u32))
}

impl Sink for SpoutSender {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        if frame.size != self.size {
            // A new texture, and its handle in the description: receivers
            // see the handle change and open the new one.
            let (texture, handle) = shared_texture(&self.device, frame.size)?;
            describe(&self.info, &self.name, handle, frame.size)?;
            self.texture = texture;
            self.size = frame.size;
        }
        let [width, height] = frame.size.map(|side| side as usize);
        if frame.rgba.len() != width * height * 4 {
            return Err(SpoutError::FrameBytes {
                bytes: frame.rgba.len(),
                size: frame.size,
            }
            .into());
        }
        frame.bgra_into(&mut self.bgra);
        let (context, texture, bgra, frames) =
            (&self.context, &self.texture, &self.bgra, &self.frames);
        // A receiver copying the texture holds the access mutex: the frame
        // waits for it as long as Spout's senders do, else is skipped.
        locked(&self.access, || {
            // SAFETY: `bgra` holds `size` rows of `4 * width` bytes; the
            // semaphore and context are live.
            unsafe {
                context.UpdateSubresource(
                    texture,
                    0,
                    None,
                    bgra.as_ptr().cast(),
                    self.size[0] * 4,
                    0,
                );
                context.Flush();
                WaitForSingleObject(frames.0, 0);
                ReleaseSemaphore(frames.0, 2, None).ok();
            }
        });
        Ok(())
    }
}

impl Drop for SpoutSender {
    fn drop(&mut self) {
        let name = self.name.clone();
        let active = &self.active;
        self.names.update(|list| {
            let now = active
                .read()
                .map(|b| memory::read_active(&b))
                .unwrap_or_default();
            if let Some(next) = protocol::release(list, &name, &now) {
                active.update(|block| protocol::write_active(block, &next));
            }
        });
    }
}
