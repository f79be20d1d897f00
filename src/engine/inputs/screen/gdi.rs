//! Screen and window capture on Windows through GDI: the primary screen
//! copied with `BitBlt`, or a window found by its title among the visible
//! top-level windows and drawn with `PrintWindow` (which reaches a window
//! behind others too), read back with `GetDIBits` as top-down BGRA.

use std::time::{Duration, Instant};

use windows::Win32::Foundation::{HWND, LPARAM, RECT};
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CreateCompatibleBitmap, CreateCompatibleDC,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, GetDIBits, HDC, ReleaseDC, SRCCOPY,
    SelectObject,
};
use windows::Win32::Storage::Xps::{PRINT_WINDOW_FLAGS, PrintWindow};
use windows::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GetClientRect, GetSystemMetrics, GetWindowTextW, IsIconic, IsWindow,
    IsWindowVisible, SM_CXSCREEN, SM_CYSCREEN,
};
use windows::core::BOOL;

use super::{CAPTURE_FPS, Captured};
use crate::engine::inputs::feed::Feed;
use crate::engine::inputs::still::DecodedImage;

/// Windows looked at, at most, when finding one by title.
const MAX_WINDOWS: usize = 4096;
/// The largest side captured.
const MAX_SIDE: i32 = 8192;
/// `PW_RENDERFULLCONTENT`: a window's whole content, DirectX-drawn too.
const FULL_CONTENT: u32 = 2;

/// Captures `what` until told to stop (`Ok`) or it fails.
pub fn capture(_display: Option<&str>, what: &Captured, feed: &Feed<String>) -> Result<(), String> {
    let window = match what {
        Captured::Screen => None,
        Captured::Window(title) => Some(
            find_window(title).ok_or_else(|| format!("no window whose title holds {title:?}"))?,
        ),
    };
    let period = Duration::from_secs_f64(1.0 / CAPTURE_FPS);
    while !feed.stopped() {
        let started = Instant::now();
        let picture = grab(window, feed.spare())?;
        feed.hand_over(picture);
        if let Some(rest) = period.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Ok(())
}

/// One picture of the screen (`None`) or of `window`, into `rgba`.
fn grab(window: Option<HWND>, mut rgba: Vec<u8>) -> Result<DecodedImage, String> {
    // SAFETY: every GDI object made here is released below, on every
    // path; the bitmap is read into a buffer as long as its rows.
    unsafe {
        let (width, height) = match window {
            None => (GetSystemMetrics(SM_CXSCREEN), GetSystemMetrics(SM_CYSCREEN)),
            Some(window) => {
                if !IsWindow(Some(window)).as_bool() {
                    return Err("the window went away".into());
                }
                if IsIconic(window).as_bool() {
                    return Err("the window is minimised".into());
                }
                let mut rect = RECT::default();
                GetClientRect(window, &mut rect).map_err(|e| e.to_string())?;
                (rect.right - rect.left, rect.bottom - rect.top)
            }
        };
        let (width, height) = (width.min(MAX_SIDE), height.min(MAX_SIDE));
        if width <= 0 || height <= 0 {
            return Err("an empty window".into());
        }
        let source: HDC = GetDC(window);
        if source.is_invalid() {
            return Err("no drawing context for it".into());
        }
        let memory = CreateCompatibleDC(Some(source));
        let bitmap = CreateCompatibleBitmap(source, width, height);
        let previous = SelectObject(memory, bitmap.into());
        let copied = match window {
            None => BitBlt(memory, 0, 0, width, height, Some(source), 0, 0, SRCCOPY).is_ok(),
            Some(window) => PrintWindow(window, memory, PRINT_WINDOW_FLAGS(FULL_CONTENT)).as_bool(),
        };
        let mut info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: width,
                // Negative: rows top first.
                biHeight: -height,
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        rgba.resize(width as usize * height as usize * 4, 0);
        let rows = GetDIBits(
            memory,
            bitmap,
            0,
            height as u32,
            Some(rgba.as_mut_ptr().cast()),
            &mut info,
            DIB_RGB_COLORS,
        );
        SelectObject(memory, previous);
        DeleteObject(bitmap.into()).ok().ok();
        DeleteDC(memory).ok().ok();
        ReleaseDC(window, source);
        if !copied || rows != height {
            return Err("cannot read its pixels".into());
        }
        for texel in rgba.chunks_exact_mut(4) {
            texel.swap(0, 2);
            texel[3] = 255;
        }
        Ok(DecodedImage {
            size: [width as u32, height as u32],
            rgba,
        })
    }
}

/// The first visible top-level window whose title holds `title`
/// (lowercase).
fn find_window(title: &str) -> Option<HWND> {
    let mut windows: Vec<HWND> = Vec::new();
    unsafe extern "system" fn each(window: HWND, list: LPARAM) -> BOOL {
        // SAFETY: `list` is the vector passed below, alive for the call.
        let windows = unsafe { &mut *(list.0 as *mut Vec<HWND>) };
        windows.push(window);
        BOOL::from(windows.len() < MAX_WINDOWS)
    }
    // SAFETY: the callback only pushes into `windows`, which outlives the
    // enumeration.
    unsafe { EnumWindows(Some(each), LPARAM(&mut windows as *mut Vec<HWND> as isize)).ok() };
    windows.into_iter().find(|window| {
        let mut text = [0u16; 512];
        // SAFETY: the buffer's length is passed with it.
        let (visible, length) = unsafe {
            (
                IsWindowVisible(*window).as_bool(),
                GetWindowTextW(*window, &mut text),
            )
        };
        let length = usize::try_from(length).unwrap_or(0).min(text.len());
        visible
            && String::from_utf16_lossy(&text[..length])
                .to_lowercase()
                .contains(title)
    })
}
