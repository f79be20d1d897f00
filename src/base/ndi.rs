//! The NDI runtime the user installed, loaded when a sender or a receiver
//! starts (as OBS and TouchDesigner find it): `SYLVA_NDI_LIBRARY`, else
//! the runtime folder NDI's installer names in `NDI_RUNTIME_DIR_V6` or
//! `_V5`, else the system's library search. sylva builds and runs without
//! it; a sender or a source whose runtime is missing is an error on
//! screen. Also the SDK's video frame, which both directions share.

use std::ffi::{c_char, c_int};
use std::path::PathBuf;

use libloading::Library;

/// Why NDI could not send or receive.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NdiError {
    /// No runtime loaded from any place tried.
    #[error(
        "ndi:{name}: no NDI runtime found (install NDI Tools or the NDI runtime from ndi.video, or set SYLVA_NDI_LIBRARY); tried {tried}"
    )]
    NoRuntime {
        /// The source's name.
        name: String,
        /// Each library tried, and why it did not load.
        tried: String,
    },
    /// A name with a NUL in it.
    #[error("ndi:{0}: a name without NUL")]
    Nul(String),
    /// The runtime lacks a function.
    #[error("ndi:{name}: the runtime lacks {symbol}")]
    Lacks {
        /// The source's name.
        name: String,
        /// The function.
        symbol: &'static str,
    },
    /// `NDIlib_initialize` failed.
    #[error("ndi:{0}: the NDI runtime would not start (this CPU may lack SSE4.2)")]
    WouldNotStart(String),
    /// `NDIlib_send_create` made nothing.
    #[error("ndi:{0}: the runtime made no sender")]
    NoSender(String),
    /// `NDIlib_find_create_v2` or `NDIlib_recv_create_v3` made nothing.
    #[error("ndi:{0}: the runtime made no receiver")]
    NoReceiver(String),
    /// No source of that name on the network (yet).
    #[error("ndi:{name}: no such source on the network; seen: {seen}")]
    NotFound {
        /// The name asked for.
        name: String,
        /// The sources there are.
        seen: String,
    },
    /// The source stopped sending.
    #[error("ndi:{name}: no picture for {seconds} s; looking for it again")]
    Vanished {
        /// The source's name.
        name: String,
        /// How long it has been silent.
        seconds: u64,
    },
    /// No thread could be started to receive on.
    #[error("ndi:{0}")]
    NoThread(String),
    /// The receiving thread panicked; it starts again.
    #[error("ndi:{0}: the receiver failed and starts again")]
    Panicked(String),
}

/// The runtime's file name on this system.
#[cfg(target_os = "windows")]
const LIBRARY: &str = "Processing.NDI.Lib.x64.dll";
#[cfg(target_os = "macos")]
const LIBRARY: &str = "libndi.dylib";
#[cfg(not(any(target_os = "windows", target_os = "macos")))]
const LIBRARY: &str = "libndi.so.6";

/// Older runtimes' names, tried after [`LIBRARY`].
#[cfg(not(any(target_os = "windows", target_os = "macos")))]
const OLDER: &[&str] = &["libndi.so.5", "libndi.so"];
#[cfg(any(target_os = "windows", target_os = "macos"))]
const OLDER: &[&str] = &[];

/// Where the runtime is looked for, in order.
pub fn candidates() -> Vec<PathBuf> {
    if let Some(path) = std::env::var_os("SYLVA_NDI_LIBRARY") {
        return vec![PathBuf::from(path)];
    }
    let mut list = Vec::new();
    for variable in ["NDI_RUNTIME_DIR_V6", "NDI_RUNTIME_DIR_V5"] {
        if let Some(dir) = std::env::var_os(variable) {
            list.push(PathBuf::from(dir).join(LIBRARY));
        }
    }
    #[cfg(target_os = "macos")]
    list.push(PathBuf::from("/usr/local/lib").join(LIBRARY));
    list.push(PathBuf::from(LIBRARY));
    list.extend(OLDER.iter().map(PathBuf::from));
    list
}

/// A loaded runtime, started (`NDIlib_initialize`).
pub struct Runtime {
    library: Library,
    /// What it is loaded for, for messages.
    name: String,
}

impl Runtime {
    /// The first of `libraries` that loads, started, for the sender or
    /// source called `name`.
    pub fn load(libraries: &[PathBuf], name: &str) -> Result<Self, NdiError> {
        let mut tried = Vec::new();
        let library = libraries.iter().find_map(|path| {
            // SAFETY: loading runs the library's initialisers; the NDI
            // runtime's are its own, as in every host that loads it.
            match unsafe { Library::new(path) } {
                Ok(library) => Some(library),
                Err(error) => {
                    tried.push(format!("{} ({error})", path.display()));
                    None
                }
            }
        });
        let library = library.ok_or_else(|| NdiError::NoRuntime {
            name: name.to_string(),
            tried: tried.join(", "),
        })?;
        let runtime = Self {
            library,
            name: name.to_string(),
        };
        // SAFETY: `NDIlib_initialize` takes nothing and returns a C bool,
        // as the SDK's header declares it.
        let initialize =
            unsafe { runtime.function::<unsafe extern "C" fn() -> bool>("NDIlib_initialize")? };
        // SAFETY: as above; it may be called more than once.
        if !unsafe { initialize() } {
            return Err(NdiError::WouldNotStart(name.to_string()));
        }
        Ok(runtime)
    }

    /// The runtime's function `symbol`.
    ///
    /// # Safety
    /// `F` must be the function's C signature as the SDK declares it, and
    /// it must not be called after the runtime is dropped.
    pub unsafe fn function<F: Copy>(&self, symbol: &'static str) -> Result<F, NdiError> {
        let lacks = || NdiError::Lacks {
            name: self.name.clone(),
            symbol,
        };
        let mut bytes = symbol.as_bytes().to_vec();
        bytes.push(0);
        // SAFETY: the caller gives the symbol's own signature.
        unsafe {
            self.library
                .get::<F>(&bytes)
                .map(|f| *f)
                .map_err(|_| lacks())
        }
    }
}

/// `NDIlib_video_frame_v2_t`.
#[repr(C)]
#[derive(Debug)]
pub struct VideoFrame {
    /// Width.
    pub xres: c_int,
    /// Height.
    pub yres: c_int,
    /// The pixels' four-character code.
    pub four_cc: u32,
    /// Frame rate numerator.
    pub frame_rate_n: c_int,
    /// Frame rate denominator.
    pub frame_rate_d: c_int,
    /// Width over height.
    pub picture_aspect_ratio: f32,
    /// Progressive or a field.
    pub frame_format_type: c_int,
    /// 100 ns units, or [`SYNTHESIZE`].
    pub timecode: i64,
    /// The first row.
    pub data: *const u8,
    /// Bytes from one row to the next.
    pub line_stride_in_bytes: c_int,
    /// XML metadata, or null.
    pub metadata: *const c_char,
    /// When it was sent, 100 ns units.
    pub timestamp: i64,
}

impl VideoFrame {
    /// An empty frame, for the runtime to fill.
    pub fn empty() -> Self {
        Self {
            xres: 0,
            yres: 0,
            four_cc: 0,
            frame_rate_n: 0,
            frame_rate_d: 0,
            picture_aspect_ratio: 0.0,
            frame_format_type: 0,
            timecode: 0,
            data: std::ptr::null(),
            line_stride_in_bytes: 0,
            metadata: std::ptr::null(),
            timestamp: 0,
        }
    }
}

/// NDI's four-character code for 8-bit RGBA.
pub const FOURCC_RGBA: u32 = u32::from_le_bytes(*b"RGBA");
/// The same with its alpha unused.
pub const FOURCC_RGBX: u32 = u32::from_le_bytes(*b"RGBX");
/// `NDIlib_frame_format_type_progressive`.
pub const PROGRESSIVE: c_int = 1;
/// `NDIlib_send_timecode_synthesize`: the runtime stamps the frame.
pub const SYNTHESIZE: i64 = i64::MAX;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_layout_is_the_sdks() {
        // NDIlib_video_frame_v2_t on 64-bit systems: 72 bytes, the data
        // pointer at 40.
        assert_eq!(size_of::<VideoFrame>(), 72);
        assert_eq!(std::mem::offset_of!(VideoFrame, data), 40);
        assert_eq!(std::mem::offset_of!(VideoFrame, timestamp), 64);
        assert_eq!(FOURCC_RGBA, 0x4142_4752);
    }
}
