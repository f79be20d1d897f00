//! Syphon in (`syphon:SERVER NAME`, macOS): another application's Syphon
//! server (Resolume, VDMX, MadMapper, TouchDesigner, another sylva) as a
//! texture source, found by its application and name as Syphon lists them
//! (`App - Name`), or any part of that in any case; `syphon:` alone takes
//! the first server. Syphon.framework is loaded at run time, as for the
//! sender (`base::syphon`); a thread of the source's own makes a Metal
//! client and copies each new frame out of its texture. On other systems,
//! or a Mac without Syphon, the source is an error on screen. A server
//! that is not there, or goes, is black and an error, and is looked for
//! again every [`RETRY`].

use std::time::Duration;

use super::feed::{FedSource, Feed};
use super::media::MediaError;
use super::source::SourceKind;

/// How often a server that is not there is looked for again.
pub const RETRY: Duration = Duration::from_secs(2);
/// The longest server name looked for.
const MAX_NAME: usize = 256;

/// `syphon:SERVER NAME`, or `syphon:` for the first server.
pub const SOURCE: SourceKind = SourceKind {
    form: "syphon:SERVER NAME",
    names: |name| name.starts_with("syphon:"),
    well_formed: |name| {
        name.strip_prefix("syphon:")
            .is_some_and(|server| server.len() <= MAX_NAME && !server.contains('\0'))
    },
    file: false,
    open: |opening| Box::new(open(opening.name)),
};

/// Receives the server source `name` (`syphon:…`) names, on a thread of
/// its own.
fn open(name: &str) -> FedSource {
    let wanted = name.trim_start_matches("syphon:").to_lowercase();
    let work = move |feed: &Feed<String>| receive(&wanted, feed);
    FedSource::start(name, "syphon in", RETRY, work, MediaError::Syphon)
}

#[cfg(target_os = "macos")]
use client::receive;

#[cfg(not(target_os = "macos"))]
fn receive(_wanted: &str, _feed: &Feed<String>) -> Result<(), String> {
    Err("Syphon is macOS'; receive NDI instead (ndi:NAME), which every Syphon application also sends".into())
}

#[cfg(target_os = "macos")]
mod client {
    //! The receiving thread: the server found in Syphon's directory, a
    //! `SyphonMetalClient` made for it, each new frame's texture read with
    //! `getBytes` into RGBA.

    use std::ffi::{CStr, c_char, c_void};
    use std::time::{Duration, Instant};

    use super::super::feed::Feed;
    use super::super::still::DecodedImage;
    use crate::base::syphon::{Id, Region, Retained, Runtime, runtime};

    /// Frames looked for a second, at most.
    const POLL_FPS: f64 = 60.0;
    /// The largest picture taken, a side.
    const MAX_SIDE: usize = 8192;
    /// `MTLPixelFormatBGRA8Unorm` and its sRGB twin, what Syphon serves.
    const BGRA: [usize; 2] = [80, 81];
    /// `MTLPixelFormatRGBA8Unorm` and its sRGB twin.
    const RGBA: [usize; 2] = [70, 71];

    /// Receives the server `wanted` (lowercase) names until the feed
    /// stops (`Ok`) or the server is gone (`Err`, to be looked for again).
    pub fn receive(wanted: &str, feed: &Feed<String>) -> Result<(), String> {
        let runtime = runtime().map_err(|e| e.to_string())?;
        let client = runtime.pooled(|| connect(runtime, wanted))?;
        let period = Duration::from_secs_f64(1.0 / POLL_FPS);
        loop {
            let started = Instant::now();
            if feed.stopped() {
                return Ok(());
            }
            let picture = runtime.pooled(|| {
                // SAFETY: the client is live; both answer with a BOOL.
                let (valid, new) = unsafe {
                    let ask: unsafe extern "C" fn(Id, Id) -> u8 = runtime.message();
                    (
                        ask(client.object, runtime.selector("isValid")) != 0,
                        ask(client.object, runtime.selector("hasNewFrame")) != 0,
                    )
                };
                if !valid {
                    return Err("the server stopped".to_string());
                }
                Ok(if new {
                    frame(runtime, &client, feed)
                } else {
                    None
                })
            })?;
            if let Some(picture) = picture {
                feed.hand_over(picture);
            }
            feed.pause(period.saturating_sub(started.elapsed()));
        }
    }

    /// A client of the first server whose `App - Name` holds `wanted`.
    fn connect(runtime: &'static Runtime, wanted: &str) -> Result<Retained, String> {
        let directory_class = runtime
            .class("SyphonServerDirectory")
            .ok_or("Syphon.framework has no server directory")?;
        let client_class = runtime
            .class("SyphonMetalClient")
            .ok_or("Syphon.framework has no Metal client (a 2023 or later one has)")?;
        // SAFETY: each message is sent with its signature from Syphon's
        // and Foundation's headers, to objects they return.
        unsafe {
            let directory = runtime.call(directory_class, "sharedDirectory");
            let servers = runtime.call(directory, "servers");
            let count: unsafe extern "C" fn(Id, Id) -> usize = runtime.message();
            let at: unsafe extern "C" fn(Id, Id, usize) -> Id = runtime.message();
            let n = if servers.is_null() {
                0
            } else {
                count(servers, runtime.selector("count"))
            };
            let description = (0..n)
                .map(|i| at(servers, runtime.selector("objectAtIndex:"), i))
                .find(|server| title(runtime, *server).to_lowercase().contains(wanted))
                .ok_or_else(|| format!("no Syphon server named {wanted:?} is running"))?;
            let device =
                Retained::new(runtime, (runtime.default_device)()).ok_or("no Metal device")?;
            let alloc = runtime.call(client_class, "alloc");
            let init: unsafe extern "C" fn(Id, Id, Id, Id, Id, Id) -> Id = runtime.message();
            let made = init(
                alloc,
                runtime.selector("initWithServerDescription:device:options:newFrameHandler:"),
                description,
                device.object,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            let mut client = Retained::new(runtime, made).ok_or("no Syphon client")?;
            client.stop_when_dropped();
            Ok(client)
        }
    }

    /// A server description's `App - Name`, as Syphon's own lists show it.
    ///
    /// # Safety
    /// `description` must be a server description (an `NSDictionary`).
    unsafe fn title(runtime: &Runtime, description: Id) -> String {
        let text = |key: &str| {
            let Some(key) = runtime.string(key) else {
                return String::new();
            };
            // SAFETY: as the caller promises; the values are NSStrings.
            unsafe {
                let get: unsafe extern "C" fn(Id, Id, Id) -> Id = runtime.message();
                let value = get(description, runtime.selector("objectForKey:"), key);
                if value.is_null() {
                    return String::new();
                }
                let utf8: unsafe extern "C" fn(Id, Id) -> *const c_char = runtime.message();
                let c = utf8(value, runtime.selector("UTF8String"));
                if c.is_null() {
                    return String::new();
                }
                CStr::from_ptr(c).to_string_lossy().into_owned()
            }
        };
        let (app, name) = (
            text("SyphonServerDescriptionAppNameKey"),
            text("SyphonServerDescriptionNameKey"),
        );
        match (app.is_empty(), name.is_empty()) {
            (false, false) => format!("{app} - {name}"),
            (true, _) => name,
            (false, true) => app,
        }
    }

    /// The client's newest frame as RGBA, in a buffer of `feed`'s.
    fn frame(
        runtime: &'static Runtime,
        client: &Retained,
        feed: &Feed<String>,
    ) -> Option<DecodedImage> {
        // SAFETY: `newFrameImage` returns a texture (+1), held by
        // `Retained`; its size and format are NSUIntegers; `getBytes`
        // writes `bytesPerRow` × height bytes into a buffer that long.
        unsafe {
            let texture = Retained::new(runtime, runtime.call(client.object, "newFrameImage"))?;
            let number: unsafe extern "C" fn(Id, Id) -> usize = runtime.message();
            let width = number(texture.object, runtime.selector("width"));
            let height = number(texture.object, runtime.selector("height"));
            let format = number(texture.object, runtime.selector("pixelFormat"));
            let swap = match format {
                f if BGRA.contains(&f) => true,
                f if RGBA.contains(&f) => false,
                _ => return None,
            };
            if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
                return None;
            }
            let mut rgba = feed.spare();
            rgba.resize(width * height * 4, 0);
            let get: unsafe extern "C" fn(Id, Id, *mut c_void, usize, Region, usize) =
                runtime.message();
            let region = Region {
                origin: [0; 3],
                size: [width, height, 1],
            };
            get(
                texture.object,
                runtime.selector("getBytes:bytesPerRow:fromRegion:mipmapLevel:"),
                rgba.as_mut_ptr().cast(),
                width * 4,
                region,
                0,
            );
            if swap {
                rgba.chunks_exact_mut(4).for_each(|texel| texel.swap(0, 2));
            }
            Some(DecodedImage {
                size: [width as u32, height as u32],
                rgba,
            })
        }
    }
}
