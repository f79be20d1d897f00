//! NDI out, through the NDI runtime the user installed, loaded when a
//! sender starts (as OBS and TouchDesigner find it): `SYLVA_NDI_LIBRARY`,
//! else the runtime folder NDI's installer names in `NDI_RUNTIME_DIR_V6`
//! or `_V5`, else the system's library search. sylva builds and runs
//! without it; a sender whose runtime is missing is an error on screen.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;

use libloading::{Library, Symbol};

use super::kinds::{NameError, SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};

/// `ndi:NAME`: an NDI source of this name, on every platform.
pub const SENDER: SenderKind = SenderKind {
    form: "ndi:NAME",
    schemes: &["ndi:"],
    check: check_name,
    missing: None,
    open: open_sink,
};

/// The longest source name.
pub const MAX_NAME: usize = 64;

/// Checks a source name asked for (`ndi:NAME`).
fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(NameError::Ndi(name.to_string()));
    }
    Ok(())
}

/// Why an NDI source could not start.
#[derive(Debug, thiserror::Error)]
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
}

fn open_sink(target: &Target, _size: [u32; 2], fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Ok(Box::new(NdiSender::open(target.rest(), fps)?))
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

/// `NDIlib_send_create_t`.
#[repr(C)]
struct SendCreate {
    name: *const c_char,
    groups: *const c_char,
    clock_video: bool,
    clock_audio: bool,
}

/// `NDIlib_video_frame_v2_t`.
#[repr(C)]
struct VideoFrame {
    xres: c_int,
    yres: c_int,
    four_cc: u32,
    frame_rate_n: c_int,
    frame_rate_d: c_int,
    picture_aspect_ratio: f32,
    frame_format_type: c_int,
    timecode: i64,
    data: *const u8,
    line_stride_in_bytes: c_int,
    metadata: *const c_char,
    timestamp: i64,
}

/// NDI's four-character code for 8-bit RGBA.
const FOURCC_RGBA: u32 = u32::from_le_bytes(*b"RGBA");
/// `NDIlib_frame_format_type_progressive`.
const PROGRESSIVE: c_int = 1;
/// `NDIlib_send_timecode_synthesize`: the runtime stamps the frame.
const SYNTHESIZE: i64 = i64::MAX;

type Initialize = unsafe extern "C" fn() -> bool;
type Create = unsafe extern "C" fn(*const SendCreate) -> *mut c_void;
type Destroy = unsafe extern "C" fn(*mut c_void);
type SendVideo = unsafe extern "C" fn(*mut c_void, *const VideoFrame);

/// An NDI source named after the show's output.
pub struct NdiSender {
    // Field order: the instance goes before the library it lives in.
    instance: *mut c_void,
    send_video: SendVideo,
    destroy: Destroy,
    fps: f32,
    _library: Library,
}

// The instance is only touched from the thread that owns the sender; the
// NDI SDK allows a sender to be used from any one thread at a time.
unsafe impl Send for NdiSender {}

/// Where the runtime is looked for, in order.
fn candidates() -> Vec<PathBuf> {
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

impl NdiSender {
    /// An NDI source called `name`, sending frames at `fps`, through the
    /// runtime found where NDI's installers put it.
    pub fn open(name: &str, fps: f32) -> Result<Self, NdiError> {
        Self::open_from(&candidates(), name, fps)
    }

    /// The same through the first of `libraries` that loads.
    pub fn open_from(libraries: &[PathBuf], name: &str, fps: f32) -> Result<Self, NdiError> {
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
        let name_c = CString::new(name).map_err(|_| NdiError::Nul(name.to_string()))?;
        // SAFETY: the symbols are looked up by the names and C signatures
        // the NDI SDK's headers give them.
        unsafe {
            let symbol = |symbol: &'static str| NdiError::Lacks {
                name: name.to_string(),
                symbol,
            };
            let initialize: Symbol<Initialize> = library
                .get(b"NDIlib_initialize\0")
                .map_err(|_| symbol("NDIlib_initialize"))?;
            let create: Symbol<Create> = library
                .get(b"NDIlib_send_create\0")
                .map_err(|_| symbol("NDIlib_send_create"))?;
            let send_video = *library
                .get::<SendVideo>(b"NDIlib_send_send_video_v2\0")
                .map_err(|_| symbol("NDIlib_send_send_video_v2"))?;
            let destroy = *library
                .get::<Destroy>(b"NDIlib_send_destroy\0")
                .map_err(|_| symbol("NDIlib_send_destroy"))?;
            if !initialize() {
                return Err(NdiError::WouldNotStart(name.to_string()));
            }
            let settings = SendCreate {
                name: name_c.as_ptr(),
                groups: std::ptr::null(),
                clock_video: false,
                clock_audio: false,
            };
            let instance = create(&settings);
            if instance.is_null() {
                return Err(NdiError::NoSender(name.to_string()));
            }
            Ok(Self {
                instance,
                send_video,
                destroy,
                fps,
                _library: library,
            })
        }
    }
}

impl Sink for NdiSender {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        let [width, height] = frame.size;
        let (rate_n, rate_d) = ((self.fps * 1000.0).round() as c_int, 1000);
        let video = VideoFrame {
            xres: width as c_int,
            yres: height as c_int,
            four_cc: FOURCC_RGBA,
            frame_rate_n: rate_n,
            frame_rate_d: rate_d,
            picture_aspect_ratio: width as f32 / height.max(1) as f32,
            frame_format_type: PROGRESSIVE,
            timecode: SYNTHESIZE,
            data: frame.rgba.as_ptr(),
            line_stride_in_bytes: (width * 4) as c_int,
            metadata: std::ptr::null(),
            timestamp: 0,
        };
        // SAFETY: the synchronous send reads the frame's pixels before it
        // returns, and `frame` outlives the call.
        unsafe { (self.send_video)(self.instance, &video) };
        Ok(())
    }
}

impl Drop for NdiSender {
    fn drop(&mut self) {
        // SAFETY: the instance was made by this library and is not used
        // again.
        unsafe { (self.destroy)(self.instance) };
    }
}

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
