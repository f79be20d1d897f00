//! What the integration tests share: one GPU device for the whole test
//! binary (on the adapter named by `SYLVA_ADAPTER`, the software one by
//! default, so golden images do not depend on the machine's GPU) and a
//! helper to build a show on it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sylva::base::status::ErrorLog;
use sylva::gpu::{ADAPTER_ENV, AdapterChoice, Gpu};
use sylva::show::Show;
use sylva::show::{ShowOptions, start_on};

/// The software Vulkan adapter that CI installs (Mesa's lavapipe).
pub const SOFTWARE_ADAPTER: &str = "llvmpipe";

/// Held by a test while it listens on, or is listened to on, Art-Net's
/// port 6454 (one socket may bind it at a time).
pub static ARTNET_PORT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Held by a test while it uses sACN's port 5568 (the `sacn` crate's
/// receiver binds it alone, and two sockets sharing it share its
/// packets).
pub static SACN_PORT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The adapter tests run on.
pub fn adapter_name() -> String {
    std::env::var(ADAPTER_ENV)
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| SOFTWARE_ADAPTER.to_string())
}

/// The shared device. Panics (failing the test, never skipping it) when the
/// adapter is missing.
pub fn gpu() -> Arc<Gpu> {
    static GPU: OnceLock<Arc<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| open_device(wgpu::Features::empty()))
        .clone()
}

/// A second device on the same adapter without 64-bit atomics, for the
/// paths that do without them.
pub fn gpu_without_wide_atomics() -> Arc<Gpu> {
    static GPU: OnceLock<Arc<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| open_device(sylva::gpu::WIDE_ATOMICS))
        .clone()
}

fn open_device(leave_off: wgpu::Features) -> Arc<Gpu> {
    let choice = AdapterChoice {
        name: Some(adapter_name()),
        leave_off,
    };
    match Gpu::new(Gpu::instance(), &choice, None, ErrorLog::default()) {
        Ok(gpu) => Arc::new(gpu),
        Err(error) => panic!(
            "GPU tests need the adapter {:?}: {error}. Install mesa-vulkan-drivers (make deps).",
            adapter_name()
        ),
    }
}

/// The test fixtures folder, used as a show folder.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Where failing tests write their actual and difference images.
pub fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/out");
    std::fs::create_dir_all(&dir).checked("writing the test show");
    dir
}

/// Builds the stand-in NDI runtime (`tests/fixtures/ndi/stub.c`) as
/// `libndi_NAME.so`, logging to `log`; its source is away while the file
/// `log` with `.control` added holds `gone`.
pub fn ndi_stub(name: &str, log: &Path) -> PathBuf {
    let library = out_dir().join(format!("libndi_{name}.so"));
    let control = control_file(log);
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ndi/stub.c");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&library)
        .arg(format!("-DSTUB_LOG=\"{}\"", log.display()))
        .arg(format!("-DSTUB_CONTROL=\"{}\"", control.display()))
        .arg(&source)
        .status()
        .checked("running the C compiler");
    assert!(status.success(), "cc failed to build the NDI stub");
    library
}

/// The file that sends the NDI stub logging to `log` away (`gone`).
pub fn control_file(log: &Path) -> PathBuf {
    log.with_extension("control")
}

/// A show on the shared device with `preset` loaded from `project`.
pub fn show(project: PathBuf, preset: &str, format: wgpu::TextureFormat) -> Show {
    start(ShowOptions::new(project, preset), format)
}

/// A show on the shared device for `options`.
pub fn start(options: ShowOptions, format: wgpu::TextureFormat) -> Show {
    start_on_device(gpu(), options, format)
}

/// A show on `gpu` for `options`.
pub fn start_on_device(gpu: Arc<Gpu>, options: ShowOptions, format: wgpu::TextureFormat) -> Show {
    let preset = options.preset.clone();
    match start_on(gpu, &options, format) {
        Ok(show) => show,
        Err(error) => panic!("starting preset {preset}: {error:#}"),
    }
}

/// A fresh show folder `tests/out/<name>` holding `files` (path, text).
pub fn show_folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = out_dir().join(name);
    std::fs::remove_dir_all(&root).ok();
    for (path, text) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).checked("writing the test show");
        }
        if let Err(error) = std::fs::write(&path, text) {
            panic!("writing {}: {error}", path.display());
        }
    }
    root
}

/// Set-up steps that must not fail silently: a failed write or value
/// panics at the caller's line with the error.
pub trait Checked<T> {
    /// The value, or a panic naming `what` and the error.
    fn checked(self, what: &str) -> T;
}

impl<T, E: std::fmt::Debug> Checked<T> for Result<T, E> {
    #[track_caller]
    fn checked(self, what: &str) -> T {
        match self {
            Ok(value) => value,
            Err(error) => panic!("{what}: {error:?}"),
        }
    }
}

impl<T> Checked<T> for Option<T> {
    #[track_caller]
    fn checked(self, what: &str) -> T {
        match self {
            Some(value) => value,
            None => panic!("{what}: missing"),
        }
    }
}

/// A file under `tests/assets/` (test characters, published reference
/// data; each folder has its attribution). Tests read nothing outside the
/// checkout, so a lone clone passes them. Fails, naming the path, when the
/// file is missing.
pub fn asset(path: &str) -> PathBuf {
    let found = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/assets")
        .join(path);
    assert!(found.is_file(), "{} is missing", found.display());
    found
}

/// A PNG that is only its header and an empty stream: `width` x `height`, one bit per pixel.
/// The header is all a density map's size is read from.
pub fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    fn crc(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for byte in bytes {
            crc ^= u32::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc(&body).to_be_bytes());
        out
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([1, 0, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    // An empty zlib stream: the decoder looks for the first IDAT.
    png.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// The messages on screen now.
pub fn error_messages(show: &sylva::show::Show) -> Vec<String> {
    show.ground
        .errors
        .snapshot()
        .iter()
        .map(|e| e.message.clone())
        .collect()
}

/// One HTTP GET to the show on `port` over a fresh connection: the status
/// (0 when none came) and the body.
pub fn http_get(port: u16, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).checked("connecting to the show");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .checked("sending the request");
    let mut response = String::new();
    stream.read_to_string(&mut response).ok();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, body)| body)
        .to_string();
    (status, body)
}

/// An sRGB 8-bit channel in linear light, as the texture sampler decodes
/// media.
pub fn srgb_to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light as the display-encoded (sRGB) value an ISF or Shadertoy
/// file sees it as, the curve sign-mirrored and carried past 1 as sylva's
/// display space does.
pub fn display_encoded(linear: f32) -> f32 {
    let a = linear.abs();
    let encoded = match a <= 0.003_130_8 {
        true => a * 12.92,
        false => 1.055 * a.powf(1.0 / 2.4) - 0.055,
    };
    encoded.copysign(linear)
}
