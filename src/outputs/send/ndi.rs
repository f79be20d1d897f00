//! NDI out, through the runtime the user installed (`base::ndi`, found
//! as NDI's installers place it): a sender whose runtime is missing is an
//! error on screen.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;

use super::kinds::{NameError, SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};
use crate::base::ndi::{
    FOURCC_RGBA, NdiError, PROGRESSIVE, Runtime, SYNTHESIZE, VideoFrame, candidates,
};

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

fn open_sink(target: &Target, _size: [u32; 2], fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Ok(Box::new(NdiSender::open(target.rest(), fps)?))
}

/// `NDIlib_send_create_t`.
#[repr(C)]
struct SendCreate {
    name: *const c_char,
    groups: *const c_char,
    clock_video: bool,
    clock_audio: bool,
}

type Create = unsafe extern "C" fn(*const SendCreate) -> *mut c_void;
type Destroy = unsafe extern "C" fn(*mut c_void);
type SendVideo = unsafe extern "C" fn(*mut c_void, *const VideoFrame);

/// An NDI source named after the show's output.
pub struct NdiSender {
    // Field order: the instance goes before the runtime it lives in.
    instance: *mut c_void,
    send_video: SendVideo,
    destroy: Destroy,
    fps: f32,
    _runtime: Runtime,
}

// The instance is only touched from the thread that owns the sender; the
// NDI SDK allows a sender to be used from any one thread at a time.
unsafe impl Send for NdiSender {}

impl NdiSender {
    /// An NDI source called `name`, sending frames at `fps`, through the
    /// runtime found where NDI's installers put it.
    pub fn open(name: &str, fps: f32) -> Result<Self, NdiError> {
        Self::open_from(&candidates(), name, fps)
    }

    /// The same through the first of `libraries` that loads.
    pub fn open_from(libraries: &[PathBuf], name: &str, fps: f32) -> Result<Self, NdiError> {
        let runtime = Runtime::load(libraries, name)?;
        let name_c = CString::new(name).map_err(|_| NdiError::Nul(name.to_string()))?;
        // SAFETY: the functions are looked up by the names and C
        // signatures the NDI SDK's headers give them, and kept only as
        // long as the runtime, which the sender holds.
        unsafe {
            let create: Create = runtime.function("NDIlib_send_create")?;
            let send_video: SendVideo = runtime.function("NDIlib_send_send_video_v2")?;
            let destroy: Destroy = runtime.function("NDIlib_send_destroy")?;
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
                _runtime: runtime,
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
