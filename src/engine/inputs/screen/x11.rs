//! Screen and window capture from the X server: the root window, or a window found by
//! its title in the tree, read with `GetImage` (32 bits a pixel, in
//! the order the visual's masks give).

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt, ImageFormat, Window};

use super::{CAPTURE_FPS, Captured};
use crate::engine::inputs::feed::Feed;
use crate::engine::inputs::still::DecodedImage;

/// Windows looked at, at most, when finding one by title.
const MAX_WINDOWS: usize = 4096;
/// The largest side captured.
const MAX_SIDE: u16 = 8192;

/// Captures `what` until told to stop (`Ok`) or it fails.
pub fn capture(display: Option<&str>, what: &Captured, feed: &Feed<String>) -> Result<(), String> {
    let (connection, screen_index) =
        x11rb::connect(display).map_err(|e| format!("no X display ({e})"))?;
    let screen = connection
        .setup()
        .roots
        .get(screen_index)
        .ok_or("the X display has no screen")?;
    let root = screen.root;
    let masks = (screen.allowed_depths.iter())
        .flat_map(|d| d.visuals.iter())
        .find(|v| v.visual_id == screen.root_visual)
        .map(|v| [v.red_mask, v.green_mask, v.blue_mask])
        .ok_or("the X screen's visual is not listed")?;
    let window = match what {
        Captured::Screen => root,
        Captured::Window(title) => find_window(&connection, root, title)?
            .ok_or_else(|| format!("no window whose title holds {title:?}"))?,
    };
    let period = Duration::from_secs_f64(1.0 / CAPTURE_FPS);
    while !feed.stopped() {
        let started = Instant::now();
        let geometry = (connection.get_geometry(window).map_err(|e| e.to_string())?)
            .reply()
            .map_err(|e| format!("the window went away ({e})"))?;
        let (width, height) = (geometry.width.min(MAX_SIDE), geometry.height.min(MAX_SIDE));
        if width == 0 || height == 0 {
            return Err("an empty window".into());
        }
        let image = (connection.get_image(ImageFormat::Z_PIXMAP, window, 0, 0, width, height, !0))
            .map_err(|e| e.to_string())?
            .reply()
            .map_err(|e| format!("cannot read the window's pixels ({e}); is it on screen?"))?;
        let rgba = rgba_of(&image.data, [width, height], masks, feed.spare()).ok_or_else(|| {
            format!(
                "a picture of depth {} this capture does not read",
                image.depth
            )
        })?;
        feed.hand_over(DecodedImage {
            size: [u32::from(width), u32::from(height)],
            rgba,
        });
        if let Some(rest) = period.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Ok(())
}

/// The first window under `root` whose title (`_NET_WM_NAME`, else
/// `WM_NAME`) holds `title` (lowercase), breadth first.
fn find_window(
    connection: &impl Connection,
    root: Window,
    title: &str,
) -> Result<Option<Window>, String> {
    let atom = |name: &[u8]| {
        let cookie = connection.intern_atom(false, name).ok()?;
        cookie.reply().ok().map(|reply| reply.atom)
    };
    let (utf8, net_name) = (atom(b"UTF8_STRING"), atom(b"_NET_WM_NAME"));
    let mut queue = std::collections::VecDeque::from([root]);
    let mut looked = 0;
    while let Some(window) = queue.pop_front() {
        looked += 1;
        if looked > MAX_WINDOWS {
            break;
        }
        let names = [
            net_name.zip(utf8),
            Some((AtomEnum::WM_NAME.into(), AtomEnum::STRING.into())),
        ];
        for (property, kind) in names.into_iter().flatten() {
            let Ok(cookie) = connection.get_property(false, window, property, kind, 0, 256) else {
                continue;
            };
            if let Ok(reply) = cookie.reply()
                && String::from_utf8_lossy(&reply.value)
                    .to_lowercase()
                    .contains(title)
            {
                return Ok(Some(window));
            }
        }
        let tree = (connection.query_tree(window).map_err(|e| e.to_string())?).reply();
        if let Ok(tree) = tree {
            queue.extend(tree.children);
        }
    }
    Ok(None)
}

/// `data`, 32-bit pixels of `size` whose colours sit where `masks`
/// (red, green, blue) say, as RGBA rows into `rgba` (reused); none
/// when the data is not that.
pub fn rgba_of(data: &[u8], size: [u16; 2], masks: [u32; 3], mut rgba: Vec<u8>) -> Option<Vec<u8>> {
    let pixels = usize::from(size[0]) * usize::from(size[1]);
    if data.len() < pixels * 4 || masks.iter().any(|m| m.count_ones() != 8) {
        return None;
    }
    let shifts = masks.map(u32::trailing_zeros);
    rgba.clear();
    rgba.reserve(pixels * 4);
    for pixel in data.chunks_exact(4).take(pixels) {
        let value = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], pixel[3]]);
        rgba.extend(shifts.map(|shift| (value >> shift) as u8));
        rgba.push(255);
    }
    Some(rgba)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bgrx_pixels_read_as_rgba() {
        let data = [0x30, 0x20, 0x10, 0x00, 0x03, 0x02, 0x01, 0xff];
        let masks = [0x00ff_0000, 0x0000_ff00, 0x0000_00ff];
        let rgba = rgba_of(&data, [2, 1], masks, Vec::new());
        assert_eq!(
            rgba,
            Some(vec![0x10, 0x20, 0x30, 255, 0x01, 0x02, 0x03, 255])
        );
        assert_eq!(
            rgba_of(&data, [3, 1], masks, Vec::new()),
            None,
            "too little data"
        );
    }
}
