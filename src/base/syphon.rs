//! The Objective-C runtime, Metal and Syphon.framework, loaded when a
//! Syphon sender or receiver starts rather than linked: sylva builds on
//! every system and runs on a Mac without Syphon installed. Messages go through
//! `objc_msgSend` cast to each method's exact type (never as a variadic
//! call, which arm64 passes differently).

use std::ffi::{CString, c_void};
use std::path::PathBuf;
use std::sync::OnceLock;

use libloading::Library;

/// An Objective-C object, class or selector.
pub type Id = *mut c_void;

/// `NSRect`: the region of the texture Syphon publishes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Rect {
    /// x, y, width, height in pixels.
    pub xywh: [f64; 4],
}

/// `MTLRegion`: origin and size, three `NSUInteger` each.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Region {
    /// x, y, z.
    pub origin: [usize; 3],
    /// Width, height, depth.
    pub size: [usize; 3],
}

/// The C functions of the runtime and Metal that sylva calls.
pub struct Runtime {
    get_class: unsafe extern "C" fn(*const std::ffi::c_char) -> Id,
    register_selector: unsafe extern "C" fn(*const std::ffi::c_char) -> Id,
    class_method: unsafe extern "C" fn(Id, Id) -> Id,
    /// `objc_msgSend`'s address, cast per call.
    send: *const c_void,
    pool_push: unsafe extern "C" fn() -> Id,
    pool_pop: unsafe extern "C" fn(Id),
    /// `MTLCreateSystemDefaultDevice`.
    pub default_device: unsafe extern "C" fn() -> Id,
    /// `CFRunLoopRunInMode`.
    run_loop_in_mode: unsafe extern "C" fn(*const c_void, f64, u8) -> i32,
    /// `kCFRunLoopDefaultMode`'s address.
    default_mode: *const *const c_void,
    /// Kept loaded for the process's life: Objective-C classes cannot be
    /// unloaded.
    _libraries: Vec<Library>,
}

// SAFETY: the runtime's functions may be called from any thread.
unsafe impl Send for Runtime {}
// SAFETY: as above; nothing in it is mutated after loading.
unsafe impl Sync for Runtime {}

/// Why Syphon and the system libraries under it could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// Not on macOS.
    #[error("Syphon is macOS'")]
    NotMac,
    /// A system library would not load.
    #[error("{path}: {error}")]
    Open {
        /// The library.
        path: String,
        /// Why.
        error: libloading::Error,
    },
    /// A system library lacks a function.
    #[error(transparent)]
    Symbol(#[from] libloading::Error),
    /// No copy of Syphon with a Metal server.
    #[error(
        "no Syphon.framework with a Metal server found ({tried}): put one in /Library/Frameworks, or name it in SYLVA_SYPHON_FRAMEWORK"
    )]
    NoFramework {
        /// Each copy tried and why it would not do ("none installed").
        tried: String,
    },
}

/// The runtime, once loaded.
static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The system libraries, then Syphon, loaded once they load (a sender
/// retried after Syphon was installed finds it).
pub fn runtime() -> Result<&'static Runtime, RuntimeError> {
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let loaded = load()?;
    Ok(RUNTIME.get_or_init(|| loaded))
}

/// The runtime if a sender has loaded it.
pub fn loaded() -> Option<&'static Runtime> {
    RUNTIME.get()
}

/// Where Syphon.framework is looked for: `SYLVA_SYPHON_FRAMEWORK` (the
/// `.framework` folder), beside sylva in an app bundle, then the
/// system's and the user's Frameworks folders.
pub fn framework_candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("SYLVA_SYPHON_FRAMEWORK") {
        candidates.push(PathBuf::from(path));
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(PathBuf::from))
    {
        candidates.push(dir.join("Syphon.framework"));
        candidates.push(dir.join("../Frameworks/Syphon.framework"));
    }
    candidates.push(PathBuf::from("/Library/Frameworks/Syphon.framework"));
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join("Library/Frameworks/Syphon.framework"));
    }
    candidates
}

fn open(path: &str) -> Result<Library, RuntimeError> {
    // SAFETY: system libraries and Syphon run no code a load can break.
    unsafe { Library::new(path) }.map_err(|error| RuntimeError::Open {
        path: path.to_string(),
        error,
    })
}

fn load() -> Result<Runtime, RuntimeError> {
    if !cfg!(target_os = "macos") {
        return Err(RuntimeError::NotMac);
    }
    let objc = open("/usr/lib/libobjc.A.dylib")?;
    let mut libraries = Vec::new();
    // Foundation for NSString; CoreGraphics, without which a program
    // with no window gets no Metal device.
    for framework in ["Foundation", "CoreGraphics", "Metal", "CoreFoundation"] {
        libraries.push(open(&format!(
            "/System/Library/Frameworks/{framework}.framework/{framework}"
        ))?);
    }
    // SAFETY: `objc_getClass` has this C type.
    let get_class: unsafe extern "C" fn(*const std::ffi::c_char) -> Id =
        unsafe { *objc.get(b"objc_getClass\0")? };
    // The first copy that loads and has the Metal server (an old one in
    // /Library may be Intel-only, or from before it).
    let mut tried = Vec::new();
    let syphon = framework_candidates()
        .into_iter()
        .flat_map(|dir| [dir.join("Versions/A/Syphon"), dir.join("Syphon")])
        .filter(|binary| binary.exists())
        .find_map(|binary| {
            let library = open(&binary.to_string_lossy())
                .map_err(|e| tried.push(e.to_string()))
                .ok()?;
            // SAFETY: a NUL-terminated class name.
            let class = unsafe { get_class(c"SyphonMetalServer".as_ptr()) };
            if class.is_null() {
                tried.push(format!(
                    "{}: no Metal server (before 2023)",
                    binary.display()
                ));
                return None;
            }
            Some(library)
        })
        .ok_or_else(|| RuntimeError::NoFramework {
            tried: if tried.is_empty() {
                "none installed".to_string()
            } else {
                tried.join("; ")
            },
        })?;
    libraries.push(syphon);
    // SAFETY: each symbol is cast to its C type from Apple's headers.
    let runtime = unsafe {
        let (metal, core_foundation) = (&libraries[2], &libraries[3]);
        Runtime {
            get_class,
            register_selector: *objc.get(b"sel_registerName\0")?,
            class_method: *objc.get(b"class_getInstanceMethod\0")?,
            send: *objc.get::<*const c_void>(b"objc_msgSend\0")?,
            pool_push: *objc.get(b"objc_autoreleasePoolPush\0")?,
            pool_pop: *objc.get(b"objc_autoreleasePoolPop\0")?,
            default_device: *metal.get(b"MTLCreateSystemDefaultDevice\0")?,
            run_loop_in_mode: *core_foundation.get(b"CFRunLoopRunInMode\0")?,
            default_mode: *core_foundation
                .get::<*const *const c_void>(b"kCFRunLoopDefaultMode\0")?,
            _libraries: {
                libraries.push(objc);
                libraries
            },
        }
    };
    Ok(runtime)
}

impl Runtime {
    /// The class called `name`, if loaded.
    pub fn class(&self, name: &str) -> Option<Id> {
        let c = CString::new(name).ok()?;
        // SAFETY: `c` is a NUL-terminated name.
        let class = unsafe { (self.get_class)(c.as_ptr()) };
        (!class.is_null()).then_some(class)
    }

    /// The selector `name`.
    pub fn selector(&self, name: &str) -> Id {
        let c = CString::new(name).unwrap_or_default();
        // SAFETY: `c` is a NUL-terminated name.
        unsafe { (self.register_selector)(c.as_ptr()) }
    }

    /// Whether instances of the class `name` answer `selector`: the
    /// class, if so.
    pub fn class_answering(&self, name: &str, selector: &str) -> Option<Id> {
        let class = self.class(name)?;
        // SAFETY: `class` is a loaded class.
        let method = unsafe { (self.class_method)(class, self.selector(selector)) };
        (!method.is_null()).then_some(class)
    }

    /// `objc_msgSend` as a function of type `F` (an `extern "C" fn(Id,
    /// Id, …) -> R` matching the method's own signature exactly).
    ///
    /// # Safety
    /// `F` must be a function pointer type of the method's true signature.
    pub unsafe fn message<F: Copy>(&self) -> F {
        debug_assert_eq!(
            std::mem::size_of::<F>(),
            std::mem::size_of::<*const c_void>()
        );
        // SAFETY: the caller gives the signature; a function pointer is
        // pointer-sized.
        unsafe { std::mem::transmute_copy(&self.send) }
    }

    /// Sends the no-argument message `selector` to `object`.
    ///
    /// # Safety
    /// `object` must be a live object answering `selector` with an object
    /// or nothing.
    pub unsafe fn call(&self, object: Id, selector: &str) -> Id {
        // SAFETY: as the caller promises.
        unsafe {
            let send: unsafe extern "C" fn(Id, Id) -> Id = self.message();
            send(object, self.selector(selector))
        }
    }

    /// Turns the calling thread's run loop once without waiting.
    pub fn turn_run_loop(&self) {
        // SAFETY: the mode is CoreFoundation's own constant string.
        unsafe { (self.run_loop_in_mode)(*self.default_mode, 0.0, 1) };
    }

    /// Runs `f` inside an autorelease pool (threads of sylva's have none).
    pub fn pooled<R>(&self, f: impl FnOnce() -> R) -> R {
        // SAFETY: push and pop pair up around `f`.
        let pool = unsafe { (self.pool_push)() };
        let result = f();
        // SAFETY: `pool` came from the push above.
        unsafe { (self.pool_pop)(pool) };
        result
    }

    /// An autoreleased `NSString` of `text`.
    pub fn string(&self, text: &str) -> Option<Id> {
        let class = self.class("NSString")?;
        let c = CString::new(text).ok()?;
        // SAFETY: `stringWithUTF8String:` takes a C string, returns an object.
        let string = unsafe {
            let send: unsafe extern "C" fn(Id, Id, *const std::ffi::c_char) -> Id = self.message();
            send(class, self.selector("stringWithUTF8String:"), c.as_ptr())
        };
        (!string.is_null()).then_some(string)
    }
}

/// An object made for sylva (+1), released when dropped; a server or a
/// client is stopped first, so the other side sees it go.
pub struct Retained {
    runtime: &'static Runtime,
    /// The object.
    pub object: Id,
    stop: bool,
}

// SAFETY: Objective-C objects may be retained and released on any thread.
unsafe impl Send for Retained {}

impl Retained {
    /// Takes `object`, `None` when null (what made it failed).
    pub fn new(runtime: &'static Runtime, object: Id) -> Option<Self> {
        (!object.is_null()).then_some(Self {
            runtime,
            object,
            stop: false,
        })
    }

    /// Sends it `stop` before it is released.
    pub fn stop_when_dropped(&mut self) {
        self.stop = true;
    }
}

impl Drop for Retained {
    fn drop(&mut self) {
        self.runtime.pooled(|| {
            // SAFETY: the object is this value's own (+1), released once.
            unsafe {
                if self.stop {
                    self.runtime.call(self.object, "stop");
                }
                self.runtime.call(self.object, "release");
            }
        });
    }
}
