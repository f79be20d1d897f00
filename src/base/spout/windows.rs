//! The Windows objects Spout is made of, for its sender and its receiver:
//! named shared memory (copied in and out under its `_mutex`, never lent
//! as a slice, since another process may write it), named mutexes and
//! the frame semaphore, and a Direct3D 11 device to share textures on.

use std::ffi::CString;

use windows::Win32::Foundation::{
    CloseHandle, ERROR_ALREADY_EXISTS, GetLastError, HANDLE, INVALID_HANDLE_VALUE, WAIT_ABANDONED,
    WAIT_OBJECT_0,
};
use windows::Win32::Graphics::Direct3D::D3D_DRIVER_TYPE_HARDWARE;
use windows::Win32::Graphics::Direct3D11::{
    D3D11_CREATE_DEVICE_BGRA_SUPPORT, D3D11_SDK_VERSION, D3D11CreateDevice, ID3D11Device,
    ID3D11DeviceContext,
};
use windows::Win32::System::Memory::{
    CreateFileMappingA, FILE_MAP_ALL_ACCESS, MEMORY_BASIC_INFORMATION, MEMORY_MAPPED_VIEW_ADDRESS,
    MapViewOfFile, OpenFileMappingA, PAGE_READWRITE, UnmapViewOfFile, VirtualQuery,
};
use windows::Win32::System::Threading::{
    CreateMutexA, CreateSemaphoreA, ReleaseMutex, WaitForSingleObject,
};
use windows::core::PCSTR;

use super::mutex_of;

/// How long Spout's own senders and receivers wait for a lock before
/// giving up on it.
const LOCK_MS: u32 = 67;

/// Why one of Spout's Windows objects could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SharedError {
    /// A Windows object name with a NUL in it.
    #[error("{0:?}: a name without NUL")]
    Nul(String),
    /// A named mutex could not be made.
    #[error("mutex {name}: {error}")]
    Mutex {
        /// Its name.
        name: String,
        /// Why.
        error: windows::core::Error,
    },
    /// The frame counter could not be made.
    #[error("Spout: frame counter {name}: {error}")]
    FrameCounter {
        /// Its name.
        name: String,
        /// Why.
        error: windows::core::Error,
    },
    /// Shared memory too large for Windows to map.
    #[error("{0}: too large")]
    TooLarge(String),
    /// Shared memory could not be made, opened or mapped.
    #[error("shared memory {name}: {error}")]
    SharedMemory {
        /// Its name.
        name: String,
        /// Why.
        error: windows::core::Error,
    },
    /// Direct3D 11 refused a device.
    #[error("Spout: no Direct3D 11 device: {0}")]
    Device(windows::core::Error),
    /// Direct3D 11 made no device.
    #[error("Spout: no Direct3D 11 device")]
    NoDevice,
}

/// A Windows object name as a C string.
pub fn c_name(name: &[u8]) -> Result<CString, SharedError> {
    CString::new(name.to_vec()).map_err(|_| SharedError::Nul(String::from_utf8_lossy(name).into()))
}

/// A handle closed when dropped.
pub struct Owned(pub HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by this value and is closed once.
        unsafe { CloseHandle(self.0).ok() };
    }
}

/// A named mutex, created or opened.
pub fn mutex(name: &str) -> Result<Owned, SharedError> {
    let c = c_name(name.as_bytes())?;
    // SAFETY: `c` outlives the call.
    unsafe { CreateMutexA(None, false, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .map_err(|error| SharedError::Mutex {
            name: name.to_string(),
            error,
        })
}

/// The frame-counting semaphore `name`, created or opened (a receiver
/// may have made it first): one to start, as Spout's senders make it.
pub fn semaphore(name: &str) -> Result<Owned, SharedError> {
    let c = c_name(name.as_bytes())?;
    // SAFETY: `c` outlives the call.
    unsafe { CreateSemaphoreA(None, 1, i32::MAX, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .map_err(|error| SharedError::FrameCounter {
            name: name.to_string(),
            error,
        })
}

/// Holds `mutex` for `f` if it can be had within [`LOCK_MS`].
pub fn locked<R>(mutex: &Owned, f: impl FnOnce() -> R) -> Option<R> {
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

/// Whether shared memory `name` exists (a sender's description: whether
/// it still runs).
pub fn exists(name: &[u8]) -> bool {
    let Ok(c) = c_name(name) else {
        return false;
    };
    // SAFETY: `c` outlives the call; the handle is closed by `Owned`.
    unsafe { OpenFileMappingA(FILE_MAP_ALL_ACCESS.0, false, PCSTR(c.as_ptr().cast())) }
        .map(Owned)
        .is_ok()
}

/// Named shared memory (backed by the page file) and its `_mutex`.
pub struct SharedMemory {
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
    pub fn create(name: &str, size: usize) -> Result<(Self, bool), SharedError> {
        let c = c_name(name.as_bytes())?;
        let wanted = u32::try_from(size).map_err(|_| SharedError::TooLarge(name.to_string()))?;
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
        .map_err(|error| SharedError::SharedMemory {
            name: name.to_string(),
            error,
        })?;
        // SAFETY: read right after the call that set it.
        let existed = unsafe { GetLastError() } == ERROR_ALREADY_EXISTS;
        Ok((Self::map(name, mapping, size)?, existed))
    }

    /// Opens `name`, made by another program, at most `size` bytes of it.
    pub fn open(name: &[u8], size: usize) -> Result<Self, SharedError> {
        let c = c_name(name)?;
        let text = String::from_utf8_lossy(name).into_owned();
        // SAFETY: `c` outlives the call.
        let mapping =
            unsafe { OpenFileMappingA(FILE_MAP_ALL_ACCESS.0, false, PCSTR(c.as_ptr().cast())) }
                .map(Owned)
                .map_err(|error| SharedError::SharedMemory {
                    name: text.clone(),
                    error,
                })?;
        Self::map(&text, mapping, size)
    }

    /// Maps `mapping` (shared memory `name`), at most `size` bytes, with
    /// its mutex.
    fn map(name: &str, mapping: Owned, size: usize) -> Result<Self, SharedError> {
        let mutex = mutex(&mutex_of(name))?;
        // The view last: nothing after it can fail and leave it mapped.
        // SAFETY: the mapping is live; the whole section is mapped.
        let view = unsafe { MapViewOfFile(mapping.0, FILE_MAP_ALL_ACCESS, 0, 0, 0) };
        if view.Value.is_null() {
            return Err(SharedError::SharedMemory {
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
        Ok(Self {
            view,
            len,
            mutex,
            _mapping: mapping,
        })
    }

    /// Its bytes, copied out under the mutex.
    pub fn read(&self) -> Option<Vec<u8>> {
        self.update(|bytes| bytes.clone())
    }

    /// Copies its bytes out under the mutex, lets `f` change the copy and
    /// copies it back; `None` when the lock could not be had.
    pub fn update<R>(&self, f: impl FnOnce(&mut Vec<u8>) -> R) -> Option<R> {
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

/// A Direct3D 11 device on the system's GPU, and its immediate context.
pub fn device() -> Result<(ID3D11Device, ID3D11DeviceContext), SharedError> {
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
    .map_err(SharedError::Device)?;
    match (device, context) {
        (Some(device), Some(context)) => Ok((device, context)),
        _ => Err(SharedError::NoDevice),
    }
}
