//! Screen and window capture on macOS through Quartz (CoreGraphics),
//! loaded at run time as Syphon is, so nothing links against an SDK
//! whose capture calls move from version to version: the main display
//! with `CGDisplayCreateImage`, or a window found by its title or its
//! application's name among those on screen with
//! `CGWindowListCreateImage`. The system asks the user once for screen
//! recording permission; without it the pictures are the desktop alone.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libloading::Library;

use super::{CAPTURE_FPS, Captured};
use crate::engine::inputs::feed::Feed;
use crate::engine::inputs::still::DecodedImage;

/// The largest side captured.
const MAX_SIDE: usize = 8192;
/// Windows looked at, at most, when finding one by title.
const MAX_WINDOWS: isize = 4096;
/// `kCGWindowListOptionOnScreenOnly`.
const ON_SCREEN: u32 = 1;
/// `kCGWindowListOptionIncludingWindow`.
const INCLUDING_WINDOW: u32 = 8;
/// `kCGWindowImageBoundsIgnoreFraming`.
const IGNORE_FRAMING: u32 = 1;
/// `kCFStringEncodingUTF8`.
const UTF8: u32 = 0x0800_0100;
/// `kCFNumberSInt64Type`.
const SINT64: isize = 4;

type Ref = *const c_void;

/// `CGRect`: origin and size.
#[repr(C)]
#[derive(Clone, Copy)]
struct Rect([f64; 4]);

/// The Quartz and CoreFoundation calls capture makes.
struct Quartz {
    main_display: unsafe extern "C" fn() -> u32,
    display_image: unsafe extern "C" fn(u32) -> Ref,
    window_info: unsafe extern "C" fn(u32, u32) -> Ref,
    window_image: unsafe extern "C" fn(Rect, u32, u32, u32) -> Ref,
    image_size: [unsafe extern "C" fn(Ref) -> usize; 3],
    image_provider: unsafe extern "C" fn(Ref) -> Ref,
    provider_data: unsafe extern "C" fn(Ref) -> Ref,
    data_bytes: unsafe extern "C" fn(Ref) -> *const u8,
    data_length: unsafe extern "C" fn(Ref) -> isize,
    array_count: unsafe extern "C" fn(Ref) -> isize,
    array_at: unsafe extern "C" fn(Ref, isize) -> Ref,
    dictionary_get: unsafe extern "C" fn(Ref, Ref) -> Ref,
    string_c: unsafe extern "C" fn(Ref, *mut c_char, isize, u32) -> u8,
    number_value: unsafe extern "C" fn(Ref, isize, *mut c_void) -> u8,
    release: unsafe extern "C" fn(Ref),
    /// `kCGWindowName`, `kCGWindowOwnerName`, `kCGWindowNumber`.
    keys: [Ref; 3],
    _libraries: [Library; 2],
}

// SAFETY: the functions may be called from any thread; the keys are
// immutable constant strings.
unsafe impl Send for Quartz {}
// SAFETY: as above.
unsafe impl Sync for Quartz {}

static QUARTZ: OnceLock<Result<Quartz, String>> = OnceLock::new();

/// CoreGraphics and CoreFoundation, loaded once.
fn quartz() -> Result<&'static Quartz, String> {
    QUARTZ.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Quartz, String> {
    let open = |name: &str| {
        let path = format!("/System/Library/Frameworks/{name}.framework/{name}");
        // SAFETY: system frameworks run no code a load can break.
        unsafe { Library::new(&path) }.map_err(|e| format!("{path}: {e}"))
    };
    let (graphics, foundation) = (open("CoreGraphics")?, open("CoreFoundation")?);
    let key = |name: &[u8]| {
        // SAFETY: the symbol is a `CFStringRef` constant.
        symbol::<*const Ref>(&graphics, name).map(|at| unsafe { *at })
    };
    Ok(Quartz {
        main_display: symbol(&graphics, b"CGMainDisplayID\0")?,
        display_image: symbol(&graphics, b"CGDisplayCreateImage\0")?,
        window_info: symbol(&graphics, b"CGWindowListCopyWindowInfo\0")?,
        window_image: symbol(&graphics, b"CGWindowListCreateImage\0")?,
        image_size: [
            symbol(&graphics, b"CGImageGetWidth\0")?,
            symbol(&graphics, b"CGImageGetHeight\0")?,
            symbol(&graphics, b"CGImageGetBytesPerRow\0")?,
        ],
        image_provider: symbol(&graphics, b"CGImageGetDataProvider\0")?,
        provider_data: symbol(&graphics, b"CGDataProviderCopyData\0")?,
        data_bytes: symbol(&foundation, b"CFDataGetBytePtr\0")?,
        data_length: symbol(&foundation, b"CFDataGetLength\0")?,
        array_count: symbol(&foundation, b"CFArrayGetCount\0")?,
        array_at: symbol(&foundation, b"CFArrayGetValueAtIndex\0")?,
        dictionary_get: symbol(&foundation, b"CFDictionaryGetValue\0")?,
        string_c: symbol(&foundation, b"CFStringGetCString\0")?,
        number_value: symbol(&foundation, b"CFNumberGetValue\0")?,
        release: symbol(&foundation, b"CFRelease\0")?,
        keys: [
            key(b"kCGWindowName\0")?,
            key(b"kCGWindowOwnerName\0")?,
            key(b"kCGWindowNumber\0")?,
        ],
        _libraries: [graphics, foundation],
    })
}

/// The symbol `name` of `library` as a `T` (a function pointer of its C
/// type, from Apple's headers, or a constant's address).
fn symbol<T: Copy>(library: &Library, name: &[u8]) -> Result<T, String> {
    // SAFETY: every caller names `T` as the symbol's C type.
    unsafe { library.get::<T>(name) }
        .map(|found| *found)
        .map_err(|e| e.to_string())
}

/// Captures `what` until told to stop (`Ok`) or it fails.
pub fn capture(_display: Option<&str>, what: &Captured, feed: &Feed<String>) -> Result<(), String> {
    let quartz = quartz()?;
    let window = match what {
        Captured::Screen => None,
        Captured::Window(title) => Some(
            quartz
                .find_window(title)
                .ok_or_else(|| format!("no window on screen whose title holds {title:?}"))?,
        ),
    };
    let period = Duration::from_secs_f64(1.0 / CAPTURE_FPS);
    while !feed.stopped() {
        let started = Instant::now();
        let picture = quartz.grab(window, feed.spare())?;
        feed.hand_over(picture);
        if let Some(rest) = period.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Ok(())
}

impl Quartz {
    /// One picture of the main display (`None`) or of window `number`.
    fn grab(&self, window: Option<u32>, mut rgba: Vec<u8>) -> Result<DecodedImage, String> {
        // SAFETY: every object made (+1) here is released below; the
        // bytes are read within the data's length.
        unsafe {
            let image = match window {
                None => (self.display_image)((self.main_display)()),
                // A null rectangle: the window's own bounds.
                Some(number) => (self.window_image)(
                    Rect([f64::INFINITY, f64::INFINITY, 0.0, 0.0]),
                    INCLUDING_WINDOW,
                    number,
                    IGNORE_FRAMING,
                ),
            };
            if image.is_null() {
                return Err(
                    "no picture of it (the window closed, or no screen recording permission)"
                        .into(),
                );
            }
            let [width, height, row] = self.image_size.map(|f| f(image));
            let data = (self.provider_data)((self.image_provider)(image));
            (self.release)(image);
            if data.is_null() {
                return Err("its picture has no pixels".into());
            }
            let (bytes, length) = ((self.data_bytes)(data), (self.data_length)(data));
            let fits = width > 0
                && height > 0
                && width <= MAX_SIDE
                && height <= MAX_SIDE
                && row >= width * 4
                && usize::try_from(length).is_ok_and(|l| l >= row * height);
            if fits {
                rgba.resize(width * height * 4, 0);
                for (y, out) in rgba.chunks_exact_mut(width * 4).enumerate() {
                    let source = std::slice::from_raw_parts(bytes.add(y * row), width * 4);
                    // 32-bit little-endian, alpha first: B, G, R, A.
                    for (texel, from) in out.chunks_exact_mut(4).zip(source.chunks_exact(4)) {
                        texel.copy_from_slice(&[from[2], from[1], from[0], 255]);
                    }
                }
            }
            (self.release)(data);
            if !fits {
                return Err(format!(
                    "a picture of {width}x{height} this capture does not read"
                ));
            }
            Ok(DecodedImage {
                size: [width as u32, height as u32],
                rgba,
            })
        }
    }

    /// The number of the first window on screen whose title or
    /// application's name holds `title` (lowercase).
    fn find_window(&self, title: &str) -> Option<u32> {
        // SAFETY: the list is released below; its entries are
        // dictionaries of CoreFoundation values, read by their types.
        unsafe {
            let list = (self.window_info)(ON_SCREEN, 0);
            if list.is_null() {
                return None;
            }
            let count = (self.array_count)(list).min(MAX_WINDOWS);
            let found = (0..count).find_map(|i| {
                let entry = (self.array_at)(list, i);
                let named = [self.keys[0], self.keys[1]].iter().any(|key| {
                    let value = (self.dictionary_get)(entry, *key);
                    let mut text = [0 as c_char; 512];
                    !value.is_null()
                        && (self.string_c)(value, text.as_mut_ptr(), text.len() as isize, UTF8) != 0
                        && std::ffi::CStr::from_ptr(text.as_ptr())
                            .to_string_lossy()
                            .to_lowercase()
                            .contains(title)
                });
                let number = (self.dictionary_get)(entry, self.keys[2]);
                let mut value = 0i64;
                let read = !number.is_null()
                    && (self.number_value)(number, SINT64, (&mut value as *mut i64).cast()) != 0;
                (named && read).then(|| u32::try_from(value).ok()).flatten()
            });
            (self.release)(list);
            found
        }
    }
}
