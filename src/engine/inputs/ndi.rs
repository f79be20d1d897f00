//! NDI in: `ndi:SOURCE NAME` as a texture source, through the runtime the
//! sender loads too (`base::ndi`). A thread finds the source on the
//! network (its full name, `MACHINE (Source)`, or any part of it),
//! receives its pictures as RGBA and hands the newest to the frame. A
//! source that stops sending keeps its last picture for [`LOST_AFTER`],
//! then shows black and an error, while the thread looks for it again;
//! it comes back by itself. The thread restarts after a panic. An
//! [`NdiFinder`] lists the sources on the network for the HUD and the
//! phone page.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::camera::Cameras;
use super::feed::{self, Feed, keep_running};
use super::media::MediaError;
use super::source::{Playing, SourceKind, TextureSource};
use super::still::DecodedImage;
use crate::base::ndi::{FOURCC_RGBA, FOURCC_RGBX, NdiError, Runtime, VideoFrame, candidates};

/// How long a silent source keeps its last picture before it goes black.
pub const LOST_AFTER: Duration = Duration::from_secs(2);
/// How long a capture waits for a frame, so the thread sees a stop soon.
const CAPTURE_WAIT_MS: u32 = 100;
/// Pause before the runtime or the source is looked for again.
const RETRY: Duration = Duration::from_secs(1);
/// The longest source name (NDI's own limit is about this).
pub const MAX_NAME: usize = 256;
/// The largest picture taken (8K); a larger one is refused.
const MAX_SIDE: c_int = 8192;

/// `ndi:SOURCE NAME`, on every platform with the NDI runtime.
pub const SOURCE: SourceKind = SourceKind {
    form: "ndi:SOURCE NAME",
    names: |name| name.starts_with("ndi:"),
    well_formed: |name| {
        let source = &name["ndi:".len()..];
        !source.trim().is_empty() && source.len() <= MAX_NAME && !source.contains('\0')
    },
    file: false,
    open: |opening| Box::new(NdiSource::open(&opening.name["ndi:".len()..], candidates())),
};

/// An NDI source on the shelf.
pub struct NdiSource {
    name: String,
    feed: Feed<NdiError>,
    last_picture: Instant,
    received: u64,
}

impl NdiSource {
    /// Receives from the source `name` through the first of `libraries`
    /// that loads, on a thread of its own.
    pub fn open(name: &str, libraries: Vec<PathBuf>) -> Self {
        let feed = Feed::default();
        let wanted = name.to_string();
        let failed = {
            let name = name.to_string();
            move |why: Option<NdiError>| {
                let why = why.unwrap_or_else(|| NdiError::Panicked(name.clone()));
                tracing::warn!("{why}");
                why
            }
        };
        let work = move |feed: &Feed<NdiError>| receive(&libraries, &wanted, feed);
        let no_thread = |error| NdiError::NoThread(format!("{name}: {error}"));
        feed::spawn(&feed, format!("ndi:{name}"), RETRY, work, failed, no_thread);
        Self {
            name: name.to_string(),
            feed,
            last_picture: Instant::now(),
            received: 0,
        }
    }
}

impl Drop for NdiSource {
    fn drop(&mut self) {
        self.feed.stop();
    }
}

impl TextureSource for NdiSource {
    fn advance(
        &mut self,
        _playing: Playing,
        _cameras: &dyn Cameras,
    ) -> Result<Option<DecodedImage>, MediaError> {
        if let Some(picture) = self.feed.newest() {
            self.last_picture = Instant::now();
            self.received += 1;
            return Ok(Some(picture));
        }
        let silent = self.last_picture.elapsed();
        if silent < LOST_AFTER {
            return Ok(None);
        }
        Err(MediaError::Ndi(self.feed.current_trouble().unwrap_or(
            NdiError::Vanished {
                name: self.name.clone(),
                seconds: silent.as_secs(),
            },
        )))
    }

    fn give_back(&mut self, rgba: Vec<u8>) {
        self.feed.give_back(rgba);
    }

    fn report(&self) -> String {
        format!("ndi:{}: {} pictures received", self.name, self.received)
    }

    fn black_when_lost(&self) -> bool {
        true
    }
}

/// The NDI sources on the network, for the HUD and the phone page to
/// offer: a thread keeps a finder listening and the list up to date (none
/// while the runtime is missing, looked for again every [`RELOOK`]).
#[derive(Debug)]
pub struct NdiFinder {
    names: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

/// How often the finder's list is read, and how often a missing runtime is
/// looked for again.
const RELIST: Duration = Duration::from_secs(1);
const RELOOK: Duration = Duration::from_secs(10);
/// Sources listed at most.
const MAX_LISTED: usize = 64;

impl NdiFinder {
    /// Starts listening through the first of `libraries` that loads.
    pub fn start(libraries: Vec<PathBuf>) -> Self {
        let names = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (listed, stopped) = (names.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("ndi finder".into())
            .spawn(move || {
                let work = || list(&libraries, &listed, &stopped);
                let failed = |why: Option<NdiError>| tracing::debug!("ndi finder: {why:?}");
                keep_running(&stopped, RELOOK, work, failed);
            });
        if let Err(error) = thread {
            tracing::error!("ndi: no thread to find sources on: {error}");
        }
        Self { names, stop }
    }

    /// The sources seen last, as texture inputs name them (`ndi:NAME`).
    pub fn sources(&self) -> Vec<String> {
        let names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        names.iter().map(|name| format!("ndi:{name}")).collect()
    }
}

impl Drop for NdiFinder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Keeps `names` the finder's sources until told to stop.
fn list(
    libraries: &[PathBuf],
    names: &Mutex<Vec<String>>,
    stop: &AtomicBool,
) -> Result<(), NdiError> {
    let runtime = Runtime::load(libraries, "finder")?;
    // SAFETY: as in `receive`: the SDK's names and signatures, the finder
    // destroyed before the runtime is dropped.
    unsafe {
        let find_create: FindCreateFn = runtime.function("NDIlib_find_create_v2")?;
        let find_sources: FindSources = runtime.function("NDIlib_find_get_current_sources")?;
        let find_destroy: FindDestroy = runtime.function("NDIlib_find_destroy")?;
        let finder = Instance::new(find_create(&FindCreate::local()), find_destroy)
            .ok_or_else(|| NdiError::NoReceiver("finder".into()))?;
        while !stop.load(Ordering::Relaxed) {
            let seen = sources_of(find_sources, &finder);
            let mut listed: Vec<String> = seen
                .into_iter()
                .map(|(name, _)| name)
                .take(MAX_LISTED)
                .collect();
            listed.sort();
            *names.lock().unwrap_or_else(PoisonError::into_inner) = listed;
            feed::pause(stop, RELIST);
        }
    }
    Ok(())
}

/// The sources `finder` sees now, by name.
///
/// # Safety
/// `find_sources` must be the runtime's `NDIlib_find_get_current_sources`
/// and `finder` a live finder of it.
unsafe fn sources_of(find_sources: FindSources, finder: &Instance) -> Vec<(String, Source)> {
    let mut count = 0u32;
    // SAFETY: the caller's; the list is valid until the next call.
    unsafe {
        let listed = find_sources(finder.0, &mut count);
        if listed.is_null() {
            return Vec::new();
        }
        (0..count as usize)
            .map(|i| *listed.add(i))
            .filter(|s| !s.name.is_null())
            .map(|s| (CStr::from_ptr(s.name).to_string_lossy().into_owned(), s))
            .collect()
    }
}

/// `NDIlib_find_create_t`.
#[repr(C)]
struct FindCreate {
    show_local_sources: bool,
    groups: *const c_char,
    extra_ips: *const c_char,
}

impl FindCreate {
    /// Every group's sources, this machine's too.
    fn local() -> Self {
        Self {
            show_local_sources: true,
            groups: std::ptr::null(),
            extra_ips: std::ptr::null(),
        }
    }
}

/// `NDIlib_source_t`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Source {
    name: *const c_char,
    url_address: *const c_char,
}

/// `NDIlib_recv_create_v3_t`.
#[repr(C)]
struct RecvCreate {
    source: Source,
    colour_format: c_int,
    bandwidth: c_int,
    allow_video_fields: bool,
    name: *const c_char,
}

/// `NDIlib_recv_color_format_RGBX_RGBA`.
const RGBX_RGBA: c_int = 2;
/// `NDIlib_recv_bandwidth_highest`.
const HIGHEST: c_int = 100;
/// `NDIlib_frame_type_video` and `_error`.
const VIDEO: c_int = 1;
const ERROR: c_int = 4;

type FindCreateFn = unsafe extern "C" fn(*const FindCreate) -> *mut c_void;
type FindSources = unsafe extern "C" fn(*mut c_void, *mut u32) -> *const Source;
type FindDestroy = unsafe extern "C" fn(*mut c_void);
type RecvCreateFn = unsafe extern "C" fn(*const RecvCreate) -> *mut c_void;
type Capture =
    unsafe extern "C" fn(*mut c_void, *mut VideoFrame, *mut c_void, *mut c_void, u32) -> c_int;
type FreeVideo = unsafe extern "C" fn(*mut c_void, *const VideoFrame);
type RecvDestroy = unsafe extern "C" fn(*mut c_void);

/// One connection: loads the runtime, finds the source, receives until it
/// falls silent for [`LOST_AFTER`] (an error, to look again) or the
/// source is dropped (`Ok`).
fn receive(libraries: &[PathBuf], name: &str, feed: &Feed<NdiError>) -> Result<(), NdiError> {
    let runtime = Runtime::load(libraries, &format!("{name} (in)"))?;
    // SAFETY: each function is looked up by its name and the C signature
    // the SDK's header gives it; the instances are destroyed (by the
    // guards below) before the runtime is dropped at the end.
    unsafe {
        let find_create: FindCreateFn = runtime.function("NDIlib_find_create_v2")?;
        let find_sources: FindSources = runtime.function("NDIlib_find_get_current_sources")?;
        let find_destroy: FindDestroy = runtime.function("NDIlib_find_destroy")?;
        let recv_create: RecvCreateFn = runtime.function("NDIlib_recv_create_v3")?;
        let capture: Capture = runtime.function("NDIlib_recv_capture_v2")?;
        let free_video: FreeVideo = runtime.function("NDIlib_recv_free_video_v2")?;
        let recv_destroy: RecvDestroy = runtime.function("NDIlib_recv_destroy")?;
        let finder = Instance::new(find_create(&FindCreate::local()), find_destroy)
            .ok_or_else(|| NdiError::NoReceiver(name.to_string()))?;
        // The finder keeps listening: wait for the source to be seen.
        let source = loop {
            let seen = sources_of(find_sources, &finder);
            if let Some(source) = chosen(&seen, name) {
                break source;
            }
            let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
            let trouble = NdiError::NotFound {
                name: name.to_string(),
                seen: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            };
            feed.trouble(trouble);
            feed.pause(RETRY);
            if feed.stopped() {
                return Ok(());
            }
        };
        let receiver_name = CString::new("sylva").unwrap_or_default();
        let settings = RecvCreate {
            source,
            colour_format: RGBX_RGBA,
            bandwidth: HIGHEST,
            allow_video_fields: false,
            name: receiver_name.as_ptr(),
        };
        let receiver = Instance::new(recv_create(&settings), recv_destroy)
            .ok_or_else(|| NdiError::NoReceiver(name.to_string()))?;
        tracing::info!("ndi:{name}: receiving");
        let mut last_picture = Instant::now();
        while !feed.stopped() {
            let mut frame = VideoFrame::empty();
            let null = std::ptr::null_mut();
            match capture(receiver.0, &mut frame, null, null, CAPTURE_WAIT_MS) {
                VIDEO => {
                    let picture = copied(&frame, feed.spare());
                    free_video(receiver.0, &frame);
                    if let Some(picture) = picture {
                        feed.hand_over(picture);
                        last_picture = Instant::now();
                    }
                }
                ERROR => break,
                _ => {}
            }
            if last_picture.elapsed() >= LOST_AFTER {
                break;
            }
        }
        if feed.stopped() {
            return Ok(());
        }
        Err(NdiError::Vanished {
            name: name.to_string(),
            seconds: last_picture.elapsed().as_secs(),
        })
    }
}

/// The source called `name`, or else the first whose name holds it
/// (any case).
fn chosen(seen: &[(String, Source)], name: &str) -> Option<Source> {
    let lower = name.to_lowercase();
    let exact = seen.iter().find(|(n, _)| n == name);
    let part = || seen.iter().find(|(n, _)| n.to_lowercase().contains(&lower));
    exact.or_else(part).map(|(_, s)| *s)
}

/// A frame's RGBA rows, top first, into `rgba` (reused); none for a frame
/// of another layout or an impossible size.
fn copied(frame: &VideoFrame, mut rgba: Vec<u8>) -> Option<DecodedImage> {
    let (width, height) = (frame.xres, frame.yres);
    let fits = (1..=MAX_SIDE).contains(&width) && (1..=MAX_SIDE).contains(&height);
    let stride = frame.line_stride_in_bytes;
    let layout = frame.four_cc == FOURCC_RGBA || frame.four_cc == FOURCC_RGBX;
    if !fits || !layout || frame.data.is_null() || stride < width * 4 {
        return None;
    }
    let row = width as usize * 4;
    rgba.clear();
    rgba.reserve(row * height as usize);
    for y in 0..height as usize {
        // SAFETY: the runtime hands `height` rows of `stride` bytes at
        // `data`, valid until the frame is freed, after this copy.
        let line = unsafe { std::slice::from_raw_parts(frame.data.add(y * stride as usize), row) };
        rgba.extend_from_slice(line);
    }
    if frame.four_cc == FOURCC_RGBX {
        rgba.chunks_exact_mut(4).for_each(|pixel| pixel[3] = 255);
    }
    Some(DecodedImage {
        size: [width as u32, height as u32],
        rgba,
    })
}

/// A finder or a receiver, destroyed when dropped.
struct Instance(*mut c_void, unsafe extern "C" fn(*mut c_void));

impl Instance {
    fn new(pointer: *mut c_void, destroy: unsafe extern "C" fn(*mut c_void)) -> Option<Self> {
        (!pointer.is_null()).then_some(Self(pointer, destroy))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: the instance was made by the runtime that made `destroy`
        // and is not used again.
        unsafe { (self.1)(self.0) };
    }
}
