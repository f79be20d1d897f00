//! Syphon out (`--send syphon:NAME`, macOS): the picture as a Syphon
//! server that Resolume, VDMX, MadMapper, TouchDesigner and OBS list
//! beside their other sources. Syphon.framework and Metal are loaded when
//! the sender starts (`base::syphon`), so sylva builds everywhere and runs
//! on a Mac without Syphon; one without it is an error on screen saying
//! where to put it. Each frame, read back on the tap's worker thread, is
//! written into a Metal texture that the server publishes (a GPU copy
//! into the IOSurface its clients read).
//!
//! Syphon answers clients looking for servers on the main thread's run
//! loop: the window's event loop turns it; a headless show turns it each
//! frame ([`turn_main_run_loop`]).

use std::ffi::c_void;

use crate::base::syphon::{self as runtime, Id, Rect, Region, Retained, Runtime};

use super::kinds::{NameError, SenderKind, Target};
use super::tap::{Frame, Sink, SinkError};

/// Why a Syphon server could not start, or dropped a frame.
#[derive(Debug, thiserror::Error)]
pub enum SyphonError {
    /// A name Syphon cannot take.
    #[error(transparent)]
    Name(#[from] NameError),
    /// Syphon or Metal would not load.
    #[error("syphon:{name}: {error}")]
    Runtime {
        /// The server's name.
        name: String,
        /// Why.
        error: runtime::RuntimeError,
    },
    /// A Syphon.framework from before the Metal server.
    #[error("syphon:{0}: this Syphon.framework has no Metal server; a 2023 or later one has")]
    NoMetalServer(String),
    /// An object could not be made.
    #[error("syphon: {0} failed")]
    Failed(&'static str),
    /// The name could not be made an NSString.
    #[error("syphon: the name")]
    Title,
    /// A frame whose bytes do not fill its size.
    #[error("syphon: a frame of {bytes} bytes for {size:?}")]
    FrameBytes {
        /// Bytes given.
        bytes: usize,
        /// The frame's size.
        size: [u32; 2],
    },
    /// Metal gave no command buffer.
    #[error("syphon: no command buffer")]
    NoCommandBuffer,
}

/// `syphon:NAME`: a Syphon server of this name (macOS).
pub const SENDER: SenderKind = SenderKind {
    form: "syphon:NAME (macOS)",
    schemes: &["syphon:"],
    check: check_name,
    missing: if cfg!(target_os = "macos") {
        None
    } else {
        Some(
            "Syphon is macOS'; send NDI instead (ndi:NAME), which Resolume, OBS, TouchDesigner, VDMX and MadMapper receive everywhere",
        )
    },
    open: open_sink,
};

fn open_sink(target: &Target, size: [u32; 2], _fps: f32) -> Result<Box<dyn Sink>, SinkError> {
    Ok(Box::new(SyphonSender::open(target.rest(), size)?))
}

/// `MTLPixelFormatBGRA8Unorm`: what Syphon's surfaces hold, so the
/// publish is a plain blit.
const BGRA8_UNORM: usize = 80;
/// `MTLTextureUsageShaderRead`.
const USAGE_SHADER_READ: usize = 1;
/// The publishing method of Syphon's Metal server (Syphon 5 and older
/// copies have no Metal server: they are refused by name).
const PUBLISH: &str = "publishFrameTexture:onCommandBuffer:imageRegion:flipped:";

/// The longest server name.
pub const MAX_NAME: usize = 200;

/// Checks a server name asked for (`syphon:NAME`).
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_NAME || name.contains('\0') {
        return Err(NameError::Syphon(name.to_string()));
    }
    Ok(())
}

/// Takes `object`, made (+1) for this sender (null: `what` failed).
fn retained(
    runtime: &'static Runtime,
    object: Id,
    what: &'static str,
) -> Result<Retained, SyphonError> {
    Retained::new(runtime, object).ok_or(SyphonError::Failed(what))
}

/// A Syphon server of frames of one size.
pub struct SyphonSender {
    runtime: &'static Runtime,
    // Dropped in this order: the server stops before its texture, queue
    // and device go.
    server: Retained,
    texture: Retained,
    queue: Retained,
    device: Retained,
    size: [u32; 2],
    bgra: Vec<u8>,
}

// SAFETY: Syphon's Metal server and Metal's device, queue and textures
// may be used from any thread; each frame's command buffer stays on the
// worker thread that owns the sender.
unsafe impl Send for SyphonSender {}

impl SyphonSender {
    /// Starts a server called `name` for frames of `size`.
    pub fn open(name: &str, size: [u32; 2]) -> Result<Self, SyphonError> {
        check_name(name)?;
        let runtime = runtime::runtime().map_err(|error| SyphonError::Runtime {
            name: name.to_string(),
            error,
        })?;
        let class = runtime
            .class_answering("SyphonMetalServer", PUBLISH)
            .ok_or_else(|| SyphonError::NoMetalServer(name.to_string()))?;
        runtime.pooled(|| {
            // SAFETY: each message is sent with its method's signature;
            // every object made is held by a `Retained` at once, so an
            // error on the way releases what was made.
            unsafe {
                let device = retained(runtime, (runtime.default_device)(), "a Metal device")?;
                let queue = retained(
                    runtime,
                    runtime.call(device.object, "newCommandQueue"),
                    "a Metal command queue",
                )?;
                let texture =
                    retained(runtime, texture(runtime, device.object, size), "a texture")?;
                let title = runtime.string(name).ok_or(SyphonError::Title)?;
                let alloc = runtime.call(class, "alloc");
                let init: unsafe extern "C" fn(Id, Id, Id, Id, Id) -> Id = runtime.message();
                let made = init(
                    alloc,
                    runtime.selector("initWithName:device:options:"),
                    title,
                    device.object,
                    std::ptr::null_mut(),
                );
                let mut server = retained(runtime, made, "starting the server")?;
                server.stop_when_dropped();
                tracing::info!("syphon: serving {name:?}, {}x{}", size[0], size[1]);
                Ok(Self {
                    runtime,
                    server,
                    texture,
                    queue,
                    device,
                    size,
                    bgra: Vec::new(),
                })
            }
        })
    }
}

/// A BGRA texture of `size` on `device` (+1, or null).
///
/// # Safety
/// `device` must be a live `MTLDevice`; call inside an autorelease pool.
unsafe fn texture(runtime: &Runtime, device: Id, size: [u32; 2]) -> Id {
    let Some(descriptors) = runtime.class("MTLTextureDescriptor") else {
        return std::ptr::null_mut();
    };
    // SAFETY: signatures from MTLTextureDescriptor.h and MTLDevice.h.
    unsafe {
        let describe: unsafe extern "C" fn(Id, Id, usize, usize, usize, u8) -> Id =
            runtime.message();
        let descriptor = describe(
            descriptors,
            runtime.selector("texture2DDescriptorWithPixelFormat:width:height:mipmapped:"),
            BGRA8_UNORM,
            size[0] as usize,
            size[1] as usize,
            0,
        );
        if descriptor.is_null() {
            return std::ptr::null_mut();
        }
        let set_usage: unsafe extern "C" fn(Id, Id, usize) = runtime.message();
        set_usage(descriptor, runtime.selector("setUsage:"), USAGE_SHADER_READ);
        let make: unsafe extern "C" fn(Id, Id, Id) -> Id = runtime.message();
        make(
            device,
            runtime.selector("newTextureWithDescriptor:"),
            descriptor,
        )
    }
}

impl Sink for SyphonSender {
    fn send(&mut self, frame: &Frame) -> Result<(), SinkError> {
        let runtime = self.runtime;
        let [width, height] = frame.size.map(|side| side as usize);
        if frame.rgba.len() != width * height * 4 {
            return Err(SyphonError::FrameBytes {
                bytes: frame.rgba.len(),
                size: frame.size,
            }
            .into());
        }
        if frame.size != self.size {
            // SAFETY: the device is live; inside a pool.
            let made =
                runtime.pooled(|| unsafe { texture(runtime, self.device.object, frame.size) });
            self.texture = retained(runtime, made, "a texture")?;
            self.size = frame.size;
        }
        frame.bgra_into(&mut self.bgra);
        runtime.pooled(|| {
            // SAFETY: signatures from MTLTexture.h, MTLCommandQueue.h,
            // MTLCommandBuffer.h and SyphonMetalServer.h; the bytes are
            // `height` rows of `4 * width`.
            unsafe {
                let replace: unsafe extern "C" fn(Id, Id, Region, usize, *const c_void, usize) =
                    runtime.message();
                replace(
                    self.texture.object,
                    runtime.selector("replaceRegion:mipmapLevel:withBytes:bytesPerRow:"),
                    Region {
                        origin: [0, 0, 0],
                        size: [width, height, 1],
                    },
                    0,
                    self.bgra.as_ptr().cast(),
                    width * 4,
                );
                let commands = runtime.call(self.queue.object, "commandBuffer");
                if commands.is_null() {
                    return Err(SyphonError::NoCommandBuffer.into());
                }
                let publish: unsafe extern "C" fn(Id, Id, Id, Id, Rect, u8) = runtime.message();
                publish(
                    self.server.object,
                    runtime.selector(PUBLISH),
                    self.texture.object,
                    commands,
                    Rect {
                        xywh: [0.0, 0.0, width as f64, height as f64],
                    },
                    0,
                );
                runtime.call(commands, "commit");
                // The copy into the server's surface runs on the GPU: the
                // texture is written again only once it has.
                runtime.call(commands, "waitUntilCompleted");
                Ok(())
            }
        })
    }
}

/// Turns the main thread's run loop once without waiting, so Syphon's
/// clients find the servers of a show that has no window (call it on the
/// main thread; it does nothing where Syphon is not loaded).
pub fn turn_main_run_loop() {
    if let Some(runtime) = runtime::loaded() {
        runtime.turn_run_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syphon_is_looked_for_beside_sylva_then_in_the_frameworks_folders() {
        let candidates = runtime::framework_candidates();
        let system = std::path::Path::new("/Library/Frameworks/Syphon.framework");
        let at = candidates.iter().position(|c| c == system);
        let beside = candidates
            .iter()
            .position(|c| c.ends_with("../Frameworks/Syphon.framework"));
        assert!(
            beside.is_some_and(|b| at.is_some_and(|a| b < a)),
            "{candidates:?}"
        );
        if !cfg!(target_os = "macos") {
            let refused = SyphonSender::open("sylva", [8, 8])
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(refused.contains("macOS"), "{refused}");
            assert!(runtime::loaded().is_none());
            turn_main_run_loop();
        }
        assert!(SyphonSender::open("", [8, 8]).is_err());
    }
}
