//! Spout out on Windows: a Direct3D 11 texture shared through its legacy
//! DXGI handle, the sender's name in Spout's list, its description in
//! shared memory named after it, and the access mutex and frame semaphore
//! receivers wait on ([`protocol`] holds the bytes). Frames arrive read
//! back on the tap's worker thread and are written into the texture
//! there, so the show never waits on a receiver.

use std::ffi::CString;

use windows::Win32::Foundation::{
    CloseHandle, ERROR_ALREADY_EXISTS, GetLastError, HANDLE, INVALID_HANDLE_VALUE, WAIT_ABANDONED,
    WAIT_OBJECT_0,
};
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_HARDWARE;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_BIND_RENDER_TARGET, D3D11_BIND_SHADER_RESOURCE, D3D11_CREATE_DEVICE_BGRA_SUPPORT,
    D3D11_RESOURCE_MISC_SHARED, D3D11_SDK_VERSION, D3D11_TEXTURE2D_DESC, D3D11_USAGE_DEFAULT,
    D3D11CreateDevice, ID3D11Device, ID3D11DeviceContext, ID3D11Texture2D,
};
use windows::Win32::Graphics::Dxgi::Common::{DXGI_FORMAT_B8G8R8A8_UNORM, DXGI_SAMPLE_DESC};
use windows::Win32::Graphics::Dxgi::IDXGIResource;
use windows::Win32::System::LibraryLoader::GetModuleFileNameA;
use windows::Win32::System::Memory::{
    CreateFileMappingA, FILE_MAP_ALL_ACCESS, MEMORY_BASIC_INFORMATION, MEMORY_MAPPED_VIEW_ADDRESS,
    MapViewOfFile, OpenFileMappingA, PAGE_READWRITE, UnmapViewOfFile, VirtualQuery,
};
use windows::Win32::System::Registry::{HKEY_CURRENT_USER, RRF_RT_REG_DWORD, RegGetValueA};
use windows::Win32::System::Threading::{
    CreateMutexA, CreateSemaphoreA, ReleaseMutex, ReleaseSemaphore, WaitForSingleObject,
};
use windows::core::{Interface, PCSTR, s};

use super::SpoutError;
use super::protocol::{self, SenderInfo};
use crate::outputs::send::tap::{Frame, Sink, SinkError};

/// How long Spout's own senders wait for a lock before giving up on it.
const LOCK_MS: u32 = 67;

/// A Windows object name as a C string.
fn c_name(name: &str) -> Result<CString, SpoutError> {
    CString::new(name).map_err(|_| SpoutError::Nul(name.to_string()))
}

/// A handle closed when dropped.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by this value and is closed once.
        unsafe { CloseHandle(self.0).ok() };
    }
}

/// A named mutex, created or opened.
fn mutex(name: &str) -> Result<Owned, SpoutError> {
    let c = c_name(name)?;
    // SAFETY: `c` outlives the call.
    unsafe { CreateMutexA(None, false, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .map_err(|error| SpoutError::Mutex {
            name: name.to_string(),
            error,
        })
}

/// The frame-counting semaphore `name`, created or opened (a receiver
/// may have made it first): one to start, as Spout's senders make it.
fn semaphore(name: &str) -> Result<Owned, SpoutError> {
    let c = c_name(name)?;
    // SAFETY: `c` outlives the call.
    unsafe { CreateSemaphoreA(None, 1, i32::MAX, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .map_err(|error| SpoutError::FrameCounter {
            name: name.to_string(),
            error,
        })
}

/// Holds `mutex` for `f` if it can be had within [`LOCK_MS`].
fn locked<R>(mutex: &Owned, f: impl FnOnce() -> R) -> Option<R> {
    // SAFETY: the handle is a live mutex.
    let waited = unsafe { WaitForSingleObject(mutex.0, LOCK_MS) };
    // An abandoned mutex (its holder crashed) is held now all the same.
    if waited != WAIT_OBJECT_0 && waited != WAIT_ABANDONED {
        return None;
    }
    let result = f();
    // SAFETY: this thread holds the mutex.
    unsafe { ReleaseMutex(mutex.0).ok() };
    Some(result)
}

/// Named shared memory (backed by the page file) and its `_mutex`. Its
/// bytes are only ever copied in and out under the mutex, never lent as
/// a slice: another process may write them.
struct SharedMemory {
    view: MEMORY_MAPPED_VIEW_ADDRESS,
    len: usize,
    mutex: Owned,
    _mapping: Owned,
}

// SAFETY: the view is plain memory, touched only under its mutex.
unsafe impl Send for SharedMemory {}

impl SharedMemory {
    /// Creates `name` of `size` bytes, or opens it as it is if another
    /// program made it (its size then wins, within `size`); whether it
    /// was there already comes with it.
    fn create(name: &str, size: usize) -> Result<(Self, bool), SpoutError> {
        let c = c_name(name)?;
        let wanted = u32::try_from(size).map_err(|_| SpoutError::TooLarge(name.to_string()))?;
        // SAFETY: `c` outlives the call; the mapping is backed by the page file.
        let mapping = unsafe {
            CreateFileMappingA(
                INVALID_HANDLE_VALUE,
                None,
                PAGE_READWRITE,
                0,
                wanted,
                PCSTR(c.as_ptr().cast()),
            )
        }
        .map(Owned)
        .map_err(|error| SpoutError::SharedMemory {
            name: name.to_string(),
            error,
        })?;
        // SAFETY: read right after the call that set it.
        let existed = unsafe { GetLastError() } == ERROR_ALREADY_EXISTS;
        let mutex = mutex(&protocol::mutex_of(name))?;
        // The view last: nothing after it can fail and leave it mapped.
        // SAFETY: the mapping is live; the whole section is mapped.
        let view = unsafe { MapViewOfFile(mapping.0, FILE_MAP_ALL_ACCESS, 0, 0, 0) };
        if view.Value.is_null() {
            return Err(SpoutError::SharedMemory {
                name: name.to_string(),
                error: windows::core::Error::from_thread(),
            });
        }
        let mut region = MEMORY_BASIC_INFORMATION::default();
        // SAFETY: `region` is as large as the call is told.
        let queried = unsafe {
            VirtualQuery(
                Some(view.Value.cast_const()),
                &mut region,
                std::mem::size_of::<MEMORY_BASIC_INFORMATION>(),
            )
        };
        // A section another program made smaller (an old Spout's list of
        // ten) is read no further than its pages.
        let len = if queried == 0 {
            size
        } else {
            region.RegionSize.min(size)
        };
        let memory = Self {
            view,
            len,
            mutex,
            _mapping: mapping,
        };
        Ok((memory, existed))
    }

    /// Its bytes, copied out under the mutex.
    fn read(&self) -> Option<Vec<u8>> {
        self.update(|bytes| bytes.clone())
    }

    /// Copies its bytes out under the mutex, lets `f` change the copy and
    /// copies it back; `None` when the lock could not be had.
    fn update<R>(&self, f: impl FnOnce(&mut Vec<u8>) -> R) -> Option<R> {
        locked(&self.mutex, || {
            let mut bytes = vec![0u8; self.len];
            let base = self.view.Value.cast::<u8>();
            // SAFETY: the view is `len` bytes long and held under its
            // mutex; the copy does not overlap it.
            unsafe { std::ptr::copy_nonoverlapping(base, bytes.as_mut_ptr(), self.len) };
            let result = f(&mut bytes);
            let n = bytes.len().min(self.len);
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base, n) };
            result
        })
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: the view was mapped by this value and is unmapped once.
        unsafe { UnmapViewOfFile(self.view).ok() };
    }
}

/// Whether a sender called `name` runs: its description can be opened.
fn alive(name: &[u8]) -> bool {
    let Ok(c) = CString::new(name.to_vec()) else {
        return false;
    };
    // SAFETY: `c` outlives the call; the handle is closed by `Owned`.
    unsafe { OpenFileMappingA(FILE_MAP_ALL_ACCESS.0, false, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .is_ok()
}

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
        protocol::DEFAULT_MAX_SENDERS
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
        let mut device: Option<ID3D11Device> = None;
        let mut context: Option<ID3D11DeviceContext> = None;
        // SAFETY: the out-pointers are valid for the call.
        unsafe {
            D3D11CreateDevice(
                None,
                D3D_DRIVER_TYPE_HARDWARE,
                Default::default(),
                D3D11_CREATE_DEVICE_BGRA_SUPPORT,
                None,
                D3D11_SDK_VERSION,
                Some(&mut device),
                None,
                Some(&mut context),
            )
        }
        .map_err(SpoutError::Device)?;
        let (Some(device), Some(context)) = (device, context) else {
            return Err(SpoutError::NoDevice);
        };
        let (texture, handle) = shared_texture(&device, size)?;
        let slots = max_senders() * protocol::NAME_SLOT;
        let (names, _) = SharedMemory::create(protocol::SENDER_NAMES, slots)?;
        let (active, _) = SharedMemory::create(protocol::ACTIVE_SENDER, protocol::NAME_SLOT)?;
        // Everything a receiver opens exists before the name is listed (a
        // listed name whose description cannot be opened is dropped by
        // the next sender), and nothing is listed unless it all does.
        let made = names
            .update(|list| {
                let listed = protocol::read_names(list);
                let mut taken = Vec::new();
                let made = loop {
                    let name = protocol::free_name(&listed, wanted, |n| {
                        taken.iter().any(|t: &String| t == n)
                    })
                    .ok_or_else(|| SpoutError::NoFreeName(wanted.to_string()))?;
                    let (info, existed) = SharedMemory::create(&name, protocol::INFO_BYTES)?;
                    if existed {
                        // A sender running unlisted has it.
                        taken.push(name);
                        continue;
                    }
                    describe(&info, &name, handle, size)?;
                    let access = mutex(&protocol::access_mutex(&name))?;
                    let frames = semaphore(&protocol::frame_semaphore(&name))?;
                    break (name, info, access, frames);
                };
                protocol::register(list, &made.0, alive)?;
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
        format: protocol::FORMAT_BGRA,
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
                .map(|b| protocol::read_active(&b))
                .unwrap_or_default();
            if let Some(next) = protocol::release(list, &name, &now) {
                active.update(|block| protocol::write_active(block, &next));
            }
        });
    }
}
